// FaCTz-S's reader on the CPU: the planes of a speculative 2D stream from its parsed input
// (streams/vector_stream.hpp: parse_speculative), on one OpenMP team for the schedule
// (util/phase_team.hpp), each target's value from kernels/speculative_decode.hpp. Its own
// translation unit, apart from the writer (speculative_mode.cpp): in one unit with the writer
// GCC stopped inlining the predictor into the rows' loop once the code windows came in (1.2
// times the single-thread decode time on a 4096^2 field).
#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "backend/cpu/speculative_mode.hpp"
#include "backend/cpu/speculative_rows.hpp"
#include "codec/coder.hpp"
#include "kernels/speculative_decode.hpp"
#include "streams/code_segments.hpp"
#include "util/big_vector.hpp"
#include "util/phase_team.hpp"

namespace factz::detail {
namespace {

/// The bound of the decoder: the header's f32 one, or a float64 stream's f64 one.
float decoder_bound(const Header& h, const SpeculativeDecodeInput&) { return h.eb; }
double decoder_bound(const Header&, const SpeculativeDecodeInput64& in) { return in.eb; }

template <class T>
Status decode_speculative_any(const Header& h, const SpeculativeInputOf<T>& in, int threads, std::span<T> u,
                              std::span<T> v, const uint8_t* missing, int64_t min_code_window) {
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), n = nx * ny;
  const int64_t s0 = h.anchor_stride;
  if (int64_t(u.size()) != n || int64_t(v.size()) != n) return invalid_argument("output planes have the wrong size");
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  int64_t exact_pos = 0;  // valid anchors first, in row-major order
  for (int64_t a = 0; a < A.count(); ++a) {
    const int64_t k = lattice_vertex(A, nx, a);
    if (missing && missing[k]) continue;
    u[size_t(k)] = in.exact[size_t(2 * exact_pos)];
    v[size_t(k)] = in.exact[size_t(2 * exact_pos + 1)];
    ++exact_pos;
  }
  if (missing) fill_missing_anchors(A, nx, missing, u.data(), v.data(), in.predictor);
  const auto eb = decoder_bound(h, in);
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  const std::vector<uint16_t>& ids = in.ids;
  int64_t id_pos = 0, code_pos = 0;
  std::atomic<bool> bad{false};
  const std::vector<ScheduledPhase> phases = phases_of<ScheduledPhase>(PhaseSchedule(nx, ny, s0));
  // The codes: decoded whole by the parse, or (codes_deferred) a window of phases at a time
  // (code_windows) into buffers as long as the largest window: on a 4096^2 field a quarter
  // of the codes instead of all of them. A window's segments are decoded by the team that
  // decodes the phases, as a step of the schedule just before the window's phases: its
  // jobs, u's segments then v's, each decoded on one thread (on two threads, u's and v's
  // side by side).
  const auto coder = EntropyCoder(h.coder);
  std::vector<CodeSegment> segs_u, segs_v;
  std::vector<CodeWindow> windows;
  BigVector<uint16_t> window_u, window_v;
  size_t most_jobs = 0;
  if (in.codes_deferred) {
    int64_t n_codes = 0;
    for (int64_t c : in.phase_codes) n_codes += c;
    if (in.phase_codes.size() != phases.size())
      return Status(Code::internal, "speculative decoder: phase code counts do not match the schedule");
    FACTZ_RETURN_IF_ERROR(parse_segmented(in.coded_u, n_codes, segs_u));
    FACTZ_RETURN_IF_ERROR(parse_segmented(in.coded_v, n_codes, segs_v));
    windows = code_windows(in.phase_codes, segs_u, segs_v, std::max(n_codes / 4, min_code_window));
    int64_t longest = 0;
    for (const CodeWindow& w : windows) {
      longest = std::max(longest, w.count);
      most_jobs = std::max(most_jobs, w.seg_u_end - w.seg_u_begin + w.seg_v_end - w.seg_v_begin);
    }
    window_u.resize(size_t(longest));
    window_v.resize(size_t(longest));
  }
  // The steps of the schedule: (window, -1) decodes a window's codes, (window, p) is phase p.
  std::vector<std::pair<int64_t, int64_t>> steps;
  if (in.codes_deferred) {
    for (size_t w = 0; w < windows.size(); ++w) {
      steps.emplace_back(int64_t(w), -1);
      for (int64_t p = windows[w].phase_begin; p < windows[w].phase_end; ++p) steps.emplace_back(int64_t(w), p);
    }
  } else {
    for (int64_t p = 0; p < int64_t(phases.size()); ++p) steps.emplace_back(0, p);
  }
  const uint16_t* codes_u = in.codes_deferred ? window_u.data() : in.codes_u.data();
  const uint16_t* codes_v = in.codes_deferred ? window_v.data() : in.codes_v.data();
  int64_t code_base = 0;  // code c of the window at hand: codes_u[c - code_base]
  std::vector<Status> job_status(most_jobs, Status::Ok());
  Status decode_failure = Status::Ok();
  auto job_segment = [&](const CodeWindow& w, int64_t j, uint16_t*& out) -> const CodeSegment& {
    const int64_t nu = int64_t(w.seg_u_end - w.seg_u_begin);
    const bool is_u = j < nu;
    const CodeSegment& seg = is_u ? segs_u[w.seg_u_begin + size_t(j)] : segs_v[w.seg_v_begin + size_t(j - nu)];
    out = (is_u ? window_u.data() : window_v.data()) + (seg.first - w.first);
    return seg;
  };
  // Offsets of each lattice row of the phase at hand into the id, code and exact streams (a
  // missing target has no entry in any of them): one thread's scan (the team's prepare
  // step), then the rows decode on the team (util/phase_team.hpp).
  int64_t most_rows = 0;
  for (const ScheduledPhase& ph : phases) most_rows = std::max(most_rows, ph.lattice.count_y);
  std::vector<int64_t> id_off(size_t(most_rows) + 1), code_off(size_t(most_rows) + 1), exact_off(size_t(most_rows) + 1);
  auto prepare = [&](int64_t q) {
    const auto [w, p] = steps[size_t(q)];
    if (p < 0) {  // a window's codes: the previous window's phases are done
      code_base = windows[size_t(w)].first;
      std::fill(job_status.begin(), job_status.end(), Status::Ok());
      return true;
    }
    if (in.codes_deferred && windows[size_t(w)].phase_begin == p) {
      // The window's codes are decoded: the first failing segment in stream order stops here.
      for (const Status& st : job_status)
        if (!st.ok()) {
          decode_failure = st;
          return false;
        }
    }
    const PhaseLattice& L = phases[size_t(p)].lattice;
    id_off[0] = id_pos;
    code_off[0] = code_pos;
    exact_off[0] = exact_pos;
    for (int64_t j = 0; j < L.count_y; ++j) {
      int64_t i_ = 0, c = 0, e = 0;
      const int64_t y = L.y0 + j * L.dy;
      for (int64_t i = 0; i < L.count_x; ++i) {
        if (missing && missing[size_t(y * nx + L.x0 + i * L.dx)]) continue;
        const uint16_t id = ids[size_t(id_off[size_t(j)] + i_)];
        ++i_;
        c += id_has_code(id);
        e += id_is_exact(id);
      }
      id_off[size_t(j) + 1] = id_off[size_t(j)] + i_;
      code_off[size_t(j) + 1] = code_off[size_t(j)] + c;
      exact_off[size_t(j) + 1] = exact_off[size_t(j)] + e;
    }
    id_pos = id_off[size_t(L.count_y)];
    code_pos = code_off[size_t(L.count_y)];
    exact_pos = exact_off[size_t(L.count_y)];
    return true;
  };
  auto shared = [&](int64_t q) {
    const auto [w, p] = steps[size_t(q)];
    if (p < 0) return windows[size_t(w)].count >= kMinSharedTargets;
    return phases[size_t(p)].lattice.count() >= kMinSharedTargets;
  };
  auto rows = [&](int64_t q) {
    const auto [w, p] = steps[size_t(q)];
    if (p < 0) {
      const CodeWindow& cw = windows[size_t(w)];
      return int64_t(cw.seg_u_end - cw.seg_u_begin + cw.seg_v_end - cw.seg_v_begin);
    }
    return phases[size_t(p)].lattice.count_y;
  };
  auto decode_jobs = [&](int64_t w, int64_t first, int64_t end) {
    const CodeWindow& cw = windows[size_t(w)];
    for (int64_t j = first; j < end; ++j) {
      uint16_t* out = nullptr;
      const CodeSegment& seg = job_segment(cw, j, out);
      job_status[size_t(j)] =
          entropy_decode(coder, seg.blob, kAnsCodeCenter, std::span<uint16_t>(out, size_t(seg.count)), 1);
    }
  };
  // The row pass (speculative_rows.hpp): a row's cubic predictions at once, before its
  // values (a phase's predictions read earlier phases only, so a missing target's stand-in
  // zero, written at its turn, is never read in its own phase); the linear predictor, whose
  // stand-ins are predictions themselves, decodes target by target.
  const bool row_pass = in.predictor == Predictor::cubic;
  auto decode_rows = [&](int64_t p, int64_t first, int64_t end) {
    const ScheduledPhase& ph = phases[size_t(p)];
    const PhaseLattice& L = ph.lattice;
    bool failed = false;
    if (row_pass) {
      thread_local std::vector<T> pu, pv;
      pu.resize(size_t(L.count_x));
      pv.resize(size_t(L.count_x));
      for (int64_t j = first; j < end; ++j) {
        int64_t d = id_off[size_t(j)], c = code_off[size_t(j)] - code_base, e = exact_off[size_t(j)];
        const int64_t y = L.y0 + j * L.dy;
        row_predictions2d(u.data(), nx, ny, ph, j, 0, L.count_x, pu.data());
        row_predictions2d(v.data(), nx, ny, ph, j, 0, L.count_x, pv.data());
        T* const urow = u.data() + y * nx + L.x0;
        T* const vrow = v.data() + y * nx + L.x0;
        for (int64_t i = 0; i < L.count_x; ++i) {
          // decode_speculative_target's values, from the row's predictions.
          T ru, rv;
          if (missing && missing[size_t(y * nx + L.x0 + i * L.dx)]) {
            // predict_missing_target's stand-in (zero_stand_ins: every cubic stream); no id.
            urow[i * L.dx] = vrow[i * L.dx] = T(0);
            continue;
          }
          const uint16_t id = ids[size_t(d++)];
          if (id == kZeroVectorId) {
            ru = rv = T(0);
          } else if (id_is_exact(id)) {
            ru = in.exact[size_t(2 * e)];
            rv = in.exact[size_t(2 * e + 1)];
            ++e;
          } else {
            if (!coded_target_values(pu[size_t(i)], pv[size_t(i)], bound[id], codes_u[size_t(c)], codes_v[size_t(c)],
                                     ru, rv))
              failed = true;
            ++c;
          }
          urow[i * L.dx] = ru;
          vrow[i * L.dx] = rv;
        }
      }
      if (failed) bad.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t j = first; j < end; ++j) {
      int64_t d = id_off[size_t(j)], c = code_off[size_t(j)] - code_base, e = exact_off[size_t(j)];
      const int64_t y = L.y0 + j * L.dy;
      for (int64_t i = 0; i < L.count_x; ++i) {
        const int64_t x = L.x0 + i * L.dx;
        if (missing && missing[size_t(y * nx + x)]) {
          predict_missing_target(u.data(), v.data(), nx, ny, x, y, ph.step, ph.phase, in.predictor);
          continue;
        }
        const uint16_t id = ids[size_t(d++)];
        const bool coded = id_has_code(id), exact = id_is_exact(id);
        if (!decode_speculative_target(u.data(), v.data(), nx, ny, x, y, ph.step, ph.phase, id,
                                       exact ? &in.exact[size_t(2 * e)] : nullptr,
                                       coded ? codes_u[size_t(c)] : 0, coded ? codes_v[size_t(c)] : 0, bound,
                                       in.predictor))
          failed = true;
        c += coded;
        e += exact;
      }
    }
    if (failed) bad.store(true, std::memory_order_relaxed);
  };
  for_each_phase_on_team(threads, TeamRows{0}, int64_t(steps.size()), shared, prepare, rows,
                         [&](int64_t q, int64_t first, int64_t end) {
                           const auto [w, p] = steps[size_t(q)];
                           if (p < 0) decode_jobs(w, first, end);
                           else decode_rows(p, first, end);
                         });
  FACTZ_RETURN_IF_ERROR(decode_failure);  // every window has a phase, which checked its codes
  if (bad) return corrupt_stream("decoded value is not finite");
  return Status::Ok();
}

}  // namespace

Status decode_speculative(const Header& h, const SpeculativeDecodeInput& in, int threads, std::span<float> u,
                          std::span<float> v, const uint8_t* missing, int64_t min_code_window) {
  return decode_speculative_any(h, in, threads, u, v, missing, min_code_window);
}
Status decode_speculative(const Header& h, const SpeculativeDecodeInput64& in, int threads, std::span<double> u,
                          std::span<double> v, const uint8_t* missing, int64_t min_code_window) {
  return decode_speculative_any(h, in, threads, u, v, missing, min_code_window);
}

}  // namespace factz::detail
