// ONNX sequence operators, over sequences whose length is known at import (their elements may be
// run-time tensors; context.h Value::sequence): SequenceEmpty-11, SequenceConstruct-11,
// SequenceInsert-11, SequenceErase-11, SequenceAt-11, SequenceLength-11, SplitToSequence-11,
// ConcatFromSequence-11. Spec: onnx/docs/Operators.md.
//
// A position known at import picks elements directly. A position read at run time (SequenceAt,
// SequenceInsert, SequenceErase) selects each result element with a gather over the stacked
// candidates and an index computed from the position: every candidate must then have one type
// (UnsupportedError otherwise), and a position outside the spec's range ([-n, n - 1]; insert:
// [-n, n]) makes the gather's index out of range, which fails the run naming the node (as
// Gather's run-time indices, ir::checked_index). A sequence-typed graph input or output is refused
// (the executors take and return tensors). A Loop's carried sequence, whose length the run decides,
// is a list of tensors instead (graph::ListTypeNode, ops_control.cc): SequenceInsert appends to it
// (vm.list_push), SequenceAt reads it (vm.list_at), SequenceLength counts it, ConcatFromSequence
// stacks it (vm.list_stack).
#include <algorithm>
#include <optional>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "run_time_switch.h"
#include "tensor_convert.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

const DataType kI64 = DataType::Int(64);

/// The known position of input i normalized into [0, n + extra) (extra = 1 for an insert), or
/// nullopt when it is read at run time. Fail when out of range.
std::optional<int64_t> KnownPosition(NodeContext& ctx, int i, int64_t n, int64_t extra) {
  runtime::NDArray c = ctx.InputConst(i);
  if (!c.defined()) return std::nullopt;
  if (c.NumElements() != 1 || c.dtype().is_floating()) ctx.Fail("the position must be one integer");
  int64_t p = ToInts(c)[0];
  if (p < -n || p >= n + extra)
    ctx.Fail("position " + std::to_string(p) + " is out of range [" + std::to_string(-n) + ", " +
             std::to_string(n + extra - 1) + "] for a sequence of " + std::to_string(n));
  return p < 0 ? p + n : p;
}

Expr I64(NodeContext& ctx, int64_t v) { return ctx.ScalarConst(static_cast<double>(v), kI64); }

/// The candidate chosen by `index` (an int64 scalar; out of [-n, n) fails the run), all candidates
/// of one type.
Expr Pick(NodeContext& ctx, std::vector<Value> candidates, Expr index, const std::string& why) {
  std::vector<Expr> parts;
  for (Value& c : candidates) {
    if (!graph::StructuralEqual(c.type, candidates[0].type))
      ctx.Unsupported(why + " read at run time needs sequence elements of one type, got " + candidates[0].type->str() +
                      " and " + c.type->str());
    parts.push_back(ctx.Call("expand_dims", {ExprOf(c)}, Attrs{{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
  }
  Expr stacked = parts.size() == 1 ? parts[0] : Concat(ctx, parts, 0);
  return ctx.Call("take", {stacked, index}, Attrs{{"axis", int64_t{0}}, {"mode", std::string("raise")},
                                                 {"source", ctx.Label()}});
}

/// A run-time position (maybe negative) for a sequence of n: normalized into [0, n + extra), and
/// whether it was in range [-n, n - 1 + extra].
struct Position {
  Expr norm, valid;
};
Position RunTimePosition(NodeContext& ctx, int i, int64_t n, int64_t extra) {
  Expr p = ScalarInt64(ctx, ValueOf(ctx.Input(i)), "the position");
  Expr norm = ctx.Call("where", {ctx.Call("less", {p, I64(ctx, 0)}), ctx.Call("add", {p, I64(ctx, n)}), p});
  Expr valid = ctx.Call("logical_and", {ctx.Call("greater_equal", {p, I64(ctx, -n)}),
                                        ctx.Call("less", {p, I64(ctx, n + extra)})});
  return {norm, valid};
}

/// `idx` when the position is valid, else `candidates` (one past the last): the gather then fails
/// the run.
Expr Guarded(NodeContext& ctx, const Position& pos, Expr idx, int64_t candidates) {
  return ctx.Call("where", {pos.valid, std::move(idx), I64(ctx, candidates)});
}

void ConvertSequenceEmpty(NodeContext& ctx) {
  const int64_t dtype = ctx.AttrInt("dtype", 1);  // float by default
  ctx.SetOutputSequence(0, {}, DataTypeFromONNX(static_cast<int>(dtype), ctx.Where() + ": dtype"));
}

void ConvertSequenceConstruct(NodeContext& ctx) {
  if (ctx.NumInputs() < 1) ctx.Fail("SequenceConstruct needs at least one input");
  std::vector<Value> elems;
  for (int i = 0; i < ctx.NumInputs(); ++i) elems.push_back(ValueOf(ctx.Input(i)));
  ctx.SetOutputSequence(0, std::move(elems), ctx.InputType(0).dtype);
}

void ConvertSequenceInsert(NodeContext& ctx) {
  if (ctx.InputIsList(0)) {  // a sequence of a run-time length: a list of tensors
    if (ctx.HasInput(2))
      ctx.Unsupported("SequenceInsert at a position into a sequence of a run-time length (a Loop's carried "
                      "sequence) is not supported yet; only appending (no position)");
    return ctx.SetOutput(0, ctx.Call("vm.list_push", {ctx.Input(0), ctx.Input(1)}));
  }
  DataType dtype;
  std::vector<Value> seq = ctx.InputSequence(0, &dtype);
  if (ctx.InputType(1).dtype != dtype)
    ctx.Fail("the tensor's dtype " + ctx.InputType(1).dtype.str() + " differs from the sequence's " + dtype.str());
  const int64_t n = static_cast<int64_t>(seq.size());
  Value t = ValueOf(ctx.Input(1));
  if (!ctx.HasInput(2)) {
    seq.push_back(t);
  } else if (auto p = KnownPosition(ctx, 2, n, 1)) {
    seq.insert(seq.begin() + *p, t);
  } else {
    // Element i of the result: s[i] before the position, t at it, s[i - 1] after it; among the
    // candidates [s0, .., s(n-1), t], t is candidate n.
    const Position pos = RunTimePosition(ctx, 2, n, 1);
    std::vector<Value> candidates = seq;
    candidates.push_back(t);
    std::vector<Value> out;
    for (int64_t i = 0; i <= n; ++i) {
      Expr idx = ctx.Call("where", {ctx.Call("greater", {pos.norm, I64(ctx, i)}), I64(ctx, i),
                                    ctx.Call("where", {ctx.Call("equal", {pos.norm, I64(ctx, i)}), I64(ctx, n),
                                                       I64(ctx, i - 1)})});
      out.push_back(ValueOf(Pick(ctx, candidates, Guarded(ctx, pos, idx, n + 1), "SequenceInsert's position")));
    }
    seq = std::move(out);
  }
  ctx.SetOutputSequence(0, std::move(seq), dtype);
}

void ConvertSequenceErase(NodeContext& ctx) {
  DataType dtype;
  std::vector<Value> seq = ctx.InputSequence(0, &dtype);
  const int64_t n = static_cast<int64_t>(seq.size());
  if (n == 0) ctx.Fail("cannot erase from an empty sequence");
  if (!ctx.HasInput(1)) {
    seq.pop_back();
  } else if (auto p = KnownPosition(ctx, 1, n, 0)) {
    seq.erase(seq.begin() + *p);
  } else {
    // The result would be empty: no gather would check the position.
    if (n == 1) ctx.Unsupported("erasing the only element at a position read at run time is not supported");
    // Element i of the result: s[i] before the position, s[i + 1] from it on.
    const Position pos = RunTimePosition(ctx, 1, n, 0);
    std::vector<Value> out;
    for (int64_t i = 0; i + 1 < n; ++i) {
      Expr idx = ctx.Call("where", {ctx.Call("greater", {pos.norm, I64(ctx, i)}), I64(ctx, i), I64(ctx, i + 1)});
      out.push_back(ValueOf(Pick(ctx, seq, Guarded(ctx, pos, idx, n), "SequenceErase's position")));
    }
    seq = std::move(out);
  }
  ctx.SetOutputSequence(0, std::move(seq), dtype);
}

void ConvertSequenceAt(NodeContext& ctx) {
  if (ctx.InputIsList(0)) return ctx.SetOutput(0, ctx.Call("vm.list_at", {ctx.Input(0), ctx.Input(1)}));
  std::vector<Value> seq = ctx.InputSequence(0);
  const int64_t n = static_cast<int64_t>(seq.size());
  if (n == 0) ctx.Fail("SequenceAt on an empty sequence");
  if (auto p = KnownPosition(ctx, 1, n, 0)) return ctx.SetOutputValue(0, seq[*p]);
  ctx.SetOutput(0, Pick(ctx, seq, ScalarInt64(ctx, ValueOf(ctx.Input(1)), "the position"), "SequenceAt's position"));  // [-n, n): checked
}

void ConvertSequenceLength(NodeContext& ctx) {
  if (ctx.InputIsList(0)) return ctx.SetOutput(0, ctx.Call("vm.list_length", {ctx.Input(0)}));
  const int64_t n = static_cast<int64_t>(ctx.InputSequence(0).size());
  ctx.SetOutputConst(0, FromInts({n}, {}, kI64));
}

void ConvertSplitToSequence(NodeContext& ctx) {
  const std::vector<int64_t> shape = ctx.InputShape(0);
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = ctx.AttrInt("axis", 0);
  if (axis < -rank || axis >= rank) ctx.Fail("axis " + std::to_string(axis) + " is out of range for rank " +
                                             std::to_string(rank));
  if (axis < 0) axis += rank;
  const int64_t len = shape[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!ctx.HasInput(1)) {  // pieces of 1, squeezed unless keepdims
    sizes.assign(len, 1);
    squeeze = ctx.AttrInt("keepdims", 1) == 0;
  } else {
    runtime::NDArray split = ctx.InputConst(1);
    if (!split.defined()) ctx.RefuseRunTimeOperand(1, "SplitToSequence's split");
    std::vector<int64_t> v = ToInts(split);
    if (split.ndim() == 0) {  // one size for every piece, the last one shorter
      if (v[0] < 1) ctx.Fail("split must be >= 1, got " + std::to_string(v[0]));
      for (int64_t at = 0; at < len; at += v[0]) sizes.push_back(std::min(v[0], len - at));
    } else {
      int64_t total = 0;
      for (int64_t s : v) {
        if (s < 0) ctx.Fail("split sizes must be >= 0");
        total += s;
      }
      if (total != len)
        ctx.Fail("split sizes sum to " + std::to_string(total) + ", not the axis length " + std::to_string(len));
      sizes = v;
    }
  }
  std::vector<Value> elems;
  int64_t at = 0;
  for (int64_t s : sizes) {
    Expr piece = SliceAxis(ctx, ctx.Input(0), axis, at, at + s);
    if (squeeze) piece = ctx.Call("squeeze", {piece}, Attrs{{"axis", std::vector<int64_t>{axis}}});
    elems.push_back(ValueOf(piece));
    at += s;
  }
  ctx.SetOutputSequence(0, std::move(elems), ctx.InputType(0).dtype);
}

// ConcatFromSequence's axis attr normalized into [0, rank + new_axis); Fail when out of range.
int64_t ConcatAxis(NodeContext& ctx, int64_t rank, bool new_axis) {
  return NormAxis(ctx, ctx.AttrInt("axis"), rank + (new_axis ? 1 : 0));
}

// ConcatFromSequence of a list of tensors (a run-time length): the elements stacked along a new
// axis 0 (vm.list_stack), moved to `axis`; without new_axis, concatenated along an axis of extent 1
// in every element (a dim of the run-time length; other extents need a dim expression n * d).
void ConcatFromList(NodeContext& ctx) {
  const graph::Expr list = ctx.Input(0);
  const auto* element = graph::InferExprType(list)->as<graph::ListTypeNode>()->element->as<graph::TensorTypeNode>();
  const int64_t rank = element->ndim();
  const bool new_axis = ctx.AttrInt("new_axis", 0) != 0;
  const int64_t axis = ConcatAxis(ctx, rank, new_axis);
  if (!new_axis && element->shape[axis] != graph::Dim(1))
    ctx.Unsupported("concatenating a sequence of a run-time length along axis " + std::to_string(axis) + " of extent " +
                    element->shape[axis].str() + " (the result's extent is the length times it, a dim expression) is "
                    "not supported yet; stacking (new_axis = 1) or an axis of extent 1 is");
  Expr stacked = ctx.Call("vm.list_stack", {list}, Attrs{{"length_symbol", ctx.OutputSymbol(0, static_cast<int>(axis))}});
  if (axis > 0) {  // the new axis 0 to position `axis`
    std::vector<int64_t> perm;
    for (int64_t d = 1; d <= axis; ++d) perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d <= rank; ++d) perm.push_back(d);
    stacked = Transpose(ctx, stacked, perm);
  }
  if (!new_axis) stacked = ctx.Call("squeeze", {stacked}, Attrs{{"axis", std::vector<int64_t>{axis + 1}}});
  ctx.SetOutput(0, stacked);
}

void ConvertConcatFromSequence(NodeContext& ctx) {
  if (ctx.InputIsList(0)) return ConcatFromList(ctx);
  std::vector<Value> seq = ctx.InputSequence(0);
  if (seq.empty()) ctx.Fail("ConcatFromSequence of an empty sequence");
  const int64_t rank = seq[0].type->as<graph::TensorTypeNode>()->ndim();
  const bool new_axis = ctx.AttrInt("new_axis", 0) != 0;
  const int64_t axis = ConcatAxis(ctx, rank, new_axis);
  std::vector<Expr> parts;
  for (Value& v : seq) {
    Expr e = ExprOf(v);
    if (new_axis) e = ctx.Call("expand_dims", {e}, Attrs{{"axis", axis}, {"num_newaxis", int64_t{1}}});
    parts.push_back(e);
  }
  ctx.SetOutput(0, parts.size() == 1 ? parts[0] : Concat(ctx, parts, axis));
}

}  // namespace

void RegisterSequenceConverters(ConverterTable& t) {
  t["SequenceEmpty"] = ConvertSequenceEmpty;
  t["SequenceConstruct"] = ConvertSequenceConstruct;
  t["SequenceInsert"] = ConvertSequenceInsert;
  t["SequenceErase"] = ConvertSequenceErase;
  t["SequenceAt"] = ConvertSequenceAt;
  t["SequenceLength"] = ConvertSequenceLength;
  t["SplitToSequence"] = ConvertSplitToSequence;
  t["ConcatFromSequence"] = ConvertConcatFromSequence;
}

}  // namespace tessera::frontend::onnx_import
