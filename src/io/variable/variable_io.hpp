// netCDF and HDF5 variables as field inputs and outputs of the CLI (docs/usage.md, "Your data
// in netCDF or HDF5"): `FILE.nc:VAR`, `FILE.nc:VAR[time=3,depth=0]`, `FILE.nc:VAR[3,0,:,:]`,
// `FILE.h5:/path/to/dataset`. netCDF files (netCDF-3 classic, 64-bit offset, CDF-5, netCDF-4)
// are read with netCDF-C, HDF5 files with the HDF5 library; both are written with netCDF-C
// (netCDF-4, which is HDF5). No format is parsed by hand.
//
// The library `factz_variable_io` (variable_io.cpp, variable_spec.cpp) is built whatever is
// installed and links neither library: the readers and the writer live in the module
// libfactz-io.so (variable_module.hpp), built when netCDF-C or the serial HDF5 is found and
// loaded the first time a run reads or writes a variable, so that other runs start without
// them. Without a library, the calls that need it answer backend_unavailable; without the
// module (not where factz looks for it, dynload/module_loader.hpp), backend_unavailable
// naming it and the folders looked in. built_in() says what is there. It is kept out of the
// core library, so that the Python module and the HDF5 filter plugin (which may load another
// HDF5) never link netCDF.
//
// A reader returns a typed buffer and its type (float32 or float64, read as the file stores
// it, never converted; integers packed with scale_factor / add_offset unpacked as numpy
// unpacks them, variable_internal.hpp's Packing), the whole dimensions' shape, the declared fill values (as doubles,
// which hold every float32 and float64 value exactly), and the source record of the
// variable (factz/io.hpp: SourceVariable; stored in the stream's section 12). The writer
// takes float32 or float64 values and writes NC_FLOAT or NC_DOUBLE variables.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "factz/io.hpp"
#include "factz/status.hpp"

namespace factz::variable_io {

/// Which library reads a file.
enum class FileKind : uint8_t {
  netcdf = 1,  ///< netCDF-C: netCDF-3 files, and HDF5-based files not named as HDF5 (.nc, ...)
  hdf5 = 2,    ///< the HDF5 library: files named .h5, .hdf5 or .he5
};

/// One variable named on the command line.
struct VariableSpec {
  std::string file;      ///< the file's path
  std::string variable;  ///< "U", "group/U", or an HDF5 path "/path/to/dataset"
  FileKind kind = FileKind::netcdf;
  bool sliced = false;    ///< a selection "[...]" was given
  std::string selection;  ///< the text inside the brackets
  /// "FILE:VAR[...]" as written, for messages.
  std::string text() const;
};

/// What a command-line name is: a variable (FILE:VAR...), or none for a plain file (raw,
/// .npy, '-'). An input names a variable when the part before one of its ':' is an existing
/// netCDF or HDF5 file (by its first bytes) or ends in .nc, .nc4, .cdf, .netcdf, .h5, .hdf5
/// or .he5 (then a file that cannot be read, or is neither format, is an io error naming
/// it); a name that exists as a whole is always a plain file. An output names a variable
/// when the part before a ':' ends in one of those extensions; an output that ends in one
/// without ':VAR' is invalid_argument (name the variable). Bad syntax (an empty variable,
/// an unclosed '[') is invalid_argument.
Result<std::optional<VariableSpec>> parse_variable_spec(const std::string& name, bool output);

/// Whether an existing plain file is a netCDF or HDF5 file (by its first bytes): such a file
/// given without ':VAR' is refused with the list of its variables (variables_hint).
std::optional<FileKind> sniff_file(const std::string& path);
/// "its variables: U, V, lat, lon" (at most 40 names), or why they cannot be listed.
std::string variables_hint(const std::string& path, FileKind kind);

enum class DType : uint8_t { float32 = 1, float64 = 2 };
const char* dtype_name(DType t);

/// A variable read from a file: the values of the selected slice, x fastest.
struct VariableData {
  DType dtype = DType::float32;
  std::vector<float> f32;   ///< the values when dtype is float32
  std::vector<double> f64;  ///< the values when dtype is float64
  /// The whole dimensions, outermost first: (ny, nx), or (nz, ny, nx).
  std::vector<uint64_t> shape;
  /// The first row (of shape's outermost dimension) and the first column (of the innermost)
  /// the values hold, and how many columns: 0, 0 and the whole width unless read_variable was
  /// given a RowRange; the values are then count() / (values per row) rows from first_row.
  uint64_t first_row = 0, first_col = 0, cols = 0;
  /// The declared missing values, first the one that marks missing data in the file's own
  /// words (_FillValue), then the others (HDF5: the dataset's user-defined fill value;
  /// missing_value, one or several), without repeats.
  std::vector<double> fill_values;
  SourceFormat format = SourceFormat::netcdf4;
  /// A packed variable's step, |scale_factor| (1 with add_offset alone); 0 when not packed.
  double packing_step = 0;
  /// How far the values read lie from the exact `integer * scale_factor + add_offset` (the
  /// rounding of the unpacking), at most; a value within `packing_step / 2 - packing_slack`
  /// of one re-packs to its integer.
  double packing_slack = 0;
  SourceVariable source;  ///< name, type, dimensions with the slice, attributes, coordinates
  std::vector<SourceAttribute> global_attributes;  ///< the file's (root group's) attributes
  /// The variables its `coordinates` and `grid_mapping` attributes name whose dimensions are
  /// all its own, over the slice (read as `Auxiliaries` says).
  std::vector<SourceAuxiliary> auxiliaries;
  /// Those named but not read because they span two or more of the whole dimensions
  /// (Auxiliaries::small): "latitude(Y, X), float64", for a note.
  std::vector<std::string> grids_left_out;
  /// What could not be kept (an attribute of a type the record has no code for, a named
  /// variable that is missing or has another dimension), for a warning; reading went on.
  std::vector<std::string> notes;
  uint64_t count() const;
};

/// Which auxiliary variables (VariableData::auxiliaries) a read takes: none; those that span
/// at most one of the whole dimensions (scalar coordinates, grid-mapping variables, 1D
/// ones), the others listed in grids_left_out; or all of them (2D and 3D coordinates such as
/// a curvilinear grid's lat(y, x) too).
enum class Auxiliaries : uint8_t { none, small, all };

/// Rows [first, first + count) of the outermost of the dimensions read whole (y of a plane, z
/// of a volume), and columns [first_col, first_col + cols) of the innermost (x): the part of the
/// values a read returns (a rank's blocks under mpirun). The default, every value.
struct RowRange {
  static constexpr uint64_t kAll = ~uint64_t(0);
  uint64_t first = 0;
  uint64_t count = kAll;  ///< kAll: every row from `first`; 0: no values, the rest of the record all the same
  uint64_t first_col = 0;
  uint64_t cols = kAll;   ///< kAll: every column from `first_col`
};

/// Reads `spec` with its last `whole` dimensions (2: y, x; 3: z, y, x) read whole and every
/// leading one at the selection's index. `values` false reads everything but the values
/// (shape, type, fill values, the record without coordinates and auxiliaries). `rows` reads
/// only those rows' values (VariableData::first_row; the shape, coordinates and auxiliaries stay
/// the whole slice's; packing_slack is then over those rows). Errors name the file and
/// the variable in one line: a missing variable lists those that exist; non-numeric
/// variables, integer ones without scale_factor / add_offset, too few dimensions, bad selections,
/// indices and rows out of range are invalid_argument; unreadable files io.
Result<VariableData> read_variable(const VariableSpec& spec, int whole, bool values = true,
                                   Auxiliaries auxiliaries = Auxiliaries::none, RowRange rows = {});

/// The variables a variable's `coordinates` and `grid_mapping` attributes name, in that order,
/// each once (CF: `coordinates` a blank-separated list; `grid_mapping` a name, or the
/// extended form "crs: x y crs2: lat lon", whose words all name variables): what
/// VariableData::auxiliaries are read from.
std::vector<std::string> referenced_variables(const SourceVariable& variable);
/// The cell-bounds variables CF `bounds` and `climatology` attributes among `attributes` name
/// (a coordinate's `lat_bnds`), each once.
std::vector<std::string> bounds_variables(const std::vector<SourceAttribute>& attributes);

/// An attribute holding `values` in `type` (float32 or float64), little-endian (unpacked
/// packing attributes; a valid range rewritten for decompressed values).
SourceAttribute typed_attribute(const std::string& name, DType type, const std::vector<double>& values);

/// Integers of a numeric `type` (SourceType: int8 .. uint64), little-endian, to write as they
/// are: a re-packed variable (repack).
struct PackedValues {
  SourceType type = SourceType::int16;
  std::span<const uint8_t> bytes;
};

/// The values of a variable to write, x fastest: float32 values make an NC_FLOAT variable,
/// float64 values an NC_DOUBLE one, packed integers a variable of their type (written as they
/// are, never converted).
using OutputValues = std::variant<std::span<const float>, std::span<const double>, PackedValues>;

/// A variable re-packed into the integers it was read from (`decompress --repack`; docs/usage.md
/// "Packed variables").
struct Repacked {
  SourceVariable variable;      ///< the record's variable as the file had it: its integer type, scale_factor, ...
  std::vector<uint8_t> values;  ///< the integers, little-endian, of variable.type
  uint64_t clamped = 0;         ///< values beyond the type's range, written as its nearest end
};
/// Whether a record's variable was read unpacked from integers (its attributes say
/// factz_packed_type = "int16", "uint8", ...): what repack takes.
bool repackable(const SourceVariable& v);
/// The integers of `values` (the decoded field, of the record's type) under the packing the
/// record keeps (factz_packed_scale_factor, factz_packed_add_offset, factz_packed_type): each
/// value's nearest integer of `(x - add_offset) / scale_factor` (in double, ties to even, as
/// numpy.around), a missing vertex (`mask`, when not empty) the packed fill value that unpacks
/// to the bits it holds, else the integer that does (a vertex missing in another component
/// only), else the first fill value. The attributes are restored: scale_factor and
/// add_offset under their names and types, _FillValue and missing_value as integers of the
/// type, valid_min / valid_max / valid_range of the unpacked type as integers when every value
/// re-packs exactly, factz_packed_* dropped (the type is written as meant, so _Unsigned is
/// not needed). invalid_argument naming `what`: not repackable, a fill value that re-packs to
/// no integer, missing vertices without a fill value.
Result<Repacked> repack(const SourceVariable& v, const OutputValues& values, std::span<const uint8_t> mask,
                        const std::string& what);

/// One variable to write.
struct OutputVariable {
  std::string variable;            ///< name, or a group path "/group/name"
  OutputValues values;             ///< the product of `shape` values
  std::vector<uint64_t> shape;     ///< (ny, nx) or (nz, ny, nx)
  /// The variable it was read from (dimensions, slice, attributes, coordinates), or null:
  /// plain dimensions (y, x) or (z, y, x).
  const SourceVariable* source = nullptr;
  /// The value every missing vertex holds, when they share one bit pattern: written as
  /// _FillValue (in the variable's type, which holds it exactly) when the source declares
  /// neither _FillValue nor missing_value.
  std::optional<double> fill;
  /// The source file's global attributes, written on the new file (the first variable's
  /// that has them), or null.
  const std::vector<SourceAttribute>* global_attributes = nullptr;
  /// The source record's auxiliary variables, or null: each written once per file, in the
  /// root group, where the file has all its dimensions.
  const std::vector<SourceAuxiliary>* auxiliaries = nullptr;
};

/// Writes `variables` into one new netCDF-4 file at `file` (both kinds: an HDF5 name gets a
/// netCDF-4 file, which is HDF5), replacing it. Dimensions and coordinate variables are
/// shared by name; the sliced dimensions of a source have length 1 and keep their
/// coordinate value. The file is written under a temporary name in its folder and renamed
/// once complete, so a failure leaves no partial file. `notes` gets what could not be
/// written (an attribute netCDF refuses).
Status write_variables(const std::string& file, std::span<const OutputVariable> variables,
                       std::vector<std::string>* notes = nullptr);

/// Removes the temporary file of a netCDF write under way in the module, if it is loaded
/// (io/temp_files.hpp). Async-signal-safe: for the CLI's signal handlers.
void unlink_temporaries() noexcept;

/// What this build reads and writes, with the versions it was built against and where its
/// module is (found without loading it): "netCDF-C 4.9.0 (...), HDF5 1.10.8 (...) in
/// /usr/lib/factz/libfactz-io.so", or "... which is missing (not in ...)", or "no netCDF or
/// HDF5 support".
std::string built_in();
/// Whether this build reads and writes netCDF, and reads HDF5 datasets (the module may still
/// be missing at run time).
bool netcdf_available();
bool hdf5_available();

}  // namespace factz::variable_io
