// Graph executor codegen: the JSON plan of small fused graphs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "driver_test_util.h"
#include "tessera/driver/graph_executor_codegen.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/transform/fuse_ops.h"

namespace tessera::driver {
namespace {

using namespace tessera::graph;
using testing::F32;
using testing::Call;
using testing::Random;


IRModule Fused(Function main, int opt_level = 1) {
  transform::FuseOpsOptions o;
  o.fuse_opt_level = opt_level;
  return InferType(transform::FuseOps(InferType(IRModule::FromMain(std::move(main))), o));
}

TEST(GraphExecutorCodegen, ChainOfUnfusedKernelsSharesStoragesAndKernels) {
  Var x = VarNode::make("data", F32({16}));
  // exp(exp(exp(exp(x)))): one kernel reused four times; storages ping-pong.
  Expr y = x;
  for (int i = 0; i < 4; ++i) y = Call("exp", {y});
  ExecutorPlan plan = GraphExecutorCodegen(Fused(FunctionNode::make({x}, y), 0), {"out"});
  auto j = nlohmann::json::parse(plan.graph_json);
  EXPECT_EQ(j["format"], "tessera-graph");
  EXPECT_EQ(plan.num_nodes, 4);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].first, "fused_exp_0");
  ASSERT_EQ(j["nodes"].size(), 4u);
  for (const auto& n : j["nodes"]) EXPECT_EQ(n["kernel"], "fused_exp_0");
  EXPECT_EQ(j["inputs"][0]["name"], "data");
  EXPECT_EQ(j["outputs"][0]["name"], "out");
  // input + 2 ping-pong storages + the output's own (the output is never reused)
  EXPECT_LE(j["storages"].size(), 4u);
  EXPECT_LT(plan.storage_bytes, plan.unplanned_bytes);
  // Each node reads the previous node's output.
  for (int i = 1; i < 4; ++i) EXPECT_EQ(j["nodes"][i]["args"][0], j["nodes"][i - 1]["args"][1]);
}

TEST(GraphExecutorCodegen, ConstantsBecomeParamsAndTupleBodyGivesOutputs) {
  Var x = VarNode::make("x", F32({2, 2}));
  auto c = runtime::NDArray::Empty({2, 2}, DataType::Float(32));
  for (int i = 0; i < 4; ++i) c.data<float>()[i] = static_cast<float>(i);
  Expr a = Call("add", {x, ConstantNode::make(c)});
  Expr body = TupleNode::make({Call("nn.relu", {a}), Call("exp", {a})});
  ExecutorPlan plan = GraphExecutorCodegen(Fused(FunctionNode::make({x}, body)), {"r", "e"});
  auto j = nlohmann::json::parse(plan.graph_json);
  ASSERT_EQ(plan.params.size(), 1u);
  EXPECT_EQ(plan.params.begin()->first, "p0");
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["name"], "r");
  EXPECT_EQ(j["outputs"][1]["name"], "e");
  EXPECT_EQ(plan.num_nodes, 3);  // add has two uses: it stays its own kernel
  int params = 0;
  for (const auto& v : j["values"]) params += v["kind"] == "param";
  EXPECT_EQ(params, 1);
}

}  // namespace
}  // namespace tessera::driver
