// Decoding encoded images: the run-time half of ONNX ImageDecoder (opset 20,
// https://onnx.ai/onnx/operators/onnx__ImageDecoder.html), the VM builtin "image_decode"
// (vm_builtins.h) and the importer's fold of a constant image.
//
// Formats, recognized by their leading bytes (never by a name), each through its Debian library:
//   JPEG (FF D8 FF)                      libjpeg-turbo: islow DCT, fancy (linear) chroma upsampling,
//                                        as the spec's "JPEG chroma upsampling method" and Pillow;
//                                        CMYK / YCCK JPEGs (Adobe inverted or not) become RGB
//   PNG (89 'PNG')                       libpng: palettes expanded, 16-bit samples >> 8, alpha dropped
//   TIFF (II* / MM*)                     libtiff, any photometric / compression (TIFFReadRGBAImage)
//   WebP (RIFF....WEBP)                  libwebp, lossy and lossless, alpha dropped
//   JPEG 2000 (JP2 box or J2K codestream) OpenJPEG: samples of more than 8 bits scaled to 8,
//                                        subsampled components repeated to full size
//   BMP ('BM')                           stb_image
//   PNM: PBM / PGM / PPM, ASCII (P1-P3) and binary (P4-P6): read here (the format is a text
//                                        header and raw samples); maxval != 255 scaled to 0-255
//
// The result is uint8, channels last (height, width, channels): RGB or BGR (3 channels), or
// Grayscale (1 channel). A colour image becomes grayscale as Pillow's convert("L") (ITU-R 601-2:
// L = (19595 R + 38470 G + 7471 B + 2^15) >> 16, the ONNX reference's definition); a gray image
// becomes RGB by repeating its value. Alpha is dropped, never composited; EXIF orientation is
// not applied (the ONNX reference does not apply it).
//
// Errors. ImageDecoder's spec defines what an undecodable stream gives: "If it can't decode for
// any reason (e.g. corrupted encoded stream, invalid format), it will return an empty matrix", so a
// stream of no known format, a truncated or corrupt one, or a format whose library this runtime
// was built without (CMake TESSERA_IMAGE_CODECS=OFF, or AUTO without the libraries, as the
// cross-compiled runtime-only build) gives a (0, 0, channels) image, and DecodeImageDetailed says
// why. An unknown pixel_format is a UserError. Images are limited to 2^28 pixels (a larger
// declared size is undecodable, before anything is allocated).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::runtime {

/// An ImageDecoder pixel_format.
enum class PixelFormat { kRGB, kBGR, kGrayscale };

/// "RGB", "BGR" or "Grayscale" (the spec's spelling) -> PixelFormat; UserError for another name.
PixelFormat ParsePixelFormat(std::string_view name);
/// 3 for RGB / BGR, 1 for Grayscale.
int ChannelsOf(PixelFormat format);

/// A decoded image: height x width x channels uint8 samples, row-major, channels last.
struct DecodedImage {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
  /// Empty when decoding worked; otherwise why it did not ("not a JPEG, PNG, ... stream",
  /// "libpng: IDAT: CRC error", "built without libwebp").
  std::string failure;
};

/// Decodes `size` bytes at `data` as ImageDecoder does (above): an image, or an empty (0, 0,
/// channels) one with `failure` set. Never throws for the bytes' content.
DecodedImage DecodeImageDetailed(const uint8_t* data, size_t size, PixelFormat format);

/// The name of the image format `data` starts with ("JPEG", "PNG", ...), or "" when none.
std::string DetectImageFormat(const uint8_t* data, size_t size);

/// Whether this runtime was built with the image libraries (TESSERA_IMAGE_CODECS).
bool ImageCodecsAvailable();

}  // namespace tessera::runtime
