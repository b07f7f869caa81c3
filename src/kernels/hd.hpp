// FACTZ_HD marks per-element code that runs unchanged on the CPU and in CUDA kernels.
// Rules for everything marked with it: no allocation, no exceptions, no library calls
// that differ between host and device, IEEE arithmetic only (no contraction: the host
// is compiled with -ffp-contract=off and nvcc with --fmad=false).
#pragma once

#if defined(__CUDACC__)
#define FACTZ_HD __host__ __device__ __forceinline__
#else
#define FACTZ_HD inline
#endif

// FACTZ_HD_COLD: the same for rare, heavy paths (exact fallbacks, wide integers), kept out
// of line so that the hot code calling them keeps its registers and its inlining.
#if defined(__CUDACC__)
#define FACTZ_HD_COLD __host__ __device__ __noinline__ inline
#else
#define FACTZ_HD_COLD [[gnu::noinline, gnu::cold]] inline
#endif
