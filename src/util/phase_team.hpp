// One OpenMP team for a whole schedule of phases (the speculative writers and readers,
// backend/cpu/speculative_mode.cpp, speculative_reader.cpp and speculative3d_mode.cpp): the
// team is started once, its threads share a large phase's rows (in chunks handed out on
// demand, or one contiguous share each), a barrier of its own around it; small phases run on
// one thread of the team without a barrier.
//
// Why not one `omp parallel for` per phase: on a virtual machine a thread asleep in the
// OpenMP runtime (OMP_WAIT_POLICY=passive, or the default policy once its spin count is
// spent) takes 0.5 to 1 ms to wake, as long as a whole phase of a 48^3 field (or of a
// 1024^2 one's last level) on one thread, so a second thread arrived too late to help
// (measured on the 2-core CI machine: docs/benchmarks.md, "3D: one OpenMP team for the whole
// schedule"). Here a thread that reaches the end of a phase first spins for a bounded time
// (kSpinSeconds) before it sleeps, whatever the OpenMP wait policy; the team has at most as
// many threads as the machine has processors. Results never depend on the split: the rows of
// a phase are independent.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace factz::detail {

/// A reusable barrier for `count` threads: the last to arrive releases the others, who spin
/// for at most kSpinSeconds and then sleep on the generation counter.
class TeamBarrier {
 public:
  static constexpr double kSpinSeconds = 1e-3;

  void reset(int count) {
    count_ = count;
    arrived_.store(0, std::memory_order_relaxed);
  }

  void wait() {
    const uint32_t g = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
      arrived_.store(0, std::memory_order_relaxed);  // nobody arrives again before the release
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 1;; ++i) {
      if (generation_.load(std::memory_order_acquire) != g) return;
      pause();
      if ((i & 255) == 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kSpinSeconds)
        break;
    }
    while (generation_.load(std::memory_order_acquire) == g) generation_.wait(g, std::memory_order_acquire);
  }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  int count_ = 1;
  std::atomic<int> arrived_{0};
  std::atomic<uint32_t> generation_{0};
};

/// Every phase of a schedule (PhaseSchedule, PhaseSchedule3D: next(phase) until false), in
/// stream order.
template <class Phase, class Schedule>
std::vector<Phase> phases_of(Schedule schedule) {
  std::vector<Phase> phases;
  for (Phase ph; schedule.next(ph);) phases.push_back(ph);
  return phases;
}

/// Phases with fewer targets than this are not shared (the callers' `shared`): a barrier
/// costs more than their targets save there, much more on a busy machine.
inline constexpr int64_t kMinSharedTargets = 8192;

/// How a shared phase's rows go to the team: `chunk` rows at a time to whichever thread asks
/// next (balances rows of uneven cost: around critical points a vertex tries many bounds), or
/// with chunk 0 one contiguous share per thread (rows of even cost: a thread reads more of
/// what it wrote itself).
struct TeamRows {
  int64_t chunk = 0;
};

/// For each phase p = 0 .. phases - 1 in order: prepare(p) (false stops the schedule there,
/// on every thread), then work(p, first, end) over the rows [0, rows(p)). A phase for which
/// shared(p) holds is prepared by one thread and its rows go to the team as `split` says, a
/// barrier before and after; the others (small phases, where a barrier would cost more than
/// the rows) are prepared and worked by the first thread alone, the team waiting at the next
/// shared phase. On one thread (threads <= 1, or no OpenMP) a plain loop. The callables must
/// not throw (they run inside an OpenMP region); rows(p) is read after prepare(p). kPrepare
/// false: no prepare step.
template <bool kPrepare, class Shared, class Prepare, class Rows, class Work>
void run_phases_on_team(int threads, TeamRows split, int64_t phases, const Shared& shared, const Prepare& prepare,
                        const Rows& rows, const Work& work) {
#ifdef _OPENMP
  // More threads than processors never help work that only computes, and would make the
  // barrier's spinning steal a processor from a thread still working.
  const int team = threads < omp_get_num_procs() ? threads : omp_get_num_procs();
  if (team > 1) {
    TeamBarrier barrier;
    bool go_on = true;  // written by the first thread, read by all after a barrier
    std::vector<std::atomic<int64_t>> taken(static_cast<size_t>(phases));  // chunks handed out, per phase
    for (auto& x : taken) x.store(0, std::memory_order_relaxed);
#pragma omp parallel num_threads(team)
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
#pragma omp single
      barrier.reset(int(nt));  // the implicit barrier at the end of single publishes it
      for (int64_t p = 0; p < phases; ++p) {
        if (!shared(p)) {
          if (t == 0 && go_on) {
            if constexpr (kPrepare) go_on = prepare(p);
            if (go_on) work(p, int64_t{0}, rows(p));
          }
          continue;
        }
        if constexpr (kPrepare)
          if (t == 0 && go_on) go_on = prepare(p);
        barrier.wait();
        if (!go_on) break;
        const int64_t r = rows(p), chunk = split.chunk > 0 ? split.chunk : (r + nt - 1) / nt;
        for (int64_t c; (c = taken[size_t(p)].fetch_add(1, std::memory_order_relaxed)) * chunk < r;)
          work(p, c * chunk, c * chunk + chunk < r ? c * chunk + chunk : r);
        barrier.wait();
      }
    }
    return;
  }
#endif
  (void)threads;
  (void)shared;
  for (int64_t p = 0; p < phases; ++p) {
    if constexpr (kPrepare)
      if (!prepare(p)) return;
    work(p, int64_t{0}, rows(p));
  }
}

/// run_phases_on_team with a prepare step.
template <class Shared, class Prepare, class Rows, class Work>
void for_each_phase_on_team(int threads, TeamRows split, int64_t phases, const Shared& shared,
                            const Prepare& prepare, const Rows& rows, const Work& work) {
  run_phases_on_team<true>(threads, split, phases, shared, prepare, rows, work);
}

/// run_phases_on_team without one.
template <class Shared, class Rows, class Work>
void for_each_phase_on_team(int threads, TeamRows split, int64_t phases, const Shared& shared, const Rows& rows,
                            const Work& work) {
  run_phases_on_team<false>(threads, split, phases, shared, [](int64_t) { return true; }, rows, work);
}

}  // namespace factz::detail
