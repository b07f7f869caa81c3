// Inputs shared by the CUDA backend's tests (device tests and the CPU model's tests).
#pragma once

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "codec/ans.hpp"
#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"

namespace factz::test {

/// Every mode with every coder, absolute bound `bound` (zstd as Options' default).
inline std::vector<Options> every_mode_and_coder(double bound) {
  std::vector<Options> out;
  for (auto mode : {Mode::none, Mode::block, Mode::speculative})
    for (auto coder : {Coder::huffman, Coder::ans}) {
      Options o;
      o.mode = mode;
      o.coder = coder;
      o.bound_mode = BoundMode::abs;
      o.bound = bound;
      out.push_back(o);
    }
  return out;
}

/// The masked cases' options: every mode, coder and zstd setting at REL 1e-2 (speculative
/// with anchor stride 16, the lattice of the "anchors" mask shape), with `threads` (the
/// bytes never depend on it).
inline std::vector<Options> masked_option_sets(int threads = 0) {
  std::vector<Options> out;
  for (auto mode : {Mode::none, Mode::block, Mode::speculative})
    for (auto coder : {Coder::huffman, Coder::ans})
      for (bool zstd : {false, true}) {
        Options o;
        o.mode = mode;
        o.coder = coder;
        o.zstd = zstd;
        o.bound = 1e-2;
        o.anchor_stride = 16;
        o.threads = threads;
        out.push_back(o);
      }
  return out;
}

/// A case's options for a failure message.
inline std::string describe(const Options& o) {
  return std::string(mode_name(o.mode)) + "/" + coder_name(o.coder) + (o.zstd ? " zstd" : "") + " bound " +
         std::to_string(o.bound) + " s0 " + std::to_string(o.anchor_stride);
}

/// Symbol streams that reach every form of the ANS encoder: sizes around chunk and lane
/// boundaries, constant, sparse and rANS planes, order-1 structure, ids with a small
/// center, a sparse high plane.
inline std::vector<std::vector<uint16_t>> ans_test_streams(uint64_t seed) {
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  constexpr uint64_t kChunk = uint64_t{1} << detail::kAnsChunkLog2;
  std::vector<std::vector<uint16_t>> streams;
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{7}, uint64_t{8}, uint64_t{9}, uint64_t{31},
                     uint64_t{33}, kChunk - 1, kChunk, kChunk + 1, kChunk + 5, 2 * kChunk + 17}) {
    std::vector<uint16_t> smooth(n);
    for (auto& x : smooth) x = uint16_t(32768 + int(next() % 9) - 4);
    streams.push_back(std::move(smooth));
  }
  streams.push_back(std::vector<uint16_t>(kChunk + 3, 32768));  // constant planes
  std::vector<uint16_t> sparse(90000, 32770), runs(140001), wide(70000), ids(66000), few(3 * kChunk);
  for (int i = 0; i < 40; ++i) sparse[next() % sparse.size()] = uint16_t(32768 + 500 + next() % 100);
  for (size_t i = 0; i < runs.size(); ++i) runs[i] = uint16_t(32768 + int((i / 37) % 5) - 2);  // order-1 structure
  for (auto& x : wide) x = uint16_t(next());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = uint16_t(i % 1000 < 900 ? 30 : next() % 32);
  for (size_t i = 0; i < few.size(); ++i) few[i] = uint16_t(32768 + (next() % 64 == 0 ? 300 + int(next() % 3) : 0));
  for (auto* s : {&sparse, &runs, &wide, &ids, &few}) streams.push_back(std::move(*s));
  return streams;
}

/// Mask shapes of issue 17 on an nx x ny grid (nonzero = missing): none (a mask of zeros),
/// single vertices, a checkerboard, one-pixel-wide valid channels (columns inside land, and
/// rows), a ring on every border, the corners of 32 x 32 tiles, the anchors of stride 16, a
/// land blob reaching the right border, all but one vertex, all.
inline std::vector<std::pair<std::string, std::vector<uint8_t>>> mask_shapes(int64_t nx, int64_t ny) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  auto make = [&](auto missing) {
    std::vector<uint8_t> m(size_t(nx * ny), 0);
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) m[size_t(y * nx + x)] = missing(x, y) ? 1 : 0;
    return m;
  };
  out.emplace_back("none", make([](int64_t, int64_t) { return false; }));
  out.emplace_back("single", make([&](int64_t x, int64_t y) {
                     return (x == 5 && y == 7) || (x == nx - 1 && y == 0) || (x == nx / 2 && y == ny - 1);
                   }));
  out.emplace_back("checkerboard", make([](int64_t x, int64_t y) { return (x + y) % 2 == 0; }));
  out.emplace_back("column_channels", make([](int64_t x, int64_t y) { return x % 9 != 4 && y > 3 && y < 40; }));
  out.emplace_back("row_channels", make([](int64_t x, int64_t y) { return y % 6 != 2 && x > 10; }));
  out.emplace_back("border_ring", make([&](int64_t x, int64_t y) {
                     return x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
                   }));
  out.emplace_back("tile_corners", make([](int64_t x, int64_t y) {
                     return (x % 32 == 31 || x % 32 == 0) && (y % 32 == 31 || y % 32 == 0);
                   }));
  out.emplace_back("anchors", make([](int64_t x, int64_t y) { return x % 16 == 0 && y % 16 == 0; }));
  out.emplace_back("land", make([&](int64_t x, int64_t y) {
                     const double dx = double(x) - 0.3 * double(nx), dy = double(y) - 0.6 * double(ny);
                     return dx * dx + dy * dy < 0.08 * double(nx * ny) || x > nx - 6;
                   }));
  out.emplace_back("all_but_one", make([](int64_t x, int64_t y) { return !(x == 3 && y == 2); }));
  out.emplace_back("all", make([](int64_t, int64_t) { return true; }));
  return out;
}

/// The mask of the shape called `name` in mask_shapes(nx, ny).
inline std::vector<uint8_t> mask_shape(int64_t nx, int64_t ny, const std::string& name) {
  for (auto& [n, m] : mask_shapes(nx, ny))
    if (n == name) return m;
  return {};
}

/// How a test marks missing vertices: the caller's mask, NaN (in u at even indices, in v at
/// odd ones, with differing payloads and signs), or a fill value declared to mark_missing.
enum class MissingAs { mask, nan, fill };

inline const char* missing_as_name(MissingAs how) {
  return how == MissingAs::mask ? "mask" : how == MissingAs::nan ? "nan" : "fill";
}

/// base with the vertices of `mask` missing, marked as `how` says.
inline VectorField2D with_missing(const VectorField2D& base, const std::vector<uint8_t>& mask, MissingAs how) {
  VectorField2D f = base;
  for (size_t k = 0; k < mask.size(); ++k) {
    if (!mask[k]) continue;
    if (how == MissingAs::nan) {
      const float nan = std::bit_cast<float>(0x7fc00000u | uint32_t(k % 5) | (k % 3 == 0 ? 0x80000000u : 0u));
      (k % 2 ? f.v : f.u)[k] = nan;
    }
    if (how == MissingAs::fill) f.u[k] = f.v[k] = 1e20f;
  }
  if (how == MissingAs::mask) f.mask = mask;
  if (how == MissingAs::fill) {
    FillValues fill;
    fill.u = fill.v = 1e20f;
    mark_missing(f, fill);
  }
  return f;
}

// ---- float64 fields (issue 18): the traps of tests/test_float64_codec.cpp ------------------

/// The same field widened to double (every float is a double).
inline VectorField2D64 widened(const VectorField2D& f) {
  VectorField2D64 g{f.nx, f.ny, {}, {}, f.mask};
  g.u.assign(f.u.begin(), f.u.end());
  g.v.assign(f.v.begin(), f.v.end());
  return g;
}

/// A float64 field of one value per plane.
inline VectorField2D64 filled64(int64_t nx, int64_t ny, double u, double v) {
  return VectorField2D64{nx, ny, std::vector<double>(size_t(nx * ny), u), std::vector<double>(size_t(nx * ny), v)};
}

/// A seeded generator of 64-bit words (splitmix64): the tests' fields do not depend on the
/// standard library's engines.
struct Splitmix {
  uint64_t state;
  uint64_t operator()() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return double((*this)() >> 11) * 0x1p-52 - 1.0; }  ///< in [-1, 1)
};

/// Noise p, q in [-1, 1) mapped to (p + eps q, p - eps q): u and v agree to float precision,
/// so rounded to float every vector lies on the diagonal and the critical points are gone;
/// in double they are those of (p, q) (critical points that exist only in double).
inline VectorField2D64 below_float_field(int64_t nx, int64_t ny, uint64_t seed, double eps = 0x1p-40) {
  Splitmix rng{seed};
  VectorField2D64 f{nx, ny, {}, {}};
  for (int64_t k = 0; k < nx * ny; ++k) {
    const double p = rng.unit(), q = rng.unit();
    f.u.push_back(p + eps * q);
    f.v.push_back(p - eps * q);
  }
  return f;
}

/// A field of double's extreme values, seeded: +-DBL_MAX, huge beside tiny, subnormals,
/// signed zeros, any finite bit pattern, plateaus.
inline VectorField2D64 extreme_field(int64_t nx, int64_t ny, uint64_t seed) {
  Splitmix rng{seed};
  VectorField2D64 f = filled64(nx, ny, 0.0, 0.0);
  double last = DBL_MAX;
  auto value = [&]() {
    const double sign = rng() % 2 ? -1.0 : 1.0;
    switch (rng() % 10) {
      case 0: return sign * DBL_MAX;
      case 1: return sign * 1e300;
      case 2: return sign * 1e-300;
      case 3: return std::bit_cast<double>((rng() & 0xfffffffffffffull) | 1 | (sign < 0 ? 1ull << 63 : 0));
      case 4: return sign * 0.0;
      case 5: {
        double x;
        do x = std::bit_cast<double>(rng()); while (!std::isfinite(x));
        return x;
      }
      case 6: return last;
      case 7: return sign * std::ldexp(1.0, int(rng() % 2098) - 1074);
      default: return sign * double(rng() >> 11) * 0x1p-53;
    }
  };
  for (int64_t k = 0; k < f.size(); ++k) {
    f.u[size_t(k)] = last = value();
    f.v[size_t(k)] = last = value();
  }
  return f;
}

/// f with every value times 2^e (exact: scaling by a power of two, no over- or underflow
/// for the fields used here).
inline VectorField2D64 scaled(VectorField2D64 f, int e) {
  for (double& x : f.u) x = std::ldexp(x, e);
  for (double& x : f.v) x = std::ldexp(x, e);
  return f;
}

/// base with the vertices of `mask` missing, marked as `how` says (NaN with 64-bit payloads
/// and signs, or the netCDF double fill value declared to mark_missing).
inline VectorField2D64 with_missing(const VectorField2D64& base, const std::vector<uint8_t>& mask, MissingAs how) {
  constexpr double kFill = 9.969209968386869e36;
  VectorField2D64 f = base;
  for (size_t k = 0; k < mask.size(); ++k) {
    if (!mask[k]) continue;
    if (how == MissingAs::nan) {
      const double nan = std::bit_cast<double>(0x7ff8000000000000ull | uint64_t(k % 7) << 20 | uint64_t(k % 5) |
                                               (k % 3 == 0 ? 1ull << 63 : 0));
      (k % 2 ? f.v : f.u)[k] = nan;
    }
    if (how == MissingAs::fill) f.u[k] = f.v[k] = kFill;
  }
  if (how == MissingAs::mask) f.mask = mask;
  if (how == MissingAs::fill) {
    FillValues64 fill;
    fill.u = fill.v = kFill;
    mark_missing(f, fill);
  }
  return f;
}

/// The options of the float64 cases: every mode with every coder and zstd setting.
inline std::vector<Options> every_mode_coder_and_zstd(BoundMode bound_mode, double bound, int64_t anchor_stride = 16) {
  std::vector<Options> out;
  for (auto mode : {Mode::none, Mode::block, Mode::speculative})
    for (auto coder : {Coder::huffman, Coder::ans})
      for (bool zstd : {false, true}) {
        Options o;
        o.mode = mode;
        o.coder = coder;
        o.zstd = zstd;
        o.bound_mode = bound_mode;
        o.bound = bound;
        o.anchor_stride = anchor_stride;
        out.push_back(o);
      }
  return out;
}

/// Copies of `stream` (written without zstd) with one byte of one section changed, the
/// container rewritten around them (every section raw) so that every CRC is valid: the decoders' own checks are
/// what gets tested. Odd trials damage one of a section's first 24 bytes (heads, tables);
/// with `shorten`, every fifth trial also drops the section's last byte. Returns
/// {trial, stream} pairs (trials that drew an empty section are skipped), or nothing when
/// `stream` does not parse.
inline std::vector<std::pair<int, std::vector<uint8_t>>> damaged_sections(std::span<const uint8_t> stream,
                                                                          uint64_t seed, int trials, bool shorten) {
  std::vector<std::pair<int, std::vector<uint8_t>>> out;
  auto pc = detail::parse_container(stream);
  if (!pc.ok()) return out;
  std::vector<detail::Section> sections;
  for (const auto& e : pc->entries) {
    // Sections offered to zstd whatever the options say (the mask sections) are read
    // through it and written back raw.
    auto raw = detail::read_section(stream, pc.value(), e.id, &detail::zstd_stage_decompressor());
    if (!raw.ok()) return {};
    sections.push_back({e.id, raw.value(), false});
  }
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  for (int trial = 0; trial < trials; ++trial) {
    auto damaged = sections;
    auto& sec = damaged[next() % damaged.size()].raw;
    if (sec.empty()) continue;
    const size_t at = trial % 2 ? next() % std::min<size_t>(sec.size(), 24) : next() % sec.size();
    sec[at] ^= uint8_t(1 + next() % 255);
    if (shorten && trial % 5 == 0) sec.resize(sec.size() - 1);
    auto written = detail::write_container(pc->header, damaged, nullptr);
    if (!written.ok()) return {};
    out.emplace_back(trial, std::move(written).value());
  }
  return out;
}

}  // namespace factz::test
