// factz render: a PNG of a 2D vector field with its critical points, marked by fate when a
// reconstruction is given (like the paper's Figure 9), or of a 2D scalar field with its
// contour-tree nodes; from field files or from a FaCTz stream (render.hpp draws).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common.hpp"
#include "factz/contour_tree.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/scalar.hpp"
#include "field_files.hpp"
#include "format/container.hpp"
#include "render.hpp"

namespace factz::cli {  // defined in cmd_ct.cpp
double persistence_of(const Args& a);
int64_t mark_scalar_fill(const Args& a, factz::ScalarField& f);
}  // namespace factz::cli

namespace {

using factz::cli::Args;
using factz::cli::Command;
using factz::cli::fail;
using factz::cli::take;

const Command kSpec{
    "render",
    "Draw a 2D field as a PNG: a vector field's magnitude with its critical points (by fate against a "
    "reconstruction with -d: preserved green, lost red and larger, spurious magenta, type changed orange), or a "
    "scalar field's values with its contour-tree nodes (--ct); a colour bar with the scale below, a legend, and "
    "\"N CRITICAL POINTS, M DRAWN\" (markers that would overlap are thinned). Row 0 is at the bottom unless "
    "--origin upper.",
    "factz render [-2 NX NY] -i U -i V [-d U2 -d V2] -o OUT.png [--origin lower|upper] [--zoom X0 Y0 X1 Y1] [--lic] "
    "[--size PX]\n"
    "       factz render [-2 NX NY | -3 NX NY NZ --slice Z] -i S -o OUT.png [--ct [--persistence P]] [...]   (scalar)\n"
    "       factz render -z STREAM -o OUT.png [--slice Z] [--ct [--persistence P]] [...]   (a FaCTz stream)",
    {{"-2", 2, "NX NY", "grid size (vertices along x, then y); optional for .npy and netCDF/HDF5 inputs"},
     {"-3", 3, "NX NY NZ", "3D scalar grid (x fastest); give --slice Z"},
     {"-i", 1, "FILE",
      "the field: twice (u then v) for a vector field, once for a scalar field: raw, .npy, FILE.nc:VAR[...] or "
      "FILE.h5:/path",
      true},
     {"-d", 1, "FILE", "reconstructed component (give twice: u then v; vector fields)", true},
     {"-z", 1, "STREAM",
      "draw the field a FaCTz stream holds instead of -i: a vector or scalar stream, or a multi-block file; '-' "
      "reads stdin"},
     {"-o", 1, "OUT.png", "output PNG"},
     {"--origin", 1, "lower|upper",
      "where row 0 is drawn: lower (at the bottom, rows grow upwards as in netCDF files stored south to north; "
      "default) or upper (at the top, as an image)"},
     {"--zoom", 4, "X0 Y0 X1 Y1", "window of vertices, inclusive: 0 <= X0 < X1 < NX, 0 <= Y0 < Y1 < NY"},
     {"--lic", 0, "", "line integral convolution texture over the magnitude (vector fields)"},
     {"--size", 1, "PX", "pixels along the window's longer side (default 1024, 16..16384)"},
     {"--ct", 0, "", "scalar fields: mark the nodes of the contour tree (minima, maxima, saddles)"},
     {"--persistence", 1, "P", "with --ct: simplification threshold, a fraction of the value range (default 1e-2)"},
     {"--slice", 1, "Z", "3D scalar fields: draw the plane z = Z (0 <= Z < NZ)"},
     factz::cli::fill_option(), factz::cli::fill_u_option(), factz::cli::fill_v_option(),
     {"-x", 1, "POLICY", "serial | omp | omp=T (default omp)"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}},
};

int64_t int_arg(const std::string& text, const std::string& what) {
  long long x = 0;
  if (!factz::cli::to_int64(text, x)) fail(what + " must be an integer, got '" + text + "'", 2);
  return x;
}

/// The field to draw: a vector field (with its reconstruction, if any) or a scalar plane.
struct Drawable {
  bool scalar = false;
  factz::VectorField2D vector, recon;
  bool with_recon = false;
  factz::ScalarField plane;
  int64_t nx() const { return scalar ? plane.nx : vector.nx; }
  int64_t ny() const { return scalar ? plane.ny : vector.ny; }
};

/// Plane z = --slice of a 3D scalar field; a 2D field as it is (--slice refused).
factz::ScalarField slice_of(const Args& a, factz::ScalarField f) {
  if (f.nz == 1) {
    if (a.has("--slice")) fail("--slice applies to 3D scalar fields; this field is 2D", 2);
    return f;
  }
  if (!a.has("--slice"))
    fail("the scalar field is 3D (" + std::to_string(f.nx) + " x " + std::to_string(f.ny) + " x " +
             std::to_string(f.nz) + "): render draws one plane, give --slice Z (0 <= Z < " + std::to_string(f.nz) + ")",
         2);
  const int64_t z = int_arg(a.get("--slice"), "--slice");
  if (z < 0 || z >= f.nz) fail("--slice must be in [0, " + std::to_string(f.nz) + "), got " + std::to_string(z), 2);
  factz::ScalarField p;
  p.nx = f.nx;
  p.ny = f.ny;
  const size_t n = size_t(f.nx * f.ny), at = size_t(z) * n;
  p.values.assign(f.values.begin() + int64_t(at), f.values.begin() + int64_t(at + n));
  if (!f.mask.empty()) p.mask.assign(f.mask.begin() + int64_t(at), f.mask.begin() + int64_t(at + n));
  return p;
}

/// The field a stream holds (-z): multi-block file, vector or scalar stream.
Drawable read_stream(const Args& a) {
  for (const char* flag : {"-i", "-d", "-2", "-3", "--fill", "--fill-u", "--fill-v"})
    if (a.has(flag))
      fail(std::string(flag) + " does not apply to -z: the stream gives the field, its shape and its missing vertices",
           2);
  const auto bytes = take(factz::read_bytes(a.get("-z")));
  const std::string name = a.get("-z");
  if (bytes.size() >= 4 && (std::equal(bytes.begin(), bytes.begin() + 4, "FZFS") ||
                            std::equal(bytes.begin(), bytes.begin() + 4, "FZFB")))
    fail("invalid_argument: " + name +
         " is a flow file (factz flow): it holds kernel coefficients or a basis, not a grid; decode it with factz "
         "flow decompress");
  Drawable d;
  const factz::Exec e = factz::cli::exec_of(a);
  factz::DecompressOptions o;
  o.threads = e.threads;
  if (factz::is_multiblock(bytes)) {
    d.vector = take(factz::decompress_multiblock(bytes, o));
    return d;
  }
  const auto parsed = take(factz::detail::parse_container(bytes));
  if (parsed.header.components == 1) {
    d.scalar = true;
    d.plane = slice_of(a, take(factz::decompress_scalar(bytes, o)));
    return d;
  }
  if (a.has("--slice")) fail("--slice applies to 3D scalar fields; the stream holds a 2D vector field", 2);
  d.vector = take(factz::decompress(bytes, o));
  return d;
}

Drawable read_inputs(const Args& a) {
  if (a.has("-z")) return read_stream(a);
  if (!a.has("-i")) fail("missing -i (twice for a vector field, once for a scalar field) or -z STREAM", 2);
  Drawable d;
  const size_t count = a.all("-i").size();
  if (count == 1) {
    if (a.has("-d")) fail("-d (a reconstruction) applies to vector fields; a single -i is a scalar field", 2);
    d.scalar = true;
    auto f = factz::cli::read_scalar_input(a, "-i", "render");
    factz::cli::mark_scalar_fill(a, f);
    d.plane = slice_of(a, std::move(f));
    return d;
  }
  if (count != 2) fail("give -i twice (u then v) for a vector field, or once for a scalar field", 2);
  if (a.has("-3")) fail("-3 is for 3D scalar fields; a vector field takes -2 NX NY", 2);
  if (a.has("--slice")) fail("--slice applies to 3D scalar fields", 2);
  factz::cli::two_files(a, "-i");
  if (a.has("-d")) factz::cli::two_files(a, "-d");
  const auto input = factz::cli::read_vector_input(a, "-i", "render");
  d.vector = input.field;
  if (a.has("-d")) {
    d.recon = factz::cli::read_vector_input(a, "-d", "render", &input).field;
    d.with_recon = true;
  }
  return d;
}

/// The largest magnitude over the window's valid vertices: the original's, so that pictures
/// of several reconstructions share one colour scale.
double magnitude_top(const factz::VectorField2D& f, const factz::render::Window& w) {
  double top = 0;
  for (int64_t y = w.y0; y <= w.y1; ++y)
    for (int64_t x = w.x0; x <= w.x1; ++x) {
      const size_t k = size_t(y * f.nx + x);
      if (!f.mask.empty() && f.mask[k] != 0) continue;
      const double m = std::hypot(double(f.u[k]), double(f.v[k]));
      if (std::isfinite(m)) top = std::max(top, m);
    }
  return top;
}

int run(const Args& a) {
  if (!a.has("-o")) fail("missing -o OUT.png", 2);
  if (a.has("-z") && a.has("-i")) fail("give -i (field files) or -z (a stream), not both", 2);
  factz::cli::refuse_clobbering(a, {"-i", "-d", "-z"}, {"-o"});
  const std::string out = a.get("-o");
  factz::render::Options o;
  const std::string origin = a.get("--origin", "lower");
  if (origin == "lower") o.origin = factz::render::Origin::lower;
  else if (origin == "upper") o.origin = factz::render::Origin::upper;
  else fail("--origin must be lower (row 0 at the bottom) or upper (row 0 at the top), got '" + origin + "'", 2);
  if (a.has("--size")) {
    const int64_t s = int_arg(a.get("--size"), "--size");
    if (s < 16 || s > 16384) fail("--size must be in [16, 16384], got " + std::to_string(s), 2);
    o.size = int(s);
  }
  if (a.has("--zoom"))
    for (const auto& z : a.all("--zoom").back()) int_arg(z, "--zoom");
  if (a.has("--persistence") && !a.has("--ct")) fail("--persistence applies with --ct (contour-tree nodes)", 2);
  factz::Policy policy = factz::Policy::omp;
  const factz::Exec exec = factz::cli::exec_of(a, &policy);
  o.threads = exec.threads;
  const double persistence = factz::cli::persistence_of(a);

  const Drawable d = read_inputs(a);
  if (d.scalar && a.has("--lic")) fail("--lic draws the flow of a vector field; the field is scalar", 2);
  if (!d.scalar && a.has("--ct")) fail("--ct marks the contour tree of a scalar field; the field is a vector field", 2);
  const int64_t nx = d.nx(), ny = d.ny();
  if (nx < 2 || ny < 2) fail("render needs at least 2 x 2 vertices, the field is " + std::to_string(nx) + " x " +
                             std::to_string(ny), 2);
  o.window = {0, 0, nx - 1, ny - 1};
  if (a.has("--zoom")) {
    const auto& z = a.all("--zoom").back();
    o.window = {int_arg(z[0], "X0"), int_arg(z[1], "Y0"), int_arg(z[2], "X1"), int_arg(z[3], "Y1")};
    const auto& w = o.window;
    if (w.x0 < 0 || w.y0 < 0 || w.x1 >= nx || w.y1 >= ny || w.x0 >= w.x1 || w.y0 >= w.y1)
      fail("--zoom needs 0 <= X0 < X1 < " + std::to_string(nx) + " and 0 <= Y0 < Y1 < " + std::to_string(ny), 2);
  }
  o.lic = a.has("--lic");
  o.reconstruction = d.with_recon;

  if (d.scalar) {
    std::vector<factz::CtNode> nodes;
    if (a.has("--ct")) {
      factz::CtOptions co;
      co.persistence = persistence;
      co.policy = policy;
      co.threads = exec.threads;
      co.contour_arcs = false;
      nodes = take(factz::contour_tree(d.plane, co)).nodes;
    }
    const auto image = take(factz::render::draw_scalar(d.plane, nodes, o));
    factz::cli::check(factz::render::write_png(out, image));
    std::printf("render: %dx%d px, scalar field, values %.6g to %.6g", image.width, image.height, image.scale_low,
                image.scale_high);
    if (a.has("--ct"))
      std::printf(", %lld contour-tree nodes, %lld drawn", static_cast<long long>(image.markers_shown),
                  static_cast<long long>(image.markers_drawn));
    std::printf(" -> %s\n", out.c_str());
    return 0;
  }
  auto markers = take(factz::render::classify(d.vector, d.with_recon ? &d.recon : nullptr, exec));
  const auto image =
      take(factz::render::draw(d.with_recon ? d.recon : d.vector, markers, o, magnitude_top(d.vector, o.window)));
  factz::cli::check(factz::render::write_png(out, image));
  int64_t count[factz::render::kFateCount] = {};
  const auto& w = o.window;
  for (const auto& m : markers)
    count[int(m.fate)] += m.x >= double(w.x0) && m.x <= double(w.x1) && m.y >= double(w.y0) && m.y <= double(w.y1);
  std::printf("render: %dx%d px, ", image.width, image.height);
  if (d.with_recon)
    std::printf("preserved %lld, lost %lld, spurious %lld, type changed %lld, ", static_cast<long long>(count[1]),
                static_cast<long long>(count[2]), static_cast<long long>(count[3]), static_cast<long long>(count[4]));
  std::printf("%lld critical points, %lld drawn -> %s\n", static_cast<long long>(image.markers_shown),
              static_cast<long long>(image.markers_drawn), out.c_str());
  return 0;
}

const bool kRegistered = factz::cli::register_command(&kSpec, &run);

}  // namespace
