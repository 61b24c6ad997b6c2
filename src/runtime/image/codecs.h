// The image codecs behind DecodeImageDetailed (runtime/image_decode.h), one file per format. Each
// decodes a whole stream into 8-bit samples with 1 (gray) or 3 (RGB) channels, the channel
// conversion to the requested pixel format being image_decode.cc's. A codec never throws for the
// stream's content: it returns false with `failure` set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::runtime::image {

/// 8-bit samples, row-major, channels last; channels is 1 (gray) or 3 (RGB).
struct RawImage {
  int64_t height = 0, width = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

/// The largest image decoded: a stream declaring more pixels is undecodable (before allocating).
inline constexpr int64_t kMaxPixels = int64_t{1} << 28;

/// Whether height x width is a size a codec may allocate (both > 0, product <= kMaxPixels); sets
/// `failure` otherwise.
bool CheckSize(int64_t height, int64_t width, std::string& failure);

// The codecs. Each returns true and fills `out`, or returns false and says why in `failure`.
bool DecodeJpeg(const uint8_t* data, size_t size, RawImage& out, std::string& failure);
bool DecodePng(const uint8_t* data, size_t size, RawImage& out, std::string& failure);
bool DecodeTiff(const uint8_t* data, size_t size, RawImage& out, std::string& failure);
bool DecodeWebp(const uint8_t* data, size_t size, RawImage& out, std::string& failure);
bool DecodeJpeg2000(const uint8_t* data, size_t size, RawImage& out, std::string& failure);
bool DecodeBmp(const uint8_t* data, size_t size, RawImage& out, std::string& failure);
bool DecodePnm(const uint8_t* data, size_t size, RawImage& out, std::string& failure);

}  // namespace tessera::runtime::image
