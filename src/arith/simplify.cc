// Analyzer::Simplify (arith/analyzer.h): a rewrite simplifier with a canonical
// linear form for scalar integer expressions.
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"

namespace tessera::arith {

using namespace tessera::ir;

namespace {

bool IsIndexScalar(DataType t) { return t.is_scalar() && (t.is_int() || t.is_uint()); }
bool IsFloatConst(const PrimExpr& e, double v) {
  if (auto* f = e.as<FloatImmNode>()) return f->value == v;
  if (auto* b = e.as<BroadcastNode>()) return IsFloatConst(b->value, v);
  return false;
}

int64_t FloorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// sum(coeff * term) + constant, terms in order of first appearance.
struct Linear {
  DataType dtype;
  std::vector<std::pair<PrimExpr, int64_t>> terms;
  int64_t constant = 0;

  void Add(const PrimExpr& term, int64_t coeff) {
    if (coeff == 0) return;
    for (auto& [t, c] : terms) {
      if (ExprStructuralEqual(t, term)) {
        c += coeff;
        return;
      }
    }
    terms.emplace_back(term, coeff);
  }
  void Add(const Linear& o, int64_t scale) {
    for (const auto& [t, c] : o.terms) Add(t, c * scale);
    constant += o.constant * scale;
  }
  bool IsConst() const {
    return std::all_of(terms.begin(), terms.end(), [](const auto& p) { return p.second == 0; });
  }
};

}  // namespace

class Simplifier {
 public:
  explicit Simplifier(Analyzer* analyzer) : an_(analyzer) {}

  PrimExpr Simplify(const PrimExpr& e) {
    if (IsIndexScalar(e.dtype()) &&
        (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub || e->kind == ExprKind::kMul)) {
      return FromLinear(ToLinear(e));
    }
    return Rewrite(e);
  }

 private:
  // ------------------------------------------------------------ linear form
  Linear ToLinear(const PrimExpr& e) {
    Linear l;
    l.dtype = e.dtype();
    PrimExpr a, b;
    switch (e->kind) {
      case ExprKind::kIntImm: l.constant = e.as<IntImmNode>()->value; return l;
      case ExprKind::kAdd: case ExprKind::kSub:
        GetBinaryOperands(e, &a, &b);
        l.Add(ToLinear(a), 1);
        l.Add(ToLinear(b), e->kind == ExprKind::kAdd ? 1 : -1);
        return l;
      case ExprKind::kMul: {
        GetBinaryOperands(e, &a, &b);
        Linear la = ToLinear(a), lb = ToLinear(b);
        if (la.IsConst()) {
          l.Add(lb, la.constant);
        } else if (lb.IsConst()) {
          l.Add(la, lb.constant);
        } else {
          l.Add(MulNode::make(FromLinear(la), FromLinear(lb)), 1);
        }
        return l;
      }
      default: {
        PrimExpr s = Rewrite(e);
        if (auto* imm = s.as<IntImmNode>()) {
          l.constant = imm->value;
        } else if (s->kind == ExprKind::kAdd || s->kind == ExprKind::kSub || s->kind == ExprKind::kMul) {
          return ToLinear(s);
        } else {
          l.Add(s, 1);
        }
        return l;
      }
    }
  }

  // floordiv(x, c) * (k * c) + floormod(x, c) * k  ->  x * k
  void MergeDivMod(Linear* l) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < l->terms.size() && !changed; ++i) {
        auto* mod = l->terms[i].first.as<FloorModNode>();
        int64_t k = l->terms[i].second, c = 0;
        if (!mod || k == 0 || !as_const_int(mod->b, &c)) continue;
        for (size_t j = 0; j < l->terms.size(); ++j) {
          auto* div = l->terms[j].first.as<FloorDivNode>();
          if (!div || l->terms[j].second != k * c || !is_const_int(div->b, c) || !ExprStructuralEqual(div->a, mod->a)) {
            continue;
          }
          Linear x = ToLinear(mod->a);
          l->terms[i].second = 0;
          l->terms[j].second = 0;
          l->Add(x, k);
          changed = true;
          break;
        }
      }
    }
  }

  PrimExpr FromLinear(Linear l) {
    MergeDivMod(&l);
    DataType t = l.dtype;
    PrimExpr out;
    auto term = [&](const PrimExpr& x, int64_t c) { return c == 1 ? x : MulNode::make(x, make_const(t, c)); };
    for (const auto& [x, c] : l.terms) {
      if (c > 0) out = out.defined() ? AddNode::make(out, term(x, c)) : term(x, c);
    }
    for (const auto& [x, c] : l.terms) {
      if (c >= 0) continue;
      out = out.defined() ? SubNode::make(out, term(x, -c)) : term(x, c);
    }
    if (!out.defined()) return make_const(t, l.constant);
    if (l.constant > 0) out = AddNode::make(out, make_const(t, l.constant));
    if (l.constant < 0) out = SubNode::make(out, make_const(t, -l.constant));
    return out;
  }

  // ------------------------------------------------------------ rewrites
  PrimExpr Rewrite(const PrimExpr& e) {
    PrimExpr a, b;
    if (GetBinaryOperands(e, &a, &b)) {
      PrimExpr sa = Simplify(a), sb = Simplify(b);
      PrimExpr r = Binary(e->kind, sa, sb);
      if (r.defined()) return r;
      if (sa.same_as(a) && sb.same_as(b)) return e;
      return MakeBinary(e->kind, sa, sb);
    }
    switch (e->kind) {
      case ExprKind::kNot: return Not(Simplify(e.as<NotNode>()->a));
      case ExprKind::kSelect: {
        auto* s = e.as<SelectNode>();
        PrimExpr c = Simplify(s->condition);
        PrimExpr tv = Simplify(s->true_value), fv = Simplify(s->false_value);
        int64_t v;
        if (as_const_int(c, &v)) return v ? tv : fv;
        if (ExprStructuralEqual(tv, fv)) return tv;
        return SelectNode::make(c, tv, fv);
      }
      case ExprKind::kCast: {
        auto* c = e.as<CastNode>();
        PrimExpr v = Simplify(c->value);
        if (v.as<IntImmNode>() || v.as<FloatImmNode>()) return cast(e.dtype(), v);
        return v.same_as(c->value) ? e : CastNode::make(e.dtype(), v);
      }
      case ExprKind::kCall: {
        auto* c = e.as<CallNode>();
        std::vector<PrimExpr> args;
        for (const auto& x : c->args) args.push_back(Simplify(x));
        return CallNode::make(e.dtype(), c->op, std::move(args));
      }
      case ExprKind::kRamp: {
        auto* r = e.as<RampNode>();
        PrimExpr base = Simplify(r->base), stride = Simplify(r->stride);
        if (is_zero(stride)) return BroadcastNode::make(base, r->lanes);
        return RampNode::make(base, stride, r->lanes);
      }
      case ExprKind::kBroadcast: {
        auto* x = e.as<BroadcastNode>();
        return BroadcastNode::make(Simplify(x->value), x->lanes);
      }
      case ExprKind::kLet: {
        auto* l = e.as<LetNode>();
        PrimExpr v = Simplify(l->value);
        bool bound = IsIndexScalar(v.dtype());
        if (bound) {
          IntBound vb = an_->ConstIntBound(v);
          an_->var_bounds_[l->var.get_var()] = vb;
        }
        PrimExpr body = Simplify(l->body);
        if (bound) an_->var_bounds_.erase(l->var.get_var());
        return LetNode::make(l->var, v, body);
      }
      default: return e;  // immediates, variables, BufferLoad, Reduce
    }
  }

  PrimExpr Not(const PrimExpr& a) {
    int64_t v;
    if (as_const_int(a, &v) && a.dtype().is_scalar()) return make_const(a.dtype(), int64_t{v == 0});
    PrimExpr x, y;
    if (GetBinaryOperands(a, &x, &y)) {
      // !(x < y) is x >= y only where no operand is NaN: for floats it is "x >= y or unordered",
      // so ordered comparisons of floats keep their Not (== and != negate each other exactly).
      const bool exact = !x.dtype().is_floating();
      switch (a->kind) {
        case ExprKind::kLT: if (exact) return GENode::make(x, y); break;
        case ExprKind::kLE: if (exact) return GTNode::make(x, y); break;
        case ExprKind::kGT: if (exact) return LENode::make(x, y); break;
        case ExprKind::kGE: if (exact) return LTNode::make(x, y); break;
        case ExprKind::kEQ: return NENode::make(x, y);
        case ExprKind::kNE: return EQNode::make(x, y);
        default: break;
      }
    }
    if (auto* n = a.as<NotNode>()) return n->a;
    return NotNode::make(a);
  }

  // Rules for binary nodes with simplified operands; undefined when none applies.
  PrimExpr Binary(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
    DataType t = a.dtype();
    // Constant folding (the builders fold immediates).
    bool ia = a.as<IntImmNode>() || a.as<FloatImmNode>();
    bool ib = b.as<IntImmNode>() || b.as<FloatImmNode>();
    if (ia && ib) {
      PrimExpr f = FoldBuilder(k, a, b);
      if (f.defined() && (f.as<IntImmNode>() || f.as<FloatImmNode>())) return f;
    }
    if (t.is_vector()) return VectorRule(k, a, b);
    if (t.is_float() || t.is_bfloat16()) {
      switch (k) {
        case ExprKind::kAdd: if (IsFloatConst(b, 0)) return a; if (IsFloatConst(a, 0)) return b; break;
        case ExprKind::kSub: if (IsFloatConst(b, 0)) return a; break;
        case ExprKind::kMul: if (IsFloatConst(b, 1)) return a; if (IsFloatConst(a, 1)) return b; break;
        case ExprKind::kDiv: if (IsFloatConst(b, 1)) return a; break;
        default: break;
      }
      return PrimExpr();
    }
    if (a.dtype().is_bool() && (k == ExprKind::kAnd || k == ExprKind::kOr)) return Logic(k, a, b);
    if (!IsIndexScalar(t)) return PrimExpr();
    int64_t c = 0;
    bool bconst = as_const_int(b, &c);
    switch (k) {
      case ExprKind::kFloorDiv: if (bconst) return DivRule(a, c, /*mod=*/false); break;
      case ExprKind::kFloorMod: if (bconst) return DivRule(a, c, /*mod=*/true); break;
      case ExprKind::kDiv: case ExprKind::kMod:
        if (bconst && c > 0 && an_->ConstIntBound(a).min_value >= 0) return DivRule(a, c, k == ExprKind::kMod);
        break;
      case ExprKind::kMin: case ExprKind::kMax: {
        // a - b wraps for unsigned dtypes, so its bound says nothing about a vs b.
        if (t.is_uint()) break;
        IntBound d = an_->ConstIntBound(Simplify(SubNode::make(a, b)));
        if (d.max_value <= 0) return k == ExprKind::kMin ? a : b;
        if (d.min_value >= 0) return k == ExprKind::kMin ? b : a;
        break;
      }
      case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT: case ExprKind::kLE: case ExprKind::kGT:
      case ExprKind::kGE: {
        if (t.is_uint()) break;  // a - b wraps: see kMin / kMax
        IntBound d = an_->ConstIntBound(Simplify(SubNode::make(a, b)));
        int r = Decide(k, d);
        if (r >= 0) return make_const(DataType::Bool(), int64_t{r});
        break;
      }
      default: break;
    }
    return PrimExpr();
  }

  // 1 / 0 when the comparison of d = a - b with 0 is decided by d's bounds, else -1.
  static int Decide(ExprKind k, IntBound d) {
    switch (k) {
      case ExprKind::kEQ: return d.is_const() && d.min_value == 0 ? 1 : (d.min_value > 0 || d.max_value < 0) ? 0 : -1;
      case ExprKind::kNE: return d.is_const() && d.min_value == 0 ? 0 : (d.min_value > 0 || d.max_value < 0) ? 1 : -1;
      case ExprKind::kLT: return d.max_value < 0 ? 1 : d.min_value >= 0 ? 0 : -1;
      case ExprKind::kLE: return d.max_value <= 0 ? 1 : d.min_value > 0 ? 0 : -1;
      case ExprKind::kGT: return d.min_value > 0 ? 1 : d.max_value <= 0 ? 0 : -1;
      case ExprKind::kGE: return d.min_value >= 0 ? 1 : d.max_value < 0 ? 0 : -1;
      default: return -1;
    }
  }

  PrimExpr Logic(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
    int64_t v;
    bool is_and = k == ExprKind::kAnd;
    for (int side = 0; side < 2; ++side) {
      const PrimExpr& x = side ? b : a;
      const PrimExpr& other = side ? a : b;
      if (as_const_int(x, &v)) {
        if (is_and) return v ? other : x;
        return v ? x : other;
      }
    }
    if (ExprStructuralEqual(a, b)) return a;
    return PrimExpr();
  }

  // floordiv / floormod (or proven non-negative trunc versions) of a by constant c.
  PrimExpr DivRule(const PrimExpr& a, int64_t c, bool mod) {
    DataType t = a.dtype();
    if (c == 1) return mod ? make_const(t, 0) : a;
    if (c <= 0) return PrimExpr();
    if (!mod) {
      if (auto* inner = a.as<FloorDivNode>()) {  // floordiv(floordiv(x, c1), c) = floordiv(x, c1 * c)
        int64_t c1;
        if (as_const_int(inner->b, &c1) && c1 > 0) return DivRule(inner->a, c1 * c, false);
      }
    }
    Linear la = ToLinear(a);
    Linear q, r;
    q.dtype = r.dtype = t;
    for (const auto& [x, k] : la.terms) {
      if (k % c == 0) q.Add(x, k / c); else r.Add(x, k);
    }
    q.constant = FloorDivI(la.constant, c);
    r.constant = la.constant - q.constant * c;
    PrimExpr rem = FromLinear(r);
    IntBound rb = an_->ConstIntBound(rem);
    bool r_in_one_period = rb.min_value != IntBound::kNegInf && rb.max_value != IntBound::kPosInf &&
                           FloorDivI(rb.min_value, c) == FloorDivI(rb.max_value, c);
    if (mod) {
      if (r_in_one_period) {
        Linear out = r;
        out.constant -= FloorDivI(rb.min_value, c) * c;
        return FromLinear(out);
      }
      if (auto* inner = rem.as<FloorModNode>(); inner && is_const_int(inner->b, c)) return rem;
      return FloorModNode::make(rem, make_const(t, c));
    }
    if (r_in_one_period) {
      q.constant += FloorDivI(rb.min_value, c);
      return FromLinear(q);
    }
    if (q.IsConst() && q.constant == 0) return FloorDivNode::make(rem, make_const(t, c));
    q.Add(FloorDivNode::make(rem, make_const(t, c)), 1);
    return FromLinear(q);
  }

  PrimExpr VectorRule(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
    auto *ra = a.as<RampNode>(), *rb = b.as<RampNode>();
    auto *ba = a.as<BroadcastNode>(), *bb = b.as<BroadcastNode>();
    int lanes = a.dtype().lanes();
    switch (k) {
      case ExprKind::kAdd: case ExprKind::kSub: {
        bool add = k == ExprKind::kAdd;
        auto combine = [&](const PrimExpr& x, const PrimExpr& y) { return Simplify(add ? x + y : x - y); };
        if (ba && bb) return BroadcastNode::make(combine(ba->value, bb->value), lanes);
        if (ra && bb) return RampNode::make(combine(ra->base, bb->value), ra->stride, lanes);
        if (ba && rb) {
          return RampNode::make(combine(ba->value, rb->base), add ? rb->stride : Simplify(-rb->stride), lanes);
        }
        if (ra && rb) return RampNode::make(combine(ra->base, rb->base), combine(ra->stride, rb->stride), lanes);
        if (bb && IsZeroLike(bb->value)) return a;
        if (ba && add && IsZeroLike(ba->value)) return b;
        break;
      }
      case ExprKind::kMul: {
        if (ba && bb) return BroadcastNode::make(Simplify(ba->value * bb->value), lanes);
        if (ra && bb) return RampNode::make(Simplify(ra->base * bb->value), Simplify(ra->stride * bb->value), lanes);
        if (ba && rb) return RampNode::make(Simplify(ba->value * rb->base), Simplify(ba->value * rb->stride), lanes);
        break;
      }
      case ExprKind::kFloorDiv: case ExprKind::kFloorMod:
        if (ra && bb) return RampDivMod(k == ExprKind::kFloorMod, *ra, bb->value);
        [[fallthrough]];  // two broadcasts: as every other operator
      default:
        if (ba && bb) {
          PrimExpr s = Simplify(MakeBinary(k, ba->value, bb->value));
          return BroadcastNode::make(s, lanes);
        }
        break;
    }
    return PrimExpr();
  }

  // floordiv / floormod of ramp(base, s, lanes) by a constant c > 0 when no two lanes fall in
  // different periods of c: broadcast(floordiv(base, c)), ramp(floormod(base, c), s, lanes). With g
  // the gcd of c and base's coefficients, base mod c is (base's constant mod g) + a multiple of g,
  // so the lanes stay in one period when (constant mod g) + s * (lanes - 1) < g (0 <= s). A vector
  // load of NCHW<b>c from NCHW<2b>c (layout_transform) indexes ramp(16 * j, 1, 16) // 32: one
  // contiguous load instead of a gather. Undefined when it does not hold.
  PrimExpr RampDivMod(bool mod, const RampNode& r, const PrimExpr& divisor) {
    int64_t c = 0, s = 0;
    if (!as_const_int(divisor, &c) || !as_const_int(r.stride, &s) || c <= 0 || s < 0 || !IsIndexScalar(r.base.dtype()))
      return PrimExpr();
    const Linear base = ToLinear(r.base);
    int64_t g = c;
    for (const auto& [term, coeff] : base.terms) g = std::gcd(g, coeff < 0 ? -coeff : coeff);
    const int64_t first = base.constant - FloorDivI(base.constant, g) * g;
    if (first + s * (r.lanes - 1) >= g) return PrimExpr();
    const PrimExpr cc = make_const(r.base.dtype(), c);
    if (mod) return RampNode::make(Simplify(floormod(r.base, cc)), r.stride, r.lanes);
    return BroadcastNode::make(Simplify(floordiv(r.base, cc)), r.lanes);
  }

  static bool IsZeroLike(const PrimExpr& e) { return is_zero(e) || IsFloatConst(e, 0); }

  static PrimExpr FoldBuilder(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
    switch (k) {
      case ExprKind::kAdd: return a + b;
      case ExprKind::kSub: return a - b;
      case ExprKind::kMul: return a * b;
      case ExprKind::kDiv: return a / b;
      case ExprKind::kMod: return a % b;
      case ExprKind::kFloorDiv: return floordiv(a, b);
      case ExprKind::kFloorMod: return floormod(a, b);
      case ExprKind::kMin: return min(a, b);
      case ExprKind::kMax: return max(a, b);
      case ExprKind::kEQ: return a == b;
      case ExprKind::kNE: return a != b;
      case ExprKind::kLT: return a < b;
      case ExprKind::kLE: return a <= b;
      case ExprKind::kGT: return a > b;
      case ExprKind::kGE: return a >= b;
      case ExprKind::kAnd: return a && b;
      case ExprKind::kOr: return a || b;
      default: return PrimExpr();
    }
  }

  Analyzer* an_;
};

PrimExpr Analyzer::Simplify(const PrimExpr& e) {
  TESSERA_ICHECK(e.defined(), "Simplify of an undefined expression");
  return Simplifier(this).Simplify(e);
}

}  // namespace tessera::arith
