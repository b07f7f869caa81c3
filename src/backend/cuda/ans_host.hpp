// Host half of the device ANS decoder: the blob is parsed and checked by the CPU decoder's
// own parser (codec/ans.hpp ans_parse), and each rANS plane gets its byte tables
// (kernels/rans.hpp entries and the byte of each entry) for the device.
#pragma once

#include <cstdint>
#include <span>

#include "codec/ans.hpp"
#include "factz/status.hpp"

namespace factz::cuda_detail {

using AnsPlane = detail::AnsPlane;
using AnsParsed = detail::AnsBlob;

/// Parses a blob of n symbols coded around `center` (detail::ans_parse) and builds the
/// byte tables of its rANS planes; corrupt_stream when the blob is invalid.
Status ans_parse_for_device(std::span<const uint8_t> blob, uint16_t center, uint64_t n, AnsParsed& out);

}  // namespace factz::cuda_detail
