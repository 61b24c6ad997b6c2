// ONNX neural-network ops: Conv, MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool,
// GlobalLpPool, BatchNormalization,
// Softmax (opset < 13: flatten-to-2-D semantics; 13+: one axis), Gemm, MatMul, Dropout.
#include "const_eval.h"
#include "context.h"
#include "conv_build.h"
#include "graph_build.h"
#include "volume.h"
#include "tessera/support/checked_math.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void CheckRank4(NodeContext& ctx, const char* what) {
  int64_t r = ctx.InputType(0).ndim();
  if (r != 4) {
    ctx.Unsupported(std::string("only 2-D ") + what + " (a 4-D NCHW input) is supported; the input has rank " +
                    std::to_string(r));
  }
}

std::vector<int64_t> Pair(NodeContext& ctx, const std::string& name, int64_t dflt) {
  std::vector<int64_t> v = ctx.AttrInts(name, {dflt, dflt});
  if (v.size() != 2) ctx.Fail("attribute '" + name + "' must have 2 values for a 2-D window, got " + std::to_string(v.size()));
  return v;
}

// A window's kernel extent, stride and dilation must be >= 1 (a stride of 0 would divide by zero).
void CheckWindow(NodeContext& ctx, int64_t kernel, int64_t stride, int64_t dilation) {
  if (kernel < 1 || stride < 1 || dilation < 1)
    ctx.Fail("kernel_shape, strides and dilations must be >= 1, got kernel " + std::to_string(kernel) + ", stride " +
             std::to_string(stride) + ", dilation " + std::to_string(dilation));
}

// The input extent SAME_* padding must cover: (out - 1) * stride + (kernel - 1) * dilation + 1,
// overflow-checked.
int64_t SamePaddingSpan(int64_t out, int64_t kernel, int64_t stride, int64_t dilation) {
  const char* what = "the SAME padding of a window";
  return CheckedAdd(CheckedMul(out - 1, stride, what), CheckedAdd(CheckedMul(kernel - 1, dilation, what), 1, what), what);
}

// Padding [top, left, bottom, right] from auto_pad / pads (ONNX pads are [H_begin, W_begin,
// H_end, W_end]). SAME_*: output = ceil(in / stride), the total padding split with the extra
// unit at the end (UPPER) or the beginning (LOWER).
std::vector<int64_t> WindowPadding(NodeContext& ctx, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  for (size_t d = 0; d < 2; ++d) CheckWindow(ctx, kernel[d], strides[d], dilations[d]);
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = ctx.AttrInts("pads", {0, 0, 0, 0});
    if (pads.size() != 4) ctx.Fail("attribute 'pads' must have 4 values for a 2-D window, got " + std::to_string(pads.size()));
    return pads;
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    ctx.Unsupported("attribute auto_pad='" + auto_pad + "' is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
  }
  std::vector<int64_t> in = ctx.InputShape(0);
  std::vector<int64_t> pad(4);
  for (int d = 0; d < 2; ++d) {
    int64_t n = in[2 + d], out = (n + strides[d] - 1) / strides[d];
    int64_t total = std::max<int64_t>(0, SamePaddingSpan(out, kernel[d], strides[d], dilations[d]) - n);
    int64_t small = total / 2, large = total - small;
    pad[d] = auto_pad == "SAME_UPPER" ? small : large;
    pad[d + 2] = total - pad[d];
  }
  return pad;
}

// 1-D windows (a 3-D NCL input) run as 2-D ones over [N, C, 1, L]: the padding of the single
// spatial dim as {begin, end} from pads / auto_pad.
std::vector<int64_t> WindowPadding1D(NodeContext& ctx, int64_t kernel, int64_t stride, int64_t dilation) {
  CheckWindow(ctx, kernel, stride, dilation);
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = ctx.AttrInts("pads", {0, 0});
    if (pads.size() != 2) ctx.Fail("attribute 'pads' must have 2 values for a 1-D window");
    return pads;
  }
  if (auto_pad == "VALID") return {0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") ctx.Unsupported("auto_pad='" + auto_pad + "' is not supported");
  int64_t n = ctx.InputDim(0, 2, "the input"), out = (n + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, SamePaddingSpan(out, kernel, stride, dilation) - n);
  int64_t small = total / 2;
  int64_t begin = auto_pad == "SAME_UPPER" ? small : total - small;
  return {begin, total - begin};
}

int64_t One(NodeContext& ctx, const std::string& name, int64_t dflt) {
  std::vector<int64_t> v = ctx.AttrInts(name, {dflt});
  if (v.size() != 1) ctx.Fail("attribute '" + name + "' must have 1 value for a 1-D window");
  return v[0];
}

Expr Unsqueeze2(NodeContext& ctx, Expr x) {
  return ctx.Call("expand_dims", {x}, Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});
}
Expr Squeeze2(NodeContext& ctx, Expr x) {
  return ctx.Call("squeeze", {x}, Attrs{{"axis", std::vector<int64_t>{2}}});
}

void ConvertConv1D(NodeContext& ctx) {
  if (ctx.InputType(1).ndim() != 3) ctx.Fail("weight must be 3-D [O, C/group, k]");
  int64_t k = ctx.InputShape(1)[2];
  if (One(ctx, "kernel_shape", k) != k) ctx.Fail("kernel_shape does not match the weight shape");
  int64_t stride = One(ctx, "strides", 1), dil = One(ctx, "dilations", 1);
  std::vector<int64_t> p = WindowPadding1D(ctx, k, stride, dil);
  Attrs attrs{{"strides", std::vector<int64_t>{1, stride}},
              {"padding", std::vector<int64_t>{0, p[0], 0, p[1]}},
              {"dilation", std::vector<int64_t>{1, dil}},
              {"groups", ctx.AttrInt("group", 1)},
              {"data_layout", std::string("NCHW")},
              {"kernel_layout", std::string("OIHW")}};
  Expr w;
  if (runtime::NDArray wc = ctx.InputConst(1); wc.defined()) {
    std::vector<int64_t> ws = wc.shape();
    w = graph::ConstantNode::make(ReshapeArray(wc, {ws[0], ws[1], 1, ws[2]}));
  } else {
    w = Unsqueeze2(ctx, ctx.Input(1));
  }
  Expr out = Squeeze2(ctx, ctx.Call("nn.conv2d", {Unsqueeze2(ctx, ctx.Input(0)), w}, attrs));
  if (ctx.HasInput(2)) out = ctx.Call("nn.bias_add", {out, ctx.Input(2)}, Attrs{{"axis", int64_t{1}}});
  ctx.SetOutput(0, out);
}

void ConvertPool1D(NodeContext& ctx, bool is_max) {
  if (!ctx.HasAttr("kernel_shape")) ctx.Fail("required attribute 'kernel_shape' is missing");
  int64_t k = One(ctx, "kernel_shape", 1), stride = One(ctx, "strides", 1), dil = One(ctx, "dilations", 1);
  std::vector<int64_t> p = WindowPadding1D(ctx, k, stride, dil);
  Attrs attrs{{"pool_size", std::vector<int64_t>{1, k}},
              {"strides", std::vector<int64_t>{1, stride}},
              {"dilation", std::vector<int64_t>{1, dil}},
              {"padding", std::vector<int64_t>{0, p[0], 0, p[1]}},
              {"layout", std::string("NCHW")},
              {"ceil_mode", ctx.AttrInt("ceil_mode", 0)}};
  if (!is_max) attrs.Set("count_include_pad", ctx.AttrInt("count_include_pad", 0));
  Expr x = Unsqueeze2(ctx, ctx.Input(0));
  Expr out = ctx.Call(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {x}, attrs);
  ctx.SetOutput(0, Squeeze2(ctx, out));
  if (is_max && ctx.HasOutput(1)) {  // [N, C, 1, L]: both storage orders give (n C + c) L + l
    attrs.Set("storage_order", int64_t{0});
    ctx.SetOutput(1, Squeeze2(ctx, ctx.Call("nn.max_pool2d_indices", {x}, attrs)));
  }
}

Expr BuildConv2DImpl(NodeContext& ctx, Expr x, Expr wx) {
  CheckRank4(ctx, ctx.node().op_type().c_str());
  std::vector<int64_t> wshape = StaticShape(ctx, wx);
  if (wshape.size() != 4) ctx.Fail("weight must be 4-D [O, C/group, kH, kW]");
  std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape", {wshape[2], wshape[3]});
  if (kernel != std::vector<int64_t>{wshape[2], wshape[3]}) ctx.Fail("kernel_shape does not match the weight shape");
  std::vector<int64_t> strides = Pair(ctx, "strides", 1), dilations = Pair(ctx, "dilations", 1);
  Attrs attrs{{"strides", strides},
              {"padding", WindowPadding(ctx, kernel, strides, dilations)},
              {"dilation", dilations},
              {"groups", ctx.AttrInt("group", 1)},
              {"data_layout", std::string("NCHW")},
              {"kernel_layout", std::string("OIHW")}};
  return ctx.Call("nn.conv2d", {std::move(x), std::move(wx)}, attrs);
}

void ConvertConv(NodeContext& ctx) {
  if (ctx.InputType(0).ndim() == 3) return ConvertConv1D(ctx);
  if (ctx.InputType(0).ndim() == 5) return ConvertConv3D(ctx);
  Expr out = BuildConv2DImpl(ctx, ctx.Input(0), ctx.Input(1));
  if (ctx.HasInput(2)) out = ctx.Call("nn.bias_add", {out, ctx.Input(2)}, Attrs{{"axis", int64_t{1}}});
  ctx.SetOutput(0, out);
}

void ConvertPool(NodeContext& ctx, bool is_max) {
  if (ctx.InputType(0).ndim() == 5) return ConvertPool3D(ctx, is_max ? "max" : "avg");
  if (ctx.InputType(0).ndim() == 3) {
    return ConvertPool1D(ctx, is_max);
  }
  CheckRank4(ctx, is_max ? "MaxPool" : "AveragePool");
  const int64_t storage_order = is_max ? ctx.AttrInt("storage_order", 0) : 0;
  if (storage_order != 0 && storage_order != 1) ctx.Fail("storage_order must be 0 or 1");
  if (!ctx.HasAttr("kernel_shape")) ctx.Fail("required attribute 'kernel_shape' is missing");
  std::vector<int64_t> kernel = Pair(ctx, "kernel_shape", 1);
  std::vector<int64_t> strides = Pair(ctx, "strides", 1), dilations = Pair(ctx, "dilations", 1);
  Attrs attrs{{"pool_size", kernel},
              {"strides", strides},
              {"dilation", dilations},
              {"padding", WindowPadding(ctx, kernel, strides, dilations)},
              {"layout", std::string("NCHW")},
              {"ceil_mode", ctx.AttrInt("ceil_mode", 0)}};
  if (!is_max) attrs.Set("count_include_pad", ctx.AttrInt("count_include_pad", 0));
  ctx.SetOutput(0, ctx.Call(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {ctx.Input(0)}, attrs));
  if (is_max && ctx.HasOutput(1)) {
    attrs.Set("storage_order", storage_order);
    ctx.SetOutput(1, ctx.Call("nn.max_pool2d_indices", {ctx.Input(0)}, attrs));
  }
}

// LpPool-2/11/18: (sum over the window of |x|^p)^(1 / p), an average pool of |x|^p (counting
// the padding, which adds 0) times the window size. 2-D (NCHW) and 1-D (NCL) windows.
void ConvertLpPool(NodeContext& ctx) {
  const int64_t rank = ctx.InputType(0).ndim();
  if (rank == 5) return ConvertPool3D(ctx, "lp");
  if (rank != 3 && rank != 4) CheckRank4(ctx, "LpPool");
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("input must be a float tensor, got " + dt.str());
  if (!ctx.HasAttr("kernel_shape")) ctx.Fail("required attribute 'kernel_shape' is missing");
  const double p = static_cast<double>(ctx.AttrInt("p", 2));
  if (p < 1) ctx.Fail("p must be >= 1, got " + std::to_string(static_cast<int64_t>(p)));
  Expr x = ctx.Call("abs", {ctx.Input(0)});
  x = p == 2 ? ctx.Call("multiply", {x, x}) : ctx.Call("power", {x, ctx.ScalarConst(p, dt)});
  Attrs attrs;
  int64_t window = 1;
  if (rank == 3) {
    int64_t k = One(ctx, "kernel_shape", 1), stride = One(ctx, "strides", 1), dil = One(ctx, "dilations", 1);
    std::vector<int64_t> pad = WindowPadding1D(ctx, k, stride, dil);
    attrs = Attrs{{"pool_size", std::vector<int64_t>{1, k}}, {"strides", std::vector<int64_t>{1, stride}},
                  {"dilation", std::vector<int64_t>{1, dil}}, {"padding", std::vector<int64_t>{0, pad[0], 0, pad[1]}}};
    window = k;
    x = Unsqueeze2(ctx, x);
  } else {
    std::vector<int64_t> kernel = Pair(ctx, "kernel_shape", 1);
    std::vector<int64_t> strides = Pair(ctx, "strides", 1), dilations = Pair(ctx, "dilations", 1);
    attrs = Attrs{{"pool_size", kernel}, {"strides", strides}, {"dilation", dilations},
                  {"padding", WindowPadding(ctx, kernel, strides, dilations)}};
    window = kernel[0] * kernel[1];
  }
  attrs.Set("layout", std::string("NCHW")).Set("ceil_mode", ctx.AttrInt("ceil_mode", 0));
  attrs.Set("count_include_pad", int64_t{1});
  Expr sum = ctx.Call("multiply", {ctx.Call("nn.avg_pool2d", {x}, attrs), ctx.ScalarConst(static_cast<double>(window), dt)});
  if (rank == 3) sum = Squeeze2(ctx, sum);
  ctx.SetOutput(0, p == 2 ? ctx.Call("sqrt", {sum}) : ctx.Call("power", {sum, ctx.ScalarConst(1.0 / p, dt)}));
}

// GlobalMaxPool-1 / GlobalLpPool-2: a max / Lp-norm over every spatial axis (any rank >= 3),
// kept as extent-1 dims.
std::vector<int64_t> SpatialAxes(NodeContext& ctx) {
  const int64_t rank = ctx.InputType(0).ndim();
  if (rank < 3) ctx.Fail("input must be [N, C, d1, ...] (rank >= 3), got rank " + std::to_string(rank));
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
  return axes;
}

void ConvertGlobalMaxPool(NodeContext& ctx) {
  ctx.SetOutput(0, ctx.Call("max", {ctx.Input(0)}, Attrs{{"axis", SpatialAxes(ctx)}, {"keepdims", int64_t{1}}}));
}

void ConvertGlobalLpPool(NodeContext& ctx) {
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("input must be a float tensor, got " + dt.str());
  const double p = static_cast<double>(ctx.AttrInt("p", 2));
  if (p < 1) ctx.Fail("p must be >= 1, got " + std::to_string(static_cast<int64_t>(p)));
  Expr x = ctx.Call("abs", {ctx.Input(0)});
  x = ctx.Call("power", {x, ctx.ScalarConst(p, dt)});
  Expr sum = ctx.Call("sum", {x}, Attrs{{"axis", SpatialAxes(ctx)}, {"keepdims", int64_t{1}}});
  ctx.SetOutput(0, ctx.Call("power", {sum, ctx.ScalarConst(1.0 / p, dt)}));
}

void ConvertGlobalAveragePool(NodeContext& ctx) {
  CheckRank4(ctx, "GlobalAveragePool");
  ctx.SetOutput(0, ctx.Call("nn.global_avg_pool2d", {ctx.Input(0)}, Attrs{{"layout", std::string("NCHW")}}));
}

// Inference only: opset 1-6 is_test / 7-8 spatial / 14+ training_mode must select inference.
// Training mode (opset 14+ training_mode=1): normalizes with the batch's statistics over every
// axis but 1 (population variance) and also outputs the running statistics
//   running_mean = mean * momentum + batch_mean * (1 - momentum)   (momentum default 0.9),
//   running_var  = var * momentum + batch_var * (1 - momentum),
// as the ONNX reference implementation computes them.
void ConvertBatchNormTraining(NodeContext& ctx) {
  const auto& xt = ctx.InputType(0);
  const int64_t rank = xt.ndim();
  if (rank < 2) ctx.Fail("X must have rank >= 2 (N, C, ...), got rank " + std::to_string(rank));
  const DataType dt = xt.dtype;
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != 1) axes.push_back(d);
  Expr x = ctx.Input(0);
  Attrs reduce{{"axis", axes}, {"keepdims", int64_t{0}}};
  Expr mean = ctx.Call("mean", {x}, reduce);
  std::vector<int64_t> channel(rank - 1, 1);
  channel[0] = -1;
  auto per_channel = [&](Expr v) { return ctx.Call("reshape", {std::move(v)}, Attrs{{"newshape", channel}}); };
  Expr centered = ctx.Call("subtract", {x, per_channel(mean)});
  Expr var = ctx.Call("mean", {ctx.Call("multiply", {centered, centered})}, reduce);
  const double eps = ctx.AttrFloat("epsilon", 1e-5f), momentum = ctx.AttrFloat("momentum", 0.9f);
  Expr inv = ctx.Call("divide", {ctx.Call("multiply", {centered, per_channel(ctx.Input(1))}),
                                 per_channel(ctx.Call("sqrt", {ctx.Call("add", {var, ctx.ScalarConst(eps, dt)})}))});
  ctx.SetOutput(0, ctx.Call("add", {inv, per_channel(ctx.Input(2))}));
  auto running = [&](int input, Expr batch) {
    return ctx.Call("add", {ctx.Call("multiply", {ctx.Input(input), ctx.ScalarConst(momentum, dt)}),
                            ctx.Call("multiply", {std::move(batch), ctx.ScalarConst(1 - momentum, dt)})});
  };
  if (ctx.HasOutput(1)) ctx.SetOutput(1, running(3, mean));
  if (ctx.HasOutput(2)) ctx.SetOutput(2, running(4, var));
}

void ConvertBatchNorm(NodeContext& ctx) {
  if (ctx.opset() < 9 && ctx.AttrInt("spatial", 1) != 1) ctx.Unsupported("attribute spatial=0 is not supported");
  if (ctx.AttrInt("training_mode", 0) != 0) return ConvertBatchNormTraining(ctx);
  ctx.CheckMaxOutputs(1, "training-mode BatchNormalization outputs (running mean/var) are not supported");
  Attrs attrs{{"axis", int64_t{1}}, {"epsilon", static_cast<double>(ctx.AttrFloat("epsilon", 1e-5f))}};
  ctx.SetOutput(0, ctx.Call("nn.batch_norm",
                            {ctx.Input(0), ctx.Input(1), ctx.Input(2), ctx.Input(3), ctx.Input(4)}, attrs));
}

// Softmax-1/11 coerce the input to 2-D [prod(d < axis), prod(d >= axis)] and normalize each
// row; softmax-13 normalizes along one axis. They agree when axis is the last axis.
void ConvertSoftmax(NodeContext& ctx) {
  int64_t rank = ctx.InputType(0).ndim();
  int64_t axis = ctx.AttrInt("axis", ctx.opset() >= 13 ? -1 : 1);
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) ctx.Fail("axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  if (ctx.opset() >= 13 || axis == rank - 1) {
    ctx.SetOutput(0, ctx.Call("nn.softmax", {ctx.Input(0)}, Attrs{{"axis", axis}}));
    return;
  }
  std::vector<int64_t> shape = ctx.InputShape(0);
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= shape[d];
  Expr x = ctx.Call("reshape", {ctx.Input(0)}, Attrs{{"newshape", std::vector<int64_t>{rows, cols}}});
  x = ctx.Call("nn.softmax", {x}, Attrs{{"axis", int64_t{1}}});
  ctx.SetOutput(0, ctx.Call("reshape", {x}, Attrs{{"newshape", shape}}));
}

// Y = alpha * A' B' + beta * C; B' = B^T (transB=1) maps to nn.dense directly.
void ConvertGemm(NodeContext& ctx) {
  if (ctx.InputType(0).ndim() != 2 || ctx.InputType(1).ndim() != 2) ctx.Fail("Gemm inputs A and B must be 2-D");
  double alpha = ctx.AttrFloat("alpha", 1.0f), beta = ctx.AttrFloat("beta", 1.0f);
  Expr a = ctx.Input(0);
  if (ctx.AttrInt("transA", 0)) a = ctx.Call("transpose", {a}, Attrs{{"axes", std::vector<int64_t>{1, 0}}});
  Expr y;
  if (ctx.AttrInt("transB", 0)) {
    y = ctx.Call("nn.dense", {a, ctx.Input(1)});
  } else if (runtime::NDArray b = ctx.InputConst(1); b.defined()) {
    Expr bt = graph::ConstantNode::make(TransposeArray(b, {1, 0}));
    y = ctx.Call("nn.dense", {a, bt});
  } else {
    y = ctx.Call("nn.matmul", {a, ctx.Input(1)});
  }
  DataType dt = ctx.InputType(0).dtype;
  if (alpha != 1.0) y = ctx.Call("multiply", {y, ctx.ScalarConst(alpha, dt)});
  if (beta == 0.0) ctx.IgnoreInput(2);  // C * 0 is not computed (as ONNX Runtime)
  if (ctx.HasInput(2) && beta != 0.0) {
    Expr c = ctx.Input(2);
    if (beta != 1.0) c = ctx.Call("multiply", {c, ctx.ScalarConst(beta, dt)});
    y = ctx.Call("add", {y, c});
  }
  ctx.SetOutput(0, y);
}

void ConvertMatMul(NodeContext& ctx) { ctx.SetOutput(0, ctx.Call("nn.matmul", {ctx.Input(0), ctx.Input(1)})); }

// Identity at inference. The optional mask output is all true.
void ConvertDropout(NodeContext& ctx) {
  ctx.IgnoreInput(1);  // ratio: no effect at inference
  if (ctx.opset() >= 12 && ctx.HasInput(2)) {
    std::vector<int64_t> training = ctx.InputInts(2, "Dropout training_mode");
    if (!training.empty() && training[0] != 0) ctx.Unsupported("training_mode=true is not supported (inference only)");
  }
  ctx.SetOutput(0, ctx.Input(0));
  if (ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) {
    std::vector<int64_t> shape = ctx.InputShape(0);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    ctx.SetOutputConst(1, FromInts(std::vector<int64_t>(n, 1), shape, DataType::Bool()));
  }
}

}  // namespace

Expr BuildConv2D(NodeContext& ctx, Expr x, Expr w) { return BuildConv2DImpl(ctx, std::move(x), std::move(w)); }

void RegisterNNConverters(ConverterTable& t) {
  t["Conv"] = ConvertConv;
  t["MaxPool"] = [](NodeContext& ctx) { ConvertPool(ctx, true); };
  t["AveragePool"] = [](NodeContext& ctx) { ConvertPool(ctx, false); };
  t["GlobalAveragePool"] = ConvertGlobalAveragePool;
  t["GlobalMaxPool"] = ConvertGlobalMaxPool;
  t["GlobalLpPool"] = ConvertGlobalLpPool;
  t["LpPool"] = ConvertLpPool;
  t["BatchNormalization"] = ConvertBatchNorm;
  t["Softmax"] = ConvertSoftmax;
  t["Gemm"] = ConvertGemm;
  t["MatMul"] = ConvertMatMul;
  t["Dropout"] = ConvertDropout;
}

}  // namespace tessera::frontend::onnx_import
