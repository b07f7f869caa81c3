// Payload layouts in docs/flow.md ("Field stream").
#include "flow/coefficient_coder.hpp"

#include <zfp.h>

#include <algorithm>
#include <cmath>

#include "codec/huffman.hpp"
#include "codec/zstd_stage.hpp"
#include "util/byte_io.hpp"

namespace factz::flow::detail {

namespace {

using factz::detail::ByteReader;
using factz::detail::ByteWriter;
using factz::detail::huffman_decode;
using factz::detail::huffman_encode;
using factz::detail::put_varint;
using factz::detail::zigzag_decode;
using factz::detail::zigzag_encode;
using factz::detail::zstd_compress;
using factz::detail::zstd_decompress;

enum class Layout : uint8_t { exact = 0, huffman = 1, bitpack = 2 };
constexpr uint16_t kEscape = 65535;
constexpr double kMaxQuant = 1099511627776.0;  // 2^40: |q| beyond this is stored exactly

/// body -> (zstd flag, stored bytes): zstd only where it shrinks the body.
Status maybe_zstd(const std::vector<uint8_t>& body, uint8_t& flag, std::vector<uint8_t>& stored) {
  std::vector<uint8_t> z;
  FACTZ_RETURN_IF_ERROR(zstd_compress(body, 19, z));
  if (z.size() < body.size()) {
    flag = 1;
    stored = std::move(z);
  } else {
    flag = 0;
    stored = body;
  }
  return Status::Ok();
}

Status encode_factz(std::span<const double> c, double tol, std::vector<uint8_t>& out) {
  const size_t m = c.size();
  std::vector<std::pair<uint32_t, double>> exact;
  std::vector<uint64_t> zz(m, 0);
  Layout layout = Layout::exact;
  std::vector<uint8_t> best_body;
  uint8_t width = 0;
  if (tol > 0) {
    const double step = 2.0 * tol;
    for (size_t i = 0; i < m; ++i) {
      const double q = std::nearbyint(c[i] / step);
      // Exactly checked: the reconstruction q * step must lie within tol of c.
      if (!(std::fabs(q) <= kMaxQuant) || !(std::fabs(q * step - c[i]) <= tol)) {
        exact.emplace_back(uint32_t(i), c[i]);
        continue;
      }
      zz[i] = zigzag_encode(int64_t(q));
    }
    // Huffman of 16-bit symbols (escape + varint for large codes).
    std::vector<uint16_t> sym(m);
    std::vector<uint8_t> escapes;
    for (size_t i = 0; i < m; ++i) {
      sym[i] = zz[i] < kEscape ? uint16_t(zz[i]) : kEscape;
      if (zz[i] >= kEscape) put_varint(escapes, zz[i]);
    }
    std::vector<uint8_t> blob;
    FACTZ_RETURN_IF_ERROR(huffman_encode(sym, blob, 1));
    ByteWriter hw;
    hw.u32(uint32_t(blob.size()));
    hw.append(blob);
    hw.append(escapes);
    // Fixed-width bit packing (cheaper than a code table for short arrays).
    uint64_t mx = 0;
    for (uint64_t z : zz) mx = std::max(mx, z);
    while (width < 64 && (mx >> width) != 0) ++width;
    std::vector<uint8_t> packed((m * width + 7) / 8, 0);
    for (size_t i = 0; i < m; ++i)
      for (int b = 0; b < width; ++b)
        if ((zz[i] >> b) & 1) {
          const size_t bit = i * width + size_t(b);
          packed[bit >> 3] |= uint8_t(1u << (bit & 7));
        }
    std::vector<uint8_t> hz, pz;
    uint8_t hf, pf;
    FACTZ_RETURN_IF_ERROR(maybe_zstd(hw.bytes(), hf, hz));
    FACTZ_RETURN_IF_ERROR(maybe_zstd(packed, pf, pz));
    ByteWriter w;
    if (hz.size() < pz.size()) {
      w.u8(uint8_t(Layout::huffman));
      w.u8(hf);
      w.u8(0);
      w.u32(uint32_t(exact.size()));
      w.u32(uint32_t(hw.bytes().size()));
      for (const auto& [i, v] : exact) w.u32(i), w.f64(v);
      w.append(hz);
    } else {
      w.u8(uint8_t(Layout::bitpack));
      w.u8(pf);
      w.u8(width);
      w.u32(uint32_t(exact.size()));
      w.u32(uint32_t(packed.size()));
      for (const auto& [i, v] : exact) w.u32(i), w.f64(v);
      w.append(pz);
    }
    out.insert(out.end(), w.bytes().begin(), w.bytes().end());
    return Status::Ok();
  }
  ByteWriter body;
  for (double v : c) body.f64(v);
  std::vector<uint8_t> stored;
  uint8_t flag;
  FACTZ_RETURN_IF_ERROR(maybe_zstd(body.bytes(), flag, stored));
  ByteWriter w;
  w.u8(uint8_t(layout));
  w.u8(flag);
  w.u8(0);
  w.u32(0);
  w.u32(uint32_t(body.bytes().size()));
  w.append(stored);
  out.insert(out.end(), w.bytes().begin(), w.bytes().end());
  return Status::Ok();
}

Status decode_factz(std::span<const uint8_t> payload, double tol, std::span<double> c) {
  const auto bad = [](const std::string& m) { return corrupt_stream("flow stream: " + m); };
  const size_t m = c.size();
  ByteReader r(payload);
  uint8_t layout, zflag, width;
  uint32_t nexact, raw_size;
  if (!r.u8(layout) || !r.u8(zflag) || !r.u8(width) || !r.u32(nexact) || !r.u32(raw_size))
    return bad("truncated coefficient header");
  if (layout > 2 || zflag > 1 || width > 64 || nexact > m) return bad("bad coefficient header");
  if (Layout(layout) != Layout::exact && !(tol > 0)) return bad("quantized layout without a tolerance");
  std::vector<std::pair<uint32_t, double>> exact(nexact);
  for (auto& [i, v] : exact)
    if (!r.u32(i) || !r.f64(v) || i >= m) return bad("bad exact coefficient");
  std::span<const uint8_t> stored;
  if (!r.take(r.remaining(), stored)) return bad("truncated body");
  std::vector<uint8_t> body;
  // The raw size is bounded by what the layout can need before anything is allocated.
  const uint64_t limit = Layout(layout) == Layout::exact ? 8 * uint64_t(m) : 16 * uint64_t(m) + 1024 + 10 * uint64_t(m);
  if (raw_size > limit) return bad("body size out of range");
  if (zflag) {
    FACTZ_RETURN_IF_ERROR(zstd_decompress(stored, raw_size, body));
  } else {
    if (stored.size() != raw_size) return bad("body size mismatch");
    body.assign(stored.begin(), stored.end());
  }
  const double step = 2.0 * tol;
  switch (Layout(layout)) {
    case Layout::exact: {
      if (body.size() != 8 * m) return bad("exact body size mismatch");
      ByteReader br(body);
      for (double& v : c) (void)br.f64(v);
      break;
    }
    case Layout::huffman: {
      ByteReader br(body);
      uint32_t blob_size;
      std::span<const uint8_t> blob;
      if (!br.u32(blob_size) || !br.take(blob_size, blob)) return bad("truncated Huffman blob");
      std::vector<uint16_t> sym(m);
      FACTZ_RETURN_IF_ERROR(huffman_decode(blob, sym, 1));
      for (size_t i = 0; i < m; ++i) {
        uint64_t z = sym[i];
        if (sym[i] == kEscape && !br.varint(z)) return bad("truncated escape codes");
        const int64_t q = zigzag_decode(z);
        if (!(std::fabs(double(q)) <= kMaxQuant)) return bad("quantization code out of range");
        c[i] = double(q) * step;
      }
      if (br.remaining() != 0) return bad("trailing bytes after escape codes");
      break;
    }
    case Layout::bitpack: {
      if (body.size() != (m * width + 7) / 8) return bad("packed body size mismatch");
      for (size_t i = 0; i < m; ++i) {
        uint64_t z = 0;
        for (int b = 0; b < width; ++b) {
          const size_t bit = i * width + size_t(b);
          z |= uint64_t((body[bit >> 3] >> (bit & 7)) & 1) << b;
        }
        const int64_t q = zigzag_decode(z);
        if (!(std::fabs(double(q)) <= kMaxQuant)) return bad("quantization code out of range");
        c[i] = double(q) * step;
      }
      break;
    }
  }
  for (const auto& [i, v] : exact) c[i] = v;
  for (double v : c)
    if (!std::isfinite(v)) return bad("non-finite coefficient");
  return Status::Ok();
}

/// ZFP 1D double coding; tol 0 (or a tolerance zfp fails to meet) uses reversible mode.
bool zfp_run(std::span<const double> in, double tol, bool reversible, std::vector<uint8_t>& out) {
  std::vector<double> copy(in.begin(), in.end());
  zfp_field* field = zfp_field_1d(copy.data(), zfp_type_double, copy.size());
  zfp_stream* zs = zfp_stream_open(nullptr);
  if (reversible) zfp_stream_set_reversible(zs);
  else zfp_stream_set_accuracy(zs, tol);
  std::vector<uint8_t> buf(zfp_stream_maximum_size(zs, field) + 64);
  bitstream* bs = stream_open(buf.data(), buf.size());
  zfp_stream_set_bit_stream(zs, bs);
  zfp_stream_rewind(zs);
  const size_t size = zfp_compress(zs, field);
  stream_close(bs);
  zfp_stream_close(zs);
  zfp_field_free(field);
  if (size == 0) return false;
  out.assign(buf.begin(), buf.begin() + int64_t(size));
  return true;
}

bool zfp_unrun(std::span<const uint8_t> payload, double tol, bool reversible, std::span<double> c) {
  zfp_field* field = zfp_field_1d(c.data(), zfp_type_double, c.size());
  zfp_stream* zs = zfp_stream_open(nullptr);
  if (reversible) zfp_stream_set_reversible(zs);
  else zfp_stream_set_accuracy(zs, tol);
  // zfp does not bound its reads by the stream size: decode from a copy padded to the
  // largest stream these parameters can produce, so a damaged payload stays in bounds.
  std::vector<uint8_t> buf(std::max(payload.size(), zfp_stream_maximum_size(zs, field)) + 64, 0);
  std::copy(payload.begin(), payload.end(), buf.begin());
  bitstream* bs = stream_open(buf.data(), buf.size());
  zfp_stream_set_bit_stream(zs, bs);
  zfp_stream_rewind(zs);
  const size_t used = zfp_decompress(zs, field);
  stream_close(bs);
  zfp_stream_close(zs);
  zfp_field_free(field);
  return used != 0 && used <= payload.size() + 8;
}

Status encode_zfp(std::span<const double> c, double tol, std::vector<uint8_t>& out) {
  std::vector<double> back(c.size());
  double t = tol;
  bool reversible = !(tol > 0);
  std::vector<uint8_t> z;
  for (int attempt = 0;; ++attempt) {
    if (attempt >= 24) reversible = true;
    if (!zfp_run(c, t, reversible, z)) return Status(Code::internal, "zfp compression failed");
    if (!zfp_unrun(z, t, reversible, back)) return Status(Code::internal, "zfp round trip failed");
    bool ok = true;
    for (size_t i = 0; i < c.size() && ok; ++i) ok = reversible ? back[i] == c[i] : std::fabs(back[i] - c[i]) <= tol;
    if (ok) break;
    if (reversible) return Status(Code::internal, "zfp reversible mode is not lossless");
    t *= 0.5;  // zfp met its tolerance only approximately: tighten and retry
  }
  ByteWriter w;
  w.u8(reversible ? 1 : 0);
  w.f64(t);
  w.append(z);
  out.insert(out.end(), w.bytes().begin(), w.bytes().end());
  return Status::Ok();
}

Status decode_zfp(std::span<const uint8_t> payload, double tol, std::span<double> c) {
  ByteReader r(payload);
  uint8_t reversible;
  double t;
  if (!r.u8(reversible) || reversible > 1 || !r.f64(t)) return corrupt_stream("flow stream: truncated zfp header");
  if (!reversible && !(t > 0 && t <= tol)) return corrupt_stream("flow stream: bad zfp tolerance");
  if (c.empty()) return Status::Ok();
  if (!zfp_unrun(payload.subspan(r.pos()), t, reversible, c)) return corrupt_stream("flow stream: zfp payload damaged");
  for (double v : c)
    if (!std::isfinite(v)) return corrupt_stream("flow stream: non-finite coefficient");
  return Status::Ok();
}

}  // namespace

Status encode_coefficients(CoefficientCoder coder, std::span<const double> c, double tol, std::vector<uint8_t>& out) {
  if (coder == CoefficientCoder::zfp) {
    if (c.empty()) {
      ByteWriter w;
      w.u8(1);
      w.f64(0);
      out.insert(out.end(), w.bytes().begin(), w.bytes().end());
      return Status::Ok();
    }
    return encode_zfp(c, tol, out);
  }
  return encode_factz(c, tol, out);
}

Status decode_coefficients(CoefficientCoder coder, std::span<const uint8_t> payload, double tol, std::span<double> c) {
  if (coder == CoefficientCoder::zfp) return decode_zfp(payload, tol, c);
  return decode_factz(payload, tol, c);
}

}  // namespace factz::flow::detail
