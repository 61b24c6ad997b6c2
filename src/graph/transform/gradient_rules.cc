// The gradient rules of Gradient (gradient.h): for each op, the adjoints of its arguments from the
// adjoint g of its result (reverse mode). One table (Rules() below), as TVM's FPrimalGradient.
// Notation: x, a, b the arguments, y the call's result, g its adjoint.
#include "gradient_rules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "pass_util.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/shape_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform::detail {

namespace {

using Ints = std::vector<int64_t>;

// ---- typed builders ----------------------------------------------------------------------

Expr Typed(Expr e) {
  InferExprType(e);
  return e;
}
Expr Op(const char* name, std::vector<Expr> args, Attrs attrs = {}) {
  return Typed(CallOp(name, std::move(args), std::move(attrs)));
}
const TensorTypeNode& TT(const Expr& e) {
  const TensorTypeNode* t = TensorTypeOf(e);
  if (!t) TESSERA_THROW(InternalError, "Gradient: expected a typed tensor expression");
  return *t;
}
int64_t Rank(const Expr& e) { return TT(e).ndim(); }
/// A scalar constant of `like`'s dtype.
Expr K(double v, const Expr& like) { return Typed(ScalarConstant(v, TT(like).dtype)); }
Expr Add(Expr a, Expr b) { return Op("add", {std::move(a), std::move(b)}); }
Expr Sub(Expr a, Expr b) { return Op("subtract", {std::move(a), std::move(b)}); }
Expr Mul(Expr a, Expr b) { return Op("multiply", {std::move(a), std::move(b)}); }
Expr Div(Expr a, Expr b) { return Op("divide", {std::move(a), std::move(b)}); }
Expr Neg(Expr a) { return Op("negative", {std::move(a)}); }
Expr Unary(const char* op, Expr a) { return Op(op, {std::move(a)}); }
Expr Square(const Expr& a) { return Mul(a, a); }
Expr Where(Expr c, Expr a, Expr b) { return Op("where", {std::move(c), std::move(a), std::move(b)}); }
Expr Cmp(const char* op, Expr a, Expr b) { return Op(op, {std::move(a), std::move(b)}); }
/// g where `cond`, else 0 (cond broadcasts against g).
Expr Mask(Expr cond, const Expr& g) { return Where(std::move(cond), g, K(0, g)); }
Expr Sum(Expr x, Ints axes, bool keepdims, bool exclude = false) {
  return Op("sum", {std::move(x)},
            Attrs{{"axis", std::move(axes)}, {"keepdims", int64_t{keepdims}}, {"exclude", int64_t{exclude}}});
}
Expr Transpose(Expr x, Ints axes) { return Op("transpose", {std::move(x)}, Attrs{{"axes", std::move(axes)}}); }
Expr Squeeze(Expr x, Ints axes) { return Op("squeeze", {std::move(x)}, Attrs{{"axis", std::move(axes)}}); }
Expr ExpandDims(Expr x, int64_t axis) {
  return Op("expand_dims", {std::move(x)}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
}

Ints StaticOrThrow(const Shape& shape, const std::string& op) {
  std::optional<Ints> s = StaticShape(shape);
  if (!s)
    TESSERA_THROW(UnsupportedError, "Gradient through op ", op, " needs static shapes, got ", ShapeStr(shape));
  return *s;
}

/// x reshaped to `shape` (its element count): static extents, symbolic dims named by the reshape's
/// "symbols" attr.
Expr ReshapeTo(const Expr& x, const Shape& shape) {
  if (TT(x).shape == shape) return x;
  Ints newshape;
  std::string symbols;
  for (const Dim& d : shape) {
    if (d.is_static()) {
      newshape.push_back(d.value());
    } else {
      newshape.push_back(-1);
      symbols += (symbols.empty() ? "" : ",") + d.name();
    }
  }
  Attrs attrs{{"newshape", newshape}};
  if (!symbols.empty()) attrs.Set("symbols", symbols);
  return Op("reshape", {x}, attrs);
}

/// g (of a broadcast result's shape) summed over the axes broadcasting added or stretched, to
/// `target` (Relay's collapse_sum_like): leading axes are summed away, axes of extent 1 in target
/// summed with keepdims.
Expr CollapseSumTo(const Expr& g, const Shape& target) {
  const Shape& out = TT(g).shape;
  if (out == target) return g;
  if (out.size() < target.size())
    TESSERA_THROW(InternalError, "Gradient: cannot collapse ", ShapeStr(out), " to ", ShapeStr(target));
  const int64_t lead = static_cast<int64_t>(out.size() - target.size());
  Ints stretched;  // axes of target (after the leading ones) where target has 1 and g more
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& o = out[lead + i];
    if (target[i] == o) continue;
    if (!target[i].is_static() || target[i].value() != 1)
      TESSERA_THROW(InternalError, "Gradient: cannot collapse ", ShapeStr(out), " to ", ShapeStr(target));
    stretched.push_back(static_cast<int64_t>(i));
  }
  Expr r = g;
  if (lead > 0) {
    Ints leading(lead);
    std::iota(leading.begin(), leading.end(), 0);
    r = Sum(r, leading, false);
  }
  if (!stretched.empty()) r = Sum(r, stretched, true);
  return ReshapeTo(r, target);
}
Expr CollapseSumLike(const Expr& g, const Expr& like) { return CollapseSumTo(g, TT(like).shape); }

/// The axes a reduction (sum / mean / max / min: attrs axis, keepdims, exclude) reduces, ascending.
Ints ReducedAxes(const Call& call) {
  const int64_t n = Rank(call->args[0]);
  Ints listed = call->attrs.GetInts("axis", {});
  const bool exclude = call->attrs.GetInt("exclude", 0) != 0;
  std::vector<bool> in(n, false);
  for (int64_t a : listed) in[a < 0 ? a + n : a] = true;
  Ints axes;
  for (int64_t i = 0; i < n; ++i)
    if (listed.empty() ? !exclude : in[i] != exclude) axes.push_back(i);
  return axes;
}

/// A reduction's result (or its adjoint) with the reduced axes back as extents of 1.
Expr KeepDims(const Call& call, Expr r) {
  if (call->attrs.GetInt("keepdims", 0) != 0) return r;
  for (int64_t a : ReducedAxes(call)) r = ExpandDims(r, a);
  return r;
}

Expr BroadcastTo(const Expr& x, const Expr& like, const std::string& op) {
  if (TT(x).shape == TT(like).shape) return x;
  return Op("broadcast_to", {x}, Attrs{{"shape", StaticOrThrow(TT(like).shape, op)}});
}

/// Transposes the last two axes.
Expr SwapLast2(const Expr& x) {
  const int64_t r = Rank(x);
  Ints axes(r);
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[r - 1], axes[r - 2]);
  return Transpose(x, axes);
}

// ---- rule shapes ---------------------------------------------------------------------------

/// A rule of an op of one tensor argument: gx from (call, x, y, g).
using UnaryFn = std::function<Expr(const Call& call, const Expr& x, const Expr& y, const Expr& g)>;
GradientRule UnaryRule(UnaryFn fn) {
  return [fn](const Call& call, const Expr& g, const std::vector<bool>&) -> std::vector<Expr> {
    return {fn(call, call->args[0], call, g)};  // y is the call itself (exp, tanh, sigmoid reuse it)
  };
}

/// A rule of a numpy-broadcasting binary op: ga, gb at the result's shape, then collapsed to each
/// operand's shape. Only the needed ones are computed.
using BinaryFn = std::function<Expr(const Expr& a, const Expr& b, const Expr& y, const Expr& g)>;
GradientRule BroadcastRule(BinaryFn fa, BinaryFn fb) {
  return [fa, fb](const Call& call, const Expr& g, const std::vector<bool>& needs) -> std::vector<Expr> {
    const Expr& a = call->args[0];
    const Expr& b = call->args[1];
    std::vector<Expr> out(2);
    if (needs[0]) out[0] = CollapseSumLike(fa(a, b, call, g), a);
    if (needs[1]) out[1] = CollapseSumLike(fb(a, b, call, g), b);
    return out;
  };
}

// ---- rules of ops that are not elementwise ----------------------------------------------

std::vector<Expr> DenseGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  // y[..., n] = sum_k x[..., k] w[n, k]
  const Expr& x = call->args[0];
  const Expr& w = call->args[1];
  std::vector<Expr> out(2);
  if (needs[0]) out[0] = Op("nn.matmul", {g, w});  // [..., N] @ [N, K]
  if (needs[1]) {
    const int64_t n = StaticOrThrow({TT(w).shape[0]}, "nn.dense")[0];
    const int64_t k = StaticOrThrow({TT(w).shape[1]}, "nn.dense")[0];
    Expr gf = Op("reshape", {g}, Attrs{{"newshape", Ints{-1, n}}});
    Expr xf = Op("reshape", {x}, Attrs{{"newshape", Ints{-1, k}}});
    out[1] = Op("nn.matmul", {Transpose(gf, {1, 0}), xf});  // [N, M] @ [M, K]
  }
  return out;
}

std::vector<Expr> MatmulGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  // numpy.matmul: 1-D operands promoted ([K] -> [1, K] / [K, 1]) and the promoted dim dropped.
  const Expr& a = call->args[0];
  const Expr& b = call->args[1];
  const bool a_vec = Rank(a) == 1, b_vec = Rank(b) == 1;
  Expr a2 = a_vec ? ExpandDims(a, 0) : a;
  Expr b2 = b_vec ? ExpandDims(b, 1) : b;
  Expr g2 = g;
  if (a_vec) g2 = ExpandDims(g2, Rank(g2) - (b_vec ? 0 : 1));
  if (b_vec) g2 = ExpandDims(g2, Rank(g2));
  std::vector<Expr> out(2);
  if (needs[0]) {
    Expr ga = CollapseSumLike(Op("nn.matmul", {g2, SwapLast2(b2)}), a2);  // [.., M, N] @ [.., N, K]
    out[0] = a_vec ? Squeeze(ga, {0}) : ga;
  }
  if (needs[1]) {
    Expr gb = CollapseSumLike(Op("nn.matmul", {SwapLast2(a2), g2}), b2);  // [.., K, M] @ [.., M, N]
    out[1] = b_vec ? Squeeze(gb, {1}) : gb;
  }
  return out;
}

std::vector<Expr> BatchMatmulGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  // y = A @ B, A = ta ? x^T : x, B = tb ? w^T : w (per batch); bmm(p, q, ta, tb) = op(p) @ op(q).
  const Expr& x = call->args[0];
  const Expr& w = call->args[1];
  const bool ta = call->attrs.GetInt("transpose_a", 0) != 0, tb = call->attrs.GetInt("transpose_b", 1) != 0;
  auto bmm = [](const Expr& p, const Expr& q, bool pa, bool pb) {
    return Op("nn.batch_matmul", {p, q}, Attrs{{"transpose_a", int64_t{pa}}, {"transpose_b", int64_t{pb}}});
  };
  std::vector<Expr> out(2);
  if (needs[0]) {
    // dA = g B^T; dx = ta ? dA^T = B g^T : dA
    Expr gx = ta ? bmm(w, g, tb, true) : bmm(g, w, false, !tb);
    out[0] = CollapseSumLike(gx, x);
  }
  if (needs[1]) {
    // dB = A^T g; dw = tb ? dB^T = g^T A : dB
    Expr gw = tb ? bmm(g, x, true, ta) : bmm(x, g, !ta, false);
    out[1] = CollapseSumLike(gw, w);
  }
  return out;
}

std::vector<Expr> BiasAddGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  const int64_t n = Rank(call->args[0]);
  int64_t axis = call->attrs.GetInt("axis", 1);
  if (axis < 0) axis += n;
  std::vector<Expr> out(2);
  if (needs[0]) out[0] = g;
  if (needs[1]) out[1] = n == 1 ? g : Sum(g, {axis}, false, true);  // every axis but the bias's
  return out;
}

std::vector<Expr> SumGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  return {BroadcastTo(KeepDims(call, g), call->args[0], "sum")};
}

std::vector<Expr> MeanGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  const Ints shape = StaticOrThrow(TT(call->args[0]).shape, "mean");
  int64_t count = 1;
  for (int64_t a : ReducedAxes(call)) count *= shape[a];
  Expr scaled = Div(KeepDims(call, g), K(static_cast<double>(std::max<int64_t>(count, 1)), g));
  return {BroadcastTo(scaled, call->args[0], "mean")};
}

/// max / min over axes: the adjoint goes to the elements equal to the result, shared evenly by ties.
std::vector<Expr> ExtremumGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  const Expr& x = call->args[0];
  Expr y = KeepDims(call, call);
  Expr hit = Op("cast", {Cmp("equal", x, y)}, Attrs{{"dtype", TT(x).dtype.str()}});
  Expr ties = Sum(hit, ReducedAxes(call), true);
  return {Mul(Div(KeepDims(call, g), ties), hit)};
}

std::vector<Expr> ReshapeGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  return {ReshapeTo(g, TT(call->args[0]).shape)};
}

std::vector<Expr> TransposeGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  const int64_t n = Rank(call->args[0]);
  Ints axes = call->attrs.GetInts("axes", {});
  if (axes.empty()) return {Transpose(g, {})};  // reversing is its own inverse
  Ints inverse(n);
  for (int64_t i = 0; i < n; ++i) inverse[axes[i] < 0 ? axes[i] + n : axes[i]] = i;
  return {Transpose(g, inverse)};
}

std::vector<Expr> ExpandDimsGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  const int64_t n = Rank(call->args[0]);
  int64_t axis = call->attrs.GetInt("axis");
  if (axis < 0) axis += n + 1;
  const int64_t k = call->attrs.GetInt("num_newaxis", 1);
  if (k == 0) return {g};
  Ints axes(k);
  std::iota(axes.begin(), axes.end(), axis);
  return {Squeeze(g, axes)};
}

std::vector<Expr> BroadcastToGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  return {CollapseSumLike(g, call->args[0])};
}

std::vector<Expr> StridedSliceGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  // x[begin:begin+extent] along each sliced axis (stride 1): g padded back with zeros.
  const Expr& x = call->args[0];
  const Ints shape = StaticOrThrow(TT(x).shape, "strided_slice");
  const int64_t n = static_cast<int64_t>(shape.size());
  const Ints& begin = call->attrs.GetInts("begin");
  const Ints& end = call->attrs.GetInts("end");
  Ints strides = call->attrs.GetInts("strides", Ints(begin.size(), 1));
  if (strides.size() == 1 && begin.size() > 1) strides.assign(begin.size(), strides[0]);
  Ints axes = call->attrs.GetInts("axes", {});
  if (axes.empty())
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  Ints before(n, 0), after(n, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + n : axes[i];
    if (strides[i] != 1)
      TESSERA_THROW(UnsupportedError, "Gradient through op strided_slice is supported for stride 1 only, got stride ",
                    strides[i], " on axis ", a);
    SliceRange r = NormalizeSlice(shape[a], begin[i], end[i], strides[i]);
    before[a] = r.begin;
    after[a] = shape[a] - r.begin - r.extent;
  }
  return {Op("pad", {g}, Attrs{{"pad_before", before}, {"pad_after", after}, {"mode", "constant"}, {"pad_value", 0.0}})};
}

std::vector<Expr> PadGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  if (call->attrs.GetString("mode", "constant") != "constant")
    TESSERA_THROW(UnsupportedError, "Gradient through op pad is supported for mode constant only, got mode ",
                  call->attrs.GetString("mode"));
  // The padding (negative amounts crop) undone: pad by the negated amounts.
  Ints before = call->attrs.GetInts("pad_before"), after = call->attrs.GetInts("pad_after");
  for (int64_t& v : before) v = -v;
  for (int64_t& v : after) v = -v;
  return {Op("pad", {g}, Attrs{{"pad_before", before}, {"pad_after", after}, {"mode", "constant"}, {"pad_value", 0.0}})};
}

std::vector<Expr> TileGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  // y = x repeated reps[d] times along d: g viewed as [r0, d0, r1, d1, ...], summed over the r axes.
  const Ints shape = StaticOrThrow(TT(call->args[0]).shape, "tile");
  const Ints& reps = call->attrs.GetInts("reps");
  Ints split, axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    axes.push_back(static_cast<int64_t>(split.size()));
    split.push_back(reps[d]);
    split.push_back(shape[d]);
  }
  Expr v = Op("reshape", {g}, Attrs{{"newshape", split}});
  return {ReshapeTo(Sum(v, axes, false), TT(call->args[0]).shape)};
}

std::vector<Expr> ConcatenateGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  const auto* tt = call->args[0]->checked_type()->as<TupleTypeNode>();
  if (!tt) TESSERA_THROW(InternalError, "Gradient: concatenate of a non-tuple");
  const int64_t n = Rank(g);
  int64_t axis = call->attrs.GetInt("axis", 0);
  if (axis < 0) axis += n;
  std::vector<Expr> fields;
  int64_t offset = 0;
  for (const Type& f : tt->fields) {
    const Dim& d = f->as<TensorTypeNode>()->shape[axis];
    const int64_t len = StaticOrThrow({d}, "concatenate")[0];
    fields.push_back(Op("strided_slice", {g},
                        Attrs{{"begin", Ints{offset}}, {"end", Ints{offset + len}}, {"strides", Ints{1}},
                              {"axes", Ints{axis}}}));
    offset += len;
  }
  return {Typed(TupleNode::make(fields))};
}

std::vector<Expr> WhereGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  const Expr& c = call->args[0];
  std::vector<Expr> out(3);
  if (needs[1]) out[1] = CollapseSumLike(Where(c, g, K(0, g)), call->args[1]);
  if (needs[2]) out[2] = CollapseSumLike(Where(c, K(0, g), g), call->args[2]);
  return out;
}

std::vector<Expr> GlobalAvgPoolGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  const Expr& x = call->args[0];
  if (call->attrs.GetString("layout", "NCHW") != "NCHW")
    TESSERA_THROW(UnsupportedError, "Gradient through op nn.global_avg_pool2d is supported for layout NCHW only");
  const Ints shape = StaticOrThrow(TT(x).shape, "nn.global_avg_pool2d");
  return {BroadcastTo(Div(g, K(static_cast<double>(shape[2] * shape[3]), g)), x, "nn.global_avg_pool2d")};
}

std::vector<Expr> SoftmaxGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  // dx = y * (g - sum(g * y, axis))
  Expr y = call;
  const int64_t axis = call->attrs.GetInt("axis", -1);
  return {Mul(y, Sub(g, Sum(Mul(g, y), {axis}, true)))};
}

std::vector<Expr> LogSoftmaxGrad(const Call& call, const Expr& g, const std::vector<bool>&) {
  // dx = g - softmax(x) * sum(g, axis)
  Expr y = call;
  const int64_t axis = call->attrs.GetInt("axis", -1);
  return {Sub(g, Mul(Unary("exp", y), Sum(g, {axis}, true)))};
}

std::vector<Expr> PReluGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  const Expr& x = call->args[0];
  const Expr& slope = call->args[1];
  Expr neg = Cmp("less", x, K(0, x));
  std::vector<Expr> out(2);
  if (needs[0]) out[0] = Where(neg, Mul(g, slope), g);
  if (needs[1]) out[1] = CollapseSumLike(Mask(neg, Mul(g, x)), slope);
  return out;
}

std::vector<Expr> TakeGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  // y = x.take(idx, axis): the adjoint scatters back, added where indices repeat.
  const Expr& x = call->args[0];
  const Expr& idx = call->args[1];
  std::vector<Expr> out(2);
  if (!needs[0]) return out;
  const std::string mode = call->attrs.GetString("mode", "clip");
  if (mode == "clip")
    TESSERA_THROW(UnsupportedError, "Gradient through op take is not supported for mode clip (indices clamped)");
  const Ints xs = StaticOrThrow(TT(x).shape, "take");
  const Ints is = StaticOrThrow(TT(idx).shape, "take");
  int64_t count = 1;
  for (int64_t d : is) count *= d;
  Expr data = x;
  Ints shape = xs;
  int64_t axis = 0;
  if (call->attrs.Has("axis")) {
    axis = call->attrs.GetInt("axis");
    if (axis < 0) axis += static_cast<int64_t>(xs.size());
  } else {
    int64_t total = 1;
    for (int64_t d : xs) total *= d;
    shape = {total};
  }
  // g as [pre..., count, post...] and the indices broadcast to it along axis.
  Ints gshape = shape;
  gshape[axis] = count;
  Ints ishape(shape.size(), 1);
  ishape[axis] = count;
  Expr gv = Op("reshape", {g}, Attrs{{"newshape", gshape}});
  Expr iv = Op("broadcast_to", {Op("reshape", {idx}, Attrs{{"newshape", ishape}})}, Attrs{{"shape", gshape}});
  Expr zeros = Op("broadcast_to", {K(0, x)}, Attrs{{"shape", shape}});
  Attrs scatter{{"axis", axis}, {"reduction", "add"}};
  if (call->attrs.Has("source")) scatter.Set("source", call->attrs.GetString("source"));
  out[0] = ReshapeTo(Op("scatter_elements", {zeros, iv, gv}, scatter), TT(x).shape);
  return out;
}

std::vector<Expr> GatherElementsGrad(const Call& call, const Expr& g, const std::vector<bool>& needs) {
  std::vector<Expr> out(2);
  if (!needs[0]) return out;
  const Expr& x = call->args[0];
  Attrs scatter{{"axis", call->attrs.GetInt("axis", 0)}, {"reduction", "add"}};
  Expr zeros = FilledLike(x, 0, "gather_elements");
  out[0] = Op("scatter_elements", {zeros, call->args[1], g}, scatter);
  return out;
}

// ---- the table -----------------------------------------------------------------------------

std::map<std::string, GradientRule> MakeRules() {
  std::map<std::string, GradientRule> r;
  auto unary = [&](const char* name, UnaryFn fn) { r[name] = UnaryRule(std::move(fn)); };
  auto zero = [&](const char* name) {
    unary(name, [name](const Call&, const Expr& x, const Expr&, const Expr&) { return FilledLike(x, 0, name); });
  };
  using C = const Call&;
  using E = const Expr&;

  // Broadcasting arithmetic.
  auto first = [](E, E, E, E g) { return g; };
  r["add"] = BroadcastRule(first, first);
  r["subtract"] = BroadcastRule(first, [](E, E, E, E g) { return Neg(g); });
  r["multiply"] = BroadcastRule([](E, E b, E, E g) { return Mul(g, b); }, [](E a, E, E, E g) { return Mul(g, a); });
  // y = a / b: da = g / b, db = -g a / b^2 = -(g / b) y
  r["divide"] = BroadcastRule([](E, E b, E, E g) { return Div(g, b); },
                              [](E, E b, E y, E g) { return Neg(Mul(Div(g, b), y)); });
  // y = a^b: da = g b a^(b-1), db = g y log(a)
  r["power"] = BroadcastRule(
      [](E a, E b, E, E g) { return Mul(g, Mul(b, Op("power", {a, Sub(b, K(1, b))}))); },
      [](E a, E, E y, E g) { return Mul(g, Mul(y, Unary("log", a))); });
  // maximum / minimum: the adjoint goes to the operand chosen (a on ties).
  r["maximum"] = BroadcastRule([](E a, E b, E, E g) { return Mask(Cmp("greater_equal", a, b), g); },
                               [](E a, E b, E, E g) { return Mask(Cmp("less", a, b), g); });
  r["minimum"] = BroadcastRule([](E a, E b, E, E g) { return Mask(Cmp("less_equal", a, b), g); },
                               [](E a, E b, E, E g) { return Mask(Cmp("greater", a, b), g); });

  // Elementwise math.
  unary("negative", [](C, E, E, E g) { return Neg(g); });
  unary("copy", [](C, E, E, E g) { return g; });
  unary("cast", [](C, E x, E, E g) { return Op("cast", {g}, Attrs{{"dtype", TT(x).dtype.str()}}); });
  unary("exp", [](C, E, E y, E g) { return Mul(g, y); });
  unary("log", [](C, E x, E, E g) { return Div(g, x); });
  unary("sqrt", [](C, E, E y, E g) { return Div(g, Mul(K(2, y), y)); });
  unary("tanh", [](C, E, E y, E g) { return Mul(g, Sub(K(1, y), Square(y))); });
  unary("sigmoid", [](C, E, E y, E g) { return Mul(g, Mul(y, Sub(K(1, y), y))); });
  unary("abs", [](C, E x, E, E g) { return Mul(g, Unary("sign", x)); });
  unary("reciprocal", [](C, E, E y, E g) { return Neg(Mul(g, Square(y))); });
  unary("sin", [](C, E x, E, E g) { return Mul(g, Unary("cos", x)); });
  unary("cos", [](C, E x, E, E g) { return Neg(Mul(g, Unary("sin", x))); });
  unary("tan", [](C, E, E y, E g) { return Mul(g, Add(K(1, y), Square(y))); });
  unary("sinh", [](C, E x, E, E g) { return Mul(g, Unary("cosh", x)); });
  unary("cosh", [](C, E x, E, E g) { return Mul(g, Unary("sinh", x)); });
  unary("asin", [](C, E x, E, E g) { return Div(g, Unary("sqrt", Sub(K(1, x), Square(x)))); });
  unary("acos", [](C, E x, E, E g) { return Neg(Div(g, Unary("sqrt", Sub(K(1, x), Square(x))))); });
  unary("atan", [](C, E x, E, E g) { return Div(g, Add(K(1, x), Square(x))); });
  unary("asinh", [](C, E x, E, E g) { return Div(g, Unary("sqrt", Add(Square(x), K(1, x)))); });
  unary("acosh", [](C, E x, E, E g) { return Div(g, Unary("sqrt", Sub(Square(x), K(1, x)))); });
  unary("atanh", [](C, E x, E, E g) { return Div(g, Sub(K(1, x), Square(x))); });
  unary("erf", [](C, E x, E, E g) {
    return Mul(g, Mul(K(2 / std::sqrt(M_PI), x), Unary("exp", Neg(Square(x)))));
  });
  for (const char* name : {"floor", "ceil", "round", "sign"}) zero(name);
  unary("clip", [](C call, E x, E, E g) {
    Expr inside = Op("logical_and", {Cmp("greater_equal", x, K(call->attrs.GetDouble("a_min"), x)),
                                     Cmp("less_equal", x, K(call->attrs.GetDouble("a_max"), x))});
    return Mask(inside, g);
  });

  // Activations (defaults as graph_lower's computes).
  unary("nn.relu", [](C, E x, E, E g) { return Mask(Cmp("greater", x, K(0, x)), g); });
  unary("nn.leaky_relu", [](C call, E x, E, E g) {
    return Where(Cmp("less", x, K(0, x)), Mul(g, K(call->attrs.GetDouble("alpha", 0.01), g)), g);
  });
  unary("nn.elu", [](C call, E x, E y, E g) {  // x < 0: y = alpha (e^x - 1), dy = y + alpha
    return Where(Cmp("less", x, K(0, x)), Mul(g, Add(y, K(call->attrs.GetDouble("alpha", 1.0), y))), g);
  });
  unary("nn.selu", [](C call, E x, E y, E g) {  // x <= 0: dy = y + gamma alpha; else gamma
    const double alpha = call->attrs.GetDouble("alpha", 1.67326319217681884765625),
                 gamma = call->attrs.GetDouble("gamma", 1.05070102214813232421875);
    return Where(Cmp("less_equal", x, K(0, x)), Mul(g, Add(y, K(gamma * alpha, y))), Mul(g, K(gamma, g)));
  });
  unary("nn.celu", [](C call, E x, E, E g) {  // x <= 0: e^(x / alpha)
    const double alpha = call->attrs.GetDouble("alpha", 1.0);
    return Where(Cmp("greater", x, K(0, x)), g, Mul(g, Unary("exp", Div(x, K(alpha, x)))));
  });
  unary("nn.thresholded_relu", [](C call, E x, E, E g) {
    return Mask(Cmp("greater", x, K(call->attrs.GetDouble("alpha", 1.0), x)), g);
  });
  unary("nn.softplus", [](C, E x, E, E g) { return Mul(g, Unary("sigmoid", x)); });
  unary("nn.softsign", [](C, E x, E, E g) { return Div(g, Square(Add(K(1, x), Unary("abs", x)))); });
  unary("nn.mish", [](C, E x, E, E g) {  // t = tanh(softplus(x)): t + x (1 - t^2) sigmoid(x)
    Expr t = Unary("tanh", Unary("nn.softplus", x));
    return Mul(g, Add(t, Mul(x, Mul(Sub(K(1, t), Square(t)), Unary("sigmoid", x)))));
  });
  unary("nn.swish", [](C call, E x, E, E g) {  // s = sigmoid(alpha x): s + alpha x s (1 - s)
    Expr alpha = K(call->attrs.GetDouble("alpha", 1.0), x);
    Expr s = Unary("sigmoid", Mul(alpha, x));
    return Mul(g, Add(s, Mul(Mul(alpha, x), Mul(s, Sub(K(1, s), s)))));
  });
  unary("nn.gelu", [](C call, E x, E, E g) {
    if (call->attrs.GetString("approximate", "none") == "tanh") {
      // y = x/2 (1 + t), t = tanh(u), u = c (x + 0.044715 x^3), c = sqrt(2 / pi):
      // dy = (1 + t) / 2 + x/2 (1 - t^2) c (1 + 3 * 0.044715 x^2)
      const double c = std::sqrt(2 / M_PI);
      Expr x2 = Square(x);
      Expr t = Unary("tanh", Mul(K(c, x), Add(x, Mul(K(0.044715, x), Mul(x2, x)))));
      Expr dt = Mul(Sub(K(1, t), Square(t)), Mul(K(c, x), Add(K(1, x), Mul(K(3 * 0.044715, x), x2))));
      return Mul(g, Add(Mul(K(0.5, t), Add(K(1, t), t)), Mul(Mul(K(0.5, x), x), dt)));
    }
    // y = x Phi(x): Phi(x) + x phi(x)
    Expr cdf = Mul(K(0.5, x), Add(K(1, x), Unary("erf", Mul(x, K(1 / std::sqrt(2.0), x)))));
    Expr pdf = Mul(K(1 / std::sqrt(2 * M_PI), x), Unary("exp", Mul(K(-0.5, x), Square(x))));
    return Mul(g, Add(cdf, Mul(x, pdf)));
  });
  unary("nn.shrink", [](C call, E x, E, E g) {
    const double l = call->attrs.GetDouble("lambd", 0.5);
    return Mask(Op("logical_or", {Cmp("less", x, K(-l, x)), Cmp("greater", x, K(l, x))}), g);
  });
  unary("hard_sigmoid", [](C call, E x, E, E g) {
    Expr alpha = K(call->attrs.GetDouble("alpha", 0.2), x);
    Expr v = Add(Mul(alpha, x), K(call->attrs.GetDouble("beta", 0.5), x));
    return Mask(Op("logical_and", {Cmp("greater", v, K(0, v)), Cmp("less", v, K(1, v))}), Mul(g, alpha));
  });
  unary("hard_swish", [](C, E x, E, E g) {  // x relu6(x + 3) / 6: 0 below -3, 1 above 3, x / 3 + 1/2 between
    Expr mid = Mul(g, Add(Div(x, K(3, x)), K(0.5, x)));
    return Where(Cmp("less", x, K(-3, x)), K(0, g), Where(Cmp("greater", x, K(3, x)), g, mid));
  });
  r["nn.prelu"] = PReluGrad;
  r["nn.softmax"] = SoftmaxGrad;
  r["nn.log_softmax"] = LogSoftmaxGrad;

  // Linear algebra.
  r["nn.dense"] = DenseGrad;
  r["nn.matmul"] = MatmulGrad;
  r["nn.batch_matmul"] = BatchMatmulGrad;
  r["nn.bias_add"] = BiasAddGrad;
  r["nn.global_avg_pool2d"] = GlobalAvgPoolGrad;

  // Reductions.
  r["sum"] = SumGrad;
  r["mean"] = MeanGrad;
  r["max"] = ExtremumGrad;
  r["min"] = ExtremumGrad;

  // Data movement.
  r["reshape"] = ReshapeGrad;
  r["squeeze"] = ReshapeGrad;
  r["transpose"] = TransposeGrad;
  r["expand_dims"] = ExpandDimsGrad;
  r["broadcast_to"] = BroadcastToGrad;
  r["strided_slice"] = StridedSliceGrad;
  r["pad"] = PadGrad;
  r["tile"] = TileGrad;
  r["concatenate"] = ConcatenateGrad;
  r["where"] = WhereGrad;
  r["take"] = TakeGrad;
  r["gather_elements"] = GatherElementsGrad;
  return r;
}

const std::map<std::string, GradientRule>& Rules() {
  static const std::map<std::string, GradientRule> rules = MakeRules();
  return rules;
}

}  // namespace

Expr FilledLike(const Expr& like, double value, const std::string& op) {
  Expr k = K(value, like);
  if (Rank(like) == 0) return k;
  return Op("broadcast_to", {k}, Attrs{{"shape", StaticOrThrow(TT(like).shape, op)}});
}

const GradientRule* FindGradientRule(const std::string& name) {
  auto it = Rules().find(name);
  return it == Rules().end() ? nullptr : &it->second;
}

std::vector<std::string> GradientRuleOps() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : Rules()) names.push_back(name);
  return names;
}

}  // namespace tessera::graph::transform::detail
