// JPEG through libjpeg-turbo (runtime/image_decode.h): the library's defaults (islow DCT, fancy
// upsampling: the spec's linear chroma upsampling), RGB or gray output; CMYK / YCCK become RGB.
// libjpeg reports errors by calling error_exit, which must not return: it longjmps back here
// (the library's documented way; no C++ object is live between setjmp and the jump). A stream
// that ends before its image does is only a warning to libjpeg (it pads with gray); Pillow, the
// ONNX reference's decoder, refuses it ("image file is truncated"), and so does this: the
// premature-end warning jumps back as an error does, before the rest of the image is decoded.
#include <csetjmp>
#include <cstdio>

#include <jpeglib.h>
// jerror.h after jpeglib.h (it uses its types): the message codes.
#include <jerror.h>

#include "codecs.h"

namespace tessera::runtime::image {

namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings and trace messages are not printed; a premature end of the data is an error.
void OnMessage(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) OnError(cinfo);
}

// One CMYK sample set to RGB: Adobe writes the samples inverted (as Pillow reads them).
void CmykToRgb(const uint8_t* cmyk, bool inverted, uint8_t* rgb) {
  const unsigned k = inverted ? cmyk[3] : 255u - cmyk[3];
  for (int c = 0; c < 3; ++c) {
    const unsigned v = inverted ? cmyk[c] : 255u - cmyk[c];
    rgb[c] = static_cast<uint8_t>((v * k + 127u) / 255u);
  }
}

}  // namespace

bool DecodeJpeg(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = OnError;
  err.pub.emit_message = OnMessage;
  err.message[0] = '\0';
  std::vector<uint8_t> row;  // declared before setjmp: the jump skips no constructor
  if (setjmp(err.jump)) {
    failure = std::string("libjpeg: ") + err.message;
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  const bool gray = cinfo.jpeg_color_space == JCS_GRAYSCALE;
  cinfo.out_color_space = cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_RGB;
  if (!CheckSize(cinfo.image_height, cinfo.image_width, failure)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_start_decompress(&cinfo);
  out.height = cinfo.output_height;
  out.width = cinfo.output_width;
  out.channels = gray ? 1 : 3;
  out.pixels.resize(static_cast<size_t>(out.height * out.width * out.channels));
  row.resize(static_cast<size_t>(out.width) * static_cast<size_t>(cinfo.output_components));
  while (cinfo.output_scanline < cinfo.output_height) {
    const size_t y = cinfo.output_scanline;
    uint8_t* dst = out.pixels.data() + y * static_cast<size_t>(out.width * out.channels);
    JSAMPROW rows[1] = {cmyk ? row.data() : dst};
    jpeg_read_scanlines(&cinfo, rows, 1);
    if (cmyk)
      for (int64_t x = 0; x < out.width; ++x)
        CmykToRgb(row.data() + 4 * x, cinfo.saw_Adobe_marker, dst + 3 * x);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

}  // namespace tessera::runtime::image
