#include <gtest/gtest.h>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "test_util.h"

namespace tessera::graph {
namespace {

using testing::CallOp;
using testing::ConstF32;
using testing::F32;

TEST(Printer, TypedFunctionWithMetaConstants) {
  Var x = VarNode::make("input", F32({1, 3, 8, 8}));
  Expr conv = CallOp("nn.conv2d", {x, ConstF32({4, 3, 3, 3})},
                     Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
  Expr relu = CallOp("nn.relu", {conv});
  Expr out = CallOp("multiply", {relu, ConstF32({}, 0.5f)});
  IRModule mod = InferType(IRModule::FromMain(FunctionNode::make({x}, out)));
  EXPECT_EQ(PrintModule(mod),
            "def @main(%input: Tensor[(1, 3, 8, 8), float32]) -> Tensor[(1, 4, 8, 8), float32] {\n"
            "  %0 = nn.conv2d(%input, meta[Constant][0] /* ty=Tensor[(4, 3, 3, 3), float32] */, strides=[1, 1], "
            "padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 8, 8), float32] */;\n"
            "  %1 = nn.relu(%0) /* ty=Tensor[(1, 4, 8, 8), float32] */;\n"
            "  multiply(%1, 0.5f) /* ty=Tensor[(1, 4, 8, 8), float32] */\n"
            "}\n");
}

TEST(Printer, SharedNodesTuplesAndUntypedExprs) {
  Var a = VarNode::make("a", F32({2}));
  Expr e = CallOp("exp", {a});
  Expr sum = CallOp("add", {e, e});  // e printed once
  Expr tup = TupleNode::make({sum, e});
  Expr item = TupleGetItemNode::make(tup, 1);
  EXPECT_EQ(PrintExpr(FunctionNode::make({a}, item)),
            "fn (%a: Tensor[(2,), float32]) {\n"
            "  %0 = exp(%a);\n"
            "  %1 = add(%0, %0);\n"
            "  %2 = (%1, %0);\n"
            "  %2.1\n"
            "}");
  Expr cast = CallOp("cast", {a}, Attrs{{"dtype", std::string("int64")}});
  InferExprType(cast);
  EXPECT_EQ(PrintExpr(cast), "cast(%a, dtype=\"int64\") /* ty=Tensor[(2,), int64] */");
}

TEST(Printer, SymbolicDimsAndPrimitiveFunctions) {
  Var x = VarNode::make("x", F32({Dim::Symbolic("batch_size"), 4}));
  Var p = VarNode::make("p", F32({Dim::Symbolic("batch_size"), 4}));
  Function prim = FunctionNode::make({p}, CallOp("sigmoid", {p}), nullptr, Attrs{{"Primitive", int64_t{1}}});
  Expr call = CallNode::make(prim, {x});
  EXPECT_EQ(PrintExpr(FunctionNode::make({x}, call)),
            "fn (%x: Tensor[(batch_size, 4), float32]) {\n"
            "  %0 = fn (%p: Tensor[(batch_size, 4), float32]) /* attrs: Primitive=1 */ {\n"
            "    sigmoid(%p)\n"
            "  };\n"
            "  %0(%x)\n"
            "}");
}

}  // namespace
}  // namespace tessera::graph
