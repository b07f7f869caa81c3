// The one reader and the one writer of field files for every factz command (docs/usage.md,
// "Files" and "Your data in netCDF or HDF5"): raw float32 or float64, .npy ('<f4', '<f8'),
// and netCDF / HDF5 variables (FILE.nc:VAR[selection], FILE.h5:/path; src/io/variable).
// compress, cp, verify (-i and -d), render, ct, the scalar commands and the multi-block
// driver read through read_vector_input / read_scalar_input / read_plane_input; decompress
// writes through write_field_outputs.
//
// Value types: one implementation templated on T (float: float32 fields, double: float64
// fields, issue 18), instantiated for both. Which one a command takes is decided before
// reading (common.hpp: float64_inputs, the stream's dtype); a float64 field is never
// rounded to float on the way (values, fill values, the source record).
//
// Shapes: `-2 NX NY` (or `-3 NX NY NZ`) when given, checked against what a file says;
// otherwise the file's own (a variable's last dimensions, a 2D .npy's shape). Fill values:
// a variable's own (_FillValue, missing_value, an HDF5 dataset's fill value) are declared
// as if given with --fill-u / --fill-v; --fill, --fill-u and --fill-v given on the command
// line replace the file's for the components they name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "factz/io.hpp"
#include "factz/scalar.hpp"
#include "io/variable/variable_io.hpp"

namespace factz::cli {

/// "36 x 33 (nx x ny)" / "36 x 33 x 4 (nx x ny x nz)" of a shape given outermost first.
std::string shape_text(const std::vector<uint64_t>& shape);

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

/// The vector field of a value type: VectorField2D (float) or VectorField2D64 (double).
template <class T>
using VectorFieldOf = std::conditional_t<std::is_same_v<T, double>, VectorField2D64, VectorField2D>;

/// Values of a variable that lie outside its valid range (valid_min, valid_max, valid_range),
/// which makes them missing data (CF), as a read found them: over the rows it read, before
/// they are declared like fill values (finish_plane_input). A multi-block run under mpirun
/// merges every rank's (merge_outside) first, so that each rank declares the same ones.
template <class T>
struct OutsideValuesOf {
  static constexpr size_t kMax = 64;  ///< distinct values declared one by one, at most
  std::string range;                  ///< the range's text ("valid_min 0"); empty: none declared
  std::optional<double> lo, hi;       ///< its bounds
  std::set<T> values;                 ///< distinct, at most kMax + 1 kept
  uint64_t count = 0;                 ///< vertices
  /// Whether `x` is one of them: outside the range (compared in T, as netCDF4-python compares
  /// in the variable's type; NaN never is) and not one of the file's `fills`.
  bool holds(T x, const std::vector<T>& fills) const {
    return ((lo && x < T(*lo)) || (hi && x > T(*hi))) && std::find(fills.begin(), fills.end(), x) == fills.end();
  }
};
/// `from`'s values and count added to `into`'s.
template <class T>
void merge_outside(OutsideValuesOf<T>& into, const OutsideValuesOf<T>& from) {
  into.count += from.count;
  for (T x : from.values)
    if (into.values.size() <= OutsideValuesOf<T>::kMax) into.values.insert(x);
}

/// One plane read through the one reader.
template <class T>
struct PlaneInputOf {
  std::vector<T> values;
  std::vector<uint64_t> shape;  ///< outermost first: (ny, nx) or (nz, ny, nx)
  std::vector<T> fills;         ///< the file's declared missing values (NaN excluded), in T
  std::optional<SourceVariable> source;
  std::vector<SourceAttribute> global_attributes;  ///< a variable's file's
  std::vector<SourceAuxiliary> auxiliaries;        ///< what its attributes name (read_auxiliaries)
  SourceFormat format = SourceFormat::netcdf4;
  double packing_step = 0;   ///< a packed variable's step (variable_io::VariableData), else 0
  double packing_slack = 0;  ///< and the rounding of its unpacking (VariableData)
  /// A variable's: "FILE:VAR" as named, and the values outside its valid range that the
  /// fills above do not hold yet (read_plane_rows_of: until finish_plane_input).
  std::string what;
  OutsideValuesOf<T> outside;
  /// The rows the values hold (of shape's outermost dimension) and their columns (of the
  /// innermost): all of them, or a RowRange's.
  uint64_t first_row = 0, rows = 0, first_col = 0, cols = 0;
};
using PlaneInput = PlaneInputOf<float>;

/// After a compression at absolute bound `eb`: a note on stderr for every packed variable
/// this process read where `eb` is below half of `step / 2 - slack`. Re-packing the
/// decompressed values gives back every integer of the file for any bound below that limit
/// (`step / 2 - slack`), and a bound near it makes a smaller stream (docs/usage.md, "Packed
/// variables").
void note_bound_below_packing(const std::string& command, double eb);
/// What the readers say about a variable (its notes and warnings, the valid range's note, the
/// packing note) is printed once per process, however often it is read (once per block of a
/// multi-block run), and not at all while a QuietReaderNotes lives: under mpirun every rank
/// reads a global variable whole, and only rank 0 says what the reader found.
class QuietReaderNotes {
 public:
  explicit QuietReaderNotes(bool quiet);
  ~QuietReaderNotes();
  QuietReaderNotes(const QuietReaderNotes&) = delete;
  QuietReaderNotes& operator=(const QuietReaderNotes&) = delete;

 private:
  bool was_;
};

/// Reads `f` as a plane of `shape` (outermost first; empty: the file's own shape, a usage
/// error for raw files) of values of type T: raw float32 / '<f4' .npy / float32 variables
/// for float, raw float64 / '<f8' .npy / float64 variables for double (raw and .npy
/// float64 planes are 2D). A variable of the other type is one clear error naming the file
/// and the variable. Notes of the reader go
/// to stderr as warnings of `command`. `shape_from` says where `shape` came from in a
/// mismatch message ("-2 says" when empty).
template <class T>
PlaneInputOf<T> read_plane_input_of(const FieldFile& f, const std::vector<uint64_t>& shape, int whole,
                                    const std::string& command, const std::string& shape_from = "");
/// read_plane_input_of of the rows `rows` of a variable (of shape's outermost dimension: y of
/// a plane; RowRange{0, 0}: no values, the rest of the record all the same; other files are
/// read whole, and `rows` must then be all of them), without finish_plane_input: the values
/// outside the valid range are in `outside`, not yet among the fills, and nothing is noted.
template <class T>
PlaneInputOf<T> read_plane_rows_of(const FieldFile& f, const std::vector<uint64_t>& shape, int whole,
                                   const std::string& command, variable_io::RowRange rows,
                                   const std::string& shape_from = "");
/// What read_plane_input_of does after reading: the values outside the valid range declared
/// like fill values after the file's (more than OutsideValuesOf::kMax distinct ones fail, with
/// advice), the note saying how many, and a packed variable kept for note_bound_below_packing.
template <class T>
void finish_plane_input(PlaneInputOf<T>& p, const std::string& command);
inline PlaneInput read_plane_input(const FieldFile& f, const std::vector<uint64_t>& shape, int whole,
                                   const std::string& command, const std::string& shape_from = "") {
  return read_plane_input_of<float>(f, shape, whole, command, shape_from);
}

/// Which auxiliary variables the variables read from now on bring (VariableData): none (the
/// default: verify, cp, ...), or, for compress, the small ones, or all with
/// --keep-coordinates. Under `small`, each left out is noted on stderr once, with the option.
void read_auxiliaries(variable_io::Auxiliaries which);

/// The encoded source record (factz/io.hpp) of planes read from variables, one component per
/// plane, the first file's format, name and global attributes; empty unless every plane came
/// from a variable. `whole`: how many of the last dimensions are the field's (2 or 3); a
/// length-1 outer dimension read whole beyond them is recorded as sliced at index 0. Moves
/// the planes' source, global attributes and auxiliary variables (each name once, the
/// first plane's that has it).
template <class T>
std::vector<uint8_t> source_record_of(const std::vector<PlaneInputOf<T>*>& planes, const FieldFile& first,
                                      size_t whole);

/// The encoded source record of the variables `names` (u, v, or u, v, w) with `whole`
/// dimensions each, as read_vector_input (or the 3D reader) gives it, read without their values
/// (the multi-block driver's rank 0, whose blocks were read by rows); empty unless all are
/// variables.
template <class T>
std::vector<uint8_t> source_record_without_values(const std::vector<std::string>& names, int whole,
                                                  const std::string& command);

/// The missing values declared for each component, after the command line's overrides.
template <class T>
struct DeclaredFillsOf {
  std::vector<T> u, v;
  bool any() const { return !u.empty() || !v.empty(); }
};
using DeclaredFills = DeclaredFillsOf<float>;
/// --fill (both), --fill-u, --fill-v replace the files' values of the components they name
/// (parsed as float for float fields, as double for double fields).
template <class T>
DeclaredFillsOf<T> declared_fills(const Args& a, const std::vector<T>& file_u, const std::vector<T>& file_v);
/// Adds an original's fill values to a reconstruction's (each value once, NaN once): its
/// missing vertices hold them, whatever its own file declares (verify).
template <class T>
void add_original_fills(DeclaredFillsOf<T>& to, const DeclaredFillsOf<T>& original);
/// Adds to `mask` (sized to the plane when it is not) the vertices where `plane` holds one of
/// `values`, compared in T: declared fill values beyond what factz::mark_missing takes.
template <class T>
void mark_values(std::vector<uint8_t>& mask, const std::vector<T>& plane, std::span<const T> values);

/// Marks NaN and every declared value missing (factz::mark_missing with the first values,
/// the field's mask for the others), comparing in T; returns how many vertices are missing.
int64_t mark_declared(VectorField2D& f, const DeclaredFills& fills);
int64_t mark_declared(VectorField2D64& f, const DeclaredFillsOf<double>& fills);

/// A vector field as the commands read it.
template <class T>
struct VectorInputOf {
  VectorFieldOf<T> field;
  DeclaredFillsOf<T> fills;     ///< declared for u and v (files and command line)
  std::vector<uint8_t> source;  ///< the encoded source record, when both came from variables
  int64_t masked = 0;           ///< missing vertices
};
using VectorInput = VectorInputOf<float>;
using VectorInput64 = VectorInputOf<double>;
/// The two files of `flag` (-i or -d, u then v): shape from -2 or the files (u and v must
/// agree), fill values declared, missing vertices marked, the field validated. `like`: the
/// original of a comparison (verify, render -d), whose shape (without -2) and declared fill
/// values apply here too.
/// Without any declared fill value, a value of a float32 field that looks like one gets a
/// warning (unless `like` is given: the original's warning covers it).
/// read_vector_input64 reads float64 fields (the command chose them: float64_inputs), the
/// same way: a '<f8' .npy, raw float64 (--dtype f64), or float64 netCDF / HDF5 variables
/// (their source record kept as for float32).
VectorInput read_vector_input(const Args& a, const char* flag, const std::string& command,
                              const VectorInput* like = nullptr);
VectorInput64 read_vector_input64(const Args& a, const char* flag, const std::string& command,
                                  const VectorInput64* like = nullptr);
/// The grid of a vector field's files without reading them: -2, or the first file's shape
/// (usage error when neither says it).
void input_dims(const Args& a, const char* flag, int64_t& nx, int64_t& ny);

/// A scalar field (one file of `flag`): `-3 NX NY NZ`, `-2 NX NY`, the file's shape, or
/// `like`'s (the original of a comparison). A variable's fill values (_FillValue,
/// missing_value) mark missing vertices in f.mask unless `--fill` is given (which
/// mark_scalar_fill applies instead); `file_fills` receives them (empty for raw and .npy), and
/// `source` the variable's encoded source record (empty for raw and .npy).
ScalarField read_scalar_input(const Args& a, const char* flag, const std::string& command,
                              const ScalarField* like = nullptr, std::vector<float>* file_fills = nullptr,
                              std::vector<uint8_t>* source = nullptr);
/// A float64 netCDF / HDF5 scalar variable (NC_DOUBLE, an HDF5 double dataset), the same
/// way: shape from -3 / -2, `like` or the file; its fill values, as doubles, mark missing
/// vertices unless --fill is given (the caller applies that one). Raw and .npy float64
/// scalar files are read by cmd_ct.cpp's read_scalar_input64.
ScalarField64 read_scalar_variable64(const Args& a, const FieldFile& file, const std::string& command,
                                     const ScalarField64* like = nullptr, std::vector<uint8_t>* source = nullptr);

/// Writes decoded planes (u, v, or one scalar plane) to the -o names: raw, .npy, or
/// netCDF / HDF5 variables, several variables of one file written together. float planes
/// are written as float32 (raw, '<f4', NC_FLOAT), double planes as float64 (raw, '<f8',
/// NC_DOUBLE). `shape`: outermost first. `source`: the stream's record (dimensions,
/// attributes, coordinates of each component's variable). `mask`: the decoded missing
/// vertices; where they share one bit pattern in a component, its variable declares it as
/// _FillValue when the stream has no record or one of an HDF5 dataset (a netCDF variable
/// declares what its record says). A valid range the bound moved values beyond is widened to
/// hold them, with a note (or counted in a warning where it cannot be).
/// `plain`, when given, writes the names that are not variables instead; else they are
/// written as planes of (rows, nx), or for a 3D `shape` as volumes (a .npy of shape (nz, ny,
/// nx), raw values otherwise: write_plain_array). `repack`
/// (decompress --repack): a variable read from packed integers is written back as those
/// integers with its packing attributes (variable_io::repack); another one as floats, with a
/// warning; a usage error when no output is a variable.
/// (T is deduced from `planes`, given as {&u, &v}, {&u, &v, &w} or {&values}; instantiated for
/// float and double.)
template <class T>
using PlainWriter = std::function<void(const std::string& name, const std::vector<T>& plane)>;
template <class T>
void write_field_outputs(const std::vector<std::string>& names, std::initializer_list<const std::vector<T>*> planes,
                         const std::vector<uint64_t>& shape, const std::optional<SourceRecord>& source,
                         const std::vector<uint8_t>& mask, const std::string& command,
                         const std::type_identity_t<PlainWriter<T>>& plain = {}, bool repack = false);

/// The shape in a .npy file's header (none for another name, or an unreadable header: the
/// readers then say why).
std::optional<std::vector<int64_t>> npy_file_shape(const std::string& path);

/// Whether any of `names` is a netCDF / HDF5 output (for the drivers that write raw only).
bool any_variable_output(const std::vector<std::string>& names);

}  // namespace factz::cli
