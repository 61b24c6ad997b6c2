// The driver's pipeline: the JIT constant evaluator, zero-copy reshapes, the dump files of
// every step, and numerics unchanged by the graph passes (opt_level 3 vs 0) on a
// conv + batch_norm + relu model.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "driver_test_util.h"
#include "tessera/driver/build.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/driver/constant_evaluator.h"
#include "tessera/driver/graph_executor_codegen.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/fuse_ops.h"
#include "tessera/runtime/graph_executor.h"

namespace tessera::driver {
namespace {

using namespace tessera::graph;
using testing::F32;
using testing::Call;
using testing::Random;


TEST(ConstantEvaluator, EvaluatesAllExpressionsInOneBuild) {
  auto a = Random({4, 3}, 1), b = Random({4, 3}, 2);
  Expr sum = Call("add", {ConstantNode::make(a), ConstantNode::make(b)});
  Expr prod = Call("exp", {Call("multiply", {sum, ConstantNode::make(a)})});
  InferExprType(prod);
  auto values = MakeJITConstantEvaluator(BuildOptions{}, HostTarget())({sum, prod});
  ASSERT_EQ(values.size(), 2u);
  for (int i = 0; i < 12; ++i) {
    float s = a.data<float>()[i] + b.data<float>()[i];
    EXPECT_NEAR(values[0].data<float>()[i], s, 1e-6);
    EXPECT_NEAR(values[1].data<float>()[i], std::exp(s * a.data<float>()[i]), 1e-5);
  }
}

Function SoftmaxReshapeSoftmax(Var x) {
  Expr s = Call("nn.softmax", {x}, Attrs{{"axis", int64_t{1}}});
  Expr r = Call("reshape", {s}, Attrs{{"newshape", std::vector<int64_t>{4, 2}}});
  return FunctionNode::make({x}, Call("nn.softmax", {r}, Attrs{{"axis", int64_t{1}}}));
}

TEST(ZeroCopyReshape, ReshapeOnlyFunctionIsAnAliasWithoutKernel) {
  Var x = VarNode::make("x", F32({2, 4}));
  IRModule fused = InferType(transform::FuseOps(InferType(IRModule::FromMain(SoftmaxReshapeSoftmax(x)))));
  ExecutorPlan plan = GraphExecutorCodegen(fused, {"y"});
  EXPECT_EQ(plan.num_nodes, 2);
  auto j = nlohmann::json::parse(plan.graph_json);
  const auto& first = j["nodes"][0]["args"];
  const auto& second = j["nodes"][1]["args"];
  const auto& reshaped = j["values"][second[0].get<int>()];
  const auto& produced = j["values"][first[1].get<int>()];
  EXPECT_NE(second[0], first[1]);  // another value ...
  EXPECT_EQ(reshaped["storage"], produced["storage"]);  // ... over the same storage
  EXPECT_EQ(reshaped["offset_bytes"], 0);
  EXPECT_EQ(reshaped["shape"], (std::vector<int64_t>{4, 2}));
  // The second softmax does not write over the storage it reads through the alias.
  EXPECT_NE(j["values"][second[1].get<int>()]["storage"], produced["storage"]);

  runtime::GraphExecutor exec(BuildJIT(IRModule::FromMain(SoftmaxReshapeSoftmax(VarNode::make("x", F32({2, 4})))), {"y"}));
  EXPECT_EQ(exec.NumNodes(), 2);
  auto in = Random({2, 4}, 3);
  exec.SetInput("x", in);
  exec.Run();
  auto out = exec.GetOutput("y");
  std::vector<double> s(8);
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int c = 0; c < 4; ++c) z += std::exp(in.data<float>()[r * 4 + c]);
    for (int c = 0; c < 4; ++c) s[r * 4 + c] = std::exp(in.data<float>()[r * 4 + c]) / z;
  }
  for (int r = 0; r < 4; ++r) {
    double z = std::exp(s[r * 2]) + std::exp(s[r * 2 + 1]);
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(out.data<float>()[r * 2 + c], std::exp(s[r * 2 + c]) / z, 1e-5);
  }
}

/// conv2d -> batch_norm -> relu, NCHW.
IRModule ConvBatchNormRelu() {
  Var x = VarNode::make("x", F32({1, 3, 8, 8}));
  Expr conv = Call("nn.conv2d", {x, ConstantNode::make(Random({4, 3, 3, 3}, 4))},
                   Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                         {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{1}}});
  Expr bn = Call("nn.batch_norm",
                 {conv, ConstantNode::make(Random({4}, 5)), ConstantNode::make(Random({4}, 6)),
                  ConstantNode::make(Random({4}, 7)), ConstantNode::make(Random({4}, 8, 0.5f, 2.f))},
                 Attrs{{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  return IRModule::FromMain(FunctionNode::make({x}, Call("nn.relu", {bn})));
}

runtime::NDArray RunModel(const BuildOptions& options, const runtime::NDArray& in, int* nodes) {
  runtime::GraphExecutor exec(BuildJIT(ConvBatchNormRelu(), {"y"}, options));
  *nodes = exec.NumNodes();
  exec.SetInput("x", in);
  exec.Run();
  return exec.GetOutput("y");
}

TEST(Pipeline, GraphPassesKeepNumericsAndFoldBatchNormIntoConv) {
  auto in = Random({1, 3, 8, 8}, 9);
  BuildOptions o0, o3, o3_nchw;
  o0.opt_level = 0;
  o3.verify_ir = o3_nchw.verify_ir = true;
  // AlterOpLayout adds layout_transform kernels at the graph's boundaries; without it the
  // whole model is one kernel.
  o3_nchw.disabled_passes = {"AlterOpLayout"};
  int nodes0 = 0, nodes3 = 0, nodes3_nchw = 0;
  runtime::NDArray ref = RunModel(o0, in, &nodes0);
  EXPECT_EQ(nodes0, 4);  // conv, multiply, add (SimplifyInference runs at opt_level 0), relu
  for (const auto* o : {&o3, &o3_nchw}) {
    runtime::NDArray got = RunModel(*o, in, o == &o3 ? &nodes3 : &nodes3_nchw);
    for (int64_t i = 0; i < ref.NumElements(); ++i)
      EXPECT_NEAR(got.data<float>()[i], ref.data<float>()[i], 1e-4 + 1e-4 * std::abs(ref.data<float>()[i]));
  }
  EXPECT_LT(nodes3, nodes0);
  EXPECT_EQ(nodes3_nchw, 1);  // conv with the folded weights + shift + relu
}

TEST(Pipeline, DumpIRWritesEveryStepInOrder) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera_pipeline_dump";
  std::filesystem::remove_all(dir);
  BuildOptions o;
  o.dump_ir_dir = dir.string();
  o.disabled_passes = {"EliminateCommonSubexpr"};
  BuildJIT(ConvBatchNormRelu(), {"y"}, o);
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u);
  EXPECT_EQ(files.front(), "00_InferType.txt");
  EXPECT_EQ(files[1], "01_LegalizeLowPrecision.txt");
  EXPECT_EQ(files[2], "02_SimplifyInference.txt");
  EXPECT_EQ(files[3], "03_FoldConstant.txt");
  EXPECT_EQ(files[4], "04_FoldScaleAxis.txt");
  EXPECT_EQ(files[5], "05_FoldConstant.txt");
  EXPECT_EQ(files[6], "06_DeadCodeElimination.txt");  // EliminateCommonSubexpr disabled
  EXPECT_NE(std::find(files.begin(), files.end(), std::to_string(files.size() - 1) + "_CodegenLLVM.txt"), files.end());
  std::filesystem::remove_all(dir);
}

// Every TIR lowering step is a pass of its own: dumped after LowerPrimitiveFunctions, in
// LowerToFlat's order, each holding the kernels as they are after that step; a disabled
// optional TIR pass is skipped and the model still computes the same values.
TEST(Pipeline, TIRLoweringStepsAreDumpedOneByOne) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera_pipeline_dump_tir";
  std::filesystem::remove_all(dir);
  BuildOptions o;
  o.dump_ir_dir = dir.string();
  o.disabled_passes = {"LoopPartition"};
  auto in = Random({1, 3, 8, 8}, 4);
  int nodes = 0;
  runtime::NDArray got = RunModel(o, in, &nodes);
  std::vector<std::string> steps;  // pass names in run order (the NN_ prefix sorts them)
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  auto first = std::find_if(files.begin(), files.end(),
                            [](const std::string& f) { return f.find("_LowerPrimitiveFunctions.txt") != std::string::npos; });
  ASSERT_NE(first, files.end());
  for (auto it = std::next(first); it != files.end(); ++it) {
    std::string name = it->substr(it->find('_') + 1);
    steps.push_back(name.substr(0, name.size() - 4));
  }
  const std::vector<std::string> want = {"LowerStorageTypeCasts", "CompactBufferAllocation", "LowerInitBlock",
                                         "LowerBlocks", "FlattenBuffer", "Simplify", "Simplify", "VectorizeLoop",
                                         "UnrollLoop", "Simplify", "RemoveNoOp", "VerifyFlat", "CodegenLLVM"};
  EXPECT_EQ(steps, want);
  auto read = [&](const std::string& suffix) {
    auto it = std::find_if(files.begin(), files.end(), [&](const std::string& f) { return f.ends_with(suffix); });
    std::ifstream fs(dir / *it);
    return std::string(std::istreambuf_iterator<char>(fs), {});
  };
  // Blocks exist before LowerBlocks and are gone after it.
  EXPECT_NE(read("_LowerInitBlock.txt").find("with block("), std::string::npos);
  EXPECT_EQ(read("_LowerBlocks.txt").find("with block("), std::string::npos);
  BuildOptions o0;
  o0.opt_level = 0;
  runtime::NDArray ref = RunModel(o0, in, &nodes);
  for (int64_t i = 0; i < ref.NumElements(); ++i)
    EXPECT_NEAR(got.data<float>()[i], ref.data<float>()[i], 1e-4 + 1e-4 * std::abs(ref.data<float>()[i]));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::driver
