#include "field_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <list>
#include <map>
#include <set>
#include <span>
#include <type_traits>

#include "factz/scalar.hpp"
#include "util/big_vector.hpp"

namespace factz::cli {

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s;
  for (size_t k = shape.size(); k-- > 0;) s += std::to_string(shape[k]) + (k ? " x " : "");
  return s + (shape.size() == 3 ? " (nx x ny x nz)" : " (nx x ny)");
}

namespace {

using variable_io::FileKind;

bool ends_with_npy(const std::string& s) { return s.size() >= 4 && s.compare(s.size() - 4, 4, ".npy") == 0; }

void warn(const std::string& command, const std::string& text) {
  std::fprintf(stderr, "factz %s: warning: %s\n", command.c_str(), text.c_str());
}

bool g_quiet_reader_notes = false;

/// A line the readers print about a variable (field_files.hpp, QuietReaderNotes): once per
/// process, none while quiet.
void reader_note(const std::string& line) {
  static std::set<std::string> printed;
  if (g_quiet_reader_notes || !printed.insert(line).second) return;
  std::fprintf(stderr, "%s\n", line.c_str());
}

/// The packed variables this process read: what (FILE:VAR), step and slack.
struct PackedInput {
  std::string what;
  double step = 0, slack = 0;
};
std::vector<PackedInput>& packed_inputs() {
  static std::vector<PackedInput> inputs;
  return inputs;
}

variable_io::Auxiliaries& auxiliaries_wanted() {
  static variable_io::Auxiliaries which = variable_io::Auxiliaries::none;
  return which;
}

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

/// A positive x rounded down to six significant digits (a limit printed never above itself).
double down6(double x) {
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(x)));
  return std::floor(x * scale) / scale;
}

/// The shape in a .npy header, read from the file's first bytes (none when unreadable: the
/// plane reader then says why).
std::optional<std::vector<int64_t>> npy_shape(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> head(size_t(std::min<off_t>(st.st_size, 1 << 20)));
  in.read(reinterpret_cast<char*>(head.data()), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  auto h = factz::parse_npy_header(head);
  if (!h.ok()) return std::nullopt;
  return h->shape;
}

/// The unsigned integer of a value's bits.
template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

/// The values a vertex must not hold in a component: the first goes to mark_missing, the
/// others to the mask.
template <class T>
void add_distinct(std::vector<T>& to, T v) {
  const bool seen = std::any_of(to.begin(), to.end(), [v](T f) {
    return std::bit_cast<BitsOf<T>>(f) == std::bit_cast<BitsOf<T>>(v) || (std::isnan(f) && std::isnan(v));
  });
  if (!seen) to.push_back(v);
}

/// The value every missing vertex holds in `plane`, when they share one bit pattern (a
/// double holds a float exactly).
template <class T>
std::optional<double> common_fill(const std::vector<T>& plane, const std::vector<uint8_t>& mask) {
  std::optional<BitsOf<T>> bits;
  for (size_t k = 0; k < mask.size() && k < plane.size(); ++k) {
    if (!mask[k]) continue;
    const BitsOf<T> b = std::bit_cast<BitsOf<T>>(plane[k]);
    if (bits && *bits != b) return std::nullopt;
    bits = b;
  }
  if (!bits) return std::nullopt;
  return double(std::bit_cast<T>(*bits));
}

/// Whether a component's record declares a fill value (_FillValue or missing_value).
bool declares_fill_values(const SourceRecord& record) {
  for (const auto& c : record.components)
    for (const auto& a : c.attributes)
      if (a.name == "_FillValue" || a.name == "missing_value") return true;
  return false;
}

/// CF's valid range of a variable, as its record holds it (unpacked units): `valid_range`
/// (two values), else `valid_min` and / or `valid_max`; values outside it are missing data
/// (CF 2.5.1; netCDF4-python masks them). A packed variable's integer bounds are unpacked
/// and, with a negative scale_factor, named the other way round (variable_io's
/// unpack_metadata). Records written before that (streams of builds up to d2e9451) unpacked
/// them one by one, so a negative scale_factor reversed them: a pair in decreasing order is
/// taken in increasing order (`reversed`). (A single bound they reversed cannot be told from
/// one they did not: taken as it reads.)
struct ValidRange {
  std::optional<double> lo, hi;
  bool pair = false;      ///< from valid_range (else valid_min / valid_max)
  bool reversed = false;  ///< the record's two bounds in decreasing order
  std::string text;       ///< "valid_range [-10, 10]", "valid_max 10"
};
ValidRange valid_range_of(const SourceVariable& v) {
  const SourceAttribute *range = nullptr, *lo = nullptr, *hi = nullptr;
  for (const auto& a : v.attributes) {
    if (a.name == "valid_range") range = &a;
    else if (a.name == "valid_min") lo = &a;
    else if (a.name == "valid_max") hi = &a;
  }
  ValidRange r;
  if (range && range->numbers().size() == 2) {
    const auto n = range->numbers();
    r.lo = std::min(n[0], n[1]);
    r.hi = std::max(n[0], n[1]);
    r.pair = true;
    r.reversed = n[0] > n[1];
    r.text = "valid_range [" + short_number(*r.lo) + ", " + short_number(*r.hi) + "]";
    return r;
  }
  if (lo && lo->numbers().size() == 1) r.lo = lo->numbers()[0];
  if (hi && hi->numbers().size() == 1) r.hi = hi->numbers()[0];
  if (r.lo && r.hi && *r.lo > *r.hi) {
    std::swap(r.lo, r.hi);
    r.reversed = true;
  }
  if (r.lo) r.text = "valid_min " + short_number(*r.lo);
  if (r.hi) r.text += (r.text.empty() ? "" : " and ") + std::string("valid_max ") + short_number(*r.hi);
  return r;
}

/// Whether `x` lies outside `r`, compared in T (as netCDF4-python compares in the variable's
/// type). NaN never does.
template <class T>
bool outside(const ValidRange& r, T x) {
  return (r.lo && x < T(*r.lo)) || (r.hi && x > T(*r.hi));
}

/// One float64 plane of a raw little-endian float64 file or a '<f8' .npy: ny rows of nx
/// values (from -2 or the caller; 0: from a 2D .npy, a usage error for raw files).
std::vector<double> read_plane_f64(const std::string& path, int64_t& nx, int64_t& ny) {
  const auto bytes = take(factz::read_bytes(path));
  std::span<const uint8_t> data(bytes);
  if (ends_with_npy(path)) {
    auto h = factz::parse_npy_header(bytes);
    if (!h.ok()) fail("invalid_argument: " + path + ": " + h.status().message());
    check(factz::check_npy_float(*h, 8, path));
    const auto& shape = h->shape;
    if (shape.size() == 2) {
      if (nx > 0 && (shape[0] != ny || shape[1] != nx))
        fail("invalid_argument: " + path + " has shape (" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) +
             "), -2 says (" + std::to_string(ny) + ", " + std::to_string(nx) + ")");
      ny = shape[0];
      nx = shape[1];
    } else if (shape.size() == 1) {
      if (nx <= 0) fail("give -2 NX NY for the 1D .npy " + path, 2);
      if (shape[0] != nx * ny)
        fail("invalid_argument: " + path + " holds " + std::to_string(shape[0]) + " values, not nx*ny");
    } else {
      fail("invalid_argument: " + path + ": a 2D field needs a 2D (ny, nx) array");
    }
    data = data.subspan(std::min<size_t>(data.size(), size_t(h->data_offset)));
  } else if (nx <= 0) {
    fail("missing -2 NX NY for the raw file " + path, 2);
  }
  const uint64_t n = uint64_t(nx) * uint64_t(ny);
  if (data.size() != n * 8)
    fail("invalid_argument: " + path + ": expected " + std::to_string(n * 8) + " bytes of float64 (" +
         std::to_string(nx) + " x " + std::to_string(ny) + "), found " + std::to_string(data.size()));
  std::vector<double> out;
  factz::detail::resize_fresh(out, static_cast<size_t>(n));  // huge pages before the zero fill
  for (size_t k = 0; k < out.size(); ++k) {
    uint64_t b = 0;
    for (int i = 7; i >= 0; --i) b = (b << 8) | data[k * 8 + size_t(i)];
    out[k] = std::bit_cast<double>(b);
  }
  return out;
}

/// Writes the values of T of an array of `shape` (C order): a .npy ('<f4' or '<f8') when the
/// name ends in .npy, raw little-endian values otherwise ('-': stdout); the values are not
/// copied on a little-endian host.
template <class T>
Status write_plain_array(const std::string& path, const std::vector<T>& values, std::span<const int64_t> shape) {
  std::string header;
  if (ends_with_npy(path)) header = factz::npy_header(sizeof(T) == 8 ? "<f8" : "<f4", shape);
  const std::span<const uint8_t> head(reinterpret_cast<const uint8_t*>(header.data()), header.size());
  if constexpr (std::endian::native == std::endian::little) {
    const std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T));
    return factz::write_parts(path, {head, data});
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(values.size() * sizeof(T));
  for (T x : values) {
    const auto b = std::bit_cast<BitsOf<T>>(x);
    for (size_t i = 0; i < sizeof(T); ++i) bytes.push_back(uint8_t(b >> (8 * i)));
  }
  return factz::write_parts(path, {head, std::span<const uint8_t>(bytes)});
}

/// Writes a float64 plane of ny rows and nx columns: .npy ('<f8', shape (ny, nx)) when the
/// name ends in .npy, raw little-endian float64 otherwise ('-': stdout).
Status write_plane_f64(const std::string& path, const std::vector<double>& plane, int64_t nx, int64_t ny) {
  const int64_t shape[2] = {ny, nx};
  return write_plain_array(path, plane, shape);
}

/// Writes a plain (raw or .npy) plane of T: the float32 writer of factz/io.hpp, or the
/// float64 one.
template <class T>
Status write_plain_plane(const std::string& path, const std::vector<T>& plane, int64_t nx, int64_t ny) {
  if constexpr (std::is_same_v<T, double>) return write_plane_f64(path, plane, nx, ny);
  else return factz::write_plane(path, plane, nx, ny);
}

template <class T>
using FillValuesOf = std::conditional_t<std::is_same_v<T, double>, FillValues64, FillValues>;

/// The command line's fill values in T (fill_of: float, fill_of64: double).
template <class T>
FillValuesOf<T> command_line_fills(const Args& a) {
  if constexpr (std::is_same_v<T, double>) return fill_of64(a);
  else return fill_of(a);
}

/// The values of a variable read as T; a variable of the other type is refused (the command
/// chose T before reading: float64_inputs).
template <class T>
std::vector<T> take_values(variable_io::VariableData& data, const variable_io::VariableSpec& spec,
                           const std::string& command) {
  constexpr auto want = std::is_same_v<T, double> ? variable_io::DType::float64 : variable_io::DType::float32;
  if (data.dtype != want) {
    if (want == variable_io::DType::float32)
      fail("invalid_argument: " + spec.text() + " is float64, and this path of factz " + command +
           " takes float32 fields only (float64 variables: compress, decompress, cp and verify of 2D vector fields)");
    fail("invalid_argument: " + spec.text() + " is " + variable_io::dtype_name(data.dtype) +
         ", and the other component is float64: u and v must have the same type");
  }
  if constexpr (std::is_same_v<T, double>) return std::move(data.f64);
  else return std::move(data.f32);
}

std::string basename_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

std::optional<std::vector<int64_t>> npy_file_shape(const std::string& path) {
  return ends_with_npy(path) ? npy_shape(path) : std::nullopt;
}

FieldFile field_file(const std::string& name) {
  auto spec = variable_io::parse_variable_spec(name, false);
  if (!spec.ok()) fail(spec.status().to_string());
  FieldFile f{name, spec.value()};
  if (!f.variable) {
    if (const auto kind = variable_io::sniff_file(name))
      fail(name + " is " + (*kind == FileKind::hdf5 ? "an HDF5" : "a netCDF") + " file: name the variable, " + name +
               ":VAR (" + variable_io::variables_hint(name, *kind) + ")",
           2);
  }
  return f;
}

std::optional<std::vector<uint64_t>> shape_of(const FieldFile& f, int whole) {
  if (f.variable) {
    auto data = variable_io::read_variable(*f.variable, whole, false);
    if (!data.ok()) fail(data.status().to_string());
    return data->shape;
  }
  if (!ends_with_npy(f.name)) return std::nullopt;
  const auto shape = npy_shape(f.name);
  if (!shape || shape->size() != 2 || whole != 2) return std::nullopt;
  return std::vector<uint64_t>{uint64_t((*shape)[0]), uint64_t((*shape)[1])};
}

template <class T>
PlaneInputOf<T> read_plane_rows_of(const FieldFile& f, const std::vector<uint64_t>& shape, int whole,
                                   const std::string& command, variable_io::RowRange rows,
                                   const std::string& shape_from) {
  PlaneInputOf<T> p;
  if (f.variable) {
    const auto& spec = *f.variable;
    auto data = variable_io::read_variable(spec, whole, true, auxiliaries_wanted(), rows);
    if (!data.ok()) fail(data.status().to_string());
    for (const auto& note : data->notes) reader_note("factz " + command + ": warning: " + spec.file + ": " + note);
    static std::set<std::string> noted;  // a grid u and v both name: one note
    std::string grids;
    for (const auto& grid : data->grids_left_out)
      if (noted.insert(spec.file + ":" + grid).second) grids += (grids.empty() ? "" : "; ") + grid;
    if (!grids.empty())
      reader_note("factz " + command + ": note: " + spec.text() + " names the auxiliary coordinates " + grids +
                  ", which the stream keeps only with --keep-coordinates (decompress then writes them back too)");
    p.auxiliaries = std::move(data->auxiliaries);
    p.values = take_values<T>(data.value(), spec, command);
    if (!shape.empty() && data->shape != shape)
      fail("invalid_argument: " + spec.text() + " is " + shape_text(data->shape) + ", but " +
           (shape_from.empty() ? std::string(shape.size() == 3 ? "-3" : "-2") + " says" : shape_from) + " " +
           shape_text(shape));
    p.shape = data->shape;
    p.first_row = data->first_row;
    p.first_col = data->first_col;
    p.cols = data->cols != 0 ? data->cols : p.shape.back();
    uint64_t per_row = p.cols;
    for (size_t k = 1; k + 1 < p.shape.size(); ++k) per_row *= p.shape[k];
    p.rows = p.values.size() / std::max<uint64_t>(1, per_row);
    // In T: a float32 variable's fill values are floats, a float64 one's are compared as the
    // doubles the file declares (1e20 is not float(1e20)).
    for (double v : data->fill_values)
      if (!std::isnan(v)) add_distinct(p.fills, T(v));
    // Values outside the variable's valid range are missing data as well: their values are
    // declared like fill values, after the file's own (finish_plane_input).
    if (const ValidRange range = valid_range_of(data->source); range.lo || range.hi) {
      p.outside.range = range.text;
      p.outside.lo = range.lo;
      p.outside.hi = range.hi;
      for (T x : p.values)
        if (p.outside.holds(x, p.fills)) {
          ++p.outside.count;
          if (p.outside.values.size() <= OutsideValuesOf<T>::kMax) p.outside.values.insert(x);
        }
    }
    p.what = spec.text();
    p.source = std::move(data->source);
    p.global_attributes = std::move(data->global_attributes);
    p.format = data->format;
    p.packing_step = data->packing_step;
    p.packing_slack = data->packing_slack;
    return p;
  }
  if (rows.first != 0 || rows.count != variable_io::RowRange::kAll || rows.first_col != 0 ||
      rows.cols != variable_io::RowRange::kAll)
    fail("internal: rows of " + f.name + " asked of a reader that reads files whole");
  if constexpr (std::is_same_v<T, double>) {  // 2D only; the float64 reader finds a .npy's shape itself
    int64_t nx = shape.empty() ? 0 : int64_t(shape.back()), ny = shape.empty() ? 0 : int64_t(shape.front());
    p.values = read_plane_f64(f.name, nx, ny);
    p.shape = {uint64_t(ny), uint64_t(nx)};
  } else {
    p.shape = shape;
    if (p.shape.empty()) {
      if (auto own = shape_of(f, whole)) p.shape = *own;
      else
        fail(std::string(whole == 3 ? "missing -3 NX NY NZ" : "missing -2 NX NY") + ": " +
                 (f.name == "-" ? std::string("stdin") : f.name) +
                 (ends_with_npy(f.name) ? " does not give a 2D shape"
                                        : " is raw float32, which does not say its shape"),
             2);
    }
    uint64_t lines = 1;
    for (size_t k = 0; k + 1 < p.shape.size(); ++k) lines *= p.shape[k];
    p.values = take(factz::read_plane(f.name, int64_t(p.shape.back()), int64_t(lines)));
  }
  p.rows = p.shape.empty() ? 0 : p.shape.front();
  p.cols = p.shape.empty() ? 0 : p.shape.back();
  return p;
}

template <class T>
void finish_plane_input(PlaneInputOf<T>& p, const std::string& command) {
  if (!p.outside.range.empty()) {
    if (p.outside.values.size() > OutsideValuesOf<T>::kMax)
      fail("invalid_argument: " + p.what + ": " + std::to_string(p.outside.count) + " values lie outside its " +
           p.outside.range + ", which makes them missing data (CF), and they hold more than " +
           std::to_string(OutsideValuesOf<T>::kMax) +
           " distinct values, which factz does not declare one by one: set them to "
           "a _FillValue, or give --fill V to compress them as data");
    if (p.outside.count > 0)  // compress keeps them exactly; verify and cp compare them as missing
      reader_note("factz " + command + ": note: " + p.what + ": " + std::to_string(p.outside.count) +
                  " value(s) outside its " + p.outside.range + " are missing data (CF)" +
                  (command == "compress" ? ", kept exactly (unless --fill declares the missing values instead)" : ""));
    for (T x : p.outside.values) add_distinct(p.fills, x);
    p.outside = {};
  }
  if (p.packing_step > 0) packed_inputs().push_back({p.what, p.packing_step, p.packing_slack});
}

template <class T>
PlaneInputOf<T> read_plane_input_of(const FieldFile& f, const std::vector<uint64_t>& shape, int whole,
                                    const std::string& command, const std::string& shape_from) {
  PlaneInputOf<T> p = read_plane_rows_of<T>(f, shape, whole, command, variable_io::RowRange{}, shape_from);
  finish_plane_input(p, command);
  return p;
}

template PlaneInputOf<float> read_plane_rows_of<float>(const FieldFile&, const std::vector<uint64_t>&, int,
                                                       const std::string&, variable_io::RowRange, const std::string&);
template PlaneInputOf<double> read_plane_rows_of<double>(const FieldFile&, const std::vector<uint64_t>&, int,
                                                         const std::string&, variable_io::RowRange,
                                                         const std::string&);
template void finish_plane_input<float>(PlaneInputOf<float>&, const std::string&);
template void finish_plane_input<double>(PlaneInputOf<double>&, const std::string&);
template PlaneInputOf<float> read_plane_input_of<float>(const FieldFile&, const std::vector<uint64_t>&, int,
                                                        const std::string&, const std::string&);
template PlaneInputOf<double> read_plane_input_of<double>(const FieldFile&, const std::vector<uint64_t>&, int,
                                                          const std::string&, const std::string&);

QuietReaderNotes::QuietReaderNotes(bool quiet) : was_(g_quiet_reader_notes) { g_quiet_reader_notes = quiet || was_; }
QuietReaderNotes::~QuietReaderNotes() { g_quiet_reader_notes = was_; }

void note_bound_below_packing(const std::string& command, double eb) {
  // Below `limit` a decompressed value re-packs to its integer: |x' - x| <= eb and x lies
  // within `slack` of the exact lattice point, so x' lies within half a step of it. A note
  // when the bound is below half the limit (a bit per value or more spent on detail the file
  // does not have); the example bound holds for every packed input.
  double smallest = std::numeric_limits<double>::infinity();
  for (const auto& in : packed_inputs()) smallest = std::min(smallest, in.step / 2 - in.slack);
  if (!(smallest > 0)) return;  // an input whose unpacking rounds by half a step: no bound re-packs it
  for (const auto& in : packed_inputs()) {
    const double limit = in.step / 2 - in.slack;
    if (!(eb > 0) || !(eb < limit / 2)) continue;
    reader_note("factz " + command + ": note: " + in.what + " is packed with a step of " + short_number(in.step) +
                "; with the bound " + short_number(eb) +
                ", re-packing the decompressed values (factz_packed_scale_factor, factz_packed_add_offset) gives "
                "back every integer of the file, as it does for any bound below " + short_number(down6(limit)) +
                ", which makes a smaller stream (for example -M ABS " + short_number(down6(0.98 * smallest)) + ")");
  }
}

void read_auxiliaries(variable_io::Auxiliaries which) { auxiliaries_wanted() = which; }

template <class T>
std::vector<uint8_t> source_record_of(const std::vector<PlaneInputOf<T>*>& planes, const FieldFile& first,
                                      size_t whole) {
  for (const auto* p : planes)
    if (!p->source) return {};
  SourceRecord record;
  record.format = planes[0]->format;
  record.file = basename_of(first.path());
  record.attributes = std::move(planes[0]->global_attributes);
  for (auto* p : planes)
    for (auto& aux : p->auxiliaries) {
      const bool named = std::any_of(record.auxiliaries.begin(), record.auxiliaries.end(),
                                     [&](const SourceAuxiliary& b) { return b.name == aux.name; });
      if (!named) record.auxiliaries.push_back(std::move(aux));
    }
  for (auto* p : planes) {
    SourceVariable v = std::move(*p->source);
    // Outer dimensions read whole beyond the field's own (length 1: a variable of one level
    // read as a 2D scalar field) are recorded as sliced at their only index.
    for (size_t k = 0; k + whole < v.dimensions.size(); ++k)
      if (!v.dimensions[k].index && v.dimensions[k].size == 1) v.dimensions[k].index = 0;
    record.components.push_back(std::move(v));
  }
  return factz::encode_source_record(record);
}
template std::vector<uint8_t> source_record_of<float>(const std::vector<PlaneInputOf<float>*>&, const FieldFile&,
                                                      size_t);
template std::vector<uint8_t> source_record_of<double>(const std::vector<PlaneInputOf<double>*>&, const FieldFile&,
                                                       size_t);

template <class T>
DeclaredFillsOf<T> declared_fills(const Args& a, const std::vector<T>& file_u, const std::vector<T>& file_v) {
  DeclaredFillsOf<T> d{file_u, file_v};
  const auto cli = command_line_fills<T>(a);
  if (cli.u) d.u = {*cli.u};
  if (cli.v) d.v = {*cli.v};
  return d;
}
template DeclaredFillsOf<float> declared_fills(const Args&, const std::vector<float>&, const std::vector<float>&);
template DeclaredFillsOf<double> declared_fills(const Args&, const std::vector<double>&, const std::vector<double>&);

template <class T>
void add_original_fills(DeclaredFillsOf<T>& to, const DeclaredFillsOf<T>& original) {
  for (T x : original.u) add_distinct(to.u, x);
  for (T x : original.v) add_distinct(to.v, x);
}
template void add_original_fills(DeclaredFillsOf<float>&, const DeclaredFillsOf<float>&);
template void add_original_fills(DeclaredFillsOf<double>&, const DeclaredFillsOf<double>&);

template <class T>
void mark_values(std::vector<uint8_t>& mask, const std::vector<T>& plane, std::span<const T> values) {
  if (values.empty()) return;
  if (mask.size() != plane.size()) mask.assign(plane.size(), 0);
  for (T x : values)
    for (size_t k = 0; k < plane.size(); ++k) mask[k] |= uint8_t(plane[k] == x);
}
template void mark_values<float>(std::vector<uint8_t>&, const std::vector<float>&, std::span<const float>);
template void mark_values<double>(std::vector<uint8_t>&, const std::vector<double>&, std::span<const double>);

namespace {

template <class T>
int64_t mark_declared_of(VectorFieldOf<T>& f, const DeclaredFillsOf<T>& fills) {
  // The second and later values: through the mask.
  if (fills.u.size() > 1) mark_values<T>(f.mask, f.u, std::span<const T>(fills.u).subspan(1));
  if (fills.v.size() > 1) mark_values<T>(f.mask, f.v, std::span<const T>(fills.v).subspan(1));
  FillValuesOf<T> first;
  if (!fills.u.empty()) first.u = fills.u[0];
  if (!fills.v.empty()) first.v = fills.v[0];
  return factz::mark_missing(f, first);
}

}  // namespace

int64_t mark_declared(VectorField2D& f, const DeclaredFills& fills) { return mark_declared_of<float>(f, fills); }
int64_t mark_declared(VectorField2D64& f, const DeclaredFillsOf<double>& fills) {
  return mark_declared_of<double>(f, fills);
}

namespace {

template <class T>
VectorInputOf<T> read_vector_input_of(const Args& a, const char* flag, const std::string& command,
                                      const VectorInputOf<T>* like) {
  const auto [un, vn] = two_files(a, flag);
  if (un == "-" && vn == "-") fail("invalid_argument: only one component can come from stdin");
  const FieldFile fu = field_file(un), fv = field_file(vn);
  std::vector<uint64_t> shape;
  std::string shape_from;  // who says the shape, for messages ("-2 says" when empty)
  if (a.has("-2")) {
    int64_t nx = 0, ny = 0;
    dims(a, nx, ny);
    shape = {uint64_t(ny), uint64_t(nx)};
  } else if (like) {  // a reconstruction has the original's shape
    shape = {uint64_t(like->field.ny), uint64_t(like->field.nx)};
    shape_from = "the original (-i) is";
  }
  PlaneInputOf<T> pu = read_plane_input_of<T>(fu, shape, 2, command, shape_from);
  // Without -2, a v that gives its own shape is read with it, so that a difference between
  // u and v is named as such.
  const bool v_own = shape.empty() && (fv.variable || ends_with_npy(fv.name)) && shape_of(fv, 2).has_value();
  PlaneInputOf<T> pv = read_plane_input_of<T>(fv, v_own ? std::vector<uint64_t>{} : pu.shape, 2, command, shape_from);
  if (pv.shape != pu.shape)
    fail("invalid_argument: u " + fu.name + " is " + shape_text(pu.shape) + " but v " + fv.name + " is " +
         shape_text(pv.shape) + ": u and v must have the same shape");
  VectorInputOf<T> in;
  VectorFieldOf<T>& f = in.field;
  f.ny = int64_t(pu.shape[0]);
  f.nx = int64_t(pu.shape[1]);
  f.u = std::move(pu.values);
  f.v = std::move(pv.values);
  in.fills = declared_fills<T>(a, pu.fills, pv.fills);
  if (like) add_original_fills(in.fills, like->fills);
  in.masked = mark_declared(f, in.fills);
  // Validated after marking (an infinite fill value that is declared is missing data, not an
  // error), and before the warning (a field that fails gets one line).
  if (Status s = factz::validate_field(f); !s.ok()) fail(Status(s.code(), "input field: " + s.message()).to_string());
  if (!in.fills.any() && !like) warn_suspected_fill(f, command);
  in.source = source_record_of<T>({&pu, &pv}, fu, 2);
  return in;
}

}  // namespace

template <class T>
std::vector<uint8_t> source_record_without_values(const std::vector<std::string>& names, int whole,
                                                  const std::string& command) {
  std::vector<FieldFile> files;
  for (const auto& n : names) files.push_back(field_file(n));
  for (const auto& f : files)
    if (!f.variable) return {};  // a raw or .npy component: no record (source_record_of)
  std::vector<PlaneInputOf<T>> planes;
  for (const auto& f : files)
    planes.push_back(read_plane_rows_of<T>(f, {}, whole, command, variable_io::RowRange{0, 0}));
  std::vector<PlaneInputOf<T>*> pointers;
  for (auto& p : planes) pointers.push_back(&p);
  return source_record_of<T>(pointers, files[0], size_t(whole));
}
template std::vector<uint8_t> source_record_without_values<float>(const std::vector<std::string>&, int,
                                                                  const std::string&);
template std::vector<uint8_t> source_record_without_values<double>(const std::vector<std::string>&, int,
                                                                   const std::string&);

VectorInput read_vector_input(const Args& a, const char* flag, const std::string& command, const VectorInput* like) {
  return read_vector_input_of<float>(a, flag, command, like);
}
VectorInput64 read_vector_input64(const Args& a, const char* flag, const std::string& command,
                                  const VectorInput64* like) {
  return read_vector_input_of<double>(a, flag, command, like);
}

void input_dims(const Args& a, const char* flag, int64_t& nx, int64_t& ny) {
  if (a.has("-2")) return dims(a, nx, ny);
  const auto& files = a.all(flag);
  if (!files.empty() && !files[0].empty() && files[0][0] != "-") {
    if (const auto shape = shape_of(field_file(files[0][0]), 2)) {
      ny = int64_t((*shape)[0]);
      nx = int64_t((*shape)[1]);
      return;
    }
  }
  fail("missing -2 NX NY (raw float32 files do not say their shape)", 2);
}

namespace {

/// The scalar field of a value type.
template <class T>
using ScalarFieldOf = std::conditional_t<std::is_same_v<T, double>, ScalarField64, ScalarField>;

/// The shape a scalar command gives for `flag`'s file: -3 / -2, else `like`'s; empty when
/// neither says it (the file's own then).
template <class Field>
std::vector<uint64_t> scalar_shape(const Args& a, const Field* like) {
  if (a.has("-3") || a.has("-2")) {
    int64_t nx = 0, ny = 0, nz = 1;
    scalar_dims(a, nx, ny, nz);
    return a.has("-3") ? std::vector<uint64_t>{uint64_t(nz), uint64_t(ny), uint64_t(nx)}
                       : std::vector<uint64_t>{uint64_t(ny), uint64_t(nx)};
  }
  if (like)  // a reconstruction has the original's shape
    return like->nz > 1 ? std::vector<uint64_t>{uint64_t(like->nz), uint64_t(like->ny), uint64_t(like->nx)}
                        : std::vector<uint64_t>{uint64_t(like->ny), uint64_t(like->nx)};
  return {};
}

/// A scalar netCDF / HDF5 variable of value type T: its shape (checked against `shape`
/// when given), its values, and its fill values marking missing vertices unless --fill
/// is given (the caller applies that one, compared in T).
template <class T>
ScalarFieldOf<T> read_scalar_variable(const Args& a, const FieldFile& file, const std::vector<uint64_t>& shape,
                                      const std::string& command, bool shape_from_like, std::vector<T>* file_fills,
                                      std::vector<uint8_t>* source) {
  const int whole = a.has("-3") ? 3 : 2;
  PlaneInputOf<T> p;
  try {
    p = read_plane_input_of<T>(file, shape, int(shape.empty() ? whole : shape.size()), command,
                               shape_from_like ? "the original (-i) is" : "");
  } catch (Failure& failed) {
    // A variable of three or more dimensions without a full selection is no 2D slice, and it
    // may be meant as a 3D field, which -3 says: when it reads as one, the message says both.
    if (whole == 2 && shape.empty()) {
      const auto as3d = variable_io::read_variable(*file.variable, 3, false);
      if (as3d.ok())
        failed.message += "; or, for a 3D scalar field, give -3 " + std::to_string(as3d->shape[2]) + " " +
                          std::to_string(as3d->shape[1]) + " " + std::to_string(as3d->shape[0]);
    }
    throw;
  }
  ScalarFieldOf<T> f;
  f.nx = int64_t(p.shape.back());
  f.ny = int64_t(p.shape[p.shape.size() - 2]);
  f.nz = p.shape.size() == 3 ? int64_t(p.shape[0]) : 1;
  f.values = std::move(p.values);
  const bool fill_given = std::is_same_v<T, double> ? fill_of64(a).u.has_value() : fill_of(a).u.has_value();
  if (!fill_given)
    for (T fill : p.fills) factz::mark_missing(f, fill);
  if (file_fills) *file_fills = std::move(p.fills);
  if (source) *source = source_record_of<T>({&p}, file, size_t(f.ndims()));
  return f;
}

}  // namespace

ScalarField read_scalar_input(const Args& a, const char* flag, const std::string& command, const ScalarField* like,
                              std::vector<float>* file_fills, std::vector<uint8_t>* source) {
  const auto& occurrences = a.all(flag);
  if (occurrences.size() != 1) fail(std::string("give ") + flag + " once for a scalar field", 2);
  const FieldFile file = field_file(occurrences[0][0]);
  std::vector<uint64_t> shape = scalar_shape(a, like);
  if (!file.variable) {  // raw and .npy: the scalar reader's own checks and messages
    if (shape.empty()) {  // a .npy's own shape: (ny, nx) or (nz, ny, nx)
      const auto own = npy_file_shape(file.name);
      if (!own || (own->size() != 2 && own->size() != 3))
        fail("missing -2 NX NY or -3 NX NY NZ: " + file.name + " does not say its shape", 2);
      shape.assign(own->begin(), own->end());
    }
    const int64_t nx = int64_t(shape.back()), ny = int64_t(shape[shape.size() - 2]);
    return take(factz::read_scalar_field(file.name, nx, ny, shape.size() == 3 ? int64_t(shape[0]) : 1));
  }
  // The variable's _FillValue / missing_value mark missing vertices, as for vector fields;
  // --fill replaces them (mark_scalar_fill applies it).
  return read_scalar_variable<float>(a, file, shape, command, like && !a.has("-2") && !a.has("-3"), file_fills,
                                     source);
}

ScalarField64 read_scalar_variable64(const Args& a, const FieldFile& file, const std::string& command,
                                     const ScalarField64* like, std::vector<uint8_t>* source) {
  return read_scalar_variable<double>(a, file, scalar_shape(a, like), command, like && !a.has("-2") && !a.has("-3"),
                                      nullptr, source);
}

bool any_variable_output(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    auto spec = variable_io::parse_variable_spec(n, true);
    if (!spec.ok() || spec->has_value()) return true;
  }
  return false;
}

/// A decompressed variable's valid range: values the bound moved beyond the recorded one
/// (a range that is the data's own extremes, or a physical limit such as 0 that the data
/// touch) would be taken as missing by every reader that applies it. The range is widened
/// to hold them (at most the bound beyond it; written in the variable's type), with a note,
/// unless a missing vertex's value would then fall inside it (a warning counts them then).
/// A range in decreasing order (in records written up to d2e9451, a packed variable's
/// integer range that a negative scale_factor reversed when it was unpacked: valid_min above
/// valid_max, which would hide every value) is written in increasing order. Re-packed outputs (--repack) get their
/// integers' range back from variable_io::repack: only the warning. Returns the record to
/// write, or nothing to change.
template <class T>
std::optional<SourceVariable> written_range(const SourceVariable& variable, const std::vector<T>& plane,
                                            const std::vector<uint8_t>& mask, bool repack, const std::string& name,
                                            const std::string& command) {
  const ValidRange range = valid_range_of(variable);
  if (!range.lo && !range.hi) return std::nullopt;
  uint64_t beyond = 0;
  T lo = range.lo ? T(*range.lo) : T(0), hi = range.hi ? T(*range.hi) : T(0);
  for (size_t k = 0; k < plane.size(); ++k) {
    if (!mask.empty() && mask[k]) continue;
    const T x = plane[k];
    if (!outside(range, x)) continue;
    ++beyond;
    if (range.lo && x < lo) lo = x;
    if (range.hi && x > hi) hi = x;
  }
  const auto counted = [&] {
    warn(command, name + ": " + std::to_string(beyond) + " decompressed value(s) lie beyond its " + range.text +
                      " (within the bound of values inside it): readers that apply the valid range (netCDF4-python, "
                      "CF) take them as missing");
  };
  if (repack) {
    if (beyond > 0) counted();
    return std::nullopt;
  }
  const bool reversed = range.reversed;
  bool hides_missing = false;
  for (size_t k = 0; k < plane.size() && !mask.empty() && beyond > 0; ++k) {
    const T x = plane[k];  // a missing vertex outside the old range must stay outside the new one
    hides_missing = hides_missing || (mask[k] && outside(range, x) && !(x < lo) && !(x > hi));
  }
  if (hides_missing) {
    counted();
    beyond = 0;
    lo = range.lo ? T(*range.lo) : T(0);
    hi = range.hi ? T(*range.hi) : T(0);
  }
  if (beyond == 0 && !reversed) return std::nullopt;
  SourceVariable out = variable;
  constexpr auto dtype = std::is_same_v<T, double> ? variable_io::DType::float64 : variable_io::DType::float32;
  const auto typed = [](const std::string& attribute, std::initializer_list<T> values) {
    return variable_io::typed_attribute(attribute, dtype, std::vector<double>(values.begin(), values.end()));
  };
  std::string now;
  if (range.pair) {
    for (auto& a : out.attributes)
      if (a.name == "valid_range") a = typed("valid_range", {lo, hi});
    now = "valid_range [" + short_number(double(lo)) + ", " + short_number(double(hi)) + "]";
  } else {  // valid_min below valid_max (a reversed pair changes names)
    std::erase_if(out.attributes,
                  [](const SourceAttribute& a) { return a.name == "valid_min" || a.name == "valid_max"; });
    if (range.lo) {
      out.attributes.push_back(typed("valid_min", {lo}));
      now = "valid_min " + short_number(double(lo));
    }
    if (range.hi) {
      out.attributes.push_back(typed("valid_max", {hi}));
      now += (now.empty() ? "" : " and ") + std::string("valid_max ") + short_number(double(hi));
    }
  }
  std::string was;  // the record's attributes as they are, valid_min before valid_max
  for (const char* which : {"valid_range", "valid_min", "valid_max"})
    for (const auto& a : variable.attributes) {
      if (a.name != which || (a.name == "valid_range" ? !range.pair : range.pair)) continue;
      std::string values;
      for (double x : a.numbers()) values += (values.empty() ? "" : ", ") + short_number(x);
      was += (was.empty() ? "" : " and ") + a.name + " " + (a.name == "valid_range" ? "[" + values + "]" : values);
    }
  std::string why;
  if (beyond > 0)
    why = "the bound moved " + std::to_string(beyond) + " value(s) beyond " + (range.pair ? "it" : "them") +
          " (by at most the bound), which readers that apply the range would take as missing";
  if (reversed)
    why += std::string(why.empty() ? "" : "; ") + "in decreasing order (a negative scale_factor reverses a packed "
                                                   "range when it is unpacked), it would hide every value";
  std::fprintf(stderr, "factz %s: note: %s: %s written as %s: %s\n", command.c_str(), name.c_str(), was.c_str(),
               now.c_str(), why.c_str());
  return out;
}

template <class T>
void write_field_outputs(const std::vector<std::string>& names, std::initializer_list<const std::vector<T>*> plane_list,
                         const std::vector<uint64_t>& shape, const std::optional<SourceRecord>& source,
                         const std::vector<uint8_t>& mask, const std::string& command,
                         const std::type_identity_t<PlainWriter<T>>& plain, bool repack) {
  const std::vector<const std::vector<T>*> planes(plane_list);
  if (repack && !any_variable_output(names))
    fail("--repack writes netCDF / HDF5 variables (-o FILE.nc:VAR): give it with such an output", 2);
  // Variables are gathered per file (one file, several variables) and written after the
  // plain outputs; a bad output name is a usage error before anything is written.
  std::vector<std::optional<variable_io::VariableSpec>> specs;
  for (const auto& n : names) {
    auto spec = variable_io::parse_variable_spec(n, true);
    if (!spec.ok()) fail(spec.status().message(), 2);
    specs.push_back(spec.value());
  }
  const bool matching_source = source && source->components.size() == planes.size();
  // The variables a written file holds besides the outputs' values (the record's).
  std::set<std::string> held;
  if (matching_source) {
    for (const auto& comp : source->components) {
      held.insert(comp.name);
      for (const auto& co : comp.coordinates) held.insert(co.name);
    }
    for (const auto& x : source->auxiliaries) held.insert(x.name);
  }
  std::map<std::string, std::vector<variable_io::OutputVariable>> files;
  std::map<std::string, std::string> file_names;  // canonical path -> the name as given
  std::list<variable_io::Repacked> repacked;      // what re-packed outputs point into
  std::list<SourceVariable> widened;              // records whose valid range is rewritten (written_range)
  uint64_t rows = 1;
  for (size_t k = 0; k + 1 < shape.size(); ++k) rows *= shape[k];
  // Plain outputs are written once every variable is prepared (re-packing may refuse one).
  std::vector<size_t> plain_outputs;
  for (size_t c = 0; c < names.size(); ++c) {
    if (!specs[c]) {
      plain_outputs.push_back(c);
      continue;
    }
    variable_io::OutputVariable v;
    v.variable = specs[c]->variable;
    v.values = std::span<const T>(*planes[c]);
    v.shape = shape;
    v.source = matching_source ? &source->components[c] : nullptr;
    v.global_attributes = matching_source ? &source->attributes : nullptr;
    v.auxiliaries = matching_source ? &source->auxiliaries : nullptr;
    // A variable with a record declares what the original declared (and its valid range), no
    // more: a vertex missing because of the other component (or the other's valid range)
    // holds a value that is data for this one, which a _FillValue hides. A stream without a
    // record, or of HDF5 datasets none of which the record gives a fill value (records written
    // up to d2e9451 did not keep a dataset's fill property), tells readers the missing
    // vertices' common value, if any.
    if (!matching_source || (source->format == SourceFormat::hdf5 && !declares_fill_values(*source)))
      v.fill = common_fill(*planes[c], mask);
    if (matching_source) {
      if (auto held = written_range(source->components[c], *planes[c], mask, repack, names[c], command)) {
        widened.push_back(std::move(*held));
        v.source = &widened.back();
      }
    }
    if (repack) {  // the integers the variable was read from (docs/usage.md, "Packed variables")
      if (!v.source || !variable_io::repackable(*v.source)) {
        warn(command, names[c] + ": not read from a packed variable (the stream records no integer packing for it); "
                                 "written as " + (std::is_same_v<T, double> ? "double" : "float"));
      } else {
        repacked.push_back(take(variable_io::repack(*v.source, v.values, mask, names[c])));
        const variable_io::Repacked& r = repacked.back();
        v.values = variable_io::PackedValues{r.variable.type, r.values};
        v.source = &r.variable;
        v.fill.reset();  // the record's fill values, re-packed
        if (r.clamped > 0)
          warn(command, names[c] + ": " + std::to_string(r.clamped) + " value(s) beyond the range of " +
                            source_type_name(r.variable.type) + " written as its nearest end");
      }
    }
    if (matching_source) {  // names the stream does not hold: the file will name variables it lacks
      std::string absent, bounds;
      for (const auto& name : variable_io::referenced_variables(source->components[c]))
        if (!held.count(name)) absent += (absent.empty() ? "" : ", ") + name;
      // Cell bounds the written coordinates (and auxiliary variables) name.
      std::vector<const std::vector<SourceAttribute>*> bounded;
      for (const auto& co : source->components[c].coordinates) bounded.push_back(&co.attributes);
      for (const auto& x : source->auxiliaries) bounded.push_back(&x.attributes);
      for (const auto* attributes : bounded)
        for (const auto& name : variable_io::bounds_variables(*attributes))
          if (!held.count(name) && (", " + bounds + ", ").find(", " + name + ", ") == std::string::npos)
            bounds += (bounds.empty() ? "" : ", ") + name;
      static std::set<std::string> told;  // u and v naming the same: one note
      if (!absent.empty() && told.insert(absent).second)
        std::fprintf(stderr,
                     "factz %s: note: %s names %s (coordinates / grid_mapping), which the stream does not hold "
                     "(compress --keep-coordinates keeps auxiliary coordinates)\n",
                     command.c_str(), names[c].c_str(), absent.c_str());
      if (!bounds.empty() && told.insert("bounds: " + bounds).second)
        std::fprintf(stderr,
                     "factz %s: note: the coordinates of %s name the cell bounds %s, which the stream does not "
                     "hold\n",
                     command.c_str(), names[c].c_str(), bounds.c_str());
    }
    std::error_code ec;
    const std::string key = std::filesystem::weakly_canonical(std::filesystem::absolute(specs[c]->file, ec), ec).string();
    files[key].push_back(std::move(v));
    file_names.emplace(key, specs[c]->file);
  }
  for (size_t c : plain_outputs) {
    if (plain) plain(names[c], *planes[c]);
    else if (shape.size() == 3)  // a 3D field: a .npy of shape (nz, ny, nx), as the 3D vector components
      check(write_plain_array(names[c], *planes[c], std::vector<int64_t>(shape.begin(), shape.end())));
    else check(write_plain_plane(names[c], *planes[c], int64_t(shape.back()), int64_t(rows)));
  }
  for (const auto& [key, variables] : files) {
    std::vector<std::string> notes;
    check(variable_io::write_variables(file_names[key], variables, &notes));
    for (const auto& note : notes) warn(command, file_names[key] + ": " + note);
  }
}

void write_plane64(const std::string& path, const std::vector<double>& plane, int64_t nx, int64_t ny,
                   const std::string& command) {
  (void)command;
  if (any_variable_output({path}))
    fail("invalid_argument: " + path + ": netCDF / HDF5 outputs of this float64 field are not supported here; write "
         "a '<f8' .npy or raw float64 file");
  check(write_plane_f64(path, plane, nx, ny));
}

template void write_field_outputs<float>(const std::vector<std::string>&,
                                         std::initializer_list<const std::vector<float>*>, const std::vector<uint64_t>&,
                                         const std::optional<SourceRecord>&, const std::vector<uint8_t>&,
                                         const std::string&, const PlainWriter<float>&, bool);
template void write_field_outputs<double>(const std::vector<std::string>&,
                                          std::initializer_list<const std::vector<double>*>,
                                          const std::vector<uint64_t>&, const std::optional<SourceRecord>&,
                                          const std::vector<uint8_t>&, const std::string&,
                                          const PlainWriter<double>&, bool);

}  // namespace factz::cli
