// ONNX GatherND-11/12/13, ScatterElements-11/13/16/18 (and the deprecated Scatter-9/11, the same
// op without reductions) and ScatterND-11/13/16/18 -> gather_nd / scatter_elements /
// scatter_nd (graph/op/indexing.cc, topi/gather_scatter.h); ReverseSequence-10 as a
// gather_elements.
#include "const_eval.h"
#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

std::string Reduction(NodeContext& ctx) {
  std::string r = ctx.AttrString("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    ctx.Fail("unknown reduction '" + r + "' (none, add, mul, max, min)");
  return r;
}

void ConvertGatherND(NodeContext& ctx) {
  ctx.SetOutput(0, ctx.Call("gather_nd", {ctx.Input(0), ctx.Input(1)},
                            Attrs{{"batch_dims", ctx.AttrInt("batch_dims", 0)}, {"source", ctx.Label()}}));
}

void ConvertScatterElements(NodeContext& ctx) {
  Attrs attrs{{"axis", ctx.AttrInt("axis", 0)}, {"reduction", Reduction(ctx)}, {"source", ctx.Label()}};
  ctx.SetOutput(0, ctx.Call("scatter_elements", {ctx.Input(0), ctx.Input(1), ctx.Input(2)}, attrs));
}

void ConvertScatterND(NodeContext& ctx) {
  ctx.SetOutput(0, ctx.Call("scatter_nd", {ctx.Input(0), ctx.Input(1), ctx.Input(2)},
                            Attrs{{"reduction", Reduction(ctx)}, {"source", ctx.Label()}}));
}

// ReverseSequence-10: x [.., T, .., B, ..] (time_axis, batch_axis in {0, 1}), sequence_lens [B]
// (run-time values): out[t, b] = x[lens[b] - 1 - t, b] for t < lens[b], else x[t, b]; a
// gather_elements along the time axis with indices computed from an arange over T.
void ConvertReverseSequence(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  if (xs.size() < 2) ctx.Fail("input must have rank >= 2, got " + std::to_string(xs.size()));
  const int64_t time = ctx.AttrInt("time_axis", 0), batch = ctx.AttrInt("batch_axis", 1);
  if (!((time == 0 && batch == 1) || (time == 1 && batch == 0)))
    ctx.Fail("time_axis and batch_axis must be 0 and 1 in some order, got " + std::to_string(time) + " and " +
             std::to_string(batch));
  const graph::TensorTypeNode& lt = ctx.InputType(1);
  if (lt.ndim() != 1 || !lt.shape[0].is_static() || lt.shape[0].value() != xs[batch] || !lt.dtype.is_int())
    ctx.Fail("sequence_lens must be an int64 tensor [" + std::to_string(xs[batch]) + "] (the batch size)");
  const DataType i64 = DataType::Int(64);
  const int64_t t_len = xs[time];
  // t along the time axis and lens along the batch axis, both broadcast to [T, B] or [B, T].
  std::vector<int64_t> t_shape(xs.size(), 1), l_shape(xs.size(), 1);
  t_shape[time] = t_len;
  l_shape[batch] = xs[batch];
  std::vector<int64_t> steps(t_len);
  for (int64_t i = 0; i < t_len; ++i) steps[i] = i;
  Expr t = graph::ConstantNode::make(FromInts(steps, t_shape, i64));
  Expr lens = ctx.Call("reshape", {ctx.Call("cast", {ctx.Input(1)}, Attrs{{"dtype", i64.str()}})},
                       Attrs{{"newshape", l_shape}});
  Expr reversed = ctx.Call("subtract", {ctx.Call("subtract", {lens, ctx.ScalarConst(1, i64)}), t});
  Expr idx = ctx.Call("where", {ctx.Call("less", {t, lens}), reversed, t});
  idx = ctx.Call("broadcast_to", {idx}, Attrs{{"shape", xs}});
  ctx.SetOutput(0, ctx.Call("gather_elements", {ctx.Input(0), idx}, Attrs{{"axis", time}}));
}

}  // namespace

void RegisterGatherScatterConverters(ConverterTable& t) {
  t["GatherND"] = ConvertGatherND;
  t["ScatterElements"] = ConvertScatterElements;
  t["Scatter"] = ConvertScatterElements;
  t["ScatterND"] = ConvertScatterND;
  t["ReverseSequence"] = ConvertReverseSequence;
}

}  // namespace tessera::frontend::onnx_import
