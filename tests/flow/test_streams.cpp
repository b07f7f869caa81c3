// Basis files, field streams and .npy arrays: round trips, validation of damaged or forged
// input (clear errors, never a crash), and thread-count independence.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "support/temp_dir.hpp"
#include "factz/flow.hpp"
#include "flow/bytes.hpp"
#include "flow_support.hpp"

using namespace factz::flow;
using flowtest::kTwoPi;

namespace {

Basis basis_of(Method m, int n = 10) {
  BasisOptions o;
  o.method = m;
  o.landmarks = 8;
  o.periods = {kTwoPi, kTwoPi};
  o.matern_lengths = {2.0};
  o.wendland_beta = 4;
  return build_basis(2, flowtest::grid_nodes(2, n), o).value();
}

/// Re-seals a damaged stream so that only the payload checks can catch the damage.
void reseal(std::vector<uint8_t>& s) {
  const uint32_t h = uint32_t(detail::fnv1a(std::span<const uint8_t>(s).first(s.size() - 4)));
  for (int k = 0; k < 4; ++k) s[s.size() - 4 + size_t(k)] = uint8_t(h >> (8 * k));
}

}  // namespace

TEST(FlowStreams, BasisRoundTripsByteForByte) {
  for (Method m : {Method::global, Method::nystrom2, Method::hybrid, Method::multilevel, Method::frame}) {
    const Basis b = basis_of(m);
    const auto bytes = serialize_basis(b).value();
    auto back = parse_basis(bytes);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(serialize_basis(back.value()).value(), bytes);
    EXPECT_EQ(back->fingerprint(), b.fingerprint());
  }
}

TEST(FlowStreams, DamagedBasisIsRejected) {
  const auto bytes = serialize_basis(basis_of(Method::hybrid, 6)).value();
  for (size_t i = 0; i < bytes.size(); i += 7) {
    auto bad = bytes;
    bad[i] ^= 0x5a;
    auto r = parse_basis(bad);
    ASSERT_FALSE(r.ok()) << "byte " << i;
  }
  for (size_t len : {size_t(0), size_t(3), size_t(20), bytes.size() - 1})
    EXPECT_FALSE(parse_basis(std::span<const uint8_t>(bytes).first(len)).ok());
}

TEST(FlowStreams, DamagedOrForeignStreamsGiveClearErrors) {
  for (auto coder : {CoefficientCoder::factz, CoefficientCoder::zfp})
    for (Method m : {Method::nystrom2, Method::multilevel}) {
      const Basis b = basis_of(m);
      const auto u = flowtest::taylor_green(2, b.nodes);
      auto zr = compress(b, u, 5e-2, coder);
      ASSERT_TRUE(zr.ok()) << zr.status().to_string();
      const auto z = zr.value();
      ASSERT_TRUE(decompress(b, z).ok());
      // Every single-byte flip is caught by the checksum.
      for (size_t i = 0; i < z.size(); ++i) {
        auto bad = z;
        bad[i] ^= 0x41;
        auto r = decompress(b, bad);
        ASSERT_FALSE(r.ok()) << "byte " << i;
        EXPECT_EQ(r.status().code(), i < 4 ? factz::Code::corrupt_stream : r.status().code());
      }
      // Resealed damage reaches the payload decoders: errors or some field, never a crash.
      std::mt19937_64 rng(9);
      for (int t = 0; t < 300; ++t) {
        auto bad = z;
        const size_t at = 26 + rng() % (bad.size() - 30);
        bad[at] = uint8_t(rng());
        reseal(bad);
        auto r = decompress(b, bad);
        if (r.ok()) {
          EXPECT_EQ(r->size(), u.size());
        }
      }
      for (size_t len = 0; len < z.size(); len += 5) EXPECT_FALSE(decompress(b, std::span<const uint8_t>(z).first(len)).ok());
      const Basis other = basis_of(m, 9);
      auto r = decompress(other, z);
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.status().message().find("different basis"), std::string::npos);
    }
}

TEST(FlowStreams, BytesDoNotDependOnTheThreadCount) {
  for (Method m : {Method::hybrid, Method::frame, Method::global}) {
    std::vector<uint8_t> ref_basis, ref_stream;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      const Basis b = basis_of(m, 12);
      const auto u = flowtest::taylor_green(2, b.nodes);
      const auto bb = serialize_basis(b).value();
      const auto z = compress(b, u, 1e-3, CoefficientCoder::factz).value();
      if (threads == 1) {
        ref_basis = bb, ref_stream = z;
      } else {
        EXPECT_EQ(bb, ref_basis) << method_name(m);
        EXPECT_EQ(z, ref_stream) << method_name(m);
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(FlowStreams, NpyRoundTripAndBadFiles) {
  const factz::testing::TempDir dir;
  const std::string path = dir / "a.npy";
  const std::vector<double> data = {1.5, -2.0, 3.25, 0.0, 1e-300, -7.0};
  ASSERT_TRUE(write_npy(path, 3, 2, data).ok());
  auto a = read_npy(path);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->rows, 3);
  EXPECT_EQ(a->cols, 2);
  EXPECT_EQ(a->data, data);
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(parse_npy(std::span<const uint8_t>(bytes).first(bytes.size() - 1)).ok());
  EXPECT_FALSE(parse_npy(std::span<const uint8_t>(bytes).first(9)).ok());
  auto wrong = bytes;
  const std::string h(wrong.begin(), wrong.end());
  const size_t at = h.find("<f8");
  wrong[at + 1] = 'i';  // '<i8'
  EXPECT_EQ(parse_npy(wrong).status().code(), factz::Code::invalid_argument);
  EXPECT_FALSE(read_npy(dir / "missing.npy").ok());
}
