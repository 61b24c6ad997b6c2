// BMP through stb_image (Debian libstb; runtime/image_decode.h): 1-32 bits per pixel, RLE,
// bottom-up or top-down rows; decoded to RGB (alpha dropped).
#include <stb/stb_image.h>

#include <cstring>

#include "codecs.h"

namespace tessera::runtime::image {

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
