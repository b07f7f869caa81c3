// The vector-field part of the `factz._factz` extension: numpy in, bytes out, over the C++
// API (include/factz/factz.hpp, topology.hpp). Arrays are checked (bindings.cpp: float32,
// 2D, C-contiguous, same shape) so that every bad input is a ValueError naming the problem;
// the library's own errors keep their messages. The GIL is released while the library
// works. The Python-facing API is python/factz/__init__.py. policy="cuda" is an option like
// the others: the library runs it on the GPU or answers backend_unavailable
// (BackendUnavailableError). Missing data arrives as a mask array (bool or uint8, the Python
// layer folds numpy.ma masks into it) and fill values, and becomes the field's mask
// (factz::mark_missing), as in the C API and the command line tool.
#include <pybind11/stl.h>

#include "bindings.hpp"
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

/// The stream and the compressor's counts (the keys of `factz compress --json`), plus
/// "suspected_fill": (value, count) of a value that looks like an undeclared fill value
/// (factz::suspected_fill_value; checked only when no fill value is declared), else None.
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
  if (progress_error) throw std::move(*progress_error);
  if (!stream.ok()) raise(stream.status());
  py::dict stats = stats_dict(st);
  stats["suspected_fill"] = suspect ? py::object(py::make_tuple(suspect->value, suspect->count)) : py::object(py::none());
  return py::make_tuple(bytes_of(*stream), stats);
}

py::tuple stream_shape(const py::handle& buf) {
  ByteView view(buf);
  require_vector_stream(view.span(), "stream_shape");
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
  require_vector_stream(view.span(), "decompress");
  const factz::DecompressOptions d = decompress_options(threads, policy, device);
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

void bind_vector(py::module_& m) {
  py::list names;
  for (int t = 0; t < factz::kCpTypeCount; ++t) names.append(factz::cp_type_name(factz::CpType(t)));
  m.attr("CP_TYPE_NAMES") = py::tuple(names);
  m.attr("DEFAULT_CODER") = factz::coder_name(factz::Options{}.coder);
  m.attr("DEVICE_AUTO") = factz::kDeviceAuto;
  m.def("compress", &compress, py::arg("u"), py::arg("v"), py::arg("mode") = "speculative", py::arg("eb") = 1e-2,
        py::arg("bound") = "rel", py::arg("coder") = "", py::arg("threads") = 0, py::arg("zstd") = true,
        py::arg("anchor_stride") = 16, py::arg("policy") = "", py::arg("device") = 0, py::arg("mask") = py::none(),
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
