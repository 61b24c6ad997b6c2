// FuseOps: IR before -> IR expected after, compared as printed text of hand-built modules.
#include <gtest/gtest.h>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/fuse_ops.h"

namespace tessera::graph {
namespace {

Type F32(std::vector<int64_t> shape) { return TensorTypeNode::make(shape, DataType::Float(32)); }

Constant Weights(std::vector<int64_t> shape) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = 0.01f * static_cast<float>(i % 7);
  return ConstantNode::make(a);
}

Expr Conv(Expr x, Expr w) {
  return CallNode::make(OpNode::Get("nn.conv2d"), {x, w},
                        Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                              {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{1}}});
}
Expr Call1(const std::string& op, std::vector<Expr> args) { return CallNode::make(OpNode::Get(op), std::move(args)); }

Function Primitive(std::vector<Var> params, Expr body) {
  Attrs attrs;
  attrs.Set("Primitive", 1);
  return FunctionNode::make(std::move(params), std::move(body), nullptr, attrs);
}

TEST(FuseOps, ConvBiasReluResidualFuseIntoOneFunction) {
  Var x = VarNode::make("x", F32({1, 4, 8, 8}));
  Constant w = Weights({4, 4, 3, 3});
  Constant b = Weights({1, 4, 1, 1});
  // relu(conv(x, w) + b) + x
  Expr y = Call1("add", {Call1("nn.relu", {Call1("add", {Conv(x, w), b})}), x});
  IRModule before = InferType(IRModule::FromMain(FunctionNode::make({x}, y)));
  IRModule after = InferType(transform::FuseOps(before));

  Var p0 = VarNode::make("p0", F32({1, 4, 8, 8}));
  Var p1 = VarNode::make("p1", F32({4, 4, 3, 3}));
  Var p2 = VarNode::make("p2", F32({1, 4, 1, 1}));
  Function fused = Primitive({p0, p1, p2}, Call1("add", {Call1("nn.relu", {Call1("add", {Conv(p0, p1), p2})}), p0}));
  Var x2 = VarNode::make("x", F32({1, 4, 8, 8}));
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, CallNode::make(fused, {x2, w, b}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, SharedProducerIsNotFusedIntoEitherConsumer) {
  Var x = VarNode::make("x", F32({2, 3}));
  Expr e = Call1("exp", {x});
  Expr y = Call1("add", {Call1("nn.relu", {e}), Call1("sigmoid", {e})});
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y)))));

  Var a0 = VarNode::make("p0", F32({2, 3}));
  Function f_exp = Primitive({a0}, Call1("exp", {a0}));
  Var b0 = VarNode::make("p0", F32({2, 3}));
  Function f_relu = Primitive({b0}, Call1("nn.relu", {b0}));
  Var c0 = VarNode::make("p0", F32({2, 3}));
  Var c1 = VarNode::make("p1", F32({2, 3}));
  // sigmoid has one use (add): it fuses into add's group; relu too, becoming add's inputs.
  Var x2 = VarNode::make("x", F32({2, 3}));
  Expr e2 = CallNode::make(f_exp, {x2});
  Function f_rest = Primitive({c0}, Call1("add", {Call1("nn.relu", {c0}), Call1("sigmoid", {c0})}));
  (void)f_relu;
  (void)c1;
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, CallNode::make(f_rest, {e2}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, OptLevelZeroMakesOneFunctionPerCall) {
  Var x = VarNode::make("x", F32({4}));
  Expr y = Call1("nn.relu", {Call1("exp", {x})});
  transform::FuseOpsOptions o;
  o.fuse_opt_level = 0;
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y))), o));
  Var a = VarNode::make("p0", F32({4}));
  Var b = VarNode::make("p0", F32({4}));
  Var x2 = VarNode::make("x", F32({4}));
  Expr expected_body = CallNode::make(Primitive({b}, Call1("nn.relu", {b})),
                                      {CallNode::make(Primitive({a}, Call1("exp", {a})), {x2})});
  EXPECT_EQ(PrintModule(after), PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2}, expected_body)))));
}

TEST(FuseOps, ConvIsNotFusedIntoAnotherConv) {
  Var x = VarNode::make("x", F32({1, 4, 8, 8}));
  Expr y = Conv(Call1("nn.relu", {Conv(x, Weights({4, 4, 3, 3}))}), Weights({4, 4, 3, 3}));
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y)))));
  int primitives = 0;
  PostOrderVisit(after.main()->body, [&](const Expr& e) {
    if (const auto* f = e->as<FunctionNode>()) primitives += f->attrs.GetInt("Primitive", 0);
  });
  EXPECT_EQ(primitives, 2);
}

}  // namespace
}  // namespace tessera::graph
