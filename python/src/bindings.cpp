// The helpers every file of the extension shares (bindings.hpp), and the module itself.
#include "bindings.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "factz/factz.h"
#include "factz/scalar.hpp"  // ScalarOptions: the scalar default coder

namespace factz_py {

void raise(const factz::Status& st) {
  const std::string text = st.to_string();
  switch (st.code()) {
    case factz::Code::invalid_argument:
    case factz::Code::corrupt_stream:
    case factz::Code::unsupported_version: throw py::value_error(text);
    case factz::Code::backend_unavailable: throw BackendUnavailable(text);
    default: throw std::runtime_error(text);
  }
}

std::string shape_text(py::ssize_t ny, py::ssize_t nx) {
  // Appended piece by piece: "(" + std::to_string(...) trips GCC 12's -Wrestrict false
  // positive (a memcpy of "more than 2^63 bytes" in basic_string::insert).
  std::string s = "(";
  s += std::to_string(ny);
  s += ", ";
  s += std::to_string(nx);
  s += ")";
  return s;
}

std::string type_name(const py::handle& obj) { return std::string(py::str(py::type::of(obj).attr("__name__"))); }

namespace {

template <class T>
constexpr const char* numpy_name() {
  return sizeof(T) == 4 ? "float32" : "float64";
}

/// checked_float32 / checked_float64.
template <class T>
py::array checked_floats(const py::handle& obj, const char* name, std::span<const int> ndims,
                         const char* shape_hint) {
  const std::string n(name), t(numpy_name<T>());
  if (!py::isinstance<py::array>(obj))
    throw py::value_error(n + " must be a numpy.ndarray of " + t + ", got " + type_name(obj));
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<T>()))
    throw py::value_error(n + " must have dtype " + t + " (native byte order), got " + std::string(py::str(a.dtype())) +
                          "; convert with .astype(numpy." + t + ")");
  bool rank_ok = false;
  for (int d : ndims) rank_ok = rank_ok || a.ndim() == d;
  if (!rank_ok)
    throw py::value_error(n + " must be " + shape_hint + ", got " + std::to_string(a.ndim()) + " dimensions");
  if (a.size() == 0) throw py::value_error(n + " is empty (shape " + std::string(py::str(a.attr("shape"))) + ")");
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(n + " must be C-contiguous; pass numpy.ascontiguousarray(" + n + ")");
  return a;
}

/// The dtype of one plane of a vector function (float32 or float64), else a ValueError.
factz::DType plane_dtype(const py::handle& obj, const char* name) {
  const std::string n(name);
  if (!py::isinstance<py::array>(obj))
    throw py::value_error(n + " must be a numpy.ndarray of float32 or float64, got " + type_name(obj));
  const py::dtype d = py::reinterpret_borrow<py::array>(obj).dtype();
  if (d.is(py::dtype::of<float>())) return factz::DType::float32;
  if (d.is(py::dtype::of<double>())) return factz::DType::float64;
  const std::string got = py::str(static_cast<const py::handle&>(d));
  throw py::value_error(n + " must have dtype float32 or float64 (native byte order), got " + got +
                        "; convert with .astype(numpy.float32) or .astype(numpy.float64)");
}

/// field_of / field64_of: the planes of T (checked), the mask and the fill values.
template <class Field, class Fill>
Field planes_field(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn,
                   const py::handle& mask_obj, const char* mn, const Fill& fill) {
  using T = typename decltype(Field::u)::value_type;
  static constexpr int kPlane[] = {2};
  py::array u = checked_floats<T>(u_obj, un, kPlane, "2-dimensional (ny, nx)");
  py::array v = checked_floats<T>(v_obj, vn, kPlane, "2-dimensional (ny, nx)");
  if (u.shape(0) != v.shape(0) || u.shape(1) != v.shape(1))
    throw py::value_error(std::string(un) + " and " + vn + " must have the same shape, got " +
                          shape_text(u.shape(0), u.shape(1)) + " and " + shape_text(v.shape(0), v.shape(1)));
  const std::optional<py::array> mask = checked_mask(mask_obj, mn, std::vector<py::ssize_t>{u.shape(0), u.shape(1)});
  Field f;
  f.ny = u.shape(0);
  f.nx = u.shape(1);
  const auto* pu = static_cast<const T*>(u.data());
  const auto* pv = static_cast<const T*>(v.data());
  const auto* pm = mask ? static_cast<const uint8_t*>(mask->data()) : nullptr;
  py::gil_scoped_release nogil;
  f.u.assign(pu, pu + f.size());
  f.v.assign(pv, pv + f.size());
  if (pm) f.mask.assign(pm, pm + f.size());
  if (fill.any()) factz::mark_missing(f, fill);
  return f;
}

}  // namespace

py::array checked_float32(const py::handle& obj, const char* name, std::span<const int> ndims,
                          const char* shape_hint) {
  return checked_floats<float>(obj, name, ndims, shape_hint);
}

py::array checked_float64(const py::handle& obj, const char* name, std::span<const int> ndims,
                          const char* shape_hint) {
  return checked_floats<double>(obj, name, ndims, shape_hint);
}

factz::DType planes_dtype(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn) {
  const factz::DType u = plane_dtype(u_obj, un), v = plane_dtype(v_obj, vn);
  if (u != v)
    throw py::value_error(std::string(un) + " and " + vn + " must have the same dtype, got " + factz::dtype_name(u) +
                          " and " + factz::dtype_name(v) + "; convert one with .astype");
  return u;
}

std::optional<py::array> checked_mask(const py::handle& obj, const char* name, std::span<const py::ssize_t> shape) {
  if (obj.is_none()) return std::nullopt;
  const std::string n(name);
  if (!py::isinstance<py::array>(obj))
    throw py::value_error(n + " must be a numpy.ndarray of bool, got " + type_name(obj));
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<bool>()) && !a.dtype().is(py::dtype::of<uint8_t>()))
    throw py::value_error(n + " must have dtype bool (True where a vertex is missing), got " +
                          std::string(py::str(a.dtype())));
  bool same = a.ndim() == py::ssize_t(shape.size());
  for (size_t k = 0; same && k < shape.size(); ++k) same = a.shape(py::ssize_t(k)) == shape[k];
  if (!same) {
    std::string want = "(";
    for (size_t k = 0; k < shape.size(); ++k) want += (k ? ", " : "") + std::to_string(shape[k]);
    throw py::value_error(n + " must have the field's shape " + want + (shape.size() == 1 ? ",)" : ")") +
                          ", got shape " + std::string(py::str(a.attr("shape"))));
  }
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(n + " must be C-contiguous; pass numpy.ascontiguousarray(" + n + ")");
  return a;
}

std::optional<float> fill_of(std::optional<double> fill, const char* name) {
  if (!fill || std::isnan(*fill)) return std::nullopt;
  const auto f = static_cast<float>(*fill);
  if (std::isinf(f) && !std::isinf(*fill))
    throw py::value_error(std::string(name) + " " + std::string(py::str(py::float_(*fill))) +
                          " is outside the float32 range: no float32 value equals it");
  return f;
}

factz::VectorField2D field_of(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn,
                              const py::handle& mask_obj, const char* mn, const factz::FillValues& fill) {
  return planes_field<factz::VectorField2D>(u_obj, v_obj, un, vn, mask_obj, mn, fill);
}

factz::VectorField2D64 field64_of(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn,
                                  const py::handle& mask_obj, const char* mn, const factz::FillValues64& fill) {
  return planes_field<factz::VectorField2D64>(u_obj, v_obj, un, vn, mask_obj, mn, fill);
}

factz::FillValues fill_values(std::optional<double> fill_u, std::optional<double> fill_v) {
  return factz::FillValues{fill_of(fill_u, "fill_value for u"), fill_of(fill_v, "fill_value for v")};
}

factz::FillValues64 fill_values64(std::optional<double> fill_u, std::optional<double> fill_v) {
  auto number = [](std::optional<double> f) { return f && !std::isnan(*f) ? f : std::nullopt; };
  return factz::FillValues64{number(fill_u), number(fill_v)};
}

// ---- 3D vector fields (vector3d.cpp, multiblock.cpp) ------------------------------------------

namespace {

constexpr const char* kShape3 = "3-dimensional (nz, ny, nx)";
constexpr int kVolume[] = {3};

std::string shape3_text(const py::array& a) {
  return "(" + std::to_string(a.shape(0)) + ", " + std::to_string(a.shape(1)) + ", " + std::to_string(a.shape(2)) +
         ")";
}

}  // namespace

factz::DType planes3d_dtype(const py::handle& u, const py::handle& v, const py::handle& w, const char* un,
                            const char* vn, const char* wn) {
  const factz::DType t = planes_dtype(u, v, un, vn);
  planes_dtype(u, w, un, wn);
  return t;
}

template <class T>
typename Field3DOf<T>::Field field3d_of(const py::handle& u_obj, const py::handle& v_obj, const py::handle& w_obj,
                                        const char* un, const char* vn, const char* wn,
                                        const py::handle& mask_obj, const char* mn,
                                        const typename Field3DOf<T>::Fill& fill) {
  const py::array u = checked_floats<T>(u_obj, un, kVolume, kShape3);
  const py::array v = checked_floats<T>(v_obj, vn, kVolume, kShape3);
  const py::array w = checked_floats<T>(w_obj, wn, kVolume, kShape3);
  for (const auto& [other, name] : {std::pair{&v, vn}, std::pair{&w, wn}}) {
    bool same = true;
    for (py::ssize_t k = 0; k < 3; ++k) same = same && other->shape(k) == u.shape(k);
    if (!same)
      throw py::value_error(std::string(un) + " and " + name + " must have the same shape, got " + shape3_text(u) +
                            " and " + shape3_text(*other));
  }
  const std::optional<py::array> mask =
      checked_mask(mask_obj, mn, std::vector<py::ssize_t>{u.shape(0), u.shape(1), u.shape(2)});
  typename Field3DOf<T>::Field f;
  f.nz = u.shape(0);
  f.ny = u.shape(1);
  f.nx = u.shape(2);
  const auto* pu = static_cast<const T*>(u.data());
  const auto* pv = static_cast<const T*>(v.data());
  const auto* pw = static_cast<const T*>(w.data());
  const auto* pm = mask ? static_cast<const uint8_t*>(mask->data()) : nullptr;
  py::gil_scoped_release nogil;
  f.u.assign(pu, pu + f.size());
  f.v.assign(pv, pv + f.size());
  f.w.assign(pw, pw + f.size());
  if (pm) f.mask.assign(pm, pm + f.size());
  if (fill.any()) factz::mark_missing(f, fill);
  return f;
}

template <class T>
typename Field3DOf<T>::Fill fill_values3d(std::optional<double> fill_u, std::optional<double> fill_v,
                                          std::optional<double> fill_w) {
  if constexpr (std::is_same_v<T, double>) {
    auto number = [](std::optional<double> f) { return f && !std::isnan(*f) ? f : std::nullopt; };
    return factz::FillValues3D64{number(fill_u), number(fill_v), number(fill_w)};
  } else {
    return factz::FillValues3D{fill_of(fill_u, "fill_value for u"), fill_of(fill_v, "fill_value for v"),
                               fill_of(fill_w, "fill_value for w")};
  }
}

// The two value types the templates of bindings.hpp take.
template Field3DOf<float>::Field field3d_of<float>(const py::handle&, const py::handle&, const py::handle&,
                                                   const char*, const char*, const char*, const py::handle&,
                                                   const char*, const Field3DOf<float>::Fill&);
template Field3DOf<double>::Field field3d_of<double>(const py::handle&, const py::handle&, const py::handle&,
                                                     const char*, const char*, const char*, const py::handle&,
                                                     const char*, const Field3DOf<double>::Fill&);
template Field3DOf<float>::Fill fill_values3d<float>(std::optional<double>, std::optional<double>,
                                                     std::optional<double>);
template Field3DOf<double>::Fill fill_values3d<double>(std::optional<double>, std::optional<double>,
                                                       std::optional<double>);


factz::Options vector_options(const std::string& mode, double eb, const std::string& bound, const std::string& coder,
                              int threads, bool zstd, int64_t anchor_stride, const std::string& policy, int device) {
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
  return o;
}

py::dict stats_dict(const factz::CompressStats& st) {
  py::dict stats;
  stats["eb_abs"] = st.eb_abs;
  stats["exact_vertices"] = st.exact_vertices;
  stats["repair_rounds"] = st.repair_rounds;
  stats["repaired_vertices"] = st.repaired_vertices;
  stats["masked_vertices"] = st.masked_vertices;
  return stats;
}

py::tuple planes_of(const factz::VectorField2D& f, bool with_mask) {
  const std::vector<py::ssize_t> shape{f.ny, f.nx};
  py::array_t<float> u = array_of(f.u, shape), v = array_of(f.v, shape);
  if (!with_mask) return py::make_tuple(u, v);
  py::array_t<uint8_t> mask(shape);
  if (f.mask.empty()) std::memset(mask.mutable_data(), 0, size_t(f.size()));
  else for (int64_t k = 0; k < f.size(); ++k) mask.mutable_data()[k] = f.mask[size_t(k)] ? 1 : 0;
  return py::make_tuple(u, v, mask);
}

ByteView::ByteView(const py::handle& obj) {
  if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw py::value_error("the stream must be a contiguous bytes-like object (bytes, bytearray, memoryview), got " +
                          type_name(obj));
  }
}

py::bytes bytes_of(const std::vector<uint8_t>& v) { return py::bytes(reinterpret_cast<const char*>(v.data()), v.size()); }

factz::Mode mode_of(const std::string& s) {
  if (s == "speculative") return factz::Mode::speculative;
  if (s == "block") return factz::Mode::block;
  if (s == "none") return factz::Mode::none;
  throw py::value_error("mode must be 'speculative', 'block' or 'none', got '" + s + "'");
}

factz::Coder coder_of(const std::string& s, bool scalar) {
  if (s.empty()) return scalar ? factz::ScalarOptions{}.coder : factz::Options{}.coder;
  if (s == "huffman") return factz::Coder::huffman;
  if (s == "ans") return factz::Coder::ans;
  if (scalar && s == "smallest") return factz::Coder::smallest;
  if (scalar && s == "context") return factz::Coder::context;
  if (scalar)
    throw py::value_error("coder must be 'smallest', 'ans', 'huffman' or 'context' for a scalar field, got '" + s + "'");
  throw py::value_error("coder must be 'huffman' or 'ans', got '" + s + "'");
}

factz::BoundMode bound_of(const std::string& s, const char* what) {
  if (s == "rel") return factz::BoundMode::rel;
  if (s == "abs") return factz::BoundMode::abs;
  throw py::value_error(std::string(what) + " must be 'rel' or 'abs', got '" + s + "'");
}

int threads_of(int threads) {
  if (threads < 0) throw py::value_error("threads must be >= 0 (0: OpenMP default), got " + std::to_string(threads));
  return threads;
}

factz::Policy policy_of(const std::string& policy, int threads) {
  if (policy.empty()) return threads == 1 ? factz::Policy::serial : factz::Policy::omp;
  if (policy == "serial") return factz::Policy::serial;
  if (policy == "omp") return factz::Policy::omp;
  if (policy == "cuda") return factz::Policy::cuda;
  throw py::value_error("policy must be 'serial', 'omp' or 'cuda', got '" + policy + "'");
}

factz::DecompressOptions decompress_options(int threads, const std::string& policy, int device) {
  factz::DecompressOptions d;
  d.threads = threads_of(threads);
  d.policy = policy_of(policy, threads);
  d.device = device;
  return d;
}

std::string stream_kind(std::span<const uint8_t> b) {
  if (b.size() < 4) return "";
  const auto magic = std::string(reinterpret_cast<const char*>(b.data()), 4);
  if (magic == "FCTZ") return factz::stream_components(b) == 1 ? "scalar" : "vector";
  if (magic == "FZMB") return "multiblock";
  if (magic == "FZFS") return "flow";
  if (magic == "FZFB") return "flow_basis";
  return "";
}

}  // namespace factz_py

PYBIND11_MODULE(_factz, m) {
  namespace py = pybind11;
  m.doc() = "FaCTz: error-bounded lossy compression of 2D and 3D vector fields that keeps every critical point";
  m.attr("HDF5_FILTER_ID") = FACTZ_HDF5_FILTER_ID;
  m.attr("FORMAT_VERSION") = FACTZ_FORMAT_VERSION;
  py::register_exception<factz_py::BackendUnavailable>(m, "BackendUnavailableError", PyExc_RuntimeError);
  factz_py::bind_vector(m);
  factz_py::bind_vector3d(m);
  factz_py::bind_multiblock(m);
  factz_py::bind_info(m);
#ifdef FACTZ_PY_SCALAR
  factz_py::bind_scalar(m);
#endif
#ifdef FACTZ_PY_FLOW
  factz_py::bind_flow(m);
#endif
}
