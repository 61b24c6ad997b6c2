// SwitchOnRunTimeInt: see run_time_switch.h.
#include "run_time_switch.h"

#include "graph_build.h"
#include "tessera/graph/infer_type.h"

namespace tessera::frontend::onnx_import {

graph::Expr SwitchOnRunTimeInt(NodeContext& ctx, int input, int64_t count, int64_t wrap, const std::string& what,
                               const std::function<graph::Expr(int64_t)>& branch) {
  const graph::TensorTypeNode& t = ctx.InputType(input);
  auto shape = graph::StaticShape(t.shape);
  int64_t n = 1;
  for (int64_t d : shape ? *shape : std::vector<int64_t>{}) n *= d;
  if (!shape || n != 1 || t.dtype.is_floating() || t.dtype.is_bool())
    ctx.Fail(what + " must be one integer, got " + t.dtype.str() + " " + graph::ShapeStr(t.shape));
  if (count < 1) ctx.Fail(what + " has no valid value for this input");
  graph::Expr x = ctx.Input(input);
  if (!shape->empty()) x = Reshape(ctx, x, {});
  if (t.dtype != DataType::Int(64)) x = ctx.Call("cast", {x}, graph::Attrs{{"dtype", std::string("int64")}});
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
  const auto* tt = type->as<graph::TensorTypeNode>();
  auto out_shape = tt ? graph::StaticShape(tt->shape) : std::nullopt;
  if (!out_shape) ctx.Unsupported(what + " read at run time needs a static tensor result, got " + type->str());
  auto fatal = [&](const std::string& message) {
    return ctx.Call("vm.fatal", {x}, graph::Attrs{{"message", message}, {"shape", *out_shape}, {"dtype", tt->dtype.str()}});
  };
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
