// Basis file format (docs/flow.md, "Basis file"): all integers little-endian.
//   "FZFB" | version u8 (1) | dim u8 | method u8 | 0 u8 | n u64 | nodes n*dim f64 |
//   periods dim f64 | blocks u32 | per block: terms u32, terms * (radial u8, length f64,
//   weight f64), centers u64, centers * u32, rank u64, has_map u8, [map
//   (dim*centers*rank) f64], scale f64, norm_bound f64, orthonormal u8 |
//   FNV-1a 64 of everything before it.
#include <cmath>

#include "flow/bytes.hpp"
#include "factz/flow.hpp"
#include "util/byte_io.hpp"

namespace factz::flow {

namespace {
constexpr uint8_t kBasisVersion = 1;
constexpr uint64_t kMaxNodes = uint64_t(1) << 31;

void write_payload(const Basis& b, factz::detail::ByteWriter& w) {
  for (const char ch : {'F', 'Z', 'F', 'B'}) w.u8(uint8_t(ch));
  w.u8(kBasisVersion);
  w.u8(uint8_t(b.dim));
  w.u8(uint8_t(b.method));
  w.u8(0);
  w.u64(uint64_t(b.n));
  for (double v : b.nodes) w.f64(v);
  for (double v : b.periods) w.f64(v);
  w.u32(uint32_t(b.blocks.size()));
  for (const Block& k : b.blocks) {
    w.u32(uint32_t(k.kernel.size()));
    for (const KernelTerm& t : k.kernel) {
      w.u8(uint8_t(t.radial));
      w.f64(t.length);
      w.f64(t.weight);
    }
    w.u64(k.centers.size());
    for (uint32_t c : k.centers) w.u32(c);
    w.u64(uint64_t(k.rank));
    w.u8(k.weight_map.empty() ? 0 : 1);
    for (double v : k.weight_map) w.f64(v);
    w.f64(k.scale);
    w.f64(k.norm_bound);
    w.u8(k.orthonormal ? 1 : 0);
  }
}

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }
}  // namespace

Result<std::vector<uint8_t>> serialize_basis(const Basis& b) {
  factz::detail::ByteWriter w;
  write_payload(b, w);
  w.u64(detail::fnv1a(w.bytes()));
  return std::move(w.bytes());
}

uint64_t Basis::fingerprint() const {
  factz::detail::ByteWriter w;
  write_payload(*this, w);
  return detail::fnv1a(w.bytes());
}

Result<Basis> parse_basis(std::span<const uint8_t> bytes) {
  const auto bad = [](const std::string& what) { return corrupt_stream("flow basis: " + what); };
  if (bytes.size() < 16 || std::string(bytes.begin(), bytes.begin() + 4) != "FZFB")
    return bad("not a flow basis file (magic FZFB missing)");
  {
    uint64_t stored = 0;
    for (int k = 7; k >= 0; --k) stored = (stored << 8) | bytes[bytes.size() - 8 + size_t(k)];
    if (stored != detail::fnv1a(bytes.first(bytes.size() - 8))) return bad("checksum mismatch (file damaged)");
  }
  factz::detail::ByteReader r(bytes.first(bytes.size() - 8));
  (void)r.skip(4);  // the magic
  uint8_t version, dim, method, pad;
  if (!r.u8(version) || !r.u8(dim) || !r.u8(method) || !r.u8(pad)) return bad("truncated header");
  if (version != kBasisVersion)
    return Status(Code::unsupported_version, "flow basis: version " + std::to_string(version));
  if (dim != 2 && dim != 3) return bad("dimension must be 2 or 3");
  if (method > uint8_t(Method::frame)) return bad("unknown method");
  Basis b;
  b.dim = dim;
  b.method = Method(method);
  uint64_t n;
  if (!r.u64(n) || n == 0 || n > kMaxNodes || n * dim * 8 > r.remaining()) return bad("bad node count");
  b.n = int64_t(n);
  b.nodes.resize(size_t(n) * dim);
  for (double& v : b.nodes)
    if (!r.f64(v) || !std::isfinite(v)) return bad("bad node coordinate");
  b.periods.resize(dim);
  for (double& v : b.periods)
    if (!r.f64(v) || !std::isfinite(v) || v < 0) return bad("bad period");
  uint32_t nblocks;
  if (!r.u32(nblocks) || nblocks == 0 || nblocks > 16) return bad("bad block count");
  for (uint32_t k = 0; k < nblocks; ++k) {
    Block blk;
    uint32_t terms;
    if (!r.u32(terms) || terms == 0 || terms > 64) return bad("bad kernel term count");
    for (uint32_t t = 0; t < terms; ++t) {
      uint8_t radial;
      KernelTerm kt;
      if (!r.u8(radial) || radial > 1 || !r.f64(kt.length) || !r.f64(kt.weight)) return bad("bad kernel term");
      if (!positive_finite(kt.length) || !positive_finite(kt.weight)) return bad("bad kernel term");
      kt.radial = Radial(radial);
      blk.kernel.push_back(kt);
    }
    uint64_t nc;
    if (!r.u64(nc) || nc == 0 || nc > n || nc * 4 > r.remaining()) return bad("bad center count");
    blk.centers.resize(size_t(nc));
    for (uint32_t& c : blk.centers)
      if (!r.u32(c) || c >= n) return bad("center index out of range");
    uint64_t rank;
    uint8_t has_map;
    if (!r.u64(rank) || !r.u8(has_map) || has_map > 1) return bad("bad block rank");
    blk.rank = int64_t(rank);
    if (has_map) {
      if (rank == 0 || rank > nc * dim || nc * dim * rank * 8 > r.remaining()) return bad("bad weight map size");
      blk.weight_map.resize(size_t(nc * dim * rank));
      for (double& v : blk.weight_map)
        if (!r.f64(v) || !std::isfinite(v)) return bad("bad weight map entry");
    } else if (rank != nc * dim) {
      return bad("block rank does not match its centers");
    }
    uint8_t ortho;
    if (!r.f64(blk.scale) || !r.f64(blk.norm_bound) || !r.u8(ortho) || ortho > 1) return bad("truncated block");
    if (!positive_finite(blk.scale) || !(blk.norm_bound >= 0) || !std::isfinite(blk.norm_bound))
      return bad("bad block scale");
    blk.orthonormal = ortho == 1;
    b.blocks.push_back(std::move(blk));
  }
  if (r.remaining() != 0) return bad("trailing bytes");
  return b;
}

}  // namespace factz::flow
