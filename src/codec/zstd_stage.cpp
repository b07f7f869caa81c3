// zstd stage; see docs/codec.md ("zstd stage").
#include "codec/zstd_stage.hpp"

#include <zstd.h>

#include <algorithm>
#include <memory>
#include <string>

namespace factz::detail {
namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// First capacity of the output buffer: the expected size when the ratio is plausible,
// otherwise a modest start that doubles as real output appears.
constexpr uint64_t kMinInitialCapacity = uint64_t{1} << 20;
constexpr uint64_t kPlausibleRatio = 16;

Status zstd_error(const char* what, size_t code) {
  return corrupt_stream(std::string("zstd: ") + what + ": " + ZSTD_getErrorName(code));
}

}  // namespace

Status zstd_compress(std::span<const uint8_t> in, int level, std::vector<uint8_t>& out) {
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()) {
    return invalid_argument("zstd: level " + std::to_string(level) + " out of range");
  }
  const size_t bound = ZSTD_compressBound(in.size());
  if (ZSTD_isError(bound)) return invalid_argument("zstd: input too large");
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  if (!cctx) return Status(Code::internal, "zstd: cannot create context");
  out.resize(bound);
  // Single-threaded one-shot compression: the frame is a function of bytes and level.
  const size_t size = ZSTD_compressCCtx(cctx.get(), out.data(), out.size(), in.data(), in.size(), level);
  if (ZSTD_isError(size)) {
    out.clear();
    return Status(Code::internal, std::string("zstd: ") + ZSTD_getErrorName(size));
  }
  out.resize(size);
  return Status::Ok();
}

Status zstd_decompress(std::span<const uint8_t> in, uint64_t expected_size, std::vector<uint8_t>& out) {
  out.clear();
  if (expected_size > kZstdMaxExpectedSize) {
    return invalid_argument("zstd: expected size " + std::to_string(expected_size) + " exceeds 1 TiB");
  }
  // Exactly one regular frame: skippable frames and other magics are not ours.
  if (in.size() < 4 || (in[0] | in[1] << 8 | in[2] << 16 | uint32_t{in[3]} << 24) != ZSTD_MAGICNUMBER) {
    return corrupt_stream("zstd: not a zstd frame");
  }
  const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return corrupt_stream("zstd: bad frame header");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != expected_size) {
    return corrupt_stream("zstd: frame size does not match the expected size");
  }
  std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  if (!dctx) return Status(Code::internal, "zstd: cannot create context");

  // One spare byte beyond the expected size reveals a frame that decodes to more.
  const uint64_t cap_max = expected_size + 1;
  const uint64_t plausible = std::max(kMinInitialCapacity, in.size() * kPlausibleRatio);
  out.resize(std::min(cap_max, plausible));
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  uint64_t produced = 0;
  for (;;) {
    ZSTD_outBuffer ob{out.data(), out.size(), produced};
    const size_t in_before = ib.pos;
    const size_t ret = ZSTD_decompressStream(dctx.get(), &ob, &ib);
    if (ZSTD_isError(ret)) {
      out.clear();
      return zstd_error("frame", ret);
    }
    const bool progress = ob.pos != produced || ib.pos != in_before;
    produced = ob.pos;
    if (ret == 0) break;  // frame complete and flushed
    if (produced > expected_size) break;
    if (produced == out.size()) {
      out.resize(std::min(cap_max, 2 * static_cast<uint64_t>(out.size())));
    } else if (ib.pos == ib.size || !progress) {
      out.clear();
      return corrupt_stream("zstd: frame truncated");
    }
  }
  if (produced != expected_size) {
    out.clear();
    return corrupt_stream("zstd: frame decodes to " + std::string(produced > expected_size ? "more" : "fewer") +
                          " bytes than expected");
  }
  if (ib.pos != ib.size) {
    out.clear();
    return corrupt_stream("zstd: trailing bytes after the frame");
  }
  out.resize(expected_size);
  return Status::Ok();
}

Status zstd_peek(std::span<const uint8_t> in, size_t count, std::vector<uint8_t>& out) {
  if (count > 4096) return invalid_argument("zstd_peek reads at most 4096 bytes");
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) return Status(Code::internal, "zstd: cannot create a decompression context");
  out.assign(count, 0);
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  ZSTD_outBuffer dst{out.data(), count, 0};
  while (dst.pos < count) {
    const size_t before_in = src.pos, before_out = dst.pos;
    const size_t r = ZSTD_decompressStream(ctx.get(), &dst, &src);
    if (ZSTD_isError(r)) return corrupt_stream(std::string("zstd: ") + ZSTD_getErrorName(r));
    if (r == 0 && dst.pos < count) break;  // frame ended early
    if (src.pos == before_in && dst.pos == before_out) break;  // no progress: input exhausted
  }
  if (dst.pos < count) return corrupt_stream("zstd: frame holds fewer bytes than its section header needs");
  return Status::Ok();
}

}  // namespace factz::detail
