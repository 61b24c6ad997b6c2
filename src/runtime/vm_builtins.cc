// The VM's builtins (runtime/vm_builtins.h): one table, no static initializers.
#include "tessera/runtime/vm_builtins.h"

#include <algorithm>
#include <cstring>

#include "tessera/runtime/image_decode.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

namespace {

NDArray ImageDecode(const std::vector<NDArray>& args, const std::map<std::string, std::string>& attrs,
                    const BuiltinAllocator& alloc) {
  const NDArray& encoded = args[0];
  TESSERA_CHECK(encoded.dtype() == DataType::UInt(8) && encoded.ndim() == 1, "image_decode takes the encoded stream "
                "as a 1-D uint8 tensor, got ", encoded.dtype().str(), " ", ShapeToString(encoded.shape()));
  const PixelFormat format = ParsePixelFormat(attrs.at("pixel_format"));
  const DecodedImage image =
      DecodeImageDetailed(static_cast<const uint8_t*>(encoded.raw_data()), static_cast<size_t>(encoded.NumElements()),
                          format);
  NDArray out = alloc({image.height, image.width, image.channels}, DataType::UInt(8));
  if (!image.pixels.empty()) std::memcpy(out.raw_data(), image.pixels.data(), image.pixels.size());
  return out;
}

const std::vector<VMBuiltin>& Table() {
  static const std::vector<VMBuiltin> table = {
      {"image_decode", 1, {"pixel_format"},
       [](const std::map<std::string, std::string>& attrs) { ParsePixelFormat(attrs.at("pixel_format")); },
       ImageDecode},
  };
  return table;
}

}  // namespace

const VMBuiltin* FindVMBuiltin(const std::string& name) {
  for (const VMBuiltin& b : Table())
    if (b.name == name) return &b;
  return nullptr;
}

std::vector<std::string> VMBuiltinNames() {
  std::vector<std::string> names;
  for (const VMBuiltin& b : Table()) names.push_back(b.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tessera::runtime
