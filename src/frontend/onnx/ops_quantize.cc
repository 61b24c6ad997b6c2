// ONNX QuantizeLinear / DequantizeLinear (10/13/19/21/23/25) and DynamicQuantizeLinear-11, the
// reference semantics composed from graph ops (fast int8 kernels are later work):
//
//   DequantizeLinear: y = (float(x) - float(zero_point)) * scale
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)   (into the
//                     zero point's type, else output_dtype, else uint8)
// scale / zero_point are a scalar (per tensor), 1-D along `axis` (per axis, default 1), or of
// x's rank with x.shape[axis] / block_size on the axis (blocked, opset 21+: each value covers
// block_size consecutive elements). Integer types int8 / uint8 / int16 / uint16 / int32 (the
// 4-bit, 2-bit and float8 types are not supported by the runtime yet).
//
//   DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255,
//   zero_point = saturate(round(-min(0, min x) / scale)) as uint8, y = QuantizeLinear(x, ...).
#include <cmath>

#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

Expr Cast(NodeContext& ctx, Expr x, DataType dt) {
  return ctx.Call("cast", {std::move(x)}, Attrs{{"dtype", dt.str()}});
}

// The [lo, hi] range of an integer type, as doubles.
std::pair<double, double> IntRange(NodeContext& ctx, DataType dt) {
  if (!(dt.is_int() || dt.is_uint()) || dt.bits() > 32)
    ctx.Unsupported("quantized type " + dt.str() + " (int8, uint8, int16, uint16 and int32 are supported)");
  if (dt.is_uint()) return {0.0, std::ldexp(1.0, dt.bits()) - 1};
  return {-std::ldexp(1.0, dt.bits() - 1), std::ldexp(1.0, dt.bits() - 1) - 1};
}

// Broadcasts a scale or zero point (input i) against x (input 0) for the per-tensor, per-axis
// and blocked forms.
Expr AlignToX(NodeContext& ctx, int i, Expr p) {
  const std::vector<int64_t> xs = ctx.InputShape(0), ps = ctx.InputShape(i);
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t n = 1;
  for (int64_t d : ps) n *= d;
  if (ps.empty() || (ps.size() == 1 && ps[0] == 1 && ctx.AttrInt("block_size", 0) == 0)) return p;  // per tensor
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < -rank || axis >= rank) ctx.Fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  const int64_t block = ctx.AttrInt("block_size", 0);
  if (block <= 0) {
    if (ps.size() != 1 || ps[0] != xs[axis])
      ctx.Fail("a per-axis scale / zero point must be 1-D with " + std::to_string(xs[axis]) + " values (axis " +
               std::to_string(axis) + "), got " + std::to_string(n));
    std::vector<int64_t> shape(rank, 1);
    shape[axis] = xs[axis];
    return ctx.Call("reshape", {p}, Attrs{{"newshape", shape}});
  }
  // Blocked: repeat each value block times along the axis, then crop to x's extent.
  if (static_cast<int64_t>(ps.size()) != rank || ps[axis] != (xs[axis] + block - 1) / block)
    ctx.Fail("a blocked scale / zero point must have x's rank with ceil(" + std::to_string(xs[axis]) + " / " +
             std::to_string(block) + ") values on axis " + std::to_string(axis));
  std::vector<int64_t> wide = ps;
  wide.insert(wide.begin() + axis + 1, block);
  std::vector<int64_t> merged = ps;
  merged[axis] = ps[axis] * block;
  p = ctx.Call("expand_dims", {p}, Attrs{{"axis", axis + 1}, {"num_newaxis", int64_t{1}}});
  p = ctx.Call("broadcast_to", {p}, Attrs{{"shape", wide}});
  p = ctx.Call("reshape", {p}, Attrs{{"newshape", merged}});
  if (merged[axis] != xs[axis]) {
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    after[axis] = xs[axis] - merged[axis];
    p = ctx.Call("pad", {p}, Attrs{{"pad_before", before}, {"pad_after", after}});
  }
  return p;
}

void ConvertDequantize(NodeContext& ctx) {
  const DataType xt = ctx.InputType(0).dtype, st = ctx.InputType(1).dtype;
  IntRange(ctx, xt);
  if (!st.is_float()) ctx.Fail("x_scale must be a float tensor, got " + st.str());
  Expr x = Cast(ctx, ctx.Input(0), st);
  if (ctx.HasInput(2)) {
    if (ctx.InputType(2).dtype != xt) ctx.Fail("x_zero_point must have x's type " + xt.str());
    x = ctx.Call("subtract", {x, AlignToX(ctx, 2, Cast(ctx, ctx.Input(2), st))});
  }
  ctx.SetOutput(0, ctx.Call("multiply", {x, AlignToX(ctx, 1, ctx.Input(1))}));
}

// saturate(round(x / scale) + zero_point) into `out`; x and scale float, zero_point (optional,
// of type out) aligned to x.
Expr Quantize(NodeContext& ctx, Expr x, Expr scale, Expr zero_point, DataType ft, DataType out) {
  auto [lo, hi] = IntRange(ctx, out);
  Expr q = ctx.Call("round", {ctx.Call("divide", {x, scale})});
  if (zero_point) q = ctx.Call("add", {q, Cast(ctx, zero_point, ft)});
  q = ctx.Call("clip", {q}, Attrs{{"a_min", lo}, {"a_max", hi}});
  return Cast(ctx, q, out);
}

void ConvertQuantize(NodeContext& ctx) {
  const DataType xt = ctx.InputType(0).dtype;
  if (!xt.is_float()) ctx.Fail("x must be a float tensor, got " + xt.str());
  DataType out = DataType::UInt(8);
  if (ctx.HasInput(2)) {
    out = ctx.InputType(2).dtype;
  } else if (int64_t code = ctx.AttrInt("output_dtype", 0); code != 0) {
    switch (code) {
      case 2: out = DataType::UInt(8); break;
      case 3: out = DataType::Int(8); break;
      case 4: out = DataType::UInt(16); break;
      case 5: out = DataType::Int(16); break;
      case 6: out = DataType::Int(32); break;
      default: ctx.Unsupported("output_dtype " + std::to_string(code) + " (uint8, int8, uint16, int16, int32 are supported)");
    }
  }
  Expr scale = AlignToX(ctx, 1, ctx.InputType(1).dtype == xt ? ctx.Input(1) : Cast(ctx, ctx.Input(1), xt));
  Expr zp = ctx.HasInput(2) ? AlignToX(ctx, 2, ctx.Input(2)) : nullptr;
  ctx.SetOutput(0, Quantize(ctx, ctx.Input(0), scale, zp, xt, out));
}

void ConvertDynamicQuantize(NodeContext& ctx) {
  const DataType ft = ctx.InputType(0).dtype;
  if (ft != DataType::Float(32)) ctx.Fail("x must be float32, got " + ft.str());
  Expr x = ctx.Input(0), zero = ctx.ScalarConst(0, ft);
  Attrs all{{"axis", std::vector<int64_t>{}}, {"keepdims", int64_t{0}}};
  Expr hi = ctx.Call("maximum", {ctx.Call("max", {x}, all), zero});
  Expr lo = ctx.Call("minimum", {ctx.Call("min", {x}, all), zero});
  Expr scale = ctx.Call("divide", {ctx.Call("subtract", {hi, lo}), ctx.ScalarConst(255, ft)});
  Expr zp = ctx.Call("round", {ctx.Call("divide", {ctx.Call("negative", {lo}), scale})});
  zp = Cast(ctx, ctx.Call("clip", {zp}, Attrs{{"a_min", 0.0}, {"a_max", 255.0}}), DataType::UInt(8));
  ctx.SetOutput(0, Quantize(ctx, x, scale, zp, ft, DataType::UInt(8)));
  ctx.SetOutput(1, scale);
  ctx.SetOutput(2, zp);
}

}  // namespace

void RegisterQuantizeConverters(ConverterTable& t) {
  t["DequantizeLinear"] = ConvertDequantize;
  t["QuantizeLinear"] = ConvertQuantize;
  t["DynamicQuantizeLinear"] = ConvertDynamicQuantize;
}

}  // namespace tessera::frontend::onnx_import
