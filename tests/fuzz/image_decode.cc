// Fuzz target image_decode: ImageDecoder's decoders (runtime::DecodeImageDetailed: the format
// detection, libjpeg-turbo, libpng, libtiff, libwebp, OpenJPEG and stb_image through Tessera's
// wrappers, and the PNM reader) in every pixel format. What they return must be consistent: an
// image holds height x width x channels samples; an empty one says why.
#include "fuzz_target.h"
#include "tessera/runtime/image_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::runtime;
  for (PixelFormat format : {PixelFormat::kRGB, PixelFormat::kGrayscale}) {
    const DecodedImage image = DecodeImageDetailed(data, size, format);
    const bool empty = image.height == 0 && image.width == 0;
    if (image.channels != ChannelsOf(format) ||
        image.pixels.size() != static_cast<size_t>(image.height * image.width * image.channels) ||
        empty != !image.failure.empty() || (empty && !image.pixels.empty()))
      TESSERA_THROW(tessera::InternalError, "DecodeImageDetailed returned an inconsistent image");
  }
  return 0;
}
