// What the 3D vector-field tests share (tests/test_speculative3d.cpp, tests/test_block3d.cpp):
// the synthetic flows every mode must keep, constant fields, the CRC of decoded planes, and
// the golden-stream check (reproduced byte for byte, decoded to pinned values).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "synth3d.hpp"
#include "resealed.hpp"

namespace factz::testing {

/// ABC, Taylor-Green (w = 0 and not), random modes, ties, and with `rough` a field dense in
/// critical points, on grids of about n^3 with unequal sides.
inline std::vector<std::pair<std::string, VectorField3D>> flows3d(int64_t n, bool rough) {
  std::vector<std::pair<std::string, VectorField3D>> out;
  out.emplace_back("abc", abc_flow(n, n, n));
  out.emplace_back("taylor_green", taylor_green(n, n - 3, n - 5));
  out.emplace_back("taylor_green_w", taylor_green(n - 1, n, n - 2, 0.3));
  out.emplace_back("random_modes", random_modes(n, n - 2, n - 1, 7));
  if (rough) out.emplace_back("rough", random_modes(n - 4, n - 6, n - 3, 3, 48, 12));
  out.emplace_back("ties", tie_field(n - 7, n - 9, n - 8, 5));
  return out;
}

/// Every vertex holds (u, v, w).
inline VectorField3D filled3d(int64_t nx, int64_t ny, int64_t nz, float u, float v, float w) {
  VectorField3D f;
  f.nx = nx, f.ny = ny, f.nz = nz;
  f.u.assign(size_t(f.size()), u);
  f.v.assign(size_t(f.size()), v);
  f.w.assign(size_t(f.size()), w);
  return f;
}

/// CRC-32C of the u, v, w planes' bytes, in that order (little-endian host, docs/usage.md).
inline uint32_t planes_crc(const VectorField3D& f) {
  std::vector<uint8_t> all;
  for (const auto* p : {&f.u, &f.v, &f.w}) {
    const auto* b = reinterpret_cast<const uint8_t*>(p->data());
    all.insert(all.end(), b, b + p->size() * 4);
  }
  return detail::crc32c(all);
}

/// Values of b beyond eb from a, over the three components (exact: float differences in double).
inline int64_t beyond(const VectorField3D& a, const VectorField3D& b, float eb) {
  int64_t over = 0;
  for (int c = 0; c < 3; ++c) {
    const std::vector<float>& x = c == 0 ? a.u : c == 1 ? a.v : a.w;
    const std::vector<float>& y = c == 0 ? b.u : c == 1 ? b.v : b.w;
    for (size_t k = 0; k < x.size(); ++k) over += !(std::fabs(double(x[k]) - double(y[k])) <= double(eb));
  }
  return over;
}

/// Compresses `f` with `o`, decompresses and checks G0 (exactly, per component) and, when
/// `topology`, G1 (compare: no violation, as many critical points; *cps gets the original's
/// count). Returns the stream (empty on failure); *stats gets the compressor's.
inline std::vector<uint8_t> round_trip3d(const VectorField3D& f, const Options& o, bool topology,
                                         const std::string& what, int64_t* cps = nullptr,
                                         CompressStats* stats = nullptr) {
  CompressStats st;
  auto s = compress(f, o, &st);
  EXPECT_TRUE(s.ok()) << what << ": " << s.status().to_string();
  if (!s.ok()) return {};
  if (stats) *stats = st;
  auto d = decompress3d(s.value());
  EXPECT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  if (!d.ok()) return {};
  EXPECT_EQ(d->nx, f.nx);
  EXPECT_EQ(d->ny, f.ny);
  EXPECT_EQ(d->nz, f.nz);
  EXPECT_EQ(beyond(f, d.value(), float(st.eb_abs)), 0) << what << ": values beyond eb " << st.eb_abs;
  if (topology) {
    auto c = compare(f, d.value());
    EXPECT_TRUE(c.ok()) << what;
    if (c.ok()) {
      EXPECT_EQ(c->violations(), 0) << what << ": lost " << c->lost << " spurious " << c->spurious << " changed "
                                    << c->type_changed;
      EXPECT_EQ(c->cp_decompressed, c->cp_original) << what;
      if (cps) *cps = c->cp_original;
    }
  }
  return s.value();
}

/// The predictor byte of a 3D speculative stream's meta section (1: the mean of the phase's
/// axes everywhere, 2: with a choice table; -1 when the stream or its meta is unreadable).
inline int predictor3d_of(const std::vector<uint8_t>& stream) {
  auto pc = detail::parse_container(stream);
  if (!pc.ok()) return -1;
  auto meta = detail::read_section(stream, pc.value(), detail::kSectionMeta, nullptr);
  const size_t at = pc->header.dtype == detail::kDtypeFloat64 ? 13 : 5;
  if (!meta.ok() || meta->size() <= at) return -1;
  return meta.value()[at];
}

/// f's values as doubles (mask kept): a float64 field with the same values.
inline VectorField3D64 widen(const VectorField3D& f) {
  VectorField3D64 g;
  g.nx = f.nx, g.ny = f.ny, g.nz = f.nz;
  g.u.assign(f.u.begin(), f.u.end());
  g.v.assign(f.v.begin(), f.v.end());
  g.w.assign(f.w.begin(), f.w.end());
  g.mask = f.mask;
  return g;
}

/// The bytes of tests/data/golden/`file` (empty when it cannot be read).
inline std::vector<uint8_t> golden_bytes(const std::string& file) {
  std::ifstream in(std::string(FACTZ_TEST_DATA_DIR) + "/golden/" + file, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// A golden 3D stream that is only decoded (an older encoder wrote it): it decodes, serial
/// and OpenMP, to planes with CRC `crc`; `more` checks each decoded field further.
inline void expect_golden3d_decodes(const std::string& file, uint32_t crc,
                                    const std::function<void(const VectorField3D&)>& more = {}) {
  const std::vector<uint8_t> stream = golden_bytes(file);
  ASSERT_FALSE(stream.empty()) << file;
  for (Policy policy : {Policy::serial, Policy::omp}) {
    DecompressOptions o;
    o.policy = policy;
    auto d = decompress3d(stream, o);
    ASSERT_TRUE(d.ok()) << file << ": " << d.status().to_string();
    EXPECT_EQ(planes_crc(d.value()), crc) << file;
    if (more) more(d.value());
  }
}

/// A golden 3D stream: the file under tests/data/golden, the options it was written with,
/// and the CRC-32C of its decoded planes.
struct Golden3DCase {
  const char* file;
  Options options;
  uint32_t values_crc;
};

/// Each case compressed from `f` must give its file byte for byte, and the file must decode
/// (serial and OpenMP) to its pinned CRC; `more` checks each decoded field further. With
/// FACTZ_REGENERATE_GOLDEN set, the files are rewritten instead (only when the format
/// version is bumped or a case is added) and their CRCs printed to paste into the cases.
inline void check_golden3d(const VectorField3D& f, const std::vector<Golden3DCase>& cases,
                           const std::function<void(const Golden3DCase&, const std::vector<uint8_t>&,
                                                    const VectorField3D&)>& more) {
  const std::string dir = std::string(FACTZ_TEST_DATA_DIR) + "/golden/";
  const bool regenerate = std::getenv("FACTZ_REGENERATE_GOLDEN") != nullptr;
  for (const Golden3DCase& g : cases) {
    auto fresh = compress(f, g.options);
    ASSERT_TRUE(fresh.ok()) << g.file << ": " << fresh.status().to_string();
    if (regenerate) {
      // The files are classic streams (their names carry the version of their sections).
      const std::vector<uint8_t> classic_bytes = classic(fresh.value());
      std::ofstream(dir + g.file, std::ios::binary)
          .write(reinterpret_cast<const char*>(classic_bytes.data()), std::streamsize(classic_bytes.size()));
      auto d = decompress3d(fresh.value());
      ASSERT_TRUE(d.ok());
      std::printf("%s 0x%08xu\n", g.file, planes_crc(d.value()));
      continue;
    }
    std::ifstream in(dir + g.file, std::ios::binary);
    ASSERT_TRUE(in.good()) << g.file;
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // compress writes the compact container (version 18) around the same sections.
    EXPECT_EQ(compact(file), fresh.value()) << g.file << ": the encoder's bytes changed (a new format version?)";
    for (Policy p : {Policy::serial, Policy::omp}) {
      DecompressOptions o;
      o.policy = p;
      auto d = decompress3d(file, o);
      ASSERT_TRUE(d.ok()) << g.file << ": " << d.status().to_string();
      EXPECT_EQ(planes_crc(d.value()), g.values_crc) << g.file;
      more(g, file, d.value());
    }
  }
}

}  // namespace factz::testing
