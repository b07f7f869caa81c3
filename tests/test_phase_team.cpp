// util/phase_team.hpp: one OpenMP team for a schedule of dependent phases. A phase here
// writes its rows from what the phases before it wrote (as the 3D speculative writer and
// reader do), so a missing barrier, a row done twice or skipped, or a small phase run by two
// threads shows up as a different result than the plain loop's.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "util/phase_team.hpp"

namespace factz::detail {
namespace {

constexpr int64_t kRows = 97, kCols = 13;

/// Phase p writes rows r of grid p + 1 from grid p: each value sums its neighbours above,
/// below and beside it in the previous grid (so each phase depends on every row of the one
/// before), plus p. Phases whose index is a multiple of 3 are "small" (one thread).
struct Schedule {
  int64_t phases;
  std::vector<std::vector<int64_t>> grid;
  std::vector<std::atomic<int>> visits;  // per phase and row: how often work() covered it

  explicit Schedule(int64_t n) : phases(n), grid(size_t(n) + 1, std::vector<int64_t>(kRows * kCols)),
                                 visits(size_t(n * kRows)) {
    for (int64_t k = 0; k < kRows * kCols; ++k) grid[0][size_t(k)] = (k * 7919) % 101;
    for (auto& v : visits) v.store(0);
  }
  static bool shared(int64_t p) { return p % 3 != 0; }
  int64_t rows(int64_t) const { return kRows; }
  void work(int64_t p, int64_t first, int64_t end) {
    const std::vector<int64_t>& in = grid[size_t(p)];
    std::vector<int64_t>& out = grid[size_t(p) + 1];
    for (int64_t r = first; r < end; ++r) {
      visits[size_t(p * kRows + r)].fetch_add(1);
      for (int64_t c = 0; c < kCols; ++c) {
        int64_t s = p;
        for (int64_t dr = -1; dr <= 1; ++dr) {
          const int64_t rr = (r + dr + kRows) % kRows;
          for (int64_t dc = -1; dc <= 1; ++dc) s += in[size_t(rr * kCols + (c + dc + kCols) % kCols)];
        }
        out[size_t(r * kCols + c)] = s % 1000003;
      }
    }
  }
};

std::vector<int64_t> plain_result(int64_t phases) {
  Schedule s(phases);
  for (int64_t p = 0; p < phases; ++p) s.work(p, 0, kRows);
  return s.grid.back();
}

TEST(PhaseTeam, EveryThreadCountAndSplitGivesThePlainLoopsResult) {
  const int64_t phases = 40;
  const std::vector<int64_t> want = plain_result(phases);
  for (int threads : {1, 2, 3, 4})
    for (int64_t chunk : {0, 1, 8, 1000}) {
      Schedule s(phases);
      for_each_phase_on_team(
          threads, TeamRows{chunk}, phases, [](int64_t p) { return Schedule::shared(p); },
          [&](int64_t p) { return s.rows(p); }, [&](int64_t p, int64_t first, int64_t end) { s.work(p, first, end); });
      EXPECT_EQ(s.grid.back(), want) << threads << " threads, chunk " << chunk;
      for (size_t i = 0; i < s.visits.size(); ++i) ASSERT_EQ(s.visits[i].load(), 1) << "phase " << i / kRows << " row " << i % kRows;
    }
}

TEST(PhaseTeam, PrepareRunsOnceBeforeEachPhaseAndStopsTheScheduleOnEveryThread) {
  const int64_t phases = 30;
  for (int64_t stop_at : {17, 18})  // a shared phase, a small one
  for (int threads : {1, 2, 4}) {
    Schedule s(phases);
    std::vector<int> prepared(size_t(phases), 0);
    std::atomic<int64_t> rows_after_stop{0};
    for_each_phase_on_team(
        threads, TeamRows{0}, phases, [](int64_t p) { return Schedule::shared(p); },
        [&](int64_t p) {
          // Runs before any row of phase p and after every row of phase p - 1.
          for (int64_t q = 0; q < p; ++q)
            for (int64_t r = 0; r < kRows; ++r) EXPECT_EQ(s.visits[size_t(q * kRows + r)].load(), 1);
          ++prepared[size_t(p)];
          return p != stop_at;
        },
        [&](int64_t p) { return s.rows(p); },
        [&](int64_t p, int64_t first, int64_t end) {
          if (p >= stop_at) rows_after_stop += end - first;
          s.work(p, first, end);
        });
    for (int64_t p = 0; p < phases; ++p) EXPECT_EQ(prepared[size_t(p)], p <= stop_at ? 1 : 0) << threads << " threads, phase " << p;
    EXPECT_EQ(rows_after_stop.load(), 0) << threads << " threads";
    std::vector<int64_t> want_partial;
    {
      Schedule plain(phases);
      for (int64_t p = 0; p < stop_at; ++p) plain.work(p, 0, kRows);
      want_partial = plain.grid[size_t(stop_at)];
    }
    EXPECT_EQ(s.grid[size_t(stop_at)], want_partial) << threads << " threads";
  }
}

TEST(PhaseTeam, TheBarrierReleasesEveryRoundTogether) {
  // Each thread writes its slot of round k, waits, then checks every slot of round k.
  constexpr int kRounds = 500;
  for (int threads : {2, 3}) {
    std::vector<std::atomic<int>> slot(static_cast<size_t>(threads));
    for (auto& x : slot) x.store(-1);
    std::atomic<int> wrong{0};
    TeamBarrier barrier;
    barrier.reset(threads);
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
      team.emplace_back([&, t] {
        for (int k = 0; k < kRounds; ++k) {
          slot[size_t(t)].store(k, std::memory_order_relaxed);
          barrier.wait();
          for (int u = 0; u < threads; ++u)
            if (slot[size_t(u)].load(std::memory_order_relaxed) != k) ++wrong;
          barrier.wait();
        }
      });
    for (auto& th : team) th.join();
    EXPECT_EQ(wrong.load(), 0) << threads << " threads";
  }
}

}  // namespace
}  // namespace factz::detail
