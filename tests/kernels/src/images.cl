// corpus-targets: gfx90a
// Image instructions (gfx90a: image_load, image_store, image_sample; gfx942
// and gfx950 have no MIMG). An image argument (`__amdgpu_texture_t`, a
// pointer to the 32-byte resource descriptor) points at a T# built by the
// test harness, whose base address run-kernel fills in (`--arg
// image:FILE`). Samplers are 16-byte S# buffers.
#include "ocl.h"
#include "kern.h"

typedef __amdgpu_texture_t tex_t;
typedef __constant int4 *samp_t;

// Reads texel (x, y) of `src` for each work-item of a 2D grid, writes the
// float4 it loads to `out` and stores `scale * value` into `dst` at the
// same coordinates.
__kernel void img_copy_scale(__global float4 *out, tex_t src, tex_t dst, float scale, int w) {
  int x = GID_X, y = GROUP_Y * LSIZE_Y + TID_Y;
  float4 v = __builtin_amdgcn_image_load_2d_v4f32_i32(15, x, y, src, 0, 0);
  out[y * w + x] = v;
  __builtin_amdgcn_image_store_2d_v4f32_i32(v * scale, 15, x, y, dst, 0, 0);
}

// Samples `img` at the normalised coordinates in `uv` (pairs).
__kernel void img_sample_2d(__global float4 *out, tex_t img, samp_t s, __global const float2 *uv, int n) {
  int i = GID_X;
  if (i < n)
    out[i] = __builtin_amdgcn_image_sample_2d_v4f32_f32(15, uv[i].x, uv[i].y, img, *s, 0, 0, 0);
}

// Samples a 3D image at (u, v, w) triples.
__kernel void img_sample_3d(__global float4 *out, tex_t img, samp_t s, __global const float4 *uvw, int n) {
  int i = GID_X;
  if (i < n)
    out[i] = __builtin_amdgcn_image_sample_3d_v4f32_f32(15, uvw[i].x, uvw[i].y, uvw[i].z, img, *s, 0,
                                                        0, 0);
}

// Samples a 2D array image at (u, v, layer).
__kernel void img_sample_2darray(__global float4 *out, tex_t img, samp_t s, __global const float4 *uvl,
                                 int n) {
  int i = GID_X;
  if (i < n)
    out[i] = __builtin_amdgcn_image_sample_2darray_v4f32_f32(15, uvl[i].x, uvl[i].y, uvl[i].z, img, *s,
                                                             0, 0, 0);
}
