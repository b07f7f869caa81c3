// The per-phase choices of a 3D speculative stream with predictor 2 (docs/format.md, "3D
// vector streams"; docs/architecture.md, "3D speculative mode"), per phase and component:
//   along      for a nonempty phase with several axes: 0 the mean of its axes (predictor 1's
//              rule), a + 1 the cubic along axis a alone, one-sided on the grid's far
//              face (kernels/interpolation3d.hpp predict3d);
//   transform  for a phase of at least kMinTransformTargets targets: how its codes of the
//              component are written: 0 as they are; else the difference from their
//              neighbours on the phase's lattice (code transforms below), so codes that
//              repeat along an axis (a field constant along it) or vary slowly across it
//              (tight bounds on a smooth field) cost little.
// Every other phase, and every phase of a predictor 1 stream, has along 0 and transform 0.
// The choice table follows the predictor byte in the meta section: the along entries (2 bits
// each, four to a byte from the low bits, schedule order, u v w per phase), then the
// transform entries (4 bits each, two to a byte, low nibble first); unused bits are 0.
//
// Code transforms act on the phase's codes laid on its lattice (count_x x count_y x
// count_z, x fastest), a target without a code (exact, zero vector, missing) holding 0:
//   1 x, 2 y, 3 z:        d = q - q[-1 along the axis]
//   4 xy, 5 xz, 6 yz:     d = q - q[-a] - q[-b] + q[-a-b]   (the 2D Lorenzo step)
// with a neighbour off the lattice taken as 0, in int arithmetic modulo 2^16 (a code is
// int16; the symbol written is d + 32768 mod 2^16). The inverse runs in lattice order, every
// neighbour coming before its target, and restores each code exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "factz/field3d.hpp"
#include "factz/status.hpp"
#include "kernels/interpolation3d.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {

/// Code transforms: 0 none, 1..3 along x, y, z, 4..6 the Lorenzo step on xy, xz, yz.
inline constexpr int kCodeTransforms = 7;

/// Phases with fewer targets than this write their codes as they are, and have no transform
/// entry: too few codes to pay for one.
inline constexpr int64_t kMinTransformTargets = 512;

/// Whether a phase has an along entry (several axes, some target) and a transform entry.
bool has_axis_choice(const PhaseLattice3D& L, uint8_t axes);
bool has_transform_choice(const PhaseLattice3D& L);

/// The writer's choice of `along` for every phase and component (3 per phase of
/// PhaseSchedule3D(nx, ny, nz, s0), schedule order), on the original values of f: per phase
/// with an along entry and per component, the first of the phase's axes along which
/// cubic_along predicts every valid target (`missing`, null for none, marks the others) to
/// within a relative 2^-20 (the component is constant along that axis, as each component of
/// the ABC flow is along one): its codes are then 0 at every bound, and the reconstruction
/// stays constant along the axis for the phases after; else 0 (the mean). Choosing by the
/// codes' bits on the original values instead picked axes that lose on the reconstruction
/// (docs/benchmarks.md). All zeros when eb is 0. The components are walked side by side on
/// `threads` (the result does not depend on it).
std::vector<uint8_t> choose_axes3d(const VectorField3D& f, int64_t s0, double eb, const uint8_t* missing,
                                   int threads = 1);
std::vector<uint8_t> choose_axes3d(const VectorField3D64& f, int64_t s0, double eb, const uint8_t* missing,
                                   int threads = 1);

/// One phase's coded targets laid on its lattice (count_x x count_y x count_z, x fastest)
/// padded with a plane of zeros below each axis, where the code transforms of the file
/// comment work; 0 at every position without a code. reset() once per phase (the buffers
/// are reused), then the calls below once per component, each on that component's symbols
/// of the phase (code + 32768, one per coded target, in lattice order).
class CodeLattice {
 public:
  /// `cells` the lattice's sizes, `at` the lattice positions of the coded targets (increasing).
  void reset(const int64_t cells[3], std::span<const int64_t> at);
  /// The same from the coded targets' padded positions (padded_positions of `at`).
  void reset_padded(const int64_t cells[3], std::span<const int64_t> padded);
  /// Padded positions of lattice positions `at` (increasing) on a lattice of `cells`, by one
  /// walk of the lattice with counters (no division).
  static std::vector<int64_t> padded_positions(const int64_t cells[3], std::span<const int64_t> at);

  /// The writer's transform: the one with the fewest bits in all (sum of bit widths of |d|;
  /// from 8192 codes on, over every fourth code) when it beats none by more than 1/16 (ties
  /// to the lower number), applied to `sym` in place; returns it (0: `sym` is left as is).
  int choose_and_apply(std::span<uint16_t> sym);

  /// Whether choose_and_apply can pick a transform for `sym` (one component's codes of a
  /// phase): false when every costed code is 0, since then "none" costs 0 bits and nothing
  /// beats it. A phase where no component can is skipped without laying a lattice (most
  /// phases of a smooth field at a loose bound): the same choices, no lattice work.
  static bool may_transform(std::span<const uint16_t> sym);

  /// Transform `transform` (0..6) applied to `sym` in place (what choose_and_apply writes
  /// once it has chosen), and its inverse (the reader's).
  void apply(int transform, std::span<uint16_t> sym);
  void undo(int transform, std::span<uint16_t> sym);

 private:
  void lay(std::span<const uint16_t> sym);
  void rewrite(int transform, std::span<uint16_t> sym);

  int64_t px_ = 1, pxy_ = 1;      ///< padded strides of y and z
  std::vector<int64_t> padded_;   ///< padded index of each coded target
  std::vector<int32_t> q_;        ///< the codes on the padded lattice
};

/// Runs f(c, lattice) for the components c = 0, 1, 2 of one phase whose coded targets have
/// the padded positions `padded` (CodeLattice::padded_positions) on a lattice of `cells`,
/// each with a lattice reset to the phase: side by side on `threads`, with `lattices[c]`, when
/// the phase has at least kSideBySideCodes codes (a smaller one is not worth waking a
/// thread), else in turn with `lattices[0]`.
inline constexpr size_t kSideBySideCodes = 65536;
void for_each_component(const int64_t cells[3], std::span<const int64_t> padded, int threads,
                        CodeLattice (&lattices)[3], const std::function<void(int, CodeLattice&)>& f);

/// Whether the choices ask for predictor 2 (some along or transform is not 0).
bool any_choice(std::span<const uint8_t> along, std::span<const uint8_t> transforms);

/// Appends the choice table of a predictor 2 meta section (the file comment gives its
/// layout). `along` and `transforms`: 3 per phase (empty: all 0).
void append_choice_table(ByteWriter& w, int64_t nx, int64_t ny, int64_t nz, int64_t s0,
                         std::span<const uint8_t> along, std::span<const uint8_t> transforms);

/// Reads a choice table (the rest of a predictor 2 meta section) into 3 entries per phase;
/// corrupt_stream for a wrong length, an along that is not one of the phase's axes
/// (valid_along), a transform above 6 or an unused bit set.
Status parse_choice_table(std::span<const uint8_t> table, int64_t nx, int64_t ny, int64_t nz, int64_t s0,
                          std::vector<uint8_t>& along, std::vector<uint8_t>& transforms);

}  // namespace factz::detail
