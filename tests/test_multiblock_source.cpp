// The source record of a multi-block file (format versions 5 to 8, docs/format.md "The source
// record of a multi-block file"): the whole field's record after the last block, the blocks
// byte for byte those of the file without it, read back by multiblock_source and
// read_multiblock_source, refused when damaged; and window_of_source_record, which cuts a
// record to a region (decompress --region).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "format/crc32.hpp"
#include "support/fields3d.hpp"
#include "support/source_records.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

using testing::Bytes;
using testing::expect_same;
using testing::record_of;
using testing::with_auxiliaries;

VectorField2D field2d(int64_t nx, int64_t ny) {
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      f.u.push_back(float(std::sin(0.37 * double(x)) * std::cos(0.29 * double(y)) + 0.01 * double((x * 7 + y * 3) % 5)));
      f.v.push_back(float(-std::cos(0.37 * double(x)) * std::sin(0.29 * double(y)) + 0.2 * std::cos(0.17 * double(2 * x - y))));
    }
  return f;
}
VectorField2D64 widen2d(const VectorField2D& f) {
  VectorField2D64 g;
  g.nx = f.nx;
  g.ny = f.ny;
  g.u.assign(f.u.begin(), f.u.end());
  g.v.assign(f.v.begin(), f.v.end());
  return g;
}

uint16_t version_of(const Bytes& file) { return uint16_t(file[4] | file[5] << 8); }

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

Options options(Mode mode) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = 1e-2;
  return o;
}

/// The header and index size of a 2D or 3D file.
uint64_t index_bytes(const Bytes& file) {
  return is_multiblock3d(file) ? parse_multiblock3d_index(file, 0)->header_bytes
                               : parse_multiblock_index(file, 0)->header_bytes;
}

/// What every file with a record must be, against the same file without it: the version 4
/// higher, the same blocks byte for byte, the trailer last, the record read back, the same
/// values decoded (`same_values(with, without)`), from memory and from a file.
template <class SameValues>
void expect_source_file(const Bytes& with, const Bytes& without, const SourceRecord& record, SameValues&& same_values) {
  EXPECT_EQ(version_of(with), version_of(without) + 4);
  const uint64_t head = index_bytes(without);
  ASSERT_EQ(index_bytes(with), head);
  ASSERT_GT(with.size(), without.size());
  EXPECT_TRUE(std::equal(without.begin() + std::ptrdiff_t(head), without.end(), with.begin() + std::ptrdiff_t(head)))
      << "the blocks must be the file's without a record";
  // The header differs only in its version and checksums, the index not at all.
  for (size_t k = 0; k < size_t(head); ++k) {
    const bool version = k == 4, checksum = (k >= 44 && k < 48) || (is_multiblock3d(with) && k >= 60 && k < 64);
    if (!version && !checksum) {
      EXPECT_EQ(with[k], without[k]) << "header byte " << k;
    }
  }
  auto got = multiblock_source(with);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_TRUE(got->has_value());
  expect_same(**got, record);
  auto none = multiblock_source(without);
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_FALSE(none->has_value());
  same_values(with, without);

  testing::TempDir dir;
  const std::string path = (dir.path() / "f.fzmb").string(), plain = (dir.path() / "p.fzmb").string();
  write_file(path, with);
  write_file(plain, without);
  auto read = read_multiblock_source(path);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  ASSERT_TRUE(read->has_value());
  expect_same(**read, record);
  auto read_none = read_multiblock_source(plain);
  ASSERT_TRUE(read_none.ok() && !read_none->has_value());
  // A prefix without the file's size: the record is known to be there, not its length.
  auto indexes = [&](auto parse) {
    auto ix = parse(std::span<const uint8_t>(with).first(size_t(head)), 0);
    ASSERT_TRUE(ix.ok()) << ix.status().to_string();
    EXPECT_TRUE(ix->has_source);
    EXPECT_EQ(ix->source_bytes, 0u);
    auto full = parse(std::span<const uint8_t>(with), with.size());
    ASSERT_TRUE(full.ok());
    EXPECT_EQ(full->file_bytes, with.size());
    EXPECT_EQ(full->blocks_end, without.size());
    EXPECT_EQ(full->source_bytes + 13, with.size() - without.size());
  };
  if (is_multiblock3d(with))
    indexes([](std::span<const uint8_t> b, uint64_t n) { return parse_multiblock3d_index(b, n); });
  else
    indexes([](std::span<const uint8_t> b, uint64_t n) { return parse_multiblock_index(b, n); });
}

template <class Field>
void expect_same_planes(const Field& a, const Field& b) {
  ASSERT_EQ(a.u.size(), b.u.size());
  EXPECT_EQ(0, std::memcmp(a.u.data(), b.u.data(), a.u.size() * sizeof(a.u[0])));
  EXPECT_EQ(0, std::memcmp(a.v.data(), b.v.data(), a.v.size() * sizeof(a.v[0])));
  if constexpr (requires { a.w; }) {
    EXPECT_EQ(0, std::memcmp(a.w.data(), b.w.data(), a.w.size() * sizeof(a.w[0])));
  }
  EXPECT_EQ(a.mask, b.mask);
}

/// expect_source_file's check that both files decode (by `decode`) to the same values.
template <class Decode>
auto same_values_by(Decode decode) {
  return [decode](const Bytes& a, const Bytes& b) {
    auto da = decode(a), db = decode(b);
    ASSERT_TRUE(da.ok() && db.ok()) << da.status().to_string();
    expect_same_planes(*da, *db);
  };
}

TEST(MultiBlockSource, TwoDimensionalFilesKeepTheRecordAfterTheLastBlock) {
  const VectorField2D f = field2d(23, 17);
  for (const SourceRecord& record : {record_of({"U", "V"}, {17, 23}), with_auxiliaries(record_of({"U", "V"}, {17, 23}))})
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
      for (bool zstd : {true, false}) {
        SCOPED_TRACE(std::string(mode_name(mode)) + (zstd ? " zstd" : " no zstd") +
                     (record.auxiliaries.empty() ? "" : " auxiliaries"));
        Options o = options(mode);
        o.zstd = zstd;
        auto without = compress_multiblock(f, o, 2, 3);
        ASSERT_TRUE(without.ok()) << without.status().to_string();
        o.source = encode_source_record(record);
        auto with = compress_multiblock(f, o, 2, 3);
        ASSERT_TRUE(with.ok()) << with.status().to_string();
        EXPECT_EQ(version_of(*with), 5);
        // zstd only where it is asked for (and shorter): byte 8 of the trailer.
        if (!zstd) {
          EXPECT_EQ((*with)[without->size() + 8], 0);
        }
        expect_source_file(*with, *without, record, same_values_by([](const Bytes& b) { return decompress_multiblock(b); }));
        // float64: version 6.
        Options o64 = options(mode);
        o64.zstd = zstd;
        auto without64 = compress_multiblock(widen2d(f), o64, 3, 2);
        o64.source = o.source;
        auto with64 = compress_multiblock(widen2d(f), o64, 3, 2);
        ASSERT_TRUE(without64.ok() && with64.ok()) << with64.status().to_string();
        EXPECT_EQ(version_of(*with64), 6);
        expect_source_file(*with64, *without64, record, same_values_by([](const Bytes& b) { return decompress_multiblock64(b); }));
      }
}

TEST(MultiBlockSource, ThreeDimensionalFilesKeepTheRecordAfterTheLastBlock) {
  const VectorField3D f = testing::random_modes(9, 8, 7, 5);
  for (const SourceRecord& record :
       {record_of({"U", "V", "W"}, {7, 8, 9}), with_auxiliaries(record_of({"U", "V", "W"}, {7, 8, 9}))})
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative}) {
      SCOPED_TRACE(std::string(mode_name(mode)) + (record.auxiliaries.empty() ? "" : " auxiliaries"));
      Options o = options(mode);
      auto without = compress_multiblock(f, o, 2, 1, 2);
      o.source = encode_source_record(record);
      auto with = compress_multiblock(f, o, 2, 1, 2);
      ASSERT_TRUE(without.ok() && with.ok()) << with.status().to_string();
      EXPECT_EQ(version_of(*with), 7);
      EXPECT_TRUE(is_multiblock3d(*with));
      expect_source_file(*with, *without, record, same_values_by([](const Bytes& b) { return decompress_multiblock3d(b); }));
      // The 2D reader names the 3D one, for the new versions too.
      auto as2d = parse_multiblock_index(*with, with->size());
      EXPECT_EQ(as2d.status().code(), Code::unsupported_version);
      EXPECT_NE(as2d.status().message().find("version 7 holds a 3D vector field"), std::string::npos)
          << as2d.status().message();
      Options o64 = options(mode);
      auto without64 = compress_multiblock(testing::widen(f), o64, 1, 2, 2);
      o64.source = o.source;
      auto with64 = compress_multiblock(testing::widen(f), o64, 1, 2, 2);
      ASSERT_TRUE(without64.ok() && with64.ok()) << with64.status().to_string();
      EXPECT_EQ(version_of(*with64), 8);
      expect_source_file(*with64, *without64, record, same_values_by([](const Bytes& b) { return decompress_multiblock3d64(b); }));
    }
}

TEST(MultiBlockSource, ARecordOfAnotherFieldIsRefused) {
  const VectorField2D f = field2d(23, 17);
  Options o = options(Mode::speculative);
  for (const SourceRecord& wrong : {record_of({"U", "V"}, {17, 22}), record_of({"U", "V", "W"}, {17, 23}),
                                    record_of({"U", "V"}, {23, 17})}) {
    o.source = encode_source_record(wrong);
    auto r = compress_multiblock(f, o, 2, 2);
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_NE(r.status().message().find("Options::source"), std::string::npos) << r.status().message();
  }
  o.source = {1, 2, 3};  // not a record
  EXPECT_EQ(compress_multiblock(f, o, 2, 2).status().code(), Code::invalid_argument);
  const VectorField3D g = testing::random_modes(9, 8, 7, 5);
  o.source = encode_source_record(record_of({"U", "V", "W"}, {7, 9, 8}));
  EXPECT_EQ(compress_multiblock(g, o, 2, 1, 2).status().code(), Code::invalid_argument);
  // compress_block of a file's block never stores the whole field's record.
  o.source = encode_source_record(record_of({"U", "V"}, {17, 23}));
  auto L = make_block_layout(23, 17, 2, 2);
  ASSERT_TRUE(L.ok());
  auto block = compress_block(extract_block(f, L->blocks[0]), *L, 0, o, 0.01);
  ASSERT_TRUE(block.ok()) << block.status().to_string();
  auto plain = stream_source(*block);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->has_value());
}

/// Every truncation, every byte of the trailer flipped, and the trailer resealed with each of
/// its bytes changed: refused (or, for a record that still decodes and fits, read), never a
/// crash; a record version on a file without a record, and the reverse, refused.
TEST(MultiBlockSource, DamagedTrailersAreRefusedNeverACrash) {
  const VectorField2D f = field2d(15, 12);
  Options o = options(Mode::speculative);
  auto without = compress_multiblock(f, o, 2, 2);
  const SourceRecord record = with_auxiliaries(record_of({"U", "V"}, {12, 15}));
  o.source = encode_source_record(record);
  auto with = compress_multiblock(f, o, 2, 2);
  ASSERT_TRUE(without.ok() && with.ok());
  const Bytes& file = *with;
  const size_t end = without->size();
  for (size_t n = 0; n < file.size(); ++n) {
    const Bytes cut(file.begin(), file.begin() + std::ptrdiff_t(n));
    auto s = multiblock_source(cut);
    EXPECT_FALSE(s.ok()) << "cut at " << n;
    if (n >= end) {
      EXPECT_EQ(s.status().code(), Code::corrupt_stream) << n;
    }
    EXPECT_FALSE(decompress_multiblock(cut).ok()) << n;
  }
  for (size_t k = end; k < file.size(); ++k)
    for (uint8_t bit : {uint8_t(1), uint8_t(0x80)}) {
      Bytes bad = file;
      bad[k] ^= bit;
      auto s = multiblock_source(bad);
      EXPECT_EQ(s.status().code(), Code::corrupt_stream) << "byte " << k;
      // The whole file in memory is refused as a stream with a damaged section is; a region
      // reads only the blocks it needs.
      EXPECT_EQ(decompress_multiblock(bad).status().code(), Code::corrupt_stream) << k;
    }
  int read_back = 0;
  for (size_t k = end; k + 4 < file.size(); ++k) {
    Bytes bad = file;
    bad[k] ^= 0x5A;
    const uint32_t crc = detail::crc32c(std::span<const uint8_t>(bad).subspan(end, bad.size() - 4 - end));
    for (int b = 0; b < 4; ++b) bad[bad.size() - 4 + size_t(b)] = uint8_t(crc >> (8 * b));
    auto s = multiblock_source(bad);  // a corrupt record, or one that still fits: never a crash
    if (s.ok()) ++read_back;
    else EXPECT_EQ(s.status().code(), Code::corrupt_stream) << k;
  }
  EXPECT_LT(read_back, int(file.size() - end)) << "most changed records must be refused";
  // The header's version alone changed (checksum recomputed): a trailer that is not there, or
  // one that is not announced.
  auto reversion = [](Bytes b, uint16_t v) {
    b[4] = uint8_t(v);
    b[5] = uint8_t(v >> 8);
    const uint32_t crc = detail::crc32c(std::span<const uint8_t>(b).first(44));
    for (int k = 0; k < 4; ++k) b[44 + size_t(k)] = uint8_t(crc >> (8 * k));
    return b;
  };
  const Bytes claims = reversion(*without, 5);
  EXPECT_EQ(multiblock_source(claims).status().code(), Code::corrupt_stream);
  EXPECT_EQ(decompress_multiblock(claims).status().code(), Code::corrupt_stream);
  const Bytes hides = reversion(file, 1);
  EXPECT_EQ(parse_multiblock_index(hides, hides.size()).status().code(), Code::corrupt_stream);
  const Bytes future = reversion(file, 9);
  EXPECT_EQ(parse_multiblock_index(future, future.size()).status().code(), Code::unsupported_version);
}

TEST(MultiBlockSource, WindowsCutCoordinatesAndAuxiliaries) {
  const SourceRecord r = with_auxiliaries(testing::sample_record(5, 6));  // lat 5, lon 6
  const uint64_t first[2] = {1, 2}, count[2] = {3, 3};
  auto w = window_of_source_record(r, first, count);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  for (const auto& v : w->components) {
    EXPECT_EQ(v.dimensions[1].size, 3u);
    EXPECT_EQ(v.dimensions[2].size, 3u);
    EXPECT_EQ(v.dimensions[0].size, 3u);  // the sliced time keeps its length and index
    EXPECT_EQ(v.dimensions[0].index, std::optional<uint64_t>(1));
    ASSERT_EQ(v.coordinates.size(), 2u);
    EXPECT_EQ(v.coordinates[0].data, r.components[0].coordinates[0].data);  // time: its one value
    std::vector<float> lon(3);
    std::memcpy(lon.data(), v.coordinates[1].data.data(), 12);
    EXPECT_EQ(lon, (std::vector<float>{101.0f, 101.5f, 102.0f}));
  }
  ASSERT_EQ(w->auxiliaries.size(), 4u);
  std::vector<double> lat(9);
  ASSERT_EQ(w->auxiliaries[0].data.size(), 72u);
  std::memcpy(lat.data(), w->auxiliaries[0].data.data(), 72);
  for (uint64_t y = 0; y < 3; ++y)
    for (uint64_t x = 0; x < 3; ++x)
      EXPECT_EQ(lat[size_t(y * 3 + x)], 40.0 + 0.25 * double(y + 1) + 0.001 * double((x + 2) * (x + 2))) << y << x;
  EXPECT_EQ(w->auxiliaries[1].data, r.auxiliaries[1].data);  // crs: no dimension
  EXPECT_EQ(w->auxiliaries[2].data, r.auxiliaries[2].data);  // height over the sliced time
  EXPECT_EQ(w->auxiliaries[3].data.size(), 3u);              // label over lon
  // The window's record describes the window's field, and encodes and decodes.
  const uint64_t grid[2] = {3, 3};
  EXPECT_TRUE(check_source_record(*w, 2, grid).ok());
  auto back = decode_source_record(encode_source_record(*w));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same(*back, *w);
  // The whole field is the record itself.
  const uint64_t zero[2] = {0, 0}, all[2] = {5, 6};
  auto same = window_of_source_record(r, zero, all);
  ASSERT_TRUE(same.ok());
  expect_same(*same, r);
  // Windows that do not fit: refused.
  const uint64_t past[2] = {3, 0}, empty[2] = {0, 0};
  EXPECT_EQ(window_of_source_record(r, past, count).status().code(), Code::invalid_argument);
  EXPECT_EQ(window_of_source_record(r, zero, empty).status().code(), Code::invalid_argument);
  const uint64_t three[3] = {0, 0, 0}, three_n[3] = {1, 1, 1};
  EXPECT_EQ(window_of_source_record(r, three, three_n).status().code(), Code::invalid_argument);
  // 3D: (lev, lat, lon) cut on all three.
  const SourceRecord r3 = with_auxiliaries(record_of({"U", "V", "W"}, {4, 5, 6}));
  const uint64_t f3[3] = {1, 1, 1}, c3[3] = {2, 3, 4};
  auto w3 = window_of_source_record(r3, f3, c3);
  ASSERT_TRUE(w3.ok()) << w3.status().to_string();
  const uint64_t g3[3] = {2, 3, 4};
  EXPECT_TRUE(check_source_record(*w3, 3, g3).ok());
  EXPECT_EQ(w3->auxiliaries[0].data.size(), size_t(3 * 4 * 8));
}

}  // namespace
}  // namespace factz
