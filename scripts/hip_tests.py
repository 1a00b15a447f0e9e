#!/usr/bin/env python3
"""HIP end-to-end tests: the unmodified programs in tests/hip, built with an
unmodified hipcc and run, unmodified, under the rocjitsu launcher
(`rocjitsu --config FILE -- PROGRAM ARGS`), against the simulated driver.

  scripts/hip_tests.py build [--target T] [--hipcc PATH] [-j N] [-k FILTER] [--force]
  scripts/hip_tests.py run   [--target T] [--hipcc PATH] [--rocjitsu PATH] [--config FILE]
                             [--mode local|daemon|attach] [--guest simulator|hardware]
                             [-k FILTER] [--timeout S] [-j N] [--no-build] [-v] [--plugin SPEC]...
  scripts/hip_tests.py list  [--target T] [-k FILTER]

Programs are built into build/hip/<target>/ (`hipcc --offload-arch=<target>`),
only when a source, a shared header or the command line changed. Every
program checks its own results against a CPU computation and ends with
`PASS <name>` (exit 0) or `FAIL <name>: <what>` (exit 1). `run` builds, then
runs each program with a timeout and prints one line per program and the
summary `hip: N passed, M failed, K not applicable`; the exit status is 1 when
any program failed (2 for a usage or setup error, e.g. a missing launcher).

--mode picks how the launcher hosts the GPU: `local` (in the program),
`daemon` (`rocjitsu --daemon -- PROGRAM`: a daemon per program) or `attach`
(one daemon started by the runner, `rocjitsu --attach -- PROGRAM` for every
program; the daemon must hold nothing once all are done).

--plugin SPEC runs every program with an execution plugin (local and daemon
modes); with `hazards` or `races` a program that makes the plugin report
anything fails (the line names the first report).

--guest runs the gfx950 programs in DBT guest mode (`--target gfx950` only,
local launches): the program sees an MI355X (gfx950) whose kernels are
translated and run on a gfx942. `simulator`: configs/guest_gfx950_on_gfx942.json
(the emulated MI300X in the program); `hardware`:
configs/guest_gfx950_on_gfx942_hardware.json over a rocjitsu daemon serving
configs/gfx942_cdna3_kmd.json that the runner starts (`--socket`), which must
hold nothing once all are done. rocminfo must then show exactly one GPU, the
gfx950; rocm_agent_enumerator, which reads the KFD topology rather than HSA,
lists the host gfx942 and the guest gfx950 nodes. HIP 6.4.3 has no gfx950 device: build and run the programs in the
`--rocm 7` sysroot (rocminfo alone also runs on ROCm 6.4.3's).

Before the programs, the installed `rocminfo` and `rocm_agent_enumerator` run
under the launcher too; their output must name the config's GPU (target,
marketing name, CU count, wavefront size, clock).

A program states what the runner must do with lines in its leading comment:
  // hip-test args: ARGS          arguments; {genco} is the path of the code
                                  object built from `genco`, {props} the
                                  expected device properties from the config
  // hip-test genco: FILE         a kernel source built with `hipcc --genco`
  // hip-test libs: FLAGS         extra link flags
  // hip-test needs: LIB          a ROCm math library (hipsparse, hiprand);
                                  not applicable on targets it has no kernels for
  // hip-test expect-exit: nonzero
  // hip-test expect-stderr: TEXT (a substring of stderr; `A || B`: either)
  // hip-test expect-stdout: LINE (a whole line of stdout, in any order)
  // hip-test expect-pass-line: no
  // hip-test timeout: SECONDS
  // hip-test modes: M, M         the launcher modes the program applies to
                                 (default all; e.g. IPC between processes
                                 needs one GPU they share: daemon, attach)
  // hip-test run: no              built, but not run as a test (a helper of
                                 scripts/daemon_tests.py)
  // hip-test gpus: 2             runs on the 2-GPU config of the target
                                 (configs/<name>_2gpu.json, one XGMI hive)
  // hip-test targets: T, T       the targets the program applies to (default
                                 all; e.g. image instructions: gfx942 and
                                 gfx950 have none)
"""

import argparse
import concurrent.futures as cf
import fnmatch
import json
import os
import pathlib
import re
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import sys
import time

sys.dont_write_bytecode = True

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "tests" / "hip"
OUT = ROOT / "build" / "hip"
TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx908", "gfx1100", "gfx1151", "gfx1201")
DEFAULT_CONFIGS = {
    "gfx90a": "configs/gfx90a_cdna2_kmd.json",
    "gfx942": "configs/gfx942_cdna3_kmd.json",
    "gfx950": "configs/gfx950_cdna4_kmd.json",
    "gfx908": "configs/gfx908_cdna1_kmd.json",
    "gfx1100": "configs/gfx1100_rdna3_kmd.json",
    "gfx1151": "configs/gfx1151_rdna35_kmd.json",
    "gfx1201": "configs/gfx1201_rdna4_kmd.json",
}
# Targets of which a machine has one GPU only: no two-GPU configuration.
SINGLE_GPU_TARGETS = {"gfx1151": "the Strix Halo APU is the one GPU of its machine"}
DEFAULT_LAUNCHER = "target/release/rocjitsu"
# DBT guest mode: the guest configuration per backend, the identity the
# program sees, and (hardware) the host GPU the runner's daemon serves.
GUEST_CONFIGS = {
    "simulator": "configs/guest_gfx950_on_gfx942.json",
    "hardware": "configs/guest_gfx950_on_gfx942_hardware.json",
}
GUEST_IDENTITY = "configs/gfx950_cdna4_kmd.json"
GUEST_HOST_CONFIG = "configs/gfx942_cdna3_kmd.json"
# Files every program includes: a change rebuilds everything.
SHARED_HEADERS = ("common.h",)
CFLAGS = ("-O2", "-std=c++17", "-Wall")

# The GPU targets Debian's ROCm math libraries carry kernels for (bookworm's
# rocSPARSE/hipSPARSE 5.3 and rocRAND/hipRAND 5.3.3: gfx908 and gfx90a among
# them; sid's builds add gfx10/11 targets, never gfx942 or gfx950).
LIBRARY_TARGETS = {
    "hipsparse": ("gfx90a", "gfx908"),
    "hiprand": ("gfx90a", "gfx908"),
}
LIBRARY_PACKAGES = {"hipsparse": "libhipsparse-dev", "hiprand": "libhiprand-dev"}

DIRECTIVE = re.compile(r"^//\s*hip-test\s+([a-z-]+):\s*(.*?)\s*$")
KNOWN_KEYS = {
    "args",
    "genco",
    "libs",
    "needs",
    "expect-exit",
    "expect-stderr",
    "expect-stdout",
    "expect-pass-line",
    "timeout",
    "modes",
    "gpus",
    "run",
    "targets",
}


def log(msg):
    print(msg, flush=True)


def die(msg, code=2):
    print(f"hip: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


class Program:
    """One tests/hip/*.hip program and its directives."""

    def __init__(self, path):
        self.path = path
        self.name = path.stem
        self.directives = {}
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = DIRECTIVE.match(line)
            if not m:
                continue
            key, value = m.group(1), m.group(2)
            if key not in KNOWN_KEYS:
                die(f"{path.relative_to(ROOT)}:{lineno}: unknown directive 'hip-test {key}'")
            self.directives.setdefault(key, []).append(value)

    def one(self, key, default=None):
        values = self.directives.get(key, [])
        if len(values) > 1:
            die(f"{self.path.relative_to(ROOT)}: 'hip-test {key}' given {len(values)} times")
        return values[0] if values else default

    def many(self, key):
        return self.directives.get(key, [])

    @property
    def genco_source(self):
        g = self.one("genco")
        return SRC / g if g else None

    def not_applicable(self, target, mode=None, guest=None):
        """The reason the program does not apply to `target` (in `mode`), or None."""
        if guest and self.one("gpus", "1") != "1":
            return "needs 2 GPUs; DBT guest mode shows one guest GPU"
        if self.one("gpus", "1") != "1" and target in SINGLE_GPU_TARGETS:
            return f"needs 2 GPUs; {SINGLE_GPU_TARGETS[target]}"
        targets = [t.strip() for t in self.one("targets", "").split(",") if t.strip()]
        if targets and target not in targets:
            return f"applies to {', '.join(targets)} only"
        modes = [m.strip() for m in self.one("modes", "").split(",") if m.strip()]
        if mode and modes and mode not in modes:
            return f"needs {' or '.join(modes)} mode (processes that share one GPU), not {mode}"
        for lib in self.many("needs"):
            if lib not in LIBRARY_TARGETS:
                die(f"{self.path.relative_to(ROOT)}: unknown library in 'hip-test needs: {lib}'")
            if target not in LIBRARY_TARGETS[lib]:
                carried = ", ".join(LIBRARY_TARGETS[lib])
                return f"Debian's {lib} carries kernels for {carried} only, none for {target}"
        return None

    def exe(self, target):
        return OUT / target / self.name

    def genco(self, target):
        return OUT / target / f"{self.name}.genco.co"


def discover(filt):
    return [p for p in (Program(path) for path in sorted(SRC.glob("*.hip"))) if matches(p.name, filt)]


def matches(name, filt):
    return not filt or any(fnmatch.fnmatch(name, f"*{pat}*") for pat in filt.split(","))


# Unmodified ROCm tools of the installed ROCm, run under the launcher too: each
# must exit 0 and print lines matching these patterns (built from the config).
TOOLS = ("rocminfo", "rocm_agent_enumerator")


def tool_checks(props, guest=None):
    arch = re.escape(props["arch"])
    if guest:
        # Exactly one GPU agent, the guest (the host's is hidden).
        return {
            "rocminfo": [
                rf"^\s*Name:\s+{arch}\s*$",
                rf"^\s*Marketing Name:\s+{re.escape(props['name'])}\s*$",
                rf"^\s*Name:\s+amdgcn-amd-amdhsa--{arch}\b",
                rf"^\s*Compute Unit:\s+{props['cus']}\b",
                ("count", r"^\s*Device Type:\s+GPU\s*$", 1),
                ("absent", r"gfx942"),
            ],
            # It reads the KFD topology, not HSA: the host node and the
            # synthetic guest node are both there, by design.
            "rocm_agent_enumerator": [rf"^{arch}$", r"^gfx942$"],
        }
    rocminfo = [
        rf"^\s*Name:\s+{arch}\s*$",
        rf"^\s*Marketing Name:\s+{re.escape(props['name'])}\s*$",
        rf"^\s*Compute Unit:\s+{props['cus']}\b",
        rf"^\s*Wavefront Size:\s+{props['warp']}\b",
        rf"^\s*Max Clock Freq\. \(MHz\):\s+{props['clock-mhz']}\b",
    ]
    if props.get("integrated"):
        # An APU: ROCr's HSA_AMD_MEMORY_PROPERTY_AGENT_IS_APU, which
        # rocminfo (ROCm 6 and later) prints for the GPU agent.
        rocminfo.append(r"^\s*Memory Properties:\s+APU\s*$")
    return {
        "rocminfo": rocminfo,
        "rocm_agent_enumerator": [rf"^{arch}$"],
    }


# --- building -------------------------------------------------------------


def toolchain_id(hipcc):
    """Identifies the hipcc installation (the host's and the sysroot's are both
    /usr/bin/hipcc): its resolved path, size and modification time."""
    real = os.path.realpath(hipcc)
    st = os.stat(real)
    return f"{real} {st.st_size} {int(st.st_mtime)}"


def stamp_text(cmd, toolchain):
    return f"{shlex.join(cmd)}\n# hipcc: {toolchain}\n"


def up_to_date(output, inputs, cmd, toolchain):
    """True when `output` exists, is newer than every input and was built by
    the same command line and hipcc (recorded next to it)."""
    stamp = output.with_name(output.name + ".cmd")
    if not output.exists() or not stamp.exists():
        return False
    if stamp.read_text() != stamp_text(cmd, toolchain):
        return False
    mtime = output.stat().st_mtime
    return all(p.stat().st_mtime <= mtime for p in inputs)


def compile_one(cmd, output, inputs, toolchain, force):
    """Runs one hipcc command unless its output is current. Returns
    (status, message): status is 'built', 'current' or 'failed'."""
    if not force and up_to_date(output, inputs, cmd, toolchain):
        return "current", ""
    output.parent.mkdir(parents=True, exist_ok=True)
    stamp = output.with_name(output.name + ".cmd")
    stamp.unlink(missing_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            cmd[:-1] + [str(tmp)], cwd=ROOT, capture_output=True, text=True, errors="replace"
        )
    except OSError as e:
        return "failed", f"cannot run {cmd[0]}: {e}"
    if proc.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        text = (proc.stdout + proc.stderr).strip().splitlines()
        return "failed", "\n".join(text[-25:]) or f"hipcc exited with {proc.returncode}"
    tmp.replace(output)
    stamp.write_text(stamp_text(cmd, toolchain))
    msg = f"{time.monotonic() - t0:.1f} s"
    warnings = [line for line in (proc.stdout + proc.stderr).splitlines() if "warning:" in line]
    if warnings:
        msg += f", {len(warnings)} warnings:\n" + "\n".join(warnings[:10])
    return "built", msg


def hipcc_command(hipcc, target, extra):
    return [hipcc, f"--offload-arch={target}", *CFLAGS, *extra]


def build(progs, args):
    """Builds the applicable programs (and their genco code objects) for
    args.target. Returns {name: error message} for those that failed."""
    hipcc = shutil.which(args.hipcc) or (args.hipcc if os.path.exists(args.hipcc) else None)
    if hipcc is None:
        die(f"hipcc not found ('{args.hipcc}'); install it with `make setup` (bookworm: apt-get install hipcc), "
            "or run inside a sid sysroot: scripts/sysroot.sh run -- ... (gfx942, ROCm 6.4.3) or "
            "scripts/sysroot.sh --rocm 7 run -- ... (gfx942/gfx950, ROCm 7.2.4)")
    toolchain = toolchain_id(hipcc)
    extra = shlex.split(args.cflags or "")
    shared = [SRC / h for h in SHARED_HEADERS]
    jobs = []
    for p in progs:
        if p.not_applicable(args.target):
            continue
        if p.genco_source is not None:
            out = p.genco(args.target)
            cmd = [*hipcc_command(hipcc, args.target, extra), "--genco", str(p.genco_source.relative_to(ROOT)),
                   "-o", str(out)]
            jobs.append((p.name, f"{p.name} (code object)", cmd, out, [p.genco_source]))
        out = p.exe(args.target)
        libs = [flag for value in p.many("libs") for flag in shlex.split(value)]
        cmd = [*hipcc_command(hipcc, args.target, extra), f"-I{SRC.relative_to(ROOT)}",
               str(p.path.relative_to(ROOT)), *libs, "-o", str(out)]
        jobs.append((p.name, p.name, cmd, out, [p.path, *shared]))

    failures = {}
    built = 0
    unsupported = False
    t0 = time.monotonic()
    todo = [j for j in jobs if args.force or not up_to_date(j[3], j[4], j[2], toolchain)]
    if todo:
        log(f"hip: building {len(todo)} of {len(jobs)} for {args.target} with {hipcc} (-j{args.jobs})")
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(compile_one, cmd, out, inputs, toolchain, args.force): (name, label)
                for name, label, cmd, out, inputs in jobs}
        for fut in cf.as_completed(futs):
            name, label = futs[fut]
            status, msg = fut.result()
            if status == "built":
                built += 1
                first, *rest = msg.splitlines()
                log(f"  built  {label} ({first})")
                for line in rest:
                    log(f"      {line}")
            elif status == "failed":
                log(f"  BUILD FAILED  {label}")
                for line in msg.splitlines():
                    log(f"      {line}")
                failures[name] = f"build failed: {msg.splitlines()[-1] if msg else ''}"
                if "invalid target ID" in msg or "unsupported" in msg.lower():
                    unsupported = True
    if unsupported:
        log(f"hip: {hipcc} cannot build for {args.target} (bookworm's ROCm 5.2.3 knows gfx908 and gfx90a only); "
            f"build gfx942 with sid's hipcc (scripts/sysroot.sh run -- python3 scripts/hip_tests.py "
            f"{args.command} --target {args.target}), gfx950 with ROCm 7's (scripts/sysroot.sh --rocm 7 run -- ...), "
            f"or run make test-hip-sid")
    if todo:
        log(f"hip: built {built}, {len(failures)} failed ({time.monotonic() - t0:.1f} s)")
    return failures


# --- running --------------------------------------------------------------


def load_config(path, target):
    try:
        cfg = json.loads(pathlib.Path(path).read_text())
    except OSError as e:
        die(f"cannot read the config {path}: {e}")
    except json.JSONDecodeError as e:
        die(f"{path}: not valid JSON: {e}")
    try:
        gpus = cfg["gpus"]
        g = gpus[0]
        props = {
            "count": len(gpus),
            "name": g["marketing_name"],
            "arch": g["gfx_target"],
            "cus": g["soc"]["total_cus"],
            "warp": g["cu"]["wavefront_size"],
            "lds": g["cu"]["lds_bytes"],
            "mem": g["memory"]["size_bytes"],
            "clock-mhz": g["soc"]["max_engine_clock_mhz"],
            "max-threads": g["cu"]["max_workgroup_size"],
            "integrated": int(bool(g.get("apu", False))),
        }
    except (KeyError, IndexError, TypeError) as e:
        die(f"{path}: missing GPU field {e}")
    if props["arch"] != target:
        die(f"{path} describes a {props['arch']} GPU but the programs are built for {target} "
            f"(use --target {props['arch']} or --config {DEFAULT_CONFIGS[target]})")
    return props


def props_args(props):
    out = []
    for key, value in props.items():
        out += [f"--{key}", str(value)]
    return out


def program_args(prog, target, props):
    template = prog.one("args")
    if not template:
        return []
    out = []
    for word in shlex.split(template):
        if word == "{genco}":
            out.append(str(prog.genco(target)))
        elif word == "{props}":
            out += props_args(props)
        else:
            out.append(word)
    return out


def run_with_timeout(cmd, timeout, env=None):
    """Runs cmd in its own process group; on timeout the whole group is
    killed. Returns (returncode or None on timeout, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    # No core files: the fault program aborts on purpose.
    # A process group, not a session: the scheduler shares the CPU equally
    # between sessions (autogroup), so a program in a session of its own
    # would get as much as an attach-mode daemon's kernel threads together.
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            process_group=0,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        rc = None
    return rc, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - t0


def describe_rc(rc):
    if rc is not None and rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


def judge(prog, rc, out, err):
    """Returns None when the run meets the program's expectations, else the
    reason it does not."""
    expect_nonzero = prog.one("expect-exit", "zero") == "nonzero"
    want_pass_line = prog.one("expect-pass-line", "yes") != "no"
    lines = out.splitlines()
    fail_lines = [line for line in lines if line.startswith(f"FAIL {prog.name}")]
    if fail_lines:
        return fail_lines[0]
    if expect_nonzero:
        if rc == 0:
            return "exited with status 0, expected a non-zero exit"
    elif rc != 0:
        return f"{describe_rc(rc)}, expected 0"
    if want_pass_line and f"PASS {prog.name}" not in lines:
        return f"no 'PASS {prog.name}' line on stdout"
    for text in prog.many("expect-stderr"):
        choices = [t.strip() for t in text.split(" || ")]
        if not any(t in err for t in choices):
            where = " (it is on stdout)" if any(t in out for t in choices) else ""
            return f"stderr lacks '{text}'{where}"
    for line in prog.many("expect-stdout"):
        if line not in lines:
            return f"stdout lacks the line '{line}'"
    # A daemon's client that exits normally lets go of its GPU quietly.
    if "rocjitsu: lost the daemon" in err:
        return "stderr says the client lost its daemon"
    return None


def tail(text, n=12):
    lines = text.rstrip().splitlines()
    return lines[-n:]


class Tally:
    """Counts outcomes and prints one line per program (with the command and
    the end of its output on failure)."""

    def __init__(self, verbose):
        self.passed = self.failed = self.na = 0
        self.verbose = verbose

    def not_applicable(self, name, reason):
        self.na += 1
        log(f"N/A   {name}: {reason}")

    def fail_early(self, name, reason):
        self.failed += 1
        log(f"FAIL  {name}: {reason}")

    def outcome(self, name, problem, secs, cmd, out, err, note=""):
        if problem is None:
            self.passed += 1
            log(f"PASS  {name} ({secs:.1f} s{'; ' + note if note else ''})")
            if self.verbose:
                for line in tail(out) + tail(err):
                    log(f"      | {line}")
            return
        self.failed += 1
        log(f"FAIL  {name} ({secs:.1f} s): {problem}")
        log(f"      $ {shlex.join(cmd)}")
        for stream, text in (("stdout", out), ("stderr", err)):
            for line in tail(text, 20):
                log(f"      {stream}| {line}")


def launch_cmd(launcher, config, mode, socket, guest=None):
    """The launcher's command line up to and including `--`."""
    if guest == "hardware":
        return [str(launcher), "--config", str(config), "--socket", str(socket), "--"]
    if mode == "attach":
        return [str(launcher), "--attach", "--socket", str(socket), "--"]
    extra = ["--daemon"] if mode == "daemon" else []
    return [str(launcher), "--config", str(config), *extra, "--"]


def run_tool(tally, tool, patterns, launcher, config, timeout, mode="local", socket=None, guest=None):
    path = shutil.which(tool)
    if path is None:
        tally.not_applicable(tool, "not installed")
        return
    cmd = [*launch_cmd(launcher, config, mode, socket, guest), path]
    rc, out, err, secs = run_with_timeout(cmd, timeout)
    if rc is None:
        problem = f"timed out after {timeout:.0f} s (a hang?)"
    elif rc != 0:
        problem = f"{describe_rc(rc)}, expected 0"
    else:
        problem = None
        for pat in patterns:
            if isinstance(pat, tuple) and pat[0] == "count":
                n = len(re.findall(pat[1], out, re.M))
                if n != pat[2]:
                    problem = f"stdout has {n} lines matching {pat[1]!r}, expected {pat[2]}"
            elif isinstance(pat, tuple) and pat[0] == "absent":
                if re.search(pat[1], out, re.M):
                    problem = f"stdout mentions {pat[1]!r}, which guest mode must hide"
            elif not re.search(pat, out, re.M):
                problem = f"stdout has no line matching {pat!r}"
            if problem:
                break
    tally.outcome(tool, problem, secs, cmd, out, err)


def config_for(prog, config, guest=None):
    """The config a program runs on: the 2-GPU sibling for `gpus: 2`."""
    if prog.one("gpus", "1") == "2" and not guest:
        return str(config).replace(".json", "_2gpu.json")
    return str(config)


def run_program(tally, prog, args, launcher, config, props, build_failures, daemons=None):
    config = config_for(prog, config, args.guest)
    socket = None
    if args.guest == "hardware":
        socket = daemons.socket(GUEST_HOST_CONFIG)
    elif daemons is not None:
        socket = daemons.socket(config)
    reason = prog.not_applicable(args.target, args.mode, args.guest)
    if reason:
        tally.not_applicable(prog.name, reason)
        return
    if prog.name in build_failures:
        tally.fail_early(prog.name, build_failures[prog.name])
        return
    exe = prog.exe(args.target)
    if not exe.exists():
        tally.fail_early(prog.name, f"{exe.relative_to(ROOT)} is missing (run without --no-build)")
        return
    timeout = float(prog.one("timeout", args.timeout))
    launch = launch_cmd(launcher, config, args.mode, socket, args.guest)
    plugin_dir = None
    if args.plugin:
        plugin_dir = pathlib.Path(tempfile.mkdtemp(prefix=f"hip-plugins-{prog.name}-"))
        opts = []
        for spec in args.plugin:
            name = spec.split(":")[0]
            opts += ["--plugin", spec + (":format=jsonl" if name in CHECKERS and ":" not in spec else "")]
        # The launcher's options go before `--`.
        launch = [*launch[:-1], *opts, "--plugin-out", str(plugin_dir), "--"]
    cmd = [*launch, str(exe), *program_args(prog, args.target, props)]
    env = None
    if args.guest:
        # The hooks library's summary of what it translated.
        env = dict(os.environ, ROCJITSU_DBT_LOG="info")
    rc, out, err, secs = run_with_timeout(cmd, timeout, env)
    problem = f"timed out after {timeout:.0f} s (a hang?)" if rc is None else judge(prog, rc, out, err)
    if plugin_dir is not None:
        if problem is None:
            problem = judge_plugins(plugin_dir, {spec.split(":")[0] for spec in args.plugin})
        shutil.rmtree(plugin_dir, ignore_errors=True)
    note = ""
    if args.guest and problem is None:
        problem, note = judge_translation(err)
    tally.outcome(prog.name, problem, secs, cmd, out, err, note)


# Checking plugins (--plugin): a program fails when one reports anything, a
# record of this type in its JSON Lines output.
CHECKERS = {"hazards": "hazard", "races": "race"}


def judge_plugins(plugin_dir, names):
    """None when no checking plugin reported anything, else the first report
    (or that an enabled one wrote no file: it did not run)."""
    for name, kind in CHECKERS.items():
        files = sorted(plugin_dir.glob(f"{name}-*.jsonl"))
        if name in names and not files:
            return f"{name}: no {name}-*.jsonl in --plugin-out: the plugin did not run"
        for f in files:
            for line in f.read_text().splitlines():
                if not line.strip():
                    continue
                r = json.loads(line)
                if r.get("type") != kind:
                    continue
                if name == "races":
                    return (f"races: {r['kernel']}: {r['space']}/{r['scope']} at 0x{r['address']:x}: "
                            f"{r['first']['access']} +0x{r['first']['offset']:x} vs {r['second']['access']} "
                            f"+0x{r['second']['offset']:x}")
                return (f"hazards: {r['kernel']}+0x{r['offset']:x} `{r['instruction']}`: {r['kind']} "
                        f"{r.get('rule') or ''} {r.get('register') or ''} (producer `{r['producer']['instruction']}`)")
    return None


TRANSLATED = re.compile(r"code objects translated: (\d+) .*failed: (\d+)")
REWRITTEN = re.compile(r"translated a gfx950 code object .*?: (\d+) instructions, (\d+) rewritten")


def judge_translation(err):
    """Guest mode: the hooks library must have reported its summary with no
    failed translation. Returns (problem, note for the PASS line)."""
    m = TRANSLATED.search(err)
    if m is None:
        return "stderr lacks the hooks library's summary ('code objects translated: N ... failed: M'); was librocjitsu_hooks.so loaded?", ""
    if int(m.group(2)) != 0:
        return f"the hooks library failed to translate {m.group(2)} code object(s)", ""
    insts = rewritten = 0
    for r in REWRITTEN.finditer(err):
        insts += int(r.group(1))
        rewritten += int(r.group(2))
    return None, f"{m.group(1)} code objects translated, {rewritten} of {insts} instructions rewritten"


def cmd_run(args):
    progs = discover(args.k)
    if args.plugin and (args.mode == "attach" or args.guest):
        die("--plugin applies to local and daemon launches (with --attach the daemon's own plugins apply)")
    if args.guest:
        if args.target != "gfx950":
            die(f"--guest runs gfx950 programs (the guest is a gfx950 on a gfx942 host); use --target gfx950, not {args.target}")
        if args.mode != "local":
            die("DBT guest mode is local-launch only: --guest takes no --mode daemon/attach "
                "(--guest hardware starts the host daemon itself)")
        config = args.config or GUEST_CONFIGS[args.guest]
        # The program sees the guest's identity.
        props = load_config(ROOT / GUEST_IDENTITY, args.target)
    else:
        config = args.config or DEFAULT_CONFIGS[args.target]
        props = load_config(config if os.path.isabs(config) else ROOT / config, args.target)
    tools = {t: pats for t, pats in tool_checks(props, args.guest).items() if matches(t, args.k)}
    if not progs and not tools:
        die(f"nothing matches -k {args.k}")
    launcher = pathlib.Path(args.rocjitsu)
    if not launcher.is_absolute():
        launcher = ROOT / launcher
    build_failures = {} if args.no_build or not progs else build(progs, args)
    if not launcher.exists():
        die(f"the launcher {launcher} does not exist; build it with `make build` "
            f"(cargo build --release --workspace), or name another with --rocjitsu")

    t0 = time.monotonic()
    shown = launcher.relative_to(ROOT) if launcher.is_relative_to(ROOT) else launcher
    how = f"DBT guest mode, {args.guest} backend" if args.guest else f"{args.mode} mode"
    log(f"hip: {len(tools)} ROCm tools and {len(progs)} programs for {args.target} under {shown} --config {config}"
        f" ({how})")
    tally = Tally(args.verbose)
    daemons = Daemons(launcher) if args.mode == "attach" or args.guest == "hardware" else None
    try:
        # The tools first: rocminfo is the simplest whole-stack check.
        for tool, patterns in tools.items():
            if args.guest == "hardware":
                socket = daemons.socket(GUEST_HOST_CONFIG)
            else:
                socket = daemons.socket(config) if daemons else None
            run_tool(tally, tool, patterns, launcher, config, args.timeout, args.mode, socket, args.guest)
        for p in progs:
            if p.one("run", "yes") == "no":
                continue
            run_program(tally, p, args, launcher, config, props, build_failures, daemons)
        if daemons is not None:
            daemons.check_idle(tally)
    finally:
        if daemons is not None:
            daemons.stop()
    log(f"hip: {tally.passed} passed, {tally.failed} failed, {tally.na} not applicable "
        f"({args.target}, {how}, {time.monotonic() - t0:.1f} s)")
    return 1 if tally.failed else 0


class Daemons:
    """Attach mode: one daemon per config, started when first needed."""

    def __init__(self, launcher):
        self.launcher = launcher
        self.running = {}

    def socket(self, config):
        if config not in self.running:
            self.running[config] = start_daemon(self.launcher, config)
        return self.running[config][1]

    def check_idle(self, tally):
        for config, (_, socket) in self.running.items():
            name = "daemon-reclaims" + ("-2gpu" if "_2gpu" in config else "")
            check_daemon_idle(tally, self.launcher, socket, name)

    def stop(self):
        import shutil
        for proc, socket in self.running.values():
            stop_daemon(proc)
            # Its socket directory goes too (a sysroot's /tmp is shared).
            shutil.rmtree(socket.parent, ignore_errors=True)


def daemon_status(launcher, socket):
    r = subprocess.run([str(launcher), "daemon-status", "--socket", str(socket)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.loads(r.stdout), None


def start_daemon(launcher, config):
    """Starts `rocjitsu --config CONFIG --daemon` on a private socket;
    returns (process, socket) once it answers."""
    import tempfile
    d = pathlib.Path(tempfile.mkdtemp(prefix="rocjitsu-hip-daemon-"))
    socket = d / "daemon.sock"
    logf = open(d / "daemon.log", "w")
    proc = subprocess.Popen([str(launcher), "--config", str(config), "--daemon", "--socket", str(socket)],
                            stdout=logf, stderr=subprocess.STDOUT, process_group=0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            die(f"the daemon exited with status {proc.returncode}: {(d / 'daemon.log').read_text()}")
        st, _ = daemon_status(launcher, socket)
        if st is not None:
            log(f"hip: daemon pid {proc.pid} on {socket}")
            return proc, socket
        time.sleep(0.1)
    proc.kill()
    die(f"the daemon did not answer on {socket} within 30 s")


def check_daemon_idle(tally, launcher, socket, name="daemon-reclaims"):
    """After every program: the daemon holds no client, allocation, queue
    or VRAM (what exited was released)."""
    t0 = time.monotonic()
    st, err = None, None
    while time.monotonic() - t0 < 10:
        st, err = daemon_status(launcher, socket)
        if st is not None and st["clients"] == 0 and st["allocations"] == 0 and not any(st["vram_used"]):
            break
        time.sleep(0.1)
    problem = None
    if st is None:
        problem = f"the daemon does not answer: {err}"
    elif st["clients"] or st["allocations"] or st["queues"] or any(st["vram_used"]):
        problem = f"the daemon still holds {st} after every program exited"
    tally.outcome(name, problem, time.monotonic() - t0, ["daemon-status"], json.dumps(st), "")


def stop_daemon(proc):
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cmd_build(args):
    progs = discover(args.k)
    if not progs:
        die(f"no program matches -k {args.k}")
    failures = build(progs, args)
    applicable = [p for p in progs if not p.not_applicable(args.target)]
    for p in progs:
        reason = p.not_applicable(args.target)
        if reason:
            log(f"  n/a    {p.name}: {reason}")
    log(f"hip: {len(applicable) - len(failures)} of {len(applicable)} programs built for {args.target} "
        f"in {(OUT / args.target).relative_to(ROOT)}")
    return 1 if failures else 0


def cmd_list(args):
    for p in discover(args.k):
        reason = p.not_applicable(args.target)
        notes = []
        for key in ("args", "genco", "libs", "expect-exit", "expect-stderr"):
            for v in p.many(key):
                notes.append(f"{key}: {v}")
        if p.many("expect-stdout"):
            notes.append(f"expect-stdout: {len(p.many('expect-stdout'))} lines")
        status = f"n/a ({reason})" if reason else "applicable"
        log(f"{p.name:21} {args.target}: {status}" + (f"; {'; '.join(notes)}" if notes else ""))
    for tool in TOOLS:
        if matches(tool, args.k):
            where = shutil.which(tool) or "not installed"
            log(f"{tool:21} {args.target}: installed ROCm tool ({where}); output checked against the config")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("build", "run", "list"))
    ap.add_argument("--target", choices=TARGETS, default="gfx90a")
    ap.add_argument("--hipcc", default=os.environ.get("HIPCC", "hipcc"), help="hipcc to build with (default: hipcc)")
    ap.add_argument("--cflags", default=os.environ.get("HIP_TESTS_CFLAGS", ""),
                    help="extra hipcc flags, e.g. -mcode-object-version=5")
    ap.add_argument("--rocjitsu", default=DEFAULT_LAUNCHER, help=f"the launcher (default: {DEFAULT_LAUNCHER})")
    ap.add_argument("--config", help="GPU config (default: the shipped one for --target)")
    ap.add_argument("--mode", choices=("local", "daemon", "attach"), default="local",
                    help="local: the GPU in each program; daemon: rocjitsu --daemon per program; "
                         "attach: one daemon for all programs (default: local)")
    ap.add_argument("--guest", choices=("simulator", "hardware"),
                    help="DBT guest mode (--target gfx950): the programs see a gfx950 whose kernels run, "
                         "translated, on the emulated gfx942 in the program (simulator) or on a rocjitsu "
                         "daemon serving gfx942 (hardware)")
    ap.add_argument("-k", help="only programs whose name contains one of these comma-separated patterns")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel hipcc runs (default 2)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per program (default 120)")
    ap.add_argument("--force", action="store_true", help="rebuild everything")
    ap.add_argument("--no-build", action="store_true", help="run what is already built")
    ap.add_argument("-v", "--verbose", action="store_true", help="show the output of passing programs too")
    ap.add_argument("--plugin", action="append", default=[], metavar="SPEC",
                    help="run every program with this execution plugin (repeatable; local and daemon modes); "
                         "with hazards or races, a report fails the program")
    args = ap.parse_args()
    return {"build": cmd_build, "run": cmd_run, "list": cmd_list}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
