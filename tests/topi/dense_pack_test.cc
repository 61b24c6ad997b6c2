// The packed GEMM (topi/nn/dense_pack.h) under its x86 schedule (topi/x86/dense.h): numerically
// equal to a double-precision reference on random inputs, for dense with a weight packed ahead
// of time (as graph_lower::PackGemmWeights does for constants) and for matmul / batch_matmul
// with a non-constant right operand (packed inside the kernel), on shapes that divide the tiles
// and shapes that do not; the structure of the schedule; and the micro-kernel's assembly
// (broadcast + FMA on zmm registers, accumulators in registers).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/nn/dense.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/math.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/schedule.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
using testing::PackRef;
using testing::Mode;
const DataType f32 = DataType::Float(32);

// out[b][m][n] = sum_k a[b][m][k] * w[b][n][k] (w batch 1 broadcasts).
Data RefGemm(const Data& a, const Data& w, int64_t batch, int64_t m, int64_t n, int64_t k, bool w_batched) {
  Data out(batch * m * n);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        const int64_t wb = w_batched ? b : 0;
        for (int64_t kk = 0; kk < k; ++kk) s += a[(b * m + i) * k + kk] * w[(wb * n + j) * k + kk];
        out[(b * m + i) * n + j] = s;
      }
  return out;
}

// relu(x W^T + bias): the reference of the tests below whose dense has a bias + relu epilogue.
Data RefDenseBiasRelu(const Data& x, const Data& w, const Data& bias, int64_t m, int64_t n, int64_t k) {
  Data out = RefGemm(x, w, 1, m, n, k, false);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = std::max(0.0, out[i * n + j] + bias[j]);
  return out;
}

// [.., R, C] -> [.., C, R]
Data Transpose(const Data& d, int64_t batch, int64_t r, int64_t c) {
  Data out(d.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) out[(b * c + j) * r + i] = d[(b * r + i) * c + j];
  return out;
}


struct GemmCase {
  int64_t m, n, k;
  int64_t mr = 0, nv = 0;  // 0: ChooseGemmTile
};

GemmPackTile TileOf(const GemmCase& c) {
  GemmPackTile t = x86::ChooseGemmTile(c.m, c.n, c.k, testing::TestTarget());
  if (c.mr > 0) t.mr = c.mr, t.nv = c.nv;
  return t;
}

// Small enough for the reference interpreter in every mode.
const std::vector<GemmCase> kSmall = {{7, 13, 19}, {1, 5, 3}, {12, 32, 8}, {13, 40, 9, 5, 2}, {6, 17, 4, 6, 1},
                                      {3, 70, 5, 1, 4}};
// Through the JIT only (the interpreter would take minutes).
const std::vector<GemmCase> kLarge = {{1, 1000, 2048}, {49, 64, 288}, {98, 128, 1152}, {29, 100, 67, 7, 2},
                                      {64, 48, 33, 4, 3}};

void CheckDensePrepacked(const GemmCase& c, bool all_modes) {
  SCOPED_TRACE(::testing::Message() << "dense " << c.m << "x" << c.n << "x" << c.k << " tile " << c.mr << "," << c.nv);
  GemmPackTile t = TileOf(c);
  Tensor x = te::placeholder(MakeShape({c.m, c.k}), f32, "x");
  Tensor wp = te::placeholder(MakeShape({t.PaddedN(c.n) / t.bn, c.k, t.bn}), f32, "wp");
  Tensor y = dense_packed(x, wp, c.n, t);
  Data dx = testing::Random(c.m * c.k, 1), dw = testing::Random(c.n * c.k, 2);
  Data want = RefGemm(dx, dw, 1, c.m, c.n, c.k, false);
  Data dwp = PackRef(dw, c.n, c.k, t);
  if (all_modes) {
    testing::CheckAllModes({x, wp}, y, {dx, dwp}, want, 1e-4);
  } else if (testing::HaveJIT()) {
    testing::ExpectNear(testing::Run({x, wp}, {y}, {dx, dwp}, Mode::kJIT)[0], want, 1e-4, "JIT");
  }
}

void CheckDenseInKernelPack(const GemmCase& c, bool all_modes) {
  SCOPED_TRACE(::testing::Message() << "dense+pack " << c.m << "x" << c.n << "x" << c.k);
  GemmPackTile t = TileOf(c);
  Tensor x = te::placeholder(MakeShape({c.m, c.k}), f32, "x");
  Tensor w = te::placeholder(MakeShape({c.n, c.k}), f32, "w");
  Tensor y = dense_packed(x, pack_dense_weight(w, t), c.n, t);
  Data dx = testing::Random(c.m * c.k, 3), dw = testing::Random(c.n * c.k, 4);
  Data want = RefGemm(dx, dw, 1, c.m, c.n, c.k, false);
  if (all_modes) {
    testing::CheckAllModes({x, w}, y, {dx, dw}, want, 1e-4);
  } else if (testing::HaveJIT()) {
    testing::ExpectNear(testing::Run({x, w}, {y}, {dx, dw}, Mode::kJIT)[0], want, 1e-4, "JIT");
  }
}

TEST(TopiDensePack, PrepackedWeightSmallShapesAllModes) {
  for (const GemmCase& c : kSmall) CheckDensePrepacked(c, true);
}

TEST(TopiDensePack, PrepackedWeightLargeShapesJIT) {
  for (const GemmCase& c : kLarge) CheckDensePrepacked(c, false);
}

TEST(TopiDensePack, InKernelPackingAllModes) {
  for (const GemmCase& c : kSmall) CheckDenseInKernelPack(c, true);
}

TEST(TopiDensePack, InKernelPackingLargeShapesJIT) {
  for (const GemmCase& c : kLarge) CheckDenseInKernelPack(c, false);
}

// x with leading batch dims [2, 3, K]: the rows are fused into M (predicated when M % mr != 0).
TEST(TopiDensePack, BatchedActivationRows) {
  GemmPackTile t = x86::ChooseGemmTile(6, 21, 10, testing::TestTarget());
  t.mr = 4;  // 6 rows: a partial tile
  Tensor x = te::placeholder(MakeShape({2, 3, 10}), f32, "x");
  Tensor w = te::placeholder(MakeShape({21, 10}), f32, "w");
  Tensor y = dense_packed(x, pack_dense_weight(w, t), 21, t);
  Data dx = testing::Random(60, 5), dw = testing::Random(210, 6);
  testing::CheckAllModes({x, w}, y, {dx, dw}, RefGemm(dx, dw, 1, 6, 21, 10, false), 1e-4);
}

// numpy matmul with a non-constant [K, N] operand, and batched operands (transposes too).
TEST(TopiDensePack, MatmulNonConstantB) {
  for (const GemmCase& c : std::vector<GemmCase>{{7, 13, 19}, {16, 32, 5}, {98, 128, 300}}) {
    SCOPED_TRACE(::testing::Message() << "matmul " << c.m << "x" << c.n << "x" << c.k);
    GemmPackTile t = TileOf(c);
    Tensor a = te::placeholder(MakeShape({c.m, c.k}), f32, "a");
    Tensor b = te::placeholder(MakeShape({c.k, c.n}), f32, "b");
    Tensor y = dense_packed(a, pack_matmul_b(b, t, false), c.n, t);
    Data da = testing::Random(c.m * c.k, 7), db = testing::Random(c.k * c.n, 8);
    Data want = RefGemm(da, Transpose(db, 1, c.k, c.n), 1, c.m, c.n, c.k, false);
    if (c.m * c.n * c.k < 10000) testing::CheckAllModes({a, b}, y, {da, db}, want, 1e-4);
    else if (testing::HaveJIT())
      testing::ExpectNear(testing::Run({a, b}, {y}, {da, db}, Mode::kJIT)[0], want, 1e-4, "JIT");
  }
}

TEST(TopiDensePack, BatchMatmulAllLayouts) {
  const int64_t B = 3, M = 5, N = 19, K = 7;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool bcast_b : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "ta " << ta << " tb " << tb << " bcast " << bcast_b);
        GemmPackTile t = x86::ChooseGemmTile(M, N, K, testing::TestTarget());
        t.mr = 3;  // 5 rows: padded to 6
        const int64_t bb = bcast_b ? 1 : B;
        Tensor x = te::placeholder(MakeShape(ta ? std::vector<int64_t>{B, K, M} : std::vector<int64_t>{B, M, K}), f32, "x");
        Tensor y = te::placeholder(MakeShape(tb ? std::vector<int64_t>{bb, N, K} : std::vector<int64_t>{bb, K, N}), f32,
                                   "y");
        Tensor out = batch_matmul_packed(x, pack_matmul_b(y, t, tb), N, t, ta);
        Data dx = testing::Random(B * M * K, 9), dy = testing::Random(bb * N * K, 10);
        Data a = ta ? Transpose(dx, B, K, M) : dx;  // [B, M, K]
        Data w = tb ? dy : Transpose(dy, bb, K, N);  // [bb, N, K]
        testing::CheckAllModes({x, y}, out, {dx, dy}, RefGemm(a, w, B, M, N, K, !bcast_b), 1e-4);
        // The same through the unpacked compute, as a cross-check of the reference.
        Tensor plain = batch_matmul(x, y, ta, tb);
        testing::ExpectNear(testing::Run({x, y}, {plain}, {dx, dy}, Mode::kUnscheduled)[0],
                            RefGemm(a, w, B, M, N, K, !bcast_b), 1e-4, "unpacked batch_matmul");
      }
    }
  }
}

using testing::LoopKinds;

TEST(TopiDensePack, ScheduleIsRegisterBlocked) {
  GemmPackTile t;
  t.mr = 6, t.nv = 2;
  Tensor x = te::placeholder(MakeShape({60, 64}), f32, "x");
  Tensor wp = te::placeholder(MakeShape({4, 64, 16}), f32, "wp");
  Tensor y = dense_packed(x, wp, 64, t);
  tir::Schedule sch = x86::ScheduleDefault(te::create_prim_func({x, wp, y}, "gemm"));
  const std::string trace = sch.trace().str();
  EXPECT_NE(trace.find("decompose_reduction"), std::string::npos) << trace;
  EXPECT_NE(trace.find("split(l2, factors=[-1, 2, 16])"), std::string::npos) << trace;
  EXPECT_NE(trace.find("split(l1, factors=[-1, 6])"), std::string::npos) << trace;
  LoopKinds k;
  k.VisitStmt(sch.func()->body);
  EXPECT_EQ(k.parallel, 1);
  EXPECT_EQ(k.vectorized, 2);  // init and update lanes
  EXPECT_EQ(k.unrolled, 4);    // mi and nv of each
}

// The element count of every buffer `f` allocates, by name.
std::map<std::string, int64_t> AllocationSizes(const tir::PrimFunc& f) {
  struct Allocs : tir::StmtExprVisitor {
    std::map<std::string, int64_t> size;
    void VisitStmt_(const tir::AllocateNode* op) override {
      int64_t n = 1;
      for (const PrimExpr& e : op->buffer->shape) n *= ir::get_const_int(e);
      size[op->buffer->name] = n;
      tir::StmtExprVisitor::VisitStmt_(op);
    }
  } allocs;
  allocs.VisitStmt(f->body);
  return allocs.size;
}

// `f` under the default schedule: two parallel loops (the weight packing, and the GEMM with its
// epilogue fused) and the GEMM's intermediate T_gemm_packed of `floats` elements.
void ExpectEpilogueFusedWithIntermediate(const tir::PrimFunc& unscheduled, int64_t floats) {
  tir::PrimFunc f = tir::transform::LowerToFlat(x86::DefaultSchedule(unscheduled));
  LoopKinds kinds;
  kinds.VisitStmt(f->body);
  EXPECT_EQ(kinds.parallel, 2) << "the weight packing and the GEMM with its epilogue\n" << tir::AsText(f);
  const std::map<std::string, int64_t> allocs = AllocationSizes(f);
  ASSERT_TRUE(allocs.count("T_gemm_packed")) << tir::AsText(f);
  EXPECT_EQ(allocs.at("T_gemm_packed"), floats) << tir::AsText(f);
}

// The epilogue (bias + relu, and the slicing of padded rows and columns) runs under the tile
// loop: one parallel loop holds the whole kernel, and the GEMM's intermediate shrinks to the
// mr x nv*16 register tile (TVM's dense_pack schedule does the same).
TEST(TopiDensePack, EpilogueRunsUnderTheTileLoop) {
  GemmPackTile t;
  t.mr = 6, t.nv = 1;
  Tensor x = te::placeholder(MakeShape({1, 20, 24}), f32, "x");  // 20 rows: a partial tile
  Tensor w = te::placeholder(MakeShape({21, 24}), f32, "w");      // 21 columns: padded to 32
  Tensor bias = te::placeholder(MakeShape({21}), f32, "bias");
  Tensor y = relu(add(dense_packed(x, pack_dense_weight(w, t), 21, t), bias));
  ExpectEpilogueFusedWithIntermediate(te::create_prim_func({x, w, bias, y}, "gemm"), 6 * 16);
  Data dx = testing::Random(20 * 24, 11), dw = testing::Random(21 * 24, 12), db = testing::Random(21, 13);
  Data want = RefDenseBiasRelu(dx, dw, db, 20, 21, 24);
  testing::CheckAllModes({x, w, bias}, y, {dx, dw, db}, want, 1e-4);
}

// Channels-last activations [1, H, W, K] (ConvNeXt's MLP): the row tile divides W (mr 10 -> 7 on a
// 7 x 7 map, 4 on 6 x 12) and H stays a tile loop, so the epilogue still runs under the tile and the
// GEMM's intermediate is the register tile; its rows of two vectors are vectorized (one vectorized
// loop each for the init, the update and the epilogue). A W no tile near mr divides (13 with mr 6)
// falls back to the fused rows. All equal the reference.
TEST(TopiDensePack, ChannelsLastRowsAreTiledAlongTheInnerRowLoop) {
  struct Case {
    int64_t h, w, mr, want_rows;
  };
  for (const Case& c : {Case{7, 7, 10, 7}, Case{6, 12, 4, 4}, Case{5, 13, 6, 0}}) {
    SCOPED_TRACE(::testing::Message() << c.h << " x " << c.w << " rows, mr " << c.mr);
    GemmPackTile t;
    t.mr = c.mr, t.nv = 2;
    const int64_t m = c.h * c.w, n = 40, k = 24;
    Tensor x = te::placeholder(MakeShape({1, c.h, c.w, k}), f32, "x");
    Tensor w = te::placeholder(MakeShape({n, k}), f32, "w");
    Tensor bias = te::placeholder(MakeShape({n}), f32, "bias");
    Tensor y = relu(add(dense_packed(x, pack_dense_weight(w, t), n, t), bias));
    tir::PrimFunc scheduled = x86::DefaultSchedule(te::create_prim_func({x, w, bias, y}, "gemm"));
    if (c.want_rows > 0) {
      LoopKinds kinds;
      kinds.VisitStmt(scheduled->body);
      EXPECT_EQ(kinds.vectorized, 4) << "pack, init, update, epilogue\n" << tir::AsText(scheduled);
      tir::PrimFunc f = tir::transform::LowerToFlat(scheduled);
      const std::map<std::string, int64_t> allocs = AllocationSizes(f);
      ASSERT_TRUE(allocs.count("T_gemm_packed")) << tir::AsText(f);
      EXPECT_EQ(allocs.at("T_gemm_packed"), c.want_rows * 32) << tir::AsText(f);
    }
    Data dx = testing::Random(m * k, 21), dw = testing::Random(n * k, 22), db = testing::Random(n, 23);
    Data want = RefDenseBiasRelu(dx, dw, db, m, n, k);
    testing::CheckAllModes({x, w, bias}, y, {dx, dw, db}, want, 1e-4);
  }
}

// Row tiles that cut across row loops ([1, 5, 13, K] in 6-row tiles: no tile near mr divides 13):
// the epilogue cannot follow a tile, so it runs under the column panel loop, and the GEMM's
// intermediate is one panel (all rows x 16 columns), not the whole [M, N] output that every k step
// would read and write (Swin-B's [1, 14, 14, 512] MLP on AVX2: 2.6x); the parallel loop is the
// panel loop (8 panels here). Equal to the reference in every mode.
TEST(TopiDensePack, RowTilesAcrossRowLoopsRunTheEpilogueUnderTheColumnPanel) {
  GemmPackTile t;
  t.mr = 6, t.nv = 1;
  const int64_t h = 5, w_ = 13, m = h * w_, n = 128, k = 24;
  Tensor x = te::placeholder(MakeShape({1, h, w_, k}), f32, "x");
  Tensor w = te::placeholder(MakeShape({n, k}), f32, "w");
  Tensor bias = te::placeholder(MakeShape({n}), f32, "bias");
  Tensor y = relu(add(dense_packed(x, pack_dense_weight(w, t), n, t), bias));
  ExpectEpilogueFusedWithIntermediate(te::create_prim_func({x, w, bias, y}, "gemm"), m * 16);
  Data dx = testing::Random(m * k, 31), dw = testing::Random(n * k, 32), db = testing::Random(n, 33);
  Data want = RefDenseBiasRelu(dx, dw, db, m, n, k);
  testing::CheckAllModes({x, w, bias}, y, {dx, dw, db}, want, 1e-4);
}

// The tuning knob "kc" (K blocking): the reduction in chunks outside the row tiles, the init before
// the chunk loop, the epilogue under the column panel loop; every chunk size computes the same.
TEST(TopiDensePack, KBlockingKnobComputesTheSameProduct) {
  GemmPackTile t;
  t.mr = 4, t.nv = 1;
  const int64_t m = 12, n = 32, k = 96;
  Tensor x = te::placeholder(MakeShape({m, k}), f32, "x");
  Tensor w = te::placeholder(MakeShape({n, k}), f32, "w");
  Tensor bias = te::placeholder(MakeShape({n}), f32, "bias");
  Tensor y = relu(add(dense_packed(x, pack_dense_weight(w, t), n, t), bias));
  tir::PrimFunc f = te::create_prim_func({x, w, bias, y}, "gemm");
  Data dx = testing::Random(m * k, 21), dw = testing::Random(n * k, 22), db = testing::Random(n, 23);
  Data want = RefDenseBiasRelu(dx, dw, db, m, n, k);
  KnobContext probe;
  x86::ScheduleOptions opt = x86::ScheduleOptionsFor(testing::TestTarget());
  opt.knobs = &probe;
  x86::ScheduleDefault(f, opt);
  const KnobSpec* kc = nullptr;
  for (const KnobSpec& s : probe.space())
    if (s.name == "T_gemm_packed.kc") kc = &s;
  ASSERT_NE(kc, nullptr);
  EXPECT_EQ(kc->fallback, k);
  EXPECT_EQ(kc->candidates, (std::vector<int64_t>{32, 48, 96}));
  for (int64_t chunk : kc->candidates) {
    SCOPED_TRACE(chunk);
    KnobContext ctx({{"T_gemm_packed.mr", 4}, {"T_gemm_packed.kc", chunk}});
    opt.knobs = &ctx;
    tir::Schedule sch = x86::ScheduleDefault(f, opt);
    const std::string trace = sch.trace().str();
    EXPECT_EQ(trace.find("factors=[-1, " + std::to_string(chunk) + "]") != std::string::npos, chunk < k) << trace;
    LoopKinds kinds;
    kinds.VisitStmt(sch.func()->body);
    EXPECT_EQ(kinds.parallel, 2) << "the packing, and the GEMM with its epilogue\n" << tir::AsText(sch.func());
    std::vector<Data> storage = {dx, dw, db, Data(m * n, -777.0)};
    std::vector<Data*> ptrs;
    for (Data& d : storage) ptrs.push_back(&d);
    testing::RunPrimFunc(sch.func(), ptrs);
    testing::ExpectNear(storage.back(), want, 1e-4, "interpreter");
    if (testing::HaveJIT()) {
      storage.back().assign(m * n, -777.0);
      testing::RunJIT(tir::transform::LowerToFlat(sch.func()), storage);
      testing::ExpectNear(storage.back(), want, 1e-4, "JIT");
    }
  }
}

TEST(TopiDensePack, TileChoiceDividesOrPadsAndFitsRegisters) {
  for (const GemmCase& c : std::vector<GemmCase>{{1024, 1024, 1024}, {128, 768, 768}, {196, 256, 2304},
                                                 {3136, 64, 576}, {1, 1000, 2048}, {7, 13, 19}}) {
    GemmPackTile t = x86::ChooseGemmTile(c.m, c.n, c.k, testing::TestTarget());
    EXPECT_GE(t.mr, 1);
    EXPECT_LE(t.mr * t.nv, 28) << c.m << "x" << c.n << "x" << c.k;
    EXPECT_EQ(t.PaddedN(c.n) % (t.nv * 16), 0);
    if (c.m == 1) EXPECT_EQ(t.mr, 1);
    else EXPECT_GE(t.mr, 3) << "B vectors must be reused by several rows";
  }
}

// The micro-kernel compiled for Zen 4 (AVX-512): broadcast + FMA on zmm registers, the
// accumulators kept in registers (no stack traffic in the reduction loop).
TEST(TopiDensePack, MicroKernelAssemblyIsZmmFMA) {
  GemmPackTile t;
  t.mr = 6, t.nv = 4;
  Tensor x = te::placeholder(MakeShape({96, 256}), f32, "x");
  Tensor wp = te::placeholder(MakeShape({16, 256, 16}), f32, "wp");
  Tensor y = dense_packed(x, wp, 256, t);
  tir::PrimFunc f = tir::transform::LowerToFlat(x86::DefaultSchedule(te::create_prim_func({x, wp, y}, "gemm")));
  tir::IRModule mod;
  mod.Add(f);
  const std::string asm_text = codegen::EmitAssembly(mod, driver::ResolveTarget("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4"));
  std::regex fma(R"(vfmadd\d+ps\s+[^\n]*%zmm\d+,\s*%zmm\d+)");
  std::istringstream in(asm_text);
  std::string line;
  int fmas = 0, zmm_stack = 0, broadcasts = 0;
  for (int i = 0; std::getline(in, line); ++i) {
    if (std::regex_search(line, fma)) ++fmas;
    if (line.find("vbroadcastss") != std::string::npos || line.find("{1to16}") != std::string::npos) ++broadcasts;
    // a zmm spill or reload through the stack
    if (line.find("%zmm") != std::string::npos && line.find("(%rsp)") != std::string::npos) ++zmm_stack;
  }
  EXPECT_GE(fmas, 24) << "expected the 6 x 4 zmm FMAs of the micro-kernel\n" << asm_text;
  EXPECT_GE(broadcasts, 6) << asm_text;
  EXPECT_EQ(zmm_stack, 0) << "accumulators spilled to the stack\n" << asm_text;
}

}  // namespace
}  // namespace tessera::topi
