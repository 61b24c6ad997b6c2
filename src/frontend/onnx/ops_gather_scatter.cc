// ONNX GatherND-11/12/13, ScatterElements-11/13/16/18 (and the deprecated Scatter-9/11, the same
// op without reductions) and ScatterND-11/13/16/18 -> gather_nd / scatter_elements /
// scatter_nd (graph/op/indexing.cc, topi/gather_scatter.h).
#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;

namespace {

std::string Reduction(NodeContext& ctx) {
  std::string r = ctx.AttrString("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    ctx.Fail("unknown reduction '" + r + "' (none, add, mul, max, min)");
  return r;
}

void ConvertGatherND(NodeContext& ctx) {
  ctx.SetOutput(0, ctx.Call("gather_nd", {ctx.Input(0), ctx.Input(1)},
                            Attrs{{"batch_dims", ctx.AttrInt("batch_dims", 0)}}));
}

void ConvertScatterElements(NodeContext& ctx) {
  Attrs attrs{{"axis", ctx.AttrInt("axis", 0)}, {"reduction", Reduction(ctx)}};
  ctx.SetOutput(0, ctx.Call("scatter_elements", {ctx.Input(0), ctx.Input(1), ctx.Input(2)}, attrs));
}

void ConvertScatterND(NodeContext& ctx) {
  ctx.SetOutput(0, ctx.Call("scatter_nd", {ctx.Input(0), ctx.Input(1), ctx.Input(2)},
                            Attrs{{"reduction", Reduction(ctx)}}));
}

}  // namespace

void RegisterGatherScatterConverters(ConverterTable& t) {
  t["GatherND"] = ConvertGatherND;
  t["ScatterElements"] = ConvertScatterElements;
  t["Scatter"] = ConvertScatterElements;
  t["ScatterND"] = ConvertScatterND;
}

}  // namespace tessera::frontend::onnx_import
