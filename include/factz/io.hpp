// Reading and writing fields and streams: raw little-endian float32 (.f32 or any other
// name) and NumPy .npy (float32, C order, shape (ny, nx)). "-" means stdin / stdout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "factz/field.hpp"
#include "factz/status.hpp"

namespace factz {

/// Whole file (or stdin for "-") as bytes.
Result<std::vector<uint8_t>> read_bytes(const std::string& path);
/// Writes bytes to a file (or stdout for "-").
Status write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);

/// One component plane of nx * ny float32 values. For .npy files the stored shape must
/// be (ny, nx) (or (nx*ny,) for 1D arrays), dtype little-endian float32, C order.
/// Raw files must hold exactly nx * ny * 4 bytes.
Result<std::vector<float>> read_plane(const std::string& path, int64_t nx, int64_t ny);
/// Writes a plane as .npy (when the name ends in .npy) or raw little-endian float32.
Status write_plane(const std::string& path, const std::vector<float>& data, int64_t nx, int64_t ny);

/// Reads both components; validates dimensions and rejects NaN/Inf with their count and
/// first position.
Result<VectorField2D> read_vector_field(const std::string& u_path, const std::string& v_path,
                                        int64_t nx, int64_t ny);

}  // namespace factz
