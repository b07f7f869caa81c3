// netCDF and HDF5 variables at the command line (issue 18; docs/usage.md "Your data in
// netCDF or HDF5"): files are made here from the bundled real fields with netCDF-C's own
// ncgen (netCDF-4 and netCDF-3 classic, from CDL text) and with h5py (HDF5), never with
// FaCTz's writer; results are read back with ncdump, so the checks do not trust FaCTz's own
// reader. Every test is skipped, with a message, when factz was built without netCDF.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"
#include "support/cli_process.hpp"
#include "support/netcdf_cli.hpp"
#include "support/npy_file.hpp"
#include "support/source_records.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

namespace fs = std::filesystem;
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
constexpr float kFill = 1e20f;

Outcome factz(const TempDir& dir, const std::string& args) {
  return testing::run_in(dir, testing::shell_quoted(kCli) + " " + args);
}

std::vector<float> read_f32(const std::string& path) {
  const std::string bytes = testing::read_text_file(path);
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

#define REQUIRE_NETCDF()                                                                               \
  do {                                                                                                 \
    if (!testing::netcdf_built_in(kCli)) GTEST_SKIP() << "factz was built without netCDF-C (libnetcdf-dev): skipped"; \
    if (!have_program("ncgen") || !have_program("ncdump"))                                             \
      GTEST_SKIP() << "ncgen / ncdump (netcdf-bin) not installed: skipped";                            \
  } while (0)

std::string numbers(const std::vector<float>& v) {
  std::string s;
  char buf[32];
  for (size_t k = 0; k < v.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%s%.9g", k ? ", " : "", double(v[k]));  // %.9g: a float exactly
    s += buf;
  }
  return s;
}

/// The storm's u and v at time t of the test file: scaled copies of the real t0 field; at
/// t = 1 a 10 x 6 block of land (the fill value) in the corner.
struct Storm {
  std::vector<float> u, v;
};
Storm storm_at(int t) {
  Storm s{read_f32(kData + "/ncl_storm_t0_u_36x33.f32"), read_f32(kData + "/ncl_storm_t0_v_36x33.f32")};
  for (auto& x : s.u) x *= 1.0f + 0.1f * float(t);
  for (auto& x : s.v) x *= 1.0f - 0.05f * float(t);
  if (t == 1)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 10; ++x) s.u[size_t(y * kNx + x)] = s.v[size_t(y * kNx + x)] = kFill;
  return s;
}
constexpr int kLand = 60;

/// CDL of the test file: time (unlimited, 3 steps), lat and lon with coordinate variables,
/// U and V with _FillValue, units and long_name, global attributes, and the variables the
/// error cases need.
std::string storm_cdl() {
  std::vector<float> u, v, lat, lon;
  for (int t = 0; t < 3; ++t) {
    const Storm s = storm_at(t);
    u.insert(u.end(), s.u.begin(), s.u.end());
    v.insert(v.end(), s.v.begin(), s.v.end());
  }
  for (int k = 0; k < kNy; ++k) lat.push_back(10.0f + 0.5f * float(k));
  for (int k = 0; k < kNx; ++k) lon.push_back(100.0f + 0.5f * float(k));
  const std::vector<float> w = read_f32(kData + "/metno_arctic20_cur_u_41x41.f32");
  std::vector<float> shorts(static_cast<size_t>(kNx * kNy)), plain(static_cast<size_t>(kNx));
  for (size_t k = 0; k < shorts.size(); ++k) shorts[k] = float(k % 100);
  for (size_t k = 0; k < plain.size(); ++k) plain[k] = float(k);
  std::ostringstream c;
  c << "netcdf storm {\ndimensions:\n  time = UNLIMITED ;\n  lat = " << kNy << " ;\n  lon = " << kNx
    << " ;\n  y2 = 41 ;\n  x2 = 41 ;\n  nchar = 4 ;\n"
    << "variables:\n"
    << "  double time(time) ;\n    time:units = \"hours since 2000-01-01 00:00:00\" ;\n"
    << "    time:standard_name = \"time\" ;\n"
    << "  float lat(lat) ;\n    lat:units = \"degrees_north\" ;\n    lat:standard_name = \"latitude\" ;\n"
    << "  float lon(lon) ;\n    lon:units = \"degrees_east\" ;\n    lon:standard_name = \"longitude\" ;\n"
    << "  float U(time, lat, lon) ;\n    U:_FillValue = 1e20f ;\n    U:units = \"m s-1\" ;\n"
    << "    U:long_name = \"eastward wind\" ;\n    U:valid_range = -100.f, 100.f ;\n"
    << "  float V(time, lat, lon) ;\n    V:_FillValue = 1e20f ;\n    V:units = \"m s-1\" ;\n"
    << "    V:long_name = \"northward wind\" ;\n"
    << "  short S(lat, lon) ;\n  double D(lat, lon) ;\n  char C(lat, nchar) ;\n  float one(lon) ;\n"
    << "  float W(y2, x2) ;\n"
    << "\n// global attributes:\n  :title = \"storm test\" ;\n  :Conventions = \"CF-1.8\" ;\n"
    << "data:\n"
    << "  time = 0, 6, 12 ;\n  lat = " << numbers(lat) << " ;\n  lon = " << numbers(lon) << " ;\n"
    << "  U = " << numbers(u) << " ;\n  V = " << numbers(v) << " ;\n  S = " << numbers(shorts) << " ;\n"
    << "  D = " << numbers(storm_at(0).u) << " ;\n  one = " << numbers(plain) << " ;\n  W = " << numbers(w) << " ;\n}\n";
  return c.str();
}

/// storm.nc (netCDF-4) and, with `kind` "classic", storm3.nc in `dir`.
void make_storm(const TempDir& dir, const std::string& kind = "nc4", const std::string& name = "storm.nc") {
  std::ofstream(dir / "storm.cdl") << storm_cdl();
  const Outcome o = testing::run_in(dir, "ncgen -k " + kind + " -o " + name + " storm.cdl");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
}

/// The values of `var` as `ncdump -v var -p 9` prints them; NaN stands for '_' (a fill).
std::vector<double> dumped_values(const TempDir& dir, const std::string& file, const std::string& var) {
  const Outcome o = testing::run_in(dir, "ncdump -p 9,17 -v " + var + " " + file);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  const size_t data = o.out.find("data:");
  const size_t at = o.out.find("\n " + var + " =", data);
  const size_t end = o.out.find(';', at);
  std::vector<double> values;
  if (data == std::string::npos || at == std::string::npos || end == std::string::npos) return values;
  std::string body = o.out.substr(at + var.size() + 4, end - at - var.size() - 4);
  std::replace(body.begin(), body.end(), ',', ' ');
  std::istringstream in(body);
  std::string token;
  while (in >> token) values.push_back(token == "_" ? std::nan("") : std::stod(token));
  return values;
}

// ---- The workflow of docs/usage.md ----------------------------------------------------------

TEST(Netcdf, VersionSaysWhatIsBuiltIn) {
  TempDir dir;
  const Outcome o = factz(dir, "--version");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(o.out.find("netCDF-C") != std::string::npos || o.out.find("no netCDF") != std::string::npos) << o.out;
  // The newest version this build writes (format/container.hpp kFormatVersion).
  EXPECT_NE(o.out.find("stream format v2 to v" + std::to_string(detail::kFormatVersion) + ";"), std::string::npos)
      << o.out;
}

// The acceptance test of issue 18: slices of a netCDF-4 file with a time dimension, a fill
// value and coordinate variables, compressed and written back to netCDF.
TEST(Netcdf, SlicesComeBackWithTheirDimensionsAttributesAndCoordinates) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm(dir);
  const double eb = 0.05;
  const Outcome c = factz(dir, "compress -i 'storm.nc:U[time=1]' -i 'storm.nc:V[time=1]' -z s.fz -M ABS 0.05 --json");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_NE(c.out.find("\"masked_vertices\": " + std::to_string(kLand)), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"nx\": 36"), std::string::npos) << c.out;
  EXPECT_EQ(c.err.find("warning"), std::string::npos) << "_FillValue is declared by the file: " << c.err;

  const Outcome info = factz(dir, "info -z s.fz");
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  // Version 9: the default mode, speculative, names its predictor and segments its codes (4
  // otherwise, for the source).
  for (const char* want : {"format version 9", "source", "netCDF-4 file storm.nc", "u: U[time=1], float32",
                           "dimensions time=3 (unlimited), lat=33, lon=36", "units = \"m s-1\"",
                           "coordinate time (float64, at index 1: 6", ":Conventions = \"CF-1.8\""})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;

  const Outcome d = factz(dir, "decompress -z s.fz -o out.nc:U -o out.nc:V");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  const Outcome h0 = testing::run_in(dir, "ncdump -h storm.nc"), h1 = testing::run_in(dir, "ncdump -h out.nc");
  ASSERT_EQ(h0.exit_code, 0) << h0.describe();
  ASSERT_EQ(h1.exit_code, 0) << h1.describe();
  // The same dimensions (the sliced time keeps its name and unlimited kind, with one step) ...
  EXPECT_EQ(lines_with(h1.out, "lat = "), lines_with(h0.out, "lat = ")) << h1.out;
  EXPECT_EQ(lines_with(h1.out, "lon = "), lines_with(h0.out, "lon = ")) << h1.out;
  EXPECT_EQ(lines_with(h1.out, "time = "), std::vector<std::string>{"\ttime = UNLIMITED ; // (1 currently)"}) << h1.out;
  // ... the same declarations and attributes of U, V and the coordinate variables, and the
  // global attributes.
  for (const char* var : {"U", "V", "time", "lat", "lon"}) {
    const auto want = declaration(h0.out, var);
    ASSERT_FALSE(want.empty()) << var << "\n" << h0.out;
    EXPECT_EQ(declaration(h1.out, var), want) << var << "\n" << h1.out;
  }
  EXPECT_EQ(lines_with(h1.out, "\t\t:"), lines_with(h0.out, "\t\t:")) << h1.out;
  EXPECT_TRUE(declaration(h1.out, "S").empty()) << "only the variables written and their coordinates: " << h1.out;

  // The values, as ncdump reads them: the land is the fill value ('_'), the rest within eb.
  const Storm orig = storm_at(1);
  const auto u = dumped_values(dir, "out.nc", "U"), v = dumped_values(dir, "out.nc", "V");
  ASSERT_EQ(u.size(), size_t(kNx * kNy));
  ASSERT_EQ(v.size(), size_t(kNx * kNy));
  int land = 0;
  for (size_t k = 0; k < u.size(); ++k) {
    if (orig.u[k] == kFill) {
      ++land;
      EXPECT_TRUE(std::isnan(u[k]) && std::isnan(v[k])) << "vertex " << k;
      continue;
    }
    EXPECT_LE(std::fabs(u[k] - double(orig.u[k])), eb) << "vertex " << k;
    EXPECT_LE(std::fabs(v[k] - double(orig.v[k])), eb) << "vertex " << k;
  }
  EXPECT_EQ(land, kLand);
  const auto time = dumped_values(dir, "out.nc", "time"), lat = dumped_values(dir, "out.nc", "lat");
  EXPECT_EQ(time, std::vector<double>{6.0});
  ASSERT_EQ(lat.size(), size_t(kNy));
  EXPECT_EQ(lat[3], 11.5);

  // The critical points are kept, on the same mesh (the land outside it).
  const Outcome vr = factz(dir, "verify -i 'storm.nc:U[time=1]' -i 'storm.nc:V[time=1]' -d out.nc:U -d out.nc:V");
  ASSERT_EQ(vr.exit_code, 0) << vr.describe();
  auto kv = key_values(vr.out);
  EXPECT_EQ(kv["violations"], "0") << vr.out;
  EXPECT_EQ(kv["mask_mismatch"], "0") << vr.out;
  EXPECT_EQ(kv["masked_vertices"], std::to_string(kLand)) << vr.out;
  EXPECT_GT(std::stoi(kv["cp_original"]), 0) << vr.out;
  EXPECT_LE(std::stod(kv["max_abs_error_u"]), eb) << vr.out;
  // A raw reconstruction compares too: its shape and fill value are the original's.
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o u.f32 -o v.f32").exit_code, 0);
  const Outcome raw = factz(dir, "verify -i 'storm.nc:U[1,:,:]' -i 'storm.nc:V[1,:,:]' -d u.f32 -d v.f32");
  ASSERT_EQ(raw.exit_code, 0) << raw.describe();
  EXPECT_EQ(key_values(raw.out)["violations"], "0") << raw.out;
  EXPECT_EQ(key_values(raw.out)["mask_mismatch"], "0") << raw.out;
}

TEST(Netcdf, AClassicFileAndAPositionalSliceGiveTheSameField) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm(dir);
  make_storm(dir, "classic", "storm3.nc");
  ASSERT_EQ(testing::run_in(dir, "ncdump -k storm3.nc").out, "classic\n");
  ASSERT_EQ(factz(dir, "compress -i 'storm.nc:U[time=2]' -i 'storm.nc:V[time=2]' -z a.fz --mode block").exit_code, 0);
  const Outcome c = factz(dir, "compress -i 'storm3.nc:U[2,:,:]' -i 'storm3.nc:V[-1,:,:]' -z b.fz --mode block");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_NE(factz(dir, "info -z b.fz").out.find("netCDF-3 classic file storm3.nc"), std::string::npos);
  ASSERT_EQ(factz(dir, "decompress -z a.fz -o a_u.f32 -o a_v.f32").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z b.fz -o b_u.f32 -o b_v.f32").exit_code, 0);
  EXPECT_EQ(testing::read_text_file(dir / "a_u.f32"), testing::read_text_file(dir / "b_u.f32"));
  EXPECT_EQ(testing::read_text_file(dir / "a_v.f32"), testing::read_text_file(dir / "b_v.f32"));
  // -2 is checked when given.
  expect_one_line(factz(dir, "cp -2 36 34 -i 'storm3.nc:U[0,:,:]' -i 'storm3.nc:V[0,:,:]'"), 1,
                  {"storm3.nc:U[0,:,:] is 36 x 33 (nx x ny), but -2 says 36 x 34"});
  EXPECT_EQ(factz(dir, "cp -2 36 33 -i 'storm3.nc:U[0,:,:]' -i 'storm3.nc:V[0,:,:]'").exit_code, 0);
}

// HDF5 datasets through the HDF5 library: a group path, dimension scales with coordinates,
// and the dataset's user-defined fill value (h5py fillvalue=) as the declared fill value.
TEST(Netcdf, Hdf5DatasetsKeepTheirScalesAndFillValue) {
  REQUIRE_NETCDF();
  if (!testing::hdf5_built_in(kCli)) GTEST_SKIP() << "factz was built without the HDF5 library: skipped";
  const std::string python = testing::python_with_h5py();
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py and numpy to write the HDF5 file: skipped";
  TempDir dir;
  std::ofstream(dir / "make.py") << "import h5py, numpy as np\n"
                                 << "u = np.fromfile('" << kData << "/metno_arctic20_cur_u_41x41.f32', '<f4').reshape(41, 41)\n"
                                 << "v = np.fromfile('" << kData << "/metno_arctic20_cur_v_41x41.f32', '<f4').reshape(41, 41)\n"
                                 << "u[:5, :7] = -9999; v[:5, :7] = -9999\n"
                                 << "with h5py.File('cur.h5', 'w') as f:\n"
                                 << "    f.attrs['title'] = 'arctic currents'\n"
                                 << "    g = f.create_group('ocean/surface')\n"
                                 << "    x = g.create_dataset('x', data=np.arange(41.0) * 20); x.make_scale('x')\n"
                                 << "    x.attrs['units'] = 'km'\n"
                                 << "    y = g.create_dataset('y', data=np.arange(41.0) * 20); y.make_scale('y')\n"
                                 << "    for name, a in (('u', u), ('v', v)):\n"
                                 << "        d = g.create_dataset(name, data=a, fillvalue=np.float32(-9999))\n"
                                 << "        d.attrs['units'] = 'm/s'\n"
                                 << "        d.dims[0].attach_scale(y); d.dims[1].attach_scale(x)\n"
                                 << "    f.create_dataset('counts', data=np.zeros((4, 4), dtype='i4'))\n";
  const Outcome made = testing::run_in(dir, python + " make.py");
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const std::string in = "-i cur.h5:/ocean/surface/u -i cur.h5:/ocean/surface/v";
  const Outcome c = factz(dir, "compress " + in + " -z c.fz -M REL 1e-3");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_EQ(key_values(c.err)["masked_vertices"], "35") << c.err;
  const Outcome info = factz(dir, "info -z c.fz");
  for (const char* want : {"HDF5 file cur.h5", "u: /ocean/surface/u, float32, dimensions y=41, x=41",
                           "coordinate x (float64, 41 values: 0, 20, 40"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  ASSERT_EQ(factz(dir, "decompress -z c.fz -o out.h5:/ocean/u -o out.h5:/ocean/v").exit_code, 0);
  const Outcome h = testing::run_in(dir, "ncdump -h out.h5");
  ASSERT_EQ(h.exit_code, 0) << h.describe();
  for (const char* want : {"float u(y, x)", "u:units = \"m/s\"", "u:_FillValue = -9999.f", "double x(x)",
                           "x:units = \"km\"", ":title = \"arctic currents\"", "group: ocean"})
    EXPECT_NE(h.out.find(want), std::string::npos) << want << "\n" << h.out;
  const Outcome vr = factz(dir, "verify " + in + " -d out.h5:/ocean/u -d out.h5:/ocean/v");
  ASSERT_EQ(vr.exit_code, 0) << vr.describe();
  EXPECT_EQ(key_values(vr.out)["violations"], "0") << vr.out;
  EXPECT_EQ(key_values(vr.out)["mask_mismatch"], "0") << vr.out;
  EXPECT_EQ(key_values(vr.out)["masked_vertices"], "35") << vr.out;

  // The fill value is the dataset's property, which the record now keeps as _FillValue: a
  // dataset without one (u) declares none when decompressed, though it holds data (0) where
  // only v is missing; before, that common value became u's _FillValue and hid its data.
  std::ofstream(dir / "one.py") << "import h5py, numpy as np\n"
                                << "u = np.fromfile('" << kData << "/metno_arctic20_cur_u_41x41.f32', '<f4').reshape(41, 41)\n"
                                << "v = np.fromfile('" << kData << "/metno_arctic20_cur_v_41x41.f32', '<f4').reshape(41, 41)\n"
                                << "u[3, 4] = 0; u[30, 30] = 0; v[3, 4] = -9999\n"
                                << "with h5py.File('one.h5', 'w') as f:\n"
                                << "    f.create_dataset('u', data=u)\n"
                                << "    f.create_dataset('v', data=v, fillvalue=np.float32(-9999))\n";
  const Outcome made1 = testing::run_in(dir, python + " one.py");
  ASSERT_EQ(made1.exit_code, 0) << made1.describe();
  const Outcome c1 = factz(dir, "compress -i one.h5:u -i one.h5:v -z one.fz -M REL 1e-3");
  ASSERT_EQ(c1.exit_code, 0) << c1.describe();
  EXPECT_EQ(key_values(c1.err)["masked_vertices"], "1") << c1.err;
  const Outcome info1 = factz(dir, "info -z one.fz");
  const size_t v_at = info1.out.find("v: v, float32");
  ASSERT_NE(v_at, std::string::npos) << info1.out;
  EXPECT_EQ(info1.out.find("_FillValue"), info1.out.find("_FillValue = -9999f (float32)", v_at)) << info1.out;
  ASSERT_EQ(factz(dir, "decompress -z one.fz -o one_out.h5:u -o one_out.h5:v").exit_code, 0);
  const Outcome h1 = testing::run_in(dir, "ncdump -h one_out.h5");
  ASSERT_EQ(h1.exit_code, 0) << h1.describe();
  EXPECT_NE(h1.out.find("v:_FillValue = -9999.f"), std::string::npos) << h1.out;
  EXPECT_EQ(h1.out.find("u:_FillValue"), std::string::npos) << h1.out;
  const std::vector<double> u1 = dumped_values(dir, "one_out.h5", "u");
  ASSERT_EQ(u1.size(), 41u * 41u);
  EXPECT_EQ(u1[3 * 41 + 4], 0.0);  // held exactly (a missing vertex), and data in the file
  const Outcome vr1 = factz(dir, "verify -i one.h5:u -i one.h5:v -d one_out.h5:u -d one_out.h5:v");
  EXPECT_EQ(vr1.exit_code, 0) << vr1.describe();
  EXPECT_EQ(key_values(vr1.out)["mask_mismatch"], "0") << vr1.out;
  EXPECT_EQ(key_values(vr1.out)["masked_vertices"], "1") << vr1.out;

  expect_one_line(factz(dir, "cp -i cur.h5:/ocean/surface/w -i cur.h5:/ocean/surface/v"), 1,
                  {"cur.h5 has no dataset /ocean/surface/w", "/ocean/surface/u", "/counts"});
  expect_one_line(factz(dir, "cp -i cur.h5:/ocean -i cur.h5:/ocean/surface/v"), 1, {"cur.h5:/ocean is a group"});
  expect_one_line(factz(dir, "cp -i cur.h5:/counts -i cur.h5:/counts"), 1, {"cur.h5:/counts holds integers (int32)"});
}

// ---- Packed variables (integers with scale_factor / add_offset, CF section 8.1) ------------

/// The storm's u or v packed as numpy packs it: round((x - 1.5) / 0.01) in int16, with a
/// 4 x 3 block of the fill value -32767 in the corner.
constexpr int16_t kPackedFill = -32767;
constexpr int kPackedLand = 12;
std::vector<int16_t> packed_storm(const std::string& component) {
  const std::vector<float> x = read_f32(kData + "/ncl_storm_t0_" + component + "_36x33.f32");
  std::vector<int16_t> p(x.size());
  for (size_t k = 0; k < x.size(); ++k) p[k] = int16_t(std::lround((double(x[k]) - 1.5) / 0.01));
  for (int y = 0; y < 3; ++y)
    for (int xx = 0; xx < 4; ++xx) p[size_t(y * kNx + xx)] = kPackedFill;
  return p;
}
/// What numpy, netCDF4-python and xarray read: the integer as float32, times the float32
/// scale, plus the float32 offset, each rounded to float32.
float unpacked_f32(int16_t p) {
  volatile float product = float(p) * 0.01f;
  return product + 1.5f;
}
/// Bytes as stored for a byte variable with _Unsigned = "true" (the netCDF-3 convention): they
/// mean 0..254, and 255 (stored -1), every 50th from the 8th, is the fill value -1b.
std::vector<int16_t> unsigned_bytes() {
  std::vector<int16_t> bytes(size_t(kNx * kNy));
  for (size_t k = 0; k < bytes.size(); ++k) {
    const int meant = k % 50 == 7 ? 255 : int((k * 7 + k / kNx * 3) % 255);
    bytes[k] = int16_t(meant < 128 ? meant : meant - 256);
  }
  return bytes;
}
std::string ints(const std::vector<int16_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s;
}

TEST(Netcdf, PackedVariablesAreReadUnpackedAndWrittenBackAsFloats) {
  REQUIRE_NETCDF();
  TempDir dir;
  const std::vector<int16_t> pu = packed_storm("u");
  std::vector<int16_t> pv = packed_storm("v");
  pv[size_t(20 * kNx + 20)] = -32766;  // V's missing_value, declared as a float in packed units
  std::vector<int16_t> ties(pu.size(), 0);
  ties[0] = -1;  // the fill value of T: -1 * 1e-9 + 1 rounds to 1 in float32, as every 0 does
  std::ostringstream c;
  c << "netcdf packed {\ndimensions:\n  lat = " << kNy << " ;\n  lon = " << kNx << " ;\nvariables:\n";
  for (const char* name : {"U", "V"})
    c << "  short " << name << "(lat, lon) ;\n    " << name << ":scale_factor = 0.01f ;\n    " << name
      << ":add_offset = 1.5f ;\n    " << name << ":_FillValue = -32767s ;\n    " << name << ":units = \"m s-1\" ;\n";
  c << "    U:valid_range = -3000s, 3000s ;\n    U:actual_range = -13.1f, 18.6f ;\n"
    << "    V:missing_value = -32766.f ;\n";
  for (const char* name : {"Ud", "Vd"})
    c << "  short " << name << "(lat, lon) ;\n    " << name << ":scale_factor = 0.01 ;\n    " << name
      << ":add_offset = 1.5 ;\n    " << name << ":_FillValue = -32767s ;\n";
  const std::vector<int16_t> bytes = unsigned_bytes();
  const int byte_fills = int(std::count(bytes.begin(), bytes.end(), int16_t(-1)));
  c << "  float Fs(lat, lon) ;\n    Fs:scale_factor = 0.5f ;\n    Fs:add_offset = 10.f ;\n";
  c << "  byte B(lat, lon) ;\n    B:_Unsigned = \"true\" ;\n    B:scale_factor = 0.1f ;\n    B:_FillValue = -1b ;\n"
    << "  int L(lat, lon) ;\n    L:scale_factor = 0.01f ;\n    L:add_offset = 1.5f ;\n"
    << "  short I(lat, lon) ;\n    I:scale_factor = 2s ;\n"
    << "  short T(lat, lon) ;\n    T:scale_factor = 1e-9f ;\n    T:add_offset = 1.f ;\n    T:_FillValue = -1s ;\n"
    << "data:\n  U = " << ints(pu) << " ;\n  V = " << ints(pv) << " ;\n  Ud = " << ints(pu) << " ;\n  Vd = " << ints(pv)
    << " ;\n  Fs = " << numbers(storm_at(0).u) << " ;\n  B = " << ints(bytes) << " ;\n  L = " << ints(pu) << " ;\n  I = " << ints(pu) << " ;\n  T = " << ints(ties) << " ;\n}\n";
  std::ofstream(dir / "packed.cdl") << c.str();
  for (const char* kind : {"nc4", "classic"}) {
    SCOPED_TRACE(kind);
    const Outcome g = testing::run_in(dir, std::string("ncgen -k ") + kind + " -o packed.nc packed.cdl");
    ASSERT_EQ(g.exit_code, 0) << g.describe();
    const Outcome cz = factz(dir, "compress -i packed.nc:U -i packed.nc:V -z p.fz -M REL 1e-3 --json");
    ASSERT_EQ(cz.exit_code, 0) << cz.describe();
    EXPECT_NE(cz.out.find("\"masked_vertices\": " + std::to_string(kPackedLand + 1)), std::string::npos) << cz.out;
    const size_t at = cz.out.find("\"eb_abs\": ");
    ASSERT_NE(at, std::string::npos) << cz.out;
    const double eb = std::stod(cz.out.substr(at + 10));
    ASSERT_EQ(factz(dir, "decompress --replace -z p.fz -o out.nc:U -o out.nc:V").exit_code, 0);
    // Written back as a plain float variable: no reader may unpack it a second time.
    const Outcome h = testing::run_in(dir, "ncdump -h out.nc");
    ASSERT_EQ(h.exit_code, 0) << h.describe();
    // What re-packing needs is kept under names no reader acts on.
    for (const char* want : {"float U(lat, lon)", "float V(lat, lon)", "U:valid_range = -28.5f, 31.5f",
                             "U:actual_range = -13.1f, 18.6f", "U:units = \"m s-1\"",
                             "V:missing_value = -326.16f", "U:factz_packed_scale_factor = 0.01f",
                             "U:factz_packed_add_offset = 1.5f", "U:factz_packed_type = \"int16\""})
      EXPECT_NE(h.out.find(want), std::string::npos) << want << "\n" << h.out;
    for (const char* never : {":scale_factor", ":add_offset", "short"})
      EXPECT_EQ(h.out.find(never), std::string::npos) << never << "\n" << h.out;
    // The values against numpy's unpacking, read by ncdump: within the bound, and the fill
    // vertices missing ('_': the unpacked fill value, which the _FillValue attribute holds).
    for (const char* comp : {"U", "V"}) {
      const std::vector<int16_t>& p = comp[0] == 'U' ? pu : pv;
      const std::vector<double> got = dumped_values(dir, "out.nc", comp);
      ASSERT_EQ(got.size(), p.size()) << comp;
      int missing = 0;
      double worst = 0;
      for (size_t k = 0; k < p.size(); ++k) {
        if (p[k] == kPackedFill) {
          missing += std::isnan(got[k]);
          continue;
        }
        ASSERT_FALSE(std::isnan(got[k])) << comp << " " << k;
        worst = std::max(worst, std::abs(got[k] - double(unpacked_f32(p[k]))));
      }
      EXPECT_EQ(missing, kPackedLand) << comp;
      EXPECT_LE(worst, eb) << comp;
      EXPECT_GT(worst, eb / 4) << comp << ": a lossy bound should be used, not a lossless copy";
    }
    const Outcome vr = factz(dir, "verify -i packed.nc:U -i packed.nc:V -d out.nc:U -d out.nc:V");
    ASSERT_EQ(vr.exit_code, 0) << vr.describe();
    EXPECT_EQ(key_values(vr.out)["violations"], "0") << vr.out;
    EXPECT_EQ(key_values(vr.out)["mask_mismatch"], "0") << vr.out;
    EXPECT_EQ(cz.err.find("re-packing"), std::string::npos) << "REL 1e-3 is above half the step\n" << cz.err;
    // A bound far below half the step: a note per variable names a larger bound under which
    // re-packing still gives back every integer; checked here by re-packing as numpy would.
    const Outcome tight = factz(dir, "compress -i packed.nc:U -i packed.nc:V -z t.fz -M ABS 0.0005");
    ASSERT_EQ(tight.exit_code, 0) << tight.describe();
    EXPECT_EQ(lines_with(tight.err, "gives back every integer of the file").size(), 2u)
        << tight.err;
    const size_t example = tight.err.find("(for example -M ABS ");
    ASSERT_NE(example, std::string::npos) << tight.err;
    const double suggested = std::stod(tight.err.substr(example + 20));
    EXPECT_GT(suggested, 0.0045) << tight.err;
    EXPECT_LT(suggested, 0.005) << tight.err;
    const Outcome near = factz(dir, "compress -i packed.nc:U -i packed.nc:V -z n.fz -M ABS " + std::to_string(suggested));
    ASSERT_EQ(near.exit_code, 0) << near.describe();
    EXPECT_EQ(near.err.find("re-packing"), std::string::npos) << near.err;
    EXPECT_LT(fs::file_size(dir / "n.fz"), fs::file_size(dir / "t.fz"));
    ASSERT_EQ(factz(dir, "decompress --replace -z n.fz -o near.nc:U -o near.nc:V").exit_code, 0);
    for (const char* comp : {"U", "V"}) {
      const std::vector<int16_t>& p = comp[0] == 'U' ? pu : pv;
      const std::vector<double> got = dumped_values(dir, "near.nc", comp);
      ASSERT_EQ(got.size(), p.size()) << comp;
      int repacked = 0, valid = 0;
      for (size_t k = 0; k < p.size(); ++k) {
        if (p[k] == kPackedFill || p[k] == -32766) continue;
        ++valid;
        repacked += std::lround((got[k] - double(1.5f)) / double(0.01f)) == p[k];
      }
      EXPECT_EQ(repacked, valid) << comp;
    }
    // Double attributes unpack to float64, end to end.
    const Outcome cd = factz(dir, "compress -i packed.nc:Ud -i packed.nc:Vd -z d.fz -M REL 1e-3");
    ASSERT_EQ(cd.exit_code, 0) << cd.describe();
    ASSERT_EQ(factz(dir, "decompress --replace -z d.fz -o out64.nc:Ud -o out64.nc:Vd").exit_code, 0);
    const Outcome h64 = testing::run_in(dir, "ncdump -h out64.nc");
    EXPECT_NE(h64.out.find("double Ud(lat, lon)"), std::string::npos) << h64.out;
    EXPECT_NE(h64.out.find("Ud:_FillValue = -326.17"), std::string::npos) << h64.out;
    // 32-bit integers with float attributes unpack to float64, as numpy promotes them.
    const Outcome cl = factz(dir, "compress -i packed.nc:L -i packed.nc:L -z l.fz -M ABS 0.001");
    ASSERT_EQ(cl.exit_code, 0) << cl.describe();
    ASSERT_EQ(factz(dir, "decompress --replace -z l.fz -o out32.nc:A -o out32.nc:B").exit_code, 0);
    EXPECT_NE(testing::run_in(dir, "ncdump -h out32.nc").out.find("double A(lat, lon)"), std::string::npos);
    const std::vector<double> a = dumped_values(dir, "out32.nc", "A");
    ASSERT_EQ(a.size(), pu.size());
    for (size_t k = 0; k < pu.size(); k += 97)
      EXPECT_LE(std::abs(a[k] - (double(pu[k]) * double(0.01f) + double(1.5f))), 0.001) << k;
    // A float variable with scale_factor / add_offset is unpacked too (as numpy, netCDF4-python
    // and xarray do), so the bound is in the unpacked units; no lattice, so no re-packing note.
    const Outcome cf = factz(dir, "compress -i packed.nc:Fs -i packed.nc:Fs -z f.fz -M ABS 0.01");
    ASSERT_EQ(cf.exit_code, 0) << cf.describe();
    EXPECT_EQ(cf.err.find("re-packing"), std::string::npos) << cf.err;
    ASSERT_EQ(factz(dir, "decompress --replace -z f.fz -o outf.nc:Fs -o outf.nc:F2").exit_code, 0);
    const Outcome hf = testing::run_in(dir, "ncdump -h outf.nc");
    EXPECT_NE(hf.out.find("Fs:factz_packed_type = \"float32\""), std::string::npos) << hf.out;
    EXPECT_EQ(hf.out.find("Fs:scale_factor"), std::string::npos) << hf.out;
    const std::vector<double> fs = dumped_values(dir, "outf.nc", "Fs");
    const std::vector<float> fu = storm_at(0).u;
    ASSERT_EQ(fs.size(), fu.size());
    double worst = 0;
    for (size_t k = 0; k < fu.size(); ++k) {
      volatile float product = fu[k] * 0.5f;
      worst = std::max(worst, std::abs(fs[k] - double(product + 10.0f)));
    }
    EXPECT_LE(worst, 0.01);
    EXPECT_GT(worst, 0.0025) << "the bound in stored units would be twice as tight";
    // _Unsigned bytes mean 0..255; the fill value -1b means 255.
    const Outcome cb = factz(dir, "compress -i packed.nc:B -i packed.nc:B -z b.fz -M ABS 0.01 --json");
    ASSERT_EQ(cb.exit_code, 0) << cb.describe();
    EXPECT_NE(cb.out.find("\"masked_vertices\": " + std::to_string(byte_fills)), std::string::npos) << cb.out;
    ASSERT_EQ(factz(dir, "decompress --replace -z b.fz -o outb.nc:B -o outb.nc:B2").exit_code, 0);
    const Outcome hb = testing::run_in(dir, "ncdump -h outb.nc");
    EXPECT_NE(hb.out.find("float B(lat, lon)"), std::string::npos) << hb.out;
    EXPECT_NE(hb.out.find("B:_FillValue = 25.5f"), std::string::npos) << hb.out;
    EXPECT_EQ(hb.out.find("B:_Unsigned"), std::string::npos) << hb.out;
    EXPECT_NE(hb.out.find("B:factz_packed_Unsigned = \"true\""), std::string::npos) << hb.out;
    EXPECT_NE(hb.out.find("B:factz_packed_type = \"uint8\""), std::string::npos) << hb.out;
    const std::vector<double> b = dumped_values(dir, "outb.nc", "B");
    ASSERT_EQ(b.size(), bytes.size());
    for (size_t k = 0; k < bytes.size(); ++k) {
      const int meant = bytes[k] < 0 ? bytes[k] + 256 : bytes[k];
      if (meant == 255) EXPECT_TRUE(std::isnan(b[k])) << k;
      else EXPECT_LE(std::abs(b[k] - double(float(meant) * 0.1f)), 0.01) << k << " means " << meant;
    }
    // Packing FaCTz cannot read is refused in one line.
    expect_one_line(factz(dir, "cp -i packed.nc:I -i packed.nc:I"), 1,
                    {"packed.nc:I is packed, but its scale_factor is not one finite float or double (int16"});
    expect_one_line(factz(dir, "ct -i packed.nc:T"), 1,
                    {"packed.nc:T: the packed value 0 unpacks to 1, which is also what a fill value unpacks to"});
  }
}

// decompress --repack writes a packed variable back as the integers it was read from, with
// its packing attributes: below the limit compress notes, every integer of the file comes
// back; above it, each value's nearest integer.
TEST(Netcdf, RepackGivesBackTheFilesIntegers) {
  REQUIRE_NETCDF();
  TempDir dir;
  const std::vector<int16_t> pu = packed_storm("u");
  std::vector<int16_t> pv = packed_storm("v");
  const size_t v_missing = size_t(20 * kNx + 20);
  pv[v_missing] = -32766;  // V's missing_value, a float in packed units: U is valid there
  const std::vector<int16_t> bytes = unsigned_bytes();
  std::ostringstream c;
  c << "netcdf packed {\ndimensions:\n  lat = " << kNy << " ;\n  lon = " << kNx << " ;\nvariables:\n"
    << "  float lat(lat) ;\n    lat:units = \"degrees_north\" ;\n";
  for (const char* name : {"U", "V"})
    c << "  short " << name << "(lat, lon) ;\n    " << name << ":scale_factor = 0.01f ;\n    " << name
      << ":add_offset = 1.5f ;\n    " << name << ":_FillValue = -32767s ;\n    " << name << ":units = \"m s-1\" ;\n";
  c << "    U:valid_range = -3000s, 3000s ;\n    U:actual_range = -13.1f, 18.6f ;\n    V:missing_value = -32766.f ;\n"
    << "  byte B(lat, lon) ;\n    B:_Unsigned = \"true\" ;\n    B:scale_factor = 0.1f ;\n    B:_FillValue = -1b ;\n"
    << "  float F(lat, lon) ;\n";
  std::vector<float> lat;
  for (int k = 0; k < kNy; ++k) lat.push_back(10.0f + 0.5f * float(k));
  c << "data:\n  lat = " << numbers(lat) << " ;\n  U = " << ints(pu) << " ;\n  V = " << ints(pv) << " ;\n  B = "
    << ints(bytes) << " ;\n  F = " << numbers(storm_at(0).u) << " ;\n}\n";
  std::ofstream(dir / "packed.cdl") << c.str();
  const Outcome g = testing::run_in(dir, "ncgen -k nc4 -o packed.nc packed.cdl");
  ASSERT_EQ(g.exit_code, 0) << g.describe();
  const Outcome h0 = testing::run_in(dir, "ncdump -h packed.nc");

  // Below the limit (half the step less the unpacking's rounding): the file's integers, all
  // of them, and its declarations (valid_range in packed units again, missing_value an
  // integer of the type).
  ASSERT_EQ(factz(dir, "compress -i packed.nc:U -i packed.nc:V -z p.fz -M ABS 0.0049").exit_code, 0);
  const Outcome d = factz(dir, "decompress -z p.fz -o back.nc:U -o back.nc:V --repack");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  EXPECT_EQ(d.err.find("warning"), std::string::npos) << d.err;
  const Outcome h1 = testing::run_in(dir, "ncdump -h back.nc");
  EXPECT_EQ(declaration(h1.out, "U"), declaration(h0.out, "U")) << h1.out;
  for (const char* want : {"short V(lat, lon)", "V:scale_factor = 0.01f", "V:add_offset = 1.5f",
                           "V:_FillValue = -32767s", "V:missing_value = -32766s"})
    EXPECT_NE(h1.out.find(want), std::string::npos) << want << "\n" << h1.out;
  EXPECT_EQ(h1.out.find("factz_packed"), std::string::npos) << h1.out;
  for (const char* comp : {"U", "V"}) {
    const std::vector<int16_t>& p = comp[0] == 'U' ? pu : pv;
    const std::vector<double> got = dumped_values(dir, "back.nc", comp);  // the integers: ncdump does not unpack
    ASSERT_EQ(got.size(), p.size()) << comp;
    for (size_t k = 0; k < p.size(); ++k) {
      if (p[k] == kPackedFill) EXPECT_TRUE(std::isnan(got[k])) << comp << " " << k;
      else EXPECT_EQ(got[k], double(p[k])) << comp << " " << k;
    }
  }
  // Read back by factz, the re-packed file is the original field (the same unpacking).
  const Outcome same = factz(dir, "verify -i packed.nc:U -i packed.nc:V -d back.nc:U -d back.nc:V");
  ASSERT_EQ(same.exit_code, 0) << same.describe();
  EXPECT_EQ(key_values(same.out)["max_abs_error_u"], "0") << same.out;
  EXPECT_EQ(key_values(same.out)["mask_mismatch"], "0") << same.out;

  // Above it: each value's nearest integer, within the bound plus half a step of the file's.
  const Outcome cz = factz(dir, "compress -i packed.nc:U -i packed.nc:V -z r.fz -M REL 1e-2 --json");
  ASSERT_EQ(cz.exit_code, 0) << cz.describe();
  const double eb = std::stod(cz.out.substr(cz.out.find("\"eb_abs\": ") + 10));
  ASSERT_EQ(factz(dir, "decompress -z r.fz -o lossy.nc:U -o lossy.nc:V --repack").exit_code, 0);
  const std::vector<double> lossy = dumped_values(dir, "lossy.nc", "U");
  ASSERT_EQ(lossy.size(), pu.size());
  int moved = 0;
  for (size_t k = 0; k < pu.size(); ++k) {
    if (pu[k] == kPackedFill) continue;
    EXPECT_LE(std::abs(lossy[k] - double(pu[k])), eb / 0.01 + 0.5 + 1e-3) << k;
    moved += lossy[k] != double(pu[k]);
  }
  EXPECT_GT(moved, 0) << "REL 1e-2 is far above half the step";

  // A scalar stream, and bytes that mean 0..255 (_Unsigned): written as ubyte, _FillValue 255.
  ASSERT_EQ(factz(dir, "compress --scalar -i packed.nc:U --mode none -M ABS 0.0049 -z s.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o s.nc:U --repack").exit_code, 0);
  EXPECT_EQ(dumped_values(dir, "s.nc", "U").size(), pu.size());
  EXPECT_EQ(declaration(testing::run_in(dir, "ncdump -h s.nc").out, "U"), declaration(h0.out, "U"));
  ASSERT_EQ(factz(dir, "compress -i packed.nc:B -i packed.nc:B -z b.fz -M ABS 0.049").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z b.fz -o b.nc:B -o b2.nc:B --repack").exit_code, 0);
  const Outcome hb = testing::run_in(dir, "ncdump -h b.nc");
  for (const char* want : {"ubyte B(lat, lon)", "B:_FillValue = 255UB", "B:scale_factor = 0.1f"})
    EXPECT_NE(hb.out.find(want), std::string::npos) << want << "\n" << hb.out;
  EXPECT_EQ(hb.out.find("_Unsigned"), std::string::npos) << hb.out;
  const std::vector<double> b = dumped_values(dir, "b.nc", "B");
  ASSERT_EQ(b.size(), bytes.size());
  for (size_t k = 0; k < bytes.size(); ++k) {
    const int meant = bytes[k] < 0 ? bytes[k] + 256 : bytes[k];
    if (meant == 255) EXPECT_TRUE(std::isnan(b[k])) << k;
    else EXPECT_EQ(b[k], double(meant)) << k;
  }

  // A variable that was not packed stays float, with a warning; raw outputs are refused.
  ASSERT_EQ(factz(dir, "compress -i packed.nc:F -i packed.nc:U -z m.fz -M ABS 0.0049").exit_code, 0);
  const Outcome mixed = factz(dir, "decompress -z m.fz -o m.nc:F -o m.nc:U --repack");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.describe();
  EXPECT_EQ(lines_with(mixed.err, "m.nc:F: not read from a packed variable").size(), 1u) << mixed.err;
  const Outcome hm = testing::run_in(dir, "ncdump -h m.nc");
  EXPECT_NE(hm.out.find("float F(lat, lon)"), std::string::npos) << hm.out;
  EXPECT_NE(hm.out.find("short U(lat, lon)"), std::string::npos) << hm.out;
  expect_one_line(factz(dir, "decompress -z p.fz -o u.f32 -o v.f32 --repack"), 2, {"--repack writes netCDF"});
  // A multi-block file keeps the record too (after its last block): below the limit, the
  // file's integers again, as from the plain stream (back.nc).
  ASSERT_EQ(factz(dir, "compress -i packed.nc:U -i packed.nc:V -z m.fzmb --blocks 2 2 -M ABS 0.0049").exit_code, 0);
  const Outcome mr = factz(dir, "decompress -z m.fzmb -o mb.nc:U -o mb.nc:V --repack");
  ASSERT_EQ(mr.exit_code, 0) << mr.describe();
  EXPECT_EQ(mr.err.find("warning"), std::string::npos) << mr.err;
  const Outcome hmb = testing::run_in(dir, "ncdump -h mb.nc");
  EXPECT_EQ(declaration(hmb.out, "U"), declaration(h0.out, "U")) << hmb.out;
  for (const char* comp : {"U", "V"}) {
    const std::string data = std::string(" | sed -n '/^ ") + comp + " =/,$p'";
    const Outcome want = testing::run_in(dir, std::string("ncdump -v ") + comp + " back.nc" + data);
    EXPECT_EQ(testing::run_in(dir, std::string("ncdump -v ") + comp + " mb.nc" + data).out, want.out) << comp;
    EXPECT_GT(want.out.size(), 100u) << comp;
  }
}

// A packed variable larger than one slab of the reader (1 M values): read in pieces, with
// the values of every piece and the coordinate variables of the whole dimensions intact.
TEST(Netcdf, LargePackedVariablesAreReadInSlabs) {
  REQUIRE_NETCDF();
  TempDir dir;
  constexpr int nx = 1024, ny = 1100;  // 1100 rows: two slabs of at most 1024 rows
  std::vector<int16_t> a(size_t(nx) * ny);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      a[size_t(y) * nx + x] = int16_t(std::lround(9000.0 * std::sin(x / 60.0) * std::cos(y / 45.0)));
  std::ostringstream c;
  c << "netcdf big {\ndimensions:\n  lat = " << ny << " ;\n  lon = " << nx << " ;\nvariables:\n"
    << "  float lat(lat) ;\n  float lon(lon) ;\n"
    << "  short A(lat, lon) ;\n    A:scale_factor = 0.01f ;\n    A:add_offset = -3.f ;\n"
    << "data:\n  lat = ";
  for (int y = 0; y < ny; ++y) c << (y ? ", " : "") << y;
  c << " ;\n  lon = ";
  for (int x = 0; x < nx; ++x) c << (x ? ", " : "") << x;
  c << " ;\n  A = " << ints(a) << " ;\n}\n";
  std::ofstream(dir / "big.cdl") << c.str();
  const Outcome g = testing::run_in(dir, "ncgen -k nc4 -o big.nc big.cdl");
  ASSERT_EQ(g.exit_code, 0) << g.describe();
  // The same file through netCDF-C (.nc) and through the HDF5 library (.h5: netCDF-4 is HDF5).
  fs::copy_file(dir / "big.nc", dir / "big.h5");
  const bool hdf5 = testing::hdf5_built_in(kCli);
  for (const std::string in : {"big.nc:A", "big.h5:/A"}) {
    if (in[4] == 'h' && !hdf5) continue;
    SCOPED_TRACE(in);
    ASSERT_EQ(factz(dir, "compress -i " + in + " -i " + in + " -z b.fz -M ABS 0.02 --mode none").exit_code, 0);
    ASSERT_EQ(factz(dir, "decompress -z b.fz -o a.f32 -o a2.f32").exit_code, 0);
    ASSERT_EQ(factz(dir, "decompress --replace -z b.fz -o out.nc:A -o out.nc:B").exit_code, 0);
    const std::vector<float> got = read_f32(dir.str() + "/a.f32");
    ASSERT_EQ(got.size(), a.size());
    double worst = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      volatile float product = float(a[k]) * 0.01f;
      worst = std::max(worst, std::abs(double(got[k]) - double(product + -3.0f)));
    }
    EXPECT_LE(worst, 0.02);
    const std::vector<double> lat = dumped_values(dir, "out.nc", "lat");
    ASSERT_EQ(lat.size(), size_t(ny)) << "the coordinate variable of the dimension read in slabs";
    EXPECT_EQ(lat.back(), double(ny - 1));
  }
}

TEST(Netcdf, PackedHdf5DatasetsAreReadUnpacked) {
  REQUIRE_NETCDF();
  if (!testing::hdf5_built_in(kCli)) GTEST_SKIP() << "factz was built without the HDF5 library: skipped";
  const std::string python = testing::python_with_h5py();
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py and numpy to write the HDF5 file: skipped";
  TempDir dir;
  const std::vector<int16_t> pu = packed_storm("u"), pv = packed_storm("v");
  std::ofstream(dir / "make.py") << "import h5py, numpy as np\n"
                                 << "u = np.array([" << ints(pu) << "], dtype='<i2').reshape(" << kNy << ", " << kNx << ")\n"
                                 << "v = np.array([" << ints(pv) << "], dtype='<i2').reshape(" << kNy << ", " << kNx << ")\n"
                                 << "with h5py.File('p.h5', 'w') as f:\n"
                                 << "    for name, a in (('u', u), ('v', v)):\n"
                                 << "        d = f.create_dataset(name, data=a, fillvalue=np.int16(-32767))\n"
                                 << "        d.attrs['scale_factor'] = np.float32(0.01)\n"
                                 << "        d.attrs['add_offset'] = np.float32(1.5)\n"
                                 << "    d = f.create_dataset('w', data=(np.arange(36 * 33) % 97).reshape(33, 36).astype('<u8') + (1 << 63))\n"
                                 << "    d.attrs['scale_factor'] = 0.5\n";
  const Outcome made = testing::run_in(dir, python + " make.py");
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const Outcome cz = factz(dir, "compress -i p.h5:/u -i p.h5:/v -z p.fz -M ABS 0.02 --json");
  ASSERT_EQ(cz.exit_code, 0) << cz.describe();
  EXPECT_NE(cz.out.find("\"masked_vertices\": " + std::to_string(kPackedLand)), std::string::npos) << cz.out;
  ASSERT_EQ(factz(dir, "decompress -z p.fz -o u.f32 -o v.f32").exit_code, 0);
  const std::vector<float> u = read_f32(dir.str() + "/u.f32");
  ASSERT_EQ(u.size(), pu.size());
  for (size_t k = 0; k < pu.size(); ++k) {
    if (pu[k] == kPackedFill) {
      EXPECT_EQ(u[k], unpacked_f32(kPackedFill)) << k << ": a missing vertex comes back as the unpacked fill value";
    } else {
      EXPECT_LE(std::abs(double(u[k]) - double(unpacked_f32(pu[k]))), 0.02) << k;
    }
  }
  // Unsigned 64-bit integers above 2^63 (read as doubles, never clipped) with a double scale: float64.
  const Outcome cw = factz(dir, "compress -i p.h5:/w -i p.h5:/w -z w.fz -M ABS 1e6 --json");
  ASSERT_EQ(cw.exit_code, 0) << cw.describe();
  EXPECT_NE(cw.out.find("\"dtype\": \"float64\""), std::string::npos) << cw.out;
  ASSERT_EQ(factz(dir, "decompress -z w.fz -o w.npy -o w2.npy").exit_code, 0);
  const std::string npy = testing::read_text_file(dir.str() + "/w.npy");
  ASSERT_GT(npy.size(), size_t(36 * 33 * 8));
  double first = 0;
  std::memcpy(&first, npy.data() + npy.size() - size_t(36 * 33 * 8), 8);
  EXPECT_NEAR(first, 0.5 * 9223372036854775808.0, 1e6) << "the first value, (2^63 + 0) * 0.5";
}

TEST(Netcdf, NpyFilesGiveTheirShape) {
  TempDir dir;
  const std::vector<float> u = read_f32(kData + "/ncl_storm_t0_u_36x33.f32"), v = read_f32(kData + "/ncl_storm_t0_v_36x33.f32");
  auto npy = [](const std::vector<float>& data, const std::string& shape) {
    std::string bytes(data.size() * 4, '\0');
    std::memcpy(bytes.data(), data.data(), bytes.size());
    return testing::npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", 1, bytes);
  };
  std::ofstream(dir / "u.npy", std::ios::binary) << npy(u, "(33, 36)");
  std::ofstream(dir / "v.npy", std::ios::binary) << npy(v, "(33, 36)");
  std::ofstream(dir / "flat.npy", std::ios::binary) << npy(v, "(1188,)");
  const Outcome c = factz(dir, "compress -i u.npy -i v.npy -z s.fz --json");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_NE(c.out.find("\"nx\": 36, \"ny\": 33"), std::string::npos) << c.out;
  const Outcome cp = factz(dir, "cp -i u.npy -i v.npy");
  EXPECT_EQ(cp.exit_code, 0) << cp.describe();
  // A flat array does not say its shape; -2 says it, and is checked against a 2D one.
  expect_one_line(factz(dir, "cp -i flat.npy -i flat.npy"), 2, {"missing -2 NX NY"});
  EXPECT_EQ(factz(dir, "cp -2 36 33 -i u.npy -i flat.npy").exit_code, 0);
  expect_one_line(factz(dir, "cp -2 33 36 -i u.npy -i v.npy"), 1, {"u.npy", "does not match"});
  expect_one_line(factz(dir, "cp -i u.f32 -i v.f32"), 2, {"missing -2 NX NY"});
}

// compress, cp, verify, render, ct and the scalar paths all read through the one reader.
TEST(Netcdf, EveryCommandThatTakesAFieldReadsVariables) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm(dir);
  const std::string in = "-i 'storm.nc:U[time=1]' -i 'storm.nc:V[time=1]'";
  // A double variable goes the float64 way (tests/test_netcdf64.cpp has the whole round trip).
  const Outcome cp64 = factz(dir, "cp -i storm.nc:D -i storm.nc:D --json");
  ASSERT_EQ(cp64.exit_code, 0) << cp64.describe();
  EXPECT_NE(cp64.out.find("\"dtype\": \"float64\""), std::string::npos) << cp64.out;
  const Outcome cp = factz(dir, "cp " + in);
  ASSERT_EQ(cp.exit_code, 0) << cp.describe();
  EXPECT_EQ(key_values(cp.out)["masked_vertices"], std::to_string(kLand)) << cp.out;
  const Outcome render = factz(dir, "render " + in + " -o r.png --size 64");
  EXPECT_EQ(render.exit_code, 0) << render.describe();
  EXPECT_TRUE(fs::exists(dir / "r.png"));
  // Multi-block: read whole and cut; written back with U's dimensions (the file keeps the
  // record after its last block), and as a plain (y, x) variable from raw inputs.
  ASSERT_EQ(factz(dir, "compress " + in + " -z m.fzmb --blocks 2 2").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb -o m.nc:u -o m.nc:v").exit_code, 0);
  EXPECT_NE(testing::run_in(dir, "ncdump -h m.nc").out.find("float u(time, lat, lon)"), std::string::npos);
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb -o mu.f32 -o mv.f32").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress -2 " + std::to_string(kNx) + " " + std::to_string(kNy) +
                           " -i mu.f32 -i mv.f32 -z raw.fzmb --blocks 2 2").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z raw.fzmb -o raw.nc:u -o raw.nc:v").exit_code, 0);
  EXPECT_NE(testing::run_in(dir, "ncdump -h raw.nc").out.find("float u(y, x)"), std::string::npos);
  const Outcome vb = factz(dir, "verify " + in + " -d m.nc:u -d m.nc:v --blocks 2 2");
  ASSERT_EQ(vb.exit_code, 0) << vb.describe();
  EXPECT_EQ(key_values(vb.out)["violations"], "0") << vb.out;
  // Scalar fields: a float variable of one time step without fill values.
  for (const std::string cmd : {"ct -i 'storm.nc:U[time=0]' --json", "compress --scalar -i 'storm.nc:U[time=0]' -z t.fz"}) {
    const Outcome o = factz(dir, cmd);
    EXPECT_EQ(o.exit_code, 0) << cmd << "\n" << o.describe();
  }
  ASSERT_EQ(factz(dir, "decompress -z t.fz -o t.nc:T").exit_code, 0);
  // A scalar stream remembers its variable (section 12, format version 19): T comes back with
  // U's dimensions and attributes.
  EXPECT_NE(testing::run_in(dir, "ncdump -h t.nc").out.find("float T(time, lat, lon)"), std::string::npos);
  const Outcome vs = factz(dir, "verify -i 'storm.nc:U[time=0]' -d t.nc:T");
  ASSERT_EQ(vs.exit_code, 0) << vs.describe();
  EXPECT_EQ(key_values(vs.out)["same_tree"], "1") << vs.out;
  // A scalar slice holding the fill value: its land is missing, in ct, compress, decompress
  // (back as the fill value) and verify (the original's fill applies to a raw reconstruction).
  const Outcome ct = factz(dir, "ct -i 'storm.nc:U[time=1]'");
  ASSERT_EQ(ct.exit_code, 0) << ct.describe();
  EXPECT_EQ(key_values(ct.out)["masked_vertices"], std::to_string(kLand)) << ct.out;
  ASSERT_EQ(factz(dir, "compress --scalar -i 'storm.nc:U[time=1]' -z t1.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z t1.fz -o t1.nc:T").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z t1.fz -o t1.f32").exit_code, 0);
  for (const std::string d : {"t1.nc:T", "t1.f32"}) {
    const Outcome v = factz(dir, "verify -i 'storm.nc:U[time=1]' -d " + d);
    ASSERT_EQ(v.exit_code, 0) << d << "\n" << v.describe();
    auto kv = key_values(v.out);
    EXPECT_EQ(kv["same_tree"], "1") << d << ": " << v.out;
    EXPECT_EQ(kv["masked_vertices"], std::to_string(kLand)) << d << ": " << v.out;
    EXPECT_EQ(kv["mask_mismatch"], "0") << d << ": " << v.out;
  }
  // The land comes back as the fill value: ncdump prints it as '_'.
  const std::string dump = testing::run_in(dir, "ncdump -v T t1.nc").out;
  int underscores = 0;
  for (size_t at = dump.find("data:"); at != std::string::npos && at < dump.size(); ++at)
    underscores += dump[at] == '_' && (at + 1 == dump.size() || dump[at + 1] == ',' || dump[at + 1] == ' ' ||
                                       dump[at + 1] == ';' || dump[at + 1] == '\n');
  EXPECT_EQ(underscores, kLand) << dump;
  // --fill nan makes the file's fill value data: then it is an infinite-free huge value, kept.
  const Outcome as_data = factz(dir, "ct -i 'storm.nc:U[time=1]' --fill nan");
  ASSERT_EQ(as_data.exit_code, 0) << as_data.describe();
  EXPECT_EQ(key_values(as_data.out)["masked_vertices"], "0") << as_data.out;
}

// ---- 3D vector fields and scalar streams from variables -------------------------------------

constexpr int kLevels = 3;
constexpr float kW = -9999.0f;  // W's missing_value, at one vertex of time 1

/// Component c (0 U, 1 V, 2 W) of the 3D test field at time t: the storm's u and v scaled per
/// level, W a mix of both; the storm's land (time 1) is the fill value in every component and
/// level, and W holds its missing_value at one vertex of level 2.
std::vector<float> level_field(int t, int c) {
  const Storm s = storm_at(t);
  std::vector<float> out;
  for (int lev = 0; lev < kLevels; ++lev)
    for (size_t k = 0; k < s.u.size(); ++k) {
      const bool land = s.u[k] == kFill;
      const float scale = 1.0f + 0.25f * float(lev);
      const float x = c == 0 ? s.u[k] * scale : c == 1 ? s.v[k] * scale : 0.1f * (s.u[k] - s.v[k]) + float(lev);
      out.push_back(land ? kFill : x);
    }
  if (t == 1 && c == 2) out[size_t(2 * kNx * kNy + 500)] = kW;
  return out;
}

/// m.nc: U, V, W (time, lev, lat, lon) of level_field with their fill values and a lev
/// coordinate; UD, VD, WD the same values as doubles.
void make_levels(const TempDir& dir) {
  std::vector<float> lat, lon, data[3];
  for (int k = 0; k < kNy; ++k) lat.push_back(10.0f + 0.5f * float(k));
  for (int k = 0; k < kNx; ++k) lon.push_back(100.0f + 0.5f * float(k));
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < 3; ++c) {
      const auto f = level_field(t, c);
      data[c].insert(data[c].end(), f.begin(), f.end());
    }
  std::ostringstream c;
  c << "netcdf m {\ndimensions:\n  time = UNLIMITED ;\n  lev = " << kLevels << " ;\n  lat = " << kNy
    << " ;\n  lon = " << kNx << " ;\nvariables:\n"
    << "  double time(time) ;\n    time:units = \"hours since 2000-01-01\" ;\n"
    << "  float lev(lev) ;\n    lev:units = \"hPa\" ;\n    lev:positive = \"down\" ;\n"
    << "  float lat(lat) ;\n    lat:units = \"degrees_north\" ;\n  float lon(lon) ;\n    lon:units = \"degrees_east\" ;\n";
  for (const char* v : {"U", "V", "W"})
    c << "  float " << v << "(time, lev, lat, lon) ;\n    " << v << ":_FillValue = 1e20f ;\n    " << v
      << ":units = \"m s-1\" ;\n  double " << v << "D(time, lev, lat, lon) ;\n    " << v << "D:_FillValue = 1e20 ;\n";
  c << "    W:missing_value = -9999.f ;\n"
    << "\n// global attributes:\n  :title = \"levels\" ;\ndata:\n  time = 0, 6 ;\n  lev = 1000, 850, 700 ;\n  lat = "
    << numbers(lat) << " ;\n  lon = " << numbers(lon) << " ;\n";
  for (int k = 0; k < 3; ++k) {
    const char* v = k == 0 ? "U" : k == 1 ? "V" : "W";
    std::vector<float> d = data[k];
    if (k == 2)  // the doubles have the fill value only
      std::replace(d.begin(), d.end(), kW, 0.5f);
    c << "  " << v << " = " << numbers(data[k]) << " ;\n  " << v << "D = " << numbers(d) << " ;\n";
  }
  c << "}\n";
  std::ofstream(dir / "m.cdl") << c.str();
  const Outcome o = testing::run_in(dir, "ncgen -k nc4 -o m.nc m.cdl");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
}

// A 3D vector field read from three variables (-3 optional), its fill values marking missing
// vertices per component, written back with its dimensions, attributes and coordinates (format
// version 19), and compared by verify against variables and raw files.
TEST(Netcdf, ThreeDVectorFieldsFromVariablesComeBackWithTheirDimensions) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_levels(dir);
  const std::string in = "-i 'm.nc:U[time=1]' -i 'm.nc:V[time=1]' -i 'm.nc:W[time=1]'";
  const int missing = kLevels * kLand + 1;
  const double eb = 0.01;
  const Outcome c = factz(dir, "compress " + in + " -z uvw.fz -M ABS 0.01 --json");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_NE(c.out.find("\"masked_vertices\": " + std::to_string(missing)), std::string::npos) << c.out;
  EXPECT_EQ(c.err.find("warning"), std::string::npos) << "the fill values are declared: " << c.err;
  const Outcome info = factz(dir, "info -z uvw.fz");
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  for (const char* want : {"format version 19", "w: W[time=1], float32, dimensions time=2 (unlimited), lev=3, lat=33",
                           "missing_value = -9999f", "coordinate lev (float32, 3 values: 1000f, 850f, 700f"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;

  // Back as variables: the declarations of the original, one time step, the lev coordinate.
  ASSERT_EQ(factz(dir, "decompress -z uvw.fz -o out.nc:U -o out.nc:V -o out.nc:W").exit_code, 0);
  const Outcome h0 = testing::run_in(dir, "ncdump -h m.nc"), h1 = testing::run_in(dir, "ncdump -h out.nc");
  ASSERT_EQ(h1.exit_code, 0) << h1.describe();
  for (const char* var : {"U", "V", "W", "lev", "lat", "lon", "time"}) {
    const auto want = declaration(h0.out, var);
    ASSERT_FALSE(want.empty()) << var;
    EXPECT_EQ(declaration(h1.out, var), want) << var << "\n" << h1.out;
  }
  EXPECT_EQ(lines_with(h1.out, "time = "), std::vector<std::string>{"\ttime = UNLIMITED ; // (1 currently)"}) << h1.out;
  EXPECT_EQ(dumped_values(dir, "out.nc", "lev"), (std::vector<double>{1000, 850, 700}));
  EXPECT_EQ(dumped_values(dir, "out.nc", "time"), std::vector<double>{6.0});
  // The values: the land is the fill value ('_'), W's missing_value comes back bit for bit,
  // the rest within the bound.
  for (int comp = 0; comp < 3; ++comp) {
    const std::string var = comp == 0 ? "U" : comp == 1 ? "V" : "W";
    const auto orig = level_field(1, comp);
    const auto back = dumped_values(dir, "out.nc", var);
    ASSERT_EQ(back.size(), orig.size()) << var;
    int land = 0;
    for (size_t k = 0; k < back.size(); ++k) {
      if (orig[k] == kFill) {
        ++land;
        EXPECT_TRUE(std::isnan(back[k])) << var << " vertex " << k;
      } else if (orig[k] == kW) {
        EXPECT_EQ(back[k], double(kW)) << var << " vertex " << k;
      } else if (!std::isnan(double(orig[k]))) {
        EXPECT_LE(std::fabs(back[k] - double(orig[k])), eb * 1.0001) << var << " vertex " << k;
      }
    }
    EXPECT_EQ(land, kLevels * kLand) << var;
  }
  // verify against the variables, and against raw files (the original's shape and fill
  // values apply to them), with and without -3.
  const Outcome v1 = factz(dir, "verify " + in + " -d out.nc:U -d out.nc:V -d out.nc:W");
  ASSERT_EQ(v1.exit_code, 0) << v1.describe();
  auto kv = key_values(v1.out);
  EXPECT_EQ(kv["violations"], "0") << v1.out;
  EXPECT_EQ(kv["mask_mismatch"], "0") << v1.out;
  EXPECT_EQ(kv["masked_vertices"], std::to_string(missing)) << v1.out;
  EXPECT_GT(std::stoi(kv["cp_original"]), 0) << v1.out;
  ASSERT_EQ(factz(dir, "decompress -z uvw.fz -o u.f32 -o v.npy -o w.f32").exit_code, 0);
  for (const std::string three : {"", "-3 36 33 3 "}) {
    const Outcome v2 = factz(dir, "verify " + three + in + " -d u.f32 -d v.npy -d w.f32");
    ASSERT_EQ(v2.exit_code, 0) << three << v2.describe();
    kv = key_values(v2.out);
    EXPECT_EQ(kv["violations"], "0") << v2.out;
    EXPECT_EQ(kv["mask_mismatch"], "0") << v2.out;
    EXPECT_EQ(kv["masked_vertices"], std::to_string(missing)) << v2.out;
  }
  const Outcome cp = factz(dir, "cp " + in + " --json");
  ASSERT_EQ(cp.exit_code, 0) << cp.describe();
  EXPECT_NE(cp.out.find("\"masked_vertices\": " + std::to_string(missing)), std::string::npos) << cp.out;
  // --fill replaces the files' fill values: then only 1e20 itself is missing, not -9999.
  const Outcome f = factz(dir, "cp " + in + " --fill 1e20 --json");
  ASSERT_EQ(f.exit_code, 0) << f.describe();
  EXPECT_NE(f.out.find("\"masked_vertices\": " + std::to_string(kLevels * kLand)), std::string::npos) << f.out;

  // A multi-block file: read from the variables, written back with their dimensions and
  // attributes (the record after its last block, version 7), compared block by block; a region
  // with the window's coordinates.
  ASSERT_EQ(factz(dir, "compress -3 36 33 3 " + in + " -z m.fzmb --blocks 2 2 1 -M ABS 0.01").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb -o mb.nc:U -o mb.nc:V -o mb.nc:W").exit_code, 0);
  const Outcome hmb = testing::run_in(dir, "ncdump -h mb.nc");
  for (const char* var : {"U", "W", "lev"}) EXPECT_EQ(declaration(hmb.out, var), declaration(h0.out, var)) << var;
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb --region 4 5 1 20 25 3 -o rb.nc:U -o rb.nc:V -o rb.nc:W").exit_code, 0);
  const Outcome hrb = testing::run_in(dir, "ncdump -h rb.nc");
  EXPECT_EQ(declaration(hrb.out, "W"), declaration(h0.out, "W")) << hrb.out;
  const std::vector<double> lev = dumped_values(dir, "m.nc", "lev");
  EXPECT_EQ(dumped_values(dir, "rb.nc", "lev"), std::vector<double>(lev.begin() + 1, lev.end()));
  const Outcome vb = factz(dir, "verify -3 36 33 3 " + in + " -d mb.nc:U -d mb.nc:V -d mb.nc:W --blocks 2 2 1");
  ASSERT_EQ(vb.exit_code, 0) << vb.describe();
  EXPECT_EQ(key_values(vb.out)["violations"], "0") << vb.out;

  // float64 variables: a float64 stream (format version 13 layout), written back as doubles.
  const std::string in64 = "-i 'm.nc:UD[time=1]' -i 'm.nc:VD[time=1]' -i 'm.nc:WD[time=1]'";
  ASSERT_EQ(factz(dir, "compress " + in64 + " -z d.fz -M ABS 1e-6").exit_code, 0);
  const Outcome i64 = factz(dir, "info -z d.fz");
  EXPECT_NE(i64.out.find("format version 19: compact container, sections of format version 13"), std::string::npos)
      << i64.out;
  ASSERT_EQ(factz(dir, "decompress -z d.fz -o d.nc:UD -o d.nc:VD -o d.nc:WD").exit_code, 0);
  const Outcome hd = testing::run_in(dir, "ncdump -h d.nc");
  EXPECT_EQ(declaration(hd.out, "WD"), declaration(h0.out, "WD")) << hd.out;
  const Outcome vd = factz(dir, "verify " + in64 + " -d d.nc:UD -d d.nc:VD -d d.nc:WD --json");
  ASSERT_EQ(vd.exit_code, 0) << vd.describe();
  EXPECT_NE(vd.out.find("\"violations\": 0"), std::string::npos) << vd.out;
  EXPECT_NE(vd.out.find("\"dtype\": \"float64\""), std::string::npos) << vd.out;

  // Refused in one line: a grid that -3 contradicts, components of different shapes or
  // types, a slice that leaves two dimensions.
  expect_one_line(factz(dir, "compress -3 36 33 4 " + in + " -z x.fz"), 1, {"m.nc:U[time=1]", "-3 says"});
  expect_one_line(factz(dir, "compress -i 'm.nc:U[time=1]' -i 'm.nc:V[time=1]' -i 'm.nc:WD[time=1]' -z x.fz"), 1,
                  {"w m.nc:WD[time=1] is float64", "u, v and w must have the same type"});
  expect_one_line(factz(dir, "compress -i 'm.nc:U[time=1]' -i 'm.nc:V[time=1]' -i 'm.nc:W[time=1,lev=0]' -z x.fz"),
                  1, {"m.nc:W[time=1,lev=0]", "dimension lev"});
  expect_one_line(factz(dir, "compress -i 'm.nc:U[time=1]' -i 'm.nc:V[time=1]' -i w.f32 -z x.fz --mode none"), 0,
                  {});
}

// A scalar stream remembers its variable: a 2D slice and a 3D field, float32 and float64,
// written back with their dimensions, attributes and coordinates.
TEST(Netcdf, ScalarStreamsComeBackWithTheirDimensions) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_levels(dir);
  const Outcome h0 = testing::run_in(dir, "ncdump -h m.nc");
  struct Case {
    std::string input, grid, var;
  };
  for (const Case& k : {Case{"m.nc:U[time=1,lev=2]", "--scalar", "U"}, Case{"m.nc:W[time=1]", "-3 36 33 3", "W"},
                        Case{"m.nc:VD[time=0]", "-3 36 33 3", "VD"}}) {
    SCOPED_TRACE(k.input);
    for (const char* mode : {"none", "contour-tree"}) {
      const Outcome c = factz(dir, "compress " + k.grid + " -i '" + k.input + "' -z t.fz --mode " + mode);
      ASSERT_EQ(c.exit_code, 0) << c.describe();
      // Version 19 holds the record; version 22 (the interpolation predictor) holds it too.
      const std::string info = factz(dir, "info -z t.fz").out;
      EXPECT_TRUE(info.find("format version 19") != std::string::npos ||
                  info.find("format version 22") != std::string::npos) << info;
      ASSERT_EQ(factz(dir, "decompress --replace -z t.fz -o t.nc:" + k.var).exit_code, 0);
      const Outcome h1 = testing::run_in(dir, "ncdump -h t.nc");
      EXPECT_EQ(declaration(h1.out, k.var), declaration(h0.out, k.var)) << h1.out;
      EXPECT_EQ(declaration(h1.out, "lat"), declaration(h0.out, "lat")) << h1.out;
      // The slice's level is one of length 1 with its coordinate value.
      const auto lev = dumped_values(dir, "t.nc", "lev");
      const std::vector<double> want_lev =
          k.grid == "--scalar" ? std::vector<double>{700} : std::vector<double>{1000, 850, 700};
      EXPECT_EQ(lev, want_lev);
      const Outcome v = factz(dir, "verify " + std::string(k.grid == "--scalar" ? "" : k.grid + " ") + "-i '" +
                                       k.input + "' -d t.nc:" + k.var);
      ASSERT_EQ(v.exit_code, 0) << v.describe();
      auto kv = key_values(v.out);
      EXPECT_EQ(kv["mask_mismatch"], "0") << v.out;
      EXPECT_EQ(kv["same_tree"], std::string(mode) == "contour-tree" ? "1" : kv["same_tree"]) << v.out;
    }
  }
  // A 3D variable without -3: a 2D slice needs every leading index, and the message says how
  // to read it as a 3D field instead (its grid, x first).
  expect_one_line(factz(dir, "compress --scalar -i 'm.nc:W[time=1]' -z t.fz"), 1,
                  {"m.nc:W[time=1]: select dimension lev too", "or, for a 3D scalar field, give -3 36 33 3"});
  expect_one_line(factz(dir, "ct -i 'm.nc:W[time=1]'"), 1, {"give -3 36 33 3"});
}

// A curvilinear grid's file (CF): U and V name auxiliary coordinates lat(y, x) and lon(y, x),
// a scalar height, tlat(time, y) over the sliced time, a grid-mapping variable (by name and
// in CF 1.7's extended form), one variable that does not exist and one with another dimension.
std::string grid_cdl() {
  constexpr int nx = 12, ny = 10;
  std::ostringstream c;
  char buf[40];
  auto doubles = [&](auto f, int n) {
    std::string out;
    for (int k = 0; k < n; ++k) {
      std::snprintf(buf, sizeof buf, "%s%.17g", k ? ", " : "", f(k));
      out += buf;
    }
    return out;
  };
  c << "netcdf grid {\ndimensions:\n  time = UNLIMITED ;\n  y = " << ny << " ;\n  x = " << nx << " ;\n  nv = 4 ;\n"
    << "variables:\n  double time(time) ;\n    time:units = \"hours since 2000-01-01\" ;\n"
    << "  float U(time, y, x) ;\n    U:coordinates = \"lat lon height tlat nowhere lat_bnds\" ;\n"
    << "    U:grid_mapping = \"crs\" ;\n    U:units = \"m s-1\" ;\n"
    << "  float V(time, y, x) ;\n    V:coordinates = \"lat lon\" ;\n    V:grid_mapping = \"crs: lon lat\" ;\n"
    << "  double lat(y, x) ;\n    lat:units = \"degrees_north\" ;\n    lat:standard_name = \"latitude\" ;\n"
    << "  double lon(y, x) ;\n    lon:units = \"degrees_east\" ;\n"
    << "  float height ;\n    height:units = \"m\" ;\n  float tlat(time, y) ;\n"
    << "  int crs ;\n    crs:grid_mapping_name = \"rotated_latitude_longitude\" ;\n"
    << "    crs:grid_north_pole_latitude = 39.25 ;\n  double lat_bnds(y, x, nv) ;\n"
    << "data:\n  time = 0, 6 ;\n"
    << "  U = " << doubles([&](int k) { return double(float(std::sin(0.37 * k) * 8.0)); }, 2 * nx * ny) << " ;\n"
    << "  V = " << doubles([&](int k) { return double(float(std::cos(0.23 * k + 1.0) * 6.0)); }, 2 * nx * ny) << " ;\n"
    << "  lat = " << doubles([&](int k) { return 40.0 + 0.1 * (k / nx) + 0.0123456789 * (k % nx) * (k / nx); }, nx * ny)
    << " ;\n  lon = " << doubles([&](int k) { return -20.0 + 0.3 * (k % nx) - 0.00987654321 * (k / nx); }, nx * ny)
    << " ;\n  height = 10 ;\n  tlat = " << doubles([&](int k) { return 0.5 * k; }, 2 * ny) << " ;\n  crs = 1 ;\n}\n";
  return c.str();
}

TEST(Netcdf, AuxiliaryCoordinatesAndGridMappingsComeBack) {
  REQUIRE_NETCDF();
  TempDir dir;
  std::ofstream(dir / "grid.cdl") << grid_cdl();
  ASSERT_EQ(testing::run_in(dir, "ncgen -k nc4 -o grid.nc grid.cdl").exit_code, 0);
  const Outcome h0 = testing::run_in(dir, "ncdump -h grid.nc");
  const std::string in = "-i 'grid.nc:U[time=1]' -i 'grid.nc:V[time=1]'";
  // By default the small ones are stored (format version 20); the 2D grid is named in a note.
  const Outcome c = factz(dir, "compress " + in + " -z a.fz");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_EQ(lines_with(c.err, "note: grid.nc:U[time=1] names the auxiliary coordinates lat(y, x), float64; "
                              "lon(y, x), float64, which the stream keeps only with --keep-coordinates").size(), 1u)
      << c.err;
  EXPECT_NE(c.err.find("names nowhere (coordinates / grid_mapping), which the file does not have"), std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("auxiliary variable lat_bnds of U not kept: its dimension nv is not one of U's"),
            std::string::npos) << c.err;
  const Outcome info = factz(dir, "info -z a.fz");
  for (const char* want : {"format version 20", "auxiliary height() (float32, 1 value(s): 10f",
                           "auxiliary tlat(time, y) (float32, 10 value(s): 5f, 5.5f, 6f", "auxiliary crs() (int32"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  EXPECT_EQ(info.out.find("auxiliary lat("), std::string::npos) << info.out;
  const Outcome d = factz(dir, "decompress -z a.fz -o b.nc:U -o b.nc:V");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  EXPECT_EQ(lines_with(d.err, "note: b.nc:U names lat, lon, nowhere, lat_bnds (coordinates / grid_mapping), which the "
                              "stream does not hold").size(), 1u) << d.err;
  EXPECT_EQ(lines_with(d.err, "note: b.nc:V names lat, lon").size(), 1u) << d.err;
  const Outcome h1 = testing::run_in(dir, "ncdump -h b.nc");
  for (const char* var : {"U", "V", "height", "crs"})
    EXPECT_EQ(declaration(h1.out, var), declaration(h0.out, var)) << var << "\n" << h1.out;
  // tlat(time, y) over the slice: time of length 1 holding the selected step.
  EXPECT_EQ(dumped_values(dir, "b.nc", "tlat"), (std::vector<double>{5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5}));
  EXPECT_EQ(dumped_values(dir, "b.nc", "crs"), (std::vector<double>{1}));
  EXPECT_EQ(dumped_values(dir, "b.nc", "time"), (std::vector<double>{6}));
  EXPECT_EQ(h1.out.find("double lat("), std::string::npos) << h1.out;

  // With --keep-coordinates the grid is stored too, once for both components, and comes back
  // bit for bit (ncdump -p 17 prints every double exactly).
  const Outcome k = factz(dir, "compress " + in + " -z k.fz --keep-coordinates");
  ASSERT_EQ(k.exit_code, 0) << k.describe();
  EXPECT_EQ(k.err.find("--keep-coordinates"), std::string::npos) << k.err;
  const Outcome kinfo = factz(dir, "info -z k.fz");
  EXPECT_EQ(lines_with(kinfo.out, "auxiliary lat(y, x) (float64, 120 value(s)").size(), 1u) << kinfo.out;
  const Outcome kd = factz(dir, "decompress -z k.fz -o k.nc:U -o k.nc:V");
  ASSERT_EQ(kd.exit_code, 0) << kd.describe();
  EXPECT_EQ(lines_with(kd.err, "note:").size(), 1u) << "only U's nowhere and lat_bnds: " << kd.err;
  EXPECT_NE(kd.err.find("names nowhere, lat_bnds"), std::string::npos) << kd.err;
  const Outcome h2 = testing::run_in(dir, "ncdump -h k.nc");
  for (const char* var : {"U", "V", "height", "crs", "lat", "lon", "tlat"})
    EXPECT_EQ(declaration(h2.out, var), declaration(h0.out, var)) << var << "\n" << h2.out;
  for (const char* var : {"lat", "lon"}) {
    const auto want = dumped_values(dir, "grid.nc", var), got = dumped_values(dir, "k.nc", var);
    ASSERT_EQ(got.size(), 120u);
    EXPECT_EQ(got, want) << var;
  }
  EXPECT_GT(fs::file_size(dir / "k.fz"), fs::file_size(dir / "a.fz") + 240) << "240 doubles, a byte or more each";
  // The field is the same either way, and verify reads the written variables.
  EXPECT_EQ(testing::run_in(dir, "ncdump -v U b.nc | sed -n '/^ U =/,$p'").out,
            testing::run_in(dir, "ncdump -v U k.nc | sed -n '/^ U =/,$p'").out);
  const Outcome v = factz(dir, "verify " + in + " -d k.nc:U -d k.nc:V");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  EXPECT_EQ(key_values(v.out)["violations"], "0") << v.out;
  // A scalar field keeps them the same way.
  const Outcome sc = factz(dir, "compress --scalar -i 'grid.nc:U[time=1]' -z s.fz --keep-coordinates");
  ASSERT_EQ(sc.exit_code, 0) << sc.describe();
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o s.nc:U").exit_code, 0);
  EXPECT_EQ(dumped_values(dir, "s.nc", "lat"), dumped_values(dir, "grid.nc", "lat"));

  // So does a multi-block file (version 5: the record after the last block), and a region of
  // it comes back with the window's coordinates.
  const Outcome mb = factz(dir, "compress " + in + " -z m.fzmb --blocks 2 2 --keep-coordinates");
  ASSERT_EQ(mb.exit_code, 0) << mb.describe();
  const Outcome minfo = factz(dir, "info -z m.fzmb");
  EXPECT_EQ(lines_with(minfo.out, "auxiliary lat(y, x) (float64, 120 value(s)").size(), 1u) << minfo.out;
  EXPECT_NE(minfo.out.find("file version 5)"), std::string::npos) << minfo.out;
  const Outcome md = factz(dir, "decompress -z m.fzmb -o mb.nc:U -o mb.nc:V");
  ASSERT_EQ(md.exit_code, 0) << md.describe();
  const Outcome h3 = testing::run_in(dir, "ncdump -h mb.nc");
  for (const char* var : {"U", "V", "height", "crs", "lat", "lon", "tlat", "time"})
    EXPECT_EQ(declaration(h3.out, var), declaration(h0.out, var)) << var << "\n" << h3.out;
  for (const char* var : {"lat", "lon"}) EXPECT_EQ(dumped_values(dir, "mb.nc", var), dumped_values(dir, "grid.nc", var));
  const Outcome mv = factz(dir, "verify " + in + " -d mb.nc:U -d mb.nc:V");
  ASSERT_EQ(mv.exit_code, 0) << mv.describe();
  EXPECT_EQ(key_values(mv.out)["violations"], "0") << mv.out;
  // The window x in [3, 9), y in [2, 7): lat(y, x) and the field cut to it.
  const Outcome mr = factz(dir, "decompress -z m.fzmb --region 3 2 9 7 -o r.nc:U -o r.nc:V");
  ASSERT_EQ(mr.exit_code, 0) << mr.describe();
  const Outcome hr = testing::run_in(dir, "ncdump -h r.nc");
  EXPECT_NE(hr.out.find("y = 5 ;"), std::string::npos) << hr.out;
  EXPECT_NE(hr.out.find("x = 6 ;"), std::string::npos) << hr.out;
  EXPECT_EQ(declaration(hr.out, "lat"), declaration(h0.out, "lat")) << hr.out;
  const std::vector<double> lat = dumped_values(dir, "grid.nc", "lat"), rlat = dumped_values(dir, "r.nc", "lat");
  const std::vector<double> u = dumped_values(dir, "mb.nc", "U"), ru = dumped_values(dir, "r.nc", "U");
  ASSERT_EQ(rlat.size(), 30u);
  ASSERT_EQ(ru.size(), 30u);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 6; ++x) {
      EXPECT_EQ(rlat[size_t(y * 6 + x)], lat[size_t((y + 2) * 12 + x + 3)]) << x << " " << y;
      EXPECT_EQ(ru[size_t(y * 6 + x)], u[size_t((y + 2) * 12 + x + 3)]) << x << " " << y;
    }
  // Per-rank files are blocks, not the field's variables: refused.
  expect_one_line(factz(dir, "compress -i u_%r.f32 -i v_%r.f32 -2 12 10 -z p.fzmb --blocks 2 2 --per-rank "
                             "--keep-coordinates"),
                  2, {"--keep-coordinates: per-rank files are blocks"});
}

// CF cell bounds (a CMIP-like file): lat_bnds(lat, bnds), lon_bnds(lon, bnds) and
// time_bnds(time, bnds), named by the coordinate variables' `bounds` attributes, come back
// with their own dimension `bnds` (record version 4, format version 21), in plain streams,
// scalar streams and multi-block files, a region cut to its window.
TEST(Netcdf, CellBoundsComeBackWithTheirOwnDimension) {
  REQUIRE_NETCDF();
  TempDir dir;
  constexpr int nx = 8, ny = 6, nl = 3;
  std::vector<float> lat, lon, latb, lonb, ua, va;
  for (int k = 0; k < ny; ++k) lat.push_back(-50.0f + 20.0f * float(k));
  for (int k = 0; k < nx; ++k) lon.push_back(45.0f * float(k));
  for (float y : lat) latb.insert(latb.end(), {y - 10.0f, y + 10.0f});
  for (float x : lon) lonb.insert(lonb.end(), {x - 22.5f, x + 22.5f});
  for (int k = 0; k < 2 * nl * ny * nx; ++k) {
    ua.push_back(float(std::sin(0.37 * k) * 9.0));
    va.push_back(float(std::cos(0.21 * k + 0.5) * 7.0));
  }
  std::ostringstream c;
  c << "netcdf c {\ndimensions:\n  time = UNLIMITED ;\n  plev = " << nl << " ;\n  lat = " << ny << " ;\n  lon = " << nx
    << " ;\n  bnds = 2 ;\nvariables:\n"
    << "  double time(time) ;\n    time:units = \"days since 2000-01-01\" ;\n    time:bounds = \"time_bnds\" ;\n"
    << "  double time_bnds(time, bnds) ;\n  double plev(plev) ;\n    plev:bounds = \"plev_bnds\" ;\n"
    << "  float lat(lat) ;\n    lat:bounds = \"lat_bnds\" ;\n  float lat_bnds(lat, bnds) ;\n"
    << "  float lon(lon) ;\n    lon:bounds = \"lon_bnds\" ;\n  float lon_bnds(lon, bnds) ;\n    lon_bnds:units = \"degrees_east\" ;\n"
    << "  float ua(time, plev, lat, lon) ;\n    ua:units = \"m s-1\" ;\n  float va(time, plev, lat, lon) ;\n"
    << "data:\n  time = 15.5, 45 ;\n  time_bnds = 0, 31, 31, 59 ;\n  plev = 100000, 85000, 50000 ;\n"
    << "  lat = " << numbers(lat) << " ;\n  lat_bnds = " << numbers(latb) << " ;\n  lon = " << numbers(lon)
    << " ;\n  lon_bnds = " << numbers(lonb) << " ;\n  ua = " << numbers(ua) << " ;\n  va = " << numbers(va) << " ;\n}\n";
  std::ofstream(dir / "c.cdl") << c.str();
  ASSERT_EQ(testing::run_in(dir, "ncgen -k nc4 -o c.nc c.cdl").exit_code, 0);
  const Outcome h0 = testing::run_in(dir, "ncdump -h c.nc");
  const std::string in = "-i 'c.nc:ua[time=1,plev=2]' -i 'c.nc:va[time=1,plev=2]'";
  const Outcome z = factz(dir, "compress " + in + " -z c.fz");
  ASSERT_EQ(z.exit_code, 0) << z.describe();
  EXPECT_NE(z.err.find("names plev_bnds (bounds), which the file does not have"), std::string::npos) << z.err;
  const Outcome info = factz(dir, "info -z c.fz");
  for (const char* want : {"format version 21", "auxiliary lat_bnds(lat, bnds=2) (float32, 12 value(s): -60f, -40f",
                           "auxiliary time_bnds(time, bnds=2) (float64, 2 value(s): 31, 59"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  auto expect_bounds = [&](const std::string& file, int x0, int nx1, int y0, int ny1) {
    const Outcome h = testing::run_in(dir, "ncdump -h " + file);
    for (const char* var : {"lat_bnds", "lon_bnds", "time_bnds", "lat", "lon", "ua"})
      EXPECT_EQ(declaration(h.out, var), declaration(h0.out, var)) << var << "\n" << h.out;
    EXPECT_NE(h.out.find("bnds = 2 ;"), std::string::npos) << h.out;
    EXPECT_EQ(dumped_values(dir, file, "time_bnds"), (std::vector<double>{31, 59}));
    const std::vector<double> la = dumped_values(dir, file, "lat_bnds"), lo = dumped_values(dir, file, "lon_bnds");
    ASSERT_EQ(la.size(), size_t(2 * ny1));
    ASSERT_EQ(lo.size(), size_t(2 * nx1));
    for (int k = 0; k < 2 * ny1; ++k) EXPECT_EQ(la[size_t(k)], double(latb[size_t(2 * y0 + k)])) << k;
    for (int k = 0; k < 2 * nx1; ++k) EXPECT_EQ(lo[size_t(k)], double(lonb[size_t(2 * x0 + k)])) << k;
  };
  const Outcome d = factz(dir, "decompress -z c.fz -o o.nc:ua -o o.nc:va");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  // plev's bounds were not in the file: its attribute names a variable the new file lacks too.
  EXPECT_EQ(lines_with(d.err, "note: the coordinates of o.nc:ua name the cell bounds plev_bnds, which the stream "
                              "does not hold").size(), 1u) << d.err;
  EXPECT_EQ(lines_with(d.err, "lat_bnds").size(), 0u) << d.err;
  expect_bounds("o.nc", 0, nx, 0, ny);
  // A scalar stream, and a multi-block file and a region of it.
  ASSERT_EQ(factz(dir, "compress --scalar -i 'c.nc:ua[time=1,plev=2]' -z s.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o s.nc:ua").exit_code, 0);
  expect_bounds("s.nc", 0, nx, 0, ny);
  ASSERT_EQ(factz(dir, "compress " + in + " -z m.fzmb --blocks 2 2").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb -o mb.nc:ua -o mb.nc:va").exit_code, 0);
  expect_bounds("mb.nc", 0, nx, 0, ny);
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb --region 2 1 6 5 -o r.nc:ua -o r.nc:va").exit_code, 0);
  expect_bounds("r.nc", 2, 4, 1, 4);
  // verify reads the written variables back.
  const Outcome v = factz(dir, "verify " + in + " -d o.nc:ua -d o.nc:va");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  EXPECT_EQ(key_values(v.out)["violations"], "0") << v.out;
}

// A record whose auxiliary variable netCDF refuses (a name with '/', which a record may hold
// but a netCDF name may not): the field's variables are written all the same, with a note.
TEST(Netcdf, AnAuxiliaryNetcdfRefusesDoesNotStopTheField) {
  REQUIRE_NETCDF();
  TempDir dir;
  SourceRecord record = testing::with_auxiliaries(testing::sample_record());
  record.auxiliaries[1].name = "bad/name";
  Options o;
  o.source = encode_source_record(record);
  VectorField2D f;
  f.nx = 36;
  f.ny = 33;
  f.u.assign(36 * 33, 1.5f);
  f.v.assign(36 * 33, -0.5f);
  for (size_t k = 0; k < f.u.size(); ++k) f.u[k] += 0.01f * float(k % 37);
  const auto stream = compress(f, o);
  ASSERT_TRUE(stream.ok()) << stream.status().to_string();
  std::ofstream(dir / "a.fz", std::ios::binary)
      .write(reinterpret_cast<const char*>(stream->data()), std::streamsize(stream->size()));
  const Outcome d = factz(dir, "decompress -z a.fz -o o.nc:U -o o.nc:V");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  EXPECT_NE(d.err.find("auxiliary variable bad/name not written"), std::string::npos) << d.err;
  const Outcome h = testing::run_in(dir, "ncdump -h o.nc");
  for (const char* want : {"float U(time, lat, lon)", "float V(time, lat, lon)", "double lat2d(lat, lon)",
                           "float height(time)", "char label(lon)"})
    EXPECT_NE(h.out.find(want), std::string::npos) << want << "\n" << h.out;
  EXPECT_EQ(dumped_values(dir, "o.nc", "height"), (std::vector<double>{10}));
}

TEST(Netcdf, ErrorsNameTheFileAndTheVariableInOneLine) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm(dir);
  struct Case {
    std::string args;
    int code;
    std::vector<std::string> needles;
  };
  const std::string v1 = " -i 'storm.nc:V[time=1]'";
  const std::vector<Case> cases = {
      {"-i 'storm.nc:X[time=1]'" + v1, 1, {"storm.nc has no variable X", "its variables: time, lat, lon, U, V"}},
      {"-i storm.nc:S -i storm.nc:S", 1, {"storm.nc:S holds integers (short)"}},
      {"-i storm.nc:C -i storm.nc:C", 1, {"storm.nc:C is not numeric (type char)"}},
      {"-i 'storm.nc:U[time=0]' -i storm.nc:D", 1,
       {"u storm.nc:U[time=0] is float32 but v storm.nc:D is float64", "same type"}},
      {"-i storm.nc:one -i storm.nc:one", 1, {"storm.nc:one is 1-dimensional (lon=36)"}},
      {"-i 'storm.nc:U[time=0]' -i storm.nc:W", 1,
       {"u storm.nc:U[time=0] is 36 x 33 (nx x ny) but v storm.nc:W is 41 x 41", "same shape"}},
      {"-i 'storm.nc:U[time=3]'" + v1, 1, {"storm.nc:U[time=3]: index 3 is out of range for dimension time of length 3"}},
      {"-i 'storm.nc:U[7,:,:]'" + v1, 1, {"index 7 is out of range for dimension time"}},
      {"-i 'storm.nc:U[time=1'" + v1, 1, {"storm.nc:U[time=1: bad selection"}},
      {"-i 'storm.nc:U[1,:]'" + v1, 1, {"2 entries for 3 dimensions (time=3, lat=33, lon=36)"}},
      {"-i 'storm.nc:U[1,0,:]'" + v1, 1, {"dimension lat is one of the last two"}},
      {"-i 'storm.nc:U[lat=1]'" + v1, 1, {"dimension lat is one of the last two"}},
      {"-i 'storm.nc:U[depth=1]'" + v1, 1, {"no dimension 'depth'"}},
      {"-i 'storm.nc:U[time=one]'" + v1, 1, {"'one' is not an index of dimension time"}},
      {"-i storm.nc:U" + v1, 1, {"storm.nc:U has 3 dimensions", "storm.nc:U[time=0]"}},
      {"-i storm.nc:" + v1, 1, {"no variable after ':'"}},
      {"-i storm.nc -i storm.nc", 2, {"storm.nc is a netCDF file: name the variable", "storm.nc:VAR"}},
      {"-i missing.nc:U" + v1, 1, {"cannot read missing.nc: does not exist"}},
      {"-i folder.nc:U" + v1, 1, {"cannot read folder.nc: is a directory"}},
      {"-i text.nc:U" + v1, 1, {"cannot read text.nc: not a netCDF or HDF5 file"}},
      {"-i cut4.nc:U -i cut4.nc:V", 1, {"cannot read cut4.nc"}},
      {"-i 'cut3.nc:U[time=1]' -i 'cut3.nc:V[time=1]'", 1, {"cannot read cut3.nc: truncated"}},
  };
  fs::create_directory(dir / "folder.nc");
  std::ofstream(dir / "text.nc") << "this is not netCDF\n";
  make_storm(dir, "classic", "storm3.nc");
  const std::string nc4 = testing::read_text_file(dir / "storm.nc"), nc3 = testing::read_text_file(dir / "storm3.nc");
  std::ofstream(dir / "cut4.nc", std::ios::binary) << nc4.substr(0, nc4.size() / 2);
  std::ofstream(dir / "cut3.nc", std::ios::binary) << nc3.substr(0, nc3.size() / 2);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    expect_one_line(factz(dir, "cp " + c.args), c.code, c.needles);
  }
  // The same reader behind every command (here compress and verify -d).
  expect_one_line(factz(dir, "compress -i storm.nc:S" + v1 + " -z s.fz"), 1, {"storm.nc:S holds integers"});
  EXPECT_FALSE(fs::exists(dir / "s.fz"));
  ASSERT_EQ(factz(dir, "compress -i 'storm.nc:U[time=1]'" + v1 + " -z s.fz").exit_code, 0);
  expect_one_line(factz(dir, "verify -i 'storm.nc:U[time=1]'" + v1 + " -d storm.nc:W -d storm.nc:W"), 1,
                  {"storm.nc:W is 41 x 41 (nx x ny), but the original (-i) is 36 x 33"});
  // Outputs: a variable name is needed, one variable is written once, an input is never
  // overwritten.
  expect_one_line(factz(dir, "decompress -z s.fz -o o.nc -o o2.nc"), 2, {"o.nc is a netCDF file: name the variable"});
  expect_one_line(factz(dir, "decompress -z s.fz -o o.nc:U -o o.nc:U"), 2, {"o.nc:U is named twice"});
  expect_one_line(factz(dir, "compress -i 'storm.nc:U[time=1]'" + v1 + " -z storm.nc"), 2,
                  {"refusing to overwrite an input"});
  expect_one_line(factz(dir, "decompress -z s.fz -o 'o.nc:U[0]' -o o.nc:V"), 2, {"takes no selection"});
  EXPECT_FALSE(fs::exists(dir / "o.nc"));
}

// The file's fill values are declared as if given with --fill-u / --fill-v; --fill on the
// command line replaces them (--fill nan: only NaN marks missing data).
TEST(Netcdf, FillOnTheCommandLineReplacesTheFilesFillValue) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm(dir);
  const std::string in = "cp -i 'storm.nc:U[time=1]' -i 'storm.nc:V[time=1]'";
  EXPECT_EQ(key_values(factz(dir, in).out)["masked_vertices"], std::to_string(kLand));
  EXPECT_EQ(key_values(factz(dir, in + " --fill nan").out)["masked_vertices"], "0");
  EXPECT_EQ(key_values(factz(dir, in + " --fill-u nan").out)["masked_vertices"], std::to_string(kLand))
      << "v's own fill value still marks the land";
}

// A stream without a source record: plain (y, x) variables, and _FillValue when the missing
// vertices share one bit pattern.
TEST(Netcdf, StreamsOfRawFieldsBecomePlainVariables) {
  REQUIRE_NETCDF();
  TempDir dir;
  const Storm s = storm_at(1);
  for (const auto& [name, plane] : {std::pair{"u.f32", &s.u}, std::pair{"v.f32", &s.v}})
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(plane->data()), std::streamsize(plane->size() * 4));
  ASSERT_EQ(factz(dir, "compress -2 36 33 -i u.f32 -i v.f32 -z m.fz --fill 1e20").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress -2 36 33 -i u.f32 -i v.f32 -z p.fz --fill nan").exit_code, 0);
  const std::string m_info = factz(dir, "info -z m.fz").out;  // mode speculative: version 9
  EXPECT_NE(m_info.find("format version 9"), std::string::npos) << m_info;
  EXPECT_EQ(m_info.find("source"), std::string::npos) << "no source section: " << m_info;
  ASSERT_EQ(factz(dir, "decompress -z m.fz -o m.nc:u -o m.nc:v").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z p.fz -o p.nc:u -o p.nc:v").exit_code, 0);
  const std::string m = testing::run_in(dir, "ncdump -h m.nc").out, p = testing::run_in(dir, "ncdump -h p.nc").out;
  for (const char* want : {"y = 33 ;", "x = 36 ;", "float u(y, x) ;", "u:_FillValue = 1.e+20f ;", "v:_FillValue = 1.e+20f ;"})
    EXPECT_NE(m.find(want), std::string::npos) << want << "\n" << m;
  EXPECT_EQ(p.find("_FillValue"), std::string::npos) << "no missing vertices, no fill value: " << p;
  const Outcome vr = factz(dir, "verify -i m.nc:u -i m.nc:v -d m.nc:u -d m.nc:v");
  EXPECT_EQ(key_values(vr.out)["masked_vertices"], std::to_string(kLand)) << vr.describe();
}

// FILE.nc:VAR writes a whole new file: an existing one (the original itself, other time steps,
// another run's output, a file of another kind) is refused before anything is written, with
// what it holds, unless --replace; an empty file is nothing to lose; plain outputs are
// replaced as before.
TEST(Netcdf, AnExistingFileIsReplacedOnlyWithReplace) {
  REQUIRE_NETCDF();
  TempDir dir;
  make_storm(dir);
  const auto bytes = [&](const std::string& name) {
    std::ifstream f(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const bool hdf5 = testing::hdf5_built_in(kCli);
  ASSERT_EQ(factz(dir, "compress -i 'storm.nc:U[time=1]' -i 'storm.nc:V[time=1]' -z s.fz -M REL 1e-2").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress --scalar -i 'storm.nc:U[time=1]' -z t.fz -M REL 1e-2").exit_code, 0);
  const std::string original = bytes("storm.nc");
  // Into the original file (two time steps of U and V; the field is one of them).
  for (const std::string outputs : {"-o storm.nc:U -o storm.nc:V", "-o u.f32 -o storm.nc:V", "-o storm.nc:U -o v.nc:V"}) {
    SCOPED_TRACE(outputs);
    expect_one_line(factz(dir, "decompress -z s.fz " + outputs), 2,
                    {"output -o storm.nc:", "storm.nc exists (its variables: ", "--replace"});
    EXPECT_EQ(bytes("storm.nc"), original);
    EXPECT_FALSE(fs::exists(dir / "u.f32")) << "nothing is written before the refusal";
    EXPECT_FALSE(fs::exists(dir / "v.nc"));
  }
  expect_one_line(factz(dir, "decompress -z t.fz -o storm.nc:U"), 2, {"storm.nc exists (its variables: "});
  EXPECT_EQ(bytes("storm.nc"), original);
  // Another run's output: refused again, replaced with --replace.
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o out.nc:U -o out.nc:V").exit_code, 0);
  const std::string first = bytes("out.nc");
  expect_one_line(factz(dir, "decompress -z s.fz -o out.nc:U2 -o out.nc:V2"), 2,
                  {"out.nc exists (its variables: ", "U, V"});
  EXPECT_EQ(bytes("out.nc"), first);
  ASSERT_EQ(factz(dir, "decompress --replace -z s.fz -o out.nc:U2 -o out.nc:V2").exit_code, 0);
  const std::string replaced = testing::run_in(dir, "ncdump -h out.nc").out;
  EXPECT_NE(replaced.find("float U2("), std::string::npos) << replaced;
  EXPECT_EQ(replaced.find("float U("), std::string::npos) << "the whole file is replaced: " << replaced;
  // A file that is not netCDF / HDF5, and an HDF5 name.
  std::ofstream(dir / "notes.nc") << "my notes\n";
  expect_one_line(factz(dir, "decompress -z t.fz -o notes.nc:U"), 2, {"notes.nc exists (not a netCDF or HDF5 file)"});
  EXPECT_EQ(bytes("notes.nc"), "my notes\n");
  if (hdf5) {
    fs::copy_file(dir / "storm.nc", dir / "storm.h5");
    expect_one_line(factz(dir, "decompress -z t.fz -o storm.h5:/U"), 2, {"storm.h5 exists (its datasets: /C, "});
    EXPECT_EQ(bytes("storm.h5"), original);
  }
  // An empty file holds nothing to lose; raw outputs are replaced as every plain output is.
  std::ofstream(dir / "empty.nc").close();
  EXPECT_EQ(factz(dir, "decompress -z t.fz -o empty.nc:U").exit_code, 0);
  EXPECT_NE(testing::run_in(dir, "ncdump -h empty.nc").out.find("float U("), std::string::npos);
  std::ofstream(dir / "u.f32") << "old";
  EXPECT_EQ(factz(dir, "decompress -z s.fz -o u.f32 -o v.f32").exit_code, 0);
  EXPECT_EQ(fs::file_size(dir / "u.f32"), 36u * 33u * 4u);
}

// CF: values outside a variable's valid range (valid_range, else valid_min / valid_max) are
// missing data, as netCDF4-python masks them: they are stored exactly and kept out of the
// bound's range and the mesh, like fill values; packed variables compare their integer range
// (also with a negative scale_factor); --fill replaces what the file declares; decompressed
// values that the bound moves beyond the range are counted in a warning.
TEST(Netcdf, ValuesOutsideTheValidRangeAreMissingData) {
  REQUIRE_NETCDF();
  TempDir dir;
  constexpr int nx = 12, ny = 10;
  std::vector<float> u, v, w;
  std::vector<int> packed, reversed;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      u.push_back(float(std::sin(0.5 * x) * std::cos(0.4 * y)));
      v.push_back(float(std::cos(0.45 * x) * std::sin(0.35 * y)));
      w.push_back(float(std::sin(0.3 * x + 0.2 * y)));
      packed.push_back(int(std::lround(100 * std::sin(0.5 * x) * std::cos(0.4 * y))));
      reversed.push_back(int(std::lround(100 * std::cos(0.45 * x) * std::sin(0.35 * y))));
    }
  u[0] = -999.f;                // below valid_range
  u[5] = 1e30f;                 // above it
  v[nx + 3] = 500.f;            // above valid_max
  packed[7] = 5000;             // stored units: above valid_range = -1000s, 1000s
  reversed[2 * nx + 1] = -5000;  // below valid_min -1000s, stored units, negative scale_factor
  std::vector<int> stored;  // W as integers of step -0.01, with valid_min / valid_max their own extremes
  for (float x : w) stored.push_back(int(std::lround(-100 * x)));
  const auto [lowest, highest] = std::minmax_element(stored.begin(), stored.end());
  std::vector<float> many = w;
  for (int k = 0; k < 70; ++k) many[size_t(k)] = 100.f + float(k);  // 70 distinct values above valid_max
  const auto ints = [](const std::vector<int>& a) {
    std::string s;
    for (size_t k = 0; k < a.size(); ++k) s += (k ? ", " : "") + std::to_string(a[k]);
    return s;
  };
  std::ostringstream c;
  c << "netcdf r {\ndimensions:\n  y = " << ny << " ;\n  x = " << nx << " ;\nvariables:\n"
    << "  float U(y, x) ;\n    U:valid_range = -10.f, 10.f ;\n"
    << "  float V(y, x) ;\n    V:valid_max = 10.f ;\n"
    << "  float W(y, x) ;\n    W:valid_min = -1.f ;\n    W:valid_max = 1.f ;\n"
    << "  float M(y, x) ;\n    M:valid_max = 10.f ;\n"
    << "  short P(y, x) ;\n    P:scale_factor = 0.01f ;\n    P:valid_range = -1000s, 1000s ;\n"
    << "  short Q(y, x) ;\n    Q:scale_factor = -0.01f ;\n    Q:valid_min = -1000s ;\n    Q:valid_max = 1000s ;\n"
    << "  short R(y, x) ;\n    R:scale_factor = -0.01f ;\n    R:valid_min = " << *lowest << "s ;\n    R:valid_max = "
    << *highest << "s ;\n"
    << "data:\n  U = " << numbers(u) << " ;\n  V = " << numbers(v) << " ;\n  W = " << numbers(w) << " ;\n  M = "
    << numbers(many) << " ;\n  P = " << ints(packed) << " ;\n  Q = " << ints(reversed) << " ;\n  R = "
    << ints(stored) << " ;\n}\n";
  std::ofstream(dir / "r.cdl") << c.str();
  const Outcome g = testing::run_in(dir, "ncgen -k nc4 -o r.nc r.cdl");
  ASSERT_EQ(g.exit_code, 0) << g.describe();

  const Outcome cz = factz(dir, "compress -i r.nc:U -i r.nc:V -z r.fz -M REL 1e-2 --json");
  ASSERT_EQ(cz.exit_code, 0) << cz.describe();
  EXPECT_NE(cz.out.find("\"masked_vertices\": 3"), std::string::npos) << cz.out;
  EXPECT_NE(cz.err.find("r.nc:U: 2 value(s) outside its valid_range [-10, 10] are missing data"), std::string::npos)
      << cz.err;
  EXPECT_NE(cz.err.find("r.nc:V: 1 value(s) outside its valid_max 10 are missing data"), std::string::npos) << cz.err;
  EXPECT_EQ(cz.err.find("looks like a fill value"), std::string::npos) << cz.err;
  // The bound comes from the valid values' range (about 2), not from -999 and 1e30.
  const size_t at = cz.out.find("\"eb_abs\": ");
  ASSERT_NE(at, std::string::npos) << cz.out;
  EXPECT_LT(std::stod(cz.out.substr(at + 10)), 0.03) << cz.out;
  ASSERT_EQ(factz(dir, "decompress -z r.fz -o o.nc:U -o o.nc:V").exit_code, 0);
  const std::vector<double> ou = dumped_values(dir, "o.nc", "U"), ov = dumped_values(dir, "o.nc", "V");
  ASSERT_EQ(ou.size(), u.size());
  ASSERT_EQ(ov.size(), v.size());
  EXPECT_EQ(float(ou[0]), -999.f);
  EXPECT_EQ(float(ou[5]), 1e30f);
  EXPECT_EQ(float(ov[nx + 3]), 500.f);
  const Outcome vr = factz(dir, "verify -i r.nc:U -i r.nc:V -d o.nc:U -d o.nc:V");
  EXPECT_EQ(vr.exit_code, 0) << vr.describe();
  EXPECT_EQ(key_values(vr.out)["violations"], "0") << vr.out;
  EXPECT_EQ(key_values(vr.out)["mask_mismatch"], "0") << vr.out;
  EXPECT_EQ(key_values(vr.out)["masked_vertices"], "3") << vr.out;

  // Packed: the integers' range, whatever the sign of scale_factor; scalar fields too.
  const Outcome pz = factz(dir, "compress -i r.nc:P -i r.nc:Q -z p.fz -M REL 1e-2 --json");
  ASSERT_EQ(pz.exit_code, 0) << pz.describe();
  EXPECT_NE(pz.out.find("\"masked_vertices\": 2"), std::string::npos) << pz.out << pz.err;
  const Outcome sz = factz(dir, "compress --scalar -i r.nc:U -z s.fz -M REL 1e-2 --json");
  ASSERT_EQ(sz.exit_code, 0) << sz.describe();
  EXPECT_NE(sz.out.find("\"masked_vertices\": 2"), std::string::npos) << sz.out;

  // --fill replaces what the file declares: the values are then data (and the bound is theirs).
  const Outcome fz = factz(dir, "compress -i r.nc:U -i r.nc:V -z f.fz -M REL 1e-2 --fill nan --json");
  ASSERT_EQ(fz.exit_code, 0) << fz.describe();
  EXPECT_NE(fz.out.find("\"masked_vertices\": 0"), std::string::npos) << fz.out;

  // Too many distinct values to declare one by one: refused in one line.
  expect_one_line(factz(dir, "compress -i r.nc:M -i r.nc:W -z m.fz"), 1,
                  {"r.nc:M: 70 values lie outside its valid_max 10", "--fill"});

  // Values the bound moves beyond the range (W's is its values' own): the written range is
  // widened to hold them, so that no reader takes them as missing.
  ASSERT_EQ(factz(dir, "compress -i r.nc:W -i r.nc:V -z w.fz -M REL 1e-2").exit_code, 0);
  const Outcome dw = factz(dir, "decompress -z w.fz -o w.nc:W -o w.nc:V");
  ASSERT_EQ(dw.exit_code, 0) << dw.describe();
  EXPECT_NE(dw.err.find("w.nc:W: valid_min -1 and valid_max 1 written as valid_min "), std::string::npos) << dw.err;
  EXPECT_NE(dw.err.find("value(s) beyond them (by at most the bound)"), std::string::npos) << dw.err;
  EXPECT_EQ(dw.err.find("w.nc:V: "), std::string::npos) << dw.err;
  const std::vector<double> ww = dumped_values(dir, "w.nc", "W");
  ASSERT_EQ(ww.size(), w.size());
  const std::string header = testing::run_in(dir, "ncdump -h w.nc").out;
  const auto attribute = [&](const std::string& name) {
    const size_t at = header.find("W:" + name + " = ");
    return at == std::string::npos ? std::nan("") : std::stod(header.substr(at + name.size() + 5));
  };
  EXPECT_TRUE(attribute("valid_min") < -1.0 || attribute("valid_max") > 1.0) << header;
  EXPECT_GE(attribute("valid_min"), -1.0 - 0.03) << header;  // by at most the bound
  EXPECT_LE(attribute("valid_max"), 1.0 + 0.03) << header;
  EXPECT_EQ(header.find("W:_FillValue"), std::string::npos) << "W declared none: " << header;
  for (double x : ww) {  // ncdump prints 7 digits: compared as floats
    EXPECT_GE(float(x), float(attribute("valid_min")));
    EXPECT_LE(float(x), float(attribute("valid_max")));
  }
  const Outcome vw = factz(dir, "verify -i r.nc:W -i r.nc:V -d w.nc:W -d w.nc:V");
  EXPECT_EQ(key_values(vw.out)["mask_mismatch"], "0") << vw.describe();
  EXPECT_EQ(key_values(vw.out)["violations"], "0") << vw.describe();
  // A packed range with a negative scale_factor: the integers' valid_min bounds the unpacked
  // values from above, so the record (and the written file) names the bounds as they hold
  // for the unpacked values, in increasing order, widened too where needed; re-packed, the
  // integers' range comes back and a warning counts the values.
  const auto header_of = [&](const std::string& file) { return testing::run_in(dir, "ncdump -h " + file).out; };
  const Outcome dq = factz(dir, "decompress -z p.fz -o pq.nc:P -o pq.nc:Q");
  ASSERT_EQ(dq.exit_code, 0) << dq.describe();
  EXPECT_EQ(dq.err.find("pq.nc:Q: "), std::string::npos) << dq.err;
  EXPECT_EQ(dq.err.find("pq.nc:P: "), std::string::npos) << dq.err;
  for (const char* want : {"Q:valid_min = -10.f ;", "Q:valid_max = 10.f ;", "P:valid_range = -10.f, 10.f ;",
                           "Q:factz_packed_valid_min = -1000s ;", "Q:factz_packed_valid_max = 1000s ;"})
    EXPECT_NE(header_of("pq.nc").find(want), std::string::npos) << want << "\n" << header_of("pq.nc");
  const Outcome rz = factz(dir, "compress -i r.nc:R -i r.nc:V -z rr.fz -M REL 1e-2");
  ASSERT_EQ(rz.exit_code, 0) << rz.describe();
  const Outcome dr = factz(dir, "decompress -z rr.fz -o rr.nc:R -o rr.nc:V");
  ASSERT_EQ(dr.exit_code, 0) << dr.describe();
  EXPECT_NE(dr.err.find("rr.nc:R: valid_min -1 and valid_max 1 written as valid_min -1.0"), std::string::npos) << dr.err;
  EXPECT_EQ(dr.err.find("in decreasing order"), std::string::npos) << dr.err;
  const Outcome vr2 = factz(dir, "verify -i r.nc:R -i r.nc:V -d rr.nc:R -d rr.nc:V");
  EXPECT_EQ(key_values(vr2.out)["mask_mismatch"], "0") << vr2.describe();
  const Outcome dp = factz(dir, "decompress --repack -z rr.fz -o rp.nc:R -o rp.nc:V");
  ASSERT_EQ(dp.exit_code, 0) << dp.describe();
  EXPECT_NE(dp.err.find("rp.nc:R: "), std::string::npos) << dp.err;
  EXPECT_NE(dp.err.find("decompressed value(s) lie beyond its valid_min -1 and valid_max 1"), std::string::npos)
      << dp.err;
  for (const std::string& want : {"R:valid_min = " + std::to_string(*lowest) + "s ;",
                                 "R:valid_max = " + std::to_string(*highest) + "s ;"})
    EXPECT_NE(header_of("rp.nc").find(want), std::string::npos) << want << "\n" << header_of("rp.nc");
}


// With a negative scale_factor the smallest integer unpacks to the largest value: an integer
// valid_min bounds the unpacked values from above (netCDF4-python compares the integers).
// Both bounds and a single one hold as they do for the file's integers; the record and the
// written file name them so, and --repack gives the integers back under their own names. A
// stream whose record was written before (d2e9451, tests/data/golden/README.md) still
// decodes, its reversed pair written in increasing order.
TEST(Netcdf, NegativeScaleFactorBoundsAreNamedAsTheyHold) {
  REQUIRE_NETCDF();
  TempDir dir;
  std::ofstream(dir / "neg.cdl") <<
      "netcdf neg {\n"
      "dimensions:\n"
      "  y = 6 ;\n"
      "  x = 8 ;\n"
      "variables:\n"
      "  short Q(y, x) ;\n"
      "    Q:scale_factor = -0.01f ;\n"
      "    Q:valid_min = -1000s ;\n"
      "    Q:valid_max = 1000s ;\n"
      "  short S(y, x) ;\n"
      "    S:scale_factor = -0.01f ;\n"
      "    S:valid_min = -1000s ;\n"
      "data:\n"
      "  Q = 0, 0, 0, 0, 0, 0, 0, 0, 34, 31, 21, 8, -8, -22, -31, -34, 64, -5000, 40, 14, -15, -40, -58, -64, 87, 78, 54, 19, -20, -54, -78, -87, 99, 89, 61, 22, -22, -62, -89, -99, 98, 89, 61, 22, -22, -62, -89, -98 ;\n"
      "  S = 0, 48, 84, 100, 91, 60, 14, -35, 0, 44, 78, -5000, 84, 55, 13, -32, 0, 33, 59, 69, 63, 42, 10, -24, 0, 17, 30, 36, 33, 22, 5, -13, 0, -1, -2, -3, -3, -2, 0, 1, 0, -20, -35, -42, -38, -25, -6, 15 ;\n"
      "}\n";
  const Outcome g = testing::run_in(dir, "ncgen -k nc4 -o neg.nc neg.cdl");
  ASSERT_EQ(g.exit_code, 0) << g.describe();
  const Outcome cz = factz(dir, "compress -i neg.nc:Q -i neg.nc:S -z n.fz -M REL 1e-2 --json");
  ASSERT_EQ(cz.exit_code, 0) << cz.describe();
  // One integer -5000 in each (beyond -1000s): the only missing vertices (47 of S's 48 were
  // taken as missing when valid_min alone read as a lower bound of 10).
  EXPECT_NE(cz.out.find("\"masked_vertices\": 2,"), std::string::npos) << cz.out;
  EXPECT_NE(cz.err.find("neg.nc:S: 1 value(s) outside its valid_max 10 are missing data"), std::string::npos) << cz.err;
  EXPECT_NE(cz.err.find("neg.nc:Q: 1 value(s) outside its valid_min -10 and valid_max 10"), std::string::npos)
      << cz.err;
  const Outcome dz = factz(dir, "decompress -z n.fz -o o.nc:Q -o o.nc:S");
  ASSERT_EQ(dz.exit_code, 0) << dz.describe();
  const std::string header = testing::run_in(dir, "ncdump -h o.nc").out;
  for (const char* want : {"Q:valid_min = -10.f ;", "Q:valid_max = 10.f ;", "S:valid_max = 10.f ;",
                           "S:factz_packed_valid_min = -1000s ;"})
    EXPECT_NE(header.find(want), std::string::npos) << want << "\n" << header;
  EXPECT_EQ(header.find("S:valid_min"), std::string::npos) << header;
  const Outcome vz = factz(dir, "verify -i neg.nc:Q -i neg.nc:S -d o.nc:Q -d o.nc:S");
  EXPECT_EQ(vz.exit_code, 0) << vz.describe();
  EXPECT_EQ(key_values(vz.out)["mask_mismatch"], "0") << vz.out;
  EXPECT_EQ(key_values(vz.out)["masked_vertices"], "2") << vz.out;
  ASSERT_EQ(factz(dir, "decompress --repack -z n.fz -o r.nc:Q -o r.nc:S").exit_code, 0);
  const std::string repacked = testing::run_in(dir, "ncdump -h r.nc").out;
  for (const char* want : {"short Q(y, x) ;", "Q:valid_min = -1000s ;", "Q:valid_max = 1000s ;", "S:valid_min = -1000s ;"})
    EXPECT_NE(repacked.find(want), std::string::npos) << want << "\n" << repacked;
  for (const char* absent : {"S:valid_max", "factz_packed", "Q:valid_min = -10.f", "Q:valid_max = 10.f"})
    EXPECT_EQ(repacked.find(absent), std::string::npos) << absent << "\n" << repacked;

  // The stream of the build before.
  const std::string old = kData + "/golden/v19_packed_negative_scale_old_record_8x6.fz";
  const Outcome od = factz(dir, "decompress -z " + old + " -o old.nc:Q -o old.nc:S");
  ASSERT_EQ(od.exit_code, 0) << od.describe();
  EXPECT_NE(od.err.find("old.nc:Q: valid_min 10 and valid_max -10 written as valid_min -10 and valid_max 10: in "
                        "decreasing order"),
            std::string::npos)
      << od.err;
  const std::string old_header = testing::run_in(dir, "ncdump -h old.nc").out;
  for (const char* want : {"Q:valid_min = -10.f ;", "Q:valid_max = 10.f ;", "S:valid_min = 10.f ;"})
    EXPECT_NE(old_header.find(want), std::string::npos) << want << "\n" << old_header;
  // Its missing vertices (47 in S) decode to the file's values exactly, its one valid vertex
  // (the integer -5000) within that stream's bound (0.5008).
  const std::vector<double> os = dumped_values(dir, "old.nc", "S");
  ASSERT_EQ(os.size(), 48u);
  EXPECT_FLOAT_EQ(float(os[1]), -0.48f);
  EXPECT_NEAR(os[11], 50.0, 0.501);
  ASSERT_EQ(factz(dir, "decompress --repack -z " + old + " -o oldr.nc:Q -o oldr.nc:S").exit_code, 0);
  const std::string old_repacked = testing::run_in(dir, "ncdump -h oldr.nc").out;
  for (const char* want : {"Q:valid_min = -1000s ;", "Q:valid_max = 1000s ;", "S:valid_min = -1000s ;"})
    EXPECT_NE(old_repacked.find(want), std::string::npos) << want << "\n" << old_repacked;
}

}  // namespace
}  // namespace factz
