// Expression builders of ir/op.h: dtype matching and folding of immediates.
#include "tessera/ir/op.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/support/error.h"

namespace tessera::ir {

PrimExpr make_const(DataType t, int64_t value) {
  if (t.is_vector()) return BroadcastNode::make(make_const(t.element_of(), value), t.lanes());
  if (t.is_float() || t.is_bfloat16()) return FloatImmNode::make(t, static_cast<double>(value));
  if (t.is_bool()) return IntImmNode::make(t, value != 0);
  return IntImmNode::make(t, value);
}

PrimExpr make_const(DataType t, double value) {
  if (t.is_vector()) return BroadcastNode::make(make_const(t.element_of(), value), t.lanes());
  if (t.is_float() || t.is_bfloat16()) return FloatImmNode::make(t, value);
  return make_const(t, static_cast<int64_t>(value));
}

PrimExpr make_zero(DataType t) { return make_const(t, int64_t{0}); }

PrimExpr max_value(DataType t) {
  DataType s = t.element_of();
  PrimExpr v;
  if (s.is_float() || s.is_bfloat16()) {
    v = FloatImmNode::make(s, std::numeric_limits<double>::infinity());
  } else if (s.is_bool()) {
    v = IntImmNode::make(s, 1);
  } else if (s.is_int()) {
    v = IntImmNode::make(s, s.bits() >= 64 ? std::numeric_limits<int64_t>::max()
                                           : (int64_t{1} << (s.bits() - 1)) - 1);
  } else if (s.is_uint()) {
    v = IntImmNode::make(s, s.bits() >= 64 ? std::numeric_limits<int64_t>::max()
                                           : (int64_t{1} << s.bits()) - 1);
  } else {
    TESSERA_THROW(InternalError, "max_value of ", t.str());
  }
  return t.is_vector() ? BroadcastNode::make(v, t.lanes()) : v;
}

PrimExpr min_value(DataType t) {
  DataType s = t.element_of();
  PrimExpr v;
  if (s.is_float() || s.is_bfloat16()) {
    v = FloatImmNode::make(s, -std::numeric_limits<double>::infinity());
  } else if (s.is_int()) {
    v = IntImmNode::make(s, s.bits() >= 64 ? std::numeric_limits<int64_t>::min()
                                           : -(int64_t{1} << (s.bits() - 1)));
  } else if (s.is_uint() || s.is_bool()) {
    v = IntImmNode::make(s, 0);
  } else {
    TESSERA_THROW(InternalError, "min_value of ", t.str());
  }
  return t.is_vector() ? BroadcastNode::make(v, t.lanes()) : v;
}

bool as_const_int(const PrimExpr& e, int64_t* out) {
  if (!e.defined()) return false;
  if (auto* i = e.as<IntImmNode>()) {
    *out = i->value;
    return true;
  }
  if (auto* b = e.as<BroadcastNode>()) return as_const_int(b->value, out);
  return false;
}

int64_t get_const_int(const PrimExpr& e) {
  int64_t v = 0;
  TESSERA_ICHECK(as_const_int(e, &v), "expected an integer constant");
  return v;
}

bool is_const_int(const PrimExpr& e, int64_t value) {
  int64_t v = 0;
  return as_const_int(e, &v) && v == value;
}

namespace {

bool IsImm(const PrimExpr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

// A scalar immediate converted to dtype t (scalar or vector).
PrimExpr ConvertImm(const PrimExpr& imm, DataType t) {
  if (auto* i = imm.as<IntImmNode>()) return make_const(t, i->value);
  auto* f = imm.as<FloatImmNode>();
  return make_const(t, f->value);
}

// Brings a and b to one dtype (see op.h) or throws InternalError.
void MatchTypes(const char* op, PrimExpr& a, PrimExpr& b) {
  TESSERA_ICHECK(a.defined() && b.defined(), "operator ", op, ": undefined operand");
  if (a.dtype() == b.dtype()) return;
  DataType ta = a.dtype(), tb = b.dtype();
  if (IsImm(a) && !IsImm(b)) {
    a = ConvertImm(a, tb);
    return;
  }
  if (IsImm(b) && !IsImm(a)) {
    b = ConvertImm(b, ta);
    return;
  }
  if (IsImm(a) && IsImm(b)) {
    // Two literals: float wins over int, wider wins.
    bool af = ta.is_float(), bf = tb.is_float();
    if (af != bf) {
      if (af) b = ConvertImm(b, ta); else a = ConvertImm(a, tb);
    } else if (ta.bits() >= tb.bits()) {
      b = ConvertImm(b, ta);
    } else {
      a = ConvertImm(a, tb);
    }
    return;
  }
  if (ta.element_of() == tb.element_of()) {
    if (ta.is_scalar()) { a = BroadcastNode::make(a, tb.lanes()); return; }
    if (tb.is_scalar()) { b = BroadcastNode::make(b, ta.lanes()); return; }
  }
  TESSERA_THROW(InternalError, "operator ", op, ": operand dtypes ", ta.str(), " and ", tb.str(),
                " differ; insert a Cast");
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// v truncated to t's width, as the stored int64 of an immediate of t (sign-extended for a signed
// dtype, zero-extended for an unsigned one; 64-bit unsigned values keep their bits).
int64_t Wrap(DataType t, uint64_t v) {
  const int bits = t.is_bool() ? 1 : t.bits();
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (t.is_int() && (v >> (bits - 1)) != 0) v |= ~mask;
  return static_cast<int64_t>(v);
}

// Folds op(a, b) when both are scalar immediates; returns an undefined expr otherwise.
PrimExpr Fold(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  auto* ia = a.as<IntImmNode>();
  auto* ib = b.as<IntImmNode>();
  DataType t = a.dtype();
  DataType bt = DataType::Bool();
  if (ia && ib) {
    int64_t x = ia->value, y = ib->value;
    // uint64 immediates above INT64_MAX are stored as negative int64: they compare, divide and
    // order as unsigned values (no fold of division by zero or of INT64_MIN / -1).
    if (t.is_uint() && t.bits() == 64) {
      const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
      switch (k) {
        case ExprKind::kDiv: case ExprKind::kFloorDiv: if (uy != 0) return make_const(t, Wrap(t, ux / uy)); break;
        case ExprKind::kMod: case ExprKind::kFloorMod: if (uy != 0) return make_const(t, Wrap(t, ux % uy)); break;
        case ExprKind::kMin: return make_const(t, Wrap(t, std::min(ux, uy)));
        case ExprKind::kMax: return make_const(t, Wrap(t, std::max(ux, uy)));
        case ExprKind::kLT: return make_const(bt, int64_t{ux < uy});
        case ExprKind::kLE: return make_const(bt, int64_t{ux <= uy});
        case ExprKind::kGT: return make_const(bt, int64_t{ux > uy});
        case ExprKind::kGE: return make_const(bt, int64_t{ux >= uy});
        default: break;
      }
    }
    const bool overflows = y == -1 && x == std::numeric_limits<int64_t>::min();
    // +, -, * wrap at the dtype's width, as the generated code does (no signed overflow here).
    const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    switch (k) {
      case ExprKind::kAdd: return make_const(t, Wrap(t, ux + uy));
      case ExprKind::kSub: return make_const(t, Wrap(t, ux - uy));
      case ExprKind::kMul: return make_const(t, Wrap(t, ux * uy));
      case ExprKind::kDiv: if (y != 0 && !overflows) return make_const(t, x / y); break;
      case ExprKind::kMod: if (y != 0 && !overflows) return make_const(t, x % y); break;
      case ExprKind::kFloorDiv: if (y != 0 && !overflows) return make_const(t, FloorDivInt(x, y)); break;
      case ExprKind::kFloorMod: if (y != 0 && !overflows) return make_const(t, FloorModInt(x, y)); break;
      case ExprKind::kMin: return make_const(t, std::min(x, y));
      case ExprKind::kMax: return make_const(t, std::max(x, y));
      case ExprKind::kEQ: return make_const(bt, int64_t{x == y});
      case ExprKind::kNE: return make_const(bt, int64_t{x != y});
      case ExprKind::kLT: return make_const(bt, int64_t{x < y});
      case ExprKind::kLE: return make_const(bt, int64_t{x <= y});
      case ExprKind::kGT: return make_const(bt, int64_t{x > y});
      case ExprKind::kGE: return make_const(bt, int64_t{x >= y});
      case ExprKind::kAnd: return make_const(bt, int64_t{x && y});
      case ExprKind::kOr: return make_const(bt, int64_t{x || y});
      default: break;
    }
    return PrimExpr();
  }
  auto* fa = a.as<FloatImmNode>();
  auto* fb = b.as<FloatImmNode>();
  if (fa && fb) {
    double x = fa->value, y = fb->value;
    switch (k) {
      case ExprKind::kAdd: return make_const(t, x + y);
      case ExprKind::kSub: return make_const(t, x - y);
      case ExprKind::kMul: return make_const(t, x * y);
      case ExprKind::kDiv: if (y != 0) return make_const(t, x / y); break;
      case ExprKind::kMin: return make_const(t, std::min(x, y));
      case ExprKind::kMax: return make_const(t, std::max(x, y));
      case ExprKind::kEQ: return make_const(bt, int64_t{x == y});
      case ExprKind::kNE: return make_const(bt, int64_t{x != y});
      case ExprKind::kLT: return make_const(bt, int64_t{x < y});
      case ExprKind::kLE: return make_const(bt, int64_t{x <= y});
      case ExprKind::kGT: return make_const(bt, int64_t{x > y});
      case ExprKind::kGE: return make_const(bt, int64_t{x >= y});
      default: break;
    }
  }
  return PrimExpr();
}

template <typename NodeT>
PrimExpr Build(const char* name, PrimExpr a, PrimExpr b) {
  MatchTypes(name, a, b);
  if (PrimExpr f = Fold(NodeT::kKind, a, b); f.defined()) return f;
  return NodeT::make(std::move(a), std::move(b));
}

PrimExpr Intrin(const char* name, PrimExpr x) {
  TESSERA_ICHECK(x.defined(), name, ": undefined argument");
  DataType t = x.dtype();
  return CallNode::make(t, name, {std::move(x)});
}

}  // namespace

PrimExpr operator+(PrimExpr a, PrimExpr b) { return Build<AddNode>("+", std::move(a), std::move(b)); }
PrimExpr operator-(PrimExpr a, PrimExpr b) { return Build<SubNode>("-", std::move(a), std::move(b)); }
PrimExpr operator-(PrimExpr a) {
  TESSERA_ICHECK(a.defined(), "negation of undefined expr");
  if (auto* i = a.as<IntImmNode>()) return make_const(a.dtype(), -i->value);
  if (auto* f = a.as<FloatImmNode>()) return make_const(a.dtype(), -f->value);
  return SubNode::make(make_zero(a.dtype()), a);
}
PrimExpr operator*(PrimExpr a, PrimExpr b) { return Build<MulNode>("*", std::move(a), std::move(b)); }
PrimExpr operator/(PrimExpr a, PrimExpr b) { return Build<DivNode>("/", std::move(a), std::move(b)); }
PrimExpr operator%(PrimExpr a, PrimExpr b) { return Build<ModNode>("%", std::move(a), std::move(b)); }
PrimExpr operator==(PrimExpr a, PrimExpr b) { return Build<EQNode>("==", std::move(a), std::move(b)); }
PrimExpr operator!=(PrimExpr a, PrimExpr b) { return Build<NENode>("!=", std::move(a), std::move(b)); }
PrimExpr operator<(PrimExpr a, PrimExpr b) { return Build<LTNode>("<", std::move(a), std::move(b)); }
PrimExpr operator<=(PrimExpr a, PrimExpr b) { return Build<LENode>("<=", std::move(a), std::move(b)); }
PrimExpr operator>(PrimExpr a, PrimExpr b) { return Build<GTNode>(">", std::move(a), std::move(b)); }
PrimExpr operator>=(PrimExpr a, PrimExpr b) { return Build<GENode>(">=", std::move(a), std::move(b)); }
PrimExpr operator&&(PrimExpr a, PrimExpr b) { return Build<AndNode>("&&", std::move(a), std::move(b)); }
PrimExpr operator||(PrimExpr a, PrimExpr b) { return Build<OrNode>("||", std::move(a), std::move(b)); }
PrimExpr operator!(PrimExpr a) {
  TESSERA_ICHECK(a.defined(), "! of undefined expr");
  if (auto* i = a.as<IntImmNode>()) return make_const(a.dtype(), int64_t{i->value == 0});
  return NotNode::make(std::move(a));
}

PrimExpr floordiv(PrimExpr a, PrimExpr b) { return Build<FloorDivNode>("floordiv", std::move(a), std::move(b)); }
PrimExpr floormod(PrimExpr a, PrimExpr b) { return Build<FloorModNode>("floormod", std::move(a), std::move(b)); }
PrimExpr truncdiv(PrimExpr a, PrimExpr b) { return Build<DivNode>("truncdiv", std::move(a), std::move(b)); }
PrimExpr truncmod(PrimExpr a, PrimExpr b) { return Build<ModNode>("truncmod", std::move(a), std::move(b)); }
PrimExpr min(PrimExpr a, PrimExpr b) { return Build<MinNode>("min", std::move(a), std::move(b)); }
PrimExpr max(PrimExpr a, PrimExpr b) { return Build<MaxNode>("max", std::move(a), std::move(b)); }

PrimExpr select(PrimExpr cond, PrimExpr true_value, PrimExpr false_value) {
  TESSERA_ICHECK(cond.defined(), "select with undefined condition");
  MatchTypes("select", true_value, false_value);
  if (auto* c = cond.as<IntImmNode>()) return c->value ? true_value : false_value;
  if (cond.dtype().is_scalar() && true_value.dtype().is_vector()) {
    // keep a scalar condition: Select allows it
  }
  return SelectNode::make(std::move(cond), std::move(true_value), std::move(false_value));
}

PrimExpr cast(DataType t, PrimExpr value) {
  TESSERA_ICHECK(value.defined(), "cast of undefined expr");
  if (value.dtype() == t) return value;
  if (auto* i = value.as<IntImmNode>(); i && t.is_scalar()) return make_const(t, i->value);
  if (auto* f = value.as<FloatImmNode>(); f && t.is_scalar()) return make_const(t, f->value);
  if (t.is_vector() && value.dtype().is_scalar()) {
    return BroadcastNode::make(cast(t.element_of(), std::move(value)), t.lanes());
  }
  return CastNode::make(t, std::move(value));
}

PrimExpr exp(PrimExpr x) { return Intrin("exp", std::move(x)); }
PrimExpr log(PrimExpr x) { return Intrin("log", std::move(x)); }
PrimExpr sqrt(PrimExpr x) { return Intrin("sqrt", std::move(x)); }
PrimExpr rsqrt(PrimExpr x) { return Intrin("rsqrt", std::move(x)); }
PrimExpr tanh(PrimExpr x) { return Intrin("tanh", std::move(x)); }
PrimExpr sigmoid(PrimExpr x) { return Intrin("sigmoid", std::move(x)); }
PrimExpr fabs(PrimExpr x) { return Intrin("fabs", std::move(x)); }
PrimExpr floor(PrimExpr x) { return Intrin("floor", std::move(x)); }
PrimExpr ceil(PrimExpr x) { return Intrin("ceil", std::move(x)); }
PrimExpr round(PrimExpr x) { return Intrin("round", std::move(x)); }
PrimExpr erf(PrimExpr x) { return Intrin("erf", std::move(x)); }

namespace {
PrimExpr IntIntrin(const char* name, std::vector<PrimExpr> args) {
  for (const PrimExpr& a : args) {
    TESSERA_ICHECK(a.defined(), name, ": undefined argument");
    TESSERA_ICHECK((a.dtype().is_int() || a.dtype().is_uint()) && a.dtype() == args[0].dtype(), name,
                   ": needs integer arguments of one dtype, got ", a.dtype().str());
  }
  DataType t = args[0].dtype();
  return CallNode::make(t, name, std::move(args));
}
}  // namespace

PrimExpr bitwise_and(PrimExpr a, PrimExpr b) { return IntIntrin("bitwise_and", {std::move(a), std::move(b)}); }
PrimExpr bitwise_or(PrimExpr a, PrimExpr b) { return IntIntrin("bitwise_or", {std::move(a), std::move(b)}); }
PrimExpr bitwise_xor(PrimExpr a, PrimExpr b) { return IntIntrin("bitwise_xor", {std::move(a), std::move(b)}); }
PrimExpr bitwise_not(PrimExpr a) { return IntIntrin("bitwise_not", {std::move(a)}); }
PrimExpr shift_left(PrimExpr a, PrimExpr b) { return IntIntrin("shift_left", {std::move(a), std::move(b)}); }
PrimExpr shift_right(PrimExpr a, PrimExpr b) { return IntIntrin("shift_right", {std::move(a), std::move(b)}); }
PrimExpr reinterpret(DataType t, PrimExpr value) {
  TESSERA_ICHECK(value.defined(), "reinterpret: undefined argument");
  if (value.dtype() == t) return value;
  TESSERA_ICHECK(t.bits() == value.dtype().bits() && t.lanes() == value.dtype().lanes(), "reinterpret: ",
                 value.dtype().str(), " -> ", t.str(), " changes the width");
  return CallNode::make(t, "reinterpret", {std::move(value)});
}
PrimExpr checked_index(PrimExpr index, int64_t extent) {
  TESSERA_ICHECK(index.defined() && (index.dtype().is_int() || index.dtype().is_uint()),
                 "checked_index: the index must be an integer");
  TESSERA_ICHECK(extent >= 0, "checked_index: extent ", extent, " < 0");
  const DataType i64 = DataType::Int(64, index.dtype().lanes());
  return CallNode::make(i64, "checked_index", {cast(i64, std::move(index)), make_const(i64, extent)});
}
PrimExpr checked_index(PrimExpr index, PrimExpr extent) {
  int64_t v = 0;
  if (as_const_int(extent, &v)) return checked_index(std::move(index), v);
  TESSERA_ICHECK(index.defined() && (index.dtype().is_int() || index.dtype().is_uint()) && extent.defined() &&
                     extent.dtype().is_int() && extent.dtype().lanes() == 1,
                 "checked_index: the index and the extent must be integers");
  const DataType i64 = DataType::Int(64, index.dtype().lanes());
  PrimExpr n = cast(DataType::Int(64), std::move(extent));
  if (i64.lanes() > 1) n = BroadcastNode::make(n, i64.lanes());
  return CallNode::make(i64, "checked_index", {cast(i64, std::move(index)), n});
}
PrimExpr pow(PrimExpr x, PrimExpr y) {
  MatchTypes("pow", x, y);
  DataType t = x.dtype();
  return CallNode::make(t, "pow", {std::move(x), std::move(y)});
}

}  // namespace tessera::ir
