#include <gtest/gtest.h>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/module.h"
#include "tessera/support/error.h"
#include "test_util.h"

namespace tessera::graph {
namespace {

using testing::CallOp;
using testing::ConstF32;
using testing::F32;

TEST(InferType, SmallConvNet) {
  Var x = VarNode::make("x", F32({1, 3, 8, 8}));
  Expr conv = CallOp("nn.conv2d", {x, ConstF32({4, 3, 3, 3})}, Attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
  Expr bias = CallOp("nn.bias_add", {conv, ConstF32({4})}, Attrs{{"axis", int64_t{1}}});
  Expr relu = CallOp("nn.relu", {bias});
  Expr pool = CallOp("nn.global_avg_pool2d", {relu});
  Expr flat = CallOp("reshape", {pool}, Attrs{{"newshape", std::vector<int64_t>{1, 4}}});
  Expr tup = TupleNode::make({flat, relu});
  Expr first = TupleGetItemNode::make(tup, 0);
  IRModule mod = InferType(IRModule::FromMain(FunctionNode::make({x}, first)));
  const Function& main = mod.main();
  ASSERT_TRUE(main->ret_type);
  EXPECT_EQ(main->ret_type->str(), "Tensor[(1, 4), float32]");
  EXPECT_EQ(conv->checked_type()->str(), "Tensor[(1, 4, 8, 8), float32]");
  EXPECT_EQ(tup->checked_type()->str(), "(Tensor[(1, 4), float32], Tensor[(1, 4, 8, 8), float32])");
  EXPECT_EQ(main->checked_type()->str(), "fn (Tensor[(1, 3, 8, 8), float32]) -> Tensor[(1, 4), float32]");
}

TEST(InferType, LetIfAndFunctionCalls) {
  Var x = VarNode::make("x", F32({2, 2}));
  Var y = VarNode::make("y");  // let-bound: typed from its value
  Expr body = LetNode::make(y, CallOp("exp", {x}), CallOp("add", {y, x}));
  Type b = TensorTypeNode::make(Shape{}, DataType::Bool());
  Var c = VarNode::make("c", b);
  Expr sel = IfNode::make(c, body, x);
  // a nested "Primitive" function called with an argument
  Var p = VarNode::make("p", F32({2, 2}));
  Function prim = FunctionNode::make({p}, CallOp("nn.relu", {p}), nullptr, Attrs{{"Primitive", int64_t{1}}});
  Expr call = CallNode::make(prim, {sel});
  IRModule mod = InferType(IRModule::FromMain(FunctionNode::make({x, c}, call)));
  EXPECT_EQ(mod.main()->ret_type->str(), "Tensor[(2, 2), float32]");
  EXPECT_EQ(y->checked_type()->str(), "Tensor[(2, 2), float32]");

  Expr wrong = CallNode::make(prim, {VarNode::make("z", F32({3}))});
  EXPECT_THROW(InferExprType(wrong), UserError);
  Expr bad_if = IfNode::make(c, x, VarNode::make("w", F32({3})));
  EXPECT_THROW(InferExprType(bad_if), UserError);
}

TEST(InferType, ErrorNamesOpAndShapesAndFunction) {
  Var x = VarNode::make("x", F32({1, 3, 8, 8}));
  Expr conv = CallOp("nn.conv2d", {x, ConstF32({4, 2, 3, 3})});
  try {
    InferType(IRModule::FromMain(FunctionNode::make({x}, conv)));
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("in function @main"), std::string::npos) << m;
    EXPECT_NE(m.find("nn.conv2d(Tensor[(1, 3, 8, 8), float32], Tensor[(4, 2, 3, 3), float32])"), std::string::npos)
        << m;
  }
  EXPECT_THROW(InferExprType(CallOp("nn.relu", {VarNode::make("free")})), UserError);
  EXPECT_THROW(IRModule().main(), UserError);
}

TEST(Type, StructuralEquality) {
  EXPECT_TRUE(StructuralEqual(F32({1, Dim::Symbolic("n")}), F32({1, Dim::Symbolic("n")})));
  EXPECT_FALSE(StructuralEqual(F32({1, Dim::Symbolic("n")}), F32({1, Dim::Symbolic("m")})));
  EXPECT_FALSE(StructuralEqual(F32({1, 2}), F32({1, 2, 1})));
  EXPECT_FALSE(StructuralEqual(F32({2}), TensorTypeNode::make(std::vector<int64_t>{2}, DataType::Int(32))));
  EXPECT_TRUE(StructuralEqual(TupleTypeNode::make({F32({1})}), TupleTypeNode::make({F32({1})})));
  EXPECT_TRUE(StructuralEqual(FuncTypeNode::make({F32({1})}, F32({2})), FuncTypeNode::make({F32({1})}, F32({2}))));
  EXPECT_FALSE(StructuralEqual(nullptr, F32({1})));
  EXPECT_EQ(FuncTypeNode::make({F32({1})}, TupleTypeNode::make({F32({}), F32({2})}))->str(),
            "fn (Tensor[(1,), float32]) -> (Tensor[(), float32], Tensor[(2,), float32])");
}

}  // namespace
}  // namespace tessera::graph
