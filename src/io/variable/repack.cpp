// Re-packing a decoded variable into the integers it was read from (variable_io.hpp repack;
// docs/usage.md "Packed variables", `decompress --repack`): the inverse of the readers'
// unpacking (variable_internal.hpp Packing), from what the source record keeps of it
// (factz_packed_scale_factor, factz_packed_add_offset, factz_packed_type). Needs no library:
// part of factz_variable_spec, in the CLI.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "io/variable/variable_internal.hpp"
#include "util/byte_io.hpp"
#include "util/number_text.hpp"

namespace factz::variable_io {
namespace {

using detail::fill_attribute;
using detail::kPackedPrefix;
using detail::packed_name;
using detail::range_attribute;
using factz::detail::shortest;

/// An integer type of the file, by the name factz_packed_type gives it.
struct IntType {
  SourceType type;
  int bytes;
  bool is_signed;
  const char* name;
};
constexpr IntType kIntTypes[] = {
    {SourceType::int8, 1, true, "int8"},     {SourceType::uint8, 1, false, "uint8"},
    {SourceType::int16, 2, true, "int16"},   {SourceType::uint16, 2, false, "uint16"},
    {SourceType::int32, 4, true, "int32"},   {SourceType::uint32, 4, false, "uint32"},
    {SourceType::int64, 8, true, "int64"},   {SourceType::uint64, 8, false, "uint64"},
};

const SourceAttribute* attribute(const SourceVariable& v, const std::string& name) {
  for (const auto& a : v.attributes)
    if (a.name == name) return &a;
  return nullptr;
}

std::optional<IntType> packed_type(const SourceVariable& v) {
  const SourceAttribute* a = attribute(v, packed_name("type"));
  if (!a || a->type != SourceType::text) return std::nullopt;
  const std::string name(a->data.begin(), a->data.end());
  for (const IntType& t : kIntTypes)
    if (name == t.name) return t;
  return std::nullopt;
}

/// The type's smallest and largest values as doubles (the 64-bit ends rounded inward to a
/// double, which the clamp then writes as the exact end).
std::pair<double, double> range_of(const IntType& t) {
  const int bits = 8 * t.bytes;
  if (t.is_signed) return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1};
  return {0.0, std::ldexp(1.0, bits) - 1};
}

/// Appends integer `q` (within the type's range, or at its ends) in the type's bytes.
void put_integer(std::vector<uint8_t>& out, const IntType& t, double q) {
  const auto [lo, hi] = range_of(t);
  uint64_t bits = 0;
  if (t.is_signed) {
    const int64_t i = q <= lo ? std::numeric_limits<int64_t>::min() >> (64 - 8 * t.bytes)
                      : q >= hi ? std::numeric_limits<int64_t>::max() >> (64 - 8 * t.bytes)
                                : int64_t(q);
    bits = uint64_t(i);
  } else {
    bits = q <= 0 ? 0 : q >= hi ? std::numeric_limits<uint64_t>::max() >> (64 - 8 * t.bytes) : uint64_t(q);
  }
  factz::detail::put_le(out, bits, t.bytes);
}

/// The integer that `u` (a value of the unpacked type) re-packs to, when it unpacks exactly
/// to `u` and lies in the type's range.
std::optional<double> exact_integer(const detail::Packing& p, const IntType& t, double u) {
  if (!std::isfinite(u)) return std::nullopt;
  const double q = std::nearbyint((u - p.offset) / p.scale);
  const auto [lo, hi] = range_of(t);
  if (!(q >= lo && q <= hi) || p.unpack(q) != u) return std::nullopt;
  return q;
}

SourceAttribute integer_attribute(const std::string& name, const IntType& t, const std::vector<double>& values) {
  SourceAttribute a;
  a.name = name;
  a.type = t.type;
  for (double q : values) put_integer(a.data, t, q);
  return a;
}

}  // namespace

bool repackable(const SourceVariable& v) { return packed_type(v).has_value(); }

Result<Repacked> repack(const SourceVariable& v, const OutputValues& values, std::span<const uint8_t> mask,
                        const std::string& what) {
  const std::optional<IntType> t = packed_type(v);
  if (!t)
    return invalid_argument(what + ": not read from packed integers (its record has no factz_packed_type of an "
                            "integer type), so there is nothing to re-pack it into");
  if (std::holds_alternative<PackedValues>(values)) return invalid_argument(what + ": already packed");
  detail::Packing p;
  p.dtype = std::holds_alternative<std::span<const double>>(values) ? DType::float64 : DType::float32;
  if (const SourceAttribute* a = attribute(v, packed_name("scale_factor")); a && !a->numbers().empty())
    p.scale = a->numbers()[0];
  if (const SourceAttribute* a = attribute(v, packed_name("add_offset")); a && !a->numbers().empty())
    p.offset = a->numbers()[0];
  if (!(p.scale != 0) || !std::isfinite(p.scale) || !std::isfinite(p.offset))
    return invalid_argument(what + ": scale_factor " + shortest(p.scale) + " and add_offset " + shortest(p.offset) +
                            " re-pack nothing");
  Repacked out;
  out.variable = v;
  out.variable.type = t->type;
  out.variable.attributes.clear();
  // A negative scale_factor's integer bounds, kept as they were (unpack_metadata): they come
  // back under their own names, in place of the unpacked bounds named the other way round.
  std::vector<std::string> kept_integers;
  for (const char* name : {"valid_min", "valid_max", "valid_range"})
    if (attribute(v, packed_name(name))) kept_integers.push_back(name);
  const auto unpacked_of_kept = [&kept_integers](const std::string& name) {
    const std::string from = name == "valid_min" ? "valid_max" : name == "valid_max" ? "valid_min" : name;
    return std::find(kept_integers.begin(), kept_integers.end(), from) != kept_integers.end();
  };
  // The declared fill values as (unpacked value, integer), for the missing vertices.
  std::vector<std::pair<double, double>> fills;
  for (const auto& a : v.attributes) {
    if (a.name == packed_name("type") || a.name == packed_name("_Unsigned")) continue;  // the type says it
    if (a.name == packed_name("scale_factor") || a.name == packed_name("add_offset") ||
        (a.name.starts_with(kPackedPrefix) && range_attribute(a.name.substr(kPackedPrefix.size())))) {
      SourceAttribute back = a;
      back.name = a.name.substr(kPackedPrefix.size());
      out.variable.attributes.push_back(std::move(back));
      continue;
    }
    if (range_attribute(a.name) && unpacked_of_kept(a.name)) continue;
    const bool fill = fill_attribute(a.name);
    const bool range = range_attribute(a.name) && a.type == v.type;
    if (!fill && !range) {
      out.variable.attributes.push_back(a);
      continue;
    }
    std::vector<double> packed;
    for (double u : a.numbers()) {
      const auto q = exact_integer(p, *t, u);
      if (!q) break;
      packed.push_back(*q);
      if (fill) fills.push_back({u, *q});
    }
    if (packed.size() == a.numbers().size() && !packed.empty()) {
      out.variable.attributes.push_back(integer_attribute(a.name, *t, packed));
    } else if (fill) {
      return invalid_argument(what + ": its " + a.name + " " + (a.numbers().empty() ? "" : shortest(a.numbers()[0])) +
                              " re-packs to no " + t->name + " (it was not read from one)");
    } else {
      out.variable.attributes.push_back(a);  // in unpacked units, as CF reads a range of the unpacked type
    }
  }
  // Plain names, not a structured binding: lambdas capture those only since C++20's P1091,
  // which clang before 16 lacks.
  const auto range = range_of(*t);
  const double lo = range.first, hi = range.second;
  auto pack_all = [&](auto span) -> Status {
    out.values.reserve(span.size() * size_t(t->bytes));
    for (size_t k = 0; k < span.size(); ++k) {
      const double x = double(span[k]);
      double q = 0;
      if (!mask.empty() && mask[k]) {
        // A missing vertex holds the bits it had: a fill value's unpacked value (its integer),
        // or, where only another component was missing, its own unpacked value (its integer
        // again); anything else (a NaN) becomes the first fill value.
        std::optional<double> packed;
        for (const auto& [u, integer] : fills)
          if (u == x) {
            packed = integer;
            break;
          }
        if (!packed) packed = exact_integer(p, *t, x);
        if (!packed && fills.empty())
          return invalid_argument(what + " has missing vertices but declares no fill value to re-pack them as");
        q = packed ? *packed : fills[0].second;
      } else {
        q = std::nearbyint((x - p.offset) / p.scale);  // ties to even, as numpy.around
        if (!(q >= lo && q <= hi)) {
          ++out.clamped;
          q = q < lo ? lo : hi;
        }
      }
      put_integer(out.values, *t, q);
    }
    return Status::Ok();
  };
  Status s = std::holds_alternative<std::span<const float>>(values) ? pack_all(std::get<std::span<const float>>(values))
                                                                     : pack_all(std::get<std::span<const double>>(values));
  if (!s.ok()) return s;
  return out;
}

}  // namespace factz::variable_io
