// ONNX TensorScatter-24 (KV-cache update) and SwiGLU-28 (a gated activation used with it in decoders), composed from graph ops.
//
// TensorScatter: past [B, .., M, ..] (M at `axis`), update [B, .., S, ..] (S <= M), write_indices
// [B] (default 0). For cache position m of batch b, with w = write_indices[b]:
//   linear:   j = m - w;         circular: j = (m - w) mod M
//   present[.., m, ..] = (0 <= j < S) ? update[.., j, ..] : past[.., m, ..]
// (Linear writes past M are dropped, where the reference implementation would index out of
// bounds.) Spec: onnx.defs.get_schema("TensorScatter").doc, onnx/reference/ops/op_tensor_scatter.py.
//
// SwiGLU: Y = A * sigmoid(alpha * A) * B, A and B of one shape (no broadcasting).
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertTensorScatter(NodeContext& ctx) {
  const std::vector<int64_t> ps = ctx.InputShape(0), us = ctx.InputShape(1);
  const int64_t rank = static_cast<int64_t>(ps.size());
  if (rank < 2) ctx.Fail("past_cache must have rank >= 2 (batch and sequence), got rank " + std::to_string(rank));
  int64_t axis = ctx.AttrInt("axis", -2);
  if (axis < -rank || axis >= rank) ctx.Fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  if (axis == 0) ctx.Fail("axis must not be the batch axis 0");
  const std::string mode = ctx.AttrString("mode", "linear");
  if (mode != "linear" && mode != "circular") ctx.Fail("unknown mode '" + mode + "' (linear, circular)");
  if (static_cast<int64_t>(us.size()) != rank) ctx.Fail("update must have the rank of past_cache");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis ? us[d] != ps[d] : us[d] > ps[d])
      ctx.Fail("update must match past_cache except along axis, where it must not be longer; dim " +
               std::to_string(d) + ": " + std::to_string(us[d]) + " vs " + std::to_string(ps[d]));
  if (ctx.InputType(1).dtype != ctx.InputType(0).dtype) ctx.Fail("update must have past_cache's element type");
  const int64_t m = ps[axis], s = us[axis];
  if (s == 0) return ctx.SetOutput(0, ctx.Input(0));
  const DataType i64 = DataType::Int(64);
  std::vector<int64_t> pos_shape(rank, 1), iota(m);
  pos_shape[axis] = m;
  for (int64_t i = 0; i < m; ++i) iota[i] = i;
  Expr j = graph::ConstantNode::make(FromInts(iota, pos_shape, i64));
  if (ctx.HasInput(2)) {
    const graph::TensorTypeNode& wt = ctx.InputType(2);
    if (!wt.dtype.is_int() || wt.ndim() != 1) ctx.Fail("write_indices must be a 1-D integer tensor [batch]");
    std::vector<int64_t> w_shape(rank, 1);
    w_shape[0] = ps[0];
    Expr w = ctx.Input(2);
    if (wt.dtype != i64) w = ctx.Call("cast", {w}, Attrs{{"dtype", std::string("int64")}});
    j = ctx.Call("subtract", {j, Reshape(ctx, w, w_shape)});
  }
  if (mode == "circular") j = ctx.Call("mod", {j, ctx.ScalarConst(static_cast<double>(m), i64)}, Attrs{{"fmod", int64_t{0}}});
  Expr valid = ctx.Call("logical_and", {ctx.Call("greater_equal", {j, ctx.ScalarConst(0, i64)}),
                                        ctx.Call("less", {j, ctx.ScalarConst(static_cast<double>(s), i64)})});
  Expr idx = ctx.Call("clip", {j}, Attrs{{"a_min", 0.0}, {"a_max", static_cast<double>(s - 1)}});
  std::vector<int64_t> idx_shape = us;
  idx_shape[axis] = m;
  idx = ctx.Call("broadcast_to", {idx}, Attrs{{"shape", idx_shape}});
  Expr picked = ctx.Call("gather_elements", {ctx.Input(1), idx}, Attrs{{"axis", axis}});  // [.., M, ..]
  ctx.SetOutput(0, ctx.Call("where", {valid, picked, ctx.Input(0)}));
}

void ConvertSwiGLU(NodeContext& ctx) {
  const graph::TensorTypeNode& a = ctx.InputType(0);
  if (!a.dtype.is_float()) ctx.Fail("A must be a float tensor, got " + a.dtype.str());
  if (ctx.InputShape(0) != ctx.InputShape(1) || ctx.InputType(1).dtype != a.dtype)
    ctx.Fail("A and B must have one shape and element type (SwiGLU does not broadcast)");
  const double alpha = ctx.AttrFloat("alpha", 1.0f);
  Expr x = ctx.Input(0);
  Expr gate = ctx.Call("sigmoid", {alpha == 1.0 ? x : ctx.Call("multiply", {x, ctx.ScalarConst(alpha, a.dtype)})});
  ctx.SetOutput(0, ctx.Call("multiply", {ctx.Call("multiply", {x, gate}), ctx.Input(1)}));
}

}  // namespace

void RegisterTensorScatterConverters(ConverterTable& t) {
  t["TensorScatter"] = ConvertTensorScatter;
  t["SwiGLU"] = ConvertSwiGLU;
}

}  // namespace tessera::frontend::onnx_import
