// The CLI's tools around the codec (docs/usage.md, issue 21): `factz info` on every file
// factz writes (streams, scalar streams, multi-block files, flow streams and bases),
// `factz h5filter` (the HDF5 filter's cd_values for h5repack, nccopy and h5py, end to end
// through h5repack and nccopy where they are installed), and `factz render` (origin, colour
// bar, thinned markers with their count, scalar fields with contour-tree nodes, and clear
// errors). Each test runs the built binary in its own temporary folder.
#include <gtest/gtest.h>

#ifdef FACTZ_TEST_HAVE_PNG
#include "support/png_decode.hpp"
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "support/cli_process.hpp"
#include "support/npy_file.hpp"
#include "support/temp_dir.hpp"
#include "synth.hpp"

namespace factz {
namespace {

namespace fs = std::filesystem;
using testing::have_program;
using testing::Outcome;
using testing::TempDir;

const std::string kCli = FACTZ_CLI_PATH;

Outcome factz_run(const TempDir& dir, const std::string& args) {
  return testing::run_in(dir, testing::shell_quoted(kCli) + " " + args);
}

void write_bytes_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string float_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

void write_field(const TempDir& dir, const VectorField2D& f, const std::string& stem = "") {
  write_bytes_file(dir / (stem + "u.f32"), float_bytes(f.u));
  write_bytes_file(dir / (stem + "v.f32"), float_bytes(f.v));
}

/// One line on stderr, "factz SUB: ...", the exit code, and the needle in it.
void expect_error(const Outcome& o, int code, const std::string& sub, const std::string& needle,
                  const std::string& what) {
  EXPECT_FALSE(o.signaled) << what << ": " << o.describe();
  EXPECT_EQ(o.exit_code, code) << what << ": " << o.describe();
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << what << ": one line expected\n" << o.err;
  EXPECT_EQ(o.err.rfind("factz " + sub + ": ", 0), 0u) << what << ": " << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << what << ": expected '" << needle << "' in " << o.err;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

/// An integer after `key` in the text ("\"blocks\": 4" or "blocks 4"), -1 when absent.
long long int_after(const std::string& text, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(key + "\"?:? *([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

// ---- info -------------------------------------------------------------------------------------

TEST(CliTools, InfoDescribesAMultiBlockFile) {
  TempDir dir;
  write_field(dir, synth::turbulence(40, 30, 5));
  ASSERT_EQ(factz_run(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z s.fzmb --blocks 2 2 -M ABS 0.01 --mode block")
                .exit_code,
            0);
  Outcome o = factz_run(dir, "info -z s.fzmb");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  for (const char* text : {"multi-block file (magic FZMB)", "nx=40 ny=30", "2 x 2 = 4", "ABS 0.01", "block", "ans"})
    EXPECT_TRUE(contains(o.out, text)) << text << " missing in\n" << o.out;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 9 + 1 + 4) << o.out;  // 9 lines, a header row, 4 blocks
  o = factz_run(dir, "info -z s.fzmb --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "\"kind\": \"multiblock\"")) << o.out;
  EXPECT_EQ(int_after(o.out, "\"blocks"), 4) << o.out;
  EXPECT_EQ(int_after(o.out, "\"px"), 2) << o.out;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1);
  // Through a pipe too, and a damaged block is named.
  o = testing::run_in(dir, "cat s.fzmb | " + testing::shell_quoted(kCli) + " info -z -");
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  std::ifstream in(dir / "s.fzmb", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes[bytes.size() - 10] ^= 0x40;
  write_bytes_file(dir / "bad.fzmb", bytes);
  expect_error(factz_run(dir, "info -z bad.fzmb"), 1, "info", "block 3", "a damaged last block");
}

TEST(CliTools, InfoDescribesScalarAndVectorStreams) {
  TempDir dir;
  const VectorField2D f = synth::turbulence(48, 32, 6);
  write_field(dir, f);
  ASSERT_EQ(factz_run(dir, "compress -2 48 32 -i u.f32 -z s.fz --scalar --persistence 0.05").exit_code, 0);
  Outcome o = factz_run(dir, "info -z s.fz");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  for (const char* text : {"magic FCTZ", "2D scalar field", "contour-tree", "nx=48 ny=32", "raw bytes       6144"})
    EXPECT_TRUE(contains(o.out, text)) << text << " missing in\n" << o.out;
  o = factz_run(dir, "info -z s.fz --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  for (const char* text : {"\"kind\": \"stream\"", "\"field\": \"scalar\"", "\"mode\": \"contour-tree\"", "\"sections\": [",
                           "\"source\": null"})
    EXPECT_TRUE(contains(o.out, text)) << text << " missing in\n" << o.out;
  ASSERT_EQ(factz_run(dir, "compress -2 48 32 -i u.f32 -i v.f32 -z v.fz").exit_code, 0);
  o = factz_run(dir, "info -z v.fz --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "\"field\": \"vector\"")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"mode\": \"speculative\"")) << o.out;
  EXPECT_EQ(int_after(o.out, "\"nx"), 48);
}

/// A .npy of float64 rows x cols.
std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `factz convert` writes a stream in the classic container that builds before format version
// 18 read, and back: the same sections, the same decoded values.
TEST(CliTools, ConvertWritesTheClassicContainerAndBack) {
  TempDir dir;
  write_field(dir, synth::turbulence(48, 32, 7));
  ASSERT_EQ(factz_run(dir, "compress -2 48 32 -i u.f32 -i v.f32 -z s.fz -M REL 1e-2").exit_code, 0);
  Outcome o = factz_run(dir, "convert -z s.fz -o c.fz --container classic --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(int_after(o.out, "\"format_version"), 9) << o.out;  // a classic header carries the layout version
  EXPECT_EQ(int_after(o.out, "\"format_version_in"), 18) << o.out;
  const std::string compact = file_bytes(dir / "s.fz"), classic = file_bytes(dir / "c.fz");
  ASSERT_GE(classic.size(), 64u);
  EXPECT_EQ(classic[4], 9);
  EXPECT_EQ(int64_t(classic.size()), int_after(o.out, "\"bytes_out"));
  EXPECT_GT(classic.size(), compact.size() + 150);
  o = factz_run(dir, "info -z c.fz");
  EXPECT_TRUE(contains(o.out, "format version 9\n")) << o.out;
  ASSERT_EQ(factz_run(dir, "decompress -z s.fz -o u1.f32 -o v1.f32").exit_code, 0);
  ASSERT_EQ(factz_run(dir, "decompress -z c.fz -o u2.f32 -o v2.f32").exit_code, 0);
  EXPECT_EQ(file_bytes(dir / "u1.f32"), file_bytes(dir / "u2.f32"));
  EXPECT_EQ(file_bytes(dir / "v1.f32"), file_bytes(dir / "v2.f32"));
  ASSERT_EQ(factz_run(dir, "convert -z c.fz -o back.fz --container compact").exit_code, 0);
  EXPECT_EQ(file_bytes(dir / "back.fz"), compact);
  // Refusals: a usage error for a missing or unknown container and for a multi-block file, a
  // damaged stream named as corrupt.
  expect_error(factz_run(dir, "convert -z s.fz -o x.fz"), 2, "convert", "--container", "no container");
  expect_error(factz_run(dir, "convert -z s.fz -o x.fz --container old"), 2, "convert", "classic or compact",
               "an unknown container");
  ASSERT_EQ(factz_run(dir, "compress -2 48 32 -i u.f32 -i v.f32 -z m.fzmb --blocks 2 1").exit_code, 0);
  expect_error(factz_run(dir, "convert -z m.fzmb -o x.fz --container classic"), 2, "convert", "multi-block",
               "a multi-block file");
  std::string damaged = compact;
  damaged[damaged.size() / 2] ^= 0x10;
  write_bytes_file(dir / "bad.fz", damaged);
  expect_error(factz_run(dir, "convert -z bad.fz -o x.fz --container classic"), 1, "convert", "corrupt_stream",
               "a damaged stream");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.fz"));
}

std::string npy_f64(const std::vector<double>& v, size_t rows, size_t cols) {
  std::string data(v.size() * 8, '\0');
  std::memcpy(data.data(), v.data(), data.size());
  return testing::npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                               std::to_string(cols) + "), }",
                           1, data);
}

TEST(CliTools, InfoDescribesFlowStreamsAndBases) {
  TempDir dir;
  if (factz_run(dir, "flow --help").exit_code != 0) GTEST_SKIP() << "this factz has no flow command";
  // Taylor-Green on a periodic 16 x 16 grid (the flow suite's case).
  const double two_pi = 6.283185307179586;
  std::vector<double> x, u;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      const double px = two_pi * j / 16, py = two_pi * i / 16;
      x.insert(x.end(), {px, py});
      u.insert(u.end(), {std::sin(px) * std::cos(py), -std::cos(px) * std::sin(py)});
    }
  write_bytes_file(dir / "x.npy", npy_f64(x, 256, 2));
  write_bytes_file(dir / "u.npy", npy_f64(u, 256, 2));
  Outcome o = factz_run(dir, "flow basis --nodes x.npy --method hybrid --landmarks 16 --periodic "
                             "6.283185307179586,6.283185307179586 --beta 4 -o b.fzb");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  o = factz_run(dir, "flow compress --basis b.fzb --velocity u.npy --rel-l2 1e-3 -z u.fzf");
  ASSERT_EQ(o.exit_code, 0) << o.describe();

  o = factz_run(dir, "info -z b.fzb");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  for (const char* text : {"flow basis (magic FZFB", "nodes           256", "hybrid", "6.283185307179586"})
    EXPECT_TRUE(contains(o.out, text)) << text << " missing in\n" << o.out;
  o = factz_run(dir, "info -z b.fzb --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const long long coefficients = int_after(o.out, "\"coefficients");
  EXPECT_GT(coefficients, 0) << o.out;

  o = factz_run(dir, "info -z u.fzf");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "flow field stream (magic FZFS")) << o.out;
  EXPECT_TRUE(contains(o.out, "tolerance")) << o.out;
  o = factz_run(dir, "info -z u.fzf --basis b.fzb --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(int_after(o.out, "\"coefficients"), coefficients) << o.out;
  EXPECT_TRUE(contains(o.out, "\"checked_against_basis\": true")) << o.out;
  expect_error(factz_run(dir, "info -z b.fzb --basis b.fzb"), 2, "info", "--basis", "--basis with a basis");
  expect_error(factz_run(dir, "info -z u.fzf --basis u.fzf"), 1, "info", "--basis u.fzf", "a stream as the basis");
}

TEST(CliTools, InfoRefusesFilesFactzDidNotWrite) {
  TempDir dir;
  write_bytes_file(dir / "empty", "");
  write_bytes_file(dir / "two", "FC");
  write_bytes_file(dir / "junk", std::string(100, 'q'));
  write_bytes_file(dir / "a.npy", testing::npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 1,
                                                    std::string(4, '\0')));
  expect_error(factz_run(dir, "info -z empty"), 1, "info", "corrupt_stream: empty is empty", "empty");
  expect_error(factz_run(dir, "info -z two"), 1, "info", "too few for a magic", "two bytes");
  expect_error(factz_run(dir, "info -z junk"), 1, "info", "bad magic 0x71 0x71 0x71 0x71", "junk");
  expect_error(factz_run(dir, "info -z a.npy"), 1, "info", "NumPy .npy array", ".npy");
  expect_error(factz_run(dir, "info -z junk --basis junk"), 2, "info", "--basis applies to flow", "--basis");
  expect_error(factz_run(dir, "info"), 2, "info", "-z", "no -z");
}

// ---- h5filter -----------------------------------------------------------------------------------

std::vector<uint32_t> numbers_of(const std::string& csv) {
  std::vector<uint32_t> out;
  std::stringstream in(csv);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(uint32_t(std::stoul(item)));
  return out;
}

double double_of(uint32_t low, uint32_t high) {
  const uint64_t bits = uint64_t(low) | (uint64_t(high) << 32);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

TEST(CliTools, H5filterSpellsTheBoundAsTwoWordsOfADouble) {
  TempDir dir;
  // The defaults: the example of docs/usage.md (speculative, REL 1e-2, ANS).
  Outcome o = factz_run(dir, "h5filter");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "h5repack -f UD=40410,0,5,2,1,1202590843,1065646817,1\n")) << o.out;
  EXPECT_TRUE(contains(o.out, "nccopy -F uv,40410,2,1,1202590843,1065646817,1\n")) << o.out;
  EXPECT_TRUE(contains(o.out, "compression=40410, compression_opts=(2, 1, 1202590843, 1065646817, 1)")) << o.out;

  o = factz_run(dir, "h5filter -M ABS 1e-3 --mode block --coder huffman --h5repack");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  ASSERT_EQ(o.out.rfind("UD=40410,0,5,", 0), 0u) << o.out;
  auto cd = numbers_of(o.out.substr(13));
  ASSERT_EQ(cd.size(), 5u) << o.out;
  EXPECT_EQ(cd[0], 1u);
  EXPECT_EQ(cd[1], 0u);
  EXPECT_EQ(double_of(cd[2], cd[3]), 1e-3);
  EXPECT_EQ(cd[4], 0u);

  // A declared fill value: 7 values, the exact edges before it, the float32 bits last.
  o = factz_run(dir, "h5filter -M REL 1e-2 --fill 1e20 --nccopy --var current");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(o.out, "current,40410,2,1,1202590843,1065646817,1,0,1621981420\n");
  o = factz_run(dir, "h5filter --exact-edges 15 --mode none --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "\"cd_values\": [0, 1, 1202590843, 1065646817, 1, 15]")) << o.out;
  EXPECT_TRUE(contains(o.out, "\"h5repack\": \"UD=40410,0,6,0,1,1202590843,1065646817,1,15\"")) << o.out;

  expect_error(factz_run(dir, "h5filter --mode contour-tree"), 2, "h5filter", "mode none only", "contour-tree");
  expect_error(factz_run(dir, "h5filter --mode fast"), 2, "h5filter", "--mode", "--mode fast");
  expect_error(factz_run(dir, "h5filter --no-zstd"), 2, "h5filter", "always applies the zstd stage", "--no-zstd");
  expect_error(factz_run(dir, "h5filter --exact-edges 16"), 2, "h5filter", "--exact-edges", "edges 16");
  expect_error(factz_run(dir, "h5filter -M ABS -1"), 2, "h5filter", "-M", "negative bound");
  expect_error(factz_run(dir, "h5filter --fill x"), 2, "h5filter", "--fill", "--fill x");
  expect_error(factz_run(dir, "h5filter --h5repack --nccopy"), 2, "h5filter", "one of", "two outputs");
  expect_error(factz_run(dir, "h5filter --var 'a,b'"), 2, "h5filter", "--var", "a comma");
}

/// What the end-to-end HDF5 check needs: the plugin, h5py, and the given tools.
std::string hdf5_missing(const std::vector<std::string>& programs) {
#ifndef FACTZ_HDF5_PLUGIN_DIR
  return "the HDF5 plugin is not built";
#else
  for (const auto& p : programs)
    if (!have_program(p)) return p + " is not installed";
  if (std::system("/usr/bin/python3 -c 'import h5py, numpy' > /dev/null 2>&1") != 0)
    return "/usr/bin/python3 with h5py and numpy is not installed";
  return "";
#endif
}

#ifdef FACTZ_HDF5_PLUGIN_DIR
const std::string kPluginEnv = "HDF5_PLUGIN_PATH=" + testing::shell_quoted(FACTZ_HDF5_PLUGIN_DIR) + " ";
#else
const std::string kPluginEnv;
#endif

/// h5py checks a repacked file: dataset uv carries filter 40410 with the printed cd_values
/// first, and every value is within `eb` of the original's.
const char* kCheckScript = R"PY(
import sys, h5py, numpy as np
orig, copy, eb = sys.argv[1], sys.argv[2], float(sys.argv[3])
want = [int(x) for x in sys.argv[4].split(',')]
with h5py.File(orig, 'r') as f:
    a = f['uv'][...]
with h5py.File(copy, 'r') as f:
    d = f['uv']
    plist = d.id.get_create_plist()
    ids = [plist.get_filter(k)[0] for k in range(plist.get_nfilters())]
    assert 40410 in ids, f'filter 40410 missing: {ids}'
    values = list(plist.get_filter_by_id(40410)[1])  # (flags, values, name)
    assert values[:len(want)] == want, f'cd_values {values} do not start with {want}'
    b = d[...]
err = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
assert a.shape == b.shape, (a.shape, b.shape)
assert err <= eb, f'max error {err} above {eb}'
assert err > 0, 'lossless copy: the filter did not run'
print(f'max_error={err}')
)PY";

TEST(CliTools, H5repackWithThePrintedStringKeepsTheBound) {
  const std::string missing = hdf5_missing({"h5repack"});
  if (!missing.empty()) GTEST_SKIP() << "h5repack check skipped: " << missing;
  TempDir dir;
  const VectorField2D f = synth::turbulence(64, 48, 9);
  write_field(dir, f);
  write_bytes_file(dir / "check.py", kCheckScript);
  write_bytes_file(dir / "make.py", R"PY(
import h5py, numpy as np
u = np.fromfile('u.f32', dtype='<f4').reshape(48, 64)
v = np.fromfile('v.f32', dtype='<f4').reshape(48, 64)
with h5py.File('in.h5', 'w') as f:
    f.create_dataset('uv', data=np.stack([u, v]), chunks=(2, 48, 64))
)PY");
  Outcome o = testing::run_in(dir, "/usr/bin/python3 make.py");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  o = factz_run(dir, "h5filter -M ABS 1e-3 --h5repack");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const std::string ud = o.out.substr(0, o.out.size() - 1);
  o = testing::run_in(dir, kPluginEnv + "h5repack -f " + ud + " in.h5 out.h5");
  ASSERT_EQ(o.exit_code, 0) << ud << "\n" << o.describe();
  const std::string values = ud.substr(ud.find(',', ud.find(',', ud.find(',') + 1) + 1) + 1);  // after UD=ID,0,N,
  o = testing::run_in(dir, kPluginEnv + "/usr/bin/python3 check.py in.h5 out.h5 1e-3 " + values);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  // The same string restricted to one dataset (--var).
  o = factz_run(dir, "h5filter -M ABS 1e-3 --mode block --var uv --h5repack");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  o = testing::run_in(dir, kPluginEnv + "h5repack -f " + o.out.substr(0, o.out.size() - 1) + " in.h5 out2.h5");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  o = testing::run_in(dir, kPluginEnv + "/usr/bin/python3 check.py in.h5 out2.h5 1e-3 1,0");
  EXPECT_EQ(o.exit_code, 0) << o.describe();
}

TEST(CliTools, NccopyWithThePrintedSpecKeepsTheBound) {
  const std::string missing = hdf5_missing({"nccopy", "ncgen"});
  if (!missing.empty()) GTEST_SKIP() << "nccopy check skipped: " << missing;
  TempDir dir;
  const VectorField2D f = synth::turbulence(40, 24, 4);
  std::string rows;
  for (const auto* plane : {&f.u, &f.v})
    for (float x : *plane) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", double(x));
      rows += (rows.empty() ? "" : ", ") + std::string(buf);
    }
  write_bytes_file(dir / "in.cdl", "netcdf field {\ndimensions:\n  comp = 2 ;\n  y = 24 ;\n  x = 40 ;\nvariables:\n"
                                   "  float uv(comp, y, x) ;\n    uv:_Storage = \"chunked\" ;\n"
                                   "    uv:_ChunkSizes = 2, 24, 40 ;\ndata:\n  uv = " + rows + " ;\n}\n");
  Outcome o = testing::run_in(dir, "ncgen -k nc4 -o in.nc in.cdl");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  write_bytes_file(dir / "check.py", kCheckScript);
  o = factz_run(dir, "h5filter -M ABS 2e-3 --mode speculative --nccopy");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const std::string spec = o.out.substr(0, o.out.size() - 1);
  o = testing::run_in(dir, kPluginEnv + "nccopy -F '" + spec + "' in.nc out.nc");
  ASSERT_EQ(o.exit_code, 0) << spec << "\n" << o.describe();
  const std::string values = spec.substr(spec.find(',', 3) + 1);  // after uv,40410,
  o = testing::run_in(dir, kPluginEnv + "/usr/bin/python3 check.py in.nc out.nc 2e-3 " + values);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
}

// ---- render ---------------------------------------------------------------------------------

// The strip under the map (tools/factz/render.hpp): the colour bar row (bar 6 px below the
// map, 10 px high), the key row and the count row, 88 px in all.
constexpr int kStrip = 88, kBarTop = 6, kBarHeight = 10;

struct Png {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::array<int, 3> at(int x, int y) const {
    const size_t k = (size_t(y) * size_t(width) + size_t(x)) * 3;
    return {rgb[k], rgb[k + 1], rgb[k + 2]};
  }
  int brightness(int x, int y) const {
    const auto c = at(x, y);
    return c[0] + c[1] + c[2];
  }
};

bool decode_png(const std::string& path, Png& im) {
#ifdef FACTZ_TEST_HAVE_PNG
  return testing::decode_png(path, im);
#else
  (void)path;
  (void)im;
  return false;
#endif
}

#ifdef FACTZ_TEST_HAVE_PNG
#define REQUIRE_PNG()
#else
#define REQUIRE_PNG() GTEST_SKIP() << "libpng not found: the PNGs cannot be decoded"
#endif

/// A field without critical points whose magnitude grows with the row: u = y + 1, v = 1.
VectorField2D rising(int64_t nx, int64_t ny) {
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      f.u.push_back(float(y + 1));
      f.v.push_back(1.0f);
    }
  return f;
}

TEST(CliTools, RenderOriginPutsRowZeroAtTheBottomByDefault) {
  REQUIRE_PNG();
  TempDir dir;
  write_field(dir, rising(16, 12));
  for (const char* name : {"default", "lower", "upper"}) {
    const std::string origin = std::string(name) == "default" ? "" : std::string(" --origin ") + name;
    const Outcome o = factz_run(dir, "render -2 16 12 -i u.f32 -i v.f32 --size 200 -o " + std::string(name) + ".png" + origin);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    EXPECT_TRUE(contains(o.out, "0 critical points, 0 drawn")) << o.out;
  }
  Png lower, upper, fallback;
  ASSERT_TRUE(decode_png(dir / "lower.png", lower));
  ASSERT_TRUE(decode_png(dir / "upper.png", upper));
  ASSERT_TRUE(decode_png(dir / "default.png", fallback));
  EXPECT_EQ(fallback.rgb, lower.rgb) << "the default is --origin lower";
  const int mh = 150;  // 12.5 px per vertex
  ASSERT_EQ(lower.width, 200);
  ASSERT_EQ(lower.height, mh + kStrip);
  // Row 11 (the largest magnitude, brightest) at the top with lower, at the bottom with upper.
  EXPECT_GT(lower.brightness(100, 5), lower.brightness(100, mh - 6));
  EXPECT_LT(upper.brightness(100, 5), upper.brightness(100, mh - 6));
  // The maps mirror each other row for row (colours may differ by one rounding step).
  int differing = 0;
  for (int y = 0; y < mh; ++y)
    for (int x = 0; x < 200; ++x) {
      const auto a = lower.at(x, y), b = upper.at(x, mh - 1 - y);
      for (int c = 0; c < 3; ++c) differing += std::abs(a[size_t(c)] - b[size_t(c)]) > 1;
    }
  EXPECT_EQ(differing, 0);
}

TEST(CliTools, RenderDrawsAColourBarFromZeroToTheLargestMagnitude) {
  REQUIRE_PNG();
  TempDir dir;
  write_field(dir, rising(16, 12));
  ASSERT_EQ(factz_run(dir, "render -2 16 12 -i u.f32 -i v.f32 --size 640 -o m.png").exit_code, 0);
  Png im;
  ASSERT_TRUE(decode_png(dir / "m.png", im));
  const int mh = 480, y = mh + kBarTop + kBarHeight / 2;
  ASSERT_EQ(im.height, mh + kStrip);
  // The bar runs to 8 px before the right edge: pale there, darkening to the left.
  const int right = im.width - 9;
  EXPECT_GT(im.brightness(right, y), 600) << "high end of the colour map";
  int x = right;
  while (x > 0 && im.brightness(x - 1, y) <= im.brightness(x, y) && im.brightness(x - 1, y) > 0) --x;
  EXPECT_GE(right - x, 64) << "a bar of at least 64 px";
  EXPECT_LT(im.brightness(x, y), 150) << "low end of the colour map";
  EXPECT_EQ(im.brightness(x - 1, y), 0) << "the bar's black outline";
  // Labels (black text) under both ends of the bar.
  auto black_in = [&](int x0, int x1) {
    int n = 0;
    for (int yy = mh + kBarTop + kBarHeight + 4; yy < mh + 40; ++yy)
      for (int xx = x0; xx < x1; ++xx) n += im.brightness(xx, yy) == 0;
    return n;
  };
  EXPECT_GT(black_in(x, x + 30), 10) << "the low label (0)";
  EXPECT_GT(black_in(right - 60, right + 1), 10) << "the high label";
}

TEST(CliTools, RenderThinsOverlappingMarkersAndCountsThem) {
  REQUIRE_PNG();
  TempDir dir;
  write_field(dir, synth::turbulence(256, 256, 3));
  Outcome cp = factz_run(dir, "cp -2 256 256 -i u.f32 -i v.f32 --json");
  ASSERT_EQ(cp.exit_code, 0) << cp.describe();
  const long long total = int_after(cp.out, "\"critical_points");
  ASSERT_GT(total, 100);
  std::smatch m;
  // Small: markers of 2 px on a 64 px map overlap and are thinned.
  Outcome o = factz_run(dir, "render -2 256 256 -i u.f32 -i v.f32 --size 64 -o small.png");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  ASSERT_TRUE(std::regex_search(o.out, m, std::regex("([0-9]+) critical points, ([0-9]+) drawn"))) << o.out;
  EXPECT_EQ(std::stoll(m[1]), total);
  const long long small = std::stoll(m[2]);
  EXPECT_GT(small, 0);
  EXPECT_LT(small, total / 2) << o.out;
  // Large: far fewer overlap.
  o = factz_run(dir, "render -2 256 256 -i u.f32 -i v.f32 --size 2048 -o large.png");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  ASSERT_TRUE(std::regex_search(o.out, m, std::regex("([0-9]+) critical points, ([0-9]+) drawn"))) << o.out;
  EXPECT_GT(std::stoll(m[2]), small);
  EXPECT_LE(std::stoll(m[2]), total);
  // Markers grow with the image: a 2048 px map draws discs of 12 px (the cap), a 64 px map of 2 px.
  Png a, b;
  ASSERT_TRUE(decode_png(dir / "small.png", a));
  ASSERT_TRUE(decode_png(dir / "large.png", b));
  EXPECT_EQ(a.height, 64 + kStrip);
  EXPECT_EQ(b.height, 2048 + kStrip);
  auto green = [](const Png& im, int mh) {
    long long n = 0;
    for (int y = 0; y < mh; ++y)
      for (int x = 0; x < im.width; ++x) n += im.at(x, y) == std::array<int, 3>{0, 200, 0};
    return n;
  };
  EXPECT_GT(green(b, 2048), 20 * green(a, 64));
}

/// A smooth 2D scalar field with a few extrema and saddles.
std::vector<float> hills(int nx, int ny) {
  std::vector<float> f;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) f.push_back(float(std::sin(0.2 * x) * std::cos(0.25 * y) + 0.01 * x));
  return f;
}

TEST(CliTools, RenderDrawsScalarFieldsAndTheirContourTreeNodes) {
  REQUIRE_PNG();
  TempDir dir;
  write_bytes_file(dir / "s.f32", float_bytes(hills(64, 48)));
  Outcome o = factz_run(dir, "render -2 64 48 -i s.f32 -o s.png --size 640 --ct --persistence 0.01");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.out, m, std::regex("([0-9]+) contour-tree nodes, ([0-9]+) drawn"))) << o.out;
  const Outcome ct = factz_run(dir, "ct -2 64 48 -i s.f32 --persistence 0.01");
  ASSERT_EQ(ct.exit_code, 0) << ct.describe();
  long long nodes = 0;
  for (size_t at = ct.out.find("\nnode "); at != std::string::npos; at = ct.out.find("\nnode ", at + 1)) ++nodes;
  EXPECT_GT(nodes, 2);
  EXPECT_EQ(std::stoll(m[1]), nodes) << "one marker per node of factz ct\n" << ct.out;
  EXPECT_EQ(m[1], m[2]) << "nodes this far apart are all drawn";
  Png im;
  ASSERT_TRUE(decode_png(dir / "s.png", im));
  EXPECT_EQ(im.width, 640);
  EXPECT_EQ(im.height, 480 + kStrip);
  long long red = 0, green = 0;
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 640; ++x) {
      red += im.at(x, y) == std::array<int, 3>{230, 20, 20};
      green += im.at(x, y) == std::array<int, 3>{0, 200, 0};
    }
  EXPECT_GT(red, 0) << "maxima";
  EXPECT_GT(green, 0) << "minima";
  // Without --ct: the colour map alone; the values' range is printed.
  o = factz_run(dir, "render -2 64 48 -i s.f32 -o plain.png");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "scalar field, values -")) << o.out;
  // A scalar stream, a 3D field's slice, a vector stream and a multi-block file.
  ASSERT_EQ(factz_run(dir, "compress -2 64 48 -i s.f32 -z s.fz --scalar").exit_code, 0);
  o = factz_run(dir, "render -z s.fz -o z.png --ct --origin upper");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  std::vector<float> cube;
  for (int z = 0; z < 3; ++z)
    for (float v : hills(20, 16)) cube.push_back(v + float(z));
  write_bytes_file(dir / "c.f32", float_bytes(cube));
  double highest[2] = {};
  for (int k = 0; k < 2; ++k) {
    o = factz_run(dir, "render -3 20 16 3 -i c.f32 --slice " + std::to_string(2 * k) + " -o c.png --ct");
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    ASSERT_TRUE(std::regex_search(o.out, m, std::regex("values (\\S+) to (\\S+),"))) << o.out;
    highest[k] = std::stod(m[2]);
  }
  EXPECT_NEAR(highest[1] - highest[0], 2.0, 1e-4) << "plane z = 2 holds the values of z = 0 plus 2";
  write_field(dir, synth::turbulence(40, 30, 2));
  ASSERT_EQ(factz_run(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z v.fz").exit_code, 0);
  ASSERT_EQ(factz_run(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z v.fzmb --blocks 2 2").exit_code, 0);
  for (const char* stream : {"v.fz", "v.fzmb"}) {
    o = factz_run(dir, std::string("render -z ") + stream + " -o v.png --lic --size 200");
    EXPECT_EQ(o.exit_code, 0) << stream << ": " << o.describe();
    EXPECT_TRUE(contains(o.out, "critical points")) << o.out;
  }
}

TEST(CliTools, RenderRefusesBadArgumentsClearly) {
  TempDir dir;
  write_field(dir, synth::turbulence(20, 10, 1));
  write_bytes_file(dir / "s.f32", float_bytes(hills(20, 10)));
  write_bytes_file(dir / "c.f32", float_bytes(std::vector<float>(20 * 10 * 2, 1.0f)));
  write_bytes_file(dir / "junk.fz", std::string(200, 'j'));
  write_bytes_file(dir / "flow.fzf", "FZFS" + std::string(60, '\0'));
  const std::string vec = "-2 20 10 -i u.f32 -i v.f32";
  const struct {
    std::string args;
    int code;
    std::string needle;
  } cases[] = {
      {vec + " -o a.png --origin sideways", 2, "--origin must be lower"},
      {vec + " -o a.png --ct", 2, "--ct marks the contour tree of a scalar field"},
      {vec + " -o a.png --persistence 0.1", 2, "--persistence applies with --ct"},
      {vec + " -o a.png --zoom 0 0 20 9", 2, "--zoom"},
      {vec + " -o a.png --zoom 0 0 x 9", 2, "--zoom must be an integer"},
      {vec + " -o a.png --size 99999", 2, "--size"},
      {vec + " -o a.png --slice 1", 2, "--slice"},
      {"-2 20 10 -i u.f32 -i v.f32 -i u.f32 -o a.png", 2, "give -i twice"},
      {"-2 20 10 -i s.f32 -o a.png --lic", 2, "--lic"},
      {"-2 20 10 -i s.f32 -d s.f32 -o a.png", 2, "-d (a reconstruction) applies to vector fields"},
      {"-2 20 10 -i s.f32 -o a.png --slice 0", 2, "--slice applies to 3D"},
      {"-3 20 10 2 -i c.f32 -o a.png", 2, "give --slice Z"},
      {"-3 20 10 2 -i c.f32 -o a.png --slice 2", 2, "--slice must be in [0, 2)"},
      {"-2 20 10 -i s.f32 -o a.png --fill-u 1", 2, "--fill"},
      {"-z junk.fz -i u.f32 -o a.png", 2, "not both"},
      {"-z junk.fz -2 20 10 -o a.png", 2, "does not apply to -z"},
      {"-z junk.fz -o a.png", 1, "corrupt_stream"},
      {"-z flow.fzf -o a.png", 1, "flow file"},
      {"-z nowhere.fz -o a.png", 1, "nowhere.fz"},
      {"-2 20 10 -i s.f32", 2, "missing -o"},
      {"-o a.png", 2, "missing -i"},
  };
  for (const auto& c : cases) expect_error(factz_run(dir, "render " + c.args), c.code, "render", c.needle, c.args);
  EXPECT_FALSE(fs::exists(dir / "a.png"));
}

TEST(CliTools, CompressProgressGoesToStderrOnlyWhenAsked) {
  TempDir dir;
  write_field(dir, synth::turbulence(64, 48, 3));
  // The test's stderr is not a terminal: silent by default.
  const Outcome quiet = factz_run(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z q.fz --json");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.describe();
  EXPECT_EQ(quiet.err.find("factz: compress:"), std::string::npos) << quiet.err;
  for (const std::string mode : {"none", "block", "speculative"}) {
    const Outcome loud =
        factz_run(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z p.fz --json --progress --mode " + mode);
    ASSERT_EQ(loud.exit_code, 0) << loud.describe();
    EXPECT_NE(loud.err.find("factz: compress: frontend done"), std::string::npos) << mode << ": " << loud.err;
    EXPECT_NE(loud.err.find("factz: compress: container done, 100 %"), std::string::npos) << mode << ": " << loud.err;
    EXPECT_EQ(loud.out.find("factz: compress:"), std::string::npos) << "never on stdout: " << loud.out;
    ASSERT_FALSE(loud.out.empty());
    EXPECT_EQ(loud.out.front(), '{') << "stdout is the JSON object alone: " << loud.out;
  }
  const Outcome blocks = factz_run(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z b.fzmb --blocks 2 2 --progress");
  ASSERT_EQ(blocks.exit_code, 0) << blocks.describe();
  size_t lines = 0;
  for (size_t at = blocks.err.find("factz: compress: block done"); at != std::string::npos;
       at = blocks.err.find("factz: compress: block done", at + 1))
    ++lines;
  EXPECT_EQ(lines, 4u) << blocks.err;
  EXPECT_NE(blocks.err.find("factz: compress: container done, 100 %"), std::string::npos) << blocks.err;
}

}  // namespace
}  // namespace factz
