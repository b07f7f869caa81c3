// A .npy file written from the NumPy format specification, independently of src/io/npy.cpp:
// magic, version, header length (2 bytes in 1.0, 4 in 2.0 and 3.0), the header dict padded
// with spaces and a newline to a multiple of 64 bytes, then `data`. Tests build headers
// NumPy itself may or may not write with it.
#pragma once

#include <cstddef>
#include <string>

namespace factz::testing {

inline std::string npy_file(const std::string& dict, int major = 1, const std::string& data = "") {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((preamble + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (size_t k = 0; k < preamble - 8; ++k) out += char((h.size() >> (8 * k)) & 0xFF);
  return out + h + data;
}

}  // namespace factz::testing
