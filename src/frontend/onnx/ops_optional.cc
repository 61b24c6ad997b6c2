// ONNX optional operators (Optional-15, OptionalHasElement-15/18, OptionalGetElement-15/18; spec:
// onnx/docs/Operators.md) over the prelude's Option ADT (graph/prelude.h: Some(A) | None).
//
// Optional(x) is `Some(x)` (x a tensor, or a sequence of run-time length: a TensorArray); without an
// input it is `None()` (of type Option[_]: the element type is left to inference, so an If whose
// branches give Some(x) and None() has type Option[T]). OptionalHasElement is `match (o) { Some(_) =>
// True, None => False }` and OptionalGetElement `match (o) { Some(%v) => %v }` (an empty optional
// fails the run: the VM's Fatal "no clause of a match ... matches", as ONNX Runtime fails). When the
// optional is built in the same graph (a Some or None call), both fold at import. Since opset 18 their
// input may also be a tensor or a sequence (an element that is present): HasElement is then True and
// GetElement the input itself; without an input HasElement is False. Optional graph inputs and
// outputs are refused by the importer (the executors take and return tensors).
#include "context.h"
#include "tessera/graph/prelude.h"

namespace tessera::frontend::onnx_import {

using graph::Expr;

namespace {

graph::Constructor Some() { return graph::ConstructorNode::make(graph::PreludeOption(), 0); }
graph::Constructor None() { return graph::ConstructorNode::make(graph::PreludeOption(), 1); }

/// Whether `v` is an optional (a value of the prelude's Option type).
bool IsOptional(const Value& v) {
  const auto* adt = v.type ? v.type->as<graph::ADTTypeNode>() : nullptr;
  return adt && adt->name == graph::PreludeOption()->name;
}

/// The constructor of `e` when it is a call of Some or None (an optional built in this graph), else -1.
int KnownTag(const Expr& e) {
  const auto* call = e ? e->as<graph::CallNode>() : nullptr;
  const auto* ctor = call ? call->op->as<graph::ConstructorNode>() : nullptr;
  return ctor && ctor->type_data == graph::PreludeOption() ? ctor->tag : -1;
}

Expr BoolConst(NodeContext& ctx, bool v) { return ctx.ScalarConst(v ? 1 : 0, DataType::Bool()); }

void ConvertOptional(NodeContext& ctx) {
  if (!ctx.HasInput(0)) {
    if (!ctx.HasAttr("type")) ctx.Fail("an Optional without an input needs the attribute 'type'");
    ctx.SetOutput(0, graph::CallNode::make(None(), {}));
    return;
  }
  Value v = ctx.InputAsValue(0);
  if (v.sequence)
    ctx.Unsupported("an optional of a sequence whose length is known at import is not supported (an optional of a "
                    "tensor, or of a Loop's run-time-length sequence, is)");
  if (IsOptional(v)) ctx.Fail("the input is already an optional; ONNX has no optional of an optional");
  ctx.SetOutput(0, graph::CallNode::make(Some(), {ExprOf(v)}));
}

void ConvertOptionalHasElement(NodeContext& ctx) {
  if (!ctx.HasInput(0)) {  // no input, or an empty name: an absent optional
    ctx.SetOutput(0, BoolConst(ctx, false));
    return;
  }
  Value v = ctx.InputAsValue(0);
  if (!IsOptional(v)) {  // a tensor or a sequence (opset 18): present
    if (ctx.opset() < 18) ctx.Fail("the input must be an optional before opset 18 (a tensor or sequence since 18)");
    ctx.SetOutput(0, BoolConst(ctx, true));
    return;
  }
  const Expr o = ExprOf(v);
  if (int tag = KnownTag(o); tag >= 0) {
    ctx.SetOutput(0, BoolConst(ctx, tag == 0));
    return;
  }
  ctx.SetOutput(0, graph::MatchNode::make(
                       o, {{graph::ClausePatternNode::Ctor(Some(), {graph::ClausePatternNode::Wildcard()}), BoolConst(ctx, true)},
                           {graph::ClausePatternNode::Ctor(None(), {}), BoolConst(ctx, false)}}));
}

void ConvertOptionalGetElement(NodeContext& ctx) {
  Value v = ctx.InputAsValue(0);
  if (!IsOptional(v)) {  // a tensor or a sequence (opset 18): the element itself
    if (ctx.opset() < 18) ctx.Fail("the input must be an optional before opset 18 (a tensor or sequence since 18)");
    ctx.SetOutputValue(0, v);
    return;
  }
  const Expr o = ExprOf(v);
  if (KnownTag(o) == 0) {
    ctx.SetOutput(0, o->as<graph::CallNode>()->args[0]);
    return;
  }
  graph::Var element = graph::VarNode::make("element");
  ctx.SetOutput(0, graph::MatchNode::make(
                       o, {{graph::ClausePatternNode::Ctor(Some(), {graph::ClausePatternNode::Bind(element)}), element}}));
}

}  // namespace

void RegisterOptionalConverters(ConverterTable& t) {
  t["Optional"] = ConvertOptional;
  t["OptionalHasElement"] = ConvertOptionalHasElement;
  t["OptionalGetElement"] = ConvertOptionalGetElement;
}

}  // namespace tessera::frontend::onnx_import
