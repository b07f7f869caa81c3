// The working copy a backend compresses when vertices are missing: every missing vertex
// takes a value from its row's valid vertices (the last one to its left, or the first one
// to its right at the start of a row); a row without a valid vertex copies the nearest
// filled row above (below for leading rows); a field without any valid vertex is zero.
// Lorenzo and interpolation predictors then see flat continuations instead of NaN or fill
// values, so the codes of missing vertices are mostly 0 and the edge of the mask costs
// little. The values stay inside the valid range, so a relative bound is that of the valid
// vertices. They never reach the user: the decoder lays the stored bits over them.
// Every backend must compress this same copy (it shapes the bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "factz/field.hpp"
#include "factz/field3d.hpp"

namespace factz::detail {

/// The filled working copy of f (mask: nx * ny bytes, nonzero = missing; the copy's own
/// mask is left empty).
VectorField2D fill_missing(const VectorField2D& f, const std::vector<uint8_t>& mask);
/// The same for a float64 field (its doubles copied as they are).
VectorField2D64 fill_missing(const VectorField2D64& f, const std::vector<uint8_t>& mask);
/// fill_missing of a field its caller gave up: its own planes take the stand-ins (the
/// missing vertices' bits are lost; the compressor codes them before).
void fill_missing_in_place(VectorField2D& f, const std::vector<uint8_t>& mask);
void fill_missing_in_place(VectorField2D64& f, const std::vector<uint8_t>& mask);
/// The same for a 3D vector field: its rows are the nx-vertex rows of every z-slice, one
/// slice after the other (ny * nz rows), so a row without a valid vertex copies the nearest
/// filled row before it, across slices too (mask: nx * ny * nz bytes).
VectorField3D fill_missing(const VectorField3D& f, const std::vector<uint8_t>& mask);
VectorField3D64 fill_missing(const VectorField3D64& f, const std::vector<uint8_t>& mask);
void fill_missing_in_place(VectorField3D& f, const std::vector<uint8_t>& mask);
void fill_missing_in_place(VectorField3D64& f, const std::vector<uint8_t>& mask);

}  // namespace factz::detail
