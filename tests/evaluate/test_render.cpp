// `factz render`: the PNG decodes, has the documented size, shows a marker of the right
// colour at every critical point's pixel and a legend; fates match the exact comparison;
// bad input gives clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "render.hpp"
#include "support.hpp"
#include "support/png_decode.hpp"
#include "synth.hpp"

namespace {

using namespace factz;
using namespace factz::render;
using namespace factz::eval_test;
using factz::testing::decode_png;

// Markers at least `gap` pixels from every other marker, so that their centre pixel is
// not covered by a neighbour's disc or ring.
std::vector<Marker> isolated(const std::vector<Marker>& all, const Window& w, int size) {
  std::vector<Marker> out;
  const int gap = 2 * (kMarkerRadius + 2);
  for (size_t a = 0; a < all.size(); ++a) {
    int ax = 0, ay = 0;
    to_pixel(w, size, all[a].x, all[a].y, ax, ay);
    bool alone = true;
    for (size_t b = 0; b < all.size() && alone; ++b) {
      if (a == b) continue;
      int bx = 0, by = 0;
      to_pixel(w, size, all[b].x, all[b].y, bx, by);
      alone = std::abs(ax - bx) > gap || std::abs(ay - by) > gap;
    }
    if (alone) out.push_back(all[a]);
  }
  return out;
}

bool legend_has(const Image& im, int map_height, std::array<uint8_t, 3> c) {
  for (int y = map_height; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x)
      if (im.at(x, y) == c) return true;
  return false;
}

TEST(Render, PngDecodesWithTheDocumentedSizeAndAMarkerAtEveryCriticalPoint) {
  const VectorField2D f = synth::vortices(60, 40, 3, 12);
  auto markers = classify(f, nullptr);
  ASSERT_TRUE(markers.ok());
  auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_EQ(markers->size(), cps->size());
  ASSERT_GE(markers->size(), 4u);
  render::Options o;
  o.window = {0, 0, 59, 39};
  o.size = 600;
  auto im = draw(f, markers.value(), o);
  ASSERT_TRUE(im.ok()) << im.status().to_string();
  TempDir dir;
  ASSERT_TRUE(write_png(dir / "f.png", im.value()).ok());
  Image back;
  ASSERT_TRUE(decode_png(dir / "f.png", back));
  // 600 px per 60 vertices: 10 px per grid unit; legend strip below.
  EXPECT_EQ(back.width, 600);
  EXPECT_EQ(back.height, 400 + kLegendHeight);
  EXPECT_EQ(back.rgb, im->rgb);
  const auto alone = isolated(markers.value(), o.window, o.size);
  ASSERT_GE(alone.size(), 2u);
  for (const auto& m : alone) {
    int px = 0, py = 0;
    to_pixel(o.window, o.size, m.x, m.y, px, py);
    EXPECT_EQ(back.at(px, py), fate_colour(Fate::original)) << m.x << "," << m.y;
    EXPECT_EQ(back.at(px + kMarkerRadius + 1, py), (std::array<uint8_t, 3>{0, 0, 0}));  // the ring
  }
  // The colour map never uses a marker colour, so marker pixels only appear near markers.
  int green = 0;
  for (int y = 0; y < 400; ++y)
    for (int x = 0; x < 600; ++x) green += back.at(x, y) == fate_colour(Fate::original);
  EXPECT_GT(green, 0);
  EXPECT_LE(green, int(markers->size()) * 100);
  EXPECT_TRUE(legend_has(back, 400, fate_colour(Fate::original)));
  EXPECT_TRUE(legend_has(back, 400, {0, 0, 0}));  // text
}

TEST(Render, FatesMatchTheExactComparisonAndEachIsDrawnInItsColour) {
  const VectorField2D f = synth::turbulence(64, 48, 21);
  factz::Options co;
  co.mode = Mode::none;
  co.bound = 8e-2;  // topology-agnostic and coarse: loses, adds and retypes critical points
  auto s = compress(f, co);
  ASSERT_TRUE(s.ok());
  auto d = decompress(s.value());
  ASSERT_TRUE(d.ok());
  auto c = compare(f, d.value());
  ASSERT_TRUE(c.ok());
  auto markers = classify(f, &d.value());
  ASSERT_TRUE(markers.ok());
  int64_t n[kFateCount] = {};
  for (const auto& m : markers.value()) ++n[int(m.fate)];
  EXPECT_EQ(n[int(Fate::lost)], c->lost);
  EXPECT_EQ(n[int(Fate::spurious)], c->spurious);
  EXPECT_EQ(n[int(Fate::type_changed)], c->type_changed);
  EXPECT_EQ(n[int(Fate::preserved)], c->cp_original - c->lost - c->type_changed);
  EXPECT_EQ(n[int(Fate::original)], 0);
  ASSERT_GT(c->lost + c->spurious, 0);

  render::Options o;
  o.window = {0, 0, 63, 47};
  o.size = 1024;
  o.reconstruction = true;
  o.lic = true;
  auto im = draw(d.value(), markers.value(), o);
  ASSERT_TRUE(im.ok());
  TempDir dir;
  ASSERT_TRUE(write_png(dir / "fates.png", im.value()).ok());
  Image back;
  ASSERT_TRUE(decode_png(dir / "fates.png", back));
  int mw = 0, mh = 0;
  map_size(o.window, o.size, mw, mh);
  EXPECT_EQ(mw, 1024);
  EXPECT_EQ(mh, 768);
  EXPECT_EQ(back.width, 1024);
  EXPECT_EQ(back.height, 768 + kLegendHeight);
  int checked = 0;
  for (const auto& m : isolated(markers.value(), o.window, o.size)) {
    int px = 0, py = 0;
    to_pixel(o.window, o.size, m.x, m.y, px, py);
    EXPECT_EQ(back.at(px, py), fate_colour(m.fate)) << fate_label(m.fate) << " at " << m.x << "," << m.y;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  for (Fate fate : {Fate::preserved, Fate::lost, Fate::spurious, Fate::type_changed})
    EXPECT_TRUE(legend_has(back, mh, fate_colour(fate))) << fate_label(fate);
}

TEST(Render, ZoomWindowSetsTheSizeAndShowsOnlyItsMarkers) {
  const VectorField2D f = synth::vortices(80, 80, 5, 20);
  auto markers = classify(f, nullptr);
  ASSERT_TRUE(markers.ok());
  render::Options o;
  o.window = {10, 20, 49, 39};  // 40 x 20 vertices
  o.size = 400;
  auto im = draw(f, markers.value(), o);
  ASSERT_TRUE(im.ok());
  EXPECT_EQ(im->width, 400);
  EXPECT_EQ(im->height, 200 + kLegendHeight);
  int inside = 0;
  for (const auto& m : markers.value()) inside += m.x >= 10 && m.x <= 49 && m.y >= 20 && m.y <= 39;
  int green = 0;
  for (int y = 0; y < 200; ++y)
    for (int x = 0; x < 400; ++x) green += im->at(x, y) == fate_colour(Fate::original);
  EXPECT_EQ(green > 0, inside > 0);
}

TEST(Render, TinyAndDegenerateFieldsRender) {
  VectorField2D zero{2, 2, {0, 0, 0, 0}, {0, 0, 0, 0}};
  auto markers = classify(zero, &zero);
  ASSERT_TRUE(markers.ok());
  for (const auto& m : markers.value()) EXPECT_EQ(m.fate, Fate::preserved);
  render::Options o;
  o.window = {0, 0, 1, 1};
  o.size = 16;
  o.lic = true;
  o.reconstruction = true;
  auto im = draw(zero, markers.value(), o);
  ASSERT_TRUE(im.ok());
  EXPECT_EQ(im->height, 16 + kLegendHeight);
  EXPECT_GT(im->width, 16);  // the legend is wider than the map
}

TEST(Render, BadInputGivesClearErrors) {
  const VectorField2D f = synth::turbulence(20, 10, 1);
  render::Options o;
  o.window = {0, 0, 20, 9};  // x1 past the last column
  auto r = draw(f, {}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("window"), std::string::npos);
  o.window = {5, 0, 5, 9};  // empty
  EXPECT_FALSE(draw(f, {}, o).ok());
  o.window = {0, 0, 19, 9};
  o.size = 4;
  EXPECT_FALSE(draw(f, {}, o).ok());
  const VectorField2D g = synth::turbulence(21, 10, 1);
  EXPECT_EQ(classify(f, &g).status().code(), Code::invalid_argument);
  Image im;
  EXPECT_FALSE(write_png("/nonexistent-dir/x.png", im).ok());
  o.size = 64;
  auto ok = draw(f, {}, o);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(write_png("/nonexistent-dir/x.png", ok.value()).code(), Code::io);
}

TEST(RenderCli, DrawsRealWindFieldsAndRefusesBadArguments) {
  TempDir dir;
  const std::string cli = FACTZ_CLI_PATH;
  const std::string data = FACTZ_TEST_DATA_DIR;
  const std::string in = " -2 360 181 -i '" + data + "/gfs10m_wind_2014_u_360x181.f32' -i '" + data +
                         "/gfs10m_wind_2014_v_360x181.f32'";
  std::string out;
  ASSERT_EQ(run(cli + " render" + in + " -o '" + (dir / "a.png") + "' --size 360", out, dir), 0) << out;
  Image im;
  ASSERT_TRUE(decode_png(dir / "a.png", im));
  EXPECT_EQ(im.width, 360);
  EXPECT_EQ(im.height, 181 + kLegendHeight);
  EXPECT_NE(out.find("critical points"), std::string::npos);

  // A reconstruction through the CLI, rendered by fate with LIC in a zoom window.
  ASSERT_EQ(run(cli + " compress" + in + " --mode none -M REL 5e-2 -z '" + (dir / "a.fz") + "'", out, dir), 0) << out;
  ASSERT_EQ(run(cli + " decompress -z '" + (dir / "a.fz") + "' -o '" + (dir / "d_u.f32") + "' -o '" + (dir / "d_v.f32") + "'",
                out, dir),
            0)
      << out;
  ASSERT_EQ(run(cli + " render" + in + " -d '" + (dir / "d_u.f32") + "' -d '" + (dir / "d_v.f32") + "' -o '" +
                    (dir / "b.png") + "' --zoom 100 50 199 99 --lic --size 800",
                out, dir),
            0)
      << out;
  ASSERT_TRUE(decode_png(dir / "b.png", im));
  EXPECT_EQ(im.width, 800);  // wider than the four-entry legend
  EXPECT_EQ(im.height, 400 + kLegendHeight);
  EXPECT_NE(out.find("lost"), std::string::npos);

  EXPECT_EQ(run(cli + " render" + in + " -o '" + (dir / "c.png") + "' --zoom 0 0 400 10", out, dir), 2);
  EXPECT_NE(out.find("--zoom"), std::string::npos) << out;
  EXPECT_EQ(run(cli + " render" + in, out, dir), 2);
  EXPECT_NE(out.find("-o"), std::string::npos) << out;
  EXPECT_EQ(run(cli + " render -2 360 180 -i '" + data + "/gfs10m_wind_2014_u_360x181.f32' -i '" + data +
                    "/gfs10m_wind_2014_v_360x181.f32' -o '" + (dir / "c.png") + "'",
                out, dir),
            1);  // wrong size for the files
  EXPECT_EQ(run(cli + " render" + in + " -d '" + (dir / "d_u.f32") + "' -o '" + (dir / "c.png") + "'", out, dir), 2);
  EXPECT_EQ(run(cli + " render" + in + " -o '" + (dir / "c.png") + "' --size 3", out, dir), 2);
  EXPECT_FALSE(fs::exists(dir / "c.png"));
}

}  // namespace
