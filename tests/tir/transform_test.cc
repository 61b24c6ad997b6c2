// Each pass: IR before -> IR expected after, compared with StructuralEqual.
#include <gtest/gtest.h>

#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/tir/transform/flatten_buffer.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/tir/transform/lower_blocks.h"
#include "tessera/tir/transform/lower_init_block.h"
#include "tessera/tir/transform/remove_no_op.h"
#include "tessera/tir/transform/simplify.h"
#include "tir_interp.h"
#include "tessera/tir/transform/unroll_loop.h"
#include "tessera/tir/transform/vectorize_loop.h"
#include "tessera/tir/transform/verify_flat.h"

namespace tessera::tir {
namespace {

using namespace tessera::ir;
namespace T = tessera::tir::transform;

#define EXPECT_IR_EQ(got, expected)                                                          \
  EXPECT_TRUE(StructuralEqual(got, expected)) << "got:\n" << AsText(got) << "\nexpected:\n" \
                                              << AsText(expected)

const DataType f32 = DataType::Float(32);

Stmt Loop(Var v, int extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return ForNode::make(v, 0, extent, kind, std::move(body));
}
PrimExpr Ld(const Buffer& b, std::vector<PrimExpr> idx) { return BufferLoadNode::make(b, std::move(idx)); }
Stmt St(const Buffer& b, PrimExpr v, std::vector<PrimExpr> idx) { return BufferStoreNode::make(b, std::move(v), std::move(idx)); }
Buffer View(const Buffer& b, int64_t n) {
  auto node = std::make_shared<BufferNode>(*b.get());
  node->shape = {PrimExpr(static_cast<int>(n))};
  return Buffer(std::move(node));
}
PrimFunc Func(const std::string& name, std::vector<Buffer> params, Stmt body) {
  return PrimFunc::make(name, std::move(params), std::move(body));
}

struct Matmul {
  Buffer a = Buffer::make("A", f32, {PrimExpr(8), PrimExpr(4)});
  Buffer b = Buffer::make("B", f32, {PrimExpr(4), PrimExpr(6)});
  Buffer c = Buffer::make("C", f32, {PrimExpr(8), PrimExpr(6)});

  // with block("C") over loops i, j, k; `init_in_body` gives LowerInitBlock's result.
  PrimFunc Blocked(bool init_in_body) const {
    Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
    Stmt update = St(c, Ld(c, {vi, vj}) + Ld(a, {vi, vk}) * Ld(b, {vk, vj}), {vi, vj});
    Stmt init = St(c, PrimExpr(0.0f), {vi, vj});
    Stmt body = init_in_body ? SeqStmtNode::make({IfThenElseNode::make(vk == 0, init), update}) : update;
    auto pt = [](Buffer x, PrimExpr p, PrimExpr q) { return BufferRegion{x, {Range(p, 1), Range(q, 1)}}; };
    Stmt block = BlockNode::make("C",
                                 {IterVar{vi, Range(0, 8), IterVarType::kDataPar},
                                  IterVar{vj, Range(0, 6), IterVarType::kDataPar},
                                  IterVar{vk, Range(0, 4), IterVarType::kCommReduce}},
                                 {pt(c, vi, vj), pt(a, vi, vk), pt(b, vk, vj)}, {pt(c, vi, vj)}, body,
                                 init_in_body ? Stmt() : init);
    Stmt loops = Loop(i, 8, Loop(j, 6, Loop(k, 4, BlockRealizeNode::make({i, j, k}, PrimExpr(), block))));
    return Func("mm", {a, b, c}, BlockRealizeNode::make({}, PrimExpr(), BlockNode::make("root", {}, {}, {}, loops)));
  }
  // After LowerBlocks (N-d) or after FlattenBuffer (flat = true).
  PrimFunc Lowered(bool flat) const {
    Var i("i"), j("j"), k("k");
    Buffer fa = flat ? View(a, 32) : a, fb = flat ? View(b, 24) : b, fc = flat ? View(c, 48) : c;
    auto ia = [&](PrimExpr x, PrimExpr y) { return flat ? std::vector<PrimExpr>{x * 4 + y} : std::vector<PrimExpr>{x, y}; };
    auto ib = [&](PrimExpr x, PrimExpr y) { return flat ? std::vector<PrimExpr>{x * 6 + y} : std::vector<PrimExpr>{x, y}; };
    Stmt body = SeqStmtNode::make({IfThenElseNode::make(k == 0, St(fc, PrimExpr(0.0f), ib(i, j))),
                                   St(fc, Ld(fc, ib(i, j)) + Ld(fa, ia(i, k)) * Ld(fb, ib(k, j)), ib(i, j))});
    return Func("mm", {a, b, c}, Loop(i, 8, Loop(j, 6, Loop(k, 4, body))));
  }
};

TEST(LowerInitBlock, InitBecomesGuardedStoreInBody) {
  Matmul m;
  EXPECT_IR_EQ(T::LowerInitBlock(m.Blocked(false)), m.Blocked(true));
}

TEST(LowerBlocks, SubstitutesIterValuesAndDropsBlocks) {
  Matmul m;
  EXPECT_IR_EQ(T::LowerBlocks(m.Blocked(false)), m.Lowered(false));
  EXPECT_IR_EQ(T::LowerBlocks(T::LowerInitBlock(m.Blocked(false))), m.Lowered(false));
}

TEST(LowerBlocks, PredicateAndAllocBuffers) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(10)});
  Buffer t = Buffer::make("T", f32, {PrimExpr(10)});
  Var i("i"), vi("vi");
  Stmt block = BlockNode::make("T", {IterVar{vi, Range(0, 10), IterVarType::kDataPar}}, {}, {},
                               St(t, Ld(a, {vi}), {vi}));
  Stmt realize = BlockRealizeNode::make({i * 2}, i < 5, block);
  Stmt root = BlockRealizeNode::make({}, PrimExpr(), BlockNode::make("root", {}, {}, {}, Loop(i, 6, realize), Stmt(), {t}));
  PrimFunc got = T::LowerBlocks(Func("f", {a}, root));
  Var i2("i");
  PrimFunc expected =
      Func("f", {a}, AllocateNode::make(t, Loop(i2, 6, IfThenElseNode::make(i2 < 5, St(t, Ld(a, {i2 * 2}), {i2 * 2})))));
  EXPECT_IR_EQ(got, expected);
}

TEST(FlattenBuffer, RowMajorOneDimensionalViews) {
  Matmul m;
  PrimFunc got = T::Simplify(T::FlattenBuffer(m.Lowered(false)));
  EXPECT_IR_EQ(got, m.Lowered(true));
  // The views share the parameters' data variables.
  auto* store = got->body.as<ForNode>()->body.as<ForNode>()->body.as<ForNode>()->body.as<SeqStmtNode>()->seq[1].as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->buffer->data.same_as(m.c->data));
  EXPECT_EQ(store->buffer.ndim(), 1);
}

TEST(Simplify, RemovesUnitLoopsConstantIfsAndSimplifiesIndices) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(64)});
  Var i("i"), j("j"), u("u");
  Stmt s = Loop(i, 8, Loop(u, 1, Loop(j, 8,
                IfThenElseNode::make(i < 8, St(a, PrimExpr(1.0f), {floordiv(i * 8 + j, 8) * 8 + floormod(j + u * 8, 8)}),
                                     St(a, PrimExpr(2.0f), {i})))));
  Var i2("i"), j2("j");
  Stmt expected = Loop(i2, 8, Loop(j2, 8, St(a, PrimExpr(1.0f), {i2 * 8 + j2})));
  EXPECT_IR_EQ(T::Simplify(Func("f", {a}, s)), Func("f", {a}, expected));
}

TEST(VectorizeLoop, RampsAndBroadcasts) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(32)});
  Buffer b = Buffer::make("B", f32, {PrimExpr(32)});
  Var io("io"), ii("ii");
  Stmt s = Loop(io, 4, Loop(ii, 8, St(b, Ld(a, {io * 8 + ii}) * 2.0f, {io * 8 + ii}), ForKind::kVectorized));
  PrimFunc got = T::Simplify(T::VectorizeLoop(Func("f", {a, b}, s)));
  Var io2("io");
  PrimExpr idx = RampNode::make(io2 * 8, PrimExpr(1), 8);
  Stmt expected = Loop(io2, 4, St(b, MulNode::make(Ld(a, {idx}), BroadcastNode::make(PrimExpr(2.0f), 8)), {idx}));
  EXPECT_IR_EQ(got, Func("f", {a, b}, expected));
  EXPECT_NE(AsText(got).find("B[ramp(io * 8, 1, 8)] = A[ramp(io * 8, 1, 8)] * broadcast(2.0f, 8)"), std::string::npos)
      << AsText(got);
}

TEST(VectorizeLoop, KeepsALoopInvariantIfScalar) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(32)});
  Var io("io"), ii("ii");
  // A split's predicate on the outer loop: the if stays scalar, the store is vectorized.
  Stmt s = Loop(io, 4, Loop(ii, 8, IfThenElseNode::make(io < 3, St(a, PrimExpr(0.0f), {io * 8 + ii})),
                            ForKind::kVectorized));
  PrimFunc got = T::Simplify(T::VectorizeLoop(Func("f", {a}, s)));
  EXPECT_EQ(AsText(got).find("vectorize_fallback"), std::string::npos) << AsText(got);
  EXPECT_NE(AsText(got).find("A[ramp(io * 8, 1, 8)] = broadcast(0.0f, 8)"), std::string::npos) << AsText(got);
}

// Dynamic shapes: a lane loop guarded by a monotone upper bound on a shape var (the last partial
// column panel of an unpadding copy) is versioned: vector code when the last lane passes.
TEST(VectorizeLoop, VersionsAMonotoneGuard) {
  Var n("n"), o("o"), i("i");
  Buffer a = Buffer::make("A", f32, {n});
  Stmt s = Loop(o, 3, Loop(i, 8, IfThenElseNode::make(o * 8 + i < n, St(a, PrimExpr(1.0f), {o * 8 + i})),
                           ForKind::kVectorized));
  PrimFunc f = PrimFunc::make("f", {a}, s, {}, {n});
  PrimFunc got = T::Simplify(T::VectorizeLoop(f));
  const std::string text = AsText(got);
  EXPECT_NE(text.find("if o * 8 + 7 < n:"), std::string::npos) << text;
  EXPECT_NE(text.find("A[ramp(o * 8, 1, 8)] = broadcast(1.0f, 8)"), std::string::npos) << text;
  EXPECT_NE(text.find("the guard fails on the last lane"), std::string::npos) << text;
  for (int64_t len : {0, 5, 8, 13, 24}) {
    std::vector<double> data(len, 0.0);
    testing::RunPrimFunc(got, {&data}, {len});
    for (double x : data) EXPECT_EQ(x, 1.0) << len;
  }
  // A lane-decreasing guard (i > ...) is not monotone that way: the loop stays serial.
  Stmt down = Loop(o, 3, Loop(i, 8, IfThenElseNode::make(n - i < o * 8 + 7, St(a, PrimExpr(1.0f), {o * 8 + i})),
                              ForKind::kVectorized));
  EXPECT_NE(AsText(T::VectorizeLoop(PrimFunc::make("g", {a}, down, {}, {n}))).find("the body contains an if"),
            std::string::npos);
}

TEST(VectorizeLoop, FallsBackToSerialWithAReason) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(8)});
  Buffer c = Buffer::make("C", f32, {PrimExpr(1)});
  Var i("i"), k("k");
  Stmt with_if = Loop(i, 8, IfThenElseNode::make(i < 4, St(a, PrimExpr(0.0f), {i})), ForKind::kVectorized);
  PrimFunc got = T::VectorizeLoop(Func("f", {a}, with_if));
  auto* loop = got->body.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->for_kind, ForKind::kSerial);
  ASSERT_TRUE(loop->annotations.count("vectorize_fallback"));
  EXPECT_EQ(loop->annotations.at("vectorize_fallback").as<StringImmNode>()->value, "the body contains an if");
  // A reduction into one element cannot be vectorized either.
  Stmt reduce = Loop(k, 8, St(c, Ld(c, {PrimExpr(0)}) + Ld(a, {k}), {PrimExpr(0)}), ForKind::kVectorized);
  std::string text = AsText(T::VectorizeLoop(Func("g", {a, c}, reduce)));
  EXPECT_NE(text.find("does not depend on the loop variable"), std::string::npos) << text;
  Stmt inner = Loop(i, 8, Loop(k, 1, St(a, PrimExpr(0.0f), {i})), ForKind::kVectorized);
  EXPECT_NE(AsText(T::VectorizeLoop(Func("h", {a}, inner))).find("inner loop"), std::string::npos);
}

TEST(UnrollLoop, ReplicatesBodies) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(6)});
  Var i("i"), j("j");
  Stmt s = Loop(j, 2, Loop(i, 3, St(a, PrimExpr(1.0f), {j * 3 + i}), ForKind::kUnrolled));
  PrimFunc got = T::Simplify(T::UnrollLoop(Func("f", {a}, s)));
  Var j2("j");
  Stmt expected = Loop(j2, 2, SeqStmtNode::make({St(a, PrimExpr(1.0f), {j2 * 3}), St(a, PrimExpr(1.0f), {j2 * 3 + 1}),
                                                 St(a, PrimExpr(1.0f), {j2 * 3 + 2})}));
  EXPECT_IR_EQ(got, Func("f", {a}, expected));
}

TEST(UnrollLoop, InnerLoopsGetFreshVariablesPerCopy) {
  // An unrolled loop around a serial one (a conv epilogue: 2 rows unrolled, 22 pixels each):
  // each copy defines its own inner loop variable, so the result is valid flat TIR.
  Buffer a = Buffer::make("A", f32, {PrimExpr(6)});
  Var i("i"), j("j");
  Stmt s = Loop(i, 2, Loop(j, 3, St(a, PrimExpr(1.0f), {i * 3 + j})), ForKind::kUnrolled);
  PrimFunc got = T::Simplify(T::UnrollLoop(Func("f", {a}, s)));
  EXPECT_NO_THROW(T::VerifyFlat(got)) << AsText(got);
  Var j0("j"), j1("j_t");
  Stmt expected = SeqStmtNode::make({Loop(j0, 3, St(a, PrimExpr(1.0f), {j0})), Loop(j1, 3, St(a, PrimExpr(1.0f), {j1 + 3}))});
  EXPECT_IR_EQ(got, Func("f", {a}, expected));
}

TEST(RemoveNoOp, DropsEmptyLoopsAndSelfStores) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(8)});
  Var i("i"), j("j");
  Stmt s = SeqStmtNode::make({Loop(i, 8, EvaluateNode::make(0)), Loop(j, 8, St(a, Ld(a, {j}), {j})),
                              Loop(j, 8, St(a, PrimExpr(3.0f), {j}))});
  Var j2("j");
  EXPECT_IR_EQ(T::RemoveNoOp(Func("f", {a}, s)), Func("f", {a}, Loop(j2, 8, St(a, PrimExpr(3.0f), {j2}))));
}

TEST(VerifyFlat, NamesTheProblem) {
  Matmul m;
  auto message = [](const PrimFunc& f) {
    try {
      T::VerifyFlat(f);
    } catch (const InternalError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(m.Blocked(false)).find("block \"root\" remains"), std::string::npos);
  EXPECT_NE(message(m.Lowered(false)).find("has 2 indices"), std::string::npos);
  EXPECT_EQ(message(T::Simplify(T::FlattenBuffer(m.Lowered(false)))), "no error");
  Buffer a = Buffer::make("A", f32, {PrimExpr(8)});
  Var n("n"), i("i");
  EXPECT_NE(message(Func("f", {a}, Loop(i, 8, St(a, PrimExpr(0.0f), {n})))).find("variable n is used before"),
            std::string::npos);
  Buffer t = Buffer::make("T", f32, {PrimExpr(8)});
  EXPECT_NE(message(Func("f", {a}, St(t, PrimExpr(0.0f), {PrimExpr(0)}))).find("neither a parameter nor allocated"),
            std::string::npos);
}

TEST(LowerToFlat, MatmulPipeline) {
  Matmul m;
  PrimFunc flat = T::LowerToFlat(m.Blocked(false));
  EXPECT_IR_EQ(flat, m.Lowered(true));
}

// The module form runs each step as a pass under the context: the timing instrument sees every
// one in order, a disabled optional pass is skipped, and the result equals the one-function form.
TEST(LowerToFlat, EveryStepIsAPassUnderTheContext) {
  Matmul m;
  IRModule mod;
  mod.Add(m.Blocked(false));
  ir::PassContext ctx;
  auto timing = std::make_shared<ir::PassTimingInstrument>();
  ctx.instruments = {timing};
  ctx.disabled_passes = {"RemoveNoOp"};
  IRModule flat = T::LowerToFlat(mod, ctx);
  std::vector<std::string> ran;
  for (const auto& [name, ms] : timing->timings()) ran.push_back(name);
  const std::vector<std::string> want = {"LowerStorageTypeCasts", "CompactBufferAllocation", "LowerInitBlock",
                                         "LowerBlocks", "FlattenBuffer", "Simplify", "LoopPartition", "Simplify",
                                         "VectorizeLoop", "UnrollLoop", "Simplify", "VerifyFlat"};
  EXPECT_EQ(ran, want);
  ASSERT_EQ(flat.functions().size(), 1u);
  EXPECT_IR_EQ(flat.functions()[0], T::LowerToFlat(m.Blocked(false)));
  // VerifyFlat is required: disabling it does not skip it.
  auto timing2 = std::make_shared<ir::PassTimingInstrument>();
  ctx.instruments = {timing2};
  ctx.disabled_passes = {"VerifyFlat"};
  T::LowerToFlat(mod, ctx);
  ASSERT_FALSE(timing2->timings().empty());
  EXPECT_EQ(timing2->timings().back().first, "VerifyFlat");
}

TEST(StructuralEqual, LoopVarsMapButFreeVarsMustMatch) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(8)});
  Var i("i"), j("j"), n("n"), m("m");
  EXPECT_TRUE(StructuralEqual(Loop(i, 8, St(a, PrimExpr(0.0f), {i})), Loop(j, 8, St(a, PrimExpr(0.0f), {j}))));
  EXPECT_EQ(StructuralHash(Loop(i, 8, St(a, PrimExpr(0.0f), {i}))), StructuralHash(Loop(j, 8, St(a, PrimExpr(0.0f), {j}))));
  EXPECT_FALSE(StructuralEqual(Loop(i, 8, St(a, PrimExpr(0.0f), {n})), Loop(j, 8, St(a, PrimExpr(0.0f), {m}))));
  EXPECT_FALSE(StructuralEqual(Loop(i, 8, St(a, PrimExpr(0.0f), {i})), Loop(j, 4, St(a, PrimExpr(0.0f), {j}))));
  EXPECT_FALSE(StructuralEqual(Loop(i, 8, St(a, PrimExpr(0.0f), {i}), ForKind::kParallel),
                               Loop(j, 8, St(a, PrimExpr(0.0f), {j}))));
  Buffer b = Buffer::make("B", f32, {PrimExpr(8)});
  EXPECT_FALSE(StructuralEqual(St(a, PrimExpr(0.0f), {PrimExpr(0)}), St(b, PrimExpr(0.0f), {PrimExpr(0)})));
}

TEST(Printer, LoopsVectorsAndBlocks) {
  Buffer a = Buffer::make("A", f32, {PrimExpr(16)});
  Var i("i"), i_other("i");
  Stmt s = SeqStmtNode::make({Loop(i, 2, St(a, BroadcastNode::make(PrimExpr(1.5f), 8), {RampNode::make(i * 8, PrimExpr(1), 8)}), ForKind::kParallel),
                              Loop(i_other, 16, St(a, Ld(a, {i_other}) - (Ld(a, {i_other}) - 1.0f), {i_other}))});
  EXPECT_EQ(AsText(s),
            "for i in range(0, 2) parallel:\n"
            "  A[ramp(i * 8, 1, 8)] = broadcast(1.5f, 8)\n"
            "for i_1 in range(0, 16):\n"
            "  A[i_1] = A[i_1] - (A[i_1] - 1.0f)\n");
  Var x("x");
  EXPECT_EQ(AsText(floordiv(x + 1, 4) * 4 + floormod(x, 4)), "(x + 1) // 4 * 4 + x % 4");
  EXPECT_EQ(AsText(select(x < 3 && !(x == 1), make_const(DataType::Int(64), 3), cast(DataType::Int(64), x))),
            "select(x < 3 and not x == 1, int64(3), int64(x))");
}

}  // namespace
}  // namespace tessera::tir
