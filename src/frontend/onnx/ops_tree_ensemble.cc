// The ai.onnx.ml tree-ensemble operators (docs/Operators-ml.md of the ONNX spec), composed from graph
// ops: no kernel of their own.
//
//   TreeEnsemble-5            X [N, F] float / double / float16 -> Y [N, n_targets] of X's type.
//   TreeEnsembleRegressor-1/3 X [N, F] float / double / int64 / int32 -> Y [N, n_targets] float.
//   TreeEnsembleClassifier-1/3 X as the regressor -> label [N] int64, scores [N, C] float.
//
// Semantics (the ONNX reference, onnx/reference/ops/aionnxml/op_tree_ensemble*.py, and ONNX Runtime
// where the reference has none or they disagree):
//   - A branch node sends x = X[n, feature] to its true child when the comparison with its split
//     holds (BRANCH_LEQ x <= s, LT, GTE, GT, EQ, NEQ x != s, BRANCH_MEMBER x in the node's set), or
//     when x is NaN and the node's missing_value_tracks_true is 1. A NaN fails every comparison but
//     NEQ (IEEE: NaN != s holds), so NEQ sends a NaN to its true child whatever the flag (TreeEnsemble's
//     reference and ONNX Runtime; the legacy operators' reference follows the flag there). Comparisons
//     run in the wider of float32, X's and the splits' (and member values') types, so every split
//     compares exactly; integer X (legacy operators) is converted to that type first.
//   - TreeEnsemble: nodes_* index interior nodes, leaf_* leaves; trueleafs / falseleafs say which a
//     child id indexes. membership_values lists one NaN-terminated set per BRANCH_MEMBER node, in node
//     order. A node whose two children are the same is no test (the spec's one-leaf tree).
//     The legacy operators: node (treeid, nodeid) pairs, LEAF nodes carrying the target_* / class_*
//     votes (a leaf may vote for several targets, or none); a tree's root is its first listed node,
//     trees in increasing tree id.
//   - Each tree's leaf votes aggregate per target: SUM, AVERAGE (the sum / number of trees), MIN, MAX.
//     Under MIN / MAX a target no tree voted for is 0 (ONNX Runtime; the reference leaves the float
//     type's max / lowest there). base_values are added after the aggregation (0 or n_targets of them).
//   - post_transform as ONNX Runtime (TreeEnsemble's reference ignores it, the regressor's refuses
//     it): LOGISTIC 1 / (1 + e^-x) and PROBIT sqrt(2) erfinv(2x - 1) per element, SOFTMAX per row,
//     SOFTMAX_ZERO per row with |x| <= 1e-7 kept near 0 (x e^-max instead of e^(x - max); a row of
//     zeros gives 0.5, the reference's choice); erfinv is the approximation both implementations use
//     (Winitzki, a = 0.147). With one target only PROBIT applies (ONNX Runtime writes the raw score
//     for the others). TreeEnsemble's codes are the spec's, 1 SOFTMAX and 2 LOGISTIC (ONNX Runtime 1.32
//     reads them the other way round).
//   - Classifier (the reference): the scores are the class sums plus base_values, then post_transform;
//     the label is classlabels_int64s[argmax] (the first of equal maxima). The binary case, every vote
//     for class 0 with one or two labels (what sklearn-onnx writes for binary forests and gradient
//     boosting), scores s = sum + base_values[0] as [1 - s, s] (NONE, PROBIT) or [-s, s] (the others)
//     before the transform; with one label (which must be 1) the labels are 0 and 1. ONNX Runtime agrees
//     on sklearn-onnx's two forms, NONE with weights >= 0 and LOGISTIC with weights of both signs (it
//     leaves the other binary scores untransformed), and answers labels 1 / 0 where two classes are both
//     voted for.
//
// Lowering (Hummingbird's tree traversal, OSDI'20): leaves and interior nodes get one index space
// (leaves first; a leaf is a node that loops to itself); per node a feature, a split, a member set
// (NaN-padded), a child on true, on false and on NaN. Each mode becomes x <= s or x in set with the
// children swapped where needed (GT: not LEQ, GTE: not LT, LT: LEQ of the next smaller split, EQ / NEQ:
// a set of one), so one compare serves any mix. Then D levels (D = the deepest path) over idx [N, T]:
//   idx = where(isnan(x), nan[idx], where(x <= split[idx] | x in set[idx], true[idx], false[idx])),
//   x = X[n, feature[idx]]
// (level 0 reads per-tree constants; the NaN select and the set test only where some node needs
// them). Each level ends in a max over an axis of 1: a reduction, which FuseOps never fuses into the
// next level's gathers, so a level is one kernel and no level's expression is inlined into the next
// one's several reads. The leaves' values then reduce over the trees: when each tree votes for one
// target (one-target ensembles, gradient boosting) its leaf weights [N, T] regroup to [N, targets, trees];
// otherwise a [leaves, targets] table gathers to [N, T, targets]. Missing votes hold the aggregate's
// identity (0, +inf, -inf).
//
// Errors (at import, naming the attribute or node): mismatched attribute lengths, an id, feature,
// target or mode out of range, a cycle, a node listed twice, membership sets that do not match the
// BRANCH_MEMBER nodes, base_values of another length. String class labels are refused (Tessera has
// no string tensors); X must have a static shape.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "tensor_convert.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;
using runtime::NDArray;

namespace {

enum Mode : int64_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember };
const char* const kModeNames[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
                                  "BRANCH_EQ",  "BRANCH_NEQ", "BRANCH_MEMBER"};
enum class Aggregate : int64_t { kAverage = 0, kSum, kMin, kMax };
enum class Post : int64_t { kNone = 0, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A child (or a tree's root): an interior node (>= 0) or leaf l (encoded -1 - l).
using Ref = int64_t;
bool IsLeaf(Ref r) { return r < 0; }
Ref LeafRef(int64_t l) { return -1 - l; }
int64_t LeafOf(Ref r) { return -1 - r; }

struct Branch {
  std::string name;  // for messages: "node 3" (TreeEnsemble), "tree 2 node 7" (legacy)
  int64_t feature = 0;
  int64_t mode = kLeq;
  double split = 0;
  std::vector<double> members;  // BRANCH_MEMBER's set
  bool missing_true = false;
  Ref t = 0, f = 0;
};

struct Vote {
  int64_t target;
  double weight;
};

// One ensemble read from any of the three encodings.
struct Ensemble {
  std::vector<Branch> branches;
  std::vector<std::vector<Vote>> leaves;
  std::vector<Ref> roots;
  int64_t n_targets = 0;
  DataType split_type = DataType::Float(32);  // the widest type splits and member values were given in
  bool double_weights = false;                // leaf weights or base values given as double
};

DataType Wider(DataType a, DataType b) { return a.bits() >= b.bits() ? a : b; }

std::string Str(int64_t v) { return std::to_string(v); }

// The elements and dtype of TENSOR attribute `name`; false when it is absent.
bool TensorAttr(NodeContext& ctx, const std::string& name, std::vector<double>* values, DataType* dtype) {
  const onnx::AttributeProto* a = ctx.Attr(name);
  if (!a) return false;
  ctx.CheckAttrType(*a, onnx::AttributeProto::TENSOR);
  if (!a->has_t()) ctx.Fail("attribute '" + name + "' must be a tensor");
  NDArray arr = TensorProtoToNDArray(a->t(), ctx.Where() + ": attribute '" + name + "'");
  *values = ToDoubles(arr);
  *dtype = arr.dtype();
  return true;
}

// A float tensor attribute (float16 / float / double), its dtype into *dtype.
bool FloatTensorAttr(NodeContext& ctx, const std::string& name, std::vector<double>* values, DataType* dtype) {
  if (!TensorAttr(ctx, name, values, dtype)) return false;
  if (*dtype != DataType::Float(16) && *dtype != DataType::Float(32) && *dtype != DataType::Float(64))
    ctx.Fail("attribute '" + name + "' must be a float16, float or double tensor, got " + dtype->str());
  return true;
}

void Require(NodeContext& ctx, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (!ctx.HasAttr(n)) ctx.Fail("required attribute '" + n + "' is missing");
}

void CheckLength(NodeContext& ctx, const std::string& name, size_t got, const std::string& like, size_t want) {
  if (got != want)
    ctx.Fail(name + " has " + Str(static_cast<int64_t>(got)) + " entries but " + like + " has " +
             Str(static_cast<int64_t>(want)) + " (they must have the same length)");
}

// ---- TreeEnsemble-5 -----------------------------------------------------------------------------

Ensemble ReadTreeEnsemble(NodeContext& ctx) {
  Require(ctx, {"tree_roots", "nodes_featureids", "nodes_modes", "nodes_splits", "nodes_truenodeids",
                "nodes_trueleafs", "nodes_falsenodeids", "nodes_falseleafs", "leaf_targetids", "leaf_weights",
                "n_targets"});
  Ensemble e;
  e.n_targets = ctx.AttrInt("n_targets");
  if (e.n_targets < 1) ctx.Fail("n_targets must be >= 1, got " + Str(e.n_targets));
  const std::vector<int64_t> features = ctx.AttrInts("nodes_featureids", {});
  const std::vector<int64_t> true_ids = ctx.AttrInts("nodes_truenodeids", {});
  const std::vector<int64_t> true_leafs = ctx.AttrInts("nodes_trueleafs", {});
  const std::vector<int64_t> false_ids = ctx.AttrInts("nodes_falsenodeids", {});
  const std::vector<int64_t> false_leafs = ctx.AttrInts("nodes_falseleafs", {});
  const std::vector<int64_t> missing = ctx.AttrInts("nodes_missing_value_tracks_true", {});
  const std::vector<int64_t> targets = ctx.AttrInts("leaf_targetids", {});
  const std::vector<int64_t> roots = ctx.AttrInts("tree_roots", {});
  std::vector<double> modes_d, splits, weights, members;
  DataType modes_t, split_t, weight_t, member_t = DataType::Float(32);
  TensorAttr(ctx, "nodes_modes", &modes_d, &modes_t);
  if (!modes_t.is_int() && !modes_t.is_uint()) ctx.Fail("nodes_modes must be a uint8 tensor, got " + modes_t.str());
  FloatTensorAttr(ctx, "nodes_splits", &splits, &split_t);
  FloatTensorAttr(ctx, "leaf_weights", &weights, &weight_t);
  const bool has_members = FloatTensorAttr(ctx, "membership_values", &members, &member_t);
  e.split_type = has_members ? Wider(split_t, member_t) : split_t;
  e.double_weights = weight_t == DataType::Float(64);

  const size_t n = features.size();
  if (n == 0) ctx.Fail("nodes_featureids is empty: the ensemble has no nodes");
  CheckLength(ctx, "nodes_modes", modes_d.size(), "nodes_featureids", n);
  CheckLength(ctx, "nodes_splits", splits.size(), "nodes_featureids", n);
  CheckLength(ctx, "nodes_truenodeids", true_ids.size(), "nodes_featureids", n);
  CheckLength(ctx, "nodes_trueleafs", true_leafs.size(), "nodes_featureids", n);
  CheckLength(ctx, "nodes_falsenodeids", false_ids.size(), "nodes_featureids", n);
  CheckLength(ctx, "nodes_falseleafs", false_leafs.size(), "nodes_featureids", n);
  if (!missing.empty())
    CheckLength(ctx, "nodes_missing_value_tracks_true", missing.size(), "nodes_featureids", n);
  const size_t n_leaves = targets.size();
  CheckLength(ctx, "leaf_weights", weights.size(), "leaf_targetids", n_leaves);
  if (roots.empty()) ctx.Fail("tree_roots is empty: the ensemble has no trees");

  // The NaN-terminated member sets, one per BRANCH_MEMBER node in node order.
  std::vector<std::vector<double>> sets(1);
  for (double v : members) {
    if (std::isnan(v)) sets.emplace_back();
    else sets.back().push_back(v);
  }
  if (!sets.back().empty())
    ctx.Fail("membership_values ends with " + Str(static_cast<int64_t>(sets.back().size())) +
             " values that no NaN terminates (each set ends with a NaN)");
  sets.pop_back();
  size_t next_set = 0;

  auto child = [&](size_t i, int64_t id, int64_t leaf, const char* side) -> Ref {
    const std::string what = "node " + Str(static_cast<int64_t>(i)) + ": nodes_" + side;
    if (leaf != 0 && leaf != 1) ctx.Fail(what + "leafs is " + Str(leaf) + ", must be 0 or 1");
    const size_t bound = leaf ? n_leaves : n;
    if (id < 0 || static_cast<size_t>(id) >= bound)
      ctx.Fail(what + "nodeids is " + Str(id) + ", outside [0, " + Str(static_cast<int64_t>(bound)) + ") (" +
               (leaf ? "an index into leaf_*" : "an index into nodes_*") + ")");
    return leaf ? LeafRef(id) : id;
  };
  for (size_t i = 0; i < n; ++i) {
    Branch b;
    b.name = "node " + Str(static_cast<int64_t>(i));
    b.feature = features[i];
    const double mode = modes_d[i];
    if (!(mode >= 0 && mode <= static_cast<double>(kMember)) || mode != std::floor(mode))
      ctx.Fail(b.name + ": nodes_modes is " + Str(static_cast<int64_t>(mode)) +
               ", not a mode (0 BRANCH_LEQ, 1 BRANCH_LT, 2 BRANCH_GTE, 3 BRANCH_GT, 4 BRANCH_EQ, 5 BRANCH_NEQ, 6 "
               "BRANCH_MEMBER)");
    b.mode = static_cast<int64_t>(mode);
    b.split = splits[i];
    b.missing_true = !missing.empty() && missing[i] != 0;
    b.t = child(i, true_ids[i], true_leafs[i], "true");
    b.f = child(i, false_ids[i], false_leafs[i], "false");
    if (b.mode == kMember) {
      if (!has_members) ctx.Fail(b.name + " is BRANCH_MEMBER but the attribute membership_values is missing");
      if (next_set < sets.size()) b.members = sets[next_set];
      ++next_set;
    }
    e.branches.push_back(std::move(b));
  }
  if (has_members && next_set != sets.size())
    ctx.Fail("membership_values holds " + Str(static_cast<int64_t>(sets.size())) +
             " NaN-terminated sets but nodes_modes has " + Str(static_cast<int64_t>(next_set)) +
             " BRANCH_MEMBER nodes (one set per node)");
  for (size_t l = 0; l < n_leaves; ++l) {
    if (targets[l] < 0 || targets[l] >= e.n_targets)
      ctx.Fail("leaf_targetids[" + Str(static_cast<int64_t>(l)) + "] is " + Str(targets[l]) + ", outside [0, " +
               Str(e.n_targets) + ") (n_targets)");
    e.leaves.push_back({Vote{targets[l], weights[l]}});
  }
  for (size_t t = 0; t < roots.size(); ++t) {
    if (roots[t] < 0 || static_cast<size_t>(roots[t]) >= n)
      ctx.Fail("tree_roots[" + Str(static_cast<int64_t>(t)) + "] is " + Str(roots[t]) + ", outside [0, " +
               Str(static_cast<int64_t>(n)) + ") (an index into nodes_*)");
    e.roots.push_back(roots[t]);
  }
  return e;
}

// ---- TreeEnsembleRegressor / TreeEnsembleClassifier (opsets 1, 3) -------------------------------

// The float list `name` or the tensor `name`_as_tensor (opset 3; not both); *is_double when the
// tensor is double. Empty when neither is given.
std::vector<double> FloatsOrTensor(NodeContext& ctx, const std::string& name, bool* is_double) {
  std::vector<double> values;
  DataType dt;
  if (FloatTensorAttr(ctx, name + "_as_tensor", &values, &dt)) {
    if (ctx.HasAttr(name)) ctx.Fail("both " + name + " and " + name + "_as_tensor are given (at most one may be)");
    if (dt == DataType::Float(64)) *is_double = true;
    return values;
  }
  for (float v : ctx.AttrFloats(name)) values.push_back(v);
  return values;
}

// The nodes and votes of the legacy operators; `vote` is "target" (regressor) or "class".
Ensemble ReadLegacy(NodeContext& ctx, const std::string& vote, int64_t n_outputs) {
  Ensemble e;
  e.n_targets = n_outputs;
  const std::vector<int64_t> tree_ids = ctx.AttrInts("nodes_treeids", {});
  const std::vector<int64_t> node_ids = ctx.AttrInts("nodes_nodeids", {});
  const std::vector<int64_t> features = ctx.AttrInts("nodes_featureids", {});
  const std::vector<int64_t> true_ids = ctx.AttrInts("nodes_truenodeids", {});
  const std::vector<int64_t> false_ids = ctx.AttrInts("nodes_falsenodeids", {});
  const std::vector<int64_t> missing = ctx.AttrInts("nodes_missing_value_tracks_true", {});
  bool values_double = false;
  const std::vector<double> values = FloatsOrTensor(ctx, "nodes_values", &values_double);
  e.split_type = values_double ? DataType::Float(64) : DataType::Float(32);
  std::vector<std::string> modes;
  if (const onnx::AttributeProto* a = ctx.Attr("nodes_modes")) {
    ctx.CheckAttrType(*a, onnx::AttributeProto::STRINGS);
    modes.assign(a->strings().begin(), a->strings().end());
  }
  const size_t n = tree_ids.size();
  if (n == 0) ctx.Fail("nodes_treeids is empty: the ensemble has no nodes");
  CheckLength(ctx, "nodes_nodeids", node_ids.size(), "nodes_treeids", n);
  CheckLength(ctx, "nodes_featureids", features.size(), "nodes_treeids", n);
  CheckLength(ctx, "nodes_modes", modes.size(), "nodes_treeids", n);
  CheckLength(ctx, ctx.HasAttr("nodes_values_as_tensor") ? "nodes_values_as_tensor" : "nodes_values",
              values.size(), "nodes_treeids", n);
  CheckLength(ctx, "nodes_truenodeids", true_ids.size(), "nodes_treeids", n);
  CheckLength(ctx, "nodes_falsenodeids", false_ids.size(), "nodes_treeids", n);
  if (!missing.empty()) CheckLength(ctx, "nodes_missing_value_tracks_true", missing.size(), "nodes_treeids", n);

  // Entry i is branch slot[i] (>= 0) or leaf -1 - slot[i]: LEAF entries become leaves in order.
  std::map<std::pair<int64_t, int64_t>, size_t> entry;  // (tree id, node id) -> entry
  std::map<int64_t, size_t> first;                        // tree id -> its first entry (the root)
  std::vector<Ref> slot(n);
  auto name = [&](size_t i) { return "tree " + Str(tree_ids[i]) + " node " + Str(node_ids[i]); };
  int64_t n_branches = 0, n_leaves = 0;
  for (size_t i = 0; i < n; ++i) {
    auto [it, fresh] = entry.emplace(std::make_pair(tree_ids[i], node_ids[i]), i);
    if (!fresh)
      ctx.Fail(name(i) + " is listed twice (nodes_* entries " + Str(static_cast<int64_t>(it->second)) + " and " +
               Str(static_cast<int64_t>(i)) + ")");
    first.emplace(tree_ids[i], i);
    if (modes[i] == "LEAF") {
      slot[i] = LeafRef(n_leaves++);
      continue;
    }
    const auto* m = std::find(std::begin(kModeNames), std::begin(kModeNames) + kMember, modes[i]);
    if (m == std::begin(kModeNames) + kMember)
      ctx.Fail(name(i) + ": nodes_modes is '" + modes[i] +
               "', not one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF");
    slot[i] = n_branches++;
  }
  e.leaves.resize(n_leaves);
  auto child = [&](size_t i, int64_t id, const char* side) -> Ref {
    auto it = entry.find({tree_ids[i], id});
    if (it == entry.end())
      ctx.Fail(name(i) + ": its " + side + " child, node " + Str(id) + ", is not a node of tree " + Str(tree_ids[i]));
    return slot[it->second];
  };
  for (size_t i = 0; i < n; ++i) {
    if (IsLeaf(slot[i])) continue;
    Branch b;
    b.name = name(i);
    b.feature = features[i];
    b.mode = std::find(std::begin(kModeNames), std::end(kModeNames), modes[i]) - std::begin(kModeNames);
    b.split = values[i];
    b.missing_true = !missing.empty() && missing[i] != 0;
    b.t = child(i, true_ids[i], "true");
    b.f = child(i, false_ids[i], "false");
    e.branches.push_back(std::move(b));
  }
  for (const auto& [tree, i] : first) e.roots.push_back(slot[i]);

  const std::vector<int64_t> v_trees = ctx.AttrInts(vote + "_treeids", {});
  const std::vector<int64_t> v_nodes = ctx.AttrInts(vote + "_nodeids", {});
  const std::vector<int64_t> v_ids = ctx.AttrInts(vote + "_ids", {});
  bool weights_double = false;
  const std::vector<double> v_weights = FloatsOrTensor(ctx, vote + "_weights", &weights_double);
  e.double_weights = weights_double;
  CheckLength(ctx, vote + "_nodeids", v_nodes.size(), vote + "_treeids", v_trees.size());
  CheckLength(ctx, vote + "_ids", v_ids.size(), vote + "_treeids", v_trees.size());
  CheckLength(ctx, ctx.HasAttr(vote + "_weights_as_tensor") ? vote + "_weights_as_tensor" : vote + "_weights",
              v_weights.size(), vote + "_treeids", v_trees.size());
  for (size_t j = 0; j < v_trees.size(); ++j) {
    const std::string what = vote + " vote " + Str(static_cast<int64_t>(j)) + " (tree " + Str(v_trees[j]) +
                             " node " + Str(v_nodes[j]) + ")";
    auto it = entry.find({v_trees[j], v_nodes[j]});
    if (it == entry.end()) ctx.Fail(what + " names no node of nodes_*");
    if (!IsLeaf(slot[it->second])) ctx.Fail(what + " names a branch node; votes belong to LEAF nodes");
    if (v_ids[j] < 0 || v_ids[j] >= n_outputs)
      ctx.Fail(what + ": " + vote + "_ids is " + Str(v_ids[j]) + ", outside [0, " + Str(n_outputs) + ")" +
               (vote == "class" ? " (the number of class labels)" : " (n_targets)"));
    e.leaves[LeafOf(slot[it->second])].push_back(Vote{v_ids[j], v_weights[j]});
  }
  return e;
}

// ---- lowering -----------------------------------------------------------------------------------

// A value of the comparison type `c` (float32 or float64) as a double.
double RoundTo(double v, DataType c) { return c == DataType::Float(32) ? static_cast<double>(static_cast<float>(v)) : v; }

// The largest value of type `c` below v: x < v is x <= NextDown(v) for every x of type c. NaN
// (never true) for v = -inf or NaN.
double NextDown(double v, DataType c) {
  if (std::isnan(v) || v == -kInf) return kNaN;
  if (c == DataType::Float(32)) return std::nextafter(static_cast<float>(v), -std::numeric_limits<float>::infinity());
  return std::nextafter(v, -kInf);
}

// A node after canonicalisation: true on x <= split or x in members (a NaN split or padding never
// matches), children swapped as the mode needs.
struct Canon {
  double split = kNaN;
  std::vector<double> members;
  bool member = false;
  bool nan_true = false;
  Ref t = 0, f = 0;
};

class Lowering {
 public:
  // `cmp`: the comparison type (float32 or float64), X's type when Scores gets it.
  Lowering(NodeContext& ctx, const Ensemble& e, int64_t n_features, DataType cmp)
      : ctx_(ctx), e_(e), features_(n_features), cmp_(cmp) {}

  // The aggregated [N, n_targets] scores (in `acc`) of X [N, F]: the sum, mean, min or max of the
  // trees' votes per target (no base values, no post_transform).
  Expr Scores(Expr x, int64_t rows, DataType acc, Aggregate agg) {
    Canonicalise();
    Depths();
    Layout(agg);
    Expr idx = Traverse(x, rows);
    return Aggregated(idx, rows, acc, agg);
  }

 private:
  int64_t B() const { return static_cast<int64_t>(e_.branches.size()); }
  int64_t L() const { return static_cast<int64_t>(e_.leaves.size()); }
  int64_t T() const { return static_cast<int64_t>(e_.roots.size()); }
  // The unified index of a ref: leaves first, then interior nodes.
  int64_t Unified(Ref r) const { return IsLeaf(r) ? LeafOf(r) : L() + r; }
  const std::string& NameOf(Ref r) const { return e_.branches[r].name; }

  // Follows nodes whose two children are the same (no test) to the node or leaf that decides.
  Ref Resolve(Ref r) const {
    for (int64_t steps = 0; !IsLeaf(r) && e_.branches[r].t == e_.branches[r].f; ++steps) {
      if (steps > B()) ctx_.Fail("the nodes form a cycle through " + NameOf(r));
      r = e_.branches[r].t;
    }
    return r;
  }

  void Canonicalise() {
    canon_.resize(B());
    for (int64_t i = 0; i < B(); ++i) {
      const Branch& b = e_.branches[i];
      Canon& c = canon_[i];
      if (b.t == b.f) continue;  // no test: Resolve skips it
      if (b.feature < 0 || b.feature >= features_)
        ctx_.Fail(b.name + ": feature id " + Str(b.feature) + " is outside [0, " + Str(features_) + ") (X has " +
                  Str(features_) + " features)");
      Ref t = Resolve(b.t), f = Resolve(b.f);
      bool nan_true = b.missing_true, swap = false;
      const double s = RoundTo(b.split, cmp_);
      switch (b.mode) {
        case kLeq: c.split = s; break;
        case kLt: c.split = NextDown(s, cmp_); break;
        // x > s: not x <= s; x >= s: not x < s. Against a NaN split neither holds: not x <= inf.
        case kGt: c.split = std::isnan(s) ? kInf : s, swap = true; break;
        case kGte: c.split = std::isnan(s) ? kInf : NextDown(s, cmp_), swap = true; break;
        case kEq: c.members = {s}, c.member = true; break;
        case kNeq: c.members = {s}, c.member = true, swap = true, nan_true = false; break;  // NaN != s holds
        default:
          c.member = true;
          for (double m : b.members) c.members.push_back(RoundTo(m, cmp_));
          break;
      }
      if (swap) {
        std::swap(t, f);
        if (b.mode != kNeq) nan_true = !nan_true;
      }
      if (c.member) c.split = kNaN;
      c.nan_true = nan_true;
      c.t = t, c.f = f;
    }
  }

  // The depth of every interior node reachable from a root (the number of tests on its longest path
  // to a leaf); a cycle is a UserError.
  void Depths() {
    roots_.clear();
    for (Ref r : e_.roots) roots_.push_back(Resolve(r));
    depth_.assign(B(), -1);  // -2: on the path being explored
    auto depth_of = [&](Ref r) { return IsLeaf(r) ? int64_t{0} : depth_[r]; };
    for (Ref root : roots_) {
      if (IsLeaf(root) || depth_[root] >= 0) continue;
      std::vector<std::pair<Ref, int>> stack{{root, 0}};
      depth_[root] = -2;
      while (!stack.empty()) {
        const Ref b = stack.back().first;
        const int state = stack.back().second++;
        if (state < 2) {
          const Ref c = state == 0 ? canon_[b].t : canon_[b].f;
          if (IsLeaf(c)) continue;
          if (depth_[c] == -2)
            ctx_.Fail("the nodes form a cycle: " + NameOf(c) + " is reached again from " + NameOf(b));
          if (depth_[c] == -1) {
            depth_[c] = -2;
            stack.push_back({c, 0});
          }
          continue;
        }
        depth_[b] = 1 + std::max(depth_of(canon_[b].t), depth_of(canon_[b].f));
        stack.pop_back();
      }
    }
    levels_ = 0;
    for (Ref r : roots_) levels_ = std::max(levels_, depth_of(r));
    // What the reachable tests need.
    for (int64_t i = 0; i < B(); ++i) {
      if (depth_[i] < 0) continue;
      const Canon& c = canon_[i];
      any_leq_ |= !c.member;
      any_member_ |= c.member;
      set_width_ = std::max(set_width_, static_cast<int64_t>(c.members.size()));
      (c.nan_true ? nan_true_ : nan_false_) = true;
    }
    set_width_ = std::max<int64_t>(set_width_, 1);
  }

  // The leaves each tree reaches.
  std::vector<std::vector<int64_t>> TreeLeaves() const {
    std::vector<std::vector<int64_t>> out(T());
    std::vector<int64_t> seen(B(), -1), leaf_seen(L(), -1);
    for (int64_t t = 0; t < T(); ++t) {
      std::vector<Ref> stack{roots_[t]};
      while (!stack.empty()) {
        const Ref r = stack.back();
        stack.pop_back();
        if (IsLeaf(r)) {
          if (leaf_seen[LeafOf(r)] != t) leaf_seen[LeafOf(r)] = t, out[t].push_back(LeafOf(r));
          continue;
        }
        if (seen[r] == t) continue;
        seen[r] = t;
        stack.push_back(canon_[r].t);
        stack.push_back(canon_[r].f);
      }
    }
    return out;
  }

  // Chooses how the votes reduce: per tree one target (grouped), or a dense [leaves, targets] table.
  void Layout(Aggregate agg) {
    const std::vector<std::vector<int64_t>> leaves = TreeLeaves();
    const int64_t k = e_.n_targets;
    tree_target_.assign(T(), -1);
    grouped_ = true;
    for (int64_t t = 0; t < T() && grouped_; ++t)
      for (int64_t l : leaves[t]) {
        const std::vector<Vote>& votes = e_.leaves[l];
        if (votes.size() > 1) grouped_ = false;
        if (votes.size() != 1) continue;
        if (tree_target_[t] == -1) tree_target_[t] = votes[0].target;
        else if (tree_target_[t] != votes[0].target) grouped_ = false;
      }
    // Whether every row gets a vote for target j: some tree votes j at every leaf it reaches.
    always_voted_.assign(k, false);
    for (int64_t t = 0; t < T(); ++t) {
      std::vector<int64_t> count(k, 0);
      for (int64_t l : leaves[t]) {
        std::vector<bool> has(k, false);
        for (const Vote& v : e_.leaves[l]) has[v.target] = true;
        for (int64_t j = 0; j < k; ++j) count[j] += has[j];
      }
      for (int64_t j = 0; j < k; ++j)
        if (count[j] == static_cast<int64_t>(leaves[t].size())) always_voted_[j] = true;
    }
    identity_ = agg == Aggregate::kMin ? kInf : agg == Aggregate::kMax ? -kInf : 0.0;
    // The traversal's tree order: grouped by target, then as listed.
    order_.resize(T());
    for (int64_t t = 0; t < T(); ++t) order_[t] = t;
    if (grouped_) {
      for (int64_t& tt : tree_target_) tt = std::max<int64_t>(tt, 0);  // a tree without votes adds the identity
      std::stable_sort(order_.begin(), order_.end(),
                       [&](int64_t a, int64_t b) { return tree_target_[a] < tree_target_[b]; });
    }
  }

  // Constant helpers.
  Expr Const(const std::vector<double>& v, std::vector<int64_t> shape, DataType dt) {
    return graph::ConstantNode::make(FromDoubles(v, shape, dt));
  }
  Expr IntConst(const std::vector<int64_t>& v, std::vector<int64_t> shape, DataType dt) {
    return graph::ConstantNode::make(FromInts(v, shape, dt));
  }
  Expr Take(Expr data, Expr indices, int64_t axis = 0) {
    return ctx_.Call("take", {std::move(data), std::move(indices)},
                     Attrs{{"axis", axis}, {"mode", std::string("clip")}});
  }
  Expr Cast(Expr e, DataType dt) { return ctx_.Call("cast", {std::move(e)}, Attrs{{"dtype", dt.str()}}); }

  // idx [N, T] of the leaf each row reaches in each tree (unified indices, which are leaf indices).
  Expr Traverse(Expr x, int64_t rows) {
    const int64_t m = L() + B(), t_count = T();
    const DataType it = m < (int64_t{1} << 31) && rows * features_ < (int64_t{1} << 31) ? DataType::Int(32)
                                                                                          : DataType::Int(64);
    // Per unified node: feature, split, set, children on true / false / NaN (a leaf loops to itself).
    std::vector<int64_t> feature(m, 0), on_true(m), on_false(m), on_nan(m);
    std::vector<double> split(m, kNaN), set(m * set_width_, kNaN);
    for (int64_t l = 0; l < L(); ++l) on_true[l] = on_false[l] = on_nan[l] = l;
    for (int64_t i = 0; i < B(); ++i) {
      const int64_t u = L() + i;
      const Canon& c = canon_[i];
      on_true[u] = on_false[u] = on_nan[u] = u;
      if (depth_[i] < 0) continue;  // unreachable or no test
      feature[u] = e_.branches[i].feature;
      split[u] = c.split;
      for (size_t j = 0; j < c.members.size(); ++j) set[u * set_width_ + j] = c.members[j];
      on_true[u] = Unified(c.t);
      on_false[u] = Unified(c.f);
      on_nan[u] = c.nan_true ? on_true[u] : on_false[u];
    }
    std::vector<int64_t> roots(t_count);
    for (int64_t t = 0; t < t_count; ++t) roots[t] = Unified(roots_[order_[t]]);
    if (levels_ == 0)
      return ctx_.Call("broadcast_to", {IntConst(roots, {1, t_count}, it)},
                       Attrs{{"shape", std::vector<int64_t>{rows, t_count}}});

    const NDArray root_idx = MakeInts(roots);
    // A table's entries per tree at level 0 (constants), else gathered at idx.
    auto table = [&](NDArray full, Expr idx) -> Expr {
      if (!idx) return graph::ConstantNode::make(GatherArray(full, root_idx, 0));
      return Take(graph::ConstantNode::make(full), idx);
    };
    const NDArray feature_t = FromInts(feature, {m}, it), split_t = FromDoubles(split, {m}, cmp_);
    const NDArray set_t = set_width_ == 1 ? FromDoubles(set, {m}, cmp_) : FromDoubles(set, {m, set_width_}, cmp_);
    const NDArray true_t = FromInts(on_true, {m}, it), false_t = FromInts(on_false, {m}, it);
    const NDArray nan_t = FromInts(on_nan, {m}, it);
    // Row n's first element in X flattened: n * F.
    Expr row_base = Reshape(ctx_, ctx_.Call("arange", {x}, Attrs{{"axis", int64_t{0}}, {"start", 0.0},
                                                                  {"step", static_cast<double>(features_)},
                                                                  {"dtype", it.str()}}),
                            {rows, 1});
    // X flattened once: a reshape every level reads, so no level fuses it (a zero-copy view).
    Expr x_flat = Reshape(ctx_, x, {rows * features_});
    Expr idx;  // undefined at level 0
    for (int64_t level = 0; level < levels_; ++level) {
      Expr xv = !idx ? Take(x, table(feature_t, idx), 1)
                     : Take(x_flat, ctx_.Call("add", {table(feature_t, idx), row_base}));
      Expr cond;
      auto either = [&](Expr c) { cond = cond ? ctx_.Call("logical_or", {cond, c}) : c; };
      // x <= s or NaN is not x > s: the select's branches swap (no logical_not, which the arith
      // simplifier turns into the opposite comparison, wrong for a NaN).
      const bool flip = nan_true_ && !nan_false_ && !any_member_;
      if (any_leq_) either(ctx_.Call(flip ? "greater" : "less_equal", {xv, table(split_t, idx)}));
      if (any_member_) {
        Expr members = table(set_t, idx);
        if (set_width_ == 1) {
          either(ctx_.Call("equal", {xv, members}));
        } else {
          Expr eq = ctx_.Call("equal", {ctx_.Call("expand_dims", {xv}, Attrs{{"axis", int64_t{2}}}), members});
          Expr hits = ctx_.Call("max", {Cast(eq, DataType::Int(32))}, Attrs{{"axis", std::vector<int64_t>{2}}});
          either(ctx_.Call("greater", {hits, ctx_.ScalarConst(0, DataType::Int(32))}));
        }
      }
      if (nan_true_ && !nan_false_ && !flip) either(ctx_.Call("isnan", {xv}));
      Expr next = flip ? ctx_.Call("where", {cond, table(false_t, idx), table(true_t, idx)})
                       : ctx_.Call("where", {cond, table(true_t, idx), table(false_t, idx)});
      if (nan_true_ && nan_false_) next = ctx_.Call("where", {ctx_.Call("isnan", {xv}), table(nan_t, idx), next});
      // The level's end: a reduction over an axis of 1, which no later gather fuses with.
      idx = ctx_.Call("max", {ctx_.Call("expand_dims", {next}, Attrs{{"axis", int64_t{2}}})},
                      Attrs{{"axis", std::vector<int64_t>{2}}});
    }
    return idx;
  }

  // The votes of the leaves at idx [N, T], reduced over the trees: [N, n_targets] in `acc`.
  Expr Aggregated(Expr idx, int64_t rows, DataType acc, Aggregate agg) {
    const int64_t k = e_.n_targets, t_count = T();
    const char* reduce = agg == Aggregate::kMin ? "min" : agg == Aggregate::kMax ? "max" : "sum";
    bool weight_is_identity = false;
    for (const auto& votes : e_.leaves)
      for (const Vote& v : votes) weight_is_identity |= v.weight == identity_ && identity_ != 0;
    // `weight(l, j)`-tables reduced the same way: the votes, or 1 / 0 for "has a vote".
    auto reduced = [&](bool votes_only, const char* op) -> Expr {
      const double none = votes_only ? 0.0 : identity_;
      if (grouped_) {
        std::vector<double> w(L(), none);
        for (int64_t l = 0; l < L(); ++l)
          if (!e_.leaves[l].empty()) w[l] = votes_only ? 1.0 : e_.leaves[l][0].weight;
        Expr v = Take(Const(w, {L()}, acc), idx);  // [N, T]
        std::vector<int64_t> count(k, 0);
        for (int64_t t : order_) ++count[tree_target_[t]];
        const int64_t width = *std::max_element(count.begin(), count.end());
        if (width * k != t_count) {  // pad each target's trees to `width` with the identity (column T)
          Expr pad = ctx_.Call("broadcast_to", {Const({none}, {1, 1}, acc)},
                               Attrs{{"shape", std::vector<int64_t>{rows, 1}}});
          std::vector<int64_t> slots(k * width, t_count);
          for (int64_t j = 0, pos = 0; j < k; ++j)
            for (int64_t c = 0; c < count[j]; ++c) slots[j * width + c] = pos++;
          v = Take(Concat(ctx_, {v, pad}, 1), IntConst(slots, {k * width}, DataType::Int(32)), 1);
        }
        return ctx_.Call(op, {Reshape(ctx_, v, {rows, k, width})}, Attrs{{"axis", std::vector<int64_t>{2}}});
      }
      std::vector<double> w(L() * k, none);
      for (int64_t l = 0; l < L(); ++l)
        for (const Vote& v : e_.leaves[l]) {
          double& cell = w[l * k + v.target];
          const bool first = votes_only || cell == none;
          if (votes_only) cell = 1.0;
          else if (agg == Aggregate::kMin) cell = first ? v.weight : std::min(cell, v.weight);
          else if (agg == Aggregate::kMax) cell = first ? v.weight : std::max(cell, v.weight);
          else cell += v.weight;
        }
      return ctx_.Call(op, {Take(Const(w, {L(), k}, acc), idx)}, Attrs{{"axis", std::vector<int64_t>{1}}});
    };
    Expr r = reduced(false, reduce);
    const bool maybe_unvoted = std::find(always_voted_.begin(), always_voted_.end(), false) != always_voted_.end();
    if ((agg == Aggregate::kMin || agg == Aggregate::kMax) && maybe_unvoted) {
      // A target without a vote is 0 (ONNX Runtime), not the identity.
      Expr zero = ctx_.ScalarConst(0, acc);
      Expr unvoted = weight_is_identity
                         ? ctx_.Call("equal", {reduced(true, "max"), zero})
                         : ctx_.Call("equal", {r, ctx_.ScalarConst(identity_, acc)});
      r = ctx_.Call("where", {unvoted, zero, r});
    }
    if (agg == Aggregate::kAverage) r = ctx_.Call("divide", {r, ctx_.ScalarConst(static_cast<double>(t_count), acc)});
    return r;
  }

 private:
  NodeContext& ctx_;
  const Ensemble& e_;
  int64_t features_;
  DataType cmp_;
  std::vector<Canon> canon_;
  std::vector<Ref> roots_;
  std::vector<int64_t> depth_;
  int64_t levels_ = 0;
  bool any_leq_ = false, any_member_ = false, nan_true_ = false, nan_false_ = false;
  int64_t set_width_ = 1;
  bool grouped_ = true;
  std::vector<int64_t> tree_target_, order_;
  std::vector<bool> always_voted_;
  double identity_ = 0;
};

// X [N, F] (the operators' shape inference requires rank 2), its static extents into *rows, *features.
Expr PrepareX(NodeContext& ctx, int64_t* rows, int64_t* features) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  if (xs.size() != 2) ctx.Fail("X must be [N, F], got rank " + Str(static_cast<int64_t>(xs.size())));
  *rows = xs[0], *features = xs[1];
  return ctx.Input(0);
}

// The comparison type: the widest of float32, X's (when float) and the splits'. Every split and X
// value is exact in it.
DataType CompareType(DataType x, DataType splits) {
  const DataType c = Wider(DataType::Float(32), splits);
  return x.is_float() ? Wider(c, x) : c;
}

Expr ToType(NodeContext& ctx, Expr x, DataType from, DataType to) {
  return from == to ? x : ctx.Call("cast", {std::move(x)}, Attrs{{"dtype", to.str()}});
}

// sqrt(2) erfinv(2x - 1) with the approximation of ONNX Runtime and the reference (Winitzki's,
// a = 0.147): erfinv(y) ~ sign(y) sqrt(sqrt(v^2 - ln(1 - y^2) / a) - v), v = 2 / (pi a) + ln(1 - y^2) / 2.
Expr Probit(NodeContext& ctx, Expr x, DataType dt) {
  auto c = [&](double v) { return ctx.ScalarConst(v, dt); };
  Expr y = ctx.Call("subtract", {ctx.Call("multiply", {x, c(2)}), c(1)});
  Expr w = ctx.Call("multiply", {ctx.Call("subtract", {c(1), y}), ctx.Call("add", {c(1), y})});
  Expr lg = ctx.Call("log", {w});
  constexpr double kPi = 3.14159265358979323846, kSqrt2 = 1.41421356237309504880;
  Expr v = ctx.Call("add", {c(2 / (kPi * 0.147)), ctx.Call("multiply", {c(0.5), lg})});
  Expr inner = ctx.Call("subtract", {ctx.Call("multiply", {v, v}), ctx.Call("multiply", {lg, c(1 / 0.147)})});
  Expr r = ctx.Call("sqrt", {ctx.Call("subtract", {ctx.Call("sqrt", {inner}), v})});
  Expr sign = ctx.Call("where", {ctx.Call("less", {y, c(0)}), c(-kSqrt2), c(kSqrt2)});
  return ctx.Call("multiply", {sign, r});
}

// post_transform over scores [N, K] (K >= 1) in dt. `single_raw`: with K = 1 only PROBIT applies
// (ONNX Runtime's regressors).
Expr PostTransform(NodeContext& ctx, Expr s, Post p, DataType dt, int64_t k, bool single_raw) {
  if (single_raw && k == 1 && p != Post::kProbit) return s;
  switch (p) {
    case Post::kNone: return s;
    case Post::kLogistic: return ctx.Call("sigmoid", {s});
    case Post::kProbit: return Probit(ctx, s, dt);
    case Post::kSoftmax: return ctx.Call("nn.softmax", {s}, Attrs{{"axis", int64_t{1}}});
    case Post::kSoftmaxZero: {
      const Attrs row{{"axis", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}};
      Expr top = ctx.Call("max", {s}, row);
      Expr big = ctx.Call("greater", {ctx.Call("abs", {s}), ctx.ScalarConst(1e-7, dt)});
      Expr e = ctx.Call("where", {big, ctx.Call("exp", {ctx.Call("subtract", {s, top})}),
                                  ctx.Call("multiply", {s, ctx.Call("exp", {ctx.Call("negative", {top})})})});
      Expr sum = ctx.Call("sum", {e}, row);
      return ctx.Call("where", {ctx.Call("equal", {sum, ctx.ScalarConst(0, dt)}), ctx.ScalarConst(0.5, dt),
                                ctx.Call("divide", {e, sum})});
    }
  }
  return s;
}

Post PostFromString(NodeContext& ctx) {
  const std::string p = ctx.AttrString("post_transform", "NONE");
  static const char* const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  for (int i = 0; i < 5; ++i)
    if (p == names[i]) return static_cast<Post>(i);
  ctx.Fail("post_transform is '" + p + "', not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
}

// base_values (or base_values_as_tensor): 0 or `n` of them (or any of `also`).
std::vector<double> BaseValues(NodeContext& ctx, int64_t n, bool* is_double, int64_t also = -1) {
  std::vector<double> base = FloatsOrTensor(ctx, "base_values", is_double);
  const int64_t size = static_cast<int64_t>(base.size());
  if (size != 0 && size != n && size != also)
    ctx.Fail("base_values has " + Str(size) + " values, must have " + Str(n) +
             (also > 0 ? " (or " + Str(also) + ")" : "") + " or none");
  return base;
}

Expr AddBase(NodeContext& ctx, Expr s, const std::vector<double>& base, DataType dt) {
  if (std::all_of(base.begin(), base.end(), [](double v) { return v == 0; })) return s;
  return ctx.Call("add", {s, graph::ConstantNode::make(FromDoubles(base, {1, static_cast<int64_t>(base.size())}, dt))});
}

void ConvertTreeEnsemble(NodeContext& ctx) {
  const DataType dt = ctx.InputType(0).dtype;
  if (dt != DataType::Float(16) && dt != DataType::Float(32) && dt != DataType::Float(64))
    ctx.Fail("X must be float16, float or double, got " + dt.str());
  const int64_t agg = ctx.AttrInt("aggregate_function", 1), post = ctx.AttrInt("post_transform", 0);
  if (agg < 0 || agg > 3) ctx.Fail("aggregate_function is " + Str(agg) + ", not one of 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX");
  if (post < 0 || post > 4)
    ctx.Fail("post_transform is " + Str(post) + ", not one of 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT");
  int64_t rows, features;
  Expr x = PrepareX(ctx, &rows, &features);
  const Ensemble e = ReadTreeEnsemble(ctx);
  const DataType acc = dt == DataType::Float(64) || e.double_weights ? DataType::Float(64) : DataType::Float(32);
  const DataType cmp = CompareType(dt, e.split_type);
  Lowering lower(ctx, e, features, cmp);
  Expr s = lower.Scores(ToType(ctx, x, dt, cmp), rows, acc, static_cast<Aggregate>(agg));
  s = PostTransform(ctx, s, static_cast<Post>(post), acc, e.n_targets, true);
  ctx.SetOutput(0, ToType(ctx, s, acc, dt));
}

// The legacy operators' X (float / double / int64 / int32) checked, with the types it computes in.
Expr LegacyX(NodeContext& ctx, int64_t* rows, int64_t* features, DataType* dt) {
  *dt = ctx.InputType(0).dtype;
  if (*dt != DataType::Float(32) && *dt != DataType::Float(64) && *dt != DataType::Int(64) && *dt != DataType::Int(32))
    ctx.Fail("X must be float, double, int64 or int32, got " + dt->str());
  return PrepareX(ctx, rows, features);
}

void ConvertTreeEnsembleRegressor(NodeContext& ctx) {
  int64_t rows, features;
  DataType dt;
  Expr x = LegacyX(ctx, &rows, &features, &dt);
  const std::string agg_name = ctx.AttrString("aggregate_function", "SUM");
  static const char* const aggs[] = {"AVERAGE", "SUM", "MIN", "MAX"};
  const auto* a = std::find(std::begin(aggs), std::end(aggs), agg_name);
  if (a == std::end(aggs)) ctx.Fail("aggregate_function is '" + agg_name + "', not one of AVERAGE, SUM, MIN, MAX");
  const Post post = PostFromString(ctx);
  const int64_t n_targets = ctx.AttrInt("n_targets");
  if (n_targets < 1) ctx.Fail("n_targets must be >= 1, got " + Str(n_targets));
  const Ensemble e = ReadLegacy(ctx, "target", n_targets);
  bool base_double = false;
  const std::vector<double> base = BaseValues(ctx, n_targets, &base_double);
  const bool wide = dt == DataType::Float(64) || e.double_weights || base_double || e.split_type == DataType::Float(64);
  const DataType acc = wide ? DataType::Float(64) : DataType::Float(32);
  const DataType cmp = CompareType(dt, e.split_type);
  Lowering lower(ctx, e, features, cmp);
  Expr s = lower.Scores(ToType(ctx, x, dt, cmp), rows, acc, static_cast<Aggregate>(a - std::begin(aggs)));
  s = PostTransform(ctx, AddBase(ctx, s, base, acc), post, acc, n_targets, true);
  ctx.SetOutput(0, ToType(ctx, s, acc, DataType::Float(32)));
}

void ConvertTreeEnsembleClassifier(NodeContext& ctx) {
  if (ctx.HasAttr("classlabels_strings")) {
    if (ctx.HasAttr("classlabels_int64s")) ctx.Fail("both classlabels_strings and classlabels_int64s are given (exactly one must be)");
    ctx.Unsupported("string class labels (classlabels_strings): Tessera has no string tensors; integer labels "
                    "(classlabels_int64s) are supported");
  }
  if (!ctx.HasAttr("classlabels_int64s")) ctx.Fail("classlabels_int64s is missing (one of the classlabels_* attributes is required)");
  const std::vector<int64_t> labels = ctx.AttrInts("classlabels_int64s", {});
  const int64_t classes = static_cast<int64_t>(labels.size());
  if (classes == 0) ctx.Fail("classlabels_int64s is empty");
  int64_t rows, features;
  DataType dt;
  Expr x = LegacyX(ctx, &rows, &features, &dt);
  const Post post = PostFromString(ctx);
  const Ensemble e = ReadLegacy(ctx, "class", classes);
  const std::vector<int64_t> ids = ctx.AttrInts("class_ids", {});
  // The binary case: every vote for class 0, one or two labels (the reference's rule, its special case).
  const bool binary = classes == 1 || (classes == 2 && !ids.empty() &&
                                       std::all_of(ids.begin(), ids.end(), [](int64_t i) { return i == 0; }));
  if (classes == 1 && labels[0] != 1)
    ctx.Unsupported("a single class label other than 1 (classlabels_int64s = [" + Str(labels[0]) +
                    "]): the ONNX reference defines only [1] (labels 0 and 1)");
  bool base_double = false;
  const std::vector<double> base = BaseValues(ctx, classes, &base_double, binary ? 1 : -1);
  const bool wide = dt == DataType::Float(64) || e.double_weights || base_double || e.split_type == DataType::Float(64);
  const DataType acc = wide ? DataType::Float(64) : DataType::Float(32);
  const DataType cmp = CompareType(dt, e.split_type);
  Lowering lower(ctx, e, features, cmp);
  Expr s = lower.Scores(ToType(ctx, x, dt, cmp), rows, acc, Aggregate::kSum);
  std::vector<int64_t> label_table = labels;
  if (binary) {
    // s = the class-0 sum + base_values[0]; [1 - s, s] or [-s, s].
    Expr pos = SliceAxis(ctx, s, 1, 0, 1);
    if (!base.empty() && base[0] != 0) pos = ctx.Call("add", {pos, ctx.ScalarConst(base[0], acc)});
    Expr neg = post == Post::kNone || post == Post::kProbit
                   ? ctx.Call("subtract", {ctx.ScalarConst(1, acc), pos})
                   : ctx.Call("negative", {pos});
    s = Concat(ctx, {neg, pos}, 1);
    if (classes == 1) label_table = {0, 1};
  } else {
    s = AddBase(ctx, s, base, acc);
  }
  s = PostTransform(ctx, s, post, acc, 2, false);
  Expr best = ctx.Call("argmax", {s}, Attrs{{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
  ctx.SetOutput(0, ctx.Call("take", {graph::ConstantNode::make(MakeInts(label_table)), best},
                            Attrs{{"axis", int64_t{0}}, {"mode", std::string("clip")}}));
  ctx.SetOutput(1, ToType(ctx, s, acc, DataType::Float(32)));
}

}  // namespace

void RegisterTreeEnsembleConverters(ConverterTable& t) {
  const std::string d = "ai.onnx.ml";
  t[ConverterKey(d, "TreeEnsemble")] = ConvertTreeEnsemble;
  t[ConverterKey(d, "TreeEnsembleRegressor")] = ConvertTreeEnsembleRegressor;
  t[ConverterKey(d, "TreeEnsembleClassifier")] = ConvertTreeEnsembleClassifier;
}

}  // namespace tessera::frontend::onnx_import
