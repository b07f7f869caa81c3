// Policy::cuda is an option of factz::compress / decompress / decompress_into, dispatched by
// the library (src/api/device_dispatch.cpp): device numbers are checked against the device
// count, kDeviceAuto follows the launcher's node-local rank, and a build or machine without
// a GPU answers backend_unavailable. The CPU model of the GPU pipeline behind the same
// dispatch is tested in tests/cuda/test_gpu_model.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <omp.h>
#include <optional>
#include <string>

#include "api/device_backend.hpp"
#include "factz/factz.hpp"
#include "factz/multiblock.hpp"
#include "streams/vector_stream.hpp"
#include "synth.hpp"

namespace {

using factz::Code;
using factz::Policy;
using factz::detail::DeviceBackend;

/// A stand-in device backend: `devices` devices, the CPU pipeline's work, and a record of
/// the device and options each call received.
struct FakeDevice {
  static inline int devices = 2;
  static inline int calls = 0;
  static inline int last_device = -100;
  static inline factz::Policy last_policy = Policy::serial;

  static factz::Result<int> count() { return devices; }
  static factz::Result<std::vector<uint8_t>> compress(const factz::VectorField2D& f, const factz::Options& o,
                                                      int device) {
    ++calls;
    last_device = device;
    last_policy = o.policy;
    factz::Options cpu = o;
    cpu.policy = Policy::omp;
    return factz::compress(f, cpu);
  }
  static factz::Status decompress_into(std::span<const uint8_t> s, std::span<float> u, std::span<float> v,
                                       int device) {
    ++calls;
    last_device = device;
    return factz::decompress_into(s, u, v, factz::DecompressOptions{Policy::serial, 1});
  }
};

const DeviceBackend kFake{&FakeDevice::count, &FakeDevice::compress, &FakeDevice::decompress_into};

/// Installs a device backend for one test and puts the previous one back.
class BackendScope {
 public:
  explicit BackendScope(const DeviceBackend* b) : previous_(factz::detail::set_device_backend_for_testing(b)) {
    FakeDevice::devices = 2;
    FakeDevice::calls = 0;
    FakeDevice::last_device = -100;
  }
  ~BackendScope() { factz::detail::set_device_backend_for_testing(previous_); }
  BackendScope(const BackendScope&) = delete;
  BackendScope& operator=(const BackendScope&) = delete;

 private:
  const DeviceBackend* previous_;
};

/// Sets an environment variable for one scope (nullptr: unset) and restores it.
class EnvScope {
 public:
  EnvScope(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvScope() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Clears every launcher variable launcher_local_rank reads, for one scope.
struct NoLauncher {
  EnvScope a{"OMPI_COMM_WORLD_LOCAL_RANK", nullptr}, b{"MV2_COMM_WORLD_LOCAL_RANK", nullptr},
      c{"MPI_LOCALRANKID", nullptr}, d{"SLURM_LOCALID", nullptr}, e{"PMI_LOCAL_RANK", nullptr},
      f{"PALS_LOCAL_RANKID", nullptr};
};

factz::Options cuda_options(int device = 0) {
  factz::Options o;
  o.policy = Policy::cuda;
  o.device = device;
  return o;
}

factz::DecompressOptions cuda_decode(int device = 0) {
  factz::DecompressOptions d;
  d.policy = Policy::cuda;
  d.device = device;
  return d;
}

bool has(const factz::Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

TEST(Policy, CudaWithoutABackendIsBackendUnavailableAtEveryEntryPoint) {
  BackendScope none(nullptr);
  const auto f = factz::synth::turbulence(30, 20, 1);
  auto stream = factz::compress(f, factz::Options{});
  ASSERT_TRUE(stream.ok());
  auto c = factz::compress(f, cuda_options());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::backend_unavailable);
  EXPECT_EQ(c.status().to_string(),
            "backend_unavailable: policy cuda: this build has no CUDA backend (configure with -DFACTZ_CUDA=ON and nvcc)");
  auto d = factz::decompress(stream.value(), cuda_decode());
  EXPECT_EQ(d.status().code(), Code::backend_unavailable);
  std::vector<float> u(f.u.size()), v(f.v.size());
  EXPECT_EQ(factz::decompress_into(stream.value(), u, v, cuda_decode()).code(), Code::backend_unavailable);
  EXPECT_EQ(factz::compress(f, cuda_options(factz::kDeviceAuto)).status().code(), Code::backend_unavailable);
}

// This build's own backend on this machine: the CPU's bytes on a GPU, else a clear
// backend_unavailable (no CUDA backend built, or no device) from every entry point.
TEST(Policy, CudaRunsOnTheGpuOrSaysWhyNot) {
  const auto f = factz::synth::turbulence(30, 20, 2);
  auto cpu = factz::compress(f, factz::Options{});
  ASSERT_TRUE(cpu.ok());
  auto c = factz::compress(f, cuda_options());
  auto d = factz::decompress(cpu.value(), cuda_decode());
  std::vector<float> u(f.u.size()), v(f.v.size());
  const factz::Status into = factz::decompress_into(cpu.value(), u, v, cuda_decode());
  if (c.ok()) {
    EXPECT_EQ(c.value(), cpu.value());
    ASSERT_TRUE(d.ok() && into.ok());
    auto back = factz::decompress(cpu.value());
    EXPECT_EQ(d->u, back->u);
    EXPECT_EQ(u, back->u);
    return;
  }
  for (const factz::Status& s : {c.status(), d.status(), into}) {
    EXPECT_EQ(s.code(), Code::backend_unavailable) << s.to_string();
    EXPECT_TRUE(has(s, "policy cuda: ")) << s.to_string();
    EXPECT_TRUE(has(s, "no CUDA backend") || has(s, "no CUDA device")) << s.to_string();
  }
}

TEST(Policy, DeviceNumbersBelowAutoAreInvalidOnEveryBuild) {
  for (const DeviceBackend* b : {static_cast<const DeviceBackend*>(nullptr), &kFake}) {
    BackendScope scope(b);
    const auto f = factz::synth::noise(9, 7, 3);
    auto c = factz::compress(f, cuda_options(-2));
    EXPECT_EQ(c.status().code(), Code::invalid_argument);
    EXPECT_TRUE(has(c.status(), "device must be an ordinal >= 0 or kDeviceAuto (-1), got -2")) << c.status().to_string();
    auto stream = factz::compress(f, factz::Options{});
    ASSERT_TRUE(stream.ok());
    EXPECT_EQ(factz::decompress(stream.value(), cuda_decode(-7)).status().code(), Code::invalid_argument);
  }
}

TEST(Policy, ADeviceBeyondTheCountIsInvalidAndNamesTheCount) {
  BackendScope scope(&kFake);
  const auto f = factz::synth::noise(9, 7, 4);
  auto c = factz::compress(f, cuda_options(2));
  ASSERT_EQ(c.status().code(), Code::invalid_argument);
  EXPECT_EQ(c.status().message(), "policy cuda: device 2 does not exist: 2 CUDA devices (0..1)");
  FakeDevice::devices = 1;
  EXPECT_EQ(factz::compress(f, cuda_options(1)).status().message(),
            "policy cuda: device 1 does not exist: 1 CUDA device (0)");
  FakeDevice::devices = 0;
  auto none = factz::compress(f, cuda_options(0));
  EXPECT_EQ(none.status().code(), Code::backend_unavailable);
  EXPECT_EQ(none.status().message(), "policy cuda: no CUDA device");
  EXPECT_EQ(FakeDevice::calls, 0);
}

TEST(Policy, CudaReachesTheBackendWithTheDeviceAndGivesItsBytes) {
  BackendScope scope(&kFake);
  const auto f = factz::synth::turbulence(40, 30, 5);
  factz::Options o = cuda_options(1);
  o.mode = factz::Mode::block;
  factz::CompressStats st;
  auto gpu = factz::compress(f, o, &st);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  EXPECT_EQ(FakeDevice::last_device, 1);
  EXPECT_EQ(FakeDevice::last_policy, Policy::cuda);
  factz::Options cpu_o = o;
  cpu_o.policy = Policy::serial;
  factz::CompressStats cpu_st;
  auto cpu = factz::compress(f, cpu_o, &cpu_st);
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(gpu.value(), cpu.value());
  EXPECT_EQ(st.eb_abs, cpu_st.eb_abs);  // read back from the stream's header
  ASSERT_EQ(st.stage_seconds.size(), 1u);
  EXPECT_EQ(st.stage_seconds[0].first, "device");

  auto d = factz::decompress(cpu.value(), cuda_decode(0));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(FakeDevice::last_device, 0);
  auto ref = factz::decompress(cpu.value());
  EXPECT_EQ(d->u, ref->u);
  EXPECT_EQ(d->v, ref->v);
  std::vector<float> u(f.u.size()), v(f.v.size()), short_plane(f.u.size() - 1);
  ASSERT_TRUE(factz::decompress_into(cpu.value(), u, v, cuda_decode(1)).ok());
  EXPECT_EQ(u, ref->u);
  const int calls = FakeDevice::calls;
  EXPECT_EQ(factz::decompress_into(cpu.value(), short_plane, v, cuda_decode()).code(), Code::invalid_argument);
  std::vector<uint8_t> junk(100, 7);
  EXPECT_EQ(factz::decompress(junk, cuda_decode()).status().code(), Code::corrupt_stream);
  EXPECT_EQ(FakeDevice::calls, calls);  // refused before the device
}

TEST(Policy, AutoDeviceIsTheLocalRankModuloTheDeviceCount) {
  BackendScope scope(&kFake);
  NoLauncher clean;
  FakeDevice::devices = 3;
  EXPECT_EQ(factz::detail::launcher_local_rank(), 0);
  const auto f = factz::synth::noise(8, 8, 6);
  ASSERT_TRUE(factz::compress(f, cuda_options(factz::kDeviceAuto)).ok());
  EXPECT_EQ(FakeDevice::last_device, 0);
  {
    EnvScope rank("OMPI_COMM_WORLD_LOCAL_RANK", "4");
    ASSERT_TRUE(factz::compress(f, cuda_options(factz::kDeviceAuto)).ok());
    EXPECT_EQ(FakeDevice::last_device, 1);
  }
  {
    EnvScope rank("SLURM_LOCALID", "5");
    EXPECT_EQ(factz::detail::launcher_local_rank(), 5);
    EXPECT_EQ(factz::detail::resolve_device(factz::kDeviceAuto, 3).value(), 2);
  }
  {
    EnvScope junk("MPI_LOCALRANKID", "x1");  // not a number: ignored
    EXPECT_EQ(factz::detail::launcher_local_rank(), 0);
  }
  EXPECT_EQ(factz::detail::resolve_device(2, 3).value(), 2);
  EXPECT_EQ(factz::detail::resolve_device(3, 3).status().code(), Code::invalid_argument);
}

TEST(Policy, TheCpuPoliciesIgnoreTheDevice) {
  BackendScope none(nullptr);
  const auto f = factz::synth::turbulence(30, 20, 7);
  auto ref = factz::compress(f, factz::Options{});
  ASSERT_TRUE(ref.ok());
  for (Policy p : {Policy::serial, Policy::omp}) {
    factz::Options o;
    o.policy = p;
    o.device = 5;
    auto s = factz::compress(f, o);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s.value(), ref.value());
    factz::DecompressOptions d;
    d.policy = p;
    d.device = -9;
    EXPECT_TRUE(factz::decompress(ref.value(), d).ok());
  }
}

}  // namespace

namespace {

TEST(Policy, MultiBlockFilesSendEveryBlockToTheDeviceEvenWithThreads) {
  BackendScope scope(&kFake);
  const auto f = factz::synth::turbulence(70, 50, 9);
  factz::Options o = cuda_options(0);
  o.threads = 4;  // a CPU policy would spread the blocks over threads; cuda must not
  auto gpu = factz::compress_multiblock(f, o, 3, 2);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  EXPECT_EQ(FakeDevice::calls, 6);
  EXPECT_EQ(FakeDevice::last_policy, Policy::cuda);
  factz::Options cpu_o = o;
  cpu_o.policy = Policy::omp;
  auto cpu = factz::compress_multiblock(f, cpu_o, 3, 2);
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(gpu.value(), cpu.value());
  FakeDevice::calls = 0;
  factz::DecompressOptions d = cuda_decode(0);
  d.threads = 4;
  auto back = factz::decompress_multiblock(cpu.value(), d);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(FakeDevice::calls, 6);
  auto ref = factz::decompress_multiblock(cpu.value());
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(back->u, ref->u);
  EXPECT_EQ(back->v, ref->v);
}

}  // namespace

namespace factz {
namespace {

TEST(Policy, TheDefaultThreadCountFollowsTheFieldSizeAndAnAskedCountIsKept) {
  const int all = omp_get_max_threads();
  const int64_t per = detail::kValuesPerDefaultThread;
  EXPECT_EQ(detail::threads_of(Policy::serial, 0, int64_t(1) << 30), 1);
  EXPECT_EQ(detail::threads_of(Policy::serial, 4, int64_t(1) << 30), 1);
  EXPECT_EQ(detail::threads_of(Policy::omp, 3, 10), 3) << "a count asked for is kept, however small the field";
  EXPECT_EQ(detail::threads_of(Policy::omp, 0, 0), 1);
  EXPECT_EQ(detail::threads_of(Policy::omp, 0, 360 * 181), 1) << "a 0.5 MB field runs on one thread by default";
  EXPECT_EQ(detail::threads_of(Policy::omp, 0, 2 * per), std::min(all, 2));
  EXPECT_EQ(detail::threads_of(Policy::omp, 0, 2 * per - 1), 1);
  EXPECT_EQ(detail::threads_of(Policy::omp, 0, int64_t(4096) * 4096), std::min(all, 128));
  // And the bytes never depend on it: the default and explicit counts give the same stream.
  const VectorField2D f = synth::turbulence(96, 80, 9);
  Options o;
  o.mode = Mode::speculative;
  auto a = compress(f, o);
  o.threads = 2;
  auto b = compress(f, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a.value() == b.value());
}

}  // namespace
}  // namespace factz
