// ONNX RotaryEmbedding-23 (rotary position embeddings, RoFormer, arXiv 2104.09864) as graph ops,
// following the spec's reference implementation:
//   x [B, H, S, D] or [B, S, H*D] (num_heads); the first rotary_embedding_dim (default D) of
//   each head are rotated, the rest pass through; cos / sin = cache[position_ids] ([max_pos,
//   R/2] caches) or the caches themselves ([B, S, R/2]); with x1, x2 the two halves of the
//   rotated part (interleaved: its even and odd elements),
//     out1 = cos * x1 - sin * x2,   out2 = sin * x1 + cos * x2
//   written back as halves (or interleaved pairs).
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertRotaryEmbedding(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_floating()) ctx.Fail("input must be a float tensor, got " + dt.str());
  if (xs.size() != 3 && xs.size() != 4) ctx.Fail("input must be 3-D [B, S, H*D] or 4-D [B, H, S, D]");
  // Work in [B, S, H, D].
  Expr x = ctx.Input(0);
  int64_t b = xs[0], s, h, d;
  if (xs.size() == 4) {
    h = xs[1], s = xs[2], d = xs[3];
    x = ctx.Call("transpose", {x}, Attrs{{"axes", std::vector<int64_t>{0, 2, 1, 3}}});
  } else {
    h = ctx.AttrInt("num_heads", 0);
    if (h <= 0 || xs[2] % h != 0) ctx.Fail("3-D input needs num_heads dividing its hidden size " + std::to_string(xs[2]));
    s = xs[1], d = xs[2] / h;
    x = Reshape(ctx, x, {b, s, h, d});
  }
  int64_t r = ctx.AttrInt("rotary_embedding_dim", 0);
  if (r == 0) r = d;
  if (r < 2 || r > d || r % 2 != 0) ctx.Fail("rotary_embedding_dim " + std::to_string(r) + " must be even and <= the head size " + std::to_string(d));
  const int64_t half = r / 2;
  Expr cos = ctx.Input(1), sin = ctx.Input(2);
  if (ctx.NumInputs() > 3 && ctx.HasInput(3)) {
    cos = ctx.Call("take", {cos, ctx.Input(3)}, Attrs{{"axis", int64_t{0}}});
    sin = ctx.Call("take", {sin, ctx.Input(3)}, Attrs{{"axis", int64_t{0}}});
  }
  const std::vector<int64_t> cs = StaticShape(ctx, cos);
  if (cs.size() != 3 || cs[2] != half)
    ctx.Fail("the cos / sin caches must give [B, S, " + std::to_string(half) + "] (rotary_embedding_dim / 2)");
  cos = ctx.Call("expand_dims", {cos}, Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});
  sin = ctx.Call("expand_dims", {sin}, Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});

  const bool interleaved = ctx.AttrInt("interleaved", 0) != 0;
  Expr rot = r == d ? x : SliceAxis(ctx, x, 3, 0, r);
  Expr x1 = interleaved ? SliceAxis(ctx, rot, 3, 0, r, 2) : SliceAxis(ctx, rot, 3, 0, half);
  Expr x2 = interleaved ? SliceAxis(ctx, rot, 3, 1, r, 2) : SliceAxis(ctx, rot, 3, half, r);
  Expr real = ctx.Call("subtract", {ctx.Call("multiply", {cos, x1}), ctx.Call("multiply", {sin, x2})});
  Expr imag = ctx.Call("add", {ctx.Call("multiply", {sin, x1}), ctx.Call("multiply", {cos, x2})});
  if (interleaved) {
    auto pair = [&](Expr e) { return ctx.Call("expand_dims", {e}, Attrs{{"axis", int64_t{4}}, {"num_newaxis", int64_t{1}}}); };
    rot = Reshape(ctx, Concat(ctx, {pair(real), pair(imag)}, 4), {b, s, h, r});
  } else {
    rot = Concat(ctx, {real, imag}, 3);
  }
  Expr out = r == d ? rot : Concat(ctx, {rot, SliceAxis(ctx, x, 3, r, d)}, 3);
  if (xs.size() == 4) out = ctx.Call("transpose", {out}, Attrs{{"axes", std::vector<int64_t>{0, 2, 1, 3}}});
  else out = Reshape(ctx, out, xs);
  ctx.SetOutput(0, out);
}

}  // namespace

void RegisterRotaryConverters(ConverterTable& t) { t["RotaryEmbedding"] = ConvertRotaryEmbedding; }

}  // namespace tessera::frontend::onnx_import
