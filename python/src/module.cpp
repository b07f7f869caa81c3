// The `factz._factz` extension: numpy in, bytes out, over the C++ API (include/factz/).
// Arrays are checked here (float32, 2D, C-contiguous, same shape) so that every bad input
// is a ValueError naming the problem; the library's own errors keep their messages. The
// GIL is released while the library works. The Python-facing API is python/factz/__init__.py.
// policy="cuda" is an option like the others: the library runs it on the GPU or answers
// backend_unavailable (BackendUnavailableError). Missing data arrives as a mask array (bool
// or uint8, the Python layer folds numpy.ma masks into it) and fill values, and becomes the
// field's mask (factz::mark_missing), as in the C API and the command line tool.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "factz/factz.h"
#include "factz/factz.hpp"
#include "factz/topology.hpp"

namespace py = pybind11;

namespace {

/// factz.BackendUnavailableError (a RuntimeError): policy "cuda" without a CUDA backend or device.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// invalid_argument, corrupt_stream and unsupported_version are the caller's input:
/// ValueError. backend_unavailable is BackendUnavailableError. Anything else (out of memory,
/// a CUDA failure, a bug) is RuntimeError.
[[noreturn]] void raise(const factz::Status& st) {
  const std::string text = st.to_string();
  switch (st.code()) {
    case factz::Code::invalid_argument:
    case factz::Code::corrupt_stream:
    case factz::Code::unsupported_version: throw py::value_error(text);
    case factz::Code::backend_unavailable: throw BackendUnavailable(text);
    default: throw std::runtime_error(text);
  }
}

/// A (ny, nx) float32 C-contiguous numpy array, or a ValueError that says what is wrong.
py::array checked_plane(const py::handle& obj, const char* name) {
  if (!py::isinstance<py::array>(obj))
    throw py::value_error(std::string(name) + " must be a numpy.ndarray of float32, got " +
                          std::string(py::str(py::type::of(obj).attr("__name__"))));
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<float>()))
    throw py::value_error(std::string(name) + " must have dtype float32 (native byte order), got " +
                          std::string(py::str(a.dtype())) + "; convert with .astype(numpy.float32)");
  if (a.ndim() != 2)
    throw py::value_error(std::string(name) + " must be 2-dimensional (ny, nx), got " + std::to_string(a.ndim()) +
                          " dimensions");
  if (a.shape(0) < 1 || a.shape(1) < 1)
    throw py::value_error(std::string(name) + " is empty (shape (" + std::to_string(a.shape(0)) + ", " +
                          std::to_string(a.shape(1)) + "))");
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(std::string(name) +
                          " must be C-contiguous; pass numpy.ascontiguousarray(" + name + ")");
  return a;
}

std::string shape_text(py::ssize_t ny, py::ssize_t nx) {
  return "(" + std::to_string(ny) + ", " + std::to_string(nx) + ")";
}

/// None, or a (ny, nx) C-contiguous array of bool or uint8 (nonzero: missing), else a ValueError.
std::optional<py::array> checked_mask(const py::handle& obj, const char* name, py::ssize_t ny, py::ssize_t nx) {
  if (obj.is_none()) return std::nullopt;
  if (!py::isinstance<py::array>(obj))
    throw py::value_error(std::string(name) + " must be a numpy.ndarray of bool, got " +
                          std::string(py::str(py::type::of(obj).attr("__name__"))));
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<bool>()) && !a.dtype().is(py::dtype::of<uint8_t>()))
    throw py::value_error(std::string(name) + " must have dtype bool (True where a vertex is missing), got " +
                          std::string(py::str(a.dtype())));
  if (a.ndim() != 2 || a.shape(0) != ny || a.shape(1) != nx)
    throw py::value_error(std::string(name) + " must have the field's shape " + shape_text(ny, nx) + ", got shape " +
                          std::string(py::str(a.attr("shape"))));
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(std::string(name) + " must be C-contiguous; pass numpy.ascontiguousarray(" + name + ")");
  return a;
}

/// A declared fill value as the float32 the planes hold: NaN adds nothing (NaN is always
/// missing); a finite value beyond the float32 range could never be held, a ValueError.
std::optional<float> fill_of(std::optional<double> fill, const char* name) {
  if (!fill || std::isnan(*fill)) return std::nullopt;
  const auto f = static_cast<float>(*fill);
  if (std::isinf(f) && !std::isinf(*fill))
    throw py::value_error(std::string(name) + " " + std::string(py::str(py::float_(*fill))) +
                          " is outside the float32 range: no float32 value equals it");
  return f;
}

/// The vector field (u, v) as the library's planes (a copy, made without the GIL), with the
/// missing vertices of `mask` (None or checked_mask's) and the fill values in its mask.
factz::VectorField2D field_of(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn,
                              const py::handle& mask_obj = py::none(), const char* mn = "mask",
                              const factz::FillValues& fill = {}) {
  py::array u = checked_plane(u_obj, un), v = checked_plane(v_obj, vn);
  if (u.shape(0) != v.shape(0) || u.shape(1) != v.shape(1))
    throw py::value_error(std::string(un) + " and " + vn + " must have the same shape, got " +
                          shape_text(u.shape(0), u.shape(1)) + " and " + shape_text(v.shape(0), v.shape(1)));
  const std::optional<py::array> mask = checked_mask(mask_obj, mn, u.shape(0), u.shape(1));
  factz::VectorField2D f;
  f.ny = u.shape(0);
  f.nx = u.shape(1);
  const auto* pu = static_cast<const float*>(u.data());
  const auto* pv = static_cast<const float*>(v.data());
  const auto* pm = mask ? static_cast<const uint8_t*>(mask->data()) : nullptr;
  py::gil_scoped_release nogil;
  f.u.assign(pu, pu + f.size());
  f.v.assign(pv, pv + f.size());
  if (pm) f.mask.assign(pm, pm + f.size());
  if (fill.any()) factz::mark_missing(f, fill);
  return f;
}

factz::FillValues fill_values(std::optional<double> fill_u, std::optional<double> fill_v) {
  return factz::FillValues{fill_of(fill_u, "fill_value for u"), fill_of(fill_v, "fill_value for v")};
}

/// A contiguous byte view of any buffer (bytes, bytearray, memoryview, numpy uint8).
class ByteView {
 public:
  explicit ByteView(const py::handle& obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw py::value_error("the stream must be a contiguous bytes-like object (bytes, bytearray, memoryview), got " +
                            std::string(py::str(py::type::of(obj).attr("__name__"))));
    }
  }
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;
  std::span<const uint8_t> span() const {
    return {static_cast<const uint8_t*>(view_.buf), size_t(view_.len)};
  }

 private:
  Py_buffer view_{};
};

factz::Mode mode_of(const std::string& s) {
  if (s == "speculative") return factz::Mode::speculative;
  if (s == "block") return factz::Mode::block;
  if (s == "none") return factz::Mode::none;
  throw py::value_error("mode must be 'speculative', 'block' or 'none', got '" + s + "'");
}

/// "" is the library's default coder (factz::Options).
factz::Coder coder_of(const std::string& s) {
  if (s.empty()) return factz::Options{}.coder;
  if (s == "huffman") return factz::Coder::huffman;
  if (s == "ans") return factz::Coder::ans;
  throw py::value_error("coder must be 'huffman' or 'ans', got '" + s + "'");
}

factz::BoundMode bound_of(const std::string& s) {
  if (s == "rel") return factz::BoundMode::rel;
  if (s == "abs") return factz::BoundMode::abs;
  throw py::value_error("bound must be 'rel' or 'abs', got '" + s + "'");
}

int threads_of(int threads) {
  if (threads < 0) throw py::value_error("threads must be >= 0 (0: OpenMP default), got " + std::to_string(threads));
  return threads;
}

/// "" (threads decides: 1 is serial, else OpenMP), "serial", "omp" or "cuda".
factz::Policy policy_of(const std::string& policy, int threads) {
  if (policy.empty()) return threads == 1 ? factz::Policy::serial : factz::Policy::omp;
  if (policy == "serial") return factz::Policy::serial;
  if (policy == "omp") return factz::Policy::omp;
  if (policy == "cuda") return factz::Policy::cuda;
  throw py::value_error("policy must be 'serial', 'omp' or 'cuda', got '" + policy + "'");
}

/// The stream and the compressor's counts (the keys of `factz compress --json`), plus
/// "suspected_fill": (value, count) of a value that looks like an undeclared fill value
/// (factz::suspected_fill_value; checked only when no fill value is declared), else None.
py::tuple compress(const py::handle& u, const py::handle& v, const std::string& mode, double eb,
                   const std::string& bound, const std::string& coder, int threads, bool zstd,
                   int64_t anchor_stride, const std::string& policy, int device, const py::handle& mask,
                   std::optional<double> fill_u, std::optional<double> fill_v) {
  factz::Options o;
  o.mode = mode_of(mode);
  o.coder = coder_of(coder);
  o.bound_mode = bound_of(bound);
  o.bound = eb;
  o.zstd = zstd;
  o.threads = threads_of(threads);
  o.policy = policy_of(policy, threads);
  o.device = device;
  o.anchor_stride = anchor_stride;
  const factz::FillValues fill = fill_values(fill_u, fill_v);
  factz::VectorField2D f = field_of(u, v, "u", "v", mask, "mask", fill);
  factz::Result<std::vector<uint8_t>> stream = factz::Status();
  factz::CompressStats st;
  std::optional<factz::SuspectedFill> suspect;
  {
    py::gil_scoped_release nogil;
    stream = factz::compress(f, o, &st);
    if (stream.ok() && !fill.any()) suspect = factz::suspected_fill_value(f);
  }
  if (!stream.ok()) raise(stream.status());
  py::dict stats;
  stats["eb_abs"] = st.eb_abs;
  stats["exact_vertices"] = st.exact_vertices;
  stats["repair_rounds"] = st.repair_rounds;
  stats["repaired_vertices"] = st.repaired_vertices;
  stats["masked_vertices"] = st.masked_vertices;
  stats["suspected_fill"] = suspect ? py::object(py::make_tuple(suspect->value, suspect->count)) : py::object(py::none());
  return py::make_tuple(py::bytes(reinterpret_cast<const char*>(stream->data()), stream->size()), stats);
}

py::tuple stream_shape(const py::handle& buf) {
  ByteView view(buf);
  factz::Result<std::pair<int64_t, int64_t>> dims = factz::Status();
  {
    py::gil_scoped_release nogil;
    dims = factz::stream_dims(view.span());
  }
  if (!dims.ok()) raise(dims.status());
  return py::make_tuple(dims->second, dims->first);
}

/// (u, v), or (u, v, mask) with a (ny, nx) uint8 mask (1: missing) when with_mask.
py::tuple decompress(const py::handle& buf, int threads, const std::string& policy, int device, bool with_mask) {
  ByteView view(buf);
  factz::DecompressOptions d;
  d.threads = threads_of(threads);
  d.policy = policy_of(policy, threads);
  d.device = device;
  factz::Result<std::pair<int64_t, int64_t>> dims = factz::Status();
  {
    py::gil_scoped_release nogil;
    dims = factz::stream_dims(view.span());
  }
  if (!dims.ok()) raise(dims.status());
  const auto [nx, ny] = *dims;
  py::array_t<float> u({ny, nx}), v({ny, nx});
  py::array_t<uint8_t> mask(with_mask ? std::vector<py::ssize_t>{ny, nx} : std::vector<py::ssize_t>{0, 0});
  std::span<float> pu(u.mutable_data(), size_t(nx * ny)), pv(v.mutable_data(), size_t(nx * ny));
  std::span<uint8_t> pm(mask.mutable_data(), with_mask ? size_t(nx * ny) : 0);
  factz::Status st;
  {
    py::gil_scoped_release nogil;
    st = with_mask ? factz::decompress_into(view.span(), pu, pv, pm, d) : factz::decompress_into(view.span(), pu, pv, d);
  }
  if (!st.ok()) raise(st);
  if (with_mask) return py::make_tuple(u, v, mask);
  return py::make_tuple(u, v);
}

/// Columns of the critical points: triangle, row, column, mu (n, 3), type code.
py::tuple critical_points(const py::handle& u, const py::handle& v, int threads, const py::handle& mask,
                          std::optional<double> fill_u, std::optional<double> fill_v) {
  factz::VectorField2D f = field_of(u, v, "u", "v", mask, "mask", fill_values(fill_u, fill_v));
  factz::Result<std::vector<factz::CriticalPoint>> cps = factz::Status();
  const factz::Exec exec{threads_of(threads)};
  {
    py::gil_scoped_release nogil;
    cps = factz::critical_points(f, exec);
  }
  if (!cps.ok()) raise(cps.status());
  const auto n = py::ssize_t(cps->size());
  py::array_t<int64_t> tri(n), row(n), col(n);
  py::array_t<double> mu({n, py::ssize_t(3)});
  py::array_t<uint8_t> type(n);
  for (py::ssize_t k = 0; k < n; ++k) {
    const factz::CriticalPoint& p = (*cps)[size_t(k)];
    tri.mutable_at(k) = p.triangle;
    row.mutable_at(k) = p.row;
    col.mutable_at(k) = p.column;
    for (py::ssize_t j = 0; j < 3; ++j) mu.mutable_at(k, j) = p.mu[size_t(j)];
    type.mutable_at(k) = uint8_t(p.type);
  }
  return py::make_tuple(tri, row, col, mu, type);
}

/// The comparison, with `mask` and the fill values marking the original's missing vertices
/// and `mask2` and the same fill values the reconstruction's.
py::dict verify(const py::handle& u, const py::handle& v, const py::handle& u2, const py::handle& v2, int threads,
                const py::handle& mask, const py::handle& mask2, std::optional<double> fill_u,
                std::optional<double> fill_v) {
  const factz::FillValues fill = fill_values(fill_u, fill_v);
  factz::VectorField2D a = field_of(u, v, "u", "v", mask, "mask", fill);
  factz::VectorField2D b = field_of(u2, v2, "u2", "v2", mask2, "mask2", fill);
  if (a.nx != b.nx || a.ny != b.ny)
    throw py::value_error("the reconstruction's shape (" + std::to_string(b.ny) + ", " + std::to_string(b.nx) +
                          ") differs from the original's (" + std::to_string(a.ny) + ", " + std::to_string(a.nx) +
                          ")");
  factz::Result<factz::Comparison> c = factz::Status();
  const factz::Exec exec{threads_of(threads)};
  {
    py::gil_scoped_release nogil;
    c = factz::compare(a, b, exec);
  }
  if (!c.ok()) raise(c.status());
  py::dict d;
  d["cp_original"] = c->cp_original;
  d["cp_decompressed"] = c->cp_decompressed;
  d["lost"] = c->lost;
  d["spurious"] = c->spurious;
  d["type_changed"] = c->type_changed;
  d["mask_mismatch"] = c->mask_mismatch;
  d["violations"] = c->violations();
  d["masked_vertices"] = c->masked_vertices;
  d["max_abs_error"] = py::make_tuple(c->max_abs_error[0], c->max_abs_error[1]);
  d["rmse"] = c->rmse;
  d["nrmse"] = c->nrmse;
  d["psnr"] = c->psnr;
  d["value_range"] = c->value_range;
  return d;
}

}  // namespace

PYBIND11_MODULE(_factz, m) {
  m.doc() = "FaCTz: error-bounded lossy compression of 2D vector fields that keeps every critical point";
  m.attr("HDF5_FILTER_ID") = FACTZ_HDF5_FILTER_ID;
  m.attr("FORMAT_VERSION") = FACTZ_FORMAT_VERSION;
  py::list names;
  for (int t = 0; t < factz::kCpTypeCount; ++t) names.append(factz::cp_type_name(factz::CpType(t)));
  m.attr("CP_TYPE_NAMES") = py::tuple(names);
  m.attr("DEFAULT_CODER") = factz::coder_name(factz::Options{}.coder);
  m.attr("DEVICE_AUTO") = factz::kDeviceAuto;
  py::register_exception<BackendUnavailable>(m, "BackendUnavailableError", PyExc_RuntimeError);
  m.def("compress", &compress, py::arg("u"), py::arg("v"), py::arg("mode") = "speculative", py::arg("eb") = 1e-2,
        py::arg("bound") = "rel", py::arg("coder") = "", py::arg("threads") = 0, py::arg("zstd") = true,
        py::arg("anchor_stride") = 16, py::arg("policy") = "", py::arg("device") = 0, py::arg("mask") = py::none(),
        py::arg("fill_u") = py::none(), py::arg("fill_v") = py::none());
  m.def("decompress", &decompress, py::arg("buf"), py::arg("threads") = 0, py::arg("policy") = "",
        py::arg("device") = 0, py::arg("with_mask") = false);
  m.def("stream_shape", &stream_shape, py::arg("buf"));
  m.def("critical_points", &critical_points, py::arg("u"), py::arg("v"), py::arg("threads") = 0,
        py::arg("mask") = py::none(), py::arg("fill_u") = py::none(), py::arg("fill_v") = py::none());
  m.def("verify", &verify, py::arg("u"), py::arg("v"), py::arg("u2"), py::arg("v2"), py::arg("threads") = 0,
        py::arg("mask") = py::none(), py::arg("mask2") = py::none(), py::arg("fill_u") = py::none(),
        py::arg("fill_v") = py::none());
}
