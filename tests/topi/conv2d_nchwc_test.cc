// conv2d_NCHWc / depthwise_conv2d_NCHWc / layout_transform: the computes against a direct
// NCHW C++ reference, and the x86 schedules (conv2d_nchwc.h) numerically equal to them in
// every mode (unscheduled, scheduled, flat, LLVM JIT), on shapes that do not divide the tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"
#include <cstdio>
#include <cstdlib>
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/layout.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/schedule.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

struct Case {
  int64_t c, h, w, k, kh, kw;
  Conv2DParams p;
  int64_t cb, kb;  // data / output channel blocks
};

Data Ref(const Case& cc, const Data& x, const Data& wt, int64_t oh, int64_t ow, bool dw) {
  Data out(cc.k * oh * ow, 0.0);
  for (int64_t o = 0; o < cc.k; ++o)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        double acc = 0;
        for (int64_t c = 0; c < (dw ? 1 : cc.c); ++c)
          for (int64_t ky = 0; ky < cc.kh; ++ky)
            for (int64_t kx = 0; kx < cc.kw; ++kx) {
              int64_t iy = y * cc.p.strides[0] + ky * cc.p.dilation[0] - cc.p.padding[0];
              int64_t ix = xx * cc.p.strides[1] + kx * cc.p.dilation[1] - cc.p.padding[1];
              if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
              int64_t ci = dw ? o : c;
              acc += x[(ci * cc.h + iy) * cc.w + ix] * wt[((o * (dw ? 1 : cc.c) + c) * cc.kh + ky) * cc.kw + kx];
            }
        out[(o * oh + y) * ow + xx] = acc;
      }
  return out;
}

// NCHW (N = 1) -> NCHW<b>c with zero channels past C.
Data Pack(const Data& x, int64_t C, int64_t H, int64_t W, int64_t b) {
  int64_t Cb = (C + b - 1) / b;
  Data out(Cb * H * W * b, 0.0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < H * W; ++i) out[((c / b) * H * W + i) * b + c % b] = x[c * H * W + i];
  return out;
}

Data ToDouble(const std::vector<float>& v) { return Data(v.begin(), v.end()); }

std::vector<float> ToFloat(const Data& v) { return std::vector<float>(v.begin(), v.end()); }

void RunCase(const Case& cc, bool depthwise, bool epilogue, bool im2col = false) {
  SCOPED_TRACE(::testing::Message() << "C=" << cc.c << " H=" << cc.h << " W=" << cc.w << " K=" << cc.k << " "
                                    << cc.kh << "x" << cc.kw << " s=" << cc.p.strides[0] << "," << cc.p.strides[1]
                                    << " dw=" << depthwise << " cb=" << cc.cb << " kb=" << cc.kb
                                    << " im2col=" << im2col);
  const auto [oh, ow] = Conv2DOutHW(cc.h, cc.w, cc.kh, cc.kw, cc.p);
  Data x = testing::Random(cc.c * cc.h * cc.w, 1);
  Data w = testing::Random(cc.k * (depthwise ? 1 : cc.c) * cc.kh * cc.kw, 2);
  Data bias = testing::Random(cc.k, 3);
  Data want = Ref(cc, x, w, oh, ow, depthwise);
  if (epilogue)
    for (int64_t o = 0; o < cc.k; ++o)
      for (int64_t i = 0; i < oh * ow; ++i) want[o * oh * ow + i] = std::max(want[o * oh * ow + i] + bias[o], 0.0);
  const int64_t Cb = (cc.c + cc.cb - 1) / cc.cb, Kb = (cc.k + cc.kb - 1) / cc.kb;
  Tensor data = te::placeholder(MakeShape({1, Cb, cc.h, cc.w, cc.cb}), f32, "data");
  Data wp, bp = Pack(bias, cc.k, 1, 1, cc.kb);
  Tensor out;
  Tensor kernel;
  if (depthwise) {
    kernel = te::placeholder(MakeShape({Kb, 1, cc.kh, cc.kw, 1, cc.kb}), f32, "kernel");
    wp = ToDouble(PackDepthwiseWeightNCHWc(ToFloat(w).data(), cc.k, cc.kh, cc.kw, cc.kb));
    out = depthwise_conv2d_NCHWc(data, kernel, cc.p);
  } else {
    kernel = te::placeholder(MakeShape({Kb, Cb, cc.kh, cc.kw, cc.cb, cc.kb}), f32, "kernel");
    wp = ToDouble(PackConv2dWeightNCHWc(ToFloat(w).data(), cc.k, cc.c, cc.kh, cc.kw, cc.cb, cc.kb));
    out = conv2d_NCHWc(data, kernel, cc.p, im2col);
  }
  std::vector<Tensor> inputs = {data, kernel};
  std::vector<Data> in_data = {Pack(x, cc.c, cc.h, cc.w, cc.cb), wp};
  if (epilogue) {
    Tensor b = te::placeholder(MakeShape({1, Kb, 1, 1, cc.kb}), f32, "bias");
    out = relu(add(out, b));
    inputs.push_back(b);
    in_data.push_back(bp);
  }
  testing::CheckAllModes(inputs, out, in_data, Pack(want, cc.k, oh, ow, cc.kb), 1e-4);
}

Conv2DParams P(int64_t s, int64_t pad, int64_t d = 1) {
  Conv2DParams p;
  p.strides = {s, s};
  p.padding = {pad, pad, pad, pad};
  p.dilation = {d, d};
  return p;
}

// Split in three tests so ctest runs them in parallel (minutes each under ASan).
TEST(TopiConv2dNCHWc, MatchesReference) {
  Conv2DParams asym = P(1, 0);
  asym.padding = {1, 0, 2, 1};
  Conv2DParams s21 = P(1, 1);
  s21.strides = {2, 1};
  for (const Case& cc : {Case{3, 9, 7, 10, 3, 3, P(1, 1), 3, 16}, Case{16, 8, 8, 16, 3, 3, P(1, 1), 16, 16},
                         Case{5, 9, 11, 20, 3, 3, P(2, 1), 8, 16}, Case{8, 10, 9, 16, 3, 3, asym, 8, 16},
                         Case{16, 9, 13, 16, 3, 3, P(1, 2, 2), 16, 16}, Case{32, 6, 30, 16, 1, 1, P(1, 0), 16, 16},
                         Case{4, 7, 37, 8, 3, 3, s21, 4, 8}, Case{3, 12, 12, 16, 5, 5, P(1, 2), 1, 16}}) {
    RunCase(cc, false, false);
  }
}

TEST(TopiConv2dNCHWc, StridedPointwiseMatchesReference) {
  // strided 1x1: the subsampling stage, even and odd extents
  Conv2DParams s21_1x1 = P(1, 0);
  s21_1x1.strides = {2, 1};
  for (const Case& cc : {Case{32, 14, 14, 32, 1, 1, P(2, 0), 16, 16}, Case{16, 9, 11, 16, 1, 1, P(2, 0), 16, 16},
                         Case{8, 10, 7, 16, 1, 1, s21_1x1, 8, 16}}) {
    RunCase(cc, false, false);
  }
}

TEST(TopiConv2dNCHWc, RegisterTilesMatchReference) {
  // 14x14: the two-row tile on AVX2; 7x7 stride-1 1x1: pixels fused across rows,
  // 49 = 8 x 6 + 1 (a tail LoopPartition splits off)
  for (const Case& cc : {Case{16, 14, 14, 16, 3, 3, P(1, 1), 16, 16}, Case{32, 7, 7, 32, 1, 1, P(1, 0), 16, 16}}) {
    RunCase(cc, false, false);
  }
}

TEST(TopiConv2dNCHWc, TailTilesMatchReference) {
  // 26 wide: 6-pixel tiles and a 2-pixel tail; 14 wide: two rows of 3 pixels and a 2-pixel
  // tail; both with the reduction blocked (64 channels x 3 x 3 x 16 floats = 36 KiB per block).
  for (const Case& cc : {Case{64, 1, 26, 16, 3, 3, P(1, 1), 16, 16}, Case{64, 2, 14, 16, 3, 3, P(1, 1), 16, 16}}) {
    RunCase(cc, false, false);
  }
}

TEST(TopiConv2dNCHWc, FusedBiasReluEpilogue) {
  RunCase(Case{16, 8, 14, 32, 3, 3, P(1, 1), 16, 16}, false, true);
  RunCase(Case{3, 7, 7, 10, 3, 3, P(2, 1), 3, 16}, false, true);
  RunCase(Case{32, 7, 7, 48, 1, 1, P(1, 0), 16, 16}, false, true);
}

TEST(TopiConv2dNCHWc, Im2colMatchesReference) {
  // The im2col stage (padding inlined into it) and the fused-pixel 6 x 2 tile with the reduction
  // blocked over the output block: 7x7 at stride 1 and 2, dilation, a non-square output, and
  // the bias + relu epilogue under the output-channel block.
  for (const Case& cc : {Case{32, 7, 7, 16, 3, 3, P(1, 1), 16, 16}, Case{16, 10, 10, 16, 3, 3, P(2, 1), 16, 16},
                         Case{16, 7, 9, 16, 3, 3, P(1, 2, 2), 16, 16}, Case{3, 7, 7, 10, 3, 3, P(1, 1), 3, 16}}) {
    RunCase(cc, false, false, true);
  }
  RunCase(Case{16, 7, 7, 16, 3, 3, P(1, 1), 16, 16}, false, true, true);
}

// Grouped: every group's channels in whole blocks (as AlterOpLayout packs them); the reference is a
// direct grouped NCHW convolution.
TEST(TopiConv2dNCHWc, GroupedMatchesReference) {
  struct G {
    int64_t c, k, g, h, w, kh, cb, kb;
    Conv2DParams p;
  };
  for (const G& gc : {G{16, 32, 2, 7, 9, 3, 8, 8, P(1, 1)}, G{32, 32, 4, 8, 6, 3, 8, 8, P(2, 1)},
                      G{32, 64, 2, 5, 5, 1, 8, 16, P(1, 0)}}) {
    SCOPED_TRACE(::testing::Message() << "C=" << gc.c << " K=" << gc.k << " groups=" << gc.g);
    const int64_t cg = gc.c / gc.g, kg = gc.k / gc.g;
    Conv2DParams p = gc.p;
    p.groups = gc.g;
    const auto [oh, ow] = Conv2DOutHW(gc.h, gc.w, gc.kh, gc.kh, p);
    Data x = testing::Random(gc.c * gc.h * gc.w, 1), wt = testing::Random(gc.k * cg * gc.kh * gc.kh, 2);
    Data want(gc.k * oh * ow, 0.0);
    for (int64_t o = 0; o < gc.k; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx)
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < gc.kh; ++ky)
              for (int64_t kx = 0; kx < gc.kh; ++kx) {
                const int64_t iy = y * p.strides[0] + ky - p.padding[0], ix = xx * p.strides[1] + kx - p.padding[1];
                if (iy < 0 || iy >= gc.h || ix < 0 || ix >= gc.w) continue;
                want[(o * oh + y) * ow + xx] += x[((o / kg * cg + c) * gc.h + iy) * gc.w + ix] *
                                                wt[((o * cg + c) * gc.kh + ky) * gc.kh + kx];
              }
    // kernel [K/kb, cg/cb, KH, KW, cb, kb]: output channel o reads its group's input channel c.
    const int64_t cgb = cg / gc.cb;
    Data wp(gc.k * cg * gc.kh * gc.kh, 0.0);
    for (int64_t o = 0; o < gc.k; ++o)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t r = 0; r < gc.kh * gc.kh; ++r)
          wp[(((o / gc.kb * cgb + c / gc.cb) * gc.kh * gc.kh + r) * gc.cb + c % gc.cb) * gc.kb + o % gc.kb] =
              wt[(o * cg + c) * gc.kh * gc.kh + r];
    Tensor data = te::placeholder(MakeShape({1, gc.c / gc.cb, gc.h, gc.w, gc.cb}), f32, "data");
    Tensor kernel = te::placeholder(MakeShape({gc.k / gc.kb, cgb, gc.kh, gc.kh, gc.cb, gc.kb}), f32, "kernel");
    testing::CheckAllModes({data, kernel}, conv2d_NCHWc(data, kernel, p), {Pack(x, gc.c, gc.h, gc.w, gc.cb), wp},
                           Pack(want, gc.k, oh, ow, gc.kb), 1e-4);
  }
}

TEST(TopiConv2dNCHWc, DepthwiseMatchesReference) {
  Conv2DParams asym = P(1, 0);
  asym.padding = {0, 1, 1, 2};
  for (const Case& cc : {Case{16, 9, 9, 16, 3, 3, P(1, 1), 16, 16}, Case{20, 11, 7, 20, 3, 3, P(2, 1), 16, 16},
                         Case{32, 8, 30, 32, 3, 3, P(1, 2, 2), 16, 16}, Case{8, 6, 10, 8, 5, 5, asym, 8, 8}}) {
    RunCase(cc, true, false);
  }
  RunCase(Case{16, 8, 14, 16, 3, 3, P(1, 1), 16, 16}, true, true);
}

using Kinds = testing::LoopKinds;

// The schedules of these tests are the AVX2 target's (testing::TestTarget()).
const x86::ScheduleOptions kAvx2 = x86::ScheduleOptionsFor(testing::TestTarget());

TEST(TopiConv2dNCHWc, ScheduleStructure) {
  Tensor data = te::placeholder(MakeShape({1, 4, 56, 56, 16}), f32, "data");
  Tensor kernel = te::placeholder(MakeShape({4, 4, 3, 3, 16, 16}), f32, "kernel");
  Tensor bias = te::placeholder(MakeShape({1, 4, 1, 1, 16}), f32, "bias");
  Tensor out = relu(add(conv2d_NCHWc(data, kernel, P(1, 1)), bias));
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({data, kernel, bias, out}, "k"), kAvx2);
  Kinds k;
  k.VisitStmt(f->body);
  EXPECT_TRUE(k.blocks.count(kNCHWcPadName)) << "padding stays a separate stage";
  EXPECT_TRUE(k.blocks.count("conv2d_NCHWc_init"));
  EXPECT_EQ(k.blocks.count("T_add"), 0u) << "the bias add is inlined into the relu epilogue";
  EXPECT_EQ(k.parallel, 2) << "pad and conv nests";
  EXPECT_GE(k.vectorized, 3);
  const bool two_vectors = x86::ChooseConvTile(56, 56, 16, testing::TestTarget().VectorLanes(32), false).oc_vectors == 2;
  // 4 x 3 x 3 x 16 x 16 floats of kernel per output block (36 KiB > 32 KiB): the reduction is
  // blocked, the epilogue runs once per row (56 wide, not unrolled).
  EXPECT_EQ(k.unrolled, two_vectors ? 2 : 1) << "the ow tile (and the oc vectors) of the micro-kernel";
  EXPECT_EQ(x86::ConvOwTile(56, 14), 14);
  EXPECT_EQ(x86::ConvOwTile(56, 12), 8);
  EXPECT_EQ(x86::ConvOwTile(7, 12), 7);
  EXPECT_EQ(x86::ConvOwTile(15, 12), 15);
  EXPECT_EQ(x86::ConvOwTile(37, 12), 12);
}

// The names of the parallel loops of a scheduled body (a fused loop is named after its parts).
struct ParallelLoopNames : tir::StmtExprVisitor {
  std::vector<std::string> names;
  void VisitStmt_(const tir::ForNode* op) override {
    if (op->for_kind == tir::ForKind::kParallel) names.push_back(op->loop_var->name_hint);
    StmtExprVisitor::VisitStmt_(op);
  }
};

TEST(TopiConv2dNCHWc, TaskOrderKeepsTheInputInL2WhenItFits) {
  // A 1x1 conv 1024 -> 256 at 14x14: an 784 KiB input, a 1 MiB kernel. With a 512 KiB L2 the
  // input does not fit in half of it: rows outermost, each row's input stays in L2 while every
  // output-channel block runs. With a 2 MiB L2 it fits: output-channel blocks outermost, each
  // block's kernel read once.
  Tensor data = te::placeholder(MakeShape({1, 64, 14, 14, 16}), f32, "data");
  Tensor kernel = te::placeholder(MakeShape({16, 64, 1, 1, 16, 16}), f32, "kernel");
  const tir::PrimFunc func = te::create_prim_func({data, kernel, conv2d_NCHWc(data, kernel, P(1, 0))}, "k");
  std::vector<std::string> orders;
  for (int64_t l2 : {512 * 1024, 2 * 1024 * 1024}) {
    x86::ScheduleOptions opt = kAvx2;
    opt.l2_bytes = l2;
    ParallelLoopNames loops;
    loops.VisitStmt(x86::DefaultSchedule(func, opt)->body);
    ASSERT_EQ(loops.names.size(), 1u) << "L2 " << l2;
    orders.push_back(loops.names[0]);
  }
  // The compute's loops are i (batch), j (output-channel block), k (row: k_0 its row tiles), ...
  EXPECT_EQ(orders[0], "i_k_0_j_fused") << "512 KiB L2: rows outermost";
  EXPECT_EQ(orders[1], "i_j_k_0_fused") << "2 MiB L2: output-channel blocks outermost";
}

// The unrolled loops of a scheduled body with their extents.
struct UnrolledExtents : tir::StmtExprVisitor {
  std::vector<int64_t> extents;
  void VisitStmt_(const tir::ForNode* op) override {
    if (op->for_kind == tir::ForKind::kUnrolled) extents.push_back(ir::get_const_int(op->extent));
    StmtExprVisitor::VisitStmt_(op);
  }
};

TEST(TopiConv2dNCHWc, FusedPixelsFillThirtyTwoRegisters) {
  // AVX-512 (32 zmm), 32-channel blocks: a 7x7 row gives 7 x 2 of the 28 accumulators a tile
  // may hold, so a stride-1 1x1 conv fuses (oh, ow) and tiles the 49 pixels by 14 x 2 vectors
  // (3 tiles and a 7-pixel tail). The 14x14 output fills them by rows (14 x 2): not fused.
  const target::Target avx512 = target::Target::Parse("avx512");
  const x86::ScheduleOptions opt = x86::ScheduleOptionsFor(avx512);
  for (int64_t hw : {7, 14}) {
    SCOPED_TRACE(hw);
    const Case cc{64, hw, hw, 64, 1, 1, P(1, 0), 32, 32};
    Tensor data = te::placeholder(MakeShape({1, 2, hw, hw, 32}), f32, "data");
    Tensor kernel = te::placeholder(MakeShape({2, 2, 1, 1, 32, 32}), f32, "kernel");
    const tir::PrimFunc f =
        x86::DefaultSchedule(te::create_prim_func({data, kernel, conv2d_NCHWc(data, kernel, P(1, 0))}, "k"), opt);
    UnrolledExtents unrolled;
    unrolled.VisitStmt(f->body);
    ParallelLoopNames parallel;
    parallel.VisitStmt(f->body);
    ASSERT_EQ(parallel.names.size(), 1u);
    // The outermost unrolled loop of the micro-kernel: its pixel tile.
    ASSERT_FALSE(unrolled.extents.empty());
    EXPECT_EQ(unrolled.extents.front(), 14) << tir::AsText(f);
    // Fused pixels: one task per output-channel block (i: batch, j: block); by rows: per row.
    EXPECT_EQ(parallel.names[0], hw == 7 ? "i_j_fused" : "i_j_k_fused");
    Data x = testing::Random(cc.c * hw * hw, 1), w = testing::Random(cc.k * cc.c, 2);
    const Data wp = ToDouble(PackConv2dWeightNCHWc(ToFloat(w).data(), cc.k, cc.c, 1, 1, 32, 32));
    testing::CheckScheduledRuns(f, {Pack(x, cc.c, hw, hw, 32), wp}, cc.k * hw * hw,
                                Pack(Ref(cc, x, w, hw, hw, false), cc.k, hw, hw, 32), 1e-4,
                                "1x1 conv at " + std::to_string(hw) + "x" + std::to_string(hw));
    // The knob: fuse_pixels = 0 keeps the row tile (7 x 2 at 7x7; at 14x14 it is the default).
    KnobContext rows({{"conv2d_NCHWc.fuse_pixels", 0}});
    x86::ScheduleOptions tuned = opt;
    tuned.knobs = &rows;
    const tir::PrimFunc by_rows =
        x86::DefaultSchedule(te::create_prim_func({data, kernel, conv2d_NCHWc(data, kernel, P(1, 0))}, "k"), tuned);
    UnrolledExtents row_tile;
    row_tile.VisitStmt(by_rows->body);
    ASSERT_FALSE(row_tile.extents.empty());
    EXPECT_EQ(row_tile.extents.front(), hw == 7 ? 7 : 14);
    bool defined = false;
    for (const KnobSpec& k : rows.space()) defined |= k.name == "conv2d_NCHWc.fuse_pixels";
    EXPECT_TRUE(defined);
  }
}

TEST(TopiConv2dNCHWc, DepthwisePaddingStageBySize) {
  // A padded input that fits in L2 (<= 512 KiB) at stride 1: a separate padding stage (two loop
  // nests). Stride 2, or a larger map: inlined into the loads (LoopPartition splits off the
  // border in LowerToFlat).
  Tensor kernel = te::placeholder(MakeShape({2, 1, 3, 3, 1, 16}), f32, "kernel");
  for (auto [s, h] : {std::pair<int64_t, int64_t>{1, 12}, {2, 12}, {1, 96}}) {
    Tensor data = te::placeholder(MakeShape({1, 2, h, h, 16}), f32, "data");
    tir::PrimFunc f =
        x86::DefaultSchedule(te::create_prim_func({data, kernel, depthwise_conv2d_NCHWc(data, kernel, P(s, 1))}, "k"), kAvx2);
    Kinds k;
    k.VisitStmt(f->body);
    const bool stage = s == 1 && h == 12;
    EXPECT_EQ(k.blocks.count(kNCHWcPadName), stage ? 1u : 0u) << "stride " << s << ", " << h << "x" << h;
    EXPECT_EQ(k.parallel, stage ? 2 : 1) << "stride " << s << ", " << h << "x" << h;
  }
}

TEST(TopiConv2dNCHWc, Im2colStrategy) {
  const int64_t lanes = testing::TestTarget().VectorLanes(32);
  const int64_t kb = 2 * lanes;
  // A 3x3 conv whose 7-wide output has no register tile reads an im2col stage (with its padding
  // inlined); 56x56 (4-pixel tiles), 1x1 kernels and im2col buffers over 4 MiB do not.
  EXPECT_TRUE(x86::UseIm2colConv({1, 32, 7, 7, 16}, {32 * 16 / kb, 32, 3, 3, 16, kb}, P(1, 1), lanes));
  EXPECT_TRUE(x86::UseIm2colConv({1, 32, 14, 14, 16}, {32 * 16 / kb, 32, 3, 3, 16, kb}, P(2, 1), lanes));
  EXPECT_FALSE(x86::UseIm2colConv({1, 4, 56, 56, 16}, {64 / kb, 4, 3, 3, 16, kb}, P(1, 1), lanes));
  EXPECT_FALSE(x86::UseIm2colConv({1, 32, 7, 7, 16}, {512 / kb, 32, 1, 1, 16, kb}, P(1, 0), lanes));
  EXPECT_FALSE(x86::UseIm2colConv({1, 256, 7, 7, 16}, {512 / kb, 256, 3, 3, 16, kb}, P(1, 1), lanes));  // 7.2 MiB
  // AVX-512's 32 registers have a 1 x 7 x 2 zmm tile for the 7x7 output: the direct conv.
  EXPECT_TRUE(x86::UseIm2colConv({1, 32, 7, 7, 16}, {16, 32, 3, 3, 16, 32}, P(1, 1), 16, 16));
  EXPECT_FALSE(x86::UseIm2colConv({1, 32, 7, 7, 16}, {16, 32, 3, 3, 16, 32}, P(1, 1), 16, 32));
  Tensor data = te::placeholder(MakeShape({1, 4, 7, 7, 16}), f32, "data");
  Tensor kernel = te::placeholder(MakeShape({2, 4, 3, 3, 16, 16}), f32, "kernel");
  tir::PrimFunc f =
      x86::DefaultSchedule(te::create_prim_func({data, kernel, conv2d_NCHWc(data, kernel, P(1, 1), true)}, "k"), kAvx2);
  Kinds k;
  k.VisitStmt(f->body);
  EXPECT_TRUE(k.blocks.count(kNCHWcIm2colName)) << "a separate stage";
  EXPECT_FALSE(k.blocks.count(kNCHWcPadName)) << "the padding is inlined into the im2col stage";
}

TEST(TopiConv2dNCHWc, StridedPointwiseReadsASubsampledStage) {
  Tensor data = te::placeholder(MakeShape({1, 2, 14, 14, 16}), f32, "data");
  Tensor kernel = te::placeholder(MakeShape({4, 2, 1, 1, 16, 16}), f32, "kernel");
  tir::PrimFunc f = x86::DefaultSchedule(te::create_prim_func({data, kernel, conv2d_NCHWc(data, kernel, P(2, 0))}, "k"), kAvx2);
  Kinds k;
  k.VisitStmt(f->body);
  EXPECT_TRUE(k.blocks.count(kNCHWcSubsampleName)) << "a separate stage, not inlined into the conv";
  EXPECT_FALSE(k.blocks.count(kNCHWcPadName));
  // A padded or 3x3 strided conv keeps reading the (padded) input with its stride.
  Tensor k3 = te::placeholder(MakeShape({4, 2, 3, 3, 16, 16}), f32, "kernel");
  tir::PrimFunc g = x86::DefaultSchedule(te::create_prim_func({data, k3, conv2d_NCHWc(data, k3, P(2, 1))}, "g"), kAvx2);
  Kinds kg;
  kg.VisitStmt(g->body);
  EXPECT_FALSE(kg.blocks.count(kNCHWcSubsampleName));
}

TEST(TopiConv2dNCHWc, ChooseConvTile) {
  auto tile = [](int64_t oh, int64_t ow, int64_t oc_block, int64_t lanes, bool dw) {
    x86::ConvTile t = x86::ChooseConvTile(oh, ow, oc_block, lanes, dw);
    return std::vector<int64_t>{t.oh_tile, t.ow_tile, t.oc_vectors};
  };
  using V = std::vector<int64_t>;
  // AVX2 (8 lanes), 16-channel blocks: 1 x T x 2 ymm, T = 6 or 5 dividing OW, else 6 with a
  // tail from 24 pixels on, else 4 dividing OW.
  EXPECT_EQ(tile(48, 48, 16, 8, false), (V{1, 6, 2}));
  EXPECT_EQ(tile(40, 40, 16, 8, false), (V{1, 5, 2}));
  EXPECT_EQ(tile(56, 56, 16, 8, false), (V{1, 6, 2}));
  EXPECT_EQ(tile(28, 28, 16, 8, false), (V{1, 6, 2}));
  EXPECT_EQ(tile(16, 16, 16, 8, false), (V{1, 4, 2}));
  // 14x14: two rows of 3 pixels (and a 2-pixel tail); two rows of 2 below 6 pixels.
  EXPECT_EQ(tile(14, 14, 16, 8, false), (V{2, 3, 2}));
  EXPECT_EQ(tile(6, 4, 16, 8, false), (V{1, 4, 2}));
  EXPECT_EQ(tile(2, 2, 16, 8, false), (V{2, 2, 2}));
  // 7x7: no such tile; one vector, the wide tile of ConvOwTile.
  EXPECT_EQ(tile(7, 7, 16, 8, false), (V{1, 7, 1}));
  // AVX-512 (one zmm per 16 channels), depthwise, and narrow channel blocks: one vector.
  EXPECT_EQ(tile(56, 56, 16, 16, false), (V{1, 14, 1}));
  EXPECT_EQ(tile(56, 56, 16, 8, true), (V{1, 14, 1}));
  EXPECT_EQ(tile(56, 56, 8, 8, false), (V{1, 14, 1}));
}

TEST(TopiConv2dNCHWc, ChooseConvTileWithThirtyTwoRegisters) {
  auto tile = [](int64_t oh, int64_t ow, int64_t oc_block) {
    x86::ConvTile t = x86::ChooseConvTile(oh, ow, oc_block, 16, false, 32);
    return std::vector<int64_t>{t.oh_tile, t.ow_tile, t.oc_vectors};
  };
  using V = std::vector<int64_t>;
  // AVX-512, 32-channel blocks (2 zmm): up to 14 pixels, the largest divisor of OW in [7, 14].
  EXPECT_EQ(tile(14, 14, 32), (V{1, 14, 2}));
  EXPECT_EQ(tile(56, 56, 32), (V{1, 14, 2}));
  EXPECT_EQ(tile(28, 28, 32), (V{1, 14, 2}));
  EXPECT_EQ(tile(7, 7, 32), (V{1, 7, 2}));
  EXPECT_EQ(tile(10, 10, 32), (V{1, 10, 2}));
  // No divisor in [7, 14]: two rows of a divisor in [3, 7] when 2 | OH, else 14 with a tail.
  EXPECT_EQ(tile(6, 6, 32), (V{2, 6, 2}));
  EXPECT_EQ(tile(17, 17, 32), (V{1, 14, 2}));
  // Below 14 pixels without a tile: the 16-register rules (5 | OW: 1 x 5).
  EXPECT_EQ(tile(5, 5, 32), (V{1, 5, 2}));
  // 4 zmm (64-channel blocks) leave 6 pixels: the 16-register rules with 4 vectors.
  EXPECT_EQ(tile(56, 56, 64), (V{1, 6, 4}));
  // One zmm per 16-channel block: one vector, as with 16 registers.
  EXPECT_EQ(tile(56, 56, 16), (V{1, 14, 1}));
}

TEST(TopiLayoutTransform, RoundTripsAndPadsChannels) {
  for (auto [C, a, b] : {std::tuple<int64_t, int64_t, int64_t>{10, 0, 16}, {10, 16, 0}, {12, 3, 16}, {20, 16, 8}}) {
    const int64_t H = 3, W = 5;
    Data x = testing::Random(C * H * W, 7);
    Tensor in = te::placeholder(MakeShape(a ? std::vector<int64_t>{1, (C + a - 1) / a, H, W, a}
                                            : std::vector<int64_t>{1, C, H, W}),
                                f32, "x");
    Tensor out = layout_transform(in, NCHWcLayoutName(a), NCHWcLayoutName(b), C);
    Data xin = a ? Pack(x, C, H, W, a) : x;
    testing::CheckAllModes({in}, out, {xin}, b ? Pack(x, C, H, W, b) : x, 0);
  }
  EXPECT_EQ(ParseNCHWcBlock("NCHW16c"), 16);
  EXPECT_THROW(ParseNCHWcBlock("NHWC"), UserError);
}

}  // namespace
}  // namespace tessera::topi
