// The CUDA backend's 3D pipelines on a GPU (issue 22; label cuda: skipped with a message
// without a device). factz::compress of a VectorField3D with Policy::cuda gives the CPU's
// bytes, and decompress3d with Policy::cuda the CPU's values, for every mode, coder and
// zstd setting on synthetic, tie-heavy, tiny and real fields; the device frontends' decisions
// are the CPU model's (gpu_model3d.cpp), so a byte difference names its stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_internal3d.hpp"
#include "backend/cuda/gpu_model3d.hpp"
#include "factz/compress3d.hpp"
#include "factz/cuda.hpp"
#include "synth3d.hpp"

namespace {

using factz::Coder;
using factz::Mode;
using factz::VectorField3D;

#define REQUIRE_DEVICE()                                     \
  do {                                                       \
    const factz::Status st_ = factz::cuda::device_status();  \
    if (!st_.ok()) {                                         \
      GTEST_SKIP() << "no CUDA device: " << st_.message();   \
    }                                                        \
  } while (0)

VectorField3D noise(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  VectorField3D f;
  f.nx = nx, f.ny = ny, f.nz = nz;
  for (auto* p : {&f.u, &f.v, &f.w}) {
    p->resize(size_t(f.size()));
    for (float& x : *p) x = d(rng);
  }
  return f;
}

std::vector<std::pair<std::string, VectorField3D>> fields() {
  using namespace factz::testing;
  std::vector<std::pair<std::string, VectorField3D>> out;
  VectorField3D zeros = noise(9, 8, 7, 1);
  for (auto* p : {&zeros.u, &zeros.v, &zeros.w}) std::fill(p->begin(), p->end(), 0.0f);
  out.emplace_back("zeros", std::move(zeros));
  out.emplace_back("ties", tie_field(23, 21, 19, 5));
  out.emplace_back("tiny_2x2x2", noise(2, 2, 2, 2));
  out.emplace_back("one_cell_thick", noise(33, 17, 2, 3));
  out.emplace_back("noise", noise(40, 37, 35, 4));
  out.emplace_back("abc_64", abc_flow(64, 64, 64));
  out.emplace_back("random_modes_70x49x33", random_modes(70, 49, 33, 7));
  VectorField3D crop;
  crop.nx = crop.ny = crop.nz = 24;
  const char* names[3] = {"u", "v", "w"};
  std::vector<float>* planes[3] = {&crop.u, &crop.v, &crop.w};
  // The bundled crop: in the source tree, or with binaries carried by scripts/gpu-check.sh
  // --pack in $FACTZ_SHARED_DATA_DIR.
  const char* packed = std::getenv("FACTZ_SHARED_DATA_DIR");
  for (const std::string& dir : {std::string(FACTZ_TEST_DATA_DIR), std::string(packed ? packed : "")}) {
    bool ok = !dir.empty();
    for (int c = 0; c < 3 && ok; ++c) {
      planes[c]->resize(size_t(crop.size()));
      std::ifstream in(dir + "/cavity3d_crop_" + names[c] + "_24x24x24.f32", std::ios::binary);
      ok = bool(in.read(reinterpret_cast<char*>(planes[c]->data()), std::streamsize(crop.size() * 4)));
    }
    if (!ok) continue;
    out.emplace_back("cavity3d_crop", std::move(crop));
    break;
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(Cuda3D, PolicyCudaGivesTheCpuBytesAndValues) {
  REQUIRE_DEVICE();
  for (const auto& [name, f] : fields())
    for (double rel : {1e-1, 1e-3, 1e-4})
      for (Mode m : {Mode::none, Mode::block, Mode::speculative})
        for (Coder c : {Coder::huffman, Coder::ans})
          for (bool zstd : {false, true}) {
            SCOPED_TRACE(name + " " + factz::mode_name(m) + "/" + factz::coder_name(c) + " rel " +
                         std::to_string(rel) + (zstd ? " zstd" : ""));
            factz::Options o;
            o.mode = m;
            o.coder = c;
            o.zstd = zstd;
            o.bound = rel;
            o.anchor_stride = 16;
            auto cpu = factz::compress(f, o);
            ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
            factz::Options g = o;
            g.policy = factz::Policy::cuda;
            auto gpu = factz::compress(f, g);
            ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
            ASSERT_TRUE(gpu.value() == cpu.value()) << "the device's stream differs from the CPU's";
            factz::DecompressOptions d;
            d.policy = factz::Policy::cuda;
            auto got = factz::decompress3d(cpu.value(), d);
            ASSERT_TRUE(got.ok()) << got.status().to_string();
            auto want = factz::decompress3d(cpu.value());
            ASSERT_TRUE(want.ok());
            ASSERT_TRUE(same_bits(got->u, want->u) && same_bits(got->v, want->v) && same_bits(got->w, want->w));
          }
}

TEST(Cuda3D, DeviceDecisionsAreTheModels) {
  // Stage by stage on a field with edge tiles and repairs: the device frontends' per-vertex
  // results against gpu_model3d.cpp's.
  REQUIRE_DEVICE();
  const VectorField3D f = factz::testing::random_modes(45, 38, 33, 9, 24, 6);
  for (Mode m : {Mode::block, Mode::none, Mode::speculative}) {
    SCOPED_TRACE(factz::mode_name(m));
    factz::detail::Stream3DPlan p;
    p.nx = f.nx, p.ny = f.ny, p.nz = f.nz;
    p.options.mode = m;
    p.options.anchor_stride = 16;
    p.eb = 1e-3f;
    p.threads = 1;
    factz::cuda::Workspace ws;
    float* d[3] = {};
    const std::vector<float>* planes[3] = {&f.u, &f.v, &f.w};
    for (int c = 0; c < 3; ++c) {
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d[c]), size_t(f.size()) * 4), cudaSuccess);
      cudaMemcpy(d[c], planes[c]->data(), size_t(f.size()) * 4, cudaMemcpyHostToDevice);
    }
    if (m == Mode::speculative) {
      factz::detail::Speculative3DResult dev, model;
      ASSERT_TRUE(factz::cuda_detail::device_frontend_speculative3d(*ws.impl(), d[0], d[1], d[2], nullptr, p, nullptr,
                                                                    dev)
                      .ok());
      ASSERT_TRUE(factz::cuda_detail::model_speculative3d(f, p, nullptr, model).ok());
      EXPECT_TRUE(std::equal(dev.id.begin(), dev.id.end(), model.id.begin(), model.id.end())) << "ids";
      for (int c = 0; c < 3; ++c)
        EXPECT_TRUE(std::equal(dev.sym[c].begin(), dev.sym[c].end(), model.sym[c].begin(), model.sym[c].end()))
            << "symbols of component " << c;
    } else {
      factz::detail::Tiled3DResult dev, model;
      ASSERT_TRUE(
          factz::cuda_detail::device_frontend_tiled3d(*ws.impl(), d[0], d[1], d[2], nullptr, p, nullptr, dev).ok());
      ASSERT_TRUE(factz::cuda_detail::model_tiled3d(f, p, nullptr, model).ok());
      for (int c = 0; c < 3; ++c) {
        SCOPED_TRACE("component " + std::to_string(c));
        EXPECT_EQ(dev.tile_ids[c], model.tile_ids[c]) << "tile ids";
        EXPECT_EQ(dev.symbols[c], model.symbols[c]) << "symbols";
        EXPECT_EQ(dev.escapes[c], model.escapes[c]) << "escapes";
        EXPECT_TRUE(std::equal(dev.exact[c].begin(), dev.exact[c].end(), model.exact[c].begin(), model.exact[c].end()))
            << "exact flags";
        EXPECT_EQ(std::memcmp(dev.recon[c].data(), model.recon[c].data(), size_t(f.size()) * 4), 0) << "values";
      }
    }
    for (float* x : d) cudaFree(x);
  }
}

TEST(Cuda3D, MaskedFieldsGiveTheCpusBytesAndValues) {
  REQUIRE_DEVICE();
  VectorField3D f = factz::testing::random_modes(40, 33, 21, 6);
  f.mask.assign(size_t(f.size()), 0);
  for (size_t k = 3; k < f.mask.size(); k += 13) f.mask[k] = 1;
  for (size_t k = 0; k < 200; ++k) f.mask[k] = 1;  // a run inside the first tiles
  f.v[17 + f.size() / 2] = NAN;
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    SCOPED_TRACE(factz::mode_name(m));
    factz::Options o;
    o.mode = m;
    o.bound = 1e-3;
    auto cpu = factz::compress(f, o);
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
    o.policy = factz::Policy::cuda;
    auto r = factz::compress(f, o);
    factz::DecompressOptions d;
    d.policy = factz::Policy::cuda;
    auto got = factz::decompress3d(cpu.value(), d);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_TRUE(r.value() == cpu.value());
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    auto want = factz::decompress3d(cpu.value());
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(same_bits(got->u, want->u) && same_bits(got->v, want->v) && same_bits(got->w, want->w));
    EXPECT_EQ(got->mask, want->mask);
  }
}

TEST(Cuda3D, WithoutADeviceTheDispatchSaysSo) {
  if (factz::cuda::device_available()) GTEST_SKIP() << "a CUDA device is present";
  factz::Options o;
  o.policy = factz::Policy::cuda;
  auto r = factz::compress(noise(6, 5, 4, 7), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), factz::Code::backend_unavailable);
  EXPECT_NE(r.status().message().find("no CUDA device"), std::string::npos) << r.status().to_string();
}

}  // namespace
