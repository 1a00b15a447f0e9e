#!/usr/bin/env python3
"""LLVM 22's AMDGPU disassembler through its C API (ctypes), for development probes.

    from llvm_oracle import Oracle
    o = Oracle("gfx942")     # Oracle("gfx1100", "+wavefrontsize64") for wave64 code
    o.decode(bytes)          -> (text or None, size)   # None = <invalid>
    o.decode_words([w0, w1]) -> same, from little-endian dwords

Some encodings crash LLVM 22 itself (see shared/notes/toolchains.md); use
`safe_decode_many` to run a batch in a child process and learn which inputs crash.
Command line: `llvm_oracle.py gfx942 0x7e020280 [0x...]` prints the text.
"""
import ctypes, os, sys, multiprocessing

LIB = os.environ.get("ROCJITSU_LIBLLVM", "/usr/lib/llvm-22/lib/libLLVM.so.22.1")


class Oracle:
    def __init__(self, cpu, features=""):
        self.lib = ctypes.CDLL(LIB)
        L = self.lib
        for f in ("LLVMInitializeAMDGPUTargetInfo", "LLVMInitializeAMDGPUTargetMC", "LLVMInitializeAMDGPUDisassembler"):
            getattr(L, f)()
        L.LLVMCreateDisasmCPUFeatures.restype = ctypes.c_void_p
        L.LLVMCreateDisasmCPUFeatures.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                                  ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        L.LLVMDisasmInstruction.restype = ctypes.c_size_t
        L.LLVMDisasmInstruction.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64,
                                            ctypes.c_char_p, ctypes.c_size_t]
        self.ctx = L.LLVMCreateDisasmCPUFeatures(b"amdgcn-amd-amdhsa", cpu.encode(), features.encode(), None, 0,
                                                  None, None)
        if not self.ctx:
            raise RuntimeError("LLVMCreateDisasmCPUFeatures failed for " + cpu)
        self.buf = ctypes.create_string_buffer(512)

    def decode(self, data: bytes):
        """Returns (text, size); text is None when LLVM reports an invalid encoding."""
        n = self.lib.LLVMDisasmInstruction(self.ctx, data, len(data), 0, self.buf, 512)
        if n == 0:
            return None, 4
        return self.buf.value.decode().strip(), n

    def decode_words(self, words):
        return self.decode(b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in words))


def _worker(cpu, items, q):
    o = Oracle(cpu)
    for i, data in items:
        q.put((i, o.decode(data)))
    q.put(None)


def safe_decode_many(cpu, datas):
    """Decodes each bytes object in `datas` in a child process; returns a list of
    (text, size) or ("<crash>", 0) for inputs on which LLVM itself crashed."""
    out = [None] * len(datas)
    todo = list(enumerate(datas))
    ctx = multiprocessing.get_context("fork")
    while todo:
        q = ctx.Queue()
        p = ctx.Process(target=_worker, args=(cpu, todo, q))
        p.start()
        done = 0
        while True:
            try:
                r = q.get(timeout=0.05)
            except Exception:
                # A crashed child answers nothing more; notice it at once
                # (after draining what it queued before dying).
                if not p.is_alive() and q.empty():
                    break
                continue
            if r is None:
                break
            out[r[0]] = r[1]
            done += 1
        p.join()
        # The item after the last answered one crashed the child: mark it, go on.
        rest = todo[done:]
        if rest and p.exitcode != 0:
            out[rest[0][0]] = ("<crash>", 0)
            rest = rest[1:]
        todo = rest if p.exitcode != 0 else []
    return out


if __name__ == "__main__":
    cpu = sys.argv[1]
    words = [int(x, 16) for x in sys.argv[2:]]
    print(Oracle(cpu).decode_words(words))
