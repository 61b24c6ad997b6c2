// ONNX NegativeLogLikelihoodLoss-12/13/22 and SoftmaxCrossEntropyLoss-12/13, as graph ops (the
// spec's own function bodies, written with Tessera's ops):
//
//   input [N, C, d1..dk] (log-probabilities; SCE: scores, log_softmax over C first), target
//   [N, d1..dk] int, weight [C] optional. With t' = (t == ignore_index ? 0 : t):
//     w[n, d]    = (t == ignore_index) ? 0 : (weight ? weight[t'] : 1)
//     loss[n, d] = -input[n, t'[n, d], d] * w[n, d]
//   reduction "none": loss; "sum": sum(loss); "mean" (default): sum(loss) / sum(w)
//   (0 / 0 = NaN when every target is ignored, as the reference implementation).
// SCE's optional second output is the log_softmax of the scores.
#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

Expr ReduceAll(NodeContext& ctx, Expr x, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  return ctx.Call("sum", {x}, Attrs{{"axis", axes}, {"keepdims", int64_t{0}}});
}

void EmitNLL(NodeContext& ctx, Expr log_prob, const graph::TensorTypeNode& input_type) {
  const graph::TensorTypeNode& tt = ctx.InputType(1);
  const int64_t rank = input_type.ndim();
  if (rank < 2) ctx.Fail("input must be [N, C, d1..dk] (rank >= 2), got rank " + std::to_string(rank));
  if (tt.ndim() != rank - 1)
    ctx.Fail("target must have rank " + std::to_string(rank - 1) + " [N, d1..dk], got rank " +
             std::to_string(tt.ndim()));
  if (!tt.dtype.is_int()) ctx.Fail("target must be an int32 / int64 tensor, got " + tt.dtype.str());
  const std::string reduction = ctx.AttrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.Fail("unknown reduction '" + reduction + "' (none, sum, mean)");
  const DataType dt = input_type.dtype;

  Expr target = ctx.Input(1), valid;
  if (ctx.HasAttr("ignore_index")) {
    valid = ctx.Call("not_equal", {target, ctx.ScalarConst(static_cast<double>(ctx.AttrInt("ignore_index")), tt.dtype)});
    target = ctx.Call("where", {valid, target, ctx.ScalarConst(0, tt.dtype)});
  }
  Expr picked = ctx.Call("gather_elements",
                         {log_prob, ctx.Call("expand_dims", {target}, Attrs{{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}})},
                         Attrs{{"axis", int64_t{1}}});
  picked = ctx.Call("squeeze", {picked}, Attrs{{"axis", std::vector<int64_t>{1}}});
  Expr loss = ctx.Call("negative", {picked});
  Expr w;  // per-element weight; undefined means 1 everywhere
  if (ctx.HasInput(2)) {
    if (ctx.InputType(2).ndim() != 1) ctx.Fail("weight must be 1-D [C]");
    w = ctx.Call("take", {ctx.Input(2), target}, Attrs{{"axis", int64_t{0}}});
  }
  if (valid) {
    Expr zero = ctx.ScalarConst(0, dt);
    w = ctx.Call("where", {valid, w ? w : ctx.ScalarConst(1, dt), zero});
  }
  if (w) loss = ctx.Call("multiply", {loss, w});
  if (reduction == "none") return ctx.SetOutput(0, loss);
  Expr total = ReduceAll(ctx, loss, rank - 1);
  if (reduction == "sum") return ctx.SetOutput(0, total);
  Expr count;
  if (w) {  // [N, d1..dk], as the target
    count = ReduceAll(ctx, w, rank - 1);
  } else {
    int64_t n = 1;
    for (int64_t d : ctx.InputShape(1)) n *= d;
    count = ctx.ScalarConst(static_cast<double>(n), dt);
  }
  ctx.SetOutput(0, ctx.Call("divide", {total, count}));
}

void ConvertNLL(NodeContext& ctx) {
  const graph::TensorTypeNode& x = ctx.InputType(0);
  if (!x.dtype.is_floating()) ctx.Fail("input must be a float tensor, got " + x.dtype.str());
  EmitNLL(ctx, ctx.Input(0), x);
}

void ConvertSCE(NodeContext& ctx) {
  const graph::TensorTypeNode& x = ctx.InputType(0);
  if (!x.dtype.is_floating()) ctx.Fail("scores must be a float tensor, got " + x.dtype.str());
  Expr log_prob = ctx.Call("nn.log_softmax", {ctx.Input(0)}, Attrs{{"axis", int64_t{1}}});
  ctx.CheckMaxOutputs(2, "SoftmaxCrossEntropyLoss has two outputs (loss, log_prob)");
  if (ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) ctx.SetOutput(1, log_prob);
  EmitNLL(ctx, log_prob, x);
}

}  // namespace

void RegisterLossConverters(ConverterTable& t) {
  t["NegativeLogLikelihoodLoss"] = ConvertNLL;
  t["SoftmaxCrossEntropyLoss"] = ConvertSCE;
}

}  // namespace tessera::frontend::onnx_import
