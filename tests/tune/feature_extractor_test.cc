// Feature extraction (tune/feature_extractor.h) on hand-built flat functions and on TE functions
// scheduled with a tir::Schedule and lowered by LowerToFlat.
#include "tessera/tune/feature_extractor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/transform/lower.h"

namespace tessera::tune {
namespace {

using ir::make_const;
using ir::PrimExpr;
using ir::Var;
using tir::Buffer;
using tir::BufferLoadNode;
using tir::BufferStoreNode;
using tir::ForKind;
using tir::ForNode;
using tir::PrimFunc;

const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

float L(double x) { return static_cast<float>(std::log2(1.0 + x)); }
float Get(const std::vector<float>& row, const std::string& name) { return row[FeatureIndex(name, true)]; }
float GetF(const std::vector<float>& v, const std::string& name) { return v[FeatureIndex(name)]; }

// for i in [0, 16) (outer_kind): for j in [0, 32):
//   C[i * 32 + j] = A[i * 32 + j] * B[j * 16 + i] + 1      (B read transposed)
PrimFunc TransposedMulAdd(ForKind outer_kind) {
  Buffer a = Buffer::make("A", f32, {make_const(i32, 512)});
  Buffer b = Buffer::make("B", f32, {make_const(i32, 512)});
  Buffer c = Buffer::make("C", f32, {make_const(i32, 512)});
  Var i("i"), j("j");
  PrimExpr value = BufferLoadNode::make(a, {i * 32 + j}) * BufferLoadNode::make(b, {j * 16 + i}) + make_const(f32, 1.0);
  tir::Stmt body = ForNode::make(i, make_const(i32, 0), make_const(i32, 16), outer_kind,
                                 ForNode::make(j, make_const(i32, 0), make_const(i32, 32), ForKind::kSerial,
                                               BufferStoreNode::make(c, value, {i * 32 + j})));
  return PrimFunc::make("mul_add", {a, b, c}, body);
}

TEST(FeatureExtractor, NamesAndLengthsAgree) {
  EXPECT_EQ(PerStoreFeatureNames().size(), kPerStoreLength);
  EXPECT_EQ(FeatureNames().size(), kFeatureLength);
  EXPECT_EQ(FeatureIndex("float_mul", true), 1u);
  EXPECT_EQ(FeatureIndex("max.float_mul"), kPerStoreLength + 1);
  EXPECT_EQ(FeatureIndex("param_bytes"), kFeatureLength - 1);
  EXPECT_THROW(FeatureIndex("no_such_feature"), InternalError);
}

TEST(FeatureExtractor, ArithmeticLoopsAndStridesOfAHandBuiltNest) {
  auto rows = PerStoreFeatures(TransposedMulAdd(ForKind::kSerial));
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  ASSERT_EQ(r.size(), kPerStoreLength);
  EXPECT_FLOAT_EQ(Get(r, "trip_count"), L(512));
  EXPECT_FLOAT_EQ(Get(r, "num_loops"), L(2));
  EXPECT_FLOAT_EQ(Get(r, "float_mul"), L(512));
  EXPECT_FLOAT_EQ(Get(r, "float_addsub"), L(512));
  EXPECT_FLOAT_EQ(Get(r, "float_fma"), L(512));  // an add of a product
  EXPECT_FLOAT_EQ(Get(r, "float_divmod"), 0);
  EXPECT_FLOAT_EQ(Get(r, "float_math_call"), 0);
  EXPECT_GT(Get(r, "int_arith"), 0);  // the index arithmetic
  EXPECT_FLOAT_EQ(Get(r, "vector_lanes"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "parallel_extent"), 0);
  EXPECT_FLOAT_EQ(Get(r, "innermost_extent"), L(32));
  EXPECT_FLOAT_EQ(Get(r, "innermost_serial"), 1);
  EXPECT_FLOAT_EQ(Get(r, "innermost_parallel"), 0);
  EXPECT_FLOAT_EQ(Get(r, "stores_in_innermost_body"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "guarded"), 0);
  // Three buffers of equal footprint (512 floats): the stored one first, then the reads in order.
  EXPECT_FLOAT_EQ(Get(r, "buf0.write"), 1);
  EXPECT_FLOAT_EQ(Get(r, "buf0.read"), 0);
  EXPECT_FLOAT_EQ(Get(r, "buf0.stride_innermost"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "buf0.touched_bytes"), L(2048));
  EXPECT_FLOAT_EQ(Get(r, "buf0.reuse"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "buf1.read"), 1);
  EXPECT_FLOAT_EQ(Get(r, "buf1.stride_innermost"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "buf2.read"), 1);
  EXPECT_FLOAT_EQ(Get(r, "buf2.stride_innermost"), L(16));  // B[j * 16 + i]: transposed
  EXPECT_FLOAT_EQ(Get(r, "buf2.stride_varying"), L(16));
  EXPECT_FLOAT_EQ(Get(r, "buf2.accessed_bytes"), L(2048));
  EXPECT_FLOAT_EQ(Get(r, "buf2.buffer_bytes"), L(2048));
  EXPECT_FLOAT_EQ(Get(r, "buf3.read"), 0);  // unused slots are 0
  EXPECT_FLOAT_EQ(Get(r, "buf3.touched_bytes"), 0);
}

TEST(FeatureExtractor, ParallelOuterLoop) {
  const auto r = PerStoreFeatures(TransposedMulAdd(ForKind::kParallel))[0];
  EXPECT_FLOAT_EQ(Get(r, "parallel_extent"), L(16));
  EXPECT_FLOAT_EQ(Get(r, "innermost_serial"), 1);
  const auto s = PerStoreFeatures(TransposedMulAdd(ForKind::kSerial))[0];
  // Only the annotation features differ.
  for (size_t k = 0; k < kPerStoreLength; ++k) {
    if (PerStoreFeatureNames()[k] != "parallel_extent") {
      EXPECT_EQ(r[k], s[k]) << PerStoreFeatureNames()[k];
    }
  }
}

TEST(FeatureExtractor, ReuseOfALoopInvariantLoad) {
  // for i in [0, 8): for j in [0, 64): C[i * 64 + j] = A[i] * 2: A[i] is reused 64 times.
  Buffer a = Buffer::make("A", f32, {make_const(i32, 8)});
  Buffer c = Buffer::make("C", f32, {make_const(i32, 512)});
  Var i("i"), j("j");
  tir::Stmt body = ForNode::make(i, make_const(i32, 0), make_const(i32, 8), ForKind::kSerial,
                                 ForNode::make(j, make_const(i32, 0), make_const(i32, 64), ForKind::kSerial,
                                               BufferStoreNode::make(c, BufferLoadNode::make(a, {i}) * make_const(f32, 2.0),
                                                                     {i * 64 + j})));
  const auto r = PerStoreFeatures(PrimFunc::make("bcast", {a, c}, body))[0];
  // C (2048 bytes touched) first, then A (32 bytes).
  EXPECT_FLOAT_EQ(Get(r, "buf1.read"), 1);
  EXPECT_FLOAT_EQ(Get(r, "buf1.touched_bytes"), L(32));
  EXPECT_FLOAT_EQ(Get(r, "buf1.stride_innermost"), 0);
  EXPECT_FLOAT_EQ(Get(r, "buf1.stride_varying"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "buf1.reuse"), L(64));
}

// C[i, j] = exp(A[i, j]) + B[j, i] through TE.
PrimFunc TeExpAddTransposed(int n) {
  auto A = te::placeholder({n, n}, f32, "A");
  auto B = te::placeholder({n, n}, f32, "B");
  auto C = te::compute({n, n}, [&](const std::vector<Var>& i) {
    return ir::CallNode::make(f32, "exp", {A({i[0], i[1]})}) + B({i[1], i[0]});
  }, "C");
  return te::create_prim_func({A, B, C}, "exp_add");
}

TEST(FeatureExtractor, TeFunctionLoweredToFlat) {
  PrimFunc flat = tir::transform::LowerToFlat(TeExpAddTransposed(64));
  const auto rows = PerStoreFeatures(flat);
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  EXPECT_FLOAT_EQ(Get(r, "trip_count"), L(64 * 64));
  EXPECT_FLOAT_EQ(Get(r, "float_math_call"), L(64 * 64));
  EXPECT_FLOAT_EQ(Get(r, "float_addsub"), L(64 * 64));
  EXPECT_FLOAT_EQ(Get(r, "float_fma"), 0);
  EXPECT_FLOAT_EQ(Get(r, "buf0.write"), 1);
  EXPECT_FLOAT_EQ(Get(r, "buf2.stride_innermost"), L(64));  // B[j, i] flattened: j * 64 + i
}

TEST(FeatureExtractor, VectorizeChangesLanesNotOperationCounts) {
  PrimFunc f = TeExpAddTransposed(64);
  tir::Schedule sch(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  auto j = sch.split(loops[1], {-1, 8});
  sch.vectorize(j[1]);
  const auto vec = PerStoreFeatures(tir::transform::LowerToFlat(sch.func()));
  const auto scalar = PerStoreFeatures(tir::transform::LowerToFlat(f));
  ASSERT_EQ(vec.size(), 1u);
  EXPECT_FLOAT_EQ(Get(vec[0], "vector_lanes"), L(8));
  EXPECT_FLOAT_EQ(Get(scalar[0], "vector_lanes"), L(1));
  EXPECT_FLOAT_EQ(Get(vec[0], "trip_count"), L(64 * 8));  // the lanes are not a loop any more
  // Per-lane counts: the same work either way.
  EXPECT_FLOAT_EQ(Get(vec[0], "float_math_call"), Get(scalar[0], "float_math_call"));
  EXPECT_FLOAT_EQ(Get(vec[0], "float_addsub"), Get(scalar[0], "float_addsub"));
  // The vector store's Ramp is contiguous; the transposed read strides by 64 per lane. The
  // innermost loop left is j_0 (8 columns per step).
  EXPECT_FLOAT_EQ(Get(vec[0], "buf0.stride_lanes"), L(1));
  EXPECT_FLOAT_EQ(Get(vec[0], "buf0.stride_innermost"), L(8));
  EXPECT_FLOAT_EQ(Get(vec[0], "buf2.stride_lanes"), L(64));
  EXPECT_FLOAT_EQ(Get(vec[0], "buf2.stride_innermost"), L(8 * 64));
  EXPECT_FLOAT_EQ(Get(vec[0], "buf2.stride_varying"), L(64));
  EXPECT_FLOAT_EQ(Get(scalar[0], "buf0.stride_lanes"), 0);
  EXPECT_FLOAT_EQ(Get(vec[0], "buf0.touched_bytes"), Get(scalar[0], "buf0.touched_bytes"));
  EXPECT_NE(ExtractFeatures(tir::transform::LowerToFlat(sch.func())), ExtractFeatures(tir::transform::LowerToFlat(f)));
}

TEST(FeatureExtractor, UnrollMultipliesTheStoresOfTheInnermostBody) {
  PrimFunc f = TeExpAddTransposed(16);
  tir::Schedule sch(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  auto j = sch.split(loops[1], {-1, 4});
  sch.unroll(j[1]);
  const auto rows = PerStoreFeatures(tir::transform::LowerToFlat(sch.func()));
  ASSERT_EQ(rows.size(), 4u);  // the body copied 4 times
  for (const auto& r : rows) {
    EXPECT_FLOAT_EQ(Get(r, "stores_in_innermost_body"), L(4));
    EXPECT_FLOAT_EQ(Get(r, "trip_count"), L(16 * 4));
  }
  const auto v = ExtractFeatures(tir::transform::LowerToFlat(sch.func()));
  EXPECT_FLOAT_EQ(GetF(v, "num_stores"), L(4));
  EXPECT_FLOAT_EQ(GetF(v, "sum.trip_count"), L(4 * 16 * 4));  // sums before scaling
  EXPECT_FLOAT_EQ(GetF(v, "max.trip_count"), L(16 * 4));
  // The same work as the unscheduled function.
  EXPECT_FLOAT_EQ(GetF(v, "sum.float_math_call"),
                  GetF(ExtractFeatures(tir::transform::LowerToFlat(f)), "sum.float_math_call"));
}

TEST(FeatureExtractor, ParallelScheduleSurvivesLowering) {
  PrimFunc f = TeExpAddTransposed(32);
  tir::Schedule sch(f);
  sch.parallel(sch.get_loops(sch.get_block("C"))[0]);
  const auto r = PerStoreFeatures(tir::transform::LowerToFlat(sch.func()))[0];
  EXPECT_FLOAT_EQ(Get(r, "parallel_extent"), L(32));
}

TEST(FeatureExtractor, FixedLengthAndFunctionFeatures) {
  PrimFunc flat = TransposedMulAdd(ForKind::kSerial);
  const auto v = ExtractFeatures(flat);
  ASSERT_EQ(v.size(), kFeatureLength);
  EXPECT_FLOAT_EQ(GetF(v, "num_loops"), L(2));
  EXPECT_FLOAT_EQ(GetF(v, "num_stores"), L(1));
  EXPECT_FLOAT_EQ(GetF(v, "max_loop_depth"), L(2));
  EXPECT_FLOAT_EQ(GetF(v, "param_bytes"), L(3 * 2048));
  EXPECT_FLOAT_EQ(GetF(v, "alloc_bytes"), 0);
  for (float x : v) EXPECT_TRUE(std::isfinite(x) && x >= 0);
  // One store: the sum and the max are the row itself.
  const auto row = PerStoreFeatures(flat)[0];
  for (size_t k = 0; k < kPerStoreLength; ++k) {
    EXPECT_FLOAT_EQ(v[k], row[k]);
    EXPECT_FLOAT_EQ(v[kPerStoreLength + k], row[k]);
  }
}

TEST(FeatureExtractor, AllocationsOfAMatmulWithACacheAreCounted) {
  const int M = 16, N = 16, K = 8;
  auto A = te::placeholder({M, K}, f32, "A");
  auto B = te::placeholder({K, N}, f32, "B");
  auto k = te::reduce_axis(ir::Range(0, K), "k");
  auto C = te::compute({M, N}, [&](const std::vector<Var>& i) { return te::sum(A({i[0], k.var}) * B({k.var, i[1]}), {k}); }, "C");
  auto D = te::compute({M, N}, [&](const std::vector<Var>& i) { return C({i[0], i[1]}) + make_const(f32, 1.0); }, "D");
  PrimFunc flat = tir::transform::LowerToFlat(te::create_prim_func({A, B, D}, "mm"));
  const auto v = ExtractFeatures(flat);
  EXPECT_FLOAT_EQ(GetF(v, "alloc_bytes"), L(M * N * 4));  // the intermediate C
  EXPECT_FLOAT_EQ(GetF(v, "num_allocs"), L(1));
  EXPECT_GE(GetF(v, "num_stores"), L(3));  // C's init, C's update, D
  EXPECT_FLOAT_EQ(GetF(v, "max.float_fma"), L(M * N * K));  // C += A * B
}

TEST(FeatureExtractor, TiledMatmulAccumulatorAndOperandStrides) {
  // 64 x 64 x 32 matmul: i split by 4 (unrolled), j by 16 (vectorized), k inside the tiles.
  const int M = 64, N = 64, K = 32;
  auto A = te::placeholder({M, K}, f32, "A");
  auto B = te::placeholder({K, N}, f32, "B");
  auto k = te::reduce_axis(ir::Range(0, K), "k");
  auto C = te::compute({M, N}, [&](const std::vector<Var>& i) { return te::sum(A({i[0], k.var}) * B({k.var, i[1]}), {k}); }, "C");
  tir::Schedule sch(te::create_prim_func({A, B, C}, "mm"));
  auto c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto i = sch.split(l[0], {-1, 4});
  auto j = sch.split(l[1], {-1, 16});
  sch.reorder({i[0], j[0], l[2], i[1], j[1]});
  sch.decompose_reduction(c, l[2]);
  sch.vectorize(j[1]);
  sch.unroll(i[1]);
  sch.parallel(i[0]);
  const auto rows = PerStoreFeatures(tir::transform::LowerToFlat(sch.func()));
  ASSERT_EQ(rows.size(), 5u);  // the init nest, then 4 unrolled vector updates
  const auto& r = rows[1];     // C[ramp] = C[ramp] + broadcast(A[..]) * B[ramp], under k
  EXPECT_FLOAT_EQ(Get(r, "vector_lanes"), L(16));
  EXPECT_FLOAT_EQ(Get(r, "trip_count"), L(16 * 4 * 32));
  EXPECT_FLOAT_EQ(Get(r, "float_fma"), L(16 * 4 * 32 * 16));
  EXPECT_FLOAT_EQ(Get(r, "parallel_extent"), L(16));
  EXPECT_FLOAT_EQ(Get(r, "innermost_extent"), L(32));
  EXPECT_FLOAT_EQ(Get(r, "stores_in_innermost_body"), L(4));
  // By footprint: B (32 x 64 floats), C (a quarter of its rows), A (a quarter of its rows).
  EXPECT_FLOAT_EQ(Get(r, "buf0.touched_bytes"), L(K * N * 4));
  EXPECT_FLOAT_EQ(Get(r, "buf0.stride_innermost"), L(N));  // B[k * 64 + ...]
  EXPECT_FLOAT_EQ(Get(r, "buf0.stride_lanes"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "buf1.read"), 1);                 // C: the accumulator
  EXPECT_FLOAT_EQ(Get(r, "buf1.write"), 1);
  EXPECT_FLOAT_EQ(Get(r, "buf1.stride_innermost"), 0);     // invariant in k
  EXPECT_FLOAT_EQ(Get(r, "buf1.stride_lanes"), L(1));
  EXPECT_FLOAT_EQ(Get(r, "buf1.reuse"), L(2 * K));         // read and written once per k
  EXPECT_FLOAT_EQ(Get(r, "buf2.stride_innermost"), L(1));  // A[i * 32 + k]
  EXPECT_FLOAT_EQ(Get(r, "buf2.stride_lanes"), 0);         // broadcast: a scalar load
}

TEST(FeatureExtractor, UnloweredFunctionIsAnInternalError) {
  EXPECT_THROW(ExtractFeatures(TeExpAddTransposed(8)), InternalError);
}

}  // namespace
}  // namespace tessera::tune
