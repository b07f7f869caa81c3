#include "backend/cpu/tiled_quantizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <type_traits>

#include "factz/factz.hpp"
#include "util/byte_io.hpp"
#include "kernels/block_bounds.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/tile_decode.hpp"
#include "kernels/tiles.hpp"

namespace factz::detail {
namespace {

// One body for float32 and float64 planes (T = float, double): every value operation is one
// of T (kernels/quantizer.hpp's overloads), so the float instantiation is the code it always was.

/// Appends an exact value with all its bits: f32 for float planes, f64 for float64 ones.
void put_exact(ByteWriter& w, float x) { w.f32(x); }
void put_exact(ByteWriter& w, double x) { w.f64(x); }

/// Rows [y0, y1) of the plane: each tile row segment with its tile's id (out.tile_ids), each
/// vertex checked against its own bound (row_ids, row y0 first, or the tile's). The exact
/// flags go to out.exact; the reconstructions to recon_rows (row y0 first: out.recon's rows,
/// or a band buffer of a frontend that does not keep them); float planes also give each
/// vertex's integer q to q_rows where it is not null (row y0 first).
template <class T>
void quantize_rows_any(std::span<const T> x, const TileLayout& L, T eb, int64_t y0, int64_t y1,
                       const uint8_t* row_ids, QuantizedPlaneOf<T>& out, const uint8_t* missing, T* recon_rows,
                       int32_t* q_rows = nullptr) {
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x0 = 0; x0 < L.nx; x0 += kTile) {
      const int id = out.tile_ids[size_t(L.tile_of(x0, y))];
      const T step = T(2) * bound[id];
      const int64_t x1 = std::min(L.nx, x0 + kTile);
      const int64_t k0 = y * L.nx + x0, r0 = k0 - y0 * L.nx;
      const uint8_t* ids = row_ids ? row_ids + r0 : nullptr;
      if constexpr (std::is_same_v<T, float>) {  // the same rule, vectorized
        const bool stored = quantize_tiled_run(x.data() + k0, x1 - x0, id, step, bound, ids,
                                               missing ? missing + k0 : nullptr, recon_rows + r0,
                                               out.exact.data() + k0, q_rows ? q_rows + r0 : nullptr);
        for (int64_t i = 0; stored && i < x1 - x0; ++i) {  // stored vertices: listed at their own bound where shorter
          if (!out.exact[k0 + i]) continue;
          const int own = ids ? ids[i] : id;
          out.exact[k0 + i] = list_exact(x[k0 + i], own, bound[own], recon_rows[r0 + i]);
        }
        continue;
      }
      for (int64_t i = 0; i < x1 - x0; ++i) {
        const int64_t k = k0 + i;
        const int own = ids ? ids[i] : id;
        const TiledValue<T> tv = quantize_tiled_vertex(x[k], id, step, bound[own], missing && missing[k]);
        recon_rows[r0 + i] = tv.recon;
        out.exact[k] = tv.exact ? list_exact(x[k], own, bound[own], recon_rows[r0 + i]) : 0;
      }
    }
  }
}

template <class T>
void quantize_plane_any(std::span<const T> x, const TileLayout& L, T eb, std::vector<uint8_t> tile_ids,
                        const uint8_t* vertex_ids, int threads, QuantizedPlaneOf<T>& out, const uint8_t* missing) {
  start_quantized_plane(L, out);
  out.tile_ids = std::move(tile_ids);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t ty = 0; ty < L.tiles_y; ++ty) {
    const int64_t y0 = ty * kTile, y1 = std::min(L.ny, y0 + kTile);
    quantize_rows_any(x, L, eb, y0, y1, vertex_ids ? vertex_ids + y0 * L.nx : nullptr, out, missing,
                      out.recon.data() + y0 * L.nx);
  }
}

/// The integers q of row y of the plane (its tiles' steps; an exact tile's q is 0).
template <class T>
void prequantize_row(const T* row, const TileLayout& L, const T* step_of, const uint8_t* tile_ids, int64_t y,
                     int32_t* q) {
  for (int64_t x0 = 0; x0 < L.nx; x0 += kTile) {
    const int id = tile_ids[size_t(L.tile_of(x0, y))];
    const int64_t x1 = std::min(L.nx, x0 + kTile);
    if (id == 0) {
      for (int64_t xi = x0; xi < x1; ++xi) q[xi] = 0;
    } else if constexpr (std::is_same_v<T, float>) {  // prequantize, vectorized
      for (int64_t xi = x0; xi < x1; ++xi) q[xi] = prequantize_select(row[xi], step_of[id]);
    } else {
      for (int64_t xi = x0; xi < x1; ++xi) q[xi] = prequantize(row[xi], step_of[id]);
    }
  }
}

/// The symbols of row y (first row of its tile row when `first`) from its integers `here`
/// and the previous row's `above`, without missing vertices: tile_lorenzo_code and
/// code_symbol in a form the compiler vectorizes (a tile's first column has no left
/// neighbour; the first row of a tile row no upper one). Escapes (symbol 0) are appended.
void symbol_row(const int32_t* here, const int32_t* above, int64_t nx, int64_t y, bool first, uint16_t* sym,
                std::vector<std::pair<int64_t, int64_t>>& escapes) {
  for (int64_t x0 = 0; x0 < nx; x0 += kTile) {
    const int64_t x1 = std::min(nx, x0 + kTile);
    const int64_t c0 = first ? int64_t(here[x0]) : int64_t(here[x0]) - int64_t(above[x0]);
    sym[x0] = code_symbol(c0);
    if (first) {
      for (int64_t xi = x0 + 1; xi < x1; ++xi) {
        sym[xi] = code_symbol(int64_t(here[xi]) - int64_t(here[xi - 1]));
      }
    } else {
      for (int64_t xi = x0 + 1; xi < x1; ++xi) {
        sym[xi] = code_symbol(int64_t(here[xi]) - int64_t(here[xi - 1]) - int64_t(above[xi]) + int64_t(above[xi - 1]));
      }
    }
  }
  for (int64_t xi = 0; xi < nx; ++xi)
    if (sym[xi] == 0) escapes.emplace_back(y * nx + xi, tile_lorenzo_code(here, above, xi, y));
}

/// The symbols of row y of a tile row whose first row is y0, from its integers `here` and
/// the previous row's `above` (zeros for y == y0, which takes none): a missing vertex's
/// integer is replaced in `here` by missing_vertex_quant's (the rows below predict from it).
/// Escapes (symbol 0) are appended.
template <class T>
void code_row(int32_t* here, const int32_t* above, const TileLayout& L, const T* step_of,
              std::span<const uint8_t> tile_ids, int64_t y, int64_t y0, const uint8_t* missing, uint16_t* symbols,
              std::vector<std::pair<int64_t, int64_t>>& escapes) {
  uint16_t* sym = symbols + y * L.nx;
  const uint8_t* m = missing ? missing + y * L.nx : nullptr;
  if (m && std::find(m, m + L.nx, uint8_t(1)) != m + L.nx) {
    // A row with missing vertices: their integers are predictions, so vertex by vertex.
    for (int64_t xi = 0; xi < L.nx; ++xi) {
      if (m[xi]) here[xi] = missing_vertex_quant(here, above, xi, y, step_of[tile_ids[size_t(L.tile_of(xi, y))]]);
      const int64_t code = tile_lorenzo_code(here, above, xi, y);
      sym[xi] = tiled_symbol(code, m[xi] != 0);
      if (sym[xi] == 0) escapes.emplace_back(y * L.nx + xi, code);
    }
  } else {
    symbol_row(here, above, L.nx, y, y == y0, sym, escapes);
  }
}

template <class T>
void code_steps(T eb, T* step_of) {
  for (int id = 0; id <= kMaxBoundId; ++id) step_of[id] = T(2) * bound_of_id(eb, id);
}

/// The symbols of tile row ty (every vertex, missing ones included: encode_plane drops
/// theirs) and its escapes in index order. Tile rows are independent (Lorenzo stops at tile
/// edges). q is a pure function of (x, tile id), recomputed here rather than stored.
template <class T>
void code_tile_row_any(std::span<const T> x, const TileLayout& L, T eb, std::span<const uint8_t> tile_ids,
                       int64_t ty, const uint8_t* missing, uint16_t* symbols,
                       std::vector<std::pair<int64_t, int64_t>>& escapes) {
  T step_of[kMaxBoundId + 1];
  code_steps(eb, step_of);
  std::vector<int32_t> above(size_t(L.nx)), here(size_t(L.nx));
  const int64_t y0 = ty * kTile, y1 = std::min(L.ny, y0 + kTile);
  for (int64_t y = y0; y < y1; ++y) {
    prequantize_row(x.data() + y * L.nx, L, step_of, tile_ids.data(), y, here.data());
    code_row(here.data(), above.data(), L, step_of, tile_ids, y, y0, missing, symbols, escapes);
    std::swap(above, here);
  }
}

/// The exact list's vertices of tile row ty in index order (flags with all bits or rounded).
void exact_vertices_of_tile_row(const TileLayout& L, const uint8_t* exact, int64_t ty, std::vector<int64_t>& out) {
  const int64_t k0 = ty * kTile * L.nx, k1 = std::min(L.ny, (ty + 1) * kTile) * L.nx;
  int64_t k = k0;
  for (; k + 8 <= k1; k += 8) {  // mostly zero: eight flags at a time
    uint64_t word;
    std::memcpy(&word, exact + k, 8);
    if (word == 0) continue;
    for (int64_t i = k; i < k + 8; ++i)
      if (exact[i]) out.push_back(i);
  }
  for (; k < k1; ++k)
    if (exact[k]) out.push_back(k);
}

template <class T>
PlanePayload encode_plane_any(std::span<const T> x, const TileLayout& L, T eb, QuantizedPlaneOf<T>& p, int threads,
                              const uint8_t* missing) {
  const int64_t n = L.nx * L.ny;
  PlanePayload out;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> escapes;
  if (p.symbols.size() == size_t(n) && p.escapes.size() == size_t(L.tiles_y)) {  // coded by the frontend
    out.symbols = std::move(p.symbols);
    escapes = std::move(p.escapes);
  } else {
    out.symbols.resize(size_t(n));
    escapes.resize(size_t(L.tiles_y));
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t ty = 0; ty < L.tiles_y; ++ty)
      code_tile_row_any(x, L, eb, std::span<const uint8_t>(p.tile_ids), ty, missing, out.symbols.data(),
                        escapes[size_t(ty)]);
  }
  std::vector<std::vector<int64_t>> exact(size_t(L.tiles_y));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t ty = 0; ty < L.tiles_y; ++ty) exact_vertices_of_tile_row(L, p.exact.data(), ty, exact[size_t(ty)]);
  if (missing) {  // a missing vertex's symbol is implied (tiled_symbol): keep the valid ones
    size_t kept = 0;
    for (int64_t k = 0; k < n; ++k)
      if (!missing[k]) out.symbols[kept++] = out.symbols[size_t(k)];
    out.symbols.resize(kept);
  }
  ByteWriter outl, idx, vals;
  int64_t n_out = 0, n_exact = 0;
  for (const auto& e : escapes) n_out += int64_t(e.size());
  for (const auto& e : exact) n_exact += int64_t(e.size());
  outl.varint(uint64_t(n_out));
  int64_t last_o = -1;
  for (const auto& band : escapes) {
    // Within a tile row, escapes were found row by row in index order already.
    for (const auto& [k, code] : band) {
      outl.varint(uint64_t(k - last_o - 1));
      outl.zigzag(code);
      last_o = k;
    }
  }
  idx.varint(uint64_t(n_exact));
  int64_t last_e = -1;
  for (const auto& band : exact) {
    for (int64_t k : band) {
      idx.varint(uint64_t(k - last_e - 1));
      // The original's bits, or its rounding: a float plane's own-bound value (derived from
      // the flag, so its recon may already be released) or a float64 plane's 24-bit one.
      if constexpr (std::is_same_v<T, float>) put_exact(vals, listed_value(x[size_t(k)], p.exact[size_t(k)], eb));
      else put_exact(vals, p.recon[size_t(k)]);
      last_e = k;
    }
  }
  out.outliers = std::move(outl.bytes());
  out.exact_index = std::move(idx.bytes());
  out.exact_values = std::move(vals.bytes());
  return out;
}

template <class T>
Status decode_plane_any(const TileLayout& L, T eb, std::span<const uint8_t> tile_ids,
                        std::span<const uint16_t> symbols, std::span<const int64_t> outlier_index,
                        std::span<const int64_t> outlier_code, std::span<const uint8_t> exact_index,
                        std::span<const uint8_t> exact_values, int threads, std::span<T> out) {
  const int64_t n = L.nx * L.ny;
  if (int64_t(tile_ids.size()) != L.tile_count()) return corrupt_stream("tile bound table has the wrong size");
  for (uint8_t id : tile_ids)
    if (id > kMaxBoundId) return corrupt_stream("tile bound id out of range");
  if (int64_t(symbols.size()) != n) return corrupt_stream("code count does not match the grid");
  if (int64_t(out.size()) != n) return invalid_argument("output plane has the wrong size");
  // kernels/tile_decode.hpp's rule in two passes: every vertex's reconstruction (q out of
  // range is corrupt at once), then the exact list over it; a value that is still not finite
  // sits at a vertex that is not stored exactly (exact values are finite), so it is corrupt.
  // Non-finite reconstructions are rare (values near +-FLT_MAX stored exactly), so the
  // final check only runs when the first pass saw one.
  int bad = 0;
  int64_t nonfinite = 0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) reduction(| : bad) reduction(+ : nonfinite)
  for (int64_t t = 0; t < L.tile_count(); ++t) {
    const int64_t tx = t % L.tiles_x, ty = t / L.tiles_x;
    const int64_t x0 = tx * kTile, y0 = ty * kTile;
    const int64_t x1 = std::min(L.nx, x0 + kTile), y1 = std::min(L.ny, y0 + kTile);
    const T step = T(2) * bound_of_id(eb, tile_ids[size_t(t)]);
    uint64_t row_above[kTile] = {};  // q of the previous row of this tile (wrapping arithmetic)
    auto oit = outlier_index.begin();
    for (int64_t y = y0; y < y1; ++y) {
      uint64_t left = 0, above_left = 0;
      for (int64_t x = x0; x < x1; ++x) {
        const int64_t k = y * L.nx + x;
        int64_t code = int64_t(symbols[size_t(k)]) - kRadius;
        if (symbols[size_t(k)] == 0) {
          oit = std::lower_bound(oit, outlier_index.end(), k);
          code = outlier_code[size_t(oit - outlier_index.begin())];  // parse_outliers: one per escape
        }
        const uint64_t above = row_above[x - x0];
        const uint64_t q = uint64_t(code) + left + above - above_left;
        T r;
        if (!tiled_reconstruction(int64_t(q), step, r)) bad = 1;
        nonfinite += !finite_value(r);
        out[size_t(k)] = r;
        above_left = above;
        row_above[x - x0] = q;
        left = q;
      }
    }
  }
  if (bad) return corrupt_stream("decoded value out of range");
  std::vector<int64_t> exact_at;
  std::vector<T> exact_value;
  FACTZ_RETURN_IF_ERROR(parse_exact(exact_index, exact_values, uint64_t(n), exact_at, exact_value));
  for (size_t e = 0; e < exact_at.size(); ++e) out[size_t(exact_at[e])] = exact_value[e];
  if (nonfinite > 0) {
#pragma omp parallel for schedule(static) num_threads(threads) reduction(| : bad)
    for (int64_t k = 0; k < n; ++k) bad |= !finite_value(out[size_t(k)]);
    if (bad) return corrupt_stream("decoded value out of range");
  }
  return Status::Ok();
}

}  // namespace

template <class T>
void start_quantized_plane(const TileLayout& L, QuantizedPlaneOf<T>& out, bool keep_recon) {
  out.tile_ids.assign(size_t(L.tile_count()), 0);
  // Every element is written by quantize_rows; huge pages before the first touch.
  if (keep_recon) resize_fresh(out.recon, size_t(L.nx * L.ny));
  else BigVector<T>().swap(out.recon);
  resize_fresh(out.exact, size_t(L.nx * L.ny));
}
template void start_quantized_plane(const TileLayout&, QuantizedPlane&, bool);
template void start_quantized_plane(const TileLayout&, QuantizedPlane64&, bool);

void quantize_rows(std::span<const float> x, const TileLayout& L, float eb, int64_t y0, int64_t y1,
                   const uint8_t* row_ids, QuantizedPlane& out, const uint8_t* missing, float* recon_rows,
                   int32_t* q_rows) {
  quantize_rows_any(x, L, eb, y0, y1, row_ids, out, missing, recon_rows ? recon_rows : out.recon.data() + y0 * L.nx,
                    q_rows);
}
void quantize_rows(std::span<const double> x, const TileLayout& L, double eb, int64_t y0, int64_t y1,
                   const uint8_t* row_ids, QuantizedPlane64& out, const uint8_t* missing, double* recon_rows) {
  quantize_rows_any(x, L, eb, y0, y1, row_ids, out, missing, recon_rows ? recon_rows : out.recon.data() + y0 * L.nx);
}

void code_tile_row(std::span<const float> x, const TileLayout& L, float eb, std::span<const uint8_t> tile_ids,
                   int64_t ty, const uint8_t* missing, uint16_t* symbols,
                   std::vector<std::pair<int64_t, int64_t>>& escapes) {
  code_tile_row_any(x, L, eb, tile_ids, ty, missing, symbols, escapes);
}
void code_tile_row(std::span<const double> x, const TileLayout& L, double eb, std::span<const uint8_t> tile_ids,
                   int64_t ty, const uint8_t* missing, uint16_t* symbols,
                   std::vector<std::pair<int64_t, int64_t>>& escapes) {
  code_tile_row_any(x, L, eb, tile_ids, ty, missing, symbols, escapes);
}
void code_tile_row_quantized(int32_t* q_band, const TileLayout& L, float eb, std::span<const uint8_t> tile_ids,
                             int64_t ty, const uint8_t* missing, uint16_t* symbols,
                             std::vector<std::pair<int64_t, int64_t>>& escapes) {
  float step_of[kMaxBoundId + 1];
  code_steps(eb, step_of);
  const int64_t y0 = ty * kTile, y1 = std::min(L.ny, y0 + kTile);
  const std::vector<int32_t> zeros(size_t(L.nx));
  for (int64_t y = y0; y < y1; ++y) {
    int32_t* here = q_band + (y - y0) * L.nx;
    code_row(here, y == y0 ? zeros.data() : here - L.nx, L, step_of, tile_ids, y, y0, missing, symbols, escapes);
  }
}

namespace {

template <class T>
T reconstruction_at_any(std::span<const T> x, const TileLayout& L, T eb, const QuantizedPlaneOf<T>& p, int64_t k) {
  if (!p.recon.empty()) return p.recon[size_t(k)];
  // Listed: its listed value (a float64 plane's kStoredRounded keeps recon, so is not here).
  if (p.exact[size_t(k)]) return listed_value(x[size_t(k)], p.exact[size_t(k)], eb);
  const int id = p.tile_ids[size_t(L.tile_of(k % L.nx, k / L.nx))];
  const T step = T(2) * bound_of_id(eb, id);
  return reconstruct(id > 0 ? prequantize(x[size_t(k)], step) : 0, step);
}

template <class T>
void reconstruction_row_any(std::span<const T> x, const TileLayout& L, T eb, const QuantizedPlaneOf<T>& p, int64_t y,
                            T* out) {
  const int64_t k0 = y * L.nx;
  if (!p.recon.empty()) {
    std::copy(p.recon.data() + k0, p.recon.data() + k0 + L.nx, out);
    return;
  }
  T step_of[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) step_of[id] = T(2) * bound_of_id(eb, id);
  const T* row = x.data() + k0;
  const uint8_t* ex = p.exact.data() + k0;
  // The row's integers as the codes take them (prequantize_row), then float(q) * step.
  thread_local std::vector<int32_t> q;
  q.resize(size_t(L.nx));
  prequantize_row(row, L, step_of, p.tile_ids.data(), y, q.data());
  bool listed = false;  // a vertex listed at its own bound (derived after the loop)
  for (int64_t x0 = 0; x0 < L.nx; x0 += kTile) {
    const T step = step_of[p.tile_ids[size_t(L.tile_of(x0, y))]];
    const int64_t x1 = std::min(L.nx, x0 + kTile);
    for (int64_t xi = x0; xi < x1; ++xi) {
      out[xi] = ex[xi] ? row[xi] : reconstruct(q[size_t(xi)], step);
      listed |= ex[xi] >= kExactListOwnBound;
    }
  }
  if (!listed) return;
  for (int64_t xi = 0; xi < L.nx; ++xi)
    if (ex[xi] >= kExactListOwnBound) out[xi] = listed_value(row[xi], ex[xi], eb);
}

}  // namespace

float reconstruction_at(std::span<const float> x, const TileLayout& L, float eb, const QuantizedPlane& p, int64_t k) {
  return reconstruction_at_any(x, L, eb, p, k);
}
double reconstruction_at(std::span<const double> x, const TileLayout& L, double eb, const QuantizedPlane64& p,
                         int64_t k) {
  return reconstruction_at_any(x, L, eb, p, k);
}
void reconstruction_row(std::span<const float> x, const TileLayout& L, float eb, const QuantizedPlane& p, int64_t y,
                        float* out) {
  reconstruction_row_any(x, L, eb, p, y, out);
}
void reconstruction_row(std::span<const double> x, const TileLayout& L, double eb, const QuantizedPlane64& p,
                        int64_t y, double* out) {
  reconstruction_row_any(x, L, eb, p, y, out);
}

void quantize_plane(std::span<const float> x, const TileLayout& L, float eb, std::vector<uint8_t> tile_ids,
                    const uint8_t* vertex_ids, int threads, QuantizedPlane& out, const uint8_t* missing) {
  quantize_plane_any(x, L, eb, std::move(tile_ids), vertex_ids, threads, out, missing);
}
void quantize_plane(std::span<const double> x, const TileLayout& L, double eb, std::vector<uint8_t> tile_ids,
                    const uint8_t* vertex_ids, int threads, QuantizedPlane64& out, const uint8_t* missing) {
  quantize_plane_any(x, L, eb, std::move(tile_ids), vertex_ids, threads, out, missing);
}

PlanePayload encode_plane(std::span<const float> x, const TileLayout& L, float eb, QuantizedPlane& p, int threads,
                          const uint8_t* missing) {
  return encode_plane_any(x, L, eb, p, threads, missing);
}
PlanePayload encode_plane(std::span<const double> x, const TileLayout& L, double eb, QuantizedPlane64& p, int threads,
                          const uint8_t* missing) {
  return encode_plane_any(x, L, eb, p, threads, missing);
}

Status decode_plane(const TileLayout& L, float eb, std::span<const uint8_t> tile_ids, std::span<const uint16_t> symbols,
                    std::span<const int64_t> outlier_index, std::span<const int64_t> outlier_code,
                    std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, int threads,
                    std::span<float> out) {
  return decode_plane_any(L, eb, tile_ids, symbols, outlier_index, outlier_code, exact_index, exact_values, threads,
                          out);
}
Status decode_plane(const TileLayout& L, double eb, std::span<const uint8_t> tile_ids,
                    std::span<const uint16_t> symbols, std::span<const int64_t> outlier_index,
                    std::span<const int64_t> outlier_code, std::span<const uint8_t> exact_index,
                    std::span<const uint8_t> exact_values, int threads, std::span<double> out) {
  return decode_plane_any(L, eb, tile_ids, symbols, outlier_index, outlier_code, exact_index, exact_values, threads,
                          out);
}

namespace {

/// The bounds of the triangles of one cell row, component by component (T0's relative
/// bounds of u and v and its cap, the same for T1) and the cells' free bits: separate
/// arrays, so that the loops filling and folding them take four floats at a time.
struct CellRowBounds {
  std::vector<float> u0, v0, c0, u1, v1, c1;
  std::vector<uint8_t> bits;
  explicit CellRowBounds(size_t cells) : u0(cells), v0(cells), c0(cells), u1(cells), v1(cells), c1(cells), bits(cells) {}
  void swap(CellRowBounds& o) noexcept {
    u0.swap(o.u0), v0.swap(o.v0), c0.swap(o.c0), u1.swap(o.u1), v1.swap(o.v1), c1.swap(o.c1), bits.swap(o.bits);
  }
};

/// The fast rule of cell_row_bounds for the cells of one row: the corners' rows a/b
/// (ua, va) and c/d (uc, vc), cw cells. Restrict parameters (not locals) are what lets GCC
/// vectorize a loop with this many arrays.
void cell_row_one_sided(const float* __restrict ua, const float* __restrict uc, const float* __restrict va,
                        const float* __restrict vc, int64_t cw, float* __restrict ou0, float* __restrict ov0,
                        float* __restrict oc0, float* __restrict ou1, float* __restrict ov1, float* __restrict oc1,
                        uint8_t* __restrict bits) {
  const float one_sign = round_down(kSafetyFactor), free_bound = float(kFreeRelativeBound);
  // bits[j]: bit 0 / 1 = triangle T0 / T1 proven free, bit 2 = the cell needs the full rule.
  for (int64_t j = 0; j < cw; ++j) {
    const float a_u = ua[j], b_u = ua[j + 1], c_u = uc[j], d_u = uc[j + 1];
    const float a_v = va[j], b_v = va[j + 1], c_v = vc[j], d_v = vc[j + 1];
    // T0 = (a, c, d), T1 = (a, b, d): one strict sign per component, smallest magnitudes.
    const bool u0 = ((a_u > 0.0f) & (c_u > 0.0f) & (d_u > 0.0f)) | ((a_u < 0.0f) & (c_u < 0.0f) & (d_u < 0.0f));
    const bool u1 = ((a_u > 0.0f) & (b_u > 0.0f) & (d_u > 0.0f)) | ((a_u < 0.0f) & (b_u < 0.0f) & (d_u < 0.0f));
    const bool v0 = ((a_v > 0.0f) & (c_v > 0.0f) & (d_v > 0.0f)) | ((a_v < 0.0f) & (c_v < 0.0f) & (d_v < 0.0f));
    const bool v1 = ((a_v > 0.0f) & (b_v > 0.0f) & (d_v > 0.0f)) | ((a_v < 0.0f) & (b_v < 0.0f) & (d_v < 0.0f));
    const float aau = std::fabs(a_u), abu = std::fabs(b_u), acu = std::fabs(c_u), adu = std::fabs(d_u);
    const float aav = std::fabs(a_v), abv = std::fabs(b_v), acv = std::fabs(c_v), adv = std::fabs(d_v);
    const float ad_u = adu < aau ? adu : aau, ad_v = adv < aav ? adv : aav;
    const float su0 = acu < ad_u ? acu : ad_u, su1 = abu < ad_u ? abu : ad_u;
    const float sv0 = acv < ad_v ? acv : ad_v, sv1 = abv < ad_v ? abv : ad_v;
    const bool pick_u0 = u0 & (!v0 | (su0 >= sv0)), pick_u1 = u1 & (!v1 | (su1 >= sv1));
    ou0[j] = pick_u0 ? one_sign : free_bound;
    ov0[j] = pick_u0 ? free_bound : one_sign;
    oc0[j] = INFINITY;
    ou1[j] = pick_u1 ? one_sign : free_bound;
    ov1[j] = pick_u1 ? free_bound : one_sign;
    oc1[j] = INFINITY;
    const bool full = !(u0 | v0) | !(u1 | v1);
    bits[j] = uint8_t(full ? 4 : 3);
  }
}

/// The bounds of the triangles of cell row i (cells j in [0, nx - 1)) into `r`. See
/// band_vertex_bounds.
void cell_row_bounds(const float* u, const float* v, const uint8_t* missing, int64_t nx, int64_t i, float eb,
                     CellRowBounds& r) {
  const int64_t cw = nx - 1;
  cell_row_one_sided(u + i * nx, u + (i + 1) * nx, v + i * nx, v + (i + 1) * nx, cw, r.u0.data(), r.v0.data(),
                     r.c0.data(), r.u1.data(), r.v1.data(), r.c1.data(), r.bits.data());
  uint8_t* bits = r.bits.data();
  if (missing) {
    const uint8_t* ma = missing + i * nx;
    for (int64_t j = 0; j < cw; ++j)
      bits[j] = uint8_t(bits[j] | ((ma[j] | ma[j + 1] | ma[j + nx] | ma[j + nx + 1]) ? 4 : 0));
  }
  for (int64_t j = 0; j < cw; ++j) {
    if (!(bits[j] & 4)) continue;
    TriangleBounds<float> tb[2];
    uint8_t free_bits;
    cell_block_bounds_on_mesh(u, v, missing, nx, i, j, eb, tb, free_bits);
    r.u0[size_t(j)] = tb[0].xi_u, r.v0[size_t(j)] = tb[0].xi_v, r.c0[size_t(j)] = tb[0].cap;
    r.u1[size_t(j)] = tb[1].xi_u, r.v1[size_t(j)] = tb[1].xi_v, r.c1[size_t(j)] = tb[1].cap;
    bits[j] = free_bits;
  }
}

/// r = min(r, t) over n vertices for each relative bound and the cap (std::min's choice: t
/// when smaller), triangle values tu / tv / tc.
inline void fold_min(float* __restrict ru, float* __restrict rv, float* __restrict rc, const float* __restrict tu,
                     const float* __restrict tv, const float* __restrict tc, int64_t n) {
  for (int64_t x = 0; x < n; ++x) {
    ru[x] = tu[x] < ru[x] ? tu[x] : ru[x];
    rv[x] = tv[x] < rv[x] ? tv[x] : rv[x];
    rc[x] = tc[x] < rc[x] ? tc[x] : rc[x];
  }
}

}  // namespace

void band_vertex_ids(const float* x, const float* r, const float* cap, int64_t n, float eb, bool free_grid,
                     uint8_t* ids) {
  if (free_grid || !(eb > 0.0f)) {
    for (int64_t k = 0; k < n; ++k) ids[k] = uint8_t(vertex_bound_id(eb, r[k], cap[k], x[k], free_grid));
    return;
  }
  // vertex_bound_id's bound min(r |x|, eb, cap) is eb itself (id kMaxBoundId) where both
  // r |x| and cap reach eb: decided for every vertex in one branch-free loop; the others
  // (and NaN) take vertex_bound_id.
  constexpr uint8_t kOther = 0xff;
  const double e = double(eb);
  for (int64_t k = 0; k < n; ++k) {
    const bool full = (double(r[k]) * std::fabs(double(x[k])) >= e) & (double(cap[k]) >= e);
    ids[k] = full ? uint8_t(kMaxBoundId) : kOther;
  }
  for (int64_t k = 0; k < n; ++k)
    if (ids[k] == kOther) ids[k] = uint8_t(vertex_bound_id(eb, r[k], cap[k], x[k], false));
}

void band_vertex_bounds(const float* u, const float* v, const uint8_t* missing, int64_t nx, int64_t ny, int64_t y0,
                        int64_t y1, float eb, float* ru, float* rv, float* rc, uint8_t* cp_rows) {
  const int64_t cw = nx - 1;
  // Two cell rows of triangle bounds: the row above the vertex row (prev) and its own (cur).
  CellRowBounds prev{size_t(cw)}, cur{size_t(cw)};
  if (y0 > 0) cell_row_bounds(u, v, missing, nx, y0 - 1, eb, prev);
  const float free_bound = float(kFreeRelativeBound);
  for (int64_t y = y0; y < y1; ++y) {
    const bool below = y < ny - 1, above = y > 0;  // cell rows y and y - 1 exist
    if (below) {
      cell_row_bounds(u, v, missing, nx, y, eb, cur);
      if (cw > 0) std::memcpy(cp_rows + (y - y0) * cw, cur.bits.data(), size_t(cw));  // a 1-wide grid has no cells
    }
    float* bu = ru + (y - y0) * nx;
    float* bv = rv + (y - y0) * nx;
    float* bc = rc + (y - y0) * nx;
    for (int64_t x = 0; x < nx; ++x) {
      bu[x] = free_bound;
      bv[x] = free_bound;
      bc[x] = INFINITY;
    }
    // Vertex (y, x) is corner a of cell (y, x) (T0, T1), b of cell (y, x - 1) (T1), c of
    // cell (y - 1, x) (T0) and d of cell (y - 1, x - 1) (T0, T1): the order of block_mode's
    // fold does not matter (min of values without NaN); kept as it was, one pass per term.
    if (below) {
      fold_min(bu, bv, bc, cur.u0.data(), cur.v0.data(), cur.c0.data(), cw);
      fold_min(bu, bv, bc, cur.u1.data(), cur.v1.data(), cur.c1.data(), cw);
      fold_min(bu + 1, bv + 1, bc + 1, cur.u1.data(), cur.v1.data(), cur.c1.data(), cw);
    }
    if (above) {
      fold_min(bu, bv, bc, prev.u0.data(), prev.v0.data(), prev.c0.data(), cw);
      fold_min(bu + 1, bv + 1, bc + 1, prev.u0.data(), prev.v0.data(), prev.c0.data(), cw);
      fold_min(bu + 1, bv + 1, bc + 1, prev.u1.data(), prev.v1.data(), prev.c1.data(), cw);
    }
    if (below) prev.swap(cur);
  }
}

}  // namespace factz::detail
