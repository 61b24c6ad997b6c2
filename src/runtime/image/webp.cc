// WebP through libwebp (runtime/image_decode.h): lossy or lossless, decoded to RGB (alpha dropped)
// with the library's default (fancy) upsampling.
#include <cstring>

#include <webp/decode.h>

#include "codecs.h"

namespace tessera::runtime::image {

bool DecodeWebp(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  int width = 0, height = 0;
  if (!WebPGetInfo(data, size, &width, &height)) {
    failure = "libwebp: not a valid WebP stream";
    return false;
  }
  if (!CheckSize(height, width, failure)) return false;
  out.height = height;
  out.width = width;
  out.channels = 3;
  out.pixels.resize(static_cast<size_t>(height) * static_cast<size_t>(width) * 3);
  const int stride = width * 3;
  if (!WebPDecodeRGBInto(data, size, out.pixels.data(), out.pixels.size(), stride)) {
    failure = "libwebp: the stream is corrupt or truncated";
    return false;
  }
  return true;
}

}  // namespace tessera::runtime::image
