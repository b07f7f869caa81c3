// The link of each vertex in the mesh (mesh_links.hpp).
//
// The mesh is the Freudenthal triangulation restricted to valid vertices, a flag complex:
// the link of v is the valid neighbours and the link edges between them (neighbour pairs
// whose offset difference is an offset). Upper neighbours in one link component are
// connected by edges swept before the vertex, so a sweep needs only one of them.
#include "scalar/mesh_links.hpp"

#include <algorithm>
#include <vector>

namespace factz::detail {
namespace {

// The connected components of the link subset `mask`; the number depends on the mask
// alone, so a table holds it for every mask.
int link_components(uint16_t mask, const uint16_t* adjacent) {
  int count = 0;
  while (mask != 0) {
    uint16_t comp = uint16_t(mask & (~mask + 1)), frontier = comp;
    while (frontier != 0) {
      const int b = __builtin_ctz(frontier);
      frontier = uint16_t(frontier & (frontier - 1));
      const uint16_t grow = uint16_t(adjacent[b] & mask & ~comp);
      comp = uint16_t(comp | grow);
      frontier = uint16_t(frontier | grow);
    }
    mask = uint16_t(mask & ~comp);
    ++count;
  }
  return count;
}

std::vector<uint8_t> link_component_table(const Neighbourhood& nb) {
  uint16_t adjacent[14] = {};  // link edges: offsets whose difference is an offset
  for (int a = 0; a < nb.count; ++a)
    for (int b = 0; b < nb.count; ++b)
      for (int c = 0; c < nb.count; ++c)
        if (nb.dx[b] - nb.dx[a] == nb.dx[c] && nb.dy[b] - nb.dy[a] == nb.dy[c] && nb.dz[b] - nb.dz[a] == nb.dz[c])
          adjacent[a] = uint16_t(adjacent[a] | (1u << b));
  std::vector<uint8_t> table(size_t(1) << nb.count);
  for (size_t mask = 0; mask < table.size(); ++mask) table[mask] = uint8_t(link_components(uint16_t(mask), adjacent));
  return table;
}

// The upper link masks of the vertices x = 1 .. nx - 2 of a row whose neighbours are all
// in the grid and valid, without a branch (vectorized): w = v + offset lies above v in
// (value, index) order iff f(w) > f(v), or f(w) == f(v) and the offset is positive.
template <class T>
void upper_masks_of_row(const T* row, const Neighbourhood& nb, int64_t nx, uint16_t* up) {
  for (int64_t x = 1; x + 1 < nx; ++x) up[x] = 0;
  for (int k = 0; k < nb.count; ++k) {
    const T* w = row + nb.offset[k];
    const uint16_t bit = uint16_t(1u << k);
    if (nb.offset[k] > 0) {
      for (int64_t x = 1; x + 1 < nx; ++x) up[x] = uint16_t(up[x] | (w[x] >= row[x] ? bit : 0));
    } else {
      for (int64_t x = 1; x + 1 < nx; ++x) up[x] = uint16_t(up[x] | (w[x] > row[x] ? bit : 0));
    }
  }
}

}  // namespace

const uint8_t* link_table(const ScalarGrid& g) {
  static const std::vector<uint8_t> two = link_component_table(Neighbourhood(ScalarGrid{3, 3, 1}));
  static const std::vector<uint8_t> three = link_component_table(Neighbourhood(ScalarGrid{3, 3, 3}));
  return g.nz > 1 ? three.data() : two.data();
}

// The parent given to a regular vertex is in its component whenever the vertex is (above
// it, and the upper link is connected), and every chain of such parents climbs to a vertex
// critical in that sweep, so no sweep needs to visit a regular vertex (contour_tree.cpp).
template <class T>
void classify_links(const LinkClassifierOf<T>& lc, int threads, uint32_t* words, CtWorkspace& work,
                    BigVector<VertexKeyOf<T>>& critical) {
  const uint8_t* table = link_table(lc.g);
  const ScalarGrid& g = lc.g;
  const bool masked = !lc.missing.empty(), collect = words == nullptr;
  const int64_t rows = g.ny * g.nz;
  const int parts = int(std::clamp<int64_t>(rows, 1, std::max(1, threads)));
  const uint32_t all = (1u << lc.nb.count) - 1;
  std::vector<std::vector<VertexKeyOf<T>>> found(static_cast<size_t>(parts));
  uint32_t* join_parent = work.parent[0].data();
  uint32_t* split_parent = work.parent[1].data();
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    std::vector<uint16_t> row_up(size_t(g.nx));
    for (int64_t row = rows * p / parts; row < rows * (p + 1) / parts; ++row) {
      const int64_t y = row % g.ny, z = row / g.ny;
      const bool inner_row = y > 0 && y + 1 < g.ny && (g.nz == 1 || (z > 0 && z + 1 < g.nz));
      const bool fast = inner_row && !masked;
      if (fast) upper_masks_of_row(lc.f.data() + row * g.nx, lc.nb, g.nx, row_up.data());
      for (int64_t x = 0, v = row * g.nx; x < g.nx; ++x, ++v) {
        if (masked && lc.missing[size_t(v)]) continue;
        const bool interior = inner_row && x > 0 && x + 1 < g.nx;
        const uint32_t word = fast && interior ? row_up[size_t(x)] | (all & ~uint32_t(row_up[size_t(x)])) << 16
                                               : lc.word(v, x, y, z, interior);
        const uint32_t up = word & 0xFFFFu, low = word >> 16;
        const bool join_regular = table[up] == 1, split_regular = table[low] == 1;
        if (join_regular) join_parent[v] = uint32_t(v + lc.nb.offset[__builtin_ctz(up)]);
        if (split_regular) split_parent[v] = uint32_t(v + lc.nb.offset[__builtin_ctz(low)]);
        if (words) words[v] = word;
        else if (!join_regular || !split_regular) found[size_t(p)].push_back(vertex_key(lc.f[size_t(v)], v));
      }
    }
  }
  if (!collect) return;
  size_t total = 0;
  for (const auto& list : found) total += list.size();
  critical.resize(total);
  total = 0;
  for (const auto& list : found) {
    std::copy(list.begin(), list.end(), critical.begin() + int64_t(total));
    total += list.size();
  }
}

template void classify_links(const LinkClassifierOf<float>&, int, uint32_t*, CtWorkspace&, BigVector<uint64_t>&);
template void classify_links(const LinkClassifierOf<double>&, int, uint32_t*, CtWorkspace&,
                             BigVector<VertexKey64>&);

}  // namespace factz::detail
