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
import concurrent.futures as cf
import datetime
import fnmatch
import json
import os
import random
import re
import subprocess
import sys
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
    env["LD_LIBRARY_PATH"] = ":".join(x for x in [str(suite_dir(suite)), env.get("LD_LIBRARY_PATH", "")] if x)
    return env


def suite_args(suite, seed):
    n = int(seed) % (1 << 31) if str(seed).isdigit() else 1
    return [x.replace("{seed}", str(n)) for x in SUITES[suite].get("args", [])]


def list_cases(suite, launcher, config, seed):
    """Every case of the suite as "binary:Suite.case", in gtest's order.
    Listed under the launcher: some suites ask for a device before listing."""
    d = suite_dir(suite)
    if not d.is_dir():
        die(
            f"suite {suite}: {d} is missing; install it with "
            f"`scripts/sysroot.sh --rocm 7 install {SUITES[suite]['package']}` "
            f"and run this inside that sysroot (`scripts/sysroot.sh --rocm 7 run -- ...`)"
        )
    cases = []
    for b in binaries(suite):
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
                cases.append(f"{b.name}:{group}{name.strip()}")
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
        rest = [
            c
            for c in cases
            if c not in set(chosen) and not any(fnmatch.fnmatchcase(c, g) for g in skip)
        ]
        rng = random.Random(f"{suite}:{seed}")
        sample = rng.sample(rest, min(SUITES[suite]["sample"], len(rest)))
        picked = set(chosen) | set(sample)
        chosen = [c for c in cases if c in picked]
        for c in cases:
            if c not in picked:
                slow_one = any(fnmatch.fnmatchcase(c, g) for g in SUITES[suite].get("slow", []))
                why[c] = "minutes under the emulator: full tier only" if slow_one else f"not in the CI tier (seed {seed})"
    if filters:
        keep = [c for c in chosen if any(fnmatch.fnmatchcase(c, f) for f in filters)]
        for c in chosen:
            if c not in keep:
                why[c] = "outside --filter"
        chosen = keep
    if shard:
        k, n = shard
        keep = [c for i, c in enumerate(chosen) if i % n == k - 1]
        for c in chosen:
            if c not in keep:
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
            for c in cases:
                print(f"  {'run ' if c in set(chosen) else '-   '} {c}" + (f"  ({not_run[c]})" if c in not_run else ""))
            continue
        for config in configs:
            gpu = Path(config).stem
            t0 = time.monotonic()
            counts = {k: 0 for k in ["passed", "failed", "timed out", "skipped", "not run"]}
            counts["not run"] = len(not_run)
            named = {"failed": [], "timed out": []}
            print(f"== {suite} on {gpu}: {len(chosen)} of {len(cases)} cases, -j {a.jobs}, timeout {a.timeout:.0f} s", flush=True)
            with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
                futs = {
                    ex.submit(run_case, suite, c, config, a.rocjitsu, a.timeout, threads, a.seed): c for c in chosen
                }
                for f in cf.as_completed(futs):
                    c = futs[f]
                    status, secs, detail = f.result()
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
