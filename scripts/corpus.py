#!/usr/bin/env python3
"""Builds the kernel corpus: the sources under tests/corpus/src/ compiled for
every target into build/corpus/<target>/<name>.hsaco, with LLVM's
disassembly of each beside it as <name>.objdump (`llvm-objdump-22 -d`).

  scripts/corpus.py build [--jobs N] [--force] [--out DIR] [--target T ...]
  scripts/corpus.py stats [--out DIR]
  scripts/corpus.py clean [--out DIR]

Sources:
  *.cl   OpenCL C, compiled with clang-22 (-x cl, -nogpulib)
  *.hip  HIP device code, compiled with clang++-22 (--cuda-device-only, -nogpulib -nogpuinc)
  *.py   Triton kernels (a CORPUS list, see scripts/corpus_triton.py), compiled with
         Triton in the venv made by scripts/setup.sh
A `corpus-flags: FLAGS` line in the first lines of a .cl/.hip source replaces
the default optimisation flags (-O2), e.g. `// corpus-flags: -O0`; a
`corpus-targets: T...` line builds the source for those targets only.

On the RDNA targets (GFX10+), whose kernels run in 32- or 64-lane waves, every
.cl/.hip source is built twice: <name> in the default wave32 mode and
<name>_w64 with -mwavefrontsize64 (and -DCORPUS_WAVE64, for code that
differs by mode, such as the wave-sized WMMA builtins). LLVM's disassembler assumes wave32 there,
so a code object whose kernels all declare `.wavefront_size: 64` in their
metadata is disassembled with --mattr=+wavefrontsize64, and its listing
starts with the line `; rocjitsu-corpus: wavefront-size 64` (32 otherwise);
a code object mixing both modes is an error.
gfx1201's code objects get a second listing, <name>.t16.objdump, made with
--mattr=+real-true16 (LLVM 22 reads gfx1201's 16-bit operands as fake16 by
default; Triton's LLVM emits real-true16 ones) and starting with the line
`; rocjitsu-corpus: real-true16`.

Incremental: each (source, target) has a stamp under <target>/.stamps holding
a hash of the source, the shared headers, the flags, this recipe and the
compiler and disassembler versions; a unit whose stamp matches and whose
outputs exist is skipped. Outputs no current source produces are removed.
"""

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "tests" / "corpus" / "src"
INCLUDE = SRC / "include"
TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx908", "gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201")
# Targets Triton's AMD backend compiles for (it rejects GFX10: "unsupported
# target"); its sources are built for these only.
TRITON_TARGETS = tuple(t for t in TARGETS if not t.startswith("gfx10"))
# Targets with a wave64 build of each clang source (see above).
WAVE64_TARGETS = ("gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201")
CACHE = pathlib.Path(os.environ.get("ROCJITSU_CACHE", pathlib.Path.home() / ".cache" / "rocjitsu"))
VENV_PYTHON = CACHE / "triton-venv" / "bin" / "python"
TRITON_WORKER = ROOT / "scripts" / "corpus_triton.py"
DEFAULT_FLAGS = ["-O2"]
# Targets whose code also gets a real-true16 listing (see above).
REAL_TRUE16_TARGETS = ("gfx1201",)
# Bump when the way outputs are produced changes without any input changing.
RECIPE = "1"

CLANG = "clang-22"
CLANGXX = "clang++-22"
OBJDUMP = "llvm-objdump-22"
READELF = "llvm-readelf-22"


def log(msg: str) -> None:
    print(f"corpus: {msg}", file=sys.stderr, flush=True)


class BuildError(Exception):
    pass


def run(cmd, **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    except FileNotFoundError as exc:
        raise BuildError(f"{cmd[0]} not found ({exc}); run scripts/setup.sh") from exc


def tool_version(cmd: str) -> str:
    p = run([cmd, "--version"])
    if p.returncode != 0:
        raise BuildError(f"`{cmd} --version` failed: {p.stderr.strip()}")
    return p.stdout.strip()


def triton_version() -> str:
    for d in sorted(VENV_PYTHON.parent.parent.glob("lib/python*/site-packages/triton-*.dist-info")):
        return d.name
    raise BuildError(f"Triton not installed in {VENV_PYTHON.parent.parent}; run scripts/setup.sh")


def header_line(path: pathlib.Path, key: str) -> list[str] | None:
    """The words after `key:` in the first lines of a source, if present."""
    with path.open(encoding="utf-8") as f:
        for _, line in zip(range(5), f):
            m = re.search(key + r":\s*(.*)$", line)
            if m:
                return m.group(1).split()
    return None


def source_flags(path: pathlib.Path) -> list[str]:
    flags = header_line(path, "corpus-flags")
    return list(DEFAULT_FLAGS) if flags is None else flags


def source_targets(path: pathlib.Path) -> list[str] | None:
    """The targets a source is limited to (`corpus-targets:`; Triton
    sources: TRITON_TARGETS), or None for all."""
    if path.suffix == ".py":
        return list(TRITON_TARGETS)
    return header_line(path, "corpus-targets")


def sha(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


class Unit:
    """One source compiled for one target; produces one or more code objects."""

    def __init__(self, src: pathlib.Path, target: str, outdir: pathlib.Path, key: str):
        self.src, self.target, self.outdir, self.key = src, target, outdir, key
        self.stamp = outdir / ".stamps" / f"{src.name}.json"

    def stamped_outputs(self) -> list[str] | None:
        try:
            data = json.loads(self.stamp.read_text())
        except (OSError, ValueError):
            return None
        if data.get("key") != self.key:
            return None
        outs = data.get("outputs", [])
        for name in outs:
            if not (self.outdir / f"{name}.hsaco").exists() or not all(
                    (self.outdir / f).exists() for f in listings(name, self.target)):
                return None
        return outs

    def write_stamp(self, outputs: list[str]) -> None:
        self.stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.stamp.with_suffix(".tmp")
        tmp.write_text(json.dumps({"key": self.key, "source": str(self.src.relative_to(ROOT)), "outputs": outputs}))
        tmp.replace(self.stamp)


def wavefront_size(outdir: pathlib.Path, name: str) -> int:
    """The wave size every kernel of a code object declares in its metadata
    (`.wavefront_size`); 64 for an object without kernels."""
    p = run([READELF, "--notes", f"{name}.hsaco"], cwd=outdir)
    if p.returncode != 0:
        raise BuildError(f"{READELF} --notes {outdir / name}.hsaco failed:\n{p.stderr}")
    sizes = {int(m) for m in re.findall(r"\.wavefront_size:\s*(\d+)", p.stdout)}
    if len(sizes) > 1:
        raise BuildError(f"{outdir / name}.hsaco mixes wave sizes {sorted(sizes)}: one listing "
                         "cannot show both; build its kernels in one mode")
    return sizes.pop() if sizes else 64


def listings(name: str, target: str) -> list[str]:
    """The listing files of one code object."""
    return [f"{name}.objdump"] + ([f"{name}.t16.objdump"] if target in REAL_TRUE16_TARGETS else [])


def objdump(outdir: pathlib.Path, name: str, target: str) -> None:
    mattr = []
    header = ""
    if not target.startswith("gfx9"):
        wave = wavefront_size(outdir, name)
        if wave == 64:
            mattr.append("+wavefrontsize64")
        header = f"; rocjitsu-corpus: wavefront-size {wave}\n"
    for listing in listings(name, target):
        t16 = listing.endswith(".t16.objdump")
        feats = mattr + (["+real-true16"] if t16 else [])
        # Run in the output directory so the text names the file, not a path.
        cmd = [OBJDUMP, "-d", *([f"--mattr={','.join(feats)}"] if feats else []), f"{name}.hsaco"]
        p = run(cmd, cwd=outdir)
        if p.returncode != 0:
            raise BuildError(f"{' '.join(cmd)} in {outdir} failed:\n{p.stderr}")
        tmp = outdir / f"{listing}.tmp"
        tmp.write_text(header + ("; rocjitsu-corpus: real-true16\n" if t16 else "") + p.stdout)
        tmp.replace(outdir / listing)


def clang_command(src: pathlib.Path, target: str, out: pathlib.Path, wave64: bool = False) -> list[str]:
    flags = source_flags(src)
    if wave64:
        flags += ["-mwavefrontsize64", "-DCORPUS_WAVE64"]
    common = ["-nogpulib", "-mcode-object-version=5", f"-I{INCLUDE}", "-Wno-everything", *flags]
    if src.suffix == ".cl":
        return [CLANG, "-x", "cl", "-target", "amdgcn-amd-amdhsa", f"-mcpu={target}", *common, str(src), "-o", str(out)]
    return [CLANGXX, "-x", "hip", f"--offload-arch={target}", "--cuda-device-only", "--no-gpu-bundle-output",
            "-nogpuinc", *common, str(src), "-o", str(out)]


def build_clang(unit: Unit) -> list[str]:
    names = []
    for wave64 in (False, True) if unit.target in WAVE64_TARGETS else (False,):
        name = unit.src.stem + ("_w64" if wave64 else "")
        tmp = unit.outdir / f"{name}.hsaco.tmp"
        cmd = clang_command(unit.src, unit.target, tmp, wave64)
        p = run(cmd)
        if p.returncode != 0:
            raise BuildError(f"compiling {unit.src.relative_to(ROOT)} for {unit.target} failed:\n"
                             f"$ {' '.join(cmd)}\n{p.stderr}")
        tmp.replace(unit.outdir / f"{name}.hsaco")
        objdump(unit.outdir, name, unit.target)
        names.append(name)
    return names


def build_triton(units: list[Unit]) -> dict[Unit, list[str]]:
    target, outdir = units[0].target, units[0].outdir
    env = dict(os.environ)
    env.setdefault("TRITON_CACHE_DIR", str(outdir.parent / ".triton-cache"))
    env.setdefault("TRITON_HOME", str(outdir.parent / ".triton-home"))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    cmd = [str(VENV_PYTHON), str(TRITON_WORKER), target, str(outdir), *(str(u.src) for u in units)]
    p = run(cmd, env=env)
    if p.returncode != 0:
        raise BuildError(f"Triton compilation for {target} failed:\n$ {' '.join(cmd)}\n{p.stderr[-4000:]}")
    by_src = {str(u.src): u for u in units}
    done = {}
    for line in p.stdout.splitlines():
        rec = json.loads(line)
        unit = by_src[rec["source"]]
        for name in rec["outputs"]:
            objdump(outdir, name, target)
        done[unit] = rec["outputs"]
    missing = [str(u.src) for u in units if u not in done]
    if missing:
        raise BuildError(f"Triton worker for {target} produced nothing for {missing}")
    return done


def sources(src: pathlib.Path = SRC) -> list[pathlib.Path]:
    return sorted(p for p in src.iterdir() if p.suffix in (".cl", ".hip", ".py") and p.is_file())


def cmd_build(args) -> int:
    t0 = time.monotonic()
    srcs = sources(args.src)
    if not srcs:
        raise BuildError(f"no sources in {args.src}")
    headers = b"".join(p.read_bytes() for p in sorted(INCLUDE.glob("*")) if p.is_file())
    objdump_v = tool_version(OBJDUMP)
    clang_v = tool_version(CLANG)
    has_py = any(s.suffix == ".py" for s in srcs)
    triton_v = triton_version() if has_py else ""
    worker = TRITON_WORKER.read_bytes()

    todo_clang: list[Unit] = []
    todo_triton: dict[str, list[Unit]] = {}
    fresh: dict[Unit, list[str]] = {}
    all_units: list[Unit] = []
    for target in args.target:
        outdir = args.out / target
        outdir.mkdir(parents=True, exist_ok=True)
        for src in srcs:
            only = source_targets(src)
            if only is not None and target not in only:
                continue
            body = src.read_bytes()
            if src.suffix == ".py":
                key = sha(RECIPE, "triton", body, triton_v, worker, objdump_v, target)
            else:
                key = sha(RECIPE, "clang", body, headers, source_flags(src), clang_v, objdump_v, target,
                          target in WAVE64_TARGETS)
            unit = Unit(src, target, outdir, key)
            all_units.append(unit)
            outs = None if args.force else unit.stamped_outputs()
            if outs is not None:
                fresh[unit] = outs
            elif src.suffix == ".py":
                todo_triton.setdefault(target, []).append(unit)
            else:
                todo_clang.append(unit)

    n_todo = len(todo_clang) + sum(len(v) for v in todo_triton.values())
    log(f"{len(all_units)} units ({len(srcs)} sources x {len(args.target)} targets), "
        f"{len(fresh)} up to date, {n_todo} to build, {args.jobs} jobs")
    done_count = 0

    def finished(unit: Unit, outs: list[str]) -> None:
        nonlocal done_count
        unit.write_stamp(outs)
        fresh[unit] = outs
        done_count += 1
        log(f"[{done_count}/{n_todo}] {unit.target} {unit.src.name} -> {len(outs)} code object(s)")

    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # Triton workers first: they are the longest.
        futs = {pool.submit(build_triton, units): ("triton", units) for units in todo_triton.values()}
        futs.update({pool.submit(build_clang, u): ("clang", u) for u in todo_clang})
        errors = []
        for fut in cf.as_completed(futs):
            kind, what = futs[fut]
            try:
                res = fut.result()
            except BuildError as exc:
                errors.append(str(exc))
                continue
            if kind == "triton":
                for unit, outs in res.items():
                    finished(unit, outs)
            else:
                finished(what, res)
        if errors:
            for e in errors:
                log(f"ERROR: {e}")
            raise BuildError(f"{len(errors)} unit(s) failed")

    # Remove outputs that no current source produces.
    for target in args.target:
        outdir = args.out / target
        keep = {name for u, outs in fresh.items() if u.target == target for name in outs}
        keep_stamps = {u.stamp.name for u in all_units if u.target == target}
        for f in outdir.iterdir():
            if f.suffix in (".hsaco", ".objdump", ".tmp") and f.name.split(".")[0] not in keep:
                log(f"removing stale {f.relative_to(args.out)}")
                f.unlink()
        for f in (outdir / ".stamps").glob("*"):
            if f.name not in keep_stamps:
                f.unlink()

    print_stats(args.out, args.target)
    log(f"done in {time.monotonic() - t0:.1f} s")
    return 0


INST_RE = re.compile(r"//\s*[0-9A-Fa-f]+:\s")


def objdump_counts(path: pathlib.Path) -> tuple[int, int]:
    """(instruction lines, kernels) in one llvm-objdump output. Kernels are the
    function symbols, less the callable copies clang makes of OpenCL kernels."""
    insts = funcs = 0
    for line in path.read_text().splitlines():
        if line.startswith("\t") and INST_RE.search(line):
            insts += 1
        elif re.match(r"^[0-9a-f]+ <(.*)>:$", line) and "<__clang_ocl_kern_imp_" not in line:
            funcs += 1
    return insts, funcs


def print_stats(out: pathlib.Path, targets) -> None:
    total = 0
    for target in targets:
        # The real-true16 listings repeat their code objects' instructions.
        files = sorted(f for f in (out / target).glob("*.objdump") if not f.name.endswith(".t16.objdump"))
        insts = funcs = 0
        for f in files:
            i, k = objdump_counts(f)
            insts += i
            funcs += k
        total += insts
        print(f"corpus: {target}: {len(files)} code objects, {funcs} kernels/functions, {insts} instructions")
    print(f"corpus: total {total} instructions")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("build", "stats", "clean"))
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "corpus")
    ap.add_argument("--src", type=lambda p: pathlib.Path(p).resolve(), default=SRC, help="directory of sources (default tests/corpus/src)")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--force", action="store_true", help="rebuild everything")
    ap.add_argument("--target", action="append", choices=TARGETS, help="only these targets (repeatable)")
    args = ap.parse_args()
    args.target = args.target or list(TARGETS)
    args.out = args.out.resolve()
    try:
        if args.command == "build":
            return cmd_build(args)
        if args.command == "stats":
            print_stats(args.out, args.target)
            return 0
        if args.out.exists():
            shutil.rmtree(args.out)
        return 0
    except BuildError as exc:
        log(f"FAILED: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
