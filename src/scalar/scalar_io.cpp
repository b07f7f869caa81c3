// Scalar fields: reading (raw float32 or .npy, through the vector field's plane reader) and
// their missing vertices (mask, NaN, declared fill values).
#include <cmath>

#include "factz/io.hpp"
#include "factz/scalar.hpp"
#include "scalar/scalar_checks.hpp"

namespace factz {

std::vector<uint8_t> missing_mask(const ScalarField& f) {
  std::vector<uint8_t> m;
  const size_t n = f.values.size();
  for (size_t k = 0; k < n; ++k) {
    const bool miss = (k < f.mask.size() && f.mask[k]) || std::isnan(f.values[k]);
    if (!miss) continue;
    if (m.empty()) m.assign(n, 0);
    m[k] = 1;
  }
  return m;
}

int64_t mark_missing(ScalarField& f, std::optional<float> fill) {
  const size_t n = f.values.size();
  const bool declared = fill && !std::isnan(*fill);
  std::vector<uint8_t> m = f.mask.size() == n ? f.mask : std::vector<uint8_t>(n, 0);
  int64_t count = 0;
  for (size_t k = 0; k < n; ++k) {
    const bool miss = m[k] != 0 || std::isnan(f.values[k]) || (declared && f.values[k] == *fill);
    m[k] = miss ? 1 : 0;
    count += miss;
  }
  if (count == 0) m.clear();
  f.mask = std::move(m);
  return count;
}

Result<ScalarField> read_scalar_field(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  if (nx <= 0 || ny <= 0 || nz <= 0) return invalid_argument("scalar field dimensions must be positive");
  if (ny > detail::kMaxCtVertices / nx || nz > detail::kMaxCtVertices / (nx * ny))
    return invalid_argument("scalar field has more than 2^32 - 2 vertices");
  auto plane = read_plane(path, nx, ny * nz);
  if (!plane.ok()) return plane.status();
  ScalarField f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values = std::move(plane.value());
  if (Status s = detail::check_scalar_shape(f); !s.ok()) return Status(s.code(), path + ": " + s.message());
  return f;
}

}  // namespace factz
