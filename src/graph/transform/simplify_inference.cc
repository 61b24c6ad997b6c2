// SimplifyInference: see include/tessera/graph/transform/simplify_inference.h.
#include "tessera/graph/transform/simplify_inference.h"

#include <cmath>

#include "pass_util.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/runtime/float_formats.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform {
namespace {

using namespace detail;

/// [C] -> [C, 1, ..., 1] with `trailing` ones, as a constant or an expand_dims.
Expr TrailingOnes(const Expr& v, int64_t trailing) {
  if (trailing == 0) return v;
  return CallOp("expand_dims", {v}, Attrs{{"axis", int64_t{1}}, {"num_newaxis", trailing}});
}

class Simplifier : public ExprMutator {
 protected:
  Expr MutateCall_(const Call& call) override {
    Expr rewritten = ExprMutator::MutateCall_(call);
    const auto* c = rewritten->as<CallNode>();
    const std::string op = OpName(rewritten);
    if (op == "nn.batch_norm") return ExpandBatchNorm(call, c->args);
    if (op == "nn.conv2d") return SplitPartlyDeadTaps(call, DropDeadTaps(call, rewritten));
    if (op == "copy") return c->args[0];
    if (op == "power") return ReducePower(call, rewritten);
    const TensorTypeNode* in = TensorTypeOf(call->args.empty() ? nullptr : call->args[0]);
    const TensorTypeNode* out = TensorTypeOf(call);
    if (!in || !out) return rewritten;
    if (op == "cast" && in->dtype == out->dtype) return c->args[0];
    if (op == "reshape" && in->shape == out->shape && StaticShape(in->shape)) return c->args[0];
    if (op == "transpose") {
      std::vector<int64_t> axes = c->attrs.GetInts("axes", {});
      bool identity = in->ndim() <= 1 && axes.empty();
      if (!axes.empty()) {
        identity = true;
        for (size_t i = 0; i < axes.size(); ++i) identity = identity && (axes[i] == int64_t(i) || axes[i] == int64_t(i) - in->ndim());
      }
      if (identity) return c->args[0];
    }
    return rewritten;
  }

 private:
  /// power(x, c) of a float x and a constant scalar exponent c of 1, 2, 3 or 4 as multiplies of x
  /// (GPT-2's tanh GELU cubes its input: a pow call per element otherwise); the result's type must
  /// equal x's (not a broadcast of c to a higher rank). Not 0.5: sqrt(-inf) is NaN, pow's is inf.
  Expr ReducePower(const Call& original, const Expr& rewritten) {
    const auto* c = rewritten->as<CallNode>();
    const auto* e = c->args[1]->as<ConstantNode>();
    const TensorTypeNode* x = TensorTypeOf(original->args[0]);
    const TensorTypeNode* out = TensorTypeOf(original);
    if (!e || !x || !out || !x->dtype.is_floating() || !(x->shape == out->shape) || x->dtype != out->dtype ||
        e->data.NumElements() != 1) {
      return rewritten;
    }
    const double p = runtime::LoadAsDouble(e->data.raw_data(), 0, e->data.dtype());
    const Expr& b = c->args[0];
    if (p == 1) return b;
    if (p == 2) return CallOp("multiply", {b, b});
    if (p == 3) return CallOp("multiply", {CallOp("multiply", {b, b}), b});
    if (p == 4) {
      Expr sq = CallOp("multiply", {b, b});
      return CallOp("multiply", {sq, sq});
    }
    return rewritten;
  }

  /// nn.conv2d (NCHW / OIHW, static shapes) without the kernel taps that read only padding: along
  /// H and W, a tap k reads rows k * dilation - pad_begin + y * stride for the outputs y; when that
  /// range misses the input for every y, the tap's weights multiply zeros only. The leading and
  /// trailing dead taps are sliced off the weight (strided_slice, which FoldConstant folds) and
  /// the padding shrinks by their span, so every output reads the same live taps. An atrous
  /// convolution whose dilation exceeds the map (DeepLabV3's ASPP at rates 24 and 36 on 14 x 14)
  /// becomes a 1 x 1 one. `original` is the typed call, `rewritten` its rewrite.
  Expr DropDeadTaps(const Call& original, const Expr& rewritten) {
    const auto* c = rewritten->as<CallNode>();
    const auto x = StaticShapeOf(original->args[0]), w = StaticShapeOf(original->args[1]), y = StaticShapeOf(original);
    const Attrs& a = c->attrs;
    if (!x || !w || !y || x->size() != 4 || a.GetString("data_layout", "NCHW") != "NCHW" ||
        a.GetString("kernel_layout", "OIHW") != "OIHW")
      return rewritten;
    std::vector<int64_t> pad = a.GetInts("padding", {0, 0, 0, 0});
    const std::vector<int64_t> strides = a.GetInts("strides", {1, 1}), dilation = a.GetInts("dilation", {1, 1});
    if (pad.size() != 4 || strides.size() != 2 || dilation.size() != 2) return rewritten;
    std::vector<int64_t> begin(2), end(2);
    bool changed = false;
    for (int d = 0; d < 2; ++d) {
      const int64_t in = (*x)[2 + d], k = (*w)[2 + d], out = (*y)[2 + d];
      auto live = [&](int64_t tap) {
        const int64_t first = tap * dilation[d] - pad[d], last = first + (out - 1) * strides[d];
        return last >= 0 && first < in;
      };
      int64_t lo = 0, hi = k - 1;
      while (lo <= hi && !live(lo)) ++lo;
      while (hi >= lo && !live(hi)) --hi;
      if (lo > hi) return rewritten;  // no live tap at all: leave it (the output is the bias)
      const int64_t pad_begin = pad[d] - lo * dilation[d], pad_end = pad[d + 2] - (k - 1 - hi) * dilation[d];
      if (pad_begin < 0 || pad_end < 0) return rewritten;
      begin[d] = lo;
      end[d] = hi + 1;
      changed |= lo > 0 || hi < k - 1;
      pad[d] = pad_begin;
      pad[d + 2] = pad_end;
    }
    if (!changed) return rewritten;
    Expr weight = CallOp("strided_slice", {c->args[1]},
                         Attrs{{"begin", begin}, {"end", end}, {"strides", std::vector<int64_t>{1, 1}},
                               {"axes", std::vector<int64_t>{2, 3}}});
    Attrs attrs = a;
    attrs.Set("padding", pad);
    return CallNode::make(c->op, {c->args[0], weight}, attrs);
  }

  /// A conv's geometry along one spatial axis.
  struct ConvAxis {
    int64_t in, taps, out, stride, dilation, pad_begin;
    /// The outputs [lo, hi) whose input position for tap t is inside the input (not padding).
    std::pair<int64_t, int64_t> Live(int64_t t) const {
      const int64_t off = t * dilation - pad_begin;  // the input position of output 0
      int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
      int64_t hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
      lo = std::min(lo, out);
      return {lo, std::max(lo, std::min(hi, out))};
    }
  };

  /// nn.conv2d (NCHW / OIHW, static shapes) whose taps along H or W read padding for most outputs
  /// (an atrous conv whose dilation is near the map's size: DeepLabV3's ASPP at rate 12 on a
  /// 14 x 14 map, where a 3 x 3 tap is live for 2, 14 and 2 of the 14 rows): along such an axis
  /// (under half of the tap x output positions live) the conv becomes one conv per live tap over
  /// the outputs where it is live, its kernel that tap's slice (extent 1, no padding) and its
  /// input the rows it reads (strided_slice), padded with zeros back to the output's extent and
  /// summed. H first, then each part along W: the ASPP conv's 9 taps over 196 outputs (1,764
  /// tap-positions) become 9 1 x 1 convs over 324. Same sums, in another order (float rounding).
  Expr SplitPartlyDeadTaps(const Call& original, const Expr& rewritten) {
    const auto* c = rewritten->as<CallNode>();
    if (!c || OpName(rewritten) != "nn.conv2d") return rewritten;
    const auto x = StaticShapeOf(original->args[0]);
    auto w = StaticShapeOf(original->args[1]);
    if (w && w->size() == 4 && c->args[1] != original->args[1]) {
      // DropDeadTaps sliced the weight: its taps [begin, end) along H and W.
      const auto* sl = AsOpCall(c->args[1], "strided_slice");
      if (!sl) return rewritten;
      const std::vector<int64_t> begin = sl->attrs.GetInts("begin"), end = sl->attrs.GetInts("end");
      for (int d = 0; d < 2; ++d) (*w)[2 + d] = end[d] - begin[d];
    }
    const Attrs& a = c->attrs;
    if (!x || !w || x->size() != 4 || w->size() != 4 || a.GetString("data_layout", "NCHW") != "NCHW" ||
        a.GetString("kernel_layout", "OIHW") != "OIHW" || !TensorTypeOf(original) ||
        !TensorTypeOf(original)->dtype.is_floating())
      return rewritten;
    Expr split = SplitAxis(c->args[0], *x, c->args[1], *w, a, 0);
    return split ? split : rewritten;
  }

  /// The conv of x (shape xs) and w (shape ws) split along axis d (0: H, 1: W) and then along the
  /// later axes; null when no axis is split.
  Expr SplitAxis(const Expr& x, const std::vector<int64_t>& xs, const Expr& w, const std::vector<int64_t>& ws,
                 const Attrs& attrs, int d) {
    if (d > 1) return nullptr;
    const std::vector<int64_t> pad = attrs.GetInts("padding", {0, 0, 0, 0});
    const std::vector<int64_t> strides = attrs.GetInts("strides", {1, 1}), dilation = attrs.GetInts("dilation", {1, 1});
    if (pad.size() != 4 || strides.size() != 2 || dilation.size() != 2) return nullptr;
    ConvAxis ax{xs[2 + d], ws[2 + d], 0, strides[d], dilation[d], pad[d]};
    ax.out = (ax.in + pad[d] + pad[d + 2] - ax.dilation * (ax.taps - 1) - 1) / ax.stride + 1;
    int64_t live = 0;
    for (int64_t t = 0; t < ax.taps; ++t) live += ax.Live(t).second - ax.Live(t).first;
    if (ax.out <= 0 || live == 0 || 2 * live >= ax.taps * ax.out) return SplitAxis(x, xs, w, ws, attrs, d + 1);
    auto slice = [&](const Expr& e, int64_t begin, int64_t end) {
      return CallOp("strided_slice", {e}, Attrs{{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                                {"strides", std::vector<int64_t>{1}},
                                                {"axes", std::vector<int64_t>{2 + d}}});
    };
    Expr sum;
    for (int64_t t = 0; t < ax.taps; ++t) {
      const auto [lo, hi] = ax.Live(t);
      if (hi <= lo) continue;
      const int64_t first = lo * ax.stride + t * ax.dilation - ax.pad_begin, last = (hi - 1) * ax.stride + t * ax.dilation - ax.pad_begin;
      std::vector<int64_t> sub_xs = xs, sub_ws = ws;
      sub_xs[2 + d] = last - first + 1;
      sub_ws[2 + d] = 1;
      Attrs sub_attrs = attrs;
      std::vector<int64_t> sub_pad = pad;
      sub_pad[d] = sub_pad[d + 2] = 0;
      sub_attrs.Set("padding", sub_pad);
      Expr sx = slice(x, first, last + 1), sw = slice(w, t, t + 1);
      Expr part = SplitAxis(sx, sub_xs, sw, sub_ws, sub_attrs, d + 1);
      if (!part) part = CallOp("nn.conv2d", {sx, sw}, sub_attrs);
      if (lo > 0 || hi < ax.out) {
        std::vector<int64_t> before(4, 0), after(4, 0);
        before[2 + d] = lo;
        after[2 + d] = ax.out - hi;
        part = CallOp("pad", {part}, Attrs{{"pad_before", before}, {"pad_after", after}, {"mode", std::string("constant")},
                                           {"pad_value", 0.0}});
      }
      sum = sum ? CallOp("add", {sum, part}) : part;
    }
    return sum;
  }

  /// `original` is the typed batch_norm call; `args` its rewritten arguments.
  Expr ExpandBatchNorm(const Call& original, const std::vector<Expr>& args) {
    const TensorTypeNode* x = TensorTypeOf(original->args[0]);
    TESSERA_ICHECK(x != nullptr, "SimplifyInference: nn.batch_norm is not typed (run InferType first)");
    int64_t axis = original->attrs.GetInt("axis", 1);
    if (axis < 0) axis += x->ndim();
    const int64_t trailing = x->ndim() - axis - 1;
    const double eps = original->attrs.GetDouble("epsilon", 1e-5);

    std::vector<runtime::NDArray> consts;
    for (size_t i = 1; i < 5; ++i) {
      if (const auto* k = args[i]->as<ConstantNode>()) consts.push_back(k->data);
    }
    Expr scale, shift;
    if (consts.size() == 4 && (x->dtype == DataType::Float(32) || x->dtype == DataType::Float(64))) {
      auto gamma = ToDoubles(consts[0]), beta = ToDoubles(consts[1]);
      auto mean = ToDoubles(consts[2]), var = ToDoubles(consts[3]);
      const size_t n = gamma->size();
      std::vector<double> s(n), t(n);
      for (size_t i = 0; i < n; ++i) {
        s[i] = (*gamma)[i] / std::sqrt((*var)[i] + eps);
        t[i] = (*beta)[i] - (*mean)[i] * s[i];
      }
      std::vector<int64_t> shape(static_cast<size_t>(trailing) + 1, 1);
      shape[0] = static_cast<int64_t>(n);
      scale = ConstantNode::make(FromDoubles(s, shape, x->dtype));
      shift = ConstantNode::make(FromDoubles(t, shape, x->dtype));
    } else {
      Expr s = CallOp("divide", {args[1], CallOp("sqrt", {CallOp("add", {args[4], ScalarConstant(eps, x->dtype)})})});
      Expr t = CallOp("subtract", {args[2], CallOp("multiply", {args[3], s})});
      scale = TrailingOnes(s, trailing);
      shift = TrailingOnes(t, trailing);
    }
    return CallOp("add", {CallOp("multiply", {args[0], scale}), shift});
  }
};

}  // namespace

IRModule SimplifyInference(const IRModule& input) {
  IRModule mod = InferType(input);
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    Simplifier s;
    Expr body = s.Mutate(fn->body);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return out;
}

Pass SimplifyInferencePass() {
  return Pass({"SimplifyInference",
               "nn.batch_norm -> multiply/add with constant scale/shift; identities and dead conv taps removed; power by 1-4 -> multiplies", 0},
              [](const IRModule& m, const PassContext&) { return SimplifyInference(m); });
}

}  // namespace tessera::graph::transform
