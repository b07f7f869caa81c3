// The CUDA kernels' bodies, driven on the host in launch order (gpu_model.cpp), make the
// CPU pipeline's decisions and write its bytes. Runs on every machine (no GPU, no nvcc):
// it is what shows the device code right before a GPU is available.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "synth.hpp"
#include "backend/cuda/gpu_model.hpp"
#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "codec/ans.hpp"
#include "codec/huffman.hpp"
#include "format/container.hpp"
#include "modes/frontend.hpp"

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
  const std::string dir = FACTZ_SHARED_DATA_DIR;
  for (auto [name, nx, ny] : {std::tuple{"ncl_storm_t0", 36, 33}, std::tuple{"cmems_glob1deg_cur", 360, 171}}) {
    const std::string base = dir + "/" + name;
    auto f = factz::read_vector_field(base + "_u_" + std::to_string(nx) + "x" + std::to_string(ny) + ".f32",
                                      base + "_v_" + std::to_string(nx) + "x" + std::to_string(ny) + ".f32", nx, ny);
    if (f.ok()) out.push_back({name, std::move(f.value())});
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
      factz::Options o;
      o.mode = c.mode;
      o.coder = c.coder;
      o.bound_mode = c.bound_mode;
      o.bound = c.bound;
      o.anchor_stride = c.anchor_stride;
      o.zstd = c.zstd;
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

// The device ANS decoder's bodies read codec/ans.cpp's blobs: constant, sparse and rANS
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
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
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
      auto pc = factz::detail::parse_container(bytes);
      ASSERT_TRUE(pc.ok());
      std::vector<factz::detail::Section> sections;
      for (const auto& e : pc->entries) {
        auto raw = factz::detail::read_section(bytes, pc.value(), e.id, nullptr);
        ASSERT_TRUE(raw.ok());
        sections.push_back({e.id, raw.value(), false});
      }
      int rejected = 0;
      for (int trial = 0; trial < 150; ++trial) {
        auto damaged = sections;
        auto& sec = damaged[next() % damaged.size()].raw;
        if (sec.empty()) continue;
        const size_t at = trial % 2 ? next() % std::min<size_t>(sec.size(), 24) : next() % sec.size();
        sec[at] ^= uint8_t(1 + next() % 255);
        if (trial % 5 == 0) sec.resize(sec.size() - 1);
        auto stream = factz::detail::write_container(pc->header, damaged, nullptr);
        ASSERT_TRUE(stream.ok());
        auto cpu = factz::decompress(stream.value());
        auto dev = factz::cuda_detail::model_decompress(stream.value());
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

}  // namespace
