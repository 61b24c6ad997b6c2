// JPEG 2000 through OpenJPEG (runtime/image_decode.h): a JP2 file or a raw J2K codestream, from
// memory. Components 0-2 are R, G, B (component 0 alone: gray); samples of other precisions are
// scaled to 8 bits (rounded), signed ones shifted to unsigned; a subsampled component (dx, dy > 1,
// e.g. 4:2:0) is repeated to full size. sYCC colour (a JP2 colour space) is converted to RGB with
// the ITU-R BT.601 full-range equations.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <openjpeg.h>

#include "codecs.h"

namespace tessera::runtime::image {

namespace {

struct Stream {
  const uint8_t* data;
  OPJ_UINT64 size, pos;
};

OPJ_SIZE_T Read(void* dst, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (s->pos >= s->size) return static_cast<OPJ_SIZE_T>(-1);
  const OPJ_UINT64 count = std::min<OPJ_UINT64>(n, s->size - s->pos);
  std::memcpy(dst, s->data + s->pos, count);
  s->pos += count;
  return static_cast<OPJ_SIZE_T>(count);
}

OPJ_OFF_T Skip(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Stream*>(user);
  const OPJ_OFF_T pos = static_cast<OPJ_OFF_T>(s->pos) + n;
  if (pos < 0) return -1;
  s->pos = static_cast<OPJ_UINT64>(pos);
  return n;
}

OPJ_BOOL Seek(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (n < 0 || static_cast<OPJ_UINT64>(n) > s->size) return OPJ_FALSE;
  s->pos = static_cast<OPJ_UINT64>(n);
  return OPJ_TRUE;
}

void OnError(const char* message, void* user) {
  auto* failure = static_cast<std::string*>(user);
  if (failure->empty()) {
    *failure = std::string("OpenJPEG: ") + message;
    while (!failure->empty() && failure->back() == '\n') failure->pop_back();
  }
}

void Quiet(const char*, void*) {}

// Sample (x, y) of component c scaled to 0-255.
uint8_t Sample(const opj_image_comp_t& c, int64_t x, int64_t y) {
  const int64_t cx = std::min<int64_t>(x / std::max<OPJ_UINT32>(c.dx, 1), static_cast<int64_t>(c.w) - 1);
  const int64_t cy = std::min<int64_t>(y / std::max<OPJ_UINT32>(c.dy, 1), static_cast<int64_t>(c.h) - 1);
  int64_t v = c.data[cy * static_cast<int64_t>(c.w) + cx];
  if (c.sgnd) v += int64_t{1} << (c.prec - 1);
  const int64_t max = (int64_t{1} << c.prec) - 1;
  v = std::clamp<int64_t>(v, 0, max);
  if (c.prec == 8) return static_cast<uint8_t>(v);
  return static_cast<uint8_t>((v * 255 + max / 2) / max);
}

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

}  // namespace

bool DecodeJpeg2000(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  failure.clear();
  const bool jp2 = size >= 4 && data[0] == 0x00 && data[3] == 0x0C;
  Stream source{data, size, 0};
  opj_stream_t* stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
  opj_stream_set_user_data(stream, &source, nullptr);
  opj_stream_set_user_data_length(stream, size);
  opj_stream_set_read_function(stream, Read);
  opj_stream_set_skip_function(stream, Skip);
  opj_stream_set_seek_function(stream, Seek);
  opj_codec_t* codec = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  opj_set_error_handler(codec, OnError, &failure);
  opj_set_warning_handler(codec, Quiet, nullptr);
  opj_set_info_handler(codec, Quiet, nullptr);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  opj_image_t* image = nullptr;
  auto done = [&](bool ok, const char* why) {
    if (!ok && failure.empty()) failure = std::string("OpenJPEG: ") + why;
    if (image) opj_image_destroy(image);
    opj_destroy_codec(codec);
    opj_stream_destroy(stream);
    return ok;
  };
  if (!opj_setup_decoder(codec, &params)) return done(false, "cannot set up the decoder");
  if (!opj_read_header(stream, codec, &image)) return done(false, "cannot read the header");
  const int64_t width = static_cast<int64_t>(image->x1) - image->x0, height = static_cast<int64_t>(image->y1) - image->y0;
  if (!CheckSize(height, width, failure)) return done(false, "");
  if (!opj_decode(codec, stream, image) || !opj_end_decompress(codec, stream))
    return done(false, "cannot decode the codestream");
  if (image->numcomps == 0) return done(false, "the image has no components");
  for (OPJ_UINT32 k = 0; k < image->numcomps; ++k) {
    const opj_image_comp_t& c = image->comps[k];
    if (!c.data || c.w == 0 || c.h == 0 || c.prec < 1 || c.prec > 31) return done(false, "a component has no samples");
  }
  const bool gray = image->numcomps < 3;
  out.height = height;
  out.width = width;
  out.channels = gray ? 1 : 3;
  out.pixels.resize(static_cast<size_t>(height * width * out.channels));
  uint8_t* dst = out.pixels.data();
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      if (gray) {
        *dst++ = Sample(image->comps[0], x, y);
        continue;
      }
      const uint8_t a = Sample(image->comps[0], x, y), b = Sample(image->comps[1], x, y),
                    c = Sample(image->comps[2], x, y);
      if (image->color_space == OPJ_CLRSPC_SYCC) {
        const double cb = b - 128.0, cr = c - 128.0;
        *dst++ = Clamp8(a + 1.402 * cr);
        *dst++ = Clamp8(a - 0.344136 * cb - 0.714136 * cr);
        *dst++ = Clamp8(a + 1.772 * cb);
      } else {
        *dst++ = a;
        *dst++ = b;
        *dst++ = c;
      }
    }
  return done(true, "");
}

}  // namespace tessera::runtime::image
