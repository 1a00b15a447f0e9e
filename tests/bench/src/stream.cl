// Memory-bound benchmark kernel: the STREAM triad a = b + s * c.
#include "ocl.h"

__kernel void triad(__global float *a, __global const float *b, __global const float *c, float s, uint n) {
    uint i = GID_X;
    if (i < n)
        a[i] = b[i] + s * c[i];
}
