// One compiled model library run from 4 threads at once through the C++ API (issue 15): one
// runtime::Module shared by every thread, one GraphExecutor per thread (graph_executor.h,
// "Threads"), real generated kernels with parallel loops. Every thread's outputs must equal a
// single-threaded run of the same inputs, bit for bit (a launch that does not get the pool's
// workers runs the same tasks on its own thread). tests/runtime/concurrency_test.cc is the
// runtime-only version that scripts/test.sh --tsan runs under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "driver_test_util.h"
#include "tessera/driver/build.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::driver {
namespace {

using namespace tessera::graph;
using testing::Call;
using testing::F32;
using testing::Random;

// dense(relu(conv2d 3x3 pad 1 + bias)) over a [1, 8, 16, 16] input: several fused kernels, each
// with a parallel outer loop.
IRModule ConvNet() {
  Var x = VarNode::make("x", F32({1, 8, 16, 16}));
  Expr conv = Call("nn.conv2d", {x, ConstantNode::make(Random({16, 8, 3, 3}, 1))},
                   Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                         {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{1}}});
  Expr act = Call("nn.relu", {Call("add", {conv, ConstantNode::make(Random({1, 16, 1, 1}, 2))})});
  Expr flat = Call("reshape", {act}, Attrs{{"newshape", std::vector<int64_t>{1, 16 * 16 * 16}}});
  Expr y = Call("nn.dense", {flat, ConstantNode::make(Random({10, 16 * 16 * 16}, 3))});
  return IRModule::FromMain(FunctionNode::make({x}, TupleNode::make({y, act})));
}

bool SameBits(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.NBytes()) == 0;
}

TEST(ConcurrentRuns, OneLibraryFourThreadsMatchASingleThreadedRun) {
  constexpr int kThreads = 4, kRuns = 25;
  const std::string so = (std::filesystem::temp_directory_path() /
                          ("concurrent_runs_" + std::to_string(::getpid()) + ".so")).string();
  BuildSharedLibrary(ConvNet(), {"scores", "features"}, so, {});
  const runtime::Module module = runtime::Module::LoadFromFile(so);
  runtime::SetNumThreads(2);
  auto input = [](int t, int r) { return Random({1, 8, 16, 16}, 1000 + 100 * t + r); };
  std::vector<std::vector<std::vector<runtime::NDArray>>> expected(kThreads);
  {
    runtime::GraphExecutor ex(module);
    for (int t = 0; t < kThreads; ++t)
      for (int r = 0; r < kRuns; ++r) {
        ex.SetInput("x", input(t, r));
        ex.Run();
        expected[t].push_back({ex.GetOutput("scores"), ex.GetOutput("features")});
      }
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      runtime::GraphExecutor ex(module);
      for (int r = 0; r < kRuns; ++r) {
        ex.SetInput("x", input(t, r));
        ex.Run();
        if (!SameBits(ex.GetOutput("scores"), expected[t][r][0]) ||
            !SameBits(ex.GetOutput("features"), expected[t][r][1]))
          mismatches++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0) << "of " << kThreads * kRuns << " runs";
  std::filesystem::remove(so);
}

}  // namespace
}  // namespace tessera::driver
