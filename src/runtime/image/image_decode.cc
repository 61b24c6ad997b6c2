// ImageDecoder's decoding (runtime/image_decode.h): the format from the leading bytes, its codec
// (codecs.h), then the channels the pixel format asks for.
#include "tessera/runtime/image_decode.h"

#include <cstring>

#include "codecs.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

namespace {

bool StartsWith(const uint8_t* data, size_t size, const void* magic, size_t n) {
  return size >= n && std::memcmp(data, magic, n) == 0;
}

// The JP2 signature box (ISO/IEC 15444-1 I.5.1) and the J2K codestream's SOC + SIZ markers.
constexpr uint8_t kJp2Magic[] = {0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A};
constexpr uint8_t kJ2kMagic[] = {0xFF, 0x4F, 0xFF, 0x51};

// Pillow's convert("L") of one RGB pixel (ITU-R 601-2 luma, rounded): the ONNX reference's gray.
uint8_t Luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((19595u * rgb[0] + 38470u * rgb[1] + 7471u * rgb[2] + 0x8000u) >> 16);
}

// The decoded samples in the requested format's channels.
DecodedImage Convert(const image::RawImage& raw, PixelFormat format) {
  DecodedImage out;
  out.height = raw.height;
  out.width = raw.width;
  out.channels = ChannelsOf(format);
  const size_t n = static_cast<size_t>(raw.height * raw.width);
  out.pixels.resize(n * static_cast<size_t>(out.channels));
  uint8_t* dst = out.pixels.data();
  const uint8_t* src = raw.pixels.data();
  if (format == PixelFormat::kGrayscale) {
    if (raw.channels == 1) {
      std::memcpy(dst, src, n);
    } else {
      for (size_t p = 0; p < n; ++p) dst[p] = Luma(src + 3 * p);
    }
    return out;
  }
  const bool bgr = format == PixelFormat::kBGR;
  for (size_t p = 0; p < n; ++p) {
    if (raw.channels == 1) {
      dst[3 * p] = dst[3 * p + 1] = dst[3 * p + 2] = src[p];
    } else {
      dst[3 * p] = src[3 * p + (bgr ? 2 : 0)];
      dst[3 * p + 1] = src[3 * p + 1];
      dst[3 * p + 2] = src[3 * p + (bgr ? 0 : 2)];
    }
  }
  return out;
}

}  // namespace

namespace image {

bool CheckSize(int64_t height, int64_t width, std::string& failure) {
  if (height <= 0 || width <= 0) {
    failure = "the image declares a size of " + std::to_string(width) + " x " + std::to_string(height) + " pixels";
    return false;
  }
  if (height > kMaxPixels / width) {
    failure = "the image declares " + std::to_string(width) + " x " + std::to_string(height) +
              " pixels, over the limit of 2^28";
    return false;
  }
  return true;
}

}  // namespace image

PixelFormat ParsePixelFormat(std::string_view name) {
  if (name == "RGB") return PixelFormat::kRGB;
  if (name == "BGR") return PixelFormat::kBGR;
  if (name == "Grayscale") return PixelFormat::kGrayscale;
  TESSERA_THROW(UserError, "pixel_format \"", std::string(name), "\" is not one of RGB, BGR, Grayscale");
}

bool ImageCodecsAvailable() { return TESSERA_IMAGE_CODECS_BUILT != 0; }

int ChannelsOf(PixelFormat format) { return format == PixelFormat::kGrayscale ? 1 : 3; }

std::string DetectImageFormat(const uint8_t* data, size_t size) {
  if (StartsWith(data, size, "\xFF\xD8\xFF", 3)) return "JPEG";
  if (StartsWith(data, size, "\x89PNG\r\n\x1A\n", 8)) return "PNG";
  if (StartsWith(data, size, "II*\0", 4) || StartsWith(data, size, "MM\0*", 4)) return "TIFF";
  if (size >= 12 && StartsWith(data, size, "RIFF", 4) && std::memcmp(data + 8, "WEBP", 4) == 0) return "WebP";
  if (StartsWith(data, size, kJp2Magic, sizeof(kJp2Magic)) || StartsWith(data, size, kJ2kMagic, sizeof(kJ2kMagic)))
    return "JPEG 2000";
  if (StartsWith(data, size, "BM", 2)) return "BMP";
  if (size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6') return "PNM";
  return "";
}

DecodedImage DecodeImageDetailed(const uint8_t* data, size_t size, PixelFormat format) {
  const std::string kind = DetectImageFormat(data, size);
  image::RawImage raw;
  std::string failure;
  bool ok = false;
  if (kind == "JPEG") ok = image::DecodeJpeg(data, size, raw, failure);
  else if (kind == "PNG") ok = image::DecodePng(data, size, raw, failure);
  else if (kind == "TIFF") ok = image::DecodeTiff(data, size, raw, failure);
  else if (kind == "WebP") ok = image::DecodeWebp(data, size, raw, failure);
  else if (kind == "JPEG 2000") ok = image::DecodeJpeg2000(data, size, raw, failure);
  else if (kind == "BMP") ok = image::DecodeBmp(data, size, raw, failure);
  else if (kind == "PNM") ok = image::DecodePnm(data, size, raw, failure);
  else
    failure = "the " + std::to_string(size) + " bytes start with no known image signature (BMP, JPEG, JPEG 2000, "
              "TIFF, PNG, WebP, PNM)";
  if (ok) return Convert(raw, format);
  DecodedImage empty;
  empty.channels = ChannelsOf(format);
  empty.failure = (kind.empty() ? "" : kind + ": ") + failure;
  return empty;
}

}  // namespace tessera::runtime
