// Brute-force contour tree for tiny grids, independent of the union-find algorithm: for
// every level between two consecutive vertices (in (value, index) order) the contours are
// the connected components of the edges the level crosses, two crossing edges being
// connected when they lie in one simplex (triangle or tetrahedron) of the Freudenthal
// triangulation (minus every simplex touching a missing vertex). A vertex connects the
// contours just below it that touch it to the contours just above it that touch it;
// contours that do not touch it carry over. The pairs and simplified merge trees have their
// own reference (merge_tree_reference.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "factz/contour_tree.hpp"

namespace factz::testing {

struct RefTree {
  std::vector<std::tuple<int64_t, int, int>> nodes;  // vertex, up-degree, down-degree (sorted)
  std::vector<CtArc> arcs;                           // sorted
};

inline std::vector<std::vector<int64_t>> freudenthal_simplices(int64_t nx, int64_t ny, int64_t nz) {
  std::vector<std::vector<int64_t>> s;
  auto id = [&](int64_t x, int64_t y, int64_t z) { return (z * ny + y) * nx + x; };
  if (nz == 1) {
    for (int64_t y = 0; y + 1 < ny; ++y)
      for (int64_t x = 0; x + 1 < nx; ++x) {
        s.push_back({id(x, y, 0), id(x, y + 1, 0), id(x + 1, y + 1, 0)});
        s.push_back({id(x, y, 0), id(x + 1, y, 0), id(x + 1, y + 1, 0)});
      }
    // Degenerate grids (one row or column): the edges alone.
    if (ny == 1)
      for (int64_t x = 0; x + 1 < nx; ++x) s.push_back({id(x, 0, 0), id(x + 1, 0, 0)});
    if (nx == 1)
      for (int64_t y = 0; y + 1 < ny; ++y) s.push_back({id(0, y, 0), id(0, y + 1, 0)});
    return s;
  }
  std::array<int, 3> axes = {0, 1, 2};
  for (int64_t z = 0; z + 1 < nz; ++z)
    for (int64_t y = 0; y + 1 < ny; ++y)
      for (int64_t x = 0; x + 1 < nx; ++x) {
        std::sort(axes.begin(), axes.end());
        do {  // a tetrahedron per monotone path from (x,y,z) to (x+1,y+1,z+1)
          int64_t p[3] = {x, y, z};
          std::vector<int64_t> t = {id(p[0], p[1], p[2])};
          for (int a : axes) {
            ++p[a];
            t.push_back(id(p[0], p[1], p[2]));
          }
          s.push_back(t);
        } while (std::next_permutation(axes.begin(), axes.end()));
      }
  return s;  // (grids with nx, ny or nz == 1 in 3D are not used by the tests)
}

/// The simplices of the mesh of a masked grid: every simplex of the triangulation with its
/// missing vertices dropped (a face of it with only valid vertices), of two vertices or more.
inline std::vector<std::vector<int64_t>> masked_simplices(int64_t nx, int64_t ny, int64_t nz,
                                                          const std::vector<uint8_t>& missing) {
  auto all = freudenthal_simplices(nx, ny, nz);
  if (missing.empty()) return all;
  std::vector<std::vector<int64_t>> out;
  for (const auto& s : all) {
    std::vector<int64_t> kept;
    for (int64_t v : s)
      if (!missing[size_t(v)]) kept.push_back(v);
    if (kept.size() >= 2) out.push_back(kept);
  }
  return out;
}

template <class T>  // float or double: vertices ordered in the field's own type
inline RefTree reference_contour_tree(const std::vector<T>& f, int64_t nx, int64_t ny, int64_t nz,
                                      const std::vector<uint8_t>& missing = {}) {
  std::vector<int64_t> order;
  for (int64_t v = 0; v < nx * ny * nz; ++v)
    if (missing.empty() || !missing[size_t(v)]) order.push_back(v);
  const int64_t n = int64_t(order.size());  // the valid vertices, swept in (value, index) order
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return f[size_t(a)] < f[size_t(b)] || (f[size_t(a)] == f[size_t(b)] && a < b);
  });
  std::vector<int64_t> rank(size_t(nx * ny * nz), -1);
  for (int64_t k = 0; k < n; ++k) rank[size_t(order[size_t(k)])] = k;
  const auto simplices = masked_simplices(nx, ny, nz, missing);
  std::map<std::pair<int64_t, int64_t>, int> edge_id;
  std::vector<std::pair<int64_t, int64_t>> edges;
  std::vector<std::vector<int>> simplex_edges;
  for (const auto& s : simplices) {
    std::vector<int> es;
    for (size_t i = 0; i < s.size(); ++i)
      for (size_t j = i + 1; j < s.size(); ++j) {
        auto key = std::minmax(s[i], s[j]);
        auto it = edge_id.find(key);
        if (it == edge_id.end()) {
          it = edge_id.emplace(key, int(edges.size())).first;
          edges.push_back(key);
        }
        es.push_back(it->second);
      }
    simplex_edges.push_back(es);
  }
  const int ne = int(edges.size());
  std::vector<std::pair<int64_t, int64_t>> ct_edges;  // (lower, upper) vertices
  std::vector<int> prev_label(static_cast<size_t>(ne), -1);
  std::vector<int64_t> prev_origin;
  for (int64_t k = 0; k + 1 < n; ++k) {  // level between rank k and k + 1
    std::vector<int> parent(static_cast<size_t>(ne));
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int x) {
      while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
      return x;
    };
    auto crosses = [&](int e) {
      const int64_t a = rank[size_t(edges[size_t(e)].first)], b = rank[size_t(edges[size_t(e)].second)];
      return std::min(a, b) <= k && std::max(a, b) > k;
    };
    for (const auto& es : simplex_edges) {
      int first = -1;
      for (int e : es)
        if (crosses(e)) {
          if (first < 0) first = e;
          else parent[size_t(find(e))] = find(first);
        }
    }
    // Label the components; find each one's origin vertex.
    std::vector<int> label(static_cast<size_t>(ne), -1);
    std::vector<int64_t> origin;
    std::map<int, int> root_label;
    const int64_t vk = order[size_t(k)];
    for (int e = 0; e < ne; ++e) {
      if (!crosses(e)) continue;
      auto [it, fresh] = root_label.emplace(find(e), int(origin.size()));
      if (fresh) origin.push_back(-1);
      label[size_t(e)] = it->second;
    }
    for (int e = 0; e < ne; ++e) {
      if (label[size_t(e)] < 0) continue;
      int64_t& o = origin[size_t(label[size_t(e)])];
      if (edges[size_t(e)].first == vk || edges[size_t(e)].second == vk) o = vk;
    }
    for (int e = 0; e < ne; ++e) {
      if (label[size_t(e)] < 0 || origin[size_t(label[size_t(e)])] >= 0) continue;
      origin[size_t(label[size_t(e)])] = prev_origin[size_t(prev_label[size_t(e)])];  // carried over
    }
    // Vertex vk: contours just below it (level k - 1) that touch it end at it.
    if (k > 0) {
      std::set<int> below;
      for (int e = 0; e < ne; ++e)
        if (prev_label[size_t(e)] >= 0 && (edges[size_t(e)].first == vk || edges[size_t(e)].second == vk))
          below.insert(prev_label[size_t(e)]);
      for (int c : below) ct_edges.push_back({prev_origin[size_t(c)], vk});
    }
    prev_label = label;
    prev_origin = origin;
  }
  if (n > 1) {  // the last vertex closes the contours that touch it (a tree's highest vertex)
    const int64_t vk = order[size_t(n - 1)];
    std::set<int> below;
    for (int e = 0; e < ne; ++e)
      if (prev_label[size_t(e)] >= 0 && (edges[size_t(e)].first == vk || edges[size_t(e)].second == vk))
        below.insert(prev_label[size_t(e)]);
    for (int c : below) ct_edges.push_back({prev_origin[size_t(c)], vk});
  }
  // Reduce to critical nodes and arcs.
  const size_t all = size_t(nx * ny * nz);
  std::vector<int> up(all, 0), down(all, 0);
  std::vector<std::vector<int64_t>> ups(all);
  for (auto [a, b] : ct_edges) {
    ++up[size_t(a)];
    ++down[size_t(b)];
    ups[size_t(a)].push_back(b);
  }
  RefTree t;
  auto critical = [&](int64_t v) { return up[size_t(v)] != 1 || down[size_t(v)] != 1; };
  for (int64_t v = 0; v < int64_t(all); ++v) {
    if (rank[size_t(v)] < 0 || !critical(v)) continue;
    t.nodes.emplace_back(v, up[size_t(v)], down[size_t(v)]);
    for (int64_t u : ups[size_t(v)]) {
      while (!critical(u)) u = ups[size_t(u)][0];
      t.arcs.push_back({v, u});
    }
  }
  std::sort(t.arcs.begin(), t.arcs.end(),
            [](const CtArc& a, const CtArc& b) { return a.lower != b.lower ? a.lower < b.lower : a.upper < b.upper; });
  return t;
}

}  // namespace factz::testing
