// The source record (section 12 `source`, format version 4; docs/format.md is the byte
// layout): where a field read from a netCDF or HDF5 variable came from, so that decompress
// can write the variable back with its dimensions, attributes and coordinates. The record is
// self-describing (every value carries its type and count) and versioned by its first byte:
// version 2 (written since format version 19) codes coordinate values as differences, version
// 1 (format versions 4 to 18) as they are, and version 3 (format version 20) is version 2
// followed by the auxiliary variables the components' attributes name (written only when
// there are some, so that every other record stays version 2), and version 4 (format version
// 21) is version 3 whose auxiliary variables may have dimensions of their own, each given
// with its size (CF cell bounds' vertex dimension; written only then).
//
// The decoder reads untrusted bytes: every count is checked against the bytes that remain
// before anything is allocated for it, and every code against the values the format allows.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "factz/io.hpp"
#include "util/byte_io.hpp"
#include "util/number_text.hpp"

namespace factz {
namespace {

using detail::shortest;

using detail::ByteReader;
using detail::ByteWriter;

/// The version this build writes: 2, whose coordinates carry a coding byte (raw, or the
/// differences of their bit patterns as varints); version 1 (raw coordinates) is still read.
constexpr uint8_t kRecordVersion = 2;
constexpr uint8_t kRecordVersionAuxiliary = 3;
constexpr uint8_t kRecordVersionOwnDimensions = 4;
/// An own dimension's size: at most this (a cell's vertices, a few; a forged size must not
/// multiply a value count past what the bytes can hold, which is checked too).
constexpr uint64_t kMaxOwnDimension = uint64_t(1) << 32;
constexpr uint8_t kCodingRaw = 0;
constexpr uint8_t kCodingDelta = 1;
constexpr uint64_t kMaxName = 65535;     ///< bytes of one string
constexpr uint64_t kMaxDimensions = 64;  ///< netCDF allows 1024, HDF5 32; 64 is plenty
constexpr uint8_t kDimUnlimited = 0x01;
constexpr uint8_t kDimSliced = 0x02;

bool known_type(uint8_t t) { return t >= 1 && t <= 12; }
bool known_format(uint8_t f) { return f >= 1 && f <= 6; }

void put_string(ByteWriter& w, const std::string& s) {
  w.varint(s.size());
  w.append({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

void put_attributes(ByteWriter& w, const std::vector<SourceAttribute>& attributes) {
  w.varint(attributes.size());
  for (const auto& a : attributes) {
    put_string(w, a.name);
    w.u8(uint8_t(a.type));
    w.varint(a.count());
    if (a.type == SourceType::string)
      for (const auto& s : a.strings) put_string(w, s);
    else
      w.append(a.data);
  }
}

/// How many values of type `t` little-endian `data` holds (0 for a type without a size).
uint64_t values_in(SourceType t, const std::vector<uint8_t>& data) {
  const int size = source_type_size(t);
  return size > 0 ? data.size() / uint64_t(size) : 0;
}

/// The values 0 .. 2^(8 size) - 1 of an unsigned integer of `size` bytes.
uint64_t width_mask(int size) { return size == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * size)) - 1; }

/// The values' bit patterns (little-endian, `size` bytes each) as differences from the previous
/// one (the first from 0), each taken modulo 2^(8 size) as a signed integer of that width,
/// zig-zagged and written as a varint: a regular grid's coordinates (90, 89.75, ...) become a
/// few bytes.
std::vector<uint8_t> delta_coded(const std::vector<uint8_t>& data, int size) {
  if (size <= 0) return data;  // not a numeric type (a record the decoder refuses): no coding
  const int bits = 8 * size;
  const uint64_t mask = width_mask(size);
  std::vector<uint8_t> out;
  uint64_t prev = 0;
  for (size_t k = 0; k + size_t(size) <= data.size(); k += size_t(size)) {
    const uint64_t v = detail::load_le(data.data() + k, size);
    const uint64_t diff = (v - prev) & mask;
    const int64_t signed_diff = bits == 64 ? int64_t(diff) : int64_t(diff << (64 - bits)) >> (64 - bits);
    detail::put_varint(out, detail::zigzag_encode(signed_diff));
    prev = v;
  }
  return out;
}

/// A version 2 or 3 list of values: its coding byte, then the values raw or delta_coded,
/// whichever is shorter (raw on a tie).
void put_values(ByteWriter& w, const std::vector<uint8_t>& data, int size) {
  const std::vector<uint8_t> delta = delta_coded(data, size);
  const bool coded = delta.size() < data.size();
  w.u8(coded ? kCodingDelta : kCodingRaw);
  w.append(coded ? delta : data);
}

/// Decoding with one error path: every failure is corrupt_stream naming what was read.
class RecordReader {
 public:
  explicit RecordReader(std::span<const uint8_t> b) : r_(b) {}

  Status fail(const std::string& what) const {
    return corrupt_stream("source record: " + what + " (at byte " + std::to_string(r_.pos()) + ")");
  }
  bool string(std::string& out) {
    uint64_t n = 0;
    std::span<const uint8_t> bytes;
    if (!r_.varint_at_most(kMaxName, n) || !r_.take(size_t(n), bytes)) return false;
    out.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return true;
  }
  /// A count whose items take at least `min_bytes` each: it cannot exceed what remains.
  bool count(uint64_t min_bytes, uint64_t& n) { return r_.varint_at_most(r_.remaining() / min_bytes, n); }
  bool values(SourceType t, uint64_t n, std::vector<uint8_t>& out) {
    const uint64_t size = uint64_t(source_type_size(t));
    std::span<const uint8_t> bytes;
    if (size == 0 || n > r_.remaining() / size || !r_.take(size_t(n * size), bytes)) return false;
    out.assign(bytes.begin(), bytes.end());
    return true;
  }
  /// A version 2 coordinate's values: its coding byte, then raw values or delta_coded ones,
  /// whichever is shorter (raw on a tie): the writer's choice is the only valid one, and a
  /// delta-coded list must be exactly what delta_coded writes (shortest varints, each
  /// difference within the type's width).
  bool coordinate_values(SourceType t, uint64_t n, std::vector<uint8_t>& out) {
    uint8_t coding = 0;
    const int size = source_type_size(t);
    if (!r_.u8(coding) || size == 0) return false;
    if (coding == kCodingRaw) return values(t, n, out) && delta_coded(out, size).size() >= out.size();
    if (coding != kCodingDelta || n > r_.remaining()) return false;  // a varint takes a byte at least
    const size_t start = r_.pos();
    const uint64_t mask = width_mask(size);
    out.clear();
    out.reserve(size_t(n) * size_t(size));
    uint64_t prev = 0;
    for (uint64_t k = 0; k < n; ++k) {
      int64_t d = 0;
      if (!r_.zigzag(d)) return false;
      prev = (prev + uint64_t(d)) & mask;
      detail::put_le(out, prev, size);
    }
    const size_t used = r_.pos() - start;
    return used < out.size() && delta_coded(out, size).size() == used;
  }
  Status attributes(std::vector<SourceAttribute>& out, const std::string& owner) {
    uint64_t n = 0;
    if (!count(3, n)) return fail("attribute count of " + owner);
    for (uint64_t k = 0; k < n; ++k) {
      SourceAttribute a;
      uint8_t type = 0;
      uint64_t values_count = 0;
      if (!string(a.name) || a.name.empty()) return fail("attribute name of " + owner);
      if (!r_.u8(type) || !known_type(type)) return fail("type of attribute " + a.name + " of " + owner);
      a.type = SourceType(type);
      if (!r_.varint(values_count)) return fail("value count of attribute " + a.name);
      if (a.type == SourceType::string) {
        if (values_count > r_.remaining()) return fail("value count of attribute " + a.name);
        a.strings.resize(size_t(values_count));
        for (auto& s : a.strings)
          if (!string(s)) return fail("a string of attribute " + a.name);
      } else if (!values(a.type, values_count, a.data)) {
        return fail("values of attribute " + a.name + " (" + std::to_string(values_count) + " announced)");
      }
      out.push_back(std::move(a));
    }
    return Status::Ok();
  }
  /// Version 3's auxiliary variables (at least one), after the components: each named once,
  /// by a name that no component or coordinate variable has; each dimension a distinct name of
  /// a component's dimension (the first component that has it gives its size and whether it
  /// is sliced), the value count the product of those dimensions' (1 for a sliced one). In
  /// version 4 each dimension name is followed by a size: 0 for a component's dimension, else
  /// the size of a dimension no component has (the same for every auxiliary variable that
  /// names it; at least one of them has one).
  Status auxiliaries(SourceRecord& rec, bool own_sizes) {
    uint64_t n = 0;
    if (!count(5, n) || n == 0) return fail("auxiliary variable count (at least 1 in a version 3 record)");
    std::set<std::string> taken;
    for (const auto& v : rec.components) {
      taken.insert(v.name);
      for (const auto& co : v.coordinates) taken.insert(co.name);
    }
    std::map<std::string, uint64_t> own;  // own dimensions named so far, with their sizes
    for (uint64_t k = 0; k < n; ++k) {
      SourceAuxiliary a;
      uint8_t type = 0;
      uint64_t ndims = 0, values = 0;
      if (!string(a.name) || a.name.empty()) return fail("auxiliary variable name");
      if (!taken.insert(a.name).second)
        return fail("auxiliary variable " + a.name + " (named twice, or like a component or a coordinate)");
      if (!r_.u8(type) || !known_type(type) || type == uint8_t(SourceType::string))
        return fail("type of auxiliary variable " + a.name + " (numeric or text)");
      a.type = SourceType(type);
      if (!r_.varint_at_most(kMaxDimensions, ndims)) return fail("dimension count of auxiliary variable " + a.name);
      uint64_t product = 1;
      for (uint64_t d = 0; d < ndims; ++d) {
        std::string name;
        if (!string(name) || name.empty()) return fail("a dimension name of auxiliary variable " + a.name);
        if (std::find(a.dimensions.begin(), a.dimensions.end(), name) != a.dimensions.end())
          return fail("dimension " + name + " of auxiliary variable " + a.name + " named twice");
        const SourceDimension* dim = find_dimension(rec, name);
        uint64_t size = 0;
        if (own_sizes && (!r_.varint(size) || size > kMaxOwnDimension || (size == 0) != (dim != nullptr)))
          return fail("size of dimension " + name + " of auxiliary variable " + a.name +
                      " (0 for a component's dimension, else its own size)");
        if (!dim && size == 0)
          return fail("dimension " + name + " of auxiliary variable " + a.name + " (no component has it)");
        if (size != 0) {
          const auto [it, fresh] = own.emplace(name, size);
          if (!fresh && it->second != size)
            return fail("dimension " + name + " of auxiliary variable " + a.name + " (another size than before)");
          a.own_dimensions.emplace_back(name, size);
        }
        const uint64_t len = dim ? (dim->index ? 1 : dim->size) : size;
        if (len > r_.remaining() / product) return fail("value count of auxiliary variable " + a.name);
        product *= len;
        a.dimensions.push_back(std::move(name));
      }
      if (!r_.varint(values) || values != product)
        return fail("value count of auxiliary variable " + a.name + " (the product of its dimensions' counts)");
      if (!coordinate_values(a.type, values, a.data)) return fail("values of auxiliary variable " + a.name);
      FACTZ_RETURN_IF_ERROR(attributes(a.attributes, a.name));
      rec.auxiliaries.push_back(std::move(a));
    }
    if (own_sizes && own.empty()) return fail("own dimensions (a version 4 record has some)");
    return Status::Ok();
  }
  static const SourceDimension* find_dimension(const SourceRecord& rec, const std::string& name) {
    for (const auto& v : rec.components)
      for (const auto& d : v.dimensions)
        if (d.name == name) return &d;
    return nullptr;
  }
  ByteReader& in() { return r_; }

 private:
  ByteReader r_;
};

/// Value k of little-endian data of type t, as text.
std::string value_text(SourceType t, const uint8_t* p) {
  const uint64_t bits = detail::load_le(p, source_type_size(t));
  switch (t) {
    case SourceType::int8: return std::to_string(int8_t(bits));
    case SourceType::int16: return std::to_string(int16_t(bits));
    case SourceType::int32: return std::to_string(int32_t(bits));
    case SourceType::int64: return std::to_string(int64_t(bits));
    case SourceType::uint8:
    case SourceType::uint16:
    case SourceType::uint32:
    case SourceType::uint64: return std::to_string(bits);
    case SourceType::float32: return shortest(std::bit_cast<float>(uint32_t(bits))) + "f";
    case SourceType::float64: return shortest(std::bit_cast<double>(bits));
    default: return "?";
  }
}

std::string quoted_text(const std::string& s, size_t limit) {
  std::string out = "\"";
  for (size_t k = 0; k < s.size() && k < limit; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[k]);
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else if (c < 0x20) out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
    else out += char(c);
  }
  if (s.size() > limit) out += "...";
  return out + "\"";
}

/// Up to 8 values of an attribute or coordinate, then the count.
std::string values_text(SourceType t, const std::vector<uint8_t>& data, const std::vector<std::string>& strings,
                        uint64_t count) {
  if (t == SourceType::text) return quoted_text(std::string(data.begin(), data.end()), 72);
  std::string out;
  const uint64_t shown = std::min<uint64_t>(count, 8);
  for (uint64_t k = 0; k < shown; ++k) {
    if (k) out += ", ";
    out += t == SourceType::string ? quoted_text(strings[size_t(k)], 40)
                                   : value_text(t, data.data() + k * uint64_t(source_type_size(t)));
  }
  if (count > shown) out += ", ... (" + std::to_string(count) + " values)";
  return out;
}

}  // namespace

int source_type_size(SourceType t) {
  switch (t) {
    case SourceType::int8:
    case SourceType::text:
    case SourceType::uint8: return 1;
    case SourceType::int16:
    case SourceType::uint16: return 2;
    case SourceType::int32:
    case SourceType::uint32:
    case SourceType::float32: return 4;
    case SourceType::int64:
    case SourceType::uint64:
    case SourceType::float64: return 8;
    default: return 0;
  }
}

std::string source_type_name(SourceType t) {
  static const char* const kNames[] = {nullptr,   "int8",   "text",   "int16",  "int32", "float32", "float64",
                                       "uint8",   "uint16", "uint32", "int64",  "uint64", "string"};
  const auto k = uint8_t(t);
  return known_type(k) ? kNames[k] : "type " + std::to_string(k);
}

std::string source_format_name(SourceFormat f) {
  switch (f) {
    case SourceFormat::netcdf_classic: return "netCDF-3 classic";
    case SourceFormat::netcdf_64bit_offset: return "netCDF-3 64-bit offset";
    case SourceFormat::netcdf_64bit_data: return "netCDF-5 (CDF-5)";
    case SourceFormat::netcdf4: return "netCDF-4";
    case SourceFormat::netcdf4_classic: return "netCDF-4 classic model";
    case SourceFormat::hdf5: return "HDF5";
  }
  return "format " + std::to_string(int(f));
}

uint64_t SourceAttribute::count() const { return type == SourceType::string ? strings.size() : values_in(type, data); }

std::vector<double> SourceAttribute::numbers() const {
  std::vector<double> out;
  if (type == SourceType::text || type == SourceType::string || source_type_size(type) == 0) return out;
  const uint64_t n = count();
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t bits = detail::load_le(data.data() + k * uint64_t(source_type_size(type)), source_type_size(type));
    switch (type) {
      case SourceType::int8: out.push_back(double(int8_t(bits))); break;
      case SourceType::int16: out.push_back(double(int16_t(bits))); break;
      case SourceType::int32: out.push_back(double(int32_t(bits))); break;
      case SourceType::int64: out.push_back(double(int64_t(bits))); break;
      case SourceType::float32: out.push_back(double(std::bit_cast<float>(uint32_t(bits)))); break;
      case SourceType::float64: out.push_back(std::bit_cast<double>(bits)); break;
      default: out.push_back(double(bits)); break;  // unsigned types
    }
  }
  return out;
}

uint64_t SourceCoordinate::count() const { return values_in(type, data); }

uint64_t SourceAuxiliary::count() const { return values_in(type, data); }

uint64_t SourceAuxiliary::own_size(const std::string& dimension) const {
  for (const auto& [name, size] : own_dimensions)
    if (name == dimension) return size;
  return 0;
}

std::vector<uint8_t> encode_source_record(const SourceRecord& record) {
  ByteWriter w;
  const bool own = std::any_of(record.auxiliaries.begin(), record.auxiliaries.end(),
                               [](const SourceAuxiliary& a) { return !a.own_dimensions.empty(); });
  w.u8(own ? kRecordVersionOwnDimensions : record.auxiliaries.empty() ? kRecordVersion : kRecordVersionAuxiliary);
  w.u8(uint8_t(record.format));
  put_string(w, record.file);
  put_attributes(w, record.attributes);
  w.u8(uint8_t(record.components.size()));
  for (const auto& v : record.components) {
    put_string(w, v.name);
    w.u8(uint8_t(v.type));
    w.varint(v.dimensions.size());
    for (const auto& d : v.dimensions) {
      put_string(w, d.name);
      w.varint(d.size);
      w.u8(uint8_t((d.unlimited ? kDimUnlimited : 0) | (d.index ? kDimSliced : 0)));
      if (d.index) w.varint(*d.index);
    }
    put_attributes(w, v.attributes);
    w.varint(v.coordinates.size());
    for (const auto& c : v.coordinates) {
      w.varint(c.dimension);
      put_string(w, c.name);
      w.u8(uint8_t(c.type));
      w.varint(c.count());
      put_values(w, c.data, source_type_size(c.type));
      put_attributes(w, c.attributes);
    }
  }
  if (!record.auxiliaries.empty()) {
    w.varint(record.auxiliaries.size());
    for (const auto& a : record.auxiliaries) {
      put_string(w, a.name);
      w.u8(uint8_t(a.type));
      w.varint(a.dimensions.size());
      for (const auto& d : a.dimensions) {
        put_string(w, d);
        if (own) w.varint(a.own_size(d));
      }
      w.varint(a.count());
      put_values(w, a.data, source_type_size(a.type));
      put_attributes(w, a.attributes);
    }
  }
  return std::move(w.bytes());
}

Result<SourceRecord> decode_source_record(std::span<const uint8_t> bytes) {
  RecordReader rr(bytes);
  ByteReader& r = rr.in();
  SourceRecord rec;
  uint8_t version = 0, format = 0, components = 0;
  if (!r.u8(version)) return rr.fail("empty");
  if (version < 1 || version > kRecordVersionOwnDimensions)
    return corrupt_stream("source record version " + std::to_string(version) + " (this build reads versions 1 to 4)");
  rec.version = version;
  if (!r.u8(format) || !known_format(format)) return rr.fail("unknown source format " + std::to_string(format));
  rec.format = SourceFormat(format);
  if (!rr.string(rec.file)) return rr.fail("file name");
  FACTZ_RETURN_IF_ERROR(rr.attributes(rec.attributes, "the file"));
  if (!r.u8(components) || components < 1 || components > 3) return rr.fail("component count (1 to 3)");
  for (int c = 0; c < components; ++c) {
    SourceVariable v;
    uint8_t type = 0;
    uint64_t ndims = 0;
    if (!rr.string(v.name) || v.name.empty()) return rr.fail("variable name");
    if (!r.u8(type) || !known_type(type)) return rr.fail("type of variable " + v.name);
    v.type = SourceType(type);
    if (!r.varint_at_most(kMaxDimensions, ndims) || ndims < 1) return rr.fail("dimension count of " + v.name);
    for (uint64_t k = 0; k < ndims; ++k) {
      SourceDimension d;
      uint8_t flags = 0;
      if (!rr.string(d.name) || d.name.empty()) return rr.fail("dimension name of " + v.name);
      if (!r.varint(d.size) || d.size == 0) return rr.fail("size of dimension " + d.name);
      if (!r.u8(flags) || (flags & ~(kDimUnlimited | kDimSliced)) != 0) return rr.fail("flags of dimension " + d.name);
      d.unlimited = (flags & kDimUnlimited) != 0;
      if (flags & kDimSliced) {
        uint64_t index = 0;
        if (!r.varint(index) || index >= d.size) return rr.fail("slice index of dimension " + d.name);
        d.index = index;
      }
      v.dimensions.push_back(std::move(d));
    }
    FACTZ_RETURN_IF_ERROR(rr.attributes(v.attributes, v.name));
    uint64_t ncoords = 0;
    if (!rr.count(4, ncoords) || ncoords > ndims) return rr.fail("coordinate count of " + v.name);
    for (uint64_t k = 0; k < ncoords; ++k) {
      SourceCoordinate co;
      uint64_t dim = 0, n = 0;
      uint8_t ctype = 0;
      if (!r.varint_at_most(ndims - 1, dim) || (!v.coordinates.empty() && dim <= v.coordinates.back().dimension))
        return rr.fail("dimension of a coordinate of " + v.name + " (increasing, below " + std::to_string(ndims) + ")");
      co.dimension = uint32_t(dim);
      const SourceDimension& d = v.dimensions[size_t(dim)];
      if (!rr.string(co.name) || co.name.empty()) return rr.fail("coordinate name of " + d.name);
      if (!r.u8(ctype) || !known_type(ctype) || ctype == uint8_t(SourceType::text) ||
          ctype == uint8_t(SourceType::string))
        return rr.fail("type of coordinate " + co.name + " (numeric types only)");
      co.type = SourceType(ctype);
      if (!r.varint(n) || n != (d.index ? 1 : d.size))
        return rr.fail("value count of coordinate " + co.name + " (the dimension's size, or 1 when sliced)");
      if (!(version == 1 ? rr.values(co.type, n, co.data) : rr.coordinate_values(co.type, n, co.data)))
        return rr.fail("values of coordinate " + co.name);
      FACTZ_RETURN_IF_ERROR(rr.attributes(co.attributes, co.name));
      v.coordinates.push_back(std::move(co));
    }
    rec.components.push_back(std::move(v));
  }
  if (version >= kRecordVersionAuxiliary)
    FACTZ_RETURN_IF_ERROR(rr.auxiliaries(rec, version == kRecordVersionOwnDimensions));
  if (!r.at_end()) return rr.fail(std::to_string(r.remaining()) + " trailing bytes");
  return rec;
}

Status check_source_record(const SourceRecord& record, int components, std::span<const uint64_t> whole) {
  if (int(record.components.size()) != components)
    return invalid_argument("the source record holds " + std::to_string(record.components.size()) +
                            " variable(s), the field has " + std::to_string(components) + " component(s)");
  for (const auto& v : record.components) {
    const size_t n = v.dimensions.size();
    if (n < whole.size())
      return invalid_argument("source variable " + v.name + " has " + std::to_string(n) + " dimension(s), the field " +
                              std::to_string(whole.size()));
    for (size_t k = 0; k < n; ++k) {
      const SourceDimension& d = v.dimensions[k];
      const bool leading = k + whole.size() < n;
      if (leading && !d.index)
        return invalid_argument("source variable " + v.name + ": leading dimension " + d.name + " is not sliced");
      if (!leading && d.index)
        return invalid_argument("source variable " + v.name + ": dimension " + d.name + " is one of the field's but sliced");
      if (!leading && d.size != whole[k + whole.size() - n])
        return invalid_argument("source variable " + v.name + ": dimension " + d.name + " has " +
                                std::to_string(d.size) + " values, the field " +
                                std::to_string(whole[k + whole.size() - n]));
    }
  }
  return Status::Ok();
}

namespace {

/// Copies the box [lo, lo + n) of an array of `sizes` (outermost first, the last fastest) of
/// `width`-byte values.
std::vector<uint8_t> box_of(const std::vector<uint8_t>& data, size_t width, const std::vector<uint64_t>& sizes,
                            const std::vector<uint64_t>& lo, const std::vector<uint64_t>& n) {
  uint64_t total = 1;
  for (uint64_t c : n) total *= c;
  std::vector<uint8_t> out;
  if (total == 0) return out;
  out.reserve(size_t(total) * width);
  const size_t m = sizes.size();
  if (m == 0) return data;
  std::vector<uint64_t> at(m, 0);  // the index in the box, the last axis run whole
  for (;;) {
    uint64_t offset = 0;
    for (size_t k = 0; k < m; ++k) offset = offset * sizes[k] + lo[k] + (k + 1 < m ? at[k] : 0);
    out.insert(out.end(), data.begin() + std::ptrdiff_t(offset * width),
               data.begin() + std::ptrdiff_t((offset + n[m - 1]) * width));
    size_t k = m - 1;
    while (k > 0) {
      if (++at[k - 1] < n[k - 1]) break;
      at[k - 1] = 0;
      --k;
    }
    if (k == 0) return out;
  }
}

}  // namespace

Result<SourceRecord> window_of_source_record(const SourceRecord& record, std::span<const uint64_t> first,
                                             std::span<const uint64_t> count) {
  const size_t whole = first.size();
  if (count.size() != whole || whole == 0) return invalid_argument("a window gives a first index and a count per axis");
  SourceRecord out = record;
  // (component, dimension) -> the field's axis, for the dimensions read whole.
  auto axis_of = [&](const SourceVariable& v, size_t k) -> std::optional<size_t> {
    const size_t n = v.dimensions.size();
    if (n < whole || k + whole < n) return std::nullopt;
    return k + whole - n;
  };
  for (auto& v : out.components) {
    for (size_t k = 0; k < v.dimensions.size(); ++k) {
      const auto ax = axis_of(v, k);
      if (!ax) continue;
      SourceDimension& d = v.dimensions[k];
      if (d.index || first[*ax] + count[*ax] > d.size || count[*ax] == 0)
        return invalid_argument("the window [" + std::to_string(first[*ax]) + ", " +
                                std::to_string(first[*ax] + count[*ax]) + ") does not fit dimension " + d.name +
                                " of source variable " + v.name);
      for (auto& co : v.coordinates) {
        if (co.dimension != k) continue;
        const size_t width = size_t(source_type_size(co.type));
        if (width == 0 || co.data.size() != d.size * width)
          return invalid_argument("coordinate " + co.name + " does not have one value per index of " + d.name);
        co.data = std::vector<uint8_t>(co.data.begin() + std::ptrdiff_t(first[*ax] * width),
                                       co.data.begin() + std::ptrdiff_t((first[*ax] + count[*ax]) * width));
      }
      d.size = count[*ax];
    }
  }
  for (auto& a : out.auxiliaries) {
    std::vector<uint64_t> sizes, lo, n;
    for (const auto& name : a.dimensions) {
      if (const uint64_t own = a.own_size(name)) {  // its own (a cell's vertices): whole
        sizes.push_back(own), lo.push_back(0), n.push_back(own);
        continue;
      }
      const SourceDimension* found = nullptr;
      std::optional<size_t> ax;
      for (const auto& v : record.components)
        for (size_t k = 0; k < v.dimensions.size() && !found; ++k)
          if (v.dimensions[k].name == name) found = &v.dimensions[k], ax = axis_of(v, k);
      if (!found) return invalid_argument("dimension " + name + " of auxiliary variable " + a.name + " (no component has it)");
      if (found->index || !ax) {  // a sliced dimension: its one index
        sizes.push_back(1), lo.push_back(0), n.push_back(1);
      } else {
        sizes.push_back(found->size), lo.push_back(first[*ax]), n.push_back(count[*ax]);
      }
    }
    const size_t width = size_t(source_type_size(a.type));
    uint64_t values = 1;
    for (uint64_t c : sizes) values *= c;
    if (width == 0 || a.data.size() != values * width)
      return invalid_argument("auxiliary variable " + a.name + " does not have one value per index of its dimensions");
    a.data = box_of(a.data, width, sizes, lo, n);
  }
  return out;
}

std::string describe_source_record(const SourceRecord& record) {
  std::string s = "  source          " + source_format_name(record.format) + " file " +
                  (record.file.empty() ? std::string("(unnamed)") : record.file) + "\n";
  for (const auto& a : record.attributes)
    s += "    :" + a.name + " = " + values_text(a.type, a.data, a.strings, a.count()) + " (" + source_type_name(a.type) +
         ")\n";
  const char* labels[] = {"u", "v", "w"};
  for (size_t c = 0; c < record.components.size(); ++c) {
    const SourceVariable& v = record.components[c];
    std::string slice, dims;
    for (const auto& d : v.dimensions) {
      if (d.index) slice += (slice.empty() ? "" : ",") + d.name + "=" + std::to_string(*d.index);
      dims += (dims.empty() ? "" : ", ") + d.name + "=" + std::to_string(d.size) + (d.unlimited ? " (unlimited)" : "");
    }
    s += "    " + std::string(record.components.size() == 1 ? "field" : labels[c]) + ": " + v.name +
         (slice.empty() ? "" : "[" + slice + "]") + ", " + source_type_name(v.type) + ", dimensions " + dims + "\n";
    for (const auto& a : v.attributes)
      s += "      " + a.name + " = " + values_text(a.type, a.data, a.strings, a.count()) + " (" +
           source_type_name(a.type) + ")\n";
    for (const auto& co : v.coordinates) {
      const SourceDimension& d = v.dimensions[co.dimension];
      s += "      coordinate " + co.name + " (" + source_type_name(co.type) + ", " +
           (d.index ? "at index " + std::to_string(*d.index) + ": " : std::to_string(co.count()) + " values: ") +
           values_text(co.type, co.data, {}, co.count()) + "; " + std::to_string(co.attributes.size()) +
           " attribute(s))\n";
    }
  }
  for (const auto& a : record.auxiliaries) {
    std::string dims;
    for (const auto& d : a.dimensions) {
      dims += (dims.empty() ? "" : ", ") + d;
      if (const uint64_t own = a.own_size(d)) dims.append(1, '=').append(std::to_string(own));
    }
    s += "    auxiliary " + a.name + "(" + dims + ") (" + source_type_name(a.type) + ", " + std::to_string(a.count()) +
         " value(s): " + values_text(a.type, a.data, {}, a.count()) + "; " + std::to_string(a.attributes.size()) +
         " attribute(s))\n";
  }
  return s;
}

}  // namespace factz
