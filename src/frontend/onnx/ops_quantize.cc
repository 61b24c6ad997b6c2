// ONNX QuantizeLinear / DequantizeLinear (10/13/19/21/23/24/25) and DynamicQuantizeLinear-11,
// the reference semantics composed from graph ops (fast int8 kernels are later work):
//
//   DequantizeLinear: y = (T(x) - T(zero_point)) * T(scale), T = output_dtype, else scale's
//                     type (a float8e8m0 scale needs output_dtype)
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point) for an integer
//                     result (into the zero point's type, else output_dtype, else uint8);
//                     y = cast(x / scale + zero_point) for a float8 / float4 result, with the
//                     `saturate` attribute (runtime/float_formats.h). The division runs in
//                     `precision` when given, else in the scale's type.
// scale / zero_point are a scalar (per tensor), 1-D along `axis` (per axis, default 1), or of
// x's rank with x.shape[axis] / block_size on the axis (blocked, opset 21+: each value covers
// block_size consecutive elements). Quantized types: int2 / int4 / int8 / int16 / int32, their
// unsigned forms, float8 e4m3fn / e4m3fnuz / e5m2 / e5m2fnuz and float4e2m1.
//
//   DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255,
//   zero_point = saturate(round(-min(0, min x) / scale)) as uint8, y = QuantizeLinear(x, ...).
#include <cmath>

#include "context.h"
#include "tensor_convert.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

Expr Cast(NodeContext& ctx, Expr x, DataType dt) {
  return ctx.Call("cast", {std::move(x)}, Attrs{{"dtype", dt.str()}});
}

// Checks a quantized type: an integer of at most 32 bits or a float8 / float4 format.
void CheckQuantizedType(NodeContext& ctx, DataType dt) {
  if (!(((dt.is_int() || dt.is_uint()) && dt.bits() <= 32) || dt.is_minifloat()) ||
      dt.code() == DataType::kFloat8E8M0FNU) {
    ctx.Unsupported("quantized type " + dt.str() +
                    " (int2/4/8/16/32, uint2/4/8/16, float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz and float4e2m1 are supported)");
  }
}

// The [lo, hi] range of an integer type, as doubles.
std::pair<double, double> IntRange(NodeContext& ctx, DataType dt) {
  CheckQuantizedType(ctx, dt);
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

// A type given by an ONNX element-type attribute (0: absent).
DataType AttrDtype(NodeContext& ctx, const char* name, DataType dflt) {
  int64_t code = ctx.AttrInt(name, 0);
  return code == 0 ? dflt : DataTypeFromONNX(static_cast<int>(code), ctx.Where() + " attribute '" + name + "'");
}

void ConvertDequantize(NodeContext& ctx) {
  const DataType xt = ctx.InputType(0).dtype, st = ctx.InputType(1).dtype;
  CheckQuantizedType(ctx, xt);
  if (!st.is_floating()) ctx.Fail("x_scale must be a float tensor, got " + st.str());
  const DataType ft = AttrDtype(ctx, "output_dtype", st);
  if (!(ft.is_float() || ft.is_bfloat16()))
    ctx.Fail("the output type must be float32, float16 or bfloat16 (set output_dtype for a " + st.str() +
             " scale), got " + ft.str());
  Expr x = Cast(ctx, ctx.Input(0), ft);
  if (ctx.HasInput(2)) {
    if (ctx.InputType(2).dtype != xt) ctx.Fail("x_zero_point must have x's type " + xt.str());
    x = ctx.Call("subtract", {x, AlignToX(ctx, 2, Cast(ctx, ctx.Input(2), ft))});
  }
  Expr scale = st == ft ? ctx.Input(1) : Cast(ctx, ctx.Input(1), ft);
  ctx.SetOutput(0, ctx.Call("multiply", {x, AlignToX(ctx, 1, scale)}));
}

// saturate(round(x / scale) + zero_point) into `out`; x and scale float, zero_point (optional,
// of type out) aligned to x. A float8 / float4 `out` is a cast with Cast's `saturate`.
Expr Quantize(NodeContext& ctx, Expr x, Expr scale, Expr zero_point, DataType ft, DataType out) {
  if (out.is_minifloat()) {
    CheckQuantizedType(ctx, out);
    Expr q = ctx.Call("divide", {x, scale});
    if (zero_point) q = ctx.Call("add", {q, Cast(ctx, zero_point, ft)});
    return ctx.Call("cast", {q}, Attrs{{"dtype", out.str()}, {"saturate", ctx.AttrInt("saturate", 1)}});
  }
  auto [lo, hi] = IntRange(ctx, out);
  Expr q = ctx.Call("round", {ctx.Call("divide", {x, scale})});
  if (zero_point) q = ctx.Call("add", {q, Cast(ctx, zero_point, ft)});
  q = ctx.Call("clip", {q}, Attrs{{"a_min", lo}, {"a_max", hi}});
  return Cast(ctx, q, out);
}

void ConvertQuantize(NodeContext& ctx) {
  const DataType xt = ctx.InputType(0).dtype, st = ctx.InputType(1).dtype;
  if (!xt.is_floating() && !xt.is_int()) ctx.Fail("x must be a float or int32 tensor, got " + xt.str());
  DataType out = AttrDtype(ctx, "output_dtype", DataType::UInt(8));
  if (ctx.HasInput(2)) {
    if (ctx.HasAttr("output_dtype") && ctx.InputType(2).dtype != out)
      ctx.Fail("output_dtype " + out.str() + " differs from y_zero_point's type " + ctx.InputType(2).dtype.str());
    out = ctx.InputType(2).dtype;
  }
  // The division's type: `precision`, else the scale's (float32 for an int32 x and scale).
  DataType ft = AttrDtype(ctx, "precision", st.is_floating() ? st : DataType::Float(32));
  if (!ft.is_floating()) ctx.Fail("precision must be a float type, got " + ft.str());
  Expr x = xt == ft ? ctx.Input(0) : Cast(ctx, ctx.Input(0), ft);
  Expr scale = AlignToX(ctx, 1, st == ft ? ctx.Input(1) : Cast(ctx, ctx.Input(1), ft));
  Expr zp = ctx.HasInput(2) ? AlignToX(ctx, 2, ctx.Input(2)) : nullptr;
  ctx.SetOutput(0, Quantize(ctx, x, scale, zp, ft, out));
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
