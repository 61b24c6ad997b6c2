// ONNX control flow (Loop: see ConvertLoop):
//   If-1/11/13/16/19/21/23/24/25: when the condition is known at import (a constant, or folded
//     from shapes, as exporters emit for rank or size checks), the taken branch is imported in
//     place of the node; its outputs become the node's. A condition computed at run time becomes
//     a graph If over the two branches (a tuple of the node's outputs each; names of the enclosing
//     graph stay visible to both), run by the VM (runtime/vm.h); both branches must then give each
//     output the same type (static shapes: a branch-dependent shape needs Any).
//   Scan-8/9/11/16/19/21/23/24/25: when the scanned extent is static and at most
//     kMaxScanUnroll, the body is imported once per step (unrolled): step t reads slice t of
//     each scan input (from the end with scan_input_directions = 1), carries the N state values
//     to the next step, and each scan output stacks its per-step values along
//     scan_output_axes (in reverse with scan_output_directions = 1). Scan-8 has a leading batch
//     axis (scanned along axis 1) and an optional sequence_lens, which must be constant and full.
// Spec: onnx/docs/Operators.md (If, Scan).
#include <algorithm>
#include <optional>
#include <tuple>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "run_time_switch.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

/// Scans longer than this are refused (the body is copied once per step).
constexpr int64_t kMaxScanUnroll = 256;

/// A typed value of `e`, its type error located at the node.
Value Typed(NodeContext& ctx, Expr e) {
  try {
    return ValueOf(std::move(e));
  } catch (const UserError& err) {
    ctx.Fail(err.what());
  }
}

/// The outputs of `branch`, checked against the node's output count.
std::vector<Value> ImportBranch(NodeContext& ctx, const char* which) {
  std::vector<Value> outs = ctx.ImportSubgraph(ctx.AttrGraph(std::string(which) + "_branch"), {});
  if (static_cast<int>(outs.size()) != ctx.node().output_size())
    ctx.Fail("the " + std::string(which) + " branch has " + std::to_string(outs.size()) + " outputs, the node " +
             std::to_string(ctx.node().output_size()));
  return outs;
}

void ConvertIf(NodeContext& ctx) {
  if (!ctx.HasInput(0)) ctx.Fail("the condition (input 0) is required but absent");
  runtime::NDArray cond = ctx.InputConst(0);
  if (cond.defined()) {
    if (cond.NumElements() != 1) ctx.Fail("the condition must hold exactly one element");
    const bool taken = ToInts(cond)[0] != 0;
    std::vector<Value> outs = ImportBranch(ctx, taken ? "then" : "else");
    for (size_t i = 0; i < outs.size(); ++i) ctx.SetOutputValue(static_cast<int>(i), outs[i]);
    return;
  }
  // A run-time condition: both branches, one graph If; the VM runs the taken one.
  Expr c = ScalarBool(ctx, ValueOf(ctx.Input(0)), "the condition (input 0)");
  // A branch that cannot run with the compiled shapes (its import fails with a UserError: e.g.
  // silero-vad's 8 kHz branch on a 16 kHz chunk) fails the run when taken, as ONNX Runtime does;
  // ops Tessera lacks (UnsupportedError) still fail the compile.
  std::optional<std::vector<Value>> then_outs, else_outs;
  std::string then_error, else_error;
  for (auto [which, outs, error] : {std::tuple{"then", &then_outs, &then_error},
                                    std::tuple{"else", &else_outs, &else_error}}) {
    try {
      *outs = ImportBranch(ctx, which);
    } catch (const UnsupportedError&) {
      throw;
    } catch (const UserError& e) {
      *error = e.what();
    }
  }
  if (!then_outs && !else_outs)
    ctx.Fail("neither branch can run with these input shapes (set them with --input-shape NAME=D0,D1,...); the "
             "then branch: " + then_error + "; the else branch: " + else_error);
  for (auto [which, outs, other, error] : {std::tuple{"then", &then_outs, &else_outs, &then_error},
                                           std::tuple{"else", &else_outs, &then_outs, &else_error}}) {
    if (*outs) continue;
    const std::string message = ctx.Label() + ": the " + std::string(which) +
                                " branch cannot run with the input shapes this model was compiled for: " + *error;
    ctx.Warn(std::string("the ") + which + " branch cannot run with these input shapes; a run that takes it fails (" +
             *error + ")");
    std::vector<Value> fatal;
    for (const Value& v : **other) fatal.push_back(Typed(ctx, Fatal(ctx, c, v.type, message)));
    *outs = std::move(fatal);
  }
  std::vector<Expr> t, f;
  for (size_t i = 0; i < then_outs->size(); ++i) {
    Value& tv = (*then_outs)[i];
    Value& ev = (*else_outs)[i];
    if (!graph::Unify(tv.type, ev.type))  // equal, or an Option[_] (None) and an Option[T]
      ctx.Unsupported("output " + std::to_string(i) + " ('" + ctx.node().output(static_cast<int>(i)) +
                      "') has type " + tv.type->str() + " in the then branch and " + ev.type->str() +
                      " in the else branch: branches whose shapes differ need dynamic shapes (Any), which Tessera "
                      "does not have yet; fix the input shapes (--input-shape) so that both agree");
    t.push_back(ExprOf(tv));
    f.push_back(ExprOf(ev));
  }
  Expr node = Typed(ctx, graph::IfNode::make(c, graph::TupleNode::make(t), graph::TupleNode::make(f))).expr;
  for (size_t i = 0; i < t.size(); ++i)
    ctx.SetOutputValue(static_cast<int>(i), Typed(ctx, graph::TupleGetItemNode::make(node, static_cast<int>(i))));
}

int64_t NormAxis(NodeContext& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    ctx.Fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

/// Scan-9+ semantics over `states` and `scans` (already per batch for Scan-8). Returns the N
/// final states followed by the K stacked scan outputs.
std::vector<Value> RunScan(NodeContext& ctx, const onnx::GraphProto& body, std::vector<Value> states,
                           const std::vector<Expr>& scans, const std::vector<int64_t>& in_axes,
                           const std::vector<int64_t>& in_dirs, const std::vector<int64_t>& out_axes_attr,
                           const std::vector<int64_t>& out_dirs) {
  const size_t n = states.size(), m = scans.size();
  int64_t steps = -1;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t j = 0; j < m; ++j) {
    shapes.push_back(StaticShape(ctx, scans[j]));
    const int64_t len = shapes[j][in_axes[j]];
    if (steps >= 0 && len != steps)
      ctx.Fail("scan inputs have different lengths along their scan axes (" + std::to_string(steps) + " and " +
               std::to_string(len) + ")");
    steps = len;
  }
  if (steps < 1) ctx.Unsupported("a Scan over 0 steps (empty scan outputs) is not supported");
  if (steps > kMaxScanUnroll)
    ctx.Unsupported("a Scan over " + std::to_string(steps) + " steps is longer than Tessera unrolls (" +
                    std::to_string(kMaxScanUnroll) + "); run-time loops need loops in the VM, which it does not have yet");
  const int k = body.output_size() - static_cast<int>(n);
  if (k < 0 || body.input_size() != static_cast<int>(n + m))
    ctx.Fail("the body must take the " + std::to_string(n) + " states and " + std::to_string(m) +
             " scan elements and return the states first");
  std::vector<std::vector<Expr>> per_step(k);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Value> inputs = states;
    for (size_t j = 0; j < m; ++j) {
      const int64_t at = in_dirs[j] ? steps - 1 - t : t;
      std::vector<int64_t> elem = shapes[j];
      elem.erase(elem.begin() + in_axes[j]);
      inputs.push_back(Typed(ctx, Reshape(ctx, SliceAxis(ctx, scans[j], in_axes[j], at, at + 1), elem)));
    }
    std::vector<Value> outs = ctx.ImportSubgraph(body, inputs);
    for (size_t i = 0; i < n; ++i) states[i] = outs[i];
    for (int i = 0; i < k; ++i) per_step[i].push_back(ExprOf(outs[n + i]));
  }
  std::vector<Value> result = states;
  for (int i = 0; i < k; ++i) {
    std::vector<Expr> parts = per_step[i];
    if (i < static_cast<int>(out_dirs.size()) && out_dirs[i]) std::reverse(parts.begin(), parts.end());
    const int64_t rank = static_cast<int64_t>(StaticShape(ctx, parts[0]).size()) + 1;
    const int64_t axis = NormAxis(ctx, i < static_cast<int>(out_axes_attr.size()) ? out_axes_attr[i] : 0, rank,
                                  "scan_output_axes entry");
    for (Expr& p : parts)
      p = ctx.Call("expand_dims", {p}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
    result.push_back(Typed(ctx, parts.size() == 1 ? parts[0] : Concat(ctx, parts, axis)));
  }
  return result;
}

void ConvertScan(NodeContext& ctx) {
  const onnx::GraphProto& body = ctx.AttrGraph("body");
  const int64_t m = ctx.AttrInt("num_scan_inputs");
  if (ctx.opset() < 9) {
    // Scan-8: input 0 is sequence_lens (optional); states [B, ...]; scan inputs [B, L, ...].
    const int first = 1, total = ctx.NumInputs() - first;
    const int n = total - static_cast<int>(m);
    if (m < 1 || n < 0) ctx.Fail("num_scan_inputs must be in [1, " + std::to_string(total) + "]");
    const std::vector<int64_t> dirs = ctx.AttrInts("directions", std::vector<int64_t>(m, 0));
    const int64_t batch = ctx.InputDim(first + n, 0, "the first scan input");
    const int64_t len = ctx.InputDim(first + n, 1, "the first scan input");
    if (ctx.HasInput(0)) {
      runtime::NDArray lens = ctx.InputConst(0);
      if (!lens.defined()) ctx.RefuseRunTimeOperand(0, "Scan's sequence_lens");
      for (int64_t l : ToInts(lens))
        if (l != len) ctx.Unsupported("sequence_lens shorter than the scan inputs (" + std::to_string(l) + " < " +
                                      std::to_string(len) + ") are not supported");
    }
    std::vector<std::vector<Value>> per_batch;
    for (int64_t b = 0; b < batch; ++b) {
      auto take = [&](int i) {
        std::vector<int64_t> s = ctx.InputShape(i);
        s.erase(s.begin());
        return Reshape(ctx, SliceAxis(ctx, ctx.Input(i), 0, b, b + 1), s);
      };
      std::vector<Value> states;
      for (int i = 0; i < n; ++i) states.push_back(Typed(ctx, take(first + i)));
      std::vector<Expr> scans;
      for (int j = 0; j < m; ++j) scans.push_back(take(first + n + j));
      per_batch.push_back(RunScan(ctx, body, states, scans, std::vector<int64_t>(m, 0), dirs, {}, {}));
    }
    for (size_t i = 0; i < per_batch[0].size(); ++i) {
      std::vector<Expr> parts;
      for (auto& r : per_batch)
        parts.push_back(ctx.Call("expand_dims", {ExprOf(r[i])}, Attrs{{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
      ctx.SetOutputValue(static_cast<int>(i), Typed(ctx, parts.size() == 1 ? parts[0] : Concat(ctx, parts, 0)));
    }
    return;
  }
  const int n = ctx.NumInputs() - static_cast<int>(m);
  if (m < 1 || n < 0) ctx.Fail("num_scan_inputs must be in [1, " + std::to_string(ctx.NumInputs()) + "]");
  std::vector<int64_t> in_axes = ctx.AttrInts("scan_input_axes", std::vector<int64_t>(m, 0));
  const std::vector<int64_t> in_dirs = ctx.AttrInts("scan_input_directions", std::vector<int64_t>(m, 0));
  if (static_cast<int64_t>(in_axes.size()) != m || static_cast<int64_t>(in_dirs.size()) != m)
    ctx.Fail("scan_input_axes and scan_input_directions need one entry per scan input");
  std::vector<Value> states;
  for (int i = 0; i < n; ++i) {
    ctx.Input(i);
    states.push_back(Typed(ctx, ctx.Input(i)));
  }
  std::vector<Expr> scans;
  for (int j = 0; j < m; ++j) {
    scans.push_back(ctx.Input(n + j));
    in_axes[j] = NormAxis(ctx, in_axes[j], ctx.InputType(n + j).ndim(), "scan_input_axes entry");
  }
  std::vector<Value> outs = RunScan(ctx, body, states, scans, in_axes, in_dirs, ctx.AttrInts("scan_output_axes", {}),
                                    ctx.AttrInts("scan_output_directions", {}));
  for (size_t i = 0; i < outs.size(); ++i) ctx.SetOutputValue(static_cast<int>(i), outs[i]);
}

// vm.list_new's attrs for an empty list of `element` tensors (graph/op/vm.cc).
Attrs ListNewAttrs(const graph::TensorTypeNode& element) {
  std::vector<int64_t> dims;
  std::string names;
  for (const graph::Dim& d : element.shape) {
    dims.push_back(d.is_static() ? d.value() : -1);
    if (d.is_symbolic()) names += (names.empty() ? "" : ",") + d.name();
  }
  Attrs attrs{{"dtype", element.dtype.str()}, {"shape", dims}};
  if (!names.empty()) attrs.Set("dim_symbols", names);
  return attrs;
}

// Per loop-carried value: a list type for a sequence (its length may change across iterations:
// the VM carries it as a list of tensors), null for a tensor. The element type is the body's:
// learnt by importing the body once with the sequences as they enter the loop (the elements it
// appends, or else the ones it starts with). UnsupportedError when neither has an element or the
// elements differ in type.
std::vector<graph::Type> CarriedListTypes(NodeContext& ctx, const onnx::GraphProto& body, int n,
                                          const std::vector<Value>& counters) {
  std::vector<graph::Type> lists(n);
  bool any = false;
  for (int i = 0; i < n; ++i) any = any || ctx.InputIsSequence(2 + i);
  if (!any) return lists;
  std::vector<Value> probe = counters;
  for (int i = 0; i < n; ++i) probe.push_back(ctx.InputAsValue(2 + i));
  const std::vector<Value> outs = ctx.ImportSubgraph(body, probe);
  for (int i = 0; i < n; ++i) {
    if (!ctx.InputIsSequence(2 + i)) continue;
    graph::Type element;
    for (const auto* seq : {outs[1 + i].sequence.get(), probe[2 + i].sequence.get()}) {
      for (const Value& e : seq ? *seq : std::vector<Value>{}) {
        if (element && !graph::StructuralEqual(element, e.type))
          ctx.Unsupported("the loop-carried sequence " + std::to_string(i) + " holds tensors of different types (" +
                          element->str() + ", " + e.type->str() + "), which a Loop the VM runs does not support");
        element = e.type;
      }
    }
    if (!element)
      ctx.Unsupported("the loop-carried sequence " + std::to_string(i) + " starts empty and the body appends nothing "
                      "to it: its element type is unknown");
    lists[i] = graph::ListTypeNode::make(element);
  }
  return lists;
}

// A Loop the VM runs (Relay's loop, arXiv 1904.08368 §3.2: a tail-recursive local function; the
// VM codegen turns the tail call into a jump back, driver/vm_codegen.h):
//   let %loop: fn (int64[], bool[], T0, ...) -> (T0, ...) = fn (%iter, %cond, %v0, ...) {
//     if (logical_and(less(%iter, M), %cond)) { <body>; %loop(add(%iter, 1), cond', v0', ...) }
//     else { (%v0, ...) }
//   };
//   %loop(0, cond_in, v0_in, ...)
// Without M the test is %cond alone; without cond_in it starts true. Each loop-carried value keeps
// its type across iterations (UnsupportedError naming both types otherwise); a loop-carried
// sequence is a list of tensors (CarriedListTypes), which the body's SequenceInsert appends to
// (ops_sequence.cc). Scan output j is one more carried value, a list of tensors
// (vm.list_new before the loop, vm.list_push(%s_j, value) in the tail call), stacked after it
// (vm.list_stack: its length, the iterations run, is a run-time extent).
void LoopInVM(NodeContext& ctx, const onnx::GraphProto& body, int n, int k) {
  const DataType i64 = DataType::Int(64), boolean = DataType::Bool();
  std::optional<Expr> trip_count;
  if (ctx.HasInput(0)) trip_count = ScalarInt64(ctx, ValueOf(ctx.Input(0)), "Loop's trip count M");
  Expr cond_in = ctx.HasInput(1) ? ScalarBool(ctx, ValueOf(ctx.Input(1)), "Loop's cond") : ctx.ScalarConst(1, boolean);
  graph::Var iter = graph::VarNode::make("iter", graph::TensorTypeNode::make(graph::Shape{}, i64));
  graph::Var cond = graph::VarNode::make("cond", graph::TensorTypeNode::make(graph::Shape{}, boolean));
  std::vector<Value> init;
  std::vector<graph::Var> params{iter, cond};
  std::vector<Value> body_inputs{ValueOf(iter), ValueOf(cond)};
  const std::vector<graph::Type> lists = CarriedListTypes(ctx, body, n, body_inputs);
  for (int i = 0; i < n; ++i) {
    if (lists[i]) {  // a carried sequence: a list of tensors, its elements pushed before the loop
      const auto* element = lists[i]->as<graph::ListTypeNode>()->element->as<graph::TensorTypeNode>();
      Expr list = ctx.Call("vm.list_new", {}, ListNewAttrs(*element));
      for (const Value& e : ctx.InputSequence(2 + i)) {
        Value elem = e;
        list = ctx.Call("vm.list_push", {list, ExprOf(elem)});
      }
      init.push_back(Typed(ctx, list));
    } else {
      init.push_back(Typed(ctx, ctx.Input(2 + i)));
    }
    params.push_back(graph::VarNode::make("v" + std::to_string(i), init.back().type));
    body_inputs.push_back(ValueOf(params.back()));
  }
  std::vector<Value> outs = ctx.ImportSubgraph(body, body_inputs);
  std::vector<graph::Type> arg_types, carried_types;
  for (const graph::Var& p : params) arg_types.push_back(p->type_annotation);
  std::vector<Expr> next{ctx.Call("add", {iter, ctx.ScalarConst(1, i64)}),
                         ScalarBool(ctx, outs[0], "the body's cond output")};
  std::vector<Expr> done;
  for (int i = 0; i < n; ++i) {
    if (outs[1 + i].sequence || !graph::StructuralEqual(outs[1 + i].type, init[i].type))
      ctx.Unsupported("loop-carried value " + std::to_string(i) + " changes its type across iterations (" +
                      init[i].type->str() + " -> " + graph::TypeStr(outs[1 + i].type) +
                      "), which a Loop the VM runs does not support yet");
    carried_types.push_back(init[i].type);
    next.push_back(ExprOf(outs[1 + i]));
    done.push_back(params[2 + i]);
  }
  // Scan outputs: each accumulates in a list of tensors carried by the loop (Relay's tensor array),
  // stacked when the loop ends.
  std::vector<Expr> empty_lists;
  for (int j = 0; j < k; ++j) {
    Value& out = outs[1 + n + j];
    const auto* tt = out.sequence || !out.type ? nullptr : out.type->as<graph::TensorTypeNode>();
    if (!tt) ctx.Unsupported("scan output " + std::to_string(j) + " is not a tensor (" + graph::TypeStr(out.type) + ")");
    empty_lists.push_back(ctx.Call("vm.list_new", {}, ListNewAttrs(*tt)));
    graph::Var list = graph::VarNode::make("s" + std::to_string(j), graph::ListTypeNode::make(out.type));
    params.push_back(list);
    arg_types.push_back(list->type_annotation);
    carried_types.push_back(list->type_annotation);
    next.push_back(ctx.Call("vm.list_push", {list, ExprOf(out)}));
    done.push_back(list);
  }
  const graph::Type result_type = graph::TupleTypeNode::make(carried_types);
  graph::Var loop = graph::VarNode::make("loop", graph::FuncTypeNode::make(arg_types, result_type));
  Expr go = trip_count ? ctx.Call("logical_and", {ctx.Call("less", {iter, *trip_count}), cond}) : Expr(cond);
  Expr fn = graph::FunctionNode::make(
      params, graph::IfNode::make(go, graph::CallNode::make(loop, next), graph::TupleNode::make(done)), result_type);
  std::vector<Expr> start{ctx.ScalarConst(0, i64), cond_in};
  for (Value& v : init) start.push_back(ExprOf(v));
  for (Expr& e : empty_lists) start.push_back(e);
  Value result = Typed(ctx, graph::LetNode::make(loop, fn, graph::CallNode::make(loop, start)));
  for (int i = 0; i < n; ++i) ctx.SetOutputValue(i, Typed(ctx, graph::TupleGetItemNode::make(result.expr, i)));
  for (int j = 0; j < k; ++j)
    ctx.SetOutput(n + j, ctx.Call("vm.list_stack", {graph::TupleGetItemNode::make(result.expr, n + j)},
                                  Attrs{{"length_symbol", ctx.OutputSymbol(n + j, 0)}}));
}

// Loop-1/11/13/16/19/21/23/24/25 with a trip count M known at import (at most kMaxScanUnroll):
// unrolled, the body imported once per iteration (iter_num = the constant i, cond_in the current
// condition, the loop-carried values), scan outputs stacked along a new axis 0. A condition
// known at import that turns false stops the unrolling there. A condition computed at run time
// guards every iteration with a graph If (run by the VM): once false, the remaining iterations
// pass the carried values through. Without M, with M read at run time or above kMaxScanUnroll, and
// a Loop whose scan outputs have a run-time length (a condition computed at run time) or are empty
// (no iteration), the VM runs the loop (LoopInVM).
void ConvertLoop(NodeContext& ctx) {
  const onnx::GraphProto& body = ctx.AttrGraph("body");
  const int n = ctx.NumInputs() - 2;  // loop-carried values
  if (n < 0) ctx.Fail("Loop takes M, cond and the loop-carried values (at least 2 inputs, empty names allowed)");
  if (body.input_size() != n + 2) ctx.Fail("the body must take iter_num, cond and the " + std::to_string(n) +
                                           " loop-carried values (" + std::to_string(n + 2) + " inputs), it takes " +
                                           std::to_string(body.input_size()));
  const int k = body.output_size() - 1 - n;  // scan outputs
  if (k < 0) ctx.Fail("the body must return cond and the " + std::to_string(n) + " loop-carried values first");
  runtime::NDArray m_const = ctx.HasInput(0) ? ctx.InputConst(0) : runtime::NDArray();
  if (!m_const.defined()) return LoopInVM(ctx, body, n, k);
  if (m_const.NumElements() != 1) ctx.Fail("M must hold one value");
  const int64_t trips = ToInts(m_const)[0];
  if (trips > kMaxScanUnroll) return LoopInVM(ctx, body, n, k);
  if (trips <= 0 && k > 0) return LoopInVM(ctx, body, n, k);  // empty scan outputs of the body's element types
  // cond: absent = true; a known value; or a run-time bool.
  std::optional<bool> known_cond = true;
  Expr cond;
  if (ctx.HasInput(1)) {
    runtime::NDArray c = ctx.InputConst(1);
    if (c.defined()) {
      if (c.NumElements() != 1) ctx.Fail("cond must hold one value");
      known_cond = ToInts(c)[0] != 0;
    } else {
      known_cond.reset();
      cond = ScalarBool(ctx, ValueOf(ctx.Input(1)), "Loop's cond");
    }
  }
  std::vector<Value> states;
  for (int i = 0; i < n; ++i) states.push_back(Typed(ctx, ctx.Input(2 + i)));
  std::vector<std::vector<Expr>> per_iter(k);
  const DataType i64 = DataType::Int(64);
  for (int64_t it = 0; it < trips && known_cond != false; ++it) {
    Value iter = Typed(ctx, ctx.ScalarConst(static_cast<double>(it), i64));
    Value cond_in = known_cond ? Typed(ctx, graph::ConstantNode::make(FromInts({1}, {}, DataType::Bool()))) : ValueOf(cond);
    std::vector<Value> inputs{iter, cond_in};
    inputs.insert(inputs.end(), states.begin(), states.end());
    std::vector<Value> outs = ctx.ImportSubgraph(body, inputs);
    if (known_cond) {  // every iteration so far ran: take the body's values as they are
      runtime::NDArray next = outs[0].constant;
      if (next.defined()) {
        if (next.NumElements() != 1) ctx.Fail("the body's cond output must hold one value");
        known_cond = ToInts(next)[0] != 0;
      } else {
        known_cond.reset();
        cond = ScalarBool(ctx, outs[0], "the body's cond output");
      }
      for (int i = 0; i < n; ++i) states[i] = outs[1 + i];
      for (int j = 0; j < k; ++j) per_iter[j].push_back(ExprOf(outs[1 + n + j]));
      continue;
    }
    // This iteration runs only while the condition holds: If(cond) {body} else {states, false}.
    if (k > 0) return LoopInVM(ctx, body, n, k);  // scan outputs of a run-time length (nothing is set yet)
    std::vector<Expr> then_f{ScalarBool(ctx, outs[0], "the body's cond output")}, else_f{ctx.ScalarConst(0, DataType::Bool())};
    for (int i = 0; i < n; ++i) {
      if (!graph::StructuralEqual(outs[1 + i].type, states[i].type))
        ctx.Unsupported("loop-carried value " + std::to_string(i) + " changes its type across iterations (" +
                        states[i].type->str() + " -> " + outs[1 + i].type->str() + "): that needs dynamic shapes (Any)");
      then_f.push_back(ExprOf(outs[1 + i]));
      else_f.push_back(ExprOf(states[i]));
    }
    Expr node = Typed(ctx, graph::IfNode::make(cond, graph::TupleNode::make(then_f), graph::TupleNode::make(else_f))).expr;
    cond = Typed(ctx, graph::TupleGetItemNode::make(node, 0)).expr;
    for (int i = 0; i < n; ++i) states[i] = Typed(ctx, graph::TupleGetItemNode::make(node, 1 + i));
  }
  if (k > 0 && per_iter[0].empty()) return LoopInVM(ctx, body, n, k);  // no iteration: empty scan outputs
  for (int i = 0; i < n; ++i) ctx.SetOutputValue(i, states[i]);
  for (int j = 0; j < k; ++j) {
    std::vector<Expr> parts = per_iter[j];
    for (Expr& p : parts) p = ctx.Call("expand_dims", {p}, Attrs{{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}});
    ctx.SetOutputValue(n + j, Typed(ctx, parts.size() == 1 ? parts[0] : Concat(ctx, parts, 0)));
  }
}

}  // namespace

void RegisterControlConverters(ConverterTable& t) {
  t["If"] = ConvertIf;
  t["Scan"] = ConvertScan;
  t["Loop"] = ConvertLoop;
}

}  // namespace tessera::frontend::onnx_import
