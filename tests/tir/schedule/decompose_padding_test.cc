// decompose_padding: expected IR, numerics (block interpreter and lowered), blocks that
// are not padding, and the trace (print, JSON, replay), also with transform_layout.
#include <gtest/gtest.h>

#include "tir_interp.h"
#include "funcs.h"
#include "schedule_test_util.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/structural_equal.h"

namespace tessera::tir {
namespace {

using namespace testing;  // NOLINT
using ir::make_const;

const DataType f32 = DataType::Float(32);
PrimExpr I(int64_t v) { return make_const(DataType::Int(32), v); }

/// topi::pad's form in 2-D: P[i, j] = select(1 <= i < H + 1 && 2 <= j < W + 2,
/// A[min(max(i - 1, 0), H - 1), min(max(j - 2, 0), W - 1)], -1.5); C = P * 2.
PrimFunc Pad2D(int64_t H, int64_t W) {
  Buffer A = F32("A", {H, W}), P = F32("P", {H + 2, W + 4}), C = F32("C", {H + 2, W + 4});
  Stmt p = MakeCompute("P", P, {{"i", H + 2}, {"j", W + 4}}, {}, [&](auto& s, auto&) {
    PrimExpr in = s[0] >= I(1) && s[0] < I(H + 1) && s[1] >= I(2) && s[1] < I(W + 2);
    PrimExpr x = BufferLoadNode::make(A, {ir::min(ir::max(s[0] - I(1), I(0)), I(H - 1)),
                                          ir::min(ir::max(s[1] - I(2), I(0)), I(W - 1))});
    return ir::select(in, x, make_const(f32, -1.5));
  });
  Stmt c = MakeCompute("C", C, {{"i", H + 2}, {"j", W + 4}}, {},
                       [&](auto& s, auto&) { return BufferLoadNode::make(P, {s[0], s[1]}) * make_const(f32, 2.0); });
  return MakeFunc("pad2d", {A, C}, {p, c}, {P});
}

/// P[i] = select(cond(i), value(i), pad) over 10 elements; C = P + 1.
PrimFunc Pad1D(const std::function<PrimExpr(const Var&)>& cond, const std::function<PrimExpr(const Buffer&, const Var&)>& value,
               const std::function<PrimExpr(const Buffer&)>& pad) {
  Buffer A = F32("A", {10}), P = F32("P", {10}), C = F32("C", {10});
  Stmt p = MakeCompute("P", P, {{"i", 10}}, {}, [&](auto& s, auto&) { return ir::select(cond(s[0]), value(A, s[0]), pad(A)); });
  Stmt c = MakeCompute("C", C, {{"i", 10}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(P, {s[0]}) + make_const(f32, 1.0); });
  return MakeFunc("pad1d", {A, C}, {p, c}, {P});
}

TEST(ScheduleDecomposePadding, PadConv1DExpectedIR) {
  PrimFunc f = PadConv1D(8);  // P[i] = select(1 <= i < 9, A[max(min(i - 1, 7), 0)], 0), 10 elements
  Schedule sch(f);
  BlockRV p = sch.get_block("P");
  BlockRV pad = sch.decompose_padding(p, sch.get_loops(p)[0]);
  EXPECT_EQ(sch.GetBlock(pad)->name_hint, "P_pad_const");
  // Expected: P_pad_const fills P[0 .. 10) with 0; P copies P[vi + 1] = A[vi] for vi < 8.
  const Buffer& A = f->params[0];
  const Buffer& W = f->params[1];
  const Buffer& C = f->params[2];
  const Buffer& P = f->body.as<BlockRealizeNode>()->block_node()->alloc_buffers[0];
  Stmt fill = MakeCompute("P_pad_const", P, {{"i", 10}}, {}, [&](auto&, auto&) { return make_const(f32, 0.0); });
  Stmt copy = MakeCompute("P", P, {{"i", 8}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(A, {s[0]}); },
                          PrimExpr(), [](const std::vector<Var>& s) { return std::vector<PrimExpr>{s[0] + I(1)}; });
  Stmt conv = f->body.as<BlockRealizeNode>()->block_node()->body.as<SeqStmtNode>()->seq[1];
  PrimFunc expected = MakeFunc("padconv", {A, W, C}, {fill, copy, conv}, {P});
  EXPECT_TRUE(StructuralEqual(sch.func(), expected)) << AsText(sch.func()) << "\nvs\n" << AsText(expected);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9);
  EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-5);
}

TEST(ScheduleDecomposePadding, Pad2DOuterAndInnerLoop) {
  PrimFunc f = Pad2D(5, 3);  // P: 7 x 7
  {
    Schedule sch(f);
    BlockRV p = sch.get_block("P");
    auto l = sch.get_loops(p);
    BlockRV pad = sch.decompose_padding(p, l[0]);
    // Both loops of P shrink to the in-bound region; the fill block keeps the full one.
    auto lp = sch.get_loops(p);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lp[0])->extent), 5);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lp[1])->extent), 3);
    auto lf = sch.get_loops(pad);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lf[0])->extent), 7);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lf[1])->extent), 7);
    // The copy has no condition and no clamps left: P[vi + 1, vj + 2] = A[vi, vj].
    EXPECT_EQ(AsText(sch.GetBlock(p)->body), "P[vi + 1, vj + 2] = A[vi, vj]\n");
    EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
    EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-5);
  }
  {
    Schedule sch(f);
    BlockRV p = sch.get_block("P");
    auto l = sch.get_loops(p);
    sch.decompose_padding(p, l[1]);
    // i is above the chosen loop: its bound becomes a predicate; j shrinks.
    auto lp = sch.get_loops(p);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lp[0])->extent), 7);
    EXPECT_EQ(ir::get_const_int(sch.GetFor(lp[1])->extent), 3);
    EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
    EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-5);
  }
}

TEST(ScheduleDecomposePadding, AfterComputeAtUsesPredicates) {
  for (int64_t n : {16, 13}) {
    PrimFunc f = PadConv1D(n);
    Schedule sch = PadConvTiledComputeAt(n);
    BlockRV p = sch.get_block("P");
    auto lp = sch.get_loops(p);
    BlockRV pad = sch.decompose_padding(p, lp[1]);
    EXPECT_EQ(sch.get_loops(pad).size(), 2u);
    EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
    EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-5);
  }
}

TEST(ScheduleDecomposePadding, Errors) {
  Schedule mm(Matmul(4, 4, 4));
  BlockRV c = mm.get_block("C");
  EXPECT_SCHEDULE_ERROR(mm.decompose_padding(c, mm.get_loops(c)[0]),
                        "decompose_padding: block 'C' is not a padding block out[v] = select(in_bounds, value, "
                        "pad_value): it is a reduction");
  Schedule chain(ElementwiseChain(4, 4));
  BlockRV b = chain.get_block("B");
  EXPECT_SCHEDULE_ERROR(chain.decompose_padding(b, chain.get_loops(b)[0]), "the stored value A[vi, vj] + 1.0f is not a select");
  EXPECT_SCHEDULE_ERROR(chain.decompose_padding(b, chain.get_loops(chain.get_block("C"))[0]),
                        "decompose_padding: loop i is not an ancestor of block 'B'");

  auto load = [](const Buffer& A, const Var& i) { return BufferLoadNode::make(A, {ir::min(ir::max(i - I(1), I(0)), I(9))}); };
  auto zero = [](const Buffer&) { return make_const(f32, 0.0); };
  auto try_pad = [](const PrimFunc& f, const std::string& fragment) {
    Schedule sch(f);
    BlockRV p = sch.get_block("P");
    EXPECT_SCHEDULE_ERROR(sch.decompose_padding(p, sch.get_loops(p)[0]), fragment);
    EXPECT_EQ(sch.trace().size(), 2u);  // get_block, get_loops: nothing recorded by the failure
  };
  try_pad(Pad1D([](const Var& i) { return i * I(2) < I(5); }, load, zero),
          "the condition term vi * 2 < 5 is not a bound v >= c, v > c, v < c or v <= c");
  try_pad(Pad1D([](const Var& i) { return i >= I(1); }, load, [](const Buffer& A) { return BufferLoadNode::make(A, {I(0)}); }),
          "the pad value A[0] is not a constant");
  try_pad(Pad1D([](const Var& i) { return i >= I(0) && i <= I(9); }, load, zero),
          "the condition of block 'P' holds on its whole domain; there is no padding to decompose");
  try_pad(Pad1D([](const Var& i) { return i > I(5) && I(3) > i; }, load, zero),
          "the in-bound region of block 'P' is empty");
  // After transform_layout the store is no longer indexed by the iter vars.
  Schedule tl(PadConv1D(16));
  BlockRV p = tl.get_block("P");
  tl.transform_layout(p, 0, true, IndexMap::Parse("lambda i: (i // 2, i % 2)"));
  EXPECT_SCHEDULE_ERROR(tl.decompose_padding(p, tl.get_loops(p)[0]), "store index 0 (vi // 2) is not a distinct iter var");
}

TEST(ScheduleDecomposePadding, ConditionForms) {
  // c <= v and v <= c forms, and an in-bound value that is not a load.
  PrimFunc f = Pad1D([](const Var& i) { return I(2) <= i && i <= I(6); },
                     [](const Buffer& A, const Var& i) { return BufferLoadNode::make(A, {i}) * make_const(f32, 3.0); },
                     [](const Buffer&) { return make_const(f32, 7.0); });
  Schedule sch(f);
  BlockRV p = sch.get_block("P");
  sch.decompose_padding(p, sch.get_loops(p)[0]);
  EXPECT_EQ(ir::get_const_int(sch.GetFor(sch.get_loops(p)[0])->extent), 5);
  EXPECT_EQ(AsText(sch.GetBlock(p)->body), "P[vi + 2] = A[vi + 2] * 3.0f\n");
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
  EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-5);
}

TEST(ScheduleDecomposePadding, TraceJsonReplay) {
  auto make = [] { return PadConv1D(16); };
  Schedule sch(make());
  BlockRV p = sch.get_block("P");
  auto l = sch.get_loops(p);
  BlockRV pad = sch.decompose_padding(p, l[0]);
  sch.transform_layout(pad, 0, true, IndexMap::Parse("lambda i: (i // 2, i % 2)"));
  sch.parallel(sch.get_loops(p)[0]);
  EXPECT_EQ(sch.trace().str(),
            "b0 = sch.get_block(\"P\")\n"
            "l1, = sch.get_loops(b0)\n"
            "b2 = sch.decompose_padding(b0, l1)\n"
            "sch.transform_layout(b2, buffer_index=0, is_write_buffer=1, index_map=lambda i: (i // 2, i % 2))\n"
            "l3, = sch.get_loops(b0)\n"
            "sch.parallel(l3)\n");
  PrimFunc original = make();
  EXPECT_LT(MaxDiff(original, sch.func()), 1e-9) << AsText(sch.func());
  EXPECT_LT(LoweredMaxDiff(original, sch.func()), 1e-5);
  ExpectTraceRoundTrip(sch, make);
}

}  // namespace
}  // namespace tessera::tir
