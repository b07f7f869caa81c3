// factz render: a PNG of a 2D vector field with its critical points, marked by fate when a
// reconstruction is given (render.hpp; like the paper's Figure 9).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common.hpp"
#include "factz/io.hpp"
#include "field_files.hpp"
#include "render.hpp"

namespace {

using factz::cli::Args;
using factz::cli::Command;

const Command kSpec{
    "render",
    "Draw a field as a PNG with its critical points, marked by fate against a reconstruction.\n"
    "The vector magnitude is a colour map (optionally with a line integral convolution texture).\n"
    "With -d the reconstruction is drawn and every critical point is marked by its fate:\n"
    "preserved (green), lost (red, larger), spurious (magenta), type changed (orange), with a\n"
    "legend counting what the window shows. Row 0 is at the top.",
    "factz render [-2 NX NY] -i U -i V [-d U2 -d V2] -o OUT.png [--zoom X0 Y0 X1 Y1] [--lic] [--size PX]",
    {{"-2", 2, "NX NY", "grid size (vertices along x, then y); optional for .npy and netCDF/HDF5 inputs"},
     {"-i", 1, "FILE", "original component (give twice: u then v): raw, .npy, FILE.nc:VAR[...] or FILE.h5:/path", true},
     {"-d", 1, "FILE", "reconstructed component (give twice: u then v)", true},
     {"-o", 1, "OUT.png", "output PNG"},
     {"--zoom", 4, "X0 Y0 X1 Y1", "window of vertices, inclusive: 0 <= X0 < X1 < NX, 0 <= Y0 < Y1 < NY"},
     {"--lic", 0, "", "line integral convolution texture over the magnitude"},
     {"--size", 1, "PX", "pixels along the window's longer side (default 1024, 16..16384)"},
     factz::cli::fill_option(), factz::cli::fill_u_option(), factz::cli::fill_v_option(),
     {"-x", 1, "POLICY", "serial | omp | omp=T (default omp)"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}},
};

int64_t int_arg(const std::string& text, const std::string& what) {
  long long x = 0;
  if (!factz::cli::to_int64(text, x)) factz::cli::fail(what + " must be an integer, got '" + text + "'", 2);
  return x;
}

int run(const Args& a) {
  int64_t nx = 0, ny = 0;
  factz::cli::input_dims(a, "-i", nx, ny);
  factz::cli::two_files(a, "-i");
  if (!a.has("-o")) factz::cli::fail("missing -o OUT.png", 2);
  const std::string out = a.get("-o");
  factz::cli::refuse_clobbering(a, {"-i", "-d"}, {"-o"});
  const bool with_recon = a.has("-d");
  factz::render::Options o;
  o.window = {0, 0, nx - 1, ny - 1};
  if (a.has("--zoom")) {
    const auto& z = a.all("--zoom").back();
    o.window = {int_arg(z[0], "X0"), int_arg(z[1], "Y0"), int_arg(z[2], "X1"), int_arg(z[3], "Y1")};
    const auto& w = o.window;
    if (w.x0 < 0 || w.y0 < 0 || w.x1 >= nx || w.y1 >= ny || w.x0 >= w.x1 || w.y0 >= w.y1)
      factz::cli::fail("--zoom needs 0 <= X0 < X1 < " + std::to_string(nx) + " and 0 <= Y0 < Y1 < " + std::to_string(ny), 2);
  }
  if (a.has("--size")) {
    const int64_t s = int_arg(a.get("--size"), "--size");
    if (s < 16 || s > 16384) factz::cli::fail("--size must be in [16, 16384], got " + std::to_string(s), 2);
    o.size = int(s);
  }
  if (nx < 2 || ny < 2) factz::cli::fail("render needs at least 2 x 2 vertices", 2);
  o.lic = a.has("--lic");
  o.reconstruction = with_recon;
  const factz::Exec exec = factz::cli::exec_of(a);
  o.threads = exec.threads;

  const auto input = factz::cli::read_vector_input(a, "-i", "render");
  const factz::VectorField2D& original = input.field;
  factz::VectorField2D recon;
  if (with_recon) recon = factz::cli::read_vector_input(a, "-d", "render", &input).field;
  auto markers = factz::cli::take(factz::render::classify(original, with_recon ? &recon : nullptr, exec));
  // The colour scale follows the original, so that pictures of several reconstructions compare.
  double top = 0;
  for (int64_t y = o.window.y0; y <= o.window.y1; ++y)
    for (int64_t x = o.window.x0; x <= o.window.x1; ++x) {
      const size_t k = size_t(y * nx + x);
      top = std::max(top, std::hypot(double(original.u[k]), double(original.v[k])));
    }
  auto image = factz::cli::take(factz::render::draw(with_recon ? recon : original, markers, o, top));
  factz::cli::check(factz::render::write_png(out, image));
  int64_t count[factz::render::kFateCount] = {};
  for (const auto& m : markers) ++count[int(m.fate)];
  if (with_recon)
    std::printf("render: %dx%d px, preserved %lld, lost %lld, spurious %lld, type changed %lld -> %s\n", image.width,
                image.height, static_cast<long long>(count[1]), static_cast<long long>(count[2]),
                static_cast<long long>(count[3]), static_cast<long long>(count[4]), out.c_str());
  else
    std::printf("render: %dx%d px, %lld critical points -> %s\n", image.width, image.height,
                static_cast<long long>(count[0]), out.c_str());
  return 0;
}

const bool kRegistered = factz::cli::register_command(&kSpec, &run);

}  // namespace
