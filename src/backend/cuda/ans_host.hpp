// Host half of the device ANS decoder: parses and checks an ANS blob up to its chunks
// with the rules of codec/ans.cpp's decoder, and builds each rANS plane's decoder tables
// (kernels/rans.hpp entries and the byte of each entry).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"

namespace factz::cuda_detail {

struct AnsPlane {
  uint8_t mode = 0;                 ///< 0 constant, 1 rANS, 2 sparse
  uint8_t value = 0;                ///< constant byte, or the byte of every non-exception
  std::vector<uint64_t> positions;  ///< sparse: increasing positions of the exceptions
  std::vector<uint8_t> bytes;       ///< sparse: their bytes
  uint32_t lanes = 1, first_context = 0;
  std::vector<uint32_t> entries;    ///< rANS: contexts x 4096 rans_decode_entry values
  std::vector<uint8_t> values;      ///< rANS: the byte of each entry
  std::vector<uint64_t> chunk_pos;  ///< rANS: chunk offsets in the blob, plus the end
};

struct AnsParsed {
  int chunk_log2 = 16;
  AnsPlane planes[2];  ///< low, high
};

/// Parses a blob of n symbols coded around `center`; corrupt_stream when it is invalid.
Status ans_parse(std::span<const uint8_t> blob, uint16_t center, uint64_t n, AnsParsed& out);

}  // namespace factz::cuda_detail
