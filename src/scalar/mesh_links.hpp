// The link of each vertex in the mesh (docs/toposz.md, "Algorithm" step 1): which valid
// neighbours lie above it in (value, index) order and which below, how many connected
// components each part has, and from that whether the vertex is critical in the join or
// the split sweep. Shared by the contour tree's classification pass and its sweeps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scalar/contour_tree_core.hpp"
#include "scalar/grid.hpp"

namespace factz::detail {

/// The link of a valid vertex as one word: its valid neighbours above it in (value, index)
/// order (the upper link mask over the neighbour offsets of Neighbourhood) | those below
/// << 16. T: the field's value type (float or double), compared as such.
template <class T>
struct LinkClassifierOf {
  std::span<const T> f;
  ScalarGrid g;
  Neighbourhood nb;
  std::span<const uint8_t> missing;  ///< empty, or nonzero per missing vertex

  /// The link of v at (x, y, z); `interior`: every neighbour is in the grid.
  uint32_t word(int64_t v, int64_t x, int64_t y, int64_t z, bool interior) const {
    const bool masked = !missing.empty();
    const T fv = f[size_t(v)];
    uint32_t up = 0, low = 0;
    for (int k = 0; k < nb.count; ++k) {
      if (!interior) {
        const int64_t xx = x + nb.dx[k], yy = y + nb.dy[k], zz = z + nb.dz[k];
        if (xx < 0 || xx >= g.nx || yy < 0 || yy >= g.ny || zz < 0 || zz >= g.nz) continue;
      }
      const int64_t w = v + nb.offset[k];
      if (masked && missing[size_t(w)]) continue;
      if (sos_less(fv, v, f[size_t(w)], w)) up |= 1u << k;
      else low |= 1u << k;
    }
    return up | low << 16;
  }
  uint32_t word(int64_t v) const {
    const int64_t x = v % g.nx, t = v / g.nx, y = t % g.ny, z = t / g.ny;
    return word(v, x, y, z, false);
  }
};

using LinkClassifier = LinkClassifierOf<float>;

/// Per link mask (of the 6 or 14 neighbour offsets of `g`'s dimension) its number of
/// connected components: 0 at an extremum, 1 at a regular vertex, more at a saddle.
const uint8_t* link_table(const ScalarGrid& g);

/// The kind of vertex v's link under `lc`: the number of connected components of its lower
/// link | of its upper link << 8 (`table`: link_table(lc.g)); kRegularLink for a regular
/// vertex, anything else for a critical one.
inline constexpr uint16_t kRegularLink = 1 | 1 << 8;
template <class T>
inline uint16_t link_kind(const LinkClassifierOf<T>& lc, const uint8_t* table, int64_t v) {
  const uint32_t w = lc.word(v);
  return uint16_t(table[w >> 16] | table[w & 0xFFFFu] << 8);
}

/// link_kind of every valid vertex of `values` on grid `g`; 0 for a missing vertex.
template <class T>
std::vector<uint16_t> link_kinds(const ScalarGrid& g, std::span<const uint8_t> missing, std::span<const T> values) {
  const LinkClassifierOf<T> lc{values, g, Neighbourhood(g), missing};
  const uint8_t* table = link_table(g);
  std::vector<uint16_t> kinds(values.size(), 0);
  for (int64_t v = 0; v < int64_t(values.size()); ++v)
    if (missing.empty() || !missing[size_t(v)]) kinds[size_t(v)] = link_kind(lc, table, v);
  return kinds;
}

/// One pass in grid order over the valid vertices (parallel, any thread count gives the
/// same result): a vertex whose upper link is connected (regular in the join sweep) gets
/// its first upper neighbour as union-find parent in work.parent[0], likewise below in
/// work.parent[1] for the split sweep; the other vertices' parents are left for the sweeps.
/// `words` (may be null) receives every valid vertex's link; else `critical` receives the
/// keys (vertex_key) of the vertices critical in either sweep, by increasing index.
/// Instantiated for float and double fields (keys: VertexKeyOf<T>).
template <class T>
void classify_links(const LinkClassifierOf<T>& lc, int threads, uint32_t* words, CtWorkspace& work,
                    BigVector<VertexKeyOf<T>>& critical);

}  // namespace factz::detail
