// PNG through libpng's progressive-free classic API (runtime/image_decode.h): palettes and
// low-bit gray expanded, 16-bit samples reduced to their high byte (png_set_strip_16, as Pillow
// and OpenCV), alpha and transparency dropped, no gamma correction (as Pillow). libpng reports
// errors by longjmp to png_jmpbuf.
#include <csetjmp>
#include <cstring>

#include <png.h>

#include "codecs.h"

namespace tessera::runtime::image {

namespace {

struct Reader {
  const uint8_t* data;
  size_t size, pos;
  char message[256];
};

void Read(png_structp png, png_bytep dst, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->size - r->pos) png_error(png, "the stream ends inside the image");
  std::memcpy(dst, r->data + r->pos, n);
  r->pos += n;
}

void OnError(png_structp png, png_const_charp message) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  std::strncpy(r->message, message, sizeof(r->message) - 1);
  r->message[sizeof(r->message) - 1] = '\0';
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}

}  // namespace

bool DecodePng(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  Reader reader{data, size, 0, {0}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, OnError, OnWarning);
  if (!png) {
    failure = "libpng: cannot create a reader";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> rows;  // declared before setjmp: the jump skips no constructor
  if (!info || setjmp(png_jmpbuf(png))) {
    failure = std::string("libpng: ") + (info ? reader.message : "cannot create an info struct");
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return false;
  }
  png_set_read_fn(png, &reader, Read);
  png_read_info(png, info);
  const int64_t width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  if (!CheckSize(height, width, failure)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  const int color = png_get_color_type(png, info);
  png_set_expand(png);  // palette -> RGB, gray < 8 bits -> 8 bits, tRNS -> alpha (dropped below)
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const bool gray = (color & PNG_COLOR_MASK_COLOR) == 0;
  out.height = height;
  out.width = width;
  out.channels = gray ? 1 : 3;
  if (png_get_rowbytes(png, info) != static_cast<size_t>(width * out.channels)) {
    failure = "libpng: unexpected row size after the transformations";
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  out.pixels.resize(static_cast<size_t>(height * width * out.channels));
  rows.resize(static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) rows[y] = out.pixels.data() + y * width * out.channels;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace tessera::runtime::image
