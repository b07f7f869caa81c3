// Byte-plane interleaved rANS coding of 16-bit symbols (paper section 4.3, Figure 5).
//
// Each symbol s becomes z = zigzag(s - center) (src/kernels/rans.hpp), z is split into a
// low-byte plane and a high-byte plane, and each plane is coded on its own: a plane with a
// single distinct byte costs two bytes, any other plane gets interleaved rANS with up to 32
// states per chunk, each state coding a contiguous segment, and up to 16 normalized
// frequency tables chosen by the previous byte of the segment (order-1 contexts: runs of
// equal codes and of equal ids cost far less than their order-0 entropy). Small residuals
// leave the high plane all zero, so it is nearly free. Where the caller allows blob version
// 3, a rANS plane may code its rare byte values as one escape value and list their bytes
// after the chunks (docs/codec.md, "Escapes"): each present value costs at least 1/4096 of
// the probability, which a plane of 99.8 % zeros and 50 rare values cannot afford. The
// output is a self-contained blob (byte layout in docs/codec.md, "ANS byte-plane coder");
// chunks are coded independently, so encoding and decoding run in parallel, and the bytes
// depend only on (symbols, center, whether escapes are allowed), never on the thread count
// or the machine.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "factz/status.hpp"
#include "kernels/rans_encoder.hpp"

namespace factz::detail {

/// Symbols per independently coded chunk, as log2 (one byte of each plane per symbol);
/// the last chunk may be shorter.
inline constexpr int kAnsChunkLog2 = 16;
/// Blob format version written in byte 0 when no plane has escapes.
inline constexpr uint8_t kAnsVersion = 2;
/// Blob format version 3: version 2 plus plane mode 3 (rANS with escapes). Written only when
/// the caller allows escapes and a plane uses them; every decoder accepts both versions.
inline constexpr uint8_t kAnsVersionEscapes = 3;
/// Most states per chunk the encoder writes by default (the format allows 32).
inline constexpr uint32_t kAnsEncoderMaxLanes = 8;
/// Most contexts (frequency tables selected by the previous byte of a lane) per plane.
inline constexpr int kAnsMaxContexts = 16;
/// The center for quantization codes (symbols around 2^15); small id streams use 0.
inline constexpr uint16_t kAnsCodeCenter = 32768;

/// Normalized frequencies of one plane (docs/codec.md, "Frequency normalization"):
/// every byte value with a nonzero count gets a frequency >= 1, the others 0, and the
/// frequencies sum to exactly kRansScale (src/kernels/rans.hpp). Requires at least two
/// values with nonzero counts and a total count below 2^48. Deterministic: a function of
/// the histogram alone, ties broken by byte value.
void ans_normalize_frequencies(std::span<const uint64_t, 256> histogram, std::span<uint32_t, 256> freqs);

/// Plane modes (the first byte of a plane in the blob, docs/codec.md).
inline constexpr uint8_t kAnsPlaneConstant = 0;
inline constexpr uint8_t kAnsPlaneRans = 1;
inline constexpr uint8_t kAnsPlaneSparse = 2;
/// Blob version 3 only: a rANS plane over the bytes with every rare value replaced by one
/// escape value, followed by the original bytes of the escaped positions.
inline constexpr uint8_t kAnsPlaneEscapes = 3;

/// Whether a plane of this mode has a chunk table and rANS chunks (modes 1 and 3).
inline bool ans_plane_is_rans(uint8_t mode) { return mode == kAnsPlaneRans || mode == kAnsPlaneEscapes; }

/// A set of byte values, one bit per value (bit v % 64 of word v / 64).
using AnsByteSet = std::array<uint64_t, 4>;
inline bool ans_byte_in(const AnsByteSet& set, uint8_t v) { return (set[v >> 6] >> (v & 63)) & 1u; }

// ---------------------------------------------------------------- encoder stages
//
// ans_encode is plan + per-chunk coding + assembly; the stages are public so that the CUDA
// encoder (backend/cuda) runs the same plan and assembly on the host around its own
// per-lane chunk coding (kernels/rans_encoder.hpp), and so writes the same bytes:
//   1. per plane, pair counts (prev * 256 + byte, prev = 0 at every chunk start);
//   2. ans_plan_plane: lanes, context map, tables, sparse or not;
//   3. per chunk, the lanes' rANS steps (ans_encode_chunk, or the device);
//   4. ans_append_header, then per plane ans_append_plane_head, the chunk table (u32 LE
//      sizes) and the chunks.

/// How the previous byte of a lane selects the frequency table of the next: the count - 1
/// values of `map` get contexts 0 .. count - 2, every other value context count - 1.
struct AnsContextMap {
  int count = 1;
  std::array<uint8_t, kAnsMaxContexts - 1> map{};
  std::array<uint8_t, 256> context_of{};  ///< filled by finish()

  void finish() {
    context_of.fill(static_cast<uint8_t>(count - 1));
    for (int c = 0; c + 1 < count; ++c) context_of[map[c]] = static_cast<uint8_t>(c);
  }
};

/// One context's table as the encoder chooses it.
struct AnsContextTable {
  bool single = true;  ///< at most one value: costs no bits per symbol
  uint8_t value = 0;   ///< that value (single)
  std::array<uint32_t, 256> freqs{};
  std::array<RansEncodeSymbol, 256> symbols{};
};

/// How one plane is coded.
struct AnsPlanePlan {
  uint8_t mode = kAnsPlaneConstant;  ///< constant: a single byte value (or no symbols at all)
  uint8_t value = 0;                 ///< that value (constant), the most frequent value (sparse),
                                     ///< the escape value e (escapes)
  std::vector<uint8_t> sparse;       ///< sparse: the plane's bytes after the mode byte
  AnsByteSet rare{};                 ///< escapes: the values coded as e (e included)
  std::vector<uint8_t> escaped;      ///< escapes: the original bytes coded as e, by position
  uint32_t lanes = 1;                ///< rANS: lanes of a full chunk
  AnsContextMap contexts;
  std::vector<AnsContextTable> tables;  ///< contexts.count of them
  std::vector<uint8_t> single;          ///< flat copies for RansEncodeTables: per context
  std::vector<RansEncodeSymbol> symbols;  ///< contexts.count * 256
  // With escapes the tables code the original bytes as the remapped ones: symbols[c * 256 +
  // r] is e's entry and contexts.context_of[r] is context_of[e] for every rare r, so the
  // lane steps (kernels/rans_encoder.hpp) run unchanged and emit the remapped stream.
};

/// Reads a plane's bytes at the given (non-decreasing) positions into `bytes`.
using AnsPlaneGather = std::function<Status(std::span<const uint64_t> positions, std::vector<uint8_t>& bytes)>;
/// Lists, by increasing position, the positions and bytes of a plane's bytes other than `dominant`.
using AnsPlaneExceptions =
    std::function<Status(uint8_t dominant, std::vector<uint64_t>& positions, std::vector<uint8_t>& bytes)>;
/// Lists, by increasing position, the plane's bytes whose value is in `flagged`.
using AnsPlaneEscapes = std::function<Status(const AnsByteSet& flagged, std::vector<uint8_t>& bytes)>;

/// Plans one plane of n symbols (n < 2^48) from its 65536 pair counts, counted with the
/// previous byte 0 at every chunk start; the counts are then corrected for the lane starts
/// (their previous byte is 0 too), for which `gather` reads the bytes around them.
/// `exceptions` is called only when a sparse plane may be smaller than rANS. The plan is a
/// function of the plane's bytes alone (integer costs, ties broken by value).
/// escapes: null for a version 2 blob; else mode 3 (rANS with escapes) is considered too,
///   and `escapes` is called once when it is chosen (docs/codec.md, "Escapes").
Status ans_plan_plane(std::span<const uint64_t> pairs, uint64_t n, uint32_t max_lanes, const AnsPlaneGather& gather,
                      const AnsPlaneExceptions& exceptions, AnsPlanePlan& plan,
                      const AnsPlaneEscapes* escapes = nullptr);

/// The blob version for these plans: kAnsVersionEscapes when a plane has escapes, else kAnsVersion.
uint8_t ans_blob_version(const AnsPlanePlan& lo, const AnsPlanePlan& hi);

/// The encoder tables of a rANS plan (pointers into `plan`).
RansEncodeTables ans_encode_tables(const AnsPlanePlan& plan);

/// Lanes of a chunk of m symbols in a plane planned with `lanes` lanes: min(m, lanes).
uint32_t ans_chunk_lanes(uint64_t m, uint32_t lanes);

/// Codes the plane bytes b[0..m) of one chunk of a rANS plane: the words are pushed
/// downwards from `end`, then the lane states go in front of them; returns the chunk's
/// first byte. The 4 * 32 + 2 * m bytes before `end` must be writable.
uint8_t* ans_encode_chunk(const uint8_t* b, uint64_t m, const AnsPlanePlan& plan, uint8_t* end);

/// Appends the blob's header (version, chunk size, center, n).
void ans_append_header(uint16_t center, uint64_t n, std::vector<uint8_t>& out, uint8_t version = kAnsVersion);

/// Appends a plane's bytes before its chunk table: the whole plane when it is constant or
/// sparse; mode, (escapes) e, lanes, context map and tables when it is rANS.
void ans_append_plane_head(const AnsPlanePlan& plan, std::vector<uint8_t>& out);

/// Appends a plane's bytes after its chunks: varint E and the E escaped bytes (escapes);
/// nothing for the other modes.
void ans_append_plane_tail(const AnsPlanePlan& plan, std::vector<uint8_t>& out);

/// Encodes `symbols` into `out` (replacing its contents).
/// center: subtracted (modulo 2^16) before the zig-zag map; the decoder must be given the
///   same value. kAnsCodeCenter for quantization codes, 0 for small id streams.
/// threads: OpenMP threads to use (values below 1 mean 1); the bytes do not depend on it.
/// Returns invalid_argument for 2^48 or more symbols.
/// max_lanes: most states per chunk, 1..32 (default 8, see docs/codec.md; tests use more to
///   exercise the decoder's 16- and 32-lane paths).
/// allow_escapes: whether the blob may be version 3 (planes with escapes); only streams whose
///   format says so (docs/format.md) pass true.
Status ans_encode(std::span<const uint16_t> symbols, uint16_t center, std::vector<uint8_t>& out, int threads,
                  uint32_t max_lanes = kAnsEncoderMaxLanes, bool allow_escapes = false);


/// One byte plane of a blob as read by ans_parse (the decoder's view of docs/codec.md).
struct AnsPlane {
  uint8_t mode = kAnsPlaneConstant;
  uint8_t value = 0;                   ///< constant, the byte of every non-exception (sparse),
                                       ///< or the escape value e (escapes)
  std::vector<uint64_t> positions;     ///< sparse: increasing positions of the exceptions
  std::vector<uint8_t> bytes;          ///< sparse: their bytes; escapes: the escaped bytes
  uint32_t lanes = 1;                  ///< rANS from here on: lanes per full chunk
  uint32_t first_context = 0;          ///< the context of byte 0, where every lane starts
  std::array<uint8_t, 256> context_of{};         ///< context selected by each previous byte
  std::vector<std::array<uint32_t, 256>> freqs;  ///< per context; a single value has frequency M
  std::vector<uint32_t> entries;       ///< contexts * M rans_decode_entry values (ans_plane_byte_tables)
  std::vector<uint8_t> values;         ///< the byte value of each entry (ans_plane_byte_tables)
  std::vector<uint64_t> chunk_pos;     ///< n_chunks + 1 offsets into the blob
};

/// A blob checked up to its rANS payloads: its chunk size and both planes (low, high).
struct AnsBlob {
  int version = kAnsVersion;
  int chunk_log2 = kAnsChunkLog2;
  std::array<AnsPlane, 2> planes;
};

/// Parses and validates a blob written for n symbols and `center`: header, planes, context
/// maps, frequency tables and chunk tables (ans_decode's checks, shared with the CUDA
/// decoder); corrupt_stream when invalid. rANS payloads are checked by decoding them, and
/// the escape count of a mode 3 plane after decoding (kernels/rans.hpp rans_count_escapes:
/// the decoded e must number plane.bytes.size()).
Status ans_parse(std::span<const uint8_t> in, uint16_t center, uint64_t n, AnsBlob& out);

/// Fills `entries` and `values` of a rANS plane from its frequency tables: per context,
/// each byte value's kRansScale slots in value order (kernels/rans.hpp decode entries).
void ans_plane_byte_tables(AnsPlane& plane);

/// Decodes exactly symbols.size() symbols from the blob `in`, which must have been written
/// for that many symbols and the same center. Corrupted, truncated or random input returns
/// corrupt_stream and never reads or writes out of bounds.
/// threads: OpenMP threads to use (values below 1 mean 1).
Status ans_decode(std::span<const uint8_t> in, uint16_t center, std::span<uint16_t> symbols, int threads);

}  // namespace factz::detail
