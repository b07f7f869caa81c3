// Reading back the PNGs of `factz render` in the tests (tests/test_cli_tools.cpp,
// tests/evaluate/test_render.cpp), with libpng's simplified API.
#pragma once

#include <png.h>

#include <cstring>
#include <string>

namespace factz::testing {

/// Decodes the PNG at `path` to 8-bit RGB: sets im.width, im.height and im.rgb (3 bytes per
/// pixel, rows top down). false when the file is not a readable PNG.
template <class Image>
bool decode_png(const std::string& path, Image& im) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str())) return false;
  img.format = PNG_FORMAT_RGB;
  im.width = int(img.width);
  im.height = int(img.height);
  im.rgb.assign(PNG_IMAGE_SIZE(img), 0);
  const bool ok = png_image_finish_read(&img, nullptr, im.rgb.data(), 0, nullptr) != 0;
  png_image_free(&img);
  return ok;
}

}  // namespace factz::testing
