// Running the built `factz` (and other programs) from a test: a command line in a test's
// folder, its exit status, stdout and stderr. Header-only, for the CLI suites.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace factz::testing {

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Outcome {
  int exit_code = -1;  ///< the process's exit status, -1 when it did not exit normally
  bool signaled = false;
  std::string out, err;
  std::string describe() const {
    std::ostringstream os;
    os << (signaled ? "killed by a signal" : "exit " + std::to_string(exit_code)) << "\nstdout: " << out.substr(0, 3000)
       << "\nstderr: " << err.substr(0, 3000);
    return os.str();
  }
};

/// Runs `command_line` with sh in `dir`, capturing stdout and stderr.
inline Outcome run_in(const TempDir& dir, const std::string& command_line) {
  const std::string out = dir / ".stdout", err = dir / ".stderr";
  const std::string full = "cd " + shell_quoted(dir.str()) + " && " + command_line + " > " + shell_quoted(out) +
                           " 2> " + shell_quoted(err);
  const int status = std::system(full.c_str());
  Outcome o;
  if (status != -1 && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  o.signaled = (status != -1 && WIFSIGNALED(status)) || o.exit_code > 128;
  o.out = read_text_file(out);
  o.err = read_text_file(err);
  return o;
}

/// The key=value tokens of a statistics line.
inline std::map<std::string, std::string> key_values(const std::string& line) {
  std::map<std::string, std::string> kv;
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    const auto eq = token.find('=');
    if (eq != std::string::npos) kv[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return kv;
}

/// Whether `name` is a program on PATH.
inline bool have_program(const std::string& name) {
  return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

/// The lines of `text` that contain `needle`.
inline std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

}  // namespace factz::testing
