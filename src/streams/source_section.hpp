// Section 12 `source` (format version 4, docs/format.md): the source record of a field read
// from a netCDF or HDF5 variable (factz/io.hpp, SourceRecord), given by the caller as
// Options::source and stored as it is. The stream layer checks it when compressing (it must
// describe the field) and when parsing a stream (a record that does not decode, or that
// describes another grid, is corrupt); decoders otherwise ignore it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// Options::source, when given, decodes and describes an nx x ny vector field
/// (invalid_argument otherwise).
Status check_source_option(int64_t nx, int64_t ny, const Options& o);

/// Appends the source section when Options::source is given (the stream becomes version 4).
void append_source_section(const Options& o, std::vector<Section>& sections);

/// The source section of a parsed vector stream, when it has one: it decodes and describes
/// the header's grid (corrupt_stream otherwise).
Status check_source_section(std::span<const uint8_t> stream, const ParsedContainer& pc);

}  // namespace factz::detail
