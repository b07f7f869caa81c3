#include "streams/missing_fill.hpp"

#include <algorithm>
#include <span>

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

/// Fills the planes in place, `rows` rows of nx vertices each (a 3D field's z-slices one after
/// the other): rows by fill_row, then every row without a valid vertex from the nearest
/// filled row above (below for leading rows); zeros when no vertex is valid.
template <class T>
void fill_planes(std::span<T* const> planes, const std::vector<uint8_t>& mask, int64_t nx, int64_t rows) {
  std::vector<uint8_t> has(size_t(rows), 0);
  for (int64_t y = 0; y < rows; ++y) {
    const uint8_t* m = mask.data() + y * nx;
    bool any = false;
    for (T* p : planes) any = fill_row(p + y * nx, m, nx);
    has[size_t(y)] = any;
  }
  const auto first = std::find(has.begin(), has.end(), uint8_t(1));
  if (first == has.end()) {  // nothing valid: zeros
    for (T* p : planes) std::fill(p, p + nx * rows, T(0));
    return;
  }
  int64_t source = first - has.begin();
  for (int64_t y = 0; y < rows; ++y) {
    if (has[size_t(y)]) {
      source = y;
      continue;
    }
    for (T* p : planes) std::copy_n(p + source * nx, nx, p + y * nx);
  }
}

template <class Field>
Field fill_missing_any(const Field& f, const std::vector<uint8_t>& mask) {
  using T = typename decltype(Field::u)::value_type;
  Field w;
  w.nx = f.nx;
  w.ny = f.ny;
  w.u = f.u;
  w.v = f.v;
  T* const planes[2] = {w.u.data(), w.v.data()};
  fill_planes<T>(planes, mask, f.nx, f.ny);
  return w;
}

}  // namespace

VectorField2D fill_missing(const VectorField2D& f, const std::vector<uint8_t>& mask) {
  return fill_missing_any(f, mask);
}
VectorField2D64 fill_missing(const VectorField2D64& f, const std::vector<uint8_t>& mask) {
  return fill_missing_any(f, mask);
}
void fill_missing_in_place(VectorField2D& f, const std::vector<uint8_t>& mask) {
  float* const planes[2] = {f.u.data(), f.v.data()};
  fill_planes<float>(planes, mask, f.nx, f.ny);
}
void fill_missing_in_place(VectorField2D64& f, const std::vector<uint8_t>& mask) {
  double* const planes[2] = {f.u.data(), f.v.data()};
  fill_planes<double>(planes, mask, f.nx, f.ny);
}
namespace {

template <class Field>
Field fill_missing3d_any(const Field& f, const std::vector<uint8_t>& mask) {
  using T = typename decltype(Field::u)::value_type;
  Field w;
  w.nx = f.nx;
  w.ny = f.ny;
  w.nz = f.nz;
  w.u = f.u;
  w.v = f.v;
  w.w = f.w;
  T* const planes[3] = {w.u.data(), w.v.data(), w.w.data()};
  fill_planes<T>(planes, mask, f.nx, f.ny * f.nz);
  return w;
}

}  // namespace

VectorField3D fill_missing(const VectorField3D& f, const std::vector<uint8_t>& mask) {
  return fill_missing3d_any(f, mask);
}
VectorField3D64 fill_missing(const VectorField3D64& f, const std::vector<uint8_t>& mask) {
  return fill_missing3d_any(f, mask);
}
void fill_missing_in_place(VectorField3D& f, const std::vector<uint8_t>& mask) {
  float* const planes[3] = {f.u.data(), f.v.data(), f.w.data()};
  fill_planes<float>(planes, mask, f.nx, f.ny * f.nz);
}
void fill_missing_in_place(VectorField3D64& f, const std::vector<uint8_t>& mask) {
  double* const planes[3] = {f.u.data(), f.v.data(), f.w.data()};
  fill_planes<double>(planes, mask, f.nx, f.ny * f.nz);
}

}  // namespace factz::detail
