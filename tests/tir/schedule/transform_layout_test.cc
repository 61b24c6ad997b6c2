// transform_layout and IndexMap: expected IR, numerics (block interpreter and lowered),
// illegal maps, and the trace (print, JSON, replay).
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
using ir::floordiv;
using ir::floormod;
using ir::make_const;

const DataType f32 = DataType::Float(32);

/// B = A + 1; C = B * 2 on NCHW tensors (B intermediate).
PrimFunc NCHWChain(int64_t N, int64_t C, int64_t H, int64_t W) {
  Buffer A = F32("A", {N, C, H, W}), B = F32("B", {N, C, H, W}), Cb = F32("C", {N, C, H, W});
  std::vector<Axis> ax{{"n", N}, {"c", C}, {"h", H}, {"w", W}};
  Stmt b = MakeCompute("B", B, ax, {}, [&](auto& s, auto&) {
    return BufferLoadNode::make(A, {s[0], s[1], s[2], s[3]}) + make_const(f32, 1.0);
  });
  Stmt c = MakeCompute("C", Cb, ax, {}, [&](auto& s, auto&) {
    return BufferLoadNode::make(B, {s[0], s[1], s[2], s[3]}) * make_const(f32, 2.0);
  });
  return MakeFunc("nchw_chain", {A, Cb}, {b, c}, {B});
}

IndexMap NCHWc(int factor) {
  return IndexMap::FromFunc({"n", "c", "h", "w"}, [&](const std::vector<Var>& i) {
    return std::vector<PrimExpr>{i[0], floordiv(i[1], factor), i[2], i[3], floormod(i[1], factor)};
  });
}

TEST(IndexMap, PrintAndParse) {
  IndexMap m = NCHWc(16);
  EXPECT_EQ(m.str(), "lambda n, c, h, w: (n, c // 16, h, w, c % 16)");
  EXPECT_EQ(IndexMap::Parse(m.str()).str(), m.str());
  IndexMap fuse = IndexMap::Parse("lambda a, b, c: ((a * 4 + b) * 3 + c,)");
  EXPECT_EQ(fuse.str(), "lambda a, b, c: ((a * 4 + b) * 3 + c,)");
  IndexMap spaced = IndexMap::Parse(" lambda x :( x//2%3 - -1 , 2*(x - 1) , ) ");
  ASSERT_EQ(spaced.final_indices.size(), 2u);
  EXPECT_EQ(IndexMap::Parse(spaced.str()).str(), spaced.str());
  // Unprintable variable names get positional ones.
  IndexMap odd{{Var("lambda"), Var("x"), Var("x")}, {}};
  EXPECT_EQ(odd.str(), "lambda i0, x, i2: ()");
  EXPECT_THROW(IndexMap::Parse("lambda a: (b,)"), UserError);
  EXPECT_THROW(IndexMap::Parse("lambda a, a: (a,)"), UserError);
  EXPECT_THROW(IndexMap::Parse("lambda a: (a"), UserError);
  EXPECT_THROW(IndexMap::Parse("(a,)"), UserError);
  EXPECT_THROW(IndexMap::Parse("lambda a: (a,) extra"), UserError);
}

TEST(ScheduleTransformLayout, NCHWToNCHWcExpectedIR) {
  PrimFunc f = NCHWChain(1, 32, 3, 4);
  Schedule sch(f);
  sch.transform_layout(sch.get_block("B"), 0, /*is_write_buffer=*/true, NCHWc(16));
  // Expected: B: (1, 2, 3, 4, 16), written and read at [vn, vc // 16, vh, vw, vc % 16].
  const Buffer& A = f->params[0];
  const Buffer& C = f->params[1];
  Buffer B2 = F32("B", {1, 2, 3, 4, 16});
  std::vector<Axis> ax{{"n", 1}, {"c", 32}, {"h", 3}, {"w", 4}};
  auto packed = [](const std::vector<Var>& s) {
    return std::vector<PrimExpr>{s[0], floordiv(s[1], 16), s[2], s[3], floormod(s[1], 16)};
  };
  Stmt b = MakeCompute("B", B2, ax, {}, [&](auto& s, auto&) {
    return BufferLoadNode::make(A, {s[0], s[1], s[2], s[3]}) + make_const(f32, 1.0);
  }, PrimExpr(), packed);
  Stmt c = MakeCompute("C", C, ax, {}, [&](auto& s, auto&) {
    return BufferLoadNode::make(B2, packed(s)) * make_const(f32, 2.0);
  });
  PrimFunc expected = MakeFunc("nchw_chain", {A, C}, {b, c}, {B2});
  EXPECT_TRUE(StructuralEqual(sch.func(), expected)) << AsText(sch.func()) << "\nvs\n" << AsText(expected);
  EXPECT_EQ(sch.trace().str(),
            "b0 = sch.get_block(\"B\")\n"
            "sch.transform_layout(b0, buffer_index=0, is_write_buffer=1, "
            "index_map=lambda n, c, h, w: (n, c // 16, h, w, c % 16))\n");
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-12);
  EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-6);
}

TEST(ScheduleTransformLayout, FullReadRegionIsMapped) {
  // D[i] = B[i, 0] + B[0, i]: the read region of B is the whole buffer; it maps to the whole new buffer.
  Buffer A = F32("A", {4, 4}), B = F32("B", {4, 4}), D = F32("D", {4});
  Stmt b = MakeCompute("B", B, {{"i", 4}, {"j", 4}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(A, {s[0], s[1]}); });
  Stmt d = MakeCompute("D", D, {{"i", 4}}, {}, [&](auto& s, auto&) {
    return BufferLoadNode::make(B, {s[0], PrimExpr(0)}) + BufferLoadNode::make(B, {PrimExpr(0), s[0]});
  });
  PrimFunc f = MakeFunc("full", {A, D}, {b, d}, {B});
  Schedule sch(f);
  BlockRV db = sch.get_block("D");
  sch.transform_layout(db, 0, false, IndexMap::Parse("lambda i, j: (j // 2, i, j % 2)"));
  const BufferRegion& r = sch.GetBlock(db)->reads[0];
  ASSERT_EQ(r.region.size(), 3u);
  std::vector<int64_t> mins, extents;
  for (const auto& rg : r.region) {
    mins.push_back(ir::get_const_int(rg.min));
    extents.push_back(ir::get_const_int(rg.extent));
  }
  EXPECT_EQ(mins, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(extents, (std::vector<int64_t>{2, 4, 2}));
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-12) << AsText(sch.func());
  EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-6);
}

TEST(ScheduleTransformLayout, PermuteSplitFuseNumerics) {
  struct Case {
    const char* map;
    std::vector<int64_t> shape;
  };
  // MatmulRelu's C (a reduction output, 8 x 12).
  for (const Case& c : {Case{"lambda i, j: (j, i)", {12, 8}}, Case{"lambda i, j: (i // 4, j // 4, i % 4, j % 4)", {2, 3, 4, 4}},
                        Case{"lambda i, j: (i * 12 + j,)", {96}}, Case{"lambda i, j: (j % 3 * 8 + i, j // 3)", {24, 4}},
                        Case{"lambda i, j: (i // 2 % 2, j, i % 2, i // 4)", {2, 12, 2, 2}}}) {
    PrimFunc f = MatmulRelu(8, 12, 5);
    Schedule sch(f);
    BlockRV cb = sch.get_block("C");
    sch.transform_layout(cb, 0, true, IndexMap::Parse(c.map));
    std::vector<int64_t> shape;
    for (const auto& e : sch.GetBlock(cb)->writes[0].buffer->shape) shape.push_back(ir::get_const_int(e));
    EXPECT_EQ(shape, c.shape) << c.map;
    EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << c.map << "\n" << AsText(sch.func());
    EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-4) << c.map;
  }
}

TEST(ScheduleTransformLayout, AfterComputeAtAndBeforeSplit) {
  PrimFunc f = PadConv1D(16);  // P: 18 elements, read as P[vi + vr]
  Schedule sch(f);
  BlockRV p = sch.get_block("P");
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto t = sch.split(l[0], {-1, 4});
  sch.compute_at(p, t[0]);
  sch.transform_layout(c, 0, false, IndexMap::Parse("lambda i: (i // 2, i % 2)"));
  auto ld = sch.get_loops(c);
  sch.split(ld[2], {-1, 2});
  EXPECT_EQ(sch.GetBlock(p)->writes[0].buffer.ndim(), 2);
  EXPECT_LT(MaxDiff(f, sch.func()), 1e-9) << AsText(sch.func());
  EXPECT_LT(LoweredMaxDiff(f, sch.func()), 1e-5);
}

TEST(ScheduleTransformLayout, Errors) {
  Schedule sch(NCHWChain(1, 32, 3, 4));
  BlockRV b = sch.get_block("B");
  size_t before = sch.trace().size();
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, false, NCHWc(16)),
                        "transform_layout: buffer 'A' is a parameter of function 'nchw_chain'; the layout of an "
                        "argument is changed at graph level (AlterOpLayout)");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 1, true, NCHWc(16)),
                        "transform_layout: block 'B' writes 1 buffers; buffer_index 1 is out of range");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h: (n, c, h)")),
                        "takes 3 indices but buffer 'B' has rank 4");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, NCHWc(24)),
                        "dimension 1 ('c') has extent 32, which is not divisible by 24; transform_layout does not pad");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c, h)")),
                        "the map is not bijective: index 'w' (extent 4) is not used");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c, h, w, c % 16)")),
                        "the map is not bijective: the parts of index 'c' overlap");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c // 4, h, w)")),
                        "the map is not bijective: the parts of index 'c' leave a gap");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c * 5 + h, w)")),
                        "the map is not bijective: output 1 (c * 5 + h) is not a fuse a * extent(b) + b of its parts (a coefficient 5 where 3 is needed)");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c * h, w)")),
                        "output 1 (c * h) is not quasi-affine in the supported forms");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c + 1, h, w)")),
                        "output 1 (c + 1) has a constant offset 1");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, (c + h) // 2, w)")),
                        "is not quasi-affine in the supported forms");
  IndexMap free_var = NCHWc(16);
  free_var.final_indices[0] = Var("z");
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, free_var),
                        "output 0 uses variable 'z', which is not one of the map's indices");
  IndexMap minmax = NCHWc(16);
  minmax.final_indices[0] = ir::min(minmax.initial_indices[0], 0);
  EXPECT_SCHEDULE_ERROR(sch.transform_layout(b, 0, true, minmax), "is not quasi-affine");
  EXPECT_EQ(sch.trace().size(), before);  // failed primitives record nothing
  // Permutation and transform of a unit dimension away are fine.
  sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (h, w, c)"));
  EXPECT_EQ(sch.GetBlock(b)->writes[0].buffer.ndim(), 3);
}

TEST(ScheduleTransformLayout, TraceJsonReplay) {
  auto make = [] { return NCHWChain(1, 32, 3, 4); };
  Schedule sch(make());
  BlockRV b = sch.get_block("B");
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  sch.compute_at(b, l[1]);
  sch.transform_layout(b, 0, true, IndexMap::Parse("lambda n, c, h, w: (n, c % 8 + 0, h, w * 1, c // 8)"));
  sch.transform_layout(c, 0, false, IndexMap::Parse("lambda n, a, h, w, b: (n, b, h * 4 + w, a)"));
  EXPECT_EQ(sch.trace().str(),
            "b0 = sch.get_block(\"B\")\n"
            "b1 = sch.get_block(\"C\")\n"
            "l2, l3, l4, l5 = sch.get_loops(b1)\n"
            "sch.compute_at(b0, l3)\n"
            "sch.transform_layout(b0, buffer_index=0, is_write_buffer=1, index_map=lambda n, c, h, w: (n, c % 8, h, w, c // 8))\n"
            "sch.transform_layout(b1, buffer_index=0, is_write_buffer=0, index_map=lambda n, a, h, w, b: (n, b, h * 4 + w, a))\n");
  PrimFunc original = make();
  EXPECT_LT(MaxDiff(original, sch.func()), 1e-12) << AsText(sch.func());
  ExpectTraceRoundTrip(sch, make);
}

}  // namespace
}  // namespace tessera::tir
