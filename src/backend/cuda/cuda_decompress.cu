// The device decoders: the tiled backbone (a row pass and a column pass of the 2D prefix
// sum per 32 x 32 tile, one block per tile) and the speculative schedule (one kernel per
// phase; code and exact positions from exclusive scans of the id stream), and the entropy
// decoders (Huffman and rANS: one thread per chunk). The blobs' heads, tables and the
// varint lists are parsed and checked on the host (host_stream.hpp, *_host.cpp). The
// reconstructions are templates on the value type T (float, or double for a float64
// stream), instantiated for both at the end.
#include <cub/device/device_scan.cuh>

#include "backend/cuda/ans_bodies.hpp"
#include "backend/cuda/ans_host.hpp"
#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/device_util.cuh"
#include "backend/cuda/huffman_host.hpp"
#include "backend/cuda/speculative_bodies.hpp"
#include "streams/code_segments.hpp"
#include "codec/coder.hpp"
#include "streams/tiled_lists.hpp"

namespace factz::cuda_detail {
namespace {

using cuda::Workspace;

template <class T>
__global__ void decode_tiles_kernel(int64_t nx, int64_t ny, const uint16_t* symbols, const int64_t* out_index,
                                    const int64_t* out_code, int64_t n_out, const uint8_t* tile_ids, BoundsOf<T> b,
                                    const int64_t* exact_index, const T* exact_value, int64_t n_exact, T* out,
                                    int* bad) {
  __shared__ uint64_t scratch[kTile * kTile];
  const int64_t t = blockIdx.x;
  decode_tile_row(nx, ny, t, threadIdx.x, symbols, out_index, out_code, n_out, scratch);
  __syncthreads();
  decode_tile_column(nx, ny, t, threadIdx.x, tile_ids, b.b, scratch, exact_index, exact_value, n_exact, out, bad);
}

Status read_flag(const int* d, cudaStream_t s, int& h) {
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

/// One thread per chunk of a Huffman blob (huffman_decode_chunk); *bad on invalid data.
__global__ void huffman_decode_kernel(HuffmanBook book, const uint16_t* sorted, const uint8_t* blob,
                                      const uint64_t* chunk_pos, uint64_t chunks, int chunk_log2, uint64_t n,
                                      uint16_t* out, int* bad) {
  const uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= chunks) return;
  const uint64_t lo = k << chunk_log2, m = (n - lo) < (uint64_t{1} << chunk_log2) ? n - lo : uint64_t{1} << chunk_log2;
  if (!huffman_decode_chunk(book, sorted, blob + chunk_pos[k], chunk_pos[k + 1] - chunk_pos[k], out + lo, m)) *bad = 1;
}

/// Device Huffman decoding of a blob of n symbols into out (device); corrupt_stream on
/// invalid data. The blob's head and chunk table are checked on the host first.
Status device_huffman_decode(Workspace::Impl& ws, const std::vector<uint8_t>& coded, int64_t n, uint16_t* out, int* flag,
                             cudaStream_t s) {
  HuffmanParsed hp;
  FACTZ_RETURN_IF_ERROR(huffman_parse(coded, uint64_t(n), hp));
  uint8_t* blob = nullptr;
  uint64_t* pos = nullptr;
  uint16_t* sorted = nullptr;
  FACTZ_RETURN_IF_ERROR(upload(ws, kBytes, coded, s, blob));
  FACTZ_RETURN_IF_ERROR(upload(ws, kChunkPos, hp.chunk_pos, s, pos));
  FACTZ_RETURN_IF_ERROR(upload(ws, kCodeTable, hp.sorted, s, sorted));
  FACTZ_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int), s));
  const uint64_t chunks = hp.chunk_pos.size() - 1;
  if (chunks > 0) {
    huffman_decode_kernel<<<unsigned((chunks + 127) / 128), 128, 0, s>>>(hp.book, sorted, blob, pos, chunks,
                                                                        hp.chunk_log2, uint64_t(n), out, flag);
    FACTZ_CUDA_TRY(cudaGetLastError());
  }
  int h = 0;
  FACTZ_RETURN_IF_ERROR(read_flag(flag, s, h));  // also keeps `coded` alive until the copies are done
  if (h) return corrupt_stream("huffman: invalid payload");
  return Status::Ok();
}

/// One thread per chunk of a rANS plane (ans_decode_chunk_bytes); *bad on invalid data.
__global__ void ans_chunk_kernel(const uint32_t* entries, const uint8_t* values, uint32_t lanes, uint32_t first_context,
                                 const uint8_t* blob, const uint64_t* chunk_pos, uint64_t chunks, int chunk_log2,
                                 uint64_t n, uint8_t* out, int* bad) {
  const uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= chunks) return;
  const uint64_t lo = k << chunk_log2, m = (n - lo) < (uint64_t{1} << chunk_log2) ? n - lo : uint64_t{1} << chunk_log2;
  if (!ans_decode_chunk_bytes(entries, values, lanes, first_context, blob + chunk_pos[k], chunk_pos[k + 1] - chunk_pos[k],
                              out + lo, m))
    *bad = 1;
}

/// One thread per chunk of a decoded mode 3 plane: its escape values (kernels/rans.hpp).
__global__ void ans_escape_count_kernel(const uint8_t* bytes, uint64_t chunks, int chunk_log2, uint64_t n, uint8_t e,
                                        uint64_t* counts) {
  const uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= chunks) return;
  const uint64_t lo = k << chunk_log2, m = (n - lo) < (uint64_t{1} << chunk_log2) ? n - lo : uint64_t{1} << chunk_log2;
  counts[k] = detail::rans_count_escapes(bytes + lo, m, e);
}

/// One thread per chunk: the chunk's escape values replaced by the listed bytes from
/// first[k] (the exclusive prefix sum of the counts) on.
__global__ void ans_escape_replace_kernel(uint8_t* bytes, uint64_t chunks, int chunk_log2, uint64_t n, uint8_t e,
                                          const uint64_t* first, const uint8_t* list) {
  const uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= chunks) return;
  const uint64_t lo = k << chunk_log2, m = (n - lo) < (uint64_t{1} << chunk_log2) ? n - lo : uint64_t{1} << chunk_log2;
  detail::rans_replace_escapes(bytes + lo, m, e, list + first[k]);
}

/// The escapes of a decoded mode 3 plane: a count kernel, the prefix sum of the chunk counts
/// on the host (checked against the list's length), a replace kernel.
Status device_replace_escapes(Workspace::Impl& ws, const AnsPlane& pl, int chunk_log2, uint64_t n, uint8_t* dst,
                              int* flag, cudaStream_t s) {
  const uint64_t chunks = pl.chunk_pos.size() - 1;
  uint64_t* counts = nullptr;
  uint8_t* list = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kAnsSparsePos, size_t(chunks) * 8, counts));
  ans_escape_count_kernel<<<unsigned((chunks + 63) / 64), 64, 0, s>>>(dst, chunks, chunk_log2, n, pl.value, counts);
  FACTZ_CUDA_TRY(cudaGetLastError());
  int bad = 0;
  FACTZ_RETURN_IF_ERROR(read_flag(flag, s, bad));  // a failed chunk: its counts mean nothing
  if (bad) return corrupt_stream("ans: invalid payload");
  std::vector<uint64_t> first;
  FACTZ_RETURN_IF_ERROR(to_host(first, counts, int64_t(chunks), s));
  uint64_t run = 0;
  for (auto& c : first) {
    const uint64_t t = c;
    c = run;
    run += t;
  }
  if (run != pl.bytes.size()) return corrupt_stream("ans: escape count does not match the escape list");
  if (run == 0) return Status::Ok();
  FACTZ_RETURN_IF_ERROR(to_device(counts, first, s));
  FACTZ_RETURN_IF_ERROR(upload(ws, kAnsSparseBytes, pl.bytes, s, list));
  ans_escape_replace_kernel<<<unsigned((chunks + 63) / 64), 64, 0, s>>>(dst, chunks, chunk_log2, n, pl.value, counts,
                                                                       list);
  FACTZ_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

/// Device ANS decoding of a blob of n symbols into out (device): each plane's bytes (a
/// fill, a scatter of the sparse exceptions, or the rANS chunks, then any escapes), then
/// the symbols.
Status device_ans_decode(Workspace::Impl& ws, const std::vector<uint8_t>& coded, uint16_t center, int64_t n,
                         uint16_t* out, int* flag, cudaStream_t s) {
  AnsParsed ap;
  FACTZ_RETURN_IF_ERROR(ans_parse_for_device(coded, center, uint64_t(n), ap));
  FACTZ_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int), s));
  if (n == 0) return Status::Ok();
  uint8_t *blob = nullptr, *plane[2] = {};
  FACTZ_RETURN_IF_ERROR(upload(ws, kBytes, coded, s, blob));
  FACTZ_RETURN_IF_ERROR(ws.get(kPlaneLo, size_t(n), plane[0]));
  FACTZ_RETURN_IF_ERROR(ws.get(kPlaneHi, size_t(n), plane[1]));
  for (int p = 0; p < 2; ++p) {
    const AnsPlane& pl = ap.planes[p];
    uint8_t* dst = plane[p];
    FACTZ_CUDA_TRY(cudaMemsetAsync(dst, pl.value, size_t(n), s));
    if (pl.mode == detail::kAnsPlaneSparse) {
      uint64_t* pos = nullptr;
      uint8_t* bytes = nullptr;
      FACTZ_RETURN_IF_ERROR(upload(ws, kAnsSparsePos, pl.positions, s, pos));
      FACTZ_RETURN_IF_ERROR(upload(ws, kAnsSparseBytes, pl.bytes, s, bytes));
      FACTZ_RETURN_IF_ERROR(
          for_each(int64_t(pl.positions.size()), s, [=] __device__(int64_t e) { dst[pos[e]] = bytes[e]; }));
    } else if (detail::ans_plane_is_rans(pl.mode)) {
      uint32_t* entries = nullptr;
      uint8_t* values = nullptr;
      uint64_t* chunk_pos = nullptr;
      FACTZ_RETURN_IF_ERROR(upload(ws, kAnsEntries, pl.entries, s, entries));
      FACTZ_RETURN_IF_ERROR(upload(ws, kAnsValues, pl.values, s, values));
      FACTZ_RETURN_IF_ERROR(upload(ws, kChunkPos, pl.chunk_pos, s, chunk_pos));
      const uint64_t chunks = pl.chunk_pos.size() - 1;
      ans_chunk_kernel<<<unsigned((chunks + 63) / 64), 64, 0, s>>>(entries, values, pl.lanes, pl.first_context, blob,
                                                                  chunk_pos, chunks, ap.chunk_log2, uint64_t(n), dst,
                                                                  flag);
      FACTZ_CUDA_TRY(cudaGetLastError());
      if (pl.mode == detail::kAnsPlaneEscapes)
        FACTZ_RETURN_IF_ERROR(device_replace_escapes(ws, pl, ap.chunk_log2, uint64_t(n), dst, flag, s));
    }
    // The next plane reuses the table slots: wait (the host tables must also outlive the copies).
    FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  }
  const uint8_t *lo = plane[0], *hi = plane[1];
  FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t i) { out[i] = ans_symbol(lo[i], hi[i], center); }));
  int h = 0;
  FACTZ_RETURN_IF_ERROR(read_flag(flag, s, h));
  if (h) return corrupt_stream("ans: invalid payload");
  return Status::Ok();
}

/// Either coder (the header's coder byte); Huffman ignores the center.
Status device_entropy_decode(Workspace::Impl& ws, uint8_t coder, const std::vector<uint8_t>& coded, uint16_t center,
                             int64_t n, uint16_t* out, int* flag, cudaStream_t s) {
  if (coder == uint8_t(Coder::ans)) return device_ans_decode(ws, coded, center, n, out, flag, s);
  return device_huffman_decode(ws, coded, n, out, flag, s);
}

/// Device decoding of a masked plane's codes that hold the valid vertices only (format
/// version 5), spread over the grid as streams/tiled_lists.hpp spread_valid_symbols does.
Status decode_valid_symbols(Workspace::Impl& ws, uint8_t coder, const std::vector<uint8_t>& coded, int64_t n,
                            const uint8_t* missing, int64_t n_out, const int64_t* oi, uint16_t* sym, int* flag,
                            cudaStream_t s) {
  auto stored = detail::coded_symbol_count(detail::EntropyCoder(coder), coded);
  if (!stored.ok()) return stored.status();
  int64_t valid = 0;
  FACTZ_RETURN_IF_ERROR(count_if(ws, n, s, [=] __device__(int64_t k) { return missing[k] == 0; }, valid));
  FACTZ_RETURN_IF_ERROR(detail::check_stored_symbols(stored.value(), uint64_t(valid)));
  uint16_t* packed = nullptr;
  int64_t *is_valid = nullptr, *pos = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kMaskIds, size_t(n) * 2, packed));
  FACTZ_RETURN_IF_ERROR(ws.get(kMaskStored, size_t(n) * 8, is_valid));
  FACTZ_RETURN_IF_ERROR(ws.get(kMaskPos, size_t(n) * 8, pos));
  FACTZ_RETURN_IF_ERROR(device_entropy_decode(ws, coder, coded, 32768, valid, packed, flag, s));
  FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t k) { is_valid[k] = missing[k] == 0 ? 1 : 0; }));
  FACTZ_RETURN_IF_ERROR(
      cub_call(ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, is_valid, pos, n, s); }));
  const uint16_t* from = packed;
  FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t k) { spread_valid_symbol(k, missing, pos, from, sym); }));
  return for_each(n_out, s, [=] __device__(int64_t e) { escape_missing_outlier(e, oi, missing, sym); });
}

/// Device decoding of one plane's symbols (the valid vertices' spread over the grid when
/// the codes skip the missing ones), then the outlier checks that need them
/// (detail::parse_outliers, streams/tiled_lists.hpp, leaves them to the device in this case).
Status decode_plane_symbols(Workspace::Impl& ws, uint8_t coder, const std::vector<uint8_t>& coded, int64_t n,
                            const uint8_t* skip_missing, const std::vector<int64_t>& outlier_index,
                            const int64_t* d_outlier_index, uint16_t* sym, int* flag, cudaStream_t s) {
  const int64_t n_out = int64_t(outlier_index.size());
  const int64_t* oi = d_outlier_index;
  if (skip_missing)
    FACTZ_RETURN_IF_ERROR(decode_valid_symbols(ws, coder, coded, n, skip_missing, n_out, oi, sym, flag, s));
  else
    FACTZ_RETURN_IF_ERROR(device_entropy_decode(ws, coder, coded, 32768, n, sym, flag, s));
  FACTZ_RETURN_IF_ERROR(for_each(n_out, s, [=] __device__(int64_t e) {
    if (sym[oi[e]] != 0) *flag = 2;
  }));
  int h = 0;
  FACTZ_RETURN_IF_ERROR(read_flag(flag, s, h));
  if (h == 2) return corrupt_stream("outlier at a vertex without escape symbol");
  int64_t escapes = 0;
  FACTZ_RETURN_IF_ERROR(count_if(ws, n, s, [=] __device__(int64_t k) { return sym[k] == 0; }, escapes));
  if (escapes != n_out) return corrupt_stream("escape symbols and outlier list disagree");
  return Status::Ok();
}

}  // namespace

template <class T>
Status device_decode_tiled(Workspace::Impl& ws, const detail::ParsedContainer& pc, const TiledInputOf<T>& in,
                           const uint8_t* missing, T* u, T* v, cudaStream_t s) {
  const int64_t nx = int64_t(pc.header.nx), ny = int64_t(pc.header.ny);
  const int64_t tiles = ((nx + kTile - 1) / kTile) * ((ny + kTile - 1) / kTile);
  const BoundsOf<T> B = bounds_of(T(in.eb));  // the header's bound, or a float64 stream's f64 one
  int* flags = nullptr;  // bytes 0-7 of the scalars belong to count_if
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, flags));
  int* bad = flags + 4;
  FACTZ_CUDA_TRY(cudaMemsetAsync(bad, 0, sizeof(int), s));
  uint8_t* tid = nullptr;
  FACTZ_RETURN_IF_ERROR(upload(ws, kTiles0, in.tile_ids, s, tid));
  T* out[2] = {u, v};
  for (int c = 0; c < 2; ++c) {
    uint16_t* sym = nullptr;
    int64_t *oi = nullptr, *oc = nullptr, *ei = nullptr;
    T* ev = nullptr;
    FACTZ_RETURN_IF_ERROR(upload(ws, kIndex, in.outlier_index[c], s, oi));
    FACTZ_RETURN_IF_ERROR(ws.get(kSymbols, size_t(nx * ny) * 2, sym));
    FACTZ_RETURN_IF_ERROR(decode_plane_symbols(ws, pc.header.coder, in.coded[c], nx * ny,
                                               in.codes_skip_missing ? missing : nullptr, in.outlier_index[c], oi, sym,
                                               flags + 5, s));
    FACTZ_RETURN_IF_ERROR(upload(ws, kGather, in.outlier_code[c], s, oc));
    FACTZ_RETURN_IF_ERROR(upload(ws, kIndex2, in.exact_index[c], s, ei));
    FACTZ_RETURN_IF_ERROR(upload(ws, kCodes, in.exact_value[c], s, ev));
    if (tiles > 0) {  // every vertex's value, exactly stored ones included (kernels/tile_decode.hpp)
      decode_tiles_kernel<T><<<unsigned(tiles), unsigned(kTile), 0, s>>>(
          nx, ny, sym, oi, oc, int64_t(in.outlier_index[c].size()), tid + c * tiles, B, ei, ev,
          int64_t(in.exact_index[c].size()), out[c], bad);
      FACTZ_CUDA_TRY(cudaGetLastError());
    }
    // The next plane reuses the buffers: the host vectors stay alive, the copies are ordered.
    FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  }
  int h = 0;
  FACTZ_RETURN_IF_ERROR(read_flag(bad, s, h));
  if (h) return corrupt_stream("decoded value out of range");
  return Status::Ok();
}

/// A component's codes: one blob, or each segment of a version 9 section (parse_segmented on
/// the host) into its part of `out`.
Status device_codes_decode(Workspace::Impl& ws, uint8_t coder, const std::vector<uint8_t>& coded, bool segmented,
                           int64_t n, uint16_t* out, int* flag, cudaStream_t s) {
  if (!segmented) return device_entropy_decode(ws, coder, coded, 32768, n, out, flag, s);
  std::vector<detail::CodeSegment> segs;
  FACTZ_RETURN_IF_ERROR(detail::parse_segmented(coded, n, segs));
  for (const auto& g : segs) {
    // Each decode ends with a synchronizing flag read, so the blob outlives its copies.
    const std::vector<uint8_t> blob(g.blob.begin(), g.blob.end());
    FACTZ_RETURN_IF_ERROR(device_entropy_decode(ws, coder, blob, 32768, g.count, out + g.first, flag, s));
  }
  return Status::Ok();
}

template <class T>
Status device_decode_speculative(Workspace::Impl& ws, const detail::ParsedContainer& pc,
                                 const SpeculativeInputOf<T>& in, const uint8_t* missing, T* u, T* v, cudaStream_t s) {
  const int64_t nx = int64_t(pc.header.nx), ny = int64_t(pc.header.ny), n = nx * ny, s0 = pc.header.anchor_stride;
  const Grid2D g{nx, ny};
  const PhaseLattice A = detail::anchor_lattice(nx, ny, s0);
  const int64_t targets = n - A.count();
  const BoundsOf<T> B = bounds_of(T(in.eb));  // the header's bound, or a float64 stream's f64 one
  // A missing vertex has no entry in any section: count the stored anchors and targets.
  int64_t anchors = A.count(), stored_targets = targets;
  if (missing) {
    int64_t missing_anchors = 0, missing_all = 0;
    FACTZ_RETURN_IF_ERROR(count_if(ws, A.count(), s, [=] __device__(int64_t a) {
      return missing[lattice_vertex(A, nx, a)] != 0;
    }, missing_anchors));
    FACTZ_RETURN_IF_ERROR(count_if(ws, n, s, [=] __device__(int64_t k) { return missing[k] != 0; }, missing_all));
    anchors -= missing_anchors;
    stored_targets -= missing_all - missing_anchors;
  }
  uint16_t *ids = nullptr, *cu = nullptr, *cv = nullptr;
  T* exact = nullptr;
  if (in.device_coded) {
    // Ids on the device, checked and counted there; then the exact values (their count
    // comes from the ids) and the codes.
    int* flag = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, flag));
    flag += 5;  // bytes 0-7 of the scalars belong to count_if
    FACTZ_RETURN_IF_ERROR(ws.get(kSpecIds, size_t(stored_targets) * 2, ids));
    FACTZ_RETURN_IF_ERROR(device_entropy_decode(ws, pc.header.coder, in.coded_ids, 0, stored_targets, ids, flag, s));
    const uint16_t* cid = ids;
    int64_t invalid = 0, n_codes = 0, n_exact = 0;
    FACTZ_RETURN_IF_ERROR(count_if(ws, stored_targets, s, [=] __device__(int64_t t) {
      return !detail::valid_target_id(cid[t]);
    }, invalid));
    if (invalid) return corrupt_stream("bound id out of range");
    FACTZ_RETURN_IF_ERROR(
        count_if(ws, stored_targets, s, [=] __device__(int64_t t) { return id_has_code(cid[t]); }, n_codes));
    FACTZ_RETURN_IF_ERROR(
        count_if(ws, stored_targets, s, [=] __device__(int64_t t) { return id_is_exact(cid[t]); }, n_exact));
    std::vector<T> values;
    FACTZ_RETURN_IF_ERROR(parse_speculative_exact(in.exact_raw, anchors + n_exact, values));
    FACTZ_RETURN_IF_ERROR(upload(ws, kGather, values, s, exact));
    FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymU, size_t(n_codes) * 2, cu));
    FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymV, size_t(n_codes) * 2, cv));
    FACTZ_RETURN_IF_ERROR(device_codes_decode(ws, pc.header.coder, in.coded_u, in.codes_segmented, n_codes, cu, flag, s));
    FACTZ_RETURN_IF_ERROR(device_codes_decode(ws, pc.header.coder, in.coded_v, in.codes_segmented, n_codes, cv, flag, s));
  } else {
    if (int64_t(in.ids.size()) != stored_targets) return corrupt_stream("bound id count does not match the grid");
    FACTZ_RETURN_IF_ERROR(upload(ws, kSpecIds, in.ids, s, ids));
    FACTZ_RETURN_IF_ERROR(upload(ws, kSpecSymU, in.codes_u, s, cu));
    FACTZ_RETURN_IF_ERROR(upload(ws, kSpecSymV, in.codes_v, s, cv));
    FACTZ_RETURN_IF_ERROR(upload(ws, kGather, in.exact, s, exact));
  }
  int64_t* anchor_pos = nullptr;
  if (missing && targets > 0) {
    // Every stream position's id: the stream's own for a stored target, kMissingVertex
    // for a missing one (positions of the stored ids: an exclusive scan).
    int64_t *stored = nullptr, *pos = nullptr;
    uint16_t* full = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskStored, size_t(targets) * 8, stored));
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskPos, size_t(targets) * 8, pos));
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskIds, size_t(targets) * 2, full));
    FACTZ_RETURN_IF_ERROR(for_each_phase(nx, ny, s0, [&](const detail::ScheduledPhase& ph) {
      return for_each(ph.lattice.count(), s, [=] __device__(int64_t t) {
        target_stored(ph.lattice, nx, t, ph.offset, missing, stored);
      });
    }));
    FACTZ_RETURN_IF_ERROR(
        cub_call(ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, stored, pos, targets, s); }));
    const uint16_t* stream_ids = ids;
    FACTZ_RETURN_IF_ERROR(
        for_each(targets, s, [=] __device__(int64_t p) { expand_target_id(p, stored, pos, stream_ids, full); }));
    ids = full;
  }
  if (missing) {  // the stored anchors' positions in the exact section: an exclusive scan
    int64_t* stored = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskAnchors, size_t(A.count()) * 8, stored));
    FACTZ_RETURN_IF_ERROR(ws.get(kMaskAnchorOut, size_t(A.count()) * 8, anchor_pos));
    FACTZ_RETURN_IF_ERROR(for_each(A.count(), s, [=] __device__(int64_t a) {
      stored[a] = missing[lattice_vertex(A, nx, a)] == 0 ? 1 : 0;
    }));
    FACTZ_RETURN_IF_ERROR(cub_call(
        ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, stored, anchor_pos, A.count(), s); }));
  }
  int64_t *has_code = nullptr, *is_exact = nullptr, *code_pos = nullptr, *exact_pos = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex, size_t(targets) * 8, has_code));
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex2, size_t(targets) * 8, is_exact));
  FACTZ_RETURN_IF_ERROR(ws.get(kCodes, size_t(targets) * 8, code_pos));
  FACTZ_RETURN_IF_ERROR(ws.get(kOffsets, size_t(targets) * 8, exact_pos));
  const uint16_t* tid = ids;
  FACTZ_RETURN_IF_ERROR(for_each(targets, s, [=] __device__(int64_t t) {
    has_code[t] = id_has_code(tid[t]);
    is_exact[t] = id_is_exact(tid[t]);
  }));
  if (targets > 0) {
    FACTZ_RETURN_IF_ERROR(cub_call(
        ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, has_code, code_pos, targets, s); }));
    FACTZ_RETURN_IF_ERROR(cub_call(
        ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, is_exact, exact_pos, targets, s); }));
  }
  int* bad = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, bad));
  bad += 4;  // bytes 0-7 of the scalars belong to count_if
  FACTZ_CUDA_TRY(cudaMemsetAsync(bad, 0, sizeof(int), s));
  FACTZ_RETURN_IF_ERROR(
      for_each(A.count(), s, [=] __device__(int64_t a) { decode_anchor(A, nx, a, missing, anchor_pos, exact, u, v); }));
  const detail::Predictor pred = in.predictor;
  if (missing) FACTZ_RETURN_IF_ERROR(device_fill_missing_anchors(ws, A, nx, missing, u, v, pred, s));
  FACTZ_RETURN_IF_ERROR(for_each_phase(nx, ny, s0, [&](const detail::ScheduledPhase& ph) {
    return for_each(ph.lattice.count(), s, [=] __device__(int64_t t) {
      decode_target(g, ph.lattice, ph.step, ph.phase, t, ph.offset, tid, cu, cv, code_pos, exact_pos, anchors, exact,
                    B.b, u, v, bad, pred);
    });
  }));
  int h = 0;
  FACTZ_RETURN_IF_ERROR(read_flag(bad, s, h));
  if (h) return corrupt_stream("decoded value is not finite");
  return Status::Ok();
}

// The float32 and float64 decoders.
template Status device_decode_tiled(Workspace::Impl&, const detail::ParsedContainer&, const TiledInputOf<float>&,
                                    const uint8_t*, float*, float*, cudaStream_t);
template Status device_decode_tiled(Workspace::Impl&, const detail::ParsedContainer&, const TiledInputOf<double>&,
                                    const uint8_t*, double*, double*, cudaStream_t);
template Status device_decode_speculative(Workspace::Impl&, const detail::ParsedContainer&,
                                          const SpeculativeInputOf<float>&, const uint8_t*, float*, float*,
                                          cudaStream_t);
template Status device_decode_speculative(Workspace::Impl&, const detail::ParsedContainer&,
                                          const SpeculativeInputOf<double>&, const uint8_t*, double*, double*,
                                          cudaStream_t);

}  // namespace factz::cuda_detail
