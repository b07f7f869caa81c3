// The level-wise bound's trial (speculative_trial.hpp): the schedule on a crop, scored.
#include "streams/speculative_trial.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "kernels/speculative_decode.hpp"
#include "kernels/tiles.hpp"
#include "streams/code_segments.hpp"

namespace factz::detail {
namespace {

/// Bits of one blob of symbols: its zeroth-order entropy plus 16 bits of table per value.
/// `count`: 2^16 zeros, left as zeros (a scratch table reused across blobs). The sum runs
/// over the values present in increasing order (the order of a scan of the whole table, so
/// the same double), without visiting the 2^16 entries: a trial scores about a hundred
/// blobs, most of them small. `distinct` (optional): how many values are present.
double blob_bits(std::span<const uint16_t> symbols, std::vector<int64_t>& count, size_t* distinct = nullptr) {
  std::vector<uint16_t> present;
  for (const uint16_t x : symbols)
    if (count[x]++ == 0) present.push_back(x);
  std::sort(present.begin(), present.end());
  double bits = 0;
  for (const uint16_t x : present) {
    const int64_t c = count[x];
    bits += 16.0 - double(c) * std::log2(double(c) / double(symbols.size()));
  }
  for (const uint16_t x : present) count[x] = 0;
  if (distinct) *distinct = present.size();
  return bits;
}

/// The trial's payload estimate of one run of the schedule, fed its targets in stream order
/// (target(), phase after phase between begin_phase() and end_phase()): the ids'
/// zeroth-order entropy per phase (the coder's contexts follow a phase's run of equal ids;
/// one table), each component's codes in the segments the writer cuts (phase_segments; or
/// one blob where the writer may keep one and it is smaller: fields of fewer than
/// kAlwaysSegmentCodes vertices, `full_n`), and the raw bits of the exact values (every
/// anchor and the targets of id 0). The trial's own runs and the encoder's (on fields the
/// trial sees whole) are scored by this one piece, so they choose alike.
class PayloadEstimate {
 public:
  PayloadEstimate(int64_t anchors, std::vector<int64_t>& count) : exact_(anchors), count_(count) {}
  void begin_phase() {
    ids_.clear();
    phase_codes_.push_back(0);
  }
  void target(uint16_t id, uint16_t sym_u, uint16_t sym_v) {
    ids_.push_back(id);
    if (id_has_code(id)) {
      codes_u_.push_back(sym_u);
      codes_v_.push_back(sym_v);
      ++phase_codes_.back();
    }
    exact_ += id == 0;
  }
  void end_phase() {
    size_t present = 0;
    const double bits = blob_bits(ids_, count_, &present);
    id_bits_ += bits - 16.0 * double(present);  // one table for all phases
  }
  double bits(int64_t full_n, size_t value_bytes) {
    double seg_bits = 0;
    int64_t first = 0;
    for (const int64_t size : phase_segments(phase_codes_)) {
      seg_bits += blob_bits(std::span(codes_u_).subspan(size_t(first), size_t(size)), count_) +
                  blob_bits(std::span(codes_v_).subspan(size_t(first), size_t(size)), count_);
      first += size;
    }
    const double one_bits = blob_bits(codes_u_, count_) + blob_bits(codes_v_, count_);
    const double codes = full_n >= kAlwaysSegmentCodes ? seg_bits : std::min(seg_bits, one_bits);
    return id_bits_ + codes + double(exact_) * 16.0 * value_bytes;
  }

 private:
  int64_t exact_;
  std::vector<int64_t>& count_;  // blob_bits' scratch table
  double id_bits_ = 0;
  std::vector<uint16_t> ids_, codes_u_, codes_v_;  // the phase's ids; every code, in stream order
  std::vector<int64_t> phase_codes_;
};

/// The crop's original signatures (original_signatures' values), shared by its two runs.
template <class T>
std::vector<uint8_t> crop_signatures(int64_t nx, int64_t ny, const std::vector<T>& u, const std::vector<T>& v,
                                     const uint8_t* missing) {
  const Grid2D g{nx, ny};
  const int64_t cw = nx - 1;
  std::vector<uint8_t> sig(size_t(std::max<int64_t>(g.triangle_count(), 1)));
  for (int64_t i = 0; i + 1 < ny; ++i)
    for (int64_t j = 0; j < cw; ++j)
      original_signatures_quick(g, i, j, u.data(), v.data(), missing, &sig[size_t(2 * (i * cw + j))]);
  return sig;
}

/// Estimated payload bits (PayloadEstimate) of the speculative schedule on a (filled) field
/// with tight step `tight`. `missing`: null or one byte per vertex; `sig`: crop_signatures.
template <class T>
double trial_payload_bits(int64_t nx, int64_t ny, const std::vector<T>& u, const std::vector<T>& v,
                          const uint8_t* missing, const std::vector<uint8_t>& sig, T eb, int64_t s0, Predictor pred,
                          int64_t tight, int64_t full_n) {
  const Grid2D g{nx, ny};
  std::vector<T> cu(u), cv(v);
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  if (missing) fill_missing_anchors(A, nx, missing, cu.data(), cv.data(), pred);
  std::vector<int64_t> count(size_t(1) << 16, 0);
  PayloadEstimate estimate(A.count(), count);
  PhaseSchedule schedule(nx, ny, s0);
  for (ScheduledPhase ph; schedule.next(ph);) {
    const PhaseLattice& L = ph.lattice;
    estimate.begin_phase();
    for (int64_t t = 0; t < L.count(); ++t) {
      const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
      const int64_t k = y * nx + x;
      if (missing && missing[k]) {
        predict_missing_target(cu.data(), cv.data(), nx, ny, x, y, ph.step, ph.phase, pred);
        continue;
      }
      const SpeculationOf<T> sp = speculate_vertex(g, x, y, ph.step, ph.phase, u.data(), v.data(), cu.data(),
                                                   cv.data(), sig.data(), bound, kRadius, true, pred, tight);
      cu[size_t(k)] = sp.recon_u;
      cv[size_t(k)] = sp.recon_v;
      estimate.target(sp.id, uint16_t(sp.code_u + kRadius), uint16_t(sp.code_v + kRadius));
    }
    estimate.end_phase();
  }
  return estimate.bits(full_n, sizeof(T));
}

/// The trial's rule on the estimates of the schedule without (bits[0]) and with (bits[1])
/// the tight levels: tight only when at least 1 % smaller.
int64_t tight_if_smaller(const double bits[2]) { return bits[1] < bits[0] * 0.99 ? kTrialTightStep : kNoTightLevel; }

template <class T>
int64_t choose_on_crop(const TrialCrop& crop, int64_t full_n, const std::vector<T>& u, const std::vector<T>& v,
                       const std::vector<uint8_t>& missing, T eb, int64_t s0, Predictor pred, int threads) {
  if (pred == Predictor::linear || !(eb > T(0)) || crop.w < 2 || crop.h < 2) return kNoTightLevel;
  const uint8_t* m = missing.empty() ? nullptr : missing.data();
  const int64_t tights[2] = {kNoTightLevel, kTrialTightStep};
  double bits[2] = {0, 0};
  const std::vector<uint8_t> sig = crop_signatures(crop.w, crop.h, u, v, m);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads > 1 ? 2 : 1) schedule(static, 1)
#endif
  for (int i = 0; i < 2; ++i)
    bits[i] = trial_payload_bits(crop.w, crop.h, u, v, m, sig, eb, s0, pred, tights[i], full_n);
  (void)threads;
  return tight_if_smaller(bits);
}

template <class T>
int64_t choose_host(int64_t nx, int64_t ny, const T* u, const T* v, const uint8_t* missing, T eb, int64_t s0,
                    Predictor pred, int threads) {
  const TrialCrop c = trial_crop(nx, ny);
  std::vector<T> cu(size_t(c.w * c.h)), cv(size_t(c.w * c.h));
  std::vector<uint8_t> cm(missing ? size_t(c.w * c.h) : 0);
  for (int64_t y = 0; y < c.h; ++y)
    for (int64_t x = 0; x < c.w; ++x) {
      const size_t from = size_t((c.y0 + y) * nx + c.x0 + x), to = size_t(y * c.w + x);
      cu[to] = u[from];
      cv[to] = v[from];
      if (missing) cm[to] = missing[from];
    }
  return choose_on_crop(c, nx * ny, cu, cv, cm, eb, s0, pred, threads);
}

}  // namespace

bool trial_is_whole_field(int64_t nx, int64_t ny, bool positive_bound, Predictor pred, uint8_t exact_edges) {
  return pred != Predictor::linear && positive_bound && nx >= 2 && ny >= 2 && exact_edges == 0 &&
         trial_crop_side(nx) == nx && trial_crop_side(ny) == ny;
}

int64_t trial_choice_on_runs(int64_t nx, int64_t ny, int64_t s0, const std::vector<uint16_t>* const ids[2],
                             const std::vector<uint16_t>* const sym_u[2], const std::vector<uint16_t>* const sym_v[2],
                             int value_bytes) {
  // trial_payload_bits' estimate, read off the runs: the same targets in the same order
  // (missing ones left out, as the trial leaves them out).
  std::vector<int64_t> count(size_t(1) << 16, 0);
  double bits[2];
  for (int r = 0; r < 2; ++r) {
    PayloadEstimate estimate(anchor_lattice(nx, ny, s0).count(), count);
    int64_t at = 0;
    PhaseSchedule schedule(nx, ny, s0);
    for (ScheduledPhase ph; schedule.next(ph);) {
      estimate.begin_phase();
      for (int64_t t = 0; t < ph.lattice.count(); ++t, ++at) {
        const uint16_t id = (*ids[r])[size_t(at)];
        if (id != kMissingVertex) estimate.target(id, (*sym_u[r])[size_t(at)], (*sym_v[r])[size_t(at)]);
      }
      estimate.end_phase();
    }
    bits[r] = estimate.bits(nx * ny, size_t(value_bytes));
  }
  return tight_if_smaller(bits);
}

int64_t trial_crop_side(int64_t n) {
  return n <= kTrialCropMin ? n : std::max(kTrialCropMin, std::min(kTrialCropMax, n / 2));
}

TrialCrop trial_crop(int64_t nx, int64_t ny) {
  const int64_t w = trial_crop_side(nx), h = trial_crop_side(ny);
  return {(nx - w) / 2, (ny - h) / 2, w, h};
}

int64_t choose_tight_step_on_crop(const TrialCrop& crop, int64_t full_n, const std::vector<float>& u,
                                  const std::vector<float>& v, const std::vector<uint8_t>& missing, float eb, int64_t s0,
                                  Predictor pred, int threads) {
  return choose_on_crop(crop, full_n, u, v, missing, eb, s0, pred, threads);
}
int64_t choose_tight_step_on_crop(const TrialCrop& crop, int64_t full_n, const std::vector<double>& u,
                                  const std::vector<double>& v, const std::vector<uint8_t>& missing, double eb,
                                  int64_t s0, Predictor pred, int threads) {
  return choose_on_crop(crop, full_n, u, v, missing, eb, s0, pred, threads);
}
int64_t choose_tight_step(int64_t nx, int64_t ny, const float* u, const float* v, const uint8_t* missing, float eb,
                          int64_t s0, Predictor pred, int threads) {
  return choose_host(nx, ny, u, v, missing, eb, s0, pred, threads);
}
int64_t choose_tight_step(int64_t nx, int64_t ny, const double* u, const double* v, const uint8_t* missing,
                          double eb, int64_t s0, Predictor pred, int threads) {
  return choose_host(nx, ny, u, v, missing, eb, s0, pred, threads);
}

}  // namespace factz::detail
