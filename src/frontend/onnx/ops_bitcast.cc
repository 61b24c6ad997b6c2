// ONNX BitCast-26: reinterprets the bits of each element as type `to` of the same width
// (shape unchanged). Spec: onnx.defs.get_schema("BitCast").doc.
//   - a value known at import folds (the bytes copied into an array of type `to`);
//   - between integer types of one width (and bool <-> 8-bit integers) it is a `cast`, which
//     keeps the bits (same-width integer conversion wraps modulo 2^bits);
//   - to or from a float type (float16 / bfloat16 / float8 included) it is the graph op
//     `reinterpret` (ir::reinterpret, an LLVM bitcast).
#include "context.h"
#include "tensor_convert.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;

namespace {

void ConvertBitCast(NodeContext& ctx) {
  const DataType from = ctx.InputType(0).dtype;
  const DataType to = DataTypeFromONNX(static_cast<int>(ctx.AttrInt("to")), ctx.Where());
  const int from_bits = from.is_bool() ? 8 : from.bits(), to_bits = to.is_bool() ? 8 : to.bits();
  if (from_bits != to_bits)
    ctx.Fail("BitCast needs types of one width; " + from.str() + " is " + std::to_string(from_bits) + " bits and " +
             to.str() + " is " + std::to_string(to_bits));
  if (runtime::NDArray c = ctx.InputConst(0); c.defined()) {
    runtime::NDArray out = runtime::NDArray::Empty(c.shape(), to);
    out.CopyFromBytes(c.raw_data(), c.NBytes());
    return ctx.SetOutputConst(0, out);
  }
  if (from == to) return ctx.SetOutput(0, ctx.Input(0));
  auto integral = [](DataType t) { return t.is_int() || t.is_uint() || t.is_bool(); };
  if (!integral(from) || !integral(to))
    return ctx.SetOutput(0, ctx.Call("reinterpret", {ctx.Input(0)}, Attrs{{"dtype", to.str()}}));
  ctx.SetOutput(0, ctx.Call("cast", {ctx.Input(0)}, Attrs{{"dtype", to.str()}}));
}

}  // namespace

void RegisterBitCastConverters(ConverterTable& t) { t["BitCast"] = ConvertBitCast; }

}  // namespace tessera::frontend::onnx_import
