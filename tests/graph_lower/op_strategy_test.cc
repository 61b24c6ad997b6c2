// The op-strategy table: which implementation each target gets for a call (plevel, condition,
// key specificity, the generic fallback), the rewrites' per-target decisions, and a conv lowered
// for AArch64 whose NEON-width schedule computes what the unscheduled kernel computes.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/graph/expr.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/graph_lower/lower.h"
#include "tessera/graph_lower/op_strategy.h"
#include "tessera/support/error.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/util.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "topi_test_util.h"

namespace tessera::graph_lower {
namespace {

using target::Target;
const DataType f32 = DataType::Float(32);

te::Tensor Placeholder(const std::vector<int64_t>& shape, const std::string& name) {
  return te::placeholder(topi::MakeShape(shape), f32, name);
}

// The implementation the global table selects for `op` on `target`.
std::string Selected(const std::string& op, const std::vector<std::vector<int64_t>>& shapes, const graph::Attrs& attrs,
                     const std::vector<int64_t>& out_shape, const Target& target) {
  std::vector<te::Tensor> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(Placeholder(shapes[i], "in" + std::to_string(i)));
  graph::Type out = graph::TensorTypeNode::make(out_shape, f32);
  return OpStrategyTable::Global().Select(op, StrategyCall{attrs, inputs, out, target}).name;
}

graph::Attrs ConvAttrs(int64_t pad, int64_t groups = 1) {
  graph::Attrs a;
  a.Set("padding", std::vector<int64_t>{pad, pad, pad, pad});
  a.Set("groups", groups);
  return a;
}

const Target kAvx2 = Target::Parse("avx2");
const Target kAvx512 = Target::Parse("avx512");
const Target kAArch64 = Target::Parse("aarch64");
const Target kRiscv = Target::Parse("llvm -mtriple=riscv64-unknown-linux-gnu -mcpu=generic-rv64");

TEST(OpStrategy, ConvImplementationDependsOnTargetAndShape) {
  const std::string conv = "nn.contrib_conv2d_NCHWc";
  // 3x3 at 7x7 with 16-channel blocks: AVX2 (8 lanes, 16 registers) has no register tile for
  // the 7-pixel rows and takes the im2col form; AVX-512 and NEON the direct conv.
  const std::vector<std::vector<int64_t>> s7 = {{1, 4, 7, 7, 16}, {4, 4, 3, 3, 16, 16}};
  const std::vector<int64_t> o7 = {1, 4, 7, 7, 16};
  EXPECT_EQ(Selected(conv, s7, ConvAttrs(1), o7, kAvx2), "conv2d_NCHWc_im2col.x86");
  EXPECT_EQ(Selected(conv, s7, ConvAttrs(1), o7, kAvx512), "conv2d_NCHWc.cpu");
  EXPECT_EQ(Selected(conv, s7, ConvAttrs(1), o7, kAArch64), "conv2d_NCHWc.cpu");
  EXPECT_EQ(Selected(conv, s7, ConvAttrs(1), o7, kRiscv), "conv2d_NCHWc.cpu");
  // 56x56 has a tile on AVX2: the direct conv.
  EXPECT_EQ(Selected(conv, {{1, 4, 56, 56, 16}, {4, 4, 3, 3, 16, 16}}, ConvAttrs(1), {1, 4, 56, 56, 16}, kAvx2),
            "conv2d_NCHWc.cpu");
  // Depthwise: groups > 1.
  EXPECT_EQ(Selected(conv, {{1, 4, 14, 14, 16}, {4, 1, 3, 3, 1, 16}}, ConvAttrs(1, 64), {1, 4, 14, 14, 16}, kAvx2),
            "depthwise_conv2d_NCHWc.cpu");
}

TEST(OpStrategy, GemmOpsUseThePackedKernelOnCpusAndTheGenericComputeOtherwise) {
  EXPECT_EQ(Selected("nn.dense", {{8, 32}, {24, 32}}, {}, {8, 24}, kAArch64), "dense_pack.cpu");
  EXPECT_EQ(Selected("nn.matmul", {{8, 32}, {32, 24}}, {}, {8, 24}, kAvx2), "matmul_pack.cpu");
  // A matrix-vector product gains nothing from the micro-kernel: the op's registry compute.
  EXPECT_EQ(Selected("nn.matmul", {{8, 32}, {32}}, {}, {8}, kAvx2), "nn.matmul.generic");
  EXPECT_EQ(Selected("nn.relu", {{4, 4}}, {}, {4, 4}, kAvx2), "nn.relu.generic");
}

TEST(OpStrategy, SymbolicShapesGetOnlyImplementationsThatTakeThem) {
  // x [seq, 64] with a shape var: the in-kernel-packing dense template needs static shapes and is
  // skipped for the generic compute; the pre-packed GEMM takes a symbolic row count.
  const graph::Dim seq = graph::Dim::Symbolic("seq");
  std::vector<te::Tensor> dense_in = {te::placeholder({DimExtent(seq), topi::Index(64)}, f32, "x"),
                                      Placeholder({32, 64}, "w")};
  graph::Type dense_out = graph::TensorTypeNode::make(graph::Shape{seq, graph::Dim(32)}, f32);
  const graph::Attrs none;
  const StrategyCall dense{none, dense_in, dense_out, kAvx2};
  EXPECT_TRUE(HasSymbolicShapes(dense));
  EXPECT_EQ(OpStrategyTable::Global().Select("nn.dense", dense).name, "nn.dense.generic");
  EXPECT_EQ(Selected("nn.dense", {{4, 64}, {32, 64}}, none, {4, 32}, kAvx2), "dense_pack.cpu");

  std::vector<te::Tensor> packed_in = {dense_in[0], Placeholder({2, 64, 16}, "wp")};
  graph::Attrs units;
  units.Set("units", int64_t{32});
  const StrategyCall packed{units, packed_in, dense_out, kAvx2};
  EXPECT_EQ(OpStrategyTable::Global().Select("nn.contrib_dense_pack", packed).name, "gemm_packed.cpu");
}

TEST(OpStrategy, ListsEveryKeyOfTheTargetBestFirst) {
  auto names = [](const std::string& op, const Target& t) {
    std::vector<std::string> out;
    for (const auto& [key, impl] : OpStrategyTable::Global().Implementations(op, t)) out.push_back(key + ":" + impl->name);
    return out;
  };
  EXPECT_EQ(names("nn.contrib_conv2d_NCHWc", kAvx2),
            (std::vector<std::string>{"x86:conv2d_NCHWc_im2col.x86", "cpu:conv2d_NCHWc.cpu",
                                      "cpu:depthwise_conv2d_NCHWc.cpu"}));
  EXPECT_EQ(names("nn.contrib_conv2d_NCHWc", kAArch64),
            (std::vector<std::string>{"cpu:conv2d_NCHWc.cpu", "cpu:depthwise_conv2d_NCHWc.cpu"}));
  EXPECT_TRUE(names("nn.relu", kAvx2).empty());
}

// A private table: plevel decides, a failing condition passes over, a key the target lacks is
// invisible, a more specific key wins a plevel tie, and registration order breaks the rest.
TEST(OpStrategy, SelectionRules) {
  OpStrategyTable t;
  auto impl = [](const std::string& name, int plevel, bool applies) {
    OpImplementation i;
    i.name = name;
    i.plevel = plevel;
    i.condition = [applies](const StrategyCall&) { return applies; };
    i.compute = [](const StrategyCall& c) { return c.inputs; };
    return i;
  };
  t.Register("test.op", "cpu", impl("low.cpu", 5, true));
  t.Register("test.op", "arm", impl("arm_only.arm", 50, true));
  t.Register("test.op", "x86", impl("refused.x86", 40, false));
  t.Register("test.op", "cpu", impl("tie.cpu", 10, true));
  t.Register("test.op", "x86", impl("tie.x86", 10, true));
  std::vector<te::Tensor> in = {Placeholder({2}, "x")};
  graph::Type out = graph::TensorTypeNode::make(std::vector<int64_t>{2}, f32);
  graph::Attrs attrs;
  EXPECT_EQ(t.Select("test.op", {attrs, in, out, kAvx2}).name, "tie.x86");
  EXPECT_EQ(t.Select("test.op", {attrs, in, out, kAArch64}).name, "arm_only.arm");
  EXPECT_EQ(t.Select("test.op", {attrs, in, out, kRiscv}).name, "tie.cpu");
  // No implementation and no registry compute: an UnsupportedError naming the op and the keys.
  try {
    t.Select("test.no_such_op", {attrs, in, out, kAvx2});
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("test.no_such_op has no implementation for target"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("keys cpu, x86"), std::string::npos);
  }
}

TEST(OpStrategy, RewritesAreDecidedPerTarget) {
  const std::vector<int64_t> data = {1, 4, 56, 56, 16}, kernel = {4, 4, 3, 3, 16, 16};
  topi::Conv2DParams p;
  p.padding = {1, 1, 1, 1};
  EXPECT_EQ(RewritesFor(kAvx2).winograd_tile(data, kernel, p, kAvx2), 2);  // x86: measured F(2x2, 3x3)
  EXPECT_EQ(RewritesFor(kAArch64).winograd_tile(data, kernel, p, kAArch64), 0);  // generic: direct conv
  EXPECT_EQ(RewritesFor(kAvx2).layout_block(kAvx2), 16);
  EXPECT_EQ(RewritesFor(kAArch64).layout_block(kAArch64), 16);
  // NEON: a 16-lane vector is 4 q registers; accumulators + B vectors + a broadcast fit in 32.
  const topi::GemmPackTile neon = RewritesFor(kAArch64).gemm_tile(196, 256, 256, kAArch64);
  EXPECT_LE(neon.mr * neon.nv * 4 + neon.nv * 4 + 1, 32);
  EXPECT_GE(neon.mr * neon.nv * 4, 16);
  const topi::x86::ScheduleOptions o = RewritesFor(kAArch64).schedule_options(kAArch64);
  EXPECT_EQ(o.register_lanes, 4);
  EXPECT_EQ(o.vector_registers, 32);
  EXPECT_EQ(topi::x86::ChooseConvTile(56, 56, 16, o.register_lanes, false, o.vector_registers).oc_vectors, 4);
}

// A conv + relu lowered for AArch64: the strategy's implementation and template are recorded, and
// the NEON-width schedule computes what the unscheduled kernel does (reference interpreter).
TEST(OpStrategy, AArch64ConvKernelIsScheduledWithTheCpuTemplateAndComputesTheSame) {
  auto x = graph::VarNode::make("x", graph::TensorTypeNode::make(std::vector<int64_t>{1, 2, 8, 8, 16}, f32));
  auto w = graph::VarNode::make("w", graph::TensorTypeNode::make(std::vector<int64_t>{1, 2, 3, 3, 16, 16}, f32));
  graph::Expr conv = graph::CallNode::make(graph::OpNode::Get("nn.contrib_conv2d_NCHWc"), std::vector<graph::Expr>{x, w},
                                           ConvAttrs(1));
  graph::Expr relu = graph::CallNode::make(graph::OpNode::Get("nn.relu"), std::vector<graph::Expr>{conv});
  graph::Attrs prim;
  prim.Set("Primitive", 1);
  graph::Function fn = graph::FunctionNode::make({x, w}, relu, nullptr, prim);
  LoweredTE te_graph = LowerToTE(fn, "f", kAArch64);
  EXPECT_EQ(te_graph.implementations, (std::vector<std::string>{"conv2d_NCHWc.cpu", "nn.relu.generic"}));
  ASSERT_EQ(te_graph.schedules.size(), 1u);
  EXPECT_EQ(te_graph.schedules[0].name, "conv2d_NCHWc");
  std::vector<topi::testing::Data> in = {topi::testing::Random(2 * 8 * 8 * 16, 1),
                                         topi::testing::Random(2 * 9 * 16 * 16, 2)};
  std::vector<topi::testing::Data> results;
  for (bool scheduled : {false, true}) {
    tir::PrimFunc f = tir::transform::LowerToFlat(LowerPrimitiveFunction(fn, "f", kAArch64, scheduled));
    std::vector<topi::testing::Data> storage = in;
    storage.emplace_back(16 * 8 * 8, -777.0);
    std::vector<topi::testing::Data*> ptrs;
    for (auto& d : storage) ptrs.push_back(&d);
    topi::testing::RunPrimFunc(f, ptrs);
    results.push_back(storage.back());
  }
  topi::testing::ExpectNear(results[1], results[0], 1e-5, "NEON-width schedule");
  EXPECT_GT(*std::max_element(results[0].begin(), results[0].end()), 0.0);
}

}  // namespace
}  // namespace tessera::graph_lower
