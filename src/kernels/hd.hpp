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
