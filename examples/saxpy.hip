// A small HIP program for `make demo`: saxpy (y = a*x + y) and a block-wise
// sum reduction through shared memory (LDS).
//
// It uses clang's attributes and AMDGPU builtins instead of the HIP headers,
// so it compiles with nothing but clang:
//   clang++-22 -x hip --offload-arch=gfx942 -nogpulib -nogpuinc -O2 -c saxpy.hip

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

// Host side: clang's kernel launch stubs call hipLaunchKernel, which the HIP
// runtime defines; declaring it lets the host half compile without headers.
struct dim3 {
    unsigned x, y, z;
};
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args,
                               unsigned long shared_bytes, hipStream_t stream);

// Threads per block; the kernels are launched with this block size.
constexpr unsigned kBlock = 256;

__device__ static inline unsigned thread_idx() { return __builtin_amdgcn_workitem_id_x(); }
__device__ static inline unsigned block_idx() { return __builtin_amdgcn_workgroup_id_x(); }

// __syncthreads(): make this block's LDS writes visible, then wait for all
// of its threads.
__device__ static inline void sync_block() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// y[i] = a * x[i] + y[i] for i < n.
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
    unsigned i = block_idx() * kBlock + thread_idx();
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// out[b] = the sum of in[2*kBlock*b .. 2*kBlock*(b+1)) (elements past n count
// as 0): each thread adds two elements, then the block halves the partial
// sums in LDS until one is left.
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1, kBlock))) void
reduce_sum(const float *in, float *out, unsigned n) {
    __shared__ float partial[kBlock];
    unsigned t = thread_idx();
    unsigned i = block_idx() * kBlock * 2 + t;
    float s = 0.0f;
    if (i < n)
        s = in[i];
    if (i + kBlock < n)
        s += in[i + kBlock];
    partial[t] = s;
    sync_block();
    for (unsigned stride = kBlock / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            partial[t] += partial[t + stride];
        sync_block();
    }
    if (t == 0)
        out[block_idx()] = partial[0];
}
