// ALU-bound benchmark kernel: an integer hash chain per work-item (no memory
// traffic inside the loop). The reference in scripts/bench_exec.py computes
// the same chain with numpy.
#include "ocl.h"

__kernel void alu_int(__global uint *out, uint iters) {
    uint x = (uint)GID_X;
    uint y = x ^ 0x9e3779b9u;
    for (uint k = 0; k < iters; ++k) {
        x = x * 1664525u + 1013904223u;
        y ^= x >> 7;
        y = (y << 3) | (y >> 29);
        x += y;
    }
    out[GID_X] = x ^ y;
}
