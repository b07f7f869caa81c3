// The one reader and the one writer of field files for every factz command (docs/usage.md,
// "Files" and "Your data in netCDF or HDF5"): raw float32, .npy, and netCDF / HDF5 variables
// (FILE.nc:VAR[selection], FILE.h5:/path; src/io/variable). compress, cp, verify (-i and -d),
// render, ct, the scalar commands and the multi-block driver read through read_vector_input
// / read_scalar_input / read_plane_input; decompress writes through write_field_outputs.
//
// Shapes: `-2 NX NY` (or `-3 NX NY NZ`) when given, checked against what a file says;
// otherwise the file's own (a variable's last dimensions, a 2D .npy's shape). Fill values:
// a variable's own (_FillValue, missing_value, an HDF5 dataset's fill value) are declared
// as if given with --fill-u / --fill-v; --fill, --fill-u and --fill-v given on the command
// line replace the file's for the components they name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "factz/io.hpp"
#include "factz/scalar.hpp"
#include "io/variable/variable_io.hpp"

namespace factz::cli {

/// `-3 NX NY NZ` or `-2 NX NY` (nz = 1) of the scalar commands (defined in cmd_ct.cpp).
void scalar_dims(const Args& a, int64_t& nx, int64_t& ny, int64_t& nz);

/// A field file named on the command line: a plain path (raw, .npy, '-') or a variable.
struct FieldFile {
  std::string name;  ///< as given
  std::optional<variable_io::VariableSpec> variable;
  /// The file itself (the part before ':VAR' of a variable).
  const std::string& path() const { return variable ? variable->file : name; }
};
/// What `name` names. A bad variable name is an error (exit 1); a plain file that is a
/// netCDF or HDF5 file (by its first bytes) is refused with its variables listed ("name
/// the variable: x.nc:VAR").
FieldFile field_file(const std::string& name);

/// The whole-dimension shape a file gives by itself, outermost first: a variable's last
/// `whole` dimensions, a 2D .npy's (ny, nx); none for raw files and 1D .npy.
std::optional<std::vector<uint64_t>> shape_of(const FieldFile& f, int whole);

/// One plane read through the one reader.
struct PlaneInput {
  std::vector<float> values;
  std::vector<uint64_t> shape;  ///< outermost first: (ny, nx) or (nz, ny, nx)
  std::vector<float> fills;     ///< the file's declared missing values (NaN excluded)
  std::optional<SourceVariable> source;
  std::vector<SourceAttribute> global_attributes;  ///< a variable's file's
  SourceFormat format = SourceFormat::netcdf4;
};
/// Reads `f` as a plane of `shape` (outermost first; empty: the file's own shape, a usage
/// error for raw files). A float64 variable is one clear error naming the file and the
/// variable (float64 is not supported yet). Notes of the reader go to stderr as warnings
/// of `command`. `shape_from` says where `shape` came from in a mismatch message ("-2
/// says" when empty).
PlaneInput read_plane_input(const FieldFile& f, const std::vector<uint64_t>& shape, int whole,
                            const std::string& command, const std::string& shape_from = "");

/// The missing values declared for each component, after the command line's overrides.
struct DeclaredFills {
  std::vector<float> u, v;
  bool any() const { return !u.empty() || !v.empty(); }
};
/// --fill (both), --fill-u, --fill-v replace the files' values of the components they name.
DeclaredFills declared_fills(const Args& a, const std::vector<float>& file_u, const std::vector<float>& file_v);
/// Marks NaN and every declared value missing (factz::mark_missing with the first values,
/// the field's mask for the others); returns how many vertices are missing.
int64_t mark_declared(VectorField2D& f, const DeclaredFills& fills);

/// A vector field as the commands read it.
struct VectorInput {
  VectorField2D field;
  DeclaredFills fills;          ///< declared for u and v (files and command line)
  std::vector<uint8_t> source;  ///< the encoded source record, when both came from variables
  int64_t masked = 0;           ///< missing vertices
};
/// The two files of `flag` (-i or -d, u then v): shape from -2 or the files (u and v must
/// agree), fill values declared, missing vertices marked, the field validated. `like`: the
/// original of a comparison (verify, render -d), whose shape (without -2) and declared fill
/// values apply here too.
/// Without any declared fill value, a value that looks like one gets a warning (unless
/// `like` is given: the original's warning covers it).
VectorInput read_vector_input(const Args& a, const char* flag, const std::string& command,
                              const VectorInput* like = nullptr);
/// The grid of a vector field's files without reading them: -2, or the first file's shape
/// (usage error when neither says it).
void input_dims(const Args& a, const char* flag, int64_t& nx, int64_t& ny);

/// A scalar field (one file of `flag`): `-3 NX NY NZ`, `-2 NX NY`, the file's shape, or
/// `like`'s (the original of a comparison). A variable's fill values (_FillValue,
/// missing_value) mark missing vertices in f.mask unless `--fill` is given (which
/// mark_scalar_fill applies instead); `file_fills` receives them (empty for raw and .npy).
ScalarField read_scalar_input(const Args& a, const char* flag, const std::string& command,
                              const ScalarField* like = nullptr, std::vector<float>* file_fills = nullptr);

/// Writes decoded planes (u, v, or one scalar plane) to the -o names: raw, .npy, or
/// netCDF / HDF5 variables, several variables of one file written together. `shape`:
/// outermost first. `source`: the stream's record (dimensions, attributes, coordinates of
/// each component's variable). `mask`: the decoded missing vertices; where they share one
/// bit pattern in a component, its variable declares it as _FillValue unless the source
/// declares one.
void write_field_outputs(const std::vector<std::string>& names, const std::vector<const std::vector<float>*>& planes,
                         const std::vector<uint64_t>& shape, const std::optional<SourceRecord>& source,
                         const std::vector<uint8_t>& mask, const std::string& command);

/// Whether any of `names` is a netCDF / HDF5 output (for the drivers that write raw only).
bool any_variable_output(const std::vector<std::string>& names);

}  // namespace factz::cli
