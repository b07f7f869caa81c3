// The device decoders of the 3D modes (issue 22; float32). The host parses the stream and
// entropy-decodes its lists (streams/vector3d_stream.hpp parse_tiled3d, parse_speculative3d;
// host_stream3d.cpp); the reconstruction runs here, one FACTZ_HD body per thread
// (block3d_bodies.hpp, speculative3d_bodies.hpp) in the order gpu_model3d.cpp replays:
//  - tiled: per vertex its code, three passes of tile-local running sums (the inverse of the
//    3D Lorenzo predictor), per vertex its value, then the exact list over them;
//  - speculative: the anchors, exclusive scans of the id flags (CUB) for each target's code
//    and exact-value positions, then one launch per phase of the schedule.
#include <cub/device/device_scan.cuh>

#include "backend/cuda/block3d_bodies.hpp"
#include "backend/cuda/cuda_internal3d.hpp"
#include "backend/cuda/device_util.cuh"
#include "backend/cuda/speculative3d_bodies.hpp"

namespace factz::cuda_detail {

using cuda::Workspace;

Status device_decode_tiled3d(Workspace::Impl& ws, const detail::Header& h, const detail::Tiled3DInput& in, float* u,
                             float* v, float* w, cudaStream_t s) {
  const Grid3D g{int64_t(h.nx), int64_t(h.ny), int64_t(h.nz)};
  const int64_t n = g.size();
  const detail::TileLayout3D L(g.nx, g.ny, g.nz);
  const int64_t tiles = L.tile_count();
  const float eb = in.eb;
  uint64_t* q = nullptr;
  uint8_t* tile_ids = nullptr;
  int* flags = nullptr;  // [0]: bad, [1]: not finite
  FACTZ_RETURN_IF_ERROR(ws.get(kCodes, size_t(n) * 8, q));
  FACTZ_RETURN_IF_ERROR(upload(ws, kTiles0, in.tile_ids, s, tile_ids));
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, flags));
  float* const out[3] = {u, v, w};
  for (int c = 0; c < 3; ++c) {
    uint16_t* sym = nullptr;
    int64_t *oi = nullptr, *oc = nullptr, *ei = nullptr;
    float* ev = nullptr;
    FACTZ_RETURN_IF_ERROR(upload(ws, kSymbols, in.symbols[c], s, sym));
    FACTZ_RETURN_IF_ERROR(upload(ws, kIndex, in.outlier_index[c], s, oi));
    FACTZ_RETURN_IF_ERROR(upload(ws, kGather, in.outlier_code[c], s, oc));
    FACTZ_CUDA_TRY(cudaMemsetAsync(flags, 0, 2 * sizeof(int), s));
    const int64_t outliers = int64_t(in.outlier_index[c].size());
    FACTZ_RETURN_IF_ERROR(
        for_each(n, s, [=] __device__(int64_t k) { tiled3d_code_body(k, sym, oi, oc, outliers, q, flags); }));
    for (int axis = 0; axis < 3; ++axis)
      FACTZ_RETURN_IF_ERROR(for_each(line_count3d(g, axis), s, [=] __device__(int64_t line) {
        tile_prefix_line3d_body(g, axis, line, q);
      }));
    const uint8_t* ids = tile_ids + c * tiles;
    float* oc_plane = out[c];
    FACTZ_RETURN_IF_ERROR(for_each(n, s, [=] __device__(int64_t k) {
      tiled3d_value_body(L, k, q, ids, eb, oc_plane, flags, flags + 1);
    }));
    int h_flags[2] = {0, 0};
    FACTZ_CUDA_TRY(cudaMemcpyAsync(h_flags, flags, sizeof h_flags, cudaMemcpyDeviceToHost, s));
    FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
    if (h_flags[0]) return corrupt_stream("decoded value out of range");
    // The exact list over the values (parse_tiled3d checked its indices).
    FACTZ_RETURN_IF_ERROR(upload(ws, kMaskIndex, in.exact_index[c], s, ei));
    FACTZ_RETURN_IF_ERROR(upload(ws, kMaskU, in.exact_value[c], s, ev));
    FACTZ_RETURN_IF_ERROR(for_each(int64_t(in.exact_index[c].size()), s,
                                   [=] __device__(int64_t e) { oc_plane[ei[e]] = ev[e]; }));
    if (h_flags[1]) {
      int64_t nonfinite = 0;
      FACTZ_RETURN_IF_ERROR(count_if(
          ws, n, s, [=] __device__(int64_t k) { return !detail::finite_value(oc_plane[k]); }, nonfinite));
      if (nonfinite > 0) return corrupt_stream("decoded value out of range");
    }
  }
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));  // the host lists outlive the copies
  return Status::Ok();
}

Status device_decode_speculative3d(Workspace::Impl& ws, const detail::Header& h, const detail::Speculative3DInput& in,
                                   float* u, float* v, float* w, cudaStream_t s) {
  const Grid3D g{int64_t(h.nx), int64_t(h.ny), int64_t(h.nz)};
  const MutablePlanes3 out{{u, v, w}};
  const detail::PhaseLattice3D A = detail::anchor_lattice3d(g.nx, g.ny, g.nz, h.anchor_stride);
  const int64_t anchors = A.count(), targets = int64_t(in.ids.size());
  float* exact = nullptr;
  uint16_t *ids = nullptr, *c0 = nullptr, *c1 = nullptr, *c2 = nullptr;
  FACTZ_RETURN_IF_ERROR(upload(ws, kMaskU, in.exact, s, exact));
  FACTZ_RETURN_IF_ERROR(upload(ws, kSpecIds, in.ids, s, ids));
  FACTZ_RETURN_IF_ERROR(upload(ws, kSpecSymU, in.codes[0], s, c0));
  FACTZ_RETURN_IF_ERROR(upload(ws, kSpecSymV, in.codes[1], s, c1));
  FACTZ_RETURN_IF_ERROR(upload(ws, kSpecSymW, in.codes[2], s, c2));
  const int64_t nx = g.nx, ny = g.ny;
  FACTZ_RETURN_IF_ERROR(
      for_each(anchors, s, [=] __device__(int64_t a) { decode_anchor3d_body(A, nx, ny, a, exact, out); }));
  // Each target's code and exact-value positions: exclusive scans of the id flags.
  int64_t *coded = nullptr, *is_exact = nullptr, *code_at = nullptr, *exact_at = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex, size_t(targets) * 8, coded));
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex2, size_t(targets) * 8, is_exact));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecCodeAt, size_t(targets) * 8, code_at));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecExactAt, size_t(targets) * 8, exact_at));
  FACTZ_RETURN_IF_ERROR(for_each(targets, s, [=] __device__(int64_t i) {
    coded[i] = id_coded3d(ids[i]);
    is_exact[i] = id_exact3d(ids[i]);
  }));
  if (targets > 0) {
    FACTZ_RETURN_IF_ERROR(cub_call(
        ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, coded, code_at, targets, s); }));
    FACTZ_RETURN_IF_ERROR(cub_call(
        ws, [&](void* t, size_t& b) { return cub::DeviceScan::ExclusiveSum(t, b, is_exact, exact_at, targets, s); }));
  }
  FACTZ_RETURN_IF_ERROR(for_each(targets, s, [=] __device__(int64_t i) { exact_at[i] += anchors; }));
  int* bad = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, bad));
  FACTZ_CUDA_TRY(cudaMemsetAsync(bad, 0, sizeof(int), s));
  const Bounds B = bounds_of(in.eb);
  detail::PhaseSchedule3D schedule(g.nx, g.ny, g.nz, h.anchor_stride, in.along.empty() ? nullptr : in.along.data());
  for (detail::ScheduledPhase3D ph; schedule.next(ph);)
    FACTZ_RETURN_IF_ERROR(for_each(ph.lattice.count(), s, [=] __device__(int64_t t) {
      decode_target3d_body(g, ph, t, ids, code_at, exact_at, c0, c1, c2, exact, B.b, out, bad);
    }));
  int h_bad = 0;
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&h_bad, bad, sizeof h_bad, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  if (h_bad) return corrupt_stream("a decoded value is not finite, or a bound id is out of range");
  return Status::Ok();
}

}  // namespace factz::cuda_detail
