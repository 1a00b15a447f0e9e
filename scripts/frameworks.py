#!/usr/bin/env python3
"""ML frameworks from the registries, unmodified, on the emulated GPUs.

  scripts/frameworks.py setup [--tier ci|full]
  scripts/frameworks.py run   [--tier ci|full] [-k FILTER] [--threads N] [--timeout S]
                              [--json FILE] [--tinygrad-repo DIR] [-v]
  scripts/frameworks.py list  [--tier ci|full]
  scripts/frameworks.py bench [--reps N] [--threads N,...] [--smoke]

`setup` installs what the cases need (idempotent; seconds when done):
  - wheels for the sysroots' Python 3.14, downloaded on the host with pip
    into $ROCJITSU_CACHE/frameworks/wheels (Triton 3.9, tinygrad 0.14,
    cupy-rocm-7-0 14.2.0, onnxruntime-rocm 1.22.2.post3, onnx, numpy,
    pytest; pip's cache in $ROCJITSU_CACHE/pip-cache), and tinygrad's sdist
    (its test/test_tiny.py), hip-python 7.2.2 (AMD's HIP/hiprtc bindings),
    pyopencl 2026.1.4 (over ROCm's OpenCL runtime, rocm-opencl-icd);
  - Debian packages in the sid sysroots (scripts/sysroot.sh install): a C
    compiler and Python.h for Triton's launcher, and for CuPy and ONNX
    Runtime the ROCm 7.2.4 libraries they link (hipBLAS, rocBLAS, rocSOLVER,
    rocFFT, hipFFT, hipRAND, hipSPARSE, RCCL, MIOpen, sid's rocm_smi 6.4 for
    librocm_smi64.so.1, the rocThrust/rocPRIM/hipCUB headers CuPy compiles
    against); the full tier adds Debian's CPU PyTorch (tinygrad's test_ops
    compares with it);
  - a venv in each sysroot (/opt/rocjitsu-frameworks, system site packages
    visible), installed from the wheels with --no-index;
  - build/frameworks/standin/libroctracer64.so.4: a stand-in for roctracer,
    which Debian does not package (tests/frameworks/standin/roctracer.c:
    roctracer_start/roctracer_stop doing nothing, versioned ROCTRACER_4.0);
    CuPy and ONNX Runtime link it. It is found through LD_LIBRARY_PATH of
    those cases only, never installed.

`run` runs each case of the tier as one unmodified Python process under
`rocjitsu --config <gpu> --` inside its sysroot (ROCm 6.4.3 for Triton on
gfx942, ROCm 7.2.4 for the rest) and prints `PASS`/`FAIL`/`n/a` per case
with its wall time, then `frameworks: N passed, M failed, K not applicable`.
A case passes when its program exits 0 (each checks its results against
numpy or ONNX Runtime's CPU provider and prints its own PASS/FAIL lines);
pytest cases report their passed/failed/skipped counts, and any failure or
error fails the case. Exit status 1 when a case failed.

`bench` prints figures, side by side in one run: Triton's 1024^3 fp16
matmul launched through Triton's HIP runtime under the launcher (best
launch-to-synchronised wall time) against the very same code object
through `rocjitsu run-kernel --stats` (its dispatch wall time), at 1 host
thread and at one per core, with the runtime's overhead as a ratio; with
--smoke, the CI tier's wall time per case at each thread count.

The full tier adds the larger sizes, tinygrad's test/backend/test_ops.py
(from a tinygrad checkout given with --tinygrad-repo: the sdist ships only
test_tiny.py) under the emulator and under tinygrad's own mock GPU
(DEV=MOCK+AMD, also from the checkout) side by side, and CuPy's own tests
from its sdist.
"""

import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request

sys.dont_write_bytecode = True

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = pathlib.Path(os.environ.get("ROCJITSU_CACHE", pathlib.Path.home() / ".cache" / "rocjitsu"))
FW_CACHE = CACHE / "frameworks"
WHEELS = FW_CACHE / "wheels"
SDISTS = FW_CACHE / "sdists"
BUILD = ROOT / "build" / "frameworks"
STANDIN = BUILD / "standin"
LAUNCHER = ROOT / "target" / "release" / "rocjitsu"
SYSROOT = ROOT / "scripts" / "sysroot.sh"
TESTS = ROOT / "tests" / "frameworks"
VENV = "/opt/rocjitsu-frameworks"
PY = f"{VENV}/bin/python"

CONFIGS = {
    "gfx942": "configs/gfx942_cdna3_kmd.json",
    "gfx950": "configs/gfx950_cdna4_kmd.json",
    "gfx1100": "configs/gfx1100_rdna3_kmd.json"
}

# The wheels (Python 3.14, the sid sysroots'), pinned where the issue names a version.
REQUIREMENTS = {
    6: ["triton==3.9.0", "numpy==2.5.5", "pytest==9.2.0"],
    7: [
        "triton==3.9.0", "numpy==2.5.5", "pytest==9.2.0", "tinygrad==0.14.0", "cupy-rocm-7-0==14.2.0",
        "onnxruntime-rocm==1.22.2.post3", "onnx==1.23.2", "hip-python==7.2.2.562.43",
        "pyopencl==2026.1.4", "mako==1.4.3"
    ],
}
WHEEL_TAGS = [
    "--python-version", "3.14", "--implementation", "cp", "--abi", "cp314", "--abi", "abi3", "--abi", "none",
    "--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64", "--platform",
    "manylinux_2_27_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
    "--platform", "any"
]
# pip for the downloads: the venv scripts/setup.sh makes (Debian's python3
# has no pip of its own).
PIP_PY = CACHE / "triton-venv" / "bin" / "python"
SDIST_PINS = {"tinygrad": "tinygrad==0.14.0", "cupy": "cupy==14.2.0"}

# Debian packages per sysroot: Triton's launcher is compiled with gcc against
# Python.h; the ROCm 7 sysroot gets what CuPy and ONNX Runtime link or compile against.
PACKAGES = {
    6: ["python3-venv", "python3-dev", "gcc"],
    7: [
        "python3-venv", "python3-dev", "gcc", "libhipblas3", "librocblas5", "librocsolver0", "librocfft0",
        "libhipfft0", "libhiprand1", "libhipsparse4", "librccl1", "libmiopen1", "librocm-smi64-1",
        "librocthrust-dev", "librocprim-dev", "libhipcub-dev", "rocm-opencl-icd"
    ],
}
FULL_PACKAGES = {7: ["python3-torch"]}


def log(msg):
    print(msg, flush=True)


def die(msg, code=2):
    print(f"frameworks: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def sh(cmd, **kw):
    r = subprocess.run(cmd, **kw)
    if r.returncode != 0:
        die(f"`{' '.join(map(str, cmd))}` failed (exit status {r.returncode})")
    return r


def sysroot(rocm, *args, binds=(), capture=False):
    cmd = ["bash", str(SYSROOT), "--rocm", str(rocm), *args[:1]]
    if args[:1] == ("run", ):
        for b in binds:
            cmd += ["--bind", str(b)]
        cmd.append("--")
    cmd += list(args[1:])
    return sh(cmd, capture_output=capture, text=True)


# ---- setup -----------------------------------------------------------------


def stamp_ok(path, text):
    return path.is_file() and path.read_text() == text


def pip_python():
    if PIP_PY.is_file():
        return str(PIP_PY)
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0:
        return sys.executable
    die(f"no pip: {PIP_PY} is missing (scripts/setup.sh makes it) and {sys.executable} has no pip module")


def download_wheels():
    reqs = sorted(set(sum(REQUIREMENTS.values(), [])))
    stamp = WHEELS / ".requirements"
    if stamp_ok(stamp, "\n".join(reqs)):
        return
    WHEELS.mkdir(parents=True, exist_ok=True)
    log(f"frameworks: pip download {' '.join(reqs)} (Python 3.14 wheels) into {WHEELS}")
    t0 = time.monotonic()
    sh([pip_python(), "-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary=:all:",
        *WHEEL_TAGS, "-d", str(WHEELS), *reqs],
       env=dict(os.environ, PIP_CACHE_DIR=str(CACHE / "pip-cache")))
    stamp.write_text("\n".join(reqs))
    log(f"frameworks: wheels ready ({time.monotonic() - t0:.0f} s)")


def download_sdist(name):
    """The pinned sdist, fetched as the file PyPI's simple index lists for
    the release (JSON form, PEP 691), its sha256 checked against the index.
    `pip download` of an sdist would prepare its metadata, which for CuPy
    builds cmake from source."""
    pin = SDIST_PINS[name]
    version = pin.split("==")[1]
    path = SDISTS / f"{name}-{version}.tar.gz"
    if path.is_file():
        return path
    SDISTS.mkdir(parents=True, exist_ok=True)
    index = f"https://pypi.org/simple/{name}/"
    log(f"frameworks: downloading {path.name} (listed by {index}) into {SDISTS}")
    try:
        req = urllib.request.Request(index, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            files = json.load(r)["files"]
        sdist = next(f for f in files if f["filename"] == path.name)
        with urllib.request.urlopen(sdist["url"], timeout=600) as r:
            data = r.read()
    except (OSError, StopIteration, KeyError, ValueError) as e:
        die(f"cannot download {path.name} from PyPI ({index}): {e!r}; check the network, or put "
            f"{path.name} into {SDISTS}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != sdist["hashes"]["sha256"]:
        die(f"{sdist['url']}: sha256 {digest} differs from the index's {sdist['hashes']['sha256']}")
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.rename(path)
    return path


def extract_tests(name, members_prefix):
    """The sdist's test directory under build/frameworks/<name>-<version>."""
    sdist = download_sdist(name)
    top = sdist.name.removesuffix(".tar.gz")
    dest = BUILD / top
    if not (dest / ".extracted").is_file():
        shutil.rmtree(dest, ignore_errors=True)
        with tarfile.open(sdist) as tf:
            tf.extractall(BUILD, members=[m for m in tf.getmembers() if m.name.startswith(f"{top}/{members_prefix}")],
                          filter="data")
        (dest / ".extracted").write_text(sdist.name)
    return dest


def build_standin():
    src = TESTS / "standin" / "roctracer.c"
    mapf = TESTS / "standin" / "roctracer.map"
    out = STANDIN / "libroctracer64.so.4"
    if out.is_file() and out.stat().st_mtime >= max(src.stat().st_mtime, mapf.stat().st_mtime):
        return
    STANDIN.mkdir(parents=True, exist_ok=True)
    sh(["cc", "-shared", "-fPIC", "-O2", f"-Wl,--version-script={mapf}", "-Wl,-soname,libroctracer64.so.4", "-o",
        str(out), str(src)])


def make_venv(rocm):
    reqs = REQUIREMENTS[rocm]
    text = "\n".join(reqs)
    root = pathlib.Path(sysroot(rocm, "path", capture=True).stdout.strip())
    stamp = root / VENV.lstrip("/") / ".requirements"
    if stamp_ok(stamp, text):
        return
    log(f"frameworks: venv {VENV} in the ROCm {rocm} sysroot: {' '.join(reqs)}")
    script = (f"rm -rf {VENV} && python3 -m venv --system-site-packages {VENV} && "
              f"{PY} -m pip install -q --disable-pip-version-check --no-index --find-links {WHEELS} {' '.join(reqs)}")
    sysroot(rocm, "run", "bash", "-c", script, binds=[WHEELS])
    stamp.write_text(text)


def setup(tier):
    t0 = time.monotonic()
    download_wheels()
    extract_tests("tinygrad", "test/")
    extract_tests("cupy", "tests/")
    for rocm in (6, 7):
        sysroot(rocm, "build", capture=True)
        sysroot(rocm, "install", *PACKAGES[rocm], *(FULL_PACKAGES.get(rocm, []) if tier == "full" else []))
        make_venv(rocm)
    build_standin()
    log(f"frameworks: set up ({time.monotonic() - t0:.0f} s)")


# ---- cases -----------------------------------------------------------------


class Case:
    """One program run under the launcher in a sysroot."""

    def __init__(self, name, rocm, gpu, argv, tiers=("ci", "full"), env=None, pytest=False, timeout=900,
                 needs=None, cwd=None):
        self.name, self.rocm, self.gpu, self.argv = name, rocm, gpu, argv
        self.tiers, self.env, self.pytest, self.timeout = tiers, env or {}, pytest, timeout
        self.needs, self.cwd = needs, cwd


def tinygrad_tests():
    return BUILD / "tinygrad-0.14.0"


def cupy_tests():
    return BUILD / "cupy-14.2.0"


# CuPy's own tests (tests/ of the 14.2.0 sdist, unmodified), in the full tier
# only (about 4 minutes of CI's 90 went to them): `cupy-tests-gfx942` runs one
# module whose every case launches kernels (arange/linspace/logspace and
# meshgrid/mgrid/ogrid: elementwise kernels through hiprtc, copies, dtypes),
# `cupy-tests-full-gfx942` the whole suite. One emulated GPU: CuPy's multi-GPU tests
# are limited to it (CUPY_TEST_GPU_LIMIT), and tests CuPy marks slow are
# deselected by its own marker.
CUPY_CI_TESTS = ["tests/cupy_tests/creation_tests/test_ranges.py"]


def cupy_pytest(paths):
    return ["-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "-m", "not slow", *paths]


def cases(args):
    size = "full" if args.tier == "full" else "ci"
    tri = ["tests/frameworks/triton_programs.py", "--size", size]
    standin = {"LD_LIBRARY_PATH": str(STANDIN)}
    tiny = {"DEV": "AMD", "CC": "clang-22"}
    cupy_env = {"CUPY_TEST_GPU_LIMIT": "1"}
    out = [
        Case("triton-gfx942", 6, "gfx942", tri),
        Case("triton-gfx950", 7, "gfx950", tri),
        Case("tinygrad-matmul-gfx942", 7, "gfx942", ["tests/frameworks/tinygrad_matmul.py"], env=tiny),
        Case("tinygrad-test_tiny-gfx942", 7, "gfx942", ["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                                                        "test/test_tiny.py"], env=tiny, pytest=True,
             cwd=tinygrad_tests()),
        # RDNA3 (Radeon PRO W7900): tinygrad's gfx11 path, PM4 with
        # wave32 dispatches and SDMA v6.
        Case("tinygrad-matmul-gfx1100", 7, "gfx1100", ["tests/frameworks/tinygrad_matmul.py"], env=tiny),
        Case("tinygrad-test_tiny-gfx1100", 7, "gfx1100", ["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                                                          "test/test_tiny.py"], env=tiny, pytest=True,
             cwd=tinygrad_tests()),
        Case("cupy-gfx942", 7, "gfx942", ["tests/frameworks/cupy_smoke.py"], env=standin),
        Case("cupy-gfx950", 7, "gfx950", ["tests/frameworks/cupy_smoke.py"], env=standin, tiers=("full", )),
        Case("cupy-tests-gfx942", 7, "gfx942", cupy_pytest(CUPY_CI_TESTS), env={**standin, **cupy_env},
             pytest=True, cwd=cupy_tests(), tiers=("full", )),
        Case("cupy-tests-full-gfx942", 7, "gfx942", cupy_pytest(["tests/cupy_tests"]), env={**standin, **cupy_env},
             pytest=True, cwd=cupy_tests(), tiers=("full", ), timeout=6 * 3600),
        Case("hip-python-gfx942", 7, "gfx942", ["tests/frameworks/hip_python_smoke.py"]),
        Case("hip-python-gfx950", 7, "gfx950", ["tests/frameworks/hip_python_smoke.py"]),
        Case("pyopencl-gfx942", 7, "gfx942", ["tests/frameworks/pyopencl_smoke.py"]),
        Case("onnxruntime-gfx942", 7, "gfx942", ["tests/frameworks/onnxruntime_smoke.py"], env=standin),
        Case("onnxruntime-gfx950", 7, "gfx950", ["tests/frameworks/onnxruntime_smoke.py", "--expect-no-kernels"],
             env=standin),
    ]
    # mirage's torchrun-style ranks: one rocjitsu daemon per node (attach
    # mode), two emulated GPUs, Debian's CPU torch for the rendezvous (gloo).
    out.append(Case("torchrun-mirage-2gpu", 7, "mirage", ["tests/frameworks/torchrun_worker.py"], tiers=("full", )))
    if args.tinygrad_repo:
        ops = ["-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "test/backend/test_ops.py"]
        if args.pytest_k:
            ops += ["-k", args.pytest_k]
        # An emulated kernel can take minutes where hardware takes
        # milliseconds: tinygrad's own wait timeout (30 s) is raised.
        slow = {"HCQDEV_WAIT_TIMEOUT_MS": "3600000", "CC": "clang-22"}
        repo_tests = BUILD / "tinygrad-repo-tests"
        out += [
            Case("tinygrad-test_ops-gfx942", 7, "gfx942", ops, tiers=("full", ), env={**slow, "DEV": "AMD"},
                 pytest=True, cwd=repo_tests, timeout=4 * 3600),
            Case("tinygrad-test_ops-gfx1100", 7, "gfx1100", ops, tiers=("full", ), env={**slow, "DEV": "AMD"},
                 pytest=True, cwd=repo_tests, timeout=4 * 3600),
            # tinygrad's mock GPU: gfx950 (CDNA4), its CDNA target.
            Case("tinygrad-test_ops-mockgpu-gfx950", 7, None, ops, tiers=("full", ), pytest=True,
                 env={**slow, "DEV": "MOCK+AMD::gfx950"}, cwd=repo_tests, timeout=4 * 3600),
            # Its RDNA3 mock (the default arch of tinygrad's mock GPU).
            Case("tinygrad-test_ops-mockgpu-gfx1100", 7, None, ops, tiers=("full", ), pytest=True,
                 env={**slow, "DEV": "MOCK+AMD::gfx1100"}, cwd=repo_tests, timeout=4 * 3600),
            # The same tests on tinygrad's CPU backend: a failure there too is
            # tinygrad's (or the reference torch's), not the GPU's.
            Case("tinygrad-test_ops-cpu", 7, None, ops, tiers=("full", ), pytest=True,
                 env={"DEV": "CPU", "CC": "clang-22"}, cwd=repo_tests, timeout=4 * 3600),
        ]
    return [c for c in out if args.tier in c.tiers and (not args.filter or args.filter in c.name)]


def prepare_tinygrad_repo(repo):
    """test/ and extra/ of a tinygrad checkout (test_ops.py; the mock GPU,
    which reads extra/hip_gpu_driver), beside the installed tinygrad 0.14
    (the checkout's own tinygrad/ is not used)."""
    repo = pathlib.Path(repo)
    if not (repo / "test" / "backend" / "test_ops.py").is_file():
        die(f"--tinygrad-repo {repo}: no test/backend/test_ops.py there (a tinygrad checkout is needed)")
    dest = BUILD / "tinygrad-repo-tests"
    shutil.rmtree(dest, ignore_errors=True)
    for d in ("test", "extra"):
        shutil.copytree(repo / d, dest / d)


PYTEST_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


MIRAGE = ROOT / "target" / "release" / "mirage"


def run_case(c, args):
    if c.gpu == "mirage":
        # mirage enters the sysroot itself (the ROCm 7.2.4 one, MI300X nodes).
        root = sysroot(c.rocm, "path", capture=True).stdout.strip()
        cmd = [str(MIRAGE), "run", "--profile", "mi300x", "--sysroot", root, "--gpus-per-node", "2",
               "--nproc-per-node", "2", "--env", "USE_LIBUV=0", "--", PY, *c.argv]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=c.timeout)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0, {}
    if c.gpu is None:
        # tinygrad's mock GPU: no emulator, the same sysroot and Python.
        inner = [PY, *c.argv]
    else:
        inner = [str(LAUNCHER), "--config", str(ROOT / CONFIGS[c.gpu])]
        if args.threads:
            inner += ["--threads", str(args.threads)]
        inner += ["--", PY, *c.argv]
    # Compiler caches start empty, so each run compiles through the
    # frameworks' own paths (Triton, hiprtc, comgr, MIOpen) as a first run does.
    cache = BUILD / "cache" / c.name
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    env = {
        "TRITON_DEFAULT_FP_FUSION": "1",
        "XDG_CACHE_HOME": cache,
        "TRITON_CACHE_DIR": cache / "triton",
        "CUPY_CACHE_DIR": cache / "cupy",
        "MIOPEN_USER_DB_PATH": cache / "miopen",
        "MIOPEN_CUSTOM_CACHE_DIR": cache / "miopen",
        **c.env,
    }
    cmd = ["bash", str(SYSROOT), "--rocm", str(c.rocm), "run", "--", "env", *[f"{k}={v}" for k, v in env.items()],
           *inner]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=c.cwd or ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=min(c.timeout, args.timeout or c.timeout))
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = None
    secs = time.monotonic() - t0
    counts = {}
    if c.pytest:
        last = [ln for ln in out.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
        for n, what in PYTEST_SUMMARY.findall(last[-1] if last else ""):
            counts[what.rstrip("s") if what.startswith("error") else what] = int(n)
    return rc, out, secs, counts


def run(args):
    if not LAUNCHER.is_file():
        die(f"{LAUNCHER} is missing: build it first (cargo build --release -p rocjitsu-cli -p rocjitsu-preload)")
    if args.tinygrad_repo:
        prepare_tinygrad_repo(args.tinygrad_repo)
    todo = cases(args)
    if not todo:
        die(f"no case matches -k {args.filter!r} in the {args.tier} tier")
    passed = failed = 0
    results = []
    for c in todo:
        rc, out, secs, counts = run_case(c, args)
        ok = rc == 0 and counts.get("failed", 0) == 0 and counts.get("error", 0) == 0
        detail = ", ".join(f"{v} {k}" for k, v in counts.items())
        rocm = "6.4.3" if c.rocm == 6 else "7.2.4"
        where = (f"mirage, 1 node x 2 gfx942, ROCm {rocm}" if c.gpu == "mirage" else f"{c.gpu}, ROCm {rocm}"
                 if c.gpu else f"DEV={c.env.get('DEV')}, no emulator")
        if ok:
            passed += 1
            log(f"PASS {c.name} ({where}; {secs:.1f} s{'; ' + detail if detail else ''})")
        else:
            failed += 1
            why = "timed out" if rc is None else f"exit status {rc}"
            log(f"FAIL {c.name} ({where}; {secs:.1f} s; {why}{'; ' + detail if detail else ''})")
        if args.verbose or not ok:
            tail = out if args.verbose else "\n".join(out.splitlines()[-40:])
            log("    " + tail.replace("\n", "\n    "))
        results.append({"case": c.name, "gpu": c.gpu, "rocm": c.rocm, "ok": ok, "seconds": round(secs, 2),
                        "exit": rc, "counts": counts})
    log(f"frameworks: {passed} passed, {failed} failed, 0 not applicable")
    if args.json:
        pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if failed else 0


def bench(args):
    if not LAUNCHER.is_file():
        die(f"{LAUNCHER} is missing: build it first (cargo build --release -p rocjitsu-cli -p rocjitsu-preload)")
    threads = [int(t) for t in args.threads.split(",")] if args.threads else [1, os.cpu_count() or 1]
    out = BUILD / "bench" / "gfx942"
    script = "tests/frameworks/bench_triton_matmul.py"
    rows = []
    for t in threads:
        # Interleaved: each round runs both once (the runtime process times
        # two launches after its first), and the best of the rounds counts,
        # so a burst of load from elsewhere hits both alike.
        best_rt = best_rk = float("inf")
        for _ in range(args.reps):
            env = ["env", "TRITON_DEFAULT_FP_FUSION=1", f"TRITON_CACHE_DIR={BUILD / 'cache' / 'bench-triton'}"]
            r = sysroot(6, "run", *env, str(LAUNCHER), "--config", str(ROOT / CONFIGS["gfx942"]), "--threads", str(t),
                        "--", PY, script, "runtime", str(out), "--reps", "2", capture=True)
            runtime = json.loads(r.stdout.strip().splitlines()[-1])
            k = sysroot(6, "run", PY, script, "run-kernel", str(out), "--rocjitsu", str(LAUNCHER), "--threads",
                        str(t), "--reps", "1", capture=True)
            kernel = json.loads(k.stdout.strip().splitlines()[-1])
            if not (runtime["ok"] and kernel["ok"]):
                die(f"a result differs from numpy: runtime {runtime}, run-kernel {kernel}", 1)
            best_rt, best_rk = min(best_rt, runtime["best_s"]), min(best_rk, kernel["best_s"])
        rows.append((t, best_rt, best_rk))
    log(f"Triton 1024^3 fp16 matmul (64x64x32 tiles, 256 workgroups), gfx942, best of {args.reps}:")
    log(f"  {'threads':>7}  {'Triton runtime':>14}  {'run-kernel':>10}  {'runtime/run-kernel':>18}")
    for t, a, b in rows:
        log(f"  {t:>7}  {a:>12.3f} s  {b:>8.3f} s  {a / b:>17.2f}x")
    if args.smoke:
        times = {}
        for t in threads:
            for c in cases(argparse.Namespace(tier="ci", filter="", tinygrad_repo=None, pytest_k=None)):
                rc, out_text, secs, _ = run_case(c, argparse.Namespace(threads=t, timeout=None))
                if rc != 0:
                    die(f"{c.name} failed at {t} threads:\n{out_text[-3000:]}", 1)
                times.setdefault(c.name, {})[t] = secs
        log("CI-tier cases, wall time (each a whole process: start-up, compilation, the checks):")
        log(f"  {'case':<28}" + "".join(f"  {f'{t} thread(s)':>12}" for t in threads))
        for name, by in times.items():
            log(f"  {name:<28}" + "".join(f"  {by[t]:>10.1f} s" for t in threads))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--reps", type=int, default=5, help="interleaved rounds (default 5)")
    b.add_argument("--threads", help="comma-separated host thread counts (default: 1 and one per core)")
    b.add_argument("--smoke", action="store_true", help="also time the CI-tier cases at each thread count")
    for name in ("setup", "run", "list"):
        p = sub.add_parser(name)
        p.add_argument("--tier", choices=("ci", "full"), default="ci")
        if name in ("run", "list"):
            p.add_argument("-k", dest="filter", default="", help="only cases whose name contains this")
            p.add_argument("--tinygrad-repo", help="a tinygrad checkout: its test_ops.py and mock GPU (full tier)")
            p.add_argument("--pytest-k", help="pytest -k expression for test_ops (full tier)")
        if name == "run":
            p.add_argument("--threads", type=int, help="the emulator's host threads (default: one per core)")
            p.add_argument("--timeout", type=int, help="seconds per case (default: the case's own)")
            p.add_argument("--json", help="write the results here")
            p.add_argument("-v", "--verbose", action="store_true", help="print every case's output")
    args = ap.parse_args()
    if args.cmd == "setup":
        setup(args.tier)
        return 0
    if args.cmd == "bench":
        return bench(args)
    if args.cmd == "list":
        for c in cases(args):
            log(f"{c.name}: {c.gpu or 'DEV=' + c.env.get('DEV', '')}, ROCm {c.rocm}: {' '.join(c.argv)}")
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
