// The device frontends of the 3D modes (issue 22; float32): modes none and block (safe
// bounds, bound ids, tile ids, quantization, Lorenzo codes, the exact check with repair) and
// speculative (the original signatures, then one launch per phase of the schedule). Every
// kernel is one FACTZ_HD body per thread (block3d_bodies.hpp, speculative3d_bodies.hpp),
// launched in the order gpu_model3d.cpp replays on the host; the escape list is a stable CUB
// compaction. Missing vertices (the device mask; the planes are then the filled working
// copy): a per-tile pass after quantization gives each its Lorenzo prediction, and in the
// speculative mode each holds the stand-in. The per-vertex decisions come back to the host,
// where the CPU backend's payload functions and the stream layer build the stream
// (host_stream3d.cpp): the bytes are the CPU's whenever the decisions are, which the model
// tests check on every build.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "backend/cuda/block3d_bodies.hpp"
#include "backend/cuda/cuda_internal3d.hpp"
#include "backend/cuda/device_util.cuh"
#include "backend/cuda/speculative3d_bodies.hpp"

namespace factz::cuda_detail {
namespace {

using cuda::Workspace;

/// Copies count device values into host memory at dst (no resize), on `s`.
template <class T>
Status copy_to_host(T* dst, const T* src, int64_t count, cudaStream_t s) {
  if (count > 0) FACTZ_CUDA_TRY(cudaMemcpyAsync(dst, src, size_t(count) * sizeof(T), cudaMemcpyDeviceToHost, s));
  return Status::Ok();
}

/// The escapes of one component, (index, code) in index order: a stable compaction of the
/// positions whose flag is set, and a gather of their codes.
Status escape_list(Workspace::Impl& ws, const uint8_t* flags, const int64_t* code, int64_t n, cudaStream_t s,
                   std::vector<std::pair<int64_t, int64_t>>& out) {
  int64_t *index = nullptr, *codes = nullptr, *d_count = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kIndex, size_t(n) * 8, index));
  FACTZ_RETURN_IF_ERROR(ws.get(kScalars, 64, d_count));
  const thrust::counting_iterator<int64_t> first(0);
  FACTZ_RETURN_IF_ERROR(cub_call(ws, [&](void* t, size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, first, flags, index, d_count, n, s);
  }));
  int64_t count = 0;
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  FACTZ_RETURN_IF_ERROR(ws.get(kGather, size_t(count) * 8, codes));
  FACTZ_RETURN_IF_ERROR(for_each(count, s, [=] __device__(int64_t e) { codes[e] = code[index[e]]; }));
  std::vector<int64_t> hi, hc;
  FACTZ_RETURN_IF_ERROR(to_host(hi, index, count, s));
  FACTZ_RETURN_IF_ERROR(to_host(hc, codes, count, s));
  out.resize(size_t(count));
  for (size_t e = 0; e < out.size(); ++e) out[e] = {hi[e], hc[e]};
  return Status::Ok();
}

}  // namespace

Status device_frontend_tiled3d(Workspace::Impl& ws, const float* u, const float* v, const float* w,
                               const uint8_t* missing, const detail::Stream3DPlan& p, cudaStream_t s,
                               detail::Tiled3DResult& r) {
  const Grid3D g{p.nx, p.ny, p.nz};
  const int64_t n = g.size(), cubes = g.cube_count();
  const detail::TileLayout3D L(p.nx, p.ny, p.nz);
  const int64_t tiles = L.tile_count();
  const float eb = p.eb;
  const Bounds B = bounds_of(eb);
  const bool block = p.options.mode == Mode::block;
  const Planes3 x{{u, v, w}};
  constexpr int kTileSlot[3] = {kTiles0, kTiles1, kTiles2}, kVidSlot[3] = {kVid0, kVid1, kVid2};
  constexpr int kReconSlot[3] = {kRecon0, kRecon1, kRecon2}, kExactSlot[3] = {kExact0, kExact1, kExact2};
  uint8_t *tid[3] = {}, *vid[3] = {}, *cp_free = nullptr;
  for (int c = 0; c < 3; ++c) FACTZ_RETURN_IF_ERROR(ws.get(kTileSlot[c], size_t(tiles), tid[c]));
  if (block) {
    // 1-3. Safe bounds per cube, gathered per vertex into bound ids; 4. tile ids.
    float* bounds = nullptr;
    if (cubes > 0) {
      FACTZ_RETURN_IF_ERROR(ws.get(kCubeBounds, size_t(24 * cubes) * sizeof(float), bounds));
      FACTZ_RETURN_IF_ERROR(ws.get(kCellFree, size_t(cubes), cp_free));
      uint8_t* free_bits = cp_free;
      FACTZ_RETURN_IF_ERROR(for_each(cubes, s, [=] __device__(int64_t cube) {
        cube_safe_bounds3d_body(g, cube, x, missing, eb, bounds, free_bits);
      }));
    }
    for (int c = 0; c < 3; ++c) FACTZ_RETURN_IF_ERROR(ws.get(kVidSlot[c], size_t(n), vid[c]));
    uint8_t *i0 = vid[0], *i1 = vid[1], *i2 = vid[2];
    FACTZ_RETURN_IF_ERROR(
        for_each(n, s, [=] __device__(int64_t k) { vertex_bound_ids3d_body(g, k, bounds, eb, i0, i1, i2); }));
    for (int c = 0; c < 3; ++c) {
      uint8_t* t_out = tid[c];
      const float* xc = x.c[c];
      const uint8_t* ids = vid[c];
      FACTZ_RETURN_IF_ERROR(
          for_each(tiles, s, [=] __device__(int64_t t) { t_out[t] = tile_id3d_body(L, t, xc, ids, eb); }));
    }
  } else {
    for (int c = 0; c < 3; ++c)
      FACTZ_CUDA_TRY(cudaMemsetAsync(tid[c], eb > 0.0f ? detail::kMaxBoundId : 0, size_t(tiles), s));
  }
  // Quantization and Lorenzo codes per component (the codes depend on the integers only,
  // which the repair keeps).
  float* recon[3] = {};
  uint8_t* exact[3] = {};
  int64_t *q = nullptr, *code = nullptr;
  uint16_t* sym = nullptr;
  uint8_t* esc = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kQ0, size_t(n) * 8, q));
  FACTZ_RETURN_IF_ERROR(ws.get(kCodes, size_t(n) * 8, code));
  FACTZ_RETURN_IF_ERROR(ws.get(kSymbols, size_t(n) * 2, sym));
  FACTZ_RETURN_IF_ERROR(ws.get(kFlags, size_t(n), esc));
  for (int c = 0; c < 3; ++c) {
    FACTZ_RETURN_IF_ERROR(ws.get(kReconSlot[c], size_t(n) * sizeof(float), recon[c]));
    FACTZ_RETURN_IF_ERROR(ws.get(kExactSlot[c], size_t(n), exact[c]));
    const float* xc = x.c[c];
    const uint8_t *tc = tid[c], *vc = block ? vid[c] : nullptr;
    float* rc = recon[c];
    uint8_t* ec = exact[c];
    FACTZ_RETURN_IF_ERROR(for_each(
        n, s, [=] __device__(int64_t k) { quantize_vertex3d_body(L, k, xc, tc, vc, missing, B.b, rc, ec, q); }));
    if (missing)  // one thread per tile: its missing vertices in order
      FACTZ_RETURN_IF_ERROR(for_each(
          tiles, s, [=] __device__(int64_t t) { missing_quant3d_body(L, t, tc, missing, B.b, rc, ec, q); }));
    FACTZ_RETURN_IF_ERROR(
        for_each(n, s, [=] __device__(int64_t k) { lorenzo_code3d_body(L, k, q, missing, sym, code, esc); }));
    r.symbols[c].resize(size_t(n));
    FACTZ_RETURN_IF_ERROR(copy_to_host(r.symbols[c].data(), sym, n, s));
    FACTZ_RETURN_IF_ERROR(escape_list(ws, esc, code, n, s, r.escapes[c]));  // synchronizes
    FACTZ_RETURN_IF_ERROR(to_host(r.tile_ids[c], tid[c], tiles, s));
  }
  // 5. The exact check on the decoder's values, and the repair rounds.
  if (block && cubes > 0) {
    uint8_t *bad = nullptr, *changed = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kBad, size_t(6 * cubes), bad));
    FACTZ_RETURN_IF_ERROR(ws.get(kChanged, size_t(n), changed));
    const Planes3 rec{{recon[0], recon[1], recon[2]}};
    const MutablePlanes3 rec_w{{recon[0], recon[1], recon[2]}};
    uint8_t *e0 = exact[0], *e1 = exact[1], *e2 = exact[2];
    const uint8_t* proven = cp_free;
    FACTZ_RETURN_IF_ERROR(
        for_each(cubes, s, [=] __device__(int64_t cube) { cube_check3d_body(g, cube, x, rec, proven, missing, bad); }));
    for (;;) {
      int64_t n_bad = 0;
      FACTZ_RETURN_IF_ERROR(count_if(ws, 6 * cubes, s, [=] __device__(int64_t t) { return bad[t] != 0; }, n_bad));
      if (n_bad == 0) break;
      FACTZ_RETURN_IF_ERROR(for_each(
          n, s, [=] __device__(int64_t k) { repair_vertex3d_body(g, k, bad, x, rec_w, e0, e1, e2, changed); }));
      FACTZ_RETURN_IF_ERROR(for_each(
          6 * cubes, s, [=] __device__(int64_t t) { tet_recheck3d_body(g, t, changed, x, rec, missing, bad); }));
    }
  }
  for (int c = 0; c < 3; ++c) {
    r.recon[c].resize(size_t(n));
    r.exact[c].resize(size_t(n));
    FACTZ_RETURN_IF_ERROR(copy_to_host(r.recon[c].data(), recon[c], n, s));
    FACTZ_RETURN_IF_ERROR(copy_to_host(r.exact[c].data(), exact[c], n, s));
  }
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

Status device_frontend_speculative3d(Workspace::Impl& ws, const float* u, const float* v, const float* w,
                                     const uint8_t* missing, const detail::Stream3DPlan& p, cudaStream_t s,
                                     detail::Speculative3DResult& r) {
  const Grid3D g{p.nx, p.ny, p.nz};
  const int64_t n = g.size(), cubes = g.cube_count();
  const Planes3 x{{u, v, w}};
  float *c0 = nullptr, *c1 = nullptr, *c2 = nullptr;
  uint8_t *ids = nullptr, *sig = nullptr;
  uint16_t *s0 = nullptr, *s1 = nullptr, *s2 = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(kRecon0, size_t(n) * sizeof(float), c0));
  FACTZ_RETURN_IF_ERROR(ws.get(kRecon1, size_t(n) * sizeof(float), c1));
  FACTZ_RETURN_IF_ERROR(ws.get(kRecon2, size_t(n) * sizeof(float), c2));
  FACTZ_RETURN_IF_ERROR(ws.get(kVid0, size_t(n), ids));
  FACTZ_RETURN_IF_ERROR(ws.get(kBad, size_t(6 * cubes), sig));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymU, size_t(n) * 2, s0));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymV, size_t(n) * 2, s1));
  FACTZ_RETURN_IF_ERROR(ws.get(kSpecSymW, size_t(n) * 2, s2));
  const MutablePlanes3 cur{{c0, c1, c2}};
  FACTZ_RETURN_IF_ERROR(
      for_each(n, s, [=] __device__(int64_t k) { speculative3d_init_body(k, x, missing, cur, ids, s0, s1, s2); }));
  FACTZ_RETURN_IF_ERROR(
      for_each(cubes, s, [=] __device__(int64_t cube) { mesh_signatures3d_body(g, cube, x, missing, sig); }));
  const Bounds B = bounds_of(p.eb);
  detail::PhaseSchedule3D schedule(p.nx, p.ny, p.nz, p.options.anchor_stride, p.along.empty() ? nullptr : p.along.data());
  for (detail::ScheduledPhase3D ph; schedule.next(ph);)
    FACTZ_RETURN_IF_ERROR(for_each(ph.lattice.count(), s, [=] __device__(int64_t t) {
      speculate_target3d_body(g, ph, t, x, missing, cur, sig, B.b, ids, s0, s1, s2);
    }));
  r.id.resize(size_t(n));
  FACTZ_RETURN_IF_ERROR(copy_to_host(r.id.data(), ids, n, s));
  uint16_t* sym[3] = {s0, s1, s2};
  for (int c = 0; c < 3; ++c) {
    r.sym[c].resize(size_t(n));
    FACTZ_RETURN_IF_ERROR(copy_to_host(r.sym[c].data(), sym[c], n, s));
  }
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

}  // namespace factz::cuda_detail
