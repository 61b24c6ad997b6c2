#include <gtest/gtest.h>

#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"

namespace tessera::ir {
namespace {

TEST(PrimExpr, LiteralsAndFolding) {
  PrimExpr a = 2, b = 3;
  EXPECT_TRUE(is_const_int(a + b, 5));
  EXPECT_TRUE(is_const_int(floordiv(PrimExpr(-7), PrimExpr(2)), -4));
  EXPECT_TRUE(is_const_int(floormod(PrimExpr(-7), PrimExpr(2)), 1));
  EXPECT_TRUE(is_const_int(truncdiv(PrimExpr(-7), PrimExpr(2)), -3));
  EXPECT_EQ(PrimExpr(1.5f).dtype(), DataType::Float(32));
}

TEST(PrimExpr, ImmediateTakesOtherSidesType) {
  Var i("i", DataType::Int(64));
  PrimExpr e = i * 4;
  EXPECT_EQ(e.dtype(), DataType::Int(64));
  Var x("x", DataType::Float(32));
  EXPECT_EQ((x + 1).dtype(), DataType::Float(32));
  PrimExpr v = RampNode::make(i, make_const(DataType::Int(64), 1), 8);
  EXPECT_EQ((v + i).dtype(), DataType::Int(64, 8));
  EXPECT_EQ((i < 3).dtype(), DataType::Bool());
}

TEST(PrimExpr, MismatchedTypesThrow) {
  Var i("i", DataType::Int(64));
  Var j("j", DataType::Int(32));
  EXPECT_THROW(i + j, InternalError);
  EXPECT_THROW(AddNode::make(i, j), InternalError);
  EXPECT_THROW(RampNode::make(i, i, 1), InternalError);
}

TEST(ExprFunctor, MutatorKeepsIdentityWhenUnchanged) {
  Var i("i");
  PrimExpr e = i * 2 + 1;
  ExprMutator m;
  EXPECT_TRUE(m.VisitExpr(e).same_as(e));
  PrimExpr a, b;
  ASSERT_TRUE(GetBinaryOperands(e, &a, &b));
  EXPECT_TRUE(is_one(b));
}

}  // namespace
}  // namespace tessera::ir
