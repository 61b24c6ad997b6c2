// ExprVisitor / ExprMutator over the graph IR (Halide's IRVisitor / IRMutator, TVM's
// ExprVisitor / ExprMutator). Both memoize on node identity, so a DAG node shared by many
// users is visited (or rewritten) once. A pass overrides only the Visit*_ it cares about.
//
// Recursion follows the expression depth; graphs of a few thousand nodes are fine.
//
// External functions (a Function with a `Compiler` attr, made by PartitionGraph for a BYOC
// backend) are opaque: both visit / rewrite the function node but not its parameters or body,
// so graph passes after partitioning (AlterOpLayout, FuseOps, ...) leave the backend's region as
// its codegen will see it. Code that must read an external function's body walks it itself.
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/graph/expr.h"

namespace tessera::graph {

/// Read-only traversal, post-order children first. Call VisitExpr on the root.
class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  /// Visits `e` unless it was visited already.
  virtual void VisitExpr(const Expr& e);

 protected:
  virtual void VisitVar_(const VarNode* op) {}
  virtual void VisitConstant_(const ConstantNode* op) {}
  virtual void VisitOp_(const OpNode* op) {}
  virtual void VisitCall_(const CallNode* op);
  virtual void VisitTuple_(const TupleNode* op);
  virtual void VisitTupleGetItem_(const TupleGetItemNode* op);
  virtual void VisitLet_(const LetNode* op);
  virtual void VisitIf_(const IfNode* op);
  virtual void VisitFunction_(const FunctionNode* op);
  virtual void VisitGlobalVar_(const GlobalVarNode* op) {}
  virtual void VisitConstructor_(const ConstructorNode* op) {}
  /// The data, then each clause's pattern variables and rhs.
  virtual void VisitMatch_(const MatchNode* op);

 private:
  std::unordered_set<const ExprNode*> visited_;
};

/// Rewriting traversal. Each Mutate*_ returns the replacement of its node; the defaults
/// rebuild a node only when a child changed, so an unchanged subgraph keeps its identity
/// (and its checked_type).
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  /// The rewrite of `e`, computed once per node.
  virtual Expr Mutate(const Expr& e);

 protected:
  virtual Expr MutateVar_(const Var& op) { return op; }
  virtual Expr MutateConstant_(const Constant& op) { return op; }
  virtual Expr MutateOp_(const Op& op) { return op; }
  virtual Expr MutateCall_(const Call& op);
  virtual Expr MutateTuple_(const Tuple& op);
  virtual Expr MutateTupleGetItem_(const TupleGetItem& op);
  virtual Expr MutateLet_(const Let& op);
  virtual Expr MutateIf_(const If& op);
  virtual Expr MutateFunction_(const Function& op);
  virtual Expr MutateGlobalVar_(const GlobalVar& op) { return op; }
  virtual Expr MutateConstructor_(const Constructor& op) { return op; }
  /// Rewrites the data and each rhs; a pattern's variables are mutated as Vars (a non-Var result
  /// is an InternalError), so a renaming pass renames them too.
  virtual Expr MutateMatch_(const Match& op);

  std::unordered_map<const ExprNode*, Expr> memo_;
};

/// Whether `fn` is an external function (a `Compiler` attr: partition_graph.h).
bool IsExternalFunction(const FunctionNode& fn);

/// Calls `fvisit` on every node reachable from `e`, once each, children before parents.
void PostOrderVisit(const Expr& e, const std::function<void(const Expr&)>& fvisit);

}  // namespace tessera::graph
