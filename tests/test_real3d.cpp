// Real 3D data (issue 22): a 24^3 crop of the 3D lid-driven cavity computed with OpenFOAM's
// icoFoam (tests/data/README.md; scripts/real_vector3d_fields.sh makes the whole 48^3 field)
// round-trips in the speculative and block modes with every critical point of the
// Freudenthal mesh kept (compare() with the exact extractor: the same tetrahedra, the same
// types, none new) and the pointwise bound held, at REL 1e-1 to 1e-4; mode none holds the
// bound. The speculative stream at REL 1e-2 is also checked against the independent
// big-integer reference (tests/support/exact_reference3d.hpp) around the critical point.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "kernels/tet.hpp"
#include "support/exact_reference3d.hpp"
#include "support/fields3d.hpp"

namespace factz {
namespace {

constexpr int64_t kCrop = 24;

/// The bundled crop (u, v, w of tests/data/cavity3d_crop_*_24x24x24.f32); empty when a file
/// is missing or short.
VectorField3D cavity_crop() {
  VectorField3D f;
  f.nx = f.ny = f.nz = kCrop;
  const size_t n = size_t(kCrop * kCrop * kCrop);
  for (auto [c, values] : {std::pair{'u', &f.u}, std::pair{'v', &f.v}, std::pair{'w', &f.w}}) {
    const std::string path = std::string(FACTZ_TEST_DATA_DIR) + "/cavity3d_crop_" + c + "_24x24x24.f32";
    std::ifstream in(path, std::ios::binary);
    values->resize(n);
    in.read(reinterpret_cast<char*>(values->data()), std::streamsize(n * sizeof(float)));
    if (!in || in.gcount() != std::streamsize(n * sizeof(float))) return {};
  }
  return f;
}

Options rel(Mode mode, double r) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = r;
  return o;
}

TEST(Real3D, TheCavityCropHasCriticalPoints) {
  const VectorField3D f = cavity_crop();
  ASSERT_EQ(f.size(), kCrop * kCrop * kCrop) << "tests/data/cavity3d_crop_{u,v,w}_24x24x24.f32";
  auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok()) << cps.status().to_string();
  EXPECT_GT(cps->size(), 0u) << "the crop was chosen to hold critical points";
}

TEST(Real3D, SpeculativeAndBlockKeepEveryCriticalPointOfTheCavityAtEveryRelBound) {
  const VectorField3D f = cavity_crop();
  ASSERT_EQ(f.size(), kCrop * kCrop * kCrop);
  for (Mode m : {Mode::speculative, Mode::block})
    for (double r : {1e-1, 1e-2, 1e-3, 1e-4}) {
      int64_t cps = 0;
      const std::string what = std::string(m == Mode::speculative ? "speculative" : "block") + " REL " +
                               std::to_string(r);
      EXPECT_FALSE(testing::round_trip3d(f, rel(m, r), true, what, &cps).empty()) << what;
      EXPECT_GT(cps, 0) << what;
    }
}

TEST(Real3D, ModeNoneHoldsTheBoundOnTheCavity) {
  const VectorField3D f = cavity_crop();
  ASSERT_EQ(f.size(), kCrop * kCrop * kCrop);
  for (double r : {1e-1, 1e-2, 1e-3, 1e-4})
    EXPECT_FALSE(testing::round_trip3d(f, rel(Mode::none, r), false, "none REL " + std::to_string(r)).empty());
}

TEST(Real3D, TheIndependentReferenceAgreesOnTheCavityRoundTrip) {
  // Each tetrahedron's signature by the big-integer oracle, on the original and on the
  // speculative reconstruction at REL 1e-2: equal (G1 without the extractor). The oracle
  // is slow (about 170 us a tetrahedron), so only the 12^3 cubes around the crop's critical
  // point (cube 16, 13, 11) are checked: 10368 tetrahedra, a few seconds.
  const VectorField3D f = cavity_crop();
  ASSERT_EQ(f.size(), kCrop * kCrop * kCrop);
  auto s = compress(f, rel(Mode::speculative, 1e-2));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto d = decompress3d(s.value());
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  int64_t with_cp = 0, differ = 0;
  for (int64_t t = 0; t < detail::tet_count(f.nx, f.ny, f.nz); ++t) {
    const int64_t cube = t / 6, x = cube % (f.nx - 1), y = cube / (f.nx - 1) % (f.ny - 1),
                  z = cube / ((f.nx - 1) * (f.ny - 1));
    if (x < 10 || x >= 22 || y < 7 || y >= 19 || z < 5 || z >= 17) continue;
    int64_t idx[4];
    int axes[3];
    detail::tet_vertices(f.nx, f.ny, t, idx, axes);
    float u[4], v[4], w[4], du[4], dv[4], dw[4];
    for (int k = 0; k < 4; ++k) {
      const size_t i = size_t(idx[k]);
      u[k] = f.u[i], v[k] = f.v[i], w[k] = f.w[i];
      du[k] = d->u[i], dv[k] = d->v[i], dw[k] = d->w[i];
    }
    const uint8_t a = testref::ref_tet_signature(idx, axes, u, v, w);
    with_cp += a != 0;
    differ += a != testref::ref_tet_signature(idx, axes, du, dv, dw);
  }
  EXPECT_GT(with_cp, 0);
  EXPECT_EQ(differ, 0);
}

}  // namespace
}  // namespace factz
