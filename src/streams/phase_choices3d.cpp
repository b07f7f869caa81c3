#include "streams/phase_choices3d.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/interpolation3d.hpp"
#include "streams/stream_common.hpp"

namespace factz::detail {
namespace {

/// From this many coded targets on, the transforms are costed on every kSampleStride-th one,
/// which decides them as well at a quarter of the cost: a choice is a property of the phase.
constexpr size_t kSampleFrom = 8192;
constexpr size_t kSampleStride = 4;

/// Whether p is x up to a few roundings of the value type (relative 2^-20).
inline bool negligible(double x, double p) { return std::fabs(x - p) <= 0x1p-20 * (std::fabs(x) + std::fabs(p)); }

/// The int16 value of d modulo 2^16 (a code, or a transformed one).
inline int32_t wrap16(int32_t d) { return int32_t(int16_t(uint16_t(uint32_t(d)))); }

/// Bit width of |d| for an int16 value d.
inline int64_t magnitude_bits(int32_t d) { return std::bit_width(uint32_t(d < 0 ? -d : d)); }

template <class Field>
std::vector<uint8_t> choose_axes3d_any(const Field& f, int64_t s0, double eb, const uint8_t* missing, int threads) {
  using T = typename decltype(f.u)::value_type;
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz;
  std::vector<uint8_t> along(size_t(3 * phase_count3d(s0)), 0);
  if (!(eb > 0.0)) return along;
  const int64_t len[3] = {nx, ny, nz}, stride[3] = {1, nx, nx * ny};
  // One job per phase with a choice and component: the walks are independent, and with the
  // phases of the last level as separate jobs two threads share three components evenly.
  auto choose = [&](const ScheduledPhase3D& ph, int64_t index, int c) {
    const T* const comp = c == 0 ? f.u.data() : c == 1 ? f.v.data() : f.w.data();
    const PhaseLattice3D& L = ph.lattice;
    // exact[a]: the component is predicted exactly along axis a on every target so far. On
    // most fields every axis fails within a few targets, and the walk stops there.
    bool exact[3];
    int open = 0;
    for (int a = 0; a < 3; ++a) open += exact[a] = ((ph.axes >> a) & 1) != 0;
    for (int64_t z = L.z0, l = 0; l < L.count_z && open > 0; ++l, z += L.d)
      for (int64_t y = L.y0, j = 0; j < L.count_y && open > 0; ++j, y += L.d)
        for (int64_t x = L.x0, i = 0; i < L.count_x && open > 0; ++i, x += L.d) {
          const int64_t k = (z * ny + y) * nx + x;
          if (missing && missing[k]) continue;
          const int64_t pos[3] = {x, y, z};
          for (int a = 0; a < 3; ++a) {
            if (!exact[a]) continue;
            bool two;
            const T p = cubic_along(comp, k, pos[a], len[a], ph.step, stride[a], two);
            if (!negligible(double(comp[k]), double(p))) {
              exact[a] = false;
              --open;
            }
          }
        }
    for (int a = 2; a >= 0; --a)
      if (exact[a]) along[size_t(3 * index + c)] = uint8_t(a + 1);
    return Status::Ok();
  };
  std::vector<CodingJob> jobs;
  PhaseSchedule3D schedule(nx, ny, nz, s0);
  int64_t index = 0;
  for (ScheduledPhase3D ph; schedule.next(ph); ++index)
    if (has_axis_choice(ph.lattice, ph.axes))
      for (int c = 0; c < 3; ++c) jobs.emplace_back([&choose, ph, index, c](int) { return choose(ph, index, c); });
  std::reverse(jobs.begin(), jobs.end());  // the largest phases (the last level's) first
  (void)run_side_by_side(threads, jobs);  // the jobs cannot fail
  return along;
}

}  // namespace

std::vector<uint8_t> choose_axes3d(const VectorField3D& f, int64_t s0, double eb, const uint8_t* missing,
                                   int threads) {
  return choose_axes3d_any(f, s0, eb, missing, threads);
}
std::vector<uint8_t> choose_axes3d(const VectorField3D64& f, int64_t s0, double eb, const uint8_t* missing,
                                   int threads) {
  return choose_axes3d_any(f, s0, eb, missing, threads);
}

std::vector<int64_t> CodeLattice::padded_positions(const int64_t cells[3], std::span<const int64_t> at) {
  const int64_t cx = cells[0], cy = cells[1], cz = cells[2], px = cx + 1, pxy = (cx + 1) * (cy + 1);
  std::vector<int64_t> padded(at.size());
  // Lattice position t = (i, j, l) is padded index (l + 1) pxy + (j + 1) px + i + 1.
  size_t next = 0;
  int64_t t = 0;
  for (int64_t l = 0; l < cz && next < at.size(); ++l)
    for (int64_t j = 0; j < cy && next < at.size(); ++j) {
      const int64_t row = (l + 1) * pxy + (j + 1) * px + 1;
      for (int64_t i = 0; i < cx && next < at.size(); ++i, ++t)
        if (at[next] == t) padded[next++] = row + i;
    }
  return padded;
}

void CodeLattice::reset_padded(const int64_t cells[3], std::span<const int64_t> padded) {
  px_ = cells[0] + 1;
  pxy_ = (cells[0] + 1) * (cells[1] + 1);
  q_.assign(size_t(pxy_ * (cells[2] + 1)), 0);
  padded_.assign(padded.begin(), padded.end());
}

void CodeLattice::reset(const int64_t cells[3], std::span<const int64_t> at) {
  reset_padded(cells, padded_positions(cells, at));
}

void for_each_component(const int64_t cells[3], std::span<const int64_t> padded, int threads,
                        CodeLattice (&lattices)[3], const std::function<void(int, CodeLattice&)>& f) {
  auto job = [&](int c) {
    lattices[c].reset_padded(cells, padded);
    f(c, lattices[c]);
    return Status::Ok();
  };
  if (threads < 2 || padded.size() < kSideBySideCodes) {  // in turn, on one lattice
    for (int c = 0; c < 3; ++c) {
      lattices[0].reset_padded(cells, padded);
      f(c, lattices[0]);
    }
    return;
  }
  const CodingJob jobs[3] = {[&](int) { return job(0); }, [&](int) { return job(1); }, [&](int) { return job(2); }};
  (void)run_side_by_side(threads, jobs);  // the jobs cannot fail
}

void CodeLattice::lay(std::span<const uint16_t> sym) {
  for (size_t j = 0; j < padded_.size(); ++j) q_[size_t(padded_[j])] = int32_t(sym[j]) - 32768;
}

namespace {

/// What transform TR subtracts at padded index p of `v` (strides px, pxy).
template <int TR>
inline int32_t transform_prediction(const int32_t* v, int64_t p, int64_t px, int64_t pxy) {
  if constexpr (TR == 1) return v[p - 1];
  if constexpr (TR == 2) return v[p - px];
  if constexpr (TR == 3) return v[p - pxy];
  if constexpr (TR == 4) return v[p - 1] + v[p - px] - v[p - 1 - px];
  if constexpr (TR == 5) return v[p - 1] + v[p - pxy] - v[p - 1 - pxy];
  return v[p - px] + v[p - pxy] - v[p - px - pxy];
}

/// Calls f with transform tr (1..6) as a template argument: the loops below run without a
/// switch per code.
template <class F>
void with_transform(int tr, F&& f) {
  switch (tr) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    default: f(std::integral_constant<int, 6>{}); break;
  }
}

}  // namespace

void CodeLattice::rewrite(int tr, std::span<uint16_t> sym) {
  with_transform(tr, [&](auto t) {
    const int32_t* v = q_.data();
    for (size_t j = 0; j < padded_.size(); ++j) {
      const int64_t p = padded_[j];
      const int32_t d = v[p] - transform_prediction<decltype(t)::value>(v, p, px_, pxy_);
      sym[j] = uint16_t(uint32_t(d + 32768));
    }
  });
}

void CodeLattice::apply(int transform, std::span<uint16_t> sym) {
  if (transform == 0 || padded_.empty()) return;
  lay(sym);
  rewrite(transform, sym);
}

namespace {

/// The costing's stride over `codes` coded targets (choose_and_apply).
size_t cost_step(size_t codes) { return codes >= kSampleFrom ? kSampleStride : 1; }

}  // namespace

bool CodeLattice::may_transform(std::span<const uint16_t> sym) {
  const size_t step = cost_step(sym.size());
  for (size_t j = 0; j < sym.size(); j += step)
    if (sym[j] != 32768) return true;
  return false;
}

int CodeLattice::choose_and_apply(std::span<uint16_t> sym) {
  if (padded_.empty() || !may_transform(sym)) return 0;  // cost[0] would be 0: none wins
  lay(sym);
  int64_t cost[kCodeTransforms] = {0};
  const int32_t* v = q_.data();
  const int64_t px = px_, pxy = pxy_;
  const size_t step = cost_step(padded_.size());
  for (size_t j = 0; j < padded_.size(); j += step) {
    const int64_t p = padded_[j];
    const int32_t q = v[p], qx = v[p - 1], qy = v[p - px], qz = v[p - pxy];
    cost[0] += magnitude_bits(q);
    cost[1] += magnitude_bits(wrap16(q - qx));
    cost[2] += magnitude_bits(wrap16(q - qy));
    cost[3] += magnitude_bits(wrap16(q - qz));
    cost[4] += magnitude_bits(wrap16(q - qx - qy + v[p - 1 - px]));
    cost[5] += magnitude_bits(wrap16(q - qx - qz + v[p - 1 - pxy]));
    cost[6] += magnitude_bits(wrap16(q - qy - qz + v[p - px - pxy]));
  }
  int best = 0;
  for (int tr = 1; tr < kCodeTransforms; ++tr)
    if (cost[tr] < cost[best]) best = tr;
  if (best == 0 || !(cost[best] * 16 < cost[0] * 15)) return 0;
  rewrite(best, sym);
  return best;
}

void CodeLattice::undo(int transform, std::span<uint16_t> sym) {
  if (transform == 0 || padded_.empty()) return;
  with_transform(transform, [&](auto t) {
    int32_t* v = q_.data();
    for (size_t j = 0; j < padded_.size(); ++j) {  // increasing positions: every neighbour is final
      const int64_t p = padded_[j];
      const int32_t q = wrap16(int32_t(sym[j]) - 32768 + transform_prediction<decltype(t)::value>(v, p, px_, pxy_));
      v[p] = q;
      sym[j] = uint16_t(uint32_t(q + 32768));
    }
  });
}

bool any_choice(std::span<const uint8_t> along, std::span<const uint8_t> transforms) {
  for (uint8_t a : along)
    if (a) return true;
  for (uint8_t t : transforms)
    if (t) return true;
  return false;
}

namespace {

/// Packs entries of `bits` bits, 8 / bits to a byte from the low bits.
class BitPacker {
 public:
  explicit BitPacker(int bits) : bits_(bits) {}
  void put(uint8_t v) {
    if (used_ == 0) out_.push_back(0);
    out_.back() = uint8_t(out_.back() | (v << used_));
    used_ = (used_ + bits_) % 8;
  }
  const std::vector<uint8_t>& bytes() const { return out_; }

 private:
  int bits_, used_ = 0;
  std::vector<uint8_t> out_;
};

/// Reads what BitPacker wrote from `in`, starting at byte `pos` (advanced past what it reads).
class BitUnpacker {
 public:
  BitUnpacker(std::span<const uint8_t> in, size_t& pos, int bits) : in_(in), pos_(pos), bits_(bits) {}
  bool get(uint8_t& v) {
    if (used_ == 0) {
      if (pos_ >= in_.size()) return false;
      byte_ = in_[pos_++];
    }
    v = uint8_t((byte_ >> used_) & ((1 << bits_) - 1));
    used_ = (used_ + bits_) % 8;
    return true;
  }
  /// Whether the unused bits of the last byte read are 0.
  bool clean_tail() const { return used_ == 0 || (byte_ >> used_) == 0; }

 private:
  std::span<const uint8_t> in_;
  size_t& pos_;
  int bits_, used_ = 0;
  uint8_t byte_ = 0;
};

}  // namespace

bool has_axis_choice(const PhaseLattice3D& L, uint8_t axes) { return several_axes(axes) && L.count() > 0; }
bool has_transform_choice(const PhaseLattice3D& L) { return L.count() >= kMinTransformTargets; }

void append_choice_table(ByteWriter& w, int64_t nx, int64_t ny, int64_t nz, int64_t s0,
                         std::span<const uint8_t> along, std::span<const uint8_t> transforms) {
  BitPacker a(2), t(4);
  PhaseSchedule3D schedule(nx, ny, nz, s0);
  int64_t index = 0;
  for (ScheduledPhase3D ph; schedule.next(ph); ++index)
    for (int c = 0; c < 3; ++c) {
      const size_t i = size_t(3 * index + c);
      if (has_axis_choice(ph.lattice, ph.axes)) a.put(along.empty() ? 0 : along[i]);
      if (has_transform_choice(ph.lattice)) t.put(transforms.empty() ? 0 : transforms[i]);
    }
  for (uint8_t b : a.bytes()) w.u8(b);
  for (uint8_t b : t.bytes()) w.u8(b);
}

Status parse_choice_table(std::span<const uint8_t> table, int64_t nx, int64_t ny, int64_t nz, int64_t s0,
                          std::vector<uint8_t>& along, std::vector<uint8_t>& transforms) {
  const size_t entries = size_t(3 * phase_count3d(s0));
  along.assign(entries, 0);
  transforms.assign(entries, 0);
  size_t pos = 0;
  for (int pass = 0; pass < 2; ++pass) {  // the along entries, then the transform entries
    BitUnpacker in(table, pos, pass == 0 ? 2 : 4);
    PhaseSchedule3D schedule(nx, ny, nz, s0);
    int64_t index = 0;
    for (ScheduledPhase3D ph; schedule.next(ph); ++index) {
      if (pass == 0 ? !has_axis_choice(ph.lattice, ph.axes) : !has_transform_choice(ph.lattice)) continue;
      for (int c = 0; c < 3; ++c) {
        uint8_t v = 0;
        if (!in.get(v)) return corrupt_stream("meta section: the choice table runs short of the phases");
        if (pass == 0 && !valid_along(v, ph.axes))
          return corrupt_stream("meta section: choice " + std::to_string(int(v)) + " of phase " +
                                std::to_string(index) + " is not one of its axes");
        if (pass == 1 && v >= kCodeTransforms)
          return corrupt_stream("meta section: unknown code transform " + std::to_string(int(v)));
        (pass == 0 ? along : transforms)[size_t(3 * index + c)] = v;
      }
    }
    if (!in.clean_tail()) return corrupt_stream("meta section: unused bits of the choice table are set");
  }
  if (pos != table.size()) return corrupt_stream("meta section: the choice table is longer than the phases");
  return Status::Ok();
}

}  // namespace factz::detail
