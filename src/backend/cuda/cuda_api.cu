// Public entry points of the CUDA backend (include/factz/cuda.hpp): device checks, the
// workspace, the device-pointer compress/decompress, the host-memory wrappers on a chosen
// device, and the table through which Policy::cuda reaches them (api/device_backend.hpp).
#include <memory>

#include "api/device_backend.hpp"
#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/cuda_internal3d.hpp"
#include "backend/cuda/device_util.cuh"

namespace factz::cuda {

Workspace::Workspace() : impl_(new Impl) {}

Workspace::~Workspace() {
  release();
  delete impl_;
}

size_t Workspace::bytes() const {
  size_t total = 0;
  for (size_t b : impl_->size) total += b;
  return total;
}

void Workspace::release() {
  for (int s = 0; s < cuda_detail::kSlotCount; ++s) {
    if (impl_->ptr[s]) cudaFree(impl_->ptr[s]);  // an error here (e.g. at exit) frees nothing more
    impl_->ptr[s] = nullptr;
    impl_->size[s] = 0;
  }
}

Status device_status() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return Status(Code::backend_unavailable,
                  std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")");
  }
  if (count == 0) return Status(Code::backend_unavailable, "no CUDA device");
  // Every entry point starts here: a non-sticky error that an earlier runtime call left
  // as the thread's last error (the caller's failed cudaMalloc, say, already returned to
  // it) must not be taken for a failure of this call's first launch check.
  (void)cudaGetLastError();
  return Status::Ok();
}

bool device_available() { return device_status().ok(); }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

namespace {

/// The calls without a workspace share one per host thread and device (a workspace's
/// buffers belong to one device).
Workspace& default_workspace() {
  thread_local std::vector<std::unique_ptr<Workspace>> per_device;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = 0;
  }
  if (per_device.size() <= size_t(device)) per_device.resize(size_t(device) + 1);
  if (!per_device[size_t(device)]) per_device[size_t(device)] = std::make_unique<Workspace>();
  return *per_device[size_t(device)];
}

/// Makes `device` current for the calling thread for the guard's lifetime, then restores
/// the device that was current before (a library call leaves the caller's choice alone).
class DeviceScope {
 public:
  DeviceScope() = default;
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() {
    if (switched_) (void)cuda_detail::cuda_status(cudaSetDevice(previous_), "cudaSetDevice");
  }
  Status enter(int device) {
    FACTZ_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ == device) return Status::Ok();
    FACTZ_CUDA_TRY(cudaSetDevice(device));
    switched_ = true;
    return Status::Ok();
  }

 private:
  int previous_ = 0;
  bool switched_ = false;
};

/// The device a host wrapper runs on: `requested` (or kDeviceAuto) checked against the count.
Result<int> host_device(int requested) {
  FACTZ_RETURN_IF_ERROR(device_status());
  return detail::resolve_device(requested, device_count());
}

}  // namespace

}  // namespace factz::cuda

namespace factz::cuda_detail {
namespace {

using cuda::Workspace;

// Every entry point below is one template on the value type T (float, or double for a
// float64 field or stream) with a public overload per type.

/// The stream of device planes holding finite values: the field, or its working copy when
/// vertices are missing (m: the host's MissingVertices, null or none missing otherwise;
/// the mask goes to the device and the mask sections into the stream).
template <class T>
Result<std::vector<uint8_t>> compress_planes(Workspace::Impl& ws, const T* u, const T* v, int64_t nx, int64_t ny,
                                             const Options& o, const MissingVerticesOf<FieldOf<T>>* m,
                                             cudaStream_t s) {
  uint8_t* missing = nullptr;
  if (m && m->any()) FACTZ_RETURN_IF_ERROR(upload(ws, kMask, m->mask, s, missing));
  double range = 0.0;  // of the working copy: the valid vertices' range, as on the CPU
  if (o.bound_mode == BoundMode::rel) FACTZ_RETURN_IF_ERROR(device_value_range(ws, u, v, nx * ny, s, range));
  const Plan p = make_plan<T>(nx, ny, o, range);
  if (o.mode == Mode::speculative) {
    SpeculativePayload pl;
    FACTZ_RETURN_IF_ERROR(device_compress_speculative(ws, p, u, v, missing, s, pl));
    return assemble_stream(p, pl, m);
  }
  TiledPayload pl;
  FACTZ_RETURN_IF_ERROR(device_compress_tiled(ws, p, u, v, missing, s, pl));
  return assemble_stream(p, pl, m);
}

/// The missing vertices' stored bits over the decoded device planes (the stream's mask in
/// `mask`), last, as the CPU decoder lays them.
template <class T>
Status lay_masked_values(Workspace::Impl& ws, std::span<const uint8_t> bytes, const detail::ParsedContainer& pc,
                         std::vector<uint8_t>& mask, T* u, T* v, cudaStream_t s) {
  MaskedValuesOf<T> mv;
  FACTZ_RETURN_IF_ERROR(masked_values(bytes, pc, mask, mv));
  int64_t* index = nullptr;
  T *mu = nullptr, *mvv = nullptr;
  FACTZ_RETURN_IF_ERROR(upload(ws, kMaskIndex, mv.index, s, index));
  FACTZ_RETURN_IF_ERROR(upload(ws, kMaskU, mv.u, s, mu));
  FACTZ_RETURN_IF_ERROR(upload(ws, kMaskV, mv.v, s, mvv));
  FACTZ_RETURN_IF_ERROR(for_each(int64_t(mv.index.size()), s, [=] __device__(int64_t e) {
    u[index[e]] = mu[e];
    v[index[e]] = mvv[e];
  }));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));  // the host lists outlive the copies
  return Status::Ok();
}

}  // namespace
}  // namespace factz::cuda_detail

namespace factz::cuda {
namespace {

/// cuda::compress of device planes of either type.
template <class T>
Result<std::vector<uint8_t>> compress_device(const T* d_u, const T* d_v, int64_t nx, int64_t ny, const Options& o,
                                             cudaStream_t stream, Workspace* workspace) try {
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(cuda_detail::check_options(nx, ny, o));
  if (!d_u || !d_v) return invalid_argument("device planes must not be null");
  Workspace::Impl& ws = *(workspace ? workspace : &default_workspace())->impl();
  const int64_t n = nx * ny;
  int64_t nonfinite = 0;
  FACTZ_RETURN_IF_ERROR(cuda_detail::device_count_nonfinite(ws, d_u, d_v, n, stream, nonfinite));
  using Field = cuda_detail::FieldOf<T>;
  if (nonfinite == 0)
    return cuda_detail::compress_planes(ws, d_u, d_v, nx, ny, o,
                                        static_cast<const cuda_detail::MissingVerticesOf<Field>*>(nullptr), stream);
  // NaN marks a vertex missing (as in factz::compress): the mask and the working copy are
  // found on the host, from a copy of the planes; infinity is invalid_argument there.
  Field f;
  f.nx = nx;
  f.ny = ny;
  f.u.resize(size_t(n));
  f.v.resize(size_t(n));
  FACTZ_CUDA_TRY(cudaMemcpyAsync(f.u.data(), d_u, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost, stream));
  FACTZ_CUDA_TRY(cudaMemcpyAsync(f.v.data(), d_v, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost, stream));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(stream));
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  const cuda_detail::MissingVerticesOf<Field> m = cuda_detail::find_missing(f);
  T *u = nullptr, *v = nullptr;
  FACTZ_RETURN_IF_ERROR(cuda_detail::upload(ws, cuda_detail::kWork0, m.work.u, stream, u));
  FACTZ_RETURN_IF_ERROR(cuda_detail::upload(ws, cuda_detail::kWork1, m.work.v, stream, v));
  return cuda_detail::compress_planes(ws, u, v, nx, ny, o, &m, stream);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory compressing on the GPU");
}

/// cuda::decompress into device planes of either type (the stream's data type must be T's),
/// and the stream's mask into *mask_out when given (left empty for a stream without
/// missing vertices).
template <class T>
Status decompress_planes(std::span<const uint8_t> bytes, T* d_u, T* d_v, int64_t nx, int64_t ny, cudaStream_t stream,
                         Workspace* workspace, std::vector<uint8_t>* mask_out) try {
  FACTZ_RETURN_IF_ERROR(device_status());
  auto pc = cuda_detail::parse_checked(bytes);
  if (!pc.ok()) return pc.status();
  FACTZ_RETURN_IF_ERROR(detail::require_dtype(pc->header, cuda_detail::kDtypeOf<T>));
  if (int64_t(pc->header.nx) != nx || int64_t(pc->header.ny) != ny)
    return invalid_argument("output planes are " + std::to_string(nx) + "x" + std::to_string(ny) + ", the stream holds " +
                            std::to_string(pc->header.nx) + "x" + std::to_string(pc->header.ny));
  if (!d_u || !d_v) return invalid_argument("device planes must not be null");
  Workspace::Impl& ws = *(workspace ? workspace : &default_workspace())->impl();
  const int threads = cuda_detail::host_threads();
  std::vector<uint8_t> mask;  // read first: the speculative sections skip missing vertices
  FACTZ_RETURN_IF_ERROR(cuda_detail::read_stream_mask(bytes, pc.value(), mask));
  uint8_t* missing = nullptr;
  if (!mask.empty()) FACTZ_RETURN_IF_ERROR(cuda_detail::upload(ws, cuda_detail::kMask, mask, stream, missing));
  const uint8_t* host_missing = mask.empty() ? nullptr : mask.data();
  if (pc->header.mode == uint8_t(Mode::speculative)) {
    cuda_detail::SpeculativeInputOf<T> in;
    FACTZ_RETURN_IF_ERROR(
        cuda_detail::parse_speculative(bytes, pc.value(), threads, in, /*leave_coded=*/true, host_missing,
                                       detail::Predictor::cubic));
    FACTZ_RETURN_IF_ERROR(cuda_detail::device_decode_speculative(ws, pc.value(), in, missing, d_u, d_v, stream));
  } else {  // from format version 5 on, the codes skip the missing vertices
    cuda_detail::TiledInputOf<T> in;
    FACTZ_RETURN_IF_ERROR(cuda_detail::parse_tiled_coded(bytes, pc.value(), in, host_missing));
    FACTZ_RETURN_IF_ERROR(cuda_detail::device_decode_tiled(ws, pc.value(), in, missing, d_u, d_v, stream));
  }
  if (mask.empty()) return Status::Ok();
  FACTZ_RETURN_IF_ERROR(cuda_detail::lay_masked_values(ws, bytes, pc.value(), mask, d_u, d_v, stream));
  if (mask_out) *mask_out = std::move(mask);
  return Status::Ok();
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory decompressing on the GPU");
}

}  // namespace

Result<std::vector<uint8_t>> compress(const float* d_u, const float* d_v, int64_t nx, int64_t ny, const Options& o,
                                      cudaStream_t stream, Workspace* workspace) {
  return compress_device(d_u, d_v, nx, ny, o, stream, workspace);
}

Result<std::vector<uint8_t>> compress(const double* d_u, const double* d_v, int64_t nx, int64_t ny, const Options& o,
                                      cudaStream_t stream, Workspace* workspace) {
  return compress_device(d_u, d_v, nx, ny, o, stream, workspace);
}

Status decompress(std::span<const uint8_t> bytes, float* d_u, float* d_v, int64_t nx, int64_t ny,
                  cudaStream_t stream, Workspace* workspace) {
  return decompress_planes(bytes, d_u, d_v, nx, ny, stream, workspace, nullptr);
}

Status decompress(std::span<const uint8_t> bytes, double* d_u, double* d_v, int64_t nx, int64_t ny,
                  cudaStream_t stream, Workspace* workspace) {
  return decompress_planes(bytes, d_u, d_v, nx, ny, stream, workspace, nullptr);
}

namespace {

template <class Field>
Result<std::vector<uint8_t>> compress_on(const Field& f, const Options& o, int device) try {
  using T = cuda_detail::ValueOf<Field>;
  DeviceScope scope;
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(scope.enter(device));
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  FACTZ_RETURN_IF_ERROR(cuda_detail::check_options(f.nx, f.ny, o));
  Workspace::Impl& ws = *default_workspace().impl();
  // Missing vertices: the device compresses the working copy with the mask (host_stream.hpp).
  const cuda_detail::MissingVerticesOf<Field> m = cuda_detail::find_missing(f);
  const Field& work = m.any() ? m.work : f;
  const size_t bytes = size_t(f.size()) * sizeof(T);
  T *u = nullptr, *v = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn0, bytes, u));
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn1, bytes, v));
  FACTZ_CUDA_TRY(cudaMemcpy(u, work.u.data(), bytes, cudaMemcpyHostToDevice));
  FACTZ_CUDA_TRY(cudaMemcpy(v, work.v.data(), bytes, cudaMemcpyHostToDevice));
  return cuda_detail::compress_planes(ws, u, v, f.nx, f.ny, o, &m, nullptr);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory compressing on the GPU");
}

/// decompress_into on `device`, and the stream's mask into *mask when given.
template <class T>
Status decompress_into_masked_on(std::span<const uint8_t> stream, std::span<T> out_u, std::span<T> out_v, int device,
                                 std::vector<uint8_t>* mask) try {
  DeviceScope scope;
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(scope.enter(device));
  auto dims = stream_dims(stream);
  if (!dims.ok()) return dims.status();
  const int64_t n = dims->first * dims->second;
  if (int64_t(out_u.size()) != n || int64_t(out_v.size()) != n)
    return invalid_argument("output planes must hold nx*ny = " + std::to_string(n) + " values");
  const size_t bytes = size_t(n) * sizeof(T);
  Workspace& workspace = default_workspace();
  Workspace::Impl& ws = *workspace.impl();
  T *u = nullptr, *v = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn0, bytes, u));
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn1, bytes, v));
  FACTZ_RETURN_IF_ERROR(decompress_planes(stream, u, v, dims->first, dims->second, nullptr, &workspace, mask));
  FACTZ_CUDA_TRY(cudaMemcpy(out_u.data(), u, bytes, cudaMemcpyDeviceToHost));
  FACTZ_CUDA_TRY(cudaMemcpy(out_v.data(), v, bytes, cudaMemcpyDeviceToHost));
  return Status::Ok();
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory decompressing on the GPU");
}

Status decompress_into_on(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v, int device) {
  return decompress_into_masked_on(stream, u, v, device, nullptr);
}

/// The three planes of a host 3D field in the workspace's input slots.
Status upload_field3d(Workspace::Impl& ws, const VectorField3D& f, const float* d[3]) {
  const size_t bytes = size_t(f.size()) * sizeof(float);
  const std::vector<float>* planes[3] = {&f.u, &f.v, &f.w};
  constexpr int kSlot[3] = {cuda_detail::kIn0, cuda_detail::kIn1, cuda_detail::kIn2};
  for (int c = 0; c < 3; ++c) {
    float* p = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(kSlot[c], bytes, p));
    FACTZ_CUDA_TRY(cudaMemcpy(p, planes[c]->data(), bytes, cudaMemcpyHostToDevice));
    d[c] = p;
  }
  return Status::Ok();
}

/// A host mask of n bytes in the workspace (out: null when `mask` is null).
Status upload_mask3d(Workspace::Impl& ws, const uint8_t* mask, int64_t n, uint8_t*& out) {
  out = nullptr;
  if (!mask) return Status::Ok();
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kMask, size_t(n), out));
  FACTZ_CUDA_TRY(cudaMemcpy(out, mask, size_t(n), cudaMemcpyHostToDevice));
  return Status::Ok();
}

/// factz::compress of a 3D field on `device` (the table's compress3d): the device frontends
/// around the host's stream code (host_stream3d.hpp).
Result<std::vector<uint8_t>> compress3d_on(const VectorField3D& f, const Options& o, int device) try {
  DeviceScope scope;
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(scope.enter(device));
  Workspace::Impl& ws = *default_workspace().impl();
  cuda_detail::Frontends3D fe;
  fe.tiled = [&](const VectorField3D& work, const detail::Stream3DPlan& p, const uint8_t* missing,
                 detail::Tiled3DResult& r) -> Status {
    const float* d[3];
    FACTZ_RETURN_IF_ERROR(upload_field3d(ws, work, d));
    uint8_t* d_missing = nullptr;
    FACTZ_RETURN_IF_ERROR(upload_mask3d(ws, missing, work.size(), d_missing));
    return cuda_detail::device_frontend_tiled3d(ws, d[0], d[1], d[2], d_missing, p, nullptr, r);
  };
  fe.speculative = [&](const VectorField3D& work, const detail::Stream3DPlan& p, const uint8_t* missing,
                       detail::Speculative3DResult& r) -> Status {
    const float* d[3];
    FACTZ_RETURN_IF_ERROR(upload_field3d(ws, work, d));
    uint8_t* d_missing = nullptr;
    FACTZ_RETURN_IF_ERROR(upload_mask3d(ws, missing, work.size(), d_missing));
    return cuda_detail::device_frontend_speculative3d(ws, d[0], d[1], d[2], d_missing, p, nullptr, r);
  };
  return cuda_detail::compress3d_with(f, o, fe);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory compressing a 3D field on the GPU");
}

/// decompress3d's decode on `device` (the table's decompress3d_into).
Status decompress3d_into_on(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                            std::span<float> w, int device, std::vector<uint8_t>* mask) try {
  DeviceScope scope;
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(scope.enter(device));
  Workspace::Impl& ws = *default_workspace().impl();
  // Device planes in the input slots, decoded there, then copied into u, v, w.
  auto run = [&](auto&& decode, std::span<float> hu, std::span<float> hv, std::span<float> hw) -> Status {
    const size_t bytes = hu.size() * sizeof(float);
    float *du = nullptr, *dv = nullptr, *dw = nullptr;
    FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn0, bytes, du));
    FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn1, bytes, dv));
    FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn2, bytes, dw));
    FACTZ_RETURN_IF_ERROR(decode(du, dv, dw));
    FACTZ_CUDA_TRY(cudaMemcpy(hu.data(), du, bytes, cudaMemcpyDeviceToHost));
    FACTZ_CUDA_TRY(cudaMemcpy(hv.data(), dv, bytes, cudaMemcpyDeviceToHost));
    FACTZ_CUDA_TRY(cudaMemcpy(hw.data(), dw, bytes, cudaMemcpyDeviceToHost));
    return Status::Ok();
  };
  cuda_detail::Decoders3D de;
  de.tiled = [&](const detail::Header& h, const detail::Tiled3DInput& in, std::span<float> hu, std::span<float> hv,
                 std::span<float> hw) {
    return run(
        [&](float* du, float* dv, float* dw) {
          return cuda_detail::device_decode_tiled3d(ws, h, in, du, dv, dw, nullptr);
        },
        hu, hv, hw);
  };
  de.speculative = [&](const detail::Header& h, const detail::Speculative3DInput& in, std::span<float> hu,
                       std::span<float> hv, std::span<float> hw) {
    return run(
        [&](float* du, float* dv, float* dw) {
          return cuda_detail::device_decode_speculative3d(ws, h, in, du, dv, dw, nullptr);
        },
        hu, hv, hw);
  };
  return cuda_detail::decompress3d_with(stream, u, v, w, mask, de);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory decompressing a 3D stream on the GPU");
}

Result<int> table_device_count() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return Status(Code::backend_unavailable,
                  std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")");
  }
  return count;
}

}  // namespace

Result<std::vector<uint8_t>> compress(const VectorField2D& f, const Options& o) {
  auto device = host_device(o.device);
  if (!device.ok()) return device.status();
  return compress_on(f, o, device.value());
}

Result<std::vector<uint8_t>> compress(const VectorField2D64& f, const Options& o) {
  auto device = host_device(o.device);
  if (!device.ok()) return device.status();
  return compress_on(f, o, device.value());
}

Result<VectorField2D> decompress(std::span<const uint8_t> stream, int device) {
  // The same path as factz::decompress with Policy::cuda (api/device_dispatch.cpp).
  return factz::decompress(stream, DecompressOptions{Policy::cuda, 0, device});
}

Result<VectorField2D64> decompress64(std::span<const uint8_t> stream, int device) {
  // The same path as factz::decompress64 with Policy::cuda (api/device_dispatch.cpp).
  return factz::decompress64(stream, DecompressOptions{Policy::cuda, 0, device});
}

Status decompress_into(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v, int device) {
  auto d = host_device(device);
  if (!d.ok()) return d.status();
  return decompress_into_on(stream, u, v, d.value());
}

Status decompress_into(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v, int device) {
  auto d = host_device(device);
  if (!d.ok()) return d.status();
  return decompress_into_masked_on(stream, u, v, d.value(), nullptr);
}

}  // namespace factz::cuda

namespace factz::cuda_detail {

const detail::DeviceBackend& cuda_backend() {
  static const detail::DeviceBackend table{&cuda::table_device_count,
                                           &cuda::compress_on<VectorField2D>,
                                           &cuda::decompress_into_on,
                                           &cuda::decompress_into_masked_on<float>,
                                           &cuda::compress_on<VectorField2D64>,
                                           &cuda::decompress_into_masked_on<double>,
                                           &cuda::compress3d_on,
                                           &cuda::decompress3d_into_on};
  return table;
}

}  // namespace factz::cuda_detail
