// MergeComposite: IR before -> IR expected after, on two conv blocks and a backend's patterns
// (the larger pattern first), with a check that refuses a match by its attrs.
#include <gtest/gtest.h>

#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/merge_composite.h"

namespace tessera::graph::transform {
namespace {

const DataType f32 = DataType::Float(32);

Constant Const(const std::vector<int64_t>& shape, float v) {
  runtime::NDArray a = runtime::NDArray::Empty(shape, f32);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = v;
  return ConstantNode::make(a);
}
Expr Op(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}
Attrs ConvAttrs(int64_t groups) { return Attrs{{"padding", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", groups}}; }

struct Weights {
  Constant w1 = Const({8, 8, 3, 3}, 0.5f), b1 = Const({8}, 1.f), w2 = Const({8, 8, 3, 3}, 0.25f), b2 = Const({8}, 2.f);
  Constant wd = Const({8, 1, 3, 3}, 0.1f);
};

std::vector<CompositePattern> DnnlPatterns() {
  auto conv = IsOp("nn.conv2d")({Wildcard(), IsConstant()});
  auto bias = IsOp("nn.bias_add")({conv, IsConstant()});
  auto only_dense_conv = [](const Expr&, const PatternMatcher& m) {
    for (const Expr& c : m.covered())
      if (const auto* call = c->as<CallNode>())
        if (call->attrs.GetInt("groups", 1) != 1) return false;
    return true;
  };
  return {{"dnnl.conv2d_bias_relu", IsOp("nn.relu")({bias}), only_dense_conv},
          {"dnnl.conv2d_bias", bias, only_dense_conv}};
}

// The expected composite call: fn(p0, p1, p2){ body(p0, p1, p2) } (in, w, b).
Expr Composite(const std::string& name, const std::string& from, Expr in, Constant w, Constant b, bool relu) {
  std::vector<Var> p = {VarNode::make("p0", TensorTypeNode::make(std::vector<int64_t>{1, 8, 16, 16}, f32)),
                        VarNode::make("p1", TensorTypeNode::make(std::vector<int64_t>{8, 8, 3, 3}, f32)),
                        VarNode::make("p2", TensorTypeNode::make(std::vector<int64_t>{8}, f32))};
  Expr body = Op("nn.bias_add", {Op("nn.conv2d", {p[0], p[1]}, ConvAttrs(1)), p[2]}, Attrs{{"axis", 1}});
  if (relu) body = Op("nn.relu", {body});
  return CallNode::make(FunctionNode::make(p, body, nullptr, Attrs{{"Composite", name}, {"PartitionedFromPattern", from}}),
                        {in, w, b});
}

TEST(MergeComposite, OutlinesEachBlockWithTheLargestPatternThatFits) {
  Weights k;
  Var x = VarNode::make("x", TensorTypeNode::make(std::vector<int64_t>{1, 8, 16, 16}, f32));
  Expr c1 = Op("nn.relu", {Op("nn.bias_add", {Op("nn.conv2d", {x, k.w1}, ConvAttrs(1)), k.b1}, Attrs{{"axis", 1}})});
  Expr c2 = Op("nn.bias_add", {Op("nn.conv2d", {c1, k.w2}, ConvAttrs(1)), k.b2}, Attrs{{"axis", 1}});
  // A depthwise conv + bias: refused by the check, left as it is.
  Expr dw = Op("nn.bias_add", {Op("nn.conv2d", {c2, k.wd}, ConvAttrs(8)), k.b2}, Attrs{{"axis", 1}});
  IRModule before = IRModule::FromMain(FunctionNode::make({x}, dw));

  IRModule after = MergeComposite(before, DnnlPatterns());

  Expr e1 = Composite("dnnl.conv2d_bias_relu", "nn.conv2d_nn.bias_add_nn.relu_", x, k.w1, k.b1, true);
  Expr e2 = Composite("dnnl.conv2d_bias", "nn.conv2d_nn.bias_add_", e1, k.w2, k.b2, false);
  Expr edw = Op("nn.bias_add", {Op("nn.conv2d", {e2, k.wd}, ConvAttrs(8)), k.b2}, Attrs{{"axis", 1}});
  IRModule want = InferType(IRModule::FromMain(FunctionNode::make({x}, edw)));
  EXPECT_EQ(PrintModule(after), PrintModule(want));
  EXPECT_NE(PrintModule(after).find("Composite=\"dnnl.conv2d_bias_relu\""), std::string::npos) << PrintModule(after);
}

TEST(MergeComposite, NoMatchLeavesTheModuleAsItWas) {
  Var x = VarNode::make("x", TensorTypeNode::make(std::vector<int64_t>{1, 8, 16, 16}, f32));
  IRModule before = InferType(IRModule::FromMain(FunctionNode::make({x}, Op("nn.relu", {x}))));
  EXPECT_EQ(PrintModule(MergeComposite(before, DnnlPatterns())), PrintModule(before));
}

// scalars_inside: the one-element constant (an epsilon) stays in the body; the [8] constant and the
// input become parameters. Without it, both constants are parameters.
TEST(MergeComposite, ScalarsInsideKeepsOneElementConstantsInTheBody) {
  Var x = VarNode::make("x", TensorTypeNode::make(std::vector<int64_t>{1, 8}, f32));
  Constant eps = Const({}, 1e-5f), gamma = Const({8}, 2.f);
  auto make = [&](Expr in) { return Op("multiply", {Op("sqrt", {Op("add", {in, eps})}), gamma}); };
  IRModule before = IRModule::FromMain(FunctionNode::make({x}, make(x)));
  DFPattern pattern = IsOp("multiply")({IsOp("sqrt")({IsOp("add")({Wildcard(), IsConstant()})}), IsConstant()});

  IRModule after = MergeComposite(before, {{"b.unit", pattern, nullptr, /*scalars_inside=*/true}});

  std::vector<Var> p = {VarNode::make("p0", TensorTypeNode::make(std::vector<int64_t>{1, 8}, f32)),
                        VarNode::make("p2", TensorTypeNode::make(std::vector<int64_t>{8}, f32))};
  Expr body = Op("multiply", {Op("sqrt", {Op("add", {p[0], eps})}), p[1]});
  Attrs attrs{{"Composite", std::string("b.unit")}, {"PartitionedFromPattern", std::string("add_sqrt_multiply_")}};
  IRModule want = InferType(
      IRModule::FromMain(FunctionNode::make({x}, CallNode::make(FunctionNode::make(p, body, nullptr, attrs), {x, gamma}))));
  EXPECT_EQ(PrintModule(after), PrintModule(want));

  const std::string params = PrintModule(MergeComposite(before, {{"b.unit", pattern}}));
  EXPECT_NE(params.find("%p2: Tensor[(8,), float32]"), std::string::npos) << params;
  EXPECT_NE(params.find("%p1: Tensor[(), float32]"), std::string::npos) << params;
}

}  // namespace
}  // namespace tessera::graph::transform
