// Brute-force persistence pairs, nodes and simplified merge trees for tiny (masked) grids,
// straight from the definitions (docs/toposz.md), with every connectivity question answered
// by a fresh breadth-first search over the mesh edges between valid vertices: no
// union-find and no sweep state, so nothing is shared with src/scalar/contour_tree.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "ct_reference.hpp"

namespace factz::testing {

/// Persistence pairs, nodes and simplified merge trees of a (masked) grid by brute force.
struct RefMergeTrees {
  std::vector<std::tuple<int64_t, int64_t>> pairs;    // (extremum, saddle) that stay, with the root pairs (sorted)
  std::vector<std::tuple<int64_t, int, int>> nodes;   // vertex, up-degree, down-degree (sorted)
  std::vector<CtArc> join_arcs, split_arcs;           // sorted
  int64_t components = 0;
};

/// `p_abs`: pairs with |f(extremum) - f(saddle)| below it are removed.
template <class T>  // float or double: vertices ordered in the field's own type
inline RefMergeTrees reference_merge_trees(const std::vector<T>& f, int64_t nx, int64_t ny, int64_t nz,
                                           double p_abs, const std::vector<uint8_t>& missing = {}) {
  const size_t all = size_t(nx * ny * nz);
  auto valid = [&](int64_t v) { return missing.empty() || !missing[size_t(v)]; };
  std::vector<std::vector<int64_t>> adj(all);
  for (const auto& s : masked_simplices(nx, ny, nz, missing))
    for (size_t i = 0; i < s.size(); ++i)
      for (size_t j = 0; j < s.size(); ++j)
        if (i != j) adj[size_t(s[i])].push_back(s[j]);
  std::vector<int64_t> order;
  for (int64_t v = 0; v < int64_t(all); ++v)
    if (valid(v)) order.push_back(v);
  auto below = [&](int64_t a, int64_t b) { return f[size_t(a)] < f[size_t(b)] || (f[size_t(a)] == f[size_t(b)] && a < b); };
  std::sort(order.begin(), order.end(), below);
  const int64_t n = int64_t(order.size());
  std::vector<int64_t> rank(all, -1);
  for (int64_t k = 0; k < n; ++k) rank[size_t(order[size_t(k)])] = k;
  // Component labels of the valid vertices whose rank passes `in`, by breadth-first search.
  auto components_of = [&](auto in) {
    std::vector<int64_t> label(all, -1);
    int64_t next = 0;
    for (int64_t s : order) {
      if (!in(rank[size_t(s)]) || label[size_t(s)] >= 0) continue;
      std::vector<int64_t> queue = {s};
      label[size_t(s)] = next;
      for (size_t h = 0; h < queue.size(); ++h)
        for (int64_t w : adj[size_t(queue[h])])
          if (label[size_t(w)] < 0 && in(rank[size_t(w)])) {
            label[size_t(w)] = next;
            queue.push_back(w);
          }
      ++next;
    }
    return label;
  };
  RefMergeTrees out;
  {
    const auto whole = components_of([](int64_t) { return true; });
    for (int64_t v : order) out.components = std::max(out.components, whole[size_t(v)] + 1);
  }
  // Elder rule, one level at a time: the sublevel (superlevel) components just before a
  // vertex that it touches meet there; all but the one born lowest (highest) die.
  std::vector<std::tuple<int64_t, int64_t, bool>> raw;  // extremum, saddle, kept
  std::vector<int> up(all, 1), down(all, 1);
  std::vector<uint8_t> jnode(all, 0), snode(all, 0);
  for (bool sub : {true, false}) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t v = order[size_t(sub ? k : n - 1 - k)];
      const auto label = components_of([&](int64_t r) { return sub ? r < k : r > n - 1 - k; });
      std::map<int64_t, int64_t> eldest;  // component -> its eldest vertex (first in sweep order)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t u = order[size_t(sub ? i : n - 1 - i)];
        if (label[size_t(u)] >= 0) eldest.emplace(label[size_t(u)], u);
      }
      std::map<int64_t, int64_t> birth;  // touched component -> its eldest vertex
      for (int64_t w : adj[size_t(v)])
        if (label[size_t(w)] >= 0) birth[label[size_t(w)]] = eldest[label[size_t(w)]];
      int64_t keep = -1;
      for (auto [c, b] : birth)
        if (keep < 0 || (sub ? below(b, keep) : below(keep, b))) keep = b;
      for (auto [c, b] : birth)
        if (b != keep) raw.emplace_back(b, v, std::fabs(double(f[size_t(b)]) - double(f[size_t(v)])) >= p_abs);
    }
  }
  // Roots: per component its lowest and highest vertex, never removed.
  std::map<int64_t, std::pair<int64_t, int64_t>> span;
  {
    const auto whole = components_of([](int64_t) { return true; });
    for (int64_t v : order) {
      auto [it, fresh] = span.emplace(whole[size_t(v)], std::pair{v, v});
      if (!fresh) it->second.second = v;  // order is ascending
    }
  }
  for (const auto& [extremum, saddle, kept] : raw) {
    if (!kept) continue;
    out.pairs.emplace_back(extremum, saddle);
  }
  // Degrees in the simplified merge trees: a kept extremum has no children in its tree,
  // a vertex where kept branches die one more per branch.
  std::set<int64_t> kept_extrema;
  for (const auto& [extremum, saddle, kept] : raw)
    if (kept) kept_extrema.insert(extremum);
  for (auto [c, lh] : span) {
    kept_extrema.insert(lh.first);
    kept_extrema.insert(lh.second);
    if (lh.first != lh.second) out.pairs.emplace_back(lh.first, lh.second);
  }
  for (const auto& [extremum, saddle, kept] : raw) {
    if (!kept) continue;
    const bool maximum = below(saddle, extremum);
    (maximum ? up : down)[size_t(saddle)] += 1;
  }
  for (int64_t e : kept_extrema) {
    bool lowest = false, highest = false;
    for (auto [c, lh] : span) {
      lowest |= lh.first == e;
      highest |= lh.second == e;
    }
    bool maximum = highest, minimum = lowest;
    for (const auto& [extremum, saddle, kept] : raw)
      if (kept && extremum == e) (below(saddle, e) ? maximum : minimum) = true;
    if (maximum) up[size_t(e)] = 0;
    if (minimum) down[size_t(e)] = 0;
  }
  for (int64_t v : order) {
    if (up[size_t(v)] != 1 || down[size_t(v)] != 1) out.nodes.emplace_back(v, up[size_t(v)], down[size_t(v)]);
    jnode[size_t(v)] = up[size_t(v)] != 1;
    snode[size_t(v)] = down[size_t(v)] != 1;
  }
  for (auto [c, lh] : span) {
    jnode[size_t(lh.first)] = 1;
    snode[size_t(lh.second)] = 1;
  }
  std::sort(out.nodes.begin(), out.nodes.end());
  std::sort(out.pairs.begin(), out.pairs.end());
  // Simplified merge trees: the parent of a node is the first node past it (down in the join
  // tree, up in the split tree) that its superlevel (sublevel) set at that node's level reaches.
  for (bool join : {true, false}) {
    const auto& is_node = join ? jnode : snode;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t v = order[size_t(join ? n - 1 - k : k)];
      if (!is_node[size_t(v)]) continue;
      for (int64_t j = k + 1; j < n; ++j) {
        const int64_t w = order[size_t(join ? n - 1 - j : j)];
        if (!is_node[size_t(w)]) continue;
        const int64_t rw = rank[size_t(w)];
        const auto label = components_of([&](int64_t r) { return join ? r >= rw : r <= rw; });
        if (label[size_t(v)] != label[size_t(w)]) continue;
        (join ? out.join_arcs : out.split_arcs).push_back(join ? CtArc{w, v} : CtArc{v, w});
        break;
      }
    }
  }
  auto arc_less = [](const CtArc& a, const CtArc& b) { return a.lower != b.lower ? a.lower < b.lower : a.upper < b.upper; };
  std::sort(out.join_arcs.begin(), out.join_arcs.end(), arc_less);
  std::sort(out.split_arcs.begin(), out.split_arcs.end(), arc_less);
  return out;
}

}  // namespace factz::testing
