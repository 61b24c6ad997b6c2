// Gradient of the ai.onnx.preview.training domain (opset 1; docs/Operators.md
// "ai.onnx.preview.training.Gradient"): the partial derivatives of the tensor named by attribute y
// with respect to the tensors named by xs, the tensors named by zs held constant.
//
// The names define the function differentiated: the nodes of the graph between xs / zs and y. The
// node's inputs (the values of xs, then of zs) are where it is evaluated, so the gradient of y at
// other values than the named tensors' (an intermediate H given as H_1) is what the spec asks.
// Those nodes are imported again with each x a fresh variable (ImportSubgraph), the graph IR's
// reverse-mode AD (graph/transform/gradient.h) differentiates y with respect to them, and the
// variables are replaced by the node's inputs. Output i is d(sum y)/dx_i, x_i's shape (the seed is
// ones of y's shape). A tensor the nodes read that is in neither xs nor zs is taken as it is (a
// constant of the differentiation). An x that y does not depend on gets zeros and a warning.
// Refused: a name of xs / zs / y that no earlier node, initializer or graph input defines, names
// listed twice, inputs that do not match xs and zs, an op on the path without a gradient rule
// (UnsupportedError "Gradient through op ... is not supported").
#include <map>
#include <set>

#include "context.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/gradient.h"

namespace tessera::frontend::onnx_import {

using graph::Expr;

namespace {

std::vector<std::string> StringsAttr(NodeContext& ctx, const std::string& name, bool required) {
  const onnx::AttributeProto* a = ctx.Attr(name);
  if (!a) {
    if (required) ctx.Fail("attribute '" + name + "' is required");
    return {};
  }
  ctx.CheckAttrType(*a, onnx::AttributeProto::STRINGS);
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

/// Every name the nodes of `g` (and of their subgraphs) read: a subgraph's reads of the enclosing
/// scope are inputs of the node that holds it.
void SubgraphReads(const onnx::GraphProto& g, std::vector<std::string>* names) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty()) names->push_back(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) SubgraphReads(a.g(), names);
      for (const auto& sg : a.graphs()) SubgraphReads(sg, names);
    }
  }
}

/// What `node` reads: its inputs, the outer names its subgraphs read, and for a Gradient node the
/// tensor it differentiates (its nodes are imported again, so they belong to the slice too).
std::vector<std::string> Reads(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  for (const auto& in : node.input())
    if (!in.empty()) names.push_back(in);
  for (const auto& a : node.attribute()) {
    if (a.has_g()) SubgraphReads(a.g(), &names);
    for (const auto& sg : a.graphs()) SubgraphReads(sg, &names);
    if (node.op_type() == "Gradient" && a.name() == "y" && !a.s().empty()) names.push_back(a.s());
  }
  return names;
}

/// The nodes before `self` in `g` that compute `y` from the boundary names (xs and zs), in graph
/// order: the backward slice from y, stopping at the boundary and at names no earlier node
/// produces (graph inputs, initializers, outer values).
std::vector<int> Slice(const onnx::GraphProto& g, const onnx::NodeProto& self, const std::string& y,
                       const std::set<std::string>& boundary) {
  int self_index = -1;
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    if (&g.node(i) == &self) {
      self_index = i;
      break;
    }
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  }
  if (self_index < 0) TESSERA_THROW(InternalError, "Gradient: the node is not in the graph being imported");
  std::set<int> picked;
  std::set<std::string> seen;
  std::vector<std::string> work{y};
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (!seen.insert(name).second || boundary.count(name)) continue;
    auto it = producer.find(name);
    if (it == producer.end() || !picked.insert(it->second).second) continue;
    for (std::string& r : Reads(g.node(it->second))) work.push_back(std::move(r));
  }
  return std::vector<int>(picked.begin(), picked.end());
}

/// Replaces the variables of `map` (by node) with their expressions.
class Substitute : public graph::ExprMutator {
 public:
  explicit Substitute(std::map<const graph::VarNode*, Expr> map) : map_(std::move(map)) {}

 protected:
  Expr MutateVar_(const graph::Var& v) override {
    auto it = map_.find(v.get());
    return it == map_.end() ? Expr(v) : it->second;
  }

 private:
  std::map<const graph::VarNode*, Expr> map_;
};

bool DependsOn(const Expr& e, const graph::VarNode* v) {
  bool found = false;
  graph::PostOrderVisit(e, [&](const Expr& n) { found = found || n.get() == v; });
  return found;
}

void ConvertGradient(NodeContext& ctx) {
  const std::vector<std::string> xs = StringsAttr(ctx, "xs", true);
  const std::vector<std::string> zs = StringsAttr(ctx, "zs", false);
  const std::string y = ctx.AttrString("y", "");
  if (xs.empty()) ctx.Fail("attribute 'xs' names no tensor to differentiate with respect to");
  if (y.empty()) ctx.Fail("attribute 'y' (the tensor differentiated) is required");
  const int n = static_cast<int>(xs.size()), nz = static_cast<int>(zs.size());
  if (ctx.NumInputs() != n + nz)
    ctx.Fail("has " + std::to_string(ctx.NumInputs()) + " inputs, but xs and zs name " + std::to_string(n + nz) +
             " tensors (the inputs are the values of xs, then of zs)");
  if (ctx.node().output_size() > n)
    ctx.Fail("has " + std::to_string(ctx.node().output_size()) + " outputs, but xs names " + std::to_string(n) +
             " tensors (one output dY/dX per x)");
  std::set<std::string> boundary;
  for (const std::string& name : xs) {
    if (!boundary.insert(name).second) ctx.Fail("xs names '" + name + "' twice");
    if (!ctx.HasValue(name))
      ctx.Fail("xs names '" + name + "', which is not a tensor of the graph computed before this node");
  }
  for (const std::string& name : zs) {
    if (!boundary.insert(name).second) ctx.Fail("zs names '" + name + "', which xs or zs names already");
    if (!ctx.HasValue(name))
      ctx.Fail("zs names '" + name + "', which is not a tensor of the graph computed before this node");
  }
  if (!ctx.HasValue(y)) ctx.Fail("y names '" + y + "', which is not a tensor of the graph computed before this node");
  if (!ctx.graph()) ctx.Unsupported("Gradient needs the enclosing graph (an importer without one)");

  // The function differentiated: the slice's nodes, xs and zs as its inputs, y its output.
  onnx::GraphProto fn;
  fn.set_name("Gradient of '" + y + "'");
  for (const std::string& name : xs) fn.add_input()->set_name(name);
  for (const std::string& name : zs) fn.add_input()->set_name(name);
  for (int i : Slice(*ctx.graph(), ctx.node(), y, boundary)) *fn.add_node() = ctx.graph()->node(i);
  fn.add_output()->set_name(y);

  // Each x a fresh variable of its input's type; each z its input's value (not differentiated).
  std::vector<Value> inputs;
  std::vector<graph::Var> vars;
  std::map<const graph::VarNode*, Expr> at;
  for (int i = 0; i < n; ++i) {
    if (ctx.InputIsSequence(i)) ctx.Fail("input " + std::to_string(i) + " ('" + xs[i] + "') is a sequence, not a tensor");
    Expr value = ctx.Input(i);
    const auto& type = ctx.InputType(i);
    if (!type.dtype.is_floating())
      ctx.Fail("xs names '" + xs[i] + "', a " + type.dtype.str() + " tensor: only float tensors are differentiated");
    graph::Var v = graph::VarNode::make(xs[i], graph::TensorTypeNode::make(type.shape, type.dtype));
    graph::InferExprType(v);
    vars.push_back(v);
    at[v.get()] = value;
    Value in;
    in.expr = v;
    in.type = v->checked_type();
    inputs.push_back(std::move(in));
  }
  for (int i = n; i < n + nz; ++i) inputs.push_back(ctx.InputAsValue(i));
  std::vector<Value> outs = ctx.ImportSubgraph(fn, inputs);
  Value& yv = outs[0];
  if (yv.sequence) ctx.Fail("y names '" + y + "', a sequence: only a tensor can be differentiated");
  Expr y_expr = ExprOf(yv);
  const auto* yt = graph::TensorTypeOf(y_expr);
  if (!yt || !yt->dtype.is_floating())
    ctx.Fail("y names '" + y + "', of type " + yv.type->str() + ": only a float tensor can be differentiated");

  std::vector<Expr> xs_exprs(vars.begin(), vars.end());
  std::vector<Expr> grads = graph::transform::Gradient(y_expr, xs_exprs);
  Substitute substitute(std::move(at));
  for (int i = 0; i < n; ++i) {
    if (!ctx.HasOutput(i)) continue;
    if (!DependsOn(y_expr, vars[i].get()))
      ctx.Warn("y '" + y + "' does not depend on x '" + xs[i] + "': its gradient is zeros");
    ctx.SetOutput(i, substitute.Mutate(grads[i]));
  }
}

}  // namespace

void RegisterGradientConverters(ConverterTable& t) {
  t[ConverterKey("ai.onnx.preview.training", "Gradient")] = ConvertGradient;
}

}  // namespace tessera::frontend::onnx_import
