// Command-line names of variables (FILE:VAR[selection]) and the selection rule shared by the
// netCDF and HDF5 readers (variable_io.hpp): no library needed, so both the CLI and the
// module libfactz-io.so link it (factz_variable_spec).
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>

#include "io/variable/variable_internal.hpp"
#include "util/byte_io.hpp"
#include "util/number_text.hpp"

namespace factz::variable_io {
namespace {

const char* const kNetcdfExtensions[] = {".nc", ".nc4", ".cdf", ".netcdf"};
const char* const kHdf5Extensions[] = {".h5", ".hdf5", ".he5"};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The kind an extension names, if any.
std::optional<FileKind> kind_of_extension(const std::string& path) {
  const std::string l = lower(path);
  for (const char* e : kNetcdfExtensions)
    if (ends_with(l, e)) return FileKind::netcdf;
  for (const char* e : kHdf5Extensions)
    if (ends_with(l, e)) return FileKind::hdf5;
  return std::nullopt;
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    const size_t at = s.find(sep, from);
    out.push_back(trim(s.substr(from, at == std::string::npos ? std::string::npos : at - from)));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

/// "VAR" or "VAR[selection]" after the ':'.
Status parse_variable_part(const std::string& name, const std::string& part, VariableSpec& spec) {
  const size_t open = part.find('[');
  spec.variable = part.substr(0, open);
  if (open != std::string::npos) {
    if (part.back() != ']' || part.find('[', open + 1) != std::string::npos)
      return invalid_argument(name + ": bad selection: write VAR[time=3,depth=0] or VAR[3,0,:,:] (one [...] at the end)");
    spec.sliced = true;
    spec.selection = part.substr(open + 1, part.size() - open - 2);
    if (trim(spec.selection).empty()) return invalid_argument(name + ": empty selection []");
  }
  if (spec.variable.empty() || spec.variable == "/")
    return invalid_argument(name + ": no variable after ':' (write FILE:VAR, e.g. " + spec.file + ":U)");
  return Status::Ok();
}

struct stat_result {
  bool exists = false, regular = false, directory = false;
};
stat_result stat_of(const std::string& path) {
  struct stat st;
  stat_result r;
  if (::stat(path.c_str(), &st) != 0) return r;
  r.exists = true;
  r.regular = S_ISREG(st.st_mode);
  r.directory = S_ISDIR(st.st_mode);
  return r;
}

bool parse_index(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  size_t k = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (k == text.size() || text.size() > 19) return false;
  for (size_t i = k; i < text.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  out = std::stoll(text);
  return true;
}

}  // namespace

std::string VariableSpec::text() const {
  return file + ":" + variable + (sliced ? "[" + selection + "]" : "");
}

const char* dtype_name(DType t) { return t == DType::float64 ? "float64" : "float32"; }

uint64_t VariableData::count() const { return dtype == DType::float64 ? f64.size() : f32.size(); }

std::optional<FileKind> sniff_file(const std::string& path) {
  if (path == "-" || !stat_of(path).regular) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  unsigned char head[8] = {};
  in.read(reinterpret_cast<char*>(head), 8);
  const auto got = in.gcount();
  if (got >= 4 && std::memcmp(head, "CDF", 3) == 0 && (head[3] == 1 || head[3] == 2 || head[3] == 5))
    return FileKind::netcdf;
  static const unsigned char kHdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (got == 8 && std::memcmp(head, kHdf5, 8) == 0)
    return kind_of_extension(path) == FileKind::hdf5 ? FileKind::hdf5 : FileKind::netcdf;
  return std::nullopt;
}

Result<std::optional<VariableSpec>> parse_variable_spec(const std::string& name, bool output) {
  using None = std::optional<VariableSpec>;
  if (name == "-" || name.empty()) return None();
  if (output) {
    for (size_t at = name.find(':'); at != std::string::npos; at = name.find(':', at + 1)) {
      const auto kind = kind_of_extension(name.substr(0, at));
      if (!kind) continue;
      VariableSpec spec;
      spec.file = name.substr(0, at);
      spec.kind = *kind;
      FACTZ_RETURN_IF_ERROR(parse_variable_part(name, name.substr(at + 1), spec));
      if (spec.sliced) return invalid_argument(name + ": an output variable takes no selection [...]");
      return std::optional<VariableSpec>(spec);
    }
    if (kind_of_extension(name))
      return invalid_argument("output " + name + " is a " + (*kind_of_extension(name) == FileKind::hdf5 ? "HDF5" : "netCDF") +
                              " file: name the variable, " + name + ":VAR (e.g. " + name + ":U and " + name + ":V)");
    return None();
  }
  if (stat_of(name).exists) return None();  // a name that exists as a whole is a plain file
  for (size_t at = name.find(':'); at != std::string::npos; at = name.find(':', at + 1)) {
    const std::string file = name.substr(0, at);
    const auto by_name = kind_of_extension(file);
    const auto st = stat_of(file);
    std::optional<FileKind> kind;
    if (st.regular) kind = sniff_file(file);
    if (!kind && !by_name) continue;  // perhaps a ':' inside a plain file's name
    if (!st.exists) return io_error("cannot read " + file + ": does not exist");
    if (st.directory) return io_error("cannot read " + file + ": is a directory");
    if (!kind)
      return io_error("cannot read " + file + ": not a netCDF or HDF5 file (its first bytes are neither 'CDF' nor the "
                      "HDF5 signature)");
    VariableSpec spec;
    spec.file = file;
    spec.kind = *kind;
    FACTZ_RETURN_IF_ERROR(parse_variable_part(name, name.substr(at + 1), spec));
    return std::optional<VariableSpec>(spec);
  }
  return None();
}

namespace detail {

std::string dims_text(const std::vector<Dim>& dims) {
  std::string s;
  for (const auto& d : dims) s += (s.empty() ? "" : ", ") + d.name + "=" + std::to_string(d.size);
  return s;
}

Result<std::vector<uint64_t>> resolve_selection(const VariableSpec& spec, const std::vector<Dim>& dims, int whole) {
  const std::string what = spec.text();
  const size_t n = dims.size(), keep = size_t(whole);
  const std::string kept = keep == 3 ? "the last three are z, y and x" : "the last two are y and x";
  const std::string last = keep == 3 ? "last three" : "last two";
  if (n < keep)
    return invalid_argument(what + " is " + std::to_string(n) + "-dimensional" +
                            (n ? " (" + dims_text(dims) + ")" : std::string()) + "; FaCTz reads " +
                            (keep == 3 ? "3D" : "2D") + " fields: a variable with at least " + std::to_string(keep) +
                            " dimensions (" + kept + ")");
  const size_t leading = n - keep;
  std::vector<uint64_t> index(leading, 0);
  std::string example;
  for (size_t k = 0; k < leading; ++k) example += (k ? "," : "") + dims[k].name + "=0";
  if (!spec.sliced) {
    for (size_t k = 0; k < leading; ++k)
      if (dims[k].size != 1)
        return invalid_argument(what + " has " + std::to_string(n) + " dimensions (" + dims_text(dims) +
                                "): select one index of each leading dimension, e.g. " + spec.file + ":" +
                                spec.variable + "[" + example + "] (" + kept + ")");
    return index;
  }
  const auto items = split(spec.selection, ',');
  auto set = [&](size_t k, const std::string& text) -> Status {
    int64_t i = 0;
    if (!parse_index(text, i))
      return invalid_argument(what + ": '" + text + "' is not an index of dimension " + dims[k].name +
                              " (an integer; negative counts from the end)");
    const int64_t size = int64_t(dims[k].size);
    if (i < -size || i >= size)
      return invalid_argument(what + ": index " + text + " is out of range for dimension " + dims[k].name +
                              " of length " + std::to_string(size) +
                              (size ? " (0.." + std::to_string(size - 1) + ")" : std::string(" (empty)")));
    index[k] = uint64_t(i < 0 ? i + size : i);
    return Status::Ok();
  };
  const bool named = std::any_of(items.begin(), items.end(), [](const std::string& s) { return s.find('=') != std::string::npos; });
  if (named) {
    std::vector<bool> given(leading, false);
    for (const auto& item : items) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos)
        return invalid_argument(what + ": '" + item + "': name every dimension (time=3) or none ([3,0,:,:])");
      const std::string dim = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
      size_t k = 0;
      while (k < n && dims[k].name != dim) ++k;
      if (k == n)
        return invalid_argument(what + ": no dimension '" + dim + "'; its dimensions: " + dims_text(dims));
      if (k >= leading)
        return invalid_argument(what + ": dimension " + dim + " is one of the " + last +
                                " (read whole); select only the leading ones");
      if (given[k]) return invalid_argument(what + ": dimension " + dim + " is selected twice");
      given[k] = true;
      FACTZ_RETURN_IF_ERROR(set(k, value));
    }
    for (size_t k = 0; k < leading; ++k)
      if (!given[k] && dims[k].size != 1)
        return invalid_argument(what + ": select dimension " + dims[k].name + " too (length " +
                                std::to_string(dims[k].size) + "), e.g. [" + example + "]");
    return index;
  }
  if (items.size() != n)
    return invalid_argument(what + ": " + std::to_string(items.size()) + " entries for " + std::to_string(n) +
                            " dimensions (" + dims_text(dims) + "): give one per dimension, ':' for the " + last);
  for (size_t k = 0; k < n; ++k) {
    if (k >= leading) {
      if (items[k] != ":")
        return invalid_argument(what + ": dimension " + dims[k].name + " is one of the " + last +
                                " (read whole): write ':' for it");
      continue;
    }
    if (items[k] == ":")
      return invalid_argument(what + ": dimension " + dims[k].name + " needs an index (only the " + last +
                              " are read whole)");
    FACTZ_RETURN_IF_ERROR(set(k, items[k]));
  }
  return index;
}

std::vector<SourceDimension> source_dimensions(const std::vector<Dim>& dims, const std::vector<uint64_t>& index) {
  std::vector<SourceDimension> out;
  for (size_t k = 0; k < dims.size(); ++k) {
    SourceDimension d;
    d.name = dims[k].name;
    d.size = dims[k].size;
    d.unlimited = dims[k].unlimited;
    if (k < index.size()) d.index = index[k];
    out.push_back(std::move(d));
  }
  return out;
}

void add_fill_values(const SourceAttribute& a, std::vector<double>& fills) {
  for (double v : a.numbers()) {
    const bool seen = std::any_of(fills.begin(), fills.end(), [v](double f) {
      return f == v || (std::isnan(f) && std::isnan(v));
    });
    if (!seen) fills.push_back(v);
  }
}

bool internal_attribute(const std::string& name) {
  static const char* const kInternal[] = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid",
                                          "_Netcdf4Coordinates", "_nc3_strict", "_NCProperties", "_Netcdf4Unlimited"};
  for (const char* k : kInternal)
    if (name == k) return true;
  return false;
}

namespace {

using factz::detail::shortest;

bool integer_type(SourceType t) {
  switch (t) {
    case SourceType::int8: case SourceType::int16: case SourceType::int32: case SourceType::int64:
    case SourceType::uint8: case SourceType::uint16: case SourceType::uint32: case SourceType::uint64:
      return true;
    default:
      return false;
  }
}

}  // namespace

double Packing::integer(double p) const {
  if (reinterpret_bits == 0 || std::floor(p) != p) return p;
  const double span = std::ldexp(1.0, reinterpret_bits);
  if (to_unsigned) return p < 0 && p >= -span / 2 ? p + span : p;
  return p >= span / 2 && p < span ? p - span : p;
}

double Packing::unpack(double p) const {
  if (dtype == DType::float32) {
    const float product = float(p) * float(scale);  // -ffp-contract=off: two roundings, as numpy
    return double(product + float(offset));
  }
  return p * scale + offset;
}

Result<std::optional<Packing>> packing_of(const std::vector<SourceAttribute>& attributes, StoredType stored,
                                          const std::string& what) {
  const int integer_bytes = stored.bytes;
  const bool is_signed = stored.is_signed;
  Packing packing;
  packing.stored_float = stored.is_float;
  bool packed = false, any_double = false;
  for (const auto& a : attributes) {
    if (a.name == "_Unsigned" && !stored.is_float) {
      const std::string t = lower(a.type == SourceType::text ? std::string(a.data.begin(), a.data.end())
                                  : a.strings.empty()        ? std::string()
                                                             : a.strings[0]);
      if ((t == "true" && is_signed) || (t == "false" && !is_signed)) {
        packing.reinterpret_bits = 8 * integer_bytes;
        packing.to_unsigned = is_signed;
      }
      continue;
    }
    if (a.name != "scale_factor" && a.name != "add_offset") continue;
    packed = true;
    const std::vector<double> v = a.numbers();
    if ((a.type != SourceType::float32 && a.type != SourceType::float64) || v.size() != 1 || !std::isfinite(v[0]))
      return invalid_argument(what + " is packed, but its " + a.name + " is not one finite float or double (" +
                              source_type_name(a.type) + ", " + std::to_string(v.size()) +
                              " values): FaCTz cannot tell which values it stands for; unpack it first");
    any_double = any_double || a.type == SourceType::float64;
    (a.name == "scale_factor" ? packing.scale : packing.offset) = v[0];
  }
  if (!packed) return std::optional<Packing>();
  const bool meant_signed = packing.reinterpret_bits ? !packing.to_unsigned : is_signed;
  packing.stored_type = (stored.is_float ? "float" : meant_signed ? "int" : "uint") + std::to_string(8 * integer_bytes);
  // numpy's promotion: a float64, or an integer of more than 16 bits, with a float32 give a
  // float64.
  packing.dtype = any_double || integer_bytes > (stored.is_float ? 4 : 2) ? DType::float64 : DType::float32;
  return std::optional<Packing>(std::move(packing));
}

void unpack_metadata(Packing& packing, VariableData& out) {
  packing.packed_fills.clear();
  for (double f : out.fill_values) packing.packed_fills.push_back(packing.integer(f));
  out.dtype = packing.dtype;
  out.packing_step = packing.stored_float ? 0 : std::abs(packing.scale);
  out.source.type = packing.dtype == DType::float64 ? SourceType::float64 : SourceType::float32;
  std::vector<double> fills;
  for (double f : packing.packed_fills) {
    const double u = packing.unpack(f);  // f: packed_fills hold the meant integers already
    if (std::find(fills.begin(), fills.end(), u) == fills.end()) fills.push_back(u);
  }
  out.fill_values = std::move(fills);
  std::vector<SourceAttribute> kept;
  for (auto& a : out.source.attributes) {
    if (a.name == "scale_factor" || a.name == "add_offset" || a.name == "_Unsigned") {
      a.name = packed_name(a.name);
      kept.push_back(std::move(a));
      continue;
    }
    // The fill values were compared with the integers whatever their type (as netCDF4-python
    // does), so they are unpacked whatever their type; a valid range is in packed units when
    // it has an integer type, in unpacked ones when it has the attributes' (CF 8.1).
    const bool fill = fill_attribute(a.name);
    const bool range = range_attribute(a.name);
    if ((fill && !a.numbers().empty()) || (range && integer_type(a.type))) {
      std::vector<double> values = a.numbers();
      for (double& v : values) v = packing.unpack(packing.integer(v));
      std::string name = a.name;
      if (range && packing.scale < 0) {
        // A negative scale_factor turns the integers' order round: the smallest integer
        // unpacks to the largest value, so valid_min bounds the unpacked values from above
        // (netCDF4-python compares the integers). The record names the bounds as they hold
        // for the unpacked values and keeps the integers (factz_packed_valid_min, ...) for
        // repack, which gives them back under their own names.
        if (name == "valid_min") name = "valid_max";
        else if (name == "valid_max") name = "valid_min";
        else std::sort(values.begin(), values.end());
        a.name = packed_name(a.name);
        kept.push_back(std::move(a));
      }
      kept.push_back(typed_attribute(name, packing.dtype, values));
    } else {
      kept.push_back(std::move(a));
    }
  }
  SourceAttribute type;
  type.name = packed_name("type");
  type.type = SourceType::text;
  type.data.assign(packing.stored_type.begin(), packing.stored_type.end());
  kept.push_back(std::move(type));
  out.source.attributes = std::move(kept);
}

Status unpack_values(const Packing& packing, std::span<const double> packed, uint64_t first, VariableData& out,
                     const std::string& what) {
  const size_t n = packed.size();
  auto is_fill = [&packing](double p) {
    for (double f : packing.packed_fills)
      if (p == f) return true;
    return false;
  };
  auto collides = [&out](double u) {
    return std::find(out.fill_values.begin(), out.fill_values.end(), u) != out.fill_values.end();
  };
  float* f32 = packing.dtype == DType::float32 ? out.f32.data() + first : nullptr;
  double* f64 = packing.dtype == DType::float64 ? out.f64.data() + first : nullptr;
  for (size_t k = 0; k < n; ++k) {
    const double p = packing.integer(double(packed[k]));
    const bool fill = is_fill(p);
    const double u = packing.unpack(p);  // a fill value unpacks to its own unpacked value
    if (!fill && collides(u))
      return invalid_argument(what + ": the packed value " + shortest(p) + " unpacks to " +
                              shortest(u) + ", which is also what a fill value unpacks to; FaCTz cannot "
                              "keep them apart (unpack it first, or name another fill value with --fill)");
    if (f32) f32[k] = float(u);
    else f64[k] = u;
    // The exact lattice point in long double (64-bit mantissa: exact for the usual
    // 8- to 32-bit integers and float scales; otherwise off by far less than a double's unit).
    if (!fill && !packing.stored_float) {
      const long double exact = (long double)p * (long double)packing.scale + (long double)packing.offset;
      out.packing_slack = std::max(out.packing_slack, double(std::fabs((long double)u - exact)));
    }
  }
  return Status::Ok();
}

}  // namespace detail
// The names a variable's `coordinates` and `grid_mapping` attributes give, in that order,
// each once: `coordinates` is a blank-separated list; `grid_mapping` a name, or CF 1.7's
// extended form "crs: x y crs2: lat lon", whose mapping names end in ':' and whose other
// words name coordinates.
std::vector<std::string> referenced_variables(const SourceVariable& variable) {
  std::vector<std::string> out;
  for (const char* which : {"coordinates", "grid_mapping"})
    for (const auto& a : variable.attributes) {
      if (a.name != which) continue;
      std::string text;
      if (a.type == SourceType::text) text.assign(a.data.begin(), a.data.end());
      else if (a.type == SourceType::string)
        for (const auto& t : a.strings) text += t + " ";
      size_t at = 0;
      while (at < text.size()) {
        const size_t begin = text.find_first_not_of(" \t\n\r", at);
        if (begin == std::string::npos) break;
        size_t end = text.find_first_of(" \t\n\r", begin);
        if (end == std::string::npos) end = text.size();
        std::string word = text.substr(begin, end - begin);
        at = end;
        while (!word.empty() && (word.back() == ':' || word.back() == '\0')) word.pop_back();
        if (!word.empty() && std::find(out.begin(), out.end(), word) == out.end()) out.push_back(std::move(word));
      }
    }
  return out;
}

std::vector<std::string> bounds_variables(const std::vector<SourceAttribute>& attributes) {
  std::vector<std::string> out;
  for (const auto& a : attributes) {
    if ((a.name != "bounds" && a.name != "climatology") || a.type != SourceType::text) continue;
    std::string name(a.data.begin(), a.data.end());
    const size_t begin = name.find_first_not_of(" \t\n\r");
    const size_t end = name.find_last_not_of(" \t\n\r" + std::string(1, '\0'));
    if (begin == std::string::npos || end == std::string::npos || end < begin) continue;
    name = name.substr(begin, end - begin + 1);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

SourceAttribute typed_attribute(const std::string& name, DType type, const std::vector<double>& values) {
  SourceAttribute a;
  a.name = name;
  a.type = type == DType::float32 ? SourceType::float32 : SourceType::float64;
  for (double v : values) {
    if (type == DType::float32) factz::detail::put_le(a.data, std::bit_cast<uint32_t>(float(v)), 4);
    else factz::detail::put_le(a.data, std::bit_cast<uint64_t>(v), 8);
  }
  return a;
}

}  // namespace factz::variable_io
