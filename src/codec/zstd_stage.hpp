// Optional lossless stage: one zstd frame around an entropy-coded section (docs/codec.md).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"

namespace factz::detail {

/// Largest decompressed size zstd_decompress accepts (1 TiB).
inline constexpr uint64_t kZstdMaxExpectedSize = uint64_t{1} << 40;

/// Compresses `in` into one zstd frame (content size recorded) and stores it in `out`
/// (replacing its contents). The frame depends only on the bytes and the level.
/// level: zstd level in [ZSTD_minCLevel(), ZSTD_maxCLevel()] (0 means zstd's default);
/// other values give invalid_argument.
Status zstd_compress(std::span<const uint8_t> in, int level, std::vector<uint8_t>& out);

/// Decompresses the single zstd frame `in` into `out` (replacing its contents).
/// expected_size: the exact decompressed size; larger than kZstdMaxExpectedSize gives
/// invalid_argument. Returns corrupt_stream unless `in` is exactly one frame that decodes
/// to exactly expected_size bytes. Memory grows with the bytes actually decoded, so a
/// forged size cannot make it allocate far beyond what the frame really holds.
Status zstd_decompress(std::span<const uint8_t> in, uint64_t expected_size, std::vector<uint8_t>& out);

/// The first `count` bytes (at most 4096) of the frame's content, decoding no more than
/// needed: lets a reader check a section's own header before allocating for all of it.
/// corrupt_stream when the frame is invalid or holds fewer bytes.
Status zstd_peek(std::span<const uint8_t> in, size_t count, std::vector<uint8_t>& out);

}  // namespace factz::detail
