// AlterOpLayout's NCHWc block as a tuner knob (graph_lower::kLayoutBlockKnob, tune/rewrite_choice.h):
// offered where the conv's register tile takes blocks of two vectors (AVX-512: 16 or 32 channels)
// and not on AVX2; a model blocked by 32 (convs, a depthwise and a grouped conv, pooling, a residual
// add, channels that 32 does not divide) matches the same model built without layout rewrites; a
// build with a database takes the block decision where the host offers the knob. The wide block of
// wide convs among narrow ones (graph_lower::kWideBlockMinChannels) matches too, and its threshold is
// a knob only for a model with a wide conv.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "driver_test_util.h"
#include "tessera/codegen/run_tool.h"
#include "tessera/driver/build.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/graph/transform/alter_op_layout.h"
#include "tessera/graph_lower/op_strategy.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/topi/x86/conv2d_nchwc.h"

namespace tessera {
namespace {

using namespace tessera::graph;
using driver::testing::Call;
using driver::testing::ConvAttrs;
using driver::testing::F32;
using driver::testing::Random;

// x [1, 48, 14, 14]: conv3x3 48 -> 48, relu, depthwise 3x3, grouped 3x3 (4 groups of 12), + x,
// max-pool 2x2, conv3x3 48 -> 40 stride 2.
IRModule Model() {
  const std::vector<int64_t> pad = {1, 1, 1, 1};
  Var x = VarNode::make("x", F32({1, 48, 14, 14}));
  Expr a = Call("nn.relu", {Call("nn.conv2d", {x, ConstantNode::make(Random({48, 48, 3, 3}, 1, -0.2f, 0.2f))},
                                 ConvAttrs(1, pad))});
  Expr d = Call("nn.conv2d", {a, ConstantNode::make(Random({48, 1, 3, 3}, 2))}, ConvAttrs(1, pad, 48));
  Expr g = Call("nn.conv2d", {d, ConstantNode::make(Random({48, 12, 3, 3}, 3, -0.3f, 0.3f))}, ConvAttrs(1, pad, 4));
  Expr p = Call("nn.max_pool2d", {Call("add", {g, x})},
                Attrs{{"pool_size", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                      {"padding", std::vector<int64_t>{0, 0, 0, 0}}});
  Expr y = Call("nn.conv2d", {p, ConstantNode::make(Random({40, 48, 3, 3}, 4, -0.2f, 0.2f))}, ConvAttrs(2, pad));
  return IRModule::FromMain(FunctionNode::make({x}, y));
}

runtime::NDArray RunModel(const runtime::Module& lib, const runtime::NDArray& in) {
  runtime::GraphExecutor exec(lib, 2);
  exec.SetInput("x", in);
  exec.Run();
  return exec.GetOutput("y");
}

double MaxDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.NumElements(); ++i) m = std::max(m, std::fabs(double(a.data<float>()[i]) - b.data<float>()[i]));
  return m;
}

TEST(LayoutBlockKnob, OfferedWhereTwoVectorBlocksHaveARegisterTile) {
  EXPECT_EQ(topi::x86::LayoutBlockCandidates(driver::ResolveTarget("avx512")), (std::vector<int64_t>{16, 32}));
  EXPECT_TRUE(topi::x86::LayoutBlockCandidates(driver::ResolveTarget("avx2")).empty());  // 4 ymm: no tile in 16
  EXPECT_TRUE(topi::x86::LayoutBlockCandidates(driver::ResolveTarget("aarch64")).empty());
}

// ExtractTasks for AVX-512 (nothing runs): the block knob with every kernel of the block-32 build
// as its own (nothing is shared: every kernel's layout changes); none for AVX2.
TEST(LayoutBlockKnob, ExtractTasksBuildsTheModelAtEveryBlock) {
  driver::BuildOptions options;
  options.target = "avx512";
  std::vector<tune::RewriteChoice> choices;
  const std::vector<tune::TuneTask> tasks = driver::ExtractTasks(Model(), {"y"}, options, &choices);
  const tune::RewriteChoice* block = nullptr;
  for (const tune::RewriteChoice& c : choices)
    if (c.knob == graph_lower::kLayoutBlockKnob) block = &c;
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->candidates, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(block->fallback, 16);
  ASSERT_EQ(block->kernels.size(), 2u);
  EXPECT_FALSE(block->kernels.at(32).empty());
  int labelled = 0;
  for (const tune::TuneTask& t : tasks) {
    if (t.rewrite == std::string(graph_lower::kLayoutBlockKnob) + "=32") {
      ++labelled;
      EXPECT_TRUE(block->kernels.at(32).count(t.workload_hash)) << t.name;
    }
  }
  EXPECT_EQ(labelled, static_cast<int>(block->kernels.at(32).size()));

  options.target = "avx2";
  choices.clear();
  driver::ExtractTasks(Model(), {"y"}, options, &choices);
  for (const tune::RewriteChoice& c : choices) EXPECT_NE(c.knob, graph_lower::kLayoutBlockKnob);
}

// The model blocked by 32 on this host (any x86: a block of 4 ymm registers is legal code, only
// slower) against the same model at opt level 0 (NCHW, no rewrites).
TEST(LayoutBlockKnob, ABlockOf32MatchesTheUnblockedModel) {
  const runtime::NDArray in = Random({1, 48, 14, 14}, 9);
  driver::BuildOptions plain;
  plain.opt_level = 0;
  const runtime::NDArray want = RunModel(driver::BuildJIT(Model(), {"y"}, plain), in);
  const IRModule blocked = transform::AlterOpLayout(Model(), {32});
  ASSERT_NE(PrintModule(blocked).find("NCHW32c"), std::string::npos);
  EXPECT_LT(MaxDiff(RunModel(driver::BuildJIT(blocked, {"y"}), in), want), 1e-4);
}

// Wide 32-channel blocks among 16-channel ones (AlterOpLayoutOptions::wide_block, from 32 channels
// here): a wide conv, a depthwise conv keeping its input's wide block, a grouped conv taking 16-wide
// blocks (groups of 16), their sum (one conversion), a concat of both blocks and a narrow strided
// conv, on this host against the model at opt level 0.
TEST(LayoutBlockKnob, WideBlocksAmongNarrowOnesMatchTheUnblockedModel) {
  const std::vector<int64_t> pad = {1, 1, 1, 1};
  Var x = VarNode::make("x", F32({1, 48, 14, 14}));
  Expr a = Call("nn.relu", {Call("nn.conv2d", {x, ConstantNode::make(Random({64, 48, 1, 1}, 11, -0.2f, 0.2f))},
                                 ConvAttrs(1, {0, 0, 0, 0}))});
  Expr d = Call("nn.conv2d", {a, ConstantNode::make(Random({64, 1, 3, 3}, 12))}, ConvAttrs(1, pad, 64));
  Expr g = Call("nn.conv2d", {d, ConstantNode::make(Random({64, 16, 3, 3}, 13, -0.3f, 0.3f))}, ConvAttrs(1, pad, 4));
  Expr cat = Call("concatenate", {TupleNode::make({Call("add", {d, g}), g})}, Attrs{{"axis", int64_t{1}}});
  Expr y = Call("nn.conv2d", {cat, ConstantNode::make(Random({40, 128, 3, 3}, 14, -0.1f, 0.1f))}, ConvAttrs(2, pad));
  const IRModule model = IRModule::FromMain(FunctionNode::make({x}, y));
  const IRModule blocked = transform::AlterOpLayout(model, {16, 32, 32});
  const std::string text = PrintModule(blocked);
  ASSERT_NE(text.find("NCHW32c"), std::string::npos);
  ASSERT_NE(text.find("src_layout=\"NCHW16c\", dst_layout=\"NCHW32c\""), std::string::npos) << text;
  const runtime::NDArray in = Random({1, 48, 14, 14}, 15);
  driver::BuildOptions plain;
  plain.opt_level = 0;
  EXPECT_LT(MaxDiff(RunModel(driver::BuildJIT(blocked, {"y"}), in), RunModel(driver::BuildJIT(model, {"y"}, plain), in)),
            1e-4);
}

// The threshold of the wide block is a knob beside the block where the target lists blocks (256,
// the fallback, or 0) for a model with a conv of >= 256 outputs; a model without one (Model(): 48
// channels) builds the same kernels at both values and is offered no such knob, nor is AVX2.
TEST(LayoutBlockKnob, ExtractTasksOffersTheWideBlockThresholdForWideConvs) {
  Var x = VarNode::make("x", F32({1, 64, 4, 4}));
  Expr y = Call("nn.conv2d", {x, ConstantNode::make(Random({256, 64, 1, 1}, 16))}, ConvAttrs(1, {0, 0, 0, 0}));
  const IRModule wide_model = IRModule::FromMain(FunctionNode::make({x}, y));
  auto wide_choice = [](const IRModule& m, const std::string& target) -> std::optional<tune::RewriteChoice> {
    driver::BuildOptions options;
    options.target = target;
    std::vector<tune::RewriteChoice> choices;
    driver::ExtractTasks(m, {"y"}, options, &choices);
    for (const tune::RewriteChoice& c : choices)
      if (c.knob == graph_lower::kWideBlockKnob) return c;
    return std::nullopt;
  };
  const std::optional<tune::RewriteChoice> wide = wide_choice(wide_model, "avx512");
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->candidates, (std::vector<int64_t>{0, graph_lower::kWideBlockMinChannels}));
  EXPECT_EQ(wide->fallback, graph_lower::kWideBlockMinChannels);
  EXPECT_FALSE(wide->kernels.at(0).empty());  // the conv at 16-channel blocks
  EXPECT_FALSE(wide_choice(Model(), "avx512").has_value());
  EXPECT_FALSE(wide_choice(wide_model, "avx2").has_value());
}

// compile --db with a decision for block 32: taken where this host offers the knob (the IR after
// AlterOpLayout has NCHW32c values), ignored elsewhere; the outputs match either way.
TEST(LayoutBlockKnob, BuildTakesTheDatabasesDecisionWhereOffered) {
  const target::Target host = driver::HostTarget();
  const bool offered = !topi::x86::LayoutBlockCandidates(host).empty();
  const codegen::TempDir dir("tessera-block-db");
  const std::string db_path = dir.path() + "/t.jsonl";
  driver::testing::CommitRewriteDecision(db_path, graph_lower::kLayoutBlockKnob, host.str(), 32);
  driver::BuildOptions options;
  options.tuning_db = db_path;
  options.dump_ir_dir = dir.path() + "/ir";
  const runtime::NDArray in = Random({1, 48, 14, 14}, 9);
  const runtime::NDArray got = RunModel(driver::BuildJIT(Model(), {"y"}, options), in);
  const std::string after_layout = driver::testing::DumpedStep(options.dump_ir_dir, "AlterOpLayout");
  ASSERT_FALSE(after_layout.empty());
  EXPECT_EQ(after_layout.find("NCHW32c") != std::string::npos, offered);
  driver::BuildOptions plain;
  plain.opt_level = 0;
  EXPECT_LT(MaxDiff(got, RunModel(driver::BuildJIT(Model(), {"y"}, plain), in)), 1e-4);
}

}  // namespace
}  // namespace tessera
