// ONNX Scan-9/11/16/19/21 unrolled: the body graph is imported once per iteration, with the
// iteration's state values and scan-input slices bound to its inputs and the enclosing scope
// visible (a copy of the import state). Spec: onnx.defs.get_schema("Scan").doc.
//
//   inputs: N state variables, then M scan inputs (num_scan_inputs), each scanned along
//   scan_input_axes[m] (default 0), from the end when scan_input_directions[m] = 1; the trip
//   count is their (equal, static) extent there. Body: N + M inputs -> N new states + K per-step
//   outputs. Outputs: the N final states, then the K per-step outputs stacked along
//   scan_output_axes[k] (default 0; reversed order when scan_output_directions[k] = 1).
// Scan-8 (a batch axis and sequence_lens) is not supported.
#include <algorithm>

#include "context.h"
#include "graph_build.h"
#include "tensor_convert.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

constexpr int64_t kMaxUnrolledSteps = 4096;

Expr ValueExpr(Value& v) {
  if (!v.expr) {
    v.expr = graph::ConstantNode::make(v.constant);
    graph::InferExprType(v.expr);
  }
  return v.expr;
}

int64_t NormAxis(NodeContext& ctx, int64_t a, int64_t rank, const std::string& what) {
  if (a < -rank || a >= rank) ctx.Fail(what + " " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return a < 0 ? a + rank : a;
}

void ConvertScan(NodeContext& ctx) {
  if (ctx.opset() < 9) ctx.Unsupported("Scan-8 (batch axis and sequence_lens) is not supported; opset 9+ only");
  const onnx::AttributeProto* body_attr = ctx.Attr("body");
  if (!body_attr || !body_attr->has_g()) ctx.Fail("attribute 'body' (a graph) is required");
  const onnx::GraphProto& body = body_attr->g();
  const int64_t m = ctx.AttrInt("num_scan_inputs");
  const int64_t n = ctx.NumInputs() - m;
  if (m < 1 || n < 0) ctx.Fail("num_scan_inputs must be in [1, number of inputs]");
  if (body.input_size() != n + m)
    ctx.Fail("the body must take " + std::to_string(n + m) + " inputs (states, then scan slices), it takes " +
             std::to_string(body.input_size()));
  const int64_t k = body.output_size() - n;
  if (k < 0) ctx.Fail("the body must return at least the " + std::to_string(n) + " state variables");
  const std::vector<int64_t> in_axes = ctx.AttrInts("scan_input_axes", std::vector<int64_t>(m, 0));
  const std::vector<int64_t> in_dirs = ctx.AttrInts("scan_input_directions", std::vector<int64_t>(m, 0));
  const std::vector<int64_t> out_axes = ctx.AttrInts("scan_output_axes", std::vector<int64_t>(k, 0));
  const std::vector<int64_t> out_dirs = ctx.AttrInts("scan_output_directions", std::vector<int64_t>(k, 0));
  if (static_cast<int64_t>(in_axes.size()) != m || static_cast<int64_t>(in_dirs.size()) != m ||
      static_cast<int64_t>(out_axes.size()) != k || static_cast<int64_t>(out_dirs.size()) != k)
    ctx.Fail("scan_input_* need num_scan_inputs values and scan_output_* one per scan output");
  int64_t trips = -1;
  std::vector<int64_t> axes(m);
  for (int64_t j = 0; j < m; ++j) {
    const std::vector<int64_t> s = ctx.InputShape(static_cast<int>(n + j));
    axes[j] = NormAxis(ctx, in_axes[j], static_cast<int64_t>(s.size()), "scan_input_axes value");
    if (trips >= 0 && s[axes[j]] != trips) ctx.Fail("the scan inputs have different lengths along their scan axes");
    trips = s[axes[j]];
  }
  if (trips > kMaxUnrolledSteps)
    ctx.Unsupported("Scan is unrolled; " + std::to_string(trips) + " iterations exceed " + std::to_string(kMaxUnrolledSteps));
  if (trips == 0) ctx.Unsupported("a Scan of zero iterations (empty scan outputs)");

  std::vector<Value> states;
  for (int64_t j = 0; j < n; ++j) states.push_back(ctx.state().values.at(ctx.node().input(static_cast<int>(j))));
  std::vector<std::vector<Expr>> steps(k);
  for (int64_t it = 0; it < trips; ++it) {
    ImportState scope = ctx.state();
    for (int64_t j = 0; j < n; ++j) scope.values[body.input(static_cast<int>(j)).name()] = states[j];
    for (int64_t j = 0; j < m; ++j) {
      const int64_t at = in_dirs[j] ? trips - 1 - it : it;
      Expr slice = ctx.Call("squeeze", {SliceAxis(ctx, ctx.Input(static_cast<int>(n + j)), axes[j], at, at + 1)},
                            Attrs{{"axis", std::vector<int64_t>{axes[j]}}});
      scope.values[body.input(static_cast<int>(n + j)).name()] = Value{slice, graph::InferExprType(slice), {}};
    }
    for (const onnx::TensorProto& init : body.initializer()) {
      Value v;
      v.constant = TensorProtoToNDArray(init, ctx.Where() + ": body initializer '" + init.name() + "'");
      v.type = graph::TensorTypeNode::make(v.constant.shape(), v.constant.dtype());
      scope.values[init.name()] = std::move(v);
    }
    for (int i = 0; i < body.node_size(); ++i) ConvertGraphNode(scope, body.node(i), i);
    auto result = [&](int64_t o) -> Value& {
      auto f = scope.values.find(body.output(static_cast<int>(o)).name());
      if (f == scope.values.end()) ctx.Fail("body output '" + body.output(static_cast<int>(o)).name() + "' is not produced");
      return f->second;
    };
    for (int64_t j = 0; j < n; ++j) states[j] = result(j);
    for (int64_t j = 0; j < k; ++j) steps[j].push_back(ValueExpr(result(n + j)));
  }
  for (int64_t j = 0; j < n; ++j) ctx.SetOutput(static_cast<int>(j), ValueExpr(states[j]));
  for (int64_t j = 0; j < k; ++j) {
    std::vector<Expr> parts = steps[j];
    if (out_dirs[j]) std::reverse(parts.begin(), parts.end());
    const int64_t rank = static_cast<int64_t>(StaticShape(ctx, parts[0]).size()) + 1;
    const int64_t axis = NormAxis(ctx, out_axes[j], rank, "scan_output_axes value");
    for (Expr& p : parts) p = ctx.Call("expand_dims", {p}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
    ctx.SetOutput(static_cast<int>(n + j), parts.size() == 1 ? parts[0] : Concat(ctx, parts, axis));
  }
}

}  // namespace

void RegisterScanConverters(ConverterTable& t) { t["Scan"] = ConvertScan; }

}  // namespace tessera::frontend::onnx_import
