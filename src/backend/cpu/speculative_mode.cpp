#include "backend/cpu/speculative_mode.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <vector>

#include "kernels/speculative_decode.hpp"
#include "kernels/speculation.hpp"
#include "streams/speculative_trial.hpp"
#include "util/byte_io.hpp"
#include "util/phase_team.hpp"
#include "backend/cpu/frontend.hpp"
#include "backend/cpu/speculative_rows.hpp"
#include "backend/cpu/tiled_quantizer.hpp"

namespace factz::detail {
namespace {

/// Calls f(step, phase, lattice) for every phase of the schedule, in stream order.
template <class F>
void for_each_phase(int64_t nx, int64_t ny, int64_t anchor_stride, F&& f) {
  PhaseSchedule schedule(nx, ny, anchor_stride);
  for (ScheduledPhase ph; schedule.next(ph);) f(ph.step, ph.phase, ph.lattice);
}

/// The writer hands a shared phase's targets to its threads this many at a time: vertices
/// near critical points try many bounds, the rest one.
constexpr int64_t kTargetsPerChunk = 256;

// One body for float32 and float64 fields (T = float, double); the kernels pick their
// float or double overloads by T, so no value of a float64 field passes through float.

/// A zero vector's test on the bits (+0, +0 only).
bool positive_zero(float x) { return std::bit_cast<uint32_t>(x) == 0; }
bool positive_zero(double x) { return std::bit_cast<uint64_t>(x) == 0; }

void put_exact(ByteWriter& w, float x) { w.f32(x); }
void put_exact(ByteWriter& w, double x) { w.f64(x); }

template <class Field, class T>
void run_speculative_any(const Field& f, T eb, int64_t s0, int threads, bool check, SpeculativeResultOf<T>& out,
                         uint8_t exact_edges, const uint8_t* missing, Predictor pred, Field* state) {
  const Grid2D g{f.nx, f.ny};
  out.predictor = pred;
  const int64_t n = f.size(), cw = g.nx - 1;
  const PhaseLattice A = anchor_lattice(g.nx, g.ny, s0);
  const size_t targets = size_t(n - A.count());
  // The originals: f's planes, or, when they are given up, the state itself (moving a vector
  // keeps its buffer, so these pointers stay valid). A vertex's original is read only before
  // its own commit (signatures and the trial before any; speculate_vertex at its target).
  const T* orig_u = f.u.data();
  const T* orig_v = f.v.data();
  if (state) {
    out.recon_u = std::move(state->u);
    out.recon_v = std::move(state->v);
  } else {  // the current state starts as the original
    assign_fresh(out.recon_u, orig_u, size_t(n));
    assign_fresh(out.recon_v, orig_v, size_t(n));
  }
  for (std::vector<uint16_t>* a : {&out.ids, &out.sym_u, &out.sym_v}) {
    a->clear();
    resize_fresh(*a, targets);
  }
  BigVector<uint8_t> sig(static_cast<size_t>(g.triangle_count()));
#pragma omp parallel num_threads(threads)
  {
    std::vector<uint8_t> flags(size_t(std::max<int64_t>(cw, 0)));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < g.ny - 1; ++i)  // kMaskedTriangle off the mesh: never compared
      original_signatures_row(g, i, orig_u, orig_v, missing, flags.data(), sig.data() + 2 * i * cw);
  }
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  const std::vector<ScheduledPhase> phases = phases_of<ScheduledPhase>(PhaseSchedule(g.nx, g.ny, s0));
  // The schedule with tight step `tight` on result `o`, whose recon planes hold the state
  // (the originals at first); returns the exact count. ou, ov: the originals (o's own planes
  // when they were given up: read only before their vertex's commit).
  auto run = [&](int64_t tight, SpeculativeResultOf<T>& o, const T* ou, const T* ov) {
    T* cur_u = o.recon_u.data();
    T* cur_v = o.recon_v.data();
    int64_t exact = A.count();
    o.anchor_missing.clear();
    if (missing) {  // missing anchors take the decoder's stand-ins (kernels/speculative_decode.hpp)
      fill_missing_anchors(A, g.nx, missing, cur_u, cur_v, pred);
      o.anchor_missing.resize(size_t(A.count()));
      for (int64_t a = 0; a < A.count(); ++a) {
        o.anchor_missing[size_t(a)] = missing[lattice_vertex(A, g.nx, a)] ? 1 : 0;
        exact -= o.anchor_missing[size_t(a)];
      }
    }
    uint16_t* ids = o.ids.data();
    uint16_t* sym_u = o.sym_u.data();
    uint16_t* sym_v = o.sym_v.data();
    // A target's decision written back (the first write-back: targets of a phase share no
    // triangle) and at its position in schedule order; 1 when it is stored exactly.
    auto commit = [&](const SpeculationOf<T>& sp, int64_t k, size_t at) -> int64_t {
      cur_u[k] = sp.recon_u;
      cur_v[k] = sp.recon_v;
      ids[at] = sp.id;
      sym_u[at] = uint16_t(sp.code_u + kRadius);
      sym_v[at] = uint16_t(sp.code_v + kRadius);
      return sp.id == 0 || sp.id == kZeroVectorId;
    };
    // A missing target: not in the stream, its prediction stands in (as the decoder's).
    auto stand_in = [&](const ScheduledPhase& ph, int64_t x, int64_t y, size_t at) {
      predict_missing_target(cur_u, cur_v, g.nx, g.ny, x, y, ph.step, ph.phase, pred);
      ids[at] = kMissingVertex;
    };
    // The row pass (first candidates of a run of targets at once) where every target takes
    // speculate_vertex with the cubic predictor, or is missing: no exact edge.
    const bool rows = check && pred == Predictor::cubic && exact_edges == 0 && bound[kMaxBoundId] > T(0);
    // One team for the whole schedule (util/phase_team.hpp); a work unit is a target.
    std::atomic<int64_t> decided_exact{0};
    for_each_phase_on_team(
        threads, TeamRows{kTargetsPerChunk}, int64_t(phases.size()),
        [&](int64_t p) { return phases[size_t(p)].lattice.count() >= kMinSharedTargets; },
        [&](int64_t p) { return phases[size_t(p)].lattice.count(); },
        [&](int64_t p, int64_t first, int64_t end) {
          const ScheduledPhase& ph = phases[size_t(p)];
          const PhaseLattice& L = ph.lattice;
          int64_t kept = 0;
          if (rows) {  // the first candidates of each row's run at once (speculative_rows.hpp)
            thread_local RowCandidates2D<T> rc;
            thread_local std::vector<uint8_t> star;  // star_one_sided_row2d's flags of the run
            const int id = first_bound_id(ph.step, tight);
            const T* const f2[2] = {ou, ov};
            const T* const c2[2] = {cur_u, cur_v};
            for (int64_t t = first; t < end;) {
              const int64_t j = t / L.count_x, i0 = t % L.count_x, i1 = std::min(L.count_x, i0 + (end - t));
              first_candidates_row2d(f2, c2, g.nx, g.ny, ph, j, i0, i1, bound[id], kRadius, rc);
              if (star.size() < size_t(i1 - i0)) star.resize(size_t(i1 - i0));
              star_one_sided_row2d(c2, sig.data(), g.nx, g.ny, ph, j, i0, i1, rc, star.data());
              const int64_t y = L.y0 + j * L.dy;
              for (int64_t i = i0; i < i1; ++i, ++t) {
                const int64_t x = L.x0 + i * L.dx, k = y * g.nx + x, r = i - i0;
                const size_t at = size_t(ph.offset + t);
                if (missing && missing[k]) {
                  stand_in(ph, x, y, at);
                  continue;
                }
                const T ru = rc.recon[0][size_t(r)], rv = rc.recon[1][size_t(r)];
                // speculate_vertex's first id, decided here where its candidate surely fits
                // (a zero vector takes its own id there) and the signatures hold (the run's
                // star flags first: signatures_hold's own shortcut, computed for the run).
                if (rc.ok[size_t(r)] && !(rc.x[0][size_t(r)] == T(0) && rc.x[1][size_t(r)] == T(0)) &&
                    (star[size_t(r)] || signatures_hold(g, x, y, ru, rv, cur_u, cur_v, sig.data()))) {
                  commit(SpeculationOf<T>{uint8_t(id), rc.code[0][size_t(r)], rc.code[1][size_t(r)], ru, rv}, k, at);
                  continue;
                }
                kept += commit(speculate_vertex(g, x, y, ph.step, ph.phase, ou, ov, cur_u, cur_v, sig.data(), bound,
                                                kRadius, check, pred, tight),
                               k, at);
              }
            }
            decided_exact.fetch_add(kept, std::memory_order_relaxed);
            return;
          }
          for (int64_t t = first; t < end; ++t) {
            const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
            const int64_t k = y * g.nx + x;
            const size_t at = size_t(ph.offset + t);  // the target's position in schedule order
            if (missing && missing[k]) {
              stand_in(ph, x, y, at);
              continue;
            }
            if (exact_edges && on_exact_edge(x, y, g.nx, g.ny, exact_edges)) {
              // Kept as is (the current state already holds the original); a +0, +0 vector
              // takes the zero-vector id, which reproduces exactly those bits.
              const bool zero = positive_zero(cur_u[k]) && positive_zero(cur_v[k]);
              ids[at] = uint16_t(zero ? kZeroVectorId : 0);
              ++kept;
              continue;
            }
            kept += commit(speculate_vertex(g, x, y, ph.step, ph.phase, ou, ov, cur_u, cur_v, sig.data(), bound,
                                            kRadius, check, pred, tight),
                           k, at);
          }
          decided_exact.fetch_add(kept, std::memory_order_relaxed);
        });
    exact += decided_exact.load();
    return exact;
  };
  // The level-wise bound, chosen on a trial of the schedule (streams/speculative_trial.hpp).
  // When the trial's crop is the whole field, its two runs would be this driver's own: run
  // the schedule both ways here and keep the one the trial's estimate prefers (the same
  // estimate on the same ids and codes, so the same choice and bytes, one run fewer).
  int64_t exact;
  if (check && trial_is_whole_field(g.nx, g.ny, eb > T(0), pred, exact_edges)) {
    SpeculativeResultOf<T> other;
    other.recon_u.assign(out.recon_u.begin(), out.recon_u.end());  // the originals, given up or copied
    other.recon_v.assign(out.recon_v.begin(), out.recon_v.end());
    for (std::vector<uint16_t>* a : {&other.ids, &other.sym_u, &other.sym_v}) a->resize(targets);
    other.predictor = pred;
    const int64_t exact_tight = run(kTrialTightStep, out, state ? out.recon_u.data() : orig_u,
                                    state ? out.recon_v.data() : orig_v);
    const int64_t exact_none = run(kNoTightLevel, other, other.recon_u.data(), other.recon_v.data());
    const std::vector<uint16_t>* const ids[2] = {&other.ids, &out.ids};  // kNoTightLevel first
    const std::vector<uint16_t>* const su[2] = {&other.sym_u, &out.sym_u};
    const std::vector<uint16_t>* const sv[2] = {&other.sym_v, &out.sym_v};
    exact = exact_tight;
    out.tight_step = kTrialTightStep;
    if (trial_choice_on_runs(g.nx, g.ny, s0, ids, su, sv, int(sizeof(T))) == kNoTightLevel) {
      std::swap(out, other);
      exact = exact_none;
      out.tight_step = kNoTightLevel;
    }
  } else {
    out.tight_step = choose_tight_step(g.nx, g.ny, orig_u, orig_v, missing, eb, s0, pred, threads);
    exact = run(out.tight_step, out, orig_u, orig_v);
  }
  out.exact_vertices = exact;
}

template <class Field, class T>
void speculative_payload_any(const Field& f, int64_t s0, SpeculativeResultOf<T>& r, SpeculativePayload& out) {
  const int64_t nx = f.nx, ny = f.ny;
  ByteWriter exact;
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  for (int64_t a = 0; a < A.count(); ++a) {
    if (!r.anchor_missing.empty() && r.anchor_missing[size_t(a)]) continue;  // not stored
    const int64_t k = lattice_vertex(A, nx, a);
    put_exact(exact, r.recon_u[size_t(k)]);  // anchors are never written: the originals
    put_exact(exact, r.recon_v[size_t(k)]);
  }
  // Compaction in place, in schedule order: a missing target leaves no id, a target
  // without a code no codes (the write position never passes the read position).
  out.ids = std::move(r.ids);
  out.codes_u = std::move(r.sym_u);
  out.codes_v = std::move(r.sym_v);
  size_t read = 0, wid = 0, wcode = 0;
  for_each_phase(nx, ny, s0, [&](int64_t, Phase, const PhaseLattice& L) {
    int64_t codes = 0;
    for (int64_t t = 0; t < L.count(); ++t, ++read) {
      const uint16_t id = out.ids[read];
      if (id == kMissingVertex) continue;  // not in the stream
      out.ids[wid++] = id;
      if (id_has_code(id)) {
        ++codes;
        out.codes_u[wcode] = out.codes_u[read];
        out.codes_v[wcode] = out.codes_v[read];
        ++wcode;
      } else if (id_is_exact(id)) {
        const int64_t k = lattice_vertex(L, nx, t);
        put_exact(exact, r.recon_u[size_t(k)]);  // an exact target commits its original
        put_exact(exact, r.recon_v[size_t(k)]);
      }
    }
    out.phase_codes.push_back(codes);
  });
  out.ids.resize(wid);
  out.codes_u.resize(wcode);
  out.codes_v.resize(wcode);
  out.exact = std::move(exact.bytes());
  out.predictor = r.predictor;
}

}  // namespace

void run_speculative(const VectorField2D& f, float eb, int64_t s0, int threads, bool check, SpeculativeResult& out,
                     uint8_t exact_edges, const uint8_t* missing, Predictor pred, VectorField2D* state) {
  run_speculative_any(f, eb, s0, threads, check, out, exact_edges, missing, pred, state);
}
void run_speculative(const VectorField2D64& f, double eb, int64_t s0, int threads, bool check,
                     SpeculativeResult64& out, uint8_t exact_edges, const uint8_t* missing, Predictor pred,
                     VectorField2D64* state) {
  run_speculative_any(f, eb, s0, threads, check, out, exact_edges, missing, pred, state);
}

void speculative_payload(const VectorField2D& f, int64_t s0, SpeculativeResult& r, SpeculativePayload& out) {
  speculative_payload_any(f, s0, r, out);
}
void speculative_payload(const VectorField2D64& f, int64_t s0, SpeculativeResult64& r,
                         SpeculativePayload& out) {
  speculative_payload_any(f, s0, r, out);
}

}  // namespace factz::detail
