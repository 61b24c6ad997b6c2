// build() end to end in process: graph IR -> fused kernels -> LLVM JIT -> graph executor,
// compared with a C++ reference on random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "driver_test_util.h"
#include "tessera/driver/build.h"
#include "tessera/graph/infer_type.h"
#include "tessera/runtime/graph_executor.h"

namespace tessera::driver {
namespace {

using namespace tessera::graph;
using testing::F32;
using testing::Call;
using testing::Random;



// relu(conv2d 3x3, pad 1 (x: 1 x C x H x W, w: K x C x 3 x 3) + bias), built at `opt_level` and
// run on 2 threads, against a double-precision C++ loop.
void CheckConvBiasRelu(int C, int H, int W, int K, int opt_level, std::vector<std::string> disabled = {}) {
  const int N = 1;
  Var x = VarNode::make("x", F32({N, C, H, W}));
  auto w = Random({K, C, 3, 3}, 1);
  auto b = Random({1, K, 1, 1}, 2);
  Expr conv = Call("nn.conv2d", {x, ConstantNode::make(w)},
                    Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                          {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{1}}});
  Expr y = Call("nn.relu", {Call("add", {conv, ConstantNode::make(b)})});
  IRModule mod = IRModule::FromMain(FunctionNode::make({x}, y));
  BuildOptions options;
  options.opt_level = opt_level;
  options.disabled_passes = std::move(disabled);
  runtime::GraphExecutor exec(BuildJIT(mod, {"y"}, options), 2);
  auto in = Random({N, C, H, W}, 3);
  exec.SetInput("x", in);
  exec.Run();
  runtime::NDArray out = exec.GetOutput("y");
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{N, K, H, W}));
  const float* xi = in.data<float>();
  const float* wi = w.data<float>();
  for (int k = 0; k < K; ++k)
    for (int h = 0; h < H; ++h)
      for (int ww = 0; ww < W; ++ww) {
        double acc = b.data<float>()[k] + testing::Conv3x3Pad1At(xi, wi, C, H, W, 0, k, h, ww);
        double ref = acc > 0 ? acc : 0;
        EXPECT_NEAR(out.data<float>()[(k * H + h) * W + ww], ref, 1e-4 + 1e-4 * std::abs(ref));
      }
}

class BuildJITTest : public ::testing::TestWithParam<int> {};

TEST_P(BuildJITTest, ConvBiasReluMatchesReference) { CheckConvBiasRelu(3, 9, 7, 5, GetParam()); }

// 64 channels (4 blocks of 16) and a 22x22 output: the x86 conv tile is 2 rows x 3 pixels
// with a pixel tail, and its epilogue unrolls the 2 rows around a pixel loop (UnrollLoop must
// give each copy its own loop variable; this used to fail VerifyFlat).
// (The direct convolution: WinogradConv2d would take this conv, see test_winograd_conv2d.cc.)
TEST(BuildJIT, ConvTwoRowTileWithPixelTail) { CheckConvBiasRelu(64, 22, 22, 64, 3, {"WinogradConv2d"}); }

INSTANTIATE_TEST_SUITE_P(OptLevels, BuildJITTest, ::testing::Values(0, 3));

}  // namespace
}  // namespace tessera::driver
