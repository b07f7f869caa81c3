// The device ANS encoder (ans_encode_bodies.hpp): zig-zag plane bytes and pair counts on
// the device, the plan on the host (codec/ans.hpp ans_plan_plane, with device gathers and
// compactions as its data sources), then every rANS chunk coded by a group of threads, one
// per lane, in lockstep; chunks are packed at scanned offsets and copied into the blob once.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>

#include "backend/cuda/ans_encode_bodies.hpp"
#include "backend/cuda/ans_encode_host.hpp"
#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/device_util.cuh"
#include "backend/cuda/section_crc.hpp"

namespace factz::cuda_detail {
namespace {

using cuda::Workspace;

/// Pair counts of a plane: pairs inside the window in shared memory per block (the common
/// small bytes), the rest with global atomics; integer sums, so exact in any order.
__global__ void __launch_bounds__(1024) ans_pairs_kernel(const uint8_t* b, uint64_t n, unsigned long long* pairs) {
  __shared__ unsigned int local[kAnsPairWindow * kAnsPairWindow];
  for (uint32_t i = threadIdx.x; i < kAnsPairWindow * kAnsPairWindow; i += blockDim.x) local[i] = 0;
  __syncthreads();
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint32_t key = ans_pair_key(b, i), prev = key >> 8, cur = key & 0xFFu;
    if (prev < kAnsPairWindow && cur < kAnsPairWindow) atomicAdd(&local[prev * kAnsPairWindow + cur], 1u);
    else atomicAdd(&pairs[key], 1ull);
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < kAnsPairWindow * kAnsPairWindow; i += blockDim.x)
    if (local[i]) atomicAdd(&pairs[(i / kAnsPairWindow) * 256 + i % kAnsPairWindow], (unsigned long long)local[i]);
}

/// One warp codes 32 / group chunks, a thread per lane; every step, the lanes that emit a
/// word place it by its rank in the group's ballot (the CPU's order), so the chunk's bytes
/// are ans_encode_chunk's. Chunk k's bytes end at scratch + (k + 1) * kAnsChunkScratch.
__global__ void ans_encode_kernel(const uint8_t* b, uint64_t n, uint64_t chunks, uint32_t plan_lanes, uint32_t group,
                                  detail::RansEncodeTables tables, uint8_t* scratch, uint32_t* sizes) {
  const uint32_t th = threadIdx.x & 31u, l = th % group;
  const uint32_t group_mask = group == 32 ? 0xFFFFFFFFu : (1u << group) - 1u;
  const uint64_t warp = (uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const uint64_t k = warp * (32u / group) + th / group;
  const AnsLane a = k < chunks ? ans_lane_of(n, plan_lanes, k, l) : AnsLane{};
  uint8_t* end = scratch + (k < chunks ? k + 1 : 0) * kAnsChunkScratch;
  const uint32_t steps_max = __reduce_max_sync(0xFFFFFFFFu, uint32_t(a.steps));
  uint32_t x = detail::kRansLow;
  uint64_t words = 0;
  for (uint32_t t = steps_max; t-- > 0;) {
    uint16_t word = 0;
    const bool emitted = t < a.steps && detail::rans_encode_lane_step(tables, b, a.begin, t, x, word);
    const uint32_t mask = (__ballot_sync(0xFFFFFFFFu, emitted) >> (th - l)) & group_mask;
    if (emitted) detail::rans_store_word(end, words + detail::rans_word_rank(mask, l), word);
    words += uint64_t(__popc(mask));
  }
  if (l < a.lanes) {
    detail::rans_store_state(end, a.lanes, words, l, x);
    if (l == 0) sizes[k] = uint32_t(detail::rans_chunk_bytes(a.lanes, words));
  }
}

/// One block per chunk: its bytes to their offset in the packed payload.
__global__ void ans_pack_kernel(const uint8_t* scratch, const uint32_t* sizes, const uint64_t* offsets, uint8_t* packed) {
  const uint64_t k = blockIdx.x;
  const uint8_t* src = scratch + (k + 1) * kAnsChunkScratch - sizes[k];
  for (uint32_t i = threadIdx.x; i < sizes[k]; i += blockDim.x) packed[offsets[k] + i] = src[i];
}

/// The plane's pair counts (ans_pair_key).
Status plane_pairs(Workspace::Impl& ws, const uint8_t* b, uint64_t n, cudaStream_t s, std::vector<uint64_t>& pairs) {
  unsigned long long* d = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kAnsPairs, 65536 * 8, d));
  FACTZ_CUDA_TRY(cudaMemsetAsync(d, 0, 65536 * 8, s));
  if (n > 0) {
    const uint64_t blocks = (n + 1023) / 1024;
    ans_pairs_kernel<<<unsigned(blocks < 2048 ? blocks : 2048), 1024, 0, s>>>(b, n, d);
    FACTZ_CUDA_TRY(cudaGetLastError());
  }
  std::vector<unsigned long long> h;
  FACTZ_RETURN_IF_ERROR(to_host(h, d, 65536, s));
  pairs.assign(h.begin(), h.end());
  return Status::Ok();
}

/// The rANS chunks of a planned plane, packed in chunk order into slot `packed_slot`.
Status plane_chunks(Workspace::Impl& ws, const uint8_t* b, uint64_t n, const detail::AnsPlanePlan& plan,
                    int packed_slot, cudaStream_t s, std::vector<uint32_t>& sizes, uint8_t*& packed) {
  const uint64_t chunks = (n + kAnsChunk - 1) / kAnsChunk;
  // The tables: symbols, then context_of, then the single flags.
  const size_t sym_bytes = plan.symbols.size() * sizeof(detail::RansEncodeSymbol);
  std::vector<uint8_t> staging(sym_bytes + 256 + plan.single.size());
  std::copy_n(reinterpret_cast<const uint8_t*>(plan.symbols.data()), sym_bytes, staging.begin());
  std::copy(plan.contexts.context_of.begin(), plan.contexts.context_of.end(), staging.begin() + int64_t(sym_bytes));
  std::copy(plan.single.begin(), plan.single.end(), staging.begin() + int64_t(sym_bytes + 256));
  uint8_t* tables = nullptr;
  FACTZ_RETURN_IF_ERROR(upload(ws, kAnsEncTables, staging, s, tables));
  const detail::RansEncodeTables t{tables + sym_bytes, tables + sym_bytes + 256,
                                   reinterpret_cast<const detail::RansEncodeSymbol*>(tables)};
  uint8_t* scratch = nullptr;
  uint32_t* d_sizes = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncScratch, size_t(chunks * kAnsChunkScratch), scratch));
  FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncSizes, size_t(chunks) * 4, d_sizes));
  const uint32_t group = ans_group_size(plan.lanes);
  const uint64_t threads = (chunks + 32 / group - 1) / (32 / group) * 32;
  ans_encode_kernel<<<unsigned((threads + 255) / 256), 256, 0, s>>>(b, n, chunks, plan.lanes, group, t, scratch,
                                                                      d_sizes);
  FACTZ_CUDA_TRY(cudaGetLastError());
  FACTZ_RETURN_IF_ERROR(to_host(sizes, d_sizes, int64_t(chunks), s));
  std::vector<uint64_t> offsets(sizes.size());
  uint64_t total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    offsets[k] = total;
    total += sizes[k];
  }
  uint64_t* d_offsets = nullptr;
  FACTZ_RETURN_IF_ERROR(upload(ws, kAnsEncOffsets, offsets, s, d_offsets));
  FACTZ_RETURN_IF_ERROR(ws.get(packed_slot, size_t(total), packed));
  ans_pack_kernel<<<unsigned(chunks), 256, 0, s>>>(scratch, d_sizes, d_offsets, packed);
  FACTZ_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace

Status device_ans_encode(Workspace::Impl& ws, const uint16_t* sym, uint64_t n, uint16_t center, cudaStream_t s,
                         std::vector<uint8_t>& blob, std::optional<uint32_t>& crc, bool allow_escapes) {
  crc.reset();
  if (n >= (uint64_t{1} << 48)) return invalid_argument("ans: too many symbols");
  uint8_t* planes[2] = {};
  FACTZ_RETURN_IF_ERROR(ws.get(kPlaneLo, size_t(n), planes[0]));
  FACTZ_RETURN_IF_ERROR(ws.get(kPlaneHi, size_t(n), planes[1]));
  uint8_t *lo = planes[0], *hi = planes[1];
  FACTZ_RETURN_IF_ERROR(for_each(int64_t(n), s, [=] __device__(int64_t i) { ans_split_symbol(sym, uint64_t(i), center, lo, hi); }));
  detail::AnsPlanePlan plans[2];
  std::vector<uint32_t> sizes[2];
  uint8_t* packed[2] = {};
  for (int p = 0; p < 2; ++p) {
    const uint8_t* b = planes[p];
    std::vector<uint64_t> pairs;
    FACTZ_RETURN_IF_ERROR(plane_pairs(ws, b, n, s, pairs));
    const detail::AnsPlaneGather gather = [&](std::span<const uint64_t> positions, std::vector<uint8_t>& out) {
      const std::vector<uint64_t> pos(positions.begin(), positions.end());
      uint64_t* d_pos = nullptr;
      uint8_t* d_out = nullptr;
      FACTZ_RETURN_IF_ERROR(upload(ws, kAnsGatherPos, pos, s, d_pos));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsGatherOut, pos.size(), d_out));
      FACTZ_RETURN_IF_ERROR(for_each(int64_t(pos.size()), s, [=] __device__(int64_t e) { d_out[e] = b[d_pos[e]]; }));
      return to_host(out, d_out, int64_t(pos.size()), s);
    };
    const detail::AnsPlaneExceptions exceptions = [&](uint8_t dominant, std::vector<uint64_t>& positions,
                                                      std::vector<uint8_t>& bytes) {
      int64_t count = 0;
      FACTZ_RETURN_IF_ERROR(count_if(ws, int64_t(n), s, [=] __device__(int64_t i) { return b[i] != dominant; }, count));
      uint8_t *flags = nullptr, *d_bytes = nullptr;
      int64_t *d_pos = nullptr, *d_count = nullptr;
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncFlags, size_t(n), flags));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncPos, size_t(count) * 8, d_pos));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncBytes, size_t(count), d_bytes));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncScalars, 64, d_count));
      FACTZ_RETURN_IF_ERROR(for_each(int64_t(n), s, [=] __device__(int64_t i) { flags[i] = b[i] != dominant; }));
      const thrust::counting_iterator<int64_t> first(0);
      FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& tb) {
        return cub::DeviceSelect::Flagged(t, tb, first, flags, d_pos, d_count, int64_t(n), s);
      }));
      FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { d_bytes[e] = b[d_pos[e]]; }));
      std::vector<int64_t> pos;
      FACTZ_RETURN_IF_ERROR(to_host(pos, d_pos, count, s));
      FACTZ_RETURN_IF_ERROR(to_host(bytes, d_bytes, count, s));
      positions.assign(pos.begin(), pos.end());
      return Status::Ok();
    };
    // The escaped bytes (blob version 3): flags, a compaction of the flagged positions, a gather.
    const detail::AnsPlaneEscapes escapes = [&](const detail::AnsByteSet& rare, std::vector<uint8_t>& bytes) {
      const uint64_t r0 = rare[0], r1 = rare[1], r2 = rare[2], r3 = rare[3];
      uint8_t *flags = nullptr, *d_bytes = nullptr;
      int64_t *d_pos = nullptr, *d_count = nullptr;
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncFlags, size_t(n), flags));
      FACTZ_RETURN_IF_ERROR(for_each(int64_t(n), s, [=] __device__(int64_t i) {
        const uint8_t v = b[i];
        const uint64_t word = v < 64 ? r0 : v < 128 ? r1 : v < 192 ? r2 : r3;
        flags[i] = uint8_t((word >> (v & 63)) & 1u);
      }));
      int64_t count = 0;
      FACTZ_RETURN_IF_ERROR(count_if(ws, int64_t(n), s, [=] __device__(int64_t i) { return flags[i] != 0; }, count));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncPos, size_t(count) * 8, d_pos));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncBytes, size_t(count), d_bytes));
      FACTZ_RETURN_IF_ERROR(ws.get(kAnsEncScalars, 64, d_count));
      const thrust::counting_iterator<int64_t> first(0);
      FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& tb) {
        return cub::DeviceSelect::Flagged(t, tb, first, flags, d_pos, d_count, int64_t(n), s);
      }));
      FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { d_bytes[e] = b[d_pos[e]]; }));
      return to_host(bytes, d_bytes, count, s);
    };
    FACTZ_RETURN_IF_ERROR(detail::ans_plan_plane(pairs, n, detail::kAnsEncoderMaxLanes, gather, exceptions, plans[p],
                                                 allow_escapes ? &escapes : nullptr));
    if (detail::ans_plane_is_rans(plans[p].mode))
      FACTZ_RETURN_IF_ERROR(plane_chunks(ws, b, n, plans[p], p == 0 ? kAnsEncPacked0 : kAnsEncPacked1, s, sizes[p],
                                         packed[p]));
  }
  uint64_t at[2], bytes[2];
  ans_blob_layout(center, n, plans, sizes, blob, at, bytes);
  CrcPiece pieces[2];
  int n_pieces = 0;
  for (int p = 0; p < 2; ++p) {
    if (bytes[p] == 0) continue;
    FACTZ_CUDA_TRY(cudaMemcpyAsync(blob.data() + at[p], packed[p], size_t(bytes[p]), cudaMemcpyDeviceToHost, s));
    CrcPiece& piece = pieces[n_pieces++];
    piece = CrcPiece{at[p], bytes[p], 0};
    FACTZ_RETURN_IF_ERROR(device_crc32c(ws, packed[p], bytes[p], s, piece.crc));  // synchronizes s
  }
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  crc = blob_crc(blob, {pieces, size_t(n_pieces)});
  return Status::Ok();
}

}  // namespace factz::cuda_detail
