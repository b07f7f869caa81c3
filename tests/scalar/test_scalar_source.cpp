// Scalar streams carry the source record (section 12) of the netCDF / HDF5 variable they
// were read from: ScalarOptions::source, stored as it is in the compact container's version
// 19, read back by stream_source, the values unchanged, in every mode, coder, masked or not,
// 2D, 3D and float64; a record that does not describe the field is refused. The record's
// bytes and the 2D / 3D vector streams' rules are tests/test_source_record.cpp's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "factz/io.hpp"
#include "factz/scalar.hpp"
#include "support/source_records.hpp"

namespace factz {
namespace {

using testing::expect_record_stream;
using testing::record_of;

/// A smooth 36 x 33 x nz field with a few extrema per plane.
ScalarField scalar_like(int64_t nz) {
  ScalarField s;
  s.nx = 36;
  s.ny = 33;
  s.nz = nz;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < s.ny; ++y)
      for (int64_t x = 0; x < s.nx; ++x)
        s.values.push_back(float(std::sin(0.31 * double(x) + 0.2 * double(z)) * std::cos(0.23 * double(y)) +
                                 0.01 * double(x)));
  return s;
}

TEST(ScalarSource, StreamsCarryItInVersion19) {
  for (int64_t nz : {1, 4})
    for (ScalarMode mode : {ScalarMode::none, ScalarMode::contour_tree})
      for (Coder coder : {Coder::ans, Coder::context, Coder::smallest})
        for (bool masked : {false, true}) {
          SCOPED_TRACE("nz " + std::to_string(nz) + " mode " + std::to_string(int(mode)) + " coder " +
                       coder_name(coder) + (masked ? " masked" : ""));
          ScalarField f = scalar_like(nz);
          if (masked) f.values[7] = std::nanf("");
          ScalarOptions o;
          o.mode = mode;
          o.coder = coder;
          const auto without = compress_scalar(f, o);
          ASSERT_TRUE(without.ok()) << without.status().to_string();
          const SourceRecord record =
              record_of({"T"}, nz == 1 ? std::vector<uint64_t>{33, 36} : std::vector<uint64_t>{4, 33, 36});
          o.source = encode_source_record(record);
          const auto with = compress_scalar(f, o);
          ASSERT_TRUE(with.ok()) << with.status().to_string();
          expect_record_stream(with.value(), without.value(), record);
          const auto a = decompress_scalar(without.value()), b = decompress_scalar(with.value());
          ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
          EXPECT_EQ(0, std::memcmp(a->values.data(), b->values.data(), a->values.size() * 4));
        }
  // float64
  const ScalarField f = scalar_like(1);
  ScalarField64 f64{f.nx, f.ny, f.nz, std::vector<double>(f.values.begin(), f.values.end()), {}};
  ScalarOptions o;
  const auto without = compress_scalar(f64, o);
  const SourceRecord record = record_of({"T"}, {33, 36});
  o.source = encode_source_record(record);
  const auto with = compress_scalar(f64, o);
  ASSERT_TRUE(without.ok() && with.ok()) << with.status().to_string();
  expect_record_stream(with.value(), without.value(), record);
  auto back = decompress_scalar64(with.value());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  // Damaged: refused, never a crash.
  testing::expect_damage_refused(with.value(), [](const std::vector<uint8_t>& s) { return decompress_scalar64(s).status(); });
}

TEST(ScalarSource, ARecordOfAnotherFieldIsRefused) {
  ScalarOptions so;
  so.source = encode_source_record(record_of({"U", "V"}, {33, 36}));  // two variables for one field
  auto r = compress_scalar(scalar_like(1), so);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("ScalarOptions::source"), std::string::npos) << r.status().to_string();
  so.source = encode_source_record(record_of({"T"}, {33, 36}));  // a 2D record for a 3D field
  r = compress_scalar(scalar_like(4), so);
  EXPECT_EQ(r.status().code(), Code::invalid_argument) << r.status().to_string();
  so.source = {1, 2, 3};
  EXPECT_EQ(compress_scalar(scalar_like(1), so).status().code(), Code::invalid_argument);
}

}  // namespace
}  // namespace factz
