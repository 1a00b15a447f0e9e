#!/usr/bin/env python3
"""The hazards plugin's waitcnt-deletion test.

For each selected case of tests/kernels (compiled by LLVM 22, whose
SIInsertWaitcnts put every `s_waitcnt` there for a reason), every
`s_waitcnt` of the kernel is deleted in turn -- replaced by `s_nop 0`, the
same size, so nothing moves -- and the case is run again with
`--plugin hazards`. The emulator runs memory instructions to completion,
so a deletion never changes its results; on hardware it may. What the
plugin must say is therefore checked against an oracle:

THE ORACLE. An independent model of the wait counters, written here in
Python over `llvm-objdump-22`'s listing of the kernel (register operands
parsed from LLVM's text, not from our decoder), replayed along the exact
path wave 0 of workgroup (0,0,0) took (`run-kernel --trace`, recorded once
on the unmodified kernel: deleting a wait changes no branch in the
emulator). Per the ISA manuals' S_WAITCNT semantics: vector memory
instructions count in vmcnt and complete in issue order; LDS instructions
count in lgkmcnt and complete in order among themselves; scalar memory and
messages count in lgkmcnt in any order; `s_waitcnt X(N)` proves complete
an operation with at least N younger ones of its own in-order stream, or
every one when N is 0. A deletion "changes results" when, along that path,
  (a) an instruction reads or writes a register that an operation not yet
      proven complete will write (its destination, LLVM's first operand of
      a load, a returning atomic, an LDS read), or
  (b) `s_barrier` is reached while an LDS store or atomic, or a load into
      LDS (LDS DMA), is not proven complete (the workgroup's other waves
      read LDS after the barrier).
Not modelled, by either side: a wave reading LDS that its own LDS DMA has
not finished writing without a barrier between (that needs the LDS
addresses of the DMA), and ordering of global memory for fences and
atomics.
Waits kept for those other reasons change nothing the model sees; they are
counted as "not a register/barrier dependency" when their deletion leaves no
report, and the plugin must stay silent for them too. Calls are followed:
the waits of the functions a kernel calls are deleted too.

THE TEST. For every deletion, the set of (PC of the hazard, PC of the
instruction that produced the register) the plugin reports for wave 0 of
workgroup (0,0,0) must equal the oracle's set; on the unmodified kernel
both must be empty (any report from any wave fails). The plugin's other
waves may report more (they can take other paths) and are not compared.
Outputs are still checked against the numpy reference on every run.
Exit status 1 on any mismatch.

  scripts/hazard_deletion.py [--target T ...] [-k CASE ...] [--jobs N] [--ci]
"""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = pathlib.Path(os.environ.get("ROCJITSU_CACHE", pathlib.Path.home() / ".cache" / "rocjitsu"))
VENV_PYTHON = CACHE / "triton-venv" / "bin" / "python"
try:
    import numpy  # noqa: F401
except ImportError:
    if VENV_PYTHON.exists() and not os.environ.get("ROCJITSU_KERNELS_REEXEC"):
        os.environ["ROCJITSU_KERNELS_REEXEC"] = "1"
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), __file__, *sys.argv[1:]])
    sys.exit("hazard_deletion: numpy is missing; run scripts/setup.sh")

import argparse  # noqa: E402
import concurrent.futures as cf  # noqa: E402
import fnmatch  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.dont_write_bytecode = True
sys.path.insert(0, str(ROOT / "scripts"))
import kernels  # noqa: E402

S_NOP_0 = (0xBF800000).to_bytes(4, "little")
# The CI tier: these cases on these targets (waits on vmcnt and lgkmcnt,
# barriers after LDS writes, atomics, a GEMM loop); the full tier is every
# case (make test-hazards-full).
CI = {
    "gfx942": ["reduce_lds", "softmax", "sgemm_simt", "atomics_i32", "transpose_lds", "histogram_lds"],
    "gfx90a": ["vadd_f32", "dgemm_naive"],
    "gfx950": ["vadd_f32"],
}

# --- the listing ------------------------------------------------------------------

REG = re.compile(r"^(v|s|a|ttmp)(?:(\d+)|\[(\d+):(\d+)\])$")
SPECIAL = {"vcc": ("s", 106, 2), "vcc_lo": ("s", 106, 1), "vcc_hi": ("s", 107, 1),
           "exec": ("s", 126, 2), "exec_lo": ("s", 126, 1), "exec_hi": ("s", 127, 1), "m0": ("s", 124, 1)}


def regs_of(operands: str) -> list[tuple[str, int, int]]:
    """The registers in an operand list as (file, first, count), in order."""
    out = []
    ops = re.sub(r"/\*.*?\*/", "", operands)
    for tok in re.split(r"[,\s]+", ops):
        tok = tok.strip("-|").removeprefix("neg(").removeprefix("abs(").removeprefix("sext(").rstrip(")")
        if tok in SPECIAL:
            out.append(SPECIAL[tok])
            continue
        m = REG.match(tok)
        if not m:
            continue
        f = m.group(1)
        if f == "ttmp":
            f, base = "s", 108
        else:
            base = 0
        if m.group(2) is not None:
            out.append((f, base + int(m.group(2)), 1))
        else:
            a, b = int(m.group(3)), int(m.group(4))
            out.append((f, base + a, b - a + 1))
    return out


def units(r):
    f, first, n = r
    return {(f, first + i) for i in range(n)}


class Inst:
    """One instruction of the listing, classified from its text."""

    def __init__(self, off: int, text: str, size: int):
        self.off, self.text, self.size = off, text, size
        name, _, ops = text.partition(" ")
        self.name = name
        self.regs = regs_of(ops.split(" ; ")[0])
        n = name
        self.vmem = n.startswith(("global_", "buffer_", "flat_", "scratch_", "tbuffer_"))
        self.lds = n.startswith("ds_") and n != "ds_nop"
        self.smem = n.startswith(("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_atomic",
                                  "s_buffer_atomic", "s_memtime", "s_memrealtime", "s_dcache", "s_scratch"))
        self.msg = n in ("s_sendmsg", "s_sendmsghalt")
        ret = " sc0" in text or " glc" in text
        # LDS DMA: a load into LDS (`global_load_lds_*`, or `lds` on a
        # buffer load): no register result; it writes LDS.
        lds_dma = self.vmem and ("_load_lds_" in n or re.search(r"\blds\b", ops) is not None)
        writes_first = (
            (self.vmem and ("_load" in n and not lds_dma or "_atomic" in n and ret))
            or (self.smem and (n.startswith(("s_load", "s_buffer_load", "s_memtime", "s_memrealtime"))
                               or ("_atomic" in n and ret)))
            or (self.lds and (n.startswith(("ds_read", "ds_load")) or "_rtn_" in n
                              or n in ("ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32",
                                       "ds_append", "ds_consume") or n.startswith("ds_wrxchg")))
        )
        self.dst = self.regs[0] if writes_first and self.regs else None
        # A buffer atomic's first operand is its data, of which a returning
        # compare-and-swap writes back the first half.
        if self.dst and n.startswith("buffer_atomic") and "cmpswap" in n:
            f, a, c = self.dst
            self.dst = (f, a, c // 2)
        # An LDS store or atomic: other waves read it after a barrier.
        self.lds_write = lds_dma or (self.lds and not n.startswith(("ds_read", "ds_load")) and n not in (
            "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32") and " gds" not in text)
        self.wait = None
        if n == "s_waitcnt":
            self.wait = {k: int(v) for k, v in re.findall(r"(vmcnt|lgkmcnt|expcnt)\((\d+)\)", ops)}


def listing(hsaco: pathlib.Path, kernel: str) -> tuple[list[Inst], set[int], int]:
    """Every instruction of the code object's functions (offsets from the
    kernel's entry, modulo 2^64 as the plugin reports them), the offsets of
    the kernel's own, and the file offset of the kernel's entry."""
    out = subprocess.run(["llvm-objdump-22", "-d", str(hsaco)], capture_output=True, text=True, check=True).stdout
    rows, addr0, func = [], None, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            func = m.group(2)
            if func == kernel:
                addr0 = int(m.group(1), 16)
            continue
        if func is None or "//" not in line:
            continue
        text, comment = line.split("//", 1)
        text = " ".join(text.split())
        if not text or text.startswith("."):
            continue
        a, hexes = comment.split(":", 1)
        words = [w for w in hexes.split() if len(w) == 8 and not w.startswith("<")]
        rows.append((int(a, 16), text, 4 * len(words), func == kernel))
    if addr0 is None:
        raise RuntimeError(f"{kernel} not in {hsaco}")
    insts = [Inst((a - addr0) % (1 << 64), text, size) for a, text, size, _ in rows]
    own = {(a - addr0) % (1 << 64) for a, _, _, mine in rows if mine}
    sections = subprocess.run(["llvm-readelf-22", "-S", "-W", str(hsaco)], capture_output=True, text=True,
                              check=True).stdout
    for line in sections.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == ".text":
            sh_addr, sh_off = int(f[3], 16), int(f[4], 16)
            return insts, own, addr0 - sh_addr + sh_off
    raise RuntimeError(f"{hsaco}: no .text section")


# --- the oracle -------------------------------------------------------------------

def oracle(path: list[Inst], deleted: int | None) -> set[tuple[int, int]]:
    """(hazard offset, producer offset) pairs along `path` with the wait at
    offset `deleted` removed."""
    pending = []  # [inst, counters {name: (stream, seq)}]
    issued: dict[tuple[str, str], int] = {}
    found = set()
    for i in path:
        if pending:
            here = set().union(*(units(r) for r in i.regs)) if i.regs else set()
            for op, _ in pending:
                if op.dst and units(op.dst) & here:
                    found.add((i.off, op.off))
            if i.name == "s_barrier":
                for op, _ in pending:
                    if op.lds_write:
                        found.add((i.off, op.off))
        if i.wait is not None and i.off != deleted:
            keep = []
            for op, seqs in pending:
                done = False
                for c, n in i.wait.items():
                    if c in seqs:
                        stream, seq = seqs[c]
                        in_order = stream in ("vmem", "lds")
                        done |= n == 0 or (in_order and issued[(c, stream)] - seq >= n)
                if not done:
                    keep.append((op, seqs))
            pending = keep
        counters = {}
        if i.vmem:
            counters["vmcnt"] = "vmem"
        elif i.lds:
            counters["lgkmcnt"] = "lds" if " gds" not in i.text else "gds"
        elif i.smem:
            counters["lgkmcnt"] = "smem"
        elif i.msg:
            counters["lgkmcnt"] = "msg"
        if counters:
            seqs = {}
            for c, stream in counters.items():
                issued[(c, stream)] = issued.get((c, stream), 0) + 1
                seqs[c] = (stream, issued[(c, stream)])
            pending.append((i, seqs))
    return found


# --- the runs ---------------------------------------------------------------------

def wave0_reports(stats) -> set[tuple[int, int]]:
    out = set()
    for r in stats.get("plugins", {}).get("hazards", []):
        if r.get("type") != "hazard" or r.get("kind") not in ("missing-wait", "barrier-lds-write"):
            continue
        if r["first"]["group"] == [0, 0, 0] and r["first"]["wave"] == 0:
            out.add((r["offset"], r["producer"]["offset"]))
    return out


def any_reports(stats) -> list[dict]:
    return [r for r in stats.get("plugins", {}).get("hazards", []) if r.get("type") == "hazard"]


def check_case(case_name: str, target: str, binary: str) -> tuple[bool, str, dict]:
    from harness import REGISTRY
    case = next(c for c in REGISTRY if c.name == case_name)
    _, _, hsaco, _ = kernels.resolve(case, target)
    insts, own, file_off = listing(hsaco, case.kernel)
    by_off = {i.off: i for i in insts}
    spec = ("hazards:format=jsonl,all=true",)
    # The unmodified kernel: no report, and wave 0's path.
    ok, detail, _, st = kernels.run_case(case, target, binary, False, 1, None, plugins=spec, check_plugins=False)
    if not ok:
        return False, f"unmodified run: {detail}", {}
    if any_reports(st):
        r = any_reports(st)[0]
        return False, f"unmodified kernel: {len(any_reports(st))} report(s), first {r['kind']} at +0x{r['offset']:x}", {}
    ok, detail, _, tr = kernels.run_case(case, target, binary, False, 1, None, extra=("--trace", "1000000"))
    if not ok:
        return False, f"trace run: {detail}", {}
    pcs = [int(m.group(1), 16) for m in re.finditer(r"^trace: 0x([0-9a-f]+)", tr["stderr"], re.M)]
    if not pcs:
        return False, "no trace", {}
    path = [by_off.get((pc - pcs[0]) % (1 << 64)) for pc in pcs]
    if None in path:
        return False, "the trace leaves the code object's listing (a call into another one)", {}
    # The kernel's waits, and those of the functions it calls that ran.
    executed = {i.off for i in path}
    waits = [i for i in insts if i.name == "s_waitcnt" and (i.off in own or i.off in executed)]
    if oracle(path, None):
        return False, f"the oracle finds hazards in the unmodified kernel: {sorted(oracle(path, None))[:3]}", {}
    counts = {"waits": len(waits), "changes": 0, "silent": 0, "not_executed": 0}
    problems = []
    data = bytearray(hsaco.read_bytes())
    with tempfile.TemporaryDirectory(prefix="rjdel-") as tmp:
        for w in waits:
            want = oracle(path, w.off)
            if w.off not in executed:
                counts["not_executed"] += 1
            patched = bytearray(data)
            at = (file_off + w.off) % (1 << 64)
            assert patched[at:at + 4] == data[at:at + 4] and data[at + 3] == 0xBF, f"+0x{w.off:x} is not SOPP"
            patched[at:at + 4] = S_NOP_0
            obj = pathlib.Path(tmp) / f"del-{w.off:x}.hsaco"
            obj.write_bytes(patched)
            ok, detail, _, st = kernels.run_case(case, target, binary, False, 1, None, hsaco_override=obj,
                                                 plugins=spec, check_plugins=False)
            if not ok:
                problems.append(f"`{w.text}` at +0x{w.off:x} deleted: run failed: {detail}")
                continue
            got = wave0_reports(st)
            if want:
                counts["changes"] += 1
            else:
                counts["silent"] += 1
            if got != want:
                fmt = lambda s: ", ".join(f"+0x{a:x}<-+0x{b:x}" for a, b in sorted(s)) or "none"  # noqa: E731
                problems.append(f"`{w.text}` at +0x{w.off:x} deleted: oracle {fmt(want)}; plugin {fmt(got)}")
    if problems:
        return False, "; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""), counts
    return True, "", counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", action="append", choices=kernels.TARGETS)
    ap.add_argument("-k", action="append", help="only cases whose name contains this (glob)")
    ap.add_argument("--ci", action="store_true", help="the CI tier (a fixed set of cases per target)")
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "rocjitsu"))
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    targets = args.target or list(kernels.TARGETS)
    if not args.no_build:
        kernels.build(targets, args.jobs, False)
    import cases  # noqa: F401
    from harness import REGISTRY
    jobs = []
    for t in targets:
        for c in REGISTRY:
            if t not in c.targets or c.triton:
                continue
            if c.launch(t).expect_fault is not None:
                continue
            if args.ci and c.name not in CI.get(t, []):
                continue
            if args.k and not any(fnmatch.fnmatch(c.name, f"*{k}*") for k in args.k):
                continue
            jobs.append((c.name, t))
    binary = str(pathlib.Path(args.bin).resolve())
    if not shutil.which(binary) and not pathlib.Path(binary).exists():
        print(f"hazard_deletion: {binary} not found (cargo build --release -p rocjitsu-cli)")
        return 1
    t0 = time.monotonic()
    total = {"waits": 0, "changes": 0, "silent": 0, "not_executed": 0}
    failed = 0
    with cf.ProcessPoolExecutor(max_workers=args.jobs, initializer=kernels._init_worker) as pool:
        futs = {pool.submit(check_case, n, t, binary): (n, t) for n, t in jobs}
        for fut in cf.as_completed(futs):
            n, t = futs[fut]
            try:
                ok, detail, counts = fut.result()
            except Exception as exc:
                ok, detail, counts = False, f"harness error: {type(exc).__name__}: {exc}", {}
            for k in total:
                total[k] += counts.get(k, 0)
            if ok:
                print(f"PASS {t} {n}: {counts['waits']} waits, {counts['changes']} deletions change results "
                      f"(all reported), {counts['silent']} do not (none reported)", flush=True)
            else:
                failed += 1
                print(f"FAIL {t} {n}: {detail}", flush=True)
    print(f"hazard_deletion: {len(jobs) - failed} passed, {failed} failed; {total['waits']} waits deleted one at a "
          f"time: {total['changes']} change results and were reported exactly, {total['silent']} do not "
          f"(not a register/barrier dependency on wave 0's path; {total['not_executed']} not executed) and "
          f"were not reported ({time.monotonic() - t0:.1f} s)")
    return 1 if failed or not jobs else 0


if __name__ == "__main__":
    sys.exit(main())
