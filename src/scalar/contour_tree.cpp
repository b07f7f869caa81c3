// Contour tree of a piecewise-linear scalar field (docs/toposz.md, "Algorithm").
//
//  1. Order: every valid vertex gets its rank in (value, index) order (Simulation of
//     Simplicity); missing vertices get none and are never swept.
//  2. Join tree (superlevel sets, swept from the maximum down) and split tree (sublevel
//     sets, swept from the minimum up), each by one union-find sweep over the mesh edges.
//     Each sweep pairs by the elder rule: where components meet, the one born at the elder
//     extremum (the higher maximum, the lower minimum, in (value, index) order) lives on and
//     the others die there. A vertex belongs to the branch of the component it joins.
//  3. Simplification: a branch whose persistence |f(extremum) - f(saddle)| is below the
//     threshold hands its vertices to the branch it died into. Nodes, types, merge-tree
//     arcs, pairs and each vertex's region follow from the surviving branches.
//  4. Optionally the contour tree: the Carr-Snoeyink-Axen merge of the two simplified merge
//     trees (each surviving branch a chain of its vertices hanging from its saddle), reduced
//     to its arcs.
// Everything is deterministic: the result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "scalar/contour_tree_core.hpp"

namespace factz::detail {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

// Sorts the (orderable value, index) keys; chunks sorted in parallel, then merged.
void sort_keys(std::vector<uint64_t>& keys, int threads) {
  const int64_t n = int64_t(keys.size());
  int parts = std::max(1, threads);
  if (n < 100000) parts = 1;
  std::vector<int64_t> bounds(size_t(parts) + 1);
  for (int p = 0; p <= parts; ++p) bounds[size_t(p)] = n * p / parts;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) std::sort(keys.begin() + bounds[size_t(p)], keys.begin() + bounds[size_t(p) + 1]);
  for (int width = 1; width < parts; width *= 2)
    for (int p = 0; p + width < parts; p += 2 * width) {
      const int64_t lo = bounds[size_t(p)], mid = bounds[size_t(p + width)],
                    hi = bounds[size_t(std::min(parts, p + 2 * width))];
      std::inplace_merge(keys.begin() + lo, keys.begin() + mid, keys.begin() + hi);
    }
}

// Union-find with union by height and path halving; `tag` holds, per root, the branch of
// the component (the one born at its elder extremum).
struct UnionFind {
  std::vector<uint32_t> parent, tag;
  std::vector<uint8_t> height;
  explicit UnionFind(size_t n) : parent(n), tag(n), height(n, 0) {}
  uint32_t find(uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  uint32_t unite(uint32_t a, uint32_t b) {
    if (height[a] < height[b]) std::swap(a, b);
    parent[b] = a;
    if (height[a] == height[b]) ++height[a];
    return a;
  }
};

// Local classification of every valid vertex from its link in the mesh (one cache-friendly
// parallel pass): which valid neighbours are higher in (value, index) order, which lower,
// and how many connected components the upper and the lower link have. The mesh is the
// Freudenthal triangulation restricted to valid vertices, a flag complex: the link of v is
// the valid neighbours and the link edges between them. Upper neighbours in one link
// component are connected by edges swept before the vertex, so a sweep needs one of them.
struct LinkMasks {
  std::vector<uint16_t> upper, lower;
  std::vector<uint8_t> components;  // low nibble: upper link components, high nibble: lower
};

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

LinkMasks classify_links(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                         int threads) {
  const Neighbourhood nb(g);
  uint16_t adjacent[14] = {};  // link edges: offsets whose difference is an offset
  for (int a = 0; a < nb.count; ++a)
    for (int b = 0; b < nb.count; ++b)
      for (int c = 0; c < nb.count; ++c)
        if (nb.dx[b] - nb.dx[a] == nb.dx[c] && nb.dy[b] - nb.dy[a] == nb.dy[c] && nb.dz[b] - nb.dz[a] == nb.dz[c])
          adjacent[a] = uint16_t(adjacent[a] | (1u << b));
  const int64_t n = g.size();
  const bool masked = !missing.empty();
  LinkMasks m;
  m.upper.resize(size_t(n));
  m.lower.resize(size_t(n));
  m.components.resize(size_t(n));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    uint16_t up = 0, low = 0;
    if (!masked || !missing[size_t(v)]) {
      const int64_t x = v % g.nx, t = v / g.nx, y = t % g.ny, z = t / g.ny;
      const float fv = f[size_t(v)];
      for (int k = 0; k < nb.count; ++k) {
        const int64_t xx = x + nb.dx[k], yy = y + nb.dy[k], zz = z + nb.dz[k];
        if (xx < 0 || xx >= g.nx || yy < 0 || yy >= g.ny || zz < 0 || zz >= g.nz) continue;
        const int64_t w = v + nb.offset[k];
        if (masked && missing[size_t(w)]) continue;
        if (sos_less(fv, v, f[size_t(w)], w)) up = uint16_t(up | (1u << k));
        else low = uint16_t(low | (1u << k));
      }
    }
    m.upper[size_t(v)] = up;
    m.lower[size_t(v)] = low;
    const int cu = link_components(up, adjacent), cl = link_components(low, adjacent);
    m.components[size_t(v)] = uint8_t(std::min(cu, 15) | (std::min(cl, 15) << 4));
  }
  return m;
}

// A merge tree as its branch decomposition by the elder rule: every vertex belongs to one
// branch; a branch is born at an extremum and dies at the saddle where its component meets
// an elder one (kNone: the eldest of its connected component, it never dies). Branch ids
// follow the sweep, so a branch dies into a branch with a smaller id.
struct MergeTree {
  std::vector<uint32_t> branch;        // per vertex (kNone for missing vertices)
  std::vector<uint32_t> birth, death;  // per branch
};

// One merge-tree sweep over the valid vertices `order` (ascending). down == true: join
// tree (from the highest rank down, maxima are born); down == false: split tree.
void merge_tree_sweep(const ScalarGrid& g, const std::vector<uint32_t>& order, const std::vector<uint32_t>& rank,
                      const LinkMasks& lm, bool down, MergeTree& t) {
  const size_t nv = order.size();
  const Neighbourhood nb(g);
  UnionFind uf(rank.size());
  t.branch.assign(rank.size(), kNone);
  t.birth.clear();
  t.death.clear();
  const std::vector<uint16_t>& swept = down ? lm.upper : lm.lower;
  auto elder = [&](uint32_t a, uint32_t b) {
    const uint32_t ra = rank[t.birth[a]], rb = rank[t.birth[b]];
    return (down ? ra > rb : ra < rb) ? a : b;
  };
  for (size_t step = 0; step < nv; ++step) {
    const uint32_t v = order[down ? nv - 1 - step : step];
    uint16_t mask = swept[v];
    const int comps = down ? (lm.components[v] & 15) : (lm.components[v] >> 4);
    if (comps == 1) {  // one component to join (most vertices): a single find
      const uint32_t r = uf.find(uint32_t(int64_t(v) + nb.offset[__builtin_ctz(mask)]));
      uf.parent[v] = r;
      t.branch[v] = uf.tag[r];
      continue;
    }
    uf.parent[v] = v;
    if (comps == 0) {  // an extremum: a branch is born
      uf.tag[v] = uint32_t(t.birth.size());
      t.branch[v] = uf.tag[v];
      t.birth.push_back(v);
      t.death.push_back(kNone);
      continue;
    }
    uint32_t root = kNone;
    while (mask != 0) {
      const int k = __builtin_ctz(mask);
      mask = uint16_t(mask & (mask - 1));
      const uint32_t rw = uf.find(uint32_t(int64_t(v) + nb.offset[k]));
      if (rw == root) continue;
      if (root == kNone) {
        root = rw;
        continue;
      }
      const uint32_t a = uf.tag[root], b = uf.tag[rw], keep = elder(a, b);
      t.death[keep == a ? b : a] = v;  // the younger component dies here
      root = uf.unite(root, rw);
      uf.tag[root] = keep;
    }
    uf.parent[v] = root;
    t.branch[v] = uf.tag[root];
  }
}

// Nodes of the unsimplified tree: the extremum and the saddle of every branch of both trees.
int64_t full_node_count(const MergeTree& join, const MergeTree& split, size_t n) {
  std::vector<uint8_t> node(n, 0);
  for (const auto* t : {&join, &split})
    for (size_t b = 0; b < t->birth.size(); ++b) {
      node[t->birth[b]] = 1;
      if (t->death[b] != kNone) node[t->death[b]] = 1;
    }
  return std::count(node.begin(), node.end(), uint8_t(1));
}

double persistence_of(std::span<const float> f, uint32_t extremum, uint32_t saddle) {
  return std::fabs(double(f[extremum]) - double(f[saddle]));
}

// The surviving branch each branch's vertices belong to: itself when it never dies or its
// persistence is at least p_abs, else the survivor of the branch it died into. A surviving
// branch only dies into a surviving one (that one's extremum is elder and its saddle
// further away, so its persistence is at least as large): the survivors form a merge tree.
std::vector<uint32_t> surviving_branches(const MergeTree& t, std::span<const float> f, double p_abs) {
  std::vector<uint32_t> eff(t.birth.size());
  for (size_t b = 0; b < eff.size(); ++b) {
    const uint32_t s = t.death[b];
    eff[b] = (s == kNone || persistence_of(f, t.birth[b], s) >= p_abs) ? uint32_t(b) : eff[t.branch[s]];
  }
  return eff;
}

// The two trees after simplification, and in up[v] / down[v] each vertex's children in the
// simplified join / split tree: 0 for a surviving extremum, else 1, plus one per surviving
// branch that dies at v.
struct Simplified {
  const MergeTree& join;
  const MergeTree& split;
  std::vector<uint32_t> jeff, seff;
  std::vector<uint8_t> up, down;
};

Simplified simplify(const MergeTree& join, const MergeTree& split, std::span<const float> f,
                    std::span<const uint8_t> missing, double p_abs) {
  Simplified s{join, split, surviving_branches(join, f, p_abs), surviving_branches(split, f, p_abs), {}, {}};
  const size_t n = f.size();
  s.up.assign(n, 1);
  s.down.assign(n, 1);
  for (size_t v = 0; v < n; ++v)
    if (!missing.empty() && missing[v]) s.up[v] = s.down[v] = 0;
  for (const auto* tree : {&join, &split}) {
    const std::vector<uint32_t>& eff = tree == &join ? s.jeff : s.seff;
    std::vector<uint8_t>& children = tree == &join ? s.up : s.down;
    for (size_t b = 0; b < eff.size(); ++b) {
      if (eff[b] != b) continue;
      children[tree->birth[b]] = uint8_t(children[tree->birth[b]] - 1);
      if (tree->death[b] != kNone) children[tree->death[b]] = uint8_t(children[tree->death[b]] + 1);
    }
  }
  return s;
}

CtNodeType node_type(int up, int down) {
  if (up == 0 && down == 0) return CtNodeType::isolated;
  if (down == 0) return CtNodeType::minimum;
  if (up == 0) return CtNodeType::maximum;
  if (up >= 2 && down >= 2) return CtNodeType::multi_saddle;
  return up >= 2 ? CtNodeType::join_saddle : CtNodeType::split_saddle;
}

// The pairs that stay (both trees) and each tree's root pair (its lowest vertex with its
// highest; none for a component of one vertex), by (extremum, saddle). `pruned` counts the
// removed pairs.
std::vector<CtPair> surviving_pairs(const Simplified& s, std::span<const float> f, int64_t& pruned) {
  std::vector<CtPair> pairs;
  pruned = 0;
  for (const auto* tree : {&s.join, &s.split}) {
    const std::vector<uint32_t>& eff = tree == &s.join ? s.jeff : s.seff;
    for (size_t b = 0; b < eff.size(); ++b) {
      const uint32_t e = tree->birth[b], d = tree->death[b];
      if (d == kNone) continue;
      if (eff[b] == b) pairs.push_back({int64_t(e), int64_t(d), persistence_of(f, e, d)});
      else ++pruned;
    }
  }
  for (size_t b = 0; b < s.split.birth.size(); ++b) {
    if (s.split.death[b] != kNone) continue;
    const uint32_t lowest = s.split.birth[b];
    // The lowest vertex is the last one the join sweep reaches in its component: its
    // branch there is the component's eldest, born at the highest vertex.
    const uint32_t highest = s.join.birth[s.join.branch[lowest]];
    if (highest != lowest) pairs.push_back({int64_t(lowest), int64_t(highest), persistence_of(f, lowest, highest)});
  }
  std::sort(pairs.begin(), pairs.end(), [](const CtPair& x, const CtPair& y) {
    return x.extremum != y.extremum ? x.extremum < y.extremum : x.saddle < y.saddle;
  });
  return pairs;
}

bool arc_less(const CtArc& x, const CtArc& y) { return x.lower != y.lower ? x.lower < y.lower : x.upper < y.upper; }

// Arcs of one simplified merge tree between its own nodes (`is_node`), from the nodes
// sorted by increasing (value, index): along each surviving branch consecutive nodes are
// joined, and its last node (its lowest in the join tree, its highest in the split tree)
// to the saddle where the branch dies.
std::vector<CtArc> merge_tree_arcs(const MergeTree& t, const std::vector<uint32_t>& eff,
                                   const std::vector<uint32_t>& ascending_nodes, bool join) {
  std::vector<uint32_t> last(t.birth.size(), kNone);
  std::vector<CtArc> arcs;
  const size_t m = ascending_nodes.size();
  for (size_t i = 0; i < m; ++i) {
    const uint32_t v = ascending_nodes[join ? m - 1 - i : i];
    const uint32_t k = eff[t.branch[v]];
    if (last[k] != kNone) arcs.push_back(join ? CtArc{int64_t(v), int64_t(last[k])} : CtArc{int64_t(last[k]), int64_t(v)});
    last[k] = v;
  }
  for (size_t b = 0; b < eff.size(); ++b)
    if (eff[b] == b && t.death[b] != kNone)
      arcs.push_back(join ? CtArc{int64_t(t.death[b]), int64_t(last[b])} : CtArc{int64_t(last[b]), int64_t(t.death[b])});
  std::sort(arcs.begin(), arcs.end(), arc_less);
  return arcs;
}

bool sos_below(std::span<const float> f, uint32_t a, uint32_t b) { return sos_less(f[a], a, f[b], b); }

// Per vertex the nearest node below and above it on its branch of one simplified merge
// tree (a node: itself), by one pass up and one down over the valid vertices in order. A
// branch's chain starts at its extremum, which is a node; past its other end lies the
// saddle where it dies.
void branch_neighbours(const MergeTree& t, const std::vector<uint32_t>& eff, const std::vector<uint32_t>& order,
                       const std::vector<uint8_t>& is_node, bool join, std::vector<uint32_t>& below,
                       std::vector<uint32_t>& above) {
  std::vector<uint32_t> last(t.birth.size());
  for (int pass = 0; pass < 2; ++pass) {
    const bool up = pass == 0;  // ascending: the node below
    std::vector<uint32_t>& out = up ? below : above;
    for (size_t b = 0; b < last.size(); ++b) last[b] = join == up ? t.death[b] : kNone;
    const size_t nv = order.size();
    for (size_t i = 0; i < nv; ++i) {
      const uint32_t v = order[up ? i : nv - 1 - i];
      const uint32_t k = eff[t.branch[v]];
      if (is_node[v]) last[k] = v;
      out[v] = last[k];
    }
  }
}

// The simplified merge tree as parent links (every vertex a node): each surviving branch
// is the chain of its vertices in (value, index) order hanging from its saddle. join: the
// parent is the next lower vertex; split: the next higher. children[v] counts v's children,
// child_xor[v] is the XOR of their indices.
void simplified_links(const MergeTree& t, const std::vector<uint32_t>& eff, const std::vector<uint32_t>& order,
                      bool join, std::vector<uint32_t>& link, std::vector<uint8_t>& children,
                      std::vector<uint32_t>& child_xor) {
  const size_t n = t.branch.size(), nv = order.size();
  link.assign(n, kNone);
  children.assign(n, 0);
  child_xor.assign(n, 0);
  std::vector<uint32_t> last(t.birth.size(), kNone);
  for (size_t step = 0; step < nv; ++step) {
    const uint32_t v = order[join ? step : nv - 1 - step];
    const uint32_t k = eff[t.branch[v]];
    const uint32_t p = last[k] != kNone ? last[k] : t.death[k];
    link[v] = p;
    if (p != kNone) {
      ++children[p];
      child_xor[p] ^= v;
    }
    last[k] = v;
  }
}

// The augmented contour forest of two merge trees given as parent links (all vertices
// nodes): other[v] is the vertex v's edge leads to when v is removed as a leaf (kNone for
// the last vertex of each tree), other_is_up[v] whether it lies above v. Returns the number
// of vertices removed: the vertex count minus the tree count when the merge completes, less
// when no tree has these two merge trees (no vertex qualifies as a leaf any more).
size_t merge_join_split(size_t n, std::vector<uint32_t>& jlink, std::vector<uint8_t>& jchildren,
                        std::vector<uint32_t>& jxor, std::vector<uint32_t>& slink, std::vector<uint8_t>& schildren,
                        std::vector<uint32_t>& sxor, std::vector<uint32_t>& other, std::vector<uint8_t>& other_is_up) {
  // jlink[v]: v's parent in the join tree (lower), jchildren: upper children.
  // slink[v]: v's parent in the split tree (higher), schildren: lower children.
  other.assign(n, kNone);
  other_is_up.assign(n, 0);
  std::vector<uint8_t> state(n, 0);  // 0 in tree, 1 queued, 2 removed
  std::vector<uint32_t> queue;
  queue.reserve(n);
  auto is_leaf = [&](uint32_t v) {
    return (jchildren[v] == 0 && schildren[v] == 1) || (schildren[v] == 0 && jchildren[v] == 1);
  };
  auto offer = [&](uint32_t v) {
    if (v != kNone && state[v] == 0 && is_leaf(v)) {
      state[v] = 1;
      queue.push_back(v);
    }
  };
  for (uint32_t v = 0; v < n; ++v) offer(v);
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t v = queue[head];
    if (!is_leaf(v)) {  // the last vertex of its tree (its partner went first): it stays
      state[v] = 0;
      continue;
    }
    if (jchildren[v] == 0 && schildren[v] == 1) {
      // Upper leaf: its contour-tree edge goes down to its join-tree parent.
      const uint32_t w = jlink[v];
      other[v] = w;
      --jchildren[w];
      jxor[w] ^= v;
      const uint32_t c = sxor[v], p = slink[v];  // splice v out of the split tree
      slink[c] = p;
      if (p != kNone) sxor[p] ^= v ^ c;
      offer(w);
      offer(c);
      offer(p);
    } else {
      const uint32_t w = slink[v];
      other[v] = w;
      other_is_up[v] = 1;
      --schildren[w];
      sxor[w] ^= v;
      const uint32_t c = jxor[v], p = jlink[v];
      jlink[c] = p;
      if (p != kNone) jxor[p] ^= v ^ c;
      offer(w);
      offer(c);
      offer(p);
    }
    state[v] = 2;
  }
  return size_t(std::count(state.begin(), state.end(), uint8_t(2)));
}


// The contour tree's arcs from the augmented forest `other`: chains of regular vertices
// (one edge up, one down) walked from each node upwards.
std::vector<CtArc> contour_arcs(size_t n, const std::vector<uint32_t>& other, const std::vector<uint8_t>& other_is_up,
                                std::span<const uint8_t> missing) {
  std::vector<uint8_t> up(n, 0), down(n, 0);
  std::vector<uint32_t> upn(n, kNone);  // the vertex above along each vertex's up-edge (last one seen)
  for (size_t v = 0; v < n; ++v) {
    const uint32_t w = other[v];
    if (w == kNone) continue;
    const uint32_t lo = other_is_up[v] ? uint32_t(v) : w, hi = lo == v ? w : uint32_t(v);
    ++up[lo];
    ++down[hi];
    upn[lo] = hi;
  }
  auto is_node = [&](size_t v) { return (missing.empty() || !missing[v]) && (up[v] != 1 || down[v] != 1); };
  std::vector<CtArc> arcs;
  for (size_t v = 0; v < n; ++v) {
    const uint32_t w = other[v];
    if (w == kNone) continue;
    const uint32_t lo = other_is_up[v] ? uint32_t(v) : w, hi = lo == v ? w : uint32_t(v);
    if (!is_node(lo)) continue;  // each arc is walked from its lower node, edge by edge
    uint32_t u = hi;
    while (!is_node(u)) u = upn[u];
    arcs.push_back({int64_t(lo), int64_t(u)});
  }
  std::sort(arcs.begin(), arcs.end(), arc_less);
  return arcs;
}

}  // namespace

double scalar_range(std::span<const float> values, std::span<const uint8_t> missing) {
  bool any = false;
  float lo = 0, hi = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!missing.empty() && missing[i]) continue;
    const float v = values[i];
    if (!any) lo = hi = v;
    any = true;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return double(hi) - double(lo);
}

ContourTree compute_contour_tree(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                 double p_abs, const CtRequest& want, int threads) {
  const size_t n = f.size();
  const bool masked = !missing.empty();
  ContourTree tree;
  tree.nx = g.nx;
  tree.ny = g.ny;
  tree.nz = g.nz;
  tree.persistence = p_abs;
  if (threads <= 0) threads = 1;

  // 1. Order of the valid vertices.
  std::vector<uint32_t> order, rank(n, kNone);
  {
    std::vector<uint64_t> keys;
    if (!masked) {
      keys.resize(n);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t v = 0; v < int64_t(n); ++v)
        keys[size_t(v)] = (uint64_t(orderable_bits(f[size_t(v)])) << 32) | uint64_t(v);
    } else {
      for (size_t v = 0; v < n; ++v)
        if (!missing[v]) keys.push_back((uint64_t(orderable_bits(f[v])) << 32) | uint64_t(v));
    }
    sort_keys(keys, threads);
    order.resize(keys.size());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t k = 0; k < int64_t(keys.size()); ++k) {
      order[size_t(k)] = uint32_t(keys[size_t(k)]);
      rank[order[size_t(k)]] = uint32_t(k);
    }
  }

  // 2. Join and split trees with their elder-rule pairs (two sweeps, side by side).
  MergeTree join, split;
  {
    const LinkMasks masks = classify_links(f, g, missing, threads);
#pragma omp parallel sections num_threads(std::min(threads, 2))
    {
#pragma omp section
      merge_tree_sweep(g, order, rank, masks, true, join);
#pragma omp section
      merge_tree_sweep(g, order, rank, masks, false, split);
    }
  }
  std::vector<uint32_t>().swap(rank);
  tree.full_nodes = full_node_count(join, split, n);
  tree.components = std::count(split.death.begin(), split.death.end(), kNone);

  // 3. Simplification: nodes, merge-tree arcs, pairs, regions.
  Simplified s = simplify(join, split, f, missing, p_abs);
  tree.pairs = surviving_pairs(s, f, tree.pruned_pairs);
  std::vector<uint8_t> jnode(n, 0), snode(n, 0);
  std::vector<uint32_t> nodes;  // by increasing (value, index)
  for (uint32_t v : order) {
    jnode[v] = s.up[v] != 1;
    snode[v] = s.down[v] != 1;
    if (s.up[v] != 1 || s.down[v] != 1) nodes.push_back(v);
  }
  for (size_t b = 0; b < split.birth.size(); ++b)  // each tree's lowest vertex roots its join tree
    if (split.death[b] == kNone) jnode[split.birth[b]] = 1;
  for (size_t b = 0; b < join.birth.size(); ++b)  // and its highest its split tree
    if (join.death[b] == kNone) snode[join.birth[b]] = 1;
  {
    std::vector<uint32_t> jn, sn;
    for (uint32_t v : nodes) {
      if (jnode[v]) jn.push_back(v);
      if (snode[v]) sn.push_back(v);
    }
    tree.join_arcs = merge_tree_arcs(join, s.jeff, jn, true);
    tree.split_arcs = merge_tree_arcs(split, s.seff, sn, false);
  }
  std::vector<uint32_t> by_index = nodes;
  std::sort(by_index.begin(), by_index.end());
  for (uint32_t v : by_index) tree.nodes.push_back({int64_t(v), f[v], node_type(s.up[v], s.down[v]), s.up[v], s.down[v]});
  if (want.segmentation) {
    std::vector<uint32_t> jb(n), ja(n), sb(n), sa(n);
    branch_neighbours(join, s.jeff, order, jnode, true, jb, ja);
    branch_neighbours(split, s.seff, order, snode, false, sb, sa);
    tree.segmentation.assign(n, {kCtNoVertex, kCtNoVertex});
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t k = 0; k < int64_t(order.size()); ++k) {
      const uint32_t v = order[size_t(k)];
      const uint32_t lo = sos_below(f, jb[v], sb[v]) ? sb[v] : jb[v], hi = sos_below(f, ja[v], sa[v]) ? ja[v] : sa[v];
      tree.segmentation[v] = {lo, hi};
    }
  }

  // 4. The contour tree of the two simplified merge trees, when there is one.
  if (want.contour_arcs) {
    std::vector<uint32_t> jlink, jxor, slink, sxor, other;
    std::vector<uint8_t> jchildren, schildren, other_is_up;
    simplified_links(join, s.jeff, order, true, jlink, jchildren, jxor);
    simplified_links(split, s.seff, order, false, slink, schildren, sxor);
    const size_t removed = merge_join_split(n, jlink, jchildren, jxor, slink, schildren, sxor, other, other_is_up);
    tree.contour_arcs = int64_t(removed) == int64_t(order.size()) - tree.components;
    if (tree.contour_arcs) tree.arcs = contour_arcs(n, other, other_is_up, missing);
  }
  return tree;
}

}  // namespace factz::detail
