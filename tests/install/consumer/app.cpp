// Compresses a field with two critical points, decompresses it and checks that the bound
// held and the critical points are the original's: prints "ok" and exits 0 when they are.
#include <cmath>
#include <cstdio>

#include <factz/factz.hpp>
#include <factz/topology.hpp>

int main() {
  factz::VectorField2D f;
  f.nx = 48;
  f.ny = 40;
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 0; x < f.nx; ++x) {
      const double px = x / 8.0 - 3.0, py = y / 8.0 - 2.5;
      f.u.push_back(float(std::sin(px) * std::cos(py)));
      f.v.push_back(float(-std::cos(px) * std::sin(py) + 0.1 * px));
    }
  factz::Options o;
  o.bound_mode = factz::BoundMode::abs;
  o.bound = 1e-2;
  auto stream = factz::compress(f, o);
  if (!stream.ok()) return std::printf("compress: %s\n", stream.status().message().c_str()), 1;
  auto back = factz::decompress(stream.value());
  if (!back.ok()) return std::printf("decompress: %s\n", back.status().message().c_str()), 1;
  auto a = factz::critical_points(f);
  auto b = factz::critical_points(back.value());
  if (!a.ok() || !b.ok() || a->size() != b->size() || a->empty()) return std::printf("critical points differ\n"), 1;
  for (size_t i = 0; i < a->size(); ++i)
    if ((*a)[i].triangle != (*b)[i].triangle || (*a)[i].type != (*b)[i].type)
      return std::printf("critical point %zu differs\n", i), 1;
  for (size_t k = 0; k < f.u.size(); ++k)
    if (std::fabs(f.u[k] - back->u[k]) > 0.01 || std::fabs(f.v[k] - back->v[k]) > 0.01)
      return std::printf("bound broken at %zu\n", k), 1;
  std::printf("ok: %zu bytes, %zu critical points\n", stream->size(), a->size());
  return 0;
}
