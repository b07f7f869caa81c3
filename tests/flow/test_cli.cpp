// factz flow basis|compress|decompress|eval end to end through the binary.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "support/temp_dir.hpp"
#include "factz/flow.hpp"
#include "flow_support.hpp"

namespace {

struct Run {
  int code;
  std::string out;
};

Run run(const std::string& args) {
  const std::string cmd = std::string(FACTZ_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

double json_field(const std::string& s, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(s, m, std::regex("\"" + key + "\": ([-+0-9.eE]+)"))) return NAN;
  return std::stod(m[1]);
}

}  // namespace

TEST(FlowCli, BasisCompressDecompressEval) {
  const factz::testing::TempDir dir;
  const std::string d = dir.str() + "/";
  const auto x = flowtest::grid_nodes(2, 16);
  const auto u = flowtest::taylor_green(2, x);
  ASSERT_TRUE(factz::flow::write_npy(d + "x.npy", int64_t(x.size() / 2), 2, x).ok());
  ASSERT_TRUE(factz::flow::write_npy(d + "u.npy", int64_t(u.size() / 2), 2, u).ok());
  const std::vector<double> pts = {0.0, 1.0, 6.283185307179586, 1.0, 2.5, 0.3};
  ASSERT_TRUE(factz::flow::write_npy(d + "p.npy", 3, 2, pts).ok());

  auto r = run("flow basis --nodes " + d + "x.npy --method hybrid --landmarks 16 --periodic 6.283185307179586,6.283185307179586 --beta 4 -o " + d + "b.fzb");
  ASSERT_EQ(r.code, 0) << r.out;
  r = run("flow compress --basis " + d + "b.fzb --velocity " + d + "u.npy --rel-l2 1e-3 -z " + d + "u.fzf --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const double err = json_field(r.out, "rel_l2_error"), bound = json_field(r.out, "bound");
  EXPECT_GT(json_field(r.out, "ratio"), 1.0);
  EXPECT_LE(err, bound);
  EXPECT_LE(bound, 1e-3 * (1 + 1e-12));
  EXPECT_GE(json_field(r.out, "max_abs_error"), 0.0);

  r = run("flow decompress --basis " + d + "b.fzb -z " + d + "u.fzf -o " + d + "u2.npy --velocity " + d + "u.npy --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NEAR(json_field(r.out, "rel_l2_error"), err, 1e-12);
  EXPECT_LE(json_field(r.out, "rel_l2_error"), json_field(r.out, "bound"));
  auto back = factz::flow::read_npy(d + "u2.npy");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->rows, 256);
  EXPECT_EQ(back->cols, 2);

  r = run("flow eval --basis " + d + "b.fzb -z " + d + "u.fzf --points " + d + "p.npy -o " + d + "v.npy --divergence " + d + "div.npy");
  ASSERT_EQ(r.code, 0) << r.out;
  auto v = factz::flow::read_npy(d + "v.npy");
  auto div = factz::flow::read_npy(d + "div.npy");
  ASSERT_TRUE(v.ok() && div.ok());
  EXPECT_NEAR(v->data[0], v->data[2], 1e-13);  // x = 0 and x = 2pi: periodic
  EXPECT_NEAR(v->data[1], v->data[3], 1e-13);
  for (double q : div->data) EXPECT_LT(std::fabs(q), 1e-12);

  // Errors: usage (2), damaged stream (1, one clear line).
  EXPECT_EQ(run("flow --basis " + d + "b.fzb").code, 2);
  EXPECT_EQ(run("flow basis compress --nodes " + d + "x.npy -o " + d + "q").code, 2);
  EXPECT_EQ(run("flow compress --basis " + d + "b.fzb --velocity " + d + "u.npy -z " + d + "q").code, 2);
  {
    std::fstream f(d + "u.fzf", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put(char(0x77));
  }
  r = run("flow decompress --basis " + d + "b.fzb -z " + d + "u.fzf -o " + d + "u3.npy");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("corrupt_stream"), std::string::npos) << r.out;
  r = run("flow compress --basis " + d + "x.npy --velocity " + d + "u.npy --rel-l2 1e-3 -z " + d + "q");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("flow basis"), std::string::npos) << r.out;
}
