#include <gtest/gtest.h>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "test_util.h"

namespace tessera::graph {
namespace {

using testing::CallOp;
using testing::F32;

class CallCounter : public ExprVisitor {
 public:
  int calls = 0, vars = 0;

 protected:
  void VisitCall_(const CallNode* op) override {
    ++calls;
    ExprVisitor::VisitCall_(op);
  }
  void VisitVar_(const VarNode*) override { ++vars; }
};

// A diamond: exp(x) is used twice but must be visited once.
TEST(Functor, VisitorVisitsSharedNodesOnce) {
  Var x = VarNode::make("x", F32({4}));
  Expr e = CallOp("exp", {x});
  Expr d = CallOp("add", {CallOp("sigmoid", {e}), CallOp("tanh", {e})});
  CallCounter c;
  c.VisitExpr(d);
  EXPECT_EQ(c.calls, 4);
  EXPECT_EQ(c.vars, 1);
  int n = 0;
  PostOrderVisit(d, [&](const Expr&) { ++n; });
  EXPECT_EQ(n, 9);  // 4 calls, 4 op nodes (exp, sigmoid, tanh, add), 1 var
}

// Rewrites relu(x) into clip(x, 0, 6); everything else keeps its identity.
class ReluToRelu6 : public ExprMutator {
 protected:
  Expr MutateCall_(const Call& op) override {
    Expr base = ExprMutator::MutateCall_(op);
    auto call = Downcast<CallNode>(base);
    auto* o = call->op->as<OpNode>();
    if (o && o->name == "nn.relu") return CallOp("clip", call->args, Attrs{{"a_min", 0.0}, {"a_max", 6.0}});
    return base;
  }
};

TEST(Functor, MutatorRewritesAndPreservesSharing) {
  Var x = VarNode::make("x", F32({4}));
  Expr untouched = CallOp("exp", {x});
  Expr r = CallOp("nn.relu", {untouched});
  Expr out = CallOp("add", {r, r});
  ReluToRelu6 m;
  Expr got = m.Mutate(out);
  auto call = Downcast<CallNode>(got);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->args[0], call->args[1]);  // the shared relu became one shared clip
  EXPECT_EQ(Downcast<CallNode>(call->args[0])->args[0], untouched);  // unchanged subtree kept
  EXPECT_EQ(PrintExpr(got),
            "%0 = exp(%x);\n"
            "%1 = clip(%0, a_min=0f, a_max=6f);\n"
            "add(%1, %1)");
  // An identity mutator returns the very same node.
  ExprMutator id;
  EXPECT_EQ(id.Mutate(out), out);
  InferExprType(got);
  EXPECT_EQ(got->checked_type()->str(), "Tensor[(4,), float32]");
}

}  // namespace
}  // namespace tessera::graph
