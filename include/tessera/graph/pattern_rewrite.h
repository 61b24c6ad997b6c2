// Rewriting and partitioning with dataflow patterns (pattern.h, pattern_matcher.h): Relay's
// `rewrite` and `partition`, on which MergeComposite (transform/merge_composite.h) and the BYOC
// passes are built (arXiv 2105.03215 §3.1).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/pattern.h"
#include "tessera/graph/pattern_matcher.h"

namespace tessera::graph {

/// A rewrite rule: where `pattern` matches a node, `rewrite(node, matcher)` returns its
/// replacement (the node itself to keep it). The matcher holds the match's bindings.
struct PatternRewrite {
  DFPattern pattern;
  std::function<Expr(const Expr& node, const PatternMatcher& match)> rewrite;
};

/// Rewrites `e` bottom-up: each node, after its inputs were rewritten, is replaced by the first
/// rule that matches it and returns something else. Rounds repeat until one changes nothing;
/// InternalError after `max_rounds` (rules that never converge). Functions are rewritten inside.
Expr RewritePatterns(const std::vector<PatternRewrite>& rules, const Expr& e, int max_rounds = 100);

/// Outlines every match of `pattern` in `e` (not inside nested functions) into a function called
/// in its place (Relay's partition):
///   %f = fn(%p0, %p1, ...) { <the covered nodes, inputs replaced by the params> }  attrs: `attrs`
///        and PartitionedFromPattern = the covered ops' names in post-order, each followed by "_"
///   %f(input0, input1, ...)
/// The inputs are the nodes matched by leaf patterns (wildcards, vars, constants, IsExpr) and a
/// Dominates region's outside inputs; each param is typed as its input (types are inferred
/// first when `e` has none; a free Var needs a type annotation). Matches
/// are taken from the outputs toward the inputs, so the larger match at a consumer wins; a match
/// that overlaps an earlier one, whose covered nodes other than its root are used outside it, or
/// that `check` (when given) refuses, is skipped. Run InferType on the result.
Expr PartitionPattern(const DFPattern& pattern, const Expr& e, const Attrs& attrs = {},
                      const std::function<bool(const Expr& root, const PatternMatcher& match)>& check = nullptr);

}  // namespace tessera::graph
