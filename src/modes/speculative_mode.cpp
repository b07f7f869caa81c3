#include "modes/speculative_mode.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "codec/coder.hpp"
#include "util/byte_io.hpp"
#include "kernels/speculation.hpp"
#include "modes/frontend.hpp"
#include "modes/tiled_quantizer.hpp"

namespace factz::detail {
namespace {

/// Levels s0/2, ..., 1 and their three phases, in stream order.
template <class F>
void for_each_phase(int64_t anchor_stride, F&& f) {
  for (int64_t step = anchor_stride / 2; step >= 1; step /= 2)
    for (Phase p : {Phase::horizontal, Phase::vertical, Phase::center}) f(step, p);
}

}  // namespace

void run_speculative(const VectorField2D& f, float eb, int64_t s0, int threads, bool check, SpeculativeResult& out,
                     uint8_t exact_edges) {
  const Grid2D g{f.nx, f.ny};
  const int64_t n = f.size(), cw = g.nx - 1;
  out.recon_u.resize(size_t(n));
  out.recon_v.resize(size_t(n));
  out.id.resize(size_t(n));
  out.sym_u.resize(size_t(n));
  out.sym_v.resize(size_t(n));
  BigVector<uint8_t> sig(static_cast<size_t>(g.triangle_count()));
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (int64_t k = 0; k < n; ++k) {
      out.recon_u[size_t(k)] = f.u[size_t(k)];  // the current state starts as the original
      out.recon_v[size_t(k)] = f.v[size_t(k)];
      out.id[size_t(k)] = 0;
      out.sym_u[size_t(k)] = out.sym_v[size_t(k)] = 0;
    }
#pragma omp for schedule(static)
    for (int64_t i = 0; i < g.ny - 1; ++i)
      for (int64_t j = 0; j < cw; ++j) cell_signatures(g, i, j, f.u.data(), f.v.data(), &sig[size_t(2 * (i * cw + j))]);
  }
  float bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  float* cur_u = out.recon_u.data();
  float* cur_v = out.recon_v.data();
  for_each_phase(s0, [&](int64_t step, Phase phase) {
    const PhaseLattice L = phase_lattice(g.nx, g.ny, step, phase);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
    for (int64_t t = 0; t < L.count(); ++t) {
      const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
      const int64_t k = y * g.nx + x;
      if (exact_edges && on_exact_edge(x, y, g.nx, g.ny, exact_edges)) {
        // Kept as is (the current state already holds the original); a +0, +0 vector takes
        // the zero-vector id, which reproduces exactly those bits.
        const bool zero = std::bit_cast<uint32_t>(cur_u[k]) == 0 && std::bit_cast<uint32_t>(cur_v[k]) == 0;
        out.id[size_t(k)] = uint8_t(zero ? kZeroVectorId : 0);
        continue;
      }
      const Speculation sp = speculate_vertex(g, x, y, step, phase, f.u.data(), f.v.data(), cur_u, cur_v,
                                              sig.data(), bound, kRadius, check);
      // The commit is the first write-back: targets of a phase share no triangle.
      cur_u[k] = sp.recon_u;
      cur_v[k] = sp.recon_v;
      out.id[size_t(k)] = sp.id;
      out.sym_u[size_t(k)] = uint16_t(sp.code_u + kRadius);
      out.sym_v[size_t(k)] = uint16_t(sp.code_v + kRadius);
    }
  });
  int64_t exact = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : exact)
  for (int64_t k = 0; k < n; ++k) exact += out.id[size_t(k)] == 0 || out.id[size_t(k)] == kZeroVectorId;
  out.exact_vertices = exact;
}

namespace {

constexpr uint32_t kIdsSection = kSectionBoundIdsU;

}  // namespace

Status speculative_sections(const VectorField2D& f, int64_t s0, const SpeculativeResult& r, EntropyCoder coder,
                            int threads, std::vector<Section>& sections) {
  const int64_t nx = f.nx, ny = f.ny;
  std::vector<uint16_t> ids, cu, cv;
  ByteWriter exact;
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  for (int64_t j = 0; j < A.count_y; ++j)
    for (int64_t i = 0; i < A.count_x; ++i) {
      const int64_t k = (j * A.dy) * nx + i * A.dx;
      exact.f32(f.u[size_t(k)]);
      exact.f32(f.v[size_t(k)]);
    }
  ids.reserve(size_t(f.size() - A.count()));
  for_each_phase(s0, [&](int64_t step, Phase phase) {
    const PhaseLattice L = phase_lattice(nx, ny, step, phase);
    for (int64_t t = 0; t < L.count(); ++t) {
      const int64_t k = (L.y0 + (t / L.count_x) * L.dy) * nx + L.x0 + (t % L.count_x) * L.dx;
      const uint8_t id = r.id[size_t(k)];
      ids.push_back(id);
      if (id >= 1 && id <= kMaxBoundId) {
        cu.push_back(r.sym_u[size_t(k)]);
        cv.push_back(r.sym_v[size_t(k)]);
      } else if (id == 0) {
        exact.f32(f.u[size_t(k)]);
        exact.f32(f.v[size_t(k)]);
      }
    }
  });
  ByteWriter meta;
  meta.u8(uint8_t(kMaxBoundId));
  meta.u32(uint32_t(kRadius));
  std::vector<uint8_t> hid, hu, hv;
  FACTZ_RETURN_IF_ERROR(entropy_encode(coder, ids, 0, hid, threads));
  FACTZ_RETURN_IF_ERROR(entropy_encode(coder, cu, kAnsCodeCenter, hu, threads));
  FACTZ_RETURN_IF_ERROR(entropy_encode(coder, cv, kAnsCodeCenter, hv, threads));
  sections.push_back({kSectionMeta, std::move(meta.bytes())});
  sections.push_back({kSectionCodesU, std::move(hu)});
  sections.push_back({kSectionCodesV, std::move(hv)});
  sections.push_back({kSectionExactValues, std::move(exact.bytes())});
  sections.push_back({kIdsSection, std::move(hid)});
  return Status::Ok();
}

Status decode_speculative(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd,
                          int threads, std::span<float> u, std::span<float> v) {
  const Header& h = pc.header;
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), n = nx * ny;
  const int64_t s0 = h.anchor_stride;
  if (s0 < 2 || s0 > kMaxAnchorStride || (s0 & (s0 - 1)) != 0)
    return corrupt_stream("anchor stride " + std::to_string(s0) + " is not a power of two in [2, 4096]");
  if (int64_t(u.size()) != n || int64_t(v.size()) != n) return invalid_argument("output planes have the wrong size");
  auto section = [&](uint32_t id) { return read_section(stream, pc, id, zstd); };
  auto meta = section(kSectionMeta);
  if (!meta.ok()) return meta.status();
  {
    ByteReader r(meta.value());
    uint8_t max_id;
    uint32_t radius;
    if (!r.u8(max_id) || !r.u32(radius) || !r.at_end() || max_id != kMaxBoundId || radius != uint32_t(kRadius))
      return corrupt_stream("meta section is not that of format v1");
  }
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  const int64_t targets = n - A.count();
  auto hid = section(kIdsSection);
  if (!hid.ok()) return hid.status();
  std::vector<uint16_t> ids(static_cast<size_t>(targets));
  const auto coder = EntropyCoder(h.coder);
  FACTZ_RETURN_IF_ERROR(entropy_decode(coder, hid.value(), 0, ids, threads));
  int64_t n_codes = 0, n_exact = A.count();
  for (uint16_t id : ids) {
    if (id > kMaxBoundId && id != kZeroVectorId) return corrupt_stream("bound id out of range");
    n_codes += id >= 1 && id <= kMaxBoundId;
    n_exact += id == 0;
  }
  std::vector<uint16_t> cu(static_cast<size_t>(n_codes)), cv(static_cast<size_t>(n_codes));
  for (auto [sid, dst] : {std::pair{kSectionCodesU, &cu}, std::pair{kSectionCodesV, &cv}}) {
    auto s = section(sid);
    if (!s.ok()) return s.status();
    FACTZ_RETURN_IF_ERROR(entropy_decode(coder, s.value(), kAnsCodeCenter, *dst, threads));
  }
  auto ex = section(kSectionExactValues);
  if (!ex.ok()) return ex.status();
  if (uint64_t(ex.value().size()) != uint64_t(n_exact) * 8) return corrupt_stream("exact value count does not match the bound ids");
  std::vector<float> exact(static_cast<size_t>(2 * n_exact));
  {
    ByteReader r(ex.value());
    for (float& x : exact) {
      if (!r.f32(x)) return corrupt_stream("exact values truncated");
      if (!std::isfinite(x)) return corrupt_stream("exact value is not finite");
    }
  }
  for (int64_t j = 0; j < A.count_y; ++j)
    for (int64_t i = 0; i < A.count_x; ++i) {
      const int64_t a = j * A.count_x + i, k = (j * A.dy) * nx + i * A.dx;
      u[size_t(k)] = exact[size_t(2 * a)];
      v[size_t(k)] = exact[size_t(2 * a + 1)];
    }
  const float eb = h.eb;
  float bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  int64_t id_pos = 0, code_pos = 0, exact_pos = A.count();
  int bad = 0;
  for_each_phase(s0, [&](int64_t step, Phase phase) {
    const PhaseLattice L = phase_lattice(nx, ny, step, phase);
    // Offsets of each lattice row into the code and exact streams (a serial scan of ids).
    std::vector<int64_t> code_off(size_t(L.count_y) + 1), exact_off(size_t(L.count_y) + 1);
    code_off[0] = code_pos;
    exact_off[0] = exact_pos;
    for (int64_t j = 0; j < L.count_y; ++j) {
      int64_t c = 0, e = 0;
      for (int64_t i = 0; i < L.count_x; ++i) {
        const uint16_t id = ids[size_t(id_pos + j * L.count_x + i)];
        c += id >= 1 && id <= kMaxBoundId;
        e += id == 0;
      }
      code_off[size_t(j) + 1] = code_off[size_t(j)] + c;
      exact_off[size_t(j) + 1] = exact_off[size_t(j)] + e;
    }
#pragma omp parallel for schedule(static) num_threads(threads) reduction(| : bad)
    for (int64_t j = 0; j < L.count_y; ++j) {
      int64_t c = code_off[size_t(j)], e = exact_off[size_t(j)];
      const int64_t y = L.y0 + j * L.dy;
      for (int64_t i = 0; i < L.count_x; ++i) {
        const int64_t x = L.x0 + i * L.dx, k = y * nx + x;
        const uint16_t id = ids[size_t(id_pos + j * L.count_x + i)];
        if (id == kZeroVectorId) {
          u[size_t(k)] = v[size_t(k)] = 0.0f;
        } else if (id == 0) {
          u[size_t(k)] = exact[size_t(2 * e)];
          v[size_t(k)] = exact[size_t(2 * e + 1)];
          ++e;
        } else {
          const float pu = predict(u.data(), nx, ny, x, y, step, phase);
          const float pv = predict(v.data(), nx, ny, x, y, step, phase);
          const float ru = dequantize_residual(pu, bound[id], int32_t(cu[size_t(c)]) - kRadius);
          const float rv = dequantize_residual(pv, bound[id], int32_t(cv[size_t(c)]) - kRadius);
          if (!std::isfinite(ru) || !std::isfinite(rv)) bad = 1;
          u[size_t(k)] = ru;
          v[size_t(k)] = rv;
          ++c;
        }
      }
    }
    id_pos += L.count();
    code_pos = code_off.back();
    exact_pos = exact_off.back();
  });
  if (bad) return corrupt_stream("decoded value is not finite");
  return Status::Ok();
}

}  // namespace factz::detail
