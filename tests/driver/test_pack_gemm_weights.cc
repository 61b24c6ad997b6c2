// graph_lower::PackGemmWeights end to end: constant dense / matmul weights are packed at compile
// time into nn.contrib_dense_pack, and the compiled model (driver::BuildJIT + graph executor)
// equals a C++ reference; a non-constant matmul operand keeps nn.matmul (packed in the kernel).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "driver_test_util.h"
#include "tessera/driver/build.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/graph/functor.h"
#include "tessera/graph_lower/pack_gemm_weights.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/graph_executor.h"

namespace tessera {
namespace {

using namespace tessera::graph;
using driver::testing::F32;
using driver::testing::Call;
using driver::testing::Random;

int CountOp(const IRModule& m, const std::string& name) {
  int n = 0;
  PostOrderVisit(m.main(), [&](const Expr& e) {
    if (const auto* c = e->as<CallNode>())
      if (const auto* op = c->op->as<OpNode>()) n += op->name == name;
  });
  return n;
}

// y = relu(x · w^T + b) with x [M, K], w [N, K] constant; M, N, K not dividing the tiles.
TEST(PackGemmWeights, ConstantDenseWeightIsPackedAtCompileTime) {
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{{7, 13, 19}, {1, 1000, 64}, {30, 48, 40}}) {
    SCOPED_TRACE(::testing::Message() << M << "x" << N << "x" << K);
    Var x = VarNode::make("x", F32({M, K}));
    auto w = Random({N, K}, 1), b = Random({N}, 2);
    Expr y = Call("nn.relu", {Call("add", {Call("nn.dense", {x, ConstantNode::make(w)}), ConstantNode::make(b)})});
    IRModule mod = IRModule::FromMain(FunctionNode::make({x}, y));
    IRModule packed = graph_lower::PackGemmWeights(mod, driver::HostTarget());
    EXPECT_EQ(CountOp(packed, "nn.dense"), 0);
    EXPECT_EQ(CountOp(packed, "nn.contrib_dense_pack"), 1);
    runtime::GraphExecutor exec(driver::BuildJIT(packed, {"y"}), 2);
    auto in = Random({M, K}, 3);
    exec.SetInput("x", in);
    exec.Run();
    runtime::NDArray out = exec.GetOutput("y");
    ASSERT_EQ(out.shape(), (std::vector<int64_t>{M, N}));
    int bad = 0;
    for (int64_t i = 0; i < M && bad < 5; ++i)
      for (int64_t j = 0; j < N && bad < 5; ++j) {
        double s = b.data<float>()[j];
        for (int64_t k = 0; k < K; ++k) s += double(in.data<float>()[i * K + k]) * w.data<float>()[j * K + k];
        s = std::max(s, 0.0);
        if (std::fabs(out.data<float>()[i * N + j] - s) > 1e-4 * (1 + std::fabs(s))) {
          ADD_FAILURE() << "y[" << i << "," << j << "] = " << out.data<float>()[i * N + j] << ", want " << s;
          ++bad;
        }
      }
  }
}

// matmul(x, Constant b [K, N]) is packed; matmul(x, x2) with a non-constant operand is not.
TEST(PackGemmWeights, MatmulConstantAndNonConstantOperands) {
  const int64_t M = 5, K = 11, N = 21;
  Var x = VarNode::make("x", F32({M, K}));
  Var z = VarNode::make("z", F32({K, N}));
  auto c = Random({K, N}, 4);
  Expr y = Call("add", {Call("nn.matmul", {x, ConstantNode::make(c)}), Call("nn.matmul", {x, z})});
  IRModule packed = graph_lower::PackGemmWeights(IRModule::FromMain(FunctionNode::make({x, z}, y)), driver::HostTarget());
  EXPECT_EQ(CountOp(packed, "nn.contrib_dense_pack"), 1);
  EXPECT_EQ(CountOp(packed, "nn.matmul"), 1);
  runtime::GraphExecutor exec(driver::BuildJIT(packed, {"y"}), 1);
  auto dx = Random({M, K}, 5), dz = Random({K, N}, 6);
  exec.SetInput("x", dx);
  exec.SetInput("z", dz);
  exec.Run();
  runtime::NDArray out = exec.GetOutput("y");
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(dx.data<float>()[i * K + k]) * (c.data<float>()[k * N + j] + dz.data<float>()[k * N + j]);
      EXPECT_NEAR(out.data<float>()[i * N + j], s, 1e-4 * (1 + std::fabs(s))) << i << "," << j;
    }
}

// matmul(x [1, seq, K], Constant [K, N]) with a symbolic row count is packed too, and the one
// compiled program (run by the VM) computes every row count.
TEST(PackGemmWeights, SymbolicRowCountIsPackedAndRunsEveryCount) {
  const int64_t K = 40, N = 50;
  Type xt = TensorTypeNode::make(Shape{Dim(1), Dim::Symbolic("seq"), Dim(K)}, DataType::Float(32));
  Var x = VarNode::make("x", xt);
  auto c = Random({K, N}, 7), b = Random({N}, 8);
  Expr y = Call("nn.relu", {Call("add", {Call("nn.matmul", {x, ConstantNode::make(c)}), ConstantNode::make(b)})});
  IRModule mod = IRModule::FromMain(FunctionNode::make({x}, y));
  EXPECT_EQ(CountOp(graph_lower::PackGemmWeights(mod, driver::HostTarget()), "nn.contrib_dense_pack"), 1);
  std::unique_ptr<runtime::Executor> exec = runtime::MakeExecutor(driver::BuildJIT(mod, {"y"}), 2);
  for (int64_t m : {1, 3, 17, 130}) {
    SCOPED_TRACE(m);
    auto in = Random({1, m, K}, 9 + static_cast<int>(m));
    exec->SetInput("x", in);
    exec->Run();
    runtime::NDArray out = exec->GetOutput(0);
    ASSERT_EQ(out.shape(), (std::vector<int64_t>{1, m, N}));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = b.data<float>()[j];
        for (int64_t k = 0; k < K; ++k) s += double(in.data<float>()[i * K + k]) * c.data<float>()[k * N + j];
        s = std::max(s, 0.0);
        ASSERT_NEAR(out.data<float>()[i * N + j], s, 1e-4 * (1 + std::fabs(s))) << i << "," << j;
      }
  }
}

// One weight used by several GEMMs of the same tile (an unrolled RNN's recurrent weight, once per
// step) is packed once: every nn.contrib_dense_pack reads the same packed constant. Before, each use
// got its own copy (an LSTM of 64 steps had 257 MiB of parameters instead of 9).
TEST(PackGemmWeights, SharedWeightIsPackedOnce) {
  // y = tanh(... tanh(tanh(x2 W) W) ... W), `steps` GEMMs of one [N, N] weight: an RNN's recurrence.
  const int64_t M = 1, N = 40, steps = 4;
  Var x2 = VarNode::make("x2", F32({M, N}));
  Expr w2 = ConstantNode::make(Random({N, N}, 8));
  Expr g = x2;
  for (int64_t s = 0; s < steps; ++s) g = Call("tanh", {Call("nn.matmul", {g, w2})});
  IRModule packed = graph_lower::PackGemmWeights(IRModule::FromMain(FunctionNode::make({x2}, g)), driver::HostTarget());
  ASSERT_EQ(CountOp(packed, "nn.contrib_dense_pack"), steps);
  std::set<const ExprNode*> weights;
  PostOrderVisit(packed.main(), [&](const Expr& e) {
    if (const auto* c = e->as<CallNode>())
      if (const auto* op = c->op->as<OpNode>(); op && op->name == "nn.contrib_dense_pack") weights.insert(c->args[1].get());
  });
  EXPECT_EQ(weights.size(), 1u);
  runtime::GraphExecutor exec(driver::BuildJIT(packed, {"y"}), 1);
  auto dx = Random({M, N}, 9);
  exec.SetInput("x2", dx);
  exec.Run();
  std::vector<double> ref(dx.data<float>(), dx.data<float>() + N);
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<double> next(N, 0.0);
    for (int64_t j = 0; j < N; ++j) {
      for (int64_t k = 0; k < N; ++k) next[j] += ref[k] * w2->as<ConstantNode>()->data.data<float>()[k * N + j];
      next[j] = std::tanh(next[j]);
    }
    ref = next;
  }
  runtime::NDArray out = exec.GetOutput("y");
  for (int64_t j = 0; j < N; ++j) EXPECT_NEAR(out.data<float>()[j], ref[j], 1e-5) << j;
}

}  // namespace
}  // namespace tessera
