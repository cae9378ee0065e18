/*
 * Portability header: the same kernel source compiles for an NVIDIA GPU (NVRTC through CuPy,
 * or nvcc) and for the CPU (g++ through cffi, "the CPU twin").
 *
 * Why a header rather than two sources: the twin is only worth having if it runs the very
 * arithmetic the GPU runs, so the tests against gmpy2 on a machine without a GPU check the
 * GPU's code. What differs between the two targets is only *who runs the instances*:
 *
 *   GPU:  a kernel is launched on a grid; each thread takes instances
 *         blockIdx.x * blockDim.x + threadIdx.x, + gridDim.x * blockDim.x, ... (grid-stride).
 *   CPU:  threadIdx = blockIdx = 0 and blockDim = gridDim = 1 are constants here, so the same
 *         grid-stride loop visits every instance in order, in the calling thread.
 *
 * Kernels are written with COPG_KERNEL and loop with COPG_FOR_EACH; device helpers are
 * COPG_DEV; COPG_NO_UNROLL keeps a long outer loop rolled on the GPU (code size and compile
 * time; the inner limb loops are left to the compiler). No header is included on the GPU side: NVRTC compiles without the host's system
 * headers, so the device path must not need any (a test compiles it with nvcc where present).
 */
#ifndef COPG_PORTABLE_H
#define COPG_PORTABLE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define COPG_ON_GPU 1
/* No __launch_bounds__: with __launch_bounds__(128) (the host's block size) ptxas (CUDA 13.0,
 * sm_90) chose 32 registers and spilled about 3x more at 128 and 192 limbs, and changed nothing
 * at 64 limbs and below (docs/crypto/paillier-gpu.md, "Registers"). */
#define COPG_KERNEL extern "C" __global__
#define COPG_DEV __device__ __forceinline__
#define COPG_RESTRICT __restrict__
#define COPG_NO_UNROLL _Pragma("unroll 1")
typedef unsigned int copg_u32;
typedef unsigned long long copg_u64;
#else
#include <stdint.h>
#define COPG_ON_GPU 0
#define COPG_KERNEL extern "C"
#define COPG_DEV static inline
#define COPG_RESTRICT __restrict__
#define COPG_NO_UNROLL
typedef uint32_t copg_u32;
typedef uint64_t copg_u64;
/* The CUDA built-ins a grid-stride loop reads, fixed to one block of one thread. */
struct copg_dim3 {
    unsigned x, y, z;
};
static const copg_dim3 threadIdx = {0, 0, 0};
static const copg_dim3 blockIdx = {0, 0, 0};
static const copg_dim3 blockDim = {1, 1, 1};
static const copg_dim3 gridDim = {1, 1, 1};
#endif

/* Every instance index this thread owns: a grid-stride loop on the GPU, all of them on the CPU. */
#define COPG_FOR_EACH(i, count)                                                                  \
    for (copg_u64 i = (copg_u64)blockIdx.x * blockDim.x + threadIdx.x; i < (copg_u64)(count);   \
         i += (copg_u64)gridDim.x * blockDim.x)

#endif /* COPG_PORTABLE_H */
