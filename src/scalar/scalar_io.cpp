// Reading scalar fields (raw float32 or .npy) through the vector field's plane reader.
#include "factz/io.hpp"
#include "factz/scalar.hpp"
#include "scalar/scalar_checks.hpp"

namespace factz {

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
  if (Status s = detail::check_scalar_field(f); !s.ok()) return Status(s.code(), path + ": " + s.message());
  return f;
}

}  // namespace factz
