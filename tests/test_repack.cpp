// variable_io::repack (decompress --repack, docs/usage.md "Packed variables") as a
// specification, on records built here: the nearest integer with ties to even, the type's
// range (clamped and counted), missing vertices (a fill value's integer, or their own where
// another component was missing), the attributes restored (packing under its names, fill
// values and exact valid ranges as integers, factz_packed_* dropped), and the refusals. The
// netCDF files themselves: tests/test_netcdf.cpp, Netcdf.RepackGivesBackTheFilesIntegers.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "io/variable/variable_io.hpp"

namespace factz::variable_io {
namespace {

SourceAttribute f32_attribute(const std::string& name, std::vector<float> values) {
  SourceAttribute a{name, SourceType::float32, {}, {}};
  for (float v : values)
    for (int b = 0; b < 4; ++b) a.data.push_back(uint8_t(std::bit_cast<uint32_t>(v) >> (8 * b)));
  return a;
}
SourceAttribute text_attribute(const std::string& name, const std::string& text) {
  return {name, SourceType::text, std::vector<uint8_t>(text.begin(), text.end()), {}};
}

/// A variable read from `type` integers packed with scale 0.5, unpacked to float32.
SourceVariable packed_variable(const std::string& type) {
  SourceVariable v;
  v.name = "T";
  v.type = SourceType::float32;
  v.dimensions = {{"x", 8, false, std::nullopt}};
  v.attributes = {f32_attribute("factz_packed_scale_factor", {0.5f}), text_attribute("units", "K"),
                  f32_attribute("_FillValue", {-64.0f}),  // -128 * 0.5
                  f32_attribute("valid_range", {-10.0f, 10.0f}), f32_attribute("valid_max", {0.3f}),
                  text_attribute("factz_packed_Unsigned", "false"), text_attribute("factz_packed_type", type)};
  return v;
}

std::vector<int64_t> signed_values(const Repacked& r, int bytes) {
  std::vector<int64_t> out;
  for (size_t k = 0; k + size_t(bytes) <= r.values.size(); k += size_t(bytes)) {
    uint64_t u = 0;
    for (int b = 0; b < bytes; ++b) u |= uint64_t(r.values[k + size_t(b)]) << (8 * b);
    out.push_back(bytes == 8 ? int64_t(u) : int64_t(u << (64 - 8 * bytes)) >> (64 - 8 * bytes));
  }
  return out;
}

TEST(Repack, NearestIntegerTiesToEvenRangeClampedAndMissingVertices) {
  const SourceVariable v = packed_variable("int8");
  ASSERT_TRUE(repackable(v));
  //                              0  0.25->0  0.75->2  63.4   100 (clamped)  -64 missing  1.0 missing (own)
  const std::vector<float> x = {0.0f, 0.25f, 0.75f, 63.4f, 100.0f, -64.0f, 1.0f, -1.2f};
  const std::vector<uint8_t> mask = {0, 0, 0, 0, 0, 1, 1, 0};
  auto r = repack(v, std::span<const float>(x), mask, "f.nc:T");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->variable.type, SourceType::int8);
  EXPECT_EQ(signed_values(r.value(), 1), (std::vector<int64_t>{0, 0, 2, 127, 127, -128, 2, -2}));
  EXPECT_EQ(r->clamped, 1u);  // 63.4 is 126.8 -> 127, inside; 100 is 200 -> 127, clamped
  // The attributes: packing under its names, the fill and the exact range as int8, the
  // inexact valid_max kept in unpacked units, factz_packed_* gone, the order kept.
  std::vector<std::string> names;
  for (const auto& a : r->variable.attributes) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"scale_factor", "units", "_FillValue", "valid_range", "valid_max"}));
  EXPECT_EQ(r->variable.attributes[0].type, SourceType::float32);
  EXPECT_EQ(r->variable.attributes[2].type, SourceType::int8);
  EXPECT_EQ(r->variable.attributes[2].numbers(), std::vector<double>{-128});
  EXPECT_EQ(r->variable.attributes[3].type, SourceType::int8);
  EXPECT_EQ(r->variable.attributes[3].numbers(), (std::vector<double>{-20, 20}));
  EXPECT_EQ(r->variable.attributes[4].type, SourceType::float32);
}

TEST(Repack, SixtyFourBitAndUnsignedTypes) {
  SourceVariable v = packed_variable("uint16");
  v.attributes[0] = f32_attribute("factz_packed_scale_factor", {1.0f});
  v.attributes[2] = f32_attribute("_FillValue", {65535.0f});
  const std::vector<float> x = {-3.0f, 70000.0f, 65534.4f, 65535.0f};
  auto r = repack(v, std::span<const float>(x), {}, "u");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->variable.type, SourceType::uint16);
  EXPECT_EQ(r->values, (std::vector<uint8_t>{0, 0, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff}));
  EXPECT_EQ(r->clamped, 2u);
  SourceVariable w = packed_variable("int64");
  w.type = SourceType::float64;
  w.attributes = {text_attribute("factz_packed_type", "int64")};  // no scale, no offset: 1 and 0
  const std::vector<double> big = {-9007199254740992.0, 1e19, 123456789012.0};
  auto r64 = repack(w, std::span<const double>(big), {}, "w");
  ASSERT_TRUE(r64.ok()) << r64.status().to_string();
  EXPECT_EQ(signed_values(r64.value(), 8),
            (std::vector<int64_t>{-9007199254740992LL, INT64_MAX, 123456789012LL}));
  EXPECT_EQ(r64->clamped, 1u);
}

TEST(Repack, WhatCannotBeRepackedIsRefusedByName) {
  SourceVariable plain = packed_variable("int8");
  plain.attributes.pop_back();  // no factz_packed_type
  EXPECT_FALSE(repackable(plain));
  const std::vector<float> x = {1.0f, 2.0f};
  auto r = repack(plain, std::span<const float>(x), {}, "f.nc:T");
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("f.nc:T: not read from packed integers"), std::string::npos);
  EXPECT_FALSE(repackable(packed_variable("float32")));  // float storage: nothing to re-pack into
  SourceVariable odd = packed_variable("int8");
  odd.attributes[2] = f32_attribute("_FillValue", {0.3f});  // no int8 unpacks to it
  r = repack(odd, std::span<const float>(x), {}, "f.nc:T");
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("_FillValue"), std::string::npos) << r.status().message();
  SourceVariable no_fill = packed_variable("int8");
  no_fill.attributes.erase(no_fill.attributes.begin() + 2);
  const std::vector<float> nan = {std::nanf(""), 1.0f};
  const std::vector<uint8_t> mask = {1, 0};
  r = repack(no_fill, std::span<const float>(nan), mask, "f.nc:T");
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("declares no fill value"), std::string::npos) << r.status().message();
  SourceVariable zero = packed_variable("int8");
  zero.attributes[0] = f32_attribute("factz_packed_scale_factor", {0.0f});
  EXPECT_EQ(repack(zero, std::span<const float>(x), {}, "z").status().code(), Code::invalid_argument);
}

}  // namespace
}  // namespace factz::variable_io
