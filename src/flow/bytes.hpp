// The FNV-1a hash that seals the flow basis and field streams (docs/flow.md). Their bytes
// are written and read with src/util/byte_io.hpp's ByteWriter and ByteReader.
#pragma once

#include <cstdint>
#include <span>

namespace factz::flow::detail {

inline uint64_t fnv1a(std::span<const uint8_t> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

}  // namespace factz::flow::detail
