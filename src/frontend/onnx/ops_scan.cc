// ONNX Scan-8/9/11/16/19/21 unrolled: the body graph is imported once per iteration, with the
// iteration's state values and scan-input slices bound to its inputs and the enclosing scope
// visible (a copy of the import state). Spec: onnx.defs.get_schema("Scan").doc.
//
//   inputs: N state variables, then M scan inputs (num_scan_inputs), each scanned along
//   scan_input_axes[m] (default 0), from the end when scan_input_directions[m] = 1; the trip
//   count is their (equal, static) extent there. Body: N + M inputs -> N new states + K per-step
//   outputs. Outputs: the N final states, then the K per-step outputs stacked along
//   scan_output_axes[k] (default 0; reversed order when scan_output_directions[k] = 1).
// Scan-8: sequence_lens (optional; only full lengths), then states [B, ..] and scan inputs
// [B, T, ..]; `directions`; the body runs per batch element and the outputs stack along axis 0.
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

struct ScanSpec {
  const onnx::GraphProto* body = nullptr;
  int64_t n = 0, m = 0, k = 0, trips = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

// Runs the body spec.trips times over `states` (Values) and the scan inputs `xs` (scanned along
// spec.in_axes, already normalised); returns the final states and the stacked per-step outputs.
std::vector<Expr> Unroll(NodeContext& ctx, const ScanSpec& spec, std::vector<Value> states, const std::vector<Expr>& xs) {
  const onnx::GraphProto& body = *spec.body;
  std::vector<std::vector<Expr>> steps(spec.k);
  for (int64_t it = 0; it < spec.trips; ++it) {
    ImportState scope = ctx.state();
    for (int64_t j = 0; j < spec.n; ++j) scope.values[body.input(static_cast<int>(j)).name()] = states[j];
    for (int64_t j = 0; j < spec.m; ++j) {
      const int64_t at = spec.in_dirs[j] ? spec.trips - 1 - it : it;
      Expr slice = ctx.Call("squeeze", {SliceAxis(ctx, xs[j], spec.in_axes[j], at, at + 1)},
                            Attrs{{"axis", std::vector<int64_t>{spec.in_axes[j]}}});
      scope.values[body.input(static_cast<int>(spec.n + j)).name()] = Value{slice, graph::InferExprType(slice), {}};
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
    for (int64_t j = 0; j < spec.n; ++j) states[j] = result(j);
    for (int64_t j = 0; j < spec.k; ++j) steps[j].push_back(ValueExpr(result(spec.n + j)));
  }
  std::vector<Expr> outs;
  for (int64_t j = 0; j < spec.n; ++j) outs.push_back(ValueExpr(states[j]));
  for (int64_t j = 0; j < spec.k; ++j) {
    std::vector<Expr> parts = steps[j];
    if (spec.out_dirs[j]) std::reverse(parts.begin(), parts.end());
    const int64_t rank = static_cast<int64_t>(StaticShape(ctx, parts[0]).size()) + 1;
    const int64_t axis = NormAxis(ctx, spec.out_axes[j], rank, "scan_output_axes value");
    for (Expr& p : parts) p = ctx.Call("expand_dims", {p}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
    outs.push_back(parts.size() == 1 ? parts[0] : Concat(ctx, parts, axis));
  }
  return outs;
}

void ConvertScan(NodeContext& ctx) {
  const bool v8 = ctx.opset() < 9;  // Scan-8: sequence_lens first, a batch axis 0, time axis 1
  const int first = v8 ? 1 : 0;
  const onnx::AttributeProto* body_attr = ctx.Attr("body");
  if (!body_attr || !body_attr->has_g()) ctx.Fail("attribute 'body' (a graph) is required");
  ScanSpec spec;
  spec.body = &body_attr->g();
  const onnx::GraphProto& body = *spec.body;
  spec.m = ctx.AttrInt("num_scan_inputs");
  spec.n = ctx.NumInputs() - first - spec.m;
  if (spec.m < 1 || spec.n < 0) ctx.Fail("num_scan_inputs must be in [1, number of inputs]");
  if (body.input_size() != spec.n + spec.m)
    ctx.Fail("the body must take " + std::to_string(spec.n + spec.m) + " inputs (states, then scan slices), it takes " +
             std::to_string(body.input_size()));
  spec.k = body.output_size() - spec.n;
  if (spec.k < 0) ctx.Fail("the body must return at least the " + std::to_string(spec.n) + " state variables");
  const std::vector<int64_t> zeros_m(spec.m, 0), zeros_k(spec.k, 0);
  spec.in_axes = v8 ? zeros_m : ctx.AttrInts("scan_input_axes", zeros_m);
  spec.in_dirs = ctx.AttrInts(v8 ? "directions" : "scan_input_directions", zeros_m);
  spec.out_axes = v8 ? zeros_k : ctx.AttrInts("scan_output_axes", zeros_k);
  spec.out_dirs = v8 ? zeros_k : ctx.AttrInts("scan_output_directions", zeros_k);
  if (static_cast<int64_t>(spec.in_axes.size()) != spec.m || static_cast<int64_t>(spec.in_dirs.size()) != spec.m ||
      static_cast<int64_t>(spec.out_axes.size()) != spec.k || static_cast<int64_t>(spec.out_dirs.size()) != spec.k)
    ctx.Fail("scan_input_* need num_scan_inputs values and scan_output_* one per scan output");
  spec.trips = -1;
  int64_t batch = -1;
  for (int64_t j = 0; j < spec.m; ++j) {
    const std::vector<int64_t> s = ctx.InputShape(static_cast<int>(first + spec.n + j));
    if (v8 && s.size() < 2) ctx.Fail("Scan-8 scan inputs must be [batch, sequence, ...]");
    if (v8) batch = s[0];
    const int64_t axis = NormAxis(ctx, spec.in_axes[j], static_cast<int64_t>(s.size()) - (v8 ? 1 : 0), "scan_input_axes value");
    spec.in_axes[j] = axis;
    const int64_t len = s[axis + (v8 ? 1 : 0)];
    if (spec.trips >= 0 && len != spec.trips) ctx.Fail("the scan inputs have different lengths along their scan axes");
    spec.trips = len;
  }
  if (spec.trips > kMaxUnrolledSteps)
    ctx.Unsupported("Scan is unrolled; " + std::to_string(spec.trips) + " iterations exceed " + std::to_string(kMaxUnrolledSteps));
  if (spec.trips == 0) ctx.Unsupported("a Scan of zero iterations (empty scan outputs)");
  if (!v8) {
    std::vector<Value> states;
    std::vector<Expr> xs;
    for (int64_t j = 0; j < spec.n; ++j) states.push_back(ctx.state().values.at(ctx.node().input(static_cast<int>(j))));
    for (int64_t j = 0; j < spec.m; ++j) xs.push_back(ctx.Input(static_cast<int>(spec.n + j)));
    std::vector<Expr> outs = Unroll(ctx, spec, states, xs);
    for (size_t i = 0; i < outs.size(); ++i) ctx.SetOutput(static_cast<int>(i), outs[i]);
    return;
  }
  if (ctx.HasInput(0)) {
    const std::vector<int64_t> lens = ctx.InputInts(0, "sequence_lens (Scan-8; only full lengths are supported)");
    for (int64_t l : lens)
      if (l != spec.trips) ctx.Unsupported("Scan-8 with a sequence_lens shorter than the sequence is not supported");
  }
  // Scan-8: one unrolled scan per batch element, restacked along axis 0.
  std::vector<std::vector<Expr>> per_batch;
  for (int64_t b = 0; b < batch; ++b) {
    auto pick = [&](int i) {
      return ctx.Call("squeeze", {SliceAxis(ctx, ctx.Input(i), 0, b, b + 1)}, Attrs{{"axis", std::vector<int64_t>{0}}});
    };
    std::vector<Value> states;
    std::vector<Expr> xs;
    for (int64_t j = 0; j < spec.n; ++j) {
      Expr s = pick(static_cast<int>(first + j));
      states.push_back(Value{s, graph::InferExprType(s), {}});
    }
    for (int64_t j = 0; j < spec.m; ++j) xs.push_back(pick(static_cast<int>(first + spec.n + j)));
    per_batch.push_back(Unroll(ctx, spec, states, xs));
  }
  for (size_t i = 0; i < per_batch[0].size(); ++i) {
    std::vector<Expr> parts;
    for (auto& outs : per_batch)
      parts.push_back(ctx.Call("expand_dims", {outs[i]}, Attrs{{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
    ctx.SetOutput(static_cast<int>(i), parts.size() == 1 ? parts[0] : Concat(ctx, parts, 0));
  }
}

}  // namespace

void RegisterScanConverters(ConverterTable& t) { t["Scan"] = ConvertScan; }

}  // namespace tessera::frontend::onnx_import
