// ONNX's random operators: RandomUniform-1/22, RandomNormal-1/22, RandomUniformLike-1/22,
// RandomNormalLike-1/22, Bernoulli-15/22, Multinomial-7/22
// (https://onnx.ai/onnx/operators/onnx__RandomUniform.html, ...), over the counter-based generator
// of topi/random.h (random.uniform_like / random.normal_like, graph/op/random.cc).
//
// Values are a pure function of the op's key and each element's position, so a compiled model
// gives the same values at every run (as JAX's counter-based PRNG; ONNX Runtime's generators
// advance instead, so no two runtimes agree on the values, only on their distribution). The key:
// SplitMix64's mix of the bits of `seed` (a float attribute) when given; otherwise of a hash of the
// node's first output name, so that two unseeded ops draw different values and a rebuild gives the
// same library. RandomUniform / RandomNormal (a shape attribute, no input) fold to constants.
//   RandomUniform(Like)   low + (high - low) * U[0, 1); dtype attr (float16, bfloat16, float, double;
//                         *Like: default the input's dtype, which must then be a float type)
//   RandomNormal(Like)    mean + scale * N(0, 1) (Box-Muller)
//   Bernoulli(x)          1 where U[0, 1) < x (x: probabilities, float16 / float / double), else 0,
//                         in attr dtype (default x's; any numeric type or bool)
//   Multinomial(x)        x [batch, classes]: unnormalized log-probabilities; sample_size draws per
//                         row, int32 (default) or int64 class indices: the first class whose running
//                         sum of exp(x - max) exceeds U * the row's total (inverse CDF)
#include <cstring>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "tensor_convert.h"
#include "tessera/topi/random.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

// The generator key of this node (above).
int64_t Key(NodeContext& ctx) {
  uint64_t bits = 0;
  if (ctx.HasAttr("seed")) {
    const double seed = ctx.AttrFloat("seed", 0.0f);
    std::memcpy(&bits, &seed, sizeof(bits));
  } else {
    bits = 0xCBF29CE484222325ull;  // FNV-1a of the first output's name
    for (unsigned char c : ctx.node().output(0)) bits = (bits ^ c) * 0x100000001B3ull;
  }
  return static_cast<int64_t>(topi::splitmix64_mix(bits + topi::kSplitMixGamma));
}

// The dtype attr (an ONNX TensorProto type), or `dflt` when absent; must be a float type.
DataType FloatDType(NodeContext& ctx, DataType dflt, const char* what) {
  const DataType t = ctx.HasAttr("dtype") ? DataTypeFromONNX(static_cast<int>(ctx.AttrInt("dtype")), ctx.Label())
                                          : dflt;
  if (!topi::is_random_dtype(t))
    ctx.Fail(std::string(what) + " must be float16, bfloat16, float or double, got " + t.str() +
             (ctx.HasAttr("dtype") ? "" : " (the input's; give attr dtype)"));
  return t;
}

// A uniform / normal tensor of `like`'s shape.
Expr Draw(NodeContext& ctx, const Expr& like, bool normal, DataType dtype) {
  if (normal)
    return ctx.Call("random.normal_like", {like},
                    Attrs{{"dtype", dtype.str()}, {"mean", double{ctx.AttrFloat("mean", 0.0f)}},
                          {"scale", double{ctx.AttrFloat("scale", 1.0f)}}, {"key", Key(ctx)}});
  return ctx.Call("random.uniform_like", {like},
                  Attrs{{"dtype", dtype.str()}, {"low", double{ctx.AttrFloat("low", 0.0f)}},
                        {"high", double{ctx.AttrFloat("high", 1.0f)}}, {"key", Key(ctx)}});
}

// RandomUniform / RandomNormal: the shape attribute's tensor.
void ConvertRandom(NodeContext& ctx, bool normal) {
  const std::vector<int64_t> shape = ctx.AttrInts("shape", {});
  if (!ctx.HasAttr("shape")) ctx.Fail("attr shape is required");
  for (int64_t d : shape)
    if (d < 0) ctx.Fail("attr shape has the negative extent " + std::to_string(d));
  const DataType dtype = FloatDType(ctx, DataType::Float(32), "dtype");
  // Only the shape source's extents are read: a scalar broadcast to the shape (folded with the draw).
  Expr like = ctx.Call("broadcast_to", {ctx.ScalarConst(0, DataType::Float(32))}, Attrs{{"shape", shape}});
  ctx.SetOutput(0, Draw(ctx, like, normal, dtype));
}

void ConvertRandomLike(NodeContext& ctx, bool normal) {
  const DataType dtype = FloatDType(ctx, ctx.InputType(0).dtype, "the output dtype");
  ctx.SetOutput(0, Draw(ctx, ctx.Input(0), normal, dtype));
}

void ConvertBernoulli(NodeContext& ctx) {
  const DataType p = ctx.InputType(0).dtype;
  if (p != DataType::Float(16) && p != DataType::Float(32) && p != DataType::Float(64))
    ctx.Fail("the probabilities must be float16, float or double, got " + p.str());
  const DataType out =
      ctx.HasAttr("dtype") ? DataTypeFromONNX(static_cast<int>(ctx.AttrInt("dtype")), ctx.Label()) : p;
  if (!(out.is_bool() || out.is_int() || out.is_uint() || topi::is_random_dtype(out)))
    ctx.Fail("dtype must be a numeric type or bool, got " + out.str());
  const DataType ct = topi::random_compute_type(p);
  Expr u = ctx.Call("random.uniform_like", {ctx.Input(0)},
                    Attrs{{"dtype", ct.str()}, {"low", 0.0}, {"high", 1.0}, {"key", Key(ctx)}});
  Expr probability = p == ct ? ctx.Input(0) : ctx.Call("cast", {ctx.Input(0)}, Attrs{{"dtype", ct.str()}});
  ctx.SetOutput(0, ctx.Call("cast", {ctx.Call("less", {u, probability})}, Attrs{{"dtype", out.str()}}));
}

void ConvertMultinomial(NodeContext& ctx) {
  const graph::TensorTypeNode& x = ctx.InputType(0);
  if (x.ndim() != 2) ctx.Fail("the input must be [batch_size, class_size], got rank " + std::to_string(x.ndim()));
  if (!(x.dtype == DataType::Float(16) || x.dtype == DataType::Float(32) || x.dtype == DataType::Float(64)))
    ctx.Fail("the input must be float16, float or double, got " + x.dtype.str());
  const int64_t samples = ctx.AttrInt("sample_size", 1);
  if (samples < 1) ctx.Fail("sample_size must be >= 1, got " + std::to_string(samples));
  const DataType out = DataTypeFromONNX(static_cast<int>(ctx.AttrInt("dtype", 6)), ctx.Label());
  if (out != DataType::Int(32) && out != DataType::Int(64)) ctx.Fail("dtype must be int32 or int64, got " + out.str());
  if (!x.shape[1].is_static() || x.shape[1].value() < 1)
    ctx.Unsupported("Multinomial needs a static class count of at least 1, got " + graph::ShapeStr(x.shape));
  const int64_t classes = x.shape[1].value();
  const DataType ct = topi::random_compute_type(x.dtype);
  Expr logits = x.dtype == ct ? ctx.Input(0) : ctx.Call("cast", {ctx.Input(0)}, Attrs{{"dtype", ct.str()}});
  // Running sums of the unnormalized probabilities, [batch, 1, classes].
  Expr row_max = ctx.Call("max", {logits}, Attrs{{"axis", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
  Expr cdf = ctx.Call("cumsum", {ctx.Call("exp", {ctx.Call("subtract", {logits, row_max})})},
                      Attrs{{"axis", int64_t{1}}, {"exclusive", int64_t{0}}, {"reverse", int64_t{0}}});
  Expr total = SliceAxis(ctx, cdf, 1, classes - 1, classes);  // [batch, 1]
  // One uniform per (row, sample): the draw's shape source is x's first column repeated.
  Expr like = ctx.Call("take", {logits, graph::ConstantNode::make(MakeInts(std::vector<int64_t>(samples, 0), {samples}))},
                       Attrs{{"axis", int64_t{1}}, {"mode", std::string("clip")}});
  Expr u = ctx.Call("random.uniform_like", {like},
                    Attrs{{"dtype", ct.str()}, {"low", 0.0}, {"high", 1.0}, {"key", Key(ctx)}});
  Expr target = ctx.Call("expand_dims", {ctx.Call("multiply", {u, total})},
                         Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});  // [batch, samples, 1]
  Expr below = ctx.Call("less_equal", {ctx.Call("expand_dims", {cdf}, Attrs{{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}),
                                       target});  // [batch, samples, classes]
  Expr index = ctx.Call("sum", {ctx.Call("cast", {below}, Attrs{{"dtype", out.str()}})},
                        Attrs{{"axis", std::vector<int64_t>{2}}, {"keepdims", int64_t{0}}});
  ctx.SetOutput(0, ctx.Call("minimum", {index, ctx.ScalarConst(static_cast<double>(classes - 1), out)}));
}

}  // namespace

void RegisterRandomConverters(ConverterTable& t) {
  t["RandomUniform"] = [](NodeContext& ctx) { ConvertRandom(ctx, false); };
  t["RandomNormal"] = [](NodeContext& ctx) { ConvertRandom(ctx, true); };
  t["RandomUniformLike"] = [](NodeContext& ctx) { ConvertRandomLike(ctx, false); };
  t["RandomNormalLike"] = [](NodeContext& ctx) { ConvertRandomLike(ctx, true); };
  t["Bernoulli"] = ConvertBernoulli;
  t["Multinomial"] = ConvertMultinomial;
}

}  // namespace tessera::frontend::onnx_import
