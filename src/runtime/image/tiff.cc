// TIFF through libtiff (runtime/image_decode.h): the first directory (page), any photometric
// interpretation, bit depth and compression libtiff reads, through TIFFReadRGBAImageOriented
// (top-left origin); alpha dropped. A gray image (one sample per pixel) stays one channel. The
// strips / tiles must lie inside the stream (and uncompressed ones be whole) before the raster
// is allocated; one that does not decode makes the stream undecodable.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <tiffio.h>

#include "codecs.h"

namespace tessera::runtime::image {

namespace {

struct Stream {
  const uint8_t* data;
  toff_t size, pos;
};

tsize_t Read(thandle_t h, tdata_t dst, tsize_t n) {
  auto* s = static_cast<Stream*>(h);
  const toff_t left = s->pos < s->size ? s->size - s->pos : 0;
  const toff_t count = static_cast<toff_t>(n) < left ? static_cast<toff_t>(n) : left;
  std::memcpy(dst, s->data + s->pos, count);
  s->pos += count;
  return static_cast<tsize_t>(count);
}

tsize_t Write(thandle_t, tdata_t, tsize_t) { return 0; }

toff_t Seek(thandle_t h, toff_t offset, int whence) {
  auto* s = static_cast<Stream*>(h);
  toff_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->size : 0;
  s->pos = base + offset;
  return s->pos;
}

int Close(thandle_t) { return 0; }
toff_t Size(thandle_t h) { return static_cast<Stream*>(h)->size; }
int Map(thandle_t, tdata_t*, toff_t*) { return 0; }
void Unmap(thandle_t, tdata_t, toff_t) {}

// The first error is the cause; libtiff passes the failure string as user data.
int OnError(TIFF*, void* user_data, const char* module, const char* fmt, va_list ap) {
  auto* failure = static_cast<std::string*>(user_data);
  if (!failure->empty()) return 1;
  char buffer[512];
  std::vsnprintf(buffer, sizeof(buffer), fmt, ap);
  *failure = std::string("libtiff: ") + (module ? std::string(module) + ": " : "") + buffer;
  return 1;
}

int OnWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

// Whether the image's data is in the stream, checked before its raster is allocated (a header
// may declare 2^28 pixels in a few bytes): every strip or tile lies inside the stream and has
// bytes, and uncompressed ones hold all their samples. Sets `failure` otherwise. (Pillow, the
// ONNX reference's decoder, refuses such a stream as truncated or broken too.)
bool DataIsInTheStream(TIFF* tif, uint64_t size, std::string& failure) {
  const bool tiled = TIFFIsTiled(tif);
  const uint32_t count = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  const char* what = tiled ? "tile" : "strip";
  uint64_t total = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const uint64_t offset = TIFFGetStrileOffset(tif, k), bytes = TIFFGetStrileByteCount(tif, k);
    if (bytes == 0 || offset > size || bytes > size - offset) {
      failure = std::string("libtiff: ") + what + " " + std::to_string(k) + " of " + std::to_string(count) + " (" +
                std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + ") is not inside the " +
                std::to_string(size) + "-byte stream";
      return false;
    }
    total += bytes;
  }
  uint16_t compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  if (compression != COMPRESSION_NONE) return true;
  // Every tile is whole; strips hold every row of every plane (one per sample when separate).
  uint32_t height = 0;
  uint16_t planar = PLANARCONFIG_CONTIG, samples = 1;
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
  const uint64_t needed = tiled ? TIFFTileSize64(tif) * count
                                : TIFFScanlineSize64(tif) * height * (planar == PLANARCONFIG_SEPARATE ? samples : 1);
  if (total < needed) {
    failure = "libtiff: the stream is truncated: its uncompressed " + std::string(what) + "s hold " +
              std::to_string(total) + " bytes of the " + std::to_string(needed) + " the image needs";
    return false;
  }
  return true;
}

}  // namespace

bool DecodeTiff(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  Stream stream{data, static_cast<toff_t>(size), 0};
  failure.clear();
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, OnError, &failure);
  TIFFOpenOptionsSetWarningHandlerExtR(options, OnWarning, nullptr);
  TIFF* tif = TIFFClientOpenExt("image", "rm", &stream, Read, Write, Seek, Close, Size, Map, Unmap, options);
  TIFFOpenOptionsFree(options);
  auto fail = [&](const char* why) {
    if (failure.empty()) failure = std::string("libtiff: ") + why;
    if (tif) TIFFClose(tif);
    return false;
  };
  if (!tif) return fail("not a readable TIFF stream");
  uint32_t width = 0, height = 0;
  uint16_t samples = 1;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
  uint16_t photometric = PHOTOMETRIC_RGB;
  TIFFGetFieldDefaulted(tif, TIFFTAG_PHOTOMETRIC, &photometric);
  if (!CheckSize(height, width, failure) || !DataIsInTheStream(tif, size, failure)) return fail("");
  std::vector<uint32_t> raster(static_cast<size_t>(width) * height);
  // stop_on_error = 1: a strip or tile that does not decode (LZW data ending early) fails the
  // read, as it fails Pillow's, rather than leaving its pixels zero.
  if (!TIFFReadRGBAImageOriented(tif, width, height, raster.data(), ORIENTATION_TOPLEFT, 1))
    return fail("cannot read the image's samples");
  const bool gray = samples <= 2 && (photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE);
  out.height = height;
  out.width = width;
  out.channels = gray ? 1 : 3;
  out.pixels.resize(raster.size() * static_cast<size_t>(out.channels));
  for (size_t p = 0; p < raster.size(); ++p) {
    const uint32_t v = raster[p];
    if (gray) {
      out.pixels[p] = static_cast<uint8_t>(TIFFGetR(v));
    } else {
      out.pixels[3 * p] = static_cast<uint8_t>(TIFFGetR(v));
      out.pixels[3 * p + 1] = static_cast<uint8_t>(TIFFGetG(v));
      out.pixels[3 * p + 2] = static_cast<uint8_t>(TIFFGetB(v));
    }
  }
  TIFFClose(tif);
  return true;
}

}  // namespace tessera::runtime::image
