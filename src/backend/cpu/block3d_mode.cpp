#include "backend/cpu/block3d_mode.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#include "kernels/block_bounds.hpp"
#include "kernels/cube_signatures3d.hpp"
#include "kernels/exact_faces3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound3d.hpp"
#include "kernels/speculation3d.hpp"  // incident_tets
#include "kernels/tet.hpp"
#include "kernels/tet64.hpp"
#include "kernels/tile_decode.hpp"
#include "kernels/tiles3d.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {
namespace {

/// Loops over fewer elements than this run on the calling thread (a parallel region costs
/// more than it saves there); results never depend on it.
constexpr int64_t kMinParallel = 8192;

/// Index offsets of a cube's eight corners: corner j adds one step along each axis whose
/// bit is set in j (the corner numbering of kernels/safe_bound3d.hpp cube_safe_bounds).
void cube_offsets(int64_t nx, int64_t ny, int64_t off[8]) {
  for (int j = 0; j < 8; ++j) off[j] = (j & 1) + ((j >> 1) & 1) * nx + ((j >> 2) & 1) * nx * ny;
}

/// Quantizes component c of the field with its tile ids and, per vertex, the bound of
/// `vertex_ids` (null: the tile's own bound, mode none), one tile per task: the decoder's
/// values and exact flags (kernels/tiles.hpp quantize_tiled_vertex, the 2D backbone's rule),
/// and the symbols of the integers' 3D Lorenzo codes inside the tile (escapes kept, sorted by
/// index). Storing a vertex exactly later keeps its integer, so the symbols stay valid.
///
/// A missing vertex (`missing`, null for none; x is then the filled working copy's value)
/// takes its Lorenzo prediction as its integer (missing_vertex_quant: code 0, nearly free), the
/// decoder's value of that integer, and is never stored exactly (the mask section holds its
/// bits); its symbol is implied (tiled_symbol: an escape where its code is not 0).
template <class T>
void quantize_plane3d(const T* x, const TileLayout3D& L, T eb, const uint8_t* vertex_ids, int threads,
                      Tiled3DResultOf<T>& out, int c, const uint8_t* missing) {
  const int64_t n = L.nx * L.ny * L.nz, nx = L.nx, sz = L.nx * L.ny;
  out.recon[c].resize(size_t(n));
  out.exact[c].resize(size_t(n));
  out.symbols[c].resize(size_t(n));
  T* const recon = out.recon[c].data();
  uint8_t* const exact = out.exact[c].data();
  uint16_t* const symbols = out.symbols[c].data();
  const uint8_t* const tile_ids = out.tile_ids[c].data();
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> escapes(size_t(L.tile_count()));
#pragma omp parallel num_threads(threads) if (n >= kMinParallel)
  {
    std::vector<int64_t> q(static_cast<size_t>(kTile3DVolume));
#pragma omp for schedule(dynamic, 4)
    for (int64_t t = 0; t < L.tile_count(); ++t) {
      int64_t lo[3], hi[3];
      L.box(t, lo, hi);
      const int id = tile_ids[t];
      const T step = T(2) * bound[id];
      for (int64_t z = lo[2]; z < hi[2]; ++z)
        for (int64_t y = lo[1]; y < hi[1]; ++y)
          for (int64_t xi = lo[0]; xi < hi[0]; ++xi) {
            const int64_t i = xi - lo[0], j = y - lo[1], l = z - lo[2], k = z * sz + y * nx + xi;
            int64_t& here = q[size_t((l * kTile3D + j) * kTile3D + i)];
            const int64_t pred = tile_lorenzo3d(q.data(), i, j, l);
            const bool miss = missing && missing[k];
            if (miss) {
              here = missing_vertex_quant(pred, step);
              recon[k] = reconstruct(int32_t(here), step);
              exact[k] = 0;
            } else {
              const TiledValue<T> tv = quantize_tiled_vertex(x[k], id, step, bound[vertex_ids ? vertex_ids[k] : id]);
              recon[k] = tv.recon;
              exact[k] = tv.exact ? 1 : 0;
              here = tv.q;
            }
            const int64_t code = here - pred;
            const uint16_t symbol = tiled_symbol(code, miss);
            symbols[k] = symbol;
            if (symbol == 0) escapes[size_t(t)].emplace_back(k, code);
          }
    }
  }
  out.escapes[c].clear();
  for (const auto& e : escapes) out.escapes[c].insert(out.escapes[c].end(), e.begin(), e.end());
  std::sort(out.escapes[c].begin(), out.escapes[c].end());
}

/// Stores every component of the vertices on the faces named by `faces` exactly, unless its
/// reconstruction already has the original's bits (a -0 is not a +0): then the decoder
/// reproduces it whatever the tile's bound. A face vertex then decodes to the original's bits
/// in every block holding it (docs/multiblock.md, Lemma 3 in 3D). Exact components keep their
/// integer for prediction, so no other vertex's value changes. Missing vertices are left
/// alone: the mask section restores their bits.
template <class Field, class T>
void force_exact_faces3d(const Field& f, uint8_t faces, const uint8_t* missing, Tiled3DResultOf<T>& out) {
  if (!faces) return;
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  const T* const x[3] = {f.u.data(), f.v.data(), f.w.data()};
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y) {
      // A row off the y and z faces holds at most its two x ends: step over its inside.
      const bool row_on_face = ((faces & 4) && y == 0) || ((faces & 8) && y == f.ny - 1) || ((faces & 16) && z == 0) ||
                               ((faces & 32) && z == f.nz - 1);
      const int64_t step = row_on_face || f.nx < 2 ? 1 : f.nx - 1;
      for (int64_t xi = 0; xi < f.nx; xi += step) {
        if (!on_exact_face(xi, y, z, f.nx, f.ny, f.nz, faces)) continue;
        const int64_t k = (z * f.ny + y) * f.nx + xi;
        if (missing && missing[k]) continue;
        for (int c = 0; c < 3; ++c) {
          if (std::bit_cast<Bits>(out.recon[c][size_t(k)]) == std::bit_cast<Bits>(x[c][k])) continue;
          out.exact[c][size_t(k)] = 1;
          out.recon[c][size_t(k)] = x[c][k];
        }
      }
    }
}

template <class Field, class T>
void count_exact(const Field& f, int threads, Tiled3DResultOf<T>& out) {
  const int64_t n = f.size();
  int64_t count = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : count) if (n >= kMinParallel)
  for (int64_t k = 0; k < n; ++k) count += (out.exact[0][size_t(k)] | out.exact[1][size_t(k)] | out.exact[2][size_t(k)]) != 0;
  out.exact_vertices = count;
}

/// Step 1-2 of FaCTz-B: every cube's six tetrahedra's absolute bounds per vertex and
/// component (kernels/safe_bound3d.hpp) folded into the per-vertex minimum xv[3 k + c] (eb
/// where no tetrahedron constrains; the three components of a vertex side by side, one cache
/// line per corner). Cube layers z of one parity share no vertex, so each
/// parity runs in parallel over its layers without races (a grid of few layers splits them
/// further: rows (y, z) of equal parities share no vertex either); min is order-free, so the
/// result does not depend on the split. cp_free[cube]: bit t set when tetrahedron t is
/// proven critical-point free. A tetrahedron touching a missing vertex (`missing`, null for
/// none) is not part of the mesh: it constrains nothing.
template <class Field, class T>
void safe_bounds3d(const Field& f, T eb, int threads, BigVector<T>& xv, BigVector<uint8_t>& cp_free,
                   const uint8_t* missing) {
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz, n = f.size();
  xv.resize(size_t(3 * n));
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kMinParallel)
  for (int64_t k = 0; k < 3 * n; ++k) xv[size_t(k)] = eb;
  if (tet_count(nx, ny, nz) == 0) return;
  const int64_t cx = nx - 1, cy = ny - 1, cz = nz - 1;
  cp_free.resize(size_t(cx * cy * cz));
  int64_t off[8];
  cube_offsets(nx, ny, off);
  auto cube_row = [&](int64_t y, int64_t z) {
    for (int64_t x = 0; x < cx; ++x) {
      const int64_t base = (z * ny + y) * nx + x;
      T b[8][3];
      cp_free[size_t((z * cy + y) * cx + x)] =
          cube_safe_bounds(f.u.data(), f.v.data(), f.w.data(), base, nx, ny, eb, b, cube_masked_tets(missing, base, nx, ny));
      for (int j = 0; j < 8; ++j) {
        T* m = &xv[size_t(3 * (base + off[j]))];
        for (int c = 0; c < 3; ++c) m[c] = std::min(m[c], b[j][c]);
      }
    }
  };
  const bool parallel = cx * cy * cz >= kMinParallel;
  if (cz >= 4 * int64_t(threads)) {  // whole layers per task
    for (int pz = 0; pz < 2; ++pz) {
      const int64_t rz = (cz - pz + 1) / 2;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (parallel)
      for (int64_t l = 0; l < rz; ++l)
        for (int64_t y = 0; y < cy; ++y) cube_row(y, pz + 2 * l);
    }
    return;
  }
  for (int pz = 0; pz < 2; ++pz)
    for (int py = 0; py < 2; ++py) {
      const int64_t ry = (cy - py + 1) / 2, rz = (cz - pz + 1) / 2;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) if (parallel)
      for (int64_t r = 0; r < ry * rz; ++r) cube_row(py + 2 * (r % ry), pz + 2 * (r / ry));
    }
}

/// Step 5: the exact check on the decoder's values, with repair. Round 1 compares every
/// tetrahedron's signature on out.recon with the original's (0 where cp_free proves it,
/// derived otherwise); each later round stores the vertices of the differing tetrahedra
/// exactly (all three components: then that vertex's value is the original's) and checks the
/// tetrahedra around them again, until none differs. It ends: a tetrahedron whose four
/// vertices are exact has the original's values and indices, hence its signature. Storing a
/// vertex exactly changes no other vertex's value (a value depends on its own integer only).
/// Tetrahedra touching a missing vertex (`missing`, null for none) are never checked, so a
/// missing vertex is never stored exactly.
template <class Field, class T>
void repair_signatures3d(const Field& f, const uint8_t* cp_free, int threads, Tiled3DResultOf<T>& out,
                         const uint8_t* missing) {
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz;
  if (tet_count(nx, ny, nz) == 0) {
    out.repair_rounds = 1;
    return;
  }
  const int64_t cx = nx - 1, cy = ny - 1, rows = cy * (nz - 1);
  const T* const orig[3] = {f.u.data(), f.v.data(), f.w.data()};
  const T* const rec[3] = {out.recon[0].data(), out.recon[1].data(), out.recon[2].data()};
  int64_t off[8];
  cube_offsets(nx, ny, off);
  std::vector<int64_t> bad;
#pragma omp parallel num_threads(threads) if (rows * cx >= kMinParallel)
  {
    std::vector<int64_t> local;
#pragma omp for schedule(dynamic, 8) nowait
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t y = r % cy, z = r / cy;
      for (int64_t x = 0; x < cx; ++x) {
        const int64_t base = (z * ny + y) * nx + x, cube = (z * cy + y) * cx + x;
        // Tetrahedra touching a missing vertex are not part of the mesh: never checked.
        const uint8_t which =
            changed_cube_tets3d(orig, rec, base, off) & uint8_t(~cube_masked_tets(missing, base, nx, ny));
        if (which == 0) continue;
        uint8_t s[6] = {0, 0, 0, 0, 0, 0}, o[6] = {0, 0, 0, 0, 0, 0};
        check_cube_signatures3d(rec, base, off, which, s);
        // The original's signature is 0 where a safe bound proved it, derived otherwise.
        const uint8_t unproven = cp_free ? uint8_t(which & ~cp_free[size_t(cube)]) : which;
        if (unproven) check_cube_signatures3d(orig, base, off, unproven, o);
        for (int t = 0; t < 6; ++t)
          if (((which >> t) & 1) && s[t] != o[t]) local.push_back(6 * cube + t);
      }
    }
#pragma omp critical
    bad.insert(bad.end(), local.begin(), local.end());
  }
  std::sort(bad.begin(), bad.end());  // the order of the threads' lists is not fixed
  out.repair_rounds = 1;
  T* const recw[3] = {out.recon[0].data(), out.recon[1].data(), out.recon[2].data()};
  while (!bad.empty()) {
    std::vector<int64_t> changed;
    for (int64_t t : bad) {
      int64_t idx[4];
      int axes[3];
      tet_vertices(nx, ny, t, idx, axes);
      for (int64_t k : idx) {
        bool all = true;
        for (int c = 0; c < 3; ++c) all = all && out.exact[c][size_t(k)];
        if (all) continue;
        for (int c = 0; c < 3; ++c) {
          out.exact[c][size_t(k)] = 1;
          recw[c][k] = orig[c][k];
        }
        changed.push_back(k);
      }
    }
    out.repaired_vertices += int64_t(changed.size());
    std::vector<int64_t> recheck;
    for (int64_t k : changed) {
      int64_t tets[24];
      const int m = incident_tets(nx, ny, nz, k % nx, (k / nx) % ny, k / (nx * ny), tets);
      recheck.insert(recheck.end(), tets, tets + m);
    }
    std::sort(recheck.begin(), recheck.end());
    recheck.erase(std::unique(recheck.begin(), recheck.end()), recheck.end());
    bad.clear();
    for (int64_t t : recheck) {
      int64_t idx[4];
      int axes[3];
      tet_vertices(nx, ny, t, idx, axes);
      if (missing && (missing[idx[0]] || missing[idx[1]] || missing[idx[2]] || missing[idx[3]])) continue;
      T a[3][4], b[3][4];
      for (int j = 0; j < 4; ++j)
        for (int c = 0; c < 3; ++c) {
          a[c][j] = rec[c][idx[j]];
          b[c][j] = orig[c][idx[j]];
        }
      if (tet_signature(idx, axes, a[0], a[1], a[2]) != tet_signature(idx, axes, b[0], b[1], b[2])) bad.push_back(t);
    }
    ++out.repair_rounds;
  }
}

template <class Field, class T>
void run_none3d_any(const Field& f, T eb, int threads, Tiled3DResultOf<T>& out, const uint8_t* missing,
                    uint8_t exact_faces) {
  const TileLayout3D L(f.nx, f.ny, f.nz);
  const T* x[3] = {f.u.data(), f.v.data(), f.w.data()};
  for (int c = 0; c < 3; ++c) {
    out.tile_ids[c].assign(size_t(L.tile_count()), uint8_t(eb > T(0) ? kMaxBoundId : 0));
    quantize_plane3d(x[c], L, eb, nullptr, threads, out, c, missing);
  }
  force_exact_faces3d(f, exact_faces, missing, out);
  count_exact(f, threads, out);
}

template <class Field, class T>
void run_block3d_any(const Field& f, T eb, int threads, Tiled3DResultOf<T>& out, Block3DStages stages,
                     const uint8_t* missing, uint8_t exact_faces) {
  double t_last = omp_get_wtime();
  auto lap = [&](const char* name) {
    const double t = omp_get_wtime();
    out.stage_seconds.emplace_back(name, t - t_last);
    t_last = t;
  };
  const int64_t n = f.size();
  const TileLayout3D L(f.nx, f.ny, f.nz);
  const T* x[3] = {f.u.data(), f.v.data(), f.w.data()};
  // 1-2. Safe bounds per tetrahedron, minimum per vertex.
  BigVector<T> xv;
  BigVector<uint8_t> cp_free;
  if (stages.safe_bounds) safe_bounds3d(f, eb, threads, xv, cp_free, missing);
  lap("safe_bounds");
  // 3. Per vertex and component: the bound id of its bound (the largest id whose bound does
  // not exceed it). A grid without tetrahedra (a side of 1) constrains nothing (xv is eb),
  // nor does the test hook without safe bounds (mode none's bounds).
  BigVector<uint8_t> ids[3];
  for (int c = 0; c < 3; ++c) ids[c].resize(size_t(n));
  const T* r = stages.safe_bounds ? xv.data() : nullptr;
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kMinParallel)
  for (int64_t k = 0; k < n; ++k)
    for (int c = 0; c < 3; ++c) ids[c][size_t(k)] = uint8_t(id_for_bound(eb, r ? double(r[3 * k + c]) : double(eb)));
  xv.clear();
  xv.shrink_to_fit();
  lap("bound_ids");
  // 4. Per tile and component: the cost-chosen id (kernels/tiles3d.hpp), then quantization
  // of every vertex against its own bound.
  for (int c = 0; c < 3; ++c) {
    out.tile_ids[c].assign(size_t(L.tile_count()), 0);
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) if (n >= kMinParallel)
    for (int64_t t = 0; t < L.tile_count(); ++t) {
      int64_t lo[3], hi[3];
      L.box(t, lo, hi);
      out.tile_ids[c][size_t(t)] = choose_tile_id3d(x[c], ids[c].data(), f.nx, f.ny, lo, hi, eb);
    }
  }
  lap("tile_ids");
  for (int c = 0; c < 3; ++c) {
    quantize_plane3d(x[c], L, eb, ids[c].data(), threads, out, c, missing);
    ids[c].clear();
    ids[c].shrink_to_fit();
  }
  force_exact_faces3d(f, exact_faces, missing, out);
  lap("quantize");
  // 5. The exact check of every tetrahedron on the decoder's values, and repair. The float64
  // safe bounds are estimates (their magnitudes may overflow or underflow in double), so
  // their critical-point-free proofs are not trusted there: every changed tetrahedron's
  // original signature is derived exactly.
  const bool trust_free = sizeof(T) == 4 && !cp_free.empty();
  if (stages.check) repair_signatures3d(f, trust_free ? cp_free.data() : nullptr, threads, out, missing);
  lap("repair");
  count_exact(f, threads, out);
}

template <class T>
Status decode_tiled3d_any(const Header& h, const Tiled3DInputOf<T>& in, int threads, std::span<T> u, std::span<T> v,
                          std::span<T> w) {
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), nz = int64_t(h.nz), n = nx * ny * nz, sz = nx * ny;
  if (int64_t(u.size()) != n || int64_t(v.size()) != n || int64_t(w.size()) != n)
    return invalid_argument("output planes have the wrong size");
  const TileLayout3D L(nx, ny, nz);
  if (int64_t(in.tile_ids.size()) != 3 * L.tile_count()) return corrupt_stream("tile bound table has the wrong size");
  T* const out[3] = {u.data(), v.data(), w.data()};
  for (int c = 0; c < 3; ++c) {
    const std::vector<uint16_t>& sym = in.symbols[c];
    const std::vector<int64_t>& oi = in.outlier_index[c];
    if (int64_t(sym.size()) != n || oi.size() != in.outlier_code[c].size())
      return corrupt_stream("code count does not match the grid");
    // kernels/tile_decode.hpp's rule in two passes, as the 2D decoder: every vertex's value
    // (q out of range is corrupt at once), then the exact list over them, then the
    // finiteness of the result where a first-pass value was not finite.
    int bad = 0;
    int64_t nonfinite = 0;
#pragma omp parallel num_threads(threads) reduction(| : bad) reduction(+ : nonfinite) if (n >= kMinParallel)
    {
      std::vector<uint64_t> q(static_cast<size_t>(kTile3DVolume));
#pragma omp for schedule(dynamic, 4)
      for (int64_t t = 0; t < L.tile_count(); ++t) {
        int64_t lo[3], hi[3];
        L.box(t, lo, hi);
        const uint8_t id = in.tile_ids[size_t(c * L.tile_count() + t)];
        if (id > kMaxBoundId) {
          bad = 1;
          continue;
        }
        const T step = T(2) * bound_of_id(in.eb, id);
        for (int64_t z = lo[2]; z < hi[2]; ++z)
          for (int64_t y = lo[1]; y < hi[1]; ++y)
            for (int64_t x = lo[0]; x < hi[0]; ++x) {
              const int64_t i = x - lo[0], j = y - lo[1], l = z - lo[2], k = z * sz + y * nx + x;
              int64_t code = int64_t(sym[size_t(k)]) - kRadius;
              if (sym[size_t(k)] == 0) {  // parse_outliers: exactly one outlier per escape
                const auto it = std::lower_bound(oi.begin(), oi.end(), k);
                if (it == oi.end() || *it != k) {
                  bad = 1;
                  code = 0;
                } else {
                  code = in.outlier_code[c][size_t(it - oi.begin())];
                }
              }
              uint64_t& here = q[size_t((l * kTile3D + j) * kTile3D + i)];
              here = uint64_t(code) + tile_lorenzo3d(q.data(), i, j, l);
              T r;
              if (!tiled_reconstruction(int64_t(here), step, r)) bad = 1;
              nonfinite += !finite_value(r);
              out[c][k] = r;
            }
      }
    }
    if (bad) return corrupt_stream("decoded value out of range");
    const std::vector<int64_t>& ei = in.exact_index[c];
    const std::vector<T>& ev = in.exact_value[c];
    if (ei.size() != ev.size()) return corrupt_stream("exact list has the wrong size");
    for (size_t e = 0; e < ei.size(); ++e) {
      if (ei[e] < 0 || ei[e] >= n) return corrupt_stream("exact index out of range");
      out[c][ei[e]] = ev[e];
    }
    if (nonfinite > 0) {
#pragma omp parallel for schedule(static) num_threads(threads) reduction(| : bad)
      for (int64_t k = 0; k < n; ++k) bad |= !finite_value(out[c][k]);
      if (bad) return corrupt_stream("decoded value out of range");
    }
  }
  return Status::Ok();
}

}  // namespace

void run_none3d(const VectorField3D& f, float eb, int threads, Tiled3DResult& out, const uint8_t* missing,
                uint8_t exact_faces) {
  run_none3d_any(f, eb, threads, out, missing, exact_faces);
}
void run_none3d(const VectorField3D64& f, double eb, int threads, Tiled3DResult64& out, const uint8_t* missing,
                uint8_t exact_faces) {
  run_none3d_any(f, eb, threads, out, missing, exact_faces);
}
void run_block3d(const VectorField3D& f, float eb, int threads, Tiled3DResult& out, Block3DStages stages,
                 const uint8_t* missing, uint8_t exact_faces) {
  run_block3d_any(f, eb, threads, out, stages, missing, exact_faces);
}
void run_block3d(const VectorField3D64& f, double eb, int threads, Tiled3DResult64& out, Block3DStages stages,
                 const uint8_t* missing, uint8_t exact_faces) {
  run_block3d_any(f, eb, threads, out, stages, missing, exact_faces);
}
Status decode_tiled3d(const Header& h, const Tiled3DInput& in, int threads, std::span<float> u, std::span<float> v,
                      std::span<float> w) {
  return decode_tiled3d_any(h, in, threads, u, v, w);
}
Status decode_tiled3d(const Header& h, const Tiled3DInput64& in, int threads, std::span<double> u,
                      std::span<double> v, std::span<double> w) {
  return decode_tiled3d_any(h, in, threads, u, v, w);
}

}  // namespace factz::detail
