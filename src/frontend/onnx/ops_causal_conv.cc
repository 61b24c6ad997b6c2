// ONNX CausalConvWithState-27 (Mamba / Gated DeltaNet's stateful causal depthwise 1-D conv),
// composed: Spec: onnx.defs.get_schema("CausalConvWithState").doc, reference
// onnx/reference/ops/op_causal_conv_with_state.py.
//
//   input [B, C, L], weight [C, 1, k], bias [C] (optional), past_state [B, C, k - 1] (optional,
//   default zeros); padded = concat(past_state, input) along L;
//   output[b, c, t] = act(bias[c] + sum_j weight[c, 0, j] * padded[b, c, t + j]),
//   act = x * sigmoid(x) for activation silu / swish, identity for none;
//   present_state = the last k - 1 positions of padded.
// The convolution is nn.conv2d with groups = C over [B, C, 1, L + k - 1].
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertCausalConvWithState(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0), ws = ctx.InputShape(1);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("input must be a float tensor, got " + dt.str());
  if (xs.size() != 3) ctx.Fail("input must be [batch, channels, length], got rank " + std::to_string(xs.size()));
  const int64_t b = xs[0], c = xs[1], l = xs[2];
  if (ws.size() != 3 || ws[0] != c || ws[1] != 1 || ws[2] < 1)
    ctx.Fail("weight must be [channels, 1, k] with channels = " + std::to_string(c));
  const int64_t k = ws[2];
  const std::string act = ctx.AttrString("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") ctx.Fail("unknown activation '" + act + "' (none, silu, swish)");
  ctx.CheckMaxOutputs(2, "CausalConvWithState has two outputs (output, present_state)");
  const bool want_state = ctx.node().output_size() > 1 && !ctx.node().output(1).empty();
  Expr past;
  if (ctx.HasInput(3)) {
    if (ctx.InputShape(3) != std::vector<int64_t>{b, c, k - 1})
      ctx.Fail("past_state must be [batch, channels, k - 1] = [" + std::to_string(b) + ", " + std::to_string(c) + ", " +
               std::to_string(k - 1) + "]");
    past = ctx.Input(3);
  } else if (k > 1) {
    past = ctx.Call("broadcast_to", {ctx.ScalarConst(0, dt)}, Attrs{{"shape", std::vector<int64_t>{b, c, k - 1}}});
  }
  Expr padded = k > 1 ? Concat(ctx, {past, ctx.Input(0)}, 2) : ctx.Input(0);  // [B, C, L + k - 1]
  Attrs conv{{"strides", std::vector<int64_t>{1, 1}},
             {"padding", std::vector<int64_t>{0, 0, 0, 0}},
             {"dilation", std::vector<int64_t>{1, 1}},
             {"groups", c},
             {"data_layout", std::string("NCHW")},
             {"kernel_layout", std::string("OIHW")}};
  Expr y = ctx.Call("nn.conv2d", {Reshape(ctx, padded, {b, c, 1, l + k - 1}), Reshape(ctx, ctx.Input(1), {c, 1, 1, k})}, conv);
  y = Reshape(ctx, y, {b, c, l});
  if (ctx.HasInput(2)) {
    if (ctx.InputShape(2) != std::vector<int64_t>{c}) ctx.Fail("bias must be [channels]");
    y = ctx.Call("nn.bias_add", {y, ctx.Input(2)}, Attrs{{"axis", int64_t{1}}});
  }
  if (act != "none") y = ctx.Call("multiply", {y, ctx.Call("sigmoid", {y})});
  ctx.SetOutput(0, y);
  if (!want_state) return;
  if (k == 1) return ctx.SetOutputConst(1, runtime::NDArray::Empty({b, c, 0}, dt));  // no state to carry
  ctx.SetOutput(1, SliceAxis(ctx, padded, 2, l, l + k - 1));
}

}  // namespace

void RegisterCausalConvConverters(ConverterTable& t) { t["CausalConvWithState"] = ConvertCausalConvWithState; }

}  // namespace tessera::frontend::onnx_import
