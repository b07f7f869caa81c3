// Segmented code sections (format version 9, speculative 2D vector streams): the codes of
// a component cut at phase boundaries into segments, each entropy-coded as its own blob
// with its own tables. The coarse levels' wide residuals and the fine levels' narrow ones
// then no longer share one distribution: on a 4096^2 turbulent field at REL 1e-3 the codes
// take 0.65 of the bytes of one blob (docs/benchmarks.md). Layout (docs/format.md, "Codes
// of a version 9 speculative stream"):
//
//   varint S                  segments, >= 1
//   S varints                 symbols in each segment (each >= 1, but one empty segment
//                             when the component has no codes); they sum to the count
//                             the bound ids give
//   S varints                 byte size of each segment's blob
//   the S blobs, back to back (Huffman or ANS blobs of docs/codec.md, per the header's coder)
//
// The segmentation is the writer's choice (the decoder only reads it); this writer's rule
// (write_segmented) depends on the codes and the phase boundaries only, so every backend
// whose coder writes the same blob for the same symbols writes the same section.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "codec/coder.hpp"
#include "factz/status.hpp"

namespace factz::detail {

/// A segment closes at the first phase boundary where it holds at least this many codes.
inline constexpr int64_t kMinSegmentCodes = 4096;
/// From this many codes on, the phase segments are written without trying one blob.
inline constexpr int64_t kAlwaysSegmentCodes = int64_t{1} << 20;

/// Segment sizes for the per-phase code counts of a component (schedule order): phases
/// merged in order until a segment holds at least kMinSegmentCodes codes; a shorter tail
/// joins the last segment; {0} when there are no codes. Every size is >= 1 otherwise.
std::vector<int64_t> phase_segments(std::span<const int64_t> phase_codes);

/// Codes the symbols [first, first + count) of the component into `blob` (a host coder,
/// or a device one that writes the same bytes); it may set `crc` to the blob's crc32c when
/// it has it (the CUDA backend folds it from device checksums).
using SegmentEncoder =
    std::function<Status(int64_t first, int64_t count, std::vector<uint8_t>& blob, std::optional<uint32_t>& crc)>;

/// The writer's section for `n` codes: the phase segments (phase_segments) when
/// n >= kAlwaysSegmentCodes; below that, the smaller of the phase segments and one segment
/// (one segment on a tie), since a small field's few codes may not pay for more tables.
/// `crc`: the section's crc32c when the encoder gave every blob's (the table's bytes
/// checksummed here, the blobs' combined), else empty.
Status write_segmented(std::span<const int64_t> phase_codes, int64_t n, const SegmentEncoder& encode,
                       std::vector<uint8_t>& out, std::optional<uint32_t>* crc = nullptr);

/// write_segmented with the host's coders (ANS blobs may be version 3, with escapes, as the
/// segmented layouts of versions 9 and 10 allow): the writer of the 2D and 3D streams.
Status encode_segmented(EntropyCoder coder, std::span<const uint16_t> codes, std::span<const int64_t> phase_codes,
                        int threads, std::vector<uint8_t>& out);

/// One segment of a parsed section: its symbols [first, first + count) and its blob.
struct CodeSegment {
  int64_t first = 0, count = 0;
  std::span<const uint8_t> blob;
};

/// The segments of a section that must hold `n` symbols: corrupt_stream (naming what is
/// wrong) for a bad count, sizes that do not add up, or trailing bytes.
Status parse_segmented(std::span<const uint8_t> section, int64_t n, std::vector<CodeSegment>& out);

/// parse_segmented, then each blob decoded into its part of `out` (out.size() symbols).
Status decode_segmented(EntropyCoder coder, std::span<const uint8_t> section, uint16_t center,
                        std::span<uint16_t> out, int threads);

/// A decoder's code windows hold at least this many codes (a quarter of the codes on larger
/// fields): below it a field's codes are decoded whole, as one window.
inline constexpr int64_t kMinCodeWindow = int64_t{1} << 21;

/// A window of a decoder that decodes a component's codes a part at a time, just before the
/// phases that read them: phases [phase_begin, phase_end) read the codes [first, first +
/// count), which are exactly those of segments [seg_u_begin, seg_u_end) of u and
/// [seg_v_begin, seg_v_end) of v.
struct CodeWindow {
  int64_t phase_begin = 0, phase_end = 0;
  int64_t first = 0, count = 0;
  size_t seg_u_begin = 0, seg_u_end = 0, seg_v_begin = 0, seg_v_end = 0;
};

/// The windows of a stream whose phases hold `phase_codes` codes each (schedule order; they
/// sum to the segments' symbols, which parse_segmented checked) and whose components are
/// segmented as `u` and `v`: phases join a window in order until it holds at least
/// `min_codes` codes and ends where a segment of each component ends. Windows never cut a
/// segment, so one segment of either component (a small field's section, a writer that
/// segments elsewhere) makes a single window: the whole component, as decode_segmented.
std::vector<CodeWindow> code_windows(std::span<const int64_t> phase_codes, std::span<const CodeSegment> u,
                                     std::span<const CodeSegment> v, int64_t min_codes);

}  // namespace factz::detail
