#include <gtest/gtest.h>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"

namespace tessera::arith {
namespace {

using namespace tessera::ir;

#define EXPECT_SIMPLIFY(an, input, expected)                                           \
  do {                                                                                 \
    PrimExpr got_ = (an).Simplify(input);                                              \
    EXPECT_TRUE(ExprStructuralEqual(got_, expected)) << "simplifying " #input;            \
  } while (0)

TEST(Simplify, ConstantFolding) {
  Analyzer an;
  PrimExpr two = make_const(DataType::Int(32), 2);
  EXPECT_SIMPLIFY(an, AddNode::make(two, MulNode::make(two, PrimExpr(3))), PrimExpr(8));
  EXPECT_SIMPLIFY(an, FloorDivNode::make(PrimExpr(-7), two), PrimExpr(-4));
  EXPECT_SIMPLIFY(an, MinNode::make(PrimExpr(3), two), PrimExpr(2));
}

TEST(Simplify, CollectsLikeTerms) {
  Analyzer an;
  Var i("i"), j("j"), k("k");
  EXPECT_SIMPLIFY(an, i * 1 + 0, i);
  EXPECT_SIMPLIFY(an, MulNode::make(i, PrimExpr(0)) + j, j);
  EXPECT_SIMPLIFY(an, i * 128 + j + k * 4 - j, i * 128 + k * 4);
  EXPECT_SIMPLIFY(an, (i + 1) * 4 - 4, i * 4);
  EXPECT_SIMPLIFY(an, i + i + 3 + i, i * 3 + 3);
  EXPECT_SIMPLIFY(an, j - i - 2, j - i - 2);
  EXPECT_SIMPLIFY(an, i - i, PrimExpr(0));
}

TEST(Simplify, DivModWithBounds) {
  Analyzer an;
  Var i("i"), j("j"), x("x");
  an.Bind(j, Range(0, 128));
  EXPECT_SIMPLIFY(an, floordiv(i * 128 + j, 128), i);
  EXPECT_SIMPLIFY(an, floormod(i * 128 + j, 128), j);
  EXPECT_SIMPLIFY(an, floordiv(i * 256 + j + 128, 128), i * 2 + 1);
  // Without bounds on x the remainder stays.
  EXPECT_SIMPLIFY(an, floordiv(i * 4 + x, 4), i + floordiv(x, 4));
  EXPECT_SIMPLIFY(an, floormod(i * 4 + x, 4), floormod(x, 4));
  EXPECT_SIMPLIFY(an, floordiv(floordiv(x, 4), 8), floordiv(x, 32));
  EXPECT_SIMPLIFY(an, floordiv(x, 1), x);
  EXPECT_SIMPLIFY(an, floormod(x, 1), PrimExpr(0));
  // fuse then flatten: floordiv(f, 16) * 16 + floormod(f, 16) == f
  Var f("f");
  EXPECT_SIMPLIFY(an, floordiv(f, 16) * 16 + floormod(f, 16), f);
  // trunc division of provably non-negative operands behaves like floordiv
  EXPECT_SIMPLIFY(an, truncdiv(j, 128), PrimExpr(0));
}

TEST(Simplify, MinMaxAndComparisonsFromBounds) {
  Analyzer an;
  Var i("i"), n("n");
  an.Bind(i, Range(0, 16));
  EXPECT_SIMPLIFY(an, min(i, 16), i);
  EXPECT_SIMPLIFY(an, max(i, 0), i);
  EXPECT_SIMPLIFY(an, min(i + 1, i), i);
  EXPECT_SIMPLIFY(an, min(i, n), min(i, n));
  EXPECT_SIMPLIFY(an, i < 16, make_const(DataType::Bool(), 1));
  EXPECT_SIMPLIFY(an, i >= 16, make_const(DataType::Bool(), 0));
  EXPECT_SIMPLIFY(an, i < 8, i < 8);
  EXPECT_SIMPLIFY(an, i * 2 + 1 == 0, make_const(DataType::Bool(), 0));
}

TEST(Simplify, UnsignedMinMaxIsKept) {
  // a - b wraps for unsigned dtypes: its bound [0, 255] must not decide max(a, b) = a.
  Analyzer an;
  Var a("a", DataType::UInt(8)), b("b", DataType::UInt(8));
  EXPECT_SIMPLIFY(an, max(a, b), max(a, b));
  EXPECT_SIMPLIFY(an, min(a, b), min(a, b));
  EXPECT_SIMPLIFY(an, a < b, a < b);
  EXPECT_SIMPLIFY(an, a >= b, a >= b);
}

TEST(Simplify, LogicAndSelect) {
  Analyzer an;
  Var i("i"), x("x", DataType::Float(32)), y("y", DataType::Float(32));
  an.Bind(i, Range(0, 4));
  EXPECT_SIMPLIFY(an, (i < 4) && (i < 2), i < 2);
  EXPECT_SIMPLIFY(an, (i >= 4) || (i < 2), i < 2);
  EXPECT_SIMPLIFY(an, !(i < 2), i >= 2);
  EXPECT_SIMPLIFY(an, SelectNode::make(i < 4, x, y), x);
  EXPECT_SIMPLIFY(an, SelectNode::make(i < 2, x, x), x);
}

TEST(Simplify, FloatsAreOnlyFolded) {
  Analyzer an;
  Var x("x", DataType::Float(32)), y("y", DataType::Float(32));
  EXPECT_SIMPLIFY(an, AddNode::make(x, PrimExpr(0.0f)), x);
  EXPECT_SIMPLIFY(an, MulNode::make(PrimExpr(1.0f), x), x);
  PrimExpr e = (x + y) - y;  // no reassociation for floats
  EXPECT_SIMPLIFY(an, e, e);
  EXPECT_SIMPLIFY(an, AddNode::make(PrimExpr(1.5f), PrimExpr(2.0f)), PrimExpr(3.5f));
}

TEST(Simplify, NegatedComparisons) {
  // Integers: !(i < j) is i >= j. Floats: NaN makes every ordered comparison false, so
  // !(x > y) stays (x <= y would be false for a NaN); == and != negate each other exactly.
  Analyzer an;
  Var i("i"), j("j"), x("x", DataType::Float(32)), y("y", DataType::Float(32));
  EXPECT_SIMPLIFY(an, NotNode::make(LTNode::make(i, j)), GENode::make(i, j));
  EXPECT_SIMPLIFY(an, NotNode::make(GENode::make(i, j)), LTNode::make(i, j));
  EXPECT_SIMPLIFY(an, NotNode::make(GTNode::make(x, y)), NotNode::make(GTNode::make(x, y)));
  EXPECT_SIMPLIFY(an, NotNode::make(LENode::make(x, y)), NotNode::make(LENode::make(x, y)));
  EXPECT_SIMPLIFY(an, NotNode::make(EQNode::make(x, y)), NENode::make(x, y));
}

TEST(Simplify, VectorRampBroadcast) {
  Analyzer an;
  Var i("i");
  PrimExpr r = RampNode::make(i * 8, PrimExpr(1), 8);
  PrimExpr b = BroadcastNode::make(PrimExpr(3), 8);
  EXPECT_SIMPLIFY(an, AddNode::make(r, b), RampNode::make(i * 8 + 3, PrimExpr(1), 8));
  EXPECT_SIMPLIFY(an, MulNode::make(r, BroadcastNode::make(PrimExpr(2), 8)),
                  RampNode::make(i * 16, PrimExpr(2), 8));
  EXPECT_SIMPLIFY(an, RampNode::make(i, PrimExpr(0), 4), BroadcastNode::make(i, 4));
}

// A ramp whose lanes stay in one period of the divisor: floordiv is a broadcast, floormod a ramp
// (the NCHW32c -> NCHW16c layout_transform's load: contiguous, not a gather); one that may cross a
// period is left alone.
TEST(Simplify, RampDivModWithinOnePeriod) {
  Analyzer an;
  Var i("i"), j("j");
  auto c = [](int v, int lanes) { return BroadcastNode::make(PrimExpr(v), lanes); };
  PrimExpr r16 = RampNode::make(i * 16, PrimExpr(1), 16);
  EXPECT_SIMPLIFY(an, FloorDivNode::make(r16, c(32, 16)), BroadcastNode::make(FloorDivNode::make(i * 16, PrimExpr(32)), 16));
  EXPECT_SIMPLIFY(an, FloorModNode::make(r16, c(32, 16)),
                  RampNode::make(FloorModNode::make(i * 16, PrimExpr(32)), PrimExpr(1), 16));
  // i * 32 + j * 64 + 4: base mod 16 is 4, and 4 + 7 < 16.
  PrimExpr r8 = RampNode::make(i * 32 + j * 64 + 4, PrimExpr(1), 8);
  EXPECT_SIMPLIFY(an, FloorDivNode::make(r8, c(16, 8)), BroadcastNode::make(i * 2 + j * 4, 8));
  EXPECT_SIMPLIFY(an, FloorModNode::make(r8, c(16, 8)), RampNode::make(PrimExpr(4), PrimExpr(1), 8));
  // May cross: base mod 32 is 8 or 24 (8 + 15 >= 16), a stride of 2 over 16 lanes, an unknown stride.
  for (PrimExpr r : {RampNode::make(i * 16 + 8, PrimExpr(1), 16), RampNode::make(i * 16, PrimExpr(2), 16),
                     RampNode::make(i * 16, j, 16)}) {
    EXPECT_SIMPLIFY(an, FloorDivNode::make(r, c(32, 16)), FloorDivNode::make(r, c(32, 16)));
    EXPECT_SIMPLIFY(an, FloorModNode::make(r, c(32, 16)), FloorModNode::make(r, c(32, 16)));
  }
}

TEST(ConstIntBound, FromBindings) {
  Analyzer an;
  Var i("i"), j("j");
  an.Bind(i, Range(0, 16));
  an.Bind(j, 2, 5);
  IntBound b = an.ConstIntBound(i * 4 + j);
  EXPECT_EQ(b.min_value, 2);
  EXPECT_EQ(b.max_value, 65);
  b = an.ConstIntBound(floordiv(i, 4));
  EXPECT_EQ(b.min_value, 0);
  EXPECT_EQ(b.max_value, 3);
  b = an.ConstIntBound(floormod(i * 3 + j, 8));
  EXPECT_EQ(b.min_value, 0);
  EXPECT_EQ(b.max_value, 7);
  b = an.ConstIntBound(i - j);
  EXPECT_EQ(b.min_value, -5);
  EXPECT_EQ(b.max_value, 13);
  Var u("u", DataType::Int(64));
  EXPECT_EQ(an.ConstIntBound(u).max_value, IntBound::kPosInf);
  EXPECT_EQ(an.ConstIntBound(Var("w")).max_value, 2147483647);
}

TEST(Analyzer, CanProve) {
  Analyzer an;
  Var i("i"), n("n");
  an.Bind(i, Range(0, 16));
  EXPECT_TRUE(an.CanProveGreaterEqual(i, 0));
  EXPECT_FALSE(an.CanProveGreaterEqual(i - 1, 0));
  EXPECT_TRUE(an.CanProveGreaterEqual(15 - i, 0));
  EXPECT_TRUE(an.CanProve(i < 16));
  EXPECT_FALSE(an.CanProve(i < n));
  EXPECT_TRUE(an.CanProve(i * 2 + 1 != 0));
  an.Unbind(i);
  EXPECT_FALSE(an.CanProve(i < 16));
}

TEST(StructuralEqual, ExprsUpToRenaming) {
  Var x("x"), y("y"), z("z");
  EXPECT_TRUE(ExprStructuralEqual(x + 1, x + 1));
  EXPECT_FALSE(ExprStructuralEqual(x + 1, y + 1));
  EXPECT_TRUE(ExprStructuralEqual(x + 1, y + 1, /*map_free_vars=*/true));
  EXPECT_FALSE(ExprStructuralEqual(x + x, y + z, true));
  PrimExpr l1 = LetNode::make(y, x, y * 2), l2 = LetNode::make(z, x, z * 2);
  EXPECT_TRUE(ExprStructuralEqual(l1, l2));
  EXPECT_EQ(ExprStructuralHash(l1), ExprStructuralHash(l2));
  EXPECT_NE(ExprStructuralHash(x + 1), ExprStructuralHash(x + 2));
}

}  // namespace
}  // namespace tessera::arith
