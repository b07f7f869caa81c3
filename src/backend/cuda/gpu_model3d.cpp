#include "backend/cuda/gpu_model3d.hpp"

#include "backend/cuda/block3d_bodies.hpp"
#include "backend/cuda/speculative3d_bodies.hpp"

namespace factz::cuda_detail {
namespace {

/// bound_of_id for every id (the kernels' BoundsOf table).
void bound_table(float eb, float bound[detail::kMaxBoundId + 1]) {
  for (int id = 0; id <= detail::kMaxBoundId; ++id) bound[id] = detail::bound_of_id(eb, id);
}

}  // namespace

Status model_tiled3d(const VectorField3D& f, const detail::Stream3DPlan& p, const uint8_t* missing,
                     detail::Tiled3DResult& r) {
  const Grid3D g{f.nx, f.ny, f.nz};
  const int64_t n = g.size(), cubes = g.cube_count();
  const detail::TileLayout3D L(f.nx, f.ny, f.nz);
  const int64_t tiles = L.tile_count();
  const float eb = p.eb;
  const bool block = p.options.mode == Mode::block;
  float bound[detail::kMaxBoundId + 1];
  bound_table(eb, bound);
  const Planes3 x{{f.u.data(), f.v.data(), f.w.data()}};
  // Launch order of device_frontend_tiled3d (cuda_compress3d.cu).
  std::vector<uint8_t> ids[3], cp_free;
  if (block) {
    std::vector<float> cube_bounds(static_cast<size_t>(24 * cubes));
    cp_free.resize(size_t(cubes));
    for (int64_t cube = 0; cube < cubes; ++cube)
      cube_safe_bounds3d_body(g, cube, x, missing, eb, cube_bounds.data(), cp_free.data());
    for (auto& id : ids) id.resize(size_t(n));
    for (int64_t k = 0; k < n; ++k)
      vertex_bound_ids3d_body(g, k, cubes > 0 ? cube_bounds.data() : nullptr, eb, ids[0].data(), ids[1].data(),
                              ids[2].data());
    for (int c = 0; c < 3; ++c) {
      r.tile_ids[c].resize(size_t(tiles));
      for (int64_t t = 0; t < tiles; ++t) r.tile_ids[c][size_t(t)] = tile_id3d_body(L, t, x.c[c], ids[c].data(), eb);
    }
  } else {
    for (auto& t : r.tile_ids) t.assign(size_t(tiles), uint8_t(eb > 0.0f ? detail::kMaxBoundId : 0));
  }
  std::vector<int64_t> q(static_cast<size_t>(n)), code(static_cast<size_t>(n));
  std::vector<uint8_t> escape(static_cast<size_t>(n));
  for (int c = 0; c < 3; ++c) {
    r.recon[c].resize(size_t(n));
    r.exact[c].resize(size_t(n));
    r.symbols[c].resize(size_t(n));
    for (int64_t k = 0; k < n; ++k)
      quantize_vertex3d_body(L, k, x.c[c], r.tile_ids[c].data(), block ? ids[c].data() : nullptr, missing, bound,
                             r.recon[c].data(), r.exact[c].data(), q.data());
    if (missing)
      for (int64_t t = 0; t < tiles; ++t)
        missing_quant3d_body(L, t, r.tile_ids[c].data(), missing, bound, r.recon[c].data(), r.exact[c].data(),
                             q.data());
    for (int64_t k = 0; k < n; ++k)
      lorenzo_code3d_body(L, k, q.data(), missing, r.symbols[c].data(), code.data(), escape.data());
    r.escapes[c].clear();  // the device's stable compaction of the escape flags
    for (int64_t k = 0; k < n; ++k)
      if (escape[size_t(k)]) r.escapes[c].emplace_back(k, code[size_t(k)]);
  }
  if (!block || cubes == 0) return Status::Ok();
  // The exact check and its repair rounds as flag sweeps.
  const Planes3 rec{{r.recon[0].data(), r.recon[1].data(), r.recon[2].data()}};
  const MutablePlanes3 rec_w{{r.recon[0].data(), r.recon[1].data(), r.recon[2].data()}};
  std::vector<uint8_t> bad(static_cast<size_t>(6 * cubes)), changed(static_cast<size_t>(n));
  for (int64_t cube = 0; cube < cubes; ++cube) cube_check3d_body(g, cube, x, rec, cp_free.data(), missing, bad.data());
  for (;;) {
    int64_t n_bad = 0;
    for (uint8_t b : bad) n_bad += b != 0;
    if (n_bad == 0) break;
    for (int64_t k = 0; k < n; ++k)
      repair_vertex3d_body(g, k, bad.data(), x, rec_w, r.exact[0].data(), r.exact[1].data(), r.exact[2].data(),
                           changed.data());
    for (int64_t t = 0; t < 6 * cubes; ++t) tet_recheck3d_body(g, t, changed.data(), x, rec, missing, bad.data());
  }
  return Status::Ok();
}

Status model_speculative3d(const VectorField3D& f, const detail::Stream3DPlan& p, const uint8_t* missing,
                           detail::Speculative3DResult& r) {
  const Grid3D g{f.nx, f.ny, f.nz};
  const int64_t n = g.size(), cubes = g.cube_count();
  const Planes3 x{{f.u.data(), f.v.data(), f.w.data()}};
  for (int c = 0; c < 3; ++c) {
    r.recon[c].resize(size_t(n));
    r.sym[c].resize(size_t(n));
  }
  r.id.resize(size_t(n));
  const MutablePlanes3 cur{{r.recon[0].data(), r.recon[1].data(), r.recon[2].data()}};
  uint16_t *s0 = r.sym[0].data(), *s1 = r.sym[1].data(), *s2 = r.sym[2].data();
  for (int64_t k = 0; k < n; ++k) speculative3d_init_body(k, x, missing, cur, r.id.data(), s0, s1, s2);
  std::vector<uint8_t> sig(static_cast<size_t>(6 * cubes));
  for (int64_t cube = 0; cube < cubes; ++cube) mesh_signatures3d_body(g, cube, x, missing, sig.data());
  float bound[detail::kMaxBoundId + 1];
  bound_table(p.eb, bound);
  detail::PhaseSchedule3D schedule(f.nx, f.ny, f.nz, p.options.anchor_stride, p.along.empty() ? nullptr : p.along.data());
  for (detail::ScheduledPhase3D ph; schedule.next(ph);)
    for (int64_t t = 0; t < ph.lattice.count(); ++t)
      speculate_target3d_body(g, ph, t, x, missing, cur, sig.data(), bound, r.id.data(), s0, s1, s2);
  return Status::Ok();
}

Status model_decode_tiled3d(const detail::Header& h, const detail::Tiled3DInput& in, std::span<float> u,
                            std::span<float> v, std::span<float> w) {
  const Grid3D g{int64_t(h.nx), int64_t(h.ny), int64_t(h.nz)};
  const int64_t n = g.size();
  const detail::TileLayout3D L(g.nx, g.ny, g.nz);
  float* const out[3] = {u.data(), v.data(), w.data()};
  std::vector<uint64_t> q(static_cast<size_t>(n));
  for (int c = 0; c < 3; ++c) {
    int bad = 0, nonfinite = 0;
    const auto& oi = in.outlier_index[c];
    for (int64_t k = 0; k < n; ++k)
      tiled3d_code_body(k, in.symbols[c].data(), oi.data(), in.outlier_code[c].data(), int64_t(oi.size()), q.data(),
                        &bad);
    for (int axis = 0; axis < 3; ++axis)
      for (int64_t line = 0; line < line_count3d(g, axis); ++line) tile_prefix_line3d_body(g, axis, line, q.data());
    const uint8_t* ids = in.tile_ids.data() + c * L.tile_count();
    for (int64_t k = 0; k < n; ++k) tiled3d_value_body(L, k, q.data(), ids, in.eb, out[c], &bad, &nonfinite);
    if (bad) return corrupt_stream("decoded value out of range");
    for (size_t e = 0; e < in.exact_index[c].size(); ++e) out[c][in.exact_index[c][e]] = in.exact_value[c][e];
    if (nonfinite)
      for (int64_t k = 0; k < n; ++k)
        if (!detail::finite_value(out[c][k])) return corrupt_stream("decoded value out of range");
  }
  return Status::Ok();
}

Status model_decode_speculative3d(const detail::Header& h, const detail::Speculative3DInput& in, std::span<float> u,
                                  std::span<float> v, std::span<float> w) {
  const Grid3D g{int64_t(h.nx), int64_t(h.ny), int64_t(h.nz)};
  const MutablePlanes3 out{{u.data(), v.data(), w.data()}};
  const detail::PhaseLattice3D A = detail::anchor_lattice3d(g.nx, g.ny, g.nz, h.anchor_stride);
  for (int64_t a = 0; a < A.count(); ++a) decode_anchor3d_body(A, g.nx, g.ny, a, in.exact.data(), out);
  // The device's exclusive scans of the id flags.
  const int64_t targets = int64_t(in.ids.size());
  std::vector<int64_t> code_at(static_cast<size_t>(targets)), exact_at(static_cast<size_t>(targets));
  int64_t codes = 0, exact = A.count();
  for (int64_t i = 0; i < targets; ++i) {
    code_at[size_t(i)] = codes;
    exact_at[size_t(i)] = exact;
    codes += id_coded3d(in.ids[size_t(i)]);
    exact += id_exact3d(in.ids[size_t(i)]);
  }
  float bound[detail::kMaxBoundId + 1];
  bound_table(in.eb, bound);
  int bad = 0;
  detail::PhaseSchedule3D schedule(g.nx, g.ny, g.nz, h.anchor_stride, in.along.empty() ? nullptr : in.along.data());
  for (detail::ScheduledPhase3D ph; schedule.next(ph);)
    for (int64_t t = 0; t < ph.lattice.count(); ++t)
      decode_target3d_body(g, ph, t, in.ids.data(), code_at.data(), exact_at.data(), in.codes[0].data(),
                           in.codes[1].data(), in.codes[2].data(), in.exact.data(), bound, out, &bad);
  if (bad) return corrupt_stream("a decoded value is not finite, or a bound id is out of range");
  return Status::Ok();
}

Result<std::vector<uint8_t>> model_compress3d(const VectorField3D& f, const Options& o) {
  return compress3d_with(f, o, Frontends3D{model_tiled3d, model_speculative3d});
}

Result<VectorField3D> model_decompress3d(std::span<const uint8_t> stream) {
  auto dims = stream_dims3d(stream);
  if (!dims.ok()) return dims.status();
  VectorField3D f;
  f.nx = (*dims)[0];
  f.ny = (*dims)[1];
  f.nz = (*dims)[2];
  f.u.resize(size_t(f.size()));
  f.v.resize(size_t(f.size()));
  f.w.resize(size_t(f.size()));
  FACTZ_RETURN_IF_ERROR(
      decompress3d_with(stream, f.u, f.v, f.w, &f.mask, Decoders3D{model_decode_tiled3d, model_decode_speculative3d}));
  return f;
}

}  // namespace factz::cuda_detail
