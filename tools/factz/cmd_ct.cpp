// `factz ct`: the contour tree of a scalar field simplified at a persistence threshold
// (nodes with vertex, position, value and type; the arcs of the contour tree and of the two
// simplified merge trees; the persistence pairs).
// Also defines scalar_dims, shared with the scalar paths of compress and verify (main.cpp).
#include <iostream>
#include <sstream>

#include "common.hpp"
#include "factz/contour_tree.hpp"
#include "field_files.hpp"
#include "factz/scalar.hpp"

namespace factz::cli {

/// `-3 NX NY NZ` or `-2 NX NY` (nz = 1); usage error when absent or not positive integers.
void scalar_dims(const Args& a, int64_t& nx, int64_t& ny, int64_t& nz) {
  if (a.has("-3")) {
    const auto& d = a.all("-3").back();
    long long x = 0, y = 0, z = 0;
    if (!to_int64(d[0], x) || !to_int64(d[1], y) || !to_int64(d[2], z) || x <= 0 || y <= 0 || z <= 0)
      fail("-3 needs three positive integers, got '" + d[0] + " " + d[1] + " " + d[2] + "'", 2);
    nx = x;
    ny = y;
    nz = z;
    return;
  }
  if (!a.has("-2")) fail("missing -2 NX NY or -3 NX NY NZ", 2);
  dims(a, nx, ny);
  nz = 1;
}

/// Marks the missing vertices of a scalar field read for a command: NaN, and the value of
/// `--fill V` when given (--fill-u / --fill-v are for vector fields). Returns their count.
int64_t mark_scalar_fill(const Args& a, factz::ScalarField& f) {
  if (a.has("--fill-u") || a.has("--fill-v"))
    fail("--fill-u and --fill-v apply to vector fields; give --fill for a scalar field", 2);
  return factz::mark_missing(f, fill_of(a).u);
}

/// `--persistence P` (a fraction of the value range, finite, >= 0), default 1e-2.
double persistence_of(const Args& a) {
  double p = 1e-2;
  if (a.has("--persistence") && (!to_double(a.get("--persistence"), p) || p < 0))
    fail("--persistence needs a finite fraction >= 0, got '" + a.get("--persistence") + "'", 2);
  return p;
}

}  // namespace factz::cli

namespace {

using factz::cli::Args;
using factz::cli::fail;
using factz::cli::json_number;
using factz::cli::take;

const factz::cli::Command kCt{
    "ct", "Print the contour tree of a 2D or 3D scalar field, simplified at a persistence threshold.",
    "factz ct [-2 NX NY | -3 NX NY NZ] -i FILE [--persistence P] [--fill V] [--json] [-x POLICY]",
    {{"-2", 2, "NX NY", "2D scalar grid, NX fastest (x)"},
     {"-3", 3, "NX NY NZ", "3D scalar grid, NX fastest (x), then NY, then NZ"},
     {"-i", 1, "FILE", "the field: raw float32 (x fastest), .npy, FILE.nc:VAR[...] or FILE.h5:/path (-2/-3 optional then)"},
     {"--persistence", 1, "P", "remove extremum-saddle pairs of persistence below P times the value range (default 1e-2)"},
     {"--fill", 1, "V",
      "the fill value marking missing vertices (e.g. 1e20, -9999, nan; NaN is always missing): they and every "
      "simplex touching them leave the mesh, and the tree becomes a forest when the valid vertices fall apart"},
     {"-x", 1, "POLICY", "serial | omp | omp=T (T threads); the tree never depends on it"},
     {"--json", 0, "", "print one JSON object on stdout"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}}};

int run_ct(const Args& a) {
  if (!a.has("-i")) fail("missing -i FILE", 2);
  if (a.all("-i").size() != 1) fail("give -i once (a scalar field)", 2);
  factz::CtOptions o;
  o.persistence = factz::cli::persistence_of(a);
  const factz::Exec e = factz::cli::exec_of(a, &o.policy);
  o.threads = e.threads;
  auto field = factz::cli::read_scalar_input(a, "-i", "ct");  // raw, .npy, FILE.nc:VAR[...]
  const int64_t masked = factz::cli::mark_scalar_fill(a, field);
  const int64_t nx = field.nx, ny = field.ny, nz = field.nz;
  const auto t = take(factz::contour_tree(field, o));
  int64_t counts[factz::kCtNodeTypeCount] = {};
  for (const auto& n : t.nodes) ++counts[int(n.type)];
  auto xyz = [&](int64_t v) {
    return std::to_string(v % nx) + (a.has("--json") ? ", " : " ") + std::to_string((v / nx) % ny) +
           (a.has("--json") ? ", " : " ") + std::to_string(v / (nx * ny));
  };
  using In = factz::cli::StatsWriter::In;
  factz::cli::StatsWriter s, types;
  for (int k = 0; k < factz::kCtNodeTypeCount; ++k)
    types.count(factz::ct_node_type_name(factz::CtNodeType(k)), counts[k]);
  s.count("nx", nx, In::json).count("ny", ny, In::json).count("nz", nz, In::json);
  s.num("persistence", o.persistence, In::json).num("persistence_abs", t.persistence, In::json);
  s.count("nodes", t.nodes.size(), In::text).count("arcs", t.arcs.size(), In::text);
  s.count("full_nodes", t.full_nodes).count("pruned_pairs", t.pruned_pairs).count("components", t.components);
  s.count("masked_vertices", masked);
  s.count("join_arcs", t.join_arcs.size(), In::text).count("split_arcs", t.split_arcs.size(), In::text);
  s.flag("contour_arcs", t.contour_arcs);
  s.num("persistence_abs", t.persistence, In::text).json("types", types.object());
  for (int k = 0; k < factz::kCtNodeTypeCount; ++k)
    s.count(factz::ct_node_type_name(factz::CtNodeType(k)), counts[k], In::text);
  std::ostringstream os;
  if (a.has("--json")) {
    // The tree itself: JSON arrays after the statistics.
    os << "[";
    for (size_t i = 0; i < t.nodes.size(); ++i) {
      const auto& n = t.nodes[i];
      os << (i ? ", " : "") << "{\"vertex\": " << n.vertex << ", \"xyz\": [" << xyz(n.vertex)
         << "], \"value\": " << json_number(n.value) << ", \"type\": \"" << factz::ct_node_type_name(n.type)
         << "\", \"up\": " << n.up_degree << ", \"down\": " << n.down_degree << "}";
    }
    s.json("nodes", os.str() + "]");
    auto arc_list = [&](const std::vector<factz::CtArc>& arcs) {
      std::ostringstream list;
      list << "[";
      for (size_t i = 0; i < arcs.size(); ++i) list << (i ? ", " : "") << "[" << arcs[i].lower << ", " << arcs[i].upper << "]";
      return list.str() + "]";
    };
    s.json("arcs", arc_list(t.arcs)).json("join_arcs", arc_list(t.join_arcs)).json("split_arcs", arc_list(t.split_arcs));
    os.str("");
    os << "[";
    for (size_t i = 0; i < t.pairs.size(); ++i)
      os << (i ? ", " : "") << "{\"extremum\": " << t.pairs[i].extremum << ", \"saddle\": " << t.pairs[i].saddle
         << ", \"persistence\": " << json_number(t.pairs[i].persistence) << "}";
    s.json("pairs", os.str() + "]");
    os.str("");
    os << s.object() << "\n";
  } else {
    os << s.line() << "\n# node VERTEX X Y Z VALUE TYPE\n";
    char buf[64];
    for (const auto& n : t.nodes) {
      std::snprintf(buf, sizeof buf, "%.9g", double(n.value));
      os << "node " << n.vertex << ' ' << xyz(n.vertex) << ' ' << buf << ' ' << factz::ct_node_type_name(n.type) << "\n";
    }
    os << "# arc LOWER UPPER (contour tree; join_arc and split_arc: the simplified merge trees)\n";
    for (const auto& arc : t.arcs) os << "arc " << arc.lower << ' ' << arc.upper << "\n";
    for (const auto& arc : t.join_arcs) os << "join_arc " << arc.lower << ' ' << arc.upper << "\n";
    for (const auto& arc : t.split_arcs) os << "split_arc " << arc.lower << ' ' << arc.upper << "\n";
    os << "# pair EXTREMUM SADDLE PERSISTENCE\n";
    for (const auto& p : t.pairs) {
      std::snprintf(buf, sizeof buf, "%.9g", p.persistence);
      os << "pair " << p.extremum << ' ' << p.saddle << ' ' << buf << "\n";
    }
  }
  std::cout << os.str();
  return 0;
}

const bool kRegistered = factz::cli::register_command(&kCt, &run_ct);

}  // namespace
