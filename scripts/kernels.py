#!/usr/bin/env python3
"""Executed-kernel tests: the kernels under tests/kernels/src compiled for
every target, run through `rocjitsu run-kernel` and compared with CPU
references computed in numpy (the cases are in tests/kernels/cases.py).

  scripts/kernels.py build [--target T ...] [--jobs N] [--force]
  scripts/kernels.py run   [--target T ...] [-k FILTER] [--bin PATH] [--jobs N] [--threads N]
                           [--keep DIR] [--dry-run] [--no-build] [--dbt] [--dbi] [--exec MODE]
  scripts/kernels.py list  [--target T ...] [-k FILTER]

Building reuses scripts/corpus.py (same compilers, flags and incremental
stamps; a `corpus-flags:` line in a source replaces -O2) and writes
build/kernels/<target>/<stem>.hsaco (Triton: <stem>-<entry>.hsaco).
`run` prints `PASS|FAIL target name (time)` per case, with the first
mismatching index, expected and got values on failure, then
`kernels: N passed, M failed`; the exit status is 1 on any failure.
`--dry-run` builds, generates every input, computes every reference and
checks each case's arguments against the code object's metadata, without
running the emulator. `--exec interp|jit|auto|check` picks run-kernel's
execution tier; `check` runs every case on the interpreter and again with
every block translated to host code, and fails a case whose registers,
buffers, fault or instruction count differ (exit 3 from run-kernel), besides
checking the numpy reference. `--dbi` instruments every case with
`rocjitsu dbi instrument --tool bbcount`, checks the instrumented run against
the numpy reference and every block's count against the coverage plugin's
count for a run of the original (docs/dbi.md); refusals are listed with
their reasons, not failed.

numpy is needed: when the interpreter lacks it, the script re-runs itself
with the Triton venv's python (scripts/setup.sh installs numpy there)."""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = pathlib.Path(os.environ.get("ROCJITSU_CACHE", pathlib.Path.home() / ".cache" / "rocjitsu"))
VENV_PYTHON = CACHE / "triton-venv" / "bin" / "python"

try:
    import numpy as np
except ImportError:
    if VENV_PYTHON.exists() and not os.environ.get("ROCJITSU_KERNELS_REEXEC"):
        os.environ["ROCJITSU_KERNELS_REEXEC"] = "1"
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), __file__, *sys.argv[1:]])
    sys.exit("kernels: numpy is missing; run scripts/setup.sh")

import argparse
import concurrent.futures as cf
import contextlib
import fnmatch
import functools
import json
import re
import shlex
import shutil
import subprocess
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "kernels"))

import corpus  # noqa: E402  (build machinery shared with the decoder corpus)

SRC = ROOT / "tests" / "kernels" / "src"
OUT = ROOT / "build" / "kernels"
# The targets the emulator executes (config's Target::ALL), run by
# default; the decoder corpus (corpus.TARGETS) also has decode-only ones.
TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx908")
# Run targets of RDNA1-RDNA4, whose kernels run-kernel executes without a
# GPU configuration (config's Target::KERNELS): gfx1010, gfx1030, gfx1100,
# gfx1151 and gfx1201 run the wave32 build of each source (<stem>.hsaco), the
# `w64` run targets the wave64 one (<stem>_w64, clang sources only; Triton
# builds wave32, and has no GFX10 backend: gfx1010 and gfx1030 run the
# clang/HIP/OpenCL cases only). Selected with --target.
RDNA_TARGETS = ("gfx1100", "gfx1100w64", "gfx1151", "gfx1151w64", "gfx1201", "gfx1201w64",
                "gfx1030", "gfx1030w64", "gfx1010", "gfx1010w64")
RUN_TARGETS = TARGETS + RDNA_TARGETS


def build_target(target: str) -> str:
    """The compiler target of a run target (gfx1100w64 -> gfx1100)."""
    return target.removesuffix("w64")


def object_suffix(target: str) -> str:
    return "_w64" if target.endswith("w64") else ""
READELF = "llvm-readelf-22"


def log(msg: str) -> None:
    print(f"kernels: {msg}", file=sys.stderr, flush=True)


# --- build ------------------------------------------------------------------------

def sources() -> list[pathlib.Path]:
    return sorted(p for p in SRC.iterdir() if p.suffix in (".cl", ".hip", ".py") and p.is_file())


def build(targets, jobs: int, force: bool) -> None:
    t0 = time.monotonic()
    targets = sorted({build_target(t) for t in targets}, key=list(RUN_TARGETS).index)
    srcs = sources()
    headers = b"".join(p.read_bytes() for p in sorted([*corpus.INCLUDE.glob("*"), *SRC.glob("*.h")])
                       if p.is_file())
    objdump_v = corpus.tool_version(corpus.OBJDUMP)
    clang_v = corpus.tool_version(corpus.CLANG)
    triton_v = corpus.triton_version() if any(s.suffix == ".py" for s in srcs) else ""
    worker = corpus.TRITON_WORKER.read_bytes()
    todo_clang, todo_triton, units = [], {}, []
    for target in targets:
        outdir = OUT / target
        outdir.mkdir(parents=True, exist_ok=True)
        for src in srcs:
            only = corpus.source_targets(src)
            if only is not None and target not in only:
                continue
            body = src.read_bytes()
            if src.suffix == ".py":
                key = corpus.sha(corpus.RECIPE, "triton", body, triton_v, worker, objdump_v, target)
            else:
                key = corpus.sha(corpus.RECIPE, "clang", body, headers, corpus.source_flags(src), clang_v,
                                 objdump_v, target)
            unit = corpus.Unit(src, target, outdir, key)
            units.append(unit)
            if not force and unit.stamped_outputs() is not None:
                continue
            if src.suffix == ".py":
                todo_triton.setdefault(target, []).append(unit)
            else:
                todo_clang.append(unit)
    n_todo = len(todo_clang) + sum(len(v) for v in todo_triton.values())
    if n_todo:
        log(f"building {n_todo} of {len(units)} units ({jobs} jobs)")
    errors = []
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(corpus.build_triton, us): ("triton", us) for us in todo_triton.values()}
        futs.update({pool.submit(corpus.build_clang, u): ("clang", u) for u in todo_clang})
        for fut in cf.as_completed(futs):
            kind, what = futs[fut]
            try:
                res = fut.result()
            except corpus.BuildError as exc:
                errors.append(str(exc))
                continue
            for unit, outs in (res.items() if kind == "triton" else [(what, res)]):
                unit.write_stamp(outs)
    if errors:
        for e in errors:
            log(f"ERROR: {e}")
        raise corpus.BuildError(f"{len(errors)} unit(s) failed")
    if n_todo:
        log(f"built in {time.monotonic() - t0:.1f} s")


# --- code object metadata -----------------------------------------------------------

@functools.lru_cache(maxsize=None)
def kernel_metadata(hsaco: str) -> dict:
    """{kernel name: {"args": [{key: value}], key: value}} from the code
    object's AMDGPU metadata note (llvm-readelf-22 --notes)."""
    p = subprocess.run([READELF, "--notes", hsaco], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{READELF} --notes {hsaco}: {p.stderr.strip()}")
    kernels, cur, arg, in_args = {}, None, None, False
    for line in p.stdout.splitlines():
        m = re.match(r"^( *)(- )?(\.[\w]+|amdhsa\.\w+):\s*(.*)$", line)
        if not m:
            continue
        indent, dash, key, val = len(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
        if key.startswith("amdhsa."):
            in_args = False
            cur = None
            continue
        if indent == 2 and dash:
            cur = {"args": []}
            kernels.setdefault("__list", []).append(cur)
            in_args = False
        if cur is None:
            continue
        if indent <= 4 and key == ".args":
            in_args = True
            continue
        if in_args and indent == 6 and dash:
            arg = {}
            cur["args"].append(arg)
        if in_args and indent >= 6:
            arg[key] = val
            continue
        in_args = False
        cur[key] = val
    return {k[".name"]: k for k in kernels.get("__list", []) if ".name" in k}


def explicit_args(meta: dict) -> list[dict]:
    return [a for a in meta["args"] if not a.get(".value_kind", "").startswith("hidden_")]


# --- running one case ---------------------------------------------------------------

def resolve(case, target: str):
    """The launch of a case with the arguments completed and checked against
    the metadata: (launch, args, hsaco path, block)."""
    from harness import Image, In, InOut, Null, Out, Scalar, SCALAR_SIZES, dims

    launch = case.launch(target)
    hsaco = OUT / build_target(target) / f"{case.obj}{'' if case.triton else object_suffix(target)}.hsaco"
    if not hsaco.exists():
        raise RuntimeError(f"{hsaco} not built")
    metas = kernel_metadata(str(hsaco))
    if case.kernel not in metas:
        raise RuntimeError(f"kernel {case.kernel} not in {hsaco.name} (has {sorted(metas)})")
    meta = metas[case.kernel]
    formal = explicit_args(meta)
    args = list(launch.args)
    if case.triton:
        # Triton appends global scratch / profiler pointers after the user's arguments.
        for extra in formal[len(args):]:
            if extra.get(".value_kind") != "global_buffer":
                raise RuntimeError(f"unexpected trailing argument {extra}")
            args.append(Null())
    if len(args) != len(formal):
        raise RuntimeError(f"{len(args)} arguments given, kernel has {len(formal)}")
    for k, (a, f) in enumerate(zip(args, formal)):
        size = int(f.get(".size", "0"))
        kind = f.get(".value_kind")
        if isinstance(a, Scalar):
            if kind != "by_value" or SCALAR_SIZES[a.kind] != size:
                raise RuntimeError(f"argument {k}: {a.kind} given, kernel has {kind} of {size} bytes")
        elif kind not in ("global_buffer",) and not (kind == "by_value" and size == 8):
            raise RuntimeError(f"argument {k}: buffer given, kernel has {kind}")
        if isinstance(a, (In, InOut, Out, Image)) and kind == "by_value":
            raise RuntimeError(f"argument {k}: buffer given, kernel has a by-value argument")
    if case.triton:
        # Triton's LDS is dynamic (its size is not in the code object) and the
        # block is num_warps waves; both come from the compiler's metadata.
        tmeta = json.loads(hsaco.with_suffix(".meta.json").read_text())
        launch.dynamic_lds = launch.dynamic_lds or int(tmeta["shared"])
        if launch.block is None:
            from harness import wave_size
            launch.block = wave_size(target) * int(tmeta["num_warps"])
    if launch.block is None:
        raise RuntimeError("no block size given")
    block = dims(launch.block)
    nthreads = block[0] * block[1] * block[2]
    if nthreads > int(meta.get(".max_flat_workgroup_size", "1024")):
        raise RuntimeError(f"block of {nthreads} exceeds max_flat_workgroup_size {meta['.max_flat_workgroup_size']}")
    return launch, args, hsaco, block


# Checking plugins: a run with one of them enabled fails when it reports
# anything (a record of this type in its JSON Lines output).
CHECKERS = {"hazards": "hazard", "races": "race"}


def run_case(case, target: str, binary: str, dry_run: bool, threads: int = 1, keep: str | None = None,
             hsaco_override=None, gpu: str | None = None, want_outputs: bool = False,
             plugins: tuple[str, ...] = (), extra: tuple[str, ...] = (), check_plugins: bool = True,
             exec_mode: str | None = None):
    """(ok, detail, seconds, stats) of one case on one target. With `keep`,
    the inputs, outputs, the expected values (expected-NAME.bin) and a
    cmd.sh reproducing the run stay in keep/<target>/<case>/. `plugins`
    are enabled on the run (`--plugin`); a checking plugin (CHECKERS) that
    reports anything fails the case unless `check_plugins` is false. The
    stats hold run-kernel's stderr ("stderr") and each plugin's JSON records
    ("plugins": name -> list). `extra` is appended to run-kernel's
    arguments."""
    from harness import Image, In, InOut, Null, Out, Scalar, compare, dims

    t0 = time.monotonic()
    try:
        launch, args, hsaco, block = resolve(case, target)
        if hsaco_override is not None:
            hsaco = hsaco_override
    except Exception as exc:  # a broken case is a failure, reported as such
        return False, f"case error: {type(exc).__name__}: {exc}", time.monotonic() - t0, {}
    outs = {a.name: a for a in args if isinstance(a, (Out, InOut, Image))}
    for chk in launch.checks:
        if chk.name not in outs:
            return False, f"case error: check of unknown output {chk.name}", time.monotonic() - t0, {}
    if dry_run:
        for chk in launch.checks:
            a = outs[chk.name]
            dt = np.dtype(chk.view or (a.dtype if isinstance(a, Out) else a.data.dtype))
            nbytes = a.count * np.dtype(a.dtype).itemsize if isinstance(a, Out) else a.data.nbytes
            if np.asarray(chk.expected).size * dt.itemsize > nbytes and chk.transform is None:
                return False, f"case error: {chk.name} reference larger than its buffer", time.monotonic() - t0, {}
        return True, "", time.monotonic() - t0, {}
    if keep:
        kept = pathlib.Path(keep).resolve() / target / case.name
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        ctx = contextlib.nullcontext(str(kept))
    else:
        ctx = tempfile.TemporaryDirectory(prefix="rjk-")
    with ctx as tmp:
        tmp = pathlib.Path(tmp)
        specs, files = [], {}
        for k, a in enumerate(args):
            if isinstance(a, In):
                f = tmp / f"in{k}.bin"
                np.ascontiguousarray(a.data).tofile(f)
                specs.append(f"in:{f}")
            elif isinstance(a, InOut):
                f = tmp / f"{a.name}.bin"
                np.ascontiguousarray(a.data).tofile(f)
                specs.append(f"inout:{f}")
                files[a.name] = (f, a.data.dtype)
            elif isinstance(a, Image):
                f = tmp / f"{a.name}.bin"
                f.write_bytes(np.asarray(a.desc, dtype=np.uint32).tobytes() + np.ascontiguousarray(a.data).tobytes())
                specs.append(f"image:{f}")
                files[a.name] = (f, a.data.dtype)
            elif isinstance(a, Out):
                f = tmp / f"{a.name}.bin"
                specs.append(f"out:{f}:{a.count * np.dtype(a.dtype).itemsize}")
                files[a.name] = (f, np.dtype(a.dtype))
            elif isinstance(a, Scalar):
                specs.append(a.spec())
            elif isinstance(a, Null):
                specs.append("null")
        g = dims(launch.grid)
        cmd = [binary, "run-kernel", "--stats", "--gpu", gpu or build_target(target), str(hsaco), "--kernel",
               case.kernel,
               "--grid", ",".join(map(str, g)), "--block", ",".join(map(str, block)),
               "--timeout", str(case.timeout), "--threads", str(threads)]
        if exec_mode:
            cmd += ["--exec", exec_mode]
        if launch.dynamic_lds:
            cmd += ["--dynamic-lds", str(launch.dynamic_lds)]
        for s in specs:
            cmd += ["--arg", s]
        plugin_dir = tmp / "plugins"
        # A races case runs with the races plugin, except under --exec check
        # (plugins run on the interpreter alone): there it checks results.
        enabled = {p.split(":")[0] for p in plugins}
        if launch.races is not None and exec_mode != "check" and "races" not in enabled:
            plugins = (*plugins, "races")
            enabled.add("races")
        for spec in plugins:
            name = spec.split(":")[0]
            if name in CHECKERS and ":" not in spec:
                spec += ":format=jsonl"
            cmd += ["--plugin", spec]
        if plugins:
            cmd += ["--plugin-out", str(plugin_dir)]
        cmd += list(extra)
        if keep:
            (tmp / "cmd.sh").write_text(" ".join(shlex.quote(c) for c in cmd) + "\n")
            for chk in launch.checks:
                if chk.mode != "fn":
                    np.ascontiguousarray(chk.expected).tofile(tmp / f"expected-{chk.name}.bin")
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=case.timeout + 30)
        except subprocess.TimeoutExpired:
            return False, f"timed out after {case.timeout + 30} s", time.monotonic() - t0, {}
        except OSError as exc:
            return False, f"cannot run {binary}: {exc}", time.monotonic() - t0, {}
        if launch.expect_fault is not None:
            fault = {"fault_report": p.stderr.strip()}
            if p.returncode == 2 and re.search(launch.expect_fault, p.stderr, re.I):
                return True, "", time.monotonic() - t0, fault
            tail = " | ".join((p.stdout + p.stderr).strip().splitlines()[-6:])
            return (False, f"expected a fault matching /{launch.expect_fault}/ (exit 2), got exit {p.returncode}: {tail}",
                    time.monotonic() - t0, fault)
        if p.returncode != 0:
            tail = (p.stdout + p.stderr).strip().splitlines()[-6:]
            again = f" [reproduce: sh {tmp / 'cmd.sh'}]" if keep else ""
            return False, f"run-kernel exited {p.returncode}: " + " | ".join(tail) + again, time.monotonic() - t0, {}
        stats = {}
        for key, pat in (("insts", r"^instructions:\s+(\d+)"), ("wall", r"^wall time:\s+([0-9.]+)")):
            m = re.search(pat, p.stdout, re.M)
            if m:
                stats[key] = float(m.group(1))
        stats["stderr"] = p.stderr
        stats["plugins"] = {}
        for f in sorted(plugin_dir.glob("*.jsonl")):
            name = f.name.rsplit("-", 1)[0]
            stats["plugins"].setdefault(name, []).extend(
                json.loads(ln) for ln in f.read_text().splitlines() if ln.strip())
        problems, outputs = [], {}
        for name, kind in CHECKERS.items():
            files_ = sorted(plugin_dir.glob(f"{name}-*.jsonl"))
            recs = stats["plugins"].get(name, [])
            found = [r for r in recs if r.get("type") == kind]
            if not check_plugins:
                continue
            if name == "races" and launch.races is not None and "races" in enabled:
                if not files_:
                    problems.append("races: the plugin wrote nothing")
                    continue
                got = sorted({f"{r['space']}/{r['scope']}" for r in found})
                if got != sorted(set(launch.races)):
                    first = "; ".join(f"{r['space']}/{r['scope']} at 0x{r['address']:x}: {r['first']['access']} "
                                      f"+0x{r['first']['offset']:x} vs {r['second']['access']} "
                                      f"+0x{r['second']['offset']:x}" for r in found[:3])
                    problems.append(f"races: expected {sorted(set(launch.races))}, reported {got} ({first})")
                continue
            if found and name == "races":
                r = found[0]
                problems.append(f"races: {len(found)} report(s), first: {r['space']}/{r['scope']} at 0x{r['address']:x}: "
                                f"{r['first']['access']} +0x{r['first']['offset']:x} vs {r['second']['access']} "
                                f"+0x{r['second']['offset']:x}")
            elif found:
                r = found[0]
                problems.append(f"{name}: {len(found)} report(s), first: {r.get('kind')} {r.get('rule') or ''} "
                                f"at +0x{r.get('offset', 0):x} `{r.get('instruction')}` "
                                f"({r.get('register')}, producer `{(r.get('producer') or {}).get('instruction')}`)")
        for name, (f, dt) in files.items():
            try:
                outputs[name] = np.fromfile(f, dtype=dt)
            except (OSError, ValueError) as exc:
                problems.append(f"{name}: cannot read output: {exc}")
        for chk in launch.checks:
            if chk.name not in outputs:
                continue
            got = outputs[chk.name]
            if chk.view is not None:
                got = got.view(np.dtype(chk.view))
            ok, detail = compare(chk, got, outputs)
            if not ok:
                problems.append(detail)
        detail = "; ".join(problems)
        if problems and keep:
            detail += f" [reproduce: sh {tmp / 'cmd.sh'}]"
        if want_outputs:
            stats["outputs"] = {n: f.read_bytes() for n, (f, _) in files.items() if f.exists()}
        return not problems, detail, time.monotonic() - t0, stats


DBT_OUT = ROOT / "build" / "dbt"
MFMA_SPLIT = re.compile(r"^v_mfma_")
# The most cases `run --dbt` may see fail closed; more is a failure (lower it
# when a rewrite lands, never raise it to hide a regression).
DBT_FAIL_CLOSED_MAX = ROOT / "tests" / "dbt" / "fail_closed_max"
# The one way to fail closed: `rocjitsu dbt translate` exits 1 with a DbtError
# naming the code object, the kernel, the PC in it and the instruction.
DBT_ERROR = re.compile(r"^rocjitsu: error: (?P<file>.+?): dbt: (?P<kernel>[^\s`]+)\+0x(?P<pc>[0-9a-f]+): "
                       r"`(?P<inst>[^`]+)`: (?P<why>.+)$")


def dbt_translate(binary: str, hsaco: pathlib.Path) -> tuple[str, pathlib.Path | None, dict | None, str]:
    """Translates a gfx950 code object for gfx942 with `rocjitsu dbt
    translate --json`: (status, output path, report, detail). The status is
    "OK" (translated), "CLOSED" (a DbtError naming kernel, PC and
    instruction, and nothing written) or "FAIL" (anything else: a panic, a
    signal, another error, a missing output or report)."""
    out = DBT_OUT / "gfx950" / hsaco.name
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    cmd = [binary, "dbt", "translate", "--guest", "gfx950", "--host", "gfx942", str(hsaco), str(tmp), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        return "FAIL", None, None, "translator timed out after 300 s"
    except OSError as exc:
        return "FAIL", None, None, f"cannot run {binary}: {exc}"
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    tail = " | ".join(lines[-6:]) or "(no output)"
    written = tmp.exists()
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
    if p.returncode < 0:
        return "FAIL", None, None, f"translator killed by signal {-p.returncode}: {tail}"
    if p.returncode == 101 or "panicked" in p.stderr:
        return "FAIL", None, None, f"translator panicked (exit {p.returncode}): {tail}"
    if p.returncode != 0:
        m = DBT_ERROR.match(lines[-1]) if lines else None
        if p.returncode != 1 or m is None or m["file"] != str(hsaco):
            return "FAIL", None, None, f"translator failed without a DbtError naming kernel, PC and instruction " \
                                       f"(exit {p.returncode}): {tail}"
        if written or p.stdout.strip():
            return "FAIL", None, None, f"translator failed closed but wrote output: {lines[-1]}"
        return "CLOSED", None, None, lines[-1]
    try:
        report = json.loads(p.stdout)
    except ValueError as exc:
        tmp.unlink(missing_ok=True)
        return "FAIL", None, None, f"translator exited 0 without a JSON report ({exc}): {p.stdout[:200]!r}"
    if not written:
        return "FAIL", None, None, f"translator exited 0 but wrote no {tmp.name}"
    os.replace(tmp, out)
    return "OK", out, report, ""


def _dbt_job(name: str, binary: str, threads: int, keep: str | None):
    """The differential run of one gfx950 case: translated and run on gfx942,
    it must pass the case's numpy reference like a native run; it is also
    compared with the native gfx950 run (bit-exact, or within the case's
    tolerance where an MFMA is split over K). A fault case must fault on
    both with the same report (cause, kernel, workgroup, wave, PC,
    instruction). (status, detail, native wall, translated wall, report)."""
    from harness import REGISTRY
    case = next(c for c in REGISTRY if c.name == name)
    try:
        _, _, hsaco, _ = resolve(case, "gfx950")
    except Exception as exc:
        return "FAIL", f"case error: {exc}", 0.0, 0.0, None
    status, out, report, err = dbt_translate(binary, hsaco)
    if status != "OK":
        return status, err, 0.0, 0.0, None
    ok_n, det_n, _, st_n = run_case(case, "gfx950", binary, False, threads, keep, want_outputs=True)
    ok_t, det_t, _, st_t = run_case(case, "gfx950", binary, False, threads, None, hsaco_override=out,
                                    gpu="gfx942", want_outputs=True)
    wall = (st_n.get("wall", 0.0), st_t.get("wall", 0.0))
    if case.launch("gfx950").expect_fault is not None:
        if not ok_t:
            return "FAIL", f"fault case, translated run: {det_t}", *wall, report
        if not ok_n:
            return "FAIL", f"fault case, native run: {det_n}", *wall, report
        rn, rt = st_n.get("fault_report", ""), st_t.get("fault_report", "")
        if rn != rt:
            return ("FAIL", f"fault reports differ: native [{' | '.join(rn.splitlines())}], "
                    f"translated [{' | '.join(rt.splitlines())}]", *wall, report)
        pc = next((ln.strip() for ln in rn.splitlines() if ln.strip().startswith("PC:")), "no PC")
        return "PASS", f"same fault as native: {rn.splitlines()[0]} ({pc})", *wall, report
    if not ok_t:
        return "FAIL", f"translated run against the reference: {det_t}", *wall, report
    if st_n.get("outputs") == st_t.get("outputs"):
        return "PASS", "reference met, bit-exact with the native gfx950 run", *wall, report
    split = any(MFMA_SPLIT.match(k) for k in (report or {}).get("rewritten_by_kind", {}))
    if split and ok_n:
        return ("PASS", "reference met, within the case's tolerance of the native run "
                "(MFMA split over K: another summation order)", *wall, report)
    native = f" (native run: {det_n})" if not ok_n else ""
    return "FAIL", f"reference met, but the outputs differ from the native gfx950 run{native}", *wall, report


def fail_closed_max() -> tuple[int | None, str]:
    """The threshold in tests/dbt/fail_closed_max (its first line that is not
    a comment): (value or None, error)."""
    rel = DBT_FAIL_CLOSED_MAX.relative_to(ROOT)
    try:
        lines = [ln.strip() for ln in DBT_FAIL_CLOSED_MAX.read_text().splitlines()]
    except OSError as exc:
        return None, f"cannot read {rel}: {exc}"
    vals = [ln for ln in lines if ln and not ln.startswith("#")]
    if not vals or not vals[0].isdigit():
        return None, f"{rel}: expected a count of cases, got {vals[0] if vals else 'nothing'!r}"
    return int(vals[0]), ""


def coverage(binary: str, objs: list[pathlib.Path]) -> int:
    """Prints the translation coverage of the gfx950-only instruction kinds
    in `objs` (`rocjitsu dbt coverage --json`)."""
    p = subprocess.run([binary, "dbt", "coverage", "--json", *map(str, objs)], capture_output=True, text=True)
    if p.returncode != 0:
        log(f"dbt coverage failed: {p.stderr.strip()}")
        return 1
    cov = json.loads(p.stdout)
    kinds = cov["kinds"]
    tk = sum(1 for k in kinds if k["untranslated"] == 0)
    ti = sum(k["translated"] for k in kinds)
    ni = sum(k["translated"] + k["untranslated"] for k in kinds)
    print(f"dbt coverage: {tk}/{len(kinds)} gfx950-only instruction kinds translate everywhere "
          f"({100 * tk / max(1, len(kinds)):.0f}%), {ti}/{ni} instructions ({100 * ti / max(1, ni):.0f}%), "
          f"{cov['objects_translated']}/{cov['objects']} code objects translate")
    for k in sorted(kinds, key=lambda k: -(k["translated"] + k["untranslated"])):
        why = f"  [{k['reason']}]" if k["untranslated"] else ""
        print(f"  {k['kind']:40s} {k['translated']:5d} translated {k['untranslated']:5d} not{why}")
    return 0


def cmd_dbt(args) -> int:
    """`run --dbt`: every gfx950 case translated and run on gfx942, checked
    against its numpy reference and compared with the native gfx950 run;
    fails on any FAIL (a translator panic or crash included) and when more
    cases fail closed than tests/dbt/fail_closed_max allows."""
    import cases  # noqa: F401
    from harness import REGISTRY
    if not args.no_build:
        build(["gfx950"], args.jobs, False)
    binary = str(pathlib.Path(args.bin).resolve())
    jobs = [c for c in REGISTRY if "gfx950" in c.targets and
            (not args.k or any(fnmatch.fnmatch(c.name, f"*{k}*") for k in args.k))]
    counts = {"PASS": 0, "FAIL": 0, "CLOSED": 0}
    wall_n = wall_t = 0.0
    t0 = time.monotonic()
    with cf.ProcessPoolExecutor(max_workers=args.jobs, initializer=_init_worker) as pool:
        futs = {pool.submit(_dbt_job, c.name, binary, args.threads, args.keep): c for c in jobs}
        for fut in cf.as_completed(futs):
            c = futs[fut]
            try:
                status, detail, wn, wt, _ = fut.result()
            except Exception as exc:
                status, detail, wn, wt = "FAIL", f"harness error: {type(exc).__name__}: {exc}", 0.0, 0.0
            counts[status] += 1
            perf = ""
            if status == "PASS" and wn > 0 and wt > 0:
                wall_n += wn
                wall_t += wt
                perf = f", native {wn:.3f} s, translated {wt:.3f} s = {wt / wn:.2f}x"
            print(f"{status} dbt {c.name}: {detail}{perf}", flush=True)
    objs = sorted({resolve(c, "gfx950")[2] for c in jobs})
    if coverage(binary, objs) != 0:
        counts["FAIL"] += 1
        print("FAIL dbt coverage: `rocjitsu dbt coverage` failed", flush=True)
    n = len(jobs)
    limit, err = fail_closed_max()
    rel = DBT_FAIL_CLOSED_MAX.relative_to(ROOT)
    if limit is None:
        counts["FAIL"] += 1
        print(f"FAIL dbt fail-closed threshold: {err}", flush=True)
    elif counts["CLOSED"] > limit:
        counts["FAIL"] += 1
        print(f"FAIL dbt fail-closed threshold: {counts['CLOSED']} cases failed closed, more than the {limit} "
              f"allowed by {rel}", flush=True)
    elif counts["CLOSED"] < limit and not args.k:
        print(f"dbt: {counts['CLOSED']} cases failed closed, fewer than the {limit} of {rel}: lower it", flush=True)
    print(f"dbt: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['CLOSED']} failed closed "
          f"(not translated: {100 * counts['CLOSED'] / max(1, n):.0f}% of {n} cases; at most {limit} allowed by {rel}) "
          f"({time.monotonic() - t0:.1f} s)")
    if wall_n > 0:
        print(f"dbt: emulator time of the translated code on gfx942 over native gfx950: {wall_t:.3f} s / "
              f"{wall_n:.3f} s = {wall_t / wall_n:.2f}x (target <= 1.5x)")
    return 1 if counts["FAIL"] else 0


DBI_OUT = ROOT / "build" / "dbi"
# The one way to refuse: `rocjitsu dbi instrument` exits 1 with a DbiError.
DBI_ERROR = re.compile(r"^rocjitsu: error: (?P<file>.+?): dbi: (?P<why>.+)$")


def dbi_instrument(binary: str, hsaco: pathlib.Path, target: str, tag: str):
    """Instruments a code object with bbcount (`rocjitsu dbi instrument`):
    (status, output path, detail); the status is "OK", "REFUSED" (a
    DbiError, nothing written) or "FAIL" (anything else)."""
    out = DBI_OUT / target / f"{tag}.hsaco"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    cmd = [binary, "dbi", "instrument", "--tool", "bbcount", str(hsaco), str(out), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "FAIL", None, "instrumenter timed out after 300 s"
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    tail = " | ".join(lines[-6:]) or "(no output)"
    if p.returncode == 1 and lines and DBI_ERROR.match(lines[-1]):
        if out.exists():
            return "FAIL", None, f"refused but wrote output: {lines[-1]}"
        return "REFUSED", None, DBI_ERROR.match(lines[-1])["why"]
    if p.returncode != 0:
        return "FAIL", None, f"instrumenter exited {p.returncode}: {tail}"
    if not out.exists():
        return "FAIL", None, "instrumenter exited 0 but wrote nothing"
    return "OK", out, ""


def _dbi_job(name: str, target: str, binary: str, threads: int, keep: str | None):
    """One case under bbcount: the original runs with the coverage plugin,
    the instrumented object runs against the case's numpy reference, and
    every block's count must equal the plugin's count of its first
    instruction (blocks of other kernels and of callees no call reached:
    zero). (status, detail)."""
    from harness import REGISTRY
    case = next(c for c in REGISTRY if c.name == name)
    try:
        _, _, hsaco, _ = resolve(case, target)
    except Exception as exc:
        return "FAIL", f"case error: {exc}"
    status, out, err = dbi_instrument(binary, pathlib.Path(hsaco), target, case.name)
    if status != "OK":
        return status, err
    ok_o, det_o, _, st_o = run_case(case, target, binary, False, threads, keep, plugins=("coverage:format=jsonl",))
    with tempfile.TemporaryDirectory(prefix="rjdbi-") as tmp:
        counts_path = pathlib.Path(tmp) / "counts.json"
        ok_i, det_i, _, st_i = run_case(case, target, binary, False, threads, None, hsaco_override=out,
                                        plugins=("coverage:format=jsonl",), extra=("--dbi-out", str(counts_path)))
        counts = json.loads(counts_path.read_text()) if counts_path.exists() else None
    out.unlink(missing_ok=True)
    if not ok_o:
        return "FAIL", f"original run: {det_o}"
    if not ok_i:
        return "FAIL", f"instrumented run against the reference: {det_i}"
    if case.launch(target).expect_fault is not None:
        return "PASS", "fault case: the instrumented kernel faults as expected (counts not compared)"
    recs = [r for r in st_o.get("plugins", {}).get("coverage", []) if r.get("type") == "kernel"]
    recs_i = [r for r in st_i.get("plugins", {}).get("coverage", []) if r.get("type") == "kernel"]
    if len(recs) != 1 or len(recs_i) != 1 or counts is None:
        return "FAIL", (f"expected one coverage record per run and a --dbi-out file, got {len(recs)}, "
                        f"{len(recs_i)} and {counts is not None}")

    # Blocks outside the kernel's symbol (its callees, other kernels) are
    # found among the plugin's PCs outside the kernel: the load base is the
    # difference most of their first instructions agree on.
    blocks = counts["blocks"]
    listing = {ln["address"]: ln["count"] for ln in recs[0]["listing"]}
    listing_i = {ln["address"]: ln["count"] for ln in recs_i[0]["listing"]}
    votes: dict[int, int] = {}
    for b in blocks:
        if b["start"] not in listing:
            for o in recs[0]["outside"]:
                # The loader places a code object on a page boundary.
                if o["text"] == b["first"] and (o["pc"] - b["start"]) % 4096 == 0:
                    votes[o["pc"] - b["start"]] = votes.get(o["pc"] - b["start"], 0) + 1
    base = max(votes, key=votes.get) if votes else None
    outside = {o["pc"]: o["count"] for o in recs[0]["outside"]}
    bad, same_run_bad, n, ran = [], [], 0, 0
    for b in blocks:
        n += 1
        ran += b["count"] > 0
        if b["start"] in listing:
            want = listing[b["start"]]
            # In the instrumented run the block's first instruction is the
            # s_branch to its trampoline: executed once per entry.
            if b["count"] != listing_i.get(b["start"]):
                same_run_bad.append(f"0x{b['start']:x} ({b['function']}): bbcount {b['count']}, coverage of the "
                                    f"same run {listing_i.get(b['start'])}")
        else:
            want = outside.get(base + b["start"], 0) if base is not None else 0
        if b["count"] != want:
            bad.append(f"0x{b['start']:x} ({b['function']}): bbcount {b['count']}, coverage {want}")
    outside_bad = [x for x in bad if int(x.split(" ")[0], 16) not in listing]
    if outside_bad:
        return "FAIL", f"{len(outside_bad)} blocks outside the kernel differ: " + "; ".join(outside_bad[:4])
    if same_run_bad:
        return "FAIL", f"{len(same_run_bad)} of {n} blocks differ: " + "; ".join(same_run_bad[:4])
    if bad:
        # The kernel's control flow depends on timing (an atomic retry loop,
        # a race): the instrumented run differs from the original's, so its
        # counts are checked against the coverage plugin in that same run.
        return "PASS", (f"{n} blocks ({ran} executed) equal the coverage plugin's counts in the same run; "
                        f"{len(bad)} differ from the original's run (timing-dependent control flow: "
                        f"{bad[0]}); outputs meet the reference")
    return "PASS", f"{n} blocks ({ran} executed) equal the coverage plugin's counts; outputs meet the reference"


def cmd_dbi(args) -> int:
    """`run --dbi`: every case on every selected target instrumented with
    bbcount, run, and checked against its numpy reference and against the
    coverage plugin's counts of the original; fails on any FAIL. Refusals
    (a clear error naming the kernel, PC and instruction) are counted and
    listed, not failed."""
    if not args.no_build:
        build(args.target, args.jobs, False)
    binary = str(pathlib.Path(args.bin).resolve())
    jobs = selected(args)
    counts = {"PASS": 0, "FAIL": 0, "REFUSED": 0}
    reasons: dict[str, int] = {}
    t0 = time.monotonic()
    with cf.ProcessPoolExecutor(max_workers=args.jobs, initializer=_init_worker) as pool:
        futs = {pool.submit(_dbi_job, c.name, t, binary, args.threads, args.keep): (c, t) for c, t in jobs}
        for fut in cf.as_completed(futs):
            c, t = futs[fut]
            try:
                status, detail = fut.result()
            except Exception as exc:
                status, detail = "FAIL", f"harness error: {type(exc).__name__}: {exc}"
            counts[status] += 1
            if status == "REFUSED":
                key = re.sub(r"0x[0-9a-f]+", "0x…", detail.split(": ", 1)[-1])[:120]
                reasons[key] = reasons.get(key, 0) + 1
            print(f"{status} dbi {t} {c.name}: {detail}", flush=True)
    for why, k in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"dbi: refused {k}x: {why}")
    print(f"dbi: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['REFUSED']} refused "
          f"({time.monotonic() - t0:.1f} s)")
    return 1 if counts["FAIL"] else 0


def _init_worker():
    import cases  # noqa: F401  (fills the registry in each worker process)


def _job(name: str, target: str, binary: str, dry_run: bool, threads: int, keep: str | None,
         plugins: tuple[str, ...] = (), exec_mode: str | None = None):
    from harness import REGISTRY
    case = next(c for c in REGISTRY if c.name == name)
    return run_case(case, target, binary, dry_run, threads, keep, plugins=plugins, exec_mode=exec_mode)


def applicable(case, target: str) -> bool:
    """Whether the case's kernel exists for the target: its source is not
    limited to other targets (`corpus-targets:`, e.g. CDNA-only builtins),
    and a wave64 run is of a clang source (Triton builds wave32 on RDNA and
    has no GFX10 backend: no Triton case runs on gfx1010 or gfx1030)."""
    if case.triton:
        return not target.endswith("w64") and build_target(target) in corpus.TRITON_TARGETS
    stem = case.obj
    for src in sources():
        if src.stem == stem:
            only = corpus.source_targets(src)
            return only is None or build_target(target) in only
    return True


def selected(args):
    import cases  # noqa: F401
    from harness import REGISTRY
    jobs = []
    for target in args.target:
        for c in REGISTRY:
            if target not in c.targets:
                continue
            if not applicable(c, target):
                continue
            if args.k and not any(fnmatch.fnmatch(c.name, f"*{k}*") for k in args.k):
                continue
            jobs.append((c, target))
    return jobs


def cmd_run(args) -> int:
    if args.dbt:
        return cmd_dbt(args)
    if args.dbi:
        return cmd_dbi(args)
    if not args.no_build:
        build(args.target, args.jobs, False)
    binary = str(pathlib.Path(args.bin).resolve()) if os.sep in args.bin else (shutil.which(args.bin) or args.bin)
    if not args.dry_run and not pathlib.Path(binary).exists():
        log(f"{binary} not found (cargo build --release -p rocjitsu-cli)")
        return 1
    if args.dry_run:
        import selftest
        problems = selftest.run()
        for p in problems:
            print(f"FAIL selftest: {p}")
        if problems:
            return 1
    jobs = selected(args)
    passed = failed = 0
    blocked: dict[str, list[str]] = {}
    insts = emu_wall = 0.0
    t0 = time.monotonic()
    with cf.ProcessPoolExecutor(max_workers=args.jobs, initializer=_init_worker) as pool:
        futs = {pool.submit(_job, c.name, t, binary, args.dry_run, args.threads, args.keep, tuple(args.plugin),
                            args.exec): (c, t)
                for c, t in jobs}
        for fut in cf.as_completed(futs):
            c, t = futs[fut]
            try:
                ok, detail, secs, stats = fut.result()
            except Exception as exc:  # a crash in a worker is this case's failure
                ok, detail, secs, stats = False, f"harness error: {type(exc).__name__}: {exc}", 0.0, {}
            perf = ""
            if "insts" in stats and "wall" in stats:
                insts += stats["insts"]
                emu_wall += stats["wall"]
                rate = stats["insts"] / stats["wall"] if stats["wall"] > 0 else 0.0
                perf = f", {stats['insts'] / 1e6:.2f}M wave-insts in {stats['wall']:.3f} s = {rate / 1e6:.1f}M/s"
            if ok:
                passed += 1
                print(f"PASS {t} {c.name} ({secs:.2f} s{perf})", flush=True)
            else:
                failed += 1
                print(f"FAIL {t} {c.name} ({secs:.2f} s): {detail}", flush=True)
                m = re.search(r"instruction `([^`]+)` is not supported", detail)
                if m:
                    blocked.setdefault(m.group(1), []).append(f"{t}:{c.name}")
    if blocked:
        # The first unsupported instruction each failing case met, most common first.
        top = sorted(blocked.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        print("kernels: unsupported instructions (cases stopped by each): " +
              ", ".join(f"{m} {len(v)}" for m, v in top))
    if emu_wall > 0:
        print(f"kernels: emulator total {insts / 1e6:.1f}M wave-instructions in {emu_wall:.2f} s "
              f"({insts / emu_wall / 1e6:.1f}M wave-instructions/s, --threads {args.threads})")
    what = "dry-run " if args.dry_run else ""
    print(f"kernels: {what}{passed} passed, {failed} failed ({time.monotonic() - t0:.1f} s)")
    return 1 if failed else 0


def cmd_list(args) -> int:
    per = {}
    for c, t in selected(args):
        per.setdefault(t, []).append(c.name)
    for t, names in per.items():
        print(f"{t}: {len(names)} cases")
        for n in names:
            print(f"  {n}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("build", "run", "list"))
    ap.add_argument("--target", action="append", choices=RUN_TARGETS,
                    help="only these targets (repeatable; default: the CDNA ones)")
    ap.add_argument("-k", action="append", help="only cases whose name contains this (glob, repeatable)")
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "rocjitsu"))
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--threads", type=int, default=1,
                    help="host threads per run-kernel (cases already run --jobs at a time)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep each case's files and a cmd.sh reproducing its run under DIR/<target>/<case>/")
    ap.add_argument("--force", action="store_true", help="rebuild every code object")
    ap.add_argument("--plugin", action="append", default=[], metavar="SPEC",
                    help="enable an execution plugin on every run (repeatable); with hazards or races, "
                         "a case fails when the plugin reports anything")
    ap.add_argument("--dry-run", action="store_true", help="build, make inputs and references, check arguments")
    ap.add_argument("--no-build", action="store_true", help="run with the code objects already built")
    ap.add_argument("--dbt", action="store_true",
                    help="differential DBT test: translate every gfx950 case for gfx942 (rocjitsu dbt translate), "
                         "run it there and compare with the native gfx950 run; prints coverage and the time ratio")
    ap.add_argument("--dbi", action="store_true",
                    help="DBI test: instrument every case with bbcount (rocjitsu dbi instrument), check the outputs "
                         "against the reference and the counts against the coverage plugin's run of the original")
    ap.add_argument("--exec", choices=("interp", "jit", "auto", "check"),
                    help="run-kernel's execution tier; check: interpreter and translated runs must agree")
    args = ap.parse_args()
    args.target = args.target or list(TARGETS)
    try:
        if args.command == "build":
            build(args.target, args.jobs, args.force)
            return 0
        if args.command == "list":
            return cmd_list(args)
        return cmd_run(args)
    except corpus.BuildError as exc:
        log(f"FAILED: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
