// What the netCDF command-line suites (test_netcdf.cpp, test_netcdf64.cpp) share: whether
// the built `factz` has netCDF-C and HDF5, a python3 with h5py, the declaration lines `ncdump -h` prints for a variable,
// and the check of a one-line error. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace factz::testing {

/// What `<cli> --version` says: built with netCDF-C (asked once per test program).
inline bool netcdf_built_in(const std::string& cli) {
  static const bool yes = [&] {
    TempDir dir;
    const Outcome o = run_in(dir, shell_quoted(cli) + " --version");
    return o.exit_code == 0 && o.out.find("netCDF-C") != std::string::npos;
  }();
  return yes;
}

/// What `<cli> --version` says: built with the HDF5 library (asked once per test program).
inline bool hdf5_built_in(const std::string& cli) {
  static const bool yes = [&] {
    TempDir dir;
    const Outcome o = run_in(dir, shell_quoted(cli) + " --version");
    return o.exit_code == 0 && o.out.find("HDF5") != std::string::npos;
  }();
  return yes;
}

/// A python3 that imports h5py and numpy (to write HDF5 test files), or "" when none does.
inline std::string python_with_h5py() {
  for (const char* p : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(p) + " -c 'import h5py, numpy' > /dev/null 2>&1").c_str()) == 0) return p;
  return "";
}

/// The lines of `ncdump -h` that declare variable `var` and its attributes.
inline std::vector<std::string> declaration(const std::string& header, const std::string& var) {
  std::vector<std::string> out;
  std::istringstream in(header);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    const bool declares = line.find(" " + var + "(") != std::string::npos && line.rfind("\t\t", 0) != 0;
    if (declares) inside = true;
    else if (inside && line.rfind("\t\t" + var + ":", 0) != 0) inside = false;
    if (inside) out.push_back(line);
  }
  return out;
}

/// One line on stderr naming `needles`, the exit code, and no signal.
inline void expect_one_line(const Outcome& o, int code, const std::vector<std::string>& needles) {
  EXPECT_EQ(o.exit_code, code) << o.describe();
  EXPECT_FALSE(o.signaled) << o.describe();
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.describe();
  for (const auto& n : needles) EXPECT_NE(o.err.find(n), std::string::npos) << "wanted '" << n << "'\n" << o.describe();
}

}  // namespace factz::testing
