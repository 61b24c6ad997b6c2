#include <gtest/gtest.h>

#include "tessera/tir/functor.h"

namespace tessera::tir {
namespace {

using namespace tessera::ir;

TEST(Stmt, BuildFlatAddKernel) {
  Buffer a = Buffer::make("A", DataType::Float(32), {PrimExpr(16)});
  Buffer b = Buffer::make("B", DataType::Float(32), {PrimExpr(16)});
  Var i("i");
  Stmt body = ForNode::make(i, 0, 16, ForKind::kSerial,
                            BufferStoreNode::make(b, BufferLoadNode::make(a, {i}) + 1.0f, {i}));
  PrimFunc f = PrimFunc::make("add_one", {a, b}, body);
  EXPECT_EQ(f->params.size(), 2u);
  IRModule mod;
  mod.Add(f);
  EXPECT_TRUE(mod.Contains("add_one"));
  EXPECT_THROW(mod.Add(f), InternalError);
  EXPECT_STREQ(ForKindName(ForKind::kVectorized), "vectorized");
}

TEST(Stmt, MakeChecksArguments) {
  Buffer a = Buffer::make("A", DataType::Float(32), {PrimExpr(4), PrimExpr(4)});
  Var i("i");
  EXPECT_THROW(BufferStoreNode::make(a, PrimExpr(1.0f), {i, i, i}), InternalError);
  EXPECT_THROW(BufferStoreNode::make(a, PrimExpr(1), {i, i}), InternalError);
  EXPECT_THROW(ForNode::make(i, 0, make_const(DataType::Int(64), 4), ForKind::kSerial,
                             EvaluateNode::make(0)),
               InternalError);
  Stmt s = SeqStmtNode::make({EvaluateNode::make(0)});
  EXPECT_TRUE(s.as<EvaluateNode>());
  EXPECT_TRUE(is_const_int(a.OffsetOf({PrimExpr(2), PrimExpr(3)}), 11));
}

TEST(Functor, SubstituteReplacesVars) {
  Buffer a = Buffer::make("A", DataType::Float(32), {PrimExpr(16)});
  Var i("i"), j("j");
  Stmt s = BufferStoreNode::make(a, PrimExpr(0.0f), {i});
  Stmt t = Substitute(s, {{i.get_var(), j + 1}});
  auto* st = t.as<BufferStoreNode>();
  ASSERT_TRUE(st);
  EXPECT_TRUE(st->indices[0].as<AddNode>());
  EXPECT_TRUE(Substitute(s, {{j.get_var(), i}}).same_as(s));
}

}  // namespace
}  // namespace tessera::tir
