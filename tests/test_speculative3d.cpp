// The 3D speculative mode (issue 22; factz/compress3d.hpp): every round trip keeps every
// critical point of the Freudenthal mesh (compare() with the exact extractor: the same
// tetrahedra, the same types, none new) and the pointwise bound, on smooth flows, tie
// fields, zeros, constants and tiny grids, at every bound, with both coders, with and without
// zstd; the bytes do not depend on the thread count; the decoder rebuilds the writer's
// values bit for bit; damaged streams fail cleanly; what is not supported says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "api/device_backend.hpp"
#include "backend/cpu/speculative3d_mode.hpp"
#include "backend/cpu/speculative3d_rows.hpp"
#include "codec/coder.hpp"
#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/speculation3d.hpp"
#include "streams/code_segments.hpp"
#include "streams/phase_choices3d.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector3d_stream.hpp"
#include "util/byte_io.hpp"
#include "support/fields3d.hpp"
#include "support/polynomial3d.hpp"
#include "support/row_candidate_check.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

Options rel(double r, Coder coder = Coder::ans, bool zstd = true) {
  Options o;
  o.mode = Mode::speculative;
  o.bound_mode = BoundMode::rel;
  o.bound = r;
  o.coder = coder;
  o.zstd = zstd;
  return o;
}

/// Compresses, decompresses and checks G0 and G1 (tests/support/fields3d.hpp). Returns the
/// stream.
Bytes round_trip(const VectorField3D& f, const Options& o, const std::string& what, int64_t* cps = nullptr) {
  return testing::round_trip3d(f, o, true, what, cps);
}

std::vector<std::pair<std::string, VectorField3D>> flows(int64_t n) { return testing::flows3d(n, false); }

TEST(Speculative3D, KeepsEveryCriticalPointAndTheBoundOnFlows) {
  for (const auto& [name, f] : flows(32)) {
    int64_t cps = 0;
    for (double r : {1e-1, 1e-2, 1e-3, 1e-4}) round_trip(f, rel(r), name + " REL " + std::to_string(r), &cps);
    if (name != "taylor_green") {
      EXPECT_GT(cps, 0) << name << ": a field with critical points";
    }
  }
}

TEST(Speculative3D, EveryCoderAndZstdSettingKeepsThemToo) {
  const VectorField3D f = testing::random_modes(33, 30, 28, 3);
  for (Coder coder : {Coder::huffman, Coder::ans})
    for (bool zstd : {false, true})
      for (double r : {1e-1, 1e-2, 1e-3, 1e-4})
        round_trip(f, rel(r, coder, zstd),
                   std::string(coder_name(coder)) + (zstd ? " zstd" : "") + " REL " + std::to_string(r));
  const VectorField3D ties = testing::tie_field(20, 18, 17, 9);
  for (Coder coder : {Coder::huffman, Coder::ans})
    for (bool zstd : {false, true}) round_trip(ties, rel(1e-1, coder, zstd), "ties");
}

TEST(Speculative3D, AbsoluteBoundsAndAnchorStrides) {
  const VectorField3D f = testing::abc_flow(40, 36, 33);
  for (int64_t s0 : {2, 4, 16, 64}) {
    Options o = rel(0);
    o.bound_mode = BoundMode::abs;
    o.bound = 0.01;
    o.anchor_stride = s0;
    round_trip(f, o, "anchor stride " + std::to_string(s0));
  }
  Options zero = rel(0);  // bound 0: every vertex exact
  const Bytes s = round_trip(f, zero, "bound 0");
  auto d = decompress3d(s);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->u, f.u);
  EXPECT_EQ(d->w, f.w);
}

TEST(Speculative3D, ZerosConstantsAndLinearFields) {
  const VectorField3D zeros = testing::filled3d(24, 20, 18, 0, 0, 0);
  const Bytes z = round_trip(zeros, rel(1e-2), "zeros");
  EXPECT_LT(z.size(), 2000u) << "a zero field costs next to nothing";
  auto dz = decompress3d(z);
  ASSERT_TRUE(dz.ok());
  EXPECT_EQ(dz->v, zeros.v);
  round_trip(testing::filled3d(24, 20, 18, 1.5f, -2.0f, 0.25f), rel(1e-2), "constant");
  round_trip(testing::filled3d(9, 8, 7, 0.0f, 0.0f, 1.0f), rel(1e-3), "constant with zero components");
  for (int t = 0; t <= int(CpType3::center); ++t) {
    const CpType3 type = CpType3(t);
    const VectorField3D f =
        testing::linear_field(12, 11, 10, testing::jacobian_of(type), testing::tet_centroid(5, 4, 6, t % 6));
    for (double r : {1e-1, 1e-3}) {
      int64_t cps = 0;
      round_trip(f, rel(r), std::string("linear ") + cp_type3_name(type), &cps);
      EXPECT_EQ(cps, 1) << cp_type3_name(type);
    }
  }
}

TEST(Speculative3D, TinyGridsAndFlatGrids) {
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{1, 1, 1}, {2, 2, 2}, {3, 2, 2}, {2, 3, 2}, {2, 2, 3},
                            {5, 4, 1}, {1, 6, 5}, {7, 1, 3}, {17, 1, 1}, {3, 3, 3}, {33, 17, 5}}) {
    const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
    const VectorField3D modes = testing::random_modes(nx, ny, nz, 11);
    for (double r : {1e-1, 1e-3}) round_trip(modes, rel(r), what + " modes");
    round_trip(testing::tie_field(nx, ny, nz, 2), rel(1e-1), what + " ties");
    Options o = rel(1e-2);
    o.anchor_stride = 2;
    round_trip(modes, o, what + " stride 2");
  }
}

TEST(Speculative3D, BytesDoNotDependOnTheThreadCount) {
  // 48 x 44 x 40: the finest phases have at least kMinParallelTargets targets, so the team
  // shares them (backend/cpu/speculative3d_mode.cpp); 37 x 29 x 23: one thread decides every
  // phase.
  for (const VectorField3D& f : {testing::random_modes(37, 29, 23, 4), testing::random_modes(48, 44, 40, 5)}) {
    Options o = rel(1e-3);
    o.policy = Policy::serial;
    auto ref = compress(f, o);
    ASSERT_TRUE(ref.ok());
    for (int t : {1, 2, 3}) {
      o.policy = Policy::omp;
      o.threads = t;
      auto s = compress(f, o);
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s.value(), ref.value()) << t << " threads";
      DecompressOptions d;
      d.threads = t;
      auto a = decompress3d(ref.value(), d);
      DecompressOptions serial;
      serial.policy = Policy::serial;
      auto b = decompress3d(ref.value(), serial);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->u, b->u);
      EXPECT_EQ(a->v, b->v);
      EXPECT_EQ(a->w, b->w);
    }
  }
}

TEST(Speculative3D, TheDecoderRebuildsTheWritersValuesBitForBit) {
  // The ABC flow's components are constant along an axis each: the writer predicts along
  // them (choose_axes3d), and the stream must carry those choices to the decoder.
  const VectorField3D f = testing::abc_flow(30, 26, 22);
  const float eb = 1e-3f;
  const std::vector<uint8_t> along = detail::choose_axes3d(f, 16, double(eb), nullptr);
  EXPECT_TRUE(std::any_of(along.begin(), along.end(), [](uint8_t a) { return a != 0; }));
  detail::Speculative3DResult r;
  detail::run_speculative3d(f, eb, 16, 2, true, r, nullptr, 0, along.data());
  Options o = rel(0);
  o.bound_mode = BoundMode::abs;
  o.bound = double(eb);
  o.anchor_stride = 16;  // run_speculative3d's above
  auto s = compress(f, o);
  ASSERT_TRUE(s.ok());
  auto d = decompress3d(s.value());
  ASSERT_TRUE(d.ok());
  for (size_t k = 0; k < f.u.size(); ++k) {
    ASSERT_EQ(std::bit_cast<uint32_t>(d->u[k]), std::bit_cast<uint32_t>(r.recon[0][k])) << k;
    ASSERT_EQ(std::bit_cast<uint32_t>(d->v[k]), std::bit_cast<uint32_t>(r.recon[1][k])) << k;
    ASSERT_EQ(std::bit_cast<uint32_t>(d->w[k]), std::bit_cast<uint32_t>(r.recon[2][k])) << k;
  }
  EXPECT_LT(r.exact_vertices, f.size() / 4) << "most vertices are coded, not stored";
}

// Without the signature check the same schedule and bounds lose or invent critical points:
// the check is what keeps them (so the round-trip tests above can fail).
TEST(Speculative3D, TheSignatureCheckIsWhatKeepsTheCriticalPoints) {
  const VectorField3D f = testing::random_modes(32, 32, 32, 13);
  const auto range = [&] {
    float lo = f.u[0], hi = f.u[0];
    for (const auto* p : {&f.u, &f.v, &f.w})
      for (float x : *p) lo = std::min(lo, x), hi = std::max(hi, x);
    return hi - lo;
  }();
  for (bool check : {false, true}) {
    detail::Speculative3DResult r;
    detail::run_speculative3d(f, 0.05f * range, 16, 2, check, r);
    VectorField3D g = f;
    g.u.assign(r.recon[0].begin(), r.recon[0].end());
    g.v.assign(r.recon[1].begin(), r.recon[1].end());
    g.w.assign(r.recon[2].begin(), r.recon[2].end());
    auto c = compare(f, g);
    ASSERT_TRUE(c.ok());
    if (check) {
      EXPECT_EQ(c->violations(), 0);
    } else {
      EXPECT_GT(c->violations(), 0);
    }
  }
}

// The schedule: every vertex is an anchor or the target of exactly one phase, targets of a
// phase are never mesh neighbours, and the predictor reads only vertices known before it.
TEST(Speculative3D, ScheduleCoversEveryVertexOnceWithIndependentPhases) {
  for (auto [nx, ny, nz, s0] : {std::array<int64_t, 4>{13, 9, 7, 4}, {17, 16, 3, 8}, {5, 5, 5, 2}, {1, 9, 4, 16}}) {
    std::vector<int> order(size_t(nx * ny * nz), -1);
    const detail::PhaseLattice3D A = detail::anchor_lattice3d(nx, ny, nz, s0);
    for (int64_t a = 0; a < A.count(); ++a) order[size_t(detail::lattice_vertex3d(A, nx, ny, a))] = 0;
    detail::PhaseSchedule3D sched(nx, ny, nz, s0);
    int phase = 0;
    int64_t offset = A.count() * 0;
    for (detail::ScheduledPhase3D ph; sched.next(ph);) {
      ++phase;
      EXPECT_EQ(ph.offset, offset);
      offset += ph.lattice.count();
      for (int64_t t = 0; t < ph.lattice.count(); ++t) {
        const int64_t k = detail::lattice_vertex3d(ph.lattice, nx, ny, t);
        ASSERT_EQ(order[size_t(k)], -1) << "vertex in two phases";
        order[size_t(k)] = phase;
      }
      // No two targets of the phase share a tetrahedron: every tetrahedron around a target
      // holds no other target of the same phase, and all its other vertices are known.
      for (int64_t t = 0; t < ph.lattice.count(); ++t) {
        const int64_t k = detail::lattice_vertex3d(ph.lattice, nx, ny, t);
        const int64_t x = k % nx, y = (k / nx) % ny, z = k / (nx * ny);
        int64_t tets[24];
        const int m = detail::incident_tets(nx, ny, nz, x, y, z, tets);
        for (int i = 0; i < m; ++i) {
          int64_t idx[4];
          int axes[3];
          detail::tet_vertices(nx, ny, tets[i], idx, axes);
          int self = 0;
          for (int64_t j : idx) {
            self += j == k;
            if (j != k) {
              EXPECT_NE(order[size_t(j)], phase) << "two targets of one phase in a tetrahedron";
            }
          }
          EXPECT_EQ(self, 1);
        }
      }
    }
    for (int o : order) EXPECT_GE(o, 0) << "vertex in no phase";
    EXPECT_EQ(offset, nx * ny * nz - A.count());
  }
  // 24 tetrahedra around an interior vertex; each of the 6 per cube counted once.
  int64_t tets[24];
  EXPECT_EQ(detail::incident_tets(5, 5, 5, 2, 2, 2, tets), 24);
  EXPECT_EQ(detail::incident_tets(5, 5, 5, 0, 0, 0, tets), 6);
  EXPECT_EQ(detail::incident_tets(5, 5, 5, 4, 4, 4, tets), 6);
  EXPECT_EQ(detail::incident_tets(5, 5, 1, 2, 2, 0, tets), 0);
}

// signatures_hold3d (a screen per cube, then screened signatures) answers as comparing
// tet_signature alone on each tetrahedron of incident_tets, on ties and on a smooth flow,
// for candidates near and far from the current value.
TEST(Speculative3D, TheCubeScreenDecidesAsEachTetrahedronAlone) {
  for (const VectorField3D& f : {testing::tie_field(7, 6, 5, 4), testing::random_modes(9, 8, 7, 5)}) {
    const auto sig = signatures(f);
    ASSERT_TRUE(sig.ok());
    std::vector<uint8_t> near(size_t(f.size()), 0);
    detail::mark_near_critical3d(f.nx, f.ny, f.nz, sig->data(), near.data());
    std::vector<uint8_t> classes(size_t(f.size()));
    for (size_t k = 0; k < classes.size(); ++k) classes[k] = detail::sign_class3(f.u[k], f.v[k], f.w[k]);
    uint64_t x = 12345;
    auto next = [&] {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      return x;
    };
    int64_t agree_true = 0, agree_false = 0;
    for (int64_t k = 0; k < f.size(); ++k) {
      const int64_t vx = k % f.nx, vy = (k / f.nx) % f.ny, vz = k / (f.nx * f.ny);
      for (int trial = 0; trial < 4; ++trial) {
        float cand[3];
        for (int c = 0; c < 3; ++c) {
          const float base = (c == 0 ? f.u : c == 1 ? f.v : f.w)[size_t(k)];
          const int r = int(next() % 5);
          cand[c] = r == 0 ? base : r == 1 ? 0.0f : base + (float(int(next() % 200)) - 100.0f) / 100.0f;
        }
        int64_t tets[24];
        const int m = detail::incident_tets(f.nx, f.ny, f.nz, vx, vy, vz, tets);
        bool alone = true;
        for (int i = 0; i < m; ++i) {
          int64_t idx[4];
          int axes[3];
          detail::tet_vertices(f.nx, f.ny, tets[i], idx, axes);
          float u[4], v[4], w[4];
          for (int j = 0; j < 4; ++j) {
            u[j] = idx[j] == k ? cand[0] : f.u[size_t(idx[j])];
            v[j] = idx[j] == k ? cand[1] : f.v[size_t(idx[j])];
            w[j] = idx[j] == k ? cand[2] : f.w[size_t(idx[j])];
          }
          alone = alone && detail::tet_signature(idx, axes, u, v, w) == sig.value()[size_t(tets[i])];
        }
        const bool screened = detail::signatures_hold3d(f.nx, f.ny, f.nz, vx, vy, vz, cand[0], cand[1], cand[2],
                                                        f.u.data(), f.v.data(), f.w.data(), sig->data());
        ASSERT_EQ(screened, alone) << "vertex " << k << " trial " << trial;
        const bool with_near = detail::signatures_hold3d(f.nx, f.ny, f.nz, vx, vy, vz, cand[0], cand[1], cand[2],
                                                         f.u.data(), f.v.data(), f.w.data(), sig->data(), near.data());
        ASSERT_EQ(with_near, alone) << "vertex " << k << " trial " << trial << " (near_cp)";
        const bool with_classes =
            detail::signatures_hold3d(f.nx, f.ny, f.nz, vx, vy, vz, cand[0], cand[1], cand[2], f.u.data(), f.v.data(),
                                      f.w.data(), sig->data(), near.data(), classes.data());
        ASSERT_EQ(with_classes, alone) << "vertex " << k << " trial " << trial << " (sign classes)";
        (alone ? agree_true : agree_false) += 1;
      }
    }
    EXPECT_GT(agree_true, 0);
    EXPECT_GT(agree_false, 0);
  }
}

// The sign-class screen of an inside vertex's neighbourhood answers as the value screen
// (neighbourhood_one_sided) for every candidate: values of both signs, zeros of both signs,
// one component of one sign over the whole neighbourhood, and the candidate alone breaking it.
TEST(Speculative3D, SignClassesScreenANeighbourhoodAsItsValues) {
  const int64_t nx = 6, ny = 5, nz = 5, n = nx * ny * nz;
  uint64_t seed = 99;
  auto next = [&] {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
  };
  auto value = [&](int kind) {  // kind 0: any sign; 1: positive; 2: negative
    const int r = int(next() % 8);
    const float mag = r == 0 ? 0.0f : float(next() % 1000 + 1) / 100.0f;
    const float sign = kind == 1 ? 1.0f : kind == 2 ? -1.0f : (next() % 2 ? 1.0f : -1.0f);
    return r == 0 ? (next() % 2 ? 0.0f : -0.0f) : sign * mag;
  };
  int64_t quiet = 0, loud = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<float> planes[3];
    // Each component: random signs, or one strict sign everywhere (most of a smooth field).
    int kinds[3];
    for (int c = 0; c < 3; ++c) {
      kinds[c] = int(next() % 3);
      planes[c].resize(size_t(n));
      for (float& q : planes[c]) q = value(kinds[c]);
      for (float& q : planes[c])
        if (kinds[c] != 0 && q == 0.0f) q = kinds[c] == 1 ? 1.0f : -1.0f;
    }
    const float* cur[3] = {planes[0].data(), planes[1].data(), planes[2].data()};
    std::vector<uint8_t> classes(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
      classes[size_t(k)] = detail::sign_class3(planes[0][size_t(k)], planes[1][size_t(k)], planes[2][size_t(k)]);
    for (int64_t z = 1; z + 1 < nz; ++z)
      for (int64_t y = 1; y + 1 < ny; ++y)
        for (int64_t x = 1; x + 1 < nx; ++x) {
          const float cand[3] = {value(next() % 4 == 0 ? 0 : kinds[0]), value(next() % 4 == 0 ? 0 : kinds[1]),
                                 value(next() % 4 == 0 ? 0 : kinds[2])};
          const int64_t k = (z * ny + y) * nx + x;
          const bool by_values = detail::neighbourhood_one_sided(nx, ny, nz, x, y, z, cand, cur);
          const bool by_classes = detail::neighbourhood_one_sided_classes(
              nx, ny, k, detail::sign_class3(cand[0], cand[1], cand[2]), classes.data());
          ASSERT_EQ(by_classes, by_values) << "trial " << trial << " vertex " << k;
          (by_values ? quiet : loud) += 1;
        }
  }
  EXPECT_GT(quiet, 100);
  EXPECT_GT(loud, 100);
}

// first_candidates_row gives, for every target of every row of every phase, predict3d's
// prediction bit for bit, and accepts a first candidate (bound id kMaxBoundId) exactly when
// quantize_residual and within_bound accept it (float; a float64 target whose difference is
// not exact in double is left to speculate_vertex3d), with the same code and value. Rows on
// and off the grid's faces, every level (target spacing 2 and more), the mean and each chosen
// axis, bounds where codes overflow, float and float64.
template <class Field>
void check_first_candidates(const Field& orig, const Field& cur_field, double eb, uint64_t seed, int64_t& accepted,
                            int64_t& refused) {
  using T = typename decltype(orig.u)::value_type;
  const int64_t nx = orig.nx, ny = orig.ny, nz = orig.nz;
  const T* f[3] = {orig.u.data(), orig.v.data(), orig.w.data()};
  const T* cur[3] = {cur_field.u.data(), cur_field.v.data(), cur_field.w.data()};
  const T bound = detail::bound_of_id(T(eb), detail::kMaxBoundId);
  const int32_t radius = 32768;
  detail::RowCandidates<T> row;
  int64_t index = 0;
  detail::PhaseSchedule3D schedule(nx, ny, nz, 8);
  for (detail::ScheduledPhase3D ph; schedule.next(ph); ++index) {
    for (int c = 0; c < 3; ++c) {  // the mean, or one of the phase's axes
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const int a = int((seed >> 33) % 4);
      ph.along[c] = a > 0 && detail::valid_along(uint8_t(a), ph.axes) ? uint8_t(a) : 0;
    }
    const detail::PhaseLattice3D& L = ph.lattice;
    for (int64_t l = 0; l < L.count_z; ++l)
      for (int64_t j = 0; j < L.count_y; ++j) {
        const int64_t y = L.y0 + j * L.d, z = L.z0 + l * L.d;
        detail::first_candidates_row(f, cur, nx, ny, nz, y, z, ph, bound, radius, row);
        for (int64_t i = 0; i < L.count_x; ++i) {
          const int64_t x = L.x0 + i * L.d, k = (z * ny + y) * nx + x;
          const std::string where = "phase " + std::to_string(index) + " vertex " + std::to_string(k);
          T x3[3], pred[3];
          for (int c = 0; c < 3; ++c) {
            x3[c] = f[c][k];
            pred[c] = detail::predict3d(cur[c], nx, ny, nz, x, y, z, ph.step, ph.axes, ph.along[c]);
          }
          ASSERT_NO_FATAL_FAILURE(
              testing::check_row_target(row, size_t(i), x3, pred, bound, radius, where, accepted, refused));
        }
      }
  }
}

TEST(Speculative3D, RowCandidatesAreTheScalarFirstCandidates) {
  VectorField3D f = testing::random_modes(19, 17, 15, 5);
  // Tiny values among O(1) ones: a candidate's difference from them is not exact in double
  // (within_bound refuses it for a float field, decides it exactly for a float64 one).
  for (size_t k = 0; k < f.u.size(); k += 13) f.u[k] = (k % 2 ? 1e-30f : -3e-25f);
  VectorField3D cur = f;  // a current state apart from the originals: predictions differ
  for (std::vector<float>* p : {&cur.u, &cur.v, &cur.w})
    for (size_t k = 0; k < p->size(); ++k) (*p)[k] = (*p)[k] * 0.75f + float(k % 7) * 0.01f;
  const VectorField3D ties = testing::tie_field(17, 13, 11, 3);
  int64_t accepted[3] = {0, 0, 0}, refused[3] = {0, 0, 0};  // both happen on each field
  for (double eb : {1.0, 1e-2, 1e-5, 1e-9}) {
    check_first_candidates(f, cur, eb, 1, accepted[0], refused[0]);
    check_first_candidates(ties, ties, eb, 2, accepted[1], refused[1]);
    check_first_candidates(testing::widen(f), testing::widen(cur), eb, 3, accepted[2], refused[2]);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_GT(accepted[k], 1000) << "field " << k;
    EXPECT_GT(refused[k], 1000) << "field " << k;
  }
}

// value_range3d's lane pass gives std::minmax_element's range bit for bit, zero extremes and
// their signs included, for every length around the lane count.
TEST(Speculative3D, ValueRangeIsMinmaxElementsBitForBit) {
  uint64_t seed = 7;
  auto next = [&] {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
  };
  auto reference = [](const VectorField3D& f) {
    float lo = 0, hi = 0;
    bool any = false;
    for (const std::vector<float>* p : {&f.u, &f.v, &f.w}) {
      const auto [mn, mx] = std::minmax_element(p->begin(), p->end());
      lo = any ? std::min(lo, *mn) : *mn;
      hi = any ? std::max(hi, *mx) : *mx;
      any = true;
    }
    return double(hi) - double(lo);
  };
  for (int64_t n = 1; n <= 37; ++n)
    for (int style = 0; style < 5; ++style) {
      VectorField3D f{n, 1, 1, {}, {}, {}};
      for (std::vector<float>* p : {&f.u, &f.v, &f.w}) {
        p->resize(size_t(n));
        for (float& q : *p) {
          const float r = float(int(next() % 2001) - 1000) / 64.0f;
          q = style == 0 ? r : style == 1 ? std::fabs(r) + 1.0f : style == 2 ? -std::fabs(r) - 1.0f
            : (next() % 2 ? 0.0f : -0.0f);  // 3 and 4: signed zeros only, or ...
          if (style == 4 && next() % 3 == 0) q = float(next() % 5);  // ... zeros and positives
        }
      }
      const double want = reference(f), got = detail::value_range3d(f);
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << "n " << n << " style " << style;
    }
}

// mark_near_critical3d marks exactly the vertices with an incident tetrahedron (incident_tets)
// whose signature is a critical point, and skips tetrahedra off the mesh.
TEST(Speculative3D, NearCriticalMarksTheVerticesOfCriticalTetrahedra) {
  for (const VectorField3D& f : {testing::random_modes(9, 8, 7, 5), testing::tie_field(7, 6, 5, 4)}) {
    auto sig = signatures(f);
    ASSERT_TRUE(sig.ok());
    std::vector<uint8_t> s = sig.value();
    for (uint8_t& b : s)  // the first critical tetrahedron taken off the mesh: not marked for it
      if (b != 0) {
        b = detail::kMaskedTet;
        break;
      }
    std::vector<uint8_t> near(size_t(f.size()), 0);
    detail::mark_near_critical3d(f.nx, f.ny, f.nz, s.data(), near.data());
    int64_t marked = 0;
    for (int64_t k = 0; k < f.size(); ++k) {
      const int64_t vx = k % f.nx, vy = (k / f.nx) % f.ny, vz = k / (f.nx * f.ny);
      int64_t tets[24];
      const int m = detail::incident_tets(f.nx, f.ny, f.nz, vx, vy, vz, tets);
      bool want = false;
      for (int i = 0; i < m; ++i) want = want || (s[size_t(tets[i])] != 0 && s[size_t(tets[i])] != detail::kMaskedTet);
      ASSERT_EQ(near[size_t(k)] != 0, want) << "vertex " << k;
      marked += want;
    }
    EXPECT_GT(marked, 0);
    EXPECT_LT(marked, f.size());
  }
}

TEST(Speculative3D, SmoothFlowsCompressWell) {
  const VectorField3D f = testing::abc_flow(48, 48, 48);
  for (double r : {1e-2, 1e-3}) {
    auto s = compress(f, rel(r));
    ASSERT_TRUE(s.ok());
    const double ratio = double(f.size()) * 12.0 / double(s->size());
    EXPECT_GT(ratio, r == 1e-2 ? 8.0 : 4.0) << "REL " << r;
  }
}

TEST(Speculative3D, RefusesWhatItDoesNotSupportWithAClearMessage) {
  const VectorField3D f = testing::random_modes(8, 7, 6, 1);
  auto says = [](const Result<Bytes>& r, Code code, const std::string& text) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().to_string();
  };
  // (Missing vertices, a mask or NaN, are supported since format version 12:
  // tests/test_mask3d.cpp.)
  Options unknown = rel(1e-2);
  unknown.mode = Mode(7);
  says(compress(f, unknown), Code::invalid_argument, "unknown mode");
  // Policy::cuda: the CUDA backend's 3D pipeline in a build with one (on a GPU the CPU's
  // bytes: tests/cuda/test_gpu_model3d.cpp), else backend_unavailable naming the CPU.
  Options cuda = rel(1e-2);
  cuda.policy = Policy::cuda;
  const auto on_device = compress(f, cuda);
  if (!detail::device_backend()) says(on_device, Code::backend_unavailable, "CPU only");
  else if (!on_device.ok()) EXPECT_EQ(on_device.status().code(), Code::backend_unavailable);
  else EXPECT_EQ(on_device.value(), compress(f, rel(1e-2)).value());
  Options edges = rel(1e-2);
  edges.exact_edges = 64;  // faces are bits 1..32 (tests/test_multiblock3d.cpp)
  says(compress(f, edges), Code::invalid_argument, "exact_edges");
  Options stride = rel(1e-2);
  stride.anchor_stride = 3;
  says(compress(f, stride), Code::invalid_argument, "anchor stride");
  VectorField3D inf = f;
  inf.u[3] = INFINITY;
  says(compress(inf, rel(1e-2)), Code::invalid_argument, "infinite");
}

TEST(Speculative3D, ARoughFieldsCodesAreSegmented) {
  // Levels whose residuals differ get their own tables (streams/code_segments.hpp).
  auto s = compress(testing::random_modes(48, 40, 36, 5), rel(1e-3));
  ASSERT_TRUE(s.ok());
  auto pc = detail::parse_container(s.value());
  ASSERT_TRUE(pc.ok());
  for (uint32_t id : {detail::kSectionCodesU, detail::kSectionCodesV, detail::kSectionCodesW}) {
    auto sec = detail::read_section(s.value(), pc.value(), id, &detail::zstd_stage_decompressor());
    ASSERT_TRUE(sec.ok());
    std::vector<detail::CodeSegment> segs;
    int64_t n = 0;
    {
      detail::ByteReader r(sec.value());
      uint64_t count = 0, c = 0;
      ASSERT_TRUE(r.varint(count));
      for (uint64_t k = 0; k < count; ++k) {
        ASSERT_TRUE(r.varint(c));
        n += int64_t(c);
      }
    }
    ASSERT_TRUE(detail::parse_segmented(sec.value(), n, segs).ok());
    EXPECT_GT(segs.size(), 1u) << detail::section_name(id);
  }
  auto d = decompress3d(s.value());
  ASSERT_TRUE(d.ok());
}

TEST(Speculative3D, TheStreamIsVersion10WithThreeSegmentedCodeSections) {
  const VectorField3D f = testing::random_modes(12, 10, 9, 2);
  auto s = compress(f, rel(1e-2));
  ASSERT_TRUE(s.ok());
  auto p = detail::parse_container(s.value());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->header.version, detail::kFormatVersionSegmented3D);
  EXPECT_EQ(p->header.components, 3);
  EXPECT_EQ(p->header.ndims, 3);
  EXPECT_EQ(p->header.nz, 9u);
  EXPECT_EQ(p->header.anchor_stride, Options{}.anchor_stride);
  for (uint32_t id : {detail::kSectionMeta, detail::kSectionCodesU, detail::kSectionCodesV, detail::kSectionCodesW,
                      detail::kSectionExactValues, detail::kSectionBoundIdsU})
    EXPECT_TRUE(detail::has_section(p.value(), id)) << detail::section_name(id);
  auto dims = stream_dims3d(s.value());
  ASSERT_TRUE(dims.ok());
  EXPECT_EQ(dims.value(), (std::array<int64_t, 3>{12, 10, 9}));
  // The 2D decoders name the 3D one, and the 3D decoder the 2D one.
  auto d2 = decompress(s.value());
  ASSERT_FALSE(d2.ok());
  EXPECT_EQ(d2.status().code(), Code::unsupported_version);
  EXPECT_NE(d2.status().message().find("decompress3d"), std::string::npos) << d2.status().to_string();
  VectorField2D flat;
  flat.nx = 8;
  flat.ny = 8;
  flat.u.assign(64, 1.0f);
  flat.v.assign(64, 2.0f);
  auto s2 = compress(flat, rel(1e-2));
  ASSERT_TRUE(s2.ok());
  auto d3 = decompress3d(s2.value());
  ASSERT_FALSE(d3.ok());
  EXPECT_EQ(d3.status().code(), Code::unsupported_version);
  EXPECT_NE(d3.status().message().find("2D vector field"), std::string::npos) << d3.status().to_string();
  // The container's version rule: codes_w makes version 8, and only a 3D vector stream has it.
  const uint32_t ids[] = {detail::kSectionMeta, detail::kSectionCodesW};
  EXPECT_EQ(detail::stream_version(ids), 8);
  detail::Header h = p->header;
  h.version = 7;
  EXPECT_FALSE(detail::write_container(h, {{detail::kSectionMeta, {1}}}, nullptr).ok());
  h.components = 2;
  h.ndims = 2;
  h.nz = 1;
  h.version = 8;
  EXPECT_FALSE(detail::write_container(h, {{detail::kSectionMeta, {1}}, {detail::kSectionCodesW, {}}}, nullptr).ok());
}

/// Truncates, flips bits in and randomizes a stream: every result is an error and nothing
/// crashes (every byte lies under a CRC-32C, so each single-bit flip must be caught).
TEST(Speculative3D, DamagedStreamsAreRejected) {
  const VectorField3D f = testing::random_modes(14, 12, 11, 6);
  for (bool zstd : {false, true}) {
    auto s = compress(f, rel(1e-2, Coder::ans, zstd));
    ASSERT_TRUE(s.ok());
    const Bytes good = s.value();
    for (size_t len : {size_t(0), size_t(3), size_t(63), size_t(64), size_t(100), good.size() / 2, good.size() - 1}) {
      auto d = decompress3d(std::span<const uint8_t>(good.data(), len));
      ASSERT_FALSE(d.ok()) << len;
      EXPECT_EQ(d.status().code(), Code::corrupt_stream) << len << ": " << d.status().to_string();
    }
    for (size_t i = 0; i < good.size(); i += (i < 400 ? 1 : 7)) {
      Bytes b = good;
      b[i] ^= uint8_t(1u << (i % 8));
      auto d = decompress3d(b);
      EXPECT_FALSE(d.ok()) << "byte " << i;
    }
  }
  uint64_t x = 88172645463325252ull;
  for (int trial = 0; trial < 200; ++trial) {
    Bytes b(size_t(64 + trial * 13));
    for (auto& c : b) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = uint8_t(x);
    }
    if (trial % 2 == 0) std::memcpy(b.data(), "FCTZ\x08\x00", 6);
    EXPECT_FALSE(decompress3d(b).ok());
  }
}

// Streams whose checksums are right but whose contents lie: re-sealed by the container
// writer from forged payloads. Each is corrupt_stream with a message naming the problem.
TEST(Speculative3D, ForgedContentsAreCorruptStreams) {
  const VectorField3D f = testing::random_modes(10, 9, 8, 3);
  detail::Speculative3DResult r;
  detail::run_speculative3d(f, 0.01f, 4, 1, true, r);
  detail::Stream3DPlan p;
  p.nx = f.nx, p.ny = f.ny, p.nz = f.nz;
  p.options = rel(0);
  p.options.bound_mode = BoundMode::abs;
  p.options.bound = 0.01;
  p.options.anchor_stride = 4;
  p.eb = 0.01f;
  auto forged = [&](auto&& edit, const std::string& says) {
    detail::Speculative3DPayload pl;
    detail::speculative3d_payload(f, 4, r, pl);
    edit(pl);
    auto s = detail::assemble_speculative3d(p, pl);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto d = decompress3d(s.value());
    ASSERT_FALSE(d.ok()) << says;
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
    EXPECT_NE(d.status().message().find(says), std::string::npos) << d.status().to_string();
  };
  {  // the unforged payload decodes
    detail::Speculative3DPayload pl;
    detail::speculative3d_payload(f, 4, r, pl);
    auto s = detail::assemble_speculative3d(p, pl);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(decompress3d(s.value()).ok());
  }
  forged([](detail::Speculative3DPayload& pl) { pl.ids[3] = 40; }, "bound id out of range");
  forged([](detail::Speculative3DPayload& pl) { pl.ids.pop_back(); }, "bound ids");
  {  // codes_w with one code fewer than the bound ids give, behind valid checksums
    detail::Speculative3DPayload pl;
    detail::speculative3d_payload(f, 4, r, pl);
    const std::vector<uint16_t> short_w(pl.codes[2].begin(), pl.codes[2].end() - 1);
    auto s = detail::assemble_speculative3d(p, pl);
    ASSERT_TRUE(s.ok());
    auto pc = detail::parse_container(s.value());
    ASSERT_TRUE(pc.ok());
    std::vector<detail::Section> sections;
    for (const auto& e : pc->entries) {
      auto raw = detail::read_section(s.value(), pc.value(), e.id, &detail::zstd_stage_decompressor());
      ASSERT_TRUE(raw.ok());
      sections.push_back({e.id, std::move(raw.value())});
    }
    const std::vector<int64_t> one = {int64_t(short_w.size())};
    for (auto& sec : sections) {
      if (sec.id != detail::kSectionCodesW) continue;
      ASSERT_TRUE(detail::write_segmented(
                        one, int64_t(short_w.size()),
                        [&](int64_t first, int64_t m, Bytes& blob, std::optional<uint32_t>&) {
                          return detail::entropy_encode(detail::EntropyCoder(p.options.coder),
                                                        std::span<const uint16_t>(short_w).subspan(size_t(first), size_t(m)),
                                                        detail::kAnsCodeCenter, blob, 1);
                        },
                        sec.raw)
                        .ok());
    }
    auto w = detail::write_container(pc->header, sections, nullptr);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    auto d = decompress3d(w.value());
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
    EXPECT_NE(d.status().message().find("segments hold"), std::string::npos) << d.status().to_string();
  }
  forged([](detail::Speculative3DPayload& pl) { pl.exact.resize(pl.exact.size() - 12); }, "exact value count");
  forged(
      [](detail::Speculative3DPayload& pl) {
        const float inf = INFINITY;
        std::memcpy(pl.exact.data(), &inf, 4);
      },
      "not finite");
  forged(
      [](detail::Speculative3DPayload& pl) {
        // u of anchor 0 = FLT_MAX: the predictions beside it overflow, which the writer
        // never lets through (it stores such a vertex exactly)
        pl.exact[0] = 0xFF, pl.exact[1] = 0xFF, pl.exact[2] = 0x7F, pl.exact[3] = 0x7F;
      },
      "not finite");
}

// ---- Golden streams of format versions 10 and 8 (tests/data/golden/README.md) --------------

/// A field with saddles and sources (tests/support/polynomial3d.hpp).
VectorField3D polynomial_13x11x9() { return testing::polynomial3d(13, 11, 9); }


std::vector<testing::Golden3DCase> golden3d_cases() {
  Options huffman = rel(1e-2, Coder::huffman, false);
  Options ans = rel(1e-3, Coder::ans, true);
  ans.anchor_stride = 4;
  return {{"v10p2_speculative3d_rel1e-2_huffman_nozstd_13x11x9.fz", huffman, 0xe0365b47u},
          {"v10p2_speculative3d_rel1e-3_ans_zstd_s4_13x11x9.fz", ans, 0xc80fcdc0u}};
}

// The same cases written with predictor 1 (the mean of the phase's axes everywhere, before
// the writer chose axes and code transforms: polynomial3d's components are linear along one
// axis each, which it now predicts along): they still decode to their values.
TEST(Speculative3D, GoldenPredictor1StreamsStillDecodeToTheirValues) {
  testing::expect_golden3d_decodes("v10_speculative3d_rel1e-2_huffman_nozstd_13x11x9.fz", 0xfd8d5d92u);
  testing::expect_golden3d_decodes("v10_speculative3d_rel1e-3_ans_zstd_s4_13x11x9.fz", 0x4db8b21au);
}

// The version 8 files of the same cases (codes in one blob per component, before version 10
// segmented them): they still decode to the same values.
TEST(Speculative3D, GoldenVersion8StreamsStillDecodeToTheirValues) {
  for (const auto& [file, crc] : {std::pair{"v8_speculative3d_rel1e-2_huffman_nozstd_13x11x9.fz", 0xfd8d5d92u},
                                  std::pair{"v8_speculative3d_rel1e-3_ans_zstd_s4_13x11x9.fz", 0x4db8b21au}}) {
    ASSERT_EQ(testing::golden_bytes(file).at(4), 8) << file;
    testing::expect_golden3d_decodes(file, crc);
  }
}

// FACTZ_REGENERATE_GOLDEN=1 rewrites the files (only when the format version is bumped or a
// case is added) and prints the CRCs to paste above.
TEST(Speculative3D, GoldenVersion10StreamsDecodeToThePinnedValuesAndAreReproduced) {
  const VectorField3D f = polynomial_13x11x9();
  testing::check_golden3d(f, golden3d_cases(), [&](const testing::Golden3DCase& g, const Bytes& file,
                                                   const VectorField3D& d) {
    EXPECT_EQ(testing::predictor3d_of(file), 2) << g.file << ": the case pins the choice table";
    auto c = compare(f, d);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->violations(), 0) << g.file;
    EXPECT_GT(c->cp_original, 0) << g.file;
  });
}

}  // namespace
}  // namespace factz
