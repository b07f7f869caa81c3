// float64 netCDF and HDF5 variables at the command line (issue 18; docs/usage.md "Your data
// in netCDF or HDF5"): NC_DOUBLE variables and H5T_NATIVE_DOUBLE datasets are compressed as
// float64 fields and written back as NC_DOUBLE, never through float32. The files are made
// here with netCDF-C's own ncgen (from CDL text, doubles printed with 17 digits: exact) and
// h5py; the results are read back with ncdump (headers) and h5dump (the values, as raw
// little-endian bytes), so no check trusts FaCTz's own reader. The fields carry detail below
// float32 resolution (1e-9 sin k on values of about 1 to 30), so a float32 shortcut anywhere
// changes values the tests look at. Skipped, with a message, without netCDF-C or its tools.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "factz/field.hpp"
#include "factz/topology.hpp"
#include "support/cli_process.hpp"
#include "support/netcdf_cli.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

using testing::declaration;
using testing::expect_one_line;
using testing::have_program;
using testing::key_values;
using testing::lines_with;
using testing::Outcome;
using testing::TempDir;

const std::string kCli = FACTZ_CLI_PATH;
const std::string kData = FACTZ_TEST_DATA_DIR;
constexpr int kNx = 36, kNy = 33;  // ncl_storm_t0
constexpr int kLand = 60;          // a 10 x 6 block at t = 1
/// A double fill value that float32 does not hold: float(kFill) != kFill.
constexpr double kFill = -9.99e33;

Outcome factz(const TempDir& dir, const std::string& args) {
  return testing::run_in(dir, testing::shell_quoted(kCli) + " " + args);
}

template <class T>
std::vector<T> read_values(const std::string& path) {
  const std::string bytes = testing::read_text_file(path);
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

#define REQUIRE_NETCDF()                                                                               \
  do {                                                                                                 \
    if (!testing::netcdf_built_in(kCli)) GTEST_SKIP() << "factz was built without netCDF-C (libnetcdf-dev): skipped"; \
    if (!have_program("ncgen") || !have_program("ncdump") || !have_program("h5dump"))                  \
      GTEST_SKIP() << "ncgen / ncdump (netcdf-bin) or h5dump (hdf5-tools) not installed: skipped";     \
  } while (0)

/// Doubles as CDL text: 17 significant digits read back exactly.
std::string numbers(const std::vector<double>& v) {
  std::string s;
  char buf[40];
  for (size_t k = 0; k < v.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%s%.17g", k ? ", " : "", v[k]);
    s += buf;
  }
  return s;
}

/// The storm's u and v at time t, in double: the real t0 field scaled, plus 1e-9 sin k,
/// which float32 cannot hold; at t = 1 a 10 x 6 block of land holds kFill. At t = 2 one
/// vertex holds kFill and one the next double toward zero, which only a float32 comparison
/// would take for the fill value.
struct Storm {
  std::vector<double> u, v;
};
Storm storm_at(int t) {
  const auto u32 = read_values<float>(kData + "/ncl_storm_t0_u_36x33.f32");
  const auto v32 = read_values<float>(kData + "/ncl_storm_t0_v_36x33.f32");
  Storm s;
  for (size_t k = 0; k < u32.size(); ++k) {
    s.u.push_back(double(u32[k]) * (1.0 + 0.1 * t) + 1e-9 * std::sin(double(k) + t));
    s.v.push_back(double(v32[k]) * (1.0 - 0.05 * t) + 1e-9 * std::cos(double(k) * 0.7 + t));
  }
  if (t == 1)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 10; ++x) s.u[size_t(y * kNx + x)] = s.v[size_t(y * kNx + x)] = kFill;
  if (t == 2) {
    s.u[500] = kFill;
    s.u[700] = std::nextafter(kFill, 0.0);
  }
  return s;
}

/// storm64.nc (netCDF-4): time (unlimited, 3 steps), lat and lon with coordinate variables,
/// double U and V with a double _FillValue, a float32 F (for the mixed-type error) and a
/// short S. U's valid range holds the double next to the fill value, which a test puts in it
/// as data.
void make_storm64(const TempDir& dir) {
  std::vector<double> u, v, lat, lon;
  for (int t = 0; t < 3; ++t) {
    const Storm s = storm_at(t);
    u.insert(u.end(), s.u.begin(), s.u.end());
    v.insert(v.end(), s.v.begin(), s.v.end());
  }
  for (int k = 0; k < kNy; ++k) lat.push_back(10.0 + 0.25 * k);
  for (int k = 0; k < kNx; ++k) lon.push_back(100.0 + 0.25 * k);
  std::vector<double> shorts(size_t(kNx * kNy));
  for (size_t k = 0; k < shorts.size(); ++k) shorts[k] = double(k % 100);
  std::ostringstream c;
  c << "netcdf storm64 {\ndimensions:\n  time = UNLIMITED ;\n  lat = " << kNy << " ;\n  lon = " << kNx << " ;\n"
    << "variables:\n"
    << "  double time(time) ;\n    time:units = \"hours since 2000-01-01 00:00:00\" ;\n"
    << "  double lat(lat) ;\n    lat:units = \"degrees_north\" ;\n    lat:standard_name = \"latitude\" ;\n"
    << "  double lon(lon) ;\n    lon:units = \"degrees_east\" ;\n    lon:standard_name = \"longitude\" ;\n"
    << "  double U(time, lat, lon) ;\n    U:_FillValue = -9.99e33 ;\n    U:units = \"m s-1\" ;\n"
    << "    U:long_name = \"eastward wind\" ;\n    U:valid_range = -1.e+34, 1.e+34 ;\n"
    << "  double V(time, lat, lon) ;\n    V:_FillValue = -9.99e33 ;\n    V:units = \"m s-1\" ;\n"
    << "  float F(time, lat, lon) ;\n  short S(lat, lon) ;\n"
    << "\n// global attributes:\n  :title = \"storm in double\" ;\n  :Conventions = \"CF-1.8\" ;\n"
    << "data:\n"
    << "  time = 0, 6, 12 ;\n  lat = " << numbers(lat) << " ;\n  lon = " << numbers(lon) << " ;\n"
    << "  U = " << numbers(u) << " ;\n  V = " << numbers(v) << " ;\n  F = " << numbers(u) << " ;\n"
    << "  S = " << numbers(shorts) << " ;\n}\n";
  std::ofstream(dir / "storm64.cdl") << c.str();
  const Outcome o = testing::run_in(dir, "ncgen -k nc4 -o storm64.nc storm64.cdl");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
}

/// The values of a dataset of an HDF5 (or netCDF-4) file as h5dump writes them: raw
/// little-endian doubles, no fill value substituted.
std::vector<double> h5_doubles(const TempDir& dir, const std::string& file, const std::string& dataset) {
  const Outcome o = testing::run_in(dir, "h5dump -d " + dataset + " -b LE -o values.bin " + file);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  return read_values<double>(dir / "values.bin");
}

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

/// The largest |x' - x| over the vertices that are not land.
double max_error(const std::vector<double>& orig, const std::vector<double>& recon) {
  double worst = 0;
  for (size_t k = 0; k < orig.size(); ++k)
    if (orig[k] != kFill) worst = std::max(worst, std::fabs(recon[k] - orig[k]));
  return worst;
}

// The acceptance test of the float64 part of issue 18: slices of NC_DOUBLE variables are
// compressed as float64 at a bound below float32 resolution and written back as NC_DOUBLE
// with the original's dimensions, attributes, coordinates and exact double fill value.
TEST(Netcdf64, DoubleSlicesComeBackAsDoublesWithinABoundBelowFloat32Resolution) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm64(dir);
  const Storm orig = storm_at(1);
  // The premise: float32 rounding alone would break the bound.
  constexpr double kEb = 1e-8;
  double rounding = 0;
  for (size_t k = 0; k < orig.u.size(); ++k)
    if (orig.u[k] != kFill) rounding = std::max(rounding, std::fabs(double(float(orig.u[k])) - orig.u[k]));
  ASSERT_GT(rounding, 10 * kEb);
  ASSERT_NE(double(float(kFill)), kFill);

  const std::string in = "-i 'storm64.nc:U[time=1]' -i 'storm64.nc:V[time=1]'";
  const Outcome c = factz(dir, "compress " + in + " -z s.fz -M ABS 1e-8 --json");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  for (const std::string want : {"\"dtype\": \"float64\"", "\"masked_vertices\": 60", "\"nx\": 36", "\"ny\": 33"})
    EXPECT_NE(c.out.find(want), std::string::npos) << want << "\n" << c.out;
  EXPECT_EQ(c.err.find("warning"), std::string::npos) << c.err;

  const Outcome info = factz(dir, "info -z s.fz");
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  for (const char* want : {"float64", "netCDF-4 file storm64.nc", "u: U[time=1], float64",
                           "dimensions time=3 (unlimited), lat=33, lon=36", "units = \"m s-1\"",
                           ":Conventions = \"CF-1.8\""})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;

  const Outcome d = factz(dir, "decompress -z s.fz -o out.nc:U -o out.nc:V");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  const Outcome h0 = testing::run_in(dir, "ncdump -h storm64.nc"), h1 = testing::run_in(dir, "ncdump -h out.nc");
  ASSERT_EQ(h1.exit_code, 0) << h1.describe();
  EXPECT_EQ(lines_with(h1.out, "lat = "), lines_with(h0.out, "lat = ")) << h1.out;
  EXPECT_EQ(lines_with(h1.out, "lon = "), lines_with(h0.out, "lon = ")) << h1.out;
  EXPECT_EQ(lines_with(h1.out, "time = "), std::vector<std::string>{"\ttime = UNLIMITED ; // (1 currently)"}) << h1.out;
  for (const char* var : {"U", "V", "time", "lat", "lon"}) {
    const auto want = declaration(h0.out, var);
    ASSERT_FALSE(want.empty()) << var << "\n" << h0.out;
    EXPECT_EQ(declaration(h1.out, var), want) << var << "\n" << h1.out;
  }
  EXPECT_NE(h1.out.find("double U(time, lat, lon)"), std::string::npos) << h1.out;
  // The fill value attribute is the double itself (17 digits), not its float32 rounding.
  const Outcome exact = testing::run_in(dir, "ncdump -h -p 9,17 out.nc");
  EXPECT_NE(exact.out.find("U:_FillValue = -9.9899999999999995e+33 ;"), std::string::npos) << exact.out;
  EXPECT_EQ(lines_with(h1.out, "\t\t:"), lines_with(h0.out, "\t\t:")) << h1.out;

  // The values, bit for bit as stored: within the bound in double, the land the double fill.
  const auto u = h5_doubles(dir, "out.nc", "/U"), v = h5_doubles(dir, "out.nc", "/V");
  ASSERT_EQ(u.size(), size_t(kNx * kNy));
  ASSERT_EQ(v.size(), size_t(kNx * kNy));
  int land = 0, below_float = 0;
  for (size_t k = 0; k < u.size(); ++k) {
    if (orig.u[k] == kFill) {
      ++land;
      EXPECT_TRUE(same_bits(u[k], kFill) && same_bits(v[k], kFill)) << "vertex " << k << ": " << u[k];
      continue;
    }
    below_float += double(float(u[k])) != u[k];
  }
  EXPECT_EQ(land, kLand);
  EXPECT_LE(max_error(orig.u, u), kEb);
  EXPECT_LE(max_error(orig.v, v), kEb);
  EXPECT_GT(below_float, 100) << "the reconstruction is not float32 values";
  EXPECT_EQ(h5_doubles(dir, "out.nc", "/time"), std::vector<double>{6.0});
  const auto lat = h5_doubles(dir, "out.nc", "/lat");
  ASSERT_EQ(lat.size(), size_t(kNy));
  EXPECT_EQ(lat[3], 10.75);

  // The critical points are kept, by factz verify (reading both files) ...
  const Outcome vr = factz(dir, "verify " + in + " -d out.nc:U -d out.nc:V --json");
  ASSERT_EQ(vr.exit_code, 0) << vr.describe();
  for (const std::string want : {"\"violations\": 0", "\"mask_mismatch\": 0", "\"masked_vertices\": 60",
                                 "\"dtype\": \"float64\""})
    EXPECT_NE(vr.out.find(want), std::string::npos) << want << "\n" << vr.out;
  // ... and by the library on the doubles read here.
  VectorField2D64 a{kNx, kNy, orig.u, orig.v}, b{kNx, kNy, u, v};
  EXPECT_EQ(mark_missing(a, {kFill, kFill}), kLand);
  EXPECT_EQ(mark_missing(b, {kFill, kFill}), kLand);
  const auto cmp = compare(a, b);
  ASSERT_TRUE(cmp.ok()) << cmp.status().to_string();
  EXPECT_GT(cmp->cp_original, 0);
  EXPECT_EQ(cmp->violations(), 0);

  // A raw float64 reconstruction compares too: the original's shape and fill value apply.
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o u.f64 -o v.f64").exit_code, 0);
  EXPECT_EQ(read_values<double>(dir / "u.f64"), u);
  const Outcome raw = factz(dir, "verify " + in + " -d u.f64 -d v.f64 --dtype f64");
  ASSERT_EQ(raw.exit_code, 0) << raw.describe();
  EXPECT_EQ(key_values(raw.out)["violations"], "0") << raw.out;
  EXPECT_EQ(key_values(raw.out)["mask_mismatch"], "0") << raw.out;
}

// A coarse bound moves the values a lot: the critical points are still kept (verify reads
// the NC_DOUBLE output), and cp counts the same ones on the original and the output.
TEST(Netcdf64, CriticalPointsAreKeptAtACoarseBound) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm64(dir);
  for (const std::string mode : {"speculative", "block"}) {
    SCOPED_TRACE(mode);
    const std::string in = "-i 'storm64.nc:U[time=1]' -i 'storm64.nc:V[time=1]'";
    ASSERT_EQ(factz(dir, "compress " + in + " -z c.fz -M REL 1e-2 --mode " + mode).exit_code, 0);
    ASSERT_EQ(factz(dir, "decompress --replace -z c.fz -o c.nc:U -o c.nc:V").exit_code, 0);
    const Outcome vr = factz(dir, "verify " + in + " -d c.nc:U -d c.nc:V");
    ASSERT_EQ(vr.exit_code, 0) << vr.describe();
    auto kv = key_values(vr.out);
    EXPECT_EQ(kv["violations"], "0") << vr.out;
    EXPECT_EQ(kv["mask_mismatch"], "0") << vr.out;
    EXPECT_GT(std::stoi(kv["cp_original"]), 0) << vr.out;
    EXPECT_EQ(kv["cp_original"], kv["cp_decompressed"]) << vr.out;
    const Outcome cp0 = factz(dir, "cp " + in + " --json"), cp1 = factz(dir, "cp -i c.nc:U -i c.nc:V --json");
    ASSERT_EQ(cp0.exit_code, 0) << cp0.describe();
    ASSERT_EQ(cp1.exit_code, 0) << cp1.describe();
    EXPECT_EQ(cp0.out, cp1.out);
    EXPECT_NE(cp0.out.find("\"dtype\": \"float64\""), std::string::npos) << cp0.out;
  }
}

// A double fill value is compared as a double: the next double toward zero is data.
TEST(Netcdf64, FillValuesAreComparedAsDoubles) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm64(dir);
  const std::string in = "cp -i 'storm64.nc:U[time=2]' -i 'storm64.nc:V[time=2]'";
  const Outcome o = factz(dir, in);
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(key_values(o.err + o.out)["masked_vertices"], "1") << o.describe();
  // --fill on the command line replaces the file's, as a double too.
  EXPECT_EQ(key_values(factz(dir, in + " --fill nan").out)["masked_vertices"], "0");
  EXPECT_EQ(key_values(factz(dir, in + " --fill-u -9.99e33").out)["masked_vertices"], "1");
  // -2 is optional, and checked.
  EXPECT_EQ(factz(dir, in + " -2 36 33").exit_code, 0);
  expect_one_line(factz(dir, in + " -2 36 34"), 1, {"storm64.nc:U[time=2] is 36 x 33 (nx x ny), but -2 says 36 x 34"});
}

// HDF5 datasets of doubles (h5py), read with the HDF5 library: the dataset's own fill value
// (no _FillValue attribute) as a double, dimension scales, written back to an .h5 output.
TEST(Netcdf64, Hdf5DoubleDatasetsRoundTrip) {
  REQUIRE_NETCDF();
  if (!testing::hdf5_built_in(kCli)) GTEST_SKIP() << "factz was built without the HDF5 library: skipped";
  const std::string python = testing::python_with_h5py();
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py and numpy to write the HDF5 file: skipped";
  TempDir dir;
  std::ofstream(dir / "make.py")
      << "import h5py, numpy as np\n"
      << "k = np.arange(41 * 41).reshape(41, 41)\n"
      << "u = np.fromfile('" << kData << "/metno_arctic20_cur_u_41x41.f32', '<f4').reshape(41, 41).astype('<f8')"
      << " + 1e-9 * np.sin(k)\n"
      << "v = np.fromfile('" << kData << "/metno_arctic20_cur_v_41x41.f32', '<f4').reshape(41, 41).astype('<f8')"
      << " + 1e-9 * np.cos(k)\n"
      << "fill = np.float64(1.0000000000000002e20)\n"  // not a float32 value
      << "u[:5, :7] = fill; v[:5, :7] = fill\n"
      << "u[20, 20] = np.nextafter(fill, 0)\n"  // data, though float32 cannot tell it from the fill
      << "u.tofile('u.orig'); v.tofile('v.orig')\n"
      << "with h5py.File('cur64.h5', 'w') as f:\n"
      << "    f.attrs['title'] = 'arctic currents in double'\n"
      << "    g = f.create_group('ocean')\n"
      << "    x = g.create_dataset('x', data=np.arange(41.0) * 20); x.make_scale('x')\n"
      << "    x.attrs['units'] = 'km'\n"
      << "    y = g.create_dataset('y', data=np.arange(41.0) * 20); y.make_scale('y')\n"
      << "    for name, a in (('u', u), ('v', v)):\n"
      << "        d = g.create_dataset(name, data=a, fillvalue=fill)\n"
      << "        d.attrs['units'] = 'm/s'\n"
      << "        d.dims[0].attach_scale(y); d.dims[1].attach_scale(x)\n"
      << "    f.create_dataset('counts', data=np.zeros((4, 4), dtype='i4'))\n"
      << "    f.create_dataset('single', data=u.astype('<f4'))\n";
  const Outcome made = testing::run_in(dir, python + " make.py");
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const auto u0 = read_values<double>(dir / "u.orig"), v0 = read_values<double>(dir / "v.orig");
  const double fill = 1.0000000000000002e20;
  ASSERT_NE(double(float(fill)), fill);
  const std::string in = "-i cur64.h5:/ocean/u -i cur64.h5:/ocean/v";
  const Outcome c = factz(dir, "compress " + in + " -z c.fz -M ABS 1e-9 --json");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_NE(c.out.find("\"masked_vertices\": 35"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"dtype\": \"float64\""), std::string::npos) << c.out;
  const Outcome info = factz(dir, "info -z c.fz");
  for (const char* want :
       {"HDF5 file cur64.h5", "u: /ocean/u, float64, dimensions y=41, x=41", "coordinate x (float64"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  ASSERT_EQ(factz(dir, "decompress -z c.fz -o out.h5:/ocean/u -o out.h5:/ocean/v").exit_code, 0);
  const Outcome h = testing::run_in(dir, "ncdump -h -p 9,17 out.h5");
  ASSERT_EQ(h.exit_code, 0) << h.describe();
  for (const char* want : {"double u(y, x)", "u:units = \"m/s\"", "u:_FillValue = 1.0000000000000002e+20 ;",
                           "double x(x)", "x:units = \"km\"", ":title = \"arctic currents in double\"",
                           "group: ocean"})
    EXPECT_NE(h.out.find(want), std::string::npos) << want << "\n" << h.out;
  const auto u = h5_doubles(dir, "out.h5", "/ocean/u"), v = h5_doubles(dir, "out.h5", "/ocean/v");
  ASSERT_EQ(u.size(), u0.size());
  ASSERT_EQ(v.size(), v0.size());
  int land = 0;
  double worst = 0;
  for (size_t k = 0; k < u.size(); ++k) {
    if (same_bits(u0[k], fill)) {
      ++land;
      EXPECT_TRUE(same_bits(u[k], fill) && same_bits(v[k], fill)) << "vertex " << k;
      continue;
    }
    worst = std::max({worst, std::fabs(u[k] - u0[k]), std::fabs(v[k] - v0[k])});
  }
  EXPECT_EQ(land, 35);
  EXPECT_LE(worst, 1e-9);
  EXPECT_EQ(u[20 * 41 + 20], u0[20 * 41 + 20]) << "a value near 1e20 is stored exactly";
  const Outcome vr = factz(dir, "verify " + in + " -d out.h5:/ocean/u -d out.h5:/ocean/v");
  ASSERT_EQ(vr.exit_code, 0) << vr.describe();
  EXPECT_EQ(key_values(vr.out)["violations"], "0") << vr.out;
  EXPECT_EQ(key_values(vr.out)["mask_mismatch"], "0") << vr.out;
  EXPECT_EQ(key_values(vr.out)["masked_vertices"], "35") << vr.out;
  expect_one_line(factz(dir, "cp -i cur64.h5:/ocean/u -i cur64.h5:/single"), 1,
                  {"u cur64.h5:/ocean/u is float64 but v cur64.h5:/single is float32", "same type"});
  expect_one_line(factz(dir, "cp -i cur64.h5:/ocean/w -i cur64.h5:/ocean/v"), 1,
                  {"cur64.h5 has no dataset /ocean/w", "/ocean/u", "/counts"});
  expect_one_line(factz(dir, "cp -i cur64.h5:/counts -i cur64.h5:/ocean/v"), 1,
                  {"cur64.h5:/counts holds integers (int32)"});
}

TEST(Netcdf64, ErrorsNameTheFilesAndTheVariables) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm64(dir);
  const std::string u1 = "-i 'storm64.nc:U[time=1]'", v1 = " -i 'storm64.nc:V[time=1]'";
  // u float64 and v float32 (either order): one line naming both.
  expect_one_line(factz(dir, "cp " + u1 + " -i 'storm64.nc:F[time=1]'"), 1,
                  {"u storm64.nc:U[time=1] is float64 but v storm64.nc:F[time=1] is float32", "same type"});
  expect_one_line(factz(dir, "compress -i 'storm64.nc:F[time=1]'" + v1 + " -z m.fz"), 1,
                  {"u storm64.nc:F[time=1] is float32 but v storm64.nc:V[time=1] is float64"});
  EXPECT_FALSE(std::ifstream(dir / "m.fz").good()) << "no stream written";
  expect_one_line(factz(dir, "cp -i 'storm64.nc:X[time=1]'" + v1), 1,
                  {"storm64.nc has no variable X", "its variables: time, lat, lon, U, V, F, S"});
  expect_one_line(factz(dir, "cp " + u1 + " -i storm64.nc:S"), 1, {"storm64.nc:S holds integers (short)"});
  expect_one_line(factz(dir, "cp -i storm64.nc:S" + v1), 1, {"storm64.nc:S holds integers (short)"});
  expect_one_line(factz(dir, "cp " + u1 + v1 + " --dtype f32"), 1, {"--dtype f32", "storm64.nc:U[time=1]"});
  std::ofstream(dir / "v.f32", std::ios::binary) << std::string(kNx * kNy * 4, '\0');
  expect_one_line(factz(dir, "cp -2 36 33 " + u1 + " -i v.f32"), 1,
                  {"storm64.nc:U[time=1]: float64 is not float32 like the raw file v.f32", "--dtype f64"});
  // verify needs a float64 reconstruction of a float64 original.
  ASSERT_EQ(factz(dir, "compress -i 'storm64.nc:F[time=0]' -i 'storm64.nc:F[time=0]' -z f.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z f.fz -o f.nc:U -o f.nc:V").exit_code, 0);
  expect_one_line(factz(dir, "verify " + u1 + v1 + " -d f.nc:U -d f.nc:V"), 1, {"float64 reconstruction"});
}

// A float64 scalar variable: read as doubles with its own shape and double fill value,
// compressed in both scalar modes, written back as NC_DOUBLE with the fill declared.
TEST(Netcdf64, ScalarDoubleVariablesInAndOut) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm64(dir);
  const Storm orig = storm_at(1);
  const std::string in = "-i 'storm64.nc:U[time=1]'";
  for (const std::string mode : {"none", "contour-tree"}) {
    SCOPED_TRACE(mode);
    const Outcome c = factz(dir, "compress --scalar " + in + " -z s.fz -M ABS 1e-8 --mode " + mode + " --json");
    ASSERT_EQ(c.exit_code, 0) << c.describe();
    EXPECT_EQ(c.err.find("warning"), std::string::npos) << c.err;
    const Outcome info = factz(dir, "info -z s.fz --json");
    ASSERT_EQ(info.exit_code, 0) << info.describe();
    EXPECT_NE(info.out.find("\"dtype\": \"float64\""), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("\"nx\": 36"), std::string::npos) << info.out;
    const Outcome d = factz(dir, "decompress --replace -z s.fz -o out.nc:U");
    ASSERT_EQ(d.exit_code, 0) << d.describe();
    const Outcome h = testing::run_in(dir, "ncdump -h out.nc");
    ASSERT_EQ(h.exit_code, 0) << h.describe();
    const auto decl = declaration(h.out, "U");
    ASSERT_FALSE(decl.empty()) << h.out;
    EXPECT_NE(decl[0].find("double U("), std::string::npos) << h.out;
    EXPECT_EQ(lines_with(h.out, "U:_FillValue = -9.99e+33").size(), 1u) << h.out;
    const std::vector<double> back = h5_doubles(dir, "out.nc", "U");
    ASSERT_EQ(back.size(), orig.u.size());
    int land = 0;
    for (size_t k = 0; k < back.size(); ++k)
      if (orig.u[k] == kFill) land += same_bits(back[k], kFill);
    EXPECT_EQ(land, kLand) << "the land keeps the double fill value, bit for bit";
    EXPECT_LE(max_error(orig.u, back), 1e-8) << "a bound below float32 resolution holds";
    const Outcome v = factz(dir, "verify " + in + " -d out.nc:U --json");
    EXPECT_EQ(v.exit_code, 0) << v.describe();
  }
}

// Without a declared fill value, a float64 field's value that looks like one gets the
// warning, compared and printed as a double (NC_FILL_DOUBLE, 1e20, a float fill widened).
TEST(Netcdf64, UndeclaredDoubleFillValuesAreReported) {
  TempDir dir;
  const Storm s = storm_at(0);
  for (const double fill : {9.969209968386869e36, 1e20, double(1e20f)}) {
    SCOPED_TRACE(fill);
    std::vector<double> u = s.u;
    for (int k : {3, 40, 41}) u[size_t(k)] = fill;
    std::ofstream(dir / "u.f64", std::ios::binary).write(reinterpret_cast<const char*>(u.data()), std::streamsize(u.size() * 8));
    std::ofstream(dir / "v.f64", std::ios::binary)
        .write(reinterpret_cast<const char*>(s.v.data()), std::streamsize(s.v.size() * 8));
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", fill);
    std::string shortest = text;
    for (int digits = 6; digits <= 17; ++digits) {
      std::snprintf(text, sizeof text, "%.*g", digits, fill);
      if (std::strtod(text, nullptr) == fill) {
        shortest = text;
        break;
      }
    }
    const Outcome c = factz(dir, "compress -2 36 33 --dtype f64 -i u.f64 -i v.f64 -z w.fz");
    ASSERT_EQ(c.exit_code, 0) << c.describe();
    EXPECT_NE(c.err.find("warning: 3 value(s) equal " + shortest + ","), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("--fill " + shortest), std::string::npos) << c.err;
    // Declared, it is missing data and the warning is gone.
    const Outcome m = factz(dir, "compress -2 36 33 --dtype f64 -i u.f64 -i v.f64 -z w.fz --fill " + shortest + " --json");
    ASSERT_EQ(m.exit_code, 0) << m.describe();
    EXPECT_EQ(m.err.find("warning"), std::string::npos) << m.err;
    EXPECT_NE(m.out.find("\"masked_vertices\": 3"), std::string::npos) << m.out;
  }
}

// factz info of a float64 multi-block file: its type, and 16 raw bytes per vertex.
TEST(Netcdf64, InfoOfAFloat64MultiBlockFile) {
  TempDir dir;
  const Storm s = storm_at(0);
  std::ofstream(dir / "u.f64", std::ios::binary).write(reinterpret_cast<const char*>(s.u.data()), std::streamsize(s.u.size() * 8));
  std::ofstream(dir / "v.f64", std::ios::binary).write(reinterpret_cast<const char*>(s.v.data()), std::streamsize(s.v.size() * 8));
  const Outcome c = factz(dir, "compress -2 36 33 --dtype f64 -i u.f64 -i v.f64 -z m.fzmb --blocks 2 2 -M ABS 1e-9");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const Outcome j = factz(dir, "info -z m.fzmb --json");
  ASSERT_EQ(j.exit_code, 0) << j.describe();
  EXPECT_NE(j.out.find("\"dtype\": \"float64\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"raw_bytes\": 19008"), std::string::npos) << j.out;  // 36 * 33 * 16
  EXPECT_NE(j.out.find("\"eb_abs\": 1.0000000000000001e-09"), std::string::npos) << "the f64 bound, not its float rounding\n" << j.out;
  const Outcome t = factz(dir, "info -z m.fzmb");
  ASSERT_EQ(t.exit_code, 0) << t.describe();
  EXPECT_NE(t.out.find("nx=36 ny=33, float64"), std::string::npos) << t.out;
}

}  // namespace
}  // namespace factz
