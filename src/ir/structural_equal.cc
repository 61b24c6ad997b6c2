// ExprComparator / ExprHasher (ir/structural_equal.h).
#include "tessera/ir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "tessera/ir/expr_functor.h"

namespace tessera::ir {

bool ExprComparator::DefineVar(const Var& a, const Var& b) {
  if (a.dtype() != b.dtype()) return false;
  const VarNode* va = a.get_var();
  const VarNode* vb = b.get_var();
  if (auto it = lhs_to_rhs_.find(va); it != lhs_to_rhs_.end()) rhs_to_lhs_.erase(it->second);
  if (auto it = rhs_to_lhs_.find(vb); it != rhs_to_lhs_.end()) lhs_to_rhs_.erase(it->second);
  lhs_to_rhs_[va] = vb;
  rhs_to_lhs_[vb] = va;
  return true;
}

bool ExprComparator::VarEqual(const VarNode* a, const VarNode* b) {
  if (auto it = lhs_to_rhs_.find(a); it != lhs_to_rhs_.end()) return it->second == b;
  if (rhs_to_lhs_.count(b)) return false;
  if (a->dtype != b->dtype) return false;
  if (a == b || map_free_vars_) {
    lhs_to_rhs_[a] = b;
    rhs_to_lhs_[b] = a;
    return true;
  }
  return false;
}

bool ExprComparator::Equal(const PrimExpr& a, const PrimExpr& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a->kind != b->kind || a.dtype() != b.dtype()) return false;
  PrimExpr aa, ab, ba, bb;
  if (GetBinaryOperands(a, &aa, &ab)) {
    GetBinaryOperands(b, &ba, &bb);
    return Equal(aa, ba) && Equal(ab, bb);
  }
  switch (a->kind) {
    case ExprKind::kIntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::kStringImm: return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value;
    case ExprKind::kVar: return VarEqual(a.as<VarNode>(), b.as<VarNode>());
    case ExprKind::kNot: return Equal(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::kSelect: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return Equal(x->condition, y->condition) && Equal(x->true_value, y->true_value) &&
             Equal(x->false_value, y->false_value);
    }
    case ExprKind::kCast: return Equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kCall: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      if (x->op != y->op || x->args.size() != y->args.size()) return false;
      for (size_t i = 0; i < x->args.size(); ++i) {
        if (!Equal(x->args[i], y->args[i])) return false;
      }
      return true;
    }
    case ExprKind::kRamp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return x->lanes == y->lanes && Equal(x->base, y->base) && Equal(x->stride, y->stride);
    }
    case ExprKind::kBroadcast: {
      auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      return x->lanes == y->lanes && Equal(x->value, y->value);
    }
    case ExprKind::kLet: {
      auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
      return Equal(x->value, y->value) && DefineVar(x->var, y->var) && Equal(x->body, y->body);
    }
    default: return EqualExtension(a, b);
  }
}

size_t ExprHasher::HashVar(const VarNode* v) {
  auto it = index_.find(v);
  size_t idx = it != index_.end() ? it->second : (index_[v] = next_++);
  return HashCombine(std::hash<std::string>()(v->dtype.str()), idx * 31 + 7);
}

size_t ExprHasher::DefineVar(const VarNode* v) {
  index_[v] = next_++;
  return HashVar(v);
}

size_t ExprHasher::Hash(const PrimExpr& e) {
  if (!e.defined()) return 0x12345;
  size_t h = HashCombine(static_cast<size_t>(e->kind) + 1, std::hash<std::string>()(e.dtype().str()));
  PrimExpr a, b;
  if (GetBinaryOperands(e, &a, &b)) return HashCombine(HashCombine(h, Hash(a)), Hash(b));
  switch (e->kind) {
    case ExprKind::kIntImm: return HashCombine(h, std::hash<int64_t>()(e.as<IntImmNode>()->value));
    case ExprKind::kFloatImm: {
      double v = e.as<FloatImmNode>()->value;
      return HashCombine(h, std::isnan(v) ? 0xdead : std::hash<double>()(v));
    }
    case ExprKind::kStringImm: return HashCombine(h, std::hash<std::string>()(e.as<StringImmNode>()->value));
    case ExprKind::kVar: return HashCombine(h, HashVar(e.as<VarNode>()));
    case ExprKind::kNot: return HashCombine(h, Hash(e.as<NotNode>()->a));
    case ExprKind::kSelect: {
      auto* x = e.as<SelectNode>();
      return HashCombine(HashCombine(HashCombine(h, Hash(x->condition)), Hash(x->true_value)),
                         Hash(x->false_value));
    }
    case ExprKind::kCast: return HashCombine(h, Hash(e.as<CastNode>()->value));
    case ExprKind::kCall: {
      auto* x = e.as<CallNode>();
      h = HashCombine(h, std::hash<std::string>()(x->op));
      for (const auto& arg : x->args) h = HashCombine(h, Hash(arg));
      return h;
    }
    case ExprKind::kRamp: {
      auto* x = e.as<RampNode>();
      return HashCombine(HashCombine(HashCombine(h, x->lanes), Hash(x->base)), Hash(x->stride));
    }
    case ExprKind::kBroadcast: {
      auto* x = e.as<BroadcastNode>();
      return HashCombine(HashCombine(h, x->lanes), Hash(x->value));
    }
    case ExprKind::kLet: {
      auto* x = e.as<LetNode>();
      h = HashCombine(h, Hash(x->value));
      h = HashCombine(h, DefineVar(x->var.get_var()));
      return HashCombine(h, Hash(x->body));
    }
    default: return HashCombine(h, HashExtension(e));
  }
}

bool ExprStructuralEqual(const PrimExpr& a, const PrimExpr& b, bool map_free_vars) {
  return ExprComparator(map_free_vars).Equal(a, b);
}

size_t ExprStructuralHash(const PrimExpr& e) { return ExprHasher().Hash(e); }

}  // namespace tessera::ir
