// What every FaCTz stream shares, whichever field kind, mode or backend produced it: the
// float bound a requested bound becomes, the zstd stage, the container call, and the
// writers' stage timing and progress reports (StageLaps). The
// vector streams (vector_stream.hpp) and the scalar streams (src/scalar) write through
// here, so each of these rules exists once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "factz/factz.hpp"
#include "factz/status.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// Wall-clock laps of a compression: each stage's seconds into `out` (the shape of
/// CompressStats::stage_seconds) and, when `hook` is set, a Progress report of the fraction
/// done after that stage (fixed shares chosen by the caller, so reports never depend on the
/// machine).
class StageLaps {
 public:
  StageLaps(std::vector<std::pair<std::string, double>>& out, const ProgressHook& hook)
      : out_(out), hook_(hook), last_(std::chrono::steady_clock::now()) {}
  void lap(const std::string& stage, double fraction) {
    const auto t = std::chrono::steady_clock::now();
    out_.emplace_back(stage, std::chrono::duration<double>(t - last_).count());
    last_ = t;
    if (hook_) hook_(Progress{stage, fraction});
  }

 private:
  std::vector<std::pair<std::string, double>>& out_;
  const ProgressHook& hook_;
  std::chrono::steady_clock::time_point last_;
};

/// A coding job of a stream writer: fills its own output and reports how it went; given the
/// threads it may use.
using CodingJob = std::function<Status(int threads)>;

/// Runs every job, up to `threads` of them side by side (each then with threads / jobs of its
/// own, at least one), and returns the first failing job's status in job order (OK if none
/// fails). The coders' bytes never depend on their threads, so neither do the jobs' outputs:
/// on small fields the sections of a stream are coded in parallel instead of one after the
/// other, each too small for its chunks to go in parallel.
Status run_side_by_side(int threads, std::span<const CodingJob> jobs);

/// zstd level of the optional lossless stage (every stream kind).
inline constexpr int kZstdLevel = 3;

/// Largest absolute bound: 2 * eb must stay finite for the quantizers' step.
inline constexpr float kMaxEb = 0x1p126f;

/// The float bound actually used for a requested absolute bound: the largest float not
/// above it, clamped to kMaxEb; 0 for anything not > 0 (NaN included).
float float_bound(double eb);

/// The header fields every stream kind sets the same way: bound mode and value as the user
/// gave them, the absolute bound used, the extents. The caller sets kind-specific fields
/// (components, ndims, mode, coder, tile, anchor stride).
Header stream_header(uint64_t nx, uint64_t ny, uint64_t nz, BoundMode bound_mode, double bound_value, float eb);

/// Offers every section except the meta section to the zstd stage when `on` (the meta
/// section is tiny and read first; it is always stored raw). A section that already asks
/// for zstd keeps asking (the mask sections always do).
void offer_zstd(std::vector<Section>& sections, bool on);

/// Bytes per value of a stream's data type: 8 for float64, else 4.
inline uint8_t value_bytes(uint8_t dtype) { return dtype == kDtypeFloat64 ? 8 : 4; }

/// The container of `header` and `sections` (in order), with the zstd stage at kZstdLevel
/// for the sections that ask for it; `exact_values` is also offered to it byte-shuffled with
/// the data type's width (kept where smaller: format version 23). The header's flags are
/// derived by the container.
Result<std::vector<uint8_t>> write_stream(const Header& header, std::vector<Section> sections);

/// The size write_stream would store for an `exact_values` section of raw values `raw` (data
/// type `dtype`, the zstd stage on or off): zstd_stage_section's choice. For a writer that
/// weighs another form of the section; a failing compressor's Status is passed on.
Result<size_t> stored_values_size(std::span<const uint8_t> raw, bool zstd, uint8_t dtype);

/// The zstd stage's inverse, for read_section.
const Decompressor& zstd_stage_decompressor();

/// The status of a decoder that ran out of memory on `stream`: what the stream holds and
/// what its output alone needs ("out of memory decompressing a 100000 x 100000 float32 2D
/// vector field: its output planes alone need 80 GB"), so that a user can tell a field too
/// large for this machine from a damaged stream; code internal, as before.
Status out_of_memory_decoding(std::span<const uint8_t> stream, const std::string& where = "");

/// The first `count` bytes of section entry `e` of `stream` as they are after the zstd
/// stage, read without undoing the whole frame when the section is stored compressed
/// (corrupt_stream when the frame holds fewer); fewer when an uncompressed section is shorter.
Result<std::vector<uint8_t>> section_head(std::span<const uint8_t> stream, const ParsedContainer::Entry& e,
                                          size_t count);

/// The symbol count a coded blob records in its head (coded_symbol_count), read from section
/// entry `e` of `stream` without decoding the blob, through the first bytes of the zstd
/// stage when the section is stored compressed: a decoder checks it against the grid before
/// it allocates anything for the grid. `coder` is the header's.
Result<uint64_t> peek_symbol_count(std::span<const uint8_t> stream, const ParsedContainer::Entry& e, uint8_t coder);

}  // namespace factz::detail
