// The 3D vector-field part of the `factz._factz` extension (issue 22): three numpy arrays of
// shape (nz, ny, nx) in, bytes out, over the C++ 3D API (factz/compress3d.hpp,
// factz/topology3d.hpp). Arrays are checked (all float32 or all float64, 3 dimensions,
// C-contiguous, one shape) so that every bad input is a ValueError naming the argument and the
// fix; float64 planes go through the library's float64 3D path (VectorField3D64, format
// version 13) and a float64 stream decodes to float64 planes: nothing is rounded or widened
// silently. The options are those of the 2D
// `compress` (bindings.cpp: vector_options), passed through: which modes and policies 3D
// fields take is the library's decision, and its refusals keep their messages. Missing data
// arrives as in 2D (module.cpp): a mask array (bool or uint8, (nz, ny, nx); the Python layer
// folds numpy.ma masks into it) and a fill value per component, marked in the field's mask
// (factz::mark_missing, FillValues3D or FillValues3D64). The GIL is released while the library
// works. The Python-facing API is python/factz/__init__.py.
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <optional>
#include <type_traits>
#include <utility>

#include "bindings.hpp"
#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"

namespace factz_py {

namespace {

/// The bytes of a 2D vector stream handed to a 3D function (or the reverse) name the
/// function that reads them. Only for streams the other parser accepts: damaged bytes keep
/// the library's message.
[[noreturn]] void raise_read_error(std::span<const uint8_t> stream, const factz::Status& st, const char* function) {
  if (st.code() == factz::Code::unsupported_version) {
    if (auto info = factz::stream_info(stream); info.ok())
      throw py::value_error(std::string(function) + ": this is a 2D vector stream (shape " +
                            shape_text(info->ny, info->nx) + "); read it with factz.decompress");
  }
  raise(st);
}

/// The stream of a 3D field of T and the compressor's counts, with "suspected_fill" as
/// compress3d describes it.
template <class T>
py::tuple compress_field3d(const py::handle& u, const py::handle& v, const py::handle& w, const factz::Options& o,
                           const py::handle& mask, std::optional<double> fill_u, std::optional<double> fill_v,
                           std::optional<double> fill_w, std::optional<py::error_already_set>& progress_error) {
  const auto fill = fill_values3d<T>(fill_u, fill_v, fill_w);
  auto f = field3d_of<T>(u, v, w, "u", "v", "w", mask, "mask", fill);
  factz::Result<std::vector<uint8_t>> stream = factz::Status();
  factz::CompressStats st;
  decltype(factz::suspected_fill_value(f)) suspect;
  {
    py::gil_scoped_release nogil;
    if (!fill.any()) suspect = factz::suspected_fill_value(f);  // before the planes are given up
    stream = factz::compress(std::move(f), o, &st);             // our copy: no second one
  }
  if (progress_error) throw std::move(*progress_error);
  if (!stream.ok()) raise(stream.status());
  py::dict stats = stats_dict(st);
  const char* dtype = std::is_same_v<T, double> ? "float64" : "float32";
  stats["suspected_fill"] = suspect ? py::object(py::make_tuple(double(suspect->value), suspect->count, dtype))
                                    : py::object(py::none());
  return py::make_tuple(bytes_of(*stream), stats);
}

/// The stream and the compressor's counts (the keys of `factz compress --json`), plus
/// "suspected_fill": (value, count, dtype name) of a value that looks like an undeclared fill
/// value (factz::suspected_fill_value; checked only when no fill value is declared), else
/// None, as compress (module.cpp) reports it. Float64 planes (all three) compress as a
/// float64 field.
py::tuple compress3d(const py::handle& u, const py::handle& v, const py::handle& w, const std::string& mode,
                     double eb, const std::string& bound, const std::string& coder, int threads, bool zstd,
                     int64_t anchor_stride, const std::string& policy, int device, const py::object& progress,
                     const py::handle& mask, std::optional<double> fill_u, std::optional<double> fill_v,
                     std::optional<double> fill_w) {
  factz::Options o = vector_options(mode, eb, bound, coder, threads, zstd, anchor_stride, policy, device);
  // The caller's progress(stage, fraction), with the GIL; its first exception is raised
  // once the library returns (the hook must not throw through the library).
  std::optional<py::error_already_set> progress_error;
  if (!progress.is_none())
    o.progress = [&progress, &progress_error](const factz::Progress& p) {
      py::gil_scoped_acquire gil;
      if (progress_error) return;
      try {
        progress(std::string(p.stage), p.fraction);
      } catch (py::error_already_set& e) {
        progress_error.emplace(std::move(e));
      }
    };
  if (planes3d_dtype(u, v, w, "u", "v", "w") == factz::DType::float64)
    return compress_field3d<double>(u, v, w, o, mask, fill_u, fill_v, fill_w, progress_error);
  return compress_field3d<float>(u, v, w, o, mask, fill_u, fill_v, fill_w, progress_error);
}

std::array<int64_t, 3> dims3d_of(std::span<const uint8_t> stream, const char* function) {
  factz::Result<std::array<int64_t, 3>> dims = factz::Status();
  {
    py::gil_scoped_release nogil;
    dims = factz::stream_dims3d(stream);
  }
  if (!dims.ok()) raise_read_error(stream, dims.status(), function);
  return *dims;
}

py::tuple stream_shape3d(const py::handle& buf) {
  ByteView view(buf);
  const auto d = dims3d_of(view.span(), "stream_shape3d");
  return py::make_tuple(d[2], d[1], d[0]);
}

factz::Result<factz::VectorField3D> decode3d(std::span<const uint8_t> s, const factz::DecompressOptions& d, float*) {
  return factz::decompress3d(s, d);
}
factz::Result<factz::VectorField3D64> decode3d(std::span<const uint8_t> s, const factz::DecompressOptions& d,
                                               double*) {
  return factz::decompress3d64(s, d);
}

/// The stream decoded as a field of T into new (nz, ny, nx) arrays, and the mask when
/// with_mask.
template <class T>
py::tuple decode_planes3d(std::span<const uint8_t> stream, const factz::DecompressOptions& d, bool with_mask) {
  factz::Result<typename Field3DOf<T>::Field> f = factz::Status();
  {
    py::gil_scoped_release nogil;
    f = decode3d(stream, d, static_cast<T*>(nullptr));
  }
  if (!f.ok()) raise(f.status());
  const std::vector<py::ssize_t> shape{f->nz, f->ny, f->nx};
  py::array_t<T> u = array_of(f->u, shape), v = array_of(f->v, shape), w = array_of(f->w, shape);
  if (!with_mask) return py::make_tuple(u, v, w);
  py::array_t<uint8_t> mask(shape);
  uint8_t* pm = mask.mutable_data();
  if (f->mask.empty()) std::fill(pm, pm + f->size(), uint8_t(0));
  else for (int64_t k = 0; k < f->size(); ++k) pm[k] = f->mask[size_t(k)] ? 1 : 0;
  return py::make_tuple(u, v, w, mask);
}

/// (u, v, w): three new (nz, ny, nx) arrays of the stream's value type (float32, or float64
/// for a stream of a float64 field); with_mask: and the (nz, ny, nx) uint8 mask (1: missing;
/// all 0 for a stream without missing vertices).
py::tuple decompress3d(const py::handle& buf, int threads, const std::string& policy, int device, bool with_mask) {
  ByteView view(buf);
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  dims3d_of(view.span(), "decompress3d");  // a 2D stream is named before anything is decoded
  factz::Result<factz::DType> dtype = factz::Status();
  {
    py::gil_scoped_release nogil;
    dtype = factz::stream_dtype3d(view.span());
  }
  if (!dtype.ok()) raise(dtype.status());
  if (*dtype == factz::DType::float64) return decode_planes3d<double>(view.span(), d, with_mask);
  return decode_planes3d<float>(view.span(), d, with_mask);
}

/// Columns of the critical points of a float32 or float64 3D field: tetrahedron, x, y, z, t,
/// mu (n, 4), type code.
template <class Field>
py::tuple critical_point_columns3d(const Field& f, int threads) {
  factz::Result<std::vector<factz::CriticalPoint3D>> cps = factz::Status();
  const factz::Exec exec{threads_of(threads)};
  {
    py::gil_scoped_release nogil;
    cps = factz::critical_points(f, exec);
  }
  if (!cps.ok()) raise(cps.status());
  const auto n = py::ssize_t(cps->size());
  py::array_t<int64_t> tet(n), x(n), y(n), z(n);
  py::array_t<uint8_t> t(n), type(n);
  py::array_t<double> mu({n, py::ssize_t(4)});
  for (py::ssize_t k = 0; k < n; ++k) {
    const factz::CriticalPoint3D& p = (*cps)[size_t(k)];
    tet.mutable_at(k) = p.tetrahedron;
    x.mutable_at(k) = p.x;
    y.mutable_at(k) = p.y;
    z.mutable_at(k) = p.z;
    t.mutable_at(k) = uint8_t(p.t);
    for (py::ssize_t j = 0; j < 4; ++j) mu.mutable_at(k, j) = p.mu[size_t(j)];
    type.mutable_at(k) = uint8_t(p.type);
  }
  return py::make_tuple(tet, x, y, z, t, mu, type);
}

py::tuple critical_points3d(const py::handle& u, const py::handle& v, const py::handle& w, int threads,
                            const py::handle& mask, std::optional<double> fill_u, std::optional<double> fill_v,
                            std::optional<double> fill_w) {
  if (planes3d_dtype(u, v, w, "u", "v", "w") == factz::DType::float64)
    return critical_point_columns3d(
        field3d_of<double>(u, v, w, "u", "v", "w", mask, "mask", fill_values3d<double>(fill_u, fill_v, fill_w)),
        threads);
  return critical_point_columns3d(
      field3d_of<float>(u, v, w, "u", "v", "w", mask, "mask", fill_values3d<float>(fill_u, fill_v, fill_w)), threads);
}

/// The comparison of two 3D fields of T as verify3d's dict, with `mask` and the fill values
/// marking the original's missing vertices and `mask2` and the same fill values the
/// reconstruction's.
template <class T>
py::dict compare_fields3d(const py::handle& u, const py::handle& v, const py::handle& w, const py::handle& u2,
                          const py::handle& v2, const py::handle& w2, int threads, const py::handle& mask,
                          const py::handle& mask2, std::optional<double> fill_u, std::optional<double> fill_v,
                          std::optional<double> fill_w) {
  const auto fill = fill_values3d<T>(fill_u, fill_v, fill_w);
  const auto a = field3d_of<T>(u, v, w, "u", "v", "w", mask, "mask", fill);
  const auto b = field3d_of<T>(u2, v2, w2, "u2", "v2", "w2", mask2, "mask2", fill);
  if (a.nx != b.nx || a.ny != b.ny || a.nz != b.nz)
    throw py::value_error("the reconstruction's shape (" + std::to_string(b.nz) + ", " + std::to_string(b.ny) + ", " +
                          std::to_string(b.nx) + ") differs from the original's (" + std::to_string(a.nz) + ", " +
                          std::to_string(a.ny) + ", " + std::to_string(a.nx) + ")");
  factz::Result<factz::Comparison3D> c = factz::Status();
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
  d["max_abs_error"] = py::make_tuple(c->max_abs_error[0], c->max_abs_error[1], c->max_abs_error[2]);
  d["rmse"] = c->rmse;
  d["nrmse"] = c->nrmse;
  d["psnr"] = c->psnr;
  d["value_range"] = c->value_range;
  return d;
}

/// verify3d: both fields float32, or both float64 (compared in double, exact float64
/// critical points); fields of two dtypes are a ValueError.
py::dict verify3d(const py::handle& u, const py::handle& v, const py::handle& w, const py::handle& u2,
                  const py::handle& v2, const py::handle& w2, int threads, const py::handle& mask,
                  const py::handle& mask2, std::optional<double> fill_u, std::optional<double> fill_v,
                  std::optional<double> fill_w) {
  const factz::DType original = planes3d_dtype(u, v, w, "u", "v", "w");
  const factz::DType reconstruction = planes3d_dtype(u2, v2, w2, "u2", "v2", "w2");
  if (original != reconstruction)
    throw py::value_error(std::string("the reconstruction (u2, v2, w2) is ") + factz::dtype_name(reconstruction) +
                          ", the original (u, v, w) " + factz::dtype_name(original) +
                          ": compare fields of one dtype (decompress3d returns the dtype a stream was written with)");
  if (original == factz::DType::float64)
    return compare_fields3d<double>(u, v, w, u2, v2, w2, threads, mask, mask2, fill_u, fill_v, fill_w);
  return compare_fields3d<float>(u, v, w, u2, v2, w2, threads, mask, mask2, fill_u, fill_v, fill_w);
}

}  // namespace

void bind_vector3d(py::module_& m) {
  py::list names;
  for (int t = 0; t < factz::kCpType3Count; ++t) names.append(factz::cp_type3_name(factz::CpType3(t)));
  m.attr("CP3_TYPE_NAMES") = py::tuple(names);
  m.def("compress3d", &compress3d, py::arg("u"), py::arg("v"), py::arg("w"), py::arg("mode") = "speculative",
        py::arg("eb") = 1e-2, py::arg("bound") = "rel", py::arg("coder") = "", py::arg("threads") = 0,
        py::arg("zstd") = true, py::arg("anchor_stride") = 4096, py::arg("policy") = "", py::arg("device") = 0,
        py::arg("progress") = py::none(), py::arg("mask") = py::none(), py::arg("fill_u") = py::none(),
        py::arg("fill_v") = py::none(), py::arg("fill_w") = py::none());
  m.def("decompress3d", &decompress3d, py::arg("buf"), py::arg("threads") = 0, py::arg("policy") = "",
        py::arg("device") = 0, py::arg("with_mask") = false);
  m.def("stream_shape3d", &stream_shape3d, py::arg("buf"));
  m.def("critical_points3d", &critical_points3d, py::arg("u"), py::arg("v"), py::arg("w"), py::arg("threads") = 0,
        py::arg("mask") = py::none(), py::arg("fill_u") = py::none(), py::arg("fill_v") = py::none(),
        py::arg("fill_w") = py::none());
  m.def("verify3d", &verify3d, py::arg("u"), py::arg("v"), py::arg("w"), py::arg("u2"), py::arg("v2"), py::arg("w2"),
        py::arg("threads") = 0, py::arg("mask") = py::none(), py::arg("mask2") = py::none(),
        py::arg("fill_u") = py::none(), py::arg("fill_v") = py::none(), py::arg("fill_w") = py::none());
}

}  // namespace factz_py
