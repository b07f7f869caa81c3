// Source records for the tests of section 12 (tests/test_source_record.cpp and the scalar
// streams' tests/scalar/test_scalar_source.cpp): sample records of slices of netCDF variables,
// their field-by-field comparison, and what every scalar or 3D vector stream with a record
// must be (format version 19, or 20 with auxiliary variables). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "factz/io.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "support/compact_places.hpp"
#include "support/resealed.hpp"

namespace factz::testing {

using Bytes = std::vector<uint8_t>;

inline Bytes le_bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return Bytes(b, b + n);
}
template <class T>
Bytes values_of(std::initializer_list<T> values) {
  Bytes out;
  for (T v : values) {
    const Bytes b = le_bytes(&v, sizeof v);  // little-endian host (docs/usage.md)
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}
inline SourceAttribute text_attribute(const std::string& name, const std::string& text) {
  SourceAttribute a;
  a.name = name;
  a.type = SourceType::text;
  a.data.assign(text.begin(), text.end());
  return a;
}

/// A record of a 33 x 36 slice of a 3D variable, with every kind of attribute.
inline SourceRecord sample_record(uint64_t ny = 33, uint64_t nx = 36) {
  SourceRecord r;
  r.format = SourceFormat::netcdf4;
  r.file = "storm.nc";
  r.attributes = {text_attribute("Conventions", "CF-1.8")};
  for (const char* name : {"U", "V"}) {
    SourceVariable v;
    v.name = name;
    v.type = SourceType::float32;
    v.dimensions = {{"time", 3, true, 1}, {"lat", ny, false, std::nullopt}, {"lon", nx, false, std::nullopt}};
    SourceAttribute fill{"_FillValue", SourceType::float32, values_of<float>({1e20f}), {}};
    SourceAttribute range{"valid_range", SourceType::float64, values_of<double>({-100.0, 100.0}), {}};
    SourceAttribute flags{"flags", SourceType::int16, values_of<int16_t>({-1, 2, 3}), {}};
    SourceAttribute big{"big", SourceType::uint64, values_of<uint64_t>({~uint64_t(0)}), {}};
    SourceAttribute names{"names", SourceType::string, {}, {"a", "", "long name"}};
    v.attributes = {fill, text_attribute("units", "m s-1"), range, flags, big, names};
    SourceCoordinate time{0, "time", SourceType::float64, values_of<double>({6.0}), {text_attribute("units", "hours")}};
    SourceCoordinate lon{2, "lon", SourceType::float32, {}, {}};
    for (uint64_t k = 0; k < nx; ++k) {
      const float x = 100.0f + 0.5f * float(k);
      const Bytes b = le_bytes(&x, 4);
      lon.data.insert(lon.data.end(), b.begin(), b.end());
    }
    v.coordinates = {time, lon};
    r.components.push_back(v);
  }
  return r;
}

inline void expect_same(const SourceAttribute& a, const SourceAttribute& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type) << a.name;
  EXPECT_EQ(a.data, b.data) << a.name;
  EXPECT_EQ(a.strings, b.strings) << a.name;
}

inline void expect_same(const SourceRecord& a, const SourceRecord& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.file, b.file);
  ASSERT_EQ(a.attributes.size(), b.attributes.size());
  for (size_t k = 0; k < a.attributes.size(); ++k) expect_same(a.attributes[k], b.attributes[k]);
  ASSERT_EQ(a.components.size(), b.components.size());
  for (size_t c = 0; c < a.components.size(); ++c) {
    const auto &x = a.components[c], &y = b.components[c];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    ASSERT_EQ(x.dimensions.size(), y.dimensions.size());
    for (size_t k = 0; k < x.dimensions.size(); ++k) {
      EXPECT_EQ(x.dimensions[k].name, y.dimensions[k].name);
      EXPECT_EQ(x.dimensions[k].size, y.dimensions[k].size);
      EXPECT_EQ(x.dimensions[k].unlimited, y.dimensions[k].unlimited);
      EXPECT_EQ(x.dimensions[k].index, y.dimensions[k].index);
    }
    ASSERT_EQ(x.attributes.size(), y.attributes.size());
    for (size_t k = 0; k < x.attributes.size(); ++k) expect_same(x.attributes[k], y.attributes[k]);
    ASSERT_EQ(x.coordinates.size(), y.coordinates.size());
    for (size_t k = 0; k < x.coordinates.size(); ++k) {
      EXPECT_EQ(x.coordinates[k].dimension, y.coordinates[k].dimension);
      EXPECT_EQ(x.coordinates[k].name, y.coordinates[k].name);
      EXPECT_EQ(x.coordinates[k].type, y.coordinates[k].type);
      EXPECT_EQ(x.coordinates[k].data, y.coordinates[k].data);
      ASSERT_EQ(x.coordinates[k].attributes.size(), y.coordinates[k].attributes.size());
    }
  }
  ASSERT_EQ(a.auxiliaries.size(), b.auxiliaries.size());
  for (size_t k = 0; k < a.auxiliaries.size(); ++k) {
    const auto &x = a.auxiliaries[k], &y = b.auxiliaries[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type) << x.name;
    EXPECT_EQ(x.dimensions, y.dimensions) << x.name;
    EXPECT_EQ(x.own_dimensions, y.own_dimensions) << x.name;
    EXPECT_EQ(x.data, y.data) << x.name;
    ASSERT_EQ(x.attributes.size(), y.attributes.size()) << x.name;
    for (size_t j = 0; j < x.attributes.size(); ++j) expect_same(x.attributes[j], y.attributes[j]);
  }
}

/// `r` with auxiliary variables of every kind its components' dimensions allow: a curvilinear
/// latitude (lat, lon) in float64, a grid-mapping variable (no dimension, int32, with
/// attributes), a float32 one over the sliced time (one value) and a text one over lon.
inline SourceRecord with_auxiliaries(SourceRecord r) {
  const uint64_t ny = r.components[0].dimensions[r.components[0].dimensions.size() - 2].size;
  const uint64_t nx = r.components[0].dimensions.back().size;
  SourceAuxiliary lat{"lat2d", SourceType::float64, {"lat", "lon"}, {}, {text_attribute("units", "degrees_north")}, {}};
  for (uint64_t y = 0; y < ny; ++y)
    for (uint64_t x = 0; x < nx; ++x) {
      const double v = 40.0 + 0.25 * double(y) + 0.001 * double(x * x);
      const Bytes b = le_bytes(&v, 8);
      lat.data.insert(lat.data.end(), b.begin(), b.end());
    }
  SourceAuxiliary crs{"crs", SourceType::int32, {}, values_of<int32_t>({-2147483647}),
                      {text_attribute("grid_mapping_name", "latitude_longitude"),
                       SourceAttribute{"semi_major_axis", SourceType::float64, values_of<double>({6378137.0}), {}}},
                      {}};
  SourceAuxiliary height{"height", SourceType::float32, {"time"}, values_of<float>({10.0f}), {}, {}};
  SourceAuxiliary label{"label", SourceType::text, {"lon"}, Bytes(size_t(nx), uint8_t('x')), {}, {}};
  r.auxiliaries = {lat, crs, height, label};
  return r;
}

/// `r` with the CF cell bounds of its time (sliced: one pair) and lon coordinates, over a
/// dimension no component has (`nv`, 2 vertices per cell: record version 4).
inline SourceRecord with_bounds(SourceRecord r) {
  const uint64_t nx = r.components[0].dimensions.back().size;
  SourceAuxiliary time{"time_bnds", SourceType::float64, {"time", "nv"}, values_of<double>({3.0, 9.0}), {}, {{"nv", 2}}};
  SourceAuxiliary lon{"lon_bnds", SourceType::float32, {"lon", "nv"}, {}, {text_attribute("units", "degrees_east")},
                      {{"nv", 2}}};
  for (uint64_t k = 0; k < nx; ++k)
    for (float edge : {-0.25f, 0.25f}) {
      const float x = 100.0f + 0.5f * float(k) + edge;
      const Bytes b = le_bytes(&x, 4);
      lon.data.insert(lon.data.end(), b.begin(), b.end());
    }
  r.auxiliaries.push_back(time);
  r.auxiliaries.push_back(lon);
  return r;
}

/// A record of `names` (one per component), each a slice at time 1 of a variable whose last
/// dimensions are `whole` (outermost first: lat, lon or lev, lat, lon), with a coordinate for
/// time and for the last dimension.
inline SourceRecord record_of(const std::vector<std::string>& names, const std::vector<uint64_t>& whole) {
  SourceRecord r = sample_record(whole[whole.size() - 2], whole.back());
  const SourceVariable model = r.components[0];
  r.components.clear();
  for (const auto& name : names) {
    SourceVariable v = model;
    v.name = name;
    if (whole.size() == 3) {
      v.dimensions.insert(v.dimensions.begin() + 1, SourceDimension{"lev", whole[0], false, std::nullopt});
      v.coordinates[1].dimension = 3;  // lon moved one place in
    }
    r.components.push_back(v);
  }
  return r;
}

inline uint16_t container_version(const Bytes& s) { return uint16_t(s[4] | s[5] << 8); }

/// What every stream with a record of version 2, 3 or 4 must be: version 19, 20 with auxiliary
/// variables, 21 when one has dimensions of its own, the record read back as given, no
/// classic form, and without a record version 18.
inline void expect_record_stream(const Bytes& with, const Bytes& without, const SourceRecord& record) {
  const bool own = std::any_of(record.auxiliaries.begin(), record.auxiliaries.end(),
                               [](const SourceAuxiliary& a) { return !a.own_dimensions.empty(); });
  // A scalar stream on the interpolation predictor is version 22 with or without a record
  // (the record names its own version); the record does not change the predictor kept.
  const bool interp = detail::is_scalar_interp_version(layout_version(with));
  EXPECT_EQ(interp, detail::is_scalar_interp_version(layout_version(without)));
  // A stream with a byte-shuffled section is version 23, whose record names its own version too.
  EXPECT_EQ(container_version(with),
            testing::expected_compact_version(with, interp                       ? detail::kFormatVersionCompactInterp
                                                    : own                        ? detail::kFormatVersionCompactOwnDimensions
                                                    : record.auxiliaries.empty() ? detail::kFormatVersionCompactSource
                                                                                 : detail::kFormatVersionCompactAuxiliary));
  EXPECT_EQ(container_version(without),
            testing::expected_compact_version(without, interp ? detail::kFormatVersionCompactInterp
                                                              : detail::kFormatVersionCompact));
  EXPECT_GE(layout_version(with), detail::kFormatVersionWithSource);
  auto source = stream_source(with);
  ASSERT_TRUE(source.ok()) << source.status().to_string();
  ASSERT_TRUE(source->has_value());
  expect_same(**source, record);
  auto none = stream_source(without);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(detail::recontain(with, detail::ContainerLayout::classic).status().code(), Code::invalid_argument);
  // The same stream without the section, in version 18, is the stream written without it: the
  // record changes nothing else.
  auto parsed = detail::parse_container(with);
  ASSERT_TRUE(parsed.ok());
  std::vector<detail::Section> sections;
  for (const auto& e : parsed->entries) {
    if (e.id == detail::kSectionSource) continue;
    auto raw = detail::read_section(with, parsed.value(), e.id, &detail::zstd_stage_decompressor());
    ASSERT_TRUE(raw.ok());
    sections.push_back({e.id, raw.value(), (e.flags & detail::kSectionFlagZstd) != 0});
  }
  detail::Header h = parsed->header;
  if (h.components != 3 && h.version == detail::kFormatVersionWithSource)  // 2, or 3 with the mask
    h.version = detail::has_section(parsed.value(), detail::kSectionMask) ? detail::kFormatVersionWithMask
                                                                          : detail::kFormatVersionWithoutMask;
  auto rebuilt = detail::write_stream(h, std::move(sections));
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();
  EXPECT_EQ(rebuilt.value(), without);
}

/// A version 19 or 20 stream damaged every way a reader must survive: every truncation, every
/// single-bit flip (caught by the checksums), and every byte of the source section changed
/// with the checksums recomputed (the record then fails to decode or describes another
/// field, or still decodes: never a crash). `decode` returns the decoder's Status.
template <class Decode>
void expect_damage_refused(const Bytes& good, Decode decode) {
  ASSERT_TRUE(decode(good).ok());
  for (size_t n = 0; n < good.size(); ++n) {
    const Status st = decode(Bytes(good.begin(), good.begin() + std::ptrdiff_t(n)));
    ASSERT_FALSE(st.ok()) << "first " << n << " bytes";
    EXPECT_EQ(st.code(), Code::corrupt_stream) << n << ": " << st.to_string();
  }
  for (size_t i = 0; i < good.size(); ++i) {
    Bytes b = good;
    b[i] ^= uint8_t(1u << (i % 8));
    EXPECT_FALSE(decode(b).ok()) << "byte " << i;
  }
  auto parsed = detail::parse_container(good);
  ASSERT_TRUE(parsed.ok());
  for (const auto& e : parsed->entries) {
    if (e.id != detail::kSectionSource) continue;
    for (size_t i = 0; i < e.stored_size; ++i)
      for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
        Bytes b = good;
        b[e.offset + i] ^= mask;
        reseal_compact(b);
        const Status st = decode(b);  // must return; a changed record may still describe the field
        if (!st.ok()) {
          EXPECT_EQ(st.code(), Code::corrupt_stream) << "source byte " << i << ": " << st.to_string();
        }
      }
  }
}

}  // namespace factz::testing
