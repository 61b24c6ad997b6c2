// Analyzer::ConstIntBound and Bind (arith/analyzer.h): interval arithmetic over int64
// with saturation at the infinities.
#include <algorithm>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"

namespace tessera::arith {

namespace {

using namespace tessera::ir;
constexpr int64_t kPos = IntBound::kPosInf;
constexpr int64_t kNeg = IntBound::kNegInf;

int64_t SatAdd(int64_t a, int64_t b) {
  if (a == kPos || b == kPos) return (a == kNeg || b == kNeg) ? 0 : kPos;
  if (a == kNeg || b == kNeg) return kNeg;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPos : kNeg;
  return r;
}
int64_t SatNeg(int64_t a) { return a == kPos ? kNeg : a == kNeg ? kPos : -a; }
int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (a == kPos || a == kNeg || b == kPos || b == kNeg) return neg ? kNeg : kPos;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return neg ? kNeg : kPos;
  return r;
}
int64_t FloorDivI(int64_t a, int64_t b) {  // b > 0
  if (a == kPos || a == kNeg) return a;
  int64_t q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}

IntBound DtypeRange(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_int() && t.bits() < 64) return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  if (t.is_uint() && t.bits() < 64) return {0, (int64_t{1} << t.bits()) - 1};
  if (t.is_uint()) return {0, kPos};
  return {kNeg, kPos};
}

IntBound Intersect(IntBound a, IntBound b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

class BoundEvaluator {
 public:
  explicit BoundEvaluator(std::map<const VarNode*, IntBound>* vars) : vars_(vars) {}

  IntBound Eval(const PrimExpr& e) {
    DataType t = e.dtype();
    if (!(t.is_int() || t.is_uint() || t.is_bool())) return {kNeg, kPos};
    return Intersect(EvalRaw(e), DtypeRange(t.element_of()));
  }

 private:
  IntBound EvalRaw(const PrimExpr& e) {
    PrimExpr a, b;
    switch (e->kind) {
      case ExprKind::kIntImm: {
        int64_t v = e.as<IntImmNode>()->value;
        return {v, v};
      }
      case ExprKind::kVar: {
        auto it = vars_->find(e.as<VarNode>());
        return it == vars_->end() ? DtypeRange(e.dtype()) : it->second;
      }
      case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kMin:
      case ExprKind::kMax: case ExprKind::kFloorDiv: case ExprKind::kFloorMod: case ExprKind::kDiv:
      case ExprKind::kMod: {
        GetBinaryOperands(e, &a, &b);
        return Binary(e->kind, Eval(a), Eval(b));
      }
      case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT: case ExprKind::kLE: case ExprKind::kGT:
      case ExprKind::kGE: case ExprKind::kAnd: case ExprKind::kOr: case ExprKind::kNot:
        return {0, 1};
      case ExprKind::kSelect: {
        auto* s = e.as<SelectNode>();
        IntBound x = Eval(s->true_value), y = Eval(s->false_value);
        return {std::min(x.min_value, y.min_value), std::max(x.max_value, y.max_value)};
      }
      case ExprKind::kCast: {
        auto* c = e.as<CastNode>();
        DataType from = c->value.dtype();
        if (from.is_int() || from.is_uint() || from.is_bool()) return Intersect(Eval(c->value), DtypeRange(e.dtype()));
        return DtypeRange(e.dtype());
      }
      case ExprKind::kBroadcast: return Eval(e.as<BroadcastNode>()->value);
      case ExprKind::kRamp: {
        auto* r = e.as<RampNode>();
        IntBound base = Eval(r->base);
        IntBound last = Binary(ExprKind::kAdd, base,
                               Binary(ExprKind::kMul, Eval(r->stride), {r->lanes - 1, r->lanes - 1}));
        return {std::min(base.min_value, last.min_value), std::max(base.max_value, last.max_value)};
      }
      case ExprKind::kLet: {
        auto* l = e.as<LetNode>();
        (*vars_)[l->var.get_var()] = Eval(l->value);
        IntBound r = Eval(l->body);
        vars_->erase(l->var.get_var());
        return r;
      }
      default: return DtypeRange(e.dtype());
    }
  }

  static IntBound Binary(ExprKind k, IntBound x, IntBound y) {
    switch (k) {
      case ExprKind::kAdd: return {SatAdd(x.min_value, y.min_value), SatAdd(x.max_value, y.max_value)};
      case ExprKind::kSub: return {SatAdd(x.min_value, SatNeg(y.max_value)), SatAdd(x.max_value, SatNeg(y.min_value))};
      case ExprKind::kMul: {
        int64_t c[4] = {SatMul(x.min_value, y.min_value), SatMul(x.min_value, y.max_value),
                        SatMul(x.max_value, y.min_value), SatMul(x.max_value, y.max_value)};
        return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case ExprKind::kMin: return {std::min(x.min_value, y.min_value), std::min(x.max_value, y.max_value)};
      case ExprKind::kMax: return {std::max(x.min_value, y.min_value), std::max(x.max_value, y.max_value)};
      case ExprKind::kFloorDiv: case ExprKind::kDiv: {
        if (y.min_value <= 0) return {kNeg, kPos};  // divisor may be zero or negative: give up
        if (k == ExprKind::kDiv && x.min_value < 0) return {kNeg, kPos};
        int64_t c[4] = {FloorDivI(x.min_value, y.min_value), FloorDivI(x.min_value, y.max_value),
                        FloorDivI(x.max_value, y.min_value), FloorDivI(x.max_value, y.max_value)};
        return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case ExprKind::kFloorMod: case ExprKind::kMod: {
        if (y.min_value <= 0 || y.max_value == kPos) {
          return k == ExprKind::kFloorMod && y.min_value > 0 ? IntBound{0, kPos} : IntBound{kNeg, kPos};
        }
        if (k == ExprKind::kMod && x.min_value < 0) return {-(y.max_value - 1), y.max_value - 1};
        if (x.min_value >= 0 && x.max_value < y.min_value) return x;
        return {0, y.max_value - 1};
      }
      default: return {kNeg, kPos};
    }
  }

  std::map<const VarNode*, IntBound>* vars_;
};

}  // namespace

void Analyzer::Bind(const Var& var, const Range& range) {
  IntBound lo = ConstIntBound(range.min);
  IntBound hi = ConstIntBound(range.min + range.extent - make_const(range.extent.dtype(), 1));
  var_bounds_[var.get_var()] = {lo.min_value, hi.max_value};
}

void Analyzer::Bind(const Var& var, int64_t min_value, int64_t max_value) {
  var_bounds_[var.get_var()] = {min_value, max_value};
}

void Analyzer::Unbind(const Var& var) { var_bounds_.erase(var.get_var()); }

IntBound Analyzer::ConstIntBound(const PrimExpr& e) {
  TESSERA_ICHECK(e.defined(), "ConstIntBound of an undefined expression");
  return BoundEvaluator(&var_bounds_).Eval(e);
}

bool Analyzer::CanProveGreaterEqual(const PrimExpr& e, int64_t lower) {
  if (!(e.dtype().is_int() || e.dtype().is_uint())) return false;
  return ConstIntBound(Simplify(e)).min_value >= lower;
}

bool Analyzer::CanProve(const PrimExpr& cond) {
  PrimExpr s = Simplify(cond);
  int64_t v = 0;
  return ir::as_const_int(s, &v) && v != 0;
}

}  // namespace tessera::arith
