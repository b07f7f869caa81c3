// The topology contract (ARCHITECTURE.md section 3) on cases whose answer is known:
// hand-built triangles of every type and every degenerate configuration (each expected
// signature derived by hand below), consequences of the contract that must hold on whole
// fields (Simulation of Simplicity puts a zero in exactly one triangle, a degree identity,
// scale invariance), and agreement of the public API with the independent reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "factz/topology.hpp"
#include "kernels/mesh.hpp"
#include "kernels/orient.hpp"
#include "kernels/signature.hpp"
#include "support/exact_reference.hpp"
#include "support/fields.hpp"

namespace {

using factz::CpType;
using factz::detail::SosPoint;
namespace d = factz::detail;
namespace r = factz::testref;

// Signature bytes: 0 = none, 1 + CpType.
constexpr uint8_t kNone = 0;
constexpr uint8_t kSaddle = 1;
constexpr uint8_t kAttractingNode = 2;
constexpr uint8_t kRepellingNode = 3;
constexpr uint8_t kAttractingFocus = 4;
constexpr uint8_t kRepellingFocus = 5;
constexpr uint8_t kCenter = 6;
constexpr uint8_t kDegenerate = 7;

// Signature of one triangle by the kernel; the reference must say the same.
uint8_t signature(int t, std::array<int64_t, 3> idx, std::array<float, 3> u,
                  std::array<float, 3> v) {
  const uint8_t fast = d::triangle_signature(t, idx.data(), u.data(), v.data());
  const uint8_t ref = r::ref_signature(t, idx.data(), u.data(), v.data());
  EXPECT_EQ(fast, ref) << "kernel and reference disagree";
  return fast;
}

// ---------------------------------------------------------------------------------------
// Mesh

TEST(TopologyMesh, TriangleVerticesFollowTheContract) {
  for (int64_t nx : {2, 3, 7}) {
    for (int64_t ny : {2, 5}) {
      const d::Grid2D g{nx, ny};
      ASSERT_EQ(g.triangle_count(), r::ref_triangle_count(nx, ny));
      for (int64_t tri = 0; tri < g.triangle_count(); ++tri) {
        int64_t idx[3];
        d::triangle_vertices(g, tri, idx);
        const auto want = r::ref_triangle_vertices(nx, ny, tri);
        EXPECT_EQ(idx[0], want[0]);
        EXPECT_EQ(idx[1], want[1]);
        EXPECT_EQ(idx[2], want[2]);
      }
    }
  }
  // Spelled out for a 3-wide grid: cell (1, 0) has id 2 * (1 * 2 + 0) = 4, T0 = 4 and
  // T1 = 5; T0 = {(1,0), (2,0), (2,1)} = {3, 6, 7}, T1 = {(1,0), (1,1), (2,1)} = {3, 4, 7}.
  int64_t idx[3];
  d::triangle_vertices(d::Grid2D{3, 3}, 4, idx);
  EXPECT_EQ((std::array<int64_t, 3>{idx[0], idx[1], idx[2]}), (std::array<int64_t, 3>{3, 6, 7}));
  d::triangle_vertices(d::Grid2D{3, 3}, 5, idx);
  EXPECT_EQ((std::array<int64_t, 3>{idx[0], idx[1], idx[2]}), (std::array<int64_t, 3>{3, 4, 7}));
  // Degenerate grids have no triangles.
  EXPECT_EQ(d::Grid2D({1, 1}).triangle_count(), 0);
  EXPECT_EQ(d::Grid2D({1, 9}).triangle_count(), 0);
  EXPECT_EQ(d::Grid2D({9, 1}).triangle_count(), 0);
}

TEST(TopologyMesh, IncidentTrianglesAreExactlyThoseTouchingTheVertex) {
  for (int64_t nx : {2, 3, 6}) {
    for (int64_t ny : {2, 4}) {
      const d::Grid2D g{nx, ny};
      std::vector<std::set<int64_t>> touching(size_t(nx * ny));
      for (int64_t tri = 0; tri < g.triangle_count(); ++tri) {
        for (int64_t vtx : r::ref_triangle_vertices(nx, ny, tri)) touching[size_t(vtx)].insert(tri);
      }
      for (int64_t i = 0; i < ny; ++i) {
        for (int64_t j = 0; j < nx; ++j) {
          int64_t out[6];
          const int n = d::incident_triangles(g, i, j, out);
          const std::set<int64_t> got(out, out + n);
          EXPECT_EQ(size_t(n), got.size()) << "duplicates at " << i << "," << j;
          EXPECT_EQ(got, touching[size_t(i * nx + j)]) << "vertex " << i << "," << j;
          if (i > 0 && j > 0 && i < ny - 1 && j < nx - 1) {
            EXPECT_EQ(n, 6);
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Hand-built triangles, one per type.
//
// Convention used in the derivations: vertex k has position P_k in the unit cell
// (x = column, y = row): T0 = (0,0), (0,1), (1,1); T1 = (0,0), (1,0), (1,1). The values
// are 4 * J * (P - Z) for a zero Z inside the triangle, so they are small integers.
// D(a,b,c) = (xb-xa)(yc-ya) - (xc-xa)(yb-ya) equals the contract's determinant. When
// every D below is non-zero, SoS plays no role.

TEST(TopologyHandBuilt, Saddle) {
  // T0, J = diag(1, -1), Z = (1/4, 3/4): p0 = (-1, 3), p1 = (-1, -1), p2 = (3, -1).
  // s = D(p0,p1,p2) = 0*(-4) - 4*(-4) = 16; s0 = D(O,p1,p2) = (-1)(-1) - 3*(-1) = 4;
  // s1 = D(p0,O,p2) = 1*(-4) - 4*(-3) = 8; s2 = D(p0,p1,O) = 0*(-3) - 1*(-4) = 4: inside.
  // T0: d/dx = f2 - f1 = (4, 0), d/dy = f1 - f0 = (0, -4): det = -16 < 0: saddle.
  EXPECT_EQ(signature(0, {0, 2, 3}, {-1, -1, 3}, {3, -1, -1}), kSaddle);
}

TEST(TopologyHandBuilt, Center) {
  // The same six numbers as the saddle, read as T1: the inside test does not depend on
  // t (same D's as above), but T1: d/dx = f1 - f0 = (0, -4), d/dy = f2 - f1 = (4, 0),
  // so J = [[0, 4], [-4, 0]]: det = 16 > 0, tr = 0: center.
  EXPECT_EQ(signature(1, {0, 1, 3}, {-1, -1, 3}, {3, -1, -1}), kCenter);
}

TEST(TopologyHandBuilt, AttractingNode) {
  // T1, J = diag(-1, -2), Z = (3/4, 1/4): p0 = (3, 2), p1 = (-1, 2), p2 = (-1, -6).
  // s = (-4)(-8) - (-4)(0) = 32; s0 = (-1)(-6) - (-1)(2) = 8; s1 = (-3)(-8) - (-4)(-2)
  // = 16; s2 = (-4)(-2) - (-3)(0) = 8: inside. J*4 = [[-4, 0], [0, -8]]: det 32,
  // tr -12, disc 144 - 128 = 16 >= 0: attracting node.
  EXPECT_EQ(signature(1, {0, 1, 3}, {3, -1, -1}, {2, 2, -6}), kAttractingNode);
}

TEST(TopologyHandBuilt, RepellingNode) {
  // T0, J = diag(1, 2), Z = (1/4, 3/4): p0 = (-1, -6), p1 = (-1, 2), p2 = (3, 2).
  // s = 0*8 - 4*8 = -32; s0 = (-1)(2) - 3*2 = -8; s1 = 1*8 - 4*6 = -16;
  // s2 = 0*6 - 1*8 = -8: all negative, inside. J*4 = diag(4, 8): det 32, tr 12,
  // disc 16: repelling node.
  EXPECT_EQ(signature(0, {0, 2, 3}, {-1, -1, 3}, {-6, 2, 2}), kRepellingNode);
}

TEST(TopologyHandBuilt, RepellingNodeWithRepeatedEigenvalue) {
  // T1, J = [[1, 1], [0, 1]] (disc = 0 counts as a node), Z = (3/4, 1/4):
  // p0 = (-4, -1), p1 = (0, -1), p2 = (4, 3). s = 4*4 - 8*0 = 16; s0 = 0*3 - 4*(-1) = 4;
  // s1 = 4*4 - 8*1 = 8; s2 = 4*1 - 4*0 = 4: inside. J*4: det 16, tr 8, disc 64 - 64 = 0.
  EXPECT_EQ(signature(1, {0, 1, 3}, {-4, 0, 4}, {-1, -1, 3}), kRepellingNode);
}

TEST(TopologyHandBuilt, AttractingFocus) {
  // T1, J = [[-1, -2], [2, -1]], Z = (3/4, 1/4): p0 = (5, -5), p1 = (1, 3), p2 = (-7, -1).
  // s = (-4)(4) - (-12)(8) = 80; s0 = 1*(-1) - (-7)*3 = 20; s1 = (-5)(4) - (-12)(5) = 40;
  // s2 = (-4)(5) - (-5)(8) = 20: inside. J*4 = [[-4, -8], [8, -4]]: det 80, tr -8,
  // disc 64 - 320 < 0: attracting focus.
  EXPECT_EQ(signature(1, {0, 1, 3}, {5, 1, -7}, {-5, 3, -1}), kAttractingFocus);
}

TEST(TopologyHandBuilt, RepellingFocus) {
  // T0, J = [[1, 2], [-2, 1]], Z = (1/4, 3/4): p0 = (-7, -1), p1 = (1, 3), p2 = (5, -5).
  // s = 8*(-4) - 12*4 = -80; s0 = 1*(-5) - 5*3 = -20; s1 = 7*(-4) - 12*1 = -40;
  // s2 = 8*1 - 7*4 = -20: inside. T0: d/dx = (4, -8), d/dy = (8, 4): J*4 =
  // [[4, 8], [-8, 4]]: det 80, tr 8, disc < 0: repelling focus.
  EXPECT_EQ(signature(0, {0, 2, 3}, {-7, 1, 5}, {-1, 3, -5}), kRepellingFocus);
}

TEST(TopologyHandBuilt, RepeatedCoordinatesStrictlyInside) {
  // p0 = (2, 1), p1 = (-1, 1) (same v), p2 = (-1, -2) (same u as p1).
  // s = (-3)(-3) - (-3)(0) = 9; s0 = (-1)(-2) - (-1)(1) = 3; s1 = (-2)(-3) - (-3)(-1) = 3;
  // s2 = (-3)(-1) - (-2)(0) = 3: inside. As T1: d/dx = (-3, 0), d/dy = (0, -3): det 9,
  // tr -6, disc 0: attracting node. As T0: d/dx = f2 - f1 = (0, -3), d/dy = f1 - f0 =
  // (-3, 0): det = 0*0 - (-3)(-3) = -9: saddle.
  EXPECT_EQ(signature(1, {0, 1, 3}, {2, -1, -1}, {1, 1, -2}), kAttractingNode);
  EXPECT_EQ(signature(0, {0, 2, 3}, {2, -1, -1}, {1, 1, -2}), kSaddle);
}

// ---------------------------------------------------------------------------------------
// Hand-built degenerate configurations: here SoS decides. For sorted points q0, q1, q2
// (ascending index, origin = -1 first) the sign is the first non-zero of D, x2 - x1,
// y1 - y2, x0 - x2, +1, negated for an odd sorting permutation.

TEST(TopologyHandBuilt, DegenerateJacobianIsClassifiedDegenerate) {
  // u = (-1, 1, 2), v = 0: T0: d/dx = (1, 0), d/dy = (2, 0): det = 0. T1: d/dx = (2, 0),
  // d/dy = (1, 0): det = 0. The type function says degenerate ...
  const float u[3] = {-1, 1, 2}, v[3] = {0, 0, 0};
  EXPECT_EQ(d::triangle_type(0, u, v), CpType::degenerate);
  EXPECT_EQ(d::triangle_type(1, u, v), CpType::degenerate);
  EXPECT_EQ(r::ref_type(0, u, v), CpType::degenerate);
  // ... but the origin is not inside. Indices {0, 2, 3}, already sorted:
  // s = orient(p0,p1,p2): D = 0, x2 - x1 = 2 - 1 > 0: +1.
  // s0 = orient(O,p1,p2): D = 0, x2 - x1 = 2 - 1 > 0: +1.
  // s1 = orient(p0,O,p2): sorted (O,p0,p2), odd; D = 0, x2 - x1 = 2 - (-1) > 0: +1 -> -1.
  // s1 != s: outside.
  EXPECT_EQ(signature(0, {0, 2, 3}, {-1, 1, 2}, {0, 0, 0}), kNone);
}

TEST(TopologyHandBuilt, CollinearThroughTheOriginIsOutside) {
  // u = (-1, 2, 1), v = 0, indices {0, 2, 3}: the origin lies on the segment p0 p2.
  // s: D = 0, x2 - x1 = 1 - 2 < 0: -1. s0: (O,p1,p2) D = 0, x2 - x1 = -1: -1.
  // s1: (O,p0,p2) odd, D = 0, x2 - x1 = 1 - (-1) = 2: +1 -> -1.
  // s2: (p0,p1,O) -> (O,p0,p1) is a rotation (even), D = 0, x2 - x1 = 2 - (-1): +1.
  // s2 != s: outside.
  EXPECT_EQ(signature(0, {0, 2, 3}, {-1, 2, 1}, {0, 0, 0}), kNone);
  // The same on the vertical axis: u = 0, v = (-1, 1, 2). s: D = 0, x2 - x1 = 0,
  // y1 - y2 = 1 - 2: -1. s0 = -1 likewise. s1: (O,p0,p2) odd, D = 0, x2 - x1 = 0,
  // y1 - y2 = -1 - 2: -1 -> +1 != s: outside.
  EXPECT_EQ(signature(0, {0, 2, 3}, {0, 0, 0}, {-1, 1, 2}), kNone);
}

TEST(TopologyHandBuilt, CollinearAwayFromTheOriginIsOutside) {
  // u = 1, v = (0, 1, 2): the line u = 1 misses the origin, so the exact
  // s0 = D(O,p1,p2) = 1*2 - 1*1 = 1 while s: D = 0, x2 - x1 = 0, y1 - y2 = -1: -1.
  EXPECT_EQ(signature(0, {0, 2, 3}, {1, 1, 1}, {0, 1, 2}), kNone);
}

TEST(TopologyHandBuilt, AllThreeVectorsZeroIsOutside) {
  // Every D and difference is 0, so each sign is +1 negated for odd sorts.
  // s = +1 (sorted), s0 = +1 (O first), s1 = orient(p0,O,p2): odd: -1 != s. Outside.
  EXPECT_EQ(signature(0, {0, 2, 3}, {0, 0, 0}, {0, 0, 0}), kNone);
  EXPECT_EQ(signature(1, {0, 1, 3}, {0, 0, 0}, {0, 0, 0}), kNone);
  EXPECT_EQ(signature(1, {0, 1, 3}, {-0.0f, 0, -0.0f}, {0, -0.0f, 0}), kNone);
}

TEST(TopologyHandBuilt, RepeatedVectorsAreOutside) {
  // p0 = p1 = (1, -1), p2 = (-1, 1); the origin is on the segment. s: D = 0,
  // x2 - x1 = -2: -1. s0: (O,p1,p2) D = 1*1 - (-1)(-1) = 0, x2 - x1 = -2: -1.
  // s1: (O,p0,p2) odd: D = 0, x2 - x1 = -2: -1 -> +1 != s: outside.
  EXPECT_EQ(signature(0, {0, 2, 3}, {1, 1, -1}, {-1, -1, 1}), kNone);
}

TEST(TopologyHandBuilt, EdgeThroughTheOriginGoesToExactlyOneSide) {
  // Edge p0 = (-1,-1)#0, p1 = (1,1)#1 passes through the origin. Two triangles share it,
  // with third vertices on opposite sides.
  // A: p2 = (1,-1)#3: s = 2*0 - 2*2 = -4: -1; s0 = 1*(-1) - 1*1 = -2: -1;
  //    s1 = D(p0,O,p2) = 1*0 - 2*1 = -2: -1; s2 = D(p0,p1,O) = 0: sorted (O,p0,p1) is a
  //    rotation (even); D = 0, x2 - x1 = 1 - (-1) = 2: +1 != s: outside.
  EXPECT_EQ(signature(1, {0, 1, 3}, {-1, 1, 1}, {-1, 1, -1}), kNone);
  // B: p2 = (-1,1)#5: s = 2*2 - 0*2 = 4: +1; s0 = 1*1 - (-1)*1 = 2; s1 = 1*2 - 0*1 = 2;
  //    s2 = +1 as in A: inside. As T0: d/dx = f2 - f1 = (-2, 0), d/dy = f1 - f0 = (2, 2):
  //    det = -4: saddle. As T1: d/dx = (2, 2), d/dy = (-2, 0): det = 4, tr 2,
  //    disc 4 - 16 < 0: repelling focus.
  EXPECT_EQ(signature(0, {0, 1, 5}, {-1, 1, -1}, {-1, 1, 1}), kSaddle);
  EXPECT_EQ(signature(1, {0, 1, 5}, {-1, 1, -1}, {-1, 1, 1}), kRepellingFocus);
}

TEST(TopologyHandBuilt, ZeroVectorAtAVertex) {
  // Field diag(1, -1) * (x - 1, y - 1) on a 3x3 grid: zero exactly at the centre vertex
  // #4. Cell (0, 1) T0 = {(0,1), (1,1), (1,2)} = {#1, #4, #5} with values
  // p0 = (0, 1), p1 = (0, 0), p2 = (1, 0).
  // s = D = 0*(-1) - 1*(-1) = 1: +1. s0: (O,p1,p2) sorted, D = 0*0 - 1*0 = 0,
  // x2 - x1 = 1 - 0: +1. s1: (O,p0,p2) odd, D = 0*0 - 1*1 = -1 -> +1.
  // s2: (O,p0,p1) even, D = 0, x2 - x1 = 0 - 0 = 0, y1 - y2 = 1 - 0: +1. Inside, and
  // T0: d/dx = f2 - f1 = (1, 0), d/dy = f1 - f0 = (0, -1): det = -1: saddle.
  EXPECT_EQ(signature(0, {1, 4, 5}, {0, 0, 1}, {1, 0, 0}), kSaddle);
  EXPECT_EQ(signature(0, {1, 4, 5}, {-0.0f, 0, 1}, {1, -0.0f, -0.0f}), kSaddle);
  // The zero as the lowest-index corner #0 of a 2x2 grid, same field shifted:
  // T0 {#0, #2, #3}: p0 = (0,0), p1 = (0,-1), p2 = (1,-1). s = 0*(-1) - 1*(-1) = 1;
  // s0 = 0*(-1) - 1*(-1) = 1; s1: (O,p0,p2) odd, D = 0, x2 - x1 = 1 - 0: +1 -> -1 != s.
  EXPECT_EQ(signature(0, {0, 2, 3}, {0, 0, 1}, {0, -1, -1}), kNone);
  // T1 {#0, #1, #3}: p0 = (0,0), p1 = (1,0), p2 = (1,-1). s = 1*(-1) - 1*0 = -1;
  // s0 = 1*(-1) - 1*0 = -1; s1: (O,p0,p2) odd, D = 0, x2 - x1 = 1: +1 -> -1;
  // s2: (O,p0,p1) even, D = 0, x2 - x1 = 1 - 0: +1 != s: outside.
  EXPECT_EQ(signature(1, {0, 1, 3}, {0, 1, 1}, {0, 0, -1}), kNone);
}

// ---------------------------------------------------------------------------------------
// Consequences of the contract that hold for every triangle.
//
// (a) The image triangle's determinant is tied to the Jacobian: with the contract's
//     differences, D(f0,f1,f2) = det[f1 - f0, f2 - f0] = det[f1 - f0, f2 - f1], which is
//     det[d/dy, d/dx] = -det J for T0 and det[d/dx, d/dy] = det J for T1.
// (b) If D = 0 the origin is never inside. SoS is a real perturbation by powers of eps
//     decreasing with the index, the origin (-1) moving most: by (eps^2, eps) in (x, y).
//     The three collinear vectors move by O(eps^4) at most, so the perturbed triangle
//     stays within O(eps^4) of its line, while the origin leaves that line by ~eps (or
//     ~eps^2 if the line is vertical). Hence no triangle ever reports type "degenerate".

TEST(TopologyContract, ImageDeterminantIsPlusOrMinusDetJ) {
  std::mt19937_64 rng(11);
  auto small = [&] { return float(int(rng() % 9) - 4); };
  int64_t checked = 0;
  for (int n = 0; n < 20000; ++n) {
    float u[3], v[3];
    for (int k = 0; k < 3; ++k) {
      u[k] = small();
      v[k] = small();
    }
    const int plain = r::ref_orient_plain({u[0], v[0], 0}, {u[1], v[1], 1}, {u[2], v[2], 2});
    for (int t = 0; t < 2; ++t) {
      const int det = r::ref_jacobian_signs(t, u, v).det;
      EXPECT_EQ(plain, t == 0 ? -det : det);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 40000);
}

TEST(TopologyContract, NoTriangleEverHoldsADegenerateCriticalPoint) {
  // Exhaustive over values in {-1, 0, 1}, both kinds and all index orders.
  int64_t degenerate_type = 0;
  const int64_t orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int code = 0; code < 729; ++code) {
    float u[3], v[3];
    int c = code;
    for (int k = 0; k < 3; ++k) {
      u[k] = float(c % 3 - 1);
      c /= 3;
      v[k] = float(c % 3 - 1);
      c /= 3;
    }
    for (int t = 0; t < 2; ++t) {
      if (d::triangle_type(t, u, v) == CpType::degenerate) ++degenerate_type;
      for (const auto& ord : orders) {
        const int64_t idx[3] = {ord[0] * 5 + 2, ord[1] * 5 + 2, ord[2] * 5 + 2};
        EXPECT_NE(d::triangle_signature(t, idx, u, v), kDegenerate) << "code " << code;
        const bool inside = d::contains_origin({u[0], v[0], idx[0]}, {u[1], v[1], idx[1]},
                                               {u[2], v[2], idx[2]});
        if (inside) {
          EXPECT_NE(d::orient_exact(u[0], v[0], u[1], v[1], u[2], v[2]), 0) << "code " << code;
        }
      }
    }
  }
  EXPECT_GT(degenerate_type, 100);  // plenty of degenerate Jacobians were offered
}

// ---------------------------------------------------------------------------------------
// Whole fields

struct Field {
  int64_t nx = 0, ny = 0;
  std::vector<float> u, v;
  float& uu(int64_t row, int64_t col) { return u[size_t(row * nx + col)]; }
  float& vv(int64_t row, int64_t col) { return v[size_t(row * nx + col)]; }
  factz::VectorField2D api() const { return {nx, ny, u, v}; }
};

std::vector<uint8_t> kernel_signatures(const Field& f) {
  const d::Grid2D g{f.nx, f.ny};
  std::vector<uint8_t> out(size_t(g.triangle_count()));
  for (int64_t tri = 0; tri < g.triangle_count(); ++tri) {
    out[size_t(tri)] = d::signature_at(g, tri, f.u.data(), f.v.data());
  }
  return out;
}

int64_t count_nonzero(const std::vector<uint8_t>& sig) {
  return std::count_if(sig.begin(), sig.end(), [](uint8_t s) { return s != 0; });
}

// f(x, y) = scale * 4 * J * ((x, y) - Z), x = column, y = row; Z in quarters.
Field linear_field(int64_t nx, int64_t ny, const int J[4], double zx, double zy, float scale) {
  Field f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
  for (int64_t row = 0; row < ny; ++row) {
    for (int64_t col = 0; col < nx; ++col) {
      const double dx = 4 * (double(col) - zx), dy = 4 * (double(row) - zy);  // integers
      f.uu(row, col) = float(J[0] * dx + J[1] * dy) * scale;  // exact: small integers
      f.vv(row, col) = float(J[2] * dx + J[3] * dy) * scale;  // times a power of two
    }
  }
  return f;
}

// Does the closed domain triangle `tri` contain the point (x, y)?
bool domain_contains(int64_t nx, int64_t tri, double x, double y) {
  const int64_t cell = tri / 2, i = cell / (nx - 1), j = cell % (nx - 1);
  const double a = x - double(j), b = y - double(i);  // local coordinates in the cell
  if (a < 0 || b < 0 || a > 1 || b > 1) return false;
  // T0 = (0,0), (0,1), (1,1): a <= b; T1 = (0,0), (1,0), (1,1): b <= a.
  return (tri % 2 == 0) ? a <= b : b <= a;
}

struct LinearCase {
  const char* name;
  int J[4];
  CpType type;
};

// Each J's type by hand: det = ad - bc, tr = a + d, disc = tr^2 - 4 det.
const LinearCase kLinearCases[] = {
    {"saddle diag(1,-1)", {1, 0, 0, -1}, CpType::saddle},                 // det -1
    {"saddle [[2,1],[3,-1]]", {2, 1, 3, -1}, CpType::saddle},             // det -5
    {"saddle [[0,1],[1,0]]", {0, 1, 1, 0}, CpType::saddle},               // det -1
    {"attracting node diag(-1,-2)", {-1, 0, 0, -2}, CpType::attracting_node},  // disc 1
    {"attracting node [[-2,1],[0,-1]]", {-2, 1, 0, -1}, CpType::attracting_node},
    {"attracting node -I", {-1, 0, 0, -1}, CpType::attracting_node},      // disc 0
    {"repelling node diag(1,2)", {1, 0, 0, 2}, CpType::repelling_node},
    {"repelling node [[1,1],[0,1]]", {1, 1, 0, 1}, CpType::repelling_node},  // disc 0
    {"repelling node [[3,1],[1,2]]", {3, 1, 1, 2}, CpType::repelling_node},  // disc 5
    {"attracting focus [[-1,-2],[2,-1]]", {-1, -2, 2, -1}, CpType::attracting_focus},
    {"attracting focus [[-1,3],[-1,-2]]", {-1, 3, -1, -2}, CpType::attracting_focus},
    {"repelling focus [[1,2],[-2,1]]", {1, 2, -2, 1}, CpType::repelling_focus},
    {"repelling focus [[1,-3],[1,1]]", {1, -3, 1, 1}, CpType::repelling_focus},
    {"center [[0,1],[-1,0]]", {0, 1, -1, 0}, CpType::center},
    {"center [[1,2],[-1,-1]]", {1, 2, -1, -1}, CpType::center},
    {"center [[2,-5],[1,-2]]", {2, -5, 1, -2}, CpType::center},
};

struct ZeroPlace {
  const char* name;
  double x, y;
  bool interior;  // strictly inside the domain [0, nx-1] x [0, ny-1]
};

// On a 7 x 6 grid (x in [0, 6], y in [0, 5]).
const ZeroPlace kZeroPlaces[] = {
    {"generic point in a T0", 2.25, 3.5, true},
    {"generic point in a T1", 3.75, 1.25, true},
    {"interior vertex", 3, 2, true},
    {"horizontal edge", 2.5, 3, true},
    {"vertical edge", 4, 1.75, true},
    {"cell diagonal", 1.5, 2.5, true},
    {"interior vertex next to the corner", 5, 4, true},
    {"boundary corner (0,0)", 0, 0, false},
    {"boundary corner (6,5)", 6, 5, false},
    {"boundary edge", 0, 2.5, false},
    {"boundary edge top", 3.5, 5, false},
    {"outside the domain", 7.5, -1.25, false},
};

TEST(SosConsistency, ALinearFieldsZeroLiesInExactlyOneTriangle) {
  const int64_t nx = 7, ny = 6;
  int64_t fields = 0;
  for (const LinearCase& lc : kLinearCases) {
    for (const ZeroPlace& z : kZeroPlaces) {
      // The semantics are those of the stored floats, not of any scale: scaling by a
      // power of two (into the subnormals, or up to 2^100) changes no signature.
      std::vector<uint8_t> first;
      for (float scale : {1.0f, 0x1p-140f, 0x1p100f}) {
        const Field f = linear_field(nx, ny, lc.J, z.x, z.y, scale);
        const std::vector<uint8_t> sig = kernel_signatures(f);
        ++fields;
        const std::string what = std::string(lc.name) + ", zero at " + z.name;
        ASSERT_EQ(sig, r::ref_signatures(nx, ny, f.u.data(), f.v.data())) << what;
        if (first.empty()) first = sig;
        EXPECT_EQ(sig, first) << what << ": scale " << scale << " changed a signature";
        const int64_t n = count_nonzero(sig);
        if (z.interior) {
          EXPECT_EQ(n, 1) << what;
        } else {
          EXPECT_LE(n, 1) << what;
        }
        for (size_t tri = 0; tri < sig.size(); ++tri) {
          if (sig[tri] == 0) continue;
          EXPECT_EQ(sig[tri], 1 + int(lc.type)) << what;
          EXPECT_TRUE(domain_contains(nx, int64_t(tri), z.x, z.y))
              << what << ": reported in triangle " << tri << " which does not hold the zero";
        }
      }
    }
  }
  EXPECT_EQ(fields, int64_t(std::size(kLinearCases) * std::size(kZeroPlaces) * 3));
}

TEST(SosConsistency, GenericZeroIsReportedInItsOwnTriangle) {
  // Spelled out: Z = (2.25, 3.5) lies in cell (row 3, column 2), local (0.25, 0.5), so
  // in T0 (a <= b): triangle 2 * (3 * 6 + 2) + 0 = 40. Z = (3.75, 1.25): cell (1, 3),
  // local (0.75, 0.25), T1: 2 * (1 * 6 + 3) + 1 = 19.
  for (const LinearCase& lc : kLinearCases) {
    const auto a = kernel_signatures(linear_field(7, 6, lc.J, 2.25, 3.5, 1.0f));
    EXPECT_EQ(a[40], 1 + int(lc.type)) << lc.name;
    const auto b = kernel_signatures(linear_field(7, 6, lc.J, 3.75, 1.25, 1.0f));
    EXPECT_EQ(b[19], 1 + int(lc.type)) << lc.name;
  }
}

TEST(SosConsistency, RandomLinearFieldsHaveOneZeroOfTheRightType) {
  // Random integer J with det != 0 and a random zero on the quarter lattice strictly
  // inside a random grid: vertices, edges and diagonals are hit often (4 * 4 lattice
  // points per cell, 7 of them on an edge or vertex).
  std::mt19937_64 rng(314);
  int64_t on_a_vertex_or_edge = 0;
  for (int rep = 0; rep < 3000; ++rep) {
    int J[4];
    do {
      for (int& x : J) x = int(rng() % 7) - 3;
    } while (J[0] * J[3] - J[1] * J[2] == 0);
    // The type from det, tr and disc in plain integers (a third implementation).
    const int det = J[0] * J[3] - J[1] * J[2], tr = J[0] + J[3], disc = tr * tr - 4 * det;
    const CpType type = det < 0    ? CpType::saddle
                        : tr == 0  ? CpType::center
                        : tr < 0   ? (disc < 0 ? CpType::attracting_focus : CpType::attracting_node)
                                   : (disc < 0 ? CpType::repelling_focus : CpType::repelling_node);
    const int64_t nx = 3 + int64_t(rng() % 8), ny = 3 + int64_t(rng() % 8);
    const double zx = double(1 + rng() % uint64_t(4 * (nx - 1) - 1)) / 4;  // in (0, nx-1)
    const double zy = double(1 + rng() % uint64_t(4 * (ny - 1) - 1)) / 4;
    if (zx == std::floor(zx) || zy == std::floor(zy) ||
        zx - std::floor(zx) == zy - std::floor(zy)) {
      ++on_a_vertex_or_edge;
    }
    const Field f = linear_field(nx, ny, J, zx, zy, 1.0f);
    const std::vector<uint8_t> sig = kernel_signatures(f);
    ASSERT_EQ(count_nonzero(sig), 1) << "J " << J[0] << " " << J[1] << " " << J[2] << " "
                                     << J[3] << " zero " << zx << "," << zy;
    const size_t tri = size_t(std::find_if(sig.begin(), sig.end(), [](uint8_t x) { return x; }) -
                              sig.begin());
    EXPECT_EQ(sig[tri], 1 + int(type));
    EXPECT_TRUE(domain_contains(nx, int64_t(tri), zx, zy));
  }
  EXPECT_GT(on_a_vertex_or_edge, 800);
}

TEST(SosConsistency, DegenerateLinearFieldsHaveNoCriticalPoint) {
  // Rank-1 and zero Jacobians: every image triangle is collinear (D = 0), so by (b)
  // above nothing is inside -- even though the field vanishes on a whole line, or
  // everywhere.
  const int rank1[4] = {1, 0, 0, 0}, rank1b[4] = {1, 2, 2, 4}, zero[4] = {0, 0, 0, 0};
  for (const int* J : {rank1, rank1b, zero}) {
    for (const ZeroPlace& z : kZeroPlaces) {
      const Field f = linear_field(7, 6, J, z.x, z.y, 1.0f);
      EXPECT_EQ(count_nonzero(kernel_signatures(f)), 0) << z.name;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Degree identity. SoS is a consistent perturbation, so the perturbed piecewise-linear
// map is generic and, for any region R made of triangles,
//     sum over triangles T in R of  sigma_T * [origin inside T] * s_T  =  W(boundary of R),
// where s_T = orient(p0, p1, p2) in contract order, sigma_T = -1 for T0 (its contract
// order is clockwise in the (column, row) plane) and +1 for T1, and W is the winding
// number of the image of R's counter-clockwise boundary around the origin. W is counted
// with the same predicates: a far point Q (own index) and the segment O-Q; boundary edge
// a -> b crosses it iff orient(O,Q,a) != orient(O,Q,b) and orient(a,b,O) != orient(a,b,Q),
// and then counts (orient(O,Q,b) - orient(O,Q,a)) / 2.

struct DegreeChecker {
  const Field& f;
  SosPoint q;  // far outside every image point
  SosPoint o{0.0f, 0.0f, -1};

  explicit DegreeChecker(const Field& field)
      : f(field), q{1000.5f, 777.25f, field.nx * field.ny + 1000} {}

  SosPoint point(int64_t row, int64_t col) const {
    const int64_t k = row * f.nx + col;
    return {f.u[size_t(k)], f.v[size_t(k)], k};
  }

  int crossing(SosPoint a, SosPoint b) const {
    const int sa = d::orient_sos(o, q, a), sb = d::orient_sos(o, q, b);
    if (sa == sb) return 0;
    if (d::orient_sos(a, b, o) == d::orient_sos(a, b, q)) return 0;
    return (sb - sa) / 2;
  }

  // Signed count over the triangles of the block of cells rows [i0, i1), cols [j0, j1).
  int signed_count(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
    const d::Grid2D g{f.nx, f.ny};
    int total = 0;
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = j0; j < j1; ++j) {
        for (int t = 0; t < 2; ++t) {
          const int64_t tri = 2 * (i * (f.nx - 1) + j) + t;
          if (d::signature_at(g, tri, f.u.data(), f.v.data()) == 0) continue;
          int64_t idx[3];
          d::triangle_vertices(g, tri, idx);
          SosPoint p[3];
          for (int k = 0; k < 3; ++k) p[k] = point(idx[k] / f.nx, idx[k] % f.nx);
          total += (t == 0 ? -1 : 1) * d::orient_sos(p[0], p[1], p[2]);
        }
      }
    }
    return total;
  }

  // Winding number of the image of the counter-clockwise boundary of that block.
  int winding(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
    std::vector<SosPoint> ring;  // (column, row) plane, counter-clockwise
    for (int64_t j = j0; j < j1; ++j) ring.push_back(point(i0, j));
    for (int64_t i = i0; i < i1; ++i) ring.push_back(point(i, j1));
    for (int64_t j = j1; j > j0; --j) ring.push_back(point(i1, j));
    for (int64_t i = i1; i > i0; --i) ring.push_back(point(i, j0));
    int w = 0;
    for (size_t k = 0; k < ring.size(); ++k) w += crossing(ring[k], ring[(k + 1) % ring.size()]);
    return w;
  }

  // The star of interior vertex (i, j): its six triangles, and its link.
  int star_signed_count(int64_t i, int64_t j) const {
    const d::Grid2D g{f.nx, f.ny};
    int64_t tris[6];
    const int n = d::incident_triangles(g, i, j, tris);
    int total = 0;
    for (int k = 0; k < n; ++k) {
      const int64_t tri = tris[k];
      if (d::signature_at(g, tri, f.u.data(), f.v.data()) == 0) continue;
      int64_t idx[3];
      d::triangle_vertices(g, tri, idx);
      SosPoint p[3];
      for (int m = 0; m < 3; ++m) p[m] = point(idx[m] / f.nx, idx[m] % f.nx);
      total += (tri % 2 == 0 ? -1 : 1) * d::orient_sos(p[0], p[1], p[2]);
    }
    return total;
  }

  int link_winding(int64_t i, int64_t j) const {
    // Neighbours in counter-clockwise order in the (column, row) plane:
    // (+1,0), (+1,+1), (0,+1), (-1,0), (-1,-1), (0,-1) as (dcol, drow).
    const SosPoint ring[6] = {point(i, j + 1), point(i + 1, j + 1), point(i + 1, j),
                              point(i, j - 1), point(i - 1, j - 1), point(i - 1, j)};
    int w = 0;
    for (int k = 0; k < 6; ++k) w += crossing(ring[k], ring[(k + 1) % 6]);
    return w;
  }
};

Field random_small_int_field(std::mt19937_64& rng, int64_t nx, int64_t ny, int zero_in) {
  Field f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
  for (size_t k = 0; k < f.u.size(); ++k) {
    if (rng() % uint64_t(zero_in) == 0) continue;  // a zero vector
    f.u[k] = float(int(rng() % 7) - 3);
    f.v[k] = float(int(rng() % 7) - 3);
  }
  return f;
}

TEST(SosConsistency, SignedCountEqualsBoundaryWindingOnSmallIntegerFields) {
  std::mt19937_64 rng(2024);
  int64_t stars = 0, zero_stars = 0, stars_with_cp = 0, blocks = 0;
  for (int rep = 0; rep < 400; ++rep) {
    const int64_t nx = 2 + int64_t(rng() % 14), ny = 2 + int64_t(rng() % 14);
    const Field f = random_small_int_field(rng, nx, ny, rep % 3 == 0 ? 3 : 8);
    const DegreeChecker dc(f);
    EXPECT_EQ(dc.signed_count(0, ny - 1, 0, nx - 1), dc.winding(0, ny - 1, 0, nx - 1))
        << nx << "x" << ny << " rep " << rep;
    for (int k = 0; k < 20; ++k) {  // random sub-blocks of cells
      const int64_t i0 = int64_t(rng() % uint64_t(ny - 1)), j0 = int64_t(rng() % uint64_t(nx - 1));
      const int64_t i1 = i0 + 1 + int64_t(rng() % uint64_t(ny - 1 - i0));
      const int64_t j1 = j0 + 1 + int64_t(rng() % uint64_t(nx - 1 - j0));
      EXPECT_EQ(dc.signed_count(i0, i1, j0, j1), dc.winding(i0, i1, j0, j1));
      ++blocks;
    }
    for (int64_t i = 1; i + 1 < ny; ++i) {
      for (int64_t j = 1; j + 1 < nx; ++j) {
        const int c = dc.star_signed_count(i, j);
        EXPECT_EQ(c, dc.link_winding(i, j)) << "star of " << i << "," << j;
        ++stars;
        if (f.u[size_t(i * nx + j)] == 0 && f.v[size_t(i * nx + j)] == 0) ++zero_stars;
        if (c != 0) ++stars_with_cp;
      }
    }
  }
  EXPECT_GT(zero_stars, 2000);  // the identity was exercised around zero vectors
  EXPECT_GT(stars_with_cp, 2000);
  EXPECT_GT(blocks, 7000);
  std::printf("  %lld stars (%lld at zero vectors), %lld blocks\n", (long long)stars,
              (long long)zero_stars, (long long)blocks);
}

TEST(SosConsistency, ScalingByPowersOfTwoKeepsSignatures) {
  std::mt19937_64 rng(77);
  for (int rep = 0; rep < 300; ++rep) {
    const int64_t nx = 2 + int64_t(rng() % 12), ny = 2 + int64_t(rng() % 12);
    const Field f = random_small_int_field(rng, nx, ny, 4);
    const std::vector<uint8_t> base = kernel_signatures(f);
    // A common power of two multiplies D by 4^k and every difference by 2^k: all
    // signs, so all signatures, are unchanged (3 * 2^-147 is still exact).
    const int ek = int(rng() % 272) - 147;
    Field g = f;
    for (float& x : g.u) x = std::ldexp(x, ek);
    for (float& x : g.v) x = std::ldexp(x, ek);
    EXPECT_EQ(kernel_signatures(g), base) << "scale 2^" << ek;
    // Separate powers for u and v multiply D by 2^(a+b), x-differences by 2^a and
    // y-differences by 2^b: the inside test is unchanged (the type may change).
    const int ea = int(rng() % 200) - 100, eb = int(rng() % 200) - 100;
    Field h = f;
    for (float& x : h.u) x = std::ldexp(x, ea);
    for (float& x : h.v) x = std::ldexp(x, eb);
    const std::vector<uint8_t> sh = kernel_signatures(h);
    for (size_t k = 0; k < base.size(); ++k) {
      EXPECT_EQ(sh[k] != 0, base[k] != 0) << "triangle " << k << " scales 2^" << ea << ", 2^" << eb;
    }
  }
}

// ---------------------------------------------------------------------------------------
// The public API against the reference extractor.

void expect_api_matches_reference(const Field& f, const std::string& what, bool check_mu) {
  const auto ref = r::ref_critical_points(f.nx, f.ny, f.u.data(), f.v.data());
  const auto got = factz::critical_points(f.api(), factz::Exec{1});
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().to_string();
  ASSERT_EQ(got->size(), ref.size()) << what;
  std::array<int64_t, factz::kCpTypeCount> counts{};
  for (size_t k = 0; k < ref.size(); ++k) {
    const factz::CriticalPoint& cp = got.value()[k];
    ASSERT_EQ(cp.triangle, ref[k].triangle) << what;
    ASSERT_EQ(cp.type, ref[k].type) << what << " triangle " << cp.triangle;
    EXPECT_EQ(cp.row, (cp.triangle / 2) / (f.nx - 1)) << what;
    EXPECT_EQ(cp.column, (cp.triangle / 2) % (f.nx - 1)) << what;
    if (check_mu) {
      // The zero lies in the closed unperturbed triangle (SoS only moves it by eps), so
      // its barycentric coordinates are in [0, 1]; small integers make them near exact.
      EXPECT_NEAR(cp.mu[0] + cp.mu[1] + cp.mu[2], 1.0, 1e-12) << what;
      for (double m : cp.mu) {
        EXPECT_GE(m, -1e-12) << what;
        EXPECT_LE(m, 1 + 1e-12) << what;
      }
    }
    ++counts[size_t(cp.type)];
  }
  EXPECT_EQ(counts, r::ref_type_counts(ref)) << what;
  EXPECT_EQ(counts[size_t(CpType::degenerate)], 0) << what;
  const auto sig = factz::signatures(f.api(), factz::Exec{1});
  ASSERT_TRUE(sig.ok()) << what;
  EXPECT_EQ(sig.value(), r::ref_signatures(f.nx, f.ny, f.u.data(), f.v.data())) << what;
}

TEST(TopologyApi, CriticalPointsMatchTheReferenceOnSmallFields) {
  std::mt19937_64 rng(99);
  const std::pair<int64_t, int64_t> dims[] = {{1, 1}, {1, 7}, {7, 1}, {2, 2}, {2, 3},
                                              {3, 2}, {33, 17}, {17, 33}, {5, 5}, {64, 3}};
  for (const auto& [nx, ny] : dims) {
    for (int rep = 0; rep < 6; ++rep) {
      Field f = random_small_int_field(rng, nx, ny, rep % 2 == 0 ? 3 : 10);
      if (rep == 5) {  // wild magnitudes: subnormals, huge values, repeats
        for (size_t k = 0; k < f.u.size(); ++k) {
          f.u[k] = std::ldexp(f.u[k] + float(int(rng() % 1000)) / 512.0f, int(rng() % 250) - 149);
          f.v[k] = std::ldexp(f.v[k], int(rng() % 250) - 149);
        }
      }
      expect_api_matches_reference(
          f, std::to_string(nx) + "x" + std::to_string(ny) + " rep " + std::to_string(rep),
          rep != 5);
    }
  }
  const Field zero{4, 3, std::vector<float>(12), std::vector<float>(12)};
  const auto none = factz::critical_points(zero.api());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "an all-zero field has no critical point (D = 0 everywhere)";
}

TEST(TopologyApi, ThreadCountDoesNotChangeTheOutput) {
  std::mt19937_64 rng(5);
  const Field f = random_small_int_field(rng, 101, 77, 5);
  const auto one = factz::critical_points(f.api(), factz::Exec{1});
  ASSERT_TRUE(one.ok());
  for (int threads : {2, 3, 0}) {
    const auto other = factz::critical_points(f.api(), factz::Exec{threads});
    ASSERT_TRUE(other.ok());
    ASSERT_EQ(other->size(), one->size()) << threads << " threads";
    for (size_t k = 0; k < one->size(); ++k) {
      EXPECT_EQ(other.value()[k].triangle, one.value()[k].triangle);
      EXPECT_EQ(other.value()[k].type, one.value()[k].type);
      EXPECT_EQ(other.value()[k].mu, one.value()[k].mu);
    }
    EXPECT_EQ(factz::signatures(f.api(), factz::Exec{threads}).value(),
              factz::signatures(f.api(), factz::Exec{1}).value());
  }
}

TEST(TopologyApi, InvalidFieldsAreRejected) {
  Field f{3, 2, std::vector<float>(6), std::vector<float>(6)};
  f.u[4] = std::nanf("");  // NaN marks the vertex missing (issue 17): not an error
  EXPECT_TRUE(factz::critical_points(f.api()).ok());
  f.u[4] = 0;
  f.v[1] = INFINITY;
  EXPECT_FALSE(factz::signatures(f.api()).ok());
  f.v.pop_back();
  EXPECT_FALSE(factz::validate_field(f.api()).ok());
}

// ---------------------------------------------------------------------------------------
// Real data (tests/data, and ../shared/data when present): every vector field
// NAME_u_NXxNY.f32 / NAME_v_NXxNY.f32.

TEST(ReferenceRealData, CriticalPointsMatchTheReferenceOnRealVectorFields) {
  const auto fields = factz::testing::real_vector_fields();
  if (fields.empty()) GTEST_SKIP() << "no real vector fields in tests/data or ../shared/data";
  for (const auto& nf : fields) {
    const int64_t nx = nf.field.nx, ny = nf.field.ny;
    const auto ref = r::ref_critical_points(nx, ny, nf.field.u.data(), nf.field.v.data());
    const auto got = factz::critical_points(nf.field);
    ASSERT_TRUE(got.ok()) << nf.name;
    ASSERT_EQ(got->size(), ref.size()) << nf.name;
    bool same = true;
    for (size_t k = 0; k < ref.size(); ++k) {
      const factz::CriticalPoint& cp = got.value()[k];
      same = same && cp.triangle == ref[k].triangle && cp.type == ref[k].type;
    }
    EXPECT_TRUE(same) << nf.name;
    const auto c = r::ref_type_counts(ref);
    std::printf("  %s %lldx%lld: %zu critical points (saddle %lld, anode %lld, rnode %lld, "
                "afocus %lld, rfocus %lld, center %lld, degenerate %lld)\n",
                nf.name.c_str(), (long long)nx, (long long)ny, ref.size(), (long long)c[0],
                (long long)c[1], (long long)c[2], (long long)c[3], (long long)c[4],
                (long long)c[5], (long long)c[6]);
  }
}

}  // namespace
