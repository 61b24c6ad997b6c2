// Winograd F(m x m, 3x3) (topi/nn/winograd.h): the three kernels the pipeline builds (input
// transform, packed batch GEMM, output transform with a bias + relu epilogue) against a direct
// C++ convolution (one case in every mode: unscheduled, scheduled, flat, LLVM JIT; the others
// through the JIT); the x86 schedule's structure; the strategy; the errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/support/error.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/nn/layout.h"
#include "tessera/topi/nn/winograd.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/schedule.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
using testing::LoopKinds;
using testing::Mode;
const DataType f32 = DataType::Float(32);

struct Case {
  int64_t m, c, h, w, k;
  std::array<int64_t, 4> pad;  // top, left, bottom, right
  int64_t cb, kb;              // data / output channel blocks
  int64_t d = 1;               // dilation
  int64_t g = 1;               // groups
};

// relu(conv3x3(x, w) + bias), N = 1, NCHW, w [K, C / g, 3, 3], in double.
Data Direct(const Case& cc, const Data& x, const Data& w, const Data& bias, int64_t oh, int64_t ow) {
  Data out(static_cast<size_t>(cc.k * oh * ow));
  for (int64_t o = 0; o < cc.k; ++o)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        double acc = bias[o];
        const int64_t cg = cc.c / cc.g, first = o / (cc.k / cc.g) * cg;
        for (int64_t c = first; c < first + cg; ++c)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y + cc.d * ky - cc.pad[0], ix = xx + cc.d * kx - cc.pad[1];
              if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
              acc += x[(c * cc.h + iy) * cc.w + ix] * w[((o * cg + c - first) * 3 + ky) * 3 + kx];
            }
        out[(o * oh + y) * ow + xx] = std::max(acc, 0.0);
      }
  return out;
}

// NCHW (N = 1) -> NCHW<b>c with zero channels past C.
Data Block(const Data& x, int64_t C, int64_t HW, int64_t b) {
  const int64_t Cb = (C + b - 1) / b;
  Data out(static_cast<size_t>(Cb * HW * b), 0.0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < HW; ++i) out[((c / b) * HW + i) * b + c % b] = x[c * HW + i];
  return out;
}

// w [K, C / g, 3, 3] -> Up [g alpha^2, NB, Cp, bn] (Up[gi alpha^2 + e, nb, c, l] = (G w[gi Kg + nb * bn + l, c] G^T)[e],
// zero past Kg and C / g; Cp the padded channels per group, kp the padded units per group): what
// graph_lower::WinogradConv2d computes at compile time.
Data TransformWeights(const Case& cc, const Data& w, int64_t cp, const GemmPackTile& t, int64_t kp) {
  const WinogradMatrices wm = Winograd3x3(cc.m);
  const int64_t a2 = wm.alpha * wm.alpha, nb = t.PaddedN(kp) / t.bn, cg = cc.c / cc.g, kg = cc.k / cc.g;
  Data up(static_cast<size_t>(cc.g * a2 * nb * cp * t.bn), 0.0);
  for (int64_t o = 0; o < cc.k; ++o)
    for (int64_t c = 0; c < cg; ++c) {
      float g[9];
      for (int i = 0; i < 9; ++i) g[i] = static_cast<float>(w[(o * cg + c) * 9 + i]);
      std::vector<double> u = WinogradKernelTransform(wm, g);
      const int64_t gi = o / kg, j = o % kg;
      for (int64_t e = 0; e < a2; ++e)
        up[(((gi * a2 + e) * nb + j / t.bn) * cp + c) * t.bn + j % t.bn] = static_cast<float>(u[static_cast<size_t>(e)]);
    }
  return up;
}

// Runs the case in `modes` (kJIT is skipped without the LLVM codegen, kScheduledFlat then stands
// in for it). The block-form interpreter evaluates every case of the transforms' select chains per
// element: F(4x4)'s 36 cases take minutes under ASan, so most cases run the JIT only.
void RunCase(const Case& cc, std::vector<Mode> modes) {
  SCOPED_TRACE(::testing::Message() << "F(" << cc.m << ") C=" << cc.c << " " << cc.h << "x" << cc.w << " K=" << cc.k
                                    << " pad=" << cc.pad[0] << "," << cc.pad[1] << "," << cc.pad[2] << "," << cc.pad[3]
                                    << " cb=" << cc.cb << " kb=" << cc.kb << " d=" << cc.d << " g=" << cc.g);
  Conv2DParams p;
  p.padding = cc.pad;
  p.dilation = {cc.d, cc.d};
  const auto [oh, ow] = Conv2DOutHW(cc.h, cc.w, 3, 3, p);
  const int64_t alpha = cc.m + 2, cbn = (cc.c + cc.cb - 1) / cc.cb, cp = cbn * cc.cb;
  const int64_t kp = (cc.k + cc.kb - 1) / cc.kb * cc.kb, tiles = WinogradTile(oh, ow, cc.m, cc.d).Tiles(1);
  // Per group: its channels and units (whole blocks when grouped, as the strategy requires).
  ASSERT_TRUE(cc.g == 1 || ((cc.c / cc.g) % cc.cb == 0 && (cc.k / cc.g) % cc.kb == 0));
  const int64_t cpg = cp / cc.g, kpg = kp / cc.g;
  GemmPackTile tile;
  tile.mr = 4, tile.nv = 1;
  const int64_t rows = (tiles + tile.mr - 1) / tile.mr * tile.mr;
  Data x = testing::Random(static_cast<size_t>(cc.c * cc.h * cc.w), 1);
  Data w = testing::Random(static_cast<size_t>(cc.k * cc.c / cc.g * 9), 2, -0.5, 0.5);
  Data bias = testing::Random(static_cast<size_t>(cc.k), 3);
  Data want = Block(Direct(cc, x, w, bias, oh, ow), cc.k, oh * ow, cc.kb);

  Tensor data = te::placeholder(MakeShape({1, cbn, cc.h, cc.w, cc.cb}), f32, "data");
  Tensor v = winograd_input_transform(data, cc.m, cc.pad, rows, cc.d, cc.g);
  const int64_t batch = cc.g * alpha * alpha;
  Tensor vin = te::placeholder(MakeShape({batch, rows, cpg}), f32, "V");
  Tensor up = te::placeholder(MakeShape({batch, tile.PaddedN(kpg) / tile.bn, cpg, tile.bn}), f32, "Up");
  Tensor mm = batch_matmul_packed(vin, up, kpg, tile);
  Tensor min = te::placeholder(MakeShape({batch, rows, kpg}), f32, "M");
  Tensor b = te::placeholder(MakeShape({1, kp / cc.kb, 1, 1, cc.kb}), f32, "bias");
  Tensor out = relu(add(winograd_output_transform(min, cc.m, 1, oh, ow, cc.kb, cc.d, cc.g), b));
  const double tol = cc.m == 2 ? 1e-5 : 1e-4;
  if (!testing::HaveJIT() && modes == std::vector<Mode>{Mode::kJIT}) modes = {Mode::kScheduledFlat};
  for (Mode mode : modes) {
    if (mode == Mode::kJIT && !testing::HaveJIT()) continue;
    SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode));
    Data vd = testing::Run({data}, {v}, {Block(x, cc.c, cc.h * cc.w, cc.cb)}, mode)[0];
    Data md = testing::Run({vin, up}, {mm}, {vd, TransformWeights(cc, w, cpg, tile, kpg)}, mode)[0];
    Data got = testing::Run({min, b}, {out}, {md, Block(bias, cc.k, 1, cc.kb)}, mode)[0];
    // Channels past K are relu(0 + 0): the reference's zero padding.
    testing::ExpectNear(got, want, tol, "winograd conv");
  }
}

const std::vector<Mode> kAllModes = {Mode::kUnscheduled, Mode::kScheduled, Mode::kScheduledFlat, Mode::kJIT};

TEST(TopiWinograd, F2MatchesDirectConvolution) {
  RunCase(Case{2, 8, 10, 6, 16, {0, 0, 0, 0}, 8, 16}, kAllModes);  // no padding, block 8
  for (const Case& cc : {Case{2, 32, 6, 6, 32, {1, 1, 1, 1}, 16, 16},    // ResNet-like, two blocks
                         Case{2, 20, 4, 8, 24, {1, 1, 1, 1}, 16, 16},    // channels padded to the blocks
                         Case{2, 16, 5, 7, 16, {1, 0, 2, 1}, 16, 16},    // asymmetric padding: 6x6
                         Case{2, 32, 7, 5, 16, {1, 1, 1, 1}, 16, 16}}) {  // partial tiles: 7x5 in 4x3
    RunCase(cc, {Mode::kJIT});
  }
}

// Dilation d: d x d phases, each an undilated conv tiled on its own (the space-to-batch identity).
TEST(TopiWinograd, DilatedF2MatchesDirectConvolution) {
  RunCase(Case{2, 4, 5, 3, 8, {2, 2, 2, 2}, 4, 8, 2}, {Mode::kScheduled, Mode::kJIT});  // 5x3 'same': phases of 3x2 .. 2x1 outputs
  for (const Case& cc : {Case{2, 32, 12, 12, 16, {4, 4, 4, 4}, 16, 16, 4},   // DeepLab's layer4: 3 x 3 per phase
                         Case{2, 16, 11, 13, 24, {3, 1, 0, 2}, 16, 16, 3},   // asymmetric padding, odd phases
                         Case{2, 16, 8, 8, 16, {0, 0, 0, 0}, 16, 16, 2},     // valid: 4x4 outputs, 2x2 per phase
                         Case{2, 16, 5, 5, 16, {5, 5, 5, 5}, 16, 16, 5}}) {  // d = H: 25 phases of 1 output
    RunCase(cc, {Mode::kJIT});
  }
  RunCase(Case{4, 4, 6, 6, 16, {2, 2, 2, 2}, 4, 16, 2}, {Mode::kJIT});  // F(4x4): one 3x3 tile per phase
}

// Groups g: one GEMM per group over its channels (batch g * alpha^2 + e), as RegNet's grouped 3x3 convs.
TEST(TopiWinograd, GroupedF2MatchesDirectConvolution) {
  RunCase(Case{2, 16, 4, 5, 16, {1, 1, 1, 1}, 4, 4, 1, 4}, {Mode::kScheduled, Mode::kJIT});  // 4 groups of 4
  for (const Case& cc : {Case{2, 64, 7, 7, 64, {1, 1, 1, 1}, 16, 16, 1, 2},      // RegNet-like: 2 groups of 32
                         Case{2, 48, 6, 9, 96, {1, 1, 1, 1}, 8, 16, 1, 3},       // Kg = 2 Cg, blocks 8 / 16
                         Case{2, 32, 9, 9, 32, {2, 2, 2, 2}, 8, 8, 2, 4}}) {     // dilated and grouped
    RunCase(cc, {Mode::kJIT});
  }
}

TEST(TopiWinograd, F4MatchesDirectConvolution) {
  // F(4x4) is taken only on request (TESSERA_WINOGRAD=4): one tile, scheduled and lowered (the
  // flat interpreter) and through the JIT. The tiling is F(2x2)'s, tested above.
  RunCase(Case{4, 4, 4, 4, 16, {1, 1, 1, 1}, 4, 16}, {Mode::kScheduledFlat, Mode::kJIT});
}

// The kernel transform of a filter that is a delta at the centre: G g G^T is the outer product of
// G's middle column with itself.
TEST(TopiWinograd, KernelTransformOfACentredDelta) {
  for (int64_t m : {2, 4}) {
    const WinogradMatrices wm = Winograd3x3(m);
    const float g[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    std::vector<double> u = WinogradKernelTransform(wm, g);
    ASSERT_EQ(u.size(), static_cast<size_t>(wm.alpha * wm.alpha));
    for (int64_t i = 0; i < wm.alpha; ++i)
      for (int64_t j = 0; j < wm.alpha; ++j)
        EXPECT_DOUBLE_EQ(u[i * wm.alpha + j], wm.G[i * 3 + 1] * wm.G[j * 3 + 1]) << m << ": " << i << "," << j;
  }
}

// LoopKinds, and the extent of every unrolled loop in visiting order.
struct UnrolledExtents : LoopKinds {
  std::vector<int64_t> extents;
  void VisitStmt_(const tir::ForNode* op) override {
    int64_t e = 0;
    if (op->for_kind == tir::ForKind::kUnrolled && ir::as_const_int(op->extent, &e)) extents.push_back(e);
    LoopKinds::VisitStmt_(op);
  }
};

// Input transform: one task per tile, the alpha^2 elements unrolled, the channel lanes
// vectorized, the padding its own stage. Output transform: the bias and relu inlined into it
// (one block), parallel over rows of tiles, the m x m tile unrolled, the channel lanes vectorized.
TEST(TopiWinograd, ScheduleStructure) {
  Tensor data = te::placeholder(MakeShape({1, 4, 56, 56, 16}), f32, "data");
  tir::PrimFunc in = x86::DefaultSchedule(
      te::create_prim_func({data, winograd_input_transform(data, 2, {1, 1, 1, 1}, 786)}, "input"));
  LoopKinds ki;
  ki.VisitStmt(in->body);
  EXPECT_EQ(ki.blocks, (std::set<std::string>{"root", kNCHWcPadName, kWinogradInputName}));
  EXPECT_EQ(ki.parallel, 2) << "the padding stage and the tiles";
  EXPECT_EQ(ki.unrolled, 1) << "the 16 elements of a tile";
  EXPECT_GE(ki.vectorized, 2);

  // Grouped (4 groups of one block): the batch splits into the group and the 16 elements, which
  // alone are unrolled.
  tir::PrimFunc in4 = x86::DefaultSchedule(
      te::create_prim_func({data, winograd_input_transform(data, 2, {1, 1, 1, 1}, 786, 1, 4)}, "input"));
  UnrolledExtents k4;
  k4.VisitStmt(in4->body);
  EXPECT_EQ(k4.extents, (std::vector<int64_t>{16}));
  EXPECT_EQ(k4.parallel, 2);
  EXPECT_GE(k4.vectorized, 2);

  Tensor mm = te::placeholder(MakeShape({16, 786, 64}), f32, "M");
  Tensor bias = te::placeholder(MakeShape({1, 4, 1, 1, 16}), f32, "bias");
  Tensor y = relu(add(winograd_output_transform(mm, 2, 1, 56, 56, 16), bias));
  tir::PrimFunc out = x86::DefaultSchedule(te::create_prim_func({mm, bias, y}, "output"));
  LoopKinds ko;
  ko.VisitStmt(out->body);
  EXPECT_EQ(ko.blocks, (std::set<std::string>{"root", kWinogradOutputName})) << "the epilogue is inlined";
  EXPECT_EQ(ko.parallel, 1);
  EXPECT_EQ(ko.unrolled, 2) << "the 2 x 2 outputs of a tile";
  EXPECT_EQ(ko.vectorized, 1);

  // Dilation 2: the unrolled loops cover one tile of each of the 2 x 2 phases (4 x 4 outputs).
  Tensor y2 = relu(add(winograd_output_transform(mm, 2, 1, 52, 52, 16, 2), bias));
  tir::PrimFunc out2 = x86::DefaultSchedule(te::create_prim_func({mm, bias, y2}, "output"));
  UnrolledExtents kd;
  kd.VisitStmt(out2->body);
  EXPECT_EQ(kd.blocks, (std::set<std::string>{"root", kWinogradOutputName}));
  EXPECT_EQ(kd.extents, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(kd.vectorized, 1);
}

TEST(TopiWinograd, Strategy) {
  Conv2DParams p;
  p.padding = {1, 1, 1, 1};
  const std::vector<int64_t> k64 = {4, 4, 3, 3, 16, 16};
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 56, 56, 16}, k64, p), 2) << "ResNet-50's 56x56 3x3 conv";
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 7, 7, 16}, k64, p), 2) << "7x7: 16 partial tiles";
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 5, 5, 16}, k64, p), 0) << "5x5: 9 tiles, 36 % waste";
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 6, 6, 16}, k64, p), 0) << "6x6: 9 tiles";
  EXPECT_EQ(x86::WinogradTileSize({1, 1, 56, 56, 16}, {4, 1, 3, 3, 16, 16}, p), 0)
      << "16 input channels";
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 56, 56, 16}, {4, 4, 1, 1, 16, 16}, {}), 0) << "1x1";
  Conv2DParams s2 = p;
  s2.strides = {2, 2};
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 56, 56, 16}, k64, s2), 0) << "stride 2";
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 224, 224, 16}, k64, p), 2) << "V of 16 x 112^2 x 64 floats: 49 MiB";
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 320, 320, 16}, k64, p), 0) << "V of 16 x 160^2 x 64 floats: 100 MiB";
  // DeepLabV3 at 224x224 (28x28 maps): layer3's dilation 2, layer4's 4, the ASPP's 12 / 24 / 36.
  const std::vector<int64_t> k256 = {16, 16, 3, 3, 16, 16};
  for (int64_t d : {2, 4, 12, 24, 36}) {
    Conv2DParams pd;
    pd.padding = {d, d, d, d};
    pd.dilation = {d, d};
    EXPECT_EQ(x86::WinogradTileSize({1, 16, 28, 28, 16}, k256, pd), d <= 4 ? 2 : 0)
        << "dilation " << d << ": " << d * d << " phases of " << (28 + d - 1) / d << "^2 outputs";
  }
  // Grouped: RegNetX-16GF's 896 channels in 7 groups of 128 (8 blocks of 16 each) -> 2; groups
  // whose channels are not whole blocks, or fewer than kWinogradMinGroupUnits outputs per group
  // (ResNeXt-101 32x8d's 32 and 64, 48), stay direct.
  Conv2DParams grouped = p;
  grouped.groups = 7;
  EXPECT_EQ(x86::WinogradTileSize({1, 56, 14, 14, 16}, {56, 8, 3, 3, 16, 16}, grouped), 2) << "RegNetX-16GF";
  grouped.groups = 14;
  EXPECT_EQ(x86::WinogradTileSize({1, 14, 14, 14, 16}, {14, 1, 3, 3, 16, 16}, grouped), 0) << "16 per group";
  grouped.groups = 3;
  EXPECT_EQ(x86::WinogradTileSize({1, 9, 14, 14, 16}, {9, 3, 3, 3, 16, 16}, grouped), 0) << "48 per group";
  grouped.groups = 32;
  EXPECT_EQ(x86::WinogradTileSize({1, 32, 14, 14, 32}, {32, 1, 3, 3, 32, 32}, grouped), 0)
      << "ResNeXt-101 32x8d's 14x14: 32 per group";
  EXPECT_EQ(x86::WinogradTileSize({1, 64, 7, 7, 32}, {64, 2, 3, 3, 32, 32}, grouped), 0)
      << "ResNeXt-101 32x8d's 7x7: 64 per group";
  EXPECT_EQ(x86::WinogradTileCandidates({1, 32, 14, 14, 32}, {32, 1, 3, 3, 32, 32}, grouped), (std::vector<int64_t>{2, 4}))
      << "the tuner may still choose Winograd for it";
  grouped.groups = 16;
  EXPECT_EQ(x86::WinogradTileSize({1, 128, 14, 14, 16}, {128, 8, 3, 3, 16, 16}, grouped), 2)
      << "2048 channels in 16 groups of 128";
  grouped.groups = 6;
  EXPECT_EQ(x86::WinogradTileSize({1, 9, 14, 14, 16}, {9, 3, 3, 3, 16, 16}, grouped), 0)
      << "24 per group: half blocks";
  Conv2DParams uneven = p;
  uneven.dilation = {2, 1};
  EXPECT_EQ(x86::WinogradTileSize({1, 4, 56, 56, 16}, k64, uneven), 0) << "unequal dilations";
}

// What a tuner may choose from (the tile knob): every tile whose tiles hold at most twice the outputs
// and whose V / M fit in 64 MiB, whatever the strategy's thresholds on channels and tile counts.
TEST(TopiWinograd, TileCandidates) {
  Conv2DParams p;
  p.padding = {1, 1, 1, 1};
  const std::vector<int64_t> k64 = {4, 4, 3, 3, 16, 16};
  using V = std::vector<int64_t>;
  EXPECT_EQ(x86::WinogradTileCandidates({1, 4, 56, 56, 16}, k64, p), (V{2, 4}));
  EXPECT_EQ(x86::WinogradTileCandidates({1, 4, 5, 5, 16}, k64, p), (V{2}))
      << "9 tiles: the strategy says no, a tuner may; F(4x4)'s 4 tiles are 64 pixels for 25";
  EXPECT_EQ(x86::WinogradTileCandidates({1, 1, 56, 56, 16}, {1, 1, 3, 3, 16, 16}, p), (V{2, 4})) << "16 channels";
  EXPECT_EQ(x86::WinogradTileCandidates({1, 4, 2, 2, 16}, k64, p), (V{2})) << "2x2: one F(4x4) tile is 4 x the outputs";
  EXPECT_EQ(x86::WinogradTileCandidates({1, 4, 320, 320, 16}, k64, p), (V{4}))
      << "F(2x2)'s V of 16 x 160^2 x 64 floats is 100 MiB, F(4x4)'s 36 x 80^2 x 64 56 MiB";
  EXPECT_EQ(x86::WinogradTileCandidates({1, 4, 56, 56, 16}, {4, 4, 1, 1, 16, 16}, {}), (V{})) << "1x1";
  Conv2DParams s2 = p;
  s2.strides = {2, 2};
  EXPECT_EQ(x86::WinogradTileCandidates({1, 4, 56, 56, 16}, k64, s2), (V{})) << "stride 2";
  Conv2DParams aspp;
  aspp.padding = {12, 12, 12, 12};
  aspp.dilation = {12, 12};
  EXPECT_EQ(x86::WinogradTileCandidates({1, 16, 28, 28, 16}, {16, 16, 3, 3, 16, 16}, aspp), (V{}))
      << "144 phases of 2 or 3 outputs a side: mostly padding";
  Conv2DParams grouped = p;
  grouped.groups = 32;
  EXPECT_EQ(x86::WinogradTileCandidates({1, 32, 56, 56, 8}, {32, 1, 3, 3, 8, 8}, grouped), (V{2, 4}))
      << "ResNeXt's groups of 8 channels in 8-wide blocks";
  grouped.groups = 6;
  EXPECT_EQ(x86::WinogradTileCandidates({1, 9, 14, 14, 16}, {9, 3, 3, 3, 16, 16}, grouped), (V{})) << "half blocks";
  // The strategy's choice is always a candidate (or 0).
  for (const V& ds : {V{1, 4, 56, 56, 16}, V{1, 4, 7, 7, 16}, V{1, 4, 14, 14, 16}}) {
    const int64_t m = x86::WinogradTileSize(ds, k64, p);
    const V c = x86::WinogradTileCandidates(ds, k64, p);
    EXPECT_TRUE(m == 0 || std::find(c.begin(), c.end(), m) != c.end()) << ds[2];
  }
}

TEST(TopiWinograd, Errors) {
  EXPECT_THROW(Winograd3x3(3), UserError);
  EXPECT_THROW(WinogradTile(0, 8, 2), UserError);
  EXPECT_EQ(WinogradTile(7, 8, 2).Tiles(2), 2 * 4 * 4) << "partial tiles";
  EXPECT_EQ(WinogradTile(28, 27, 2, 4).Tiles(1), 4 * 4 * 4 * 4) << "16 phases of 7x7 outputs";
  EXPECT_THROW(WinogradTile(8, 8, 2, 0), UserError) << "dilation 0";
  Tensor data = te::placeholder(MakeShape({1, 2, 8, 8, 16}), f32, "data");
  EXPECT_THROW(winograd_input_transform(data, 2, {1, 1, 1, 1}, 15), UserError) << "16 tiles, 15 rows";
  Tensor mm = te::placeholder(MakeShape({16, 16, 40}), f32, "M");
  EXPECT_THROW(winograd_output_transform(mm, 2, 1, 8, 8, 16), UserError) << "40 channels, block 16";
  EXPECT_THROW(winograd_output_transform(mm, 4, 1, 8, 8, 8), UserError) << "36 elements per tile for F(4)";
}

}  // namespace
}  // namespace tessera::topi
