#include "render.hpp"

#include <omp.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "factz/io.hpp"

namespace factz::render {
namespace {

// 5 x 7 bitmap glyphs (bit 4 = leftmost column) for the legend's capitals and digits.
struct Glyph {
  char c;
  uint8_t rows[7];
};
constexpr Glyph kFont[] = {
    {'A', {14, 17, 17, 31, 17, 17, 17}}, {'C', {15, 16, 16, 16, 16, 16, 15}}, {'D', {30, 17, 17, 17, 17, 17, 30}},
    {'E', {31, 16, 16, 30, 16, 16, 31}}, {'G', {15, 16, 16, 23, 17, 17, 15}}, {'H', {17, 17, 17, 31, 17, 17, 17}},
    {'I', {31, 4, 4, 4, 4, 4, 31}},      {'L', {16, 16, 16, 16, 16, 16, 31}}, {'N', {17, 25, 21, 19, 17, 17, 17}},
    {'O', {14, 17, 17, 17, 17, 17, 14}}, {'P', {30, 17, 17, 30, 16, 16, 16}}, {'R', {30, 17, 17, 30, 20, 18, 17}},
    {'S', {15, 16, 16, 14, 1, 1, 30}},   {'T', {31, 4, 4, 4, 4, 4, 4}},       {'U', {17, 17, 17, 17, 17, 17, 14}},
    {'V', {17, 17, 17, 17, 17, 10, 4}},  {'Y', {17, 17, 10, 4, 4, 4, 4}},     {'0', {14, 17, 19, 21, 25, 17, 14}},
    {'1', {4, 12, 4, 4, 4, 4, 14}},      {'2', {14, 17, 1, 2, 4, 8, 31}},     {'3', {30, 1, 1, 14, 1, 1, 30}},
    {'4', {2, 6, 10, 18, 31, 2, 2}},     {'5', {31, 16, 30, 1, 1, 17, 14}},   {'6', {6, 8, 16, 30, 17, 17, 14}},
    {'7', {31, 1, 2, 4, 8, 8, 8}},       {'8', {14, 17, 17, 14, 17, 17, 14}}, {'9', {14, 17, 17, 15, 1, 2, 12}},
};
constexpr int kTextScale = 2;             // glyph pixels per font pixel
constexpr int kAdvance = 6 * kTextScale;  // 5 columns + 1 space
constexpr int kSwatch = 2 * kLostRadius + 3;
constexpr int kEntryGap = 18;

const Glyph* glyph(char c) {
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
  void marker(int cx, int cy, std::array<uint8_t, 3> c, int r = kMarkerRadius) {
    disc(cx, cy, r + 1, {0, 0, 0});
    disc(cx, cy, r, c);
  }
  int text(int x, int y, const std::string& s, std::array<uint8_t, 3> c) {
    for (char ch : s) {
      if (const Glyph* g = glyph(ch))
        for (int r = 0; r < 7; ++r)
          for (int q = 0; q < 5; ++q)
            if (g->rows[r] & (16 >> q))
              for (int a = 0; a < kTextScale; ++a)
                for (int b = 0; b < kTextScale; ++b) set(x + q * kTextScale + b, y + r * kTextScale + a, c);
      x += kAdvance;
    }
    return x;
  }
};

// Low-saturation navy -> steel blue -> pale grey, so the markers' colours stand out.
std::array<uint8_t, 3> colour_map(double t) {
  static constexpr double kStops[3][3] = {{15, 25, 60}, {70, 110, 170}, {228, 234, 240}};
  t = std::clamp(t, 0.0, 1.0) * 2.0;
  const int k = std::min(1, int(t));
  const double f = t - k;
  std::array<uint8_t, 3> c{};
  for (int ch = 0; ch < 3; ++ch) c[size_t(ch)] = uint8_t(std::lround(kStops[k][ch] * (1 - f) + kStops[k + 1][ch] * f));
  return c;
}

// Bilinear sample of plane `p` at grid position (x, y), clamped to the field.
float sample(const std::vector<float>& p, int64_t nx, int64_t ny, double x, double y) {
  x = std::clamp(x, 0.0, double(nx - 1));
  y = std::clamp(y, 0.0, double(ny - 1));
  const int64_t i = std::min<int64_t>(int64_t(y), ny - 2), j = std::min<int64_t>(int64_t(x), nx - 2);
  const double fy = y - double(i), fx = x - double(j);
  const float* r0 = &p[size_t(i * nx + j)];
  const float* r1 = r0 + nx;
  return float((r0[0] * (1 - fx) + r0[1] * fx) * (1 - fy) + (r1[0] * (1 - fx) + r1[1] * fx) * fy);
}

uint64_t hash(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

double scale_of(const Window& w, int size) {
  return double(size) / double(std::max(w.x1 - w.x0 + 1, w.y1 - w.y0 + 1));
}

std::string legend_text(Fate f, int64_t count) { return std::string(fate_label(f)) + " " + std::to_string(count); }

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
    case Fate::original: return "CRITICAL POINTS";
    case Fate::preserved: return "PRESERVED";
    case Fate::lost: return "LOST";
    case Fate::spurious: return "SPURIOUS";
    case Fate::type_changed: return "TYPE CHANGED";
  }
  return "";
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

void to_pixel(const Window& w, int size, double x, double y, int& px, int& py) {
  const double s = scale_of(w, size);
  px = int(std::floor((x - double(w.x0) + 0.5) * s));
  py = int(std::floor((y - double(w.y0) + 0.5) * s));
}

Result<Image> draw(const VectorField2D& f, const std::vector<Marker>& markers, const Options& o, double magnitude_max) {
  const Window& w = o.window;
  if (f.nx < 2 || f.ny < 2) return invalid_argument("render needs at least 2 x 2 vertices");
  if (f.u.size() != size_t(f.nx * f.ny) || f.v.size() != f.u.size()) return invalid_argument("planes do not hold nx * ny values");
  if (w.x0 < 0 || w.y0 < 0 || w.x1 >= f.nx || w.y1 >= f.ny || w.x0 >= w.x1 || w.y0 >= w.y1)
    return invalid_argument("window " + std::to_string(w.x0) + " " + std::to_string(w.y0) + " " + std::to_string(w.x1) +
                            " " + std::to_string(w.y1) + " must satisfy 0 <= X0 < X1 < " + std::to_string(f.nx) +
                            " and 0 <= Y0 < Y1 < " + std::to_string(f.ny));
  if (o.size < 16 || o.size > 16384) return invalid_argument("size must be in [16, 16384] pixels");
  int mw = 0, mh = 0;
  map_size(w, o.size, mw, mh);
  const double s = scale_of(w, o.size);

  // Legend entries and width.
  std::vector<Fate> fates;
  if (o.reconstruction) fates = {Fate::preserved, Fate::lost, Fate::spurious, Fate::type_changed};
  else fates = {Fate::original};
  auto inside = [&](const Marker& m) {
    return m.x >= double(w.x0) && m.x <= double(w.x1) && m.y >= double(w.y0) && m.y <= double(w.y1);
  };
  int64_t counts[kFateCount] = {};  // the legend counts what the window shows
  for (const auto& m : markers) counts[int(m.fate)] += inside(m);
  int legend_width = 8;
  for (Fate fate : fates)
    legend_width += kSwatch + 6 + int(legend_text(fate, counts[int(fate)]).size()) * kAdvance + kEntryGap;

  Image im;
  im.width = std::max(mw, legend_width);
  im.height = mh + kLegendHeight;
  im.rgb.assign(size_t(im.width) * size_t(im.height) * 3, 255);

  double top = magnitude_max;
  if (!(top > 0)) {
    for (int64_t y = w.y0; y <= w.y1; ++y)
      for (int64_t x = w.x0; x <= w.x1; ++x) {
        const size_t k = size_t(y * f.nx + x);
        top = std::max(top, std::hypot(double(f.u[k]), double(f.v[k])));
      }
  }
  const double inv = top > 0 ? 1.0 / top : 0.0;
  const int threads = o.threads > 0 ? o.threads : 0;
  const int lic_steps = 12;
  const double step = 0.6 / s;  // 0.6 pixel per step, in grid units
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (int py = 0; py < mh; ++py) {
    for (int px = 0; px < mw; ++px) {
      const double gx = double(w.x0) + (px + 0.5) / s - 0.5, gy = double(w.y0) + (py + 0.5) / s - 0.5;
      const double uu = sample(f.u, f.nx, f.ny, gx, gy), vv = sample(f.v, f.nx, f.ny, gx, gy);
      std::array<uint8_t, 3> c = colour_map(std::hypot(uu, vv) * inv);
      if (o.lic) {
        // Average a per-pixel noise texture along the streamline through the pixel.
        double sum = 0;
        int n = 0;
        for (int dir = -1; dir <= 1; dir += 2) {
          double x = gx, y = gy;
          for (int k = 0; k < lic_steps; ++k) {
            const double a = sample(f.u, f.nx, f.ny, x, y), b = sample(f.v, f.nx, f.ny, x, y);
            const double len = std::hypot(a, b);
            if (len == 0) break;
            x += dir * step * a / len;
            y += dir * step * b / len;
            const int qx = int(std::floor((x - double(w.x0) + 0.5) * s)), qy = int(std::floor((y - double(w.y0) + 0.5) * s));
            sum += double(hash(uint64_t(uint32_t(qx)) << 32 | uint32_t(qy)) >> 11) * 0x1.0p-53;
            ++n;
          }
        }
        sum += double(hash(uint64_t(uint32_t(px)) << 32 | uint32_t(py)) >> 11) * 0x1.0p-53;
        const double texture = sum / double(n + 1);  // about 0.5, contrast along the flow
        const double gain = 0.45 + 1.1 * texture;
        for (auto& ch : c) ch = uint8_t(std::clamp(std::lround(ch * gain), 0L, 255L));
      }
      const size_t k = (size_t(py) * size_t(im.width) + size_t(px)) * 3;
      im.rgb[k] = c[0];
      im.rgb[k + 1] = c[1];
      im.rgb[k + 2] = c[2];
    }
  }

  // Markers: violations drawn last so that they stay visible where markers overlap.
  Canvas cv{im};
  for (Fate fate : {Fate::original, Fate::preserved, Fate::type_changed, Fate::lost, Fate::spurious})
    for (const auto& m : markers) {
      if (m.fate != fate || !inside(m)) continue;
      int px = 0, py = 0;
      to_pixel(w, o.size, m.x, m.y, px, py);
      cv.marker(std::clamp(px, 0, mw - 1), std::clamp(py, 0, mh - 1), fate_colour(fate),
                fate == Fate::lost ? kLostRadius : kMarkerRadius);
    }
  // Anything the markers' rings drew below the map is covered by the legend strip.
  for (int y = mh; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) cv.set(x, y, {245, 245, 245});
  int x = 8;
  const int cy = mh + kLegendHeight / 2;
  for (Fate fate : fates) {
    cv.marker(x + kSwatch / 2, cy, fate_colour(fate), fate == Fate::lost ? kLostRadius : kMarkerRadius);
    x = cv.text(x + kSwatch + 6, cy - 7, legend_text(fate, counts[int(fate)]), {0, 0, 0}) + kEntryGap;
  }
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
