// AlterOpLayout: IR before -> expected IR after (printed forms equal), packed weight values,
// fallbacks, and numerics unchanged end to end (BuildJIT with and without the pass).
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "tessera/driver/build.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/alter_op_layout.h"
#include "tessera/runtime/graph_executor.h"

namespace tessera::graph {
namespace {

using transform::AlterOpLayout;

Type F32(std::vector<int64_t> s) { return TensorTypeNode::make(s, DataType::Float(32)); }

runtime::NDArray Random(std::vector<int64_t> shape, uint32_t seed) {
  runtime::NDArray a = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = u(rng);
  return a;
}

Expr Call(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}

Attrs ConvAttrs(int64_t pad, int64_t groups = 1, int64_t stride = 1) {
  return Attrs{{"strides", std::vector<int64_t>{stride, stride}},
               {"padding", std::vector<int64_t>{pad, pad, pad, pad}},
               {"dilation", std::vector<int64_t>{1, 1}},
               {"groups", groups}};
}

Attrs Blocked(Attrs a, int64_t cb, int64_t kb, bool depthwise = false) {
  a.Set("data_layout", "NCHW" + std::to_string(cb) + "c").Set("out_layout", "NCHW" + std::to_string(kb) + "c");
  a.Set("kernel_layout", depthwise ? "OIHW1i" + std::to_string(kb) + "o"
                                   : "OIHW" + std::to_string(cb) + "i" + std::to_string(kb) + "o");
  return a;
}

Expr LT(Expr x, const std::string& src, const std::string& dst, int64_t c) {
  return Call("layout_transform", {std::move(x)}, Attrs{{"src_layout", src}, {"dst_layout", dst}, {"channels", c}});
}

Constant Zeros(std::vector<int64_t> shape) {
  runtime::NDArray a = runtime::NDArray::Empty(shape, DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = 0;
  return ConstantNode::make(a);
}

// conv(3->16, 3x3) + bias_add + relu + conv(16->8, 1x1) + relu + residual-free add of a
// per-channel constant, then softmax (an NCHW consumer).
IRModule Before() {
  Var x = VarNode::make("x", F32({1, 3, 8, 8}));
  Expr c1 = Call("nn.conv2d", {x, ConstantNode::make(Random({16, 3, 3, 3}, 1))}, ConvAttrs(1));
  Expr r1 = Call("nn.relu", {Call("nn.bias_add", {c1, ConstantNode::make(Random({16}, 2))}, Attrs{{"axis", int64_t{1}}})});
  Expr c2 = Call("nn.conv2d", {r1, ConstantNode::make(Random({8, 16, 1, 1}, 3))}, ConvAttrs(0));
  Expr a2 = Call("add", {Call("nn.relu", {c2}), ConstantNode::make(Random({8, 1, 1}, 4))});
  Expr y = Call("nn.softmax", {a2}, Attrs{{"axis", int64_t{1}}});
  return IRModule::FromMain(FunctionNode::make({x}, y));
}

TEST(AlterOpLayout, ConvChainStaysBlocked) {
  IRModule after = AlterOpLayout(Before());
  Var x = VarNode::make("x", F32({1, 3, 8, 8}));
  Expr c1 = Call("nn.contrib_conv2d_NCHWc", {LT(x, "NCHW", "NCHW3c", 3), Zeros({1, 1, 3, 3, 3, 16})},
                 Blocked(ConvAttrs(1), 3, 16));
  Expr r1 = Call("nn.relu", {Call("add", {c1, Zeros({1, 1, 1, 1, 16})})});
  Expr c2 = Call("nn.contrib_conv2d_NCHWc", {r1, Zeros({1, 1, 1, 1, 16, 16})}, Blocked(ConvAttrs(0), 16, 16));
  Expr a2 = Call("add", {Call("nn.relu", {c2}), Zeros({1, 1, 1, 1, 16})});
  Expr y = Call("nn.softmax", {LT(a2, "NCHW16c", "NCHW", 8)}, Attrs{{"axis", int64_t{1}}});
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x}, y)));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(AlterOpLayout, ConvolutionsInsideIfBranchesAreBlockedAndTheIfKeepsItsType) {
  // main(x, c) = if c { relu(conv(x, W)) } else { x }: the then branch becomes a blocked conv whose
  // result goes back to NCHW inside the branch, so both branches (and the If) stay NCHW.
  Var x = VarNode::make("x", F32({1, 16, 6, 6}));
  Var c = VarNode::make("c", TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()));
  Expr conv = Call("nn.relu", {Call("nn.conv2d", {x, ConstantNode::make(Random({16, 16, 3, 3}, 9))}, ConvAttrs(1))});
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x, c}, IfNode::make(c, conv, x))));
  Var x2 = VarNode::make("x", F32({1, 16, 6, 6}));
  Var c2 = VarNode::make("c", TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()));
  Expr blocked = Call("nn.relu", {Call("nn.contrib_conv2d_NCHWc", {LT(x2, "NCHW", "NCHW16c", 16), Zeros({1, 1, 3, 3, 16, 16})},
                                       Blocked(ConvAttrs(1), 16, 16))});
  Expr expected = IfNode::make(c2, LT(blocked, "NCHW16c", "NCHW", 16), x2);
  EXPECT_EQ(PrintModule(after), PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2, c2}, expected)))));
}

TEST(AlterOpLayout, PacksWeightsAtCompileTime) {
  runtime::NDArray w = Random({20, 3, 3, 3}, 5);
  Var x = VarNode::make("x", F32({1, 3, 6, 6}));
  Expr y = Call("nn.conv2d", {x, ConstantNode::make(w)}, ConvAttrs(1));
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)));
  // main = layout_transform(conv_NCHWc(layout_transform(x), W')) -> find W'.
  const auto* out = after.main()->body->as<CallNode>();
  ASSERT_TRUE(out);
  const auto* conv = out->args[0]->as<CallNode>();
  ASSERT_TRUE(conv && conv->op->as<OpNode>()->name == "nn.contrib_conv2d_NCHWc");
  const auto* wp = conv->args[1]->as<ConstantNode>();
  ASSERT_TRUE(wp);
  ASSERT_EQ(wp->data.shape(), (std::vector<int64_t>{2, 1, 3, 3, 3, 16}));
  const float* src = w.data<float>();
  const float* dst = wp->data.data<float>();
  for (int64_t o = 0; o < 32; ++o)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t r = 0; r < 9; ++r) {
        float want = o < 20 ? src[(o * 3 + i) * 9 + r] : 0.f;
        ASSERT_EQ(dst[(((o / 16) * 9 + r) * 3 + i) * 16 + o % 16], want) << o << " " << i << " " << r;
      }
}

TEST(AlterOpLayout, DepthwiseAndGrouped) {
  // Grouped 32 -> 32 in 4 groups of 8 channels: 8-wide blocks hold each group unmerged (m = 1),
  // where 16-wide ones would merge pairs (m = 2: twice the work); the depthwise output's 16-wide
  // blocks are converted.
  Var x = VarNode::make("x", F32({1, 32, 8, 8}));
  Expr dw = Call("nn.conv2d", {x, ConstantNode::make(Random({32, 1, 3, 3}, 6))}, ConvAttrs(1, 32));
  Expr gr = Call("nn.conv2d", {dw, ConstantNode::make(Random({32, 8, 3, 3}, 7))}, ConvAttrs(1, 4));
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, gr)));
  Var x2 = VarNode::make("x", F32({1, 32, 8, 8}));
  Expr dw2 = Call("nn.contrib_conv2d_NCHWc", {LT(x2, "NCHW", "NCHW16c", 32), Zeros({2, 1, 3, 3, 1, 16})},
                  Blocked(ConvAttrs(1, 32), 16, 16, true));
  Expr gr2 = Call("nn.contrib_conv2d_NCHWc", {LT(dw2, "NCHW16c", "NCHW8c", 32), Zeros({4, 1, 3, 3, 8, 8})},
                  Blocked(ConvAttrs(1, 4), 8, 8));
  EXPECT_EQ(PrintModule(after),
            PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2}, LT(gr2, "NCHW8c", "NCHW", 32))))));
}

TEST(AlterOpLayout, GroupedMergesOnlyWhenNoFullWidthBlockHoldsAGroup) {
  // Groups of 120 channels (RegNetX-8GF, 720 in 6 groups): 8-wide blocks, unmerged. Groups of 4
  // (ResNeXt 32x4d's first stage): merged in pairs at 8-wide blocks (m = 4 at 16). Groups of 32:
  // 16-wide blocks (both fit unmerged; the wider wins).
  for (const auto& [C, groups, m, b] : std::vector<std::array<int64_t, 4>>{{720, 6, 1, 8}, {128, 32, 2, 8},
                                                                         {64, 2, 1, 16}}) {
    Var x = VarNode::make("x", F32({1, C, 4, 4}));
    Expr y = Call("nn.conv2d", {x, ConstantNode::make(Random({C, C / groups, 3, 3}, 11))}, ConvAttrs(1, groups));
    IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)));
    const auto* conv = after.main()->body->as<CallNode>()->args[0]->as<CallNode>();
    ASSERT_TRUE(conv && conv->op->as<OpNode>()->name == "nn.contrib_conv2d_NCHWc") << C;
    EXPECT_EQ(conv->attrs.GetInt("groups"), groups / m) << C;
    EXPECT_EQ(conv->attrs.GetString("out_layout"), "NCHW" + std::to_string(b) + "c") << C;
    EXPECT_EQ(conv->args[1]->as<ConstantNode>()->data.shape(),
              (std::vector<int64_t>{C / b, m * (C / groups) / b, 3, 3, b, b})) << C;
  }
}

TEST(AlterOpLayout, GroupedWeightsAreBlockDiagonalAcrossMergedGroups) {
  // 16 -> 16 in 4 groups of 4: pairs merge (m = 2) into two 8-wide groups (m = 4 at 16-wide blocks).
  runtime::NDArray w = Random({16, 4, 1, 1}, 8);
  Var x = VarNode::make("x", F32({1, 16, 5, 5}));
  Expr y = Call("nn.conv2d", {x, ConstantNode::make(w)}, ConvAttrs(0, 4));
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)));
  const auto* conv = after.main()->body->as<CallNode>()->args[0]->as<CallNode>();
  ASSERT_TRUE(conv && conv->op->as<OpNode>()->name == "nn.contrib_conv2d_NCHWc");
  EXPECT_EQ(conv->attrs.GetInt("groups"), 2);
  const auto* wp = conv->args[1]->as<ConstantNode>();
  ASSERT_TRUE(wp);
  ASSERT_EQ(wp->data.shape(), (std::vector<int64_t>{2, 1, 1, 1, 8, 8}));
  for (int64_t o = 0; o < 16; ++o)
    for (int64_t i = o / 8 * 8; i < o / 8 * 8 + 8; ++i) {  // the input channels of o's merged group
      const float want = i / 4 == o / 4 ? w.data<float>()[o * 4 + i % 4] : 0.f;
      ASSERT_EQ(wp->data.data<float>()[((o / 8) * 8 + i % 8) * 8 + o % 8], want) << o << " " << i;
    }
}

TEST(AlterOpLayout, GroupedTakesASmallerBlockWhenNoMergeFits) {
  // 104 channels in 13 groups of 8 (RegNetY-400MF): 13 is prime, so no m <= 8 makes 16-wide blocks;
  // 8-wide ones fit with m = 1.
  Var x = VarNode::make("x", F32({1, 104, 6, 6}));
  Expr y = Call("nn.conv2d", {x, ConstantNode::make(Random({104, 8, 3, 3}, 10))}, ConvAttrs(1, 13));
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)));
  Var x2 = VarNode::make("x", F32({1, 104, 6, 6}));
  Expr y2 = Call("nn.contrib_conv2d_NCHWc", {LT(x2, "NCHW", "NCHW8c", 104), Zeros({13, 1, 3, 3, 8, 8})},
                 Blocked(ConvAttrs(1, 13), 8, 8));
  EXPECT_EQ(PrintModule(after),
            PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2}, LT(y2, "NCHW8c", "NCHW", 104))))));
}

TEST(AlterOpLayout, GroupedFallbackWhenNoMergeMakesWholeBlocks) {
  // 30 channels in 3 groups of 10: no m dividing 3 makes 10 m a multiple of 16, 8 or 4.
  Var x = VarNode::make("x", F32({1, 30, 6, 6}));
  Expr y = Call("nn.conv2d", {x, ConstantNode::make(Random({30, 10, 3, 3}, 9))}, ConvAttrs(1, 3));
  IRModule before = InferType(IRModule::FromMain(FunctionNode::make({x}, y)));
  EXPECT_EQ(PrintModule(AlterOpLayout(before)), PrintModule(before));
}

TEST(AlterOpLayout, ResidualAddAndConcatStayBlocked) {
  Var x = VarNode::make("x", F32({1, 16, 6, 6}));
  Expr c1 = Call("nn.conv2d", {x, ConstantNode::make(Random({16, 16, 3, 3}, 8))}, ConvAttrs(1));
  Expr res = Call("add", {c1, x});  // x (NCHW) is converted once and shared with the conv input
  Expr cat = Call("concatenate", {TupleNode::make({res, c1})}, Attrs{{"axis", int64_t{1}}});
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, cat)));
  Var x2 = VarNode::make("x", F32({1, 16, 6, 6}));
  Expr xb = LT(x2, "NCHW", "NCHW16c", 16);
  Expr c2 = Call("nn.contrib_conv2d_NCHWc", {xb, Zeros({1, 1, 3, 3, 16, 16})}, Blocked(ConvAttrs(1), 16, 16));
  Expr cat2 = Call("concatenate", {TupleNode::make({Call("add", {c2, xb}), c2})}, Attrs{{"axis", int64_t{1}}});
  EXPECT_EQ(PrintModule(after), PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2}, LT(cat2, "NCHW16c", "NCHW", 32))))));
}

// Wide blocks (options.wide_block 32 from 64 channels): the 64-channel 1x1 conv outputs NCHW32c
// while the depthwise conv of x keeps the target's 16; their sum converts the right operand to the
// left one's block; a depthwise conv of the wide sum keeps its block (no conversion); the concat
// takes the least block of its fields.
TEST(AlterOpLayout, WideConvolutionsTakeTheWideBlockAndMeetNarrowOnesByOneConversion) {
  const transform::AlterOpLayoutOptions wide{16, 32, 64};
  Var x = VarNode::make("x", F32({1, 64, 4, 4}));
  Expr d = Call("nn.conv2d", {x, ConstantNode::make(Random({64, 1, 3, 3}, 21))}, ConvAttrs(1, 64));
  Expr a = Call("nn.conv2d", {x, ConstantNode::make(Random({64, 64, 1, 1}, 22))}, ConvAttrs(0));
  Expr s = Call("add", {a, d});
  Expr t = Call("nn.conv2d", {s, ConstantNode::make(Random({64, 1, 3, 3}, 23))}, ConvAttrs(1, 64));
  Expr cat = Call("concatenate", {TupleNode::make({t, d})}, Attrs{{"axis", int64_t{1}}});
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, cat)), wide);

  Var x2 = VarNode::make("x", F32({1, 64, 4, 4}));
  Expr xb = LT(x2, "NCHW", "NCHW16c", 64);
  Expr d2 = Call("nn.contrib_conv2d_NCHWc", {xb, Zeros({4, 1, 3, 3, 1, 16})}, Blocked(ConvAttrs(1, 64), 16, 16, true));
  Expr a2 = Call("nn.contrib_conv2d_NCHWc", {xb, Zeros({2, 4, 1, 1, 16, 32})}, Blocked(ConvAttrs(0), 16, 32));
  Expr s2 = Call("add", {a2, LT(d2, "NCHW16c", "NCHW32c", 64)});
  Expr t2 = Call("nn.contrib_conv2d_NCHWc", {s2, Zeros({2, 1, 3, 3, 1, 32})}, Blocked(ConvAttrs(1, 64), 32, 32, true));
  Expr cat2 = Call("concatenate", {TupleNode::make({LT(t2, "NCHW32c", "NCHW16c", 64), d2})}, Attrs{{"axis", int64_t{1}}});
  EXPECT_EQ(PrintModule(after),
            PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2}, LT(cat2, "NCHW16c", "NCHW", 128))))));
}

// Which convs take the wide block: K a multiple of it and at least wide_min_channels; a grouped
// conv tries (x's block, wide) first, and a narrower block still wins by a smaller merge.
TEST(AlterOpLayout, OnlyConvolutionsOfWideMultiplesTakeTheWideBlock) {
  auto out_layout = [](int64_t K, int64_t groups, int64_t wide_min) {
    Var x = VarNode::make("x", F32({1, 64, 4, 4}));
    Expr y = Call("nn.conv2d", {x, ConstantNode::make(Random({K, 64 / groups, 1, 1}, 24))}, ConvAttrs(0, groups));
    IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)), {16, 32, wide_min});
    const auto* conv = after.main()->body->as<CallNode>()->args[0]->as<CallNode>();
    EXPECT_TRUE(conv && conv->op->as<OpNode>()->name == "nn.contrib_conv2d_NCHWc");
    return conv ? conv->attrs.GetString("out_layout") + " groups " + std::to_string(conv->attrs.GetInt("groups")) : "";
  };
  EXPECT_EQ(out_layout(64, 1, 64), "NCHW32c groups 1");
  EXPECT_EQ(out_layout(96, 1, 64), "NCHW32c groups 1");
  EXPECT_EQ(out_layout(48, 1, 32), "NCHW16c groups 1");   // 48: no multiple of 32
  EXPECT_EQ(out_layout(64, 1, 128), "NCHW16c groups 1");  // below the threshold
  EXPECT_EQ(out_layout(64, 1, 0), "NCHW16c groups 1");    // 0: no wide block
  EXPECT_EQ(out_layout(64, 2, 64), "NCHW32c groups 2");   // groups of 32: whole wide blocks
  EXPECT_EQ(out_layout(64, 4, 64), "NCHW16c groups 4");   // groups of 16: 32 would merge pairs
}

Attrs PoolAttrs(int64_t k, int64_t stride, int64_t pad) {
  return Attrs{{"pool_size", std::vector<int64_t>{k, k}},
               {"strides", std::vector<int64_t>{stride, stride}},
               {"padding", std::vector<int64_t>{pad, pad, pad, pad}}};
}

Expr Reshape(Expr x, std::vector<int64_t> s) { return Call("reshape", {std::move(x)}, Attrs{{"newshape", s}}); }

// Squeeze-excite + pooling: GAP and max_pool2d pool the blocked tensor (layout NCHW16c); the
// [1, C, 1, 1] values convert by zero-copy reshapes, and the per-channel scale multiplies the
// blocked tensor as [1, C/16, 1, 1, 16]; a single layout_transform remains at the output.
TEST(AlterOpLayout, PoolingAndSqueezeExciteStayBlocked) {
  Var x = VarNode::make("x", F32({1, 16, 6, 6}));
  Expr c = Call("nn.conv2d", {x, ConstantNode::make(Random({16, 16, 3, 3}, 8))}, ConvAttrs(1));
  Expr g = Call("nn.global_avg_pool2d", {c});
  Expr sc = Reshape(Call("sigmoid", {Reshape(g, {1, 16})}), {1, 16, 1, 1});
  Expr y = Call("nn.max_pool2d", {Call("multiply", {c, sc})}, PoolAttrs(2, 2, 0));
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)));

  Var x2 = VarNode::make("x", F32({1, 16, 6, 6}));
  Expr c2 = Call("nn.contrib_conv2d_NCHWc", {LT(x2, "NCHW", "NCHW16c", 16), Zeros({1, 1, 3, 3, 16, 16})},
                 Blocked(ConvAttrs(1), 16, 16));
  Expr g2 = Call("nn.global_avg_pool2d", {c2}, Attrs{{"layout", "NCHW16c"}});
  Expr sc2 = Reshape(Call("sigmoid", {Reshape(Reshape(g2, {1, 16, 1, 1}), {1, 16})}), {1, 16, 1, 1});
  Attrs pool = PoolAttrs(2, 2, 0);
  pool.Set("layout", "NCHW16c");
  Expr y2 = Call("nn.max_pool2d", {Call("multiply", {c2, Reshape(sc2, {1, 1, 1, 1, 16})})}, pool);
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, LT(y2, "NCHW16c", "NCHW", 16))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

// Group norm with one group over the 4-D tensor (UnflattenReductions' form): the statistics are
// reductions of the blocked tensor over all its axes but the batch, reshaped (no copy) to
// [N, 1, 1, 1] and to [N, 1, 1, 1, 1] where they meet the blocked tensor again; erf stays blocked.
TEST(AlterOpLayout, PerSampleStatisticsAndErfStayBlocked) {
  Var x = VarNode::make("x", F32({2, 16, 5, 5}));
  Attrs mean{{"axis", std::vector<int64_t>{1, 2, 3}}, {"keepdims", int64_t{1}}};
  Expr c = Call("nn.conv2d", {x, ConstantNode::make(Random({16, 16, 1, 1}, 8))}, ConvAttrs(0));
  Expr d = Call("subtract", {c, Call("mean", {c}, mean)});
  Expr y = Call("nn.conv2d", {Call("erf", {Call("divide", {d, Call("sqrt", {Call("mean", {Call("multiply", {d, d})}, mean)})})}),
                              ConstantNode::make(Random({16, 16, 1, 1}, 9))},
                ConvAttrs(0));
  IRModule after = AlterOpLayout(IRModule::FromMain(FunctionNode::make({x}, y)));

  Var x2 = VarNode::make("x", F32({2, 16, 5, 5}));
  Attrs blocked_mean{{"axis", std::vector<int64_t>{1, 2, 3, 4}}, {"keepdims", int64_t{1}}};
  auto stat = [&](const Expr& v) { return Reshape(Reshape(Call("mean", {v}, blocked_mean), {2, 1, 1, 1}), {2, 1, 1, 1, 1}); };
  Expr c2 = Call("nn.contrib_conv2d_NCHWc", {LT(x2, "NCHW", "NCHW16c", 16), Zeros({1, 1, 1, 1, 16, 16})},
                 Blocked(ConvAttrs(0), 16, 16));
  Expr d2 = Call("subtract", {c2, stat(c2)});
  Expr s2 = Call("sqrt", {Reshape(Call("mean", {Call("multiply", {d2, d2})}, blocked_mean), {2, 1, 1, 1})});
  Expr e2 = Call("erf", {Call("divide", {d2, Reshape(s2, {2, 1, 1, 1, 1})})});
  Expr y2 = Call("nn.contrib_conv2d_NCHWc", {e2, Zeros({1, 1, 1, 1, 16, 16})}, Blocked(ConvAttrs(0), 16, 16));
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, LT(y2, "NCHW16c", "NCHW", 16))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

// Numerics: the model built with and without AlterOpLayout gives the same outputs.
std::vector<float> RunModel(const IRModule& mod, const runtime::NDArray& in, bool alter) {
  driver::BuildOptions options;
  if (!alter) options.disabled_passes.push_back("AlterOpLayout");
  runtime::GraphExecutor exec(driver::BuildJIT(mod, {"y"}, options), 1);
  exec.SetInput("x", in);
  exec.Run();
  runtime::NDArray out = exec.GetOutput("y");
  return std::vector<float>(out.data<float>(), out.data<float>() + out.NumElements());
}

// The model built with AlterOpLayout gives the outputs of the one built without it (1e-4 relative).
void ExpectSameNumerics(const IRModule& mod, const runtime::NDArray& in, const std::string& what = "") {
  std::vector<float> want = RunModel(mod, in, false), got = RunModel(mod, in, true);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " " << i;
}

TEST(AlterOpLayout, NumericsUnchangedEndToEnd) {
  Var x = VarNode::make("x", F32({1, 3, 13, 11}));
  Expr c1 = Call("nn.conv2d", {x, ConstantNode::make(Random({10, 3, 3, 3}, 1))}, ConvAttrs(1, 1, 2));
  Expr r1 = Call("clip", {Call("add", {c1, ConstantNode::make(Random({1, 10, 1, 1}, 2))})},
                 Attrs{{"a_min", 0.0}, {"a_max", 6.0}});
  Expr dw = Call("nn.conv2d", {r1, ConstantNode::make(Random({10, 1, 3, 3}, 3))}, ConvAttrs(1, 10));
  Expr c2 = Call("nn.conv2d", {dw, ConstantNode::make(Random({24, 10, 1, 1}, 4))}, ConvAttrs(0));
  Expr c3 = Call("nn.conv2d", {c2, ConstantNode::make(Random({24, 24, 3, 3}, 5))}, ConvAttrs(1));
  Expr y = Call("nn.relu", {Call("add", {c3, c2})});
  IRModule mod = IRModule::FromMain(FunctionNode::make({x}, y));
  runtime::NDArray in = Random({1, 3, 13, 11}, 9);
  ExpectSameNumerics(mod, in);
}

// Grouped convolutions as grouped NCHWc ones (merged or not, after a blocked producer or not) give
// the NCHW numerics.
TEST(AlterOpLayout, GroupedNumericsUnchangedEndToEnd) {
  Var x = VarNode::make("x", F32({1, 32, 9, 7}));
  // Groups of 4 (merged at 8- or 16-wide blocks), of 16 -> 32 strided, of 8 -> 8 after a blocked producer.
  Expr g1 = Call("nn.conv2d", {x, ConstantNode::make(Random({32, 4, 3, 3}, 1))}, ConvAttrs(1, 8));
  Expr g2 = Call("nn.conv2d", {Call("nn.relu", {g1}), ConstantNode::make(Random({64, 16, 3, 3}, 2))}, ConvAttrs(1, 2, 2));
  Expr g3 = Call("nn.conv2d", {g2, ConstantNode::make(Random({64, 8, 1, 1}, 3))}, ConvAttrs(0, 8));
  IRModule mod = IRModule::FromMain(FunctionNode::make({x}, Call("add", {g3, g2})));
  runtime::NDArray in = Random({1, 32, 9, 7}, 9);
  ExpectSameNumerics(mod, in);
}

// Blocked pooling (channels a multiple of the block and padded ones) and squeeze-excite give the
// NCHW numerics.
TEST(AlterOpLayout, PoolingNumericsUnchangedEndToEnd) {
  for (int64_t C : {32, 10}) {
    Var x = VarNode::make("x", F32({1, 3, 13, 11}));
    Expr r = Call("nn.relu", {Call("nn.conv2d", {x, ConstantNode::make(Random({C, 3, 3, 3}, 1))}, ConvAttrs(1))});
    Expr g = Call("nn.global_avg_pool2d", {r});
    Expr sc = Reshape(Call("sigmoid", {Reshape(g, {1, C})}), {1, C, 1, 1});
    Expr m = Call("multiply", {r, sc});
    Attrs mp = PoolAttrs(3, 2, 1);
    mp.Set("ceil_mode", int64_t{1});
    Expr p = Call("nn.max_pool2d", {m}, mp);
    Attrs ap = PoolAttrs(2, 1, 1);
    ap.Set("count_include_pad", int64_t{0});
    Expr a = Call("nn.avg_pool2d", {p}, ap);
    Expr y = Call("nn.conv2d", {a, ConstantNode::make(Random({8, C, 1, 1}, 4))}, ConvAttrs(0));
    IRModule mod = IRModule::FromMain(FunctionNode::make({x}, y));
    runtime::NDArray in = Random({1, 3, 13, 11}, 9);
    ExpectSameNumerics(mod, in, "C=" + std::to_string(C));
  }
}

// GroupNorm(1, C) as exported before opset 18 (reshape to [N, 1, C*H*W], statistics over axis 2,
// reshape back) between convolutions, with C a multiple of the block and with padded channels
// (C = 10: the statistics stay in NCHW), at batch 2: the NCHW numerics.
TEST(AlterOpLayout, FlattenedGroupNormNumericsUnchangedEndToEnd) {
  for (int64_t C : {32, 10}) {
    Var x = VarNode::make("x", F32({2, 3, 9, 7}));
    Expr c = Call("nn.conv2d", {x, ConstantNode::make(Random({C, 3, 3, 3}, 1))}, ConvAttrs(1));
    Attrs mean{{"axis", std::vector<int64_t>{2}}, {"keepdims", int64_t{1}}};
    Expr r = Reshape(c, {2, 1, C * 63});
    Expr d = Call("subtract", {r, Call("mean", {r}, mean)});
    Expr var = Call("add", {Call("mean", {Call("multiply", {d, d})}, mean), ConstantNode::make(Random({2, 1, 1}, 5))});
    Expr norm = Reshape(Call("divide", {d, Call("sqrt", {Call("abs", {var})})}), {2, C, 9, 7});
    Expr g = Call("erf", {Call("multiply", {norm, ConstantNode::make(Random({C, 1, 1}, 6))})});
    Expr y = Call("nn.conv2d", {g, ConstantNode::make(Random({8, C, 1, 1}, 4))}, ConvAttrs(0));
    IRModule mod = IRModule::FromMain(FunctionNode::make({x}, y));
    runtime::NDArray in = Random({2, 3, 9, 7}, 9);
    ExpectSameNumerics(mod, in, "C=" + std::to_string(C));
  }
}

}  // namespace
}  // namespace tessera::graph
