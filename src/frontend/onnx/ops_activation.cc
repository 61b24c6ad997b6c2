// ONNX activations (LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, Softplus, Softsign, Mish,
// Gelu, Swish, Shrink, PRelu), LogSoftmax / Hardmax (opset < 13: flatten-to-2-D semantics;
// 13+: one axis), and the normalizations LayerNormalization, RMSNormalization,
// InstanceNormalization, GroupNormalization, MeanVarianceNormalization, LpNormalization, LRN,
// composed from reductions, pooling and broadcasting arithmetic.
#include "const_eval.h"
#include "context.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

Converter WithAlpha(const std::string& op, float dflt) {
  return [op, dflt](NodeContext& ctx) {
    ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0)}, Attrs{{"alpha", static_cast<double>(ctx.AttrFloat("alpha", dflt))}}));
  };
}

Converter Plain(const std::string& op) {
  return [op](NodeContext& ctx) { ctx.SetOutput(0, ctx.Call(op, {ctx.Input(0)})); };
}

void ConvertSelu(NodeContext& ctx) {
  Attrs attrs{{"alpha", static_cast<double>(ctx.AttrFloat("alpha", 1.67326319217681884765625f))},
              {"gamma", static_cast<double>(ctx.AttrFloat("gamma", 1.05070102214813232421875f))}};
  ctx.SetOutput(0, ctx.Call("nn.selu", {ctx.Input(0)}, attrs));
}

void ConvertGelu(NodeContext& ctx) {
  std::string approx = ctx.AttrString("approximate", "none");
  if (approx != "none" && approx != "tanh") ctx.Fail("approximate must be \"none\" or \"tanh\", got \"" + approx + "\"");
  ctx.SetOutput(0, ctx.Call("nn.gelu", {ctx.Input(0)}, Attrs{{"approximate", approx}}));
}

void ConvertShrink(NodeContext& ctx) {
  Attrs attrs{{"lambd", static_cast<double>(ctx.AttrFloat("lambd", 0.5f))},
              {"bias", static_cast<double>(ctx.AttrFloat("bias", 0.0f))}};
  ctx.SetOutput(0, ctx.Call("nn.shrink", {ctx.Input(0)}, attrs));
}

// PRelu-1/6/7/9/16: slope broadcasts unidirectionally to X (opset 7+).
// PRelu-1/6/7/9/16. Before opset 7 a 1-D slope of x.shape[1] values is per channel (axis 1,
// Caffe2's PRelu, which PyTorch's exporter relied on); from 7 the slope broadcasts
// unidirectionally (numpy rules from the right).
void ConvertPRelu(NodeContext& ctx) {
  Expr slope = ctx.Input(1);
  const auto& x = ctx.InputType(0);
  const auto& s = ctx.InputType(1);
  if (ctx.opset() < 7 && s.ndim() == 1 && x.ndim() >= 2 && s.shape[0] == x.shape[1] && x.ndim() > 2) {
    std::vector<int64_t> shape(x.ndim() - 1, 1);
    shape[0] = -1;
    slope = ctx.Call("reshape", {slope}, Attrs{{"newshape", shape}});
  }
  ctx.SetOutput(0, ctx.Call("nn.prelu", {ctx.Input(0), slope}));
}

int64_t Axis(NodeContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) ctx.Fail("axis " + std::to_string(axis) + " out of range");
  return axis < 0 ? axis + rank : axis;
}

// Applies `f` (one-axis semantics) along the softmax-style axis: opset < 13 flattens the input
// to [prod(d < axis), prod(d >= axis)] and normalizes rows.
void SoftmaxLike(NodeContext& ctx, const std::function<Expr(Expr, int64_t)>& f) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = Axis(ctx, ctx.AttrInt("axis", ctx.opset() >= 13 ? -1 : 1), rank);
  if (ctx.opset() >= 13 || axis == rank - 1) return ctx.SetOutput(0, f(ctx.Input(0), axis));
  std::vector<int64_t> shape = ctx.InputShape(0);
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= shape[d];
  Expr x = ctx.Call("reshape", {ctx.Input(0)}, Attrs{{"newshape", std::vector<int64_t>{rows, cols}}});
  ctx.SetOutput(0, ctx.Call("reshape", {f(x, 1)}, Attrs{{"newshape", shape}}));
}

void ConvertLogSoftmax(NodeContext& ctx) {
  SoftmaxLike(ctx, [&](Expr x, int64_t axis) { return ctx.Call("nn.log_softmax", {x}, Attrs{{"axis", axis}}); });
}

// Hardmax: 1 at the first maximum along axis, 0 elsewhere.
void ConvertHardmax(NodeContext& ctx) {
  DataType dt = ctx.InputType(0).dtype;
  SoftmaxLike(ctx, [&](Expr x, int64_t axis) {
    graph::Type xt = graph::InferExprType(x);
    auto shape = graph::StaticShape(xt->as<graph::TensorTypeNode>()->shape);
    if (!shape) ctx.Unsupported("Hardmax needs static shapes");
    Expr am = ctx.Call("argmax", {x}, Attrs{{"axis", axis}, {"keepdims", int64_t{1}}});
    std::vector<int64_t> iota((*shape)[axis]), iota_shape(shape->size(), 1);
    for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int64_t>(i);
    iota_shape[axis] = (*shape)[axis];
    Expr ids = graph::ConstantNode::make(MakeInts(iota, iota_shape));
    return ctx.Call("cast", {ctx.Call("equal", {ids, am})}, Attrs{{"dtype", dt.str()}});
  });
}

Expr Mean(NodeContext& ctx, Expr x, const std::vector<int64_t>& axes) {
  return ctx.Call("mean", {x}, Attrs{{"axis", axes}, {"keepdims", int64_t{1}}});
}

// (x - mean) and 1 / sqrt(var + eps) over `axes` (kept as extent-1 dims).
std::pair<Expr, Expr> Standardize(NodeContext& ctx, Expr x, const std::vector<int64_t>& axes, double eps,
                                  DataType dt, Expr* mean_out = nullptr) {
  Expr mean = Mean(ctx, x, axes);
  Expr d = ctx.Call("subtract", {x, mean});
  Expr var = Mean(ctx, ctx.Call("multiply", {d, d}), axes);
  Expr inv = ctx.Call("divide", {ctx.ScalarConst(1.0, dt),
                                 ctx.Call("sqrt", {ctx.Call("add", {var, ctx.ScalarConst(eps, dt)})})});
  if (mean_out) *mean_out = mean;
  return {d, inv};
}

std::vector<int64_t> AxesFrom(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first; a < rank; ++a) axes.push_back(a);
  return axes;
}

// LayerNormalization-17: normalizes over axes [axis, rank); Y = (X - mean) / sqrt(var + eps) *
// Scale + B; optional outputs Mean and InvStdDev (extent 1 along the normalized axes).
void ConvertLayerNorm(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = Axis(ctx, ctx.AttrInt("axis", -1), rank);
  DataType dt = ctx.InputType(0).dtype;
  double eps = ctx.AttrFloat("epsilon", 1e-5f);
  Expr mean;
  auto [d, inv] = Standardize(ctx, ctx.Input(0), AxesFrom(axis, rank), eps, dt, &mean);
  Expr y = ctx.Call("multiply", {ctx.Call("multiply", {d, inv}), ctx.Input(1)});
  if (ctx.HasInput(2)) y = ctx.Call("add", {y, ctx.Input(2)});
  ctx.SetOutput(0, y);
  ctx.SetOutput(1, mean);
  ctx.SetOutput(2, inv);
}

// RMSNormalization-23: Y = X / sqrt(mean(X^2 over [axis, rank)) + eps) * scale.
void ConvertRMSNorm(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = Axis(ctx, ctx.AttrInt("axis", -1), rank);
  DataType dt = ctx.InputType(0).dtype;
  double eps = ctx.AttrFloat("epsilon", 1e-5f);
  Expr x = ctx.Input(0);
  Expr ms = Mean(ctx, ctx.Call("multiply", {x, x}), AxesFrom(axis, rank));
  Expr rms = ctx.Call("sqrt", {ctx.Call("add", {ms, ctx.ScalarConst(eps, dt)})});
  ctx.SetOutput(0, ctx.Call("multiply", {ctx.Call("divide", {x, rms}), ctx.Input(1)}));
}

// A per-channel [C] parameter as [C, 1, ..., 1] for an NC... tensor of rank `rank`.
Expr ChannelParam(NodeContext& ctx, Expr p, int64_t c, int64_t rank) {
  std::vector<int64_t> shape(rank - 1, 1);
  shape[0] = c;
  return ctx.Call("reshape", {p}, Attrs{{"newshape", shape}});
}

// InstanceNormalization-1/6/22: per (n, c) over the spatial axes; scale and B are [C].
void ConvertInstanceNorm(NodeContext& ctx) {
  std::vector<int64_t> shape = ctx.InputShape(0);
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 3) ctx.Fail("input must have rank >= 3 (N, C, spatial...)");
  DataType dt = ctx.InputType(0).dtype;
  auto [d, inv] = Standardize(ctx, ctx.Input(0), AxesFrom(2, rank), ctx.AttrFloat("epsilon", 1e-5f), dt);
  Expr y = ctx.Call("multiply", {ctx.Call("multiply", {d, inv}), ChannelParam(ctx, ctx.Input(1), shape[1], rank)});
  ctx.SetOutput(0, ctx.Call("add", {y, ChannelParam(ctx, ctx.Input(2), shape[1], rank)}));
}

// GroupNormalization-18/21: channels split into num_groups groups, each normalized over its
// channels and the spatial axes. scale / bias are [C] (21) or [num_groups] (18).
void ConvertGroupNorm(NodeContext& ctx) {
  std::vector<int64_t> shape = ctx.InputShape(0);
  if (shape.size() < 2) ctx.Fail("input must have rank >= 2 (N, C, ...)");
  int64_t g = ctx.AttrInt("num_groups");
  int64_t n = shape[0], c = shape[1], s = 1;
  for (size_t i = 2; i < shape.size(); ++i) s *= shape[i];
  if (g <= 0 || c % g != 0) ctx.Fail("num_groups must divide the channel count " + std::to_string(c));
  DataType dt = ctx.InputType(0).dtype;
  Expr x = ctx.Call("reshape", {ctx.Input(0)}, Attrs{{"newshape", std::vector<int64_t>{n, g, c / g, s}}});
  auto [d, inv] = Standardize(ctx, x, {2, 3}, ctx.AttrFloat("epsilon", 1e-5f), dt);
  Expr y = ctx.Call("multiply", {d, inv});
  auto param = [&](int i) {
    int64_t len = ctx.InputDim(i, 0, i == 1 ? "scale" : "bias");
    std::vector<int64_t> ps = len == c ? std::vector<int64_t>{g, c / g, 1} : std::vector<int64_t>{g, 1, 1};
    if (len != c && len != g) ctx.Fail("scale / bias must have C or num_groups elements");
    return ctx.Call("reshape", {ctx.Input(i)}, Attrs{{"newshape", ps}});
  };
  y = ctx.Call("add", {ctx.Call("multiply", {y, param(1)}), param(2)});
  ctx.SetOutput(0, ctx.Call("reshape", {y}, Attrs{{"newshape", shape}}));
}

// MeanVarianceNormalization-9/13: (X - mean) / sqrt(var) over axes (default [0, 2, 3]); the
// ONNX reference adds 1e-9 to the variance.
void ConvertMVN(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  std::vector<int64_t> axes = ctx.AttrInts("axes", {0, 2, 3});
  for (int64_t& a : axes) a = Axis(ctx, a, rank);
  auto [d, inv] = Standardize(ctx, ctx.Input(0), axes, 1e-9, ctx.InputType(0).dtype);
  ctx.SetOutput(0, ctx.Call("multiply", {d, inv}));
}

// LpNormalization-1/22: x / ||x||_p along axis (p = 1 or 2).
void ConvertLpNorm(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = Axis(ctx, ctx.AttrInt("axis", -1), rank);
  int64_t p = ctx.AttrInt("p", 2);
  Expr x = ctx.Input(0);
  Attrs ra{{"axis", std::vector<int64_t>{axis}}, {"keepdims", int64_t{1}}};
  Expr norm;
  if (p == 1) norm = ctx.Call("sum", {ctx.Call("abs", {x})}, ra);
  else if (p == 2) norm = ctx.Call("sqrt", {ctx.Call("sum", {ctx.Call("multiply", {x, x})}, ra)});
  else ctx.Fail("p must be 1 or 2, got " + std::to_string(p));
  // A zero norm gives 0 (the ONNX reference), not 0 / 0.
  DataType dt = ctx.InputType(0).dtype;
  Expr is_zero = ctx.Call("equal", {norm, ctx.ScalarConst(0, dt)});
  norm = ctx.Call("where", {is_zero, ctx.ScalarConst(1, dt), norm});
  ctx.SetOutput(0, ctx.Call("divide", {x, norm}));
}

// LRN-1/13 (AlexNet's local response normalization across channels):
//   y = x / (bias + alpha / size * sum_{c' in [c - floor((size-1)/2), c + ceil((size-1)/2)]} x[c']^2)^beta
// The channel-window sum of squares is an average pool (counting the zero padding) over
// [N, 1, C, rest] times size, so alpha / size * sum = alpha * avg.
void ConvertLRN(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  if (xs.size() < 3) ctx.Fail("input must be [N, C, d1, ...] (rank >= 3), got rank " + std::to_string(xs.size()));
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("input must be a float tensor, got " + dt.str());
  const int64_t size = ctx.AttrInt("size");
  if (size < 1) ctx.Fail("size must be >= 1, got " + std::to_string(size));
  const double alpha = ctx.AttrFloat("alpha", 1e-4f), beta = ctx.AttrFloat("beta", 0.75f);
  const double bias = ctx.AttrFloat("bias", 1.0f);
  int64_t rest = 1;
  for (size_t d = 2; d < xs.size(); ++d) rest *= xs[d];
  Expr x = ctx.Input(0);
  Expr sq = ctx.Call("multiply", {x, x});
  sq = ctx.Call("reshape", {sq}, Attrs{{"newshape", std::vector<int64_t>{xs[0], 1, xs[1], rest}}});
  Attrs pool{{"pool_size", std::vector<int64_t>{size, 1}},
             {"strides", std::vector<int64_t>{1, 1}},
             {"dilation", std::vector<int64_t>{1, 1}},
             {"padding", std::vector<int64_t>{(size - 1) / 2, 0, size / 2, 0}},
             {"layout", std::string("NCHW")},
             {"ceil_mode", int64_t{0}},
             {"count_include_pad", int64_t{1}}};
  Expr avg = ctx.Call("reshape", {ctx.Call("nn.avg_pool2d", {sq}, pool)}, Attrs{{"newshape", xs}});
  Expr base = ctx.Call("add", {ctx.ScalarConst(bias, dt), ctx.Call("multiply", {ctx.ScalarConst(alpha, dt), avg})});
  ctx.SetOutput(0, ctx.Call("divide", {x, ctx.Call("power", {base, ctx.ScalarConst(beta, dt)})}));
}

}  // namespace

void RegisterActivationConverters(ConverterTable& t) {
  t["LeakyRelu"] = WithAlpha("nn.leaky_relu", 0.01f);
  t["Elu"] = WithAlpha("nn.elu", 1.0f);
  t["Celu"] = WithAlpha("nn.celu", 1.0f);
  t["ThresholdedRelu"] = WithAlpha("nn.thresholded_relu", 1.0f);
  t["Swish"] = WithAlpha("nn.swish", 1.0f);
  t["Selu"] = ConvertSelu;
  t["Softplus"] = Plain("nn.softplus");
  t["Softsign"] = Plain("nn.softsign");
  t["Mish"] = Plain("nn.mish");
  t["Gelu"] = ConvertGelu;
  t["Shrink"] = ConvertShrink;
  t["PRelu"] = ConvertPRelu;
  t["LogSoftmax"] = ConvertLogSoftmax;
  t["Hardmax"] = ConvertHardmax;
  t["LayerNormalization"] = ConvertLayerNorm;
  t["RMSNormalization"] = ConvertRMSNorm;
  t["InstanceNormalization"] = ConvertInstanceNorm;
  t["GroupNormalization"] = ConvertGroupNorm;
  t["MeanVarianceNormalization"] = ConvertMVN;
  t["LpNormalization"] = ConvertLpNorm;
  t["LRN"] = ConvertLRN;
}

}  // namespace tessera::frontend::onnx_import
