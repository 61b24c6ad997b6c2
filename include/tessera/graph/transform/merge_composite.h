// MergeComposite (BYOC, arXiv 2105.03215 §3.1; TVM's relay.transform.MergeComposite): outlines
// every match of each named pattern into a composite function, so that a backend sees
// conv2d + bias + relu as one unit it supports:
//
//   %1 = nn.conv2d(%x, %w); %2 = nn.bias_add(%1, %b); nn.relu(%2)
//     -> %f = fn(%p0, %p1, %p2, Composite="dnnl.conv2d_bias_relu",
//                PartitionedFromPattern="nn.conv2d_nn.bias_add_nn.relu_") {
//              nn.relu(nn.bias_add(nn.conv2d(%p0, %p1), %p2)) }
//        %f(%x, %w, %b)
//
// Patterns are applied in the order given (put larger patterns first); each to every function of
// the module, outside the composites already made (graph::PartitionPattern). A pattern's check
// (optional) may refuse a match by its attributes, shapes or dtypes. Types are inferred after.
// With `scalars_inside`, the match's one-element constant inputs are bound into the body:
//   fn(%p0, %p1, Composite="dnnl.layer_norm") { ... add(mean(...), 1e-12f) ... }(%x, %gamma, %beta)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/graph/pattern.h"
#include "tessera/graph/pattern_matcher.h"
#include "tessera/graph/transform/pass.h"

namespace tessera::graph::transform {

struct CompositePattern {
  std::string name;  ///< the Composite attr, by convention "<backend>.<name>"
  DFPattern pattern;
  /// Whether a match may become a composite (e.g. only float32, only groups 1). Empty: always.
  std::function<bool(const Expr& root, const PatternMatcher& match)> check;
  /// One-element constants among a match's inputs stay inside the composite's body instead of
  /// becoming its parameters: hyperparameters a backend reads when it generates code (a layer
  /// norm's epsilon), where a parameter would be known only at run time.
  bool scalars_inside = false;
};

IRModule MergeComposite(const IRModule& mod, const std::vector<CompositePattern>& patterns);

/// MergeComposite as a pipeline pass (opt_level 0: a backend's partitioning needs it).
Pass MergeCompositePass(std::vector<CompositePattern> patterns);

}  // namespace tessera::graph::transform
