// libFuzzer target: factz::decompress / decompress64 (and decompress_into / stream_info /
// stream_dims), the 3D decoders
// (decompress3d / decompress3d64 / stream_dims3d / stream_dtype3d) and, where built, the
// scalar decoder on arbitrary bytes. docs/format.md, "Decoding untrusted input": whatever the bytes, the decoder
// returns a value (corrupt_stream / unsupported_version) or a field of the declared size;
// it never crashes, reads out of bounds, hangs, throws or allocates for a size field alone.
//
// Every input is tried twice: as given (the container checks), and "resealed", with every
// checksum recomputed where the layout allows, so that mutations reach the mode decoders
// (huffman, varint lists, tile bounds) instead of stopping at a CRC mismatch.
//
// Build and run: see tests/fuzz/CMakeLists.txt.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/factz.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "support/compact_places.hpp"
#ifdef FACTZ_FUZZ_SCALAR
#include "factz/scalar.hpp"
#endif

namespace {

// Streams declaring more values than this are checked only up to the container (stream_dims):
// decoding them needs output planes that libFuzzer's -malloc_limit_mb reports as an
// out-of-memory crash. Tests cover huge declared grids (StreamRobustness.HugeDeclared*);
// set the environment variable FACTZ_FUZZ_MAX_VALUES to raise the cap.
constexpr uint64_t kDefaultMaxValues = uint64_t{1} << 22;

uint64_t max_values() {
  static const uint64_t kMax = [] {
    const char* env = std::getenv("FACTZ_FUZZ_MAX_VALUES");
    return env ? std::strtoull(env, nullptr, 10) : kDefaultMaxValues;
  }();
  return kMax;
}

uint64_t get_le(const std::vector<uint8_t>& s, size_t off, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{s[off + i]} << (8 * i);
  return v;
}
void put_le(std::vector<uint8_t>& s, size_t off, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s[off + i] = uint8_t(v >> (8 * i));
}
uint32_t crc(const std::vector<uint8_t>& s, size_t off, size_t n) {
  return factz::detail::crc32c(std::span<const uint8_t>(s.data() + off, n));
}

// Recomputes section, table entry and header checksums (layout of docs/format.md; the
// compact container's through support/compact_places.hpp).
void reseal(std::vector<uint8_t>& s) {
  if (factz::testing::is_compact(s)) {
    factz::testing::reseal_compact(s);
    return;
  }
  constexpr size_t kHeader = 64, kEntry = 40;
  if (s.size() < kHeader) return;
  const uint64_t count = std::min<uint64_t>(get_le(s, 56, 4), (s.size() - kHeader) / kEntry);
  for (size_t i = 0; i < count; ++i) {
    const size_t e = kHeader + kEntry * i;
    const uint64_t off = get_le(s, e + 8, 8), stored = get_le(s, e + 16, 8);
    if (off <= s.size() && stored <= s.size() - off) put_le(s, e + 32, crc(s, off, stored), 4);
    put_le(s, e + 36, crc(s, e, 36), 4);
  }
  put_le(s, 60, crc(s, 0, 60), 4);
}

#ifdef FACTZ_FUZZ_SCALAR
// The scalar decoder on the same bytes: a verdict of its own, never a crash; a vector stream
// given to it is a caller error (invalid_argument), anything else untrusted is corrupt or
// of another version.
void check_scalar(std::span<const uint8_t> in) {
  // The grid the header declares (docs/format.md, "Header"): above max_values() only the
  // vector checks' container verdict applies, as for the vector decoders (a valid stream
  // of a huge constant field is a few bytes, and its planes are what it asks for).
  if (in.size() >= 6 && __builtin_memcmp(in.data(), "FCTZ", 4) == 0 &&
      (factz::testing::is_compact(in) || in.size() >= 64)) {
    uint64_t nx = 0, ny = 0, nz = 0;
    if (factz::testing::is_compact(in)) {
      const factz::testing::CompactPlaces c = factz::testing::compact_places(in);
      nx = c.nx, ny = c.ny, nz = c.nz;
    } else {
      const std::vector<uint8_t> head(in.begin(), in.begin() + 64);
      nx = get_le(head, 12, 8), ny = get_le(head, 20, 8), nz = get_le(head, 28, 8);
    }
    const uint64_t cap = max_values();
    if (nx > cap || ny > cap || nz > cap || (nx && ny > cap / nx) || (nx * ny && nz > cap / (nx * ny))) return;
  }
  auto r = factz::decompress_scalar(in, factz::DecompressOptions{factz::Policy::serial, 1});
  if (r.ok()) {
    const auto& f = r.value();
    if (f.nx <= 0 || f.ny <= 0 || f.nz <= 0 || f.values.size() != uint64_t(f.size())) __builtin_trap();
  } else if (r.status().code() != factz::Code::corrupt_stream &&
             r.status().code() != factz::Code::unsupported_version &&
             r.status().code() != factz::Code::invalid_argument) {
    __builtin_trap();
  }
}
#endif

bool untrusted_verdict(const factz::Status& s) {
  return s.code() == factz::Code::corrupt_stream || s.code() == factz::Code::unsupported_version;
}

// The 3D decoders: stream_dims3d and stream_dtype3d agree; the decoder of the stream's type
// gives a field of the declared size or an untrusted-bytes verdict; the other one refuses
// the type (invalid_argument) whenever the stream parses. A stream stream_dims3d rejects
// (a 2D stream, garbage) fails in both decoders.
template <class Field>
void check_field3d(const factz::Result<Field>& r, int64_t nx, int64_t ny, int64_t nz, uint64_t n) {
  if (!r.ok()) return;
  const auto& f = r.value();
  if (f.nx != nx || f.ny != ny || f.nz != nz || f.u.size() != n || f.v.size() != n || f.w.size() != n)
    __builtin_trap();
}

/// Fields of at least this many values are decoded on two threads too: their last levels'
/// phases have enough targets for the readers' team to share them.
constexpr uint64_t kSharedDecodeValues = uint64_t{1} << 16;

void check3d(std::span<const uint8_t> in) {
  const factz::DecompressOptions serial{factz::Policy::serial, 1};
  auto dims = factz::stream_dims3d(in);
  auto dtype = factz::stream_dtype3d(in);
  if (dims.ok() != dtype.ok()) __builtin_trap();
  if (!dims.ok()) {
    if (factz::decompress3d(in, serial).ok() || factz::decompress3d64(in, serial).ok()) __builtin_trap();
    return;
  }
  const auto [nx, ny, nz] = dims.value();
  if (nx <= 0 || ny <= 0 || nz <= 0) __builtin_trap();
  const uint64_t n = uint64_t(nx) * uint64_t(ny) * uint64_t(nz);
  if (n > max_values()) return;
  const bool f64 = dtype.value() == factz::DType::float64;
  auto r32 = factz::decompress3d(in, serial);
  auto r64 = factz::decompress3d64(in, serial);
  check_field3d(r32, nx, ny, nz, n);
  check_field3d(r64, nx, ny, nz, n);
  if (n >= kSharedDecodeValues && !f64) {  // two threads: the same verdict and bits
    auto two = factz::decompress3d(in, factz::DecompressOptions{factz::Policy::omp, 2});
    if (two.ok() != r32.ok()) __builtin_trap();
    if (two.ok() && (__builtin_memcmp(two->u.data(), r32->u.data(), n * sizeof(float)) != 0 ||
                     __builtin_memcmp(two->v.data(), r32->v.data(), n * sizeof(float)) != 0 ||
                     __builtin_memcmp(two->w.data(), r32->w.data(), n * sizeof(float)) != 0))
      __builtin_trap();
  }
  const factz::Status& mine = f64 ? r64.status() : r32.status();
  const factz::Status& other = f64 ? r32.status() : r64.status();
  if (!mine.ok() && !untrusted_verdict(mine)) __builtin_trap();
  if (other.code() != factz::Code::invalid_argument) __builtin_trap();
}

// Multi-block files (docs/multiblock.md): the index parser and the whole-file decoders of
// both types and both dimensions. A verdict, never a crash: corrupt / unsupported for bad
// bytes, invalid_argument for a file of the other type or dimension; a decoded field has
// the index's grid. Files whose index declares more than max_values() values are only parsed.
template <class Field>
void check_multiblock_field(const factz::Result<Field>& r, int64_t nx, int64_t ny, int64_t nz) {
  if (r.ok()) {
    const uint64_t n = uint64_t(nx) * uint64_t(ny) * uint64_t(nz);
    const auto& f = r.value();
    if (f.nx != nx || f.ny != ny || f.u.size() != n || f.v.size() != n) __builtin_trap();
  } else if (!untrusted_verdict(r.status()) && r.status().code() != factz::Code::invalid_argument) {
    __builtin_trap();
  }
}

/// The source record of a parsed file (versions 5 to 8): read back (present exactly when the
/// index says so) or an untrusted-bytes verdict; whether it reads.
template <class Index>
bool check_multiblock_source(std::span<const uint8_t> in, const Index& idx) {
  auto source = factz::multiblock_source(in);
  if (!source.ok()) {
    if (!untrusted_verdict(source.status())) __builtin_trap();
    return false;
  }
  if (source->has_value() != idx.has_source) __builtin_trap();
  return true;
}

void check_multiblock(std::span<const uint8_t> in) {
  if (in.size() < 4 || __builtin_memcmp(in.data(), "FZMB", 4) != 0) return;
  const factz::DecompressOptions serial{factz::Policy::serial, 1};
  if (factz::is_multiblock3d(in)) {
    auto idx = factz::parse_multiblock3d_index(in, in.size());
    if (!idx.ok()) {
      if (factz::decompress_multiblock3d(in, serial).ok() || factz::decompress_multiblock3d64(in, serial).ok())
        __builtin_trap();
      return;
    }
    const auto& L = idx.value().layout;
    const bool record = check_multiblock_source(in, idx.value());
    if (uint64_t(L.nx) * uint64_t(L.ny) * uint64_t(L.nz) > max_values()) return;
    const auto f32 = factz::decompress_multiblock3d(in, serial);
    const auto f64 = factz::decompress_multiblock3d64(in, serial);
    if ((f32.ok() || f64.ok()) && !record) __builtin_trap();  // a damaged record fails the whole file
    check_multiblock_field(f32, L.nx, L.ny, L.nz);
    check_multiblock_field(f64, L.nx, L.ny, L.nz);
    return;
  }
  auto idx = factz::parse_multiblock_index(in, in.size());
  if (!idx.ok()) {
    if (factz::decompress_multiblock(in, serial).ok() || factz::decompress_multiblock64(in, serial).ok())
      __builtin_trap();
    return;
  }
  const auto& L = idx.value().layout;
  const bool record = check_multiblock_source(in, idx.value());
  if (uint64_t(L.nx) * uint64_t(L.ny) > max_values()) return;
  const auto f32 = factz::decompress_multiblock(in, serial);
  const auto f64 = factz::decompress_multiblock64(in, serial);
  if ((f32.ok() || f64.ok()) && !record) __builtin_trap();  // a damaged record fails the whole file
  check_multiblock_field(f32, L.nx, L.ny, 1);
  check_multiblock_field(f64, L.nx, L.ny, 1);
}

// One 2D decoder (float32 or float64) on a stream whose grid stream_info gave: a field of
// that size or an untrusted-bytes verdict, and decompress_into (with and without the mask)
// the same verdict and the same bits.
template <class T, class Decode>
void check_field2d(std::span<const uint8_t> in, int64_t nx, int64_t ny, uint64_t n, Decode decode) {
  const factz::DecompressOptions serial{factz::Policy::serial, 1};
  auto r = decode(in, serial);
  if (r.ok()) {
    const auto& f = r.value();
    if (f.nx != nx || f.ny != ny || f.u.size() != n || f.v.size() != n) __builtin_trap();
  } else if (!untrusted_verdict(r.status())) {
    __builtin_trap();  // untrusted bytes must not look like a caller error
  }
  // decompress_into is the same decoder writing into caller planes: same verdict, same values.
  std::vector<T> u(n), v(n);
  std::vector<uint8_t> mask(n);
  const factz::Status s = factz::decompress_into(in, std::span<T>(u), std::span<T>(v), serial);
  if (s.ok() != r.ok()) __builtin_trap();
  const factz::Status sm = factz::decompress_into(in, std::span<T>(u), std::span<T>(v), std::span<uint8_t>(mask), serial);
  if (sm.ok() != r.ok()) __builtin_trap();
  if (!s.ok()) return;
  // Equal bit patterns are required; compare as bytes so NaN payloads count too.
  if (__builtin_memcmp(u.data(), r.value().u.data(), n * sizeof(T)) != 0 ||
      __builtin_memcmp(v.data(), r.value().v.data(), n * sizeof(T)) != 0)
    __builtin_trap();
  // On fields large enough for the readers' team to share phases (util/phase_team.hpp):
  // two threads give the same verdict and the same bits.
  if (n >= kSharedDecodeValues) {
    auto r2 = decode(in, factz::DecompressOptions{factz::Policy::omp, 2});
    if (!r2.ok() || __builtin_memcmp(r2.value().u.data(), u.data(), n * sizeof(T)) != 0 ||
        __builtin_memcmp(r2.value().v.data(), v.data(), n * sizeof(T)) != 0)
      __builtin_trap();
  }
}

// The 2D decoders: the one of the stream's type (stream_info) gives a field of the declared
// size or an untrusted-bytes verdict, the other refuses the type (invalid_argument); a
// stream stream_info rejects fails in both.
void check(std::span<const uint8_t> in) {
#ifdef FACTZ_FUZZ_SCALAR
  check_scalar(in);
#endif
  check3d(in);
  check_multiblock(in);
  const factz::DecompressOptions serial{factz::Policy::serial, 1};
  auto info = factz::stream_info(in);
  auto dims = factz::stream_dims(in);
  if (info.ok() != dims.ok()) __builtin_trap();
  if (!info.ok()) {
    // The container rejects it, so both decoders must too.
    if (factz::decompress(in, serial).ok() || factz::decompress64(in, serial).ok()) __builtin_trap();
    return;
  }
  const int64_t nx = info.value().nx, ny = info.value().ny;
  if (nx <= 0 || ny <= 0 || dims.value().first != nx || dims.value().second != ny) __builtin_trap();
  const uint64_t n = uint64_t(nx) * uint64_t(ny);
  if (n > max_values()) return;
  const bool f64 = info.value().dtype == factz::DType::float64;
  const auto d32 = [](std::span<const uint8_t> s, const factz::DecompressOptions& o) { return factz::decompress(s, o); };
  const auto d64 = [](std::span<const uint8_t> s, const factz::DecompressOptions& o) { return factz::decompress64(s, o); };
  if (f64) {
    check_field2d<double>(in, nx, ny, n, d64);
    if (factz::decompress(in, serial).status().code() != factz::Code::invalid_argument) __builtin_trap();
  } else {
    check_field2d<float>(in, nx, ny, n, d32);
    if (factz::decompress64(in, serial).status().code() != factz::Code::invalid_argument) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  check(in);
  if (size >= 26) {
    std::vector<uint8_t> resealed(data, data + size);
    reseal(resealed);
    check(resealed);
  }
  // A valid stream in the other container too (the seeds are classic golden streams; what
  // compress writes is compact), so that mutations reach both parsers.
  using factz::detail::ContainerLayout;
  const auto other = factz::detail::recontain(
      in, factz::testing::is_compact(in) ? ContainerLayout::classic : ContainerLayout::compact);
  if (other.ok()) check(other.value());
  return 0;
}
