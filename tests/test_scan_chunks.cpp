// The input scans (topology/missing.cpp: validate_field, missing_mask, mark_missing,
// suspected_fill_value) skip 4096-value chunks where a branch-free pass finds nothing. A
// single NaN, infinity or fill value must still be found wherever it sits: first and last
// vertex, both sides of a chunk boundary, in the last partial chunk, in any component, in 2D
// and 3D fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "factz/topology3d.hpp"

namespace factz {
namespace {

VectorField2D smooth_field(int64_t nx, int64_t ny) {
  VectorField2D f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
  for (int64_t k = 0; k < nx * ny; ++k) {
    f.u[size_t(k)] = std::sin(0.01f * float(k)) * 10.0f;
    f.v[size_t(k)] = std::cos(0.013f * float(k)) * 10.0f;
  }
  return f;
}

const std::vector<int64_t> kSpots = {0, 4095, 4096, 8191, 8192, 9000, 10299};  // 103 x 100 field: 10300 vertices

/// A mask of the field's size that marks `at` alone.
void expect_only(const std::vector<uint8_t>& m, size_t n, int64_t at, const std::string& where) {
  ASSERT_EQ(m.size(), n) << where;
  EXPECT_EQ(std::count(m.begin(), m.end(), uint8_t(1)), 1) << where;
  EXPECT_EQ(m[size_t(at)], 1) << where;
}

/// invalid_argument naming one infinite value at `pos` ("x=.. y=..[ z=..]").
void expect_one_infinity(const Status& s, const std::string& pos, const std::string& where) {
  EXPECT_EQ(s.code(), Code::invalid_argument) << where;
  EXPECT_NE(s.message().find("1 infinite value(s)"), std::string::npos) << where << ": " << s.message();
  EXPECT_NE(s.message().find(pos), std::string::npos) << where << ": " << s.message();
}

TEST(ScanChunks, ALoneSpecialValueIsFoundWhereverItSits) {
  for (int64_t at : kSpots)
    for (int comp = 0; comp < 2; ++comp) {
      const std::string where = "vertex " + std::to_string(at) + (comp ? " in v" : " in u");
      VectorField2D f = smooth_field(103, 100);
      auto& plane = comp ? f.v : f.u;

      plane[size_t(at)] = NAN;
      expect_only(missing_mask(f), f.u.size(), at, where);
      EXPECT_TRUE(validate_field(f).ok()) << where;  // NaN is missing, not invalid

      plane[size_t(at)] = -INFINITY;
      expect_one_infinity(validate_field(f), "x=" + std::to_string(at % 103) + " y=" + std::to_string(at / 103), where);
      EXPECT_TRUE(missing_mask(f).empty()) << where;

      plane[size_t(at)] = -9999.0f;  // a declared fill value, and a suspected one
      VectorField2D declared = f;
      FillValues fill;
      (comp ? fill.v : fill.u) = -9999.0f;
      EXPECT_EQ(mark_missing(declared, fill), 1) << where;
      ASSERT_EQ(declared.mask.size(), f.u.size()) << where;
      EXPECT_EQ(declared.mask[size_t(at)], 1) << where;
      const auto suspect = suspected_fill_value(f);
      ASSERT_TRUE(suspect.has_value()) << where;
      EXPECT_EQ(suspect->value, -9999.0f) << where;
      EXPECT_EQ(suspect->count, 1) << where;
    }
}

TEST(ScanChunks, ALoneSpecialValueIsFoundWhereverItSitsIn3D) {
  const int64_t nx = 23, ny = 21, nz = 22;  // 10626 vertices: two whole chunks and a part
  for (int64_t at : {int64_t{0}, int64_t{4095}, int64_t{4096}, int64_t{8191}, int64_t{8192}, int64_t{10625}})
    for (int comp = 0; comp < 3; ++comp) {
      const std::string where = "vertex " + std::to_string(at) + " in component " + std::to_string(comp);
      VectorField3D f{nx, ny, nz, {}, {}, {}};
      for (std::vector<float>* p : {&f.u, &f.v, &f.w}) {
        p->resize(size_t(nx * ny * nz));
        for (size_t k = 0; k < p->size(); ++k) (*p)[k] = std::sin(0.01f * float(k) + float(p == &f.v)) * 10.0f + 11.0f;
      }
      EXPECT_TRUE(missing_mask(f).empty()) << where;
      EXPECT_TRUE(validate_field(f).ok()) << where;
      auto& plane = comp == 0 ? f.u : comp == 1 ? f.v : f.w;

      plane[size_t(at)] = NAN;
      expect_only(missing_mask(f), f.u.size(), at, where);
      EXPECT_TRUE(validate_field(f).ok()) << where;  // NaN is missing, not invalid

      plane[size_t(at)] = INFINITY;
      expect_one_infinity(validate_field(f),
                          "x=" + std::to_string(at % nx) + " y=" + std::to_string(at / nx % ny) +
                              " z=" + std::to_string(at / nx / ny),
                          where);
      EXPECT_TRUE(missing_mask(f).empty()) << where;

      f.mask.assign(f.u.size(), 0);  // masked: an infinity there is missing data, not an error
      f.mask[size_t(at)] = 1;
      EXPECT_TRUE(validate_field(f).ok()) << where;
      expect_only(missing_mask(f), f.u.size(), at, where);
    }
}

TEST(ScanChunks, NothingSpecialLeavesNoMaskAndNoSuspect) {
  VectorField2D f = smooth_field(103, 100);
  EXPECT_TRUE(missing_mask(f).empty());
  EXPECT_TRUE(validate_field(f).ok());
  EXPECT_FALSE(suspected_fill_value(f).has_value());
  FillValues fill;
  fill.u = -9999.0f;
  fill.v = 1e20f;
  EXPECT_EQ(mark_missing(f, fill), 0);
  EXPECT_TRUE(f.mask.empty());
  f.mask.assign(f.u.size(), 0);  // a given mask is kept and normalized to 0 / 1
  f.mask[4096] = 7;
  EXPECT_EQ(mark_missing(f, fill), 1);
  EXPECT_EQ(f.mask[4096], 1);
}

}  // namespace
}  // namespace factz
