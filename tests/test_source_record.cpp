// The source record (section 12 `source`, format version 4; docs/format.md) as a
// specification: its bytes as documented, round trips of every field and type, rejection of
// every truncated or damaged record, and the stream layer's rules: compress stores
// Options::source as it is (version 4), stream_source reads it back, the values do not
// change, and a record that does not describe the stream's grid is a corrupt stream. Scalar
// and 3D vector streams carry it too (ScalarOptions::source, Options::source of a 3D field),
// in the compact container's version 19.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "synth.hpp"
#include "synth3d.hpp"
#include "support/resealed.hpp"
#include "support/source_records.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::expect_same;
using testing::expect_record_stream;
using testing::le_bytes;
using testing::record_of;
using testing::sample_record;
using testing::text_attribute;
using testing::values_of;
using testing::with_auxiliaries;
using testing::with_bounds;

// ---- The record's bytes ---------------------------------------------------------------------

TEST(SourceRecord, BytesAreTheDocumentedLayout) {
  SourceRecord r;
  r.format = SourceFormat::netcdf_classic;
  r.file = "a.nc";
  SourceVariable v;
  v.name = "U";
  v.type = SourceType::float32;
  v.dimensions = {{"t", 5, true, 3}, {"y", 2, false, std::nullopt}, {"x", 3, false, std::nullopt}};
  v.attributes = {text_attribute("units", "m/s")};
  v.coordinates = {{2, "x", SourceType::float32, values_of<float>({0.0f, 1.0f, 2.0f}), {}}};
  r.components = {v};
  const Bytes want = {
      0x01, 0x01, 0x04, 'a', '.', 'n', 'c',  // record version, format (classic), file
      0x00,                                  // global attributes
      0x01,                                  // components
      0x01, 'U', 0x05, 0x03,                 // variable name, type float32, 3 dimensions
      0x01, 't', 0x05, 0x03, 0x03,           // t: size 5, unlimited | sliced, index 3
      0x01, 'y', 0x02, 0x00,                 // y: size 2
      0x01, 'x', 0x03, 0x00,                 // x: size 3
      0x01,                                  // one attribute
      0x05, 'u', 'n', 'i', 't', 's', 0x02, 0x03, 'm', '/', 's',
      0x01,                                  // one coordinate
      0x02, 0x01, 'x', 0x05, 0x03,           // dimension 2, name, float32, 3 values
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40,
      0x00,  // its attributes
  };
  // Record version 1 (format versions 4 to 18): read, never written any more.
  auto back = decode_source_record(want);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same(back.value(), r);
  EXPECT_EQ(back->version, 1);
  // Version 2: the same, with a coding byte before each coordinate's values: here the
  // differences of the bit patterns (0, 0x3f800000, 0x00800000), zig-zagged varints, 9 bytes
  // against 12 raw.
  Bytes want2 = want;
  want2[0] = 0x02;
  const size_t values_at = want.size() - 13;
  want2.erase(want2.begin() + std::ptrdiff_t(values_at), want2.end() - 1);
  const Bytes coded = {0x01, 0x00, 0x80, 0x80, 0x80, 0xf8, 0x07, 0x80, 0x80, 0x80, 0x08};
  want2.insert(want2.begin() + std::ptrdiff_t(values_at), coded.begin(), coded.end());
  EXPECT_EQ(encode_source_record(r), want2);
  back = decode_source_record(want2);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same(back.value(), r);
  EXPECT_EQ(back->version, 2);
  // The writer's choice is the only valid one: the same values raw (coding 0) are corrupt,
  // and so is a varint in a longer form than it needs.
  Bytes raw2 = want;
  raw2[0] = 0x02;
  raw2.insert(raw2.begin() + std::ptrdiff_t(values_at), 0x00);
  EXPECT_EQ(decode_source_record(raw2).status().code(), Code::corrupt_stream);
  Bytes long2 = want2;
  long2[values_at + 1] = 0x80;  // 0 as two bytes
  long2.insert(long2.begin() + std::ptrdiff_t(values_at + 2), 0x00);
  EXPECT_EQ(decode_source_record(long2).status().code(), Code::corrupt_stream);
}

// Coordinates of real grids: a regular one (ERA5's 0.25 degrees, float32) shrinks to about a
// byte per value, an irregular one (Gaussian-like latitudes, float64) stays raw or shrinks a
// little, and every list comes back bit for bit.
TEST(SourceRecord, CoordinatesAreCodedAsDifferencesWhereThatIsShorter) {
  SourceRecord r = sample_record(721, 1440);
  for (auto& v : r.components) {
    v.dimensions[1].size = 721;
    v.dimensions[2].size = 1440;
    SourceCoordinate lat{1, "lat", SourceType::float32, {}, {}};
    for (int k = 0; k < 721; ++k) {
      const float y = 90.0f - 0.25f * float(k);
      const Bytes b = le_bytes(&y, 4);
      lat.data.insert(lat.data.end(), b.begin(), b.end());
    }
    SourceCoordinate lon{2, "lon", SourceType::float64, {}, {}};
    for (int k = 0; k < 1440; ++k) {
      const double x = 360.0 * std::sin(double(k) / 1440.0 * 1.5);  // no regular steps
      const Bytes b = le_bytes(&x, 8);
      lon.data.insert(lon.data.end(), b.begin(), b.end());
    }
    v.coordinates = {v.coordinates[0], lat, lon};
  }
  const Bytes bytes = encode_source_record(r);
  auto back = decode_source_record(bytes);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same(back.value(), r);
  const size_t raw = 2 * (721 * 4 + 1440 * 8);
  EXPECT_LT(bytes.size(), raw - 2 * 721 * 3) << "the regular latitudes take about a byte each";
}

TEST(SourceRecord, EveryFieldAndTypeRoundTrips) {
  const SourceRecord r = sample_record();
  const Bytes bytes = encode_source_record(r);
  auto back = decode_source_record(bytes);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same(back.value(), r);
  EXPECT_EQ(back->components[0].attributes[2].numbers(), (std::vector<double>{-100.0, 100.0}));
  EXPECT_EQ(back->components[0].attributes[3].numbers(), (std::vector<double>{-1.0, 2.0, 3.0}));
  const std::string text = describe_source_record(back.value());
  for (const char* want : {"netCDF-4 file storm.nc", "u: U[time=1], float32, dimensions time=3 (unlimited), lat=33, lon=36",
                           "_FillValue = 1e+20f (float32)", "units = \"m s-1\" (text)", "names = \"a\", \"\", \"long name\"",
                           "coordinate time (float64, at index 1: 6", ":Conventions = \"CF-1.8\""})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

TEST(SourceRecord, EveryTruncationAndDamageIsRefusedWithoutACrash) {
  const Bytes good = encode_source_record(sample_record());
  for (size_t n = 0; n < good.size(); ++n) {
    auto r = decode_source_record(std::span<const uint8_t>(good.data(), n));
    ASSERT_FALSE(r.ok()) << "accepted the first " << n << " bytes";
    EXPECT_EQ(r.status().code(), Code::corrupt_stream);
  }
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_NE(decode_source_record(longer).status().message().find("trailing"), std::string::npos);
  for (size_t k = 0; k < good.size(); ++k)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      Bytes b = good;
      b[k] ^= flip;
      auto r = decode_source_record(b);  // must not crash, hang or allocate wildly
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), Code::corrupt_stream) << "byte " << k;
      }
    }
  Bytes v5 = good;
  v5[0] = 5;
  EXPECT_NE(decode_source_record(v5).status().message().find("source record version 5"), std::string::npos);
  // Version 3 is version 2 followed by at least one auxiliary variable: a version 2 record
  // relabelled 3 ends too early.
  Bytes v3 = good;
  v3[0] = 3;
  EXPECT_NE(decode_source_record(v3).status().message().find("auxiliary variable count"), std::string::npos);
  // A slice index outside its dimension, a coordinate of the wrong length, an unknown type.
  SourceRecord r = sample_record();
  r.components[0].dimensions[0].index = 3;
  EXPECT_FALSE(decode_source_record(encode_source_record(r)).ok());
  r = sample_record();
  r.components[1].coordinates[1].data.resize(4 * 35);
  EXPECT_FALSE(decode_source_record(encode_source_record(r)).ok());
  r = sample_record();
  r.components[0].attributes[1].type = SourceType(13);
  EXPECT_FALSE(decode_source_record(encode_source_record(r)).ok());
}

TEST(SourceRecord, CheckSaysWhetherItDescribesTheField) {
  const uint64_t grid[2] = {33, 36};
  EXPECT_TRUE(check_source_record(sample_record(), 2, grid).ok());
  EXPECT_FALSE(check_source_record(sample_record(), 1, grid).ok());
  const uint64_t other[2] = {33, 35};
  EXPECT_NE(check_source_record(sample_record(), 2, other).message().find("dimension lon has 36 values, the field 35"),
            std::string::npos);
  SourceRecord r = sample_record();
  r.components[0].dimensions[0].index.reset();
  EXPECT_NE(check_source_record(r, 2, grid).message().find("leading dimension time is not sliced"), std::string::npos);
  r = sample_record();
  r.components[1].dimensions[2].index = 0;
  EXPECT_FALSE(check_source_record(r, 2, grid).ok());
}

// ---- Auxiliary variables (record version 3, format version 20) -------------------------------

TEST(SourceRecord, AuxiliariesMakeVersion3AndRoundTrip) {
  const SourceRecord plain = sample_record();
  EXPECT_EQ(encode_source_record(plain)[0], 2) << "no auxiliary variable: version 2, as before";
  const SourceRecord r = with_auxiliaries(plain);
  const Bytes bytes = encode_source_record(r);
  ASSERT_EQ(bytes[0], 3);
  auto back = decode_source_record(bytes);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->version, 3);
  expect_same(back.value(), r);
  EXPECT_EQ(back->auxiliaries[0].count(), 33u * 36u);
  EXPECT_EQ(back->auxiliaries[2].count(), 1u) << "over the sliced time: its one value";
  const std::string text = describe_source_record(back.value());
  for (const char* want : {"auxiliary lat2d(lat, lon) (float64, 1188 value(s): 40, 40.001, 40.004",
                           "auxiliary crs() (int32, 1 value(s): -2147483647; 2 attribute(s))",
                           "auxiliary height(time) (float32, 1 value(s): 10f", "auxiliary label(lon) (text"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  // The version 2 part is the record without them, byte for byte.
  const Bytes v2 = encode_source_record(plain);
  EXPECT_TRUE(std::equal(v2.begin() + 1, v2.end(), bytes.begin() + 1));
}

// Record version 4: auxiliary variables with dimensions of their own (CF cell bounds' `nv`),
// each given with its size; written only then, the rest of the record as in version 3.
TEST(SourceRecord, OwnDimensionsMakeVersion4AndRoundTrip) {
  const SourceRecord aux = with_auxiliaries(sample_record());
  const SourceRecord r = with_bounds(aux);
  const Bytes bytes = encode_source_record(r);
  ASSERT_EQ(bytes[0], 4);
  EXPECT_EQ(encode_source_record(aux)[0], 3) << "without own dimensions: version 3, as before";
  auto back = decode_source_record(bytes);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->version, 4);
  expect_same(back.value(), r);
  EXPECT_EQ(back->auxiliaries[4].count(), 2u) << "time_bnds over the sliced time: one pair";
  EXPECT_EQ(back->auxiliaries[5].count(), 72u);
  const std::string text = describe_source_record(back.value());
  for (const char* want : {"auxiliary time_bnds(time, nv=2) (float64, 2 value(s): 3, 9",
                           "auxiliary lon_bnds(lon, nv=2) (float32, 72 value(s): 99.75f, 100.25f"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  const uint64_t grid[2] = {33, 36};
  EXPECT_TRUE(check_source_record(back.value(), 2, grid).ok());
  // A window keeps the cell's vertices whole.
  const uint64_t first[2] = {0, 10}, count[2] = {33, 4};
  auto w = window_of_source_record(r, first, count);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->auxiliaries[5].count(), 8u);
  std::vector<float> lon(8);
  std::memcpy(lon.data(), w->auxiliaries[5].data.data(), 32);
  EXPECT_EQ(lon[0], 104.75f);
  EXPECT_EQ(lon[7], 106.75f);
  EXPECT_EQ(w->auxiliaries[4].data, r.auxiliaries[4].data);
  // Every truncation refused, every byte flip survived.
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_EQ(decode_source_record(Bytes(bytes.begin(), bytes.begin() + std::ptrdiff_t(n))).status().code(),
              Code::corrupt_stream)
        << n;
  for (size_t k = 0; k < bytes.size(); ++k) {
    Bytes b = bytes;
    b[k] ^= 0x41;
    auto d = decode_source_record(b);  // must not crash, hang or allocate wildly
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), Code::corrupt_stream) << k;
    }
  }
}

TEST(SourceRecord, OwnDimensionsThatDoNotFitAreRefused) {
  auto refused = [](const SourceRecord& r, const std::string& why) {
    auto d = decode_source_record(encode_source_record(r));
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << why;
    EXPECT_NE(d.status().message().find(why), std::string::npos) << d.status().message();
  };
  const SourceRecord good = with_bounds(sample_record());
  SourceRecord r = good;
  r.auxiliaries[1].own_dimensions = {{"nv", 3}};  // another size than time_bnds gives nv
  r.auxiliaries[1].data.resize(r.auxiliaries[1].data.size() / 2 * 3);
  refused(r, "another size than before");
  r = good;
  r.auxiliaries[1].own_dimensions.push_back({"lon", 36});  // a component's dimension given a size
  refused(r, "0 for a component's dimension");
  r = good;
  r.auxiliaries[1].own_dimensions.clear();  // nv known to time_bnds only
  refused(r, "0 for a component's dimension, else its own size");
  r = good;
  r.auxiliaries[0].dimensions = {"time", "nv2"};  // a name without a size
  refused(r, "dimension nv2");
  // Version 4 without any own dimension is not a record this build writes: refused.
  Bytes v4 = encode_source_record(with_auxiliaries(sample_record()));
  v4[0] = 4;
  EXPECT_EQ(decode_source_record(v4).status().code(), Code::corrupt_stream);
  // And version 3 cannot hold them: its dimension names must be the components'.
  Bytes v3 = encode_source_record(good);
  v3[0] = 3;
  EXPECT_EQ(decode_source_record(v3).status().code(), Code::corrupt_stream);
}

TEST(SourceRecord, AuxiliaryBytesAreTheDocumentedLayout) {
  // docs/format.md, "12 source": U(y, x) of 2 x 3 with one auxiliary variable lat(y, x) of
  // int16 values 1 to 6 (12 bytes raw; their differences 1, 1, ... zig-zag to 2, a byte each:
  // 6 bytes, coding 1) and one attribute.
  SourceRecord r;
  r.format = SourceFormat::netcdf4;
  r.file = "g.nc";
  SourceVariable v;
  v.name = "U";
  v.type = SourceType::float32;
  v.dimensions = {{"y", 2, false, std::nullopt}, {"x", 3, false, std::nullopt}};
  v.attributes = {text_attribute("coordinates", "lat")};
  r.components = {v};
  r.auxiliaries = {{"lat", SourceType::int16, {"y", "x"}, values_of<int16_t>({1, 2, 3, 4, 5, 6}),
                    {text_attribute("units", "deg")},
                    {}}};
  const Bytes want = {
      0x03, 0x04, 0x04, 'g', '.', 'n', 'c', 0x00, 0x01,  // version 3, netCDF-4, "g.nc", no globals, 1 component
      0x01, 'U', 0x05, 0x02,                             // "U", float32, 2 dimensions
      0x01, 'y', 0x02, 0x00, 0x01, 'x', 0x03, 0x00,      // y: 2; x: 3
      0x01, 0x0b, 'c', 'o', 'o', 'r', 'd', 'i', 'n', 'a', 't', 'e', 's', 0x02, 0x03, 'l', 'a', 't',
      0x00,                                              // no coordinate variable
      0x01,                                              // one auxiliary variable
      0x03, 'l', 'a', 't', 0x03, 0x02,                   // "lat", int16, 2 dimensions
      0x01, 'y', 0x01, 'x',                              // named y and x
      0x06, 0x01, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02,    // 6 values, coding 1: differences 1 (zig-zag 2)
      0x01, 0x05, 'u', 'n', 'i', 't', 's', 0x02, 0x03, 'd', 'e', 'g',
  };
  EXPECT_EQ(encode_source_record(r), want);
  auto back = decode_source_record(want);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same(back.value(), r);
  // Only the shorter coding is valid: the same values raw are corrupt.
  Bytes raw = want;
  const Bytes count_and_coding = {0x06, 0x01, 0x02};
  const size_t at = size_t(std::search(want.begin(), want.end(), count_and_coding.begin(), count_and_coding.end()) -
                           want.begin()) + 1;  // the coding byte
  ASSERT_LT(at, want.size());
  raw.erase(raw.begin() + std::ptrdiff_t(at), raw.begin() + std::ptrdiff_t(at + 7));
  const Bytes values = values_of<int16_t>({1, 2, 3, 4, 5, 6});
  raw.insert(raw.begin() + std::ptrdiff_t(at), values.begin(), values.end());
  raw.insert(raw.begin() + std::ptrdiff_t(at), 0x00);
  EXPECT_EQ(decode_source_record(raw).status().code(), Code::corrupt_stream);
}

TEST(SourceRecord, AuxiliariesThatDoNotFitTheComponentsAreRefused) {
  const SourceRecord good = with_auxiliaries(sample_record());
  ASSERT_TRUE(decode_source_record(encode_source_record(good)).ok());
  auto refused = [](const SourceRecord& r, const std::string& why) {
    auto back = decode_source_record(encode_source_record(r));
    ASSERT_FALSE(back.ok()) << why;
    EXPECT_EQ(back.status().code(), Code::corrupt_stream);
    EXPECT_NE(back.status().message().find(why), std::string::npos) << back.status().to_string();
  };
  SourceRecord r = good;
  r.auxiliaries[0].dimensions = {"lat", "depth"};
  refused(r, "dimension depth of auxiliary variable lat2d (no component has it)");
  r = good;
  r.auxiliaries[0].dimensions = {"lat", "lat"};
  refused(r, "dimension lat of auxiliary variable lat2d named twice");
  r = good;
  r.auxiliaries[0].data.resize(r.auxiliaries[0].data.size() - 8);
  refused(r, "value count of auxiliary variable lat2d");
  r = good;
  r.auxiliaries[2].data = values_of<float>({10.0f, 11.0f});  // two values over a sliced dimension
  refused(r, "value count of auxiliary variable height");
  r = good;
  r.auxiliaries[1].name = "lat2d";
  refused(r, "auxiliary variable lat2d (named twice");
  r = good;
  r.auxiliaries[1].name = "V";
  refused(r, "like a component or a coordinate");
  r = good;
  r.auxiliaries[1].name = "lon";
  refused(r, "like a component or a coordinate");
  r = good;
  r.auxiliaries[1].name = "";
  refused(r, "auxiliary variable name");
  r = good;
  r.auxiliaries[3].type = SourceType::string;
  refused(r, "type of auxiliary variable label");
  // Every truncation refused, every damage survived.
  const Bytes bytes = encode_source_record(good);
  for (size_t n = 0; n < bytes.size(); ++n)
    ASSERT_FALSE(decode_source_record(std::span<const uint8_t>(bytes.data(), n)).ok()) << n;
  for (size_t k = 0; k < bytes.size(); ++k)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      Bytes b = bytes;
      b[k] ^= flip;
      auto back = decode_source_record(b);
      if (!back.ok()) {
        EXPECT_EQ(back.status().code(), Code::corrupt_stream) << "byte " << k;
      }
    }
}

// ---- The section in streams -----------------------------------------------------------------

VectorField2D storm_like() { return synth::turbulence(36, 33, 7); }

TEST(SourceSection, CompressStoresItAsVersion4AndTheValuesDoNotChange) {  // layout version 4, container 19
  for (Mode mode : {Mode::none, Mode::block, Mode::speculative}) {
    SCOPED_TRACE(mode_name(mode));
    VectorField2D f = storm_like();
    Options o;
    o.mode = mode;
    const auto plain = compress(f, o);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    // Mode speculative is version 9 whatever its sections (the predictor byte, segmented codes).
    const bool spec = mode == Mode::speculative;
    EXPECT_EQ(testing::layout_version(plain.value()), spec ? 9 : 2) << "no source, no mask: version 2";
    auto none = stream_source(plain.value());
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    o.source = encode_source_record(sample_record());
    const auto with = compress(f, o);
    ASSERT_TRUE(with.ok()) << with.status().to_string();
    EXPECT_EQ(testing::layout_version(with.value()), spec ? 9 : 4);
    auto source = stream_source(with.value());
    ASSERT_TRUE(source.ok()) << source.status().to_string();
    ASSERT_TRUE(source->has_value());
    expect_same(**source, sample_record());
    const auto a = decompress(plain.value()), b = decompress(with.value());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->u, b->u);
    EXPECT_EQ(a->v, b->v);
    // With missing vertices too (the mask sections and the source: still version 4, or 5
    // in the tiled modes, whose masked codes leave the missing vertices out).
    f.u[5] = std::nanf("");
    const auto masked = compress(f, o);
    ASSERT_TRUE(masked.ok()) << masked.status().to_string();
    EXPECT_EQ(testing::layout_version(masked.value()), spec ? 9 : 5);
    const auto c = decompress(masked.value());
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_TRUE(std::isnan(c->u[5]));
  }
}

TEST(SourceSection, ARecordOfAnotherFieldIsRefused) {
  Options o;
  o.source = encode_source_record(sample_record(33, 35));
  auto r = compress(storm_like(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("Options::source"), std::string::npos) << r.status().to_string();
  o.source = {1, 2, 3};
  r = compress(storm_like(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
}

/// `stream` with the source section's raw bytes replaced by `record` (same length), the
/// checksums recomputed: only the record's content is wrong.
Bytes with_record(Bytes stream, const Bytes& record) {
  auto parsed = detail::parse_container(stream);
  EXPECT_TRUE(parsed.ok());
  for (const auto& e : parsed->entries) {
    if (e.id != detail::kSectionSource) continue;
    EXPECT_EQ(e.flags, 0u);
    EXPECT_EQ(e.stored_size, record.size());
    std::memcpy(stream.data() + e.offset, record.data(), record.size());
  }
  testing::reseal_compact(stream);
  return stream;
}

TEST(SourceSection, ARecordThatDoesNotDescribeTheStreamIsCorrupt) {
  Options o;
  o.zstd = false;  // the section stored as it is
  o.source = encode_source_record(sample_record());
  const auto stream = compress(storm_like(), o);
  ASSERT_TRUE(stream.ok()) << stream.status().to_string();
  // Another grid, in as many bytes: the container is sound, the record is not this field's.
  const Bytes other = with_record(stream.value(), encode_source_record(sample_record(34, 36)));
  for (const auto& r : {decompress(other).status(), stream_source(other).status(), stream_dims(other).status()}) {
    EXPECT_EQ(r.code(), Code::corrupt_stream) << r.to_string();
    EXPECT_NE(r.message().find("section 12 (source)"), std::string::npos) << r.to_string();
  }
  // A record that does not decode.
  Bytes broken = encode_source_record(sample_record());
  broken[0] = 9;
  const auto s = decompress(with_record(stream.value(), broken)).status();
  EXPECT_EQ(s.code(), Code::corrupt_stream) << s.to_string();
  EXPECT_NE(s.message().find("source record version 9"), std::string::npos) << s.to_string();
}

// A record's version goes with the stream's: 2 in format version 19 (what this build
// writes), 1 in the 2D vector streams of versions 4 to 18; a mismatch is corrupt.
TEST(SourceSection, TheRecordVersionIsTheStreamVersions) {
  SourceRecord record = sample_record();
  for (auto& v : record.components) v.coordinates.clear();  // then versions 1 and 2 differ in their first byte only
  Options o;
  o.zstd = false;
  o.source = encode_source_record(record);
  const auto stream = compress(storm_like(), o);
  ASSERT_TRUE(stream.ok()) << stream.status().to_string();
  EXPECT_EQ(stream->at(4), detail::kFormatVersionCompactSource);
  ASSERT_TRUE(decompress(stream.value()).ok());
  Bytes v1 = o.source;
  v1[0] = 1;
  ASSERT_TRUE(decode_source_record(v1).ok());
  const Bytes old_record = with_record(stream.value(), v1);
  for (const auto& r : {decompress(old_record).status(), stream_source(old_record).status()}) {
    EXPECT_EQ(r.code(), Code::corrupt_stream) << r.to_string();
    EXPECT_NE(r.message().find("a record of version 1 in a stream of format version 19"), std::string::npos)
        << r.to_string();
  }
  // The same record of version 1 in a version 18 stream is one an earlier build wrote: read.
  const Bytes v18 = testing::relabelled(old_record, 18);
  ASSERT_TRUE(decompress(v18).ok());
  auto read = stream_source(v18);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ((*read)->version, 1);
  const Bytes v2_in_18 = testing::relabelled(stream.value(), 18);
  EXPECT_NE(decompress(v2_in_18).status().message().find("a record of version 2 in a stream of format version 18"),
            std::string::npos);
}

// A record with auxiliary variables makes a version 20 stream (record version 3), in every
// mode, with the values of the stream without it (version 23 where the zstd stage keeps the
// exact values byte-shuffled: the record names its own version there); versions 19 and 20
// hold records of their own version only; damage is refused without a crash.
TEST(SourceSection, AuxiliariesMakeAVersion20Stream) {
  for (Mode mode : {Mode::none, Mode::block, Mode::speculative}) {
    SCOPED_TRACE(mode_name(mode));
    Options o;
    o.mode = mode;
    o.zstd = mode != Mode::none;
    const auto without = compress(storm_like(), o);
    ASSERT_TRUE(without.ok());
    const SourceRecord record = with_auxiliaries(sample_record());
    o.source = encode_source_record(record);
    const auto with = compress(storm_like(), o);
    ASSERT_TRUE(with.ok()) << with.status().to_string();
    expect_record_stream(with.value(), without.value(), record);
    const auto a = decompress(without.value()), b = decompress(with.value());
    ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
    EXPECT_EQ(a->u, b->u);
    EXPECT_EQ(a->v, b->v);
    auto parsed = detail::parse_container(with.value());
    ASSERT_TRUE(parsed.ok());
    const std::string info = detail::describe_container(parsed.value());
    const uint16_t version = testing::expected_compact_version(with.value(), 20);
    EXPECT_TRUE(version == 20 || mode != Mode::none) << "mode none is written without the zstd stage here";
    EXPECT_NE(info.find("format version " + std::to_string(version)), std::string::npos) << info;
    if (mode == Mode::none) {
      // The record's version is the stream's: 3 in 20, 2 in 19.
      Bytes as19 = with.value();
      as19[4] = 19;
      testing::reseal_compact(as19);
      EXPECT_NE(decompress(as19).status().message().find("a record of version 3 in a stream of format version 19"),
                std::string::npos)
          << decompress(as19).status().to_string();
      Options p = o;
      p.source = encode_source_record(sample_record());
      auto v19 = compress(storm_like(), p);
      ASSERT_TRUE(v19.ok());
      ASSERT_EQ(v19->at(4), 19);
      const Bytes as20 = testing::relabelled(v19.value(), 20);
      EXPECT_NE(decompress(as20).status().message().find("a record of version 2 in a stream of format version 20"),
                std::string::npos)
          << decompress(as20).status().to_string();
      // Without a source section, version 20 is corrupt.
      EXPECT_EQ(decompress(testing::relabelled(without.value(), 20)).status().code(), Code::corrupt_stream);
      testing::expect_damage_refused(with.value(), [](const Bytes& s) { return decompress(s).status(); });
    }
  }
}

TEST(SourceSection, ThreeDStreamsWithAuxiliariesAreVersion20) {
  VectorField3D f = testing::abc_flow(12, 10, 6);
  Options o;
  o.mode = Mode::speculative;
  o.bound_mode = BoundMode::rel;
  o.bound = 1e-3;
  const auto without = compress(f, o);
  ASSERT_TRUE(without.ok());
  const SourceRecord record = with_auxiliaries(record_of({"U", "V", "W"}, {6, 10, 12}));
  o.source = encode_source_record(record);
  const auto with = compress(f, o);
  ASSERT_TRUE(with.ok()) << with.status().to_string();
  expect_record_stream(with.value(), without.value(), record);
}

// Cell bounds over a dimension of their own: a record of version 4, a stream of version 21 in
// every mode and dimension; the record's version is the stream's.
TEST(SourceSection, OwnDimensionsMakeAVersion21Stream) {
  for (Mode mode : {Mode::none, Mode::speculative}) {
    SCOPED_TRACE(mode_name(mode));
    Options o;
    o.mode = mode;
    const auto without = compress(storm_like(), o);
    ASSERT_TRUE(without.ok());
    const SourceRecord record = with_bounds(sample_record());
    o.source = encode_source_record(record);
    const auto with = compress(storm_like(), o);
    ASSERT_TRUE(with.ok()) << with.status().to_string();
    expect_record_stream(with.value(), without.value(), record);
    const Bytes as20 = testing::relabelled(with.value(), 20);
    EXPECT_NE(decompress(as20).status().message().find("a record of version 4 in a stream of format version 20"),
              std::string::npos)
        << decompress(as20).status().to_string();
    EXPECT_EQ(decompress(testing::relabelled(without.value(), 21)).status().code(), Code::corrupt_stream);
    if (mode == Mode::none)
      testing::expect_damage_refused(with.value(), [](const Bytes& s) { return decompress(s).status(); });
  }
  VectorField3D f = testing::abc_flow(12, 10, 6);
  Options o;
  const auto without = compress(f, o);
  const SourceRecord record = with_bounds(record_of({"U", "V", "W"}, {6, 10, 12}));
  o.source = encode_source_record(record);
  const auto with = compress(f, o);
  ASSERT_TRUE(without.ok() && with.ok()) << with.status().to_string();
  expect_record_stream(with.value(), without.value(), record);
}

// ---- 3D vector streams (format version 19; scalar streams: tests/scalar/test_scalar_source.cpp) ----

TEST(SourceSection, ThreeDVectorStreamsCarryItInVersion19) {
  for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
    for (bool masked : {false, true}) {
      SCOPED_TRACE(std::string(mode_name(mode)) + (masked ? " masked" : ""));
      VectorField3D f = testing::abc_flow(12, 10, 6);
      if (masked) f.w[9] = std::nanf("");
      Options o;
      o.mode = mode;
      o.bound_mode = BoundMode::rel;
      o.bound = 1e-3;
      const auto without = compress(f, o);
      ASSERT_TRUE(without.ok()) << without.status().to_string();
      const SourceRecord record = record_of({"U", "V", "W"}, {6, 10, 12});
      o.source = encode_source_record(record);
      const auto with = compress(f, o);
      ASSERT_TRUE(with.ok()) << with.status().to_string();
      expect_record_stream(with.value(), without.value(), record);
      const auto a = decompress3d(without.value()), b = decompress3d(with.value());
      ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
      if (masked)  // damaged: refused, never a crash
        testing::expect_damage_refused(with.value(), [](const Bytes& s) { return decompress3d(s).status(); });
      EXPECT_EQ(0, std::memcmp(a->u.data(), b->u.data(), a->u.size() * 4));
      EXPECT_EQ(0, std::memcmp(a->w.data(), b->w.data(), a->w.size() * 4));  // bits: the NaN too
    }
}

TEST(SourceSection, ARecordOfAnother3DFieldIsRefused) {
  Options o;
  o.source = encode_source_record(record_of({"U", "V", "W"}, {6, 10, 11}));
  auto r = compress(testing::abc_flow(12, 10, 6), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("Options::source"), std::string::npos) << r.status().to_string();
  o.source = encode_source_record(record_of({"U", "V"}, {6, 10, 12}));
  EXPECT_EQ(compress(testing::abc_flow(12, 10, 6), o).status().code(), Code::invalid_argument);
}

}  // namespace
}  // namespace factz
