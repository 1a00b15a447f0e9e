// Calibration microbenchmarks of the timing model (make bench-timing,
// scripts/bench_timing.py): each is run in clocked mode and its modelled
// figure compared with a published measurement (configs/timing/README.md).
#include "ocl.h"

// Pointer chase: work-item 0 follows `steps` links of a chain over `n`
// elements `stride` words apart (one per cache line), as the NHR@FAU
// gpu-latency benchmark does. The workgroup first builds the chain in the
// zeroed buffer: element e links to (e + p) mod n, p odd and n a power of
// two, so the chain visits every element once per lap. Its cost is the
// same for every step count, so the latency per step is the difference of
// two runs of different step counts over the step difference.
__kernel void chase(__global uint *buf, uint n, uint stride, uint steps, __global uint *out) {
    uint p = ((n / 8) * 5) | 1;
    for (uint e = TID_X; e < n; e += LSIZE_X)
        buf[e * stride] = ((e + p) & (n - 1)) * stride;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (TID_X == 0) {
        uint i = 0;
        for (uint s = 0; s < steps; s++)
            i = buf[i];
        out[0] = i;
    }
}

// STREAM triad a = b + s * c over n floats.
__kernel void triad(__global float *a, __global const float *b, __global const float *c, float s, uint n) {
    uint i = GID_X;
    if (i < n)
        a[i] = b[i] + s * c[i];
}

typedef half half4 __attribute__((ext_vector_type(4)));
typedef float float16v __attribute__((ext_vector_type(16)));

// MFMA throughput: four independent 32x32x8 f16 accumulations per wave,
// `iters` times each.
__kernel void mfma(__global float *out, uint iters) {
    half4 a = (half4)((half)TID_X, (half)1, (half)2, (half)3);
    half4 b = (half4)((half)1, (half)TID_X, (half)3, (half)2);
    float16v c0 = (float16v)(0), c1 = (float16v)(1), c2 = (float16v)(2), c3 = (float16v)(3);
    for (uint k = 0; k < iters; k++) {
        c0 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c0, 0, 0, 0);
        c1 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c1, 0, 0, 0);
        c2 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c2, 0, 0, 0);
        c3 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c3, 0, 0, 0);
    }
    float16v c = c0 + c1 + c2 + c3;
    out[GID_X] = c[0] + c[5] + c[15];
}
