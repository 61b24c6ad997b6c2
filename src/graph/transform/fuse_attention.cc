// FuseAttention: see include/tessera/graph/transform/fuse_attention.h.
#include "tessera/graph/transform/fuse_attention.h"

#include <optional>
#include <unordered_map>

#include "pass_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/pass.h"
#include "tessera/runtime/float_formats.h"

namespace tessera::graph::transform {
namespace {

using namespace detail;

// The value of a one-element constant whose rank is at most `rank` (every dim 1: it broadcasts into
// the scores without growing them); nullopt otherwise.
std::optional<double> OneValueConstant(const Expr& e, size_t rank) {
  const auto* c = e->as<ConstantNode>();
  if (!c || c->data.NumElements() != 1 || c->data.shape().size() > rank) return std::nullopt;
  return runtime::LoadAsDouble(c->data.raw_data(), 0, c->data.dtype());
}

// The transpose of the last two axes of `x` (rank 3: a batch_matmul operand).
Expr SwapLastTwo(const Expr& x) { return CallOp("transpose", {x}, Attrs{{"axes", std::vector<int64_t>{0, 2, 1}}}); }

class Fuser : public ExprMutator {
 public:
  explicit Fuser(const Expr& body) : uses_(CountUses(body)) {}
  bool changed() const { return changed_; }

 protected:
  Expr MutateCall_(const Call& call) override {
    if (std::optional<Expr> fused = Match(call)) {
      changed_ = true;
      return *fused;
    }
    return ExprMutator::MutateCall_(call);
  }

 private:
  bool UsedOnce(const Expr& e) const {
    auto it = uses_.find(e.get());
    return it != uses_.end() && it->second == 1;
  }

  // A product's operands (a, b) as nn.matmul(a, b) reads them: b already transposed for
  // batch_matmul(transpose_b=1) (the transpose is built here). nullopt when `e` is no such product
  // with a non-transposed left operand.
  std::optional<std::pair<Expr, Expr>> Product(const Expr& e, bool* needs_transpose) const {
    *needs_transpose = false;
    if (const CallNode* m = AsOpCall(e, "nn.matmul")) return std::make_pair(m->args[0], m->args[1]);
    if (const CallNode* b = AsOpCall(e, "nn.batch_matmul")) {
      if (b->attrs.GetInt("transpose_a", 0) != 0) return std::nullopt;
      *needs_transpose = b->attrs.GetInt("transpose_b", 1) != 0;
      return std::make_pair(b->args[0], b->args[1]);
    }
    return std::nullopt;
  }

  std::optional<Expr> Match(const Call& out) {
    bool v_transposed = false;
    const auto pv = Product(out, &v_transposed);
    if (!pv || !UsedOnce(pv->first)) return std::nullopt;
    const CallNode* softmax = AsOpCall(pv->first, "nn.softmax");
    const auto out_shape = StaticShapeOf(out);
    if (!softmax || !out_shape || out_shape->size() < 2) return std::nullopt;
    const size_t rank = out_shape->size();
    const int64_t axis = softmax->attrs.GetInt("axis", -1);
    if (axis != -1 && axis != static_cast<int64_t>(rank) - 1) return std::nullopt;
    // Walk up from the softmax's input: optional add of a bias, optional scale, the scores.
    Expr s = softmax->args[0];
    std::optional<Expr> bias;
    double scale = 1.0;
    const auto score_shape = StaticShapeOf(s);
    if (!score_shape || score_shape->size() != rank) return std::nullopt;
    if (const CallNode* add = AsOpCall(s, "add"); add && UsedOnce(s)) {
      // The operand that is the scores' product (after an optional scale) is the chain; the
      // other one is the bias.
      for (int side = 0; side < 2 && !bias; ++side) {
        const Expr& chain = add->args[side];
        const Expr& other = add->args[1 - side];
        const auto cs = StaticShapeOf(chain), os = StaticShapeOf(other);
        if (!cs || !os || *cs != *score_shape || os->size() > rank) continue;
        bool broadcasts = true;
        for (size_t d = 0; d < os->size(); ++d) {
          const int64_t want = (*score_shape)[rank - os->size() + d];
          broadcasts &= (*os)[d] == 1 || (*os)[d] == want;
        }
        if (!broadcasts || (!AsOpCall(chain, "nn.matmul") && !AsOpCall(chain, "nn.batch_matmul") &&
                            !AsOpCall(chain, "multiply") && !AsOpCall(chain, "divide")))
          continue;
        bias = other;
        s = chain;
      }
      if (!bias) return std::nullopt;
    }
    if (const CallNode* mul = AsOpCall(s, "multiply"); mul && UsedOnce(s)) {
      std::optional<double> c;
      if ((c = OneValueConstant(mul->args[1], rank))) s = mul->args[0];
      else if ((c = OneValueConstant(mul->args[0], rank))) s = mul->args[1];
      else return std::nullopt;
      scale = *c;
    } else if (const CallNode* div = AsOpCall(s, "divide"); div && UsedOnce(s)) {
      const std::optional<double> c = OneValueConstant(div->args[1], rank);
      if (!c || *c == 0.0) return std::nullopt;
      scale = 1.0 / *c;
      s = div->args[0];
    }
    bool k_transposed = false;
    const auto qk = Product(s, &k_transposed);
    if (!qk || !UsedOnce(s)) return std::nullopt;
    // Static shapes of one rank, equal batch dims, float32 / float64.
    const Expr &q = qk->first, &k = qk->second, &v = pv->second;
    const auto qs = StaticShapeOf(q), ks = StaticShapeOf(k), vs = StaticShapeOf(v);
    if (!qs || !ks || !vs || qs->size() != rank || ks->size() != rank || vs->size() != rank) return std::nullopt;
    for (size_t d = 0; d + 2 < rank; ++d)
      if ((*ks)[d] != (*qs)[d] || (*vs)[d] != (*qs)[d]) return std::nullopt;
    const TensorTypeNode* t = TensorTypeOf(q);
    if (!t || !(t->dtype == DataType::Float(32) || t->dtype == DataType::Float(64))) return std::nullopt;
    if (bias) {
      const TensorTypeNode* bt = TensorTypeOf(*bias);
      if (!bt || bt->dtype != t->dtype) return std::nullopt;
    }
    Expr k_t = Mutate(k), value = Mutate(v);
    if (k_transposed) k_t = SwapLastTwo(k_t);
    if (v_transposed) value = SwapLastTwo(value);
    std::vector<Expr> args = {Mutate(q), k_t, value};
    if (bias) args.push_back(Mutate(*bias));
    return CallOp("nn.attention", std::move(args), Attrs{{"scale", scale}});
  }

  std::unordered_map<const ExprNode*, int> uses_;
  bool changed_ = false;
};

}  // namespace

IRModule FuseAttention(const IRModule& input) {
  IRModule mod = InferType(input);
  IRModule out = IRModule::WithTypesOf(mod);
  bool changed = false;
  for (const auto& [name, fn] : mod.functions()) {
    if (fn->attrs.GetInt("Primitive", 0) != 0 || IsExternalFunction(*fn)) {
      out.Add(name, fn);
      continue;
    }
    Fuser f(fn->body);
    Expr body = f.Mutate(fn->body);
    changed |= f.changed();
    out.Add(name, f.changed() ? FunctionNode::make(fn->params, body, fn->ret_type, fn->attrs) : fn);
  }
  return changed ? InferType(out) : mod;
}

Pass FuseAttentionPass() {
  return Pass({"FuseAttention", "matmul -> scale -> [+ bias] -> softmax -> matmul becomes one nn.attention", 2},
              [](const IRModule& m, const PassContext&) { return FuseAttention(m); });
}

}  // namespace tessera::graph::transform
