// ONNX ImageDecoder-20 (https://onnx.ai/onnx/operators/onnx__ImageDecoder.html): a 1-D uint8 stream
// of an encoded image (BMP, JPEG, JPEG 2000, TIFF, PNG, WebP, PNM) -> uint8 [height, width, c],
// c = 3 for pixel_format RGB (the default) and BGR, 1 for Grayscale. The size is the stream's: the
// VM decodes at run time (vm.image_decode, the runtime's builtin image_decode, whose result binds
// the two symbolic extents). A constant stream (an initializer) is decoded here, at import, with
// the same decoder (runtime/image_decode.h), so the output is a constant of static shape. An
// undecodable stream gives a (0, 0, c) image, as the spec defines.
#include <cstring>

#include "context.h"
#include "tessera/runtime/image_decode.h"

namespace tessera::frontend::onnx_import {

namespace {

void ConvertImageDecoder(NodeContext& ctx) {
  const std::string format = ctx.AttrString("pixel_format", "RGB");
  runtime::PixelFormat pixel_format;
  try {
    pixel_format = runtime::ParsePixelFormat(format);
  } catch (const UserError& e) {
    ctx.Fail(e.what());
  }
  const graph::TensorTypeNode& encoded = ctx.InputType(0);
  if (encoded.dtype != DataType::UInt(8) || encoded.ndim() != 1)
    ctx.Fail("the encoded stream must be a 1-D uint8 tensor, got " + encoded.dtype.str() + " " +
             graph::ShapeStr(encoded.shape));
  runtime::NDArray constant = ctx.InputConst(0);
  if (constant.defined()) {
    const runtime::DecodedImage image =
        runtime::DecodeImageDetailed(static_cast<const uint8_t*>(constant.raw_data()),
                                     static_cast<size_t>(constant.NumElements()), pixel_format);
    runtime::NDArray out = runtime::NDArray::Empty({image.height, image.width, image.channels}, DataType::UInt(8));
    if (!image.pixels.empty()) std::memcpy(out.raw_data(), image.pixels.data(), image.pixels.size());
    return ctx.SetOutputConst(0, out);
  }
  ctx.SetOutput(0, ctx.Call("vm.image_decode", {ctx.Input(0)},
                            graph::Attrs{{"pixel_format", format}, {"symbols", ctx.OutputSymbols(2)}}));
}

}  // namespace

void RegisterImageDecoderConverters(ConverterTable& t) { t["ImageDecoder"] = ConvertImageDecoder; }

}  // namespace tessera::frontend::onnx_import
