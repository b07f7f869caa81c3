// Scalar-field compression: mode none (pointwise bound) and mode contour_tree (TopoSZ).
// Stream layout: docs/format.md ("Scalar streams") and docs/toposz.md. Missing vertices
// (ScalarField::mask, NaN) take no code: the decoder reads the mask first and gives each
// one a stand-in for the predictions after it, then lays the stored bits over it.
//
// Both modes share one decoder: a Lorenzo prediction from already decoded values and a
// quantization code per vertex (symbol 0: the value is stored exactly; scalar_quantizer.hpp).
// The contour-tree mode only changes which code the encoder picks (toposz_encoder.hpp); the
// decoder never needs its constraints.
//
// One implementation for float32 and float64 fields (T = float, double): a float64 stream
// (data type 2, version 6) holds an f64 step and bound in its meta section and 8-byte exact
// and masked values; each decoder refuses the other type's streams.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "codec/coder.hpp"
#include "codec/context_coder.hpp"
#include "codec/zstd_stage.hpp"
#include "factz/contour_tree.hpp"
#include "format/container.hpp"
#include "scalar/contour_tree_core.hpp"
#include "scalar/exact_residuals.hpp"
#include "scalar/scalar_checks.hpp"
#include "scalar/scalar_interp.hpp"
#include "scalar/scalar_quantizer.hpp"
#include "scalar/toposz_encoder.hpp"
#include "streams/mask_sections.hpp"
#include "streams/source_section.hpp"
#include "streams/stream_common.hpp"
#include "streams/tiled_lists.hpp"
#include "streams/vector_stream.hpp"
#include "util/big_vector.hpp"
#include "util/byte_io.hpp"

namespace factz {
namespace {

constexpr uint16_t kCenter = detail::kScalarCenter;
constexpr int64_t kMaxCode = detail::kScalarMaxCode;
constexpr uint32_t kRadius = 32768;  // recorded in meta
constexpr size_t kMetaBytes = 24;    // float32: f32 step, u32 radius, f64 persistence, f64 persistence_abs
constexpr size_t kMetaBytes64 = 36;  // float64: f64 step, u32 radius, f64 persistence, f64 persistence_abs, f64 eb

using Clock = std::chrono::steady_clock;
using detail::QuantizedOf;
using detail::ScalarGrid;

template <class T>
constexpr bool kIsDouble = std::is_same_v<T, double>;

// A value of the field's type from `r` (float32 or float64, little-endian).
template <class T>
bool read_value(detail::ByteReader& r, T& x) {
  if constexpr (kIsDouble<T>) return r.f64(x);
  else return r.f32(x);
}

Status check_options(const ScalarOptions& o) {
  if (o.mode != ScalarMode::none && o.mode != ScalarMode::contour_tree) return invalid_argument("unknown scalar mode");
  if (o.coder != Coder::huffman && o.coder != Coder::ans && o.coder != Coder::context && o.coder != Coder::smallest)
    return invalid_argument("unknown coder");
  if (o.bound_mode != BoundMode::abs && o.bound_mode != BoundMode::rel) return invalid_argument("unknown bound mode");
  if (o.predictor != ScalarPredictor::best && o.predictor != ScalarPredictor::lorenzo &&
      o.predictor != ScalarPredictor::interpolation)
    return invalid_argument("unknown scalar predictor");
  if (!std::isfinite(o.bound) || o.bound < 0) return invalid_argument("bound must be a finite number >= 0");
  if (!std::isfinite(o.persistence) || o.persistence < 0)
    return invalid_argument("persistence must be a finite number >= 0");
  return Status::Ok();
}

// The stream of quantized values `q` (docs/format.md, "Scalar streams"), its codes written
// with `coder` (ans, huffman or context); `lattice`: quantize_lattice's, `interp`:
// quantize_interp's (layout version 22 or 23), else quantize's.
template <class T>
Result<std::vector<uint8_t>> scalar_stream(const ScalarFieldOf<T>& field, std::span<const uint8_t> missing,
                                          const ScalarOptions& o, Coder coder, T eb, T step, double p_abs,
                                          const QuantizedOf<T>& q, int threads, bool lattice = false,
                                          bool interp = false,
                                          detail::InterpOrder order = detail::InterpOrder::xyz) {
  const bool ct = o.mode == ScalarMode::contour_tree;
  std::vector<detail::Section> sections;
  {
    detail::ByteWriter w;
    if constexpr (kIsDouble<T>) w.f64(step);
    else w.f32(step);
    w.u32(kRadius);
    detail::put_le(w.bytes(), std::bit_cast<uint64_t>(ct ? o.persistence : 0.0), 8);
    detail::put_le(w.bytes(), std::bit_cast<uint64_t>(p_abs), 8);
    if constexpr (kIsDouble<T>) w.f64(eb);  // the header holds its float_bound
    if (interp) w.bytes().push_back(uint8_t(order));  // layouts 22 and 23: the walk's order
    sections.push_back({detail::kSectionMeta, std::move(w.bytes())});
  }
  {
    std::vector<uint8_t> coded;
    if (coder == Coder::context) {
      const detail::CodeGrid cg{field.nx, field.ny, field.nz, missing};
      FACTZ_RETURN_IF_ERROR(detail::context_encode(q.symbols, cg, coded, threads));
    } else {
      FACTZ_RETURN_IF_ERROR(detail::entropy_encode(detail::EntropyCoder(coder), q.symbols, kCenter, coded, threads));
    }
    sections.push_back({detail::kSectionCodesU, std::move(coded)});
  }
  bool coded_exact = false;
  {
    detail::ByteWriter w;
    for (T x : q.exact) {
      if constexpr (kIsDouble<T>) w.f64(x);
      else w.f32(x);
    }
    std::vector<uint8_t> raw = std::move(w.bytes());
    // On the lattice the exact values may be coded against the decoder's predictions
    // (version 14): kept where that is smaller than the raw values after the zstd stage.
    if (lattice && !q.exact.empty()) {
      std::vector<uint8_t> coded =
          detail::encode_exact_residuals<T>(q.exact, q.exact_refs, q.grid_shift);
      // The raw values as the container would store them (zstd stage, byte shuffle).
      auto raw_stored =
          detail::stored_values_size(raw, o.zstd, kIsDouble<T> ? detail::kDtypeFloat64 : detail::kDtypeFloat32);
      if (!raw_stored.ok()) return raw_stored.status();
      if (coded.size() < raw_stored.value()) {
        raw = std::move(coded);
        coded_exact = true;
      }
    }
    sections.push_back({detail::kSectionExactValues, std::move(raw)});
  }
  // Missing vertices: the mask over the grid's nx x (ny * nz) rows and the bits they held,
  // each written as both halves of the sections' (u, v) pair (docs/format.md).
  if (!missing.empty())
    detail::append_mask_sections(missing, field.nx, field.ny * field.nz, field.values, field.values, sections);
  // Where the field came from (section 12; the layout version is 4 at least, the container
  // version 19).
  detail::append_source_section(o.source, sections);
  detail::Header h = detail::stream_header(uint64_t(field.nx), uint64_t(field.ny), uint64_t(field.nz), o.bound_mode,
                                           o.bound, detail::float_bound(double(eb)));
  h.components = 1;
  h.ndims = uint8_t(field.ndims());
  h.mode = uint8_t(o.mode);
  h.coder = uint8_t(coder);
  h.tile = 32;
  h.anchor_stride = 0;
  h.dtype = kIsDouble<T> ? detail::kDtypeFloat64 : detail::kDtypeFloat32;
  std::vector<uint32_t> ids;
  for (const auto& sec : sections) ids.push_back(sec.id);
  h.version = coded_exact ? detail::kFormatVersionScalarLatticeCoded
              : lattice   ? detail::kFormatVersionScalarLattice
                          : detail::stream_version(ids, false, h.dtype);
  if (coder == Coder::context)  // the same layouts, context-coded: 2 / 3 / 6 -> 15, 11 -> 16, 14 -> 17
    h.version = coded_exact ? detail::kFormatVersionScalarLatticeCodedContext
                : lattice   ? detail::kFormatVersionScalarLatticeContext
                            : detail::kFormatVersionScalarContext;
  if (interp)
    h.version = coder == Coder::context ? detail::kFormatVersionScalarInterpContext : detail::kFormatVersionScalarInterp;
  detail::offer_zstd(sections, o.zstd);
  return detail::write_stream(h, std::move(sections));
}

template <class T>
using StepChoice = detail::StepChoiceOf<T>;

// The race's finalists (race_steps): besides the step done first, at most kFinalists others
// of each predictor whose streams so far are within kFinalMargin of its stream run to their
// end unless their streams pass kFinalDrop times that margin, and the smallest stream with
// any coder asked for is kept. The margin was 5 % until the finalists' regular vertices
// moved (move_regular_vertices), which shrinks some streams more than others: at 15 % the
// NCL level-0 height at REL / P 1e-2 keeps 1222 bytes instead of 1339 (9 % more compression
// time over the 19 real fields).
constexpr size_t kFinalists = 2;
constexpr double kFinalMargin = 0.15;
// A finalist whose stream so far passes 1.2 times the margin's size stops (1.5 until the 19
// real fields at four REL / P pairs showed no kept finalist past 1.052 times the margin and
// no stream so far coming back down by more than 0.046 of it; the sea ice's losing
// finalists ran 16-28 rounds each to pass 1.5).
constexpr double kFinalDrop = 1.2;

// The largest field (vertices) whose interpolation finalists also move the regular vertices
// of every level, not only the finest level's (move_regular_vertices): on the smooth 256^3
// field (16.8 M vertices) that walk took 4.3 s, three quarters of the compression before it,
// for the same stream; a field above 2^22 vertices races at most 8 candidates anyway.
constexpr size_t kEveryLevelMovesUpTo = size_t(1) << 22;

// The coder the codes are written with while streams are compared (the contour-tree race):
// ANS for Coder::smallest (beside the context coder where the codes are short: compress_of),
// whose kept quantization is written with each coder once, at the end.
Coder racing_coder(Coder c) { return c == Coder::smallest ? Coder::ans : c; }

// The kept stream of Coder::smallest: the quantization written with ANS, Huffman and the
// context coder, the smallest (ANS, then Huffman, then context on ties), `written` (coded
// with `written_as`) standing for its own coder and `write` giving the others; another
// coder's as written.
template <class Write>
Result<std::vector<uint8_t>> keep_smallest(Coder asked, Coder written_as, std::vector<uint8_t> written, Write write,
                                           ScalarCompressStats& st) {
  st.coder = written_as;
  if (asked != Coder::smallest) return written;
  std::optional<std::vector<uint8_t>> best;
  for (Coder c : {Coder::ans, Coder::huffman, Coder::context}) {
    std::vector<uint8_t> stream;
    if (c == written_as) {
      stream = std::move(written);
    } else {
      auto other = write(c);
      if (!other.ok()) return other.status();
      stream = std::move(other.value());
    }
    if (!best || stream.size() < best->size()) {
      best = std::move(stream);
      st.coder = c;
    }
  }
  return std::move(*best);
}

// The race's second thread (race_steps: finalists side by side, rounds run ahead) works on
// fields up to kSecondThreadUpTo vertices: each round under way holds a contour tree's work
// arrays, about 40 bytes per vertex more at the peak.
constexpr size_t kSecondThreadUpTo = size_t(1) << 23;
// At most this many steps hold a round run ahead at a time (race_steps), and fewer on larger
// fields, so that they hold at most about kRoundsAheadVertices vertices (at least one step):
// each holds a copy of its step's state, about 20 bytes per vertex. Without a cap the sea
// ice at REL / P 1e-2 (588 k vertices) peaked at 1.18 GB instead of 0.66 GB (0.80 GB with
// 4); a replay of its race gave the rounds run beside another 1.40 times the one-thread
// speed with 4, 1.47 without a cap, 1.32 with 1.
constexpr std::ptrdiff_t kMaxRoundsAhead = 4;
constexpr size_t kRoundsAheadVertices = size_t(1) << 22;
std::ptrdiff_t max_rounds_ahead(size_t n) {
  return std::clamp<std::ptrdiff_t>(std::ptrdiff_t(kRoundsAheadVertices / std::max<size_t>(n, 1)), 1, kMaxRoundsAhead);
}
int parallel_finalists(size_t finalists, size_t n, int threads) {
  if (finalists < 3 || threads < 2 || n > kSecondThreadUpTo) return 1;  // the first is done already
  return std::min<int>(threads, int(finalists - 1));
}

// ScalarProgressHook's contract: reports reach the caller's hook on the calling thread only. A
// report made on another thread (a finalist run beside the caller's) waits here until the
// calling thread makes its next report or drains the queue.
class ProgressRelay {
 public:
  explicit ProgressRelay(const ScalarProgressHook& user) : user_(user) {
    hook_ = [this](const ScalarProgress& p) {
      if (std::this_thread::get_id() != caller_) {
        const std::lock_guard<std::mutex> lock(mutex_);
        queued_.push_back(p);
        return;
      }
      drain();
      user_(p);
    };
  }
  ProgressRelay(const ProgressRelay&) = delete;
  ProgressRelay& operator=(const ProgressRelay&) = delete;
  /// The hook to give the steps (empty where the caller's is).
  const ScalarProgressHook* hook() const { return user_ ? &hook_ : &user_; }
  /// On the calling thread: the queued reports, in the order they were made.
  void drain() {
    if (!user_ || std::this_thread::get_id() != caller_) return;
    std::vector<ScalarProgress> ready;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ready.swap(queued_);
    }
    for (const ScalarProgress& p : ready) user_(p);
  }

 private:
  const ScalarProgressHook& user_;
  const std::thread::id caller_ = std::this_thread::get_id();
  ScalarProgressHook hook_;
  std::mutex mutex_;
  std::vector<ScalarProgress> queued_;
};

// The steps race (docs/toposz.md, "Steps"): a round of repair mostly adds constraints and
// exact values, so a step's stream so far stands for a lower bound on its final one.
// Every step is quantized first (its round 0, two at a time on two threads); from then on
// the step with the smallest stream so far (the earlier on ties) runs the next round,
// until that step is done: no other step is then expected to end smaller. Each round
// costs a contour tree, so a step that falls behind stops early instead of running to the
// end. A repair whose level components need more than max(2^20, n / 16) vertices of
// search is suspended while another step can go on (on the real fields a repair searches
// at most 0.8 n, 12 n on sea-ice plateaus; about 10 n, 5 s, for a coarse step of a smooth
// 256^3 field); when every step left is suspended, or when the step that is done has a
// stream more than twice the size of a suspended step's so far (an interpolation step
// against a Lorenzo one on a smooth field), they go on without a budget. A step above the
// threshold (StepChoice::coarse) whose first protection searches more than n *
// kCoarseSearch vertices leaves the race before it is quantized (sea ice's plateaus at REL
// 1e-2, P 1e-3: 7.3 s against 3.0 s without those steps). The stream so far is no strict
// lower bound, and the race compares streams of one or two coders while the kept step is written with every
// coder asked for, so the first step done and its finalists (kFinalists, kFinalMargin) run
// to their end and the smallest final stream is kept. Streams are written only where sizes
// are compared, and for the finalists. On two threads the finalists run side by side, and
// beside each round of the race the next step in line runs its next round ahead on a copy,
// which the race takes when that step's turn comes (docs/toposz.md, "Two threads"): the
// rounds and decisions are one thread's. `drain` hands the calling thread the progress
// reports the other thread made (ProgressRelay).
template <class T, class Write, class Keep, class Drain>
Result<std::vector<uint8_t>> race_steps(const detail::TopoInputOf<T>& in, const std::vector<StepChoice<T>>& steps,
                                        Write write, Keep keep, Drain drain, detail::CtWorkspace& work,
                                        ScalarCompressStats& st) {
  // A step's next round run ahead, beside another step's round, on a copy of the step: the
  // race takes it when it would run that round itself (take_ahead), so the order of rounds,
  // and every decision, is one thread's.
  struct Ahead {
    std::unique_ptr<detail::TopoStepOf<T>> step;  // the step after the round
    detail::TopoRound round = detail::TopoRound::repaired;
    int64_t budget = 0;  // the search budget it ran with
    Status status = Status::Ok();
    std::optional<std::vector<uint8_t>> stream;  // written where the round quantized
    std::vector<ScalarProgress> reports;         // its progress reports, made when taken
    ScalarProgressHook hook;
  };
  struct Candidate {
    std::unique_ptr<detail::TopoStepOf<T>> step;
    std::vector<uint8_t> stream;
    uint64_t written = 0;  // the step's quantizations() when `stream` was written
    bool suspended = false;
    std::unique_ptr<Ahead> ahead;
  };
  std::vector<Candidate> race(steps.size());
  std::vector<Status> failed(steps.size(), Status::Ok());
#pragma omp parallel for num_threads(std::min<int>(in.threads, int(steps.size()))) schedule(dynamic, 1)
  for (size_t k = 0; k < steps.size(); ++k) {  // round 0 of every step
    const int64_t first_budget =
        steps[k].coarse ? int64_t(in.f.size()) * detail::kCoarseSearch : detail::TopoStep::kNoBudget;
    race[k].step = std::make_unique<detail::TopoStepOf<T>>(in, steps[k].step, int64_t(k), steps[k].lattice,
                                                           steps[k].late_levels, steps[k].interp, first_budget,
                                                           steps[k].reach);
    if (race[k].step->abandoned()) continue;
    auto stream = write(*race[k].step);
    if (stream.ok()) race[k].stream = std::move(stream.value());
    else failed[k] = stream.status();
    race[k].written = race[k].step->quantizations();
  }
  for (const Status& f : failed) FACTZ_RETURN_IF_ERROR(f);
  std::erase_if(race, [](const Candidate& c) { return c.step->abandoned(); });  // never the finer steps
  // A stream is written again whenever its step has quantized since: after a repair, and
  // after the last resort that stores every value exactly (whose round ends the step: a
  // stream refreshed only after repairs kept the quantization before it, with its false
  // cases, on a field that ran out of rounds).
  auto refresh = [&](Candidate& c) -> Status {
    if (c.written == c.step->quantizations()) return Status::Ok();
    auto stream = write(*c.step);
    if (!stream.ok()) return stream.status();
    c.stream = std::move(stream.value());
    c.written = c.step->quantizations();
    return Status::Ok();
  };
  // The next round of c run ahead on a copy (one thread; `w` its tree work arrays).
  auto run_ahead = [&](Candidate& c, detail::CtWorkspace& w, int64_t round_budget) {
    auto a = std::make_unique<Ahead>();
    a->hook = [reports = &a->reports](const ScalarProgress& p) { reports->push_back(p); };
    a->step = std::make_unique<detail::TopoStepOf<T>>(*c.step);
    a->step->report_to(&a->hook);
    a->budget = round_budget;
    a->round = a->step->advance(w, round_budget);
    if (a->step->quantizations() != c.written) {
      auto stream = write(*a->step);
      if (stream.ok()) a->stream = std::move(stream.value());
      else a->status = stream.status();
    }
    c.ahead = std::move(a);
  };
  // The round of c run ahead, if any, taken as c's next round at `round_budget`: true where
  // it is that round. A round suspended at a smaller budget than now's would have gone on:
  // it is dropped, and the caller runs the round.
  auto take_ahead = [&](Candidate& c, int64_t round_budget, Status& status) {
    if (!c.ahead) return false;
    const std::unique_ptr<Ahead> a = std::move(c.ahead);
    if (a->round == detail::TopoRound::suspended && a->budget != round_budget) return false;
    status = a->status;
    c.step = std::move(a->step);
    c.step->report_to(in.progress);
    if (in.progress && *in.progress)
      for (const ScalarProgress& p : a->reports) (*in.progress)(p);
    if (a->stream) {
      c.stream = std::move(*a->stream);
      c.written = c.step->quantizations();
    }
    c.suspended = a->round == detail::TopoRound::suspended;
    return true;
  };
  // Where two threads are free, the step with the smallest stream so far after the one the
  // race runs (not suspended, not done, with no round ahead) runs its next round beside it,
  // while fewer than max_rounds_ahead steps hold a round ahead (each a copy of its step).
  const bool ahead_allowed = in.threads >= 2 && in.f.size() <= kSecondThreadUpTo;
  detail::CtWorkspace beside_work;
  int64_t budget = std::max<int64_t>(int64_t(1) << 20, int64_t(in.f.size()) / 16);
  Candidate* last = nullptr;
  int64_t rounds = 0, rounds_ahead = 0;  // ScalarCompressStats::race_rounds, rounds_ahead
  for (;;) {
    Candidate* best = nullptr;
    size_t smallest_suspended = SIZE_MAX;
    for (Candidate& c : race) {
      FACTZ_RETURN_IF_ERROR(refresh(c));
      if (c.suspended) smallest_suspended = std::min(smallest_suspended, c.stream.size());
      else if (!best || c.stream.size() < best->stream.size()) best = &c;
    }
    // Every step left suspended, or the best one done while a suspended step's stream so far
    // is under half of it (the interpolation predictor's coarse step on a smooth field
    // against Lorenzo's: a tenth): they go on without a budget.
    if (!best || (best->step->done() && smallest_suspended <= best->stream.size() / 2)) {
      for (Candidate& c : race) c.suspended = false;
      budget = detail::TopoStep::kNoBudget;
      continue;
    }
    if (best->step->done()) {
      // The finalists: the done step and, of each predictor, the kFinalists others whose
      // streams so far are within kFinalMargin of its stream (the smallest first), each run
      // to its end unless its stream so far passes kFinalDrop times that margin's size (a
      // stream so far may pass the margin and come back under it: the nc4uvt temperature's
      // interpolation), and written with every coder asked for; the smallest kept (the
      // earlier on ties). Per predictor, because their streams so far grow differently (the
      // interpolation's repairs add exact values that the zstd stage's byte shuffle packs
      // well): the done step's own predictor must not crowd the other one out (nc4uvt at REL
      // / P 1e-2: 15968 bytes with the finalists of one list, 13961 with these).
      const double limit = double(best->stream.size()) * (1 + kFinalMargin);
      std::vector<Candidate*> finalists{best};
      std::vector<Candidate*> within;
      for (Candidate& c : race)
        if (&c != best && double(c.stream.size()) <= limit) within.push_back(&c);
      std::stable_sort(within.begin(), within.end(),
                       [](const Candidate* a, const Candidate* b) { return a->stream.size() < b->stream.size(); });
      size_t taken[3] = {0, 0, 0};
      for (Candidate* c : within)
        if (taken[c->step->interp() ? (c->step->reach() ? 2 : 1) : 0]++ < kFinalists) finalists.push_back(c);
      // Each finalist runs and is kept independently of the others (its rounds, its "out"
      // test against the fixed limit, its streams), so two run at once, one per thread, each
      // with its own tree work arrays; the choice below goes through them in list order, as
      // one thread would.
      struct Final {
        Status status = Status::Ok();
        bool out = false;  // its stream so far went far past the margin: it stopped there
        bool out_of_memory = false;
        int64_t rounds = 0, rounds_ahead = 0;
        std::vector<uint8_t> stream;
        ScalarCompressStats stats;
      };
      std::vector<Final> finals(finalists.size());
      const int team = parallel_finalists(finalists.size(), in.f.size(), in.threads);
      std::vector<detail::CtWorkspace> own(size_t(team - 1));
      auto run_finalist = [&](Candidate& c, detail::CtWorkspace& w, Final& r) {
        while (!c.step->done() && !r.out) {
          ++r.rounds;
          if (take_ahead(c, detail::TopoStep::kNoBudget, r.status)) {  // its first round, at most
            ++r.rounds_ahead;
          } else {
            c.step->advance(w);
            r.status = refresh(c);
          }
          if (!r.status.ok()) return;
          r.out = double(c.stream.size()) > limit * kFinalDrop;
        }
        if (r.out) return;  // the others' streams are fresh: refreshed above, or after their last round
        r.stats = st;
        auto stream = keep(*c.step, std::move(c.stream), r.stats, w);
        if (!stream.ok()) r.status = stream.status();
        else r.stream = std::move(stream.value());
      };
      if (team == 1) {
        for (size_t i = 0; i < finalists.size(); ++i) {
          if (!finalists[i]->step->done()) last = finalists[i];
          run_finalist(*finalists[i], work, finals[i]);
        }
      } else {
        last = nullptr;
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
        for (size_t i = 0; i < finalists.size(); ++i) {
          const int t = omp_get_thread_num();
          detail::CtWorkspace& w = t == 0 ? work : own[size_t(t - 1)];
          try {
            run_finalist(*finalists[i], w, finals[i]);
          } catch (const std::bad_alloc&) {
            finals[i].out_of_memory = true;  // thrown again below, outside the threads
          }
        }
        drain();
        for (const Final& r : finals)
          if (r.out_of_memory) throw std::bad_alloc();
      }
      Candidate* kept = nullptr;
      Final* kept_final = nullptr;
      for (size_t i = 0; i < finalists.size(); ++i) {
        Final& r = finals[i];
        FACTZ_RETURN_IF_ERROR(r.status);
        if (r.out) continue;
        Candidate* c = finalists[i];
        if (!kept || r.stream.size() < kept_final->stream.size() ||
            (r.stream.size() == kept_final->stream.size() && c->step->index() < kept->step->index())) {
          kept = c;
          kept_final = &r;
        }
      }
      std::vector<uint8_t> kept_stream = std::move(kept_final->stream);
      ScalarCompressStats kept_stats = std::move(kept_final->stats);
      if (kept != last) kept->step->report_final();
      st = std::move(kept_stats);
      for (const Final& r : finals) {
        rounds += r.rounds;
        rounds_ahead += r.rounds_ahead;
      }
      st.race_rounds = rounds;
      st.rounds_ahead = rounds_ahead;
      st.iterations = kept->step->rounds();
      st.predictor = kept->step->interp() ? ScalarPredictor::interpolation : ScalarPredictor::lorenzo;
      return kept_stream;
    }
    last = best;
    Status taken = Status::Ok();
    ++rounds;
    if (take_ahead(*best, budget, taken)) {
      FACTZ_RETURN_IF_ERROR(taken);
      ++rounds_ahead;
      continue;
    }
    Candidate* beside = nullptr;
    const auto held_ahead = std::count_if(race.begin(), race.end(), [](const Candidate& c) { return bool(c.ahead); });
    if (ahead_allowed && held_ahead < max_rounds_ahead(in.f.size()))
      for (Candidate& c : race)
        if (&c != best && !c.suspended && !c.ahead && !c.step->done() &&
            (!beside || c.stream.size() < beside->stream.size()))
          beside = &c;
    if (!beside) {
      best->suspended = best->step->advance(work, budget) == detail::TopoRound::suspended;
      continue;
    }
    detail::TopoRound round = detail::TopoRound::repaired;
    Status written = Status::Ok();
    bool out_of_memory = false;
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {
        try {
          round = best->step->advance(work, budget);
          written = refresh(*best);  // its stream too, while the other thread writes its own
        } catch (const std::bad_alloc&) {
          out_of_memory = true;  // thrown again below, outside the threads
        }
      } else {
        try {
          run_ahead(*beside, beside_work, budget);
        } catch (const std::bad_alloc&) {
          beside->ahead.reset();  // no round ahead: the race runs it when it comes
        }
      }
    }
    if (out_of_memory) throw std::bad_alloc();
    FACTZ_RETURN_IF_ERROR(written);
    best->suspended = round == detail::TopoRound::suspended;
  }
}

template <class T>
Result<std::vector<uint8_t>> compress_of(const ScalarFieldOf<T>& field, const ScalarOptions& o,
                                         ScalarCompressStats* stats) {
  std::vector<uint8_t> missing;
  FACTZ_RETURN_IF_ERROR(detail::check_scalar_field(field, missing));
  FACTZ_RETURN_IF_ERROR(check_options(o));
  FACTZ_RETURN_IF_ERROR(detail::check_source_bytes(
      o.source, 1, detail::record_grid(uint64_t(field.nx), uint64_t(field.ny), uint64_t(field.nz), field.ndims()),
      "ScalarOptions::source"));
  const int threads = detail::thread_count(o.policy, o.threads);
  const ScalarGrid g{field.nx, field.ny, field.nz};
  const std::span<const T> f = field.values;
  const double range = detail::scalar_range(f, missing);
  const T eb = detail::bound_in<T>(o.bound_mode == BoundMode::abs ? o.bound : o.bound * range);
  const bool ct = o.mode == ScalarMode::contour_tree;
  const double p_abs = ct ? o.persistence * range : 0.0;

  ScalarCompressStats st;
  st.eb_abs = eb;
  st.persistence_abs = p_abs;
  st.masked_vertices = std::count(missing.begin(), missing.end(), uint8_t(1));
  const std::vector<T> fills = detail::fill_values(f, missing);
  auto t0 = Clock::now();
  auto lap = [&](const char* name) {
    const auto t1 = Clock::now();
    st.stage_seconds.push_back({name, std::chrono::duration<double>(t1 - t0).count()});
    t0 = t1;
  };
  const bool by_interp = o.predictor != ScalarPredictor::lorenzo;
  const bool by_lorenzo = o.predictor != ScalarPredictor::interpolation;
  // The interpolation's walk order, from mode none's codes on (a box of) the field; mode none
  // takes the chooser's quantization of the whole field when it made one.
  QuantizedOf<T> chosen;
  const detail::InterpOrder order =
      by_interp ? detail::choose_interp_order(f, g, missing, fills, eb, threads, ct ? nullptr : &chosen)
                : detail::InterpOrder::xyz;
  if (by_interp) lap("interpolation_order");
  if (!ct) {  // bins of 2 eb: error <= eb; with predictor best, the smaller of the two streams
    // Each predictor's stream with each coder asked for (keep_smallest), the smaller kept
    // (Lorenzo on ties): comparing with one coder only kept the larger stream where another
    // coder reverses the order (ICE-5G topography at REL 1e-2: 13.68 against 14.00). One
    // quantization at a time: each is dropped once its streams are written.
    Result<std::vector<uint8_t>> stream = Status::Ok();
    bool interp = false;
    int64_t exact = 0;
    for (const bool by : {false, true}) {
      if (by ? !by_interp : !by_lorenzo) continue;
      QuantizedOf<T> q;
      if (by && !chosen.recon.empty()) q = std::move(chosen);
      else if (by) detail::quantize_interp(f, g, missing, fills, eb, T(2) * eb, nullptr, q, order, threads);
      else detail::quantize(f, g, missing, fills, eb, T(2) * eb, nullptr, q);
      lap(by ? "quantize_interpolation" : "quantize");
      auto write = [&](Coder c) {
        return scalar_stream(field, missing, o, c, eb, T(2) * eb, 0.0, q, threads, false, by, order);
      };
      ScalarCompressStats trial = st;
      auto written = write(racing_coder(o.coder));
      if (written.ok())
        written = keep_smallest(o.coder, racing_coder(o.coder), std::move(written.value()), write, trial);
      lap(by ? "entropy_interpolation" : "entropy");
      if (!written.ok()) {
        stream = written.status();
        break;
      }
      if (!stream.ok() || written->size() < stream->size()) {
        stream = std::move(written);
        st.coder = trial.coder;
        interp = by;
        exact = int64_t(q.exact.size());
      }
    }
    st.predictor = interp ? ScalarPredictor::interpolation : ScalarPredictor::lorenzo;
    st.exact_vertices = exact;
    if (stream.ok() && stats) *stats = std::move(st);
    return stream;
  }

  detail::CtWorkspace work;  // the work arrays of every tree below
  const ContourTree tf = detail::compute_contour_tree(f, g, missing, p_abs, {}, threads, &work);
  st.tree_nodes = int64_t(tf.nodes.size());
  lap("contour_tree");
  // The steps raced, the smallest stream kept (toposz_steps, docs/toposz.md "Steps").
  const std::vector<StepChoice<T>> steps = detail::toposz_steps(eb, p_abs, f.size(), by_interp, by_lorenzo);
  // Every pair of f, for the repair of a pair a decoded field adds and keeps (TopoStepOf::
  // advance): computed when first needed, rarely (one field of the 19 real ones).
  // Finalists may ask from two threads at once: one computes, with work arrays of its own.
  std::optional<std::vector<CtPair>> pairs_of_f;
  std::mutex pairs_mutex;
  const std::function<const std::vector<CtPair>&()> all_pairs = [&]() -> const std::vector<CtPair>& {
    const std::lock_guard<std::mutex> lock(pairs_mutex);
    if (!pairs_of_f) {
      detail::CtWorkspace own;
      pairs_of_f = detail::compute_contour_tree(f, g, missing, 0.0, {}, threads, &own).pairs;
    }
    return *pairs_of_f;
  };
  ProgressRelay relay(o.progress);
  detail::TopoInputOf<T> in{f, g, missing, fills, eb, p_abs, &tf, threads, relay.hook(),
                            detail::scalar_max_magnitude(f, missing), order, &all_pairs};
  auto write_q = [&](const detail::TopoStepOf<T>& s, const QuantizedOf<T>& q, Coder c) {
    return scalar_stream(field, missing, o, c, eb, s.step(), p_abs, q, threads, s.lattice(), s.interp(), order);
  };
  auto write_with = [&](const detail::TopoStepOf<T>& s, Coder c) { return write_q(s, s.quantized(), c); };
  // Where the smallest coder is asked for, the ANS stream takes under a bit per value (a
  // smooth field's zero runs) and the race has more than the three candidates of a large
  // field, it compares the smaller of the ANS and the context-coded stream: the context coder
  // codes those runs far better than ANS, and an ANS race dropped a coarse step there (the
  // viscous fingers at REL / P 1e-2: 15183 bytes kept, 13258 for a step whose ANS stream was
  // 11 % above the winner's). Above a bit per value the context coder costs more time than
  // it changes the order (sea ice: 13 -> 20 s), and a large field races no coarse step (the
  // smooth 256^3 field: the same stream, 24 % more time).
  const bool race_context = o.coder == Coder::smallest && steps.size() > 3;
  auto write = [&](const detail::TopoStepOf<T>& s) -> Result<std::vector<uint8_t>> {
    auto raced = write_with(s, racing_coder(o.coder));
    if (!raced.ok() || !race_context || raced->size() * 8 >= f.size()) return raced;
    auto context = write_with(s, Coder::context);
    if (!context.ok()) return context.status();
    return context->size() < raced->size() ? std::move(context) : std::move(raced);
  };
  // The kept stream: every coder asked for; the race's stream (ANS or context-coded, as its
  // header says) stands for its own coder.
  auto keep = [&](const detail::TopoStepOf<T>& s, std::vector<uint8_t> stream, ScalarCompressStats& kept,
                  detail::CtWorkspace& w) -> Result<std::vector<uint8_t>> {
    auto parsed = detail::parse_container(stream);
    if (!parsed.ok()) return parsed.status();
    kept.exact_vertices = int64_t(s.quantized().exact.size());
    ScalarCompressStats moved_stats = kept;
    auto as_raced = keep_smallest(o.coder, Coder(parsed->header.coder), std::move(stream),
                                  [&](Coder c) { return write_with(s, c); }, kept);
    if (!as_raced.ok() || !(s.lattice() || s.interp())) return as_raced;
    // On the lattice and the interpolation, the decoded field's regular vertices moved within
    // what its final values allow (move_regular_vertices: codes nearer their predictions,
    // stored values shorter or coded), kept where the stream is smaller. On the
    // interpolation both ways, the finest level's vertices alone and every level's: moving
    // a coarse vertex to the code nearest 0 takes its value up to the bound away, and the
    // finer levels predict from it (every level's moves took the ERA-Interim geopotential at
    // REL 1e-2 / P 1e-3 from 5511 to 3841 bytes, and left the viscous fingers at REL / P 1e-2
    // 2 % above the finest level's; docs/benchmarks.md). Above kEveryLevelMovesUpTo
    // vertices the finest level's alone.
    std::vector<uint8_t> best = std::move(as_raced.value());
    for (const detail::InterpMoves moves : {detail::InterpMoves::every_level, detail::InterpMoves::finest}) {
      if (moves == detail::InterpMoves::every_level && (!s.interp() || f.size() > kEveryLevelMovesUpTo)) continue;
      QuantizedOf<T> q = s.quantized();
      if (!detail::move_regular_vertices(in, s, w, q, moves)) continue;
      ScalarCompressStats trial = moved_stats;
      trial.exact_vertices = int64_t(q.exact.size());
      auto first = write_q(s, q, racing_coder(o.coder));
      if (!first.ok()) return first.status();
      auto moved = keep_smallest(o.coder, racing_coder(o.coder), std::move(first.value()),
                                 [&](Coder c) { return write_q(s, q, c); }, trial);
      if (!moved.ok()) return moved.status();
      if (moved->size() >= best.size()) continue;
      kept = trial;
      best = std::move(moved.value());
    }
    return best;
  };
  auto kept = race_steps(in, steps, write, keep, [&relay] { relay.drain(); }, work, st);
  lap("iterate");
  if (kept.ok() && stats) *stats = std::move(st);
  return kept;
}

// The header checks of a scalar stream that do not depend on the decoder's type.
Status check_scalar_header(const detail::Header& h) {
  if (h.components != 1)
    return invalid_argument("stream holds a vector field (" + std::to_string(h.components) +
                            " components); use decompress (or decompress64), not decompress_scalar");
  return Status::Ok();
}

// The stream's values are of the decoder's type, or the error names the decoder to use.
template <class T>
Status require_scalar_dtype(const detail::Header& h) {
  const uint8_t want = kIsDouble<T> ? detail::kDtypeFloat64 : detail::kDtypeFloat32;
  if (h.dtype == want) return Status::Ok();
  if (h.dtype == detail::kDtypeFloat64)
    return invalid_argument("the scalar stream holds float64 values: decode it with decompress_scalar64 "
                            "(decompress_scalar would round them to float32)");
  return invalid_argument("the scalar stream holds float32 values: decode it with decompress_scalar, not "
                          "decompress_scalar64");
}

// The values of a layout 22 or 23 stream (scalar_interp.hpp): the walk in `order`, the codes
// `symbols` of the valid vertices in index order, the exact values `exact` in the walk's order.
template <class T>
Status decode_interpolated(const ScalarGrid& g, std::span<const uint16_t> symbols, std::span<const uint8_t> mask,
                           std::span<const uint8_t> exact, T step, detail::InterpOrder order, T* r) {
  const uint64_t n = uint64_t(g.size());
  std::vector<uint16_t> by_vertex;
  const uint16_t* sym = symbols.data();
  if (!mask.empty()) {
    detail::resize_fresh(by_vertex, size_t(n));
    size_t next = 0;
    for (uint64_t v = 0; v < n; ++v) by_vertex[v] = mask[v] ? uint16_t(0) : symbols[next++];
    sym = by_vertex.data();
  }
  detail::ByteReader er(exact);
  Status bad = Status::Ok();
  const detail::InterpSteps<T> steps(step);
  detail::interp_walk(g, r, [&](int64_t v, T pred, int64_t level_h) {
    r[v] = T(0);
    if (!bad.ok()) return;
    if (!mask.empty() && mask[size_t(v)]) {
      r[v] = detail::interp_stand_in(pred);
      return;
    }
    const uint16_t s = sym[v];
    T val = 0;
    if (s == 0) {
      if (!read_value(er, val)) bad = corrupt_stream("exact_values truncated");
      else if (!std::isfinite(val)) bad = corrupt_stream("exact value is not finite");
    } else {
      const int64_t q = int64_t(s) - int64_t(kCenter);
      if (q < -kMaxCode) bad = corrupt_stream("quantization code out of range");
      val = pred + T(q) * steps.at(level_h);
      if (bad.ok() && !std::isfinite(val)) bad = corrupt_stream("decoded value is not finite");
    }
    if (bad.ok()) r[v] = val;
  }, order);
  return bad;
}

template <class T>
Result<ScalarFieldOf<T>> decompress_of(std::span<const uint8_t> stream, const DecompressOptions& options) {
  auto parsed_r = detail::parse_container(stream);
  if (!parsed_r.ok()) return parsed_r.status();
  const detail::ParsedContainer& parsed = parsed_r.value();
  const detail::Header& h = parsed.header;
  FACTZ_RETURN_IF_ERROR(check_scalar_header(h));
  FACTZ_RETURN_IF_ERROR(require_scalar_dtype<T>(h));
  if (h.mode != uint8_t(ScalarMode::none) && h.mode != uint8_t(ScalarMode::contour_tree))
    return Status(Code::unsupported_version, "scalar stream mode " + std::to_string(h.mode) + " is not supported");
  if (h.coder > uint8_t(Coder::context)) return Status(Code::unsupported_version, "unsupported coder");
  if (!(h.eb >= 0.0f) || !(h.eb <= detail::kMaxEb)) return corrupt_stream("absolute bound out of range");
  if (h.nx > uint64_t(detail::kMaxCtVertices) || h.ny > uint64_t(detail::kMaxCtVertices) / h.nx ||
      h.nz > uint64_t(detail::kMaxCtVertices) / (h.nx * h.ny))
    return corrupt_stream("scalar grid too large");
  for (uint32_t id : {detail::kSectionMeta, detail::kSectionCodesU, detail::kSectionExactValues})
    if (!detail::has_section(parsed, id)) return corrupt_stream("missing section " + detail::section_name(id));
  FACTZ_RETURN_IF_ERROR(detail::check_source_section(stream, parsed));  // when it has one (version 19)
  const ScalarGrid g{int64_t(h.nx), int64_t(h.ny), int64_t(h.nz)};
  const uint64_t n = uint64_t(g.size());
  auto masked = detail::stream_has_mask(parsed);
  if (!masked.ok()) return masked.status();
  const detail::Decompressor& unzstd = detail::zstd_stage_decompressor();

  auto meta = detail::read_section(stream, parsed, detail::kSectionMeta, &unzstd);
  if (!meta.ok()) return meta.status();
  detail::ByteReader mr(meta.value());
  T step = 0;
  uint32_t radius = 0;
  uint64_t pbits = 0, pabits = 0;
  // Layouts 22 and 23 end their meta section with the interpolation's walk order.
  const bool interp = detail::is_scalar_interp_version(h.version);
  const size_t meta_bytes = (kIsDouble<T> ? kMetaBytes64 : kMetaBytes) + (interp ? 1 : 0);
  if (meta->size() != meta_bytes || !read_value(mr, step) || !mr.u32(radius) || !mr.u64(pbits) || !mr.u64(pabits))
    return corrupt_stream("meta section must hold " + std::to_string(meta_bytes) + " bytes");
  if (radius != kRadius) return corrupt_stream("meta: radius " + std::to_string(radius) + " (must be 32768)");
  if (!std::isfinite(step) || step < 0) return corrupt_stream("meta: quantization step is not finite and >= 0");
  if constexpr (kIsDouble<T>) {  // the bound used; the header's f32 holds its float_bound
    double eb64 = 0;
    if (!mr.f64(eb64) || !(eb64 >= 0.0) || !(eb64 <= detail::kMaxEb64))
      return corrupt_stream("meta: float64 bound out of range");
    if (detail::float_bound(eb64) != h.eb) return corrupt_stream("meta: float64 bound disagrees with the header's");
  }
  detail::InterpOrder order = detail::InterpOrder::xyz;
  if (interp) {
    const uint8_t byte = meta.value()[meta_bytes - 1];
    if (byte >= detail::kInterpOrderCount)
      return corrupt_stream("meta: interpolation order " + std::to_string(byte) + " (0: x, y, z; 1: z, y, x)");
    order = detail::InterpOrder(byte);
  }

  // The symbol count recorded in the code blob (one per valid vertex) must be the grid's, or
  // at most the grid's before the mask is read, before allocating.
  uint64_t symbol_count = 0;
  for (const auto& e : parsed.entries) {
    if (e.id != detail::kSectionCodesU) continue;
    auto count = detail::peek_symbol_count(stream, e, h.coder);
    if (!count.ok()) return count.status();
    symbol_count = count.value();
    if (masked.value() ? symbol_count >= n : symbol_count != n)
      return corrupt_stream("grid needs " + std::string(masked.value() ? "fewer than " : "") + std::to_string(n) +
                            " symbols in codes_u, which holds " + std::to_string(symbol_count));
  }
  std::vector<uint8_t> mask;
  if (masked.value()) {
    // The mask section's recorded count must be the grid minus the symbols, checked before
    // the bitmap's n bytes are allocated (a corrupt count on a huge declared grid); read_mask
    // also checks that the bitmap sets exactly that many, so the mask leaves one valid
    // vertex per symbol.
    FACTZ_RETURN_IF_ERROR(detail::read_mask(stream, parsed, g.nx, g.ny * g.nz, mask, n - symbol_count));
  }
  const int threads = detail::thread_count(options.policy, options.threads);
  auto codes = detail::read_section(stream, parsed, detail::kSectionCodesU, &unzstd);
  if (!codes.ok()) return codes.status();
  std::vector<uint16_t> symbols;  // huge pages before the zero fill (util/big_vector.hpp)
  detail::resize_fresh(symbols, size_t(symbol_count));
  if (h.coder == uint8_t(Coder::context)) {
    const detail::CodeGrid cg{g.nx, g.ny, g.nz, mask};
    FACTZ_RETURN_IF_ERROR(detail::context_decode(codes.value(), cg, symbols, threads));
  } else {
    FACTZ_RETURN_IF_ERROR(
        detail::entropy_decode(detail::EntropyCoder(h.coder), codes.value(), kCenter, symbols, threads));
  }
  auto exact = detail::read_section(stream, parsed, detail::kSectionExactValues, &unzstd);
  if (!exact.ok()) return exact.status();
  uint64_t escapes = 0;
  for (uint16_t s : symbols) escapes += s == 0;
  // Version 14: the exact values coded against the predictions (exact_residuals.hpp).
  const bool coded_exact = detail::is_scalar_coded_exact_version(h.version);
  if (!coded_exact && exact->size() != sizeof(T) * escapes)
    return corrupt_stream("exact_values holds " + std::to_string(exact->size()) + " bytes, the codes need " +
                          std::to_string(sizeof(T) * escapes));
  if (coded_exact && escapes == 0) return corrupt_stream("a stream with coded exact values (version 14 or 17) without exact values");
  std::optional<detail::ExactResidualReader<T>> coded;
  if (coded_exact) {
    auto opened = detail::ExactResidualReader<T>::open(exact.value());
    if (!opened.ok()) return opened.status();
    coded.emplace(std::move(opened.value()));
  }
  if (step == 0 && escapes != symbol_count) return corrupt_stream("quantization step 0 with quantized vertices");

  ScalarFieldOf<T> out;
  out.nx = g.nx;
  out.ny = g.ny;
  out.nz = g.nz;
  detail::resize_fresh(out.values, size_t(n));
  T* r = out.values.data();
  // Versions 22 and 23: the interpolation predictor's walk; the others in index order.
  if (interp) {
    FACTZ_RETURN_IF_ERROR(decode_interpolated<T>(g, symbols, mask, exact.value(), step, order, r));
  } else {
    // Version 11: the codes are residuals of the lattice indices (scalar_quantizer.hpp).
    const bool lattice = detail::is_scalar_lattice_version(h.version);
    if (lattice && !(step > 0)) return corrupt_stream("meta: a lattice stream needs a quantization step > 0");
    std::vector<int64_t> lattice_of;
    detail::resize_fresh(lattice_of, lattice ? size_t(n) : 0);
    int64_t* k = lattice_of.data();
    detail::ByteReader er(exact.value());
    int64_t v = 0;
    size_t next = 0;  // the next symbol: one per valid vertex
    for (int64_t z = 0; z < g.nz; ++z)
      for (int64_t y = 0; y < g.ny; ++y)
        for (int64_t x = 0; x < g.nx; ++x, ++v) {
          if (!mask.empty() && mask[size_t(v)]) {
            r[v] = detail::missing_stand_in(r, g, x, y, z, v);
            if (lattice) k[v] = detail::missing_stand_in(k, g, x, y, z, v);
            continue;
          }
          const uint16_t s = symbols[next++];
          if (s == 0) {
            T val = 0;
            if (coded) {
              auto got = coded->next(detail::lorenzo(r, g, x, y, z, v));
              if (!got.ok()) return got.status();
              val = got.value();
            } else if (!read_value(er, val)) {
              return corrupt_stream("exact_values truncated");
            }
            if (!std::isfinite(val)) return corrupt_stream("exact value is not finite");
            r[v] = val;
            if (lattice) k[v] = detail::lattice_index(val, step);
          } else {
            const int64_t q = int64_t(s) - int64_t(kCenter);
            if (q < -kMaxCode) return corrupt_stream("quantization code out of range");
            T val = 0;
            if (lattice) {
              k[v] = detail::lorenzo(k, g, x, y, z, v) + q;
              if (k[v] > detail::kLatticeMaxIndex || k[v] < -detail::kLatticeMaxIndex)
                return corrupt_stream("lattice index out of range");
              val = detail::lattice_value(k[v], step);
            } else {
              val = detail::lorenzo(r, g, x, y, z, v) + T(q) * step;
            }
            if (!std::isfinite(val)) return corrupt_stream("decoded value is not finite");
            r[v] = val;
          }
        }
  }
  if (coded) FACTZ_RETURN_IF_ERROR(coded->finish());
  if (masked.value()) {  // the missing vertices' own bits, stored twice (both halves of a pair)
    using Bits = std::conditional_t<kIsDouble<T>, uint64_t, uint32_t>;
    std::vector<T> twin(static_cast<size_t>(n));
    FACTZ_RETURN_IF_ERROR(detail::apply_mask_sections(stream, parsed, g.nx, g.ny * g.nz, std::span<T>(out.values),
                                                      std::span<T>(twin), mask));
    for (uint64_t k = 0; k < n; ++k)
      if (mask[size_t(k)] && std::bit_cast<Bits>(twin[size_t(k)]) != std::bit_cast<Bits>(out.values[size_t(k)]))
        return corrupt_stream("masked_values: the two halves of a scalar vertex's pair differ");
    out.mask = std::move(mask);
  }
  return out;
}

}  // namespace

namespace {

/// compress_of, and a status naming the field when memory runs out.
template <class Field>
Result<std::vector<uint8_t>> compress_or_report(const Field& field, const ScalarOptions& o, ScalarCompressStats* stats) {
  try {
    return compress_of(field, o, stats);
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + " x " +
                                      std::to_string(field.ny) +
                                      (field.nz > 1 ? " x " + std::to_string(field.nz) : std::string()) +
                                      " scalar field");
  }
}

/// decompress_of, and what the stream holds and needs when memory runs out.
template <class T>
auto decompress_or_report(std::span<const uint8_t> stream, const DecompressOptions& options)
    -> decltype(decompress_of<T>(stream, options)) {
  try {
    return decompress_of<T>(stream, options);
  } catch (const std::bad_alloc&) {
    return detail::out_of_memory_decoding(stream);
  }
}

}  // namespace

Result<std::vector<uint8_t>> compress_scalar(const ScalarField& field, const ScalarOptions& o,
                                             ScalarCompressStats* stats) {
  return compress_or_report(field, o, stats);
}
Result<std::vector<uint8_t>> compress_scalar(const ScalarField64& field, const ScalarOptions& o,
                                             ScalarCompressStats* stats) {
  return compress_or_report(field, o, stats);
}

Result<ScalarField> decompress_scalar(std::span<const uint8_t> stream, const DecompressOptions& options) {
  return decompress_or_report<float>(stream, options);
}
Result<ScalarField64> decompress_scalar64(std::span<const uint8_t> stream, const DecompressOptions& options) {
  return decompress_or_report<double>(stream, options);
}

const char* scalar_predictor_name(ScalarPredictor p) {
  switch (p) {
    case ScalarPredictor::best: return "best";
    case ScalarPredictor::lorenzo: return "lorenzo";
    case ScalarPredictor::interpolation: return "interpolation";
  }
  return "unknown";
}

Result<DType> scalar_stream_dtype(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_container(stream);
  if (!parsed.ok()) return parsed.status();
  FACTZ_RETURN_IF_ERROR(check_scalar_header(parsed->header));
  return parsed->header.dtype == detail::kDtypeFloat64 ? DType::float64 : DType::float32;
}

}  // namespace factz
