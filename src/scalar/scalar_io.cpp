// Scalar fields: reading (raw float32 through the vector field's plane reader, '<f4' .npy; raw
// float64 or '<f8' .npy) and their missing vertices (mask, NaN, declared fill values).
#include <bit>
#include <cmath>
#include <type_traits>

#include "factz/io.hpp"
#include "factz/scalar.hpp"
#include "scalar/scalar_checks.hpp"
#include "util/big_vector.hpp"

namespace factz {
namespace {

template <class T>
std::vector<uint8_t> missing_mask_of(const ScalarFieldOf<T>& f) {
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

template <class T>
int64_t mark_missing_of(ScalarFieldOf<T>& f, std::optional<T> fill) {
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

Status check_dims(int64_t nx, int64_t ny, int64_t nz) {
  if (nx <= 0 || ny <= 0 || nz <= 0) return invalid_argument("scalar field dimensions must be positive");
  if (ny > detail::kMaxCtVertices / nx || nz > detail::kMaxCtVertices / (nx * ny))
    return invalid_argument("scalar field has more than 2^32 - 2 vertices");
  return Status::Ok();
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string t = "(";
  for (size_t k = 0; k < shape.size(); ++k) t += (k ? ", " : "") + std::to_string(shape[k]);
  return t + (shape.size() == 1 ? ",)" : ")");
}

// The values of a float field file (`width` bytes a value: 4 for float32, 8 for float64): the
// data part of a little-endian .npy of that dtype and of a shape that lays out nx * ny * nz
// values in C order ((n,), (ny * nz, nx) or (nz, ny, nx)), or a whole raw file.
Result<std::span<const uint8_t>> field_data(const std::string& path, const std::vector<uint8_t>& bytes, int64_t nx,
                                            int64_t ny, int64_t nz, int width) {
  std::span<const uint8_t> data(bytes);
  if (!ends_with(path, ".npy")) return data;
  auto h = parse_npy_header(bytes);
  if (!h.ok()) return Status(h.status().code(), path + ": " + h.status().message());
  FACTZ_RETURN_IF_ERROR(check_npy_float(*h, width, path));
  const std::vector<int64_t>& s = h->shape;
  const bool flat = s.size() == 1 && s[0] == nx * ny * nz;
  const bool plane = s.size() == 2 && s[0] == ny * nz && s[1] == nx;
  const bool cube = s.size() == 3 && nz > 1 && s[0] == nz && s[1] == ny && s[2] == nx;
  if (!flat && !plane && !cube)
    return invalid_argument(path + ": .npy shape " + shape_text(s) + " does not match the grid " + std::to_string(nx) +
                            " x " + std::to_string(ny) + (nz > 1 ? " x " + std::to_string(nz) : std::string()) +
                            " (shape (" + (nz > 1 ? std::to_string(nz) + ", " : std::string()) + std::to_string(ny) +
                            ", " + std::to_string(nx) + "))");
  return data.subspan(std::min<size_t>(data.size(), size_t(h->data_offset)));
}

// The nx * ny * nz values of T in a field file's bytes (field_data), little-endian whatever
// the host.
template <class T>
Status field_values(const std::string& path, const std::vector<uint8_t>& bytes, int64_t nx, int64_t ny, int64_t nz,
                    std::vector<T>& out) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  constexpr size_t w = sizeof(T);
  auto data = field_data(path, bytes, nx, ny, nz, int(w));
  if (!data.ok()) return data.status();
  const uint64_t n = uint64_t(nx) * uint64_t(ny) * uint64_t(nz);
  if (data->size() != n * w)
    return invalid_argument(path + ": expected " + std::to_string(n * w) + " bytes of " +
                            (w == 8 ? "float64" : "float32") + " for " + std::to_string(nx) + "x" + std::to_string(ny) +
                            "x" + std::to_string(nz) + ", found " + std::to_string(data->size()));
  detail::resize_fresh(out, size_t(n));  // huge pages before the zero fill
  for (size_t k = 0; k < out.size(); ++k) {
    Bits b = 0;
    for (size_t i = w; i-- > 0;) b = Bits(b << 8) | (*data)[k * w + i];
    out[k] = std::bit_cast<T>(b);
  }
  return Status::Ok();
}

}  // namespace

std::vector<uint8_t> missing_mask(const ScalarField& f) { return missing_mask_of(f); }
std::vector<uint8_t> missing_mask(const ScalarField64& f) { return missing_mask_of(f); }

int64_t mark_missing(ScalarField& f, std::optional<float> fill) { return mark_missing_of(f, fill); }
int64_t mark_missing(ScalarField64& f, std::optional<double> fill) { return mark_missing_of(f, fill); }

Result<ScalarField> read_scalar_field(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  FACTZ_RETURN_IF_ERROR(check_dims(nx, ny, nz));
  ScalarField f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  if (ends_with(path, ".npy")) {  // of shape (n,), (ny * nz, nx) or (nz, ny, nx), as read_scalar_field64
    auto bytes = read_bytes(path);
    if (!bytes.ok()) return bytes.status();
    FACTZ_RETURN_IF_ERROR(field_values(path, bytes.value(), nx, ny, nz, f.values));
  } else {
    auto plane = read_plane(path, nx, ny * nz);
    if (!plane.ok()) return plane.status();
    f.values = std::move(plane.value());
  }
  if (Status s = detail::check_scalar_shape(f); !s.ok()) return Status(s.code(), path + ": " + s.message());
  return f;
}

Result<ScalarField64> read_scalar_field64(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  FACTZ_RETURN_IF_ERROR(check_dims(nx, ny, nz));
  auto bytes = read_bytes(path);
  if (!bytes.ok()) return bytes.status();
  ScalarField64 f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  FACTZ_RETURN_IF_ERROR(field_values(path, bytes.value(), nx, ny, nz, f.values));
  return f;
}

}  // namespace factz
