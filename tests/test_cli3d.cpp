// `factz cp -3` and `factz verify -3` with three components (3D vector fields, issue 22):
// the counts the library gives, raw and .npy inputs, missing vertices, policies that never
// change the answer, and clean failures (exit 2 for usage, 1 for errors, one line on
// stderr); `factz compress -3` with three -i, `factz decompress` with three -o and `factz
// info` of the 3D vector stream. Each test runs the built binary in its own temporary folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "support/cli_process.hpp"
#include "support/npy_file.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

using testing::key_values;
using testing::Outcome;
using testing::run_in;
using testing::TempDir;

const std::string kCli = testing::shell_quoted(FACTZ_CLI_PATH);

std::string float_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());  // little-endian host (docs/usage.md)
  return s;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

/// Writes f as PREFIX_u.f32, PREFIX_v.f32, PREFIX_w.f32 and returns "-i ... -i ... -i ..."
/// (or with `flag` -d).
std::string write_field(const TempDir& dir, const VectorField3D& f, const std::string& prefix,
                        const std::string& flag = "-i") {
  std::string args;
  for (auto [name, plane] : {std::pair{"u", &f.u}, {"v", &f.v}, {"w", &f.w}}) {
    const std::string file = prefix + "_" + name + ".f32";
    write_file(dir / file, float_bytes(*plane));
    args += " " + flag + " " + file;
  }
  return args;
}

std::string dims(const VectorField3D& f) {
  return " -3 " + std::to_string(f.nx) + " " + std::to_string(f.ny) + " " + std::to_string(f.nz);
}

TEST(Cli3D, CpFindsTheOneSaddleOfALinearField) {
  TempDir dir;
  const VectorField3D f = testing::linear_field(4, 5, 3, testing::jacobian_of(CpType3::saddle_2_stable),
                                                testing::tet_centroid(1, 2, 1, 4));
  const std::string in = write_field(dir, f, "lin");
  const Outcome text = run_in(dir, kCli + " cp" + dims(f) + in + " --csv cps.csv");
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  auto kv = key_values(text.out);
  EXPECT_EQ(kv["critical_points"], "1");
  EXPECT_EQ(kv["saddle_2_stable"], "1");
  EXPECT_EQ(kv["repelling_node"], "0");
  EXPECT_EQ(kv["masked_vertices"], "0");
  const std::string csv = testing::read_text_file(dir / "cps.csv");
  const int64_t tet = 6 * ((1 * 4 + 2) * 3 + 1) + 4;
  EXPECT_EQ(csv.rfind("tetrahedron,x,y,z,t,mu0,mu1,mu2,mu3,type\n", 0), 0u) << csv;
  std::string row = "\n";  // built by appending: GCC 12 warns (-Wrestrict) on "..." + std::string
  row += std::to_string(tet);
  row += ",1,2,1,4,0.25,0.25,0.25,0.25,saddle_2_stable\n";
  EXPECT_NE(csv.find(row), std::string::npos) << csv;
  const Outcome json = run_in(dir, kCli + " cp" + dims(f) + in + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.describe();
  EXPECT_NE(json.out.find("\"nz\": 3"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"critical_points\": 1"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"types\": {\"attracting_node\": 0"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"saddle_2_stable\": 1"), std::string::npos) << json.out;
}

TEST(Cli3D, CpAgreesWithTheLibraryOnEveryPolicyAndOnNpyInput) {
  TempDir dir;
  const VectorField3D f = testing::random_modes(19, 14, 11, 8);
  const std::string in = write_field(dir, f, "m");
  const auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 0u);
  std::string reference;
  for (const char* x : {"serial", "omp", "omp=3"}) {
    const Outcome o = run_in(dir, kCli + " cp" + dims(f) + in + " -x " + x);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    EXPECT_EQ(key_values(o.out)["critical_points"], std::to_string(cps->size())) << x;
    if (reference.empty()) reference = o.out;
    EXPECT_EQ(o.out, reference) << x;
  }
  // The same planes as .npy files of shape (nz, ny, nx).
  std::string npy_in;
  for (auto [name, plane] : {std::pair{"u", &f.u}, {"v", &f.v}, {"w", &f.w}}) {
    std::string shape = "(";  // built by appending, as above
    shape += std::to_string(f.nz) + ", " + std::to_string(f.ny) + ", " + std::to_string(f.nx) + ")";
    write_file(dir / (std::string(name) + ".npy"),
               testing::npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", 1,
                                 float_bytes(*plane)));
    npy_in += std::string(" -i ") + name + ".npy";
  }
  const Outcome npy = run_in(dir, kCli + " cp" + dims(f) + npy_in);
  ASSERT_EQ(npy.exit_code, 0) << npy.describe();
  EXPECT_EQ(npy.out, reference);
  // Without -3 the first component's shape is the grid, and the others must have it.
  const Outcome own = run_in(dir, kCli + " cp" + npy_in);
  ASSERT_EQ(own.exit_code, 0) << own.describe();
  EXPECT_EQ(own.out, reference);
  write_file(dir / "flat.npy",
             testing::npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(f.u.size()) +
                                   ",), }",
                               1, float_bytes(f.w)));
  const Outcome flat = run_in(dir, kCli + " cp -i u.npy -i v.npy -i flat.npy");
  EXPECT_EQ(flat.exit_code, 0) << flat.describe();  // a flat array of the right size is the same layout
  EXPECT_EQ(flat.out, reference);
  const Outcome flat_first = run_in(dir, kCli + " cp -i flat.npy -i u.npy -i v.npy");
  EXPECT_EQ(flat_first.exit_code, 2) << flat_first.describe();  // a flat array does not say the grid
  EXPECT_NE(flat_first.err.find("missing -3 NX NY NZ"), std::string::npos) << flat_first.err;
}

TEST(Cli3D, VerifyCountsWhatTheLibraryCounts) {
  TempDir dir;
  const VectorField3D a = testing::random_modes(15, 13, 12, 21);
  VectorField3D b = a;
  for (size_t k = 0; k < b.u.size(); k += 5) b.w[k] += 1.0f;
  const auto c = compare(a, b);
  ASSERT_TRUE(c.ok());
  ASSERT_GT(c->violations(), 0);
  const std::string in = write_field(dir, a, "a"), out = write_field(dir, b, "b", "-d");
  const Outcome same = run_in(dir, kCli + " verify" + dims(a) + in + write_field(dir, a, "a", "-d"));
  ASSERT_EQ(same.exit_code, 0) << same.describe();
  auto kv = key_values(same.out);
  EXPECT_EQ(kv["violations"], "0");
  EXPECT_EQ(kv["cp_original"], std::to_string(c->cp_original));
  EXPECT_EQ(kv["max_abs_error_w"], "0");
  const Outcome diff = run_in(dir, kCli + " verify" + dims(a) + in + out + " -x omp=2");
  ASSERT_EQ(diff.exit_code, 0) << diff.describe();
  kv = key_values(diff.out);
  EXPECT_EQ(kv["lost"], std::to_string(c->lost));
  EXPECT_EQ(kv["spurious"], std::to_string(c->spurious));
  EXPECT_EQ(kv["type_changed"], std::to_string(c->type_changed));
  EXPECT_EQ(kv["violations"], std::to_string(c->violations()));
  EXPECT_EQ(kv["max_abs_error_u"], "0");
  EXPECT_NEAR(std::stod(kv["max_abs_error_w"]), c->max_abs_error[2], 1e-5);
  EXPECT_NEAR(c->max_abs_error[2], 1.0, 1e-6);
  const Outcome json = run_in(dir, kCli + " verify" + dims(a) + in + out + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.describe();
  EXPECT_NE(json.out.find("\"max_abs_error\": [0, 0, "), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"violations\": " + std::to_string(c->violations())), std::string::npos) << json.out;
}

TEST(Cli3D, FillAndNanMarkMissingVertices) {
  TempDir dir;
  VectorField3D f = testing::random_modes(9, 8, 7, 4);
  f.u[5] = -9999.0f;
  f.w[17] = -9999.0f;
  f.v[30] = std::nanf("");
  const std::string in = write_field(dir, f, "f");
  const Outcome plain = run_in(dir, kCli + " cp" + dims(f) + in);
  ASSERT_EQ(plain.exit_code, 0) << plain.describe();
  EXPECT_EQ(key_values(plain.out)["masked_vertices"], "1");
  const Outcome fill = run_in(dir, kCli + " cp" + dims(f) + in + " --fill -9999");
  ASSERT_EQ(fill.exit_code, 0) << fill.describe();
  EXPECT_EQ(key_values(fill.out)["masked_vertices"], "3");
  VectorField3D g = f;
  g.mask.assign(g.u.size(), 0);
  g.mask[5] = g.mask[17] = 1;
  const auto cps = critical_points(g);
  ASSERT_TRUE(cps.ok());
  EXPECT_EQ(key_values(fill.out)["critical_points"], std::to_string(cps->size()));
  const Outcome verify = run_in(dir, kCli + " verify" + dims(f) + in + write_field(dir, f, "f", "-d") + " --fill -9999");
  ASSERT_EQ(verify.exit_code, 0) << verify.describe();
  EXPECT_EQ(key_values(verify.out)["masked_vertices"], "3");
  EXPECT_EQ(key_values(verify.out)["violations"], "0");
}

TEST(Cli3D, BadInputsFailWithOneClearLine) {
  TempDir dir;
  const VectorField3D f = testing::tie_field(4, 3, 2, 1);
  const std::string in = write_field(dir, f, "t");
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const Case cases[] = {
      {" cp -3 4 3 2 -i t_u.f32 -i t_v.f32", 2, "give -i three times"},
      {" cp -3 4 3 x" + in, 2, "-3 needs three positive integers"},
      {" cp -3 4 0 2" + in, 2, "-3 needs three positive integers"},
      {" cp -3 1048576 1048576 2" + in, 1, "exceeds 2^40"},
      {" cp -3 4 3 3" + in, 1, "needs 144 (float32)"},
      {" cp -3 4 3 2" + in + " --fill-u 1", 2, "give --fill V"},
      {" cp -3 4 3 2" + in + " --dtype f64", 1, "needs 192 (float64)"},  // raw float32 read as float64
      {" cp -3 4 3 2" + in + " -x cuda", 2, "-x cuda"},
      {" cp -3 4 3 2 -i t_u.f32 -i t_v.f32 -i missing.f32", 1, "missing.f32"},
      {" verify -3 4 3 2" + in + " -d t_u.f32 -d t_v.f32 -d t_w.f32 -d t_w.f32", 2, "give -d three times"},
      {" cp -3 4 3 2" + in + " --csv t_u.f32", 2, "refusing to overwrite an input"},
  };
  for (const auto& c : cases) {
    const Outcome o = run_in(dir, kCli + c.args);
    EXPECT_EQ(o.exit_code, c.code) << c.args << "\n" << o.describe();
    EXPECT_FALSE(o.signaled) << c.args;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.args << "\n" << o.describe();
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c.args << "\n" << o.err;
  }
}

TEST(Cli3D, TinyGridsWork) {
  TempDir dir;
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{1, 1, 1}, {2, 1, 3}, {2, 2, 2}}) {
    const VectorField3D f = testing::tie_field(nx, ny, nz, 3);
    const std::string in = write_field(dir, f, "tiny");
    const Outcome o = run_in(dir, kCli + " cp" + dims(f) + in);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    const auto cps = critical_points(f);
    ASSERT_TRUE(cps.ok());
    EXPECT_EQ(key_values(o.out)["critical_points"], std::to_string(cps->size()));
  }
}

std::vector<float> read_floats(const std::string& path, size_t skip = 0) {
  const std::string bytes = testing::read_text_file(path);
  std::vector<float> out((bytes.size() - skip) / 4);
  if (!out.empty()) std::memcpy(out.data(), bytes.data() + skip, out.size() * 4);
  return out;
}

TEST(Cli3D, CompressDecompressVerifyRoundTrip) {
  TempDir dir;
  const VectorField3D f = testing::random_modes(21, 17, 13, 4);
  const std::string in = write_field(dir, f, "m");
  std::string reference;
  for (const char* x : {"serial", "omp=2", "omp=3"}) {
    const Outcome c = run_in(dir, kCli + " compress" + dims(f) + in + " -z m.fz -M REL 1e-3 -x " + x);
    ASSERT_EQ(c.exit_code, 0) << c.describe();
    auto kv = key_values(c.err + c.out);
    EXPECT_EQ(kv["mode"], "speculative") << c.describe();
    EXPECT_EQ(kv["raw_bytes"], std::to_string(f.size() * 12)) << c.describe();
    const std::string bytes = testing::read_text_file(dir / "m.fz");
    if (reference.empty()) reference = bytes;
    EXPECT_EQ(bytes, reference) << x << ": the bytes do not depend on the policy";
  }
  // The library writes the same stream.
  Options o;
  o.bound = 1e-3;
  auto lib = compress(f, o);
  ASSERT_TRUE(lib.ok());
  EXPECT_EQ(std::string(lib->begin(), lib->end()), reference);
  const Outcome d = run_in(dir, kCli + " decompress -z m.fz -o d_u.f32 -o d_v.npy -o d_w.f32");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  auto back = decompress3d(lib.value());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(read_floats(dir / "d_u.f32"), back->u);
  EXPECT_EQ(read_floats(dir / "d_w.f32"), back->w);
  const std::string npy = testing::read_text_file(dir / "d_v.npy");
  EXPECT_NE(npy.find("'shape': (13, 17, 21)"), std::string::npos) << npy.substr(0, 128);
  EXPECT_EQ(read_floats(dir / "d_v.npy", npy.size() - f.v.size() * 4), back->v);
  const Outcome v = run_in(dir, kCli + " verify" + dims(f) + in + " -d d_u.f32 -d d_v.npy -d d_w.f32");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  auto kv = key_values(v.out);
  EXPECT_EQ(kv["violations"], "0") << v.describe();
  EXPECT_NE(kv["cp_original"], "0") << v.describe();
  EXPECT_EQ(kv["cp_original"], kv["cp_decompressed"]);
  const Outcome info = run_in(dir, kCli + " info -z m.fz");
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  for (const char* want : {"format version 10", "3D vector field (u, v, w)", "nz=13", "codes_w", "speculative"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  const Outcome json = run_in(dir, kCli + " info -z m.fz --json");
  ASSERT_EQ(json.exit_code, 0) << json.describe();
  EXPECT_NE(json.out.find("\"components\": 3"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"field\": \"vector\""), std::string::npos) << json.out;
}

TEST(Cli3D, InfoShowsTheSpeculativePredictorAndItsChoices) {
  TempDir dir;
  // `factz info` (text, then --json) of field f compressed with `options`.
  auto info_of = [&](const VectorField3D& f, const std::string& name, const std::string& options) {
    const std::string in = write_field(dir, f, name);
    const Outcome c = run_in(dir, kCli + " compress" + dims(f) + in + " -z " + name + ".fz " + options);
    EXPECT_EQ(c.exit_code, 0) << c.describe();
    const Outcome text = run_in(dir, kCli + " info -z " + name + ".fz");
    const Outcome json = run_in(dir, kCli + " info -z " + name + ".fz --json");
    EXPECT_EQ(text.exit_code, 0) << text.describe();
    EXPECT_EQ(json.exit_code, 0) << json.describe();
    return std::pair{text.out, json.out};
  };
  // The ABC flow: each component constant along one axis, so predictor 2 with axis choices.
  const auto [abc, abc_json] = info_of(testing::abc_flow(20, 18, 16), "a", "-M REL 1e-3");
  EXPECT_NE(abc.find("predictor       2 (per-phase choices: "), std::string::npos) << abc;
  EXPECT_NE(abc_json.find("\"predictor\": 2"), std::string::npos) << abc_json;
  EXPECT_EQ(abc_json.find("\"axis_choices\": 0,"), std::string::npos) << abc_json;
  // A small generic field: no axis is exact and no phase is large enough for a transform.
  const VectorField3D modes = testing::random_modes(10, 9, 8, 3);
  const auto [one, one_json] = info_of(modes, "m", "-M REL 1e-2");
  EXPECT_NE(one.find("predictor       1 (cubic"), std::string::npos) << one;
  EXPECT_NE(one_json.find("\"predictor\": 1, \"axis_choices\": 0, \"code_transforms\": 0"), std::string::npos)
      << one_json;
  // Block mode has no predictor.
  const auto [block, block_json] = info_of(modes, "b", "--mode block -M REL 1e-2");
  EXPECT_EQ(block.find("predictor"), std::string::npos) << block;
  EXPECT_EQ(block_json.find("predictor"), std::string::npos) << block_json;
}

TEST(Cli3D, CompressKeepsMissingVerticesAndDecompressRestoresTheirBits) {
  TempDir dir;
  VectorField3D f = testing::random_modes(10, 9, 8, 3);
  f.u[5] = -9999.0f;
  f.w[17] = -9999.0f;
  f.v[30] = std::bit_cast<float>(0xffc00042u);  // a NaN with a payload
  const std::string in = write_field(dir, f, "f");
  // Without --fill the fill value is data, with a warning naming it (as for 2D fields).
  const Outcome warned = run_in(dir, kCli + " cp" + dims(f) + in);
  ASSERT_EQ(warned.exit_code, 0) << warned.describe();
  EXPECT_NE(warned.err.find("warning: 2 value(s) equal -9999"), std::string::npos) << warned.err;
  EXPECT_NE(warned.err.find("--fill -9999"), std::string::npos) << warned.err;
  for (const char* mode : {"none", "block", "speculative"}) {
    const Outcome c = run_in(dir, kCli + " compress" + dims(f) + in + " -z m.fz --fill -9999 --mode " + mode);
    ASSERT_EQ(c.exit_code, 0) << c.describe();
    EXPECT_EQ(c.err.find("warning"), std::string::npos) << c.err;
    EXPECT_EQ(key_values(c.err + c.out)["masked_vertices"], "3") << mode;  // the report goes to stderr
    const Outcome d = run_in(dir, kCli + " decompress -z m.fz -o d_u.f32 -o d_v.f32 -o d_w.f32");
    ASSERT_EQ(d.exit_code, 0) << d.describe();
    const std::vector<float> u = read_floats(dir / "d_u.f32"), v = read_floats(dir / "d_v.f32"),
                             w = read_floats(dir / "d_w.f32");
    ASSERT_EQ(u.size(), f.u.size());
    EXPECT_EQ(u[5], -9999.0f) << mode;
    EXPECT_EQ(w[17], -9999.0f) << mode;
    EXPECT_EQ(std::bit_cast<uint32_t>(v[30]), 0xffc00042u) << mode;
    const Outcome verify =
        run_in(dir, kCli + " verify" + dims(f) + in + " -d d_u.f32 -d d_v.f32 -d d_w.f32 --fill -9999");
    ASSERT_EQ(verify.exit_code, 0) << verify.describe();
    EXPECT_EQ(key_values(verify.out)["masked_vertices"], "3") << mode;
    EXPECT_EQ(key_values(verify.out)["mask_mismatch"], "0") << mode;
    if (std::string(mode) != "none") {
      EXPECT_EQ(key_values(verify.out)["violations"], "0") << mode;
    }
    const Outcome info = run_in(dir, kCli + " info -z m.fz");
    ASSERT_EQ(info.exit_code, 0) << info.describe();
    EXPECT_NE(info.out.find("format version 12"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("mask_and_values"), std::string::npos) << info.out;
  }
}

TEST(Cli3D, CompressAndDecompressRefuseWhatTheyCannotDoInOneLine) {
  TempDir dir;
  const VectorField3D f = testing::random_modes(6, 5, 4, 2);
  const std::string in = write_field(dir, f, "t");
  ASSERT_EQ(run_in(dir, kCli + " compress" + dims(f) + in + " -z t.fz").exit_code, 0);
  VectorField3D nan = f;
  nan.u[7] = std::nanf("");
  const std::string nan_in = write_field(dir, nan, "n");
  VectorField3D fill = f;
  fill.w[2] = 0.5f;  // a declared fill value
  const std::string fill_in = write_field(dir, fill, "q");
  write_file(dir / "p_u.f32", float_bytes(std::vector<float>(36, 1.0f)));
  write_file(dir / "p_v.f32", float_bytes(std::vector<float>(36, 2.0f)));
  ASSERT_EQ(run_in(dir, kCli + " compress -2 6 6 -i p_u.f32 -i p_v.f32 -z p.fz").exit_code, 0);
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const Case cases[] = {
      {" compress" + dims(f) + in + " -z o.fz --mode block --anchor-stride 4", 2, "--mode speculative only"},
      {" compress" + dims(f) + nan_in + " -z o.fz --fill-u 0.5", 2, "give --fill V for a 3D vector field"},
      {" compress" + dims(f) + fill_in + " -z o.fz --fill 0.5 --dtype f64", 1, "(float64)"},
      {" compress" + dims(f) + in, 2, "missing -z"},
      {" compress" + in + " -z o.fz", 2, "missing -3 NX NY NZ"},  // three raw -i, no grid
      {" cp" + in, 2, "missing -3 NX NY NZ"},
      {" verify" + in + " -d t_u.f32 -d t_v.f32 -d t_w.f32", 2, "missing -3 NX NY NZ"},
      {" compress -2 6 6 -i p_u.f32 -z o.fz", 2, "one -i is a scalar field"},
      {" compress" + dims(f) + in + " -z t_u.f32", 2, "refusing to overwrite an input"},
      {" decompress -z t.fz -o a -o b", 2, "give -o three times"},
      {" decompress -z t.fz -o a", 2, "give -o three times"},
      {" decompress -z p.fz -o a -o b -o c", 2, "2D vector field"},
      {" decompress -z t_u.f32 -o a -o b -o c", 1, "not a FaCTz stream"},
  };
  for (const auto& c : cases) {
    const Outcome o = run_in(dir, kCli + c.args);
    EXPECT_EQ(o.exit_code, c.code) << c.args << "\n" << o.describe();
    EXPECT_FALSE(o.signaled) << c.args;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.args << "\n" << o.describe();
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c.args << "\n" << o.err;
  }
  // A netCDF output of a stream without a source record: a plain (z, y, x) variable, or, in a
  // build without netCDF, one line saying so.
  const Outcome nc = run_in(dir, kCli + " decompress -z t.fz -o a.f32 -o b.npy -o out.nc:W");
  EXPECT_FALSE(nc.signaled) << nc.describe();
  if (nc.exit_code == 0) {
    if (testing::have_program("ncdump")) {
      const Outcome h = run_in(dir, "ncdump -h out.nc");
      EXPECT_NE(h.out.find("float W(z, y, x)"), std::string::npos) << h.describe();
    }
  } else {
    EXPECT_NE(nc.err.find("netCDF"), std::string::npos) << nc.describe();
    EXPECT_EQ(std::count(nc.err.begin(), nc.err.end(), '\n'), 1) << nc.err;
  }
  // -x cuda reaches Policy::cuda: on a GPU the CPU's stream, elsewhere one line naming cuda
  // (no CUDA backend in the build, or no device).
  for (const std::string x : {" -x cuda", " -x cuda:0"}) {
    const Outcome o = run_in(dir, kCli + " compress" + dims(f) + in + " -z g.fz" + x);
    EXPECT_FALSE(o.signaled) << x;
    if (o.exit_code == 0) {
      ASSERT_EQ(run_in(dir, kCli + " decompress -z g.fz -o a -o b -o c" + x).exit_code, 0) << x;
      continue;
    }
    EXPECT_EQ(o.exit_code, 1) << x << "\n" << o.describe();
    EXPECT_NE(o.err.find("cuda"), std::string::npos) << x << "\n" << o.describe();
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << x << "\n" << o.err;
  }
}

std::string double_bytes(const std::vector<double>& v) {
  std::string s(v.size() * 8, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());  // little-endian host
  return s;
}

std::vector<double> read_doubles(const std::string& path, size_t skip = 0) {
  const std::string bytes = testing::read_text_file(path);
  std::vector<double> out((bytes.size() - skip) / 8);
  if (!out.empty()) std::memcpy(out.data(), bytes.data() + skip, out.size() * 8);
  return out;
}

TEST(Cli3D, Float64FieldsRoundTripThroughEveryCommand) {
  TempDir dir;
  const VectorField3D base = testing::random_modes(13, 11, 9, 6);
  VectorField3D64 f;
  f.nx = base.nx, f.ny = base.ny, f.nz = base.nz;
  for (size_t k = 0; k < base.u.size(); ++k) {
    f.u.push_back((1e12 + double(base.u[k]) * 1e-4) - 1e12 + double(base.u[k]) * 1e-17);  // not floats
    f.v.push_back(double(base.v[k]) * 1e-200);
    f.w.push_back(double(base.w[k]));
  }
  write_file(dir / "f_u.f64", double_bytes(f.u));
  write_file(dir / "f_v.f64", double_bytes(f.v));
  write_file(dir / "f_w.f64", double_bytes(f.w));
  const std::string d3 = " -3 13 11 9", in = " -i f_u.f64 -i f_v.f64 -i f_w.f64 --dtype f64";
  const auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 0u);
  const Outcome cp = run_in(dir, kCli + " cp" + d3 + in + " --json");
  ASSERT_EQ(cp.exit_code, 0) << cp.describe();
  EXPECT_NE(cp.out.find("\"critical_points\": " + std::to_string(cps->size())), std::string::npos) << cp.out;
  EXPECT_NE(cp.out.find("\"dtype\": \"float64\""), std::string::npos) << cp.out;
  for (const char* mode : {"speculative", "block", "none"}) {
    const Outcome c = run_in(dir, kCli + " compress" + d3 + in + " -z f.fz -M REL 1e-4 --mode " + mode);
    ASSERT_EQ(c.exit_code, 0) << c.describe();
    EXPECT_EQ(key_values(c.err + c.out)["raw_bytes"], std::to_string(f.size() * 24)) << c.describe();
    Options o;
    o.bound = 1e-4;
    o.mode = std::string(mode) == "block" ? Mode::block : std::string(mode) == "none" ? Mode::none : Mode::speculative;
    auto lib = compress(f, o);
    ASSERT_TRUE(lib.ok());
    EXPECT_EQ(testing::read_text_file(dir / "f.fz"), std::string(lib->begin(), lib->end())) << mode;
    const Outcome d = run_in(dir, kCli + " decompress -z f.fz -o d_u.f64 -o d_v.npy -o d_w.f64");
    ASSERT_EQ(d.exit_code, 0) << d.describe();
    auto back = decompress3d64(lib.value());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(read_doubles(dir / "d_u.f64"), back->u);
    EXPECT_EQ(read_doubles(dir / "d_w.f64"), back->w);
    const std::string npy = testing::read_text_file(dir / "d_v.npy");
    EXPECT_NE(npy.find("'descr': '<f8'"), std::string::npos) << npy.substr(0, 128);
    EXPECT_EQ(read_doubles(dir / "d_v.npy", npy.size() - f.v.size() * 8), back->v);
    const Outcome v = run_in(dir, kCli + " verify" + d3 + in + " -d d_u.f64 -d d_v.npy -d d_w.f64");
    if (std::string(mode) == "none") continue;  // the bound alone
    ASSERT_EQ(v.exit_code, 0) << v.describe();
    auto kv = key_values(v.out);
    EXPECT_EQ(kv["violations"], "0") << v.describe();
    EXPECT_EQ(kv["cp_original"], std::to_string(cps->size())) << v.describe();
  }
  const Outcome info = run_in(dir, kCli + " info -z f.fz");
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  for (const char* want : {"format version 13", "float64", "codes_w"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  // A float32 reconstruction against a float64 original: one clear line.
  const Outcome mixed =
      run_in(dir, kCli + " verify" + d3 + " -i f_u.f64 -i f_v.f64 -i f_w.f64 -d d_u.f64 -d d_v.npy -d d_w.f64");
  EXPECT_NE(mixed.exit_code, 0) << mixed.describe();
}

}  // namespace
}  // namespace factz
