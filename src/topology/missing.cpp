// Missing vertices: validation, the mask of a field (its own mask plus NaN), declared fill
// values, and the detection of fill values nobody declared, for 2D and 3D fields alike.
// docs/architecture.md, "Masks".
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "factz/topology.hpp"
#include "factz/topology3d.hpp"

namespace factz {

namespace {

/// The scans below look at the planes in chunks and skip, after one branch-free pass the
/// compiler vectorizes, a chunk where nothing can be found: most of an ordinary field.
constexpr size_t kScanChunk = 4096;

/// Whether every one of x[0, n) is finite (no NaN, no infinity).
template <class T>
bool all_finite(const T* x, size_t n) {
  int bad = 0;  // an int reduction: GCC vectorizes it, not a bool one
  for (size_t i = 0; i < n; ++i) bad |= !(std::fabs(x[i]) <= std::numeric_limits<T>::max());
  return bad == 0;
}

/// Whether no magnitude in x[0, n) reaches m (NaN does not).
template <class T>
bool all_below(const T* x, size_t n, T m) {
  int reached = 0;
  for (size_t i = 0; i < n; ++i) reached |= std::fabs(x[i]) >= m;
  return reached == 0;
}

/// Whether no value of x[0, n) equals v.
template <class T>
bool none_equal(const T* x, size_t n, T v) {
  int equal = 0;
  for (size_t i = 0; i < n; ++i) equal |= x[i] == v;
  return equal == 0;
}

/// The component planes of a field (u, v; u, v, w) and, in the same order, its declared
/// fill values: one body for 2D and 3D fields.
template <class Field>
auto planes_of(const Field& f) {
  if constexpr (requires { f.w; }) return std::array{&f.u, &f.v, &f.w};
  else return std::array{&f.u, &f.v};
}
template <class Fill>
auto fills_of(const Fill& fill) {
  if constexpr (requires { fill.w; }) return std::array{fill.u, fill.v, fill.w};
  else return std::array{fill.u, fill.v};
}

/// Whether every plane's values in [k0, k1) are finite: a chunk the scans below skip.
template <class Planes>
bool chunk_finite(const Planes& planes, size_t k0, size_t k1) {
  for (const auto* p : planes)
    if (!all_finite(p->data() + k0, k1 - k0)) return false;
  return true;
}

/// chunk_missing's `fills` when there are none (NaN and the mask only).
struct NoFills {};

/// flags[i] = 1 where vertex k0 + i is missing (its `mask` byte is nonzero, when `mask` is
/// given, or a component is NaN, or a component equals its fill, when one is given), else 0,
/// for i < k1 - k0 <= kScanChunk; returns how many are. Branch-free loops over each plane
/// (the compiler vectorizes them): a masked field has missing vertices in most chunks.
template <class Planes, class Fills>
int64_t chunk_missing(const Planes& planes, const Fills& fills, const uint8_t* mask, size_t k0, size_t k1,
                      uint8_t* flags) {
  const size_t len = k1 - k0;
  if (mask) {
    for (size_t i = 0; i < len; ++i) flags[i] = mask[k0 + i] != 0;
  } else {
    std::fill_n(flags, len, uint8_t(0));
  }
  for (size_t c = 0; c < planes.size(); ++c) {
    const auto* x = planes[c]->data() + k0;
    if constexpr (!std::is_same_v<Fills, NoFills>) {
      if (fills[c]) {
        const auto v = *fills[c];
        for (size_t i = 0; i < len; ++i) flags[i] |= uint8_t((x[i] != x[i]) | (x[i] == v));
        continue;
      }
    }
    for (size_t i = 0; i < len; ++i) flags[i] |= uint8_t(x[i] != x[i]);
  }
  int64_t count = 0;
  for (size_t i = 0; i < len; ++i) count += flags[i];
  return count;
}

/// The valid vertices (not masked, no NaN component) with an infinite component: their count,
/// and the first one's index in `first` (-1 when none). The planes hold the field's size.
template <class Field>
int64_t count_infinite(const Field& f, int64_t& first) {
  const auto n = static_cast<size_t>(f.size());
  const auto planes = planes_of(f);
  using T = typename decltype(f.u)::value_type;
  const uint8_t* mask = f.mask.empty() ? nullptr : f.mask.data();
  uint8_t missing[kScanChunk], infinite[kScanChunk];
  int64_t bad = 0;
  first = -1;
  for (size_t k0 = 0; k0 < n; k0 += kScanChunk) {
    const size_t k1 = std::min(n, k0 + kScanChunk), len = k1 - k0;
    if (chunk_finite(planes, k0, k1)) continue;
    std::fill_n(infinite, len, uint8_t(0));
    int any_infinite = 0;
    for (const auto* p : planes) {
      const T* x = p->data() + k0;
      for (size_t i = 0; i < len; ++i) infinite[i] |= uint8_t(std::fabs(x[i]) > std::numeric_limits<T>::max());
    }
    for (size_t i = 0; i < len; ++i) any_infinite |= infinite[i];
    if (!any_infinite) continue;  // NaN only (a masked field's chunks): nothing to count
    chunk_missing(planes, NoFills{}, mask, k0, k1, missing);
    int64_t chunk_bad = 0;  // valid (not missing) with an infinite component
    for (size_t i = 0; i < len; ++i) chunk_bad += infinite[i] & (missing[i] ^ 1);
    if (chunk_bad > 0 && first < 0)
      for (size_t i = 0; i < len && first < 0; ++i)
        if (infinite[i] && !missing[i]) first = int64_t(k0 + i);
    bad += chunk_bad;
  }
  return bad;
}

/// "NXxNYxNZ" of a 3D field.
template <class Field>
std::string dims_text(const Field& f) {
  return std::to_string(f.nx) + "x" + std::to_string(f.ny) + "x" + std::to_string(f.nz);
}

// One body for float32 and float64 fields (VectorField2D, VectorField2D64).
template <class Field>
Status validate_any(const Field& f) {
  if (f.nx <= 0 || f.ny <= 0) return invalid_argument("field dimensions must be positive");
  if (f.nx > (int64_t(1) << 40) / f.ny) return invalid_argument("field too large (nx*ny > 2^40)");
  const auto n = static_cast<size_t>(f.size());
  if (f.u.size() != n || f.v.size() != n)
    return invalid_argument("component planes must hold nx*ny = " + std::to_string(n) + " values");
  if (!f.mask.empty() && f.mask.size() != n)
    return invalid_argument("the mask must be empty or hold nx*ny = " + std::to_string(n) + " bytes, not " +
                            std::to_string(f.mask.size()));
  int64_t first = -1;
  if (const int64_t bad = count_infinite(f, first); bad > 0)
    return invalid_argument(std::to_string(bad) + " infinite value(s) at valid vertices; first at x=" +
                            std::to_string(first % f.nx) + " y=" + std::to_string(first / f.nx) +
                            " (declare it as a fill value if it marks missing data)");
  return Status::Ok();
}

// The same for 3D fields (VectorField3D, VectorField3D64).
template <class Field>
Status validate3d_any(const Field& f) {
  constexpr int64_t kMaxVertices = int64_t(1) << 40;
  if (f.nx <= 0 || f.ny <= 0 || f.nz <= 0)
    return invalid_argument("3D field dimensions must be positive, got " + dims_text(f));
  if (f.nx > kMaxVertices / f.ny || f.nx * f.ny > kMaxVertices / f.nz)
    return invalid_argument("3D field too large (nx*ny*nz > 2^40): " + dims_text(f));
  const auto n = static_cast<size_t>(f.size());
  if (f.u.size() != n || f.v.size() != n || f.w.size() != n)
    return invalid_argument("component planes must hold nx*ny*nz = " + std::to_string(n) + " values (u " +
                            std::to_string(f.u.size()) + ", v " + std::to_string(f.v.size()) + ", w " +
                            std::to_string(f.w.size()) + ")");
  if (!f.mask.empty() && f.mask.size() != n)
    return invalid_argument("the mask must be empty or hold nx*ny*nz = " + std::to_string(n) + " bytes, not " +
                            std::to_string(f.mask.size()));
  int64_t first = -1;
  if (const int64_t bad = count_infinite(f, first); bad > 0)
    return invalid_argument(std::to_string(bad) + " infinite value(s) at valid vertices; first at x=" +
                            std::to_string(first % f.nx) + " y=" + std::to_string(first / f.nx % f.ny) +
                            " z=" + std::to_string(first / f.nx / f.ny) +
                            " (mask it or make it NaN if it marks missing data)");
  return Status::Ok();
}

/// The missing vertices of a 2D or 3D field: its mask, or a NaN component. Empty when there
/// is none (no n-byte array for a field without missing data).
template <class Field>
std::vector<uint8_t> missing_mask_any(const Field& f) {
  const size_t n = static_cast<size_t>(f.size());
  const auto planes = planes_of(f);
  std::vector<uint8_t> m;
  size_t end = n;
  for (const auto* p : planes) end = std::min(end, p->size());
  const uint8_t* mask = f.mask.empty() ? nullptr : f.mask.data();
  uint8_t flags[kScanChunk];
  for (size_t k0 = 0; k0 < end; k0 += kScanChunk) {
    const size_t k1 = std::min(end, k0 + kScanChunk);
    if (!mask && chunk_finite(planes, k0, k1)) continue;
    if (chunk_missing(planes, NoFills{}, mask, k0, k1, flags) == 0) continue;
    if (m.empty()) m.assign(n, 0);
    std::copy_n(flags, k1 - k0, m.data() + k0);
  }
  return m;
}

template <class Field, class Fill>
int64_t mark_missing_any(Field& f, const Fill& fill) {
  const size_t n = static_cast<size_t>(f.size());
  const auto planes = planes_of(f);
  for (const auto* p : planes)
    if (p->size() != n) return 0;
  auto fills = fills_of(fill);
  for (auto& x : fills)
    if (x && std::isnan(*x)) x.reset();  // NaN is always missing
  // Without a given mask, m is allocated at the first missing vertex (a field without any
  // costs no n-byte pass), and chunks without a NaN or a fill value are skipped.
  const bool given = f.mask.size() == n;
  std::vector<uint8_t> m = given ? f.mask : std::vector<uint8_t>();
  int64_t count = 0;
  uint8_t flags[kScanChunk];
  for (size_t k0 = 0; k0 < n; k0 += kScanChunk) {
    const size_t k1 = std::min(n, k0 + kScanChunk);
    bool quiet = !given;
    for (size_t c = 0; c < planes.size() && quiet; ++c) {
      const auto* x = planes[c]->data() + k0;
      quiet = all_finite(x, k1 - k0) && (!fills[c] || none_equal(x, k1 - k0, *fills[c]));
    }
    if (quiet) continue;
    const int64_t chunk = chunk_missing(planes, fills, given ? m.data() : nullptr, k0, k1, flags);
    if (chunk > 0 && m.empty()) m.assign(n, 0);
    if (!m.empty()) std::copy_n(flags, k1 - k0, m.data() + k0);
    count += chunk;
  }
  if (count == 0) std::vector<uint8_t>().swap(m);  // no mask: and no n bytes kept for one
  f.mask = std::move(m);
  return count;
}

}  // namespace

Status validate_field(const VectorField2D& f) { return validate_any(f); }
Status validate_field(const VectorField2D64& f) { return validate_any(f); }

std::vector<uint8_t> missing_mask(const VectorField2D& f) { return missing_mask_any(f); }
std::vector<uint8_t> missing_mask(const VectorField2D64& f) { return missing_mask_any(f); }

Status validate_field(const VectorField3D& f) { return validate3d_any(f); }
Status validate_field(const VectorField3D64& f) { return validate3d_any(f); }
std::vector<uint8_t> missing_mask(const VectorField3D& f) { return missing_mask_any(f); }
std::vector<uint8_t> missing_mask(const VectorField3D64& f) { return missing_mask_any(f); }

int64_t mark_missing(VectorField2D& f, const FillValues& fill) { return mark_missing_any(f, fill); }
int64_t mark_missing(VectorField2D64& f, const FillValues64& fill) { return mark_missing_any(f, fill); }
int64_t mark_missing(VectorField3D& f, const FillValues3D& fill) { return mark_missing_any(f, fill); }
int64_t mark_missing(VectorField3D64& f, const FillValues3D64& fill) { return mark_missing_any(f, fill); }

namespace {

/// Fill values in common use (CF defaults, netCDF's NC_FILL_FLOAT / NC_FILL_DOUBLE,
/// sentinels); a float64 field also gets the float ones widened (a float32 fill that went
/// through a conversion to double).
template <class T>
std::vector<T> common_fills() {
  std::vector<T> c = {T(1e20f), T(-1e20f), T(9.96921e36f), T(-9999.0f), T(-999.0f), T(-3.4028235e38f), T(3.4028235e38f),
                      T(-1e30f)};
  if constexpr (std::is_same_v<T, double>)
    for (double x : {1e20, -1e20, 9.969209968386869e36, -1e30, -1.79769313486231570e308, 1.79769313486231570e308})
      c.push_back(x);
  return c;
}

template <class Field, class Suspect>
std::optional<Suspect> suspected_fill_any(const Field& f) {
  using T = typename decltype(f.u)::value_type;
  using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;
  static const std::vector<T> kCommon = common_fills<T>();
  static const T kMinCommonMagnitude = [] {
    T m = std::numeric_limits<T>::infinity();
    for (T c : kCommon) m = std::min(m, T(std::fabs(c)));
    return std::min(m, T(1e15f));
  }();
  const size_t n = static_cast<size_t>(f.size());
  const auto planes = planes_of(f);
  for (const auto* p : planes)
    if (p->size() != n) return std::nullopt;
  std::map<Bits, int64_t> counts;
  for (size_t k0 = 0; k0 < n; k0 += kScanChunk) {
    const size_t k1 = std::min(n, k0 + kScanChunk);
    bool quiet = true;  // no magnitude reaches the smallest suspect: nothing to count here
    for (const auto* p : planes) quiet = quiet && all_below(p->data() + k0, k1 - k0, kMinCommonMagnitude);
    if (quiet) continue;
    for (size_t k = k0; k < k1; ++k) {
      if (!f.mask.empty() && f.mask[k]) continue;
      for (const auto* p : planes) {
        const T x = (*p)[k];
        // Every common fill has a magnitude of at least 999 (kMinCommonMagnitude): one
        // compare rejects ordinary values (and NaN) before the search of the list.
        if (!(std::fabs(x) >= kMinCommonMagnitude)) continue;
        const bool huge = std::fabs(x) >= T(1e15f);
        const bool common = std::find(kCommon.begin(), kCommon.end(), x) != kCommon.end();
        if (huge || common) ++counts[std::bit_cast<Bits>(x)];
      }
    }
  }
  if (counts.empty()) return std::nullopt;
  auto best = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return Suspect{std::bit_cast<T>(best->first), best->second};
}

}  // namespace

std::optional<SuspectedFill> suspected_fill_value(const VectorField2D& f) {
  return suspected_fill_any<VectorField2D, SuspectedFill>(f);
}
std::optional<SuspectedFill64> suspected_fill_value(const VectorField2D64& f) {
  return suspected_fill_any<VectorField2D64, SuspectedFill64>(f);
}
std::optional<SuspectedFill> suspected_fill_value(const VectorField3D& f) {
  return suspected_fill_any<VectorField3D, SuspectedFill>(f);
}
std::optional<SuspectedFill64> suspected_fill_value(const VectorField3D64& f) {
  return suspected_fill_any<VectorField3D64, SuspectedFill64>(f);
}

}  // namespace factz
