#include "render.hpp"

#include <omp.h>
#include <png.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "factz/io.hpp"

namespace factz::render {
namespace {

// 5 x 7 bitmap glyphs (bit 4 = leftmost column) for the legend's capitals, digits and the
// punctuation of numbers ("1.5E-03", "-2", "12, 3").
struct Glyph {
  char c;
  uint8_t rows[7];
};
constexpr Glyph kFont[] = {
    {'A', {14, 17, 17, 31, 17, 17, 17}}, {'B', {30, 17, 17, 30, 17, 17, 30}}, {'C', {15, 16, 16, 16, 16, 16, 15}},
    {'D', {30, 17, 17, 17, 17, 17, 30}}, {'E', {31, 16, 16, 30, 16, 16, 31}}, {'F', {31, 16, 16, 30, 16, 16, 16}},
    {'G', {15, 16, 16, 23, 17, 17, 15}}, {'H', {17, 17, 17, 31, 17, 17, 17}}, {'I', {31, 4, 4, 4, 4, 4, 31}},
    {'K', {17, 18, 20, 24, 20, 18, 17}}, {'L', {16, 16, 16, 16, 16, 16, 31}}, {'M', {17, 27, 21, 21, 17, 17, 17}},
    {'N', {17, 25, 21, 19, 17, 17, 17}}, {'O', {14, 17, 17, 17, 17, 17, 14}}, {'P', {30, 17, 17, 30, 16, 16, 16}},
    {'R', {30, 17, 17, 30, 20, 18, 17}}, {'S', {15, 16, 16, 14, 1, 1, 30}},   {'T', {31, 4, 4, 4, 4, 4, 4}},
    {'U', {17, 17, 17, 17, 17, 17, 14}}, {'V', {17, 17, 17, 17, 17, 10, 4}},  {'W', {17, 17, 17, 21, 21, 21, 10}},
    {'X', {17, 17, 10, 4, 10, 17, 17}},  {'Y', {17, 17, 10, 4, 4, 4, 4}},     {'0', {14, 17, 19, 21, 25, 17, 14}},
    {'1', {4, 12, 4, 4, 4, 4, 14}},      {'2', {14, 17, 1, 2, 4, 8, 31}},     {'3', {30, 1, 1, 14, 1, 1, 30}},
    {'4', {2, 6, 10, 18, 31, 2, 2}},     {'5', {31, 16, 30, 1, 1, 17, 14}},   {'6', {6, 8, 16, 30, 17, 17, 14}},
    {'7', {31, 1, 2, 4, 8, 8, 8}},       {'8', {14, 17, 17, 14, 17, 17, 14}}, {'9', {14, 17, 17, 15, 1, 2, 12}},
    {'.', {0, 0, 0, 0, 0, 12, 12}},      {',', {0, 0, 0, 0, 12, 4, 8}},       {'-', {0, 0, 0, 31, 0, 0, 0}},
    {'+', {0, 4, 4, 31, 4, 4, 0}},
};
constexpr int kSwatch = 2 * kLostRadius + 3;
constexpr int kEntryGap = 18;
constexpr int kMargin = 8;
constexpr int kBarTop = 6;        // below the map
constexpr int kBarHeight = 10;
constexpr int kMinBar = 64;       // pixels
constexpr std::array<uint8_t, 3> kBlack = {0, 0, 0};
constexpr std::array<uint8_t, 3> kStrip = {245, 245, 245};

int advance(int scale) { return 6 * scale; }  // 5 columns + 1 space
int text_width(const std::string& s, int scale) { return int(s.size()) * advance(scale); }

const Glyph* glyph(char c) {
  c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& g : kFont)
    if (g.c == c) return &g;
  return nullptr;  // space and anything else: blank
}

struct Canvas {
  Image& im;
  void set(int x, int y, std::array<uint8_t, 3> c) {
    if (x < 0 || y < 0 || x >= im.width || y >= im.height) return;
    const size_t k = (size_t(y) * size_t(im.width) + size_t(x)) * 3;
    im.rgb[k] = c[0];
    im.rgb[k + 1] = c[1];
    im.rgb[k + 2] = c[2];
  }
  void disc(int cx, int cy, int r, std::array<uint8_t, 3> c) {
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx)
        if (dx * dx + dy * dy <= r * r + r / 2) set(cx + dx, cy + dy, c);
  }
  void marker(int cx, int cy, std::array<uint8_t, 3> c, int r) {
    disc(cx, cy, r + 1, kBlack);
    disc(cx, cy, r, c);
  }
  int text(int x, int y, const std::string& s, std::array<uint8_t, 3> c, int scale) {
    for (char ch : s) {
      if (const Glyph* g = glyph(ch))
        for (int r = 0; r < 7; ++r)
          for (int q = 0; q < 5; ++q)
            if (g->rows[r] & (16 >> q))
              for (int a = 0; a < scale; ++a)
                for (int b = 0; b < scale; ++b) set(x + q * scale + b, y + r * scale + a, c);
      x += advance(scale);
    }
    return x;
  }
};

double scale_of(const Window& w, int size) {
  return double(size) / double(std::max(w.x1 - w.x0 + 1, w.y1 - w.y0 + 1));
}

/// Pixels and grid positions of one window, with its origin.
struct Mapping {
  Window w;
  double s = 1;
  Origin origin = Origin::upper;
  Mapping(const Window& win, int size, Origin o) : w(win), s(scale_of(win, size)), origin(o) {}
  double grid_x(double px) const { return double(w.x0) + (px + 0.5) / s - 0.5; }
  double grid_y(double py) const {
    const double d = (py + 0.5) / s - 0.5;
    return origin == Origin::upper ? double(w.y0) + d : double(w.y1) - d;
  }
  int pixel_x(double x) const { return int(std::floor((x - double(w.x0) + 0.5) * s)); }
  int pixel_y(double y) const {
    return int(std::floor(((origin == Origin::upper ? y - double(w.y0) : double(w.y1) - y) + 0.5) * s));
  }
};

Status check_layout(int64_t nx, int64_t ny, const Options& o) {
  const Window& w = o.window;
  if (nx < 2 || ny < 2) return invalid_argument("render needs at least 2 x 2 vertices");
  if (w.x0 < 0 || w.y0 < 0 || w.x1 >= nx || w.y1 >= ny || w.x0 >= w.x1 || w.y0 >= w.y1)
    return invalid_argument("window " + std::to_string(w.x0) + " " + std::to_string(w.y0) + " " + std::to_string(w.x1) +
                            " " + std::to_string(w.y1) + " must satisfy 0 <= X0 < X1 < " + std::to_string(nx) +
                            " and 0 <= Y0 < Y1 < " + std::to_string(ny));
  if (o.size < 16 || o.size > 16384) return invalid_argument("size must be in [16, 16384] pixels");
  if (o.origin != Origin::upper && o.origin != Origin::lower) return invalid_argument("origin must be upper or lower");
  return Status();
}

/// One plane's valid vertices: not NaN (nor infinite) and not marked in the mask.
struct Plane {
  const std::vector<float>* a = nullptr;  // the values (u, or the scalar)
  const std::vector<float>* b = nullptr;  // v, or none
  const std::vector<uint8_t>* mask = nullptr;
  int64_t nx = 0, ny = 0;
  bool valid(size_t k) const {
    if (mask != nullptr && !mask->empty() && (*mask)[k] != 0) return false;
    return std::isfinite((*a)[k]) && (b == nullptr || std::isfinite((*b)[k]));
  }
  /// Bilinear sample of `p` at grid position (x, y), clamped to the field; the nearest
  /// vertex's value when a corner is missing (no blending with fill values); false when
  /// the nearest vertex is missing.
  bool sample(double x, double y, double& va, double& vb) const {
    if (!std::isfinite(x) || !std::isfinite(y)) return false;
    x = std::clamp(x, 0.0, double(nx - 1));
    y = std::clamp(y, 0.0, double(ny - 1));
    const int64_t i = std::min<int64_t>(int64_t(y), ny - 2), j = std::min<int64_t>(int64_t(x), nx - 2);
    const double fy = y - double(i), fx = x - double(j);
    const size_t k00 = size_t(i * nx + j), k01 = k00 + 1, k10 = k00 + size_t(nx), k11 = k10 + 1;
    auto value = [&](const std::vector<float>& p) {
      return (p[k00] * (1 - fx) + p[k01] * fx) * (1 - fy) + (p[k10] * (1 - fx) + p[k11] * fx) * fy;
    };
    if (valid(k00) && valid(k01) && valid(k10) && valid(k11)) {
      va = value(*a);
      vb = b ? value(*b) : 0.0;
      return true;
    }
    const size_t near = size_t(std::llround(y) * nx + std::llround(x));
    if (!valid(near)) return false;
    va = (*a)[near];
    vb = b ? double((*b)[near]) : 0.0;
    return true;
  }
};

uint64_t hash(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// ---- Markers and thinning ----------------------------------------------------------------

/// A marker in pixels. `group`: markers of one group thin each other; `against_all`: it
/// also gives way to markers of every other group. `layer`: drawing order (higher on top).
struct Dot {
  int px = 0, py = 0;
  std::array<uint8_t, 3> colour{};
  int radius = kMarkerRadius;
  int group = 0;
  bool against_all = true;
  int layer = 0;
};

/// Which dots (taken in the given order) are drawn: each one whose centre lies at least
/// `separation` pixels from every dot drawn before it (of its group, or of any group when
/// against_all). A hash of separation-sized cells keeps this linear.
std::vector<bool> thin(const std::vector<Dot>& dots, int separation, int groups) {
  std::vector<bool> drawn(dots.size(), false);
  const int64_t sep = std::max(1, separation);
  std::unordered_map<uint64_t, std::vector<uint32_t>> cells;
  auto key = [&](int g, int64_t cx, int64_t cy) {
    return (uint64_t(uint32_t(g)) << 56) ^ (uint64_t(uint32_t(cx + (1 << 20))) << 28) ^ uint64_t(uint32_t(cy + (1 << 20)));
  };
  for (size_t k = 0; k < dots.size(); ++k) {
    const Dot& d = dots[k];
    const int64_t cx = int64_t(std::floor(double(d.px) / double(sep))), cy = int64_t(std::floor(double(d.py) / double(sep)));
    bool free = true;
    for (int g = 0; g < groups && free; ++g) {
      if (g != d.group && !d.against_all) continue;
      for (int64_t ay = cy - 1; ay <= cy + 1 && free; ++ay)
        for (int64_t ax = cx - 1; ax <= cx + 1 && free; ++ax) {
          const auto it = cells.find(key(g, ax, ay));
          if (it == cells.end()) continue;
          for (uint32_t o : it->second) {
            const int64_t dx = dots[o].px - d.px, dy = dots[o].py - d.py;
            if (dx * dx + dy * dy < sep * sep) {
              free = false;
              break;
            }
          }
        }
    }
    if (!free) continue;
    drawn[k] = true;
    cells[key(d.group, cx, cy)].push_back(uint32_t(k));
  }
  return drawn;
}

/// Draws the thinned dots inside the map by layer; returns how many were drawn.
int64_t draw_dots(Image& im, const std::vector<Dot>& dots, int separation, int groups) {
  const std::vector<bool> drawn = thin(dots, separation, groups);
  std::vector<size_t> order;
  for (size_t k = 0; k < dots.size(); ++k)
    if (drawn[k]) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return dots[a].layer < dots[b].layer; });
  Canvas cv{im};
  for (size_t k : order) {
    const Dot& d = dots[k];
    cv.marker(std::clamp(d.px, 0, im.map_width - 1), std::clamp(d.py, 0, im.map_height - 1), d.colour, d.radius);
  }
  return int64_t(order.size());
}

// ---- The legend strip ----------------------------------------------------------------------

struct Key {
  std::array<uint8_t, 3> colour;
  int radius;
  std::string text;
};

struct Legend {
  std::string bar_title;  // "MAGNITUDE", "VALUE"
  double low = 0, high = 0;
  std::vector<Key> keys;
  std::string count;  // "N CRITICAL POINTS, M DRAWN" (filled once the markers are drawn)
};

/// A number as the bar prints it: 3 significant digits, capital E, no "-0".
std::string label(double v) {
  if (v == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  std::string s = buf;
  for (auto& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

/// Round tick values strictly inside (low, high): steps of 1, 2 or 5 times a power of ten,
/// at most 6 intervals.
std::vector<double> ticks(double low, double high) {
  std::vector<double> out;
  const double span = high - low;
  if (!(span > 0) || !std::isfinite(span)) return out;
  const double mag = std::pow(10.0, std::floor(std::log10(span / 5)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (span / step <= 6) break;
  }
  if (!(step > 0) || !std::isfinite(step)) return out;
  for (double k = std::ceil(low / step); out.size() < 12; k += 1) {
    double v = k * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    if (v >= high - step * 1e-6) break;
    if (v > low + step * 1e-6) out.push_back(v);
  }
  return out;
}

/// Glyph pixels per font pixel of the strip's text: 2 on maps at least 512 pixels wide.
int text_scale_of(int map_width) { return map_width >= 512 ? 2 : 1; }

int key_row_width(const Legend& l, int ts) {
  int w = kMargin;
  for (const Key& k : l.keys) w += kSwatch + 6 + text_width(k.text, ts) + kEntryGap;
  return w;
}

int bar_row_width(const Legend& l, int ts) {
  const int labels = text_width(label(l.low), ts) + text_width(label(l.high), ts) + 12;
  return kMargin + text_width(l.bar_title, ts) + kMargin + std::max(kMinBar, labels) + kMargin;
}

/// The image: the map's size plus the legend strip, as wide as its widest row. The count
/// row is sized for the longest count text it can hold (`max_count` twice).
Image start_image(int mw, int mh, const Legend& l, int64_t max_count, const std::string& noun) {
  const int ts = text_scale_of(mw);
  const std::string widest = std::to_string(max_count) + " " + noun + ", " + std::to_string(max_count) + " DRAWN";
  Image im;
  im.map_width = mw;
  im.map_height = mh;
  im.width = std::max({mw, key_row_width(l, ts), bar_row_width(l, ts), kMargin + text_width(widest, ts) + kMargin});
  im.height = mh + kLegendHeight;
  im.rgb.assign(size_t(im.width) * size_t(im.height) * 3, 255);
  im.scale_low = l.low;
  im.scale_high = l.high;
  return im;
}

void draw_legend(Image& im, const Legend& l) {
  Canvas cv{im};
  const int mh = im.map_height, ts = text_scale_of(im.map_width);
  // Anything the markers' rings drew below the map is covered by the strip.
  for (int y = mh; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) cv.set(x, y, kStrip);
  // Colour bar: title, bar, end labels, round ticks between.
  const int bar_top = mh + kBarTop, bar_bottom = bar_top + kBarHeight;
  cv.text(kMargin, bar_top + kBarHeight / 2 - 7 * ts / 2, l.bar_title, kBlack, ts);
  const int bx0 = kMargin + text_width(l.bar_title, ts) + kMargin, bx1 = im.width - kMargin;
  const int bw = std::max(1, bx1 - bx0);
  for (int x = bx0; x < bx1; ++x)
    for (int y = bar_top; y < bar_bottom; ++y) cv.set(x, y, colour_map((x - bx0 + 0.5) / bw));
  for (int x = bx0 - 1; x <= bx1; ++x) {
    cv.set(x, bar_top - 1, kBlack);
    cv.set(x, bar_bottom, kBlack);
  }
  for (int y = bar_top - 1; y <= bar_bottom; ++y) {
    cv.set(bx0 - 1, y, kBlack);
    cv.set(bx1, y, kBlack);
  }
  const int label_y = bar_bottom + 5;
  struct Box {
    int x0, x1;
  };
  std::vector<Box> placed;
  auto tick = [&](int x) {
    for (int y = bar_bottom + 1; y <= bar_bottom + 3; ++y) cv.set(x, y, kBlack);
  };
  auto place = [&](int x0, const std::string& s) {
    cv.text(x0, label_y, s, kBlack, ts);
    placed.push_back({x0, x0 + text_width(s, ts)});
  };
  const bool range = l.high > l.low;
  place(bx0, label(l.low));
  tick(bx0);
  if (range) {
    const std::string hi = label(l.high);
    place(bx1 - text_width(hi, ts) + ts, hi);
    tick(bx1 - 1);
    for (double v : ticks(l.low, l.high)) {
      const int x = bx0 + int(std::lround((v - l.low) / (l.high - l.low) * double(bw - 1)));
      const std::string s = label(v);
      const int x0 = x - text_width(s, ts) / 2, x1 = x0 + text_width(s, ts);
      bool clear = true;
      for (const Box& b : placed) clear = clear && (x1 + 2 * ts * 3 <= b.x0 || x0 >= b.x1 + 2 * ts * 3);
      if (!clear) continue;
      tick(x);
      place(x0, s);
    }
  }
  // Key row: a swatch and a label per marker colour.
  int x = kMargin;
  const int cy = mh + kBarRowHeight + kKeyRowHeight / 2;
  for (const Key& k : l.keys) {
    cv.marker(x + kSwatch / 2, cy, k.colour, k.radius);
    x = cv.text(x + kSwatch + 6, cy - 7 * ts / 2, k.text, kBlack, ts) + kEntryGap;
  }
  // Count row.
  cv.text(kMargin, mh + kBarRowHeight + kKeyRowHeight + (kCountRowHeight - 7 * ts) / 2, l.count, kBlack, ts);
}

}  // namespace

std::array<uint8_t, 3> fate_colour(Fate f) {
  switch (f) {
    case Fate::original:
    case Fate::preserved: return {0, 200, 0};
    case Fate::lost: return {230, 20, 20};
    case Fate::spurious: return {255, 0, 255};
    case Fate::type_changed: return {255, 150, 0};
  }
  return {255, 255, 255};
}

const char* fate_label(Fate f) {
  switch (f) {
    case Fate::original: return "CRITICAL POINT";
    case Fate::preserved: return "PRESERVED";
    case Fate::lost: return "LOST";
    case Fate::spurious: return "SPURIOUS";
    case Fate::type_changed: return "TYPE CHANGED";
  }
  return "";
}

std::array<uint8_t, 3> node_colour(CtNodeType t) {
  switch (t) {
    case CtNodeType::minimum: return {0, 200, 0};
    case CtNodeType::maximum: return {230, 20, 20};
    case CtNodeType::join_saddle:
    case CtNodeType::split_saddle:
    case CtNodeType::multi_saddle: return {255, 150, 0};
    case CtNodeType::isolated: return {255, 0, 255};
  }
  return {255, 255, 255};
}

int marker_radius(int map_width, int map_height) {
  return int(std::clamp<long>(std::lround(double(std::max(map_width, map_height)) / 150.0), 2L, 12L));
}

int lost_radius(int radius) { return radius + radius / 2 + 1; }

// Low-saturation navy -> steel blue -> pale grey, so the markers' colours stand out.
std::array<uint8_t, 3> colour_map(double t) {
  static constexpr double kStops[3][3] = {{15, 25, 60}, {70, 110, 170}, {228, 234, 240}};
  if (!(t >= 0)) t = 0;  // NaN too
  t = std::min(t, 1.0) * 2.0;
  const int k = std::min(1, int(t));
  const double f = t - k;
  std::array<uint8_t, 3> c{};
  for (int ch = 0; ch < 3; ++ch) c[size_t(ch)] = uint8_t(std::lround(kStops[k][ch] * (1 - f) + kStops[k + 1][ch] * f));
  return c;
}

Result<std::vector<Marker>> classify(const VectorField2D& a, const VectorField2D* b, Exec exec) {
  if (b != nullptr && (a.nx != b->nx || a.ny != b->ny))
    return invalid_argument("the reconstruction is " + std::to_string(b->nx) + "x" + std::to_string(b->ny) +
                            ", the field " + std::to_string(a.nx) + "x" + std::to_string(a.ny));
  auto ca = critical_points(a, exec);
  if (!ca.ok()) return ca.status();
  std::vector<CriticalPoint> cb;
  if (b != nullptr) {
    auto r = critical_points(*b, exec);
    if (!r.ok()) return r.status();
    cb = std::move(r).value();
  }
  auto position = [&](const CriticalPoint& cp) {
    // Vertices in contract order: T0 (i,j),(i+1,j),(i+1,j+1); T1 (i,j),(i,j+1),(i+1,j+1).
    const double i = double(cp.row), j = double(cp.column);
    const bool t1 = cp.triangle & 1;
    const double px[3] = {j, t1 ? j + 1 : j, j + 1}, py[3] = {i, t1 ? i : i + 1, i + 1};
    Marker m;
    for (int k = 0; k < 3; ++k) {
      m.x += cp.mu[size_t(k)] * px[k];
      m.y += cp.mu[size_t(k)] * py[k];
    }
    m.x = std::clamp(m.x, j, j + 1);
    m.y = std::clamp(m.y, i, i + 1);
    return m;
  };
  std::vector<Marker> out;
  const auto& pa = ca.value();
  if (b == nullptr) {
    for (const auto& cp : pa) out.push_back(position(cp));
    return out;
  }
  size_t p = 0, q = 0;  // both lists are ordered by triangle id
  while (p < pa.size() || q < cb.size()) {
    if (q == cb.size() || (p < pa.size() && pa[p].triangle < cb[q].triangle)) {
      Marker m = position(pa[p++]);
      m.fate = Fate::lost;
      out.push_back(m);
    } else if (p == pa.size() || cb[q].triangle < pa[p].triangle) {
      Marker m = position(cb[q++]);
      m.fate = Fate::spurious;
      out.push_back(m);
    } else {
      Marker m = position(pa[p]);
      m.fate = pa[p].type == cb[q].type ? Fate::preserved : Fate::type_changed;
      out.push_back(m);
      ++p;
      ++q;
    }
  }
  return out;
}

void map_size(const Window& w, int size, int& width, int& height) {
  const double s = scale_of(w, size);
  width = std::max(1, int(std::lround(double(w.x1 - w.x0 + 1) * s)));
  height = std::max(1, int(std::lround(double(w.y1 - w.y0 + 1) * s)));
}

void to_pixel(const Window& w, int size, double x, double y, int& px, int& py, Origin origin) {
  const Mapping m(w, size, origin);
  px = m.pixel_x(x);
  py = m.pixel_y(y);
}

Result<Image> draw(const VectorField2D& f, const std::vector<Marker>& markers, const Options& o, double magnitude_max) {
  if (f.u.size() != size_t(std::max<int64_t>(f.nx, 0) * std::max<int64_t>(f.ny, 0)) || f.v.size() != f.u.size())
    return invalid_argument("planes do not hold nx * ny values");
  if (Status s = check_layout(f.nx, f.ny, o); !s.ok()) return s;
  if (!f.mask.empty() && f.mask.size() != f.u.size()) return invalid_argument("the mask does not hold nx * ny bytes");
  const Window& w = o.window;
  int mw = 0, mh = 0;
  map_size(w, o.size, mw, mh);
  const Mapping map(w, o.size, o.origin);
  const Plane plane{&f.u, &f.v, &f.mask, f.nx, f.ny};

  auto inside = [&](const Marker& m) {
    return m.x >= double(w.x0) && m.x <= double(w.x1) && m.y >= double(w.y0) && m.y <= double(w.y1);
  };
  int64_t counts[kFateCount] = {};  // the legend counts what the window shows
  int64_t shown = 0;
  for (const auto& m : markers)
    if (inside(m) && int(m.fate) < kFateCount) {
      ++counts[int(m.fate)];
      ++shown;
    }
  double top = magnitude_max;
  if (!(top > 0) || !std::isfinite(top)) {
    top = 0;
    for (int64_t y = w.y0; y <= w.y1; ++y)
      for (int64_t x = w.x0; x <= w.x1; ++x) {
        const size_t k = size_t(y * f.nx + x);
        if (plane.valid(k)) top = std::max(top, std::hypot(double(f.u[k]), double(f.v[k])));
      }
    if (!std::isfinite(top)) top = 0;
  }
  Legend legend;
  legend.bar_title = "MAGNITUDE";
  legend.low = 0;
  legend.high = top;
  if (o.reconstruction)
    for (Fate fate : {Fate::preserved, Fate::lost, Fate::spurious, Fate::type_changed})
      legend.keys.push_back({fate_colour(fate), fate == Fate::lost ? kLostRadius : kMarkerRadius,
                             std::string(fate_label(fate)) + " " + std::to_string(counts[int(fate)])});
  else
    legend.keys.push_back({fate_colour(Fate::original), kMarkerRadius, fate_label(Fate::original)});
  Image im = start_image(mw, mh, legend, shown, "CRITICAL POINTS");

  const double inv = top > 0 ? 1.0 / top : 0.0;
  const int lic_steps = 12;
  const double step = 0.6 / map.s;  // 0.6 pixel per step, in grid units
#pragma omp parallel for schedule(dynamic, 8) num_threads(o.threads > 0 ? o.threads : omp_get_max_threads())
  for (int py = 0; py < mh; ++py) {
    for (int px = 0; px < mw; ++px) {
      const double gx = map.grid_x(px), gy = map.grid_y(py);
      double uu = 0, vv = 0;
      std::array<uint8_t, 3> c = kMissingColour;
      if (plane.sample(gx, gy, uu, vv)) {
        c = colour_map(std::hypot(uu, vv) * inv);
        if (o.lic) {
          // Average a per-pixel noise texture along the streamline through the pixel.
          double sum = 0;
          int n = 0;
          for (int dir = -1; dir <= 1; dir += 2) {
            double x = gx, y = gy;
            for (int k = 0; k < lic_steps; ++k) {
              double a = 0, b = 0;
              if (!plane.sample(x, y, a, b)) break;
              const double len = std::hypot(a, b);
              if (!(len > 0) || !std::isfinite(len)) break;
              x += dir * step * a / len;
              y += dir * step * b / len;
              const int qx = map.pixel_x(x), qy = map.pixel_y(y);
              sum += double(hash(uint64_t(uint32_t(qx)) << 32 | uint32_t(qy)) >> 11) * 0x1.0p-53;
              ++n;
            }
          }
          sum += double(hash(uint64_t(uint32_t(px)) << 32 | uint32_t(py)) >> 11) * 0x1.0p-53;
          const double texture = sum / double(n + 1);  // about 0.5, contrast along the flow
          const double gain = 0.45 + 1.1 * texture;
          for (auto& ch : c) ch = uint8_t(std::clamp(std::lround(ch * gain), 0L, 255L));
        }
      }
      const size_t k = (size_t(py) * size_t(im.width) + size_t(px)) * 3;
      im.rgb[k] = c[0];
      im.rgb[k + 1] = c[1];
      im.rgb[k + 2] = c[2];
    }
  }

  // Markers: violations are chosen first (they thin only their own fate), the others give
  // way to every marker; violations are drawn last so that they stay on top.
  const int radius = marker_radius(mw, mh);
  std::vector<Dot> dots;
  for (Fate fate : {Fate::lost, Fate::spurious, Fate::type_changed, Fate::preserved, Fate::original})
    for (const auto& m : markers) {
      if (m.fate != fate || !inside(m)) continue;
      Dot d;
      d.px = map.pixel_x(m.x);
      d.py = map.pixel_y(m.y);
      d.colour = fate_colour(fate);
      d.radius = fate == Fate::lost ? lost_radius(radius) : radius;
      d.group = int(fate);
      d.against_all = fate == Fate::preserved || fate == Fate::original;
      static constexpr int kLayer[kFateCount] = {0, 0, 3, 4, 2};  // by Fate
      d.layer = kLayer[int(fate)];
      dots.push_back(d);
    }
  im.markers_shown = shown;
  im.markers_drawn = draw_dots(im, dots, 2 * radius - 1, kFateCount);
  legend.count = std::to_string(shown) + " CRITICAL POINTS, " + std::to_string(im.markers_drawn) + " DRAWN";
  draw_legend(im, legend);
  return im;
}

Result<Image> draw_scalar(const ScalarField& f, const std::vector<CtNode>& nodes, const Options& o, double low,
                          double high) {
  if (f.nz != 1) return invalid_argument("render draws 2D scalar fields; this one has nz = " + std::to_string(f.nz));
  if (f.values.size() != size_t(std::max<int64_t>(f.nx, 0) * std::max<int64_t>(f.ny, 0)))
    return invalid_argument("the field does not hold nx * ny values");
  if (!f.mask.empty() && f.mask.size() != f.values.size())
    return invalid_argument("the mask does not hold nx * ny bytes");
  if (Status s = check_layout(f.nx, f.ny, o); !s.ok()) return s;
  if (o.lic) return invalid_argument("the line integral convolution texture needs a vector field");
  const Window& w = o.window;
  int mw = 0, mh = 0;
  map_size(w, o.size, mw, mh);
  const Mapping map(w, o.size, o.origin);
  const Plane plane{&f.values, nullptr, &f.mask, f.nx, f.ny};
  if (!(low < high) || !std::isfinite(low) || !std::isfinite(high)) {
    bool any = false;
    for (int64_t y = w.y0; y <= w.y1; ++y)
      for (int64_t x = w.x0; x <= w.x1; ++x) {
        const size_t k = size_t(y * f.nx + x);
        if (!plane.valid(k)) continue;
        const double v = f.values[k];
        low = any ? std::min(low, v) : v;
        high = any ? std::max(high, v) : v;
        any = true;
      }
    if (!any) low = high = 0;
  }
  // Nodes inside the window, extrema first; counted per legend entry.
  enum Kind { kMinimum, kMaximum, kSaddle, kIsolated, kKinds };
  auto kind_of = [](CtNodeType t) {
    switch (t) {
      case CtNodeType::minimum: return kMinimum;
      case CtNodeType::maximum: return kMaximum;
      case CtNodeType::isolated: return kIsolated;
      default: return kSaddle;
    }
  };
  int64_t counts[kKinds] = {};
  std::vector<const CtNode*> shown;
  for (const CtNode& n : nodes) {
    if (n.vertex < 0 || n.vertex >= f.nx * f.ny) continue;
    const int64_t x = n.vertex % f.nx, y = n.vertex / f.nx;
    if (x < w.x0 || x > w.x1 || y < w.y0 || y > w.y1) continue;
    ++counts[kind_of(n.type)];
    shown.push_back(&n);
  }
  Legend legend;
  legend.bar_title = "VALUE";
  legend.low = low;
  legend.high = high;
  if (!nodes.empty()) {
    const char* names[kKinds] = {"MINIMUM", "MAXIMUM", "SADDLE", "ISOLATED"};
    const CtNodeType types[kKinds] = {CtNodeType::minimum, CtNodeType::maximum, CtNodeType::join_saddle,
                                      CtNodeType::isolated};
    for (int k = 0; k < kKinds; ++k)
      if (k != kIsolated || counts[k] > 0)
        legend.keys.push_back({node_colour(types[k]), kMarkerRadius, std::string(names[k]) + " " + std::to_string(counts[k])});
  }
  Image im = start_image(mw, mh, legend, int64_t(shown.size()), "TREE NODES");

  const double inv = high > low ? 1.0 / (high - low) : 0.0;
#pragma omp parallel for schedule(dynamic, 8) num_threads(o.threads > 0 ? o.threads : omp_get_max_threads())
  for (int py = 0; py < mh; ++py)
    for (int px = 0; px < mw; ++px) {
      double v = 0, unused = 0;
      const std::array<uint8_t, 3> c =
          plane.sample(map.grid_x(px), map.grid_y(py), v, unused) ? colour_map((v - low) * inv) : kMissingColour;
      const size_t k = (size_t(py) * size_t(im.width) + size_t(px)) * 3;
      im.rgb[k] = c[0];
      im.rgb[k + 1] = c[1];
      im.rgb[k + 2] = c[2];
    }

  const int radius = marker_radius(mw, mh);
  std::vector<Dot> dots;
  for (bool extrema : {true, false})
    for (const CtNode* n : shown) {
      const Kind kind = kind_of(n->type);
      if ((kind == kMinimum || kind == kMaximum) != extrema) continue;
      Dot d;
      d.px = map.pixel_x(double(n->vertex % f.nx));
      d.py = map.pixel_y(double(n->vertex / f.nx));
      d.colour = node_colour(n->type);
      d.radius = radius;
      d.layer = extrema ? 1 : 0;
      dots.push_back(d);
    }
  im.markers_shown = int64_t(shown.size());
  im.markers_drawn = draw_dots(im, dots, 2 * radius - 1, 1);
  if (!nodes.empty())
    legend.count = std::to_string(im.markers_shown) + " TREE NODES, " + std::to_string(im.markers_drawn) + " DRAWN";
  draw_legend(im, legend);
  return im;
}

namespace {

/// libpng's write callback: appends to the std::vector<uint8_t> behind the io pointer.
void append_png_bytes(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}
void no_flush(png_structp) {}

/// The PNG encoding proper. libpng reports errors by longjmp back to here, so nothing
/// after setjmp changes a local of this function.
bool encode_png(png_structp png, png_infop info, const Image& im, png_bytepp rows, std::vector<uint8_t>* out) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, out, append_png_bytes, no_flush);
  png_set_IHDR(png, info, png_uint_32(im.width), png_uint_32(im.height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  return true;
}

}  // namespace

Status write_png(const std::string& path, const Image& im) {
  if (im.width <= 0 || im.height <= 0 || im.rgb.size() != size_t(im.width) * size_t(im.height) * 3)
    return invalid_argument("empty or inconsistent image");
  // Encoded in memory, then written by write_bytes: every write checked, and no partial PNG
  // left behind when the disk is full.
  std::vector<uint8_t> bytes;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  std::vector<png_bytep> rows(size_t(im.height));
  for (int y = 0; y < im.height; ++y)
    rows[size_t(y)] = const_cast<png_bytep>(im.rgb.data() + size_t(y) * size_t(im.width) * 3);
  const bool ok = png != nullptr && info != nullptr && encode_png(png, info, im, rows.data(), &bytes);
  png_destroy_write_struct(png ? &png : nullptr, info ? &info : nullptr);
  if (!ok) return io_error("cannot encode the PNG '" + path + "'");
  return factz::write_bytes(path, bytes);
}

}  // namespace factz::render
