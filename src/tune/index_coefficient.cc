#include "index_coefficient.h"

#include <cstdlib>

#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"

namespace tessera::tune::detail {
namespace {

using ir::ExprKind;

int64_t Larger(int64_t a, int64_t b) { return std::llabs(a) >= std::llabs(b) ? a : b; }

int64_t Coef(const ir::PrimExpr& e, const ir::VarNode* var, LetBindings& lets, int depth) {
  if (!e.defined() || depth > 64) return 0;  // depth: a guard against pathological let chains
  auto rec = [&](const ir::PrimExpr& x) { return Coef(x, var, lets, depth + 1); };
  ir::PrimExpr a, b;
  switch (e->kind) {
    case ExprKind::kVar: {
      const auto* v = static_cast<const ir::VarNode*>(e.get());
      if (v == var) return 1;
      auto it = lets.find(v);
      return it == lets.end() ? 0 : rec(it->second);
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
      ir::GetBinaryOperands(e, &a, &b);
      return e->kind == ExprKind::kAdd ? rec(a) + rec(b) : rec(a) - rec(b);
    case ExprKind::kMul: {
      ir::GetBinaryOperands(e, &a, &b);
      int64_t c = 0;
      if (ir::as_const_int(a, &c)) return c * rec(b);
      if (ir::as_const_int(b, &c)) return c * rec(a);
      const int64_t ca = rec(a), cb = rec(b);
      return ca == 0 && cb == 0 ? 0 : 1;
    }
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorMod: {
      ir::GetBinaryOperands(e, &a, &b);
      const int64_t ca = rec(a);
      int64_t c = 0;
      if (ir::as_const_int(b, &c) && c != 0) {
        const bool is_div = e->kind == ExprKind::kDiv || e->kind == ExprKind::kFloorDiv;
        return is_div ? ca / c : ca;
      }
      return ca == 0 && rec(b) == 0 ? 0 : 1;
    }
    case ExprKind::kMin:
    case ExprKind::kMax:
      ir::GetBinaryOperands(e, &a, &b);
      return Larger(rec(a), rec(b));
    case ExprKind::kSelect: {
      const auto* s = static_cast<const ir::SelectNode*>(e.get());
      return Larger(rec(s->true_value), rec(s->false_value));
    }
    case ExprKind::kCast:
      return rec(static_cast<const ir::CastNode*>(e.get())->value);
    case ExprKind::kRamp:
      return rec(static_cast<const ir::RampNode*>(e.get())->base);
    case ExprKind::kBroadcast:
      return rec(static_cast<const ir::BroadcastNode*>(e.get())->value);
    case ExprKind::kLet: {
      const auto* l = static_cast<const ir::LetNode*>(e.get());
      LetBindings inner = lets;  // Let inside an index is rare: copying is fine
      inner[l->var.get_var()] = l->value;
      return Coef(l->body, var, inner, depth + 1);
    }
    default:
      return 0;  // constants, comparisons, loads (an indirect index counts as not varying)
  }
}

}  // namespace

int64_t IndexCoefficient(const ir::PrimExpr& index, const ir::VarNode* var, const LetBindings& lets) {
  LetBindings scratch = lets;
  return Coef(index, var, scratch, 0);
}

}  // namespace tessera::tune::detail
