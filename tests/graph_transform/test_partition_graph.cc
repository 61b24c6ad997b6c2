// AnnotateTarget -> MergeCompilerRegions -> PartitionGraph: IR before -> IR expected after each,
// on conv -> relu -> exp -> add where exp is unsupported (merging add into the conv's region would
// make a cycle through exp), and a region two of whose values leave it.
#include <gtest/gtest.h>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/transform/alter_op_layout.h"
#include "tessera/graph/transform/fuse_ops.h"
#include "tessera/graph/transform/partition_graph.h"

namespace tessera::graph::transform {
namespace {

const DataType f32 = DataType::Float(32);

Expr Op(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}
Expr Begin(Expr x) { return Op("annotation.compiler_begin", {std::move(x)}, Attrs{{"compiler", "test"}}); }
Expr End(Expr x) { return Op("annotation.compiler_end", {std::move(x)}, Attrs{{"compiler", "test"}}); }
Type T(std::vector<int64_t> s) { return TensorTypeNode::make(std::move(s), f32); }

Constant Weight() {
  runtime::NDArray a = runtime::NDArray::Empty({4, 4, 3, 3}, f32);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = 0.01f * static_cast<float>(i % 7);
  return ConstantNode::make(a);
}
const Attrs kConv{{"padding", std::vector<int64_t>{1, 1, 1, 1}}};

// "test" runs conv2d, relu and add; not exp.
std::vector<ExternalBackend> Backends() {
  return {{"test", [](const CallNode& c) {
             const std::string& op = c.op->as<OpNode>()->name;
             return op == "nn.conv2d" || op == "nn.relu" || op == "add";
           }}};
}

struct Model {
  Var x = VarNode::make("x", T({1, 4, 8, 8}));
  Constant w = Weight();
  IRModule Before() const {
    Expr relu = Op("nn.relu", {Op("nn.conv2d", {x, w}, kConv)});
    return IRModule::FromMain(FunctionNode::make({x}, Op("add", {relu, Op("exp", {relu})})));
  }
};

std::string Text(const IRModule& m) { return PrintModule(InferType(m)); }

TEST(PartitionGraph, AnnotateMergeAndOutline) {
  Model m;
  IRModule annotated = AnnotateTarget(m.Before(), Backends());
  {
    Expr conv = End(Op("nn.conv2d", {Begin(m.x), Begin(m.w)}, kConv));
    Expr relu = End(Op("nn.relu", {Begin(conv)}));
    Expr add = End(Op("add", {Begin(relu), Begin(Op("exp", {relu}))}));
    EXPECT_EQ(PrintModule(annotated), Text(IRModule::FromMain(FunctionNode::make({m.x}, add))));
  }
  IRModule merged = MergeCompilerRegions(annotated);
  {
    // conv and relu join one region; add may not (its other input, exp, depends on that region).
    Expr relu = End(Op("nn.relu", {Op("nn.conv2d", {Begin(m.x), Begin(m.w)}, kConv)}));
    Expr add = End(Op("add", {Begin(relu), Begin(Op("exp", {relu}))}));
    EXPECT_EQ(PrintModule(merged), Text(IRModule::FromMain(FunctionNode::make({m.x}, add))));
  }
  IRModule parts = PartitionGraph(merged);
  {
    Var i0 = VarNode::make("test_0_i0", T({1, 4, 8, 8})), i1 = VarNode::make("test_0_i1", T({4, 4, 3, 3}));
    Function f0 = FunctionNode::make({i0, i1}, Op("nn.relu", {Op("nn.conv2d", {i0, i1}, kConv)}), nullptr,
                                     Attrs{{"Compiler", "test"}, {"global_symbol", "test_0"}});
    Expr r0 = CallNode::make(f0, {m.x, m.w});
    Var a0 = VarNode::make("test_1_i0", T({1, 4, 8, 8})), a1 = VarNode::make("test_1_i1", T({1, 4, 8, 8}));
    Function f1 = FunctionNode::make({a0, a1}, Op("add", {a0, a1}), nullptr,
                                     Attrs{{"Compiler", "test"}, {"global_symbol", "test_1"}});
    Expr r1 = CallNode::make(f1, {r0, Op("exp", {r0})});
    EXPECT_EQ(PrintModule(parts), Text(IRModule::FromMain(FunctionNode::make({m.x}, r1))));
  }
  EXPECT_EQ(PrintModule(parts).find("annotation."), std::string::npos);
}

// conv -> relu in one region, with both the conv's and the relu's values used outside: the
// region returns a tuple and its users read their field.
TEST(PartitionGraph, ARegionWithTwoOutputsReturnsATuple) {
  Model m;
  Expr conv = Op("nn.conv2d", {m.x, m.w}, kConv);
  Expr relu = Op("nn.relu", {conv});
  IRModule before = IRModule::FromMain(FunctionNode::make({m.x}, TupleNode::make({relu, Op("exp", {conv})})));
  IRModule parts = PartitionGraph(MergeCompilerRegions(AnnotateTarget(before, Backends())));
  Var i0 = VarNode::make("test_0_i0", T({1, 4, 8, 8})), i1 = VarNode::make("test_0_i1", T({4, 4, 3, 3}));
  Expr c = Op("nn.conv2d", {i0, i1}, kConv);
  // Results in the post-order of their compiler_end: the relu's (first tuple field) before the conv's.
  Function f0 = FunctionNode::make({i0, i1}, TupleNode::make({Op("nn.relu", {c}), c}), nullptr,
                                   Attrs{{"Compiler", "test"}, {"global_symbol", "test_0"}});
  Expr r0 = CallNode::make(f0, {m.x, m.w});
  Expr want = TupleNode::make({TupleGetItemNode::make(r0, 0), Op("exp", {TupleGetItemNode::make(r0, 1)})});
  EXPECT_EQ(PrintModule(parts), Text(IRModule::FromMain(FunctionNode::make({m.x}, want))));
}

TEST(PartitionGraph, NothingSupportedLeavesTheModuleAsItWas) {
  Model m;
  IRModule before = InferType(m.Before());
  std::vector<ExternalBackend> none = {{"test", [](const CallNode&) { return false; }}};
  EXPECT_EQ(PrintModule(PartitionGraph(MergeCompilerRegions(AnnotateTarget(before, none)))), PrintModule(before));
}

// After PartitionGraph, external functions are opaque (graph/functor.h): AlterOpLayout and FuseOps
// keep each one (the same node, body in NCHW) called directly from main, and fuse only the rest.
TEST(PartitionGraph, LaterPassesLeaveExternalFunctionsAlone) {
  Var x = VarNode::make("x", T({1, 16, 8, 8}));
  runtime::NDArray wa = runtime::NDArray::Empty({16, 16, 3, 3}, f32);
  for (int64_t i = 0; i < wa.NumElements(); ++i) wa.data<float>()[i] = 0.001f * static_cast<float>(i % 11);
  Constant w = ConstantNode::make(wa);
  Expr relu = Op("nn.relu", {Op("nn.conv2d", {x, w}, kConv)});
  IRModule before = IRModule::FromMain(FunctionNode::make({x}, Op("add", {relu, Op("exp", {relu})})));
  // Unpartitioned, AlterOpLayout blocks the conv.
  ASSERT_NE(PrintModule(AlterOpLayout(before, AlterOpLayoutOptions{8})).find("NCHWc"), std::string::npos);
  IRModule parts = PartitionGraph(MergeCompilerRegions(AnnotateTarget(before, Backends())));
  auto externals = [](const IRModule& mod) {
    std::vector<const FunctionNode*> out;
    PostOrderVisit(mod.main()->body, [&](const Expr& e) {
      if (const auto* f = e->as<FunctionNode>(); f && IsExternalFunction(*f)) out.push_back(f);
    });
    return out;
  };
  const std::vector<const FunctionNode*> ext = externals(parts);
  ASSERT_EQ(ext.size(), 2u);
  IRModule fused = FuseOps(AlterOpLayout(parts, AlterOpLayoutOptions{8}));
  EXPECT_EQ(externals(fused), ext);  // the very same function nodes
  // main calls: the two external functions directly and one primitive function (exp) between them.
  int primitive = 0, external = 0;
  PostOrderVisit(fused.main()->body, [&](const Expr& e) {
    const auto* c = e->as<CallNode>();
    const auto* f = c ? c->op->as<FunctionNode>() : nullptr;
    if (!f) return;
    if (IsExternalFunction(*f)) ++external;
    if (f->attrs.GetInt("Primitive", 0) == 1) ++primitive;
  });
  EXPECT_EQ(external, 2);
  EXPECT_EQ(primitive, 1);
  // The conv inside stays NCHW (AlterOpLayout would have made it nn.contrib_conv2d_NCHWc).
  EXPECT_EQ(PrintExpr(ext[0]->body).find("NCHWc"), std::string::npos);
}

}  // namespace
}  // namespace tessera::graph::transform
