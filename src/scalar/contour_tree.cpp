// Contour tree of a piecewise-linear scalar field (docs/toposz.md, "Algorithms").
//
//  1. Order: every vertex gets its rank in (value, index) order (Simulation of Simplicity).
//  2. Join tree (superlevel sets, swept from the maximum down) and split tree (sublevel
//     sets, swept from the minimum up), each by one union-find sweep over the grid edges.
//     Both are augmented (every vertex is a node); a vertex's children are kept as a
//     count and the XOR of their indices, which is the child itself when the count is 1.
//  3. Carr-Snoeyink-Axen merge: repeatedly remove a leaf (upper leaf of the join tree with
//     one split-tree child, or the reverse) and emit its contour-tree edge.
//  4. Reduction: critical nodes are vertices whose contour-tree (up, down) degree is not
//     (1, 1); arcs are the monotone chains between them, and every regular vertex gets the
//     arc of its chain (the segmentation).
//  5. Simplification: leaves (extremum-saddle arcs) are pruned in order of (persistence,
//     rank) while the persistence is below the threshold; a saddle left with one arc on
//     each side is merged away. Continuing without a threshold gives the pairing.
// Everything is deterministic: the result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
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

// Union-find with union by rank and path halving; `extreme` holds, per root, the lowest
// (join sweep) or highest (split sweep) vertex of the component so far.
struct UnionFind {
  std::vector<uint32_t> parent, extreme;
  std::vector<uint8_t> rank;
  explicit UnionFind(size_t n) : parent(n), extreme(n), rank(n, 0) {}
  uint32_t find(uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  uint32_t unite(uint32_t a, uint32_t b) {
    if (rank[a] < rank[b]) std::swap(a, b);
    parent[b] = a;
    if (rank[a] == rank[b]) ++rank[a];
    return a;
  }
};

// Local classification of every vertex from its link (one cache-friendly parallel pass):
// which neighbours are higher in (value, index) order, which lower, and how many connected
// components the upper and the lower link have. Upper neighbours in one link component are
// connected by edges swept before the vertex, so a sweep needs only one of them.
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

LinkMasks classify_links(std::span<const float> f, const ScalarGrid& g, int threads) {
  const Neighbourhood nb(g);
  uint16_t adjacent[14] = {};  // link edges: offsets whose difference is an offset
  for (int a = 0; a < nb.count; ++a)
    for (int b = 0; b < nb.count; ++b)
      for (int c = 0; c < nb.count; ++c)
        if (nb.dx[b] - nb.dx[a] == nb.dx[c] && nb.dy[b] - nb.dy[a] == nb.dy[c] && nb.dz[b] - nb.dz[a] == nb.dz[c])
          adjacent[a] = uint16_t(adjacent[a] | (1u << b));
  const int64_t n = g.size();
  LinkMasks m;
  m.upper.resize(size_t(n));
  m.lower.resize(size_t(n));
  m.components.resize(size_t(n));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    const int64_t x = v % g.nx, t = v / g.nx, y = t % g.ny, z = t / g.ny;
    const float fv = f[size_t(v)];
    uint16_t up = 0, low = 0;
    for (int k = 0; k < nb.count; ++k) {
      const int64_t xx = x + nb.dx[k], yy = y + nb.dy[k], zz = z + nb.dz[k];
      if (xx < 0 || xx >= g.nx || yy < 0 || yy >= g.ny || zz < 0 || zz >= g.nz) continue;
      const int64_t w = v + nb.offset[k];
      if (sos_less(fv, v, f[size_t(w)], w)) up = uint16_t(up | (1u << k));
      else low = uint16_t(low | (1u << k));
    }
    m.upper[size_t(v)] = up;
    m.lower[size_t(v)] = low;
    const int cu = link_components(up, adjacent), cl = link_components(low, adjacent);
    m.components[size_t(v)] = uint8_t(std::min(cu, 15) | (std::min(cl, 15) << 4));
  }
  return m;
}

// One merge-tree sweep. down == true: join tree (vertices from the highest rank down;
// `link[lowest of each upper component] = v`). down == false: split tree.
// children[v] counts v's children, child_xor[v] is the XOR of their indices.
void merge_tree_sweep(const ScalarGrid& g, const std::vector<uint32_t>& order, const LinkMasks& lm, bool down,
                      std::vector<uint32_t>& link, std::vector<uint8_t>& children, std::vector<uint32_t>& child_xor) {
  const size_t n = order.size();
  const Neighbourhood nb(g);
  UnionFind uf(n);
  link.assign(n, kNone);
  children.assign(n, 0);
  child_xor.assign(n, 0);
  const std::vector<uint16_t>& swept = down ? lm.upper : lm.lower;
  for (size_t step = 0; step < n; ++step) {
    const uint32_t v = order[down ? n - 1 - step : step];
    uint16_t mask = swept[v];
    const int comps = down ? (lm.components[v] & 15) : (lm.components[v] >> 4);
    if (comps == 1) {  // one component to join: attach v below (above) its extreme vertex
      const uint32_t r = uf.find(uint32_t(int64_t(v) + nb.offset[__builtin_ctz(mask)]));
      const uint32_t child = uf.extreme[r];
      link[child] = v;
      children[v] = 1;
      child_xor[v] = child;
      uf.parent[v] = r;
      uf.extreme[r] = v;
      continue;
    }
    uf.parent[v] = v;
    uf.extreme[v] = v;
    uint32_t root = v;
    while (mask != 0) {
      const int k = __builtin_ctz(mask);
      mask = uint16_t(mask & (mask - 1));
      const uint32_t rw = uf.find(uint32_t(int64_t(v) + nb.offset[k]));
      if (rw == root) continue;
      const uint32_t child = uf.extreme[rw];
      link[child] = v;
      ++children[v];
      child_xor[v] ^= child;
      root = uf.unite(root, rw);
      uf.extreme[root] = v;
    }
  }
}

// The augmented contour tree: other[v] is the vertex v's edge leads to when v is removed as
// a leaf (kNone for the last vertex), other_is_up[v] whether it lies above v. Returns the
// last vertex.
uint32_t merge_join_split(size_t n, std::vector<uint32_t>& jlink, std::vector<uint8_t>& jchildren,
                          std::vector<uint32_t>& jxor, std::vector<uint32_t>& slink, std::vector<uint8_t>& schildren,
                          std::vector<uint32_t>& sxor, std::vector<uint32_t>& other,
                          std::vector<uint8_t>& other_is_up) {
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
  size_t removed = 0;
  for (size_t head = 0; head < queue.size() && removed + 1 < n; ++head) {
    const uint32_t v = queue[head];
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
    ++removed;
  }
  for (uint32_t v = 0; v < n; ++v)
    if (state[v] != 2) return v;
  return kNone;
}

CtNodeType node_type(int up, int down, bool single) {
  if (single) return CtNodeType::isolated;
  if (down == 0) return CtNodeType::minimum;
  if (up == 0) return CtNodeType::maximum;
  if (up >= 2 && down >= 2) return CtNodeType::multi_saddle;
  return up >= 2 ? CtNodeType::join_saddle : CtNodeType::split_saddle;
}

struct Adj {
  uint32_t node, arc;
};

// The reduced tree being simplified: per node its up and down entries (fixed capacity,
// removal by swap with the last entry).
struct Reduced {
  std::vector<uint32_t> vertex;                   // node -> vertex
  std::vector<uint32_t> up_begin, down_begin;     // CSR starts
  std::vector<uint8_t> up_count, down_count;
  std::vector<Adj> entries;
  std::vector<uint8_t> alive;
  std::vector<uint32_t> absorbed;                 // node -> arc it joined when removed
  std::vector<uint32_t> arc_parent;               // union-find over arcs
  Adj* up(uint32_t a) { return entries.data() + up_begin[a]; }
  Adj* down(uint32_t a) { return entries.data() + down_begin[a]; }
  uint32_t find(uint32_t x) {
    while (arc_parent[x] != x) {
      arc_parent[x] = arc_parent[arc_parent[x]];
      x = arc_parent[x];
    }
    return x;
  }
  uint32_t unite(uint32_t a, uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return a;
    if (b < a) std::swap(a, b);
    arc_parent[b] = a;
    return a;
  }
};

void remove_entry(Adj* list, uint8_t& count, uint32_t node) {
  for (int i = 0; i < count; ++i)
    if (list[i].node == node) {
      for (int j = i; j + 1 < count; ++j) list[j] = list[j + 1];  // keep order: deterministic choice of list[0]
      --count;
      return;
    }
}

void replace_entry(Adj* list, int count, uint32_t node, Adj with) {
  for (int i = 0; i < count; ++i)
    if (list[i].node == node) {
      list[i] = with;
      return;
    }
}

struct Candidate {
  double persistence;
  uint32_t leaf_rank, leaf, saddle;
  bool operator>(const Candidate& o) const {
    return persistence != o.persistence ? persistence > o.persistence : leaf_rank > o.leaf_rank;
  }
};

}  // namespace

double scalar_range(std::span<const float> values) {
  if (values.empty()) return 0;
  float lo = values[0], hi = values[0];
  for (float v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return double(hi) - double(lo);
}

ContourTree compute_contour_tree(std::span<const float> f, const ScalarGrid& g, double p_abs, bool want_segmentation,
                                 int threads) {
  const size_t n = f.size();
  ContourTree tree;
  tree.nx = g.nx;
  tree.ny = g.ny;
  tree.nz = g.nz;
  tree.persistence = p_abs;
  if (threads <= 0) threads = 1;
  if (n == 1) {
    tree.nodes.push_back({0, f[0], CtNodeType::isolated, 0, 0});
    tree.full_nodes = 1;
    if (want_segmentation) tree.segmentation.assign(1, kCtNodeSegment);
    return tree;
  }

  // 1. Order.
  std::vector<uint32_t> order(n), rank(n);
  {
    std::vector<uint64_t> keys(n);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t v = 0; v < int64_t(n); ++v) keys[size_t(v)] = (uint64_t(orderable_bits(f[size_t(v)])) << 32) | uint64_t(v);
    sort_keys(keys, threads);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t k = 0; k < int64_t(n); ++k) {
      order[size_t(k)] = uint32_t(keys[size_t(k)]);
      rank[order[size_t(k)]] = uint32_t(k);
    }
  }

  // 2. Join and split trees (two independent sweeps, run side by side).
  std::vector<uint32_t> jlink, jxor, slink, sxor;
  std::vector<uint8_t> jchildren, schildren;
  {
    const LinkMasks masks = classify_links(f, g, threads);
#pragma omp parallel sections num_threads(std::min(threads, 2))
    {
#pragma omp section
      merge_tree_sweep(g, order, masks, true, jlink, jchildren, jxor);
#pragma omp section
      merge_tree_sweep(g, order, masks, false, slink, schildren, sxor);
    }
  }

  // 3. Merge into the augmented contour tree.
  std::vector<uint32_t> other;
  std::vector<uint8_t> other_is_up;
  const uint32_t last = merge_join_split(n, jlink, jchildren, jxor, slink, schildren, sxor, other, other_is_up);
  (void)last;
  std::vector<uint32_t>().swap(jlink);
  std::vector<uint32_t>().swap(jxor);
  std::vector<uint32_t>().swap(slink);
  std::vector<uint32_t>().swap(sxor);
  std::vector<uint8_t>().swap(jchildren);
  std::vector<uint8_t>().swap(schildren);
  std::vector<uint32_t>().swap(order);

  // 4. Degrees, critical nodes, up-edges.
  std::vector<uint8_t> up(n, 0), down(n, 0);
  for (size_t v = 0; v < n; ++v) {
    const uint32_t w = other[v];
    if (w == kNone) continue;
    if (other_is_up[v]) {
      ++up[v];
      ++down[w];
    } else {
      ++down[v];
      ++up[w];
    }
  }
  Reduced R;
  std::vector<uint32_t> node_of(n, kNone);
  for (size_t v = 0; v < n; ++v)
    if (up[v] != 1 || down[v] != 1) {
      node_of[v] = uint32_t(R.vertex.size());
      R.vertex.push_back(uint32_t(v));
    }
  const uint32_t m = uint32_t(R.vertex.size());
  // Up-edge CSR of the nodes; upn[v] for regular vertices.
  std::vector<uint32_t> up_start(size_t(m) + 1, 0);
  for (uint32_t a = 0; a < m; ++a) up_start[a + 1] = up_start[a] + up[R.vertex[a]];
  std::vector<uint32_t> up_target(up_start[m]), fill(up_start.begin(), up_start.end() - 1);
  std::vector<uint32_t> upn(n, kNone);  // the up-neighbour of each regular vertex
  for (size_t v = 0; v < n; ++v) {
    const uint32_t w = other[v];
    if (w == kNone) continue;
    const uint32_t lo = other_is_up[v] ? uint32_t(v) : w, hi = lo == v ? w : uint32_t(v);
    if (node_of[lo] == kNone) upn[lo] = hi;
    else up_target[fill[node_of[lo]]++] = hi;
  }
  std::vector<uint32_t>().swap(other);
  std::vector<uint8_t>().swap(other_is_up);

  // Arcs: arc id = position of its first up-edge in the CSR; walk the chain upwards.
  const uint32_t arc_count = up_start[m];
  std::vector<uint32_t> arc_lower(arc_count), arc_upper(arc_count);
  std::vector<uint32_t> seg0;
  if (want_segmentation) seg0.assign(n, kNone);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
  for (int64_t a = 0; a < int64_t(m); ++a) {
    for (uint32_t e = up_start[size_t(a)]; e < up_start[size_t(a) + 1]; ++e) {
      uint32_t u = up_target[e];
      while (node_of[u] == kNone) {
        if (want_segmentation) seg0[u] = e;
        u = upn[u];
      }
      arc_lower[e] = uint32_t(a);
      arc_upper[e] = node_of[u];
    }
  }
  std::vector<uint32_t>().swap(upn);

  // 5. Simplification.
  R.up_begin.resize(m);
  R.down_begin.resize(m);
  R.up_count.assign(m, 0);
  R.down_count.assign(m, 0);
  {
    uint32_t pos = 0;
    for (uint32_t a = 0; a < m; ++a) {
      R.up_begin[a] = pos;
      pos += up[R.vertex[a]];
      R.down_begin[a] = pos;
      pos += down[R.vertex[a]];
    }
    R.entries.resize(pos);
  }
  for (uint32_t e = 0; e < arc_count; ++e) {
    const uint32_t a = arc_lower[e], b = arc_upper[e];
    R.up(a)[R.up_count[a]++] = {b, e};
    R.down(b)[R.down_count[b]++] = {a, e};
  }
  std::vector<uint8_t>().swap(up);
  std::vector<uint8_t>().swap(down);
  R.alive.assign(m, 1);
  R.absorbed.assign(m, kNone);
  R.arc_parent.resize(arc_count);
  for (uint32_t e = 0; e < arc_count; ++e) R.arc_parent[e] = e;
  tree.full_nodes = m;

  auto value = [&](uint32_t a) { return double(f[R.vertex[a]]); };
  auto candidate_of = [&](uint32_t leaf, Candidate& c) {
    if (!R.alive[leaf]) return false;
    if (R.up_count[leaf] == 0 && R.down_count[leaf] == 1) {
      c = {value(leaf) - value(R.down(leaf)[0].node), rank[R.vertex[leaf]], leaf, R.down(leaf)[0].node};
      return true;
    }
    if (R.down_count[leaf] == 0 && R.up_count[leaf] == 1) {
      c = {value(R.up(leaf)[0].node) - value(leaf), rank[R.vertex[leaf]], leaf, R.up(leaf)[0].node};
      return true;
    }
    return false;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  for (uint32_t a = 0; a < m; ++a) {
    Candidate c;
    if (candidate_of(a, c)) heap.push(c);
  }

  bool snapped = false;
  std::vector<CtPair> pairs_after;
  auto snapshot = [&] {
    snapped = true;
    std::vector<std::pair<CtArc, uint32_t>> arcs;  // arc, union-find root
    for (uint32_t a = 0; a < m; ++a) {
      if (!R.alive[a]) continue;
      const int upc = R.up_count[a], downc = R.down_count[a];
      tree.nodes.push_back({int64_t(R.vertex[a]), f[R.vertex[a]], node_type(upc, downc, false), upc, downc});
      for (int i = 0; i < upc; ++i)
        arcs.push_back({{int64_t(R.vertex[a]), int64_t(R.vertex[R.up(a)[i].node])}, R.find(R.up(a)[i].arc)});
    }
    std::sort(arcs.begin(), arcs.end(), [](const auto& x, const auto& y) {
      return x.first.lower != y.first.lower ? x.first.lower < y.first.lower : x.first.upper < y.first.upper;
    });
    std::vector<uint32_t> final_index(arc_count, kNone);
    for (size_t i = 0; i < arcs.size(); ++i) {
      tree.arcs.push_back(arcs[i].first);
      final_index[arcs[i].second] = uint32_t(i);
    }
    if (!want_segmentation) return;
    tree.segmentation.resize(n);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t v = 0; v < int64_t(n); ++v) {
      const uint32_t a = node_of[size_t(v)];
      uint32_t s;
      if (a == kNone) s = final_index[R.find(seg0[size_t(v)])];
      else if (R.alive[a]) s = kCtNodeSegment;
      else s = final_index[R.find(R.absorbed[a])];
      tree.segmentation[size_t(v)] = s;
    }
  };

  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Candidate now;
    if (!candidate_of(c.leaf, now) || now.saddle != c.saddle) continue;  // stale
    const uint32_t leaf = c.leaf, s = c.saddle;
    const bool maximum = R.up_count[leaf] == 0;
    if (maximum ? R.up_count[s] < 2 : R.down_count[s] < 2) continue;  // re-offered if its saddle changes
    if (!snapped && c.persistence >= p_abs) snapshot();
    // Prune the leaf into one of the saddle's remaining arcs on the same side.
    const uint32_t leaf_arc = maximum ? R.down(leaf)[0].arc : R.up(leaf)[0].arc;
    if (maximum) remove_entry(R.up(s), R.up_count[s], leaf);
    else remove_entry(R.down(s), R.down_count[s], leaf);
    R.unite(leaf_arc, maximum ? R.up(s)[0].arc : R.down(s)[0].arc);
    R.alive[leaf] = 0;
    R.absorbed[leaf] = leaf_arc;
    if (snapped) pairs_after.push_back({int64_t(R.vertex[leaf]), int64_t(R.vertex[s]), c.persistence});
    else ++tree.pruned_pairs;
    if (R.up_count[s] == 1 && R.down_count[s] == 1) {  // the saddle became regular: merge its arcs
      const Adj lo = R.down(s)[0], hi = R.up(s)[0];
      const uint32_t arc = R.unite(lo.arc, hi.arc);
      replace_entry(R.up(lo.node), R.up_count[lo.node], s, {hi.node, arc});
      replace_entry(R.down(hi.node), R.down_count[hi.node], s, {lo.node, arc});
      R.alive[s] = 0;
      R.absorbed[s] = arc;
      for (uint32_t x : {lo.node, hi.node}) {
        Candidate cx;
        if (candidate_of(x, cx)) heap.push(cx);
      }
    }
  }
  if (!snapped) snapshot();
  // The root branch: the two nodes left (global minimum and maximum).
  for (uint32_t a = 0; a < m; ++a)
    if (R.alive[a] && R.down_count[a] == 0 && R.up_count[a] == 1) {
      const uint32_t b = R.up(a)[0].node;
      pairs_after.push_back({int64_t(R.vertex[a]), int64_t(R.vertex[b]), value(b) - value(a)});
    }
  std::sort(pairs_after.begin(), pairs_after.end(), [](const CtPair& x, const CtPair& y) {
    return x.extremum != y.extremum ? x.extremum < y.extremum : x.saddle < y.saddle;
  });
  tree.pairs = std::move(pairs_after);
  return tree;
}

}  // namespace factz::detail
