// A process ended by a signal while it writes leaves no hidden temporary file
// (io/temp_files.hpp): the registry and the handlers in a forked child, then the factz CLI
// stopped exactly while a temporary output exists and ended by SIGTERM.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "io/temp_files.hpp"
#include "support/cli_process.hpp"
#include "support/netcdf_cli.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const std::string kCli = FACTZ_CLI_PATH;

void touch(const std::string& path) { std::ofstream(path) << "partial output"; }

/// The names in `dir` that are factz temporaries (".NAME.factz-PID-N.tmp").
std::vector<std::string> temporaries(const TempDir& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.find(".factz-") != std::string::npos && name.size() > 4 && name.substr(name.size() - 4) == ".tmp")
      out.push_back(name);
  }
  return out;
}

TEST(TempFiles, ASignalRemovesTheRegisteredFilesAndEndsTheProcessByIt) {
  TempDir dir;
  const std::string a = dir / "a.tmp", b = dir / "b.tmp", c = dir / "c.tmp", d = dir / "d.tmp";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGHUP, SIG_IGN);  // ignored at start (nohup): stays ignored
    temp_files::install_signal_cleanup();
    temp_files::Registration ra(a);
    touch(a);
    {
      temp_files::Registration rb(b);  // released: renamed or removed by its writer
      touch(b);
    }
    touch(c);  // never registered
    std::vector<std::unique_ptr<temp_files::Registration>> many;
    for (int k = 0; k < 20; ++k) many.push_back(std::make_unique<temp_files::Registration>(dir / "m" + std::to_string(k)));
    for (int k = 0; k < 20; ++k) touch(dir / "m" + std::to_string(k));
    temp_files::Registration rd(d);  // beyond the 16 slots: not registered
    touch(d);
    ::raise(SIGHUP);
    ::raise(SIGTERM);
    ::_exit(0);  // not reached: SIGTERM ends the process
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM) << "SIGHUP was ignored, SIGTERM ended the process";
  EXPECT_FALSE(fs::exists(a));
  EXPECT_TRUE(fs::exists(b));
  EXPECT_TRUE(fs::exists(c));
  EXPECT_TRUE(fs::exists(d));
  int removed = 0;
  for (int k = 0; k < 20; ++k) removed += !fs::exists(dir / "m" + std::to_string(k));
  EXPECT_EQ(removed, 15) << "the 16 slots: a and the first 15 of these";
}

/// Runs factz `args` in `dir`, stops it while a temporary output exists, ends it with
/// SIGTERM and checks that the temporary is gone and that outputs which exist are whole. One
/// try may miss the write (it lasts milliseconds): true when it was caught.
bool caught_while_writing(const TempDir& dir, const std::vector<std::string>& args,
                          const std::vector<std::pair<std::string, uintmax_t>>& outputs) {
  for (const auto& [name, size] : outputs) fs::remove(dir / name);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.str().c_str()) != 0) ::_exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kCli.c_str()));
    for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    if (FILE* f = std::freopen("/dev/null", "w", stdout); !f) ::_exit(127);
    ::execv(kCli.c_str(), argv.data());
    ::_exit(127);
  }
  bool caught = false;
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (!temporaries(dir).empty()) {
      ::kill(pid, SIGSTOP);
      if (!temporaries(dir).empty()) {  // still there with the process stopped: end it now
        caught = true;
        ::kill(pid, SIGTERM);
      }
      ::kill(pid, SIGCONT);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (caught) {
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
  } else {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  const std::vector<std::string> left = temporaries(dir);
  EXPECT_TRUE(left.empty()) << left.size() << " left, " << (left.empty() ? "" : left[0]);
  for (const auto& [name, size] : outputs) {
    if (fs::exists(dir / name) && size) {
      EXPECT_EQ(fs::file_size(dir / name), size) << name << ": whole or absent";
    }
  }
  return caught;
}

TEST(TempFiles, FactzEndedWhileWritingLeavesNoTemporaryFile) {
  TempDir dir;
  const int n = 4096;  // 64 MB per component: each write lasts long enough to be caught
  for (const char* name : {"u.f32", "v.f32"}) {
    std::vector<float> plane(size_t(n) * size_t(n));
    const double phase = name[0] == 'u' ? 0.0 : 1.0;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        plane[size_t(y) * size_t(n) + size_t(x)] = float(std::sin(0.003 * x + phase) * std::cos(0.002 * y - phase));
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(plane.data()), std::streamsize(plane.size() * sizeof(float)));
  }
  const testing::Outcome c = testing::run_in(
      dir, testing::shell_quoted(kCli) + " compress -2 4096 4096 -i u.f32 -i v.f32 -z f.fz -M REL 1e-3 --mode none");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const uintmax_t plane_bytes = uintmax_t(n) * uintmax_t(n) * 4;
  int caught = 0;
  for (int attempt = 0; attempt < 10 && caught < 2; ++attempt)
    caught += caught_while_writing(dir, {"decompress", "-z", "f.fz", "-o", "u2.f32", "-o", "v2.f32"},
                                   {{"u2.f32", plane_bytes}, {"v2.f32", plane_bytes}});
  EXPECT_GE(caught, 1) << "no try stopped factz while it wrote";
  // A multi-block file decoded in one process (under mpirun: Mpi.collective_write_ended_by_a_signal).
  ASSERT_EQ(testing::run_in(dir, testing::shell_quoted(kCli) +
                                     " compress -2 4096 4096 -i u.f32 -i v.f32 -z m.fzmb -M REL 1e-3 --mode none "
                                     "--blocks 2 2")
                .exit_code,
            0);
  int caught_mb = 0;
  for (int attempt = 0; attempt < 10 && caught_mb < 2; ++attempt)
    caught_mb += caught_while_writing(dir, {"decompress", "-z", "m.fzmb", "-o", "u3.f32", "-o", "v3.f32"},
                                      {{"u3.f32", plane_bytes}, {"v3.f32", plane_bytes}});
  EXPECT_GE(caught_mb, 1) << "no try stopped factz while it wrote a multi-block field";
  if (testing::netcdf_built_in(kCli)) {  // the netCDF writer's temporary, in libfactz-io.so
    int caught_nc = 0;
    for (int attempt = 0; attempt < 10 && caught_nc < 2; ++attempt)
      caught_nc += caught_while_writing(dir, {"decompress", "--replace", "-z", "f.fz", "-o", "o.nc:u", "-o", "o.nc:v"},
                                        {{"o.nc", 0}});
    EXPECT_GE(caught_nc, 1) << "no try stopped factz while it wrote the netCDF file";
  }
}

}  // namespace
}  // namespace factz
