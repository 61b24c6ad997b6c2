// Expressions of the graph IR (Relay, arXiv 1904.08368, section 3.1).
//
// Every node is immutable and shared (Expr = shared_ptr<const ExprNode>); a graph is a DAG
// of nodes, and node identity (the pointer) is what a Var binding or a memo table keys on.
// Each node is defined once, here, with a Halide-style `make()` that checks its arguments
// (InternalError on a null child: a frontend or pass bug). `checked_type()` is filled by
// InferType (infer_type.h); it is the only mutable field and depends only on the node's
// subtree, so filling it in place is safe for nodes shared across modules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/attrs.h"
#include "tessera/graph/type.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::graph {

enum class ExprKind { kVar, kConstant, kCall, kTuple, kTupleGetItem, kLet, kIf, kFunction, kOp, kGlobalVar, kConstructor, kMatch };

class ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

class ExprNode {
 public:
  explicit ExprNode(ExprKind kind) : kind(kind) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  /// The type InferType computed; InternalError if InferType has not run on this node.
  const Type& checked_type() const;
  bool has_checked_type() const { return checked_type_ != nullptr; }
  /// Set by InferType only.
  void set_checked_type(Type t) const { checked_type_ = std::move(t); }

 private:
  mutable Type checked_type_;
};

/// `std::static_pointer_cast` after a kind check; nullptr when `e` is not a T.
template <typename T>
std::shared_ptr<const T> Downcast(const Expr& e) {
  if (!e || e->kind != T::kKind) return nullptr;
  return std::static_pointer_cast<const T>(e);
}

/// A variable: a function parameter or a let-bound name. Identity is the node, not the name.
class VarNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string name_hint, Type type_annotation)
      : ExprNode(kKind), name_hint(std::move(name_hint)), type_annotation(std::move(type_annotation)) {}
  const std::string name_hint;
  /// May be null for let-bound vars (InferType takes the value's type).
  const Type type_annotation;
  static std::shared_ptr<const VarNode> make(std::string name_hint, Type type_annotation = nullptr);
};
using Var = std::shared_ptr<const VarNode>;

/// A constant tensor (weights, folded shapes). Its type is the array's shape and dtype.
class ConstantNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kConstant;
  explicit ConstantNode(runtime::NDArray data) : ExprNode(kKind), data(std::move(data)) {}
  const runtime::NDArray data;
  /// The TensorType of `data`.
  Type tensor_type() const;
  static std::shared_ptr<const ConstantNode> make(runtime::NDArray data);
};
using Constant = std::shared_ptr<const ConstantNode>;

/// A reference to a registered operator (op_registry.h). One node per op name.
class OpNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kOp;
  explicit OpNode(std::string name) : ExprNode(kKind), name(std::move(name)) {}
  const std::string name;
  /// The shared node of op `name`; InternalError when no op of that name is registered.
  static std::shared_ptr<const OpNode> Get(const std::string& name);
};
using Op = std::shared_ptr<const OpNode>;

/// A reference to a global function of the module by name (`@f`): called (`@f(x)`, recursion and
/// mutual recursion between globals) or used as a value (a closure without captures). Its type is
/// the function's (InferType looks it up in the module; a global without a return type annotation
/// that is called before its own type is known, i.e. recursively, is a UserError asking for one).
class GlobalVarNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kGlobalVar;
  explicit GlobalVarNode(std::string name) : ExprNode(kKind), name(std::move(name)) {}
  const std::string name;
  static std::shared_ptr<const GlobalVarNode> make(std::string name);
};
using GlobalVar = std::shared_ptr<const GlobalVarNode>;

/// A constructor of an algebraic data type (Relay's Constructor, arXiv 1904.08368 §3.3): called with
/// its fields, `Cons(%x, %xs)`, it builds a value of the ADT; in a Match pattern it tests for it.
/// `tag` is its index in `type_data` (the VM's ADT tag).
class ConstructorNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kConstructor;
  ConstructorNode(TypeData type_data, int tag) : ExprNode(kKind), type_data(std::move(type_data)), tag(tag) {}
  const TypeData type_data;
  const int tag;
  const ConstructorDef& def() const { return type_data->constructors[tag]; }
  const std::string& name() const { return def().name; }
  /// InternalError unless `tag` indexes a constructor of `type_data`.
  static std::shared_ptr<const ConstructorNode> make(TypeData type_data, int tag);
};
using Constructor = std::shared_ptr<const ConstructorNode>;

/// A call of an Op (with attrs), a Function, a Var of function type (a closure), a GlobalVar, or a
/// Constructor (an ADT value).
class CallNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(Expr op, std::vector<Expr> args, Attrs attrs)
      : ExprNode(kKind), op(std::move(op)), args(std::move(args)), attrs(std::move(attrs)) {}
  const Expr op;
  const std::vector<Expr> args;
  const Attrs attrs;
  /// Checks: op non-null, args non-null; for an Op, the argument count matches its registration.
  static std::shared_ptr<const CallNode> make(Expr op, std::vector<Expr> args, Attrs attrs = {});
};
using Call = std::shared_ptr<const CallNode>;

class TupleNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTuple;
  explicit TupleNode(std::vector<Expr> fields) : ExprNode(kKind), fields(std::move(fields)) {}
  const std::vector<Expr> fields;
  static std::shared_ptr<const TupleNode> make(std::vector<Expr> fields);
};
using Tuple = std::shared_ptr<const TupleNode>;

class TupleGetItemNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTupleGetItem;
  TupleGetItemNode(Expr tuple, int index) : ExprNode(kKind), tuple(std::move(tuple)), index(index) {}
  const Expr tuple;
  const int index;
  static std::shared_ptr<const TupleGetItemNode> make(Expr tuple, int index);
};
using TupleGetItem = std::shared_ptr<const TupleGetItemNode>;

/// let var = value; body
class LetNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kLet;
  LetNode(Var var, Expr value, Expr body)
      : ExprNode(kKind), var(std::move(var)), value(std::move(value)), body(std::move(body)) {}
  const Var var;
  const Expr value;
  const Expr body;
  static std::shared_ptr<const LetNode> make(Var var, Expr value, Expr body);
};
using Let = std::shared_ptr<const LetNode>;

/// if (cond) { true_branch } else { false_branch }; cond is a scalar bool tensor.
class IfNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kIf;
  IfNode(Expr cond, Expr true_branch, Expr false_branch)
      : ExprNode(kKind),
        cond(std::move(cond)),
        true_branch(std::move(true_branch)),
        false_branch(std::move(false_branch)) {}
  const Expr cond;
  const Expr true_branch;
  const Expr false_branch;
  static std::shared_ptr<const IfNode> make(Expr cond, Expr true_branch, Expr false_branch);
};
using If = std::shared_ptr<const IfNode>;

/// fn (params) -> ret_type { body }. `attrs` carries e.g. "Primitive"=1 for fused functions.
class FunctionNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kFunction;
  FunctionNode(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs)
      : ExprNode(kKind),
        params(std::move(params)),
        body(std::move(body)),
        ret_type(std::move(ret_type)),
        attrs(std::move(attrs)) {}
  const std::vector<Var> params;
  const Expr body;
  /// May be null until InferType fills it.
  const Type ret_type;
  const Attrs attrs;
  /// Checks: params non-null and annotated with a type, body non-null.
  static std::shared_ptr<const FunctionNode> make(std::vector<Var> params, Expr body,
                                                  Type ret_type = nullptr, Attrs attrs = {});
};
using Function = std::shared_ptr<const FunctionNode>;

/// A pattern of a Match clause (Relay's Pattern): `_` (PatternWildcard), `%x` (PatternVar: binds the
/// matched value), `Cons(%h, _)` (PatternConstructor: the value was built by that constructor, and
/// each field matches its sub-pattern) or `(%a, _)` (PatternTuple).
enum class ClausePatternKind { kWildcard, kVar, kConstructor, kTuple };

class ClausePatternNode;
using ClausePattern = std::shared_ptr<const ClausePatternNode>;

class ClausePatternNode {
 public:
  static ClausePattern Wildcard();
  static ClausePattern Bind(Var var);
  /// InternalError unless there is one sub-pattern per field of the constructor.
  static ClausePattern Ctor(Constructor ctor, std::vector<ClausePattern> fields);
  static ClausePattern Tuple(std::vector<ClausePattern> fields);

  ClausePatternNode(ClausePatternKind kind, Var var, Constructor ctor, std::vector<ClausePattern> fields)
      : kind(kind), var(std::move(var)), ctor(std::move(ctor)), fields(std::move(fields)) {}
  const ClausePatternKind kind;
  const Var var;                            ///< kVar
  const Constructor ctor;                   ///< kConstructor
  const std::vector<ClausePattern> fields;   ///< kConstructor, kTuple
  /// The variables the pattern binds, left to right.
  std::vector<Var> BoundVars() const;
};

/// One clause of a Match: when `pattern` matches, its variables are bound and `rhs` is the result.
struct MatchClause {
  ClausePattern pattern;
  Expr rhs;
};

/// match (data) { pattern => rhs, ... } (Relay's Match): the first clause whose pattern matches gives
/// the result; when none does, the program stops with an error (the VM's Fatal "no clause matches").
/// Every clause's rhs has the same type (unified).
class MatchNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kMatch;
  MatchNode(Expr data, std::vector<MatchClause> clauses)
      : ExprNode(kKind), data(std::move(data)), clauses(std::move(clauses)) {}
  const Expr data;
  const std::vector<MatchClause> clauses;
  /// InternalError on a null data, pattern or rhs, or no clause.
  static std::shared_ptr<const MatchNode> make(Expr data, std::vector<MatchClause> clauses);
};
using Match = std::shared_ptr<const MatchNode>;

}  // namespace tessera::graph
