#include "streams/missing_fill.hpp"

#include <algorithm>

namespace factz::detail {
namespace {

/// Fills one row of plane p in place; false when the row has no valid vertex.
template <class T>
bool fill_row(T* p, const uint8_t* m, int64_t nx) {
  int64_t first = 0;
  while (first < nx && m[first]) ++first;
  if (first == nx) return false;
  for (int64_t x = 0; x < first; ++x) p[x] = p[first];
  T last = p[first];
  for (int64_t x = first + 1; x < nx; ++x) {
    if (m[x]) p[x] = last;
    else last = p[x];
  }
  return true;
}

template <class Field>
Field fill_missing_any(const Field& f, const std::vector<uint8_t>& mask) {
  using T = typename decltype(Field::u)::value_type;
  Field w;
  w.nx = f.nx;
  w.ny = f.ny;
  w.u = f.u;
  w.v = f.v;
  const int64_t nx = f.nx, ny = f.ny;
  std::vector<uint8_t> has(size_t(ny), 0);
  for (int64_t y = 0; y < ny; ++y) {
    const uint8_t* m = mask.data() + y * nx;
    const bool a = fill_row(w.u.data() + y * nx, m, nx);
    fill_row(w.v.data() + y * nx, m, nx);
    has[size_t(y)] = a;
  }
  const auto first = std::find(has.begin(), has.end(), uint8_t(1));
  if (first == has.end()) {  // nothing valid: zeros
    std::fill(w.u.begin(), w.u.end(), T(0));
    std::fill(w.v.begin(), w.v.end(), T(0));
    return w;
  }
  int64_t source = first - has.begin();
  for (int64_t y = 0; y < ny; ++y) {
    if (has[size_t(y)]) {
      source = y;
      continue;
    }
    std::copy_n(w.u.begin() + source * nx, nx, w.u.begin() + y * nx);
    std::copy_n(w.v.begin() + source * nx, nx, w.v.begin() + y * nx);
  }
  return w;
}

}  // namespace

VectorField2D fill_missing(const VectorField2D& f, const std::vector<uint8_t>& mask) {
  return fill_missing_any(f, mask);
}
VectorField2D64 fill_missing(const VectorField2D64& f, const std::vector<uint8_t>& mask) {
  return fill_missing_any(f, mask);
}

}  // namespace factz::detail
