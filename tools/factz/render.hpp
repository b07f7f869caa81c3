// Pictures of a 2D vector field for `factz render` (issue 7, like the paper's Figure 9):
// the vector magnitude as a colour map, optionally modulated by a line integral
// convolution (LIC) texture, with the critical points marked by their fate against a
// reconstruction, and a legend. CLI support, not the library.
//
// Layout (so that callers and tests can predict it): the window [x0, x1] x [y0, y1] of
// vertices is drawn at `scale` = size / max(x1 - x0 + 1, y1 - y0 + 1) pixels per grid
// unit, map width round((x1 - x0 + 1) * scale), height round((y1 - y0 + 1) * scale);
// grid row y grows downwards (row 0 at the top). Below the map a legend strip of
// kLegendHeight pixels listing each fate's colour and how many markers of it the window
// shows; the image is max(map width, legend width) wide.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "factz/field.hpp"
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

struct Options {
  Window window;       ///< must lie inside the field, x0 < x1, y0 < y1
  int size = 1024;     ///< pixels along the longer side of the window, in [16, 16384]
  bool lic = false;    ///< line integral convolution texture over the colour map
  bool reconstruction = false;  ///< legend lists the four fates instead of "critical point"
  int threads = 0;
};

inline constexpr int kLegendHeight = 28;
inline constexpr int kMarkerRadius = 4;  ///< filled disc in the fate colour, black ring outside
/// Lost points get a larger disc, drawn before the spurious ones: a critical point that
/// only moved to a neighbouring triangle shows as a spurious dot with a red (lost) rim.
inline constexpr int kLostRadius = kMarkerRadius + 3;

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  ///< width * height * 3, row-major from the top
  std::array<uint8_t, 3> at(int x, int y) const {
    const size_t k = (size_t(y) * size_t(width) + size_t(x)) * 3;
    return {rgb[k], rgb[k + 1], rgb[k + 2]};
  }
};

/// Map size in pixels for a window and size (see the layout above).
void map_size(const Window& w, int size, int& width, int& height);
/// Pixel of a grid position (nearest pixel centre; may lie outside the map).
void to_pixel(const Window& w, int size, double x, double y, int& px, int& py);

/// Draws `field` (the colour map is scaled to `magnitude_max`, or to the window's maximum
/// magnitude when it is <= 0) with `markers`. invalid_argument for a bad window or size.
Result<Image> draw(const VectorField2D& field, const std::vector<Marker>& markers, const Options& options,
                   double magnitude_max = 0);

/// Writes an 8-bit RGB PNG through factz::write_bytes: io error (with the system's reason)
/// when the file cannot be written, and then no partial PNG is left behind.
Status write_png(const std::string& path, const Image& image);

}  // namespace factz::render
