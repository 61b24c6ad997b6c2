// The library-backed codecs in a runtime built without the image libraries (CMake
// TESSERA_IMAGE_CODECS=OFF, or AUTO without them, as the cross-compiled runtime-only build): each
// stream is undecodable and says so (runtime/image_decode.h). PNM needs no library (pnm.cc).
#include "codecs.h"

namespace tessera::runtime::image {

namespace {

bool Unavailable(const char* library, const char* package, std::string& failure) {
  failure = std::string("this runtime was built without ") + library + " (Debian " + package +
            "; CMake TESSERA_IMAGE_CODECS)";
  return false;
}

}  // namespace

bool DecodeJpeg(const uint8_t*, size_t, RawImage&, std::string& f) { return Unavailable("libjpeg", "libjpeg62-turbo-dev", f); }
bool DecodePng(const uint8_t*, size_t, RawImage&, std::string& f) { return Unavailable("libpng", "libpng-dev", f); }
bool DecodeTiff(const uint8_t*, size_t, RawImage&, std::string& f) { return Unavailable("libtiff", "libtiff-dev", f); }
bool DecodeWebp(const uint8_t*, size_t, RawImage&, std::string& f) { return Unavailable("libwebp", "libwebp-dev", f); }
bool DecodeJpeg2000(const uint8_t*, size_t, RawImage&, std::string& f) {
  return Unavailable("OpenJPEG", "libopenjp2-7-dev", f);
}
bool DecodeBmp(const uint8_t*, size_t, RawImage&, std::string& f) { return Unavailable("stb_image", "libstb-dev", f); }

}  // namespace tessera::runtime::image
