// Where the bytes of a FaCTz-S stream go (issue 20): the stored size of each section of a
// real stream, and a breakdown of the frontend's decisions (anchors, exact targets, zero
// vectors, the bound ids used) with the zeroth-order entropy of the codes per level.
//   speculative_bytes_bench NX NY U V REL [REL ...]
// Each REL t gives the absolute bound t x (max - min over both components), as
// bench/sz3_compare.sh does; the stream is the default one (ANS, zstd stage, the default
// predictor), with the anchor stride of the environment variable S0 (default 16).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "backend/cpu/speculative_mode.hpp"
#include "bench_field.hpp"
#include "factz/factz.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"

namespace {

using namespace factz;
using namespace factz::detail;

/// Zeroth-order entropy in bytes of a symbol list.
double entropy_bytes(const std::vector<uint16_t>& s) {
  std::map<uint16_t, int64_t> h;
  for (uint16_t x : s) ++h[x];
  double bits = 0;
  for (const auto& [sym, c] : h) bits -= double(c) * std::log2(double(c) / double(s.size()));
  return bits / 8;
}

void report(const VectorField2D& f, double rel) {
  float lo = f.u[0], hi = f.u[0];
  for (size_t k = 0; k < f.u.size(); ++k) {
    lo = std::min({lo, f.u[k], f.v[k]});
    hi = std::max({hi, f.u[k], f.v[k]});
  }
  const double eb = rel * (double(hi) - double(lo));
  Options o;
  o.bound_mode = BoundMode::abs;
  o.bound = eb;
  o.policy = Policy::serial;
  if (const char* s0 = std::getenv("S0")) o.anchor_stride = std::atoll(s0);
  const auto stream = compress(f, o).value();
  const auto pc = parse_container(stream).value();
  std::printf("REL %g (eb %.6g): %zu bytes\n  sections:", rel, eb, stream.size());
  for (const auto& e : pc.entries)
    std::printf(" %s %llu/%llu", section_name(e.id).c_str(), (unsigned long long)e.stored_size,
                (unsigned long long)e.raw_size);
  std::printf("\n");

  SpeculativeResult r;
  run_speculative(f, float_bound(eb), o.anchor_stride, 1, true, r, 0, nullptr, kDefaultPredictor);
  const int64_t nx = f.nx, ny = f.ny, s0 = o.anchor_stride;
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  int64_t exact_targets = 0, zero = 0;
  std::map<int, int64_t> ids;
  std::vector<uint16_t> all_u, all_v;
  PhaseSchedule sched(nx, ny, s0);
  std::printf("  anchors %lld (%lld bytes raw)\n", (long long)A.count(), (long long)(8 * A.count()));
  size_t at = 0;  // r's entries are in schedule order, one per target
  for (ScheduledPhase ph; sched.next(ph);) {
    std::vector<uint16_t> cu, cv, pid;
    int64_t ex = 0;
    for (int64_t t = 0; t < ph.lattice.count(); ++t, ++at) {
      const int id = r.ids[at];
      ++ids[id];
      pid.push_back(uint16_t(id));
      if (id == 0) ++ex;
      if (id == kZeroVectorId) ++zero;
      if (id_has_code(uint16_t(id))) {
        cu.push_back(r.sym_u[at]);
        cv.push_back(r.sym_v[at]);
        all_u.push_back(r.sym_u[at]);
        all_v.push_back(r.sym_v[at]);
      }
    }
    exact_targets += ex;
    std::printf("  step %4lld phase %d: %9lld targets, exact %7lld, H(ids) %9.0f B, H(codes u+v) %10.0f B\n",
                (long long)ph.step, int(ph.phase), (long long)ph.lattice.count(), (long long)ex, entropy_bytes(pid),
                entropy_bytes(cu) + entropy_bytes(cv));
  }
  std::printf("  exact targets %lld (%lld bytes), zero vectors %lld; ids:", (long long)exact_targets,
              (long long)(8 * exact_targets), (long long)zero);
  for (const auto& [id, c] : ids) std::printf(" %d:%lld", id, (long long)c);
  std::printf("\n  H(codes u) over the stream %.0f B, H(codes v) %.0f B\n", entropy_bytes(all_u), entropy_bytes(all_v));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: speculative_bytes_bench NX NY U V REL [REL ...]\n");
    return 2;
  }
  const auto field = factz::bench::load_field(std::atoll(argv[1]), std::atoll(argv[2]), argv[3], argv[4]);
  if (!field) return 1;
  for (int i = 5; i < argc; ++i) report(*field, std::atof(argv[i]));
  return 0;
}
