// Helpers shared by the evaluation tests: a temporary folder (tests/support/temp_dir.hpp),
// whole-file reads, running a program, CSV splitting.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace factz::eval_test {

namespace fs = std::filesystem;

using factz::testing::TempDir;

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs a shell command with stdout and stderr captured into `output`; returns the exit code.
inline int run(const std::string& command, std::string& output, const TempDir& dir) {
  const std::string log = dir / "command.log";
  const int status = std::system((command + " > '" + log + "' 2>&1").c_str());
  output = read_text(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

}  // namespace factz::eval_test
