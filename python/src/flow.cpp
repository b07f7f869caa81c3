// Divergence-free flows in the `factz._factz` extension (include/factz/flow.hpp;
// docs/flow.md): a Basis built once per mesh (nodes as an (n, dim) float64 array), field
// streams of nodal velocities ((n, dim) float64) coded within a relative l2 bound, and the
// analytic velocity, gradient and divergence of a decoded field at any points.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "factz/flow.hpp"

namespace factz_py {

namespace {

namespace flow = factz::flow;

/// An (n, dim) C-contiguous float64 array (dim 2 or 3, or exactly `dim` when given) as a
/// span over its data, else a ValueError.
std::span<const double> rows_of(const py::handle& obj, const char* name, int dim, int64_t* rows = nullptr,
                                int* cols = nullptr) {
  const std::string n(name);
  if (!py::isinstance<py::array>(obj)) throw py::value_error(n + " must be a numpy.ndarray of float64, got " + type_name(obj));
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<double>()))
    throw py::value_error(n + " must have dtype float64, got " + std::string(py::str(a.dtype())) +
                          "; convert with .astype(numpy.float64)");
  if (a.ndim() != 2 || (dim ? a.shape(1) != dim : a.shape(1) != 2 && a.shape(1) != 3))
    throw py::value_error(n + " must have shape (n, " + (dim ? std::to_string(dim) : std::string("2 or 3")) +
                          "), got " + std::string(py::str(a.attr("shape"))));
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(n + " must be C-contiguous; pass numpy.ascontiguousarray(" + n + ")");
  if (rows) *rows = a.shape(0);
  if (cols) *cols = int(a.shape(1));
  return {static_cast<const double*>(a.data()), size_t(a.size())};
}

flow::Basis build_basis(const py::handle& nodes, const std::string& method, int64_t landmarks,
                        std::vector<double> periods, std::vector<double> matern_lengths, double wendland_beta,
                        const std::vector<py::object>& training) {
  int dim = 0;
  const std::span<const double> x = rows_of(nodes, "nodes", 0, nullptr, &dim);
  flow::BasisOptions o;
  o.method = take(flow::method_from_name(method));
  o.landmarks = landmarks;
  o.periods = std::move(periods);
  o.matern_lengths = std::move(matern_lengths);
  o.wendland_beta = wendland_beta;
  for (const py::object& t : training) {
    const std::span<const double> s = rows_of(t, "training velocities", dim);
    o.training.emplace_back(s.begin(), s.end());
  }
  factz::Result<flow::Basis> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = flow::build_basis(dim, x, o);
  }
  return take(std::move(r));
}

void check_nodes(const flow::Basis& b, int64_t rows, const char* name) {
  if (rows != b.n)
    throw py::value_error(std::string(name) + " has " + std::to_string(rows) + " rows, the basis " +
                          std::to_string(b.n) + " nodes");
}

flow::CoefficientCoder flow_coder_of(const std::string& s) {
  if (s == "factz") return flow::CoefficientCoder::factz;
  if (s == "zfp") return flow::CoefficientCoder::zfp;
  throw py::value_error("coder must be 'factz' or 'zfp', got '" + s + "'");
}

flow::ToleranceRule rule_of(const std::string& s) {
  if (s == "apriori") return flow::ToleranceRule::apriori;
  if (s == "measured") return flow::ToleranceRule::measured;
  throw py::value_error("tolerance must be 'apriori' or 'measured', got '" + s + "'");
}

py::tuple compress(const flow::Basis& b, const py::handle& u, double rel_l2, const std::string& coder,
                   const std::string& tolerance) {
  int64_t rows = 0;
  const std::span<const double> s = rows_of(u, "u", b.dim, &rows);
  check_nodes(b, rows, "u");
  const flow::CoefficientCoder c = flow_coder_of(coder);
  const flow::ToleranceRule rule = rule_of(tolerance);
  flow::EncodeStats st;
  factz::Result<std::vector<uint8_t>> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = flow::compress(b, s, rel_l2, c, &st, rule);
  }
  const std::vector<uint8_t> bytes = take(std::move(r));
  py::dict d;
  d["tolerance"] = st.tolerance;
  d["allowance"] = st.allowance;
  d["bound"] = st.bound;
  d["rel_bound"] = st.rel_bound;
  d["rel_l2_error"] = st.rel_l2_error;
  d["max_abs_error"] = st.max_abs_error;
  d["rel_rep_error"] = st.rel_rep_error;
  d["coef_max_error"] = st.coef_max_error;
  d["stream_bytes"] = st.stream_bytes;
  d["ratio"] = st.ratio;
  return py::make_tuple(bytes_of(bytes), d);
}

py::array_t<double> decompress(const flow::Basis& b, const py::handle& buf) {
  ByteView view(buf);
  factz::Result<std::vector<double>> r = factz::Status();
  {
    py::gil_scoped_release nogil;
    r = flow::decompress(b, view.span());
  }
  return array_of(take(std::move(r)), {py::ssize_t(b.n), py::ssize_t(b.dim)});
}

/// (velocity (p, dim), gradient (p, dim, dim) or None, divergence (p,)) at `points`.
py::tuple evaluate(const flow::Basis& b, const py::handle& buf, const py::handle& points, bool gradient) {
  ByteView view(buf);
  int64_t p = 0;
  const std::span<const double> x = rows_of(points, "points", b.dim, &p);
  std::vector<double> velocity, grad, div;
  factz::Status st;
  {
    py::gil_scoped_release nogil;
    factz::Result<std::vector<double>> c = flow::decode_coefficients(b, view.span());
    if (!c.ok()) st = c.status();
    if (st.ok()) st = flow::evaluate(b, *c, x, velocity, gradient ? &grad : nullptr);
    if (st.ok() && gradient) {
      div.assign(size_t(p), 0.0);
      for (int64_t k = 0; k < p; ++k)
        for (int i = 0; i < b.dim; ++i) div[size_t(k)] += grad[size_t((k * b.dim + i) * b.dim + i)];
    }
  }
  if (!st.ok()) raise(st);
  const auto n = py::ssize_t(p), d = py::ssize_t(b.dim);
  if (!gradient) return py::make_tuple(array_of(velocity, {n, d}), py::none(), py::none());
  return py::make_tuple(array_of(velocity, {n, d}), array_of(grad, {n, d, d}), array_of(div, {n}));
}

}  // namespace

void bind_flow(py::module_& m) {
  py::class_<flow::Basis>(m, "FlowBasis")
      .def_readonly("dim", &flow::Basis::dim)
      .def_readonly("n", &flow::Basis::n)
      .def_property_readonly("method", [](const flow::Basis& b) { return std::string(flow::method_name(b.method)); })
      .def_property_readonly("coefficients", &flow::Basis::coefficients)
      .def_property_readonly("fingerprint", &flow::Basis::fingerprint)
      .def_property_readonly("blocks", [](const flow::Basis& b) { return b.blocks.size(); })
      .def_property_readonly("nodes",
                             [](const flow::Basis& b) { return array_of(b.nodes, {py::ssize_t(b.n), py::ssize_t(b.dim)}); })
      .def_readonly("periods", &flow::Basis::periods)
      .def("to_bytes", [](const flow::Basis& b) { return bytes_of(take(flow::serialize_basis(b))); })
      .def_static("from_bytes", [](const py::handle& buf) {
        ByteView view(buf);
        return take(flow::parse_basis(view.span()));
      });
  m.def("flow_build_basis", &build_basis, py::arg("nodes"), py::arg("method"), py::arg("landmarks"),
        py::arg("periods"), py::arg("matern_lengths"), py::arg("wendland_beta"), py::arg("training"));
  m.def("flow_compress", &compress, py::arg("basis"), py::arg("u"), py::arg("rel_l2"), py::arg("coder"),
        py::arg("tolerance"));
  m.def("flow_decompress", &decompress, py::arg("basis"), py::arg("buf"));
  m.def("flow_evaluate", &evaluate, py::arg("basis"), py::arg("buf"), py::arg("points"), py::arg("gradient"));
  m.def("flow_stream_tolerance", [](const py::handle& buf) {
    ByteView view(buf);
    return take(flow::stream_tolerance(view.span()));
  });
}

}  // namespace factz_py
