// The scalar paths of the factz program: compress -2 --scalar / -3, decompress with one -o,
// verify with one -i and one -d, and `factz ct`, for float32 and float64 fields ('<f8' .npy,
// raw with --dtype f64); errors stay clear one-liners.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "support/npy_file.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = 0;
  std::string out, err;
};

CliRun factz(const fs::path& dir, const std::string& args) {
  const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  const std::string cmd = "cd '" + dir.string() + "' && OMP_WAIT_POLICY=passive '" + std::string(FACTZ_CLI_PATH) + "' " +
                          args + " > '" + out + "' 2> '" + err + "'";
  CliRun r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

using factz::testing::TempDir;

void write_field(const fs::path& p, int64_t nx, int64_t ny, int64_t nz) {
  std::vector<float> v;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        v.push_back(std::sin(0.4f * float(x)) * std::cos(0.3f * float(y)) + 0.2f * float(z) +
                    0.01f * float((x * 7 + y * 13 + z * 3) % 5));
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
}

TEST(ScalarCli, CompressDecompressVerify3D) {
  TempDir d;
  write_field(d.path() / "f.f32", 20, 16, 6);
  CliRun c = factz(d.path(), "compress -3 20 16 6 -i f.f32 -z f.fz -M REL 1e-2 --persistence 1e-2 --json");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("\"mode\": \"contour-tree\""), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"iterations\""), std::string::npos);
  CliRun i = factz(d.path(), "info -z f.fz");
  EXPECT_NE(i.out.find("contour-tree"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("3D"), std::string::npos) << i.out;
  CliRun x = factz(d.path(), "decompress -z f.fz -o g.f32 --json");
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_EQ(fs::file_size(d.path() / "g.f32"), 20u * 16 * 6 * 4);
  CliRun v = factz(d.path(), "verify -3 20 16 6 -i f.f32 -d g.f32 --persistence 1e-2 --json");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.out.find("\"false_cases\": 0"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("\"same_tree\": true"), std::string::npos) << v.out;
  // Verify must also see a difference: against a shifted field the tree moves.
  write_field(d.path() / "h.f32", 20, 16, 6);
  {
    std::fstream h(d.path() / "h.f32", std::ios::in | std::ios::out | std::ios::binary);
    const float big = 50.0f;
    h.seekp(4 * (20 * 16 * 3 + 20 * 8 + 10));
    h.write(reinterpret_cast<const char*>(&big), 4);
  }
  CliRun w = factz(d.path(), "verify -3 20 16 6 -i f.f32 -d h.f32 --persistence 1e-2");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("same_tree=0"), std::string::npos) << w.out;
}

// A float32 3D field as a .npy of shape (nz, ny, nx), as NumPy holds it (float64 ones were
// read so already): the same stream as from the raw file, with -3 or with the shape taken
// from the file, and decompressed to that shape; an array of another shape or dtype is
// refused with the shape it needs.
TEST(ScalarCli, Float32NpyOfShapeNzNyNx) {
  TempDir d;
  write_field(d.path() / "f.f32", 20, 16, 6);
  std::ifstream raw(d.path() / "f.f32", std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(raw)), {});
  auto npy = [&](const char* name, const std::string& header) {
    std::ofstream(d.path() / name, std::ios::binary) << factz::testing::npy_file(header, 1, data);
  };
  npy("f.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 16, 20), }");
  npy("yz.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (16, 6, 20), }");
  npy("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (6, 16, 20), }");
  const std::string opts = " -z OUT -M REL 1e-2 --persistence 1e-2";
  auto compress = [&](const std::string& in, const std::string& out) {
    std::string o = opts;
    o.replace(o.find("OUT"), 3, out);
    return factz(d.path(), "compress " + in + o);
  };
  ASSERT_EQ(compress("-3 20 16 6 -i f.f32", "raw.fz").code, 0);
  CliRun with_dims = compress("-3 20 16 6 -i f.npy", "a.fz");
  ASSERT_EQ(with_dims.code, 0) << with_dims.err;
  CliRun own = compress("--scalar -i f.npy", "b.fz");
  ASSERT_EQ(own.code, 0) << own.err;
  auto bytes = [&](const char* name) {
    std::ifstream in(d.path() / name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(bytes("a.fz"), bytes("raw.fz"));
  EXPECT_EQ(bytes("b.fz"), bytes("raw.fz"));
  ASSERT_EQ(factz(d.path(), "decompress -z a.fz -o g.npy").code, 0);  // written back of shape (nz, ny, nx)
  EXPECT_NE(bytes("g.npy").find("'shape': (6, 16, 20)"), std::string::npos) << bytes("g.npy").substr(0, 128);
  CliRun v = factz(d.path(), "verify -i f.npy -d g.npy --persistence 1e-2");  // the shape from f.npy
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.out.find("same_tree=1"), std::string::npos) << v.out;
  CliRun swapped = compress("-3 20 16 6 -i yz.npy", "c.fz");
  EXPECT_EQ(swapped.code, 1);
  EXPECT_NE(swapped.err.find("(16, 6, 20) does not match the grid 20 x 16 x 6 (shape (6, 16, 20))"), std::string::npos)
      << swapped.err;
  CliRun big = compress("-3 20 16 6 -i big.npy", "c.fz");
  EXPECT_EQ(big.code, 1);
  EXPECT_NE(big.err.find("big-endian float32"), std::string::npos) << big.err;
  EXPECT_FALSE(fs::exists(d.path() / "c.fz"));
}

TEST(ScalarCli, ProgressGoesToStderrOnlyWhenAskedOrOnATerminal) {
  TempDir d;
  write_field(d.path() / "f.f32", 20, 16, 6);
  // The tests' stderr is a file, not a terminal: silent unless --progress is given.
  CliRun quiet = factz(d.path(), "compress -3 20 16 6 -i f.f32 -z q.fz --json");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("factz: contour tree"), std::string::npos) << quiet.err;
  CliRun loud = factz(d.path(), "compress -3 20 16 6 -i f.f32 -z p.fz --json --progress");
  ASSERT_EQ(loud.code, 0) << loud.err;
  // The first round reported is the first round of the step whose first stream is the smallest.
  EXPECT_TRUE(std::regex_search(loud.err, std::regex("factz: contour tree, step [0-9]+ round 0:"))) << loud.err;
  EXPECT_NE(loud.err.find(": 0 vertices to fix"), std::string::npos) << "the last round has nothing left: " << loud.err;
  EXPECT_EQ(loud.out.find("factz: contour tree"), std::string::npos) << "never on stdout: " << loud.out;
  EXPECT_EQ(loud.out.front(), '{') << loud.out;
}

TEST(ScalarCli, TwoDimensionalNeedsScalarFlagAndModeNoneWorks) {
  TempDir d;
  write_field(d.path() / "f.f32", 30, 20, 1);
  CliRun c = factz(d.path(), "compress -2 30 20 --scalar --mode none -i f.f32 -z f.fz -M ABS 0.01");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.err.find("mode=none"), std::string::npos) << c.err;
  CliRun x = factz(d.path(), "decompress -z f.fz -o g.f32");
  ASSERT_EQ(x.code, 0) << x.err;
  CliRun two = factz(d.path(), "decompress -z f.fz -o a.f32 -o b.f32");
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.err.find("scalar"), std::string::npos) << two.err;
  CliRun bad = factz(d.path(), "compress -2 30 20 --scalar --mode speculative -i f.f32 -z f.fz");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--mode"), std::string::npos) << bad.err;
  CliRun neg = factz(d.path(), "compress -2 30 20 -i f.f32 -z f.fz --persistence -1");
  EXPECT_EQ(neg.code, 2);
  EXPECT_NE(neg.err.find("--persistence"), std::string::npos) << neg.err;
}

// A scalar field's default coder is smallest: the report names the coder the stream holds
// (as `factz info` does), and the stream is the explicit coder's byte for byte; vector fields
// and the HDF5 filter refuse smallest with a usage error.
TEST(ScalarCli, SmallestCoderByDefaultForScalarFieldsOnly) {
  TempDir d;
  write_field(d.path() / "f.f32", 30, 20, 1);
  auto slurp = [&](const char* name) {
    std::ifstream in(d.path() / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const char* mode : {"none", "contour-tree"}) {
    SCOPED_TRACE(mode);
    CliRun c = factz(d.path(), std::string("compress -2 30 20 --scalar -i f.f32 -z s.fz --json --mode ") + mode);
    ASSERT_EQ(c.code, 0) << c.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(c.out, m, std::regex("\"coder\": \"(ans|huffman|context)\""))) << c.out;
    const std::string held = m[1];
    CliRun i = factz(d.path(), "info -z s.fz");
    EXPECT_NE(i.out.find("coder           " + held), std::string::npos) << i.out;
    CliRun e = factz(d.path(), std::string("compress -2 30 20 --scalar -i f.f32 -z e.fz --coder ") + held +
                                   " --mode " + mode);
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(slurp("s.fz"), slurp("e.fz"));
    for (const char* other : {"ans", "huffman", "context"}) {
      CliRun o = factz(d.path(), std::string("compress -2 30 20 --scalar -i f.f32 -z o.fz --coder ") + other +
                                     " --mode " + mode);
      ASSERT_EQ(o.code, 0) << o.err;
      if (std::string(mode) == "none") {  // one quantization: the smallest of the coders' streams
        EXPECT_LE(slurp("s.fz").size(), slurp("o.fz").size()) << other;
      }
    }
    CliRun x = factz(d.path(), std::string("compress -2 30 20 --scalar -i f.f32 -z x.fz --coder smallest --mode ") + mode);
    ASSERT_EQ(x.code, 0) << x.err;
    EXPECT_EQ(slurp("s.fz"), slurp("x.fz"));
  }
  CliRun v = factz(d.path(), "compress -2 30 20 -i f.f32 -i f.f32 -z v.fz --coder smallest");
  EXPECT_EQ(v.code, 2);
  EXPECT_NE(v.err.find("scalar fields only"), std::string::npos) << v.err;
  CliRun h = factz(d.path(), "h5filter --coder smallest");
  EXPECT_EQ(h.code, 2);
  EXPECT_NE(h.err.find("scalar fields only"), std::string::npos) << h.err;
  CliRun bad = factz(d.path(), "compress -2 30 20 --scalar -i f.f32 -z s.fz --coder zip");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("smallest, ans, huffman or context"), std::string::npos) << bad.err;
  CliRun vc = factz(d.path(), "compress -2 30 20 -i f.f32 -i f.f32 -z v.fz --coder context");
  EXPECT_EQ(vc.code, 2);
  EXPECT_NE(vc.err.find("scalar fields only"), std::string::npos) << vc.err;
}

TEST(ScalarCli, CtPrintsNodesArcsAndPairs) {
  TempDir d;
  write_field(d.path() / "f.f32", 30, 20, 1);
  CliRun t = factz(d.path(), "ct -2 30 20 -i f.f32 --persistence 0.05 --json");
  ASSERT_EQ(t.code, 0) << t.err;
  for (const char* key : {"\"nodes\": [", "\"arcs\": [", "\"pairs\": [", "\"maximum\"", "\"type\": \"minimum\""})
    EXPECT_NE(t.out.find(key), std::string::npos) << key << "\n" << t.out;
  CliRun text = factz(d.path(), "ct -2 30 20 -i f.f32");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("\nnode "), std::string::npos);
  EXPECT_NE(text.out.find("\narc "), std::string::npos);
  CliRun missing = factz(d.path(), "ct -2 30 20 -i nowhere.f32");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("nowhere.f32"), std::string::npos);
  CliRun usage = factz(d.path(), "ct -i f.f32");
  EXPECT_EQ(usage.code, 2);
  CliRun help = factz(d.path(), "ct --help");
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"-2", "-3", "-i", "--persistence", "--json", "-x"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
}

TEST(ScalarCli, FillValuesMarkMissingVerticesInCtCompressAndVerify) {
  TempDir d;
  const int64_t nx = 24, ny = 16;
  std::vector<float> v;
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x)  // land (the fill value) in a column that cuts the grid in two
      v.push_back(x == 11 ? -9999.0f : std::sin(0.4f * float(x)) * std::cos(0.3f * float(y)) + 0.05f * float(x % 3));
  std::ofstream(d.path() / "f.f32", std::ios::binary)
      .write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
  CliRun t = factz(d.path(), "ct -2 24 16 -i f.f32 --fill -9999 --json");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("\"components\": 2"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\"masked_vertices\": 16"), std::string::npos) << t.out;
  CliRun plain = factz(d.path(), "ct -2 24 16 -i f.f32 --json");  // undeclared: -9999 is data
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("\"components\": 1"), std::string::npos) << plain.out;
  CliRun c = factz(d.path(), "compress -2 24 16 --scalar -i f.f32 --fill -9999 -z f.fz -M REL 1e-2 --json");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("\"masked_vertices\": 16"), std::string::npos) << c.out;
  CliRun x = factz(d.path(), "decompress -z f.fz -o g.f32");
  ASSERT_EQ(x.code, 0) << x.err;
  std::vector<float> g(v.size());
  std::ifstream(d.path() / "g.f32", std::ios::binary).read(reinterpret_cast<char*>(g.data()), std::streamsize(g.size() * 4));
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] == -9999.0f) {
      EXPECT_EQ(g[k], -9999.0f) << k;  // the land comes back as the fill value
    }
  CliRun ok = factz(d.path(), "verify -2 24 16 -i f.f32 -d g.f32 --fill -9999 --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"same_tree\": true"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("\"mask_mismatch\": 0"), std::string::npos) << ok.out;
  CliRun bad = factz(d.path(), "compress -2 24 16 --scalar -i f.f32 --fill-u -9999 -z h.fz");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--fill"), std::string::npos) << bad.err;
}

// ---- float64 scalar fields ------------------------------------------------------------------

// 1 + 1e-12 * (waves and a ripple): every value rounds to the float 1.0f, so the tree and the
// bound exist only in double.
std::vector<double> tiny_waves(int64_t nx, int64_t ny, int64_t nz) {
  std::vector<double> v;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        v.push_back(1.0 + 1e-12 * (std::sin(0.4 * double(x)) * std::cos(0.3 * double(y)) + 0.2 * double(z) +
                                   0.01 * double((x * 7 + y * 13 + z * 3) % 5)));
  return v;
}

std::string bytes_of(const std::vector<double>& v) {
  std::string data(v.size() * 8, '\0');
  for (size_t k = 0; k < v.size(); ++k) {
    uint64_t b;
    std::memcpy(&b, &v[k], 8);
    for (int i = 0; i < 8; ++i) data[k * 8 + size_t(i)] = char((b >> (8 * i)) & 0xFF);
  }
  return data;
}

void write_f64(const fs::path& p, const std::vector<double>& v) { std::ofstream(p, std::ios::binary) << bytes_of(v); }

void write_npy_f64(const fs::path& p, const std::vector<double>& v, const std::string& shape) {
  std::ofstream(p, std::ios::binary) << factz::testing::npy_file(
      "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }", 1, bytes_of(v));
}

// The values of a raw float64 file, or of a version 1.0 .npy file (after its header).
std::vector<double> read_f64(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string data(std::istreambuf_iterator<char>(in), {});
  size_t skip = 0;
  if (p.extension() == ".npy" && data.size() >= 10) skip = 10 + (uint8_t(data[8]) | size_t(uint8_t(data[9])) << 8);
  std::vector<double> v((data.size() - std::min(skip, data.size())) / 8);
  std::memcpy(v.data(), data.data() + skip, v.size() * 8);
  return v;
}

TEST(ScalarCli, Float64CompressDecompressVerifyAndCt3D) {
  TempDir d;
  const std::vector<double> v = tiny_waves(20, 16, 6);
  write_f64(d.path() / "f.f64", v);
  write_npy_f64(d.path() / "f.npy", v, "(6, 16, 20)");
  CliRun c = factz(d.path(), "compress -3 20 16 6 --dtype f64 -i f.f64 -z f.fz -M ABS 1e-15 --persistence 1e-2 --json");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("\"dtype\": \"float64\""), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"raw_bytes\": 15360"), std::string::npos) << c.out;  // 8 bytes per value
  EXPECT_NE(c.out.find("\"eb_abs\": 1.0000000000000001e-15"), std::string::npos) << c.out;
  CliRun i = factz(d.path(), "info -z f.fz --json");
  EXPECT_NE(i.out.find("\"dtype\": \"float64\""), std::string::npos) << i.out;
  // Values are stored exactly at this bound, and the zstd stage keeps them byte-shuffled:
  // format version 23, around layout 6 (values on Lorenzo's predictions) or, since the
  // interpolation's last pass moves after the race (some of its stored values then take
  // codes), layout 23 (the interpolation, context-coded); `info` names the coder.
  std::smatch layout;
  ASSERT_TRUE(std::regex_search(i.out, layout, std::regex("\"format_version\": 23, \"layout_version\": (6|22|23), \"container\": \"compact\"")))
      << i.out;
  EXPECT_TRUE(std::regex_search(i.out, std::regex("\"coder\": \"(ans|huffman|context)\""))) << i.out;
  EXPECT_NE(i.out.find("\"name\": \"exact_values\", \"stored_bytes\""), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("\"shuffle\": 8"), std::string::npos) << i.out;
  CliRun x = factz(d.path(), "decompress -z f.fz -o g.f64 --json");
  ASSERT_EQ(x.code, 0) << x.err;
  const std::vector<double> g = read_f64(d.path() / "g.f64");
  ASSERT_EQ(g.size(), v.size());
  for (size_t k = 0; k < v.size(); ++k) ASSERT_LE(std::fabs(g[k] - v[k]), 1e-15) << k;  // exact: both near 1
  CliRun ok = factz(d.path(), "verify -3 20 16 6 --dtype f64 -i f.f64 -d g.f64 --persistence 1e-2 --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("\"same_tree\": true"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("\"dtype\": \"float64\""), std::string::npos) << ok.out;
  // The tree of the doubles: more than the two nodes their float rounding (a constant) has.
  CliRun t = factz(d.path(), "ct -3 20 16 6 --dtype f64 -i f.f64 --persistence 0 --json");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("\"type\": \"join_saddle\""), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\"dtype\": \"float64\""), std::string::npos) << t.out;
  CliRun from_npy = factz(d.path(), "ct -i f.npy --persistence 0 --json");  // shape (nz, ny, nx) from the file
  ASSERT_EQ(from_npy.code, 0) << from_npy.err;
  EXPECT_EQ(from_npy.out, t.out);
  CliRun text = factz(d.path(), "ct -3 20 16 6 --dtype f64 -i f.f64 --persistence 0");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.find("nodes=2 "), std::string::npos) << text.out.substr(0, 400);
  EXPECT_NE(text.out.find(" 1.0000000000"), std::string::npos) << "17 digits: " << text.out.substr(0, 400);
  // A float32 reconstruction of a float64 original is refused, not compared through float.
  std::vector<float> f32(v.begin(), v.end());
  std::string data(f32.size() * 4, '\0');
  std::memcpy(data.data(), f32.data(), data.size());
  std::ofstream(d.path() / "g32.npy", std::ios::binary)
      << factz::testing::npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (6, 16, 20), }", 1, data);
  CliRun mixed = factz(d.path(), "verify -3 20 16 6 -i f.npy -d g32.npy");
  EXPECT_EQ(mixed.code, 1);
  EXPECT_NE(mixed.err.find("float64"), std::string::npos) << mixed.err;
}

TEST(ScalarCli, Float64NpyInModeNoneAndContourTreeWithFillValues) {
  TempDir d;
  const int64_t nx = 24, ny = 16;
  std::vector<double> v = tiny_waves(nx, ny, 1);
  const double fill = -9999.000000000123;  // only a double holds it
  for (int64_t y = 0; y < ny; ++y) v[size_t(y * nx + 11)] = fill;
  write_npy_f64(d.path() / "f.npy", v, "(16, 24)");
  for (const char* mode : {"none", "contour-tree"}) {
    SCOPED_TRACE(mode);
    CliRun c = factz(d.path(), std::string("compress --scalar --mode ") + mode +
                                   " -i f.npy --fill -9999.000000000123 -z f.fz -M REL 1e-3 --json");
    ASSERT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.out.find("\"masked_vertices\": 16"), std::string::npos) << c.out;
    CliRun x = factz(d.path(), "decompress -z f.fz -o g.npy");
    ASSERT_EQ(x.code, 0) << x.err;
    const std::vector<double> g = read_f64(d.path() / "g.npy");
    ASSERT_EQ(g.size(), v.size());
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] == fill) {
        EXPECT_EQ(g[k], fill) << k;  // 64 bits back
      }
    }
    CliRun ok = factz(d.path(), "verify -i f.npy -d g.npy --fill -9999.000000000123 --json");
    ASSERT_EQ(ok.code, 0) << ok.err;
    // The tree in mode contour-tree; the bound in both (mode none keeps no tree: on the
    // interpolation predictor, which the default keeps here, it differs).
    if (std::string(mode) == "contour-tree") {
      EXPECT_NE(ok.out.find("\"same_tree\": true"), std::string::npos) << ok.out;
    }
    auto number_after = [](const std::string& s, const std::string& key) {
      const size_t at = s.find("\"" + key + "\": ");
      return at == std::string::npos ? -1.0 : std::stod(s.substr(at + key.size() + 4));
    };
    const double eb = number_after(c.out, "eb_abs"), err = number_after(ok.out, "max_abs_error");
    EXPECT_GT(eb, 0.0) << c.out;
    EXPECT_GE(err, 0.0) << ok.out;
    EXPECT_LE(err, eb) << ok.out;
    EXPECT_NE(ok.out.find("\"mask_mismatch\": 0"), std::string::npos) << ok.out;
  }
  CliRun t = factz(d.path(), "ct -i f.npy --fill -9999.000000000123 --json");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("\"components\": 2"), std::string::npos) << t.out;
  // Rounded to float the fill value marks nothing: the column stays data, one component.
  CliRun f32fill = factz(d.path(), "ct -i f.npy --fill -9999 --json");
  ASSERT_EQ(f32fill.code, 0) << f32fill.err;
  EXPECT_NE(f32fill.out.find("\"components\": 1"), std::string::npos) << f32fill.out;
  CliRun wrong = factz(d.path(), "compress --scalar -i f.npy --dtype f32 -z h.fz");
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("f32"), std::string::npos) << wrong.err;
}

}  // namespace
