// FoldScaleAxis: see include/tessera/graph/transform/fold_scale_axis.h.
#include "tessera/graph/transform/fold_scale_axis.h"

#include <optional>
#include <unordered_map>

#include "pass_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/support/error.h"

namespace tessera::graph::transform {
namespace {

using namespace detail;

/// The per-channel values of constant `s` broadcast against a tensor of rank `rank` whose
/// channel axis `axis` has `channels` entries: nullopt unless every other extent of s is 1,
/// s has rank <= `rank` and the dtype is float32 / float64.
std::optional<std::vector<double>> ChannelScale(const Expr& s, int64_t rank, int64_t axis, int64_t channels,
                                                DataType dtype) {
  const auto* c = s->as<ConstantNode>();
  if (!c || c->data.dtype() != dtype) return std::nullopt;
  const std::vector<int64_t>& shape = c->data.shape();
  const int64_t r = static_cast<int64_t>(shape.size());
  if (r > rank) return std::nullopt;
  int64_t channel_extent = 1;
  for (int64_t j = 0; j < r; ++j) {
    const int64_t out_axis = rank - r + j;
    if (out_axis == axis) {
      if (shape[j] != 1 && shape[j] != channels) return std::nullopt;
      channel_extent = shape[j];
    } else if (shape[j] != 1) {
      return std::nullopt;
    }
  }
  auto values = ToDoubles(c->data);
  if (!values) return std::nullopt;
  if (channel_extent == 1) return std::vector<double>(static_cast<size_t>(channels), (*values)[0]);
  return values;
}

bool DefaultLayouts(const CallNode* conv) {
  return conv->attrs.GetString("data_layout", "NCHW") == "NCHW" &&
         conv->attrs.GetString("kernel_layout", "OIHW") == "OIHW";
}

class ScaleFolder : public ExprMutator {
 public:
  explicit ScaleFolder(const Expr& body) : uses_(CountUses(body)) {}

 protected:
  Expr MutateCall_(const Call& call) override {
    if (const auto* m = AsOpCall(call, "multiply")) {
      for (int side = 0; side < 2; ++side) {
        if (Expr folded = FoldBackward(m->args[side], m->args[1 - side])) return folded;
      }
    }
    if (const auto* conv = AsOpCall(call, "nn.conv2d")) {
      if (Expr folded = FoldForwardConv(call, conv)) return folded;
    }
    if (const auto* dense = AsOpCall(call, "nn.dense")) {
      if (Expr folded = FoldForwardDense(call, dense)) return folded;
    }
    return ExprMutator::MutateCall_(call);
  }

 private:
  int Uses(const Expr& e) const {
    auto it = uses_.find(e.get());
    return it == uses_.end() ? 0 : it->second;
  }

  /// multiply(a, s): a is [bias_add / add of a constant over] conv2d or dense.
  Expr FoldBackward(const Expr& a, const Expr& s) {
    if (!s->as<ConstantNode>() || Uses(a) != 1) return nullptr;
    const TensorTypeNode* at = TensorTypeOf(a);
    if (!at) return nullptr;
    // Peel one bias.
    Expr core = a;
    const CallNode* bias = nullptr;
    if (const auto* b = AsOpCall(a, "nn.bias_add"); b && b->args[1]->as<ConstantNode>()) {
      bias = b;
    } else if (const auto* b2 = AsOpCall(a, "add")) {
      if (b2->args[1]->as<ConstantNode>()) bias = b2;
    }
    if (bias) {
      core = bias->args[0];
      if (Uses(core) != 1) return nullptr;
    }
    const TensorTypeNode* ct = TensorTypeOf(core);
    if (!ct || !(ct->shape == at->shape)) return nullptr;
    const CallNode* conv = AsOpCall(core, "nn.conv2d");
    const CallNode* dense = AsOpCall(core, "nn.dense");
    if ((!conv || !DefaultLayouts(conv)) && !dense) return nullptr;
    if (!core->as<CallNode>()->args[1]->as<ConstantNode>()) return nullptr;
    auto shape = StaticShape(ct->shape);
    if (!shape) return nullptr;
    const int64_t rank = static_cast<int64_t>(shape->size());
    const int64_t axis = conv ? 1 : rank - 1;
    const int64_t channels = (*shape)[axis];
    auto scale = ChannelScale(s, rank, axis, channels, ct->dtype);
    if (!scale) return nullptr;
    // Bias: a 1-D bias_add over the channel axis, or an add of a constant broadcasting per channel.
    Expr new_bias;
    if (bias) {
      const bool is_bias_add = OpName(a) == "nn.bias_add";
      if (is_bias_add) {
        int64_t baxis = bias->attrs.GetInt("axis", 1);
        if (baxis < 0) baxis += rank;
        if (baxis != axis) return nullptr;
        new_bias = CallOp("multiply", {bias->args[1], ConstantNode::make(FromDoubles(*scale, {channels}, ct->dtype))});
      } else {
        if (!ChannelScale(bias->args[1], rank, axis, channels, ct->dtype)) return nullptr;
        new_bias = CallOp("multiply", {bias->args[1], s});
      }
    }
    // Mutate the core first so a forward fold into the same op still applies.
    Expr new_core = Mutate(core);
    const auto* nc = new_core->as<CallNode>();
    if (OpName(new_core) != OpName(core)) return nullptr;
    std::vector<int64_t> wshape = conv ? std::vector<int64_t>{channels, 1, 1, 1} : std::vector<int64_t>{channels, 1};
    Expr w = CallOp("multiply", {nc->args[1], ConstantNode::make(FromDoubles(*scale, wshape, ct->dtype))});
    Expr out = CallNode::make(nc->op, {nc->args[0], w}, nc->attrs);
    if (bias) out = CallNode::make(bias->op, {out, new_bias}, bias->attrs);
    return out;
  }

  /// conv2d(multiply(x, s), W) with s per input channel.
  Expr FoldForwardConv(const Call& call, const CallNode* conv) {
    if (!DefaultLayouts(conv) || !conv->args[1]->as<ConstantNode>()) return nullptr;
    const CallNode* m = AsOpCall(conv->args[0], "multiply");
    if (!m || Uses(conv->args[0]) != 1) return nullptr;
    auto xshape = StaticShapeOf(conv->args[0]);
    auto wshape = StaticShapeOf(conv->args[1]);
    const TensorTypeNode* xt = TensorTypeOf(conv->args[0]);
    if (!xshape || !wshape || xshape->size() != 4) return nullptr;
    const int64_t groups = conv->attrs.GetInt("groups", 1);
    const int64_t C = (*xshape)[1], K = (*wshape)[0], cpg = (*wshape)[1];
    for (int side = 0; side < 2; ++side) {
      const Expr& x = m->args[1 - side];
      auto xs = StaticShapeOf(x);
      if (!xs || *xs != *xshape) continue;  // the scale must not broadcast x itself
      auto scale = ChannelScale(m->args[side], 4, 1, C, xt->dtype);
      if (!scale) continue;
      std::vector<double> t(static_cast<size_t>(K * cpg));
      const int64_t kpg = K / groups;
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < cpg; ++j) t[k * cpg + j] = (*scale)[(k / kpg) * cpg + j];
      Expr w = CallOp("multiply", {Mutate(conv->args[1]), ConstantNode::make(FromDoubles(t, {K, cpg, 1, 1}, xt->dtype))});
      return CallNode::make(call->op, {Mutate(x), w}, call->attrs);
    }
    return nullptr;
  }

  /// dense(multiply(x, s), W) with s along x's last axis.
  Expr FoldForwardDense(const Call& call, const CallNode* dense) {
    if (!dense->args[1]->as<ConstantNode>()) return nullptr;
    const CallNode* m = AsOpCall(dense->args[0], "multiply");
    if (!m || Uses(dense->args[0]) != 1) return nullptr;
    auto xshape = StaticShapeOf(dense->args[0]);
    const TensorTypeNode* xt = TensorTypeOf(dense->args[0]);
    if (!xshape || xshape->empty()) return nullptr;
    const int64_t rank = static_cast<int64_t>(xshape->size()), K = xshape->back();
    for (int side = 0; side < 2; ++side) {
      const Expr& x = m->args[1 - side];
      auto xs = StaticShapeOf(x);
      if (!xs || *xs != *xshape) continue;
      auto scale = ChannelScale(m->args[side], rank, rank - 1, K, xt->dtype);
      if (!scale) continue;
      Expr w = CallOp("multiply", {Mutate(dense->args[1]), ConstantNode::make(FromDoubles(*scale, {K}, xt->dtype))});
      return CallNode::make(call->op, {Mutate(x), w}, call->attrs);
    }
    return nullptr;
  }

  std::unordered_map<const ExprNode*, int> uses_;
};

}  // namespace

IRModule FoldScaleAxis(const IRModule& input) {
  IRModule mod = InferType(input);
  IRModule out = IRModule::WithTypesOf(mod);
  for (const auto& [name, fn] : mod.functions()) {
    ScaleFolder folder(fn->body);
    Expr body = folder.Mutate(fn->body);
    out.Add(name, body == fn->body ? fn : FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs));
  }
  return out;
}

Pass FoldScaleAxisPass() {
  return Pass({"FoldScaleAxis", "folds per-channel constant scales around conv2d / dense into their weights", 3},
              [](const IRModule& m, const PassContext&) { return FoldScaleAxis(m); });
}

}  // namespace tessera::graph::transform
