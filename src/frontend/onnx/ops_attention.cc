// ONNX Attention-23/24 and FlexAttention-1 (ai.onnx.preview; below) as graph ops. Attention, in the order of
// the spec's function body and reference implementation (onnx/reference/ops/op_attention.py):
//
//   Q [B, Sq, Hq*D] or [B, Hq, Sq, D]; K, V [B, Skv, Hkv*D(v)] or [B, Hkv, Skv, D(v)] (3-D inputs
//   are split into heads with q_num_heads / kv_num_heads);
//   present_key / present_value = concat(past, K / V) along the sequence (T = past + Skv);
//   K / V heads repeated (interleaved) to Hq when Hq is a multiple of Hkv (grouped-query);
//   QK = (Q * sqrt(scale)) @ (K * sqrt(scale))^T, scale default 1 / sqrt(D);
//   softcap > 0: QK = softcap * tanh(QK / softcap);
//   bias = attn_mask (bool: true -> 0, false -> -inf; padded with -inf to T keys)
//          + causal (key j allowed iff j <= i + past length) + sliding window; a row whose
//          bias is -inf everywhere gets all-zero probabilities;
//   P = softmax(QK + bias) over the keys; Y = P @ V (3-D: heads merged back);
//   qk_matmul_output (output 3): QK (mode 0, 1), QK + bias (2), P (3).
// The causal and window biases are constants ([Sq, T]); the mask is a run-time input or a
// constant. nonpad_kv_seqlen (opset 24, int64 [B], a run-time input; not with a past cache):
// key j of batch b is attended only when j < L[b], and the causal / window frontier of query i
// is i + L[b] - Sq instead of i + past (the bias is then [B, 1, Sq, T], built from graph ops).
#include <cmath>
#include <limits>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "tensor_convert.h"
#include "tessera/graph/type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

// [B, S, H*D] -> [B, H, S, D]; 4-D inputs pass through.
Expr SplitHeads(NodeContext& ctx, int i, int64_t heads, const char* attr) {
  std::vector<int64_t> s = ctx.InputShape(i);
  if (s.size() == 4) return ctx.Input(i);
  if (heads < 1) ctx.Fail(std::string("3-D inputs need the attribute ") + attr);
  if (s[2] % heads != 0)
    ctx.Fail("hidden size " + std::to_string(s[2]) + " of input " + std::to_string(i) + " is not a multiple of " +
             attr + " = " + std::to_string(heads));
  return Transpose(ctx, Reshape(ctx, ctx.Input(i), {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

// [B, Hkv, T, D] -> [B, Hkv * reps, T, D], each head repeated reps times in place.
Expr RepeatHeads(NodeContext& ctx, Expr x, const std::vector<int64_t>& s, int64_t reps) {
  if (reps == 1) return x;
  x = ctx.Call("expand_dims", {x}, Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});
  x = ctx.Call("broadcast_to", {x}, Attrs{{"shape", std::vector<int64_t>{s[0], s[1], reps, s[2], s[3]}}});
  return Reshape(ctx, x, {s[0], s[1] * reps, s[2], s[3]});
}

void ConvertAttention(NodeContext& ctx) {
  const int64_t rank = ctx.InputType(0).ndim();
  if (rank != 3 && rank != 4) ctx.Fail("Q must be 3-D or 4-D, got rank " + std::to_string(rank));
  for (int i = 1; i <= 2; ++i)
    if (ctx.InputType(i).ndim() != rank) ctx.Fail("Q, K and V must have the same rank");
  const bool nonpad = ctx.NumInputs() > 6 && ctx.HasInput(6);
  if (ctx.HasInput(4) != ctx.HasInput(5)) ctx.Fail("past_key and past_value must be given together");
  if (nonpad && ctx.HasInput(4)) ctx.Fail("nonpad_kv_seqlen cannot be combined with past_key / past_value");
  if (nonpad && (ctx.InputType(6).ndim() != 1 || !ctx.InputType(6).dtype.is_int()))
    ctx.Fail("nonpad_kv_seqlen must be a 1-D integer tensor (one length per batch)");
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("Q must be a float tensor, got " + dt.str());

  Expr q = SplitHeads(ctx, 0, ctx.AttrInt("q_num_heads", 0), "q_num_heads");
  Expr k = SplitHeads(ctx, 1, ctx.AttrInt("kv_num_heads", 0), "kv_num_heads");
  Expr v = SplitHeads(ctx, 2, ctx.AttrInt("kv_num_heads", 0), "kv_num_heads");
  const std::vector<int64_t> qs = StaticShape(ctx, q);
  std::vector<int64_t> ks = StaticShape(ctx, k), vs = StaticShape(ctx, v);
  int64_t past = 0;
  if (ctx.HasInput(4)) {
    past = ctx.InputDim(4, 2, "past_key");
    k = Concat(ctx, {ctx.Input(4), k}, 2);
    v = Concat(ctx, {ctx.Input(5), v}, 2);
    ks[2] += past;
    vs[2] += past;
  }
  ctx.SetOutput(1, k);
  ctx.SetOutput(2, v);
  const int64_t hq = qs[1], hkv = ks[1], sq = qs[2], t = ks[2];
  if (hq % hkv != 0 || vs[1] != hkv)
    ctx.Fail("q heads (" + std::to_string(hq) + ") must be a multiple of the k / v heads (" + std::to_string(hkv) +
             ", " + std::to_string(vs[1]) + ")");
  k = RepeatHeads(ctx, k, ks, hq / hkv);
  v = RepeatHeads(ctx, v, vs, hq / hkv);

  const double scale = ctx.HasAttr("scale") ? ctx.AttrFloat("scale", 1.0f) : 1.0 / std::sqrt(double(qs[3]));
  Expr root = ctx.ScalarConst(static_cast<float>(std::sqrt(scale)), dt);
  Expr qk = ctx.Call("nn.matmul", {ctx.Call("multiply", {q, root}),
                                   Transpose(ctx, ctx.Call("multiply", {k, root}), {0, 1, 3, 2})});
  const double softcap = ctx.AttrFloat("softcap", 0.0f);
  if (softcap > 0) {
    Expr c = ctx.ScalarConst(softcap, dt);
    qk = ctx.Call("multiply", {ctx.Call("tanh", {ctx.Call("divide", {qk, c})}), c});
  }

  // The additive bias: mask, causal and sliding-window parts.
  const double neg_inf = -std::numeric_limits<double>::infinity();
  Expr bias;
  if (ctx.NumInputs() > 3 && ctx.HasInput(3)) {
    const graph::TensorTypeNode& mt = ctx.InputType(3);
    Expr m = ctx.Input(3);
    if (mt.dtype.is_bool()) m = ctx.Call("where", {m, ctx.ScalarConst(0, dt), ctx.ScalarConst(neg_inf, dt)});
    else if (mt.dtype != dt) ctx.Fail("attn_mask must be bool or " + dt.str() + ", got " + mt.dtype.str());
    std::vector<int64_t> ms = ctx.InputShape(3);
    if (ms.empty()) ctx.Fail("attn_mask must have rank >= 1");
    if (ms.back() < t) {  // fewer keys than the cache holds: the rest are masked
      std::vector<int64_t> before(ms.size(), 0), after(ms.size(), 0);
      after.back() = t - ms.back();
      m = ctx.Call("pad", {m}, Attrs{{"pad_before", before}, {"pad_after", after}, {"pad_value", neg_inf}});
    }
    bias = m;
  }
  const bool causal = ctx.AttrInt("is_causal", 0) != 0;
  const int64_t left = ctx.AttrInt("left_window_size", -1), right = ctx.AttrInt("right_window_size", -1);
  if (nonpad) {
    // Per-batch lengths L: padding (j < L[b]) and the causal / window frontier i + L[b] - Sq.
    const DataType i64 = DataType::Int(64);
    std::vector<int64_t> j_idx(t), i_idx(sq);
    for (int64_t j = 0; j < t; ++j) j_idx[j] = j;
    for (int64_t i = 0; i < sq; ++i) i_idx[i] = i - sq;
    Expr j = graph::ConstantNode::make(FromInts(j_idx, {1, 1, 1, t}, i64));
    Expr lens = Reshape(ctx, ctx.Call("cast", {ctx.Input(6)}, Attrs{{"dtype", i64.str()}}), {-1, 1, 1, 1});
    Expr frontier = ctx.Call("add", {graph::ConstantNode::make(FromInts(i_idx, {1, 1, sq, 1}, i64)), lens});
    Expr diff = ctx.Call("subtract", {frontier, j});  // [B, 1, Sq, T]: i + L - Sq - j
    Expr allowed = ctx.Call("less", {j, lens});
    auto both = [&](Expr a, Expr b) { return ctx.Call("logical_and", {std::move(a), std::move(b)}); };
    if (causal) allowed = both(allowed, ctx.Call("greater_equal", {diff, ctx.ScalarConst(0, i64)}));
    if (left >= 0) allowed = both(allowed, ctx.Call("less_equal", {diff, ctx.ScalarConst(double(left), i64)}));
    if (right >= 0)
      allowed = both(allowed, ctx.Call("greater_equal", {diff, ctx.ScalarConst(-double(right), i64)}));
    Expr c = ctx.Call("where", {allowed, ctx.ScalarConst(0, dt), ctx.ScalarConst(neg_inf, dt)});
    bias = bias ? ctx.Call("add", {bias, c}) : c;
  } else if (causal || left >= 0 || right >= 0) {
    std::vector<double> b(sq * t, 0.0);
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < t; ++j) {
        const int64_t diff = i + past - j;
        if ((causal && diff < 0) || (left >= 0 && diff > left) || (right >= 0 && -diff > right)) b[i * t + j] = neg_inf;
      }
    Expr c = graph::ConstantNode::make(FromDoubles(b, {sq, t}, dt));
    bias = bias ? ctx.Call("add", {bias, c}) : c;
  }
  Expr scores = bias ? ctx.Call("add", {qk, bias}) : qk;
  Expr p = ctx.Call("nn.softmax", {scores}, Attrs{{"axis", int64_t{-1}}});
  if (bias) {  // rows with no attendable key: all-zero probabilities
    Expr row_max = ctx.Call("max", {bias}, Attrs{{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}});
    Expr dead = ctx.Call("equal", {row_max, ctx.ScalarConst(neg_inf, dt)});
    p = ctx.Call("where", {dead, ctx.ScalarConst(0, dt), p});
  }
  const int64_t mode = ctx.AttrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.Fail("qk_matmul_output_mode must be 0..3, got " + std::to_string(mode));
  if (ctx.node().output_size() > 3 && !ctx.node().output(3).empty())
    ctx.SetOutput(3, mode == 3 ? p : mode == 2 ? scores : qk);

  Expr y = ctx.Call("nn.matmul", {p, v});
  if (rank == 3) y = Reshape(ctx, Transpose(ctx, y, {0, 2, 1, 3}), {qs[0], sq, hq * vs[3]});
  ctx.SetOutput(0, y);
}

// FlexAttention-1 (ai.onnx.preview; the spec's function body): Q [B, Hq, L, E], K [B, Hkv, S, E],
// V [B, Hkv, S, Ev]; K / V heads repeated in contiguous groups when Hq is a multiple of Hkv;
// scores = (Q * sqrt(scale)) @ (K * sqrt(scale))^T, scale default 1 / sqrt(E); then in the softmax
// precision (float32 for 16-bit inputs, else the input's type; attr softmax_precision overrides):
// scores = score_mod(scores) (a subgraph over the whole [B, Hq, L, S] tensor), P = softmax(scores)
// over S, P = prob_mod(P), Y = P @ V, cast back to the input's type.
void ConvertFlexAttention(NodeContext& ctx) {
  for (int i = 0; i < 3; ++i)
    if (ctx.InputType(i).ndim() != 4) ctx.Fail("Q, K and V must be rank-4 tensors (input " + std::to_string(i) + ")");
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("Q must be a float tensor, got " + dt.str());
  if (ctx.InputType(1).dtype != dt || ctx.InputType(2).dtype != dt) ctx.Fail("Q, K and V must have one dtype");
  const std::vector<int64_t> qs = ctx.InputShape(0), ks = ctx.InputShape(1), vs = ctx.InputShape(2);
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] || vs[2] != ks[2])
    ctx.Fail("shapes do not fit: Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev]");
  if (qs[1] % ks[1] != 0)
    ctx.Fail("q heads (" + std::to_string(qs[1]) + ") must be a multiple of the k / v heads (" + std::to_string(ks[1]) +
             ")");
  const int64_t reps = qs[1] / ks[1];
  Expr k = RepeatHeads(ctx, ctx.Input(1), ks, reps), v = RepeatHeads(ctx, ctx.Input(2), vs, reps);
  const double scale = ctx.HasAttr("scale") ? ctx.AttrFloat("scale", 1.0f) : 1.0 / std::sqrt(double(qs[3]));
  Expr root = ctx.ScalarConst(static_cast<float>(std::sqrt(scale)), dt);
  Expr scores = ctx.Call("nn.matmul", {ctx.Call("multiply", {ctx.Input(0), root}),
                                       Transpose(ctx, ctx.Call("multiply", {k, root}), {0, 1, 3, 2})});
  const DataType precision =
      ctx.HasAttr("softmax_precision")
          ? DataTypeFromONNX(static_cast<int>(ctx.AttrInt("softmax_precision")), ctx.Where() + ": softmax_precision")
          : (dt.bits() == 16 ? DataType::Float(32) : dt);
  if (!precision.is_floating()) ctx.Fail("softmax_precision must be a float type, got " + precision.str());
  auto cast = [&](Expr e, DataType to) {
    return to == dt && to == precision ? e : ctx.Call("cast", {std::move(e)}, Attrs{{"dtype", to.str()}});
  };
  if (precision != dt) scores = cast(scores, precision);
  auto modify = [&](const char* attr, Expr x) {
    if (!ctx.HasAttr(attr)) return x;
    std::vector<Value> out = ctx.ImportSubgraph(ctx.AttrGraph(attr), {ValueOf(x)});
    if (out.size() != 1) ctx.Fail(std::string(attr) + " must have one output, got " + std::to_string(out.size()));
    Expr y = ExprOf(out[0]);
    if (!graph::StructuralEqual(y->checked_type(), x->checked_type()))
      ctx.Fail(std::string(attr) + " must keep its input's type " + x->checked_type()->str() + ", got " +
               y->checked_type()->str());
    return y;
  };
  scores = modify("score_mod", scores);
  Expr p = modify("prob_mod", ctx.Call("nn.softmax", {scores}, Attrs{{"axis", int64_t{-1}}}));
  if (precision != dt) v = cast(v, precision);
  Expr y = ctx.Call("nn.matmul", {p, v});
  if (precision != dt) y = cast(y, dt);
  ctx.SetOutput(0, y);
}

}  // namespace

void RegisterAttentionConverters(ConverterTable& t) {
  t["Attention"] = ConvertAttention;
  t[ConverterKey("ai.onnx.preview", "FlexAttention")] = ConvertFlexAttention;
}

}  // namespace tessera::frontend::onnx_import
