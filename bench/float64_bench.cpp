// float64 stream size against float32 (issue 18, docs/benchmarks.md "float64"): for each
// field, each REL bound and each mode, the float64 field's stream (its own REL bound, so
// eb = bound * range in double) against the stream of the same field rounded to float32 at
// the same absolute bound (ABS eb), with the guarantees of the float64 round trip checked
// (G0 exactly in double, no lost / spurious / changed critical point in blocks and
// speculative mode). One line per case; the last column is float64 bytes / float32 bytes.
//
//   float64_bench [DATA_DIR...]        (default: the synthetic fields only)
//
// Fields: turbulence computed in double (synth::turbulence64, 1024 x 1024: genuinely
// float64) and every vector field NAME_u_NXxNY.f32 / NAME_v_NXxNY.f32 in the given folders,
// cast to double (exactly). FLOAT64_BENCH_DUMP=DIR also writes both streams of each case
// there and prints their sections.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "kernels/exact64.hpp"
#include "synth.hpp"

namespace {

using factz::VectorField2D;
using factz::VectorField2D64;

VectorField2D to_float(const VectorField2D64& f) {
  VectorField2D g{f.nx, f.ny, {}, {}, f.mask};
  for (double x : f.u) g.u.push_back(float(x));
  for (double x : f.v) g.v.push_back(float(x));
  return g;
}

VectorField2D64 to_double(const VectorField2D& f) {
  VectorField2D64 g{f.nx, f.ny, {}, {}, f.mask};
  g.u.assign(f.u.begin(), f.u.end());
  g.v.assign(f.v.begin(), f.v.end());
  return g;
}

struct Named {
  std::string name;
  VectorField2D64 f;
};

std::vector<Named> real_fields(const std::string& dir) {
  std::vector<Named> out;
  const std::regex re("(.*)_u_([0-9]+)x([0-9]+)\\.f32");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    std::smatch m;
    const std::string file = p.filename().string();
    if (!std::regex_match(file, m, re)) continue;
    const int64_t nx = std::stoll(m[2]), ny = std::stoll(m[3]);
    const std::string v = dir + "/" + m[1].str() + "_v_" + m[2].str() + "x" + m[3].str() + ".f32";
    auto f = factz::read_vector_field(p.string(), v, nx, ny);
    if (!f.ok()) continue;
    out.push_back({m[1].str() + " (float32 cast)", to_double(f.value())});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Named> fields;
  fields.push_back({"turbulence64 1024^2 (double)", factz::synth::turbulence64(1024, 1024, 7)});
  for (int i = 1; i < argc; ++i)
    for (auto& f : real_fields(argv[i])) fields.push_back(std::move(f));
  std::printf("%-40s %-6s %-12s %12s %12s %8s %6s %10s %10s\n", "field", "REL", "mode", "f32 bytes", "f64 bytes",
              "f64/f32", "G0G1", "exact f32", "exact f64");
  double worst = 0.0;
  for (const auto& nf : fields) {
    const VectorField2D f32 = to_float(nf.f);
    for (double rel : {1e-2, 1e-3, 1e-4}) {
      for (factz::Mode mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative}) {
        factz::Options o;
        o.mode = mode;
        o.bound_mode = factz::BoundMode::rel;
        o.bound = rel;
        factz::CompressStats st;
        auto s64 = factz::compress(nf.f, o, &st);
        if (!s64.ok()) {
          std::printf("%s: %s\n", nf.name.c_str(), s64.status().to_string().c_str());
          return 1;
        }
        factz::Options a = o;
        a.bound_mode = factz::BoundMode::abs;
        a.bound = st.eb_abs;
        factz::CompressStats st32;
        auto s32 = factz::compress(f32, a, &st32);
        if (!s32.ok()) {
          std::printf("%s float32: %s\n", nf.name.c_str(), s32.status().to_string().c_str());
          return 1;
        }
        // The float64 round trip's guarantees.
        auto d = factz::decompress64(s64.value());
        if (!d.ok()) {
          std::printf("%s decompress64: %s\n", nf.name.c_str(), d.status().to_string().c_str());
          return 1;
        }
        bool ok = true;
        for (size_t k = 0; k < nf.f.u.size(); ++k)
          ok = ok && factz::detail::within_bound64(d->u[k], nf.f.u[k], st.eb_abs) &&
               factz::detail::within_bound64(d->v[k], nf.f.v[k], st.eb_abs);
        if (mode != factz::Mode::none) {
          auto c = factz::compare(nf.f, d.value());
          ok = ok && c.ok() && c->violations() == 0;
        }
        if (const char* dump = std::getenv("FLOAT64_BENCH_DUMP")) {  // the two streams, for factz info
          const std::string base = std::string(dump) + "/" + nf.name.substr(0, 5) + "_" + std::to_string(int(mode)) + "_" + std::to_string(rel);
          (void)factz::write_bytes(base + "_f64.fz", s64.value());
          (void)factz::write_bytes(base + "_f32.fz", s32.value());
          for (const auto* s : {&s64.value(), &s32.value()})
            std::printf("%s", factz::detail::describe_container(factz::detail::parse_container(*s).value()).c_str());
        }
        const double r = double(s64->size()) / double(s32->size());
        worst = std::max(worst, r);
        std::printf("%-40s %-6g %-12s %12zu %12zu %8.4f %6s %10lld %10lld\n", nf.name.c_str(), rel,
                    factz::mode_name(mode), s32->size(), s64->size(), r, ok ? "ok" : "FAIL",
                    (long long)st32.exact_vertices, (long long)st.exact_vertices);
        if (!ok) return 1;
      }
    }
  }
  std::printf("worst f64/f32: %.4f\n", worst);
  return 0;
}
