// 3D vector fields on the command line: the grid (-3 NX NY NZ), the three component files
// of a flag, reading a whole field with its missing vertices marked, and writing one
// component, in float32 and float64 (cmd_cp3d.cpp; the multi-block driver blocks3d.cpp reads
// and writes the same way).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "factz/topology3d.hpp"

namespace factz::cli {

/// `-3 NX NY NZ`: three positive integers whose product stays within the library's 2^40.
void dims3(const Args& a, int64_t& nx, int64_t& ny, int64_t& nz);
/// What reading a 3D field found besides its values: each component's declared fill values
/// (a variable's _FillValue, missing_value, ...; none for raw and .npy files or with --fill),
/// the grid (nz, ny, nx) and, when all three components are variables, their encoded source
/// record (section 12).
template <class T>
struct Field3DInfo {
  std::array<std::vector<T>, 3> fills;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> source;
};

/// The fill values a 3D field's components declare after the command line: --fill replaces the
/// files' own (then none is left here: fill3d_of marks it in any component), else `like`'s (an
/// original's, for its reconstruction) are added to each component's. The one rule of the
/// one-process reader (read_field3d) and of the multi-block driver's blocks.
template <class T>
void apply_fill_options3d(const Args& a, Field3DInfo<T>& declared, const Field3DInfo<T>* like) {
  if (a.has("--fill")) {  // replaces the files' own
    for (auto& d : declared.fills) d.clear();
  } else if (like) {  // the original's declared values mark the reconstruction too
    for (int c = 0; c < 3; ++c)
      for (T x : like->fills[size_t(c)])
        if (std::find(declared.fills[size_t(c)].begin(), declared.fills[size_t(c)].end(), x) ==
            declared.fills[size_t(c)].end())
          declared.fills[size_t(c)].push_back(x);
  }
}

/// The three files of `flag` (u, v, w), or a usage error.
std::vector<std::string> three_files(const Args& a, const char* flag);
/// One component of nx * ny * nz values: raw float32 (exactly 4 n bytes) or a '<f4' C-order
/// .npy of shape (nz, ny, nx) or (n,).
std::vector<float> read_component(const std::string& path, int64_t nx, int64_t ny, int64_t nz);
/// The fill value of --fill V, declared for all three components (none without --fill).
factz::FillValues3D fill3d_of(const Args& a);
/// The field of `flag` (u, v, w) with its missing vertices marked: NaN, --fill V in any
/// component, and a netCDF / HDF5 variable's own fill values in its component (unless --fill
/// is given); `masked` gets their count. Components are raw or .npy files (-3 gives the
/// grid) or variables (FILE.nc:VAR[...], the last three dimensions; -3 optional). Without a
/// declared fill value, a value that looks like an undeclared one gets a warning, except for
/// a reconstruction (verify's -d).
factz::VectorField3D read_field3d(const Args& a, const char* flag, int64_t& masked, const std::string& command,
                                  bool reconstruction = false, const Field3DInfo<float>* like = nullptr,
                                  Field3DInfo<float>* info = nullptr);
/// Writes one component: a '<f4' .npy of shape (nz, ny, nx) when the name ends in .npy, raw
/// little-endian float32 otherwise ('-': stdout).
void write_component(const std::string& path, const std::vector<float>& values, int64_t nx, int64_t ny, int64_t nz);

/// The float64 versions of the three above: raw little-endian float64 (exactly 8 n bytes) or
/// '<f8' .npy files; --fill V compared as a double.
std::vector<double> read_component64(const std::string& path, int64_t nx, int64_t ny, int64_t nz);
factz::FillValues3D64 fill3d_of64(const Args& a);
factz::VectorField3D64 read_field3d64(const Args& a, const char* flag, int64_t& masked, const std::string& command,
                                      bool reconstruction = false, const Field3DInfo<double>* like = nullptr,
                                      Field3DInfo<double>* info = nullptr);
void write_component(const std::string& path, const std::vector<double>& values, int64_t nx, int64_t ny, int64_t nz);

}  // namespace factz::cli
