// The device compression pipelines: modes none and block (frontend + tiled backbone) and
// speculative. Every kernel is one FACTZ_HD body per thread (block_bodies.hpp,
// backbone_bodies.hpp, speculative_bodies.hpp), launched in the order gpu_model.cpp
// replays on the host; lists are stable CUB compactions and scans. Both entropy coders run
// on the device (Huffman here, ANS in cuda_ans_encode.cu); the coded blobs and lists come
// back to the host for the container (host_stream.cpp). Each pipeline is a template on
// the value type T (float, or double for a float64 field), instantiated for both at the end.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/device_util.cuh"
#include "backend/cuda/huffman_bodies.hpp"
#include "backend/cuda/huffman_host.hpp"
#include "backend/cuda/section_crc.hpp"
#include "backend/cuda/speculative_bodies.hpp"
#include "streams/code_segments.hpp"
#include "codec/ans.hpp"
#include "util/byte_io.hpp"
#include "streams/speculative_trial.hpp"

namespace factz::cuda_detail {
namespace {

using cuda::Workspace;

/// Stable compaction of the positions i < n with flags[i] != 0 into ws slot `slot`.
Status select_positions(Workspace::Impl& ws, const uint8_t* flags, int64_t n, int slot, cudaStream_t s, int64_t*& out,
                        int64_t& count) {
  int64_t* d_count = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(slot, size_t(n) * sizeof(int64_t), out));
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, d_count));
  const thrust::counting_iterator<int64_t> first(0);
  FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, first, flags, out, d_count + 1, n, s);
  }));
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&count, d_count + 1, sizeof count, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

/// The symbols of the valid vertices (missing[k] == 0), in index order, into ws slot
/// kMaskIds: a masked plane's stream codes no symbol for a missing vertex (format version 5).
Status select_valid_symbols(Workspace::Impl& ws, const uint16_t* sym, const uint8_t* missing, int64_t n,
                            cudaStream_t s, const uint16_t*& out, int64_t& count) {
  uint8_t* valid = nullptr;
  uint16_t* packed = nullptr;
  int64_t* d_count = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kMaskStored, size_t(n), valid));
  FACTZ_RETURN_IF_ERROR(ws.get(kMaskIds, size_t(n) * 2, packed));
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, d_count));
  FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t k) { valid[k] = missing[k] == 0; }));
  FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, sym, valid, packed, d_count + 1, n, s);
  }));
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&count, d_count + 1, sizeof count, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  out = packed;
  return Status::Ok();
}

/// A varint list (count, then each entry's bytes at its scanned offset) built on the
/// device: length(e) gives entry e's bytes, write(e, offsets, dst) writes them.
template <class Len, class Write>
Status build_list(Workspace::Impl& ws, int64_t count, cudaStream_t s, Len length, Write write, std::vector<uint8_t>& out) {
  uint64_t *len = nullptr, *off = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kOffsets, size_t(count) * 8, len));
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex2, size_t(count) * 8, off));
  FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { len[e] = length(e); }));
  uint64_t body = 0;
  if (count > 0) {
    FACTZ_RETURN_IF_ERROR(
        cub_call(ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, len, off, count, s); }));
    uint64_t last[2];
    FACTZ_CUDA_TRY(cudaMemcpyAsync(&last[0], off + count - 1, 8, cudaMemcpyDeviceToHost, s));
    FACTZ_CUDA_TRY(cudaMemcpyAsync(&last[1], len + count - 1, 8, cudaMemcpyDeviceToHost, s));
    FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
    body = last[0] + last[1];
  }
  uint8_t* bytes = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kBytes, size_t(body), bytes));
  FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { write(e, off, bytes); }));
  const int head = varint_length(uint64_t(count));
  out.assign(size_t(head) + size_t(body), 0);
  put_varint_at(out.data(), uint64_t(count));
  if (body > 0) FACTZ_CUDA_TRY(cudaMemcpyAsync(out.data() + head, bytes, size_t(body), cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

/// Outlier, exact-index and exact-value lists of one plane (recon: the decoder's values,
/// which the exact list holds).
template <class T>
Status plane_lists(Workspace::Impl& ws, int64_t n, const T* recon, const uint8_t* escape, const int64_t* code,
                   const uint8_t* exact, cudaStream_t s, std::vector<uint8_t>& outliers, std::vector<uint8_t>& exact_index,
                   std::vector<uint8_t>& exact_values) {
  int64_t *oi = nullptr, *oc = nullptr, count = 0;
  FACTZ_RETURN_IF_ERROR(select_positions(ws, escape, n, kIndex, s, oi, count));
  FACTZ_RETURN_IF_ERROR(ws.get(kGather, size_t(count) * 8, oc));
  FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { oc[e] = code[oi[e]]; }));
  FACTZ_RETURN_IF_ERROR(build_list(
      ws, count, s, [=] __device__(int64_t e) { return outlier_entry_length(oi, oc, e); },
      [=] __device__(int64_t e, const uint64_t* off, uint8_t* dst) { write_outlier_entry(oi, oc, e, off, dst); },
      outliers));
  int64_t* ei = nullptr;
  FACTZ_RETURN_IF_ERROR(select_positions(ws, exact, n, kIndex, s, ei, count));
  FACTZ_RETURN_IF_ERROR(build_list(
      ws, count, s, [=] __device__(int64_t e) { return index_entry_length(ei, e); },
      [=] __device__(int64_t e, const uint64_t* off, uint8_t* dst) { write_index_entry(ei, e, off, dst); },
      exact_index));
  uint8_t* vals = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kBytes, size_t(count) * sizeof(T), vals));
  FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { write_value_entry(ei, recon, e, vals); }));
  return to_host(exact_values, vals, int64_t(sizeof(T)) * count, s);
}

// ---- device Huffman -----------------------------------------------------------------

constexpr int kHistWindow = 8192;  // bins counted in shared memory (around the center)

/// Histogram of n symbols: bins [window_lo, window_lo + kHistWindow) in shared memory per
/// block, the rest with global atomics; integer sums, so the counts are exact.
__global__ void __launch_bounds__(1024)
    histogram_kernel(const uint16_t* sym, uint64_t n, uint32_t window_lo, unsigned long long* hist) {
  __shared__ unsigned int local[kHistWindow];
  for (int i = threadIdx.x; i < kHistWindow; i += blockDim.x) local[i] = 0;
  __syncthreads();
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint32_t w = uint32_t(sym[i]) - window_lo;  // wraps to a large value below the window
    if (w < uint32_t(kHistWindow)) atomicAdd(&local[w], 1u);
    else atomicAdd(&hist[sym[i]], 1ull);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kHistWindow; i += blockDim.x)
    if (local[i] && window_lo + uint32_t(i) < 65536u) atomicAdd(&hist[window_lo + uint32_t(i)], (unsigned long long)local[i]);
}

__global__ void __launch_bounds__(kHuffmanThreadsPerChunk)
    huffman_bits_kernel(const uint32_t* table, const uint16_t* sym, uint64_t n, uint32_t* thread_bit,
                        uint64_t* chunk_bytes) {
  using Scan = cub::BlockScan<uint32_t, kHuffmanThreadsPerChunk>;
  __shared__ typename Scan::TempStorage temp;
  const uint64_t chunk = blockIdx.x;
  uint64_t lo, hi;
  huffman_thread_range(n, chunk, int(threadIdx.x), lo, hi);
  const uint32_t bits = huffman_range_bits(table, sym, lo, hi);
  uint32_t before = 0, total = 0;
  Scan(temp).ExclusiveSum(bits, before, total);
  thread_bit[chunk * kHuffmanThreadsPerChunk + threadIdx.x] = before;
  if (threadIdx.x == 0) chunk_bytes[chunk] = (uint64_t(total) + 7) / 8;
}

__global__ void __launch_bounds__(kHuffmanThreadsPerChunk)
    huffman_write_kernel(const uint32_t* table, const uint16_t* sym, uint64_t n, const uint32_t* thread_bit,
                         const uint64_t* chunk_pos, unsigned int* words) {
  const uint64_t chunk = blockIdx.x;
  uint64_t lo, hi;
  huffman_thread_range(n, chunk, int(threadIdx.x), lo, hi);
  huffman_write_range(table, sym, lo, hi, chunk_pos[chunk], thread_bit[chunk * kHuffmanThreadsPerChunk + threadIdx.x],
                      [&](uint64_t i, uint8_t b) { atomicOr(&words[i / 4], unsigned(b) << (8 * (i % 4))); });
}

/// The Huffman blob of n device symbols (codec/huffman.cpp's bytes): histogram and coding
/// on the device, code lengths and the codebook on the host.
Status device_huffman_encode(Workspace::Impl& ws, const uint16_t* sym, uint64_t n, uint16_t center, cudaStream_t s,
                             std::vector<uint8_t>& blob, std::optional<uint32_t>& crc) {
  crc.reset();
  unsigned long long* hist = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kHist, 65536 * 8, hist));
  FACTZ_CUDA_TRY(cudaMemsetAsync(hist, 0, 65536 * 8, s));
  if (n > 0) {
    const uint32_t window_lo = center >= kHistWindow / 2 ? uint32_t(center) - kHistWindow / 2 : 0u;
    const uint64_t blocks = (n + 1023) / 1024;
    histogram_kernel<<<unsigned(blocks < 2048 ? blocks : 2048), 1024, 0, s>>>(sym, n, window_lo, hist);
    FACTZ_CUDA_TRY(cudaGetLastError());
  }
  std::vector<uint64_t> h(65536);
  FACTZ_CUDA_TRY(cudaMemcpyAsync(h.data(), hist, 65536 * 8, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  const HuffmanHead head = huffman_head(h, n);
  blob = head.bytes;
  if (head.chunks == 0) {
    crc = blob_crc(blob, {});
    return Status::Ok();
  }
  uint32_t *table = nullptr, *thread_bit = nullptr;
  uint64_t *chunk_bytes = nullptr, *chunk_pos = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kCodeTable, 65536 * 4, table));
  FACTZ_RETURN_IF_ERROR(ws.get(kThreadBits, size_t(head.chunks) * kHuffmanThreadsPerChunk * 4, thread_bit));
  FACTZ_RETURN_IF_ERROR(ws.get(kChunkBytes, size_t(head.chunks) * 8, chunk_bytes));
  FACTZ_RETURN_IF_ERROR(ws.get(kChunkPos, size_t(head.chunks) * 8, chunk_pos));
  FACTZ_CUDA_TRY(cudaMemcpyAsync(table, head.table.data(), 65536 * 4, cudaMemcpyHostToDevice, s));
  huffman_bits_kernel<<<unsigned(head.chunks), kHuffmanThreadsPerChunk, 0, s>>>(table, sym, n, thread_bit, chunk_bytes);
  FACTZ_CUDA_TRY(cudaGetLastError());
  const int64_t chunks = int64_t(head.chunks);
  FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, chunk_bytes, chunk_pos, chunks, s);
  }));
  std::vector<uint64_t> sizes(size_t(head.chunks));
  FACTZ_CUDA_TRY(cudaMemcpyAsync(sizes.data(), chunk_bytes, sizes.size() * 8, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  uint64_t payload = 0;
  for (uint64_t b : sizes) {
    detail::put_le(blob, b, 4);
    payload += b;
  }
  unsigned int* words = nullptr;
  const size_t word_bytes = size_t((payload + 3) / 4 * 4);
  FACTZ_RETURN_IF_ERROR(ws.get(kPayload, word_bytes, words));
  FACTZ_CUDA_TRY(cudaMemsetAsync(words, 0, word_bytes, s));
  huffman_write_kernel<<<unsigned(head.chunks), kHuffmanThreadsPerChunk, 0, s>>>(table, sym, n, thread_bit, chunk_pos,
                                                                               words);
  FACTZ_CUDA_TRY(cudaGetLastError());
  const size_t at = blob.size();
  blob.resize(at + size_t(payload));
  if (payload > 0)  // little-endian words: byte i of the payload is byte i of the buffer
    FACTZ_CUDA_TRY(cudaMemcpyAsync(blob.data() + at, words, size_t(payload), cudaMemcpyDeviceToHost, s));
  CrcPiece piece{at, payload, 0};
  FACTZ_RETURN_IF_ERROR(device_crc32c(ws, reinterpret_cast<const uint8_t*>(words), payload, s, piece.crc));
  crc = blob_crc(blob, {&piece, 1});
  return Status::Ok();
}

/// One warp per tile walks its anti-diagonals (backbone_bodies.hpp missing_quant). The
/// bounds travel by value (kernel parameter space), never as a pointer to host memory.
template <class T>
__global__ void __launch_bounds__(32) missing_quant_kernel(int64_t nx, int64_t ny, const uint8_t* missing,
                                                          const uint8_t* tile_ids, BoundsOf<T> b, int32_t* q) {
  for (int64_t d = 0; d < 2 * kTile - 1; ++d) {
    missing_quant(nx, ny, blockIdx.x, d, threadIdx.x, missing, tile_ids, b.b, q);
    __syncthreads();  // the next diagonal reads this one's integers
  }
}

}  // namespace

template <class T>
Status device_value_range(Workspace::Impl& ws, const T* u, const T* v, int64_t n, cudaStream_t s, double& range) {
  T* r = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, r));
  const T* planes[2] = {u, v};
  for (int c = 0; c < 2; ++c) {
    T* lo = r + 2 * c;
    T* hi = r + 2 * c + 1;
    FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) { return cub::DeviceReduce::Min(t, b, planes[c], lo, n, s); }));
    FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) { return cub::DeviceReduce::Max(t, b, planes[c], hi, n, s); }));
  }
  T h[4];
  FACTZ_CUDA_TRY(cudaMemcpyAsync(h, r, sizeof h, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  range = double(h[1] > h[3] ? h[1] : h[3]) - double(h[0] < h[2] ? h[0] : h[2]);
  return Status::Ok();
}

template <class T>
Status device_count_nonfinite(Workspace::Impl& ws, const T* u, const T* v, int64_t n, cudaStream_t s, int64_t& count) {
  return count_if(ws, n, s, [=] __device__(int64_t k) { return !(u[k] - u[k] == T(0)) || !(v[k] - v[k] == T(0)); },
                  count);
}

template <class T>
Status device_fill_missing_anchors(Workspace::Impl& ws, const PhaseLattice& A, int64_t nx, const uint8_t* missing, T* u,
                                   T* v, detail::Predictor pred, cudaStream_t s) {
  // first_valid_anchor as a minimum of indices (an integer atomic: order-free), then
  // column 0 on one thread and every anchor row on its own.
  unsigned long long* first = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kMaskFirst, 8, first));
  FACTZ_CUDA_TRY(cudaMemsetAsync(first, 0xFF, 8, s));
  FACTZ_RETURN_IF_ERROR(for_each(A.count(), s, [=] __device__(int64_t a) {
    if (!missing[lattice_vertex(A, nx, a)]) atomicMin(first, (unsigned long long)a);
  }));
  FACTZ_RETURN_IF_ERROR(for_each(1, s, [=] __device__(int64_t) {
    const int64_t f = *first == ~0ull ? A.count() : int64_t(*first);
    detail::fill_missing_anchor_column(A, nx, missing, f, u, v, pred);
  }));
  return for_each(A.count_y, s, [=] __device__(int64_t row) { detail::fill_missing_anchor_row(A, nx, missing, row, u, v, pred); });
}

template <class T>
Status device_compress_tiled(Workspace::Impl& ws, const Plan& p, const T* u, const T* v, const uint8_t* missing,
                             cudaStream_t s, TiledPayload& pl) {
  constexpr bool kFloat64 = std::is_same_v<T, double>;
  const Grid2D g{p.nx, p.ny};
  const int64_t nx = p.nx, ny = p.ny, n = nx * ny, cells = g.cell_count(), tris = g.triangle_count();
  const int64_t tiles = ((nx + kTile - 1) / kTile) * ((ny + kTile - 1) / kTile);
  const T eb = plan_bound<T>(p);
  const BoundsOf<T> B = bounds_of(eb);
  const bool block = p.options.mode == Mode::block;
  const T* x[2] = {u, v};
  uint8_t *vid0 = nullptr, *vid1 = nullptr, *tid[2] = {}, *cp_free = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kTiles0, size_t(tiles), tid[0]));
  FACTZ_RETURN_IF_ERROR(ws.get(kTiles1, size_t(tiles), tid[1]));
  if (block) {
    detail::TriangleBounds<T>* tb = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kCellXi, size_t(2 * cells) * sizeof(detail::TriangleBounds<T>), tb));
    FACTZ_RETURN_IF_ERROR(ws.get(kCellFree, size_t(cells), cp_free));
    FACTZ_RETURN_IF_ERROR(ws.get(kVid0, size_t(n), vid0));
    FACTZ_RETURN_IF_ERROR(ws.get(kVid1, size_t(n), vid1));
    FACTZ_RETURN_IF_ERROR(
        for_each(cells, s, [=] __device__(int64_t c) { cell_safe_bounds(g, c, u, v, missing, eb, tb, cp_free); }));
    FACTZ_RETURN_IF_ERROR(
        for_each(n, s, [=] __device__(int64_t k) { vertex_bound_ids(g, k, u, v, tb, eb, vid0, vid1); }));
    const uint8_t* vids[2] = {vid0, vid1};
    for (int c = 0; c < 2; ++c) {
      uint8_t* t_out = tid[c];
      const T* xc = x[c];
      const uint8_t* ids = vids[c];
      FACTZ_RETURN_IF_ERROR(
          for_each(tiles, s, [=] __device__(int64_t t) { t_out[t] = choose_tile_id(nx, ny, t, xc, ids, eb); }));
    }
  } else {
    for (int c = 0; c < 2; ++c)
      FACTZ_CUDA_TRY(cudaMemsetAsync(tid[c], eb > T(0) ? kMaxBoundId : 0, size_t(tiles), s));
  }
  T* recon[2] = {};
  uint8_t* exact[2] = {};
  int32_t* q[2] = {};
  const uint8_t* vids[2] = {vid0, vid1};
  for (int c = 0; c < 2; ++c) {
    FACTZ_RETURN_IF_ERROR(ws.get(c ? kRecon1 : kRecon0, size_t(n) * sizeof(T), recon[c]));
    FACTZ_RETURN_IF_ERROR(ws.get(c ? kExact1 : kExact0, size_t(n), exact[c]));
    FACTZ_RETURN_IF_ERROR(ws.get(c ? kQ1 : kQ0, size_t(n) * 4, q[c]));
    const T* xc = x[c];
    const uint8_t *tc = tid[c], *vc = block ? vids[c] : nullptr;
    T* rc = recon[c];
    uint8_t* ec = exact[c];
    int32_t* qc = q[c];
    FACTZ_RETURN_IF_ERROR(
        for_each(n, s, [=] __device__(int64_t k) { quantize_vertex(nx, k, xc, tc, vc, missing, B.b, rc, ec, qc); }));
    if constexpr (kFloat64)  // float64 block mode lists its exact vertices rounded where it may
      if (block)
        FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t k) { round_exact_vertex(k, xc, eb, rc, ec); }));
  }
  if (block) {
    uint8_t *bad = nullptr, *changed = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kBad, size_t(tris), bad));
    FACTZ_RETURN_IF_ERROR(ws.get(kChanged, size_t(n), changed));
    T *ru = recon[0], *rv = recon[1];
    uint8_t *eu = exact[0], *ev = exact[1];
    // The float64 safe bounds are estimates: every original signature is derived.
    const uint8_t* proven = kFloat64 ? nullptr : cp_free;
    FACTZ_RETURN_IF_ERROR(
        for_each(cells, s, [=] __device__(int64_t c) { cell_check(g, c, ru, rv, u, v, proven, missing, bad); }));
    for (;;) {
      int64_t n_bad = 0;
      FACTZ_RETURN_IF_ERROR(count_if(ws, tris, s, [=] __device__(int64_t t) { return bad[t] != 0; }, n_bad));
      if (n_bad == 0) break;
      FACTZ_RETURN_IF_ERROR(
          for_each(n, s, [=] __device__(int64_t k) { repair_vertex(g, k, bad, u, v, ru, rv, eu, ev, changed); }));
      FACTZ_RETURN_IF_ERROR(
          for_each(tris, s, [=] __device__(int64_t t) { triangle_recheck(g, t, changed, ru, rv, u, v, missing, bad); }));
    }
  }
  uint16_t* sym = nullptr;
  int64_t* code = nullptr;
  uint8_t* esc = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kSymbols, size_t(n) * 2, sym));
  FACTZ_RETURN_IF_ERROR(ws.get(kCodes, size_t(n) * 8, code));
  FACTZ_RETURN_IF_ERROR(ws.get(kFlags, size_t(n), esc));
  for (int c = 0; c < 2; ++c) {
    if (missing && tiles > 0) {  // a missing vertex's integer is its prediction (code 0)
      missing_quant_kernel<T><<<unsigned(tiles), 32, 0, s>>>(nx, ny, missing, tid[c], B, q[c]);
      FACTZ_CUDA_TRY(cudaGetLastError());
    }
    const int32_t* qc = q[c];
    FACTZ_RETURN_IF_ERROR(
        for_each(n, s, [=] __device__(int64_t k) { lorenzo_code(nx, k, qc, missing, sym, code, esc); }));
    const uint16_t* coded_sym = sym;
    int64_t count = n;
    if (missing) FACTZ_RETURN_IF_ERROR(select_valid_symbols(ws, sym, missing, n, s, coded_sym, count));
    if (p.options.coder == Coder::huffman)
      FACTZ_RETURN_IF_ERROR(device_huffman_encode(ws, coded_sym, uint64_t(count), 32768, s, pl.coded[c], pl.coded_crc[c]));
    else
      FACTZ_RETURN_IF_ERROR(
          device_ans_encode(ws, coded_sym, uint64_t(count), detail::kAnsCodeCenter, s, pl.coded[c], pl.coded_crc[c]));
    pl.precoded = true;
    FACTZ_RETURN_IF_ERROR(
        plane_lists(ws, n, recon[c], esc, code, exact[c], s, pl.outliers[c], pl.exact_index[c], pl.exact_values[c]));
  }
  if (block) {
    std::vector<uint8_t> tv;
    FACTZ_RETURN_IF_ERROR(to_host(pl.tile_ids, tid[0], tiles, s));
    FACTZ_RETURN_IF_ERROR(to_host(tv, tid[1], tiles, s));
    pl.tile_ids.insert(pl.tile_ids.end(), tv.begin(), tv.end());
  }
  return Status::Ok();
}

template <class T>
Status device_compress_speculative(Workspace::Impl& ws, const Plan& p, const T* u, const T* v, const uint8_t* missing,
                                   cudaStream_t s, SpeculativePayload& pl) {
  const Grid2D g{p.nx, p.ny};
  const int64_t nx = p.nx, ny = p.ny, n = nx * ny, cells = g.cell_count(), s0 = p.options.anchor_stride;
  const PhaseLattice A = detail::anchor_lattice(nx, ny, s0);
  const int64_t targets = n - A.count();
  const BoundsOf<T> B = bounds_of(plan_bound<T>(p));
  T *cu = nullptr, *cv = nullptr;
  uint8_t *vid = nullptr, *sig = nullptr;
  uint16_t *ids = nullptr, *su = nullptr, *sv = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kRecon0, size_t(n) * sizeof(T), cu));
  FACTZ_RETURN_IF_ERROR(ws.get(kRecon1, size_t(n) * sizeof(T), cv));
  FACTZ_RETURN_IF_ERROR(ws.get(kVid0, size_t(n), vid));
  FACTZ_RETURN_IF_ERROR(ws.get(kBad, size_t(g.triangle_count()), sig));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecIds, size_t(targets) * 2, ids));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymU, size_t(targets) * 2, su));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymV, size_t(targets) * 2, sv));
  FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t k) { speculative_init(k, u, v, cu, cv, vid); }));
  FACTZ_RETURN_IF_ERROR(
      for_each(cells, s, [=] __device__(int64_t c) { speculative_signatures(g, c, u, v, missing, sig); }));
  if (missing)
    FACTZ_RETURN_IF_ERROR(device_fill_missing_anchors(ws, A, nx, missing, cu, cv, detail::kDefaultPredictor, s));
  // The level-wise bound's trial (streams/speculative_trial.hpp) on the host, on the crop
  // copied from the device: the CPU encoder's choice from the same values.
  const detail::TrialCrop crop = detail::trial_crop(nx, ny);
  std::vector<T> crop_u(size_t(crop.w * crop.h)), crop_v(size_t(crop.w * crop.h));
  std::vector<uint8_t> crop_m(missing ? size_t(crop.w * crop.h) : 0);
  const size_t row = size_t(crop.w) * sizeof(T), first = size_t(crop.y0 * nx + crop.x0);
  FACTZ_CUDA_TRY(cudaMemcpy2DAsync(crop_u.data(), row, u + first, size_t(nx) * sizeof(T), row, size_t(crop.h),
                                   cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaMemcpy2DAsync(crop_v.data(), row, v + first, size_t(nx) * sizeof(T), row, size_t(crop.h),
                                   cudaMemcpyDeviceToHost, s));
  if (missing)
    FACTZ_CUDA_TRY(cudaMemcpy2DAsync(crop_m.data(), size_t(crop.w), missing + first, size_t(nx), size_t(crop.w),
                                     size_t(crop.h), cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  const int64_t tight = detail::choose_tight_step_on_crop(crop, n, crop_u, crop_v, crop_m, plan_bound<T>(p), s0,
                                                          detail::kDefaultPredictor, 2);
  int64_t* vertex_of = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kCodes, size_t(targets) * 8, vertex_of));
  FACTZ_RETURN_IF_ERROR(for_each_phase(nx, ny, s0, [&](const detail::ScheduledPhase& ph) {
    return for_each(ph.lattice.count(), s, [=] __device__(int64_t t) {
      speculate_target(g, ph.lattice, ph.step, ph.phase, t, u, v, missing, cu, cv, sig, B.b, ph.offset, ids, su, sv,
                       detail::kDefaultPredictor, tight);
      vertex_of[ph.offset + t] = lattice_vertex(ph.lattice, nx, t);
    });
  }));
  uint8_t* flags = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kFlags, size_t(targets), flags));
  int64_t* d_count = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, d_count));
  // Stable compaction of in[i] for flag[i] != 0 (i < count) into out; returns the count.
  auto select = [&](auto* in, const uint8_t* flag, int64_t count, auto* out, int64_t& selected) -> Status {
    FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) {
      return cub::DeviceSelect::Flagged(t, b, in, flag, out, d_count, count, s);
    }));
    FACTZ_CUDA_TRY(cudaMemcpyAsync(&selected, d_count, 8, cudaMemcpyDeviceToHost, s));
    FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
    return Status::Ok();
  };
  uint16_t* packed = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kSymbols, size_t(targets) * 2, packed));
  FACTZ_RETURN_IF_ERROR(for_each(targets, s, [=] __device__(int64_t t) { flags[t] = id_has_code(ids[t]); }));
  const uint16_t* syms[2] = {su, sv};
  std::vector<uint8_t>* coded[2] = {&pl.coded_u, &pl.coded_v};
  std::optional<uint32_t>* coded_crc[2] = {&pl.coded_u_crc, &pl.coded_v_crc};
  const bool huffman = p.options.coder == Coder::huffman;
  pl.precoded = true;  // both coders run on the device
  pl.predictor = detail::kDefaultPredictor;  // the CPU encoder's (run_speculative)
  // Segmented codes (format version 9): ANS blobs of version 3 for the codes and the ids.
  const bool escapes = pl.predictor != detail::Predictor::linear;
  auto encode = [&](const uint16_t* sym, int64_t count, uint16_t center, std::vector<uint8_t>& blob,
                    std::optional<uint32_t>& crc) {
    if (huffman) return device_huffman_encode(ws, sym, uint64_t(count), center, s, blob, crc);
    return device_ans_encode(ws, sym, uint64_t(count), center, s, blob, crc, escapes);
  };
  // Segmented codes (format version 9, streams/code_segments.hpp): the codes per phase, then
  // each segment coded on the device as a blob of its own, the section CRC folded from theirs.
  std::vector<int64_t> phase_codes;
  FACTZ_RETURN_IF_ERROR(for_each_phase(nx, ny, s0, [&](const detail::ScheduledPhase& ph) {
    const int64_t offset = ph.offset;
    int64_t count = 0;
    FACTZ_RETURN_IF_ERROR(count_if(ws, ph.lattice.count(), s, [=] __device__(int64_t t) {
      return id_has_code(ids[offset + t]);
    }, count));
    phase_codes.push_back(count);
    return Status::Ok();
  }));
  for (int c = 0; c < 2; ++c) {
    int64_t count = 0;
    FACTZ_RETURN_IF_ERROR(select(syms[c], flags, targets, packed, count));
    FACTZ_RETURN_IF_ERROR(detail::write_segmented(
        phase_codes, count,
        [&](int64_t first, int64_t m, std::vector<uint8_t>& blob, std::optional<uint32_t>& crc) {
          return encode(packed + first, m, huffman ? 32768 : detail::kAnsCodeCenter, blob, crc);
        },
        *coded[c], coded_crc[c]));
  }
  FACTZ_RETURN_IF_ERROR(for_each(targets, s, [=] __device__(int64_t t) { flags[t] = id_is_exact(ids[t]); }));
  int64_t* exact_vertex = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex2, size_t(targets) * 8, exact_vertex));
  int64_t n_exact = 0;
  FACTZ_RETURN_IF_ERROR(select(vertex_of, flags, targets, exact_vertex, n_exact));
  // The stored anchors: all of them, or the valid ones (row-major) when vertices are missing.
  int64_t anchors = A.count();
  int64_t* stored_anchor = nullptr;
  if (missing) {
    int64_t* vertex = nullptr;
    uint8_t* stored = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskAnchors, size_t(A.count()) * 8, vertex));
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskAnchorFlags, size_t(A.count()), stored));
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskAnchorOut, size_t(A.count()) * 8, stored_anchor));
    FACTZ_RETURN_IF_ERROR(
        for_each(A.count(), s, [=] __device__(int64_t a) { anchor_vertex(A, nx, a, missing, vertex, stored); }));
    FACTZ_RETURN_IF_ERROR(select(vertex, stored, A.count(), stored_anchor, anchors));
  }
  const int64_t entries = anchors + n_exact, entry_bytes = 2 * int64_t(sizeof(T));
  uint8_t* bytes = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kBytes, size_t(entries * entry_bytes), bytes));
  FACTZ_RETURN_IF_ERROR(for_each(entries, s, [=] __device__(int64_t e) {
    write_speculative_exact(A, nx, e, anchors, stored_anchor, exact_vertex, u, v, bytes);
  }));
  FACTZ_RETURN_IF_ERROR(to_host(pl.exact, bytes, entry_bytes * entries, s));
  if (!missing) return encode(ids, targets, 0, pl.coded_ids, pl.coded_ids_crc);
  // A missing target has no id in the stream.
  FACTZ_RETURN_IF_ERROR(
      for_each(targets, s, [=] __device__(int64_t t) { flags[t] = ids[t] != uint16_t(kMissingVertex); }));
  int64_t stored_targets = 0;
  FACTZ_RETURN_IF_ERROR(select(ids, flags, targets, packed, stored_targets));
  return encode(packed, stored_targets, 0, pl.coded_ids, pl.coded_ids_crc);
}

// The float32 and float64 pipelines.
template Status device_value_range(Workspace::Impl&, const float*, const float*, int64_t, cudaStream_t, double&);
template Status device_count_nonfinite(Workspace::Impl&, const float*, const float*, int64_t, cudaStream_t, int64_t&);
template Status device_fill_missing_anchors(Workspace::Impl&, const PhaseLattice&, int64_t, const uint8_t*, float*, float*,
                                            detail::Predictor, cudaStream_t);
template Status device_compress_tiled(Workspace::Impl&, const Plan&, const float*, const float*, const uint8_t*,
                                      cudaStream_t, TiledPayload&);
template Status device_compress_speculative(Workspace::Impl&, const Plan&, const float*, const float*, const uint8_t*,
                                            cudaStream_t, SpeculativePayload&);
template Status device_value_range(Workspace::Impl&, const double*, const double*, int64_t, cudaStream_t, double&);
template Status device_count_nonfinite(Workspace::Impl&, const double*, const double*, int64_t, cudaStream_t, int64_t&);
template Status device_fill_missing_anchors(Workspace::Impl&, const PhaseLattice&, int64_t, const uint8_t*, double*, double*,
                                            detail::Predictor, cudaStream_t);
template Status device_compress_tiled(Workspace::Impl&, const Plan&, const double*, const double*, const uint8_t*,
                                      cudaStream_t, TiledPayload&);
template Status device_compress_speculative(Workspace::Impl&, const Plan&, const double*, const double*, const uint8_t*,
                                            cudaStream_t, SpeculativePayload&);

}  // namespace factz::cuda_detail
