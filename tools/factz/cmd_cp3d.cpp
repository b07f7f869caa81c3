// 3D vector fields on the command line (issue 22): `factz cp -3 NX NY NZ -i U -i V -i W`
// (the critical points of the Freudenthal tetrahedra, factz/topology3d.hpp), `factz
// verify -3 NX NY NZ -i U -i V -i W -d U2 -d V2 -d W2` (lost / spurious / changed
// critical points and errors), `factz compress -3 NX NY NZ -i U -i V -i W -z OUT` (the 3D
// speculative mode, factz/compress3d.hpp) and `factz decompress -z IN -o U -o V -o W`.
// main.cpp hands these over when -3 comes with three -i, or decompress with three -o (a
// single -i with -3 stays a scalar field). Inputs: raw little-endian float32 files of
// nx * ny * nz values (x fastest), or '<f4' .npy files of shape (nz, ny, nx) or (n,); '-'
// reads stdin. Float64 fields as for 2D (common.hpp float64_inputs): '<f8' .npy files, or raw
// float64 files with --dtype f64; their streams are format version 13, and decompress writes
// them back as float64. NaN, and the value of --fill in any component, mark a vertex missing
// (compress keeps them: format version 12, 13 for float64; decompress writes back their bits).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "factz/compress3d.hpp"
#include "field3d_files.hpp"
#include "field_files.hpp"  // any_variable_output
#include "factz/io.hpp"
#include "factz/topology3d.hpp"
#include "util/big_vector.hpp"

namespace factz::cli {

namespace {

using In = StatsWriter::In;

}  // namespace

/// `-3 NX NY NZ`: three positive integers whose product stays within the library's 2^40.
void dims3(const Args& a, int64_t& nx, int64_t& ny, int64_t& nz) {
  if (!a.has("-3"))
    fail("missing -3 NX NY NZ: a 3D vector field of raw files or flat .npy files takes it ((nz, ny, nx) .npy files "
         "and netCDF / HDF5 variables give their own grid)",
         2);
  const auto& d = a.all("-3").back();
  long long x = 0, y = 0, z = 0;
  if (!to_int64(d[0], x) || !to_int64(d[1], y) || !to_int64(d[2], z) || x <= 0 || y <= 0 || z <= 0)
    fail("-3 needs three positive integers, got '" + d[0] + " " + d[1] + " " + d[2] + "'", 2);
  constexpr long long kMax = 1ll << 40;
  if (x > kMax / y || x * y > kMax / z)
    fail("invalid_argument: -3 " + d[0] + " " + d[1] + " " + d[2] + ": the grid exceeds 2^40 vertices");
  nx = x, ny = y, nz = z;
}

/// The three files of `flag` (u, v, w), or a usage error.
std::vector<std::string> three_files(const Args& a, const char* flag) {
  const auto& v = a.all(flag);
  if (v.size() != 3)
    fail(std::string("give ") + flag + " three times (u, v, w) for a 3D vector field with -3, got " +
             std::to_string(v.size()),
         2);
  return {v[0][0], v[1][0], v[2][0]};
}

/// The value type's names: the .npy descr and the dtype reported.
template <class T>
constexpr const char* npy_descr_of() {
  return sizeof(T) == 8 ? "<f8" : "<f4";
}
template <class T>
constexpr const char* dtype_text() {
  return sizeof(T) == 8 ? "float64" : "float32";
}

/// One component of n values of type T: raw (exactly sizeof(T) n bytes) or a C-order .npy
/// ('<f4' or '<f8') of shape (nz, ny, nx) or (n,).
template <class T>
std::vector<T> read_component(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  const int64_t n = nx * ny * nz;
  const std::vector<uint8_t> bytes = take(factz::read_bytes(path));
  size_t offset = 0;
  const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  if (npy) {
    const auto h = factz::parse_npy_header(bytes);
    if (!h.ok()) fail("invalid_argument: " + path + ": " + h.status().message());
    const auto& s = h->shape;
    const bool grid = s.size() == 3 && s[0] == nz && s[1] == ny && s[2] == nx;
    const bool flat = s.size() == 1 && s[0] == n;
    check(factz::check_npy_float(h.value(), int(sizeof(T)), path));
    if (!(grid || flat))
      fail("invalid_argument: " + path + ": a 3D component must be a C-order '" + npy_descr_of<T>() +
           "' array of shape (" + std::to_string(nz) + ", " + std::to_string(ny) + ", " + std::to_string(nx) +
           ") (-3 NX NY NZ)");
    offset = size_t(h->data_offset);
  }
  const uint64_t want = uint64_t(n) * sizeof(T);
  if (bytes.size() < offset || bytes.size() - offset != want)
    fail("invalid_argument: " + path + " holds " + std::to_string(bytes.size() - std::min(bytes.size(), offset)) +
         " bytes of values; -3 " + std::to_string(nx) + " " + std::to_string(ny) + " " + std::to_string(nz) +
         " needs " + std::to_string(want) + " (" + dtype_text<T>() + ")");
  std::vector<T> out;
  factz::detail::resize_fresh(out, static_cast<size_t>(n));  // huge pages before the zero fill
  if (n > 0) std::memcpy(out.data(), bytes.data() + offset, size_t(want));  // little-endian host (docs/usage.md)
  return out;
}

/// The field of `flag` (u, v, w) with its missing vertices marked: NaN, --fill V in any
/// component, and each variable's own fill values (_FillValue, missing_value, an HDF5
/// dataset's fill value) in its component unless --fill is given, as for 2D fields. Returns the
/// count of missing vertices in `masked`. Without any declared fill value, a value that looks
/// like an undeclared one gets a warning (as for 2D fields), except for a reconstruction
/// (`reconstruction`: verify's -d, which the original's --fill and, given `like`, its files'
/// fill values also mark). The
/// shape is -3's, else the variables' (the last three dimensions); raw and .npy files need -3
/// unless a variable gives it. `info` (when given) receives each component's declared fill
/// values and the encoded source record (when all three are variables).
template <class Field>
Field read_field3d(const Args& a, const char* flag, int64_t& masked, const std::string& command,
                   bool reconstruction = false, const Field3DInfo<typename decltype(Field::u)::value_type>* like = nullptr,
                   Field3DInfo<typename decltype(Field::u)::value_type>* info = nullptr) {
  using T = typename decltype(Field::u)::value_type;
  if (a.has("--fill-u") || a.has("--fill-v"))
    fail("--fill-u and --fill-v name 2D components; give --fill V for a 3D vector field", 2);
  Field f;
  const auto files = three_files(a, flag);
  const FieldFile ff[3] = {field_file(files[0]), field_file(files[1]), field_file(files[2])};
  const bool variables = ff[0].variable || ff[1].variable || ff[2].variable;
  Field3DInfo<T> declared;
  if (!variables) {
    if (like && !a.has("-3")) {  // a reconstruction has the original's shape
      f.nz = int64_t(like->shape[0]);
      f.ny = int64_t(like->shape[1]);
      f.nx = int64_t(like->shape[2]);
    } else if (const auto own = a.has("-3") ? std::nullopt : npy_file_shape(files[0]);
               own && own->size() == 3 && (*own)[0] > 0 && (*own)[1] > 0 && (*own)[2] > 0) {
      f.nz = (*own)[0];  // a (nz, ny, nx) .npy gives the grid; the other components are checked against it
      f.ny = (*own)[1];
      f.nx = (*own)[2];
    } else {
      dims3(a, f.nx, f.ny, f.nz);
    }
    f.u = read_component<T>(files[0], f.nx, f.ny, f.nz);
    f.v = read_component<T>(files[1], f.nx, f.ny, f.nz);
    f.w = read_component<T>(files[2], f.nx, f.ny, f.nz);
  } else {
    // The shape: -3, else the first variable's own; every component must have it.
    std::vector<uint64_t> shape;
    if (a.has("-3")) {
      dims3(a, f.nx, f.ny, f.nz);
      shape = {uint64_t(f.nz), uint64_t(f.ny), uint64_t(f.nx)};
    } else if (like) {
      shape = like->shape;
    }
    PlaneInputOf<T> planes[3];
    const int first = ff[0].variable ? 0 : ff[1].variable ? 1 : 2;
    planes[first] = read_plane_input_of<T>(ff[first], shape, 3, command, like && !a.has("-3") ? "the original (-i) is" : "");
    shape = planes[first].shape;
    f.nz = int64_t(shape[0]);
    f.ny = int64_t(shape[1]);
    f.nx = int64_t(shape[2]);
    for (int c = 0; c < 3; ++c) {
      if (c == first) continue;
      if (!ff[c].variable) {
        planes[c].values = read_component<T>(files[c], f.nx, f.ny, f.nz);
        planes[c].shape = shape;
        continue;
      }
      planes[c] = read_plane_input_of<T>(ff[c], {}, 3, command);
      if (planes[c].shape != shape)
        fail("invalid_argument: " + std::string(1, "uvw"[first]) + " " + ff[first].name + " is " +
             shape_text(shape) + " but " + std::string(1, "uvw"[c]) + " " + ff[c].name + " is " +
             shape_text(planes[c].shape) + ": u, v and w must have the same shape");
    }
    for (int c = 0; c < 3; ++c) declared.fills[c] = std::move(planes[c].fills);
    if (info) info->source = source_record_of<T>({&planes[0], &planes[1], &planes[2]}, ff[0], 3);
    f.u = std::move(planes[0].values);
    f.v = std::move(planes[1].values);
    f.w = std::move(planes[2].values);
  }
  std::conditional_t<sizeof(T) == 8, factz::FillValues3D64, factz::FillValues3D> fill;
  if constexpr (sizeof(T) == 8) {
    if (a.has("--fill")) fill.u = fill.v = fill.w = fill_of64(a).u;
  } else {
    if (a.has("--fill")) fill.u = fill.v = fill.w = fill_of(a).u;
  }
  apply_fill_options3d(a, declared, like);
  const bool file_fills = !declared.fills[0].empty() || !declared.fills[1].empty() || !declared.fills[2].empty();
  const std::vector<T>* planes[3] = {&f.u, &f.v, &f.w};
  for (int c = 0; c < 3; ++c) mark_values<T>(f.mask, *planes[c], declared.fills[c]);  // compared in T
  masked = factz::mark_missing(f, fill);  // the fill value in any component, and NaN
  check(factz::validate_field(f));  // after marking: a declared infinite fill value is missing data
  if (!fill.any() && !file_fills && !reconstruction) warn_suspected_fill(f, command);
  if (info) {
    info->fills = std::move(declared.fills);
    info->shape = {uint64_t(f.nz), uint64_t(f.ny), uint64_t(f.nx)};
  }
  return f;
}

/// Writes one component: a '<f4' ('<f8') .npy of shape (nz, ny, nx) when the name ends in
/// .npy, raw little-endian float32 (float64) otherwise ('-': stdout).
template <class T>
void write_component(const std::string& path, const std::vector<T>& values, int64_t nx, int64_t ny, int64_t nz) {
  std::vector<uint8_t> bytes;
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    const int64_t shape[3] = {nz, ny, nx};
    const std::string head = factz::npy_header(npy_descr_of<T>(), shape);
    bytes.assign(head.begin(), head.end());
  }
  const size_t at = bytes.size();
  bytes.resize(at + values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data() + at, values.data(), values.size() * sizeof(T));  // little-endian host
  check(factz::write_bytes(path, bytes));
}

factz::FillValues3D fill3d_of(const Args& a) {
  factz::FillValues3D fill;
  if (a.has("--fill")) fill.u = fill.v = fill.w = fill_of(a).u;
  return fill;
}

// The float32 entry points of field3d_files.hpp (the multi-block driver's, blocks3d.cpp).
std::vector<float> read_component(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  return read_component<float>(path, nx, ny, nz);
}
factz::VectorField3D read_field3d(const Args& a, const char* flag, int64_t& masked, const std::string& command,
                                  bool reconstruction, const Field3DInfo<float>* like, Field3DInfo<float>* info) {
  return read_field3d<factz::VectorField3D>(a, flag, masked, command, reconstruction, like, info);
}
void write_component(const std::string& path, const std::vector<float>& values, int64_t nx, int64_t ny, int64_t nz) {
  write_component<float>(path, values, nx, ny, nz);
}
// ... and the float64 ones (blocks3d.cpp, float64 3D multi-block files).
std::vector<double> read_component64(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  return read_component<double>(path, nx, ny, nz);
}
factz::FillValues3D64 fill3d_of64(const Args& a) {
  factz::FillValues3D64 fill;
  if (a.has("--fill")) fill.u = fill.v = fill.w = fill_of64(a).u;
  return fill;
}
factz::VectorField3D64 read_field3d64(const Args& a, const char* flag, int64_t& masked, const std::string& command,
                                      bool reconstruction, const Field3DInfo<double>* like,
                                      Field3DInfo<double>* info) {
  return read_field3d<factz::VectorField3D64>(a, flag, masked, command, reconstruction, like, info);
}
void write_component(const std::string& path, const std::vector<double>& values, int64_t nx, int64_t ny, int64_t nz) {
  write_component<double>(path, values, nx, ny, nz);
}

namespace {

template <class Field>
int compress3d_of(const Args& a) {
  three_files(a, "-i");
  if (!a.has("-z")) fail("missing -z OUT", 2);
  if (a.has("--per-rank")) fail("--per-rank takes 2D fields only (a 3D field takes --blocks PX PY PZ)", 2);
  if (a.has("--persistence") || a.has("--scalar"))
    fail("--persistence and --scalar apply to a scalar field (give -i once)", 2);
  refuse_clobbering(a, {"-i"}, {"-z"});
  factz::Options o = vector_compress_options(a, true);  // -x cuda: Policy::cuda (the CUDA backend's 3D modes)
  o.progress = compress_progress(a);
  int64_t masked = 0;
  Field3DInfo<typename decltype(Field::u)::value_type> info;
  Field f = read_field3d<Field>(a, "-i", masked, "compress", false, nullptr, &info);
  o.source = std::move(info.source);  // where the field came from: section 12 (netCDF / HDF5 inputs)
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz;
  factz::CompressStats st;
  const auto t0 = std::chrono::steady_clock::now();
  const auto stream = take(factz::compress(std::move(f), o, &st));  // given up: no copy of its planes
  const double secs = seconds_since(t0);
  check(factz::write_bytes(a.get("-z"), stream));
  constexpr bool f64 = std::is_same_v<Field, factz::VectorField3D64>;
  print_vector_compression(a, o, st, nx, ny, nz, f64 ? 24 : 12, f64, stream.size(), secs);
  return 0;
}

template <class Field>
int decompress3d_of(const Args& a, const std::vector<uint8_t>& stream) {
  const auto outputs = three_files(a, "-o");
  int to_stdout = 0;
  for (const auto& o : outputs) to_stdout += o == "-";
  if (to_stdout > 1) fail("only one component can go to stdout", 2);
  const factz::DecompressOptions o = vector_decompress_options(a);  // -x cuda too
  const auto t0 = std::chrono::steady_clock::now();
  constexpr bool f64 = std::is_same_v<Field, factz::VectorField3D64>;
  Field f;
  if constexpr (f64) f = take(factz::decompress3d64(stream, o));
  else f = take(factz::decompress3d(stream, o));
  const double secs = seconds_since(t0);
  // Raw / .npy components through the 3D writer, netCDF / HDF5 variables with the stream's
  // source record (read only for them).
  using T = typename decltype(Field::u)::value_type;
  const auto source = any_variable_output(outputs) ? take(factz::stream_source(stream)) : std::nullopt;
  write_field_outputs<T>(
      outputs, {&f.u, &f.v, &f.w}, {uint64_t(f.nz), uint64_t(f.ny), uint64_t(f.nx)}, source, f.mask, "decompress",
      [&f](const std::string& name, const std::vector<T>& plane) { write_component(name, plane, f.nx, f.ny, f.nz); },
      a.has("--repack"));
  print_decompression(a, f.nx, f.ny, f.nz, f64, double(f.size()) * (f64 ? 24.0 : 12.0), stream.size(), secs);
  return 0;
}

template <class Field>
int cp3d_of(const Args& a) {
  refuse_clobbering(a, {"-i"}, {"--csv"});
  int64_t masked = 0;
  const Field f = read_field3d<Field>(a, "-i", masked, "cp");
  const auto t0 = std::chrono::steady_clock::now();
  const auto cps = take(factz::critical_points(f, exec_of(a)));
  const double secs = seconds_since(t0);
  int64_t counts[factz::kCpType3Count] = {};
  for (const auto& c : cps) ++counts[int(c.type)];
  if (a.has("--csv")) {  // built in memory, written (and checked) as one file
    std::string csv = "tetrahedron,x,y,z,t,mu0,mu1,mu2,mu3,type\n";
    char buf[320];
    for (const auto& c : cps) {
      std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,%lld,%d,%.9g,%.9g,%.9g,%.9g,%s\n", (long long)c.tetrahedron,
                    (long long)c.x, (long long)c.y, (long long)c.z, c.t, c.mu[0], c.mu[1], c.mu[2], c.mu[3],
                    factz::cp_type3_name(c.type));
      csv += buf;
    }
    check(factz::write_bytes(a.get("--csv"), std::vector<uint8_t>(csv.begin(), csv.end())));
  }
  StatsWriter types, s;
  for (int t = 0; t < factz::kCpType3Count; ++t) types.count(factz::cp_type3_name(factz::CpType3(t)), counts[t]);
  s.count("nx", f.nx, In::json).count("ny", f.ny, In::json).count("nz", f.nz, In::json);
  s.count("critical_points", cps.size()).count("masked_vertices", masked);
  s.text("dtype", dtype_text<typename decltype(Field::u)::value_type>(), In::json).json("types", types.object());
  for (int t = 0; t < factz::kCpType3Count; ++t)
    s.count(factz::cp_type3_name(factz::CpType3(t)), counts[t], In::text);
  s.num("cp_seconds", secs, In::json);
  s.print(a.has("--json"), true);
  return 0;
}

template <class Field>
int verify3d_of(const Args& a) {
  int64_t masked_i = 0, masked_d = 0;
  Field3DInfo<typename decltype(Field::u)::value_type> info;
  const Field orig = read_field3d<Field>(a, "-i", masked_i, "verify", false, nullptr, &info);
  // --fill and the original's fill values apply to both; a raw reconstruction takes its shape
  const Field dec = read_field3d<Field>(a, "-d", masked_d, "verify", true, &info);
  const auto c = take(factz::compare(orig, dec, exec_of(a)));
  StatsWriter s;
  s.count("cp_original", c.cp_original).count("cp_decompressed", c.cp_decompressed).count("lost", c.lost);
  s.count("spurious", c.spurious).count("type_changed", c.type_changed).count("mask_mismatch", c.mask_mismatch);
  s.count("violations", c.violations()).count("masked_vertices", c.masked_vertices);
  std::string triple = "[";  // built by appending, as add_comparison does
  for (int k = 0; k < 3; ++k) {
    if (k > 0) triple += ", ";
    triple += json_number(c.max_abs_error[size_t(k)]);
  }
  s.json("max_abs_error", triple + "]");
  s.num("max_abs_error_u", c.max_abs_error[0], In::text).num("max_abs_error_v", c.max_abs_error[1], In::text);
  s.num("max_abs_error_w", c.max_abs_error[2], In::text);
  s.num("rmse", c.rmse).num("nrmse", c.nrmse).num("psnr", c.psnr);
  s.num("value_range", c.value_range, In::json)
      .text("dtype", dtype_text<typename decltype(Field::u)::value_type>(), In::json);
  s.print(a.has("--json"), true);
  return 0;
}

}  // namespace

// Float64 when the inputs say so (common.hpp float64_inputs: '<f8' .npy files, or raw files
// with --dtype f64), or when the stream holds float64 values.

int run_compress3d(const Args& a) {
  three_files(a, "-i");
  if (float64_inputs(a, "-i")) return compress3d_of<factz::VectorField3D64>(a);
  return compress3d_of<factz::VectorField3D>(a);
}

int run_decompress3d(const Args& a, const std::vector<uint8_t>& stream) {
  if (take(factz::stream_dtype3d(stream)) == factz::DType::float64)
    return decompress3d_of<factz::VectorField3D64>(a, stream);
  return decompress3d_of<factz::VectorField3D>(a, stream);
}

int run_cp3d(const Args& a) {
  three_files(a, "-i");
  if (float64_inputs(a, "-i")) return cp3d_of<factz::VectorField3D64>(a);
  return cp3d_of<factz::VectorField3D>(a);
}

int run_verify3d(const Args& a) {
  three_files(a, "-i");
  three_files(a, "-d");
  const bool i64 = float64_inputs(a, "-i"), d64 = float64_inputs(a, "-d");
  if (i64 != d64)
    fail("invalid_argument: verify compares fields of one value type: -i is " +
         std::string(i64 ? "float64" : "float32") + ", -d " + (d64 ? "float64" : "float32"));
  if (i64) return verify3d_of<factz::VectorField3D64>(a);
  return verify3d_of<factz::VectorField3D>(a);
}

}  // namespace factz::cli
