// Pictures of 2D fields for `factz render` (issues 7 and 21, like the paper's Figure 9): a
// vector field's magnitude or a scalar field's value as a colour map (a vector field
// optionally modulated by a line integral convolution (LIC) texture), with the critical
// points marked by their fate against a reconstruction, or a scalar field's contour-tree
// nodes marked by type, a colour bar and a legend. CLI support, not the library.
//
// Layout (so that callers and tests can predict it): the window [x0, x1] x [y0, y1] of
// vertices is drawn at `scale` = size / max(x1 - x0 + 1, y1 - y0 + 1) pixels per grid
// unit, map width round((x1 - x0 + 1) * scale), height round((y1 - y0 + 1) * scale).
// Options::origin says where row y0 is: at the top (upper, the library's default: row y
// grows downwards) or at the bottom (lower: row y grows upwards, the netCDF habit and
// `factz render`'s default). Below the map a strip of kLegendHeight pixels, top to bottom:
// the colour bar row (kBarRowHeight: a title, the bar from the scale's low end on the left
// to its high end on the right, the low and high values under its ends and a few round
// ticks between), the key row (kKeyRowHeight: each marker colour, with how many markers of
// it the window shows), and the count row (kCountRowHeight: "N CRITICAL POINTS, M DRAWN").
// The image is max(map width, the rows' widths) wide. Missing vertices (NaN, the field's
// mask) are drawn in kMissingColour.
//
// Markers are discs of marker_radius(map width, map height) pixels with a black ring,
// thinned where they would overlap (see draw).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "factz/contour_tree.hpp"
#include "factz/field.hpp"
#include "factz/scalar.hpp"
#include "factz/status.hpp"
#include "factz/topology.hpp"

namespace factz::render {

/// What happened to a critical point in the reconstruction (paper P1-P3).
enum class Fate : uint8_t {
  original = 0,      ///< no reconstruction given: every critical point of the field
  preserved = 1,     ///< same triangle, same type
  lost = 2,          ///< P1: missing from its triangle
  spurious = 3,      ///< P2: new, where the original has none
  type_changed = 4,  ///< P3: same triangle, other type
};
inline constexpr int kFateCount = 5;

/// Marker colours (RGB), chosen apart from the colour map's low-saturation blues.
std::array<uint8_t, 3> fate_colour(Fate f);
const char* fate_label(Fate f);

/// Colours of a scalar field's contour-tree nodes: minima green, maxima red, saddles (join,
/// split, multi) orange, isolated vertices magenta.
std::array<uint8_t, 3> node_colour(CtNodeType t);

struct Marker {
  double x = 0, y = 0;  ///< grid position (x = column, y = row) of the zero in its triangle
  Fate fate = Fate::original;
};

/// Critical points of `original` (fate `original`) or, with a reconstruction of the same
/// size, every critical point of either field classified by its fate. Spurious points sit
/// where the reconstruction has them; the others where the original has them.
Result<std::vector<Marker>> classify(const VectorField2D& original, const VectorField2D* reconstructed,
                                     Exec exec = {});

struct Window {
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;  ///< inclusive vertex ranges
};

/// Where row y0 of the window is drawn.
enum class Origin : uint8_t {
  upper = 0,  ///< at the top: row y grows downwards (image convention)
  lower = 1,  ///< at the bottom: row y grows upwards (netCDF's south-to-north rows)
};

struct Options {
  Window window;       ///< must lie inside the field, x0 < x1, y0 < y1
  int size = 1024;     ///< pixels along the longer side of the window, in [16, 16384]
  bool lic = false;    ///< line integral convolution texture over the colour map (vector fields)
  bool reconstruction = false;  ///< legend lists the four fates instead of "critical point"
  Origin origin = Origin::upper;  ///< `factz render` passes lower unless --origin upper
  int threads = 0;
};

inline constexpr int kBarRowHeight = 40;
inline constexpr int kKeyRowHeight = 28;
inline constexpr int kCountRowHeight = 20;
inline constexpr int kLegendHeight = kBarRowHeight + kKeyRowHeight + kCountRowHeight;
inline constexpr std::array<uint8_t, 3> kMissingColour = {150, 130, 100};
/// The marker radius of a 600-pixel map, and of every legend swatch.
inline constexpr int kMarkerRadius = 4;
/// Lost points get a larger disc, drawn before the spurious ones: a critical point that
/// only moved to a neighbouring triangle shows as a spurious dot with a red (lost) rim.
inline constexpr int kLostRadius = kMarkerRadius + 3;

/// Marker radius in pixels for a map of this size: round(max(width, height) / 150),
/// clamped to [2, 12] (4 at 600 pixels, 7 at 1024). Lost points: lost_radius of it.
int marker_radius(int map_width, int map_height);
int lost_radius(int radius);  ///< radius + radius / 2 + 1 (7 for 4)

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  ///< width * height * 3, row-major from the top
  int map_width = 0, map_height = 0;
  int64_t markers_shown = 0;  ///< markers inside the window
  int64_t markers_drawn = 0;  ///< of those, drawn after thinning
  double scale_low = 0, scale_high = 0;  ///< the colour bar's ends
  std::array<uint8_t, 3> at(int x, int y) const {
    const size_t k = (size_t(y) * size_t(width) + size_t(x)) * 3;
    return {rgb[k], rgb[k + 1], rgb[k + 2]};
  }
};

/// Map size in pixels for a window and size (see the layout above).
void map_size(const Window& w, int size, int& width, int& height);
/// Pixel of a grid position (nearest pixel centre; may lie outside the map).
void to_pixel(const Window& w, int size, double x, double y, int& px, int& py, Origin origin = Origin::upper);

/// The colour map (low-saturation navy -> steel blue -> pale grey) at t in [0, 1].
std::array<uint8_t, 3> colour_map(double t);

/// Draws `field` (the colour map is scaled to [0, magnitude_max], or to the window's maximum
/// magnitude over its valid vertices when magnitude_max <= 0) with `markers`.
/// Thinning: markers are taken violations first (lost, spurious, type changed), then the
/// others; one is drawn only when its centre lies at least 2 * radius - 1 pixels from every
/// marker drawn before it (a violation: every one of its own fate), so that discs overlap by
/// at most their rings; Image::markers_drawn counts them. invalid_argument for a bad window
/// or size.
Result<Image> draw(const VectorField2D& field, const std::vector<Marker>& markers, const Options& options,
                   double magnitude_max = 0);

/// Draws a 2D scalar field (nz == 1) as a colour map scaled to [low, high] (the window's
/// value range over its valid vertices when low >= high), with `nodes` (contour-tree nodes;
/// none: no markers) marked by type, extrema taken before saddles for thinning (same rule as
/// draw). invalid_argument for a 3D field, a bad window or size.
Result<Image> draw_scalar(const ScalarField& field, const std::vector<CtNode>& nodes, const Options& options,
                          double low = 0, double high = 0);

/// Writes an 8-bit RGB PNG through factz::write_bytes: io error (with the system's reason)
/// when the file cannot be written, and then no partial PNG is left behind.
Status write_png(const std::string& path, const Image& image);

}  // namespace factz::render
