// The dataflow pattern language: every construct matching and not matching, bindings and
// backtracking, Dominates' closedness, RewritePatterns to a fixpoint, and PartitionPattern's
// outlined functions (IR text before -> after).
#include <gtest/gtest.h>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/pattern.h"
#include "tessera/graph/pattern_matcher.h"
#include "tessera/graph/pattern_rewrite.h"
#include "tessera/graph/printer.h"
#include "tessera/support/error.h"
#include "test_util.h"

namespace tessera::graph {
namespace {

using testing::CallOp;
using testing::ConstF32;
using testing::F32;

Var X(const std::string& name = "x", std::vector<Dim> shape = {1, 4, 8, 8}) { return VarNode::make(name, F32(shape)); }

// conv2d(x, w) -> bias_add(., b) -> relu, typed.
struct ConvBiasRelu {
  Var x = X();
  Constant w = ConstF32({4, 4, 3, 3}, 0.5f), b = ConstF32({4}, 1.f);
  Expr conv = CallOp("nn.conv2d", {x, w}, Attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", 1}});
  Expr bias = CallOp("nn.bias_add", {conv, b}, Attrs{{"axis", 1}});
  Expr relu = CallOp("nn.relu", {bias});
  ConvBiasRelu() { InferExprType(relu); }
};

TEST(Pattern, LeavesAndCalls) {
  ConvBiasRelu g;
  EXPECT_TRUE(MatchPattern(Wildcard(), g.relu));
  EXPECT_TRUE(MatchPattern(IsVar("x"), g.x));
  EXPECT_FALSE(MatchPattern(IsVar("y"), g.x));
  EXPECT_TRUE(MatchPattern(IsVar(), g.x));
  EXPECT_TRUE(MatchPattern(IsConstant(), g.w));
  EXPECT_FALSE(MatchPattern(IsConstant(), g.x));
  EXPECT_TRUE(MatchPattern(IsExpr(g.conv), g.conv));
  EXPECT_FALSE(MatchPattern(IsExpr(g.conv), g.bias));
  auto conv = IsOp("nn.conv2d")({Wildcard(), IsConstant()});
  EXPECT_TRUE(MatchPattern(IsOp("nn.relu")({IsOp("nn.bias_add")({conv, IsConstant()})}), g.relu));
  EXPECT_FALSE(MatchPattern(IsOp("nn.relu")({conv}), g.relu));          // bias_add in between
  EXPECT_FALSE(MatchPattern(IsOp("nn.conv2d")({IsConstant(), Wildcard()}), g.conv));  // argument order
  EXPECT_TRUE(MatchPattern(IsOp("nn.bias_add")(), g.bias));              // any arguments
  EXPECT_EQ(PatternStr(IsOp("nn.relu")({conv | IsOp("add")()})), "nn.relu((nn.conv2d(*, const) | add(...)))");
  EXPECT_THROW(IsOp("no.such_op"), InternalError);
}

TEST(Pattern, AWildcardUsedTwiceMatchesOneNode) {
  Var x = X(), y = X("y");
  Expr xx = CallOp("add", {x, x}), xy = CallOp("add", {x, y});
  DFPattern w = Wildcard();
  EXPECT_TRUE(MatchPattern(IsOp("add")({w, w}), xx));
  EXPECT_FALSE(MatchPattern(IsOp("add")({w, w}), xy));
  EXPECT_TRUE(MatchPattern(IsOp("add")({Wildcard(), Wildcard()}), xy));
}

TEST(Pattern, AlternativesBacktrackTheirBindings) {
  Var x = X(), y = X("y");
  Expr e = CallOp("multiply", {CallOp("nn.relu", {x}), y});
  DFPattern w = Wildcard();
  // The left branch binds w to relu(x) and then fails on the second argument; the right branch
  // must start with w unbound.
  DFPattern p = IsOp("multiply")({w, IsVar("z")}) | IsOp("multiply")({IsOp("nn.relu")({w}), IsVar("y")});
  PatternMatcher m(e);
  ASSERT_TRUE(m.Match(p, e));
  EXPECT_EQ(m.bindings().at(w.get()), x);
}

TEST(Pattern, AttrTypeShapeAndDType) {
  ConvBiasRelu g;
  auto conv = IsOp("nn.conv2d")({Wildcard(), Wildcard()});
  EXPECT_TRUE(MatchPattern(HasAttr(conv, Attrs{{"groups", 1}}), g.conv));
  EXPECT_FALSE(MatchPattern(HasAttr(conv, Attrs{{"groups", 2}}), g.conv));
  EXPECT_FALSE(MatchPattern(HasAttr(conv, Attrs{{"no_such_attr", 1}}), g.conv));
  EXPECT_TRUE(MatchPattern(HasShape(conv, {1, 4, -1, -1}), g.conv));
  EXPECT_FALSE(MatchPattern(HasShape(conv, {1, 8, -1, -1}), g.conv));
  EXPECT_TRUE(MatchPattern(HasDType(conv, DataType::Float(32)), g.conv));
  EXPECT_FALSE(MatchPattern(HasDType(conv, DataType::Float(64)), g.conv));
  EXPECT_TRUE(MatchPattern(HasType(conv, F32({1, 4, 8, 8})), g.conv));
  EXPECT_FALSE(MatchPattern(HasType(conv, F32({1, 4, 8, 9})), g.conv));
  // Untyped: type patterns do not match.
  Expr untyped = CallOp("nn.relu", {X()});
  EXPECT_FALSE(MatchPattern(HasDType(IsOp("nn.relu")(), DataType::Float(32)), untyped));
}

TEST(Pattern, OptionalTakesTheLongerFormFirst) {
  ConvBiasRelu g;
  auto conv = IsOp("nn.conv2d")({Wildcard(), Wildcard()});
  auto bias = IsOp("nn.bias_add")({conv, Wildcard()});
  auto p = Optional(bias, [](const DFPattern& x) { return IsOp("nn.relu")({x}); });
  EXPECT_TRUE(MatchPattern(p, g.relu));
  EXPECT_TRUE(MatchPattern(p, g.bias));
  EXPECT_FALSE(MatchPattern(p, g.conv));
}

TEST(Pattern, TupleAndTupleGetItem) {
  Var a = X("a"), b = X("b");
  Expr t = TupleNode::make({a, b});
  Expr get = TupleGetItemNode::make(t, 1);
  EXPECT_TRUE(MatchPattern(IsTuple({IsVar("a"), IsVar("b")}), t));
  EXPECT_FALSE(MatchPattern(IsTuple({IsVar("a")}), t));
  EXPECT_TRUE(MatchPattern(IsTupleGetItem(IsTuple({Wildcard(), Wildcard()}), 1), get));
  EXPECT_FALSE(MatchPattern(IsTupleGetItem(Wildcard(), 0), get));
  EXPECT_TRUE(MatchPattern(IsTupleGetItem(Wildcard()), get));
}

// conv -> add(., bias) -> relu, an elementwise chain hanging off one conv: dominated. When the
// add's result is also used elsewhere, the region escapes: no match.
TEST(Pattern, DominatesAnElementwiseChainWithNoEscapingUse) {
  Var x = X();
  Expr conv = CallOp("nn.conv2d", {x, ConstF32({4, 4, 3, 3})}, Attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
  Expr add = CallOp("add", {conv, ConstF32({1, 4, 1, 1})});
  Expr relu = CallOp("nn.relu", {add});
  auto elemwise = IsOp("add")({Wildcard(), Wildcard()}) | IsOp("nn.relu")({Wildcard()});
  DFPattern d = Dominates(IsOp("nn.conv2d")({Wildcard(), Wildcard()}), elemwise, IsOp("nn.relu")({Wildcard()}));
  PatternMatcher m(relu);
  ASSERT_TRUE(m.Match(d, relu));
  EXPECT_EQ(m.covered().size(), 3u);  // relu, add, conv
  EXPECT_EQ(m.Inputs().size(), 3u);   // the bias constant, x and the weight
  // add escapes: used by relu and by the tuple.
  Expr both = TupleNode::make({relu, add});
  PatternMatcher m2(both);
  EXPECT_FALSE(m2.Match(d, relu));
  // Two producers (conv + conv) for one child: not one dominator.
  Expr conv2 = CallOp("nn.conv2d", {x, ConstF32({4, 4, 3, 3}, 2.f)}, Attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
  Expr two = CallOp("nn.relu", {CallOp("add", {conv, conv2})});
  EXPECT_FALSE(MatchPattern(d, two));
}

TEST(PatternRewrite, RewritesToAFixpoint) {
  // relu(relu(relu(x))) -> relu(x): each round removes one level.
  Var x = X();
  Expr e = CallOp("nn.relu", {CallOp("nn.relu", {CallOp("nn.relu", {x})})});
  DFPattern inner = IsOp("nn.relu")({Wildcard()});
  PatternRewrite rule{IsOp("nn.relu")({inner}), [inner](const Expr&, const PatternMatcher& m) {
                        return m.bindings().at(inner.get());
                      }};
  Expr out = RewritePatterns({rule}, e);
  EXPECT_EQ(PrintExpr(out), PrintExpr(CallOp("nn.relu", {x})));
  // A rule that never converges is an InternalError, not a hang.
  PatternRewrite grow{IsOp("nn.relu")({Wildcard()}), [](const Expr& n, const PatternMatcher&) {
                        return CallOp("nn.relu", {n});
                      }};
  EXPECT_THROW(RewritePatterns({grow}, CallOp("nn.relu", {x}), 5), InternalError);
}

TEST(PatternPartition, OutlinesTheMatchIntoAFunctionCalledInItsPlace) {
  ConvBiasRelu g;
  auto conv = IsOp("nn.conv2d")({Wildcard(), IsConstant()});
  auto p = IsOp("nn.relu")({IsOp("nn.bias_add")({conv, IsConstant()})});
  Expr out = PartitionPattern(p, g.relu, Attrs{{"Composite", "test.conv_bias_relu"}});
  const auto* call = out->as<CallNode>();
  ASSERT_NE(call, nullptr);
  const auto* fn = call->op->as<FunctionNode>();
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->attrs.GetString("Composite"), "test.conv_bias_relu");
  EXPECT_EQ(fn->attrs.GetString("PartitionedFromPattern"), "nn.conv2d_nn.bias_add_nn.relu_");
  ASSERT_EQ(call->args.size(), 3u);  // x, w, b in first-match order
  EXPECT_EQ(call->args[0], g.x);
  EXPECT_EQ(call->args[1], g.w);
  EXPECT_EQ(call->args[2], g.b);
  ASSERT_EQ(fn->params.size(), 3u);
  EXPECT_TRUE(StructuralEqual(fn->params[0]->type_annotation, F32({1, 4, 8, 8})));
  // The body is the chain on the params; the whole thing types as before.
  EXPECT_EQ(PrintExpr(fn->body), PrintExpr(CallOp(
                                     "nn.relu", {CallOp("nn.bias_add",
                                                        {CallOp("nn.conv2d", {fn->params[0], fn->params[1]},
                                                                Attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}},
                                                                      {"groups", 1}}),
                                                         fn->params[2]},
                                                        Attrs{{"axis", 1}})})));
  EXPECT_TRUE(StructuralEqual(InferExprType(out), g.relu->checked_type()));
}

TEST(PatternPartition, SkipsEscapingOverlappingAndRefusedMatches) {
  ConvBiasRelu g;
  auto conv = IsOp("nn.conv2d")({Wildcard(), Wildcard()});
  auto p = IsOp("nn.bias_add")({conv, Wildcard()});
  // The conv is also an output: outlining conv + bias_add would compute it twice.
  Expr escaping = TupleNode::make({g.bias, g.conv});
  EXPECT_EQ(PartitionPattern(p, escaping), escaping);  // unchanged: the same graph
  // A check may refuse.
  EXPECT_EQ(PartitionPattern(p, g.relu, {}, [](const Expr&, const PatternMatcher&) { return false; }), g.relu);
  // Two relus in a row with the pattern relu(relu(*)): the outer match wins, the inner is not
  // outlined again (overlap).
  Var x = X();
  Expr chain = CallOp("nn.relu", {CallOp("nn.relu", {CallOp("nn.relu", {x})})});
  Expr out = PartitionPattern(IsOp("nn.relu")({IsOp("nn.relu")({Wildcard()})}), chain);
  const auto* call = out->as<CallNode>();
  ASSERT_TRUE(call && call->op->as<FunctionNode>());
  ASSERT_EQ(call->args.size(), 1u);
  const auto* inner = call->args[0]->as<CallNode>();  // relu(%x), left as it was
  ASSERT_TRUE(inner && inner->op->as<OpNode>() && inner->op->as<OpNode>()->name == "nn.relu");
  EXPECT_EQ(inner->args[0], x);
}

}  // namespace
}  // namespace tessera::graph
