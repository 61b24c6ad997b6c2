// graph_lower::WinogradConv2d: a 3x3 stride-1 NCHWc conv becomes input transform -> packed batch
// GEMM -> output transform (IR before -> IR after), convs it does not take stay, and a compiled
// model with Winograd convs (driver::BuildJIT + graph executor) equals a C++ reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "driver_test_util.h"
#include "tessera/codegen/run_tool.h"
#include "tessera/driver/build.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/alter_op_layout.h"
#include "tessera/graph_lower/winograd_conv2d.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/topi/x86/dense.h"

namespace tessera {
namespace {

using namespace tessera::graph;
using driver::testing::Call;
using driver::testing::ConvAttrs;
using driver::testing::F32;
using driver::testing::Random;

std::vector<std::string> Ops(const IRModule& m) {
  std::vector<std::string> ops;
  PostOrderVisit(m.main(), [&](const Expr& e) {
    if (const auto* c = e->as<CallNode>())
      if (const auto* op = c->op->as<OpNode>()) ops.push_back(op->name);
  });
  return ops;
}

// x [1, 2, 8, 8, 16] (NCHW16c, 32 channels), a 3x3 pad-1 conv to 32 channels: 16 tiles of 2x2.
TEST(WinogradConv2d, RewritesA3x3ConvExpectedIR) {
  Var x = VarNode::make("x", F32({1, 2, 8, 8, 16}));
  Attrs attrs = ConvAttrs(1, {1, 1, 1, 1});
  attrs.Set("data_layout", "NCHW16c").Set("kernel_layout", "OIHW16i16o").Set("out_layout", "NCHW16c");
  Expr conv = Call("nn.contrib_conv2d_NCHWc", {x, ConstantNode::make(Random({2, 2, 3, 3, 16, 16}, 1))}, attrs);
  IRModule after = graph_lower::WinogradConv2d(IRModule::FromMain(FunctionNode::make({x}, Call("nn.relu", {conv}))),
                                               driver::HostTarget());
  const topi::GemmPackTile t = topi::x86::ChooseGemmTile(16, 32, 32, driver::HostTarget());
  const int64_t rows = (16 + t.mr - 1) / t.mr * t.mr, nb = t.PaddedN(32) / 16;
  const std::string r = std::to_string(rows), n = std::to_string(nb);
  EXPECT_EQ(PrintModule(after),
            "def @main(%x: Tensor[(1, 2, 8, 8, 16), float32]) -> Tensor[(1, 2, 8, 8, 16), float32] {\n"
            "  %0 = nn.contrib_conv2d_winograd_input_transform(%x, tile_size=2, padding=[1, 1, 1, 1], rows=" + r +
                ") /* ty=Tensor[(16, " + r + ", 32), float32] */;\n"
            "  %1 = nn.contrib_batch_matmul_pack(%0, meta[Constant][0] /* ty=Tensor[(16, " + n +
                ", 32, 16), float32] */, units=32, gemm_mr=" + std::to_string(t.mr) +
                ", gemm_nv=" + std::to_string(t.nv) + ") /* ty=Tensor[(16, " + r + ", 32), float32] */;\n"
            "  %2 = nn.contrib_conv2d_winograd_output_transform(%1, tile_size=2, batch=1, out_h=8, out_w=8, "
                "channel_block=16) /* ty=Tensor[(1, 2, 8, 8, 16), float32] */;\n"
            "  nn.relu(%2) /* ty=Tensor[(1, 2, 8, 8, 16), float32] */\n"
            "}\n");
}

// Dilation 2 on 8x8 ('same', padding 2): 2 x 2 phases of 4x4 outputs, 2 x 2 tiles each: 16 tiles.
// 2 groups of 128 channels (8 blocks of 16 each; narrower groups stay direct by default,
// topi::x86::kWinogradMinGroupUnits): one GEMM per group and tile element (batch 2 x 16) over each
// group's 128 channels. The transforms carry the dilation / the groups.
TEST(WinogradConv2d, RewritesDilatedAndGroupedConvsExpectedIR) {
  struct Case {
    int64_t blocks, dilation, groups;
    std::string padding, attr;  // the conv's padding; the transforms' extra attribute
    int64_t batch;              // the GEMM's batch: groups x 16
  };
  for (const Case& c : {Case{2, 2, 1, "[2, 2, 2, 2]", "dilation=2", 16}, Case{16, 1, 2, "[1, 1, 1, 1]", "groups=2", 32}}) {
    const std::string xs = "(1, " + std::to_string(c.blocks) + ", 8, 8, 16)";
    Var x = VarNode::make("x", F32({1, c.blocks, 8, 8, 16}));
    const int64_t pad = c.dilation;
    Attrs attrs = ConvAttrs(1, {pad, pad, pad, pad});
    attrs.Set("dilation", std::vector<int64_t>{c.dilation, c.dilation}).Set("groups", c.groups);
    attrs.Set("data_layout", "NCHW16c").Set("kernel_layout", "OIHW16i16o").Set("out_layout", "NCHW16c");
    Expr w = ConstantNode::make(Random({c.blocks, c.blocks / c.groups, 3, 3, 16, 16}, 1));
    Expr conv = Call("nn.contrib_conv2d_NCHWc", {x, w}, attrs);
    IRModule after = graph_lower::WinogradConv2d(IRModule::FromMain(FunctionNode::make({x}, conv)), driver::HostTarget());
    const int64_t units = c.blocks * 16 / c.groups;  // a group's channels (= its outputs)
    const topi::GemmPackTile t = topi::x86::ChooseGemmTile(16, units, units, driver::HostTarget());
    const int64_t rows = (16 + t.mr - 1) / t.mr * t.mr, nb = t.PaddedN(units) / 16;
    const std::string r = std::to_string(rows), n = std::to_string(nb), b = std::to_string(c.batch);
    const std::string u = std::to_string(units);
    EXPECT_EQ(PrintModule(after),
              "def @main(%x: Tensor[" + xs + ", float32]) -> Tensor[" + xs + ", float32] {\n"
              "  %0 = nn.contrib_conv2d_winograd_input_transform(%x, tile_size=2, padding=" + c.padding + ", rows=" + r +
                  ", " + c.attr + ") /* ty=Tensor[(" + b + ", " + r + ", " + u + "), float32] */;\n"
              "  %1 = nn.contrib_batch_matmul_pack(%0, meta[Constant][0] /* ty=Tensor[(" + b + ", " + n +
                  ", " + u + ", 16), float32] */, units=" + u + ", gemm_mr=" + std::to_string(t.mr) +
                  ", gemm_nv=" + std::to_string(t.nv) + ") /* ty=Tensor[(" + b + ", " + r + ", " + u + "), float32] */;\n"
              "  nn.contrib_conv2d_winograd_output_transform(%1, tile_size=2, batch=1, out_h=8, out_w=8, "
                  "channel_block=16, " + c.attr + ") /* ty=Tensor[" + xs + ", float32] */\n"
              "}\n");
  }
}

// Stride 2, a 5x5 output (9 tiles, a third of them past the output), 16 channels, a 1x1 kernel,
// unequal dilations, a dilation whose phases are mostly padding, groups of 16 channels, groups of 32
// (below topi::x86::kWinogradMinGroupUnits): the direct convolution stays.
TEST(WinogradConv2d, LeavesOtherConvsAlone) {
  struct Case {
    std::vector<int64_t> x, w;
    int64_t stride;
    std::vector<int64_t> pad, dilation = {1, 1};
    int64_t groups = 1;
  };
  for (const Case& c : {Case{{1, 2, 8, 8, 16}, {2, 2, 3, 3, 16, 16}, 2, {1, 1, 1, 1}},
                        Case{{1, 2, 5, 5, 16}, {2, 2, 3, 3, 16, 16}, 1, {1, 1, 1, 1}},
                        Case{{1, 1, 8, 8, 16}, {1, 1, 3, 3, 16, 16}, 1, {1, 1, 1, 1}},
                        Case{{1, 2, 8, 8, 16}, {2, 2, 1, 1, 16, 16}, 1, {0, 0, 0, 0}},
                        Case{{1, 2, 8, 8, 16}, {2, 2, 3, 3, 16, 16}, 1, {2, 1, 2, 1}, {2, 1}},
                        Case{{1, 2, 8, 8, 16}, {2, 2, 3, 3, 16, 16}, 1, {6, 6, 6, 6}, {6, 6}},
                        Case{{1, 4, 8, 8, 16}, {4, 1, 3, 3, 16, 16}, 1, {1, 1, 1, 1}, {1, 1}, 4},
                        Case{{1, 4, 8, 8, 16}, {4, 2, 3, 3, 16, 16}, 1, {1, 1, 1, 1}, {1, 1}, 2}}) {
    Var x = VarNode::make("x", F32(c.x));
    Attrs attrs = ConvAttrs(c.stride, c.pad);
    attrs.Set("dilation", c.dilation).Set("groups", c.groups);
    Expr conv = Call("nn.contrib_conv2d_NCHWc", {x, ConstantNode::make(Random(c.w, 1))}, attrs);
    IRModule after = graph_lower::WinogradConv2d(IRModule::FromMain(FunctionNode::make({x}, conv)), driver::HostTarget());
    EXPECT_EQ(Ops(after), std::vector<std::string>{"nn.contrib_conv2d_NCHWc"}) << PrintModule(after);
  }
}

// The tile is a knob per conv workload (graph_lower/winograd_conv2d.h): candidates 0 (direct), 2
// and 4, the strategy's choice as fallback; two convs of one workload share it; the configured or
// looked-up value is the one built.
TEST(WinogradConv2d, TheTileIsAKnobPerWorkload) {
  Var x = VarNode::make("x", F32({1, 2, 8, 8, 16}));
  Attrs attrs = ConvAttrs(1, {1, 1, 1, 1});
  attrs.Set("data_layout", "NCHW16c").Set("kernel_layout", "OIHW16i16o").Set("out_layout", "NCHW16c");
  Expr a = Call("nn.contrib_conv2d_NCHWc", {x, ConstantNode::make(Random({2, 2, 3, 3, 16, 16}, 1))}, attrs);
  Expr b = Call("nn.contrib_conv2d_NCHWc", {a, ConstantNode::make(Random({2, 2, 3, 3, 16, 16}, 2))}, attrs);
  const IRModule mod = IRModule::FromMain(FunctionNode::make({x}, b));
  const std::string knob = "WinogradConv2d.tile[data 1x2x8x8x16, kernel 2x2x3x3x16x16, padding 1x1x1x1, dilation 1, groups 1]";
  EXPECT_EQ(graph_lower::WinogradTileKnob({1, 2, 8, 8, 16}, {2, 2, 3, 3, 16, 16}, topi::Conv2DParams{{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}), knob);
  auto tiles = [](const IRModule& m) {
    std::vector<int64_t> out;
    PostOrderVisit(m.main(), [&](const Expr& e) {
      if (const auto* c = e->as<CallNode>())
        if (const auto* op = c->op->as<OpNode>(); op && op->name == "nn.contrib_conv2d_winograd_output_transform")
          out.push_back(c->attrs.GetInt("tile_size", -1));
    });
    return out;
  };
  topi::KnobContext discover;
  EXPECT_EQ(tiles(graph_lower::WinogradConv2d(mod, driver::HostTarget(), &discover)), (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(discover.space().size(), 1u);
  EXPECT_EQ(discover.space()[0].name, knob);
  EXPECT_EQ(discover.space()[0].candidates, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(discover.space()[0].fallback, 2);
  topi::KnobContext direct({{knob, 0}});
  EXPECT_EQ(Ops(graph_lower::WinogradConv2d(mod, driver::HostTarget(), &direct)),
            (std::vector<std::string>{"nn.contrib_conv2d_NCHWc", "nn.contrib_conv2d_NCHWc"}));
  topi::KnobContext looked_up({}, [&](const std::string& name) -> std::optional<int64_t> {
    return name == knob ? std::optional<int64_t>(4) : std::nullopt;
  });
  EXPECT_EQ(tiles(graph_lower::WinogradConv2d(mod, driver::HostTarget(), &looked_up)), (std::vector<int64_t>{4, 4}));
  // A value that is no candidate (6) is the fallback.
  topi::KnobContext bad({{knob, 6}});
  EXPECT_EQ(tiles(graph_lower::WinogradConv2d(mod, driver::HostTarget(), &bad)), (std::vector<int64_t>{2, 2}));
}

// relu(conv3x3(x) + b) + x, N = 2, 40 channels, 7x9 (CompiledModelMatchesReference below).
struct ResidualConv {
  static constexpr int64_t N = 2, C = 40, H = 7, W = 9;
  runtime::NDArray w = Random({C, C, 3, 3}, 1, -0.2f, 0.2f), b = Random({1, C, 1, 1}, 2);
  IRModule Module() const {
    Var x = VarNode::make("x", F32({N, C, H, W}));
    Expr conv = Call("nn.conv2d", {x, ConstantNode::make(w)}, ConvAttrs(1, {1, 1, 1, 1}));
    Expr y = Call("add", {Call("nn.relu", {Call("add", {conv, ConstantNode::make(b)})}), x});
    return IRModule::FromMain(FunctionNode::make({x}, y));
  }
  // y against a double-precision C++ loop; the number of elements off by more than 1e-4 (abs + rel).
  int Mismatches(const runtime::NDArray& in, const runtime::NDArray& out) const {
    const float* xi = in.data<float>();
    int bad = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < C; ++k)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t ww = 0; ww < W; ++ww) {
            const double acc = b.data<float>()[k] + driver::testing::Conv3x3Pad1At(xi, w.data<float>(), C, H, W, n, k, h, ww);
            const int64_t i = ((n * C + k) * H + h) * W + ww;
            const double ref = std::max(acc, 0.0) + xi[i];
            if (std::fabs(out.data<float>()[i] - ref) > 1e-4 + 1e-4 * std::fabs(ref) && bad++ < 5)
              ADD_FAILURE() << "y[" << n << "," << k << "," << h << "," << ww << "] = " << out.data<float>()[i]
                            << ", want " << ref;
          }
    return bad;
  }
};

// ExtractTasks with choices: the model's tasks as built (F(2x2)), then those of the direct conv and
// of F(4x4); each value's own kernels are what its build runs beyond the shared ones. Here that is
// every kernel: the Winograd input transform takes the NCHW -> NCHW10c layout transform into its
// kernel, which the direct conv leaves as a kernel of its own (so the transforms count in the
// direct conv's cost), and the output transform or the direct conv take the epilogue and the
// transform back to NCHW.
TEST(WinogradConv2d, ExtractTasksListsEveryTileAndItsKernels) {
  const ResidualConv model;
  driver::BuildOptions options;
  options.target = "avx2";  // nothing runs; AVX2 has no block knob (test_layout_block_knob.cc)
  const std::vector<tune::TuneTask> plain = driver::ExtractTasks(model.Module(), {"y"}, options);
  std::vector<tune::RewriteChoice> choices;
  const std::vector<tune::TuneTask> tasks = driver::ExtractTasks(model.Module(), {"y"}, options, &choices);
  ASSERT_EQ(choices.size(), 1u);
  const tune::RewriteChoice& c = choices[0];
  EXPECT_EQ(c.knob, "WinogradConv2d.tile[data 2x4x7x9x10, kernel 3x4x3x3x10x16, padding 1x1x1x1, dilation 1, groups 1]");
  EXPECT_EQ(c.candidates, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(c.fallback, 2);
  ASSERT_EQ(c.kernels.size(), 3u);
  EXPECT_EQ(c.kernels.at(0).size(), 3u);
  EXPECT_EQ(c.kernels.at(2).size(), 3u);
  EXPECT_EQ(c.kernels.at(4).size(), 3u);
  // The model as built comes first, unchanged; then the other values' kernels, labelled.
  std::string listing;
  for (const tune::TuneTask& t : tasks) listing += "\n  " + t.name + " [" + t.rewrite + "] " + t.workload_hash;
  ASSERT_EQ(tasks.size(), plain.size() + 6) << listing;
  std::map<std::string, std::string> rewrite_of;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i < plain.size()) {
      EXPECT_EQ(tasks[i].workload_hash, plain[i].workload_hash);
      EXPECT_EQ(tasks[i].rewrite, "");
    }
    rewrite_of[tasks[i].workload_hash] = tasks[i].rewrite;
  }
  for (const auto& [value, kernels] : c.kernels)
    for (const auto& [hash, calls] : kernels) {
      ASSERT_TRUE(rewrite_of.count(hash)) << "value " << value << ": kernel " << hash << " is no task";
      EXPECT_EQ(rewrite_of.at(hash), value == 2 ? "" : c.knob + "=" + std::to_string(value));
      EXPECT_EQ(calls, 1);
    }
}

// compile --db: the database's decision for the knob is the tile built (read back from the IR
// after WinogradConv2d), F(4x4) matches the reference, and a decision for another target is not
// applied.
TEST(WinogradConv2d, BuildTakesTheDatabasesDecision) {
  const ResidualConv model;
  const target::Target host = driver::HostTarget();
  const std::string knob =
      "WinogradConv2d.tile[data 2x4x7x9x10, kernel 3x4x3x3x10x16, padding 1x1x1x1, dilation 1, groups 1]";
  const codegen::TempDir dir("tessera-wino-db");
  auto built_tile = [&](const std::string& db_path) {
    driver::BuildOptions options;
    options.tuning_db = db_path;
    options.dump_ir_dir = dir.path() + "/ir";
    std::filesystem::remove_all(options.dump_ir_dir);
    runtime::GraphExecutor exec(driver::BuildJIT(model.Module(), {"y"}, options), 2);
    auto in = Random({ResidualConv::N, ResidualConv::C, ResidualConv::H, ResidualConv::W}, 3);
    exec.SetInput("x", in);
    exec.Run();
    EXPECT_EQ(model.Mismatches(in, exec.GetOutput("y")), 0);
    const std::string text = driver::testing::DumpedStep(options.dump_ir_dir, "WinogradConv2d");
    EXPECT_FALSE(text.empty()) << "no WinogradConv2d step in " << options.dump_ir_dir;
    if (text.find("winograd_output_transform") == std::string::npos) return int64_t{0};
    return text.find("tile_size=4") != std::string::npos ? int64_t{4} : int64_t{2};
  };
  const std::string f4 = dir.path() + "/f4.jsonl", other = dir.path() + "/other.jsonl",
                    direct = dir.path() + "/direct.jsonl";
  driver::testing::CommitRewriteDecision(f4, knob, host.str(), 4);
  driver::testing::CommitRewriteDecision(other, knob, "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512", 4);
  driver::testing::CommitRewriteDecision(direct, knob, host.str(), 0);
  EXPECT_EQ(built_tile(f4), 4);
  EXPECT_EQ(built_tile(other), 2);
  EXPECT_EQ(built_tile(direct), 0);
}

// relu(conv3x3(x) + b) + x on a batch of 2 (tiles of both images in one GEMM), 40 channels (padded
// to 48 in NCHW16c), 7x9 (partial tiles in both directions), compiled at opt level 3, against a
// double-precision C++ loop.
TEST(WinogradConv2d, CompiledModelMatchesReference) {
  const ResidualConv model;
  const std::vector<std::string> ops =
      Ops(graph_lower::WinogradConv2d(transform::AlterOpLayout(model.Module()), driver::HostTarget()));
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "nn.contrib_conv2d_winograd_output_transform"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "nn.contrib_conv2d_NCHWc"), 0);
  driver::BuildOptions options;
  options.opt_level = 3;
  runtime::GraphExecutor exec(driver::BuildJIT(model.Module(), {"y"}, options), 2);
  auto in = Random({ResidualConv::N, ResidualConv::C, ResidualConv::H, ResidualConv::W}, 3);
  exec.SetInput("x", in);
  exec.Run();
  runtime::NDArray out = exec.GetOutput("y");
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{ResidualConv::N, ResidualConv::C, ResidualConv::H, ResidualConv::W}));
  EXPECT_EQ(model.Mismatches(in, out), 0);
}

}  // namespace
}  // namespace tessera
