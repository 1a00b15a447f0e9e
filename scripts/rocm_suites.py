#!/usr/bin/env python3
"""AMD's own library test suites (the gtest binaries Debian packages as
lib*-tests), unmodified, on the emulated GPUs.

  scripts/rocm_suites.py list [--suite S,...] [--tier ci|full] [--seed N]
  scripts/rocm_suites.py run  [--suite S,...] [--tier ci|full] [--seed N]
                              [--config FILE,...] [--filter GLOB,...] [--shard K/N]
                              [--timeout S] [-j N] [--rocjitsu PATH] [--json FILE] [-v]
  scripts/rocm_suites.py packages [--suite S,...]

Runs inside the ROCm 7.2.4 sysroot, where the packages are installed by
`scripts/sysroot.sh --rocm 7 install PKG...` (`make test-rocm` does both):

  scripts/sysroot.sh --rocm 7 install $(scripts/rocm_suites.py packages)
  scripts/sysroot.sh --rocm 7 run -- python3 scripts/rocm_suites.py run --tier ci

Each suite's binaries (`/usr/libexec/rocm/<package>/test_*`) list their
cases (`--gtest_list_tests`); every selected case then runs in a process
of its own, `rocjitsu --config FILE -- BINARY --gtest_filter=CASE`, with a
timeout, so that a hang or a crash costs one case. A case is

  passed     exit 0 and gtest's `[  PASSED  ] 1 test`
  failed     anything else (the last lines of its output are printed)
  timed out  still running after --timeout seconds (killed)
  skipped    the suite skipped it itself (GTEST_SKIP), with its reason
  not run    not selected: outside the tier, the filter or the shard, or
             disabled by the suite's authors (DISABLED_, which gtest skips too)

and every case of every suite is one of these: the summary counts them all
and names the failed and timed-out ones. The exit status is 1 when a case
failed or timed out (2 for a usage or setup error, e.g. a suite that is
not installed).

Tiers: `full` runs every case. `ci` runs each suite's fixed list of cases
(globs in SUITES, chosen to cover its API) plus a random sample of the
others, seeded by --seed (default: today's date as YYYYMMDD, printed) so
that CI sees more of the suite over time and any run can be repeated
exactly; the cases SUITES marks slow (minutes each under the emulator,
measured by the full tier) are left to the full tier, and so is RCCL.

--config takes one or more GPU configurations (default
configs/gfx942_cdna3_kmd.json; the libraries carry gfx90a and gfx942
kernels, no gfx950 ones). -j runs cases in parallel processes, each
emulator with an equal share of the host threads. --json writes every
case's result (for the README table).
"""

import argparse
import collections
import concurrent.futures as cf
import datetime
import fnmatch
import hashlib
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS_ROOT = Path("/usr/libexec/rocm")

# Per suite: the Debian package (ROCm 7.2.4, from experimental), the CI
# tier's fixed cases (globs over "Binary:Suite.case") and how many others
# the CI tier samples.
SUITES = {
    "hiprand": {
        "package": "libhiprand1-tests",
        "ci": [
            "test_hiprand_linkage:*",
            # Every device-side generator of hiprand_kernel.h.
            "test_hiprand_kernel:hiprand_kernel_h_*",
            # The host API and the C++ wrapper on the default engines.
            "test_hiprand_api:hiprand_32/*/0",
            "test_hiprand_api:hiprand/hiprand_api.*/[01]",
            "test_hiprand_cpp_wrapper:hiprand_cpp_wrapper/[02]*",
        ],
        # MT19937's jump-ahead (parameter /3 of the API tests, engine 1 of
        # the wrapper's) and the wrapper's engine 8 take minutes here.
        "slow": [
            "test_hiprand_api:*/3",
            "test_hiprand_cpp_wrapper:hiprand_cpp_wrapper/[18].*",
            "test_hiprand_cpp_wrapper:hiprand_cpp_wrapper_32/1.*",
            "test_hiprand_kernel:sobol_tests/*",
        ],
        "sample": 6,
    },
    "rocfft": {
        "package": "librocfft0-tests",
        "binaries": ["rocfft-test"],
        "ci": [
            "rocfft-test:prime_3D/accuracy_test.vs_fftw/complex_forward_len_19_7_29_single_ip_batch_2_*",
            # Load/store callbacks: the kernel calls device code of another
            # code object (the test's callback functions).
            "rocfft-test:callback/accuracy_test.vs_fftw/complex_forward_len_16_single_ip_batch_2_*_CB",
        ],
        # Every case compiles its kernels at run time (hiprtc); 3D and
        # large transforms take minutes.
        "slow": ["*_3D/*", "*_len_[0-9][0-9][0-9]*"],
        # Its random cases' names depend on --seed: the same for listing
        # and running.
        "args": ["--seed", "{seed}"],
        "sample": 1,
    },
    "hipfft": {
        "package": "libhipfft0-tests",
        "binaries": ["hipfft-test"],
        "ci": [
            "hipfft-test:pow2_1D_half/accuracy_test.vs_fftw/real_forward_len_2048_half_op_batch_1_*",
        ],
        "slow": ["*_3D/*", "*_len_[0-9][0-9][0-9]*"],
        "args": ["--seed", "{seed}"],
        "sample": 1,
    },
    "rocsolver": {
        "package": "librocsolver0-tests",
        "binaries": ["rocsolver-test"],
        "ci": ["rocsolver-test:checkin_lapack/GELS.__double/54"],
        "slow": ["rocsolver-test:daily_lapack/*"],
        "sample": 1,
    },
    "rocprim": {
        "package": "librocprim-tests",
        "ci": [
            # Block- and warp-wide primitives (cross-wave scans through LDS,
            # DPP and permutes).
            "test_block_scan:RocprimBlockScanSingleValueTestsFloating/2.ExclusiveScan",
            "test_block_reduce:RocprimBlockReduceSingleValueTestsFloating/43.ReduceMultiplies",
            "test_block_radix_sort:RocprimBlockRadixSortFloating/26.SortKeysValues",
            "test_warp_scan:RocprimWarpScanTestsFloating/30.Broadcast",
            "test_warp_scan_disable_dpp:RocprimWarpScanTestsIntegral/19.ExclusiveReduceScan",
            # Device-wide algorithms (several kernels, lookback scans,
            # hipMemcpy of pageable host memory through SDMA).
            "test_device_radix_sort:Id72/RocprimDeviceRadixSort/0.SortKeys",
            "test_device_reduce:RocprimDeviceReduceTests/29.ReduceEmptyInput",
            "test_device_binary_search:RocprimDeviceBinarySearch/9.LowerBound",
            "test_device_select:RocprimDeviceSelectTests/4.SelectFlagged",
        ],
        # Inputs of 2^32 and more elements: hours under the emulator.
        "slow": ["*LargeIndices*", "*LargeInput*"],
        # Device-wide cases take 5-70 s each here: the CI sample draws from
        # the block, warp and thread cases only.
        "sample_skip": ["test_device_*"],
        "sample": 4,
    },
    # hipCUB wraps rocPRIM: its 1.1 GB package stays out of CI (rocPRIM's
    # cases cover the same kernels there); full tier and by hand.
    "hipcub": {
        "package": "libhipcub-tests",
        "in_ci": False,
        "ci": [
            "test_hipcub_block_scan:HipcubBlockScanInputArrayTests/16.ExclusiveSumReduce",
            "test_hipcub_block_radix_sort:HipcubBlockRadixSort/48.SortKeys",
            "test_hipcub_warp_scan:HipcubWarpScanTests/7.InclusiveScan",
            "test_hipcub_warp_reduce:HipcubWarpReduceTests/2.Reduce",
            "test_hipcub_device_reduce_by_key:HipcubDeviceReduceByKey/10.ReduceByKey",
            "test_hipcub_device_select:HipcubDeviceSelectTests/1.Flagged",
        ],
        "slow": ["*LargeIndices*", "*LargeInput*"],
        "sample_skip": ["test_hipcub_device_*"],
        "sample": 4,
    },
    # rocBLAS: one binary with about 1.25 M cases, which parses its whole
    # test data (about two minutes here) at every start: its cases run in
    # batches, one process per job (run_batch). The CI tier is a fixed
    # set over BLAS 1/2/3 and Tensile's GEMMs plus a sample of the
    # `quick` category (rocBLAS's own fastest tier).
    "rocblas": {
        "package": "librocblas5-tests",
        "binaries": ["rocblas-test"],
        "batch": True,
        "in_ci": False,
        # rocblas-test prints no per-case lines by default; run_batch
        # needs gtest's (Debian's run-tests asks for them the same way).
        "env": {"GTEST_LISTENER": "PASS_LINE_IN_LOG"},
        "ci": [
            "rocblas-test:_/axpy.blas1/quick_blas1_with_alpha_f32_r_5_1_0p5_0_1",
            "rocblas-test:_/dot.blas1/quick_blas1_f64_r_13000_1_2_0",
            "rocblas-test:_/nrm2.blas1/quick_blas1_f32_c_33792_1",
            "rocblas-test:_/gemv.blas2/quick_gemv_small_f32_r_N_100_200_n1_200_n1_n1_2",
            "rocblas-test:_/ger.blas2/quick_ger_small_f64_r_33_32_2_2_1_33",
            "rocblas-test:_/trsv.blas2_tensile/quick_trsv_fortran_f64_r_LCU_128_33_2_F",
            "rocblas-test:_/geam.blas3/quick_geam_small_f64_r_CC_1_0_0_1_0_1_1",
            "rocblas-test:_/gemm.blas3_tensile/quick_gemm_small_f32_r_NT_64_64_64_1_64_64_1_64",
            "rocblas-test:_/gemm.blas3_tensile/quick_gemm_fortran_f64_r_NN_16_16_16_2_16_16_n1_16_F",
            "rocblas-test:_/gemm_ex.blas3_tensile/quick_gemm_ldd_f16_rf16_rf16_rf16_rf32_r_NT_191_193_194_5_195_196_0_198_191",
            "rocblas-test:_/gemm_ex.blas3_tensile/quick_gemm_fortran_bf16_rbf16_rbf16_rbf16_rf32_r_NN_18_18_18_2_18_18_n1_18_18_F",
            "rocblas-test:_/gemm_batched_ex.blas3_tensile/quick_gemm_batched_fortran_f32_cf32_cf32_cf32_cf32_c_NN_8_8_0_2_8_8_n1_8_8_0_F",
            "rocblas-test:_/trsm.blas3_tensile/quick_trsm_small_f32_r_LLNN_10_10_1_20_100",
        ],
        # rocBLAS's own slower categories.
        "slow": ["*/nightly_*", "*/pre_checkin_*", "*_stress*"],
        "sample": 12,
    },
    # RCCL's unit tests stop in rocm_smi's initialisation (rsmi_init)
    # today: full tier only, until [stack] gives rocm_smi its sysfs.
    "rccl": {
        "package": "librccl1-tests",
        "binaries": ["rccl-UnitTests"],
        "in_ci": False,
        "ci": [],
        "sample": 0,
    },
}

DEFAULT_CONFIG = "configs/gfx942_cdna3_kmd.json"


def die(msg, code=2):
    print(f"rocm_suites: {msg}", file=sys.stderr)
    sys.exit(code)


def suite_dir(suite):
    return TESTS_ROOT / SUITES[suite]["package"]


def binaries(suite):
    d = suite_dir(suite)
    pats = SUITES[suite].get("binaries", ["test_*"])
    out = []
    for b in sorted(d.iterdir()) if d.is_dir() else []:
        if b.is_file() and os.access(b, os.X_OK) and any(fnmatch.fnmatchcase(b.name, p) for p in pats):
            out.append(b)
    return out


def suite_env(suite):
    """The environment Debian's `run-tests` gives the suite's binaries: the
    test directory on the library path (rocPRIM's test_linking loads its
    helper libraries from there)."""
    env = dict(os.environ)
    env.update(SUITES[suite].get("env", {}))
    env["LD_LIBRARY_PATH"] = ":".join(x for x in [str(suite_dir(suite)), env.get("LD_LIBRARY_PATH", "")] if x)
    return env


def suite_args(suite, seed):
    n = int(seed) % (1 << 31) if str(seed).isdigit() else 1
    return [x.replace("{seed}", str(n)) for x in SUITES[suite].get("args", [])]


def list_cache(binary, args):
    """Where the listing of `binary` run with `args` is kept: a listing
    costs minutes for suites that parse their test data first (rocBLAS),
    and depends only on the binary and its arguments."""
    st = binary.stat()
    key = hashlib.sha256(f"{binary}|{st.st_size}|{st.st_mtime_ns}|{args}".encode()).hexdigest()[:24]
    root = Path(os.environ.get("ROCJITSU_CACHE") or Path.home() / ".cache/rocjitsu")
    return root / "rocm-suites" / f"{binary.name}-{key}.txt"


def list_cases(suite, launcher, config, seed):
    """Every case of the suite as "binary:Suite.case", in gtest's order.
    Listed under the launcher: some suites ask for a device before listing.
    Cached per binary and arguments (see list_cache)."""
    d = suite_dir(suite)
    if not d.is_dir():
        die(
            f"suite {suite}: {d} is missing; install it with "
            f"`scripts/sysroot.sh --rocm 7 install {SUITES[suite]['package']}` "
            f"and run this inside that sysroot (`scripts/sysroot.sh --rocm 7 run -- ...`)"
        )
    cases = []
    for b in binaries(suite):
        cache = list_cache(b, suite_args(suite, seed))
        try:
            cases += [f"{b.name}:{x}" for x in cache.read_text().splitlines() if x]
            continue
        except OSError:
            pass
        if SUITES[suite].get("batch"):
            print(f"rocm_suites: listing {b.name}'s cases (minutes: it parses its test data first)", flush=True)
        mine = []
        p = subprocess.run(
            [launcher, "--config", config, "--", str(b), "--gtest_list_tests", *suite_args(suite, seed)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=600,
            env=suite_env(suite),
        )
        if p.returncode != 0:
            die(f"suite {suite}: {b} --gtest_list_tests exited {p.returncode}: {p.stderr.strip()[-300:]}")
        group = None
        for line in p.stdout.splitlines():
            if not line.strip() or line.startswith("Running main()"):
                continue
            name = line.split("#")[0].rstrip()
            if not line.startswith(" "):
                # A suite line ends with "."; other lines are the program's
                # own chatter (versions, seeds).
                group = name.strip() if name.strip().endswith(".") else None
            elif group:
                mine.append(f"{group}{name.strip()}")
        cases += [f"{b.name}:{x}" for x in mine]
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text("".join(x + "\n" for x in mine))
            tmp.replace(cache)
        except OSError as e:
            print(f"rocm_suites: cannot keep the listing in {cache}: {e}", file=sys.stderr)
    return cases


def select(suite, cases, tier, seed, filters, shard):
    """(selected, {case: why not run})."""
    why = {}
    chosen = []
    # Cases the suite's authors disabled (gtest runs them only when asked).
    for c in cases:
        if "DISABLED_" in c.split(":", 1)[1]:
            why[c] = "disabled in the suite (DISABLED_)"
    cases = [c for c in cases if c not in why]
    if tier == "full":
        chosen = list(cases)
    else:
        fixed = SUITES[suite]["ci"]
        slow = SUITES[suite].get("slow", [])
        chosen = [c for c in cases if any(fnmatch.fnmatchcase(c, g) for g in fixed)]
        skip = slow + SUITES[suite].get("sample_skip", [])
        fixed_set = set(chosen)
        rest = [
            c
            for c in cases
            if c not in fixed_set and not any(fnmatch.fnmatchcase(c, g) for g in skip)
        ]
        rng = random.Random(f"{suite}:{seed}")
        sample = rng.sample(rest, min(SUITES[suite]["sample"], len(rest)))
        picked = set(chosen) | set(sample)
        chosen = [c for c in cases if c in picked]
        for c in cases:
            if c not in picked:
                slow_one = any(fnmatch.fnmatchcase(c, g) for g in slow)
                why[c] = "minutes under the emulator: full tier only" if slow_one else f"not in the CI tier (seed {seed})"
    if filters:
        keep = [c for c in chosen if any(fnmatch.fnmatchcase(c, f) for f in filters)]
        kept = set(keep)
        for c in chosen:
            if c not in kept:
                why[c] = "outside --filter"
        chosen = keep
    if shard:
        k, n = shard
        keep = [c for i, c in enumerate(chosen) if i % n == k - 1]
        kept = set(keep)
        for c in chosen:
            if c not in kept:
                why[c] = f"in another shard than {k}/{n}"
        chosen = keep
    return chosen, why


def run_case(suite, case, config, launcher, timeout, threads, seed):
    binary, name = case.split(":", 1)
    cmd = [
        launcher,
        "--config",
        config,
        "--threads",
        str(threads),
        "--",
        str(suite_dir(suite) / binary),
        f"--gtest_filter={name}",
        "--gtest_color=no",
        *suite_args(suite, seed),
    ]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                           env=suite_env(suite))
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        return "timed out", time.monotonic() - t0, out[-2000:]
    secs = time.monotonic() - t0
    out = p.stdout + p.stderr
    if "[  SKIPPED ]" in p.stdout and p.returncode == 0:
        m = re.search(r"Skipped\s*\n?(.*)", p.stdout)
        return "skipped", secs, (m.group(1).strip() if m else "skipped by the suite")
    if p.returncode == 0 and "[  PASSED  ] 1 test" in p.stdout:
        return "passed", secs, ""
    if p.returncode == 0 and "[  PASSED  ] 0 tests" in p.stdout:
        return "failed", secs, "gtest ran no test for this name\n" + out[-1500:]
    return "failed", secs, f"exit {p.returncode}\n" + out[-2000:]


RUN_LINE = re.compile(r"^\[ RUN      \] (\S+)")
# "[  FAILED  ] Suite.case, where GetParam() = ... (12 ms)" for value-
# parameterised cases.
END_LINE = re.compile(r"^\[\s*(OK|FAILED|SKIPPED)\s*\] ([^\s,]+)(?:, where GetParam\(\) = .*?)?(?: \((\d+) ms\))?\s*$")
# How long a batch process may take to reach its first case: rocBLAS
# parses its whole test data (about 1.25 M records) first, about two
# minutes on the 2-core machine.
BATCH_STARTUP = 900.0


def run_batch(suite, cases, config, launcher, timeout, threads, seed, record):
    """Runs `cases` (of one binary) in one process, with a gtest filter that
    names them all, for suites whose every start costs minutes (rocBLAS
    parses its test data first). gtest's per-case lines give each case its
    verdict; `record(case, status, seconds, detail)` gets it as it comes.
    A case that crashes the process fails, one that runs longer than
    `timeout` is killed as timed out, and the cases the process had not
    reached run in a new process, so that one bad case costs only itself."""
    binary = cases[0].split(":", 1)[0]
    pending = [c.split(":", 1)[1] for c in cases]
    while pending:
        # One argument holds at most 128 KiB (MAX_ARG_STRLEN): the rest
        # of the cases wait for the next process.
        batch, size = [], 0
        for c in pending:
            if batch and size + len(c) + 1 > 100_000:
                break
            batch.append(c)
            size += len(c) + 1
        cmd = [
            launcher, "--config", config, "--threads", str(threads), "--",
            str(suite_dir(suite) / binary), f"--gtest_filter={':'.join(batch)}",
            "--gtest_color=no", *suite_args(suite, seed),
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=suite_env(suite), start_new_session=True)
        lines = queue.Queue()

        def pump():
            for line in proc.stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        wanted = set(batch)
        done = set()
        current, started, out = None, None, collections.deque(maxlen=60)
        deadline = time.monotonic() + BATCH_STARTUP
        hung = False
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                hung = True
                break
            if line is None:
                break
            m = RUN_LINE.match(line)
            if m and m.group(1) in wanted:
                current, started = m.group(1), time.monotonic()
                out.clear()
                deadline = started + timeout
                continue
            m = END_LINE.match(line)
            if m and m.group(2) == current:
                status = {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[m.group(1)]
                secs = int(m.group(3)) / 1000 if m.group(3) else time.monotonic() - started
                detail = "\n".join(out) if status == "failed" else next(
                    (x.strip() for x in out if x.strip()), "skipped by the suite")
                record(f"{binary}:{current}", status, secs, detail)
                done.add(current)
                current = None
                deadline = time.monotonic() + timeout
                continue
            out.append(line)
        if hung:
            os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
        if current is not None:
            why = f"killed after {timeout:.0f} s" if hung else f"the process ended (exit {rc}) in this case"
            record(f"{binary}:{current}", "timed out" if hung else "failed",
                   time.monotonic() - started, why + "\n" + "\n".join(out))
            done.add(current)
        elif not done:
            # No case finished and none was running: the process itself
            # failed (or hung) before its first case, or gtest knows none
            # of these names. Each case is charged, once.
            why = (f"the process reached no case within {BATCH_STARTUP:.0f} s" if hung
                   else f"exit {rc} before any case ran" if rc != 0
                   else "gtest ran no test for this name")
            for c in batch:
                record(f"{binary}:{c}", "timed out" if hung else "failed", 0.0, why + "\n" + "\n".join(out))
            done.update(batch)
        elif not hung and current is None and rc == 0:
            for c in batch:
                if c not in done:
                    record(f"{binary}:{c}", "failed", 0.0, "gtest ran no test for this name")
            done.update(batch)
        pending = [c for c in pending if c not in done]


def parse_shard(s):
    try:
        k, n = (int(x) for x in s.split("/"))
        assert 1 <= k <= n
        return k, n
    except Exception:
        die(f"--shard takes K/N with 1 <= K <= N, not '{s}'")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["list", "run", "packages"])
    ap.add_argument(
        "--suite", default=None, help="suites, comma-separated (default: all; the CI tier leaves out rccl)"
    )
    ap.add_argument("--tier", choices=["ci", "full"], default="ci")
    ap.add_argument("--seed", default=datetime.date.today().strftime("%Y%m%d"))
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="GPU configs, comma-separated")
    ap.add_argument("--filter", default="", help="globs over BINARY:Suite.case, comma-separated")
    ap.add_argument("--shard", default=None, help="K/N: every N-th selected case from the K-th")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--rocjitsu", default=str(REPO / "target/release/rocjitsu"))
    ap.add_argument("--json", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    if a.suite is None:
        a.suite = ",".join(n for n, v in SUITES.items() if a.tier == "full" or v.get("in_ci", True))
    suites = [s for s in a.suite.split(",") if s]
    for s in suites:
        if s not in SUITES:
            die(f"unknown suite '{s}' (known: {', '.join(SUITES)})")
    if a.command == "packages":
        print(" ".join(SUITES[s]["package"] for s in suites))
        return 0
    shard = parse_shard(a.shard) if a.shard else None
    filters = [f for f in a.filter.split(",") if f]
    configs = [c for c in a.config.split(",") if c]
    for c in configs:
        if not (REPO / c).is_file() and not Path(c).is_file():
            die(f"--config {c}: no such file")
    if a.command != "packages" and not os.access(a.rocjitsu, os.X_OK):
        die(f"no launcher at {a.rocjitsu}: build it with `cargo build --release -p rocjitsu-cli`")
    if a.tier == "ci":
        print(f"rocm_suites: CI tier, sample seed {a.seed} (repeat with --seed {a.seed})")

    threads = max(1, (os.cpu_count() or 1) // max(1, a.jobs))
    results = []
    bad = 0
    for suite in suites:
        cases = list_cases(suite, a.rocjitsu, configs[0], a.seed)
        chosen, not_run = select(suite, cases, a.tier, a.seed, filters, shard)
        if a.command == "list":
            print(f"{suite} ({SUITES[suite]['package']}): {len(cases)} cases, {len(chosen)} selected")
            run_set = set(chosen)
            for c in cases:
                print(f"  {'run ' if c in run_set else '-   '} {c}" + (f"  ({not_run[c]})" if c in not_run else ""))
            continue
        for config in configs:
            gpu = Path(config).stem
            t0 = time.monotonic()
            counts = {k: 0 for k in ["passed", "failed", "timed out", "skipped", "not run"]}
            counts["not run"] = len(not_run)
            named = {"failed": [], "timed out": []}
            print(f"== {suite} on {gpu}: {len(chosen)} of {len(cases)} cases, -j {a.jobs}, timeout {a.timeout:.0f} s", flush=True)
            lock = threading.Lock()

            def record(c, status, secs, detail):
                with lock:
                    counts[status] += 1
                    if status in named:
                        named[status].append(c)
                    tag = {"passed": "PASS", "failed": "FAIL", "timed out": "TIME", "skipped": "SKIP"}[status]
                    print(f"{tag}  {c} ({secs:.1f} s)", flush=True)
                    if status in ("failed", "timed out") or (a.verbose and detail):
                        for line in detail.strip().splitlines()[-12:]:
                            print(f"      | {line}")
                    elif status == "skipped":
                        print(f"      | {detail}")
                    results.append(
                        {"suite": suite, "gpu": gpu, "case": c, "status": status, "seconds": round(secs, 2)}
                    )

            with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
                if SUITES[suite].get("batch"):
                    # One process per job, the cases dealt round-robin
                    # (per binary), each process's start paid once.
                    futs = []
                    for b in dict.fromkeys(c.split(":", 1)[0] for c in chosen):
                        mine = [c for c in chosen if c.split(":", 1)[0] == b]
                        for k in range(max(1, a.jobs)):
                            part = mine[k :: max(1, a.jobs)]
                            if part:
                                futs.append(ex.submit(run_batch, suite, part, config, a.rocjitsu, a.timeout,
                                                      threads, a.seed, record))
                    for f in cf.as_completed(futs):
                        f.result()
                else:
                    futs = {
                        ex.submit(run_case, suite, c, config, a.rocjitsu, a.timeout, threads, a.seed): c
                        for c in chosen
                    }
                    for f in cf.as_completed(futs):
                        record(futs[f], *f.result())
            for c, why in not_run.items():
                results.append({"suite": suite, "gpu": gpu, "case": c, "status": "not run", "why": why})
            wall = time.monotonic() - t0
            bad += counts["failed"] + counts["timed out"]
            print(
                f"{suite} on {gpu}: {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['timed out']} timed out, {counts['skipped']} skipped, "
                f"{counts['not run']} not run ({len(cases)} cases, {wall:.0f} s)"
            )
            for k in ("failed", "timed out"):
                if named[k]:
                    print(f"  {k}: " + ", ".join(sorted(named[k])))
    if a.json and a.command == "run":
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(results, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
