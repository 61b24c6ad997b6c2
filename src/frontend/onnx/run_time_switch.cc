// SwitchOnRunTimeInt: see run_time_switch.h.
#include "run_time_switch.h"

#include "graph_build.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

namespace {

/// The one element of `v` as a rank-0 expression; Fail naming `what` when it has another count.
graph::Expr OneElement(NodeContext& ctx, Value& v, const graph::TensorTypeNode*& t, const std::string& what) {
  t = v.type->as<graph::TensorTypeNode>();
  if (!t) ctx.Fail(what + " must be a tensor, got " + v.type->str());
  auto shape = graph::StaticShape(t->shape);
  int64_t n = 1;
  for (int64_t d : shape ? *shape : std::vector<int64_t>{2}) n *= d;
  if (!shape || n != 1) ctx.Fail(what + " must hold one element, got " + t->dtype.str() + " " + graph::ShapeStr(t->shape));
  graph::Expr e = ExprOf(v);
  return shape->empty() ? e : Reshape(ctx, e, {});
}

}  // namespace

graph::Expr ScalarInt64(NodeContext& ctx, Value v, const std::string& what) {
  const graph::TensorTypeNode* t = nullptr;
  graph::Expr e = OneElement(ctx, v, t, what);
  if (t->dtype.is_floating() || t->dtype.is_bool()) ctx.Fail(what + " must be an integer, got " + t->dtype.str());
  return t->dtype == DataType::Int(64) ? e : ctx.Call("cast", {e}, graph::Attrs{{"dtype", std::string("int64")}});
}

graph::Expr ScalarBool(NodeContext& ctx, Value v, const std::string& what) {
  const graph::TensorTypeNode* t = nullptr;
  graph::Expr e = OneElement(ctx, v, t, what);
  return t->dtype.is_bool() ? e : ctx.Call("not_equal", {e, ctx.ScalarConst(0, t->dtype)});
}

graph::Expr Fatal(NodeContext& ctx, graph::Expr arg, const graph::Type& type, const std::string& message) {
  const auto* tt = type->as<graph::TensorTypeNode>();
  auto shape = tt ? graph::StaticShape(tt->shape) : std::nullopt;
  if (!shape) ctx.Unsupported("a value of type " + type->str() + " (not a static tensor) where a run may fail is not supported");
  return ctx.Call("vm.fatal", {std::move(arg)},
                  graph::Attrs{{"message", message}, {"shape", *shape}, {"dtype", tt->dtype.str()}});
}

graph::Expr SwitchOnRunTimeInt(NodeContext& ctx, int input, int64_t count, int64_t wrap, const std::string& what,
                               const std::function<graph::Expr(int64_t)>& branch) {
  if (count < 1) ctx.Fail(what + " has no valid value for this input");
  graph::Expr x = ScalarInt64(ctx, ValueOf(ctx.Input(input)), what);
  if (wrap > 0)  // v < 0: v + wrap
    x = ctx.Call("where", {ctx.Call("less", {x, ctx.ScalarConst(0, DataType::Int(64))}),
                           ctx.Call("add", {x, ctx.ScalarConst(static_cast<double>(wrap), DataType::Int(64))}), x});
  // A value for which the node is invalid (its branch fails with a UserError) fails the run when it
  // arrives, with that error; ops Tessera lacks (UnsupportedError) still fail the compile.
  std::vector<graph::Expr> branches(count);
  std::vector<std::string> errors(count);
  graph::Type type;
  for (int64_t v = 0; v < count; ++v) {
    try {
      branches[v] = branch(v);
    } catch (const UnsupportedError&) {
      throw;
    } catch (const UserError& e) {
      errors[v] = e.what();
      continue;
    }
    if (!type) type = branches[v]->checked_type();
    if (!graph::StructuralEqual(branches[v]->checked_type(), type))
      ctx.Unsupported("the result's type depends on " + what + " (" + type->str() + " or " +
                      branches[v]->checked_type()->str() + "), which is computed at run time: that needs dynamic "
                      "shapes (Any)");
  }
  if (!type) ctx.Fail("no value of " + what + " gives a valid node; for 0: " + errors[0]);
  auto fatal = [&](const std::string& message) { return Fatal(ctx, x, type, message); };
  for (int64_t v = 0; v < count; ++v)
    if (!branches[v]) branches[v] = fatal(ctx.Label() + ": with " + what + " " + std::to_string(v) + ": " + errors[v]);
  std::string range = "[0, " + std::to_string(count - 1) + "]";
  if (wrap == count) range = "[" + std::to_string(-count) + ", " + std::to_string(count - 1) + "]";
  else if (wrap > 0) range = "[" + std::to_string(-wrap) + ", " + std::to_string(count - 1 - wrap) + "] or " + range;
  graph::Expr out = fatal(ctx.Label() + ": " + what + " is out of range " + range + " at run time");
  for (int64_t v = count - 1; v >= 0; --v) {
    graph::Expr cond = ctx.Call("equal", {x, ctx.ScalarConst(static_cast<double>(v), DataType::Int(64))});
    out = graph::IfNode::make(cond, branches[v], out);
    graph::InferExprType(out);
  }
  return out;
}

}  // namespace tessera::frontend::onnx_import
