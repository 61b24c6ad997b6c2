// PrimExpr: scalar (and vector-lane) expressions shared by the loop-level IRs.
//
// The arithmetic nodes live here so that the arith layer can analyse them without
// depending on TensorIR; TensorIR adds BufferLoad (tir/expr.h). Semantics follow
// TVM's tir/expr.h:
//   Div      float: true division; int: truncated toward zero (C semantics)
//   Mod      int: truncated remainder (sign of the dividend)
//   FloorDiv int: rounds toward -inf; FloorMod int: result has the divisor's sign.
//            Index arithmetic produced by te / schedules uses FloorDiv / FloorMod.
//   Comparisons, And, Or, Not produce bool (with the operands' lanes).
//   Ramp(base, stride, lanes) = [base, base+stride, ..., base+(lanes-1)*stride]
//   Broadcast(value, lanes) = value repeated in every lane.
//   Call(dtype, name, args): a pure intrinsic by name: exp, log, sqrt, rsqrt, tanh,
//   sigmoid, fabs, floor, ceil, round, trunc, pow, erf, fma, exp2, sin, cos. One has an
//   effect: checked_index (op.h) makes the kernel return an error for an out-of-range index.
//   Let(var, value, body): body with var bound to value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/ir/node.h"
#include "tessera/runtime/data_type.h"

namespace tessera::ir {

enum class ExprKind : uint8_t {
  kIntImm, kFloatImm, kStringImm, kVar,
  kAdd, kSub, kMul, kDiv, kMod, kFloorDiv, kFloorMod, kMin, kMax,
  kEQ, kNE, kLT, kLE, kGT, kGE, kAnd, kOr, kNot,
  kSelect, kCast, kCall, kRamp, kBroadcast, kLet,
  kBufferLoad,  // defined by TensorIR (tir/expr.h); opaque to this layer
  kReduce,      // defined by te (te/tensor.h); only inside a compute body, removed by lowering
};

/// Base of every PrimExpr node.
struct PrimExprNode {
  const ExprKind kind;
  const DataType dtype;
  PrimExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~PrimExprNode() = default;
};

/// A reference to a PrimExpr node. Arithmetic operators build nodes (see op.h).
class PrimExpr : public NodeRef<PrimExprNode> {
 public:
  using NodeRef::NodeRef;
  PrimExpr() = default;
  template <typename T>
  PrimExpr(std::shared_ptr<const T> n) : NodeRef(std::move(n)) {}  // NOLINT: implicit upcast
  /// int32 constant (the index type of small literals); see op.h for int64 / float.
  PrimExpr(int value);     // NOLINT: implicit, as in TVM
  PrimExpr(float value);   // NOLINT
  DataType dtype() const { return get()->dtype; }
};

struct IntImmNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  int64_t value;
  IntImmNode(DataType t, int64_t v) : PrimExprNode(kKind, t), value(v) {}
  /// Throws InternalError unless t is a scalar int / uint / bool.
  static PrimExpr make(DataType t, int64_t value);
};

struct FloatImmNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  double value;
  FloatImmNode(DataType t, double v) : PrimExprNode(kKind, t), value(v) {}
  static PrimExpr make(DataType t, double value);
};

struct StringImmNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kStringImm;
  std::string value;
  explicit StringImmNode(std::string v) : PrimExprNode(kKind, DataType::Handle()), value(std::move(v)) {}
  static PrimExpr make(std::string value);
};

/// A variable. Two Vars are the same variable only when they are the same node.
struct VarNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  std::string name_hint;
  VarNode(std::string name, DataType t) : PrimExprNode(kKind, t), name_hint(std::move(name)) {}
};

class Var : public PrimExpr {
 public:
  Var() = default;
  explicit Var(std::string name_hint, DataType dtype = DataType::Int(32));
  explicit Var(std::shared_ptr<const VarNode> n) : PrimExpr(std::move(n)) {}
  const VarNode* operator->() const { return static_cast<const VarNode*>(get()); }
  const VarNode* get_var() const { return static_cast<const VarNode*>(get()); }
  /// A fresh variable with the same name and dtype.
  Var copy_with_suffix(const std::string& suffix) const;
};

/// Binary arithmetic / comparison / logic node; Kind selects the operation.
template <ExprKind K>
struct BinaryNode : PrimExprNode {
  static constexpr ExprKind kKind = K;
  PrimExpr a, b;
  BinaryNode(DataType t, PrimExpr a_, PrimExpr b_) : PrimExprNode(kKind, t), a(std::move(a_)), b(std::move(b_)) {}
  /// Checks that a and b are defined and of the same dtype (InternalError otherwise).
  static PrimExpr make(PrimExpr a, PrimExpr b);
};

using AddNode = BinaryNode<ExprKind::kAdd>;
using SubNode = BinaryNode<ExprKind::kSub>;
using MulNode = BinaryNode<ExprKind::kMul>;
using DivNode = BinaryNode<ExprKind::kDiv>;
using ModNode = BinaryNode<ExprKind::kMod>;
using FloorDivNode = BinaryNode<ExprKind::kFloorDiv>;
using FloorModNode = BinaryNode<ExprKind::kFloorMod>;
using MinNode = BinaryNode<ExprKind::kMin>;
using MaxNode = BinaryNode<ExprKind::kMax>;
using EQNode = BinaryNode<ExprKind::kEQ>;
using NENode = BinaryNode<ExprKind::kNE>;
using LTNode = BinaryNode<ExprKind::kLT>;
using LENode = BinaryNode<ExprKind::kLE>;
using GTNode = BinaryNode<ExprKind::kGT>;
using GENode = BinaryNode<ExprKind::kGE>;
using AndNode = BinaryNode<ExprKind::kAnd>;
using OrNode = BinaryNode<ExprKind::kOr>;

struct NotNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  PrimExpr a;
  NotNode(DataType t, PrimExpr a_) : PrimExprNode(kKind, t), a(std::move(a_)) {}
  static PrimExpr make(PrimExpr a);
};

/// cond ? true_value : false_value, both branches evaluated (no side effects in PrimExpr).
struct SelectNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  PrimExpr condition, true_value, false_value;
  SelectNode(DataType t, PrimExpr c, PrimExpr tv, PrimExpr fv)
      : PrimExprNode(kKind, t), condition(std::move(c)), true_value(std::move(tv)), false_value(std::move(fv)) {}
  static PrimExpr make(PrimExpr condition, PrimExpr true_value, PrimExpr false_value);
};

struct CastNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  PrimExpr value;
  CastNode(DataType t, PrimExpr v) : PrimExprNode(kKind, t), value(std::move(v)) {}
  static PrimExpr make(DataType t, PrimExpr value);
};

struct CallNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  std::string op;  ///< intrinsic name, see the list at the top of this file
  std::vector<PrimExpr> args;
  CallNode(DataType t, std::string o, std::vector<PrimExpr> a)
      : PrimExprNode(kKind, t), op(std::move(o)), args(std::move(a)) {}
  static PrimExpr make(DataType t, std::string op, std::vector<PrimExpr> args);
};

struct RampNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kRamp;
  PrimExpr base, stride;
  int lanes;
  RampNode(DataType t, PrimExpr b, PrimExpr s, int l)
      : PrimExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  static PrimExpr make(PrimExpr base, PrimExpr stride, int lanes);
};

struct BroadcastNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kBroadcast;
  PrimExpr value;
  int lanes;
  BroadcastNode(DataType t, PrimExpr v, int l) : PrimExprNode(kKind, t), value(std::move(v)), lanes(l) {}
  static PrimExpr make(PrimExpr value, int lanes);
};

struct LetNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::kLet;
  Var var;
  PrimExpr value, body;
  LetNode(DataType t, Var v, PrimExpr val, PrimExpr b)
      : PrimExprNode(kKind, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static PrimExpr make(Var var, PrimExpr value, PrimExpr body);
};

/// A half-open integer interval [min, min + extent).
struct Range {
  PrimExpr min;
  PrimExpr extent;
  Range() = default;
  Range(PrimExpr min_, PrimExpr extent_) : min(std::move(min_)), extent(std::move(extent_)) {}
  /// [begin, end) as min = begin, extent = end - begin.
  static Range FromMinExtent(PrimExpr min, PrimExpr extent) { return Range(std::move(min), std::move(extent)); }
};

}  // namespace tessera::ir
