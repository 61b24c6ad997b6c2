// ONNX LinearAttention-27 (linear / gated / delta / gated_delta recurrences with GQA), composed
// and unrolled over the static sequence length T. Spec: onnx.defs.get_schema("LinearAttention")
// .doc; reference onnx/reference/ops/op_linear_attention.py (float32 state and arithmetic).
//
//   query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv] -> heads [B, H, T, d];
//   state S [B, Hkv, dk, dv] (past_state, default 0); decay [B, T, Hkv | Hkv*dk] (log space,
//   gated modes), beta [B, T, Hkv | 1] (delta modes). For t = 0 .. T-1:
//     gated:  S *= exp(g_t)                       (per head or per key dim, broadcast over dv)
//     delta:  v_t = beta_t * (v_t - k_t^T S)      (after the decay)
//     S += k_t v_t^T;   o_t = scale * q_t^T S     (query head h reads KV head h / (Hq / Hkv))
//   output [B, T, Hq*dv]; present_state = S (past_state's type, else query's).
// scale 0 (default) means 1 / sqrt(dk). chunk_size is a tuning hint and is ignored.
#include <cmath>

#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

constexpr int64_t kMaxUnrolledSteps = 512;

void ConvertLinearAttention(NodeContext& ctx) {
  const std::vector<int64_t> qs = ctx.InputShape(0), ks = ctx.InputShape(1), vs = ctx.InputShape(2);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("query must be a float tensor, got " + dt.str());
  if (qs.size() != 3 || ks.size() != 3 || vs.size() != 3) ctx.Fail("query, key and value must be [B, T, H*D]");
  const int64_t hq = ctx.AttrInt("q_num_heads"), hkv = ctx.AttrInt("kv_num_heads");
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    ctx.Fail("q_num_heads (" + std::to_string(hq) + ") must be a positive multiple of kv_num_heads (" +
             std::to_string(hkv) + ")");
  const int64_t b = qs[0], t = qs[1];
  if (qs[2] % hq != 0 || vs[2] % hkv != 0) ctx.Fail("the packed head dims must divide by the head counts");
  const int64_t dk = qs[2] / hq, dv = vs[2] / hkv, group = hq / hkv;
  if (ks != std::vector<int64_t>{b, t, hkv * dk} || vs[0] != b || vs[1] != t)
    ctx.Fail("key must be [B, T, kv_num_heads * dk] and value [B, T, kv_num_heads * dv]");
  if (t > kMaxUnrolledSteps)
    ctx.Unsupported("LinearAttention is unrolled over the sequence; T = " + std::to_string(t) + " exceeds " +
                    std::to_string(kMaxUnrolledSteps));
  const std::string rule = ctx.AttrString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    ctx.Fail("unknown update_rule '" + rule + "' (linear, gated, delta, gated_delta)");
  const bool gating = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (gating != ctx.HasInput(4)) ctx.Fail("update_rule '" + rule + (gating ? "' needs" : "' forbids") + " the decay input");
  if (delta != ctx.HasInput(5)) ctx.Fail("update_rule '" + rule + (delta ? "' needs" : "' forbids") + " the beta input");
  double scale = ctx.AttrFloat("scale", 0.0f);
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(dk));
  const DataType f32 = DataType::Float(32);
  auto to_f32 = [&](Expr e, DataType from) {
    return from == f32 ? e : ctx.Call("cast", {e}, Attrs{{"dtype", std::string("float32")}});
  };
  auto heads = [&](int i, int64_t h, int64_t d) {  // [B, T, H*d] -> [B, H, T, d] in float32
    return Transpose(ctx, Reshape(ctx, to_f32(ctx.Input(i), ctx.InputType(i).dtype), {b, t, h, d}), {0, 2, 1, 3});
  };
  Expr q = heads(0, hq, dk), k = heads(1, hkv, dk), v = heads(2, hkv, dv);
  Expr decay, beta;
  int64_t decay_last = 0;
  if (gating) {
    const std::vector<int64_t> ds = ctx.InputShape(4);
    decay_last = ds.size() == 3 ? ds[2] : -1;
    if (ds.size() != 3 || ds[0] != b || ds[1] != t || (decay_last != hkv && decay_last != hkv * dk))
      ctx.Fail("decay must be [B, T, kv_num_heads] or [B, T, kv_num_heads * dk]");
    const int64_t per = decay_last / hkv;
    decay = Transpose(ctx, Reshape(ctx, to_f32(ctx.Input(4), ctx.InputType(4).dtype), {b, t, hkv, per}), {0, 2, 1, 3});
  }
  int64_t beta_heads = 0;
  if (delta) {
    const std::vector<int64_t> bs = ctx.InputShape(5);
    beta_heads = bs.size() == 3 ? bs[2] : -1;
    if (bs.size() != 3 || bs[0] != b || bs[1] != t || (beta_heads != hkv && beta_heads != 1))
      ctx.Fail("beta must be [B, T, kv_num_heads] or [B, T, 1]");
    beta = Transpose(ctx, Reshape(ctx, to_f32(ctx.Input(5), ctx.InputType(5).dtype), {b, t, beta_heads, 1}), {0, 2, 1, 3});
  }
  Expr state;
  DataType state_type = dt;
  if (ctx.HasInput(3)) {
    if (ctx.InputShape(3) != std::vector<int64_t>{b, hkv, dk, dv}) ctx.Fail("past_state must be [B, kv_num_heads, dk, dv]");
    state_type = ctx.InputType(3).dtype;
    state = to_f32(ctx.Input(3), state_type);
  } else {
    state = ctx.Call("broadcast_to", {ctx.ScalarConst(0, f32)}, Attrs{{"shape", std::vector<int64_t>{b, hkv, dk, dv}}});
  }
  std::vector<Expr> outs;
  for (int64_t i = 0; i < t; ++i) {
    Expr k_t = SliceAxis(ctx, k, 2, i, i + 1), v_t = SliceAxis(ctx, v, 2, i, i + 1);  // [B, Hkv, 1, d]
    if (gating) {
      Expr g = Reshape(ctx, SliceAxis(ctx, decay, 2, i, i + 1), {b, hkv, decay_last / hkv, 1});
      state = ctx.Call("multiply", {state, ctx.Call("exp", {g})});
    }
    if (delta) {
      Expr retrieved = ctx.Call("nn.matmul", {k_t, state});  // [B, Hkv, 1, dv]
      v_t = ctx.Call("multiply", {SliceAxis(ctx, beta, 2, i, i + 1), ctx.Call("subtract", {v_t, retrieved})});
    }
    state = ctx.Call("add", {state, ctx.Call("multiply", {Reshape(ctx, k_t, {b, hkv, dk, 1}), v_t})});
    Expr q_t = Reshape(ctx, SliceAxis(ctx, q, 2, i, i + 1), {b, hkv, group, dk});
    Expr o = ctx.Call("multiply", {ctx.Call("nn.matmul", {q_t, state}), ctx.ScalarConst(scale, f32)});  // [B, Hkv, g, dv]
    outs.push_back(Reshape(ctx, o, {b, 1, hq * dv}));
  }
  Expr out = outs.size() == 1 ? outs[0] : Concat(ctx, outs, 1);  // [B, T, Hq*dv]
  if (dt != f32) out = ctx.Call("cast", {out}, Attrs{{"dtype", dt.str()}});
  ctx.SetOutput(0, out);
  ctx.CheckMaxOutputs(2, "LinearAttention has two outputs (output, present_state)");
  if (ctx.node().output_size() > 1 && !ctx.node().output(1).empty())
    ctx.SetOutput(1, state_type == f32 ? state : ctx.Call("cast", {state}, Attrs{{"dtype", state_type.str()}}));
}

}  // namespace

void RegisterLinearAttentionConverters(ConverterTable& t) { t["LinearAttention"] = ConvertLinearAttention; }

}  // namespace tessera::frontend::onnx_import
