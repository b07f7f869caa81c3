// block_interp_bench: what block mode (FaCTz-B) would gain from predicting decoded values by
// multilevel interpolation instead of Lorenzo on pre-quantized integers, with block mode's
// own bounds. Issue 20 asks block mode for cpSZ's ratio on the real fields; earlier
// measurements (docs/benchmarks.md, "what limits block mode's ratio") bounded the predictor
// with one bound everywhere. This one keeps everything block mode decides and changes only
// the predictor, to size the change before it is built (format, CPU and CUDA kernels).
//
//   block_interp_bench U V NX NY REL [REL ...]
//
// For each REL (eb = REL x the value range of u and v together, factz's REL), block mode runs
// as the CUDA backend's CPU model does (the same bytes as the CPU pipeline): per-vertex bound
// ids, per-tile ids, the listed (exact) vertices and the stream. Then, per component:
//   lorenzo  the block stream's codes: q = round(x / step) with the tile's step, the Lorenzo
//            residual of q inside its 32 x 32 tile (order-0 entropy over the component);
//   interp   decoded-value interpolation over the whole field (anchors every 32 vertices by
//            Lorenzo on the anchor grid's decoded values, then strides 16 .. 1 along x then y,
//            cubic where four points exist), each vertex coded with its own tile's step where
//            the code's value is within the vertex's own bound (block mode's listed vertices
//            too); else a zero value takes a zero symbol (block mode keeps zeros exactly) and
//            any other value is listed. `extra`: listed vertices, interp's less block's.
// The projection keeps the stream's other bytes: projected = stream - H(lorenzo) / 8 +
// H(interp) / 8 + 4 x extra (a listed vertex taken as 4 bytes); the coded projection swaps the
// bytes the library's coders write for each set of codes (coded_bytes) instead of the
// order-0 entropy, which overstates what ANS and the zstd stage write on smooth fields. `repair` is the count of
// vertices the exact signature check sends to exact storage on the interpolated
// reconstruction (model_repair); block mode on interpolation would re-predict what follows
// each of them (not costed here). The last two columns size another change: block mode's
// listed vertices (both components) and an estimate of their bytes when each is coded
// against the vertex's lattice value (lattice_listed_bytes), to set beside the stream's
// exact_values section (`factz info`).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backend/cuda/gpu_model.hpp"
#include "bench_field.hpp"
#include "codec/coder.hpp"
#include "codec/zstd_stage.hpp"
#include "kernels/exact_rounding.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/tiles.hpp"
#include "multilevel.hpp"

namespace {

constexpr int64_t kListed = int64_t(1) << 40;
constexpr int64_t kZero = kListed + 1;

double entropy_bytes(const std::vector<int64_t>& codes) { return factz::bench::entropy_total_bits(codes) / 8.0; }

/// Bytes of the codes through the library's coders: symbol code + 2^15 (0: listed, 1: a zero
/// symbol, codes beyond +-32000 take symbol 0 and 4 bytes), the smaller of the ANS blob (with
/// escapes) and the Huffman blob, then the zstd stage where it shrinks: what a codes section
/// of such a stream would hold, less its segmentation.
double coded_bytes(const std::vector<int64_t>& codes) {
  std::vector<uint16_t> sym(codes.size());
  double escaped = 0;
  for (size_t i = 0; i < codes.size(); ++i) {
    const int64_t c = codes[i];
    if (c == kListed) sym[i] = 0;
    else if (c == kZero) sym[i] = 1;
    else if (c > -32000 && c < 32000) sym[i] = uint16_t(c + 32768);
    else {
      sym[i] = 0;
      escaped += 4;
    }
  }
  double best = 1e300;
  for (auto coder : {factz::detail::EntropyCoder::ans, factz::detail::EntropyCoder::huffman}) {
    std::vector<uint8_t> blob, packed;
    if (!factz::detail::entropy_encode(coder, sym, 32768, blob, 1, true).ok()) continue;
    double size = double(blob.size());
    if (factz::detail::zstd_compress(blob, 3, packed).ok()) size = std::min(size, double(packed.size()));
    best = std::min(best, size);
  }
  return best + escaped;
}

struct Component {
  double lorenzo_bytes = 0, interp_bytes = 0, lorenzo_coded = 0, interp_coded = 0;
  int64_t block_listed = 0, interp_listed = 0;
};

Component measure(const std::vector<float>& f, int64_t nx, int64_t ny, float eb, const std::vector<uint8_t>& tile_ids,
                  const std::vector<uint8_t>& own_ids, const std::vector<uint8_t>& exact,
                  const std::vector<float>& listed, std::vector<float>& recon, std::vector<uint8_t>& out_exact) {
  const factz::detail::TileLayout L(nx, ny);
  const int64_t n = nx * ny;
  const auto step_of = [&](int64_t i) {
    return 2.0 * double(factz::detail::bound_of_id(eb, tile_ids[size_t(L.tile_of(i % nx, i / nx))]));
  };
  Component c;
  std::vector<int64_t> codes(static_cast<size_t>(n));
  std::vector<double> q(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double s = step_of(i);
    q[size_t(i)] = s > 0 ? std::nearbyint(double(f[size_t(i)]) / s) : 0.0;
  }
  for (int64_t i = 0; i < n; ++i)
    codes[size_t(i)] = exact[size_t(i)] ? kListed : int64_t(q[size_t(i)] - factz::bench::tile_lorenzo(q, nx, i));
  c.lorenzo_bytes = entropy_bytes(codes);
  c.lorenzo_coded = coded_bytes(codes);
  codes.clear();
  std::vector<double> d(size_t(n), 0.0);
  recon.assign(size_t(n), 0.0f);
  out_exact.assign(size_t(n), 0);
  factz::bench::multilevel(nx, ny, d, [&](int64_t i, double p) {
    const double v = double(f[size_t(i)]), s = step_of(i);
    const double own = double(factz::detail::bound_of_id(eb, own_ids[size_t(i)]));
    float r = 0;
    int64_t code = kListed;
    if (exact[size_t(i)]) ++c.block_listed;
    if (s > 0) {
      code = int64_t(std::nearbyint((v - p) / s));
      r = float(p + double(code) * s);
    }
    if (!(s > 0) || !(std::fabs(double(r) - v) <= own)) {
      if (v == 0.0) {
        r = 0.0f;  // a zero symbol: land and calm vertices stay zero, as block mode keeps them
        code = kZero;
      } else {
        r = exact[size_t(i)] ? listed[size_t(i)] : f[size_t(i)];
        code = kListed;
        ++c.interp_listed;
      }
    }
    if (code == kListed) out_exact[size_t(i)] = 1;
    d[size_t(i)] = double(r);
    recon[size_t(i)] = r;
    codes.push_back(code);
  });
  c.interp_bytes = entropy_bytes(codes);
  c.interp_coded = coded_bytes(codes);
  return c;
}

/// Listed vertices coded against the lattice: of every vertex block mode lists on the grid of
/// its own bound (flag kExactListOwnBound + id, value y = m g, g the power of two of
/// own_bound_value), the pair (id, m - round(L / g)) with L the vertex's lattice value
/// reconstruct(prequantize(x, step)), which the decoder has from the vertex's code. Returns
/// the order-0 entropy of the ids plus that of the differences, plus 4 bytes per vertex
/// listed with all its bits; `listed` counts both kinds.
double lattice_listed_bytes(const factz::VectorField2D& field, float eb,
                            const factz::cuda_detail::TiledIntermediates& mid, int64_t& listed) {
  const factz::detail::TileLayout L(field.nx, field.ny);
  std::vector<int64_t> ids, deltas;
  int64_t full = 0;
  for (int c = 0; c < 2; ++c) {
    const std::vector<float>& f = c ? field.v : field.u;
    for (int64_t y = 0; y < field.ny; ++y)
      for (int64_t x = 0; x < field.nx; ++x) {
        const size_t i = size_t(y * field.nx + x);
        const uint8_t flag = mid.exact[c][i];
        if (flag == 0) continue;
        if (flag < factz::detail::kExactListOwnBound) {
          ++full;
          continue;
        }
        const int id = flag - factz::detail::kExactListOwnBound;
        const float step = 2.0f * factz::detail::bound_of_id(eb, mid.tile_ids[c][size_t(L.tile_of(x, y))]);
        const float lattice = factz::detail::reconstruct(factz::detail::prequantize(f[i], step), step);
        const float g = ldexpf(1.0f, factz::detail::exponent_bits(factz::detail::bound_of_id(eb, id)) - 126);
        ids.push_back(id);
        deltas.push_back(int64_t(factz::detail::round_even(mid.recon[c][i] / g)) -
                         int64_t(factz::detail::round_even(lattice / g)));
      }
  }
  listed = full + int64_t(ids.size());
  return entropy_bytes(ids) + entropy_bytes(deltas) + 4.0 * double(full);
}

}  // namespace

int main(int argc, char** argv) {
  factz::VectorField2D field;
  if (const int rc = factz::bench::load_uv_args(argc, argv, field)) return rc;
  const int64_t nx = field.nx, ny = field.ny;
  const double range = factz::bench::value_range(field);
  const double raw = 8.0 * double(nx * ny);
  std::printf("| REL | block bytes | block ratio | H(lorenzo) | H(interp) | extra listed | projected bytes | "
              "projected ratio | coded projection bytes | coded projection ratio | repair | listed | "
              "listed on lattice est. bytes |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int k = 5; k < argc; ++k) {
    const double rel = std::atof(argv[k]);
    factz::Options o;
    o.mode = factz::Mode::block;
    o.bound_mode = factz::BoundMode::rel;
    o.bound = rel;
    o.threads = 1;
    factz::cuda_detail::TiledIntermediates mid;
    auto s = factz::cuda_detail::model_compress(field, o, &mid);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().to_string().c_str());
      return 1;
    }
    const float eb = float(rel * range);
    std::vector<float> recon[2];
    std::vector<uint8_t> ex[2];
    const Component cu =
        measure(field.u, nx, ny, eb, mid.tile_ids[0], mid.id_u, mid.exact[0], mid.recon[0], recon[0], ex[0]);
    const Component cv =
        measure(field.v, nx, ny, eb, mid.tile_ids[1], mid.id_v, mid.exact[1], mid.recon[1], recon[1], ex[1]);
    int64_t rounds = 0, repaired = 0;
    factz::cuda_detail::model_repair(field, nullptr, recon, ex, rounds, repaired);
    const double stream = double(s.value().size());
    const double hl = cu.lorenzo_bytes + cv.lorenzo_bytes, hi2 = cu.interp_bytes + cv.interp_bytes;
    const int64_t extra = cu.interp_listed + cv.interp_listed - cu.block_listed - cv.block_listed;
    const double projected = stream - hl + hi2 + 4.0 * double(extra);
    const double coded = stream - (cu.lorenzo_coded + cv.lorenzo_coded) + (cu.interp_coded + cv.interp_coded) +
                         4.0 * double(extra);
    int64_t listed = 0;
    const double on_lattice = lattice_listed_bytes(field, eb, mid, listed);
    std::printf("| %g | %.0f | %.2f | %.0f | %.0f | %lld | %.0f | %.2f | %.0f | %.2f | %lld | %lld | %.0f |\n", rel,
                stream, raw / stream, hl, hi2, static_cast<long long>(extra), projected, raw / projected, coded,
                raw / coded, static_cast<long long>(repaired), static_cast<long long>(listed), on_lattice);
  }
  return 0;
}
