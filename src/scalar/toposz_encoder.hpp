// The TopoSZ encoder of mode contour-tree (docs/toposz.md, "Compression"): quantization
// codes that keep the simplified contour tree of the field.
#pragma once

#include <cstdint>
#include <span>

#include "factz/contour_tree.hpp"
#include "factz/scalar.hpp"
#include "scalar/scalar_quantizer.hpp"

namespace factz::detail {

/// What the encoder needs besides the quantization step.
struct TopoInput {
  std::span<const float> f;
  ScalarGrid grid;
  std::span<const uint8_t> missing;  ///< empty, or nonzero per missing vertex
  std::span<const float> fills;      ///< fill_values: values a valid vertex must not decode to
  float eb = 0;                      ///< absolute pointwise bound
  double p_abs = 0;                  ///< absolute persistence threshold
  const ContourTree* tree = nullptr;  ///< of f simplified at p_abs
  int threads = 1;
  const ScalarProgressHook* progress = nullptr;  ///< may be null or empty
  int64_t step_index = 0;                        ///< reported in the progress
};

/// Quantizes `in.f` with `step` (at most in.eb) so that the decoded field's tree simplified
/// at in.p_abs equals *in.tree, and returns the rounds of repair it took (0: the first
/// reconstruction was right). Never returns a reconstruction with a different tree: past
/// the last round every value is stored exactly.
int64_t toposz_quantize(const TopoInput& in, float step, Quantized& q);

}  // namespace factz::detail
