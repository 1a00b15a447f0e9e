#!/usr/bin/env python3
"""Daemon-mode end-to-end tests: several unmodified HIP processes on one
`rocjitsu --daemon`, clients that die, a daemon that dies.

  scripts/daemon_tests.py [--target T] [--rocjitsu PATH] [--config FILE] [-k FILTER] [-v]

The HIP programs are tests/hip's (built by scripts/hip_tests.py into
build/hip/<target>/). Scenarios:
  concurrent-2, concurrent-8  2 and then 8 clients at once, each launching
                              hundreds of kernels and copies and checking
                              every result (many_launches, different seeds)
  sigkill-mid-kernel          a client killed with SIGKILL while its kernel
                              runs: the daemon survives, frees its memory and
                              queues (its own accounting, `rocjitsu
                              daemon-status`), and the other clients finish
  daemon-dies                 the daemon killed under a client in a kernel:
                              the client ends with an error instead of hanging
  connection-cap              on a daemon started with --client-connections
                              64: one process (scripts/daemon_hog.py) opens
                              1000 connections; exactly 64 are served, the
                              other 936 are refused with EMFILE and a reason
                              naming --client-connections, and meanwhile
                              vector_add runs on the daemon and passes
  memory-cap                  on a daemon started with --client-memory 50:
                              one process allocates VRAM in 1 GiB chunks
                              until it is refused: ENOMEM at half the
                              config's VRAM, not the whole; an allocation
                              whose size overflows and an mmap whose
                              offset + length overflows are EINVAL; and
                              vector_add, holding its own share, passes
After every scenario the daemon must hold nothing. Prints one line per
scenario and `daemon: N passed, M failed`; exit status 1 on a failure.
"""

import argparse
import json
import os
import pathlib
import signal
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS = {
    "gfx90a": "configs/gfx90a_cdna2_kmd.json",
    "gfx942": "configs/gfx942_cdna3_kmd.json",
    "gfx950": "configs/gfx950_cdna4_kmd.json",
}


def log(msg):
    print(msg, flush=True)


class Daemon:
    def __init__(self, launcher, config, *flags):
        self.launcher = launcher
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="rocjitsu-daemon-test-"))
        self.socket = self.dir / "daemon.sock"
        self.logf = open(self.dir / "daemon.log", "w")
        self.proc = subprocess.Popen(
            [str(launcher), "--config", str(config), "--daemon", "--socket", str(self.socket), *flags],
            stdout=self.logf, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while self.status() is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the daemon did not start: {(self.dir / 'daemon.log').read_text()}")
            time.sleep(0.05)

    def status(self):
        r = subprocess.run([str(self.launcher), "daemon-status", "--socket", str(self.socket)],
                           capture_output=True, text=True, timeout=30)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def wait_idle(self, secs=15):
        """The daemon's accounting once it holds nothing (or the last one
        seen when it does not get there)."""
        t0 = time.monotonic()
        st = None
        while time.monotonic() - t0 < secs:
            st = self.status()
            if st and st["clients"] == 0 and st["allocations"] == 0 and st["queues"] == 0 \
                    and not any(st["vram_used"]):
                return True, st
            time.sleep(0.1)
        return False, st

    def client(self, exe, *args):
        return subprocess.Popen([str(self.launcher), "--attach", "--socket", str(self.socket), "--",
                                 str(exe), *map(str, args)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    def log_text(self):
        self.logf.flush()
        return (self.dir / "daemon.log").read_text()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # Its socket directory goes too (a sysroot's /tmp is shared).
        self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def finish(p, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def concurrent(d, build, n, rounds):
    procs = [d.client(build / "many_launches", seed, rounds) for seed in range(1, n + 1)]
    problems = []
    for seed, p in enumerate(procs, 1):
        rc, out, err = finish(p, 600)
        if rc != 0 or f"PASS many_launches" not in out:
            problems.append(f"client {seed}: exit {rc}: {(out + err).strip()[-400:]}")
    return problems


def sigkill_mid_kernel(d, build):
    victim = d.client(build / "long_kernel", 2000)
    # Wait until its kernel runs.
    line = victim.stdout.readline()
    if "launched" not in line:
        victim.kill()
        return [f"long_kernel did not launch: {line!r} {victim.stderr.read()[-400:]}"]
    st = d.status()
    if not st or st["clients"] < 1 or st["queues"] < 1 or st["allocations"] < 1:
        return [f"while the kernel runs the daemon holds {st}, expected a client with queues and memory"]
    others = [d.client(build / "many_launches", seed, 100) for seed in (7, 8)]
    time.sleep(0.3)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    problems = []
    for p in others:
        rc, out, err = finish(p, 600)
        if rc != 0 or "PASS many_launches" not in out:
            problems.append(f"a client beside the killed one: exit {rc}: {(out + err).strip()[-400:]}")
    if d.proc.poll() is not None:
        problems.append(f"the daemon died: {d.log_text()[-800:]}")
    return problems


def daemon_dies(launcher, config, build):
    d = Daemon(launcher, config)
    try:
        c = d.client(build / "long_kernel", 2000)
        line = c.stdout.readline()
        if "launched" not in line:
            return [f"long_kernel did not launch: {line!r}"]
        d.proc.kill()
        d.proc.wait()
        rc, out, err = finish(c, 60)
        if rc is None:
            return ["the client hung after its daemon died (killed after 60 s)"]
        if rc == 0:
            return ["the client exited 0 although its daemon died under its kernel"]
        if "lost the daemon" not in err:
            return [f"the client's stderr does not say the daemon was lost: {err.strip()[-400:]}"]
        return []
    finally:
        d.stop()


# The limits the connection-cap and memory-cap scenarios start their daemon with.
CLIENT_CONNECTIONS = 64
CLIENT_MEMORY_PERCENT = 50
HOG_CONNECTIONS = 1000
GIB = 1 << 30


class Hog:
    """scripts/daemon_hog.py against the daemon: what it got, and it holds
    that until released."""

    def __init__(self, d, *args):
        self.p = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "daemon_hog.py"), *args,
                                   "--socket", str(d.socket)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        line = self.p.stdout.readline()
        try:
            self.got = json.loads(line)
        except ValueError:
            self.got = {"error": f"no report ({line!r}): {self.p.stderr.read()[-400:]}"}

    def release(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def second_client(d, build, why):
    """vector_add on the daemon beside a greedy client: [] when it passes."""
    rc, out, err = finish(d.client(build / "vector_add"), 300)
    if rc != 0 or "PASS vector_add" not in out:
        return [f"vector_add beside a client {why}: exit {rc}: {(out + err).strip()[-400:]}"]
    return []


def connection_cap(d, build):
    hog = Hog(d, "connections", "--count", str(HOG_CONNECTIONS))
    try:
        got = hog.got
        if "error" in got:
            return [f"the greedy client: {got['error']}"]
        problems = []
        if got["accepted"] != CLIENT_CONNECTIONS or got["refused"] != HOG_CONNECTIONS - CLIENT_CONNECTIONS:
            problems.append(f"of {HOG_CONNECTIONS} connections of one process {got['accepted']} were served and "
                            f"{got['refused']} refused ({got['others']} neither), expected {CLIENT_CONNECTIONS} "
                            f"and {HOG_CONNECTIONS - CLIENT_CONNECTIONS}")
        if not got["refusal"].startswith("errno 24:") or "--client-connections" not in got["refusal"]:
            problems.append(f"the refusal is not EMFILE naming --client-connections: {got['refusal']!r}")
        st = d.status()
        if not st or st["refused_connections"] < HOG_CONNECTIONS - CLIENT_CONNECTIONS:
            problems.append(f"the daemon's accounting does not show the refusals: {st}")
        problems += second_client(d, build, f"holding {got['accepted']} connections")
        if d.proc.poll() is not None:
            problems.append(f"the daemon died: {d.log_text()[-800:]}")
        return problems
    finally:
        hog.release()


def memory_cap(d, build, vram):
    share = vram * CLIENT_MEMORY_PERCENT // 100
    hog = Hog(d, "memory", "--chunk", str(GIB))
    try:
        got = hog.got
        if "error" in got:
            return [f"the greedy client: {got['error']}"]
        problems = []
        if got["errno"] != 12 or not share - GIB < got["allocated"] <= share:
            problems.append(f"one process allocated {got['allocated'] / GIB:.0f} GiB of {vram / GIB:.0f} GiB of VRAM "
                            f"before errno {got['errno']}; expected ENOMEM (12) once past its share "
                            f"({CLIENT_MEMORY_PERCENT}%, {share / GIB:.0f} GiB)")
        if got["overflowing_size_errno"] != 22:
            problems.append(f"an allocation of 2^64-1 bytes got errno {got['overflowing_size_errno']}, expected EINVAL (22)")
        if got["overflowing_mmap_errno"] != 22:
            problems.append(f"an mmap whose offset + length is 2^64 got errno {got['overflowing_mmap_errno']}, "
                            "expected EINVAL (22)")
        st = d.status()
        if not st or st["vram_used"][0] < got["allocated"]:
            problems.append(f"the daemon's accounting does not show the greedy client's VRAM: {st}")
        problems += second_client(d, build, f"holding {got['allocated'] / GIB:.0f} GiB of VRAM")
        if d.proc.poll() is not None:
            problems.append(f"the daemon died: {d.log_text()[-800:]}")
        return problems
    finally:
        hog.release()


def report(name, secs, problems, note=""):
    """Prints a scenario's line (and its problems); True when it passed."""
    if problems:
        log(f"FAIL  {name} ({secs:.1f} s)")
        for p in problems:
            log(f"      {p}")
        return False
    log(f"PASS  {name} ({secs:.1f} s{'; ' + note if note else ''})")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=tuple(CONFIGS), default="gfx90a")
    ap.add_argument("--rocjitsu", default="target/release/rocjitsu")
    ap.add_argument("--config", help="GPU config (default: the shipped one for --target)")
    ap.add_argument("-k", help="only scenarios whose name contains one of these comma-separated patterns")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    launcher = ROOT / args.rocjitsu
    config = ROOT / (args.config or CONFIGS[args.target])
    build = ROOT / "build" / "hip" / args.target
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "hip_tests.py"), "build", "--target", args.target,
                        "-k", "many_launches,long_kernel,vector_add"], capture_output=True, text=True)
    if r.returncode != 0:
        log(r.stdout + r.stderr)
        log("daemon: error: cannot build the HIP programs")
        return 2
    scenarios = [
        ("concurrent-2", lambda d: concurrent(d, build, 2, 300)),
        ("concurrent-8", lambda d: concurrent(d, build, 8, 100)),
        ("sigkill-mid-kernel", lambda d: sigkill_mid_kernel(d, build)),
    ]
    vram = json.loads(config.read_text())["gpus"][0]["memory"]["size_bytes"]
    limited = [
        ("connection-cap", lambda d: connection_cap(d, build)),
        ("memory-cap", lambda d: memory_cap(d, build, vram)),
    ]
    pats = [p for p in (args.k or "").split(",") if p]
    want = lambda name: not pats or any(p in name for p in pats)
    passed = failed = 0
    t_all = time.monotonic()

    def run_on(d, scenarios):
        nonlocal passed, failed
        for name, run in scenarios:
            if not want(name):
                continue
            t0 = time.monotonic()
            problems = run(d)
            idle, st = d.wait_idle()
            if not idle:
                problems.append(f"afterwards the daemon still holds {st}")
            ok = report(name, time.monotonic() - t0, problems, f"daemon afterwards: {json.dumps(st)}")
            passed, failed = passed + ok, failed + (not ok)

    if any(want(name) for name, _ in scenarios):
        d = Daemon(launcher, config)
        log(f"daemon: {args.target} on {config.relative_to(ROOT)}, daemon pid {d.proc.pid}")
        try:
            run_on(d, scenarios)
        finally:
            d.stop()
    if any(want(name) for name, _ in limited):
        flags = ["--client-connections", str(CLIENT_CONNECTIONS), "--client-memory", str(CLIENT_MEMORY_PERCENT)]
        d = Daemon(launcher, config, *flags)
        log(f"daemon: {' '.join(flags)}, daemon pid {d.proc.pid}")
        try:
            run_on(d, limited)
        finally:
            d.stop()
    if want("daemon-dies"):
        t0 = time.monotonic()
        problems = daemon_dies(launcher, config, build)
        ok = report("daemon-dies", time.monotonic() - t0, problems)
        passed, failed = passed + ok, failed + (not ok)
    log(f"daemon: {passed} passed, {failed} failed ({args.target}, {time.monotonic() - t_all:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
