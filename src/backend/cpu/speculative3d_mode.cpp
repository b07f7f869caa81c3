#include "backend/cpu/speculative3d_mode.hpp"
#include "backend/cpu/speculative3d_rows.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <vector>

#include "kernels/exact_faces3d.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculation3d.hpp"
#include "kernels/tet64.hpp"
#include "util/big_vector.hpp"  // assign_fresh
#include "kernels/speculative_decode.hpp"  // kMissingVertex
#include "kernels/tiles.hpp"
#include "topology/signatures3d.hpp"
#include "util/byte_io.hpp"
#include "util/phase_team.hpp"

namespace factz::detail {
namespace {

/// Loops over fewer elements than this run on the calling thread, and so does the whole
/// schedule of a field this small: a parallel region costs more than it saves there (and
/// much more on a busy machine). Results never depend on the thread count.
constexpr int64_t kMinParallelTargets = 8192;

/// The writer hands a phase's rows to its threads this many at a time: vertices near critical
/// points try many bounds, the rest one (the reader's rows cost alike: one share per thread).
constexpr int64_t kRowsPerChunk = 8;

/// Bits of +0 (a -0 is not: an exact face keeps its sign).
bool positive_zero(float x) { return std::bit_cast<uint32_t>(x) == 0; }
bool positive_zero(double x) { return std::bit_cast<uint64_t>(x) == 0; }

/// Lattice rows (fixed y and z) of a phase: the unit a thread's share is cut in.
int64_t lattice_rows(const ScheduledPhase3D& ph) { return ph.lattice.count_y * ph.lattice.count_z; }

/// Phases with at least this many targets are shared by the team (util/phase_team.hpp): half
/// of 2D's kMinSharedTargets. A 3D target costs several times a 2D one (24 tetrahedra, three
/// components), so a 4096-target phase (a 64^3 field's next-to-last level) outlasts the
/// barrier's cost many times; shared, it also keeps the second thread spinning instead of
/// asleep when the last level starts (abc3d 64^3 at REL 1e-1 on two threads: 26 -> 25 ms a
/// compression, docs/benchmarks.md).
constexpr int64_t kMinSharedTargets3D = 4096;

/// Whether the team shares a phase, or one thread decides it alone.
bool shared_phase(const ScheduledPhase3D& ph) { return ph.lattice.count() >= kMinSharedTargets3D; }

/// Marks kMaskedTet every tetrahedron of `sig` (tetrahedron order) that touches a missing
/// vertex: off the mesh, never compared (signatures_hold3d).
void mark_masked_tets(int64_t nx, int64_t ny, int64_t nz, const uint8_t* missing, int threads,
                      std::vector<uint8_t>& sig) {
  if (sig.empty()) return;
  const int64_t cx = nx - 1, cy = ny - 1, cubes = cx * cy * (nz - 1);
#pragma omp parallel for schedule(static) num_threads(threads) if (cubes >= kMinParallelTargets)
  for (int64_t cube = 0; cube < cubes; ++cube) {
    const int64_t x = cube % cx, y = (cube / cx) % cy, z = cube / (cx * cy);
    const uint8_t off = cube_masked_tets(missing, (z * ny + y) * nx + x, nx, ny);
    for (int t = 0; t < 6; ++t)
      if ((off >> t) & 1) sig[size_t(6 * cube + t)] = kMaskedTet;
  }
}

template <class Field, class T>
void run_speculative3d_any(const Field& f, T eb, int64_t s0, int threads, bool check, Speculative3DResultOf<T>& out,
                           const uint8_t* missing, uint8_t exact_faces, const uint8_t* along, Field* state) {
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz, n = f.size();
  // The original signature of every tetrahedron, by the extractor; kMaskedTet off the mesh
  // (before the planes may move below).
  std::vector<uint8_t> sig = signatures_on_mesh(f, missing ? std::vector<uint8_t>(missing, missing + n)
                                                           : std::vector<uint8_t>{}, Exec{threads});
  if (missing) mark_masked_tets(nx, ny, nz, missing, threads, sig);
  // The originals: f's planes, or the state itself when they are given up (a moved vector
  // keeps its buffer). A target's original is read only before its own commit
  // (speculate_vertex3d); the signatures above were taken first.
  const T* orig[3] = {f.u.data(), f.v.data(), f.w.data()};
  if (state) {
    out.recon[0] = std::move(state->u);
    out.recon[1] = std::move(state->v);
    out.recon[2] = std::move(state->w);
  } else {  // the current state starts as the original
    for (int c = 0; c < 3; ++c) assign_fresh(out.recon[c], orig[c], size_t(n));
  }
  for (int c = 0; c < 3; ++c) out.sym[c].resize(size_t(n));
  out.id.resize(size_t(n));
  // The sign class of every vertex's current value (signatures_hold3d's `cls`), kept with
  // each commit: a neighbourhood's screen in nine loads.
  BigVector<uint8_t> cls;
  cls.resize(size_t(n));
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kMinParallelTargets)
  for (int64_t k = 0; k < n; ++k) {
    const bool miss = missing && missing[k];
    for (int c = 0; c < 3; ++c) {
      // A missing vertex holds its stand-in for the whole run (the decoder's too:
      // decode_speculative3d).
      if (miss) out.recon[c][size_t(k)] = T(kMissingStandIn3D);
      out.sym[c][size_t(k)] = 0;
    }
    out.id[size_t(k)] = miss ? kMissingVertex : 0;
    cls[size_t(k)] = sign_class3(out.recon[0][size_t(k)], out.recon[1][size_t(k)], out.recon[2][size_t(k)]);
  }
  // The vertices next to a critical tetrahedron (few: a serial pass over the bytes).
  std::vector<uint8_t> near(size_t(n), 0);
  mark_near_critical3d(nx, ny, nz, sig.data(), near.data());
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  // Without a positive bound every target is stored exactly (speculate_vertex3d).
  const bool first_ids = bound[kMaxBoundId] > T(0);
  T* const cur[3] = {out.recon[0].data(), out.recon[1].data(), out.recon[2].data()};
  uint8_t* ids = out.id.data();
  uint16_t* const sym[3] = {out.sym[0].data(), out.sym[1].data(), out.sym[2].data()};
  // One team for the whole schedule (util/phase_team.hpp), in chunks of lattice rows (fixed y
  // and z: no index division per target).
  const std::vector<ScheduledPhase3D> phases = phases_of<ScheduledPhase3D>(PhaseSchedule3D(nx, ny, nz, s0, along));
  for_each_phase_on_team(
      n >= kMinParallelTargets ? threads : 1, TeamRows{kRowsPerChunk}, int64_t(phases.size()),
      [&](int64_t p) { return shared_phase(phases[size_t(p)]); },
      [&](int64_t p) { return lattice_rows(phases[size_t(p)]); },
      [&](int64_t p, int64_t first, int64_t end) {
        const ScheduledPhase3D& ph = phases[size_t(p)];
        const PhaseLattice3D& L = ph.lattice;
        thread_local RowCandidates<T> row;
        for (int64_t r = first; r < end; ++r) {
          const int64_t y = L.y0 + (r % L.count_y) * L.d, z = L.z0 + (r / L.count_y) * L.d;
          // The row's first candidates at once (vectorized; the same values as
          // speculate_vertex3d's first bound id): a target whose candidate surely fits and
          // keeps its signatures commits it; the others take speculate_vertex3d.
          if (first_ids) first_candidates_row(orig, cur, nx, ny, nz, y, z, ph, bound[kMaxBoundId], kRadius, row);
          for (int64_t i = 0; i < L.count_x; ++i) {
            const int64_t x = L.x0 + i * L.d, k = (z * ny + y) * nx + x;
            if (missing && missing[k]) continue;  // not in the stream: its stand-in stays
            if (exact_faces && on_exact_face(x, y, z, nx, ny, nz, exact_faces)) {
              // Kept as is (the current state already holds the original); +0, +0, +0 takes
              // the zero-vector id, which reproduces exactly those bits (a -0 goes exact).
              const bool zero = positive_zero(cur[0][k]) && positive_zero(cur[1][k]) && positive_zero(cur[2][k]);
              ids[k] = uint8_t(zero ? kZeroVectorId : 0);
              continue;
            }
            Speculation3DOf<T> sp;
            const bool zero_vector =
                first_ids && row.x[0][size_t(i)] == T(0) && row.x[1][size_t(i)] == T(0) && row.x[2][size_t(i)] == T(0);
            if (first_ids && row.ok[size_t(i)] && !zero_vector &&
                (!check || signatures_hold3d(nx, ny, nz, x, y, z, row.recon[0][size_t(i)], row.recon[1][size_t(i)],
                                             row.recon[2][size_t(i)], cur[0], cur[1], cur[2], sig.data(), near.data(),
                                             cls.data()))) {
              sp.id = uint8_t(kMaxBoundId);
              for (int c = 0; c < 3; ++c) {
                sp.code[c] = row.code[c][size_t(i)];
                sp.recon[c] = row.recon[c][size_t(i)];
              }
            } else {
              sp = speculate_vertex3d(nx, ny, nz, x, y, z, ph.step, ph.axes, ph.along, orig, cur, sig.data(), bound,
                                      kRadius, check, near.data(), cls.data());
            }
            // The commit is the only write: targets of a phase share no tetrahedron.
            for (int c = 0; c < 3; ++c) {
              cur[c][k] = sp.recon[c];
              sym[c][k] = uint16_t(sp.code[c] + kRadius);
            }
            ids[k] = sp.id;
            cls[size_t(k)] = sign_class3(sp.recon[0], sp.recon[1], sp.recon[2]);
          }
        }
      });
  int64_t exact = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : exact) if (n >= kMinParallelTargets)
  for (int64_t k = 0; k < n; ++k) exact += ids[k] == 0 || ids[k] == kZeroVectorId;
  out.exact_vertices = exact;
}

template <class T>
Status decode_speculative3d_any(const Header& h, const Speculative3DInputOf<T>& in, int threads, std::span<T> u,
                                std::span<T> v, std::span<T> w, const uint8_t* missing) {
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), nz = int64_t(h.nz), n = nx * ny * nz;
  const int64_t s0 = h.anchor_stride;
  if (int64_t(u.size()) != n || int64_t(v.size()) != n || int64_t(w.size()) != n)
    return invalid_argument("output planes have the wrong size");
  T* const out[3] = {u.data(), v.data(), w.data()};
  const PhaseLattice3D A = anchor_lattice3d(nx, ny, nz, s0);
  // parse_speculative3d counted the exact values against the ids: the anchors come first.
  if (missing) {  // the stand-ins, as the writer's current state holds them
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kMinParallelTargets)
    for (int64_t k = 0; k < n; ++k)
      if (missing[k]) out[0][k] = out[1][k] = out[2][k] = T(kMissingStandIn3D);
  }
  int64_t anchors = 0;  // the valid ones, stored first
  for (int64_t a = 0; a < A.count(); ++a) {
    const int64_t k = lattice_vertex3d(A, nx, ny, a);
    if (missing && missing[k]) continue;
    if (int64_t(in.exact.size()) < 3 * (anchors + 1)) return corrupt_stream("exact values are missing for the anchors");
    for (int c = 0; c < 3; ++c) out[c][k] = in.exact[size_t(3 * anchors + c)];
    ++anchors;
  }
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(in.eb, id);
  const std::vector<uint16_t>& ids = in.ids;
  int64_t id_pos = 0, code_pos = 0, exact_pos = anchors;
  bool short_lists = false;
  std::atomic<bool> bad{false};
  // Offsets of each lattice row of the phase at hand into the ids, codes and exact values:
  // a serial scan of the ids (the team's prepare step), then the rows decode on the team.
  const std::vector<ScheduledPhase3D> phases =
      phases_of<ScheduledPhase3D>(PhaseSchedule3D(nx, ny, nz, s0, in.along.empty() ? nullptr : in.along.data()));
  int64_t most_rows = 0;
  for (const ScheduledPhase3D& ph : phases) most_rows = std::max(most_rows, lattice_rows(ph));
  std::vector<int64_t> id_off(size_t(most_rows) + 1), code_off(size_t(most_rows) + 1), exact_off(size_t(most_rows) + 1);
  auto scan = [&](int64_t p) {
    const PhaseLattice3D& L = phases[size_t(p)].lattice;
    const int64_t rows = lattice_rows(phases[size_t(p)]);
    id_off[0] = id_pos;
    code_off[0] = code_pos;
    exact_off[0] = exact_pos;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t d = id_off[size_t(r)], c = 0, e = 0;
      const int64_t y = L.y0 + (r % L.count_y) * L.d, z = L.z0 + (r / L.count_y) * L.d;
      for (int64_t i = 0; i < L.count_x; ++i) {
        if (missing && missing[(z * ny + y) * nx + L.x0 + i * L.d]) continue;  // no id
        if (d >= int64_t(ids.size())) {
          short_lists = true;
          return false;
        }
        const uint16_t id = ids[size_t(d++)];
        c += id >= 1 && id <= kMaxBoundId;
        e += id == 0;
      }
      id_off[size_t(r) + 1] = d;
      code_off[size_t(r) + 1] = code_off[size_t(r)] + c;
      exact_off[size_t(r) + 1] = exact_off[size_t(r)] + e;
    }
    id_pos = id_off[size_t(rows)];
    code_pos = code_off[size_t(rows)];
    exact_pos = exact_off[size_t(rows)];
    // parse_speculative3d counted them: only a caller's error gets here
    short_lists = code_pos > int64_t(in.codes[0].size()) || 3 * exact_pos > int64_t(in.exact.size());
    return !short_lists;
  };
  for_each_phase_on_team(
      n >= kMinParallelTargets ? threads : 1, TeamRows{0}, int64_t(phases.size()),
      [&](int64_t p) { return shared_phase(phases[size_t(p)]); }, scan,
      [&](int64_t p) { return lattice_rows(phases[size_t(p)]); },
      [&](int64_t p, int64_t first, int64_t end) {
        const ScheduledPhase3D& ph = phases[size_t(p)];
        const PhaseLattice3D& L = ph.lattice;
        bool failed = false;
        // The row pass: a row's predictions at once (speculative3d_rows.hpp; a phase's
        // predictions read earlier phases only), then its values, as decode_speculative_target3d
        // computes them target by target.
        thread_local std::vector<T> pred[3];
        for (auto& pc : pred) pc.resize(size_t(L.count_x));
        for (int64_t r = first; r < end; ++r) {
          int64_t d = id_off[size_t(r)], c = code_off[size_t(r)], e = exact_off[size_t(r)];
          const int64_t y = L.y0 + (r % L.count_y) * L.d, z = L.z0 + (r / L.count_y) * L.d;
          for (int k = 0; k < 3; ++k) row_predictions3d(out[k], nx, ny, nz, y, z, ph, k, pred[k].data());
          for (int64_t i = 0; i < L.count_x; ++i) {
            const int64_t x = L.x0 + i * L.d, v = (z * ny + y) * nx + x;
            if (missing && missing[v]) continue;  // its stand-in stays
            const uint16_t id = ids[size_t(d++)];
            if (id == kZeroVectorId) {
              out[0][v] = out[1][v] = out[2][v] = T(0);
            } else if (id == 0) {
              for (int k = 0; k < 3; ++k) out[k][v] = in.exact[size_t(3 * e + k)];
              ++e;
            } else if (id <= kMaxBoundId) {
              for (int k = 0; k < 3; ++k)
                if (!coded_value(pred[k][size_t(i)], bound[id], in.codes[k][size_t(c)], kRadius, out[k][v]))
                  failed = true;
              ++c;
            } else {  // parse_speculative3d refuses these
              failed = true;
            }
          }
        }
        if (failed) bad.store(true, std::memory_order_relaxed);
      });
  if (short_lists) return corrupt_stream("the bound ids, codes or exact values run short of the grid");
  if (bad) return corrupt_stream("a decoded value is not finite, or a bound id is out of range");
  return Status::Ok();
}

}  // namespace

void run_speculative3d(const VectorField3D& f, float eb, int64_t s0, int threads, bool check,
                       Speculative3DResult& out, const uint8_t* missing, uint8_t exact_faces, const uint8_t* along,
                       VectorField3D* state) {
  run_speculative3d_any(f, eb, s0, threads, check, out, missing, exact_faces, along, state);
}
void run_speculative3d(const VectorField3D64& f, double eb, int64_t s0, int threads, bool check,
                       Speculative3DResult64& out, const uint8_t* missing, uint8_t exact_faces, const uint8_t* along,
                       VectorField3D64* state) {
  run_speculative3d_any(f, eb, s0, threads, check, out, missing, exact_faces, along, state);
}

Status decode_speculative3d(const Header& h, const Speculative3DInput& in, int threads, std::span<float> u,
                            std::span<float> v, std::span<float> w, const uint8_t* missing) {
  return decode_speculative3d_any(h, in, threads, u, v, w, missing);
}
Status decode_speculative3d(const Header& h, const Speculative3DInput64& in, int threads, std::span<double> u,
                            std::span<double> v, std::span<double> w, const uint8_t* missing) {
  return decode_speculative3d_any(h, in, threads, u, v, w, missing);
}

}  // namespace factz::detail
