#!/usr/bin/env python3
"""Checkpoint and restore in daemon mode, end to end, with the real ROCm.

  scripts/checkpoint_test.py [--target T] [--rocjitsu PATH] [--rounds N] [-v]

tests/hip/checkpoint_resume.hip (dependent kernels, copies and fills over
four device buffers; a digest of every byte of each at the end) runs twice
on a daemon (`rocjitsu --attach`):

  uninterrupted  on a daemon that runs to the end;
  restored       on a daemon that is checkpointed mid-way (`rocjitsu
                 daemon-checkpoint`, after the program prints `midway`, while
                 it goes on launching), killed with SIGKILL, and replaced by
                 `rocjitsu --daemon --restore FILE` on the same socket; the
                 program (ROCJITSU_DAEMON_RECONNECT set) waits, reconnects and
                 goes on.

The restored run's stdout (the digests, then PASS) must equal the
uninterrupted run's, line for line. Then a corrupt checkpoint (one payload
byte flipped) and the checkpoint under another GPU configuration must each
be refused by `--restore` with a message naming what is wrong, and no
daemon may start. Prints one line per scenario and `checkpoint: N passed,
M failed`; exit status 1 on a failure.
"""

import argparse
import json
import os
import pathlib
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS = {
    "gfx90a": "configs/gfx90a_cdna2_kmd.json",
    "gfx942": "configs/gfx942_cdna3_kmd.json",
}
OTHER = {"gfx90a": "configs/gfx942_cdna3_kmd.json", "gfx942": "configs/gfx90a_cdna2_kmd.json"}


def log(msg):
    print(msg, flush=True)


class Daemon:
    def __init__(self, launcher, config, socket, logpath, *flags):
        self.socket = socket
        self.logf = open(logpath, "w")
        self.proc = subprocess.Popen(
            [str(launcher), "--config", str(config), "--daemon", "--socket", str(socket), *flags],
            stdout=subprocess.DEVNULL, stderr=self.logf, start_new_session=True)
        t0 = time.monotonic()
        while not socket.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the daemon did not start: {pathlib.Path(logpath).read_text()}")
            if time.monotonic() - t0 > 30:
                raise RuntimeError("the daemon did not listen within 30 s")
            time.sleep(0.05)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.logf.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()


def client(launcher, socket, exe, rounds, env=None):
    p = subprocess.Popen([str(launcher), "--attach", "--socket", str(socket), "--", str(exe), str(rounds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    lines = queue.Queue()

    def pump():
        for line in p.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return p, lines


def drain(p, lines, timeout):
    """The rest of the client's stdout lines, its exit status and stderr."""
    out, t0 = [], time.monotonic()
    while True:
        try:
            line = lines.get(timeout=max(0.1, timeout - (time.monotonic() - t0)))
        except queue.Empty:
            os.killpg(p.pid, signal.SIGKILL)
            return out, None, p.stderr.read()
        if line is None:
            break
        out.append(line)
    p.wait()
    return out, p.returncode, p.stderr.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=tuple(CONFIGS), default="gfx90a")
    ap.add_argument("--rocjitsu", default="target/release/rocjitsu")
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    launcher = ROOT / args.rocjitsu
    config = ROOT / CONFIGS[args.target]
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "hip_tests.py"), "build", "--target", args.target,
                        "-k", "checkpoint_resume"], capture_output=True, text=True)
    exe = ROOT / "build" / "hip" / args.target / "checkpoint_resume"
    if r.returncode != 0 or not exe.exists():
        log(r.stdout + r.stderr)
        log("checkpoint: error: cannot build tests/hip/checkpoint_resume.hip")
        return 2
    work = pathlib.Path(tempfile.mkdtemp(prefix="rocjitsu-checkpoint-test-"))
    passed = failed = 0
    t_all = time.monotonic()

    def report(name, t0, problems, note=""):
        nonlocal passed, failed
        secs = time.monotonic() - t0
        if problems:
            failed += 1
            log(f"FAIL {name} ({secs:.1f} s)")
            for p in problems:
                log(f"  {p}")
        else:
            passed += 1
            log(f"ok   {name} ({secs:.1f} s){': ' + note if note and args.verbose else ''}")

    try:
        # The uninterrupted run.
        t0 = time.monotonic()
        d = Daemon(launcher, config, work / "plain.sock", work / "plain.log")
        p, lines = client(launcher, d.socket, exe, args.rounds)
        want, rc, err = drain(p, lines, 600)
        d.stop()
        problems = []
        if rc != 0 or not want or want[-1] != "PASS checkpoint_resume":
            problems.append(f"the uninterrupted run failed (exit {rc}): {want[-3:]} {err.strip()[-600:]}")
        report("uninterrupted", t0, problems)
        if problems:
            return 1

        # Checkpointed mid-way, killed, restored.
        t0 = time.monotonic()
        problems = []
        ckpt = work / "midway.ckpt"
        sock = work / "restored.sock"
        d1 = Daemon(launcher, config, sock, work / "d1.log")
        env = dict(os.environ, ROCJITSU_DAEMON_RECONNECT="120")
        p, lines = client(launcher, sock, exe, args.rounds, env)
        got, t_mid = [], time.monotonic()
        while True:
            line = lines.get(timeout=600)
            if line is None:
                break
            got.append(line)
            if line == "midway":
                break
        summary = None
        if got[-1:] == ["midway"]:
            c = subprocess.run([str(launcher), "daemon-checkpoint", "--socket", str(sock), "--out", str(ckpt)],
                               capture_output=True, text=True, timeout=300)
            if c.returncode != 0:
                problems.append(f"daemon-checkpoint failed: {c.stderr.strip()[-600:]}")
            else:
                summary = json.loads(c.stdout)
        else:
            problems.append(f"the program ended before `midway`: {got[-3:]}")
        d1.kill()
        d2 = None
        if not problems:
            d2 = Daemon(launcher, config, sock, work / "d2.log", "--restore", str(ckpt))
        rest, rc, err = drain(p, lines, 600)
        got += rest
        if d2:
            d2.stop()
        if not problems:
            if rc != 0:
                problems.append(f"the restored run exited {rc}: {got[-3:]} {err.strip()[-800:]}")
            if got != want:
                problems.append(f"stdout differs from the uninterrupted run's: {got} vs {want}")
            if "resumed on the restored daemon" not in err:
                problems.append(f"the program's stderr does not show the resume: {err.strip()[-600:]}")
        size = ckpt.stat().st_size if ckpt.exists() else 0
        report("checkpoint-kill-restore", t0, problems,
               f"checkpoint {size} bytes, {summary}; {len(got)} lines equal")

        # A corrupt checkpoint and a foreign configuration are refused.
        t0 = time.monotonic()
        problems = []
        if ckpt.exists():
            b = bytearray(ckpt.read_bytes())
            b[-100] ^= 0xFF
            bad = work / "corrupt.ckpt"
            bad.write_bytes(bytes(b))
            for name, cfg, f, want_text in [("corrupt", config, bad, "SHA-256"),
                                            ("foreign", ROOT / OTHER[args.target], ckpt, args.target)]:
                s = work / f"{name}.sock"
                r = subprocess.run([str(launcher), "--config", str(cfg), "--daemon", "--socket", str(s),
                                    "--restore", str(f)], capture_output=True, text=True, timeout=60)
                if r.returncode == 0 or want_text not in r.stderr or s.exists():
                    problems.append(f"{name}: `--restore` did not refuse it naming {want_text!r} "
                                    f"(exit {r.returncode}): {r.stderr.strip()[-400:]}")
        else:
            problems.append("no checkpoint to damage")
        report("refused-checkpoints", t0, problems)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"checkpoint: {passed} passed, {failed} failed ({time.monotonic() - t_all:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
