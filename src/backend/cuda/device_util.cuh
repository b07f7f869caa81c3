// Device-side plumbing of the CUDA backend: CUDA errors as Status, the reusable
// workspace's named buffers, a grid-stride launcher for the FACTZ_HD bodies, and CUB
// calls with their temporary storage taken from the workspace.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/interpolation.hpp"
#include "factz/cuda.hpp"
#include "factz/status.hpp"
#include "kernels/quantizer.hpp"

namespace factz::cuda_detail {

/// A failed runtime call also leaves its error as the thread's "last error"; it is cleared
/// here, so that a non-sticky failure (a cudaMalloc out of memory, say) is reported once and
/// not again by the next launch check (cudaGetLastError) of a later, valid call. Sticky
/// errors (a faulting kernel) cannot be cleared and keep failing every call.
inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::Ok();
  (void)cudaGetLastError();
  return Status(Code::cuda, std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

#define FACTZ_CUDA_TRY(expr) FACTZ_RETURN_IF_ERROR(::factz::cuda_detail::cuda_status((expr), #expr))

/// Named device buffers of a workspace.
enum Slot : int {
  kIn0, kIn1,                 // host wrappers: the input / output planes
  kRecon0, kRecon1, kExact0, kExact1, kQ0, kQ1, kVid0, kVid1, kTiles0, kTiles1,
  kCellXi, kCellFree, kBad, kChanged, kSymbols, kCodes, kFlags, kIndex, kIndex2, kGather, kOffsets, kBytes,
  kSpecIds, kSpecSymU, kSpecSymV, kScalars,
  kHist, kCodeTable, kThreadBits, kChunkBytes, kChunkPos, kPayload,  // device Huffman
  kPlaneLo, kPlaneHi, kAnsEntries, kAnsValues, kAnsSparsePos, kAnsSparseBytes,  // device ANS
  kAnsPairs, kAnsGatherPos, kAnsGatherOut, kAnsEncFlags, kAnsEncPos, kAnsEncBytes, kAnsEncTables,  // ANS encoder
  kAnsEncScratch, kAnsEncSizes, kAnsEncOffsets, kAnsEncPacked0, kAnsEncPacked1, kAnsEncScalars,
  kCrc0, kCrc1, kCrcLen0, kCrcLen1,  // device CRC-32C
  kMask, kWork0, kWork1, kMaskFirst, kMaskAnchors, kMaskAnchorFlags, kMaskAnchorOut,  // missing vertices
  kMaskStored, kMaskPos, kMaskIds, kMaskIndex, kMaskU, kMaskV,
  kIn2, kRecon2, kExact2, kVid2, kTiles2, kSpecSymW, kCubeBounds, kSpecCodeAt, kSpecExactAt,  // 3D fields
  kTemp, kSlotCount
};

}  // namespace factz::cuda_detail

namespace factz::cuda {

struct Workspace::Impl {
  void* ptr[cuda_detail::kSlotCount] = {};
  size_t size[cuda_detail::kSlotCount] = {};

  /// A buffer of at least `bytes` in slot s (grown, never shrunk; contents not kept).
  template <class T>
  Status get(int s, size_t bytes, T*& out) {
    if (bytes == 0) bytes = 1;
    if (size[s] < bytes) {
      if (ptr[s]) cudaFree(ptr[s]);
      ptr[s] = nullptr;
      size[s] = 0;
      const size_t rounded = (bytes + 255) / 256 * 256;
      FACTZ_CUDA_TRY(cudaMalloc(&ptr[s], rounded));
      size[s] = rounded;
    }
    out = static_cast<T*>(ptr[s]);
    return Status::Ok();
  }
};

}  // namespace factz::cuda

namespace factz::cuda_detail {

template <class F>
__global__ void for_each_kernel(int64_t n, F f) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

/// Runs f(i) for i in [0, n) on `stream` (one thread per i, grid-stride); checks the launch.
template <class F>
Status for_each(int64_t n, cudaStream_t stream, F f) {
  if (n <= 0) return Status::Ok();
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  const unsigned grid = unsigned(blocks < (int64_t(1) << 20) ? blocks : (int64_t(1) << 20));
  for_each_kernel<<<grid, kThreads, 0, stream>>>(n, f);
  return cuda_status(cudaGetLastError(), "kernel launch");
}

/// Calls launch(phase) for every phase of the FaCTz-S schedule (kernels/interpolation.hpp)
/// in stream order, one launch per phase; stops at the first failure.
template <class F>
Status for_each_phase(int64_t nx, int64_t ny, int64_t s0, F launch) {
  detail::PhaseSchedule schedule(nx, ny, s0);
  for (detail::ScheduledPhase ph; schedule.next(ph);) FACTZ_RETURN_IF_ERROR(launch(ph));
  return Status::Ok();
}

/// A CUB device call: f(temp, bytes) once to size the temporary storage, once to run.
template <class F>
Status cub_call(cuda::Workspace::Impl& ws, F f) {
  size_t bytes = 0;
  FACTZ_CUDA_TRY(f(nullptr, bytes));
  void* temp = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kTemp, bytes, temp));
  FACTZ_CUDA_TRY(f(temp, bytes));
  return Status::Ok();
}

/// Integer count of i in [0, n) with pred(i): per-block __syncthreads_count, then one
/// 64-bit atomicAdd per block (integer sums do not depend on the order).
template <class P>
__global__ void count_kernel(int64_t n, P pred, unsigned long long* total) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) mine += pred(i) ? 1 : 0;
  __shared__ unsigned long long block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  if (mine) atomicAdd(&block_total, mine);
  __syncthreads();
  if (threadIdx.x == 0 && block_total) atomicAdd(total, block_total);
}

template <class P>
Status count_if(cuda::Workspace::Impl& ws, int64_t n, cudaStream_t s, P pred, int64_t& out) {
  unsigned long long* d = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, d));
  FACTZ_CUDA_TRY(cudaMemsetAsync(d, 0, sizeof(unsigned long long), s));
  if (n > 0) {
    const int64_t blocks = (n + 255) / 256;
    count_kernel<<<unsigned(blocks < 65536 ? blocks : 65536), 256, 0, s>>>(n, pred, d);
    FACTZ_CUDA_TRY(cudaGetLastError());
  }
  unsigned long long h = 0;
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  out = int64_t(h);
  return Status::Ok();
}

/// Copies count device values into dst (resized), then synchronizes `s`.
template <class T>
Status to_host(std::vector<T>& dst, const T* src, int64_t count, cudaStream_t s) {
  dst.resize(size_t(count));
  if (count > 0) FACTZ_CUDA_TRY(cudaMemcpyAsync(dst.data(), src, size_t(count) * sizeof(T), cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

/// Copies a host vector to dst on `s` (pageable memory: the call returns once it is staged).
template <class T>
Status to_device(T* dst, const std::vector<T>& src, cudaStream_t s) {
  if (!src.empty()) FACTZ_CUDA_TRY(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  return Status::Ok();
}

/// A workspace buffer in `slot` holding a copy of src.
template <class T>
Status upload(cuda::Workspace::Impl& ws, int slot, const std::vector<T>& src, cudaStream_t s, T*& out) {
  FACTZ_RETURN_IF_ERROR(ws.get(slot, src.size() * sizeof(T), out));
  return to_device(out, src, s);
}

/// Plain values shared by the bodies, passed to kernels by value (T: float, or double for
/// a float64 field or stream).
template <class T>
struct BoundsOf {
  T b[detail::kMaxBoundId + 1];
};
using Bounds = BoundsOf<float>;

/// The bound of every id for the absolute bound eb (kernels/quantizer.hpp's bound_of_id, in
/// T's arithmetic).
template <class T>
BoundsOf<T> bounds_of(T eb) {
  BoundsOf<T> b;
  for (int id = 0; id <= detail::kMaxBoundId; ++id) b.b[id] = detail::bound_of_id(eb, id);
  return b;
}

}  // namespace factz::cuda_detail
