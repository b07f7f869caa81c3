// Reading and writing fields and streams: raw little-endian float32 (.f32 or any other
// name) and NumPy .npy (float32, C order, shape (ny, nx)). "-" means stdin / stdout.
#pragma once

#include <cstdint>
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

}  // namespace factz
