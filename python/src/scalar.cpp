// Scalar fields in the `factz._factz` extension (include/factz/scalar.hpp, contour_tree.hpp;
// docs/toposz.md): compression in modes none and contour_tree (TopoSZ), decompression, the
// simplified contour tree and the scalar comparison. A field is a float32 or float64 array of
// shape (ny, nx) or (nz, ny, nx), C-contiguous; a float64 array goes through the library's
// float64 path (ScalarField64: tree, bound and stream in double) and decodes to float64.
// Missing vertices arrive as a mask array and a fill value (the Python layer folds numpy.ma
// masks into the mask), as for vector fields.
#include <pybind11/stl.h>

#include <cstring>
#include <type_traits>

#include "bindings.hpp"
#include "factz/contour_tree.hpp"
#include "factz/scalar.hpp"

namespace factz_py {

namespace {

constexpr int kScalarRanks[] = {2, 3};
constexpr const char* kScalarShape = "2-dimensional (ny, nx) or 3-dimensional (nz, ny, nx)";

template <class T>
std::vector<py::ssize_t> shape_of(const factz::ScalarFieldOf<T>& f) {
  if (f.nz == 1) return {f.ny, f.nx};
  return {f.nz, f.ny, f.nx};
}

/// Whether `obj` holds float64 values (else float32); any other dtype is a ValueError that
/// names both (planes_dtype's check, for one array).
bool is_float64(const py::handle& obj, const char* name) {
  return planes_dtype(obj, obj, name, name) == factz::DType::float64;
}

/// The field as the library's (a copy made without the GIL), with the mask and fill value:
/// float32 values with the fill value as a float32, float64 values with it as a double.
template <class T>
factz::ScalarFieldOf<T> scalar_field_of(const py::handle& obj, const char* name, const py::handle& mask_obj,
                                        const char* mask_name, std::optional<double> fill) {
  constexpr bool f64 = std::is_same_v<T, double>;
  py::array a = f64 ? checked_float64(obj, name, kScalarRanks, kScalarShape)
                    : checked_float32(obj, name, kScalarRanks, kScalarShape);
  std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
  const std::optional<py::array> mask = checked_mask(mask_obj, mask_name, shape);
  std::optional<T> declared;
  if constexpr (f64) declared = fill;
  else declared = fill_of(fill, "fill_value");
  factz::ScalarFieldOf<T> f;
  f.nx = shape.back();
  f.ny = shape[shape.size() - 2];
  f.nz = shape.size() == 3 ? shape[0] : 1;
  const auto* p = static_cast<const T*>(a.data());
  const auto* pm = mask ? static_cast<const uint8_t*>(mask->data()) : nullptr;
  py::gil_scoped_release nogil;
  f.values.assign(p, p + f.size());
  if (pm) f.mask.assign(pm, pm + f.size());
  if (declared) factz::mark_missing(f, declared);
  return f;
}

factz::ScalarMode scalar_mode_of(const std::string& s) {
  if (s == "contour_tree") return factz::ScalarMode::contour_tree;
  if (s == "none") return factz::ScalarMode::none;
  throw py::value_error("mode must be 'contour_tree' or 'none' for a scalar field, got '" + s + "'");
}

factz::ScalarPredictor scalar_predictor_of(const std::string& s) {
  if (s.empty() || s == "best") return factz::ScalarPredictor::best;
  if (s == "lorenzo") return factz::ScalarPredictor::lorenzo;
  if (s == "interpolation") return factz::ScalarPredictor::interpolation;
  throw py::value_error("predictor must be 'best', 'lorenzo' or 'interpolation', got '" + s + "'");
}

template <class T>
py::tuple compress_scalar_of(const py::handle& values, const std::string& mode, double eb, const std::string& bound,
                             double persistence, const std::string& coder, int threads, bool zstd,
                             const std::string& policy, const py::handle& mask, std::optional<double> fill,
                             const std::string& predictor) {
  factz::ScalarOptions o;
  o.mode = scalar_mode_of(mode);
  o.predictor = scalar_predictor_of(predictor);
  o.coder = coder_of(coder, true);
  o.bound_mode = bound_of(bound);
  o.bound = eb;
  o.persistence = persistence;
  o.zstd = zstd;
  o.threads = threads_of(threads);
  o.policy = policy_of(policy, threads);
  const factz::ScalarFieldOf<T> f = scalar_field_of<T>(values, "values", mask, "mask", fill);
  factz::ScalarCompressStats st;
  factz::Result<std::vector<uint8_t>> stream = factz::Status();
  {
    py::gil_scoped_release nogil;
    stream = factz::compress_scalar(f, o, &st);
  }
  std::vector<uint8_t> bytes = take(std::move(stream));
  py::dict stats;
  stats["eb_abs"] = st.eb_abs;
  stats["exact_vertices"] = st.exact_vertices;
  stats["iterations"] = st.iterations;
  stats["race_rounds"] = st.race_rounds;
  stats["rounds_ahead"] = st.rounds_ahead;
  stats["persistence_abs"] = st.persistence_abs;
  stats["tree_nodes"] = st.tree_nodes;
  stats["masked_vertices"] = st.masked_vertices;
  stats["coder"] = factz::coder_name(st.coder);
  stats["predictor"] = factz::scalar_predictor_name(st.predictor);
  return py::make_tuple(bytes_of(bytes), stats);
}

py::tuple compress_scalar(const py::handle& values, const std::string& mode, double eb, const std::string& bound,
                          double persistence, const std::string& coder, int threads, bool zstd,
                          const std::string& policy, const py::handle& mask, std::optional<double> fill,
                          const std::string& predictor) {
  if (is_float64(values, "values"))
    return compress_scalar_of<double>(values, mode, eb, bound, persistence, coder, threads, zstd, policy, mask, fill,
                                      predictor);
  return compress_scalar_of<float>(values, mode, eb, bound, persistence, coder, threads, zstd, policy, mask, fill,
                                   predictor);
}

/// (values, mask) of a decoded field: the values in its shape and its uint8 mask (1: missing).
template <class T>
py::tuple decoded(const factz::ScalarFieldOf<T>& f) {
  const std::vector<py::ssize_t> shape = shape_of(f);
  py::array_t<uint8_t> mask(shape);
  if (f.mask.empty()) std::memset(mask.mutable_data(), 0, size_t(f.size()));
  else for (int64_t k = 0; k < f.size(); ++k) mask.mutable_data()[k] = f.mask[size_t(k)] ? 1 : 0;
  return py::make_tuple(array_of(f.values, shape), mask);
}

/// (values, mask): the field in its shape (float32 or float64, as the stream holds it) and
/// its uint8 mask (1: missing; all 0 for none).
py::tuple decompress_scalar(const py::handle& buf, int threads, const std::string& policy) {
  ByteView view(buf);
  const std::string kind = stream_kind(view.span());
  if (kind == "vector")
    throw py::value_error("decompress_scalar: this is a vector stream (u, v); read it with factz.decompress");
  if (kind == "multiblock")
    throw py::value_error("decompress_scalar: this is a multi-block vector file (FZMB); read it with "
                          "factz.decompress_multiblock");
  const factz::DecompressOptions d = decompress_options(threads, policy, 0);
  const auto dtype = factz::scalar_stream_dtype(view.span());
  if (dtype.ok() && dtype.value() == factz::DType::float64) {
    factz::Result<factz::ScalarField64> r = factz::Status();
    {
      py::gil_scoped_release nogil;
      r = factz::decompress_scalar64(view.span(), d);
    }
    return decoded(take(std::move(r)));
  }
  factz::Result<factz::ScalarField> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::decompress_scalar(view.span(), d);
  }
  return decoded(take(std::move(r)));
}

py::array_t<int64_t> arcs_of(const std::vector<factz::CtArc>& arcs) {
  py::array_t<int64_t> a({py::ssize_t(arcs.size()), py::ssize_t(2)});
  for (size_t k = 0; k < arcs.size(); ++k) {
    a.mutable_at(py::ssize_t(k), 0) = arcs[k].lower;
    a.mutable_at(py::ssize_t(k), 1) = arcs[k].upper;
  }
  return a;
}

/// The tree as plain columns (node values float32 or float64, as the field's);
/// python/factz/scalar.py builds the structured arrays.
template <class T>
py::dict contour_tree_of(const py::handle& values, double persistence, const std::string& bound, bool segmentation,
                         bool contour_arcs, int threads, const std::string& policy, const py::handle& mask,
                         std::optional<double> fill) {
  factz::CtOptions o;
  o.persistence_mode = bound_of(bound, "persistence_bound");
  o.persistence = persistence;
  o.segmentation = segmentation;
  o.contour_arcs = contour_arcs;
  o.threads = threads_of(threads);
  o.policy = policy_of(policy, threads);
  const factz::ScalarFieldOf<T> f = scalar_field_of<T>(values, "values", mask, "mask", fill);
  factz::Result<factz::ContourTree> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::contour_tree(f, o);
  }
  const factz::ContourTree t = take(std::move(r));
  const auto n = py::ssize_t(t.nodes.size());
  py::array_t<int64_t> vertex(n);
  py::array_t<T> value(n);
  py::array_t<uint8_t> type(n);
  py::array_t<int32_t> up(n), down(n);
  for (py::ssize_t k = 0; k < n; ++k) {
    const factz::CtNode& node = t.nodes[size_t(k)];
    vertex.mutable_at(k) = node.vertex;
    value.mutable_at(k) = T(node.value);  // the field's own value (exact)
    type.mutable_at(k) = uint8_t(node.type);
    up.mutable_at(k) = node.up_degree;
    down.mutable_at(k) = node.down_degree;
  }
  const auto np = py::ssize_t(t.pairs.size());
  py::array_t<int64_t> extremum(np), saddle(np);
  py::array_t<double> pers(np);
  for (py::ssize_t k = 0; k < np; ++k) {
    extremum.mutable_at(k) = t.pairs[size_t(k)].extremum;
    saddle.mutable_at(k) = t.pairs[size_t(k)].saddle;
    pers.mutable_at(k) = t.pairs[size_t(k)].persistence;
  }
  py::dict d;
  d["shape"] = py::tuple(py::cast(shape_of(f)));
  d["persistence_abs"] = t.persistence;
  d["node_vertex"] = vertex;
  d["node_value"] = value;
  d["node_type"] = type;
  d["node_up_degree"] = up;
  d["node_down_degree"] = down;
  d["join_arcs"] = arcs_of(t.join_arcs);
  d["split_arcs"] = arcs_of(t.split_arcs);
  d["arcs"] = arcs_of(t.arcs);
  d["contour_arcs"] = t.contour_arcs;
  d["pair_extremum"] = extremum;
  d["pair_saddle"] = saddle;
  d["pair_persistence"] = pers;
  d["pruned_pairs"] = t.pruned_pairs;
  d["full_nodes"] = t.full_nodes;
  d["components"] = t.components;
  if (segmentation) {
    std::vector<uint32_t> lower(t.segmentation.size()), upper(t.segmentation.size());
    for (size_t k = 0; k < t.segmentation.size(); ++k) {
      lower[k] = t.segmentation[k].lower;
      upper[k] = t.segmentation[k].upper;
    }
    d["segmentation_lower"] = array_of(lower, shape_of(f));
    d["segmentation_upper"] = array_of(upper, shape_of(f));
  }
  return d;
}

py::dict contour_tree(const py::handle& values, double persistence, const std::string& bound, bool segmentation,
                      bool contour_arcs, int threads, const std::string& policy, const py::handle& mask,
                      std::optional<double> fill) {
  if (is_float64(values, "values"))
    return contour_tree_of<double>(values, persistence, bound, segmentation, contour_arcs, threads, policy, mask, fill);
  return contour_tree_of<float>(values, persistence, bound, segmentation, contour_arcs, threads, policy, mask, fill);
}

template <class T>
py::dict verify_scalar_of(const py::handle& values, const py::handle& values2, double persistence,
                          const std::string& bound, int threads, const std::string& policy, const py::handle& mask,
                          const py::handle& mask2, std::optional<double> fill) {
  const factz::BoundMode mode = bound_of(bound, "persistence_bound");
  const factz::Policy pol = policy_of(policy, threads_of(threads));
  const factz::ScalarFieldOf<T> a = scalar_field_of<T>(values, "values", mask, "mask", fill);
  const factz::ScalarFieldOf<T> b = scalar_field_of<T>(values2, "values2", mask2, "mask2", fill);
  if (a.nx != b.nx || a.ny != b.ny || a.nz != b.nz)
    throw py::value_error("values2 has shape " + std::string(py::str(py::tuple(py::cast(shape_of(b))))) +
                          ", the original " + std::string(py::str(py::tuple(py::cast(shape_of(a))))));
  factz::Result<factz::ScalarComparison> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = factz::compare_scalar(a, b, mode, persistence, pol, threads);
  }
  const factz::ScalarComparison c = take(std::move(r));
  py::dict d;
  d["nodes_original"] = c.tree.nodes_original;
  d["nodes_decompressed"] = c.tree.nodes_decompressed;
  d["false_positive"] = c.tree.false_positive;
  d["false_negative"] = c.tree.false_negative;
  d["false_type"] = c.tree.false_type;
  d["arcs_missing"] = c.tree.arcs_missing;
  d["arcs_extra"] = c.tree.arcs_extra;
  d["pairs_missing"] = c.tree.pairs_missing;
  d["pairs_extra"] = c.tree.pairs_extra;
  d["mask_mismatch"] = c.mask_mismatch;
  d["masked_vertices"] = c.masked_vertices;
  d["same"] = c.same();
  d["offending"] = array_of(c.tree.offending, {py::ssize_t(c.tree.offending.size())});
  d["persistence_abs"] = c.persistence_abs;
  d["max_abs_error"] = c.max_abs_error;
  d["rmse"] = c.rmse;
  d["psnr"] = c.psnr;
  d["value_range"] = c.value_range;
  return d;
}

/// Both fields float32 or both float64 (compared in their type), else a ValueError.
py::dict verify_scalar(const py::handle& values, const py::handle& values2, double persistence,
                       const std::string& bound, int threads, const std::string& policy, const py::handle& mask,
                       const py::handle& mask2, std::optional<double> fill) {
  const factz::DType dtype = planes_dtype(values, values2, "values", "values2");
  if (dtype == factz::DType::float64)
    return verify_scalar_of<double>(values, values2, persistence, bound, threads, policy, mask, mask2, fill);
  return verify_scalar_of<float>(values, values2, persistence, bound, threads, policy, mask, mask2, fill);
}

}  // namespace

void bind_scalar(py::module_& m) {
  py::list names;
  for (int t = 0; t < factz::kCtNodeTypeCount; ++t) names.append(factz::ct_node_type_name(factz::CtNodeType(t)));
  m.attr("CT_NODE_TYPE_NAMES") = py::tuple(names);
  m.attr("SCALAR_DEFAULT_CODER") = factz::coder_name(factz::ScalarOptions{}.coder);
  m.def("compress_scalar", &compress_scalar, py::arg("values"), py::arg("mode"), py::arg("eb"), py::arg("bound"),
        py::arg("persistence"), py::arg("coder"), py::arg("threads"), py::arg("zstd"), py::arg("policy"),
        py::arg("mask"), py::arg("fill"), py::arg("predictor") = "");
  m.def("decompress_scalar", &decompress_scalar, py::arg("buf"), py::arg("threads"), py::arg("policy"));
  m.def("contour_tree", &contour_tree, py::arg("values"), py::arg("persistence"), py::arg("bound"),
        py::arg("segmentation"), py::arg("contour_arcs"), py::arg("threads"), py::arg("policy"), py::arg("mask"),
        py::arg("fill"));
  m.def("verify_scalar", &verify_scalar, py::arg("values"), py::arg("values2"), py::arg("persistence"),
        py::arg("bound"), py::arg("threads"), py::arg("policy"), py::arg("mask"), py::arg("mask2"), py::arg("fill"));
}

}  // namespace factz_py
