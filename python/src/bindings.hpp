// What the files of the `factz._factz` extension share: the mapping of the library's
// Status to Python exceptions, checked numpy arrays and the 2D and 3D fields read from them
// (every bad input is a ValueError that names the argument and the fix), byte views of
// streams, and the option names. Each feature's bindings live in their own file (module.cpp:
// vector fields; vector3d.cpp: 3D vector fields; scalar.cpp; multiblock.cpp; flow.cpp;
// info.cpp) and register through a bind_* function.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/status.hpp"
#include "factz/topology.hpp"
#include "factz/topology3d.hpp"

namespace factz_py {

namespace py = pybind11;

/// factz.BackendUnavailableError (a RuntimeError): policy "cuda" without a CUDA backend or device.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// invalid_argument, corrupt_stream and unsupported_version are the caller's input:
/// ValueError. backend_unavailable is BackendUnavailableError. Anything else (out of memory,
/// a CUDA failure, a bug) is RuntimeError.
[[noreturn]] void raise(const factz::Status& st);

/// The value of a Result, or the exception raise() makes of its status.
template <class T>
T take(factz::Result<T>&& r) {
  if (!r.ok()) raise(r.status());
  return std::move(*r);
}

std::string shape_text(py::ssize_t ny, py::ssize_t nx);
std::string type_name(const py::handle& obj);

/// A numpy array of float32 with `ndim` dimensions (one of `ndims`), non-empty and
/// C-contiguous, else a ValueError that says what is wrong.
py::array checked_float32(const py::handle& obj, const char* name, std::span<const int> ndims,
                          const char* shape_hint);
/// checked_float32 for float64 arrays.
py::array checked_float64(const py::handle& obj, const char* name, std::span<const int> ndims,
                          const char* shape_hint);

/// The value type of the planes of a vector function: float32 or float64 numpy arrays
/// (native byte order), the same for both, else a ValueError naming the argument and the fix.
/// Nothing is converted: a float64 field goes through the library's float64 path.
factz::DType planes_dtype(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn);

/// None, or a C-contiguous array of bool or uint8 (nonzero: missing) of exactly `shape`.
std::optional<py::array> checked_mask(const py::handle& obj, const char* name, std::span<const py::ssize_t> shape);

/// A declared fill value as the float32 the planes hold: NaN adds nothing (NaN is always
/// missing); a finite value beyond the float32 range could never be held, a ValueError.
std::optional<float> fill_of(std::optional<double> fill, const char* name);

/// A contiguous byte view of any buffer (bytes, bytearray, memoryview, numpy uint8).
class ByteView {
 public:
  explicit ByteView(const py::handle& obj);
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;
  std::span<const uint8_t> span() const { return {static_cast<const uint8_t*>(view_.buf), size_t(view_.len)}; }

 private:
  Py_buffer view_{};
};

py::bytes bytes_of(const std::vector<uint8_t>& v);

factz::Mode mode_of(const std::string& s);
/// "" is the library's default coder (factz::Options, or factz::ScalarOptions with `scalar`);
/// "huffman", "ans", and with `scalar` also "smallest" and "context" (scalar streams only).
factz::Coder coder_of(const std::string& s, bool scalar = false);
factz::BoundMode bound_of(const std::string& s, const char* what = "bound");
int threads_of(int threads);
/// "" (threads decides: 1 is serial, else OpenMP), "serial", "omp" or "cuda".
factz::Policy policy_of(const std::string& policy, int threads);
factz::DecompressOptions decompress_options(int threads, const std::string& policy, int device);

/// A new C-contiguous numpy array of `shape` holding `values` (copied).
template <class T>
py::array_t<T> array_of(const std::vector<T>& values, std::vector<py::ssize_t> shape) {
  py::array_t<T> a(shape);
  if (!values.empty()) std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

/// The vector field (u, v) as the library's planes (a copy, made without the GIL), with the
/// missing vertices of `mask` (None, or a (ny, nx) bool/uint8 array) and the fill values in
/// its mask. un, vn, mn: the arguments' names in messages.
factz::VectorField2D field_of(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn,
                              const py::handle& mask_obj = py::none(), const char* mn = "mask",
                              const factz::FillValues& fill = {});
factz::FillValues fill_values(std::optional<double> fill_u, std::optional<double> fill_v);

/// field_of for float64 planes (checked_float64), with float64 fill values.
factz::VectorField2D64 field64_of(const py::handle& u_obj, const py::handle& v_obj, const char* un, const char* vn,
                                  const py::handle& mask_obj = py::none(), const char* mn = "mask",
                                  const factz::FillValues64& fill = {});
/// The declared fill values of a float64 field, compared with the doubles as they are (a
/// Python float is one); NaN adds nothing.
factz::FillValues64 fill_values64(std::optional<double> fill_u, std::optional<double> fill_v);

/// The field and fill value types of a 3D vector field of T (float or double).
template <class T>
struct Field3DOf {
  using Field = factz::VectorField3D;
  using Fill = factz::FillValues3D;
};
template <>
struct Field3DOf<double> {
  using Field = factz::VectorField3D64;
  using Fill = factz::FillValues3D64;
};

/// The value type of the three planes of a 3D function: all float32 or all float64 (the
/// message of planes_dtype names the pair that differs); nothing is converted.
factz::DType planes3d_dtype(const py::handle& u, const py::handle& v, const py::handle& w, const char* un,
                            const char* vn, const char* wn);
/// The declared fill values of a float32 3D field as the float32 values its planes hold (NaN
/// adds nothing; a finite value beyond the float32 range is a ValueError), and of a float64
/// one as the doubles they are (a Python float is one; NaN adds nothing). T: float or double.
template <class T>
typename Field3DOf<T>::Fill fill_values3d(std::optional<double> fill_u, std::optional<double> fill_v,
                                          std::optional<double> fill_w);
/// The 3D vector field (u, v, w) of T (float or double: (nz, ny, nx) arrays of that dtype,
/// checked as checked_float32 / checked_float64 do, of one shape) as the library's planes (a
/// copy, made without the GIL), with the missing vertices of `mask_obj` (None, or an
/// (nz, ny, nx) bool/uint8 array) and the fill values in its mask. un, vn, wn, mn: the
/// arguments' names in messages. The one reader of 3D fields for every binding (vector3d.cpp,
/// multiblock.cpp).
template <class T>
typename Field3DOf<T>::Field field3d_of(const py::handle& u_obj, const py::handle& v_obj, const py::handle& w_obj,
                                        const char* un, const char* vn, const char* wn,
                                        const py::handle& mask_obj = py::none(), const char* mn = "mask",
                                        const typename Field3DOf<T>::Fill& fill = {});

/// The options of `factz.compress` (names as there) as the library's, checked.
factz::Options vector_options(const std::string& mode, double eb, const std::string& bound, const std::string& coder,
                              int threads, bool zstd, int64_t anchor_stride, const std::string& policy, int device);
/// The counts of `factz compress --json`: eb_abs, exact_vertices, repair_rounds,
/// repaired_vertices, masked_vertices.
py::dict stats_dict(const factz::CompressStats& st);

/// Two new (ny, nx) float32 planes and, when with_mask, the (ny, nx) uint8 mask (1: missing;
/// all 0 when the field has none), from a decoded field: (u, v) or (u, v, mask).
py::tuple planes_of(const factz::VectorField2D& f, bool with_mask);

/// Which kind of stream the bytes hold: "vector", "scalar" (FaCTz containers, by their
/// component count), "multiblock" (FZMB), "flow" (FZFS), "flow_basis" (FZFB), or "" when
/// the magic is none of these (the caller's parser then says what is wrong).
std::string stream_kind(std::span<const uint8_t> bytes);

void bind_vector(py::module_& m);
void bind_vector3d(py::module_& m);
void bind_scalar(py::module_& m);
void bind_multiblock(py::module_& m);
void bind_flow(py::module_& m);
void bind_info(py::module_& m);

}  // namespace factz_py
