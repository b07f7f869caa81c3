// The vector-field part of the `factz._factz` extension: numpy in, bytes out, over the C++
// API (include/factz/factz.hpp, topology.hpp). Arrays are checked (bindings.cpp: float32 or
// float64, the same for u and v, 2D, C-contiguous, same shape) so that every bad input is a
// ValueError naming the problem; float64 planes go through the library's float64 path (format
// version 6 streams, 7 in mode speculative) and a float64 stream decodes to float64 planes, never rounded;
// the library's own errors keep their messages. The GIL is released while the library
// works. The Python-facing API is python/factz/__init__.py. policy="cuda" is an option like
// the others: the library runs it on the GPU or answers backend_unavailable
// (BackendUnavailableError). Missing data arrives as a mask array (bool or uint8, the Python
// layer folds numpy.ma masks into it) and fill values, and becomes the field's mask
// (factz::mark_missing), as in the C API and the command line tool.
#include <pybind11/stl.h>

#include <algorithm>
#include <cfloat>
#include <map>

#include "bindings.hpp"
#include "factz/compress3d.hpp"
#include "factz/topology.hpp"

namespace factz_py {

namespace {

/// A scalar or multi-block stream handed to a vector function: a ValueError naming the
/// function that reads it (the library would answer with a less helpful message).
void require_vector_stream(std::span<const uint8_t> bytes, const char* function) {
  const std::string kind = stream_kind(bytes);
  if (kind == "scalar")
    throw py::value_error(std::string(function) + ": this is a scalar stream (one component); read it with "
                          "factz.decompress_scalar");
  if (kind == "multiblock")
    throw py::value_error(std::string(function) + ": this is a multi-block file (FZMB); read it with "
                          "factz.decompress_multiblock, or a window of it with factz.decompress_region");
  if (kind == "flow" || kind == "flow_basis")
    throw py::value_error(std::string(function) + ": this is a divergence-free flow " +
                          (kind == "flow" ? "stream (FZFS); read it with factz.flow.decompress"
                                          : "basis (FZFB); load it with factz.flow.Basis.from_bytes"));
}

/// The library's refusal of a 3D vector stream handed to a 2D function names factz.decompress3d
/// (only for streams the 3D parser accepts: damaged bytes keep the library's message).
[[noreturn]] void raise_2d_read_error(std::span<const uint8_t> stream, const factz::Status& st, const char* function) {
  if (st.code() == factz::Code::unsupported_version) {
    if (auto dims = factz::stream_dims3d(stream); dims.ok())
      throw py::value_error(std::string(function) + ": this is a 3D vector stream (shape (" +
                            std::to_string((*dims)[2]) + ", " + std::to_string((*dims)[1]) + ", " +
                            std::to_string((*dims)[0]) + ")); read it with factz.decompress3d");
  }
  raise(st);
}

/// A value of a float64 field that looks like an undeclared fill value. The library's rule
/// (factz::suspected_fill_value, float32) applied to the field's float32 rounding (values
/// beyond the float32 range as +-FLT_MAX, which the rule counts as huge), then reported as the
/// most frequent double that rounds to the value it found, so that the warning names the
/// double to declare. (value, count), or nullopt.
std::optional<std::pair<double, int64_t>> suspected_fill_value64(const factz::VectorField2D64& f) {
  auto round = [](double x) {
    return std::isnan(x) ? float(x) : float(std::clamp(x, -double(FLT_MAX), double(FLT_MAX)));
  };
  factz::VectorField2D r;
  r.nx = f.nx;
  r.ny = f.ny;
  r.mask = f.mask;
  r.u.resize(f.u.size());
  r.v.resize(f.v.size());
  std::transform(f.u.begin(), f.u.end(), r.u.begin(), round);
  std::transform(f.v.begin(), f.v.end(), r.v.begin(), round);
  const std::optional<factz::SuspectedFill> s = factz::suspected_fill_value(r);
  if (!s) return std::nullopt;
  std::map<double, int64_t> counts;
  for (size_t k = 0; k < f.u.size(); ++k) {
    if (!f.mask.empty() && f.mask[k]) continue;
    for (double x : {f.u[k], f.v[k]})
      if (!std::isnan(x) && round(x) == s->value) ++counts[x];
  }
  auto best = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return std::make_pair(best->first, best->second);
}

/// A suspected fill value of a float32 or float64 field: its value, count and dtype name.
struct Suspicion {
  double value = 0;
  int64_t count = 0;
  const char* dtype = "float32";
};
std::optional<Suspicion> suspicion_of(const factz::VectorField2D& f) {
  const std::optional<factz::SuspectedFill> s = factz::suspected_fill_value(f);
  if (!s) return std::nullopt;
  return Suspicion{double(s->value), s->count, "float32"};
}
std::optional<Suspicion> suspicion_of(const factz::VectorField2D64& f) {
  const auto s = suspected_fill_value64(f);
  if (!s) return std::nullopt;
  return Suspicion{s->first, s->second, "float64"};
}

/// The stream of a float32 or float64 field and the compressor's counts (compress).
template <class Field>
py::tuple compress_field(const Field& f, const factz::Options& o, bool fill_declared,
                         std::optional<py::error_already_set>& progress_error) {
  factz::Result<std::vector<uint8_t>> stream = factz::Status();
  factz::CompressStats st;
  std::optional<Suspicion> suspect;
  {
    py::gil_scoped_release nogil;
    stream = factz::compress(f, o, &st);
    if (stream.ok() && !fill_declared) suspect = suspicion_of(f);
  }
  if (progress_error) throw std::move(*progress_error);
  if (!stream.ok()) raise(stream.status());
  py::dict stats = stats_dict(st);
  stats["suspected_fill"] =
      suspect ? py::object(py::make_tuple(suspect->value, suspect->count, suspect->dtype)) : py::object(py::none());
  return py::make_tuple(bytes_of(*stream), stats);
}

/// The stream and the compressor's counts (the keys of `factz compress --json`), plus
/// "suspected_fill": (value, count, dtype) of a value that looks like an undeclared fill
/// value (factz::suspected_fill_value; checked only when no fill value is declared), else
/// None. float64 planes (both) compress as a float64 field.
py::tuple compress(const py::handle& u, const py::handle& v, const std::string& mode, double eb,
                   const std::string& bound, const std::string& coder, int threads, bool zstd,
                   int64_t anchor_stride, const std::string& policy, int device, const py::handle& mask,
                   std::optional<double> fill_u, std::optional<double> fill_v, const py::object& progress) {
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
  if (planes_dtype(u, v, "u", "v") == factz::DType::float64) {
    const factz::FillValues64 fill = fill_values64(fill_u, fill_v);
    return compress_field(field64_of(u, v, "u", "v", mask, "mask", fill), o, fill.any(), progress_error);
  }
  const factz::FillValues fill = fill_values(fill_u, fill_v);
  return compress_field(field_of(u, v, "u", "v", mask, "mask", fill), o, fill.any(), progress_error);
}

py::tuple stream_shape(const py::handle& buf) {
  ByteView view(buf);
  require_vector_stream(view.span(), "stream_shape");
  factz::Result<std::pair<int64_t, int64_t>> dims = factz::Status();
  {
    py::gil_scoped_release nogil;
    dims = factz::stream_dims(view.span());
  }
  if (!dims.ok()) raise_2d_read_error(view.span(), dims.status(), "stream_shape");
  return py::make_tuple(dims->second, dims->first);
}

/// The stream decoded into new (ny, nx) planes of T, and the mask when with_mask.
template <class T>
py::tuple decode_planes(std::span<const uint8_t> stream, int64_t nx, int64_t ny, const factz::DecompressOptions& d,
                        bool with_mask) {
  py::array_t<T> u({ny, nx}), v({ny, nx});
  py::array_t<uint8_t> mask(with_mask ? std::vector<py::ssize_t>{ny, nx} : std::vector<py::ssize_t>{0, 0});
  std::span<T> pu(u.mutable_data(), size_t(nx * ny)), pv(v.mutable_data(), size_t(nx * ny));
  std::span<uint8_t> pm(mask.mutable_data(), with_mask ? size_t(nx * ny) : 0);
  factz::Status st;
  {
    py::gil_scoped_release nogil;
    st = with_mask ? factz::decompress_into(stream, pu, pv, pm, d) : factz::decompress_into(stream, pu, pv, d);
  }
  if (!st.ok()) raise(st);
  if (with_mask) return py::make_tuple(u, v, mask);
  return py::make_tuple(u, v);
}

/// (u, v), or (u, v, mask) with a (ny, nx) uint8 mask (1: missing) when with_mask; float32
/// planes for a float32 stream, float64 planes for a float64 one.
py::tuple decompress(const py::handle& buf, int threads, const std::string& policy, int device, bool with_mask) {
  ByteView view(buf);
  require_vector_stream(view.span(), "decompress");
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
  factz::Result<factz::StreamInfo> info = factz::Status();
  {
    py::gil_scoped_release nogil;
    info = factz::stream_info(view.span());
  }
  if (!info.ok()) raise_2d_read_error(view.span(), info.status(), "decompress");
  if (info->dtype == factz::DType::float64) return decode_planes<double>(view.span(), info->nx, info->ny, d, with_mask);
  return decode_planes<float>(view.span(), info->nx, info->ny, d, with_mask);
}

/// Columns of the critical points of a float32 or float64 field.
template <class Field>
py::tuple critical_point_columns(const Field& f, int threads) {
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

/// Columns of the critical points: triangle, row, column, mu (n, 3), type code.
py::tuple critical_points(const py::handle& u, const py::handle& v, int threads, const py::handle& mask,
                          std::optional<double> fill_u, std::optional<double> fill_v) {
  if (planes_dtype(u, v, "u", "v") == factz::DType::float64)
    return critical_point_columns(field64_of(u, v, "u", "v", mask, "mask", fill_values64(fill_u, fill_v)), threads);
  return critical_point_columns(field_of(u, v, "u", "v", mask, "mask", fill_values(fill_u, fill_v)), threads);
}

/// The comparison of two fields of one type as verify's dict.
template <class Field>
py::dict compare_fields(const Field& a, const Field& b, int threads) {
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

/// The comparison, with `mask` and the fill values marking the original's missing vertices
/// and `mask2` and the same fill values the reconstruction's. Both fields float32, or both
/// float64 (compared in double, exact float64 critical points).
py::dict verify(const py::handle& u, const py::handle& v, const py::handle& u2, const py::handle& v2, int threads,
                const py::handle& mask, const py::handle& mask2, std::optional<double> fill_u,
                std::optional<double> fill_v) {
  const factz::DType original = planes_dtype(u, v, "u", "v"), reconstruction = planes_dtype(u2, v2, "u2", "v2");
  if (original != reconstruction)
    throw py::value_error(std::string("the reconstruction (u2, v2) is ") + factz::dtype_name(reconstruction) +
                          ", the original (u, v) " + factz::dtype_name(original) +
                          ": compare fields of one dtype (decompress returns the dtype a stream was written with)");
  if (original == factz::DType::float64) {
    const factz::FillValues64 fill = fill_values64(fill_u, fill_v);
    return compare_fields(field64_of(u, v, "u", "v", mask, "mask", fill),
                          field64_of(u2, v2, "u2", "v2", mask2, "mask2", fill), threads);
  }
  const factz::FillValues fill = fill_values(fill_u, fill_v);
  return compare_fields(field_of(u, v, "u", "v", mask, "mask", fill),
                        field_of(u2, v2, "u2", "v2", mask2, "mask2", fill), threads);
}

}  // namespace

void bind_vector(py::module_& m) {
  py::list names;
  for (int t = 0; t < factz::kCpTypeCount; ++t) names.append(factz::cp_type_name(factz::CpType(t)));
  m.attr("CP_TYPE_NAMES") = py::tuple(names);
  m.attr("DEFAULT_CODER") = factz::coder_name(factz::Options{}.coder);
  m.attr("DEVICE_AUTO") = factz::kDeviceAuto;
  m.def("compress", &compress, py::arg("u"), py::arg("v"), py::arg("mode") = "speculative", py::arg("eb") = 1e-2,
        py::arg("bound") = "rel", py::arg("coder") = "", py::arg("threads") = 0, py::arg("zstd") = true,
        py::arg("anchor_stride") = 4096, py::arg("policy") = "", py::arg("device") = 0, py::arg("mask") = py::none(),
        py::arg("fill_u") = py::none(), py::arg("fill_v") = py::none(), py::arg("progress") = py::none());
  m.def("decompress", &decompress, py::arg("buf"), py::arg("threads") = 0, py::arg("policy") = "",
        py::arg("device") = 0, py::arg("with_mask") = false);
  m.def("stream_shape", &stream_shape, py::arg("buf"));
  m.def("critical_points", &critical_points, py::arg("u"), py::arg("v"), py::arg("threads") = 0,
        py::arg("mask") = py::none(), py::arg("fill_u") = py::none(), py::arg("fill_v") = py::none());
  m.def("verify", &verify, py::arg("u"), py::arg("v"), py::arg("u2"), py::arg("v2"), py::arg("threads") = 0,
        py::arg("mask") = py::none(), py::arg("mask2") = py::none(), py::arg("fill_u") = py::none(),
        py::arg("fill_v") = py::none());
}

}  // namespace factz_py
