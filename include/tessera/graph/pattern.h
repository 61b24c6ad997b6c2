// Dataflow patterns over the graph IR (Relay's DFPattern language, TVM RFC "Pattern Language";
// the BYOC paper, arXiv 2105.03215 §3.1, uses it to say what a backend supports).
//
// A pattern is an immutable, shared tree of nodes, built with the free functions below:
//
//   Wildcard()                       any expression
//   IsVar("x") / IsVar()             a Var (named `x`, or any)
//   IsConstant()                     a Constant
//   IsExpr(e)                        exactly the node `e`
//   IsOp("nn.conv2d")({p, q})        a Call of that op whose arguments match p, q (in order);
//   IsOp("add")()                    ... with any arguments (no argument patterns given)
//   IsTuple({p, q}) / IsTupleGetItem(p, i)   (i = -1: any index)
//   p | q                            either (tried in order: p first)
//   HasAttr(p, {{"groups", 1}})      p, and the Call's attrs hold these values
//   HasType(p, t) / HasShape(p, {1, 64, -1, -1}) / HasDType(p, float32)
//                                    p, and the checked type matches (-1: any extent)
//   Optional(p, f)                   p | f(p): e.g. Optional(conv, [](P c) { return IsOp("nn.relu")({c}); })
//   Dominates(parent, path, child)   a `child` whose inputs lead, through nodes matching `path` only,
//                                    to one node matching `parent`, where no node between them
//                                    (parent included) is used outside the region: an
//                                    elementwise chain hanging off one producer (FuseOps' shape)
//
// Matching (pattern_matcher.h) needs checked types for the type patterns (run InferType first).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph/attrs.h"
#include "tessera/graph/expr.h"
#include "tessera/graph/type.h"

namespace tessera::graph {

enum class PatternKind {
  kWildcard, kVar, kConstant, kExpr, kCall, kTuple, kTupleGetItem, kAlt, kAttr, kType, kShape, kDType, kDominator
};

class PatternNode;
using DFPattern = std::shared_ptr<const PatternNode>;

class PatternNode {
 public:
  explicit PatternNode(PatternKind kind) : kind(kind) {}
  virtual ~PatternNode() = default;
  const PatternKind kind;
  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
};

struct WildcardPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kWildcard;
  WildcardPatternNode() : PatternNode(kKind) {}
};

struct VarPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kVar;
  explicit VarPatternNode(std::string name) : PatternNode(kKind), name(std::move(name)) {}
  const std::string name;  ///< empty: any Var
};

struct ConstantPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kConstant;
  ConstantPatternNode() : PatternNode(kKind) {}
};

struct ExprPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kExpr;
  explicit ExprPatternNode(Expr expr) : PatternNode(kKind), expr(std::move(expr)) {}
  const Expr expr;
};

struct CallPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kCall;
  CallPatternNode(std::string op, std::vector<DFPattern> args, bool any_args)
      : PatternNode(kKind), op(std::move(op)), args(std::move(args)), any_args(any_args) {}
  const std::string op;               ///< the op's registry name
  const std::vector<DFPattern> args;  ///< matched in order (when !any_args)
  const bool any_args;                ///< true: any number of arguments, unmatched
};

struct TuplePatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kTuple;
  explicit TuplePatternNode(std::vector<DFPattern> fields) : PatternNode(kKind), fields(std::move(fields)) {}
  const std::vector<DFPattern> fields;
};

struct TupleGetItemPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kTupleGetItem;
  TupleGetItemPatternNode(DFPattern tuple, int index) : PatternNode(kKind), tuple(std::move(tuple)), index(index) {}
  const DFPattern tuple;
  const int index;  ///< -1: any
};

struct AltPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kAlt;
  AltPatternNode(DFPattern left, DFPattern right) : PatternNode(kKind), left(std::move(left)), right(std::move(right)) {}
  const DFPattern left, right;
};

struct AttrPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kAttr;
  AttrPatternNode(DFPattern pattern, Attrs attrs) : PatternNode(kKind), pattern(std::move(pattern)), attrs(std::move(attrs)) {}
  const DFPattern pattern;
  const Attrs attrs;  ///< each must be present on the Call (or Function) with an equal value
};

struct TypePatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kType;
  TypePatternNode(DFPattern pattern, Type type) : PatternNode(kKind), pattern(std::move(pattern)), type(std::move(type)) {}
  const DFPattern pattern;
  const Type type;  ///< structurally equal to the checked type
};

struct ShapePatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kShape;
  ShapePatternNode(DFPattern pattern, std::vector<int64_t> shape)
      : PatternNode(kKind), pattern(std::move(pattern)), shape(std::move(shape)) {}
  const DFPattern pattern;
  const std::vector<int64_t> shape;  ///< the tensor's static shape; -1 matches any extent
};

struct DTypePatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kDType;
  DTypePatternNode(DFPattern pattern, DataType dtype) : PatternNode(kKind), pattern(std::move(pattern)), dtype(dtype) {}
  const DFPattern pattern;
  const DataType dtype;
};

struct DominatorPatternNode : PatternNode {
  static constexpr PatternKind kKind = PatternKind::kDominator;
  DominatorPatternNode(DFPattern parent, DFPattern path, DFPattern child)
      : PatternNode(kKind), parent(std::move(parent)), path(std::move(path)), child(std::move(child)) {}
  const DFPattern parent, path, child;
};

DFPattern Wildcard();
DFPattern IsVar(const std::string& name = "");
DFPattern IsConstant();
DFPattern IsExpr(const Expr& e);
DFPattern IsTuple(std::vector<DFPattern> fields);
DFPattern IsTupleGetItem(DFPattern tuple, int index = -1);
DFPattern HasAttr(DFPattern p, Attrs attrs);
DFPattern HasType(DFPattern p, Type type);
DFPattern HasShape(DFPattern p, std::vector<int64_t> shape);
DFPattern HasDType(DFPattern p, DataType dtype);
DFPattern Optional(const DFPattern& p, const std::function<DFPattern(const DFPattern&)>& option);
DFPattern Dominates(DFPattern parent, DFPattern path, DFPattern child);
DFPattern operator|(DFPattern a, DFPattern b);

/// IsOp(name): a callable that builds the CallPattern; the op must be registered (InternalError).
struct OpPatternBuilder {
  std::string op;
  /// A Call of the op with these argument patterns, in order.
  DFPattern operator()(std::vector<DFPattern> args) const;
  /// A Call of the op with any arguments.
  DFPattern operator()() const;
};
OpPatternBuilder IsOp(const std::string& op);

/// A one-line text of the pattern, e.g. `nn.relu(nn.conv2d(*, const))`, for messages and tests.
std::string PatternStr(const DFPattern& p);

}  // namespace tessera::graph
