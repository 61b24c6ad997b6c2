// Matching a dataflow pattern (pattern.h) against an expression of a graph.
//
// A pattern node that occurs twice must match the same expression both times (add(x, x) with one
// Wildcard `x` matches only an add of a node with itself). Alternatives are tried left first; a
// failed branch leaves no bindings behind. Type, shape and dtype patterns read checked types: an
// expression without one does not match them. Dominates needs the whole graph (who uses what):
// the matcher is built on the graph's root, and matches any expression inside it.
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/pattern.h"

namespace tessera::graph {

class PatternMatcher {
 public:
  /// Matches inside the graph reachable from `root` (its use counts decide Dominates).
  explicit PatternMatcher(const Expr& root);

  /// Whether `p` matches `e`; the bindings of the last successful match replace the previous ones.
  bool Match(const DFPattern& p, const Expr& e);

  /// After a successful Match: the expression each pattern node matched.
  const std::unordered_map<const PatternNode*, Expr>& bindings() const { return memo_; }
  /// After a successful Match: the expressions the pattern covers (calls, tuples and tuple
  /// projections matched by call / tuple patterns, and a Dominates region), root included.
  const std::vector<Expr>& covered() const { return covered_; }
  /// After a successful Match: the expressions matched by leaf patterns (wildcards, vars,
  /// constants, IsExpr) and the outside inputs of a Dominates region, in first-match order,
  /// without repeats and without covered nodes: the inputs of a partitioned function.
  std::vector<Expr> Inputs() const;

  /// The nodes of the graph that use `e` (each user once).
  const std::vector<const ExprNode*>& UsersOf(const Expr& e) const;

 private:
  bool Visit(const DFPattern& p, const Expr& e);
  bool VisitDominator(const DominatorPatternNode& d, const Expr& e);
  void Cover(const Expr& e);

  using UsersMap = std::unordered_map<const ExprNode*, std::vector<const ExprNode*>>;
  std::shared_ptr<UsersMap> users_;  // shared with the sub-matchers of Dominates
  std::unordered_map<const PatternNode*, Expr> memo_;
  std::vector<Expr> covered_;
  std::vector<Expr> leaves_;
};

/// PatternMatcher(e).Match(p, e): `p` against `e` as the root of its own graph.
bool MatchPattern(const DFPattern& p, const Expr& e);

}  // namespace tessera::graph
