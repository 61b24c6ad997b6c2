// Comparisons, logic, select, modulo and the remaining elementwise math of the ONNX spec
// (Erf, Floor, Ceil, Round, Reciprocal, Sign, trigonometric / hyperbolic functions, IsNaN,
// IsInf). Binary ops broadcast per numpy rules and require equal dtypes.
#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

Type CompareRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& a = TensorArg(args, 0);
  const TensorTypeNode& b = TensorArg(args, 1);
  CheckSameDtype(a, b);
  return TensorTypeNode::make(BroadcastShapes(a.shape, b.shape), DataType::Bool());
}

Type LogicalBinaryRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& a = TensorArg(args, 0);
  TESSERA_CHECK(a.dtype.is_bool(), "needs bool tensors, got ", a.dtype.str());
  return CompareRel(args, attrs);
}

Type LogicalNotRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& a = TensorArg(args, 0);
  TESSERA_CHECK(a.dtype.is_bool(), "needs a bool tensor, got ", a.dtype.str());
  return IdentityRel(args, attrs);
}

// cond (bool), x, y (one dtype), all broadcast together.
Type WhereRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& c = TensorArg(args, 0);
  const TensorTypeNode& x = TensorArg(args, 1);
  const TensorTypeNode& y = TensorArg(args, 2);
  TESSERA_CHECK(c.dtype.is_bool(), "condition must be bool, got ", c.dtype.str());
  CheckSameDtype(x, y);
  return TensorTypeNode::make(BroadcastShapes(BroadcastShapes(c.shape, x.shape), y.shape), x.dtype);
}

Type ModRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& a = TensorArg(args, 0);
  const TensorTypeNode& b = TensorArg(args, 1);
  CheckSameDtype(a, b);
  TESSERA_CHECK(attrs.GetInt("fmod", 0) != 0 || !a.dtype.is_floating(),
                "fmod=0 (floor modulo) needs integer tensors; floats need fmod=1, got ", a.dtype.str());
  return TensorTypeNode::make(BroadcastShapes(a.shape, b.shape), a.dtype);
}

// Two integer tensors of one dtype, numpy broadcasting.
Type IntBinaryRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& a = TensorArg(args, 0);
  const TensorTypeNode& b = TensorArg(args, 1);
  CheckSameDtype(a, b);
  TESSERA_CHECK(a.dtype.is_int() || a.dtype.is_uint(), "needs integer tensors, got ", a.dtype.str());
  return TensorTypeNode::make(BroadcastShapes(a.shape, b.shape), a.dtype);
}

Type IntUnaryRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_int() || x.dtype.is_uint(), "needs an integer tensor, got ", x.dtype.str());
  return IdentityRel(args, attrs);
}

Type FloatMathRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_floating(), "needs a float tensor, got ", x.dtype.str());
  return IdentityRel(args, attrs);
}

Type FloatToBoolRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_floating(), "needs a float tensor, got ", x.dtype.str());
  return TensorTypeNode::make(x.shape, DataType::Bool());
}

}  // namespace

void RegisterLogicalOps(OpRegistry& r) {
  for (const char* name : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    r.Register(name, 2, kBroadcast, CompareRel, "numpy-broadcasting comparison -> bool");
  }
  for (const char* name : {"logical_and", "logical_or", "logical_xor"}) {
    r.Register(name, 2, kBroadcast, LogicalBinaryRel, "numpy-broadcasting logic on bool tensors");
  }
  r.Register("logical_not", 1, kElemWise, LogicalNotRel, "!x on a bool tensor");
  for (const char* name : {"bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"}) {
    r.Register(name, 2, kBroadcast, IntBinaryRel,
               "numpy-broadcasting bit operation on integer tensors (shifts by >= the bit width give 0)");
  }
  r.Register("bitwise_not", 1, kElemWise, IntUnaryRel, "~x on an integer tensor");
  r.Register("where", 3, kBroadcast, WhereRel, "cond ? x : y with numpy broadcasting of all three");
  r.Register("mod", 2, kBroadcast, ModRel,
             "remainder. attrs: fmod (0: floor modulo, sign of the divisor, ints; 1: C fmod, sign of the dividend)");
  for (const char* name : {"erf", "floor", "ceil", "round", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan",
                           "sinh", "cosh", "asinh", "acosh", "atanh"}) {
    r.Register(name, 1, kElemWise, FloatMathRel, "elementwise float math (round: half to even)");
  }
  r.Register("sign", 1, kElemWise, IdentityRel, "-1, 0 or 1");
  r.Register("isnan", 1, kElemWise, FloatToBoolRel, "x is NaN -> bool");
  r.Register("isinf", 1, kElemWise, FloatToBoolRel,
             "x is infinite -> bool. attrs: detect_positive, detect_negative (default 1)");
}

}  // namespace tessera::graph::op
