// Section 12 `source` (format version 4, docs/format.md): the source record of a field read
// from a netCDF or HDF5 variable (factz/io.hpp, SourceRecord), given by the caller as
// Options::source and stored as it is. The stream layer checks it when compressing (it must
// describe the field) and when parsing a stream (a record that does not decode, or that
// describes another grid, is corrupt); decoders otherwise ignore it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// The whole dimensions a record's variables end with for a grid of `ndims` dimensions,
/// outermost first: (ny, nx), or (nz, ny, nx) for a 3D field (scalar or vector).
std::vector<uint64_t> record_grid(uint64_t nx, uint64_t ny, uint64_t nz, int ndims);

/// A caller's source record (Options::source, ScalarOptions::source), when given, decodes and
/// describes a field of `components` components on the grid `whole` (record_grid);
/// invalid_argument otherwise, the message starting with `what`.
Status check_source_bytes(std::span<const uint8_t> source, int components, std::span<const uint64_t> whole,
                          const std::string& what);
/// The same for a 2D vector field's Options::source.
Status check_source_option(int64_t nx, int64_t ny, const Options& o);

/// Appends the source section when `source` is not empty: a 2D vector stream's layout becomes
/// version 4 (a scalar stream's 2 or 3 too; others keep theirs) and the compact container
/// version 19 (format/container.hpp).
void append_source_section(std::span<const uint8_t> source, std::vector<Section>& sections);
inline void append_source_section(const Options& o, std::vector<Section>& sections) {
  append_source_section(o.source, sections);
}

/// The source section of a parsed stream (2D or 3D vector, scalar), when it has one: it
/// decodes and describes the header's grid and components (corrupt_stream otherwise).
Status check_source_section(std::span<const uint8_t> stream, const ParsedContainer& pc);

}  // namespace factz::detail
