// Reading and writing fields and streams: raw little-endian float32 (.f32 or any other
// name) and NumPy .npy (float32, C order, shape (ny, nx)). "-" means stdin / stdout.
// Also the source record: where a field read from a netCDF or HDF5 variable came from
// (stream section 12, docs/format.md "source"). The CLI reads and writes netCDF and HDF5
// variables themselves (tools/factz, src/io/variable; docs/usage.md).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "factz/field.hpp"
#include "factz/status.hpp"

namespace factz {

/// Whole file (or stdin for "-") as bytes. Pipes, FIFOs and character devices are read as
/// streams (no seek, no size up front). A path that cannot be read is an io error that says
/// why: "cannot read 'x': is a directory" (or "does not exist", "permission denied", ...).
Result<std::vector<uint8_t>> read_bytes(const std::string& path);
/// Writes bytes to a file (or stdout for "-"). Every write, the flush and the close are
/// checked; a failure is an io error naming the path and the system's reason. A regular
/// file is written under a temporary name in its folder and renamed over `path` only once
/// complete, so a failed write leaves no partial file (and an existing file unchanged).
/// Character devices and FIFOs (/dev/null, a named pipe) are written in place.
Status write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
/// write_bytes of the concatenation of `parts` (a header and a plane's bytes, say), written
/// one after the other without first gathering them in one buffer.
Status write_parts(const std::string& path, std::initializer_list<std::span<const uint8_t>> parts);

/// Why `path` cannot be opened as an input ("does not exist", "is a directory", "permission
/// denied", ...), as an io error naming it, or Ok. "-" (stdin), pipes, FIFOs and character
/// devices are inputs; nothing is read.
Status check_input_path(const std::string& path);

/// What the header of a .npy file says (the NumPy format, versions 1.0, 2.0 and 3.0).
struct NpyHeader {
  int major = 0, minor = 0;   ///< format version
  std::string descr;          ///< the dtype string, e.g. "<f4" (structured dtypes are refused)
  bool fortran_order = false;
  std::vector<int64_t> shape;  ///< empty for a 0-d array
  uint64_t data_offset = 0;    ///< bytes before the data: magic, version, length, header
};
/// Parses the preamble and header of a .npy file from its first bytes (the whole file will
/// do). The header is a Python dict literal with exactly the keys 'descr', 'fortran_order'
/// and 'shape', in any order, with optional white space and trailing commas, ended by white
/// space (NumPy pads with spaces and ends with a newline). Errors say what is wrong
/// (invalid_argument; unsupported_version for a version other than 1, 2 or 3); the caller
/// adds the file name.
Result<NpyHeader> parse_npy_header(std::span<const uint8_t> bytes);
/// Whether a .npy header holds C-order little-endian IEEE floats of `width` bytes (4:
/// float32, 8: float64; dtype '<f4', '=f4' or '|f4', and so on): Ok, or an invalid_argument
/// error naming `path`, what the file holds and how to save it as FaCTz reads it (the one
/// wording of every .npy reader).
Status check_npy_float(const NpyHeader& h, int width, const std::string& path);
/// The preamble and header of a version 1.0 .npy file of C-order values of dtype `descr`
/// and `shape`, padded with spaces and a newline so that the data starts at a multiple of
/// 64 bytes (as NumPy writes it).
std::string npy_header(const std::string& descr, std::span<const int64_t> shape);

/// One component plane of nx * ny float32 values. For .npy files the stored shape must
/// be (ny, nx) (or (nx*ny,) for 1D arrays), dtype little-endian float32, C order; anything
/// else is refused with the file name and the reason. Raw files must hold exactly
/// nx * ny * 4 bytes. Pipes and FIFOs are read as streams.
Result<std::vector<float>> read_plane(const std::string& path, int64_t nx, int64_t ny);
/// Writes a plane as .npy (when the name ends in .npy) or raw little-endian float32.
Status write_plane(const std::string& path, const std::vector<float>& data, int64_t nx, int64_t ny);

/// Reads both components; validates dimensions and rejects NaN/Inf with their count and
/// first position.
Result<VectorField2D> read_vector_field(const std::string& u_path, const std::string& v_path,
                                        int64_t nx, int64_t ny);

// ---- The source record (section 12 `source`, format version 4) ---------------------------

/// Value types of attributes and coordinates, numbered as netCDF's nc_type (NC_BYTE ..
/// NC_STRING), which is also how docs/format.md numbers them.
enum class SourceType : uint8_t {
  int8 = 1,
  text = 2,  ///< NC_CHAR: the value is UTF-8 text, one byte per count
  int16 = 3,
  int32 = 4,
  float32 = 5,
  float64 = 6,
  uint8 = 7,
  uint16 = 8,
  uint32 = 9,
  int64 = 10,
  uint64 = 11,
  string = 12,  ///< NC_STRING: `count` strings
};
/// Bytes per value of a numeric type (1 for text); 0 for string and unknown codes.
int source_type_size(SourceType t);
/// "float32", "text", ... ("type 42" for an unknown code).
std::string source_type_name(SourceType t);

/// An attribute (or a coordinate's values): `count` values of `type`.
struct SourceAttribute {
  std::string name;
  SourceType type = SourceType::text;
  std::vector<uint8_t> data;          ///< numeric: little-endian values; text: the bytes
  std::vector<std::string> strings;   ///< type string only
  uint64_t count() const;
  /// The values as doubles (numeric types; empty otherwise).
  std::vector<double> numbers() const;
};
/// One dimension of the source variable, outermost first.
struct SourceDimension {
  std::string name;
  uint64_t size = 0;       ///< its length in the file
  bool unlimited = false;  ///< netCDF record dimension
  /// The index read when the dimension was sliced (the leading dimensions); none for the
  /// dimensions read whole (the last two: y, x).
  std::optional<uint64_t> index;
};
/// A 1D coordinate variable of one of the dimensions: all its values for a dimension read
/// whole, the one value at the slice's index for a sliced one.
struct SourceCoordinate {
  uint32_t dimension = 0;  ///< index into SourceVariable::dimensions
  std::string name;
  SourceType type = SourceType::float64;  ///< numeric types only
  std::vector<uint8_t> data;              ///< little-endian values
  std::vector<SourceAttribute> attributes;
  uint64_t count() const;
};
struct SourceVariable {
  std::string name;  ///< "U", "group/U", or an HDF5 dataset path "/path/to/dataset"
  SourceType type = SourceType::float32;  ///< the variable's type in the file
  std::vector<SourceDimension> dimensions;
  std::vector<SourceAttribute> attributes;  ///< in file order (_FillValue, units, ...)
  std::vector<SourceCoordinate> coordinates;  ///< by increasing dimension index
};
/// A variable the components' `coordinates` or `grid_mapping` attributes name (CF auxiliary
/// coordinates such as `lat(y, x)`, scalar coordinates, grid-mapping variables), whose
/// dimensions are all dimensions of a component: its values over the components' slice (a
/// sliced dimension contributes its one index, a whole one all its values), x fastest in
/// the variable's own dimension order.
struct SourceAuxiliary {
  std::string name;                     ///< as the attribute names it
  SourceType type = SourceType::float64;  ///< a numeric type, or text (one byte per value)
  /// Names of its dimensions, in its own order: the components' dimensions, and the ones in
  /// `own_dimensions`.
  std::vector<std::string> dimensions;
  std::vector<uint8_t> data;  ///< little-endian values
  std::vector<SourceAttribute> attributes;
  /// Its dimensions that no component has, read whole, with their sizes (record version 4):
  /// the vertex dimension of CF cell bounds (`lat_bnds(lat, nv)`, `time_bnds(time, bnds)`).
  std::vector<std::pair<std::string, uint64_t>> own_dimensions;
  uint64_t count() const;
  /// The size of `dimension` when it is one of `own_dimensions`, else 0 (a components'
  /// dimension; the record writes that 0 too).
  uint64_t own_size(const std::string& dimension) const;
};
enum class SourceFormat : uint8_t {
  netcdf_classic = 1,        ///< CDF-1
  netcdf_64bit_offset = 2,   ///< CDF-2
  netcdf_64bit_data = 3,     ///< CDF-5
  netcdf4 = 4,               ///< netCDF-4 (HDF5 storage)
  netcdf4_classic = 5,       ///< netCDF-4 classic model
  hdf5 = 6,                  ///< an HDF5 file read with the HDF5 library
};
std::string source_format_name(SourceFormat f);
/// Where a field came from: one variable per component (u and v, or one scalar).
struct SourceRecord {
  /// The record version read (1: format versions 4 to 18, raw coordinates; 2: format version
  /// 19, coordinates coded as differences; 3: format version 20, version 2 and auxiliary
  /// variables; 4: format version 21, auxiliary variables with dimensions of their own, such
  /// as CF cell bounds); encode_source_record writes 4 when an auxiliary variable has own
  /// dimensions, 3 when there are auxiliaries, else 2, whatever this says.
  uint8_t version = 2;
  SourceFormat format = SourceFormat::netcdf4;
  std::string file;  ///< the name (without folders) of the first component's file
  std::vector<SourceAttribute> attributes;  ///< that file's global attributes (title, Conventions, ...)
  std::vector<SourceVariable> components;
  /// The variables the components' attributes name (record version 3), each once; empty in
  /// versions 1 and 2.
  std::vector<SourceAuxiliary> auxiliaries;
};
/// The record's bytes (record version 2, 3 with auxiliaries, 4 when one has own dimensions;
/// docs/format.md "12 source").
std::vector<uint8_t> encode_source_record(const SourceRecord& record);
/// Parses a record; corrupt_stream for anything the format does not allow (unknown version
/// or codes, counts beyond the bytes, a sliced index outside its dimension, trailing bytes).
Result<SourceRecord> decode_source_record(std::span<const uint8_t> bytes);
/// Checks that a record describes a field of `components` components whose whole
/// (unsliced) dimensions are, outermost first, `whole` (ny, nx for a 2D field): every
/// leading dimension sliced, the last ones whole with these sizes. invalid_argument.
Status check_source_record(const SourceRecord& record, int components, std::span<const uint64_t> whole);
/// The record of a window of the field: along the field's whole dimensions (outermost first,
/// as check_source_record's `whole`), indices [first, first + count). The components' whole
/// dimensions take the counts, their coordinates and the auxiliary variables the window's
/// values; everything else is the record's (decompress --region of a multi-block file).
/// invalid_argument when the window does not fit the record.
Result<SourceRecord> window_of_source_record(const SourceRecord& record, std::span<const uint64_t> first,
                                             std::span<const uint64_t> count);
/// The record as `factz info` prints it (indented lines).
std::string describe_source_record(const SourceRecord& record);
/// The source record of a stream (section 12), or none. Validates the container first.
Result<std::optional<SourceRecord>> stream_source(std::span<const uint8_t> stream);

}  // namespace factz
