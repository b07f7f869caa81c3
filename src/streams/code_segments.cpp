#include "streams/code_segments.hpp"

#include <string>

#include <algorithm>

#include "codec/ans.hpp"
#include "codec/huffman.hpp"
#include "format/crc32.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {

std::vector<int64_t> phase_segments(std::span<const int64_t> phase_codes) {
  std::vector<int64_t> sizes;
  int64_t open = 0;
  for (int64_t c : phase_codes) {
    open += c;
    if (open >= kMinSegmentCodes) {
      sizes.push_back(open);
      open = 0;
    }
  }
  if (open > 0) {
    if (sizes.empty()) sizes.push_back(open);
    else sizes.back() += open;
  }
  if (sizes.empty()) sizes.push_back(0);
  return sizes;
}

namespace {

/// The section of the segments `sizes` (symbol counts, in order) coded by `encode`, and its
/// crc32c when every blob came with its own.
Status assemble(std::span<const int64_t> sizes, const SegmentEncoder& encode, std::vector<uint8_t>& out,
                std::optional<uint32_t>& crc) {
  std::vector<std::vector<uint8_t>> blobs(sizes.size());
  std::vector<std::optional<uint32_t>> crcs(sizes.size());
  int64_t first = 0;
  for (size_t s = 0; s < sizes.size(); ++s) {
    FACTZ_RETURN_IF_ERROR(encode(first, sizes[s], blobs[s], crcs[s]));
    first += sizes[s];
  }
  out.clear();
  put_varint(out, sizes.size());
  for (int64_t c : sizes) put_varint(out, uint64_t(c));
  for (const auto& b : blobs) put_varint(out, b.size());
  crc = crc32c(out);
  size_t total = out.size();
  for (size_t s = 0; s < blobs.size(); ++s) {
    total += blobs[s].size();
    if (crc && crcs[s]) crc = crc32c_combine(*crc, *crcs[s], blobs[s].size());
    else crc.reset();
  }
  out.reserve(total);
  for (const auto& b : blobs) out.insert(out.end(), b.begin(), b.end());
  return Status::Ok();
}

}  // namespace

Status write_segmented(std::span<const int64_t> phase_codes, int64_t n, const SegmentEncoder& encode,
                       std::vector<uint8_t>& out, std::optional<uint32_t>* crc) {
  int64_t total = 0;
  for (int64_t c : phase_codes) total += c;
  if (total != n) return Status(Code::internal, "segmented codes: the phases hold " + std::to_string(total) +
                                                    " codes, the component " + std::to_string(n));
  const std::vector<int64_t> phases = phase_segments(phase_codes);
  std::optional<uint32_t> sum;
  FACTZ_RETURN_IF_ERROR(assemble(phases, encode, out, sum));
  if (n < kAlwaysSegmentCodes && phases.size() > 1) {
    std::vector<uint8_t> one;
    std::optional<uint32_t> one_sum;
    const int64_t whole[1] = {n};
    FACTZ_RETURN_IF_ERROR(assemble(whole, encode, one, one_sum));
    if (one.size() <= out.size()) {
      out = std::move(one);
      sum = one_sum;
    }
  }
  if (crc) *crc = sum;
  return Status::Ok();
}

Status encode_segmented(EntropyCoder coder, std::span<const uint16_t> codes, std::span<const int64_t> phase_codes,
                        int threads, std::vector<uint8_t>& out) {
  return write_segmented(
      phase_codes, int64_t(codes.size()),
      [&](int64_t first, int64_t count, std::vector<uint8_t>& blob, std::optional<uint32_t>&) {
        return entropy_encode(coder, codes.subspan(size_t(first), size_t(count)), kAnsCodeCenter, blob, threads,
                              /*allow_escapes=*/true);
      },
      out);
}

Status parse_segmented(std::span<const uint8_t> section, int64_t n, std::vector<CodeSegment>& out) {
  out.clear();
  ByteReader r(section);
  uint64_t count = 0;
  // At most one segment per symbol (one empty segment when there are none): a hostile count
  // never sizes an allocation beyond the symbols the bound ids already gave.
  const uint64_t max_segments = n > 0 ? uint64_t(n) : 1;
  if (!r.varint_at_most(max_segments, count) || count == 0)
    return corrupt_stream("segmented codes: bad segment count (1 to " + std::to_string(max_segments) + ")");
  out.resize(size_t(count));
  int64_t first = 0;
  for (auto& seg : out) {
    uint64_t c = 0;
    if (!r.varint_at_most(uint64_t(n - first), c))
      return corrupt_stream("segmented codes: the segments hold more symbols than the bound ids give (" +
                            std::to_string(n) + ")");
    if (c == 0 && !(count == 1 && n == 0)) return corrupt_stream("segmented codes: an empty segment");
    seg.first = first;
    seg.count = int64_t(c);
    first += int64_t(c);
  }
  if (first != n)
    return corrupt_stream("segmented codes: the segments hold " + std::to_string(first) + " symbols, the bound ids give " +
                          std::to_string(n));
  std::vector<uint64_t> sizes(out.size());
  for (auto& s : sizes)
    if (!r.varint_at_most(r.remaining(), s)) return corrupt_stream("segmented codes: a blob size exceeds the section");
  for (size_t k = 0; k < out.size(); ++k)
    if (!r.take(size_t(sizes[k]), out[k].blob))
      return corrupt_stream("segmented codes: the blobs exceed the section (truncated?)");
  if (!r.at_end()) return corrupt_stream("segmented codes: trailing bytes after the last blob");
  return Status::Ok();
}

Status decode_segmented(EntropyCoder coder, std::span<const uint8_t> section, uint16_t center,
                        std::span<uint16_t> out, int threads) {
  std::vector<CodeSegment> segs;
  FACTZ_RETURN_IF_ERROR(parse_segmented(section, int64_t(out.size()), segs));
  auto decode = [&](const CodeSegment& s, int t) {
    return entropy_decode(coder, s.blob, center, out.subspan(size_t(s.first), size_t(s.count)), t);
  };
  // A segment of at most one coder chunk decodes on one thread anyway: those go side by side,
  // one per thread, in one parallel region; the larger ones one after the other, each with
  // every thread over its chunks. The first failing segment in stream order is reported, so
  // the message does not depend on the threads.
  std::vector<Status> status(segs.size(), Status::Ok());
  const int64_t chunk = int64_t{1} << kAnsChunkLog2;  // Huffman's chunks are as long
  static_assert(kAnsChunkLog2 == kHuffmanChunkLog2);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(threads, 1)) if (threads > 1 && segs.size() > 1)
  for (size_t k = 0; k < segs.size(); ++k)
    if (segs[k].count <= chunk) status[k] = decode(segs[k], 1);
  for (size_t k = 0; k < segs.size(); ++k) {
    if (segs[k].count > chunk) status[k] = decode(segs[k], threads);
  }
  for (const Status& st : status) FACTZ_RETURN_IF_ERROR(st);
  return Status::Ok();
}

std::vector<CodeWindow> code_windows(std::span<const int64_t> phase_codes, std::span<const CodeSegment> u,
                                     std::span<const CodeSegment> v, int64_t min_codes) {
  std::vector<CodeWindow> out;
  size_t su = 0, sv = 0;        // the next segment of each component
  int64_t end_u = 0, end_v = 0;  // where the segments taken so far end
  CodeWindow w;
  int64_t at = 0;  // codes of the phases taken so far
  const int64_t phases = int64_t(phase_codes.size());
  for (int64_t p = 0; p < phases; ++p) {
    at += phase_codes[size_t(p)];
    while (su < u.size() && end_u < at) end_u += u[su++].count;
    while (sv < v.size() && end_v < at) end_v += v[sv++].count;
    const bool last = p + 1 == phases;
    if (last) {  // the rest: every segment left (an empty component's one empty segment too)
      su = u.size();
      sv = v.size();
    }
    if (last || (end_u == at && end_v == at && at - w.first >= min_codes)) {
      w.phase_end = p + 1;
      w.count = at - w.first;
      w.seg_u_end = su;
      w.seg_v_end = sv;
      out.push_back(w);
      w = CodeWindow{p + 1, p + 1, at, 0, su, su, sv, sv};
    }
  }
  return out;
}

}  // namespace factz::detail
