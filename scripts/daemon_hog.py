#!/usr/bin/env python3
"""A greedy client of a rocjitsu daemon, for scripts/daemon_tests.py: it
speaks the daemon's wire protocol (crates/rpc/src/wire.rs) itself, from
this one process, and takes more than a client may.

  daemon_hog.py connections --socket S --count N
      opens N connections, each with a handshake (the first as a new
      process, the others with its token, as the preload's pool does)
  daemon_hog.py memory --socket S --chunk BYTES
      allocates VRAM on GPU 0 in chunks until the daemon says no; then
      asks for an allocation whose size overflows when rounded to a page
      and an mmap a page into a buffer whose offset + length is 2^64

Prints one JSON line saying what it got, then holds everything (the
connections, the memory) until stdin closes or a line arrives on it, so
that the test can run another client meanwhile.
"""

import argparse
import array
import json
import os
import pathlib
import socket
import struct
import sys

VERSION = 2
HANDSHAKE, CLOSE, MMAP, IOCTL, STATUS = 1, 2, 3, 5, 6
HEADER = struct.Struct("<HHIIi")
ALLOC_VRAM = 1 << 0
ALLOC_WRITABLE = 1 << 31


def iowr(nr, size):
    return (3 << 30) | (size << 16) | (ord("K") << 8) | nr


ALLOC_MEMORY_OF_GPU = iowr(0x16, 40)


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(str(path))
        self.next_id = 1

    def send(self, op, payload, request_id=None):
        rid = self.next_id if request_id is None else request_id
        self.next_id += 1
        self.s.sendall(HEADER.pack(op, 0, rid, len(payload), 0) + payload)
        return rid

    def _read(self, n, fds):
        out = b""
        while len(out) < n:
            data, anc, _, _ = self.s.recvmsg(n - len(out), socket.CMSG_SPACE(4 * 4))
            for level, kind, body in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    a = array.array("i")
                    a.frombytes(body[: len(body) - len(body) % 4])
                    fds.extend(a)
            if not data:
                return None
            out += data
        return out

    def recv(self):
        """(result, payload, fds) of the next message, or None at EOF."""
        fds = []
        try:
            h = self._read(HEADER.size, fds)
            if h is None:
                return None
            op, _, rid, n, result = HEADER.unpack(h)
            payload = self._read(n, fds) if n else b""
        except ConnectionResetError:
            return None
        if payload is None:
            return None
        return result, payload, fds

    def handshake(self, token=b"\0" * 16):
        try:
            self.send(HANDSHAKE, struct.pack("<II", VERSION, os.getpid()) + token, request_id=0)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a daemon refusing the connection may have answered and closed it already
        return self.recv()

    def close(self):
        self.s.close()


def welcome(payload):
    """(token, config JSON, sysfs root) of a handshake reply."""
    token = payload[4:20]
    (n,) = struct.unpack_from("<I", payload, 20)
    config = payload[24:24 + n].decode()
    (m,) = struct.unpack_from("<I", payload, 24 + n)
    root = payload[28 + n:28 + n + m].decode()
    return token, config, root


def device(kind, gpu=0, minor=0):
    return struct.pack("<BII", kind, gpu, minor)


def ioctl(request, arg):
    # device, request, argument, no buffers, no descriptors, offset 0, no notes
    return (device(0) + struct.pack("<QI", request, len(arg)) + arg
            + struct.pack("<IIQI", 0, 0, 0, 0))


def ioctl_arg(payload):
    """The argument structure of an IOCTL reply."""
    (n,) = struct.unpack_from("<I", payload, 17)
    return payload[21:21 + n]


def hold(report):
    print(json.dumps(report), flush=True)
    sys.stdin.readline()


def connections(args):
    conns, accepted, refused, other = [], 0, 0, []
    first = Conn(args.socket)
    r = first.handshake()
    if r is None or r[0] != 0:
        hold({"error": f"the first handshake failed: {r}"})
        return
    conns.append(first)
    token = welcome(r[1])[0]
    why = ""
    for _ in range(args.count - 1):
        try:
            c = Conn(args.socket)
            r = c.handshake(token)
        except OSError as e:
            other.append(f"connect/handshake: {e}")
            continue
        if r is not None and r[0] == 0:
            accepted += 1
            conns.append(c)
        elif r is not None:
            refused += 1
            why = why or f"errno {-r[0]}: {r[1].decode(errors='replace')}"
            c.close()
        else:
            other.append("closed without a reply")
            c.close()
    hold({"accepted": accepted + 1, "refused": refused, "refusal": why,
          "other": other[:5], "others": len(other)})


def memory(args):
    c = Conn(args.socket)
    r = c.handshake()
    if r is None or r[0] != 0:
        hold({"error": f"the handshake failed: {r}"})
        return
    _, config, root = welcome(r[1])
    minor = json.loads(config)["gpus"][0]["kfd"]["drm_render_minor"]
    gpu_id = int((pathlib.Path(root) / "kfd/topology/nodes/1/gpu_id").read_text())
    va, total, chunks, errno, first_offset = 1 << 40, 0, 0, None, None

    def alloc(size, at):
        arg = struct.pack("<QQQQII", at, size, 0, 0, gpu_id, ALLOC_VRAM | ALLOC_WRITABLE)
        c.send(IOCTL, ioctl(ALLOC_MEMORY_OF_GPU, arg))
        result, payload, fds = c.recv()
        for fd in fds:
            os.close(fd)
        return result, (struct.unpack_from("<Q", ioctl_arg(payload), 24)[0] if result == 0 else None)

    while True:
        result, offset = alloc(args.chunk, va)
        if result != 0:
            errno = -result
            break
        first_offset = offset if first_offset is None else first_offset
        total += args.chunk
        chunks += 1
        va += args.chunk + (1 << 21)
    overflow_size, _ = alloc(2**64 - 1, va)
    # A page into the first buffer, a length that reaches exactly 2^64 from there.
    c.send(MMAP, device(1, 0, minor) + struct.pack("<QQ", (first_offset or 0) + 4096, 2**64 - 4096))
    mm = c.recv()
    for fd in (mm[2] if mm else []):
        os.close(fd)
    hold({"allocated": total, "chunks": chunks, "errno": errno,
          "overflowing_size_errno": -overflow_size,
          "overflowing_mmap_errno": -mm[0] if mm else None})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("connections", "memory"))
    ap.add_argument("--socket", required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=1 << 30)
    args = ap.parse_args()
    {"connections": connections, "memory": memory}[args.what](args)


if __name__ == "__main__":
    main()
