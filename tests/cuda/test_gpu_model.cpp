// The CUDA kernels' bodies, driven on the host in launch order (gpu_model.cpp), make the
// CPU pipeline's decisions and write its bytes. Runs on every machine (no GPU, no nvcc):
// it is what shows the device code right before a GPU is available.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>

#include "synth.hpp"
#include "api/device_backend.hpp"
#include "cuda_test_support.hpp"
#include "backend/cuda/crc_bodies.hpp"
#include "backend/cuda/gpu_model.hpp"
#include "backend/cuda/host_stream.hpp"
#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "codec/ans.hpp"
#include "codec/huffman.hpp"
#include "kernels/speculative_decode.hpp"
#include "streams/speculative_trial.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "backend/cpu/frontend.hpp"
#include "streams/vector_stream.hpp"
#include "support/shear_layer.hpp"
#include "factz/multiblock.hpp"

namespace {

using factz::VectorField2D;

struct NamedField {
  std::string name;
  VectorField2D f;
};

VectorField2D constant(int64_t nx, int64_t ny, float u, float v) {
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  f.u.assign(size_t(nx * ny), u);
  f.v.assign(size_t(nx * ny), v);
  return f;
}

std::vector<NamedField> fields() {
  std::vector<NamedField> out;
  out.push_back({"turbulence_67x45", factz::synth::turbulence(67, 45, 1, 4.0)});
  out.push_back({"turbulence_100x33", factz::synth::turbulence(100, 33, 2)});
  out.push_back({"noise_41x37", factz::synth::noise(41, 37, 3)});
  auto land = factz::synth::vortices(70, 50, 4, 12);
  factz::synth::add_zero_region(land, 5, 0.3);
  out.push_back({"vortices_land_70x50", std::move(land)});
  out.push_back({"zeros_33x31", constant(33, 31, 0.0f, 0.0f)});
  out.push_back({"constant_35x17", constant(35, 17, 0.25f, -3.0f)});
  out.push_back({"row_1x40", factz::synth::noise(40, 1, 6)});
  out.push_back({"column_1x29", factz::synth::noise(1, 29, 7)});
  out.push_back({"tiny_2x2", factz::synth::noise(2, 2, 8)});
  // Real fields: ncl_storm_t0 is bundled (tests/data); cmems_glob1deg_cur only in ../shared/data.
  for (auto [name, nx, ny] : {std::tuple{"ncl_storm_t0", 36, 33}, std::tuple{"cmems_glob1deg_cur", 360, 171}}) {
    for (const std::string dir : {FACTZ_TEST_DATA_DIR, FACTZ_SHARED_DATA_DIR}) {
      const std::string base = dir + "/" + name, dims = std::to_string(nx) + "x" + std::to_string(ny);
      auto f = factz::read_vector_field(base + "_u_" + dims + ".f32", base + "_v_" + dims + ".f32", nx, ny);
      if (!f.ok()) continue;
      out.push_back({name, std::move(f.value())});
      break;
    }
  }
  return out;
}

const std::vector<NamedField>& all_fields() {
  static const std::vector<NamedField> f = fields();
  return f;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

struct Case {
  factz::Mode mode;
  factz::Coder coder;
  factz::BoundMode bound_mode;
  double bound;
  int64_t anchor_stride;
  bool zstd;
};

/// The library options of a case.
factz::Options options_of(const Case& c) {
  factz::Options o;
  o.mode = c.mode;
  o.coder = c.coder;
  o.bound_mode = c.bound_mode;
  o.bound = c.bound;
  o.anchor_stride = c.anchor_stride;
  o.zstd = c.zstd;
  return o;
}

std::string describe(const Case& c) {
  return std::string(factz::mode_name(c.mode)) + "/" + factz::coder_name(c.coder) +
         (c.bound_mode == factz::BoundMode::rel ? " rel " : " abs ") + std::to_string(c.bound) + " s0 " +
         std::to_string(c.anchor_stride) + (c.zstd ? " zstd" : "");
}

std::vector<Case> cases() {
  using factz::BoundMode;
  using factz::Coder;
  using factz::Mode;
  std::vector<Case> out;
  for (Mode m : {Mode::none, Mode::block, Mode::speculative})
    for (Coder c : {Coder::huffman, Coder::ans}) {
      out.push_back({m, c, BoundMode::rel, 1e-2, 16, true});
      out.push_back({m, c, BoundMode::rel, 1e-4, 4, false});
    }
  out.push_back({Mode::block, Coder::ans, BoundMode::abs, 0.0, 16, true});        // lossless
  out.push_back({Mode::speculative, Coder::ans, BoundMode::abs, 0.0, 16, true});  // lossless
  out.push_back({Mode::block, Coder::huffman, BoundMode::rel, 0.5, 16, true});    // huge bound: repairs
  out.push_back({Mode::speculative, Coder::huffman, BoundMode::rel, 0.3, 8, true});
  out.push_back({Mode::none, Coder::ans, BoundMode::abs, 1e-30, 16, true});       // escapes (outliers)
  out.push_back({Mode::speculative, Coder::huffman, BoundMode::rel, 1e-3, 2, true});    // smallest stride
  out.push_back({Mode::speculative, Coder::ans, BoundMode::rel, 1e-3, 4096, false});    // all anchors here
  return out;
}

TEST(GpuModel, StreamsAreByteIdenticalToTheCpuAndDecodeIdentically) {
  for (const auto& nf : all_fields())
    for (const Case& c : cases()) {
      SCOPED_TRACE(nf.name + " " + describe(c));
      factz::Options o = options_of(c);
      o.threads = 2;
      auto cpu = factz::compress(nf.f, o);
      ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
      auto model = factz::cuda_detail::model_compress(nf.f, o);
      ASSERT_TRUE(model.ok()) << model.status().to_string();
      ASSERT_EQ(model.value().size(), cpu.value().size());
      ASSERT_TRUE(model.value() == cpu.value());
      auto a = factz::decompress(cpu.value());
      auto b = factz::cuda_detail::model_decompress(cpu.value());
      ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
      EXPECT_TRUE(same_bits(a->u, b->u));
      EXPECT_TRUE(same_bits(a->v, b->v));
    }
}

// The level-wise bound (streams/speculative_trial.hpp): the model runs the trial on the
// crop the device driver copies to the host. On a field where the trial picks the tight
// levels, with and without missing vertices, the model's streams are the CPU's.
TEST(GpuModel, TheLevelWiseBoundTrialGivesTheCpuBytes) {
  const VectorField2D f = factz::testing::shear_layer_crop(128);  // the trial picks the tight levels
  const factz::ValueRange range = factz::value_range_of(f);
  factz::Options o;
  o.mode = factz::Mode::speculative;
  o.bound_mode = factz::BoundMode::rel;
  o.bound = 3e-2;
  o.threads = 2;
  const float eb = factz::detail::make_plan(f.nx, f.ny, o, range.hi - range.lo, 1).eb;
  ASSERT_EQ(factz::detail::choose_tight_step(f.nx, f.ny, f.u.data(), f.v.data(), nullptr, eb, o.anchor_stride,
                                             factz::detail::kDefaultPredictor, 1),
            factz::detail::kTrialTightStep);
  VectorField2D holes = f;
  holes.mask.assign(holes.u.size(), 0);
  for (int64_t k = 300; k < int64_t(holes.u.size()); k += 977) holes.mask[size_t(k)] = 1;
  for (const VectorField2D* field : std::initializer_list<const VectorField2D*>{&f, &holes})
    for (factz::Coder c : {factz::Coder::huffman, factz::Coder::ans}) {
      SCOPED_TRACE(std::string(field == &f ? "whole" : "holes") + " " + factz::coder_name(c));
      o.coder = c;
      auto cpu = factz::compress(*field, o);
      ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
      auto model = factz::cuda_detail::model_compress(*field, o);
      ASSERT_TRUE(model.ok()) << model.status().to_string();
      EXPECT_TRUE(model.value() == cpu.value());
    }
}

// The frontend's per-vertex decisions, not only the bytes: tile ids, reconstructions,
// exact flags and the repair statistics of block mode, on a bound that forces repairs.
TEST(GpuModel, BlockFrontendMakesTheCpuDecisions) {
  for (const auto& nf : all_fields())
    for (float eb : {1e-3f, 0.2f, 5.0f}) {
      SCOPED_TRACE(nf.name + " eb " + std::to_string(eb));
      factz::detail::FrontendResult cpu;
      factz::detail::run_block(nf.f, eb, 2, cpu);
      factz::Options o;
      o.mode = factz::Mode::block;
      o.bound_mode = factz::BoundMode::abs;
      o.bound = eb;
      factz::cuda_detail::TiledIntermediates mid;
      auto s = factz::cuda_detail::model_compress(nf.f, o, &mid);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      EXPECT_EQ(mid.tile_ids[0], cpu.u.tile_ids);
      EXPECT_EQ(mid.tile_ids[1], cpu.v.tile_ids);
      EXPECT_TRUE(same_bits(mid.recon[0], std::vector<float>(cpu.u.recon.begin(), cpu.u.recon.end())));
      EXPECT_TRUE(same_bits(mid.recon[1], std::vector<float>(cpu.v.recon.begin(), cpu.v.recon.end())));
      EXPECT_TRUE(std::equal(mid.exact[0].begin(), mid.exact[0].end(), cpu.u.exact.begin(), cpu.u.exact.end()));
      EXPECT_TRUE(std::equal(mid.exact[1].begin(), mid.exact[1].end(), cpu.v.exact.begin(), cpu.v.exact.end()));
      EXPECT_EQ(mid.repair_rounds, cpu.repair_rounds);
      EXPECT_EQ(mid.repaired_vertices, cpu.repaired_vertices);
    }
}

// The safe bounds almost never leave anything to repair, so the repair rounds are checked
// on mode none's quantization with large bounds, which changes many signatures.
TEST(GpuModel, RepairRoundsMatchTheCpu) {
  int64_t total_repaired = 0;
  for (const auto& nf : all_fields())
    for (float eb : {0.05f, 0.5f}) {
      SCOPED_TRACE(nf.name + " eb " + std::to_string(eb));
      factz::detail::FrontendResult cpu;
      factz::detail::run_none(nf.f, eb, 2, cpu);
      std::vector<float> recon[2] = {{cpu.u.recon.begin(), cpu.u.recon.end()}, {cpu.v.recon.begin(), cpu.v.recon.end()}};
      std::vector<uint8_t> exact[2] = {{cpu.u.exact.begin(), cpu.u.exact.end()}, {cpu.v.exact.begin(), cpu.v.exact.end()}};
      factz::detail::repair_signatures(nf.f, nullptr, 2, cpu);
      int64_t rounds = 0, repaired = 0;
      factz::cuda_detail::model_repair(nf.f, nullptr, recon, exact, rounds, repaired);
      EXPECT_TRUE(same_bits(recon[0], std::vector<float>(cpu.u.recon.begin(), cpu.u.recon.end())));
      EXPECT_TRUE(same_bits(recon[1], std::vector<float>(cpu.v.recon.begin(), cpu.v.recon.end())));
      EXPECT_TRUE(std::equal(exact[0].begin(), exact[0].end(), cpu.u.exact.begin(), cpu.u.exact.end()));
      EXPECT_TRUE(std::equal(exact[1].begin(), exact[1].end(), cpu.v.exact.begin(), cpu.v.exact.end()));
      EXPECT_EQ(rounds, cpu.repair_rounds);
      EXPECT_EQ(repaired, cpu.repaired_vertices);
      total_repaired += repaired;
    }
  EXPECT_GT(total_repaired, 100) << "the fields no longer exercise the repair rounds";
}

// The device Huffman encoder's bodies write codec/huffman.cpp's blob: several chunks and a
// partial one, skewed and flat statistics, one symbol, long codes, no symbol.
TEST(GpuModel, DeviceHuffmanBlobsAreTheCpuBlobs) {
  uint64_t state = 99;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  std::vector<std::vector<uint16_t>> streams;
  streams.push_back({});
  streams.push_back(std::vector<uint16_t>(1, 7));
  streams.push_back(std::vector<uint16_t>(70000, 32768));
  std::vector<uint16_t> skew(200001), flat(140000), geometric(65536 * 2 + 5);
  for (auto& x : skew) x = uint16_t(32768 + int(next() % 7) - 3 + (next() % 100 == 0 ? int(next() % 4000) : 0));
  for (auto& x : flat) x = uint16_t(next());
  for (auto& x : geometric) {  // code lengths up to the 24-bit limit
    int k = 0;
    while (k < 40 && (next() & 1)) ++k;
    x = uint16_t(k);
  }
  streams.push_back(skew);
  streams.push_back(flat);
  streams.push_back(geometric);
  for (const auto& s : streams) {
    SCOPED_TRACE("n " + std::to_string(s.size()));
    std::vector<uint8_t> cpu;
    ASSERT_TRUE(factz::detail::huffman_encode(s, cpu, 2).ok());
    EXPECT_TRUE(factz::cuda_detail::model_huffman_encode(s) == cpu);
    std::vector<uint16_t> back(s.size(), 1);
    ASSERT_TRUE(factz::cuda_detail::model_huffman_decode(cpu, back).ok());
    EXPECT_TRUE(back == s);
    // Damaged blobs: the device decoder accepts exactly what the CPU decoder accepts, and
    // then decodes the same symbols.
    for (int trial = 0; trial < 60 && !cpu.empty(); ++trial) {
      std::vector<uint8_t> bad = cpu;
      const size_t at = trial < 20 ? next() % std::min<size_t>(bad.size(), 64) : next() % bad.size();
      bad[at] ^= uint8_t(1 + next() % 255);
      if (trial % 7 == 0) bad.resize(bad.size() - 1 - next() % std::min<size_t>(bad.size(), 9));
      std::vector<uint16_t> a(s.size()), b(s.size());
      const bool cpu_ok = factz::detail::huffman_decode(bad, a, 1).ok();
      const bool dev_ok = factz::cuda_detail::model_huffman_decode(bad, b).ok();
      EXPECT_EQ(cpu_ok, dev_ok) << "trial " << trial;
      if (cpu_ok && dev_ok) {
        EXPECT_TRUE(a == b);
      }
    }
  }
}

// The device ANS decoder's bodies read codec/ans_encode.cpp's blobs: constant, sparse and rANS
// planes, 8, 16 and 32 lanes, contexts, chunks and a partial one; damaged blobs are
// rejected exactly when the CPU decoder rejects them.
TEST(GpuModel, DeviceAnsDecodingMatchesTheCpu) {
  uint64_t state = 4242;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  std::vector<std::vector<uint16_t>> streams;
  streams.push_back({});
  streams.push_back(std::vector<uint16_t>(5000, 32768));                 // constant planes
  std::vector<uint16_t> sparse(90000, 32768), smooth(150001), wide(70000), ids(66000);
  for (int i = 0; i < 40; ++i) sparse[next() % sparse.size()] = uint16_t(32768 + 500 + next() % 100);
  for (auto& x : smooth) x = uint16_t(32768 + int(next() % 9) - 4);
  for (auto& x : wide) x = uint16_t(next());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = uint16_t(i % 1000 < 900 ? 30 : next() % 32);
  streams.push_back(sparse);
  streams.push_back(smooth);
  streams.push_back(wide);
  for (const auto& s : streams)
    for (uint32_t lanes : {8u, 16u, 32u})
      for (uint16_t center : {uint16_t(32768), uint16_t(0)}) {
        SCOPED_TRACE("n " + std::to_string(s.size()) + " lanes " + std::to_string(lanes) + " center " +
                     std::to_string(center));
        std::vector<uint8_t> blob;
        ASSERT_TRUE(factz::detail::ans_encode(s, center, blob, 2, lanes).ok());
        std::vector<uint16_t> back(s.size(), 1);
        ASSERT_TRUE(factz::cuda_detail::model_ans_decode(blob, center, back).ok());
        EXPECT_TRUE(back == s);
        for (int trial = 0; trial < 25; ++trial) {
          std::vector<uint8_t> bad = blob;
          const size_t at = trial < 10 ? next() % std::min<size_t>(bad.size(), 48) : next() % bad.size();
          bad[at] ^= uint8_t(1 + next() % 255);
          if (trial % 6 == 0) bad.resize(bad.size() - 1);
          std::vector<uint16_t> a(s.size()), b(s.size());
          const bool cpu_ok = factz::detail::ans_decode(bad, center, a, 1).ok();
          const bool dev_ok = factz::cuda_detail::model_ans_decode(bad, center, b).ok();
          EXPECT_EQ(cpu_ok, dev_ok) << "trial " << trial;
          if (cpu_ok && dev_ok) {
            EXPECT_TRUE(a == b);
          }
        }
      }
}

// The device ANS encoder (lane groups in lockstep, words placed by ballot rank, the host
// plan from device pair counts, gathers and compactions) writes ans_encode's bytes: sizes
// around chunk and lane boundaries, constant, sparse and rANS planes, 1 to 32 lanes.
TEST(GpuModel, DeviceAnsBlobsAreTheCpuBlobs) {
  constexpr uint64_t kChunk = uint64_t{1} << factz::detail::kAnsChunkLog2;
  const auto streams = factz::test::ans_test_streams(777);
  int modes_seen[2][3] = {};
  for (const auto& s : streams)
    for (uint32_t lanes : {1u, 5u, 8u, 16u, 32u})
      for (uint16_t center : {uint16_t(32768), uint16_t(0)}) {
        if (lanes == 1 || lanes == 5) {
          if (center == 0 || s.size() > kChunk + 5) continue;  // a few cases for odd lane counts
        }
        SCOPED_TRACE("n " + std::to_string(s.size()) + " lanes " + std::to_string(lanes) + " center " +
                     std::to_string(center));
        std::vector<uint8_t> cpu, dev;
        ASSERT_TRUE(factz::detail::ans_encode(s, center, cpu, 2, lanes).ok());
        ASSERT_TRUE(factz::cuda_detail::model_ans_encode(s, center, dev, lanes).ok());
        ASSERT_EQ(dev.size(), cpu.size());
        EXPECT_TRUE(dev == cpu);
        factz::detail::AnsBlob parsed;
        ASSERT_TRUE(factz::detail::ans_parse(cpu, center, s.size(), parsed).ok());
        for (int p = 0; p < 2; ++p) ++modes_seen[p][parsed.planes[size_t(p)].mode];
      }
  // The inputs do reach every plane form of both planes but a sparse low plane.
  for (int p = 0; p < 2; ++p)
    for (int mode = 0; mode < 3; ++mode) {
      if (!(p == 0 && mode == factz::detail::kAnsPlaneSparse)) {
        EXPECT_GT(modes_seen[p][mode], 0) << p << " " << mode;
      }
    }
  std::vector<uint8_t> out;
  EXPECT_FALSE(factz::cuda_detail::model_ans_encode(streams[3], 32768, out, 0).ok());
  EXPECT_FALSE(factz::cuda_detail::model_ans_encode(streams[3], 32768, out, 33).ok());
}

// Blob version 3 (escapes): the device encoder's plan, escape list (flags, a compaction, a
// gather) and chunks give ans_encode's bytes, and the device decoder (a count kernel, a
// host prefix, a replace kernel) reads them, and rejects damage exactly when the CPU does.
TEST(GpuModel, DeviceAnsEscapeBlobsAreTheCpuBlobs) {
  constexpr uint64_t kChunk = uint64_t{1} << factz::detail::kAnsChunkLog2;
  uint64_t state = 99;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  auto sym = [](uint32_t z) { return factz::detail::ans_unzigzag(uint16_t(z), 32768); };
  std::vector<std::vector<uint16_t>> streams;
  for (uint64_t n : {kChunk - 1, kChunk + 1, 3 * kChunk + 5}) {
    std::vector<uint16_t> s(n);
    for (auto& x : s) x = sym((next() % 10 == 0 ? 1 + next() % 5 : 0) + (next() % 3 == 0 ? 256 : 0));
    for (uint32_t k = 0; k < 40; ++k) {
      s[next() % n] = sym(40 + k);
      s[next() % n] = sym(256 * (2 + k) + k);
    }
    s[0] = sym(41);  // escapes at the first chunk's and lanes' starts
    s[kChunk / 8] = sym(77);
    streams.push_back(s);
  }
  int escaped_planes = 0;
  for (const auto& s : streams)
    for (uint32_t lanes : {8u, 32u}) {
      SCOPED_TRACE("n " + std::to_string(s.size()) + " lanes " + std::to_string(lanes));
      std::vector<uint8_t> cpu, dev;
      ASSERT_TRUE(factz::detail::ans_encode(s, 32768, cpu, 2, lanes, true).ok());
      ASSERT_TRUE(factz::cuda_detail::model_ans_encode(s, 32768, dev, lanes, true).ok());
      EXPECT_TRUE(dev == cpu);
      factz::detail::AnsBlob parsed;
      ASSERT_TRUE(factz::detail::ans_parse(cpu, 32768, s.size(), parsed).ok());
      EXPECT_EQ(parsed.version, factz::detail::kAnsVersionEscapes);
      for (const auto& p : parsed.planes) escaped_planes += p.mode == factz::detail::kAnsPlaneEscapes;
      std::vector<uint16_t> back(s.size(), 1);
      ASSERT_TRUE(factz::cuda_detail::model_ans_decode(cpu, 32768, back).ok());
      EXPECT_TRUE(back == s);
      for (int trial = 0; trial < 40; ++trial) {
        std::vector<uint8_t> bad = cpu;
        const size_t at = trial < 10 ? next() % 48 : bad.size() - 1 - next() % std::min<size_t>(bad.size(), 200);
        bad[at] ^= uint8_t(1 + next() % 255);
        if (trial % 7 == 0) bad.resize(bad.size() - 1);
        std::vector<uint16_t> a(s.size()), b(s.size());
        const bool cpu_ok = factz::detail::ans_decode(bad, 32768, a, 1).ok();
        const bool dev_ok = factz::cuda_detail::model_ans_decode(bad, 32768, b).ok();
        EXPECT_EQ(cpu_ok, dev_ok) << "trial " << trial;
        if (cpu_ok && dev_ok) {
          EXPECT_TRUE(a == b);
        }
      }
    }
  EXPECT_GE(escaped_planes, 6);  // both planes of every stream
}

// The device CRC-32C (per-block CRCs folded by a combine tree) is format/crc32.cpp's value
// for lengths around the block size and the tree's odd levels.
TEST(GpuModel, DeviceCrcIsTheCpuCrc) {
  uint64_t state = 31337;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(factz::cuda_detail::model_crc32c(check), 0xE3069283u);
  constexpr uint64_t kBlock = factz::cuda_detail::kCrcBlockBytes;
  std::vector<uint8_t> data(5 * kBlock * 3 + 11);
  for (auto& b : data) b = uint8_t(next());
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{255}, kBlock - 1, kBlock, kBlock + 1,
                     2 * kBlock, 3 * kBlock + 7, 5 * kBlock, 7 * kBlock + 1, uint64_t(data.size())}) {
    const std::span<const uint8_t> piece(data.data(), size_t(n));
    EXPECT_EQ(factz::cuda_detail::model_crc32c(piece), factz::detail::crc32c(piece)) << "n " << n;
  }
  std::vector<uint8_t> zeros(3 * kBlock + 1, 0);
  EXPECT_EQ(factz::cuda_detail::model_crc32c(zeros), factz::detail::crc32c(zeros));
}

// The coded blobs' CRCs, folded from device payload checksums and host heads, are the
// section CRCs the container would compute, for every mode and coder.
TEST(GpuModel, BlobChecksumsAreTheSectionCrcs) {
  const auto f = factz::synth::turbulence(150, 140, 12, 6.0);
  for (const auto& o : factz::test::every_mode_and_coder(0.01)) {
    SCOPED_TRACE(std::string(factz::mode_name(o.mode)) + "/" + factz::coder_name(o.coder));
    const auto p = factz::cuda_detail::make_plan(f.nx, f.ny, o, 0.0);
    using factz::detail::crc32c;
    if (o.mode == factz::Mode::speculative) {
      factz::cuda_detail::SpeculativePayload pl;
      factz::cuda_detail::model_payload(f, p, nullptr, &pl);
      ASSERT_TRUE(pl.precoded);
      EXPECT_EQ(pl.coded_ids_crc, std::optional<uint32_t>(crc32c(pl.coded_ids)));
      EXPECT_EQ(pl.coded_u_crc, std::optional<uint32_t>(crc32c(pl.coded_u)));
      EXPECT_EQ(pl.coded_v_crc, std::optional<uint32_t>(crc32c(pl.coded_v)));
    } else {
      factz::cuda_detail::TiledPayload pl;
      factz::cuda_detail::model_payload(f, p, &pl, nullptr);
      ASSERT_TRUE(pl.precoded);
      for (int c = 0; c < 2; ++c) {
        EXPECT_GT(pl.coded[c].size(), 1000u);  // a real payload, not just a head
        EXPECT_EQ(pl.coded_crc[c], std::optional<uint32_t>(crc32c(pl.coded[c])));
      }
    }
  }
}

// crc32c_combine gives the CRC of a concatenation: against the direct CRC for split points
// of a buffer, and for lengths beyond 4 GiB by two decompositions of the same run of zeros.
TEST(Crc32cCombine, IsTheCrcOfTheConcatenation) {
  using factz::detail::crc32c;
  using factz::detail::crc32c_combine;
  std::vector<uint8_t> data(10007);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 131 + (i >> 5));
  const uint32_t whole = crc32c(data);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{2}, size_t{4095}, size_t{4096}, size_t{10006}, size_t{10007}}) {
    const std::span<const uint8_t> all(data);
    const uint32_t a = crc32c(all.first(cut)), b = crc32c(all.subspan(cut));
    EXPECT_EQ(crc32c_combine(a, b, data.size() - cut), whole) << "cut " << cut;
  }
  // crc(Z_n) for n zero bytes by doubling from a direct CRC, then 6 GiB two ways.
  const std::vector<uint8_t> mib(uint64_t{1} << 20, 0);
  uint32_t z = crc32c(mib);  // Z_1M
  uint64_t len = uint64_t{1} << 20;
  std::vector<std::pair<uint64_t, uint32_t>> powers{{len, z}};
  while (len < (uint64_t{1} << 33)) {
    z = crc32c_combine(z, z, len);
    len *= 2;
    powers.push_back({len, z});
  }
  // Z_2M by doubling equals the direct CRC of 2 MiB of zeros.
  const std::vector<uint8_t> two_mib(uint64_t{2} << 20, 0);
  EXPECT_EQ(powers[1].second, crc32c(two_mib));
  auto crc_of = [&](uint64_t want) {  // Z_want from its binary digits (multiples of 1 MiB)
    uint32_t c = 0;
    for (auto it = powers.rbegin(); it != powers.rend(); ++it)
      if (want & it->first) c = crc32c_combine(c, it->second, it->first);
    return c;
  };
  const uint64_t six_gib = uint64_t{6} << 30, odd = (uint64_t{5} << 30) + (uint64_t{3} << 20);
  EXPECT_EQ(crc32c_combine(crc_of(odd), crc_of(six_gib - odd), six_gib - odd), crc_of(six_gib));
  EXPECT_NE(crc_of(six_gib), crc_of(uint64_t{2} << 30));  // the shift does depend on the high bits
  // Combining with an empty piece changes nothing.
  EXPECT_EQ(crc32c_combine(whole, crc32c({}), 0), whole);
  EXPECT_EQ(crc32c_combine(crc32c({}), whole, data.size()), whole);
}

TEST(GpuModel, RejectsWhatTheCudaBackendDoesNotSupport) {
  const auto f = factz::synth::noise(9, 9, 1);
  factz::Options o;
  o.exact_edges = 1;
  auto r = factz::cuda_detail::model_compress(f, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), factz::Code::backend_unavailable);
  o.exact_edges = 0;
  o.anchor_stride = 3;
  EXPECT_EQ(factz::cuda_detail::model_compress(f, o).status().code(), factz::Code::invalid_argument);
}

// Damaged sections behind valid CRCs (the container is rewritten around them), so the
// decoders' own checks are what is tested: the model of the device decoder accepts exactly
// what the CPU decoder accepts, and then reconstructs the same values.
TEST(GpuModel, DamagedSectionsAreRejectedLikeTheCpuDoes) {
  const auto f = factz::synth::turbulence(40, 30, 9, 4.0);
  for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
    for (auto coder : {factz::Coder::ans, factz::Coder::huffman}) {
      SCOPED_TRACE(std::string(factz::mode_name(mode)) + "/" + factz::coder_name(coder));
      factz::Options o;
      o.mode = mode;
      o.coder = coder;
      o.zstd = false;
      o.bound = 1e-3;
      auto s = factz::compress(f, o);
      ASSERT_TRUE(s.ok());
      const std::vector<uint8_t>& bytes = s.value();
      EXPECT_FALSE(factz::cuda_detail::model_decompress(std::span(bytes).first(bytes.size() / 2)).ok());
      const auto damaged = factz::test::damaged_sections(bytes, 12345, 150, true);
      ASSERT_FALSE(damaged.empty());
      int rejected = 0;
      for (const auto& [trial, stream] : damaged) {
        auto cpu = factz::decompress(stream);
        auto dev = factz::cuda_detail::model_decompress(stream);
        EXPECT_EQ(cpu.ok(), dev.ok()) << "trial " << trial << ": cpu " << cpu.status().to_string() << ", device "
                                      << dev.status().to_string();
        if (cpu.ok() && dev.ok()) {
          EXPECT_TRUE(same_bits(cpu->u, dev->u));
          EXPECT_TRUE(same_bits(cpu->v, dev->v));
        }
        rejected += !dev.ok();
      }
      EXPECT_GT(rejected, 0);
    }
}

// Issue 17: values at the edges of float (near +-FLT_MAX, whose reconstruction overflows so
// they are stored exactly; 1e38 beside 1e-38; denormals; signed zeros) under bounds from 0
// up to the 2^126 clamp. The model writes the CPU's bytes, and its decoder (the CUDA tile
// decoder's bodies, kernels/tile_decode.hpp) accepts the CPU's streams and reconstructs the
// CPU decoder's bits; with an overflowing vertex taken off the exact list both reject it.
std::vector<NamedField> float_edge_fields() {
  const float M = std::numeric_limits<float>::max();
  std::vector<NamedField> out;
  VectorField2D issue = constant(2, 2, 0.0f, 0.0f);
  issue.u = {-M, 0.0f, 0.0f, 1.0f};
  out.push_back({"issue17_2x2", std::move(issue)});
  out.push_back({"all_flt_max_4x3", constant(4, 3, M, -M)});
  VectorField2D mix = constant(33, 17, 0.0f, 0.0f);
  uint64_t state = 17;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  for (auto* p : {&mix.u, &mix.v})
    for (float& x : *p) {
      const float sign = next() % 2 ? -1.0f : 1.0f;
      const uint32_t denormal = 1 + next() % 0x7fffff;
      float d;
      std::memcpy(&d, &denormal, 4);
      const float choice[6] = {M, 1e38f, 1e-38f, d, 0.0f, 0.5f};
      x = sign * choice[next() % 6];
    }
  out.push_back({"edges_mix_33x17", std::move(mix)});
  VectorField2D huge = factz::synth::vortices(40, 35, 3, 4);
  for (auto* p : {&huge.u, &huge.v})
    for (float& x : *p) x = float(std::clamp(double(x) * 1e38, -double(M), double(M)));
  out.push_back({"vortices_huge_40x35", std::move(huge)});
  return out;
}

TEST(GpuModel, EdgesOfFloatGiveTheCpuBytesAndValues) {
  int streams = 0;
  for (const auto& nf : float_edge_fields())
    for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
      for (auto coder : {factz::Coder::huffman, factz::Coder::ans})
        for (auto [bm, bound] : {std::pair{factz::BoundMode::rel, 3e-2}, std::pair{factz::BoundMode::abs, 1e300},
                                 std::pair{factz::BoundMode::abs, 0.0}, std::pair{factz::BoundMode::abs, 1e-45}}) {
          factz::Options o;
          o.mode = mode;
          o.coder = coder;
          o.bound_mode = bm;
          o.bound = bound;
          o.anchor_stride = 4;
          o.zstd = coder == factz::Coder::ans;
          o.threads = 1;
          SCOPED_TRACE(nf.name + " " + factz::mode_name(mode) + "/" + factz::coder_name(coder) + " bound " +
                       std::to_string(bound));
          auto cpu = factz::compress(nf.f, o);
          ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
          auto model = factz::cuda_detail::model_compress(nf.f, o);
          ASSERT_TRUE(model.ok()) << model.status().to_string();
          EXPECT_TRUE(model.value() == cpu.value());
          auto a = factz::decompress(cpu.value());
          auto b = factz::cuda_detail::model_decompress(cpu.value());
          ASSERT_TRUE(a.ok()) << a.status().to_string();
          ASSERT_TRUE(b.ok()) << b.status().to_string();
          EXPECT_TRUE(same_bits(a->u, b->u));
          EXPECT_TRUE(same_bits(a->v, b->v));
          ++streams;
        }
  EXPECT_EQ(streams, 4 * 3 * 2 * 4);
}

TEST(GpuModel, AnOverflowingVertexOffTheExactListIsCorruptLikeOnTheCpu) {
  const float M = std::numeric_limits<float>::max();
  VectorField2D f = constant(2, 2, 0.0f, 0.0f);
  f.u = {-M, 0.0f, 0.0f, 1.0f};
  for (auto coder : {factz::Coder::huffman, factz::Coder::ans}) {
    factz::Options o;
    o.mode = factz::Mode::none;
    o.coder = coder;
    o.bound = 3e-2;
    o.zstd = false;
    auto s = factz::compress(f, o);
    ASSERT_TRUE(s.ok());
    const std::vector<uint8_t>& stream = s.value();
    auto whole = factz::cuda_detail::model_decompress(stream);
    ASSERT_TRUE(whole.ok()) << whole.status().to_string();
    EXPECT_EQ(whole->u[0], -M);
    auto pc = factz::detail::parse_container(stream);
    ASSERT_TRUE(pc.ok());
    std::vector<factz::detail::Section> sections;
    for (const auto& e : pc->entries) {
      auto raw = factz::detail::read_section(stream, pc.value(), e.id, nullptr);
      ASSERT_TRUE(raw.ok());
      std::vector<uint8_t> bytes = raw.value();
      if (e.id == factz::detail::kSectionExactIndex || e.id == factz::detail::kSectionExactValues) {
        std::span<const uint8_t> u_list, v_list;  // u's list holds vertex 0 only: drop it
        ASSERT_TRUE(factz::detail::split_lists(raw.value(), u_list, v_list, "exact").ok());
        const std::vector<uint8_t> empty_u =
            e.id == factz::detail::kSectionExactIndex ? std::vector<uint8_t>{0} : std::vector<uint8_t>{};
        bytes = factz::detail::concat_lists(empty_u, std::vector<uint8_t>(v_list.begin(), v_list.end()));
      }
      sections.push_back({e.id, std::move(bytes), false});
    }
    auto damaged = factz::detail::write_container(pc->header, sections, nullptr);
    ASSERT_TRUE(damaged.ok());
    auto cpu = factz::decompress(damaged.value());
    auto dev = factz::cuda_detail::model_decompress(damaged.value());
    ASSERT_FALSE(cpu.ok());
    ASSERT_FALSE(dev.ok());
    EXPECT_EQ(cpu.status().code(), factz::Code::corrupt_stream);
    EXPECT_EQ(dev.status().code(), factz::Code::corrupt_stream);
  }
}


// ---- Missing vertices (issue 17) -------------------------------------------------------
// The host finds the mask and fills the working copy as the CPU backend does; the bodies
// skip triangles off the mesh, give missing vertices their Lorenzo prediction (tiled modes)
// or their stand-in without an id (speculative); the stream layer writes the mask sections.
// The model's bytes are the CPU's, and its decoder (mask first, the stored bits last) the
// CPU decoder's values and mask, for every shape, marking, mode, coder and zstd setting.

/// The model's masked cases run with two threads (the bytes never depend on it).
std::vector<factz::Options> masked_option_sets() { return factz::test::masked_option_sets(2); }
using factz::test::describe;

/// The CPU's stream of f and the model's: equal bytes; both decoders give the same bits and
/// mask. Returns the number of missing vertices the CPU decoder reported.
int64_t expect_model_is_cpu(const VectorField2D& f, const factz::Options& o) {
  auto cpu = factz::compress(f, o);
  EXPECT_TRUE(cpu.ok()) << cpu.status().to_string();
  if (!cpu.ok()) return -1;
  auto model = factz::cuda_detail::model_compress(f, o);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return -1;
  EXPECT_EQ(model->size(), cpu->size());
  EXPECT_TRUE(model.value() == cpu.value()) << "model stream differs from the CPU's";
  auto a = factz::decompress(cpu.value());
  auto b = factz::cuda_detail::model_decompress(cpu.value());
  EXPECT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  if (!a.ok() || !b.ok()) return -1;
  EXPECT_TRUE(same_bits(a->u, b->u));
  EXPECT_TRUE(same_bits(a->v, b->v));
  EXPECT_EQ(a->mask, b->mask);
  return std::count(a->mask.begin(), a->mask.end(), uint8_t(1));
}

/// Every shape marked as `how`, every mode, coder and zstd setting (one test per marking:
/// each takes a while in the serial model).
void expect_every_shape_gives_the_cpus_streams(factz::test::MissingAs how) {
  const int64_t nx = 70, ny = 45;  // 3 x 2 tiles, 5 x 3 anchors of stride 16
  const VectorField2D base = factz::synth::turbulence(nx, ny, 3, 6.0);
  int streams = 0, masked_streams = 0;
  for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny)) {
    const int64_t expected = std::count(mask.begin(), mask.end(), uint8_t(1));
    const VectorField2D f = factz::test::with_missing(base, mask, how);
    for (const auto& o : masked_option_sets()) {
      SCOPED_TRACE(name + " " + factz::test::missing_as_name(how) + " " + describe(o));
      EXPECT_EQ(expect_model_is_cpu(f, o), expected);
      ++streams;
      masked_streams += expected > 0;
    }
  }
  EXPECT_EQ(streams, 11 * 12);
  EXPECT_EQ(masked_streams, 10 * 12);
}

TEST(GpuModelMasks, StreamsAreTheCpusForEveryShapeModeCoderAndZstdWithTheCallersMask) {
  expect_every_shape_gives_the_cpus_streams(factz::test::MissingAs::mask);
}

TEST(GpuModelMasks, StreamsAreTheCpusForEveryShapeModeCoderAndZstdWithNaN) {
  expect_every_shape_gives_the_cpus_streams(factz::test::MissingAs::nan);
}

TEST(GpuModelMasks, StreamsAreTheCpusForEveryShapeModeCoderAndZstdWithAFillValue) {
  expect_every_shape_gives_the_cpus_streams(factz::test::MissingAs::fill);
}

// Bounds that make the frontends work on masked fields: large relative bounds (repairs in
// block mode, many zero-vector and exact decisions in FaCTz-S), lossless, a tiny absolute
// bound (escaped codes, also at missing vertices), anchor strides 2, 4 and 4096.
TEST(GpuModelMasks, StreamsAreTheCpusAtEdgeBoundsAndStrides) {
  const VectorField2D base = factz::synth::vortices(67, 70, 4, 10);
  const auto shapes = factz::test::mask_shapes(67, 70);
  int streams = 0;
  for (const auto& [name, mask] : shapes) {
    if (name == "none" || name == "all") continue;
    const VectorField2D f = factz::test::with_missing(base, mask, factz::test::MissingAs::nan);
    for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
      for (auto [bm, bound, s0] : {std::tuple{factz::BoundMode::rel, 0.3, int64_t{2}},
                                   std::tuple{factz::BoundMode::abs, 0.0, int64_t{4}},
                                   std::tuple{factz::BoundMode::abs, 1e-30, int64_t{4096}},
                                   std::tuple{factz::BoundMode::rel, 1e-4, int64_t{4}}}) {
        factz::Options o;
        o.mode = mode;
        o.coder = streams % 2 ? factz::Coder::ans : factz::Coder::huffman;
        o.bound_mode = bm;
        o.bound = bound;
        o.anchor_stride = s0;
        o.threads = 2;
        SCOPED_TRACE(name + " " + describe(o));
        EXPECT_GT(expect_model_is_cpu(f, o), 0);
        ++streams;
      }
  }
  EXPECT_EQ(streams, 9 * 3 * 4);
}

// Grids without triangles (a row, a column, one vertex) and a single valid vertex.
TEST(GpuModelMasks, DegenerateGridsAndASingleValidVertex) {
  for (auto [nx, ny] : {std::pair<int64_t, int64_t>{40, 1}, {1, 29}, {1, 1}, {2, 2}, {33, 33}}) {
    VectorField2D f = factz::synth::noise(nx, ny, 5);
    f.u[0] = std::nanf("");
    for (const auto& o : masked_option_sets()) {
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + " " + describe(o));
      EXPECT_EQ(expect_model_is_cpu(f, o), 1);
    }
    VectorField2D one = f;  // only the last vertex is valid
    one.u[0] = 0.5f;
    one.mask.assign(size_t(one.size()), 1);
    one.mask.back() = 0;
    for (const auto& o : masked_option_sets()) {
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + " one valid " + describe(o));
      EXPECT_EQ(expect_model_is_cpu(one, o), one.size() - 1);
    }
  }
}

// Land as the 1-degree ocean's real coastlines: cmems_glob1deg_cur's land is zero in the
// file (it was NaN before); marked missing here.
TEST(GpuModelMasks, RealCoastlinesGiveTheCpuBytes) {
  const std::string dir = FACTZ_SHARED_DATA_DIR;
  auto f = factz::read_vector_field(dir + "/cmems_glob1deg_cur_u_360x171.f32", dir + "/cmems_glob1deg_cur_v_360x171.f32",
                                    360, 171);
  if (!f.ok()) GTEST_SKIP() << "cmems_glob1deg_cur is not in " << dir;
  VectorField2D ocean = std::move(f.value());
  ocean.mask.assign(size_t(ocean.size()), 0);
  for (size_t k = 0; k < ocean.mask.size(); ++k) ocean.mask[k] = ocean.u[k] == 0.0f && ocean.v[k] == 0.0f;
  const int64_t land = std::count(ocean.mask.begin(), ocean.mask.end(), uint8_t(1));
  ASSERT_GT(land, ocean.size() / 5);
  for (auto o : masked_option_sets()) {
    for (double rel : {1e-1, 1e-3}) {
      o.bound = rel;
      SCOPED_TRACE(describe(o));
      EXPECT_EQ(expect_model_is_cpu(ocean, o), land);
    }
  }
}

// The frontend's decisions on a masked working copy: tile ids, reconstructions, exact flags
// (never at a missing vertex) and the repair statistics of block mode.
TEST(GpuModelMasks, BlockFrontendMakesTheCpuDecisions) {
  const int64_t nx = 70, ny = 45;
  const VectorField2D base = factz::synth::vortices(nx, ny, 4, 12);
  int64_t exact_vertices = 0;
  for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny))
    for (float eb : {1e-3f, 0.2f, 5.0f}) {
      SCOPED_TRACE(name + " eb " + std::to_string(eb));
      const VectorField2D f = factz::test::with_missing(base, mask, factz::test::MissingAs::mask);
      const auto m = factz::cuda_detail::find_missing(f);
      const VectorField2D& work = m.any() ? m.work : f;
      const uint8_t* missing = m.any() ? m.mask.data() : nullptr;
      factz::detail::FrontendResult cpu;
      factz::detail::run_block(work, eb, 2, cpu, 0, missing);
      factz::Options o;
      o.mode = factz::Mode::block;
      o.bound_mode = factz::BoundMode::abs;
      o.bound = eb;
      factz::cuda_detail::TiledIntermediates mid;
      auto s = factz::cuda_detail::model_compress(f, o, &mid);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      EXPECT_EQ(mid.tile_ids[0], cpu.u.tile_ids);
      EXPECT_EQ(mid.tile_ids[1], cpu.v.tile_ids);
      EXPECT_TRUE(same_bits(mid.recon[0], std::vector<float>(cpu.u.recon.begin(), cpu.u.recon.end())));
      EXPECT_TRUE(same_bits(mid.recon[1], std::vector<float>(cpu.v.recon.begin(), cpu.v.recon.end())));
      EXPECT_TRUE(std::equal(mid.exact[0].begin(), mid.exact[0].end(), cpu.u.exact.begin(), cpu.u.exact.end()));
      EXPECT_TRUE(std::equal(mid.exact[1].begin(), mid.exact[1].end(), cpu.v.exact.begin(), cpu.v.exact.end()));
      EXPECT_EQ(mid.repair_rounds, cpu.repair_rounds);
      EXPECT_EQ(mid.repaired_vertices, cpu.repaired_vertices);
      for (size_t k = 0; k < mask.size(); ++k)
        if (mask[k]) {
          ASSERT_FALSE(mid.exact[0][k] || mid.exact[1][k]) << "missing vertex " << k << " stored exactly";
        }
      // Listed with all their bits or on the grid of their own bound (any nonzero flag).
      exact_vertices += std::count_if(mid.exact[0].begin(), mid.exact[0].end(), [](uint8_t e) { return e != 0; });
    }
  EXPECT_GT(exact_vertices, 0) << "the masked fields no longer store any vertex exactly";
}

// Repair on mode none's quantization with large bounds (many changed signatures): triangles
// touching a missing vertex are never checked, on the device as on the CPU.
TEST(GpuModelMasks, RepairRoundsMatchTheCpuAndSkipTrianglesOffTheMesh) {
  const int64_t nx = 70, ny = 45;
  const VectorField2D base = factz::synth::turbulence(nx, ny, 8, 6.0);
  int64_t total = 0, with_mask_less = 0;
  for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny))
    for (float eb : {0.05f, 0.5f}) {
      SCOPED_TRACE(name + " eb " + std::to_string(eb));
      const VectorField2D f = factz::test::with_missing(base, mask, factz::test::MissingAs::mask);
      const auto m = factz::cuda_detail::find_missing(f);
      const VectorField2D& work = m.any() ? m.work : f;
      const uint8_t* missing = m.any() ? m.mask.data() : nullptr;
      factz::detail::FrontendResult cpu;
      factz::detail::run_none(work, eb, 2, cpu, 0, missing);
      std::vector<float> recon[2] = {{cpu.u.recon.begin(), cpu.u.recon.end()}, {cpu.v.recon.begin(), cpu.v.recon.end()}};
      std::vector<uint8_t> exact[2] = {{cpu.u.exact.begin(), cpu.u.exact.end()}, {cpu.v.exact.begin(), cpu.v.exact.end()}};
      std::vector<float> unmasked_recon[2] = {recon[0], recon[1]};
      std::vector<uint8_t> unmasked_exact[2] = {exact[0], exact[1]};
      factz::detail::repair_signatures(work, nullptr, 2, cpu, missing);
      int64_t rounds = 0, repaired = 0;
      factz::cuda_detail::model_repair(work, nullptr, recon, exact, rounds, repaired, missing);
      EXPECT_TRUE(same_bits(recon[0], std::vector<float>(cpu.u.recon.begin(), cpu.u.recon.end())));
      EXPECT_TRUE(same_bits(recon[1], std::vector<float>(cpu.v.recon.begin(), cpu.v.recon.end())));
      EXPECT_TRUE(std::equal(exact[0].begin(), exact[0].end(), cpu.u.exact.begin(), cpu.u.exact.end()));
      EXPECT_TRUE(std::equal(exact[1].begin(), exact[1].end(), cpu.v.exact.begin(), cpu.v.exact.end()));
      EXPECT_EQ(rounds, cpu.repair_rounds);
      EXPECT_EQ(repaired, cpu.repaired_vertices);
      total += repaired;
      if (missing) {  // the same planes checked on the whole mesh repair more
        int64_t r0 = 0, rep0 = 0;
        factz::cuda_detail::model_repair(work, nullptr, unmasked_recon, unmasked_exact, r0, rep0);
        with_mask_less += rep0 > repaired;
      }
    }
  EXPECT_GT(total, 100) << "the fields no longer exercise the repair rounds";
  EXPECT_GT(with_mask_less, 0) << "no case where the mask removed a check";
}

// The device's form of the anchors' stand-ins (kernels/speculative_decode.hpp: the first
// valid anchor, column 0, then each anchor row on its own) follows the rule as written for
// the format: in linear streams row-major, a missing anchor takes its left neighbour's
// stand-in, else the one above, else the first valid anchor's value, else 0; in streams with
// another predictor (version 7) every missing anchor is 0.
TEST(GpuModelMasks, MissingAnchorStandInsFollowTheRowMajorRule) {
  uint64_t state = 2024;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  int cases = 0;
  for (auto [nx, ny, s0] : {std::tuple<int64_t, int64_t, int64_t>{70, 45, 16}, {33, 17, 2}, {5, 9, 4}, {1, 40, 8},
                            {40, 1, 8}, {129, 3, 64}})
    for (int density : {0, 10, 50, 90, 100}) {
      const auto A = factz::detail::anchor_lattice(nx, ny, s0);
      std::vector<uint8_t> missing(size_t(nx * ny), 0);
      for (auto& m : missing) m = int(next() % 100) < density;
      std::vector<float> u(missing.size()), v(missing.size());
      for (size_t k = 0; k < u.size(); ++k) {
        u[k] = float(next() % 1000) - 500.0f;
        v[k] = float(k);
      }
      std::vector<float> ru = u, rv = v;  // the rule, written out
      float first_u = 0.0f, first_v = 0.0f;
      for (int64_t a = 0; a < A.count(); ++a) {
        const int64_t k = factz::detail::lattice_vertex(A, nx, a);
        if (!missing[size_t(k)]) {
          first_u = ru[size_t(k)];
          first_v = rv[size_t(k)];
          break;
        }
      }
      for (int64_t j = 0; j < A.count_y; ++j)
        for (int64_t i = 0; i < A.count_x; ++i) {
          const int64_t k = j * A.dy * nx + i * A.dx;
          if (!missing[size_t(k)]) continue;
          const int64_t from = i > 0 ? k - A.dx : (j > 0 ? k - A.dy * nx : -1);
          ru[size_t(k)] = from >= 0 ? ru[size_t(from)] : first_u;
          rv[size_t(k)] = from >= 0 ? rv[size_t(from)] : first_v;
        }
      // The zero rule of the other predictors (format version 7), written out too.
      std::vector<float> zu = u, zv = v, cu = u, cv = v;
      for (int64_t a = 0; a < A.count(); ++a) {
        const int64_t k = factz::detail::lattice_vertex(A, nx, a);
        if (missing[size_t(k)]) zu[size_t(k)] = zv[size_t(k)] = 0.0f;
      }
      factz::detail::fill_missing_anchors(A, nx, missing.data(), u.data(), v.data(), factz::detail::Predictor::linear);
      EXPECT_TRUE(same_bits(u, ru) && same_bits(v, rv)) << nx << "x" << ny << " s0 " << s0 << " density " << density;
      factz::detail::fill_missing_anchors(A, nx, missing.data(), cu.data(), cv.data(), factz::detail::Predictor::cubic);
      EXPECT_TRUE(same_bits(cu, zu) && same_bits(cv, zv)) << nx << "x" << ny << " s0 " << s0 << " cubic";
      ++cases;
    }
  EXPECT_EQ(cases, 30);
}

// Damaged masked streams behind valid CRCs (the mask and masked_values sections included):
// the model of the device decoder accepts what the CPU decoder accepts, then gives the same
// values and mask.
TEST(GpuModelMasks, DamagedMaskedStreamsAreRejectedLikeTheCpuDoes) {
  const int64_t nx = 40, ny = 30;
  const VectorField2D f = factz::test::with_missing(factz::synth::turbulence(nx, ny, 9, 4.0),
                                                    factz::test::mask_shape(nx, ny, "land"), factz::test::MissingAs::nan);
  for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
    for (auto coder : {factz::Coder::ans, factz::Coder::huffman}) {
      SCOPED_TRACE(std::string(factz::mode_name(mode)) + "/" + factz::coder_name(coder));
      factz::Options o;
      o.mode = mode;
      o.coder = coder;
      o.zstd = false;
      o.bound = 1e-3;
      o.anchor_stride = 8;
      auto s = factz::compress(f, o);
      ASSERT_TRUE(s.ok());
      const auto damaged = factz::test::damaged_sections(s.value(), 4321, 200, true);
      ASSERT_FALSE(damaged.empty());
      int rejected = 0, accepted = 0;
      for (const auto& [trial, stream] : damaged) {
        auto cpu = factz::decompress(stream);
        auto dev = factz::cuda_detail::model_decompress(stream);
        EXPECT_EQ(cpu.ok(), dev.ok()) << "trial " << trial << ": cpu " << cpu.status().to_string() << ", device "
                                      << dev.status().to_string();
        if (cpu.ok() && dev.ok()) {
          EXPECT_TRUE(same_bits(cpu->u, dev->u));
          EXPECT_TRUE(same_bits(cpu->v, dev->v));
          EXPECT_EQ(cpu->mask, dev->mask);
        }
        rejected += !dev.ok();
        accepted += dev.ok();
      }
      EXPECT_GT(rejected, 0);
      EXPECT_GT(accepted, 0);
    }
}

TEST(GpuModelMasks, ExactEdgesStayRefusedWithMissingVertices) {
  VectorField2D f = factz::synth::noise(9, 9, 1);
  f.u[4] = std::nanf("");
  factz::Options o;
  o.exact_edges = 15;
  auto r = factz::cuda_detail::model_compress(f, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), factz::Code::backend_unavailable);
  EXPECT_NE(r.status().message().find("exact_edges"), std::string::npos) << r.status().message();
}

}  // namespace

// ---- Policy::cuda through the library's dispatch (src/api/device_dispatch.cpp) -------------
// The model installed as the device backend: factz::compress / decompress / decompress_into
// with Policy::cuda must give the CPU's bytes and values for every mode and coder, which is
// what the CUDA backend gives behind the same dispatch on a GPU.

namespace {

factz::Result<int> model_device_count() { return 1; }

factz::Result<std::vector<uint8_t>> model_compress_on(const VectorField2D& f, const factz::Options& o, int device) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  return factz::cuda_detail::model_compress(f, o);
}

factz::Status model_decompress_into_on(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                       int device) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  auto f = factz::cuda_detail::model_decompress(stream);
  if (!f.ok()) return f.status();
  if (f->u.size() != u.size() || f->v.size() != v.size()) return factz::invalid_argument("plane sizes");
  std::copy(f->u.begin(), f->u.end(), u.begin());
  std::copy(f->v.begin(), f->v.end(), v.begin());
  return factz::Status::Ok();
}

factz::Status model_decompress_into_masked_on(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                              int device, std::vector<uint8_t>* mask) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  auto f = factz::cuda_detail::model_decompress(stream);
  if (!f.ok()) return f.status();
  if (f->u.size() != u.size() || f->v.size() != v.size()) return factz::invalid_argument("plane sizes");
  std::copy(f->u.begin(), f->u.end(), u.begin());
  std::copy(f->v.begin(), f->v.end(), v.begin());
  *mask = std::move(f->mask);
  return factz::Status::Ok();
}

/// The model as the CUDA backend's table fills it (the decoder hands over the mask it read).
const factz::detail::DeviceBackend kModelBackend{&model_device_count, &model_compress_on, &model_decompress_into_on,
                                                 &model_decompress_into_masked_on};
/// A backend without the mask hand-over: the dispatch reads the mask itself.
const factz::detail::DeviceBackend kModelBackendWithoutMask{&model_device_count, &model_compress_on,
                                                            &model_decompress_into_on};

/// Makes `b` the device backend for one scope (null: none), then restores the build's own.
class DeviceBackendScope {
 public:
  explicit DeviceBackendScope(const factz::detail::DeviceBackend* b)
      : previous_(factz::detail::set_device_backend_for_testing(b)) {}
  ~DeviceBackendScope() { factz::detail::set_device_backend_for_testing(previous_); }
  DeviceBackendScope(const DeviceBackendScope&) = delete;
  DeviceBackendScope& operator=(const DeviceBackendScope&) = delete;

 private:
  const factz::detail::DeviceBackend* previous_;
};

TEST(GpuModelDispatch, PolicyCudaGivesTheCpuBytesAndValuesForEveryModeAndCoder) {
  DeviceBackendScope model(&kModelBackend);
  for (const auto& nf : all_fields())
    for (const Case& c : cases()) {
      SCOPED_TRACE(nf.name + " " + describe(c));
      factz::Options o = options_of(c);
      factz::CompressStats cpu_stats, gpu_stats;
      auto cpu = factz::compress(nf.f, o, &cpu_stats);
      ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
      factz::Options g = o;
      g.policy = factz::Policy::cuda;
      g.device = factz::kDeviceAuto;
      auto gpu = factz::compress(nf.f, g, &gpu_stats);
      ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
      ASSERT_TRUE(gpu.value() == cpu.value());
      EXPECT_EQ(gpu_stats.eb_abs, cpu_stats.eb_abs);

      factz::DecompressOptions d;
      d.policy = factz::Policy::cuda;
      auto a = factz::decompress(cpu.value());
      auto b = factz::decompress(cpu.value(), d);
      ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
      EXPECT_EQ(b->nx, a->nx);
      EXPECT_EQ(b->ny, a->ny);
      EXPECT_TRUE(same_bits(a->u, b->u));
      EXPECT_TRUE(same_bits(a->v, b->v));
      std::vector<float> u(a->u.size()), v(a->v.size());
      ASSERT_TRUE(factz::decompress_into(cpu.value(), u, v, d).ok());
      EXPECT_TRUE(same_bits(a->u, u));
      EXPECT_TRUE(same_bits(a->v, v));
    }
}

// Masked fields through the dispatch: the CPU's bytes and statistics' masked_vertices; the
// decoders give the CPU's values and the stream's mask (decompress's result, and
// decompress_into_on_device's mask output).
TEST(GpuModelDispatch, PolicyCudaCompressesAndDecodesMaskedFieldsLikeTheCpu) {
  const int64_t nx = 70, ny = 45;
  const VectorField2D base = factz::synth::turbulence(nx, ny, 13, 6.0);
  int masked = 0;
  for (const auto* table : {&kModelBackend, &kModelBackendWithoutMask})
    for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny))
      for (auto how : {factz::test::MissingAs::mask, factz::test::MissingAs::nan})
        for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative}) {
          SCOPED_TRACE(name + " " + factz::test::missing_as_name(how) + " " + factz::mode_name(mode) +
                       (table == &kModelBackend ? "" : " (the dispatch reads the mask)"));
          DeviceBackendScope model(table);
          const VectorField2D f = factz::test::with_missing(base, mask, how);
          factz::Options o;
          o.mode = mode;
          o.coder = mode == factz::Mode::block ? factz::Coder::huffman : factz::Coder::ans;
          factz::CompressStats cpu_stats, gpu_stats;
          auto cpu = factz::compress(f, o, &cpu_stats);
          ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
          factz::Options g = o;
          g.policy = factz::Policy::cuda;
          auto gpu = factz::compress(f, g, &gpu_stats);
          ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
          ASSERT_TRUE(gpu.value() == cpu.value());
          EXPECT_EQ(gpu_stats.eb_abs, cpu_stats.eb_abs);
          EXPECT_EQ(gpu_stats.masked_vertices, cpu_stats.masked_vertices);
          EXPECT_EQ(gpu_stats.masked_vertices, std::count(mask.begin(), mask.end(), uint8_t(1)));

          factz::DecompressOptions d;
          d.policy = factz::Policy::cuda;
          auto a = factz::decompress(cpu.value());
          auto b = factz::decompress(cpu.value(), d);
          ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
          EXPECT_TRUE(same_bits(a->u, b->u));
          EXPECT_TRUE(same_bits(a->v, b->v));
          EXPECT_EQ(a->mask, b->mask);
          std::vector<float> u(a->u.size()), v(a->v.size());
          std::vector<uint8_t> m = {7};  // left as it is for a stream without missing vertices
          ASSERT_TRUE(factz::detail::decompress_into_on_device(cpu.value(), u, v, d, &m).ok());
          EXPECT_TRUE(same_bits(a->u, u));
          EXPECT_TRUE(same_bits(a->v, v));
          EXPECT_EQ(m, a->mask.empty() ? std::vector<uint8_t>{7} : a->mask);
          masked += !a->mask.empty();
        }
  EXPECT_EQ(masked, 2 * 10 * 2 * 3);
}

TEST(GpuModelDispatch, PolicyCudaPassesOnTheBackendsRefusalsAndChecksDevices) {
  DeviceBackendScope model(&kModelBackend);
  const auto f = factz::synth::noise(9, 9, 1);
  factz::Options o;
  o.policy = factz::Policy::cuda;
  o.exact_edges = 1;  // not on the device yet: said so, never run on the CPU instead
  EXPECT_EQ(factz::compress(f, o).status().code(), factz::Code::backend_unavailable);
  o.exact_edges = 0;
  o.device = 1;
  auto r = factz::compress(f, o);
  EXPECT_EQ(r.status().code(), factz::Code::invalid_argument);
  EXPECT_EQ(r.status().message(), "policy cuda: device 1 does not exist: 1 CUDA device (0)");
  auto cpu = factz::compress(f, factz::Options{});
  ASSERT_TRUE(cpu.ok());
  auto half = std::span<const uint8_t>(cpu.value()).first(cpu->size() / 2);
  factz::DecompressOptions d;
  d.policy = factz::Policy::cuda;
  EXPECT_FALSE(factz::decompress(half, d).ok());
}

// The build's own backend on this machine: without a GPU (or without nvcc) every entry point
// answers backend_unavailable; on a GPU the CPU's bytes and values.
TEST(GpuModelDispatch, TheRealBackendRunsOnAGpuOrEveryEntryPointIsBackendUnavailable) {
  const auto f = factz::synth::turbulence(67, 45, 1, 4.0);
  for (const factz::Options& base : factz::test::every_mode_and_coder(1e-3)) {
    SCOPED_TRACE(std::string(factz::mode_name(base.mode)) + "/" + factz::coder_name(base.coder));
    auto cpu = factz::compress(f, base);
    ASSERT_TRUE(cpu.ok());
    factz::Options o = base;
    o.policy = factz::Policy::cuda;
    factz::DecompressOptions d;
    d.policy = factz::Policy::cuda;
    auto gpu = factz::compress(f, o);
    auto dec = factz::decompress(cpu.value(), d);
    std::vector<float> u(f.u.size()), v(f.v.size());
    const factz::Status into = factz::decompress_into(cpu.value(), u, v, d);
    if (gpu.ok()) {
      EXPECT_TRUE(gpu.value() == cpu.value());
      auto ref = factz::decompress(cpu.value());
      ASSERT_TRUE(dec.ok() && into.ok() && ref.ok());
      EXPECT_TRUE(same_bits(ref->u, dec->u) && same_bits(ref->v, dec->v));
      EXPECT_TRUE(same_bits(ref->u, u) && same_bits(ref->v, v));
      continue;
    }
    for (const factz::Status& s : {gpu.status(), dec.status(), into}) {
      EXPECT_EQ(s.code(), factz::Code::backend_unavailable) << s.to_string();
      EXPECT_EQ(s.message().rfind("policy cuda: ", 0), 0u) << s.to_string();
    }
  }
}

}  // namespace
