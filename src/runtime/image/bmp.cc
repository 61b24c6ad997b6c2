// BMP through stb_image (Debian libstb; runtime/image_decode.h): uncompressed 1-32 bits per pixel
// and BI_BITFIELDS, bottom-up or top-down rows; decoded to RGB (alpha dropped). stb_image does
// not read RLE or embedded JPEG / PNG: those streams are undecodable. stb_image reads zeros past
// the stream's end, so a stream shorter than its declared pixel rows is refused here first, as
// Pillow (the ONNX reference's decoder) refuses it ("image file is truncated").
#include <stb/stb_image.h>

#include <algorithm>
#include <cstdint>

#include "codecs.h"

namespace tessera::runtime::image {

namespace {

uint32_t Le(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The bytes a BMP of width x height pixels needs: its pixel array's offset (the file header's
// bfOffBits, at least past the headers), height - 1 rows of the row stride (rounded up to 4
// bytes) and the last row's pixels; the last row's padding may be missing, as Pillow accepts.
// The caller has checked the headers with stb_image (so they are there).
uint64_t BmpBytesNeeded(const uint8_t* data, size_t size, int64_t width, int64_t height, int& bpp) {
  const uint32_t header = size >= 18 ? Le(data + 14, 4) : 0;
  const size_t bpp_at = header == 12 ? 24 : 28;
  bpp = size >= bpp_at + 2 ? static_cast<int>(Le(data + bpp_at, 2)) : 0;
  const uint64_t offset = std::max<uint64_t>(Le(data + 10, 4), 14 + uint64_t{header});
  const uint64_t row_bits = static_cast<uint64_t>(width) * static_cast<uint64_t>(bpp);
  return offset + (row_bits + 31) / 32 * 4 * static_cast<uint64_t>(height - 1) + (row_bits + 7) / 8;
}

}  // namespace

bool DecodeBmp(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  if (size > static_cast<size_t>(INT32_MAX)) {
    failure = "the stream is over 2 GiB";
    return false;
  }
  const auto* bytes = reinterpret_cast<const stbi_uc*>(data);
  const int length = static_cast<int>(size);
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(bytes, length, &width, &height, &channels)) {
    failure = std::string("stb_image: ") + stbi_failure_reason();
    return false;
  }
  if (!CheckSize(height, width, failure)) return false;
  int bpp = 0;
  const uint64_t needed = BmpBytesNeeded(data, size, width, height, bpp);
  if (needed > size) {
    failure = "the stream is truncated: its " + std::to_string(width) + " x " + std::to_string(height) +
              " pixels at " + std::to_string(bpp) + " bits need " + std::to_string(needed) + " bytes, it has " +
              std::to_string(size);
    return false;
  }
  stbi_uc* pixels = stbi_load_from_memory(bytes, length, &width, &height, &channels, 3);
  if (!pixels) {
    failure = std::string("stb_image: ") + stbi_failure_reason();
    return false;
  }
  out.height = height;
  out.width = width;
  out.channels = 3;
  out.pixels.assign(pixels, pixels + static_cast<size_t>(height) * static_cast<size_t>(width) * 3);
  stbi_image_free(pixels);
  return true;
}

}  // namespace tessera::runtime::image
