// The bytes of multi-block files (FZMB versions 1, 2 and 3, docs/format.md "Multi-block files")
// pinned by their CRC-32C and size, written before the 2D and 3D drivers were folded into one
// templated implementation (src/api/multiblock_common.hpp): the refactor must not move a byte.
// Changed on purpose since: the speculative 2x2 pins, when the encoder started choosing the
// level-wise bound per block (streams/speculative_trial.hpp; +7 bytes each on this noise), and
// the 2D block pin, when block mode started quantizing the vertices of critical-point
// triangles instead of storing them (kernels/block_bounds.hpp triangle_bounds; 6228 -> 4337
// bytes on this noise), then when the 2D tile choice's estimate of an exact value dropped
// from 48 to 24 bits (kExactCostBits; -> 4305), then when stored vertices were listed on the
// grid of their own bound and the estimate dropped to 12 bits (-> 4424: on this noise the
// lower estimate lists more vertices than it saves codes), then when every block stream moved
// to the compact container (format version 18; its sections unchanged): 3899 -> 3019, 4424 ->
// 3539, 4541 -> 3669, 4978 -> 4198, 18420 -> 16404, 33801 -> 32040, 6686 -> 6397 bytes; then
// the 2D block pin when stored vertices went to the coarsest grid within their own bound
// (kernels/exact_rounding.hpp list_exact): 3539 -> 3527; then every pin whose exact values the
// zstd stage now keeps byte-shuffled (format version 23 blocks; the same values): 2D block
// 3527 -> 3522, float64 speculative 3669 -> 3581, float64 none 4198 -> 4094, 3D block
// 32040 -> 32036.
// The fields are synthetic and deterministic (noise is exact; random_modes sums cosines in
// double and rounds once), with missing vertices on shared and inner planes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "format/crc32.hpp"
#include "synth.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

Options opts(Mode mode, BoundMode bm, double bound) {
  Options o;
  o.mode = mode;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

struct Pin {
  uint32_t crc;
  size_t size;
};

void expect_pinned(const Result<std::vector<uint8_t>>& file, Pin want, const char* what) {
  ASSERT_TRUE(file.ok()) << what << ": " << file.status().to_string();
  const uint32_t crc = detail::crc32c(file.value());
  EXPECT_EQ(crc, want.crc) << what << ": crc 0x" << std::hex << crc << std::dec << " size " << file->size();
  EXPECT_EQ(file->size(), want.size) << what;
}

VectorField2D masked2d() {
  VectorField2D f = synth::noise(23, 19, 5);
  f.u[size_t(9 * 23 + 11)] = std::nanf("");  // on the shared column of a 2 x 2 layout
  f.v[size_t(3 * 23 + 4)] = std::nanf("");
  return f;
}

VectorField2D64 double_of(const VectorField2D& f) {
  VectorField2D64 g{f.nx, f.ny, {}, {}, f.mask};
  for (size_t k = 0; k < f.u.size(); ++k) {
    // Detail below float32 precision, so that a float32 shortcut would change the bytes.
    g.u.push_back(double(f.u[k]) + 0x1p-40 * double(k % 7));
    g.v.push_back(double(f.v[k]) - 0x1p-41 * double(k % 5));
  }
  return g;
}

VectorField3D masked3d() {
  VectorField3D f = testing::random_modes(13, 11, 12, 4);
  f.u[size_t((6 * 11 + 5) * 13 + 6)] = std::nanf("");  // on shared planes of a 2 x 2 x 2 layout
  f.w[size_t((2 * 11 + 3) * 13 + 9)] = std::nanf("");
  return f;
}

TEST(MultiBlockPinned, Version1FilesKeepTheirBytes) {
  const VectorField2D f = masked2d();
  expect_pinned(compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 2, 2),
                {0x67fa4647u, 3019}, "v1 spec 2x2");
  expect_pinned(compress_multiblock(f, opts(Mode::block, BoundMode::abs, 0.05), 3, 1),
                {0x35de4c71u, 3522}, "v1 block 3x1");
}

TEST(MultiBlockPinned, Version2FilesKeepTheirBytes) {
  const VectorField2D64 f = double_of(masked2d());
  expect_pinned(compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 2, 2),
                {0x978d3d59u, 3581}, "v2 spec 2x2");
  expect_pinned(compress_multiblock(f, opts(Mode::none, BoundMode::abs, 1e-3), 1, 3),
                {0x03e91649u, 4094}, "v2 none 1x3");
}

TEST(MultiBlockPinned, Version3FilesKeepTheirBytes) {
  const VectorField3D f = masked3d();
  expect_pinned(compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 2, 2, 2), {0x45832508u, 16404},
                "v3 spec 2x2x2");
  expect_pinned(compress_multiblock(f, opts(Mode::block, BoundMode::abs, 0.05), 3, 1, 2),
                {0x87d9306cu, 32036}, "v3 block 3x1x2");
  expect_pinned(compress_multiblock(f, opts(Mode::none, BoundMode::rel, 1e-3), 1, 1, 1),
                {0xc7c99e69u, 6397}, "v3 none 1x1x1");
}

}  // namespace
}  // namespace factz
