// FaCTz-S level-wise bound: the encoder's per-field choice of the tight step
// (kernels/speculation.hpp, first_bound_id). Starting the coarse levels at half the bound costs
// about a bit per coarse code and spares every finer level the coarse errors in its
// predictions: it pays on fields that are smooth at the bound's scale (13 % smaller on a
// 4096^2 turbulence at REL 1e-2) and costs 1-3 % on rough ones. The choice is made on a
// trial: the schedule run serially on a central crop (trial_crop_side) with each choice,
// the one with the smaller estimated payload kept. Host code of the stream layer, shared by
// every backend (the CPU encoder and the CUDA host driver call it on the same values), so
// their streams stay byte-identical; the decoder needs nothing of it. Compiled once in
// speculative_trial.cpp: a second call site of speculate_vertex in the encoder's unit made
// the compiler stop inlining it into the hot phase loop (+40 % compression time).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/interpolation.hpp"
#include "kernels/speculation.hpp"

namespace factz::detail {

/// The tight step tried against kNoTightLevel.
inline constexpr int64_t kTrialTightStep = 8;

/// The trial's crop side along an axis of n vertices: the whole axis up to kTrialCropMin
/// (small fields: the trial costs milliseconds and sees every level), else about half of it
/// (a quarter of a large field's vertices) within [kTrialCropMin, kTrialCropMax]. The coarse
/// levels' errors travel far, so a crop much smaller than the field misjudges smooth fields:
/// on a 4096^2 turbulence a 512^2 crop chose the full bound and a 1024^2 one the tight
/// levels, as the whole field does; 256^2 crops of the 512^2 shear layer and the 480 x 241
/// reanalysis wind chose the full bound, which costs them 23 % and 11 % at REL 1e-2.
inline constexpr int64_t kTrialCropMin = 512;
inline constexpr int64_t kTrialCropMax = 1024;
int64_t trial_crop_side(int64_t n);

/// The trial's central crop of an nx x ny field.
struct TrialCrop {
  int64_t x0 = 0, y0 = 0, w = 0, h = 0;
};
TrialCrop trial_crop(int64_t nx, int64_t ny);

/// The tight step of the level-wise bound for a field of full_n vertices from its trial
/// crop (u, v: crop.w * crop.h values of the filled working copy, row by row; missing:
/// empty, or one byte per crop vertex) at bound eb with anchor stride s0: kNoTightLevel for
/// the linear predictor or where the trial does not show the tight levels at least 1 %
/// smaller (the estimate is rough on tiny fields: a 36 x 33 one lost 1.5 % on a 0.5 %
/// estimate; any rounding of it lies far below the margin). The two trials run on up to two
/// threads (the same result for any count). A backend whose field is on a device copies
/// the crop to the host and calls this with it.
int64_t choose_tight_step_on_crop(const TrialCrop& crop, int64_t full_n, const std::vector<float>& u,
                                  const std::vector<float>& v, const std::vector<uint8_t>& missing, float eb, int64_t s0,
                                  Predictor pred, int threads);
int64_t choose_tight_step_on_crop(const TrialCrop& crop, int64_t full_n, const std::vector<double>& u,
                                  const std::vector<double>& v, const std::vector<uint8_t>& missing, double eb,
                                  int64_t s0, Predictor pred, int threads);

/// Whether the trial's crop is the whole nx x ny field and the trial's choice can be made on
/// the encoder's own runs instead (trial_choice_on_runs): the cubic predictor, eb > 0, at
/// least 2 x 2, each axis within trial_crop_side, and no exact edges (which the trial does
/// not keep, so its runs differ from the encoder's there).
bool trial_is_whole_field(int64_t nx, int64_t ny, bool positive_bound, Predictor pred, uint8_t exact_edges);

/// The trial's choice from the encoder's own runs of the schedule on the whole field, one
/// with kNoTightLevel and one with kTrialTightStep (trial_is_whole_field): ids, sym_u, sym_v
/// in stream order as the CPU driver writes them (kMissingVertex for a missing target; codes
/// + kRadius where the id has codes). The same estimate on the same values as
/// choose_tight_step, so the same choice: one run of the schedule fewer. value_bytes: 4 or 8.
int64_t trial_choice_on_runs(int64_t nx, int64_t ny, int64_t s0, const std::vector<uint16_t>* const ids[2],
                             const std::vector<uint16_t>* const sym_u[2], const std::vector<uint16_t>* const sym_v[2],
                             int value_bytes);

/// choose_tight_step_on_crop for a host field (u, v of nx * ny values; missing null or one
/// byte per vertex).
int64_t choose_tight_step(int64_t nx, int64_t ny, const float* u, const float* v, const uint8_t* missing, float eb,
                          int64_t s0, Predictor pred, int threads);
int64_t choose_tight_step(int64_t nx, int64_t ny, const double* u, const double* v, const uint8_t* missing,
                          double eb, int64_t s0, Predictor pred, int threads);

}  // namespace factz::detail
