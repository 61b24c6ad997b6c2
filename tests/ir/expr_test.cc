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

TEST(PrimExpr, IntegerFoldingWrapsAtTheDtypesWidth) {
  // +, -, * of immediates wrap as the generated code does (no signed overflow in the folder).
  const DataType i32 = DataType::Int(32), u8 = DataType::UInt(8), u64 = DataType::UInt(64);
  EXPECT_TRUE(is_const_int(make_const(i32, INT32_MAX) + make_const(i32, 1), INT32_MIN));
  EXPECT_TRUE(is_const_int(make_const(u8, 200) + make_const(u8, 100), 44));
  EXPECT_TRUE(is_const_int(make_const(u8, 3) - make_const(u8, 5), 254));
  const PrimExpr big = make_const(u64, static_cast<int64_t>(0x9E3779B97F4A7C15ull));  // above INT64_MAX
  int64_t v = 0;
  ASSERT_TRUE(as_const_int(big * make_const(u64, 3), &v));
  EXPECT_EQ(static_cast<uint64_t>(v), 0x9E3779B97F4A7C15ull * 3);
  ASSERT_TRUE(as_const_int(make_const(DataType::Int(64), INT64_MAX) + make_const(DataType::Int(64), 1), &v));
  EXPECT_EQ(v, INT64_MIN);
  // uint64 above INT64_MAX orders and divides as unsigned.
  EXPECT_TRUE(is_const_int(big > make_const(u64, 1), 1));
  ASSERT_TRUE(as_const_int(floordiv(big, make_const(u64, 2)), &v));
  EXPECT_EQ(static_cast<uint64_t>(v), 0x9E3779B97F4A7C15ull / 2);
  ASSERT_TRUE(as_const_int(max(big, make_const(u64, 7)), &v));
  EXPECT_EQ(static_cast<uint64_t>(v), 0x9E3779B97F4A7C15ull);
  // INT64_MIN / -1 overflows: left unfolded.
  EXPECT_FALSE(as_const_int(truncdiv(make_const(DataType::Int(64), INT64_MIN), make_const(DataType::Int(64), -1)), &v));
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
