// The dnnl backend's composite patterns (dnnl_patterns.h).
#include "dnnl_patterns.h"

#include <cmath>
#include <optional>

#include "tessera/graph/pattern.h"
#include "tessera/graph/type.h"
#include "tessera/support/error.h"

namespace tessera::byoc::dnnl {

namespace {

using graph::DFPattern;
using graph::Expr;
using graph::IsConstant;
using graph::IsOp;
using graph::PatternMatcher;
using graph::Wildcard;

const graph::TensorTypeNode* TensorOf(const Expr& e) {
  return e->has_checked_type() ? e->checked_type()->as<graph::TensorTypeNode>() : nullptr;
}

// A float32 tensor of static shape, or nullopt.
std::optional<std::vector<int64_t>> Float32Shape(const Expr& e) {
  const auto* t = TensorOf(e);
  if (!t || t->dtype != DataType::Float(32)) return std::nullopt;
  return graph::StaticShape(t->shape);
}

// The value of a one-element float32 constant, or NaN.
double Scalar(const Expr& e) {
  const auto* c = e->as<graph::ConstantNode>();
  if (!c || c->data.NumElements() != 1 || c->data.dtype() != DataType::Float(32)) return std::nan("");
  return c->data.data<float>()[0];
}

bool Near(double v, double want) { return std::abs(v - want) <= 1e-6 * std::abs(want); }

// mean over the last axis only, keepdims.
bool MeanOverLastAxis(const Expr& e, int64_t rank) {
  const auto* call = e->as<graph::CallNode>();
  const std::vector<int64_t> axes = call->attrs.GetInts("axis", {});
  return axes.size() == 1 && (axes[0] == rank - 1 || axes[0] == -1) && call->attrs.GetInt("keepdims", 0) == 1 &&
         call->attrs.GetInt("exclude", 0) == 0;
}

graph::transform::CompositePattern LayerNorm() {
  DFPattern x = Wildcard(), gamma = Wildcard(), beta = Wildcard(), one = IsConstant(), eps = IsConstant();
  DFPattern mean = IsOp("mean")({x});
  DFPattern d = IsOp("subtract")({x, mean});
  DFPattern var = IsOp("mean")({IsOp("multiply")({d, d})});
  DFPattern inv = IsOp("divide")({one, IsOp("sqrt")({IsOp("add")({var, eps})})});
  DFPattern scaled = IsOp("multiply")({IsOp("multiply")({d, inv}), gamma});
  DFPattern root = graph::Optional(scaled, [&](const DFPattern& y) { return IsOp("add")({y, beta}); });
  auto check = [=](const Expr& r, const PatternMatcher& m) {
    const auto& b = m.bindings();
    const auto xs = Float32Shape(b.at(x.get()));
    const auto out = Float32Shape(r);
    if (!xs || xs->empty() || !out || *out != *xs) return false;
    const int64_t rank = static_cast<int64_t>(xs->size()), c = xs->back();
    if (!MeanOverLastAxis(b.at(mean.get()), rank) || !MeanOverLastAxis(b.at(var.get()), rank)) return false;
    if (!Near(Scalar(b.at(one.get())), 1.0) || !(Scalar(b.at(eps.get())) >= 0)) return false;
    for (const DFPattern& p : {gamma, beta}) {
      auto it = b.find(p.get());
      if (it == b.end()) continue;  // no beta
      const auto s = Float32Shape(it->second);
      if (!s || s->empty() || s->back() != c) return false;
      for (size_t k = 0; k + 1 < s->size(); ++k)
        if ((*s)[k] != 1) return false;
    }
    return true;
  };
  return {"dnnl.layer_norm", root, check, true};
}

graph::transform::CompositePattern Gelu() {
  DFPattern x = Wildcard(), k = IsConstant(), one = IsConstant(), half = IsConstant();
  DFPattern div = IsOp("divide")({x, k}), mul = IsOp("multiply")({x, k});
  DFPattern h = IsOp("add")({IsOp("erf")({div | mul}), one});
  DFPattern root = IsOp("multiply")({IsOp("multiply")({x, h}), half});
  auto check = [=](const Expr& r, const PatternMatcher& m) {
    const auto& b = m.bindings();
    const double kv = Scalar(b.at(k.get()));
    const bool divides = b.count(div.get()) > 0;  // the branch taken (a failed one leaves no binding)
    const bool k_ok = divides ? Near(kv, std::sqrt(2.0)) : Near(kv, 1 / std::sqrt(2.0));
    const auto xs = Float32Shape(b.at(x.get()));
    return k_ok && xs && Float32Shape(r) == xs && Near(Scalar(b.at(one.get())), 1.0) &&
           Near(Scalar(b.at(half.get())), 0.5);
  };
  return {"dnnl.gelu", root, check, true};
}

}  // namespace

std::vector<graph::transform::CompositePattern> Patterns() { return {LayerNorm(), Gelu()}; }

LayerNormParts LayerNormOf(const graph::FunctionNode& fn) {
  LayerNormParts parts;
  auto param = [&](const Expr& e) {
    for (size_t i = 0; i < fn.params.size(); ++i)
      if (fn.params[i].get() == e.get()) return static_cast<int>(i);
    TESSERA_THROW(InternalError, "dnnl.layer_norm: gamma / beta is not a parameter of the composite");
  };
  const auto* root = fn.body->as<graph::CallNode>();
  const graph::CallNode* scaled = root;
  if (root->op->as<graph::OpNode>()->name == "add") {
    parts.shift = param(root->args[1]);
    scaled = root->args[0]->as<graph::CallNode>();
  }
  parts.scale = param(scaled->args[1]);
  // scaled = multiply(multiply(d, divide(1, sqrt(add(var, eps)))), gamma)
  const auto* inv = scaled->args[0]->as<graph::CallNode>()->args[1]->as<graph::CallNode>();
  const auto* add = inv->args[1]->as<graph::CallNode>()->args[0]->as<graph::CallNode>();
  parts.epsilon = Scalar(add->args[1]);
  TESSERA_ICHECK(!std::isnan(parts.epsilon), "dnnl.layer_norm: epsilon is not a scalar constant in the composite");
  return parts;
}

}  // namespace tessera::byoc::dnnl
