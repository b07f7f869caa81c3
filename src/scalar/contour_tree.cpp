// Contour tree of a piecewise-linear scalar field (docs/toposz.md, "Algorithm").
//
//  1. Links: each vertex's upper and lower link (neighbour masks) in one pass in grid
//     order (mesh_links.cpp), which also hangs every regular vertex from a neighbour in
//     union-find. Order: the vertices swept sorted by (value, index) (Simulation of
//     Simplicity; radix sort, vertex_order.cpp): the critical ones, or every valid vertex
//     when regions or contour arcs are asked for; missing vertices are never swept.
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
#include "scalar/mesh_links.hpp"

namespace factz::detail {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr size_t kAhead = 8;  // sweep steps between a vertex's prefetch and its visit

template <class T>
bool sos_below(std::span<const T> f, uint32_t a, uint32_t b) {
  return sos_less(f[a], a, f[b], b);
}

// A merge tree as its branch decomposition by the elder rule: every vertex belongs to one
// branch; a branch is born at an extremum and dies at the saddle where its component meets
// an elder one (kNone: the eldest of its connected component, it never dies). Branch ids
// follow the sweep, so a branch dies into a branch with a smaller id. `branch` holds each
// swept vertex's branch (CtWorkspace).
struct MergeTree {
  const uint32_t* branch = nullptr;
  std::vector<uint32_t> birth, death;  // per branch
};

// One merge-tree sweep by union-find (union by height, path halving) over `order`
// (ascending): every valid vertex, or only the vertices critical in either sweep (the
// regular ones hang from their parents set by classify_links). down == true: join tree
// (from the highest vertex down, maxima are born; work arrays 0); down == false: split
// tree (arrays 1). Each root is an extremum, whose branch entry is the branch born there;
// per such branch, the branch of the component it roots (`tag`: the one born at the
// component's elder extremum) and the root's height. `words` (may be null: recomputed)
// holds every vertex's link. Where the whole field is swept, the vertex `kAhead` steps
// ahead is prefetched: the order visits memory at random.
template <class T>
void merge_tree_sweep(const LinkClassifierOf<T>& lc, std::span<const uint32_t> order, const uint32_t* words,
                      const uint8_t* table, bool down, CtWorkspace& work, MergeTree& t) {
  const size_t nv = order.size();
  const std::span<const T> f = lc.f;
  uint32_t* parent = work.parent[down ? 0 : 1].data();
  uint32_t* branch = work.branch[down ? 0 : 1].get();
  t.branch = branch;
  t.birth.clear();
  t.death.clear();
  std::vector<uint32_t> tag;
  std::vector<uint8_t> height;
  const int shift = down ? 0 : 16;  // the swept mask: the upper link (join) or the lower (split)
  auto at = [&](size_t step) { return order[down ? nv - 1 - step : step]; };
  auto find = [&](uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  auto elder = [&](uint32_t a, uint32_t b) {  // join: the higher maximum; split: the lower minimum
    return down != sos_below(f, t.birth[a], t.birth[b]) ? a : b;
  };
  for (size_t step = 0; step < nv; ++step) {
    if (words && step + kAhead < nv) {
      const uint32_t u = at(step + kAhead);
      __builtin_prefetch(&words[u]);
      __builtin_prefetch(&parent[u]);
    }
    const uint32_t v = at(step);
    uint32_t mask = ((words ? words[v] : lc.word(v)) >> shift) & 0xFFFFu;
    const int comps = table[mask];
    if (comps == 1) {  // regular here: only its branch is asked for
      const uint32_t r = find(v);
      parent[v] = r;
      branch[v] = tag[branch[r]];
      continue;
    }
    if (comps == 0) {  // an extremum: a branch is born
      const uint32_t b = uint32_t(t.birth.size());
      parent[v] = v;
      branch[v] = b;
      tag.push_back(b);
      height.push_back(0);
      t.birth.push_back(v);
      t.death.push_back(kNone);
      continue;
    }
    uint32_t root = kNone;
    while (mask != 0) {
      const int k = __builtin_ctz(mask);
      mask &= mask - 1;
      uint32_t rw = find(uint32_t(int64_t(v) + lc.nb.offset[k]));
      if (rw == root) continue;
      if (root == kNone) {
        root = rw;
        continue;
      }
      const uint32_t a = tag[branch[root]], b = tag[branch[rw]], keep = elder(a, b);
      t.death[keep == a ? b : a] = v;  // the younger component dies here
      if (height[branch[root]] < height[branch[rw]]) std::swap(root, rw);
      parent[rw] = root;
      if (height[branch[root]] == height[branch[rw]]) ++height[branch[root]];
      tag[branch[root]] = keep;
    }
    parent[v] = root;
    branch[v] = tag[branch[root]];
  }
}

// Nodes of the unsimplified tree: the extremum and the saddle of every branch of both trees.
int64_t full_node_count(const MergeTree& join, const MergeTree& split) {
  std::vector<uint32_t> node;
  for (const auto* t : {&join, &split}) {
    node.insert(node.end(), t->birth.begin(), t->birth.end());
    for (uint32_t d : t->death)
      if (d != kNone) node.push_back(d);
  }
  std::sort(node.begin(), node.end());
  return std::unique(node.begin(), node.end()) - node.begin();
}

// In double (exact for floats; one rounding for doubles).
template <class T>
double persistence_of(std::span<const T> f, uint32_t extremum, uint32_t saddle) {
  return std::fabs(double(f[extremum]) - double(f[saddle]));
}

// The surviving branch each branch's vertices belong to: itself when it never dies or its
// persistence is at least p_abs, else the survivor of the branch it died into. A surviving
// branch only dies into a surviving one (that one's extremum is elder and its saddle
// further away, so its persistence is at least as large): the survivors form a merge tree.
template <class T>
std::vector<uint32_t> surviving_branches(const MergeTree& t, std::span<const T> f, double p_abs) {
  std::vector<uint32_t> eff(t.birth.size());
  for (size_t b = 0; b < eff.size(); ++b) {
    const uint32_t s = t.death[b];
    eff[b] = (s == kNone || persistence_of(f, t.birth[b], s) >= p_abs) ? uint32_t(b) : eff[t.branch[s]];
  }
  return eff;
}

// A vertex whose degrees in the simplified trees are not both 1, or that roots a merge
// tree: up / down are its children in the simplified join / split tree (0 for a surviving
// extremum, else 1, plus one per surviving branch that dies there); lowest / highest: it is
// its component's lowest vertex (the root of its join tree) / highest (of its split tree).
struct NodeCandidate {
  uint32_t vertex = 0;
  uint8_t up = 1, down = 1;
  bool lowest = false, highest = false;
  bool is_node() const { return up != 1 || down != 1; }
  bool join_node() const { return up != 1 || lowest; }
  bool split_node() const { return down != 1 || highest; }
};

// The two trees after simplification, and every vertex that can be a node, by index.
struct Simplified {
  const MergeTree& join;
  const MergeTree& split;
  std::vector<uint32_t> jeff, seff;
  std::vector<NodeCandidate> candidates;
};

template <class T>
Simplified simplify(const MergeTree& join, const MergeTree& split, std::span<const T> f, double p_abs) {
  Simplified s{join, split, surviving_branches(join, f, p_abs), surviving_branches(split, f, p_abs), {}};
  struct Event {
    uint32_t vertex;
    int8_t up, down;
    bool lowest, highest;
  };
  std::vector<Event> events;
  for (const auto* tree : {&join, &split}) {
    const bool j = tree == &join;
    const std::vector<uint32_t>& eff = j ? s.jeff : s.seff;
    for (size_t b = 0; b < eff.size(); ++b) {
      const uint32_t e = tree->birth[b], d = tree->death[b];
      if (d == kNone) events.push_back({e, 0, 0, !j, j});  // a root: the component's lowest / highest
      if (eff[b] != b) continue;
      events.push_back({e, int8_t(j ? -1 : 0), int8_t(j ? 0 : -1), false, false});
      if (d != kNone) events.push_back({d, int8_t(j ? 1 : 0), int8_t(j ? 0 : 1), false, false});
    }
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.vertex < b.vertex; });
  for (const Event& e : events) {
    if (s.candidates.empty() || s.candidates.back().vertex != e.vertex) s.candidates.push_back({e.vertex});
    NodeCandidate& c = s.candidates.back();
    c.up = uint8_t(c.up + e.up);
    c.down = uint8_t(c.down + e.down);
    c.lowest = c.lowest || e.lowest;
    c.highest = c.highest || e.highest;
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
template <class T>
std::vector<CtPair> surviving_pairs(const Simplified& s, std::span<const T> f, int64_t& pruned) {
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

// Per vertex the nearest node below and above it on its branch of one simplified merge
// tree (a node: itself), by one pass up and one down over the valid vertices in order. A
// branch's chain starts at its extremum, which is a node; past its other end lies the
// saddle where it dies.
void branch_neighbours(const MergeTree& t, const std::vector<uint32_t>& eff, std::span<const uint32_t> order,
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
void simplified_links(const MergeTree& t, const std::vector<uint32_t>& eff, std::span<const uint32_t> order, size_t n,
                      bool join, std::vector<uint32_t>& link, std::vector<uint8_t>& children,
                      std::vector<uint32_t>& child_xor) {
  const size_t nv = order.size();
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

template <class T>
double range_of(std::span<const T> values, std::span<const uint8_t> missing) {
  bool any = false;
  T lo = 0, hi = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!missing.empty() && missing[i]) continue;
    const T v = values[i];
    if (!any) lo = hi = v;
    any = true;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return double(hi) - double(lo);
}

template <class T>
double max_magnitude_of(std::span<const T> values, std::span<const uint8_t> missing) {
  double m = 0;
  for (size_t i = 0; i < values.size(); ++i)
    if ((missing.empty() || !missing[i]) && std::isfinite(values[i])) m = std::max(m, std::fabs(double(values[i])));
  return m;
}

}  // namespace

double scalar_range(std::span<const float> values, std::span<const uint8_t> missing) {
  return range_of(values, missing);
}
double scalar_range(std::span<const double> values, std::span<const uint8_t> missing) {
  return range_of(values, missing);
}
double scalar_max_magnitude(std::span<const float> values, std::span<const uint8_t> missing) {
  return max_magnitude_of(values, missing);
}
double scalar_max_magnitude(std::span<const double> values, std::span<const uint8_t> missing) {
  return max_magnitude_of(values, missing);
}

namespace {

template <class T>
ContourTree compute_tree(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing, double p_abs,
                         const CtRequest& want, int threads, CtWorkspace* work) {
  const size_t n = f.size();
  ContourTree tree;
  tree.nx = g.nx;
  tree.ny = g.ny;
  tree.nz = g.nz;
  tree.persistence = p_abs;
  if (threads <= 0) threads = 1;
  CtWorkspace local;
  CtWorkspace& w = work ? *work : local;

  // 1. Links (and the union-find parents of regular vertices), 2. the order of the
  // vertices swept: all valid ones where every vertex's branch is asked for, else only the
  // critical ones; 3. join and split trees with their elder-rule pairs (two sweeps, side
  // by side).
  const bool every_branch = want.segmentation || want.contour_arcs;
  const LinkClassifierOf<T> lc{f, g, Neighbourhood(g), missing};
  const uint8_t* table = link_table(g);
  for (int s = 0; s < 2; ++s) w.parent[s].resize(n);
  if (w.branch_size != n) {
    for (auto& b : w.branch) b.reset(new uint32_t[n]);  // uninitialized: pages come when written
    w.branch_size = n;
  }
  BigVector<uint32_t> words(every_branch ? n : 0), order;
  {
    BigVector<VertexKeyOf<T>> critical;
    classify_links(lc, threads, every_branch ? words.data() : nullptr, w, critical);
    if (every_branch) sort_vertices(f, missing, threads, order);
    else sort_keys(critical, threads, order);
  }
  const uint32_t* links = every_branch ? words.data() : nullptr;
  MergeTree join, split;
#pragma omp parallel sections num_threads(std::min(threads, 2))
  {
#pragma omp section
    merge_tree_sweep(lc, order, links, table, true, w, join);
#pragma omp section
    merge_tree_sweep(lc, order, links, table, false, w, split);
  }
  tree.full_nodes = full_node_count(join, split);
  tree.components = std::count(split.death.begin(), split.death.end(), kNone);

  // 4. Simplification: nodes, merge-tree arcs, pairs, regions.
  const Simplified s = simplify(join, split, f, p_abs);
  tree.pairs = surviving_pairs(s, f, tree.pruned_pairs);
  std::vector<uint32_t> jn, sn;  // each merge tree's nodes by increasing (value, index)
  for (const NodeCandidate& c : s.candidates) {
    if (c.is_node()) tree.nodes.push_back({int64_t(c.vertex), f[c.vertex], node_type(c.up, c.down), c.up, c.down});
    if (c.join_node()) jn.push_back(c.vertex);
    if (c.split_node()) sn.push_back(c.vertex);
  }
  for (auto* list : {&jn, &sn})
    std::sort(list->begin(), list->end(), [&](uint32_t a, uint32_t b) { return sos_below(f, a, b); });
  tree.join_arcs = merge_tree_arcs(join, s.jeff, jn, true);
  tree.split_arcs = merge_tree_arcs(split, s.seff, sn, false);
  if (want.segmentation) {
    std::vector<uint8_t> jnode(n, 0), snode(n, 0);
    for (uint32_t v : jn) jnode[v] = 1;
    for (uint32_t v : sn) snode[v] = 1;
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

  // 5. The contour tree of the two simplified merge trees, when there is one.
  if (want.contour_arcs) {
    std::vector<uint32_t> jlink, jxor, slink, sxor, other;
    std::vector<uint8_t> jchildren, schildren, other_is_up;
    simplified_links(join, s.jeff, order, n, true, jlink, jchildren, jxor);
    simplified_links(split, s.seff, order, n, false, slink, schildren, sxor);
    const size_t removed = merge_join_split(n, jlink, jchildren, jxor, slink, schildren, sxor, other, other_is_up);
    tree.contour_arcs = int64_t(removed) == int64_t(order.size()) - tree.components;
    if (tree.contour_arcs) tree.arcs = contour_arcs(n, other, other_is_up, missing);
  }
  return tree;
}

}  // namespace

ContourTree compute_contour_tree(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                 double p_abs, const CtRequest& want, int threads, CtWorkspace* work) {
  return compute_tree(f, g, missing, p_abs, want, threads, work);
}
ContourTree compute_contour_tree(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                 double p_abs, const CtRequest& want, int threads, CtWorkspace* work) {
  return compute_tree(f, g, missing, p_abs, want, threads, work);
}

}  // namespace factz::detail
