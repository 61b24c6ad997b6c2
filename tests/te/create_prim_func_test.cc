#include <gtest/gtest.h>

#include "tessera/te/tensor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/structural_equal.h"

namespace tessera::te {
namespace {

using namespace tessera::ir;
using tir::AsText;

TEST(CreatePrimFunc, Matmul) {
  auto A = placeholder({128, 64}, DataType::Float(32), "A");
  auto B = placeholder({64, 32}, DataType::Float(32), "B");
  auto k = reduce_axis(Range(0, 64), "k");
  auto C = compute({128, 32}, [&](const std::vector<Var>& i) { return sum(A({i[0], k.var}) * B({k.var, i[1]}), {k}); },
                   "C");
  tir::PrimFunc f = create_prim_func({A, B, C}, "matmul");
  EXPECT_EQ(AsText(f),
            "@prim_func\n"
            "def matmul(A: Buffer((128, 64), \"float32\"), B: Buffer((64, 32), \"float32\"), C: Buffer((128, 32), "
            "\"float32\")):\n"
            "  # attr global_symbol = \"matmul\"\n"
            "  with block(\"root\"):\n"
            "    for i in range(0, 128):\n"
            "      for j in range(0, 32):\n"
            "        for k in range(0, 64):\n"
            "          with block(\"C\"):\n"
            "            vi = spatial(0, 128, i)\n"
            "            vj = spatial(0, 32, j)\n"
            "            vk = reduce(0, 64, k)\n"
            "            reads(C[vi, vj], A[vi, vk], B[vk, vj])\n"
            "            writes(C[vi, vj])\n"
            "            with init():\n"
            "              C[vi, vj] = 0.0f\n"
            "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");

  // The same structure built by hand compares equal.
  using namespace tessera::tir;
  Buffer a = Buffer::make("A", DataType::Float(32), {PrimExpr(128), PrimExpr(64)});
  Buffer b = Buffer::make("B", DataType::Float(32), {PrimExpr(64), PrimExpr(32)});
  Buffer c = Buffer::make("C", DataType::Float(32), {PrimExpr(128), PrimExpr(32)});
  Var i("i"), j("j"), kk("k"), vi("vi"), vj("vj"), vk("vk");
  auto ld = [](Buffer buf, PrimExpr x, PrimExpr y) { return BufferLoadNode::make(buf, {x, y}); };
  auto pt = [](Buffer buf, PrimExpr x, PrimExpr y) { return BufferRegion{buf, {Range(x, 1), Range(y, 1)}}; };
  Stmt block = BlockNode::make(
      "C",
      {IterVar{vi, Range(0, 128), IterVarType::kDataPar}, IterVar{vj, Range(0, 32), IterVarType::kDataPar},
       IterVar{vk, Range(0, 64), IterVarType::kCommReduce}},
      {pt(c, vi, vj), pt(a, vi, vk), pt(b, vk, vj)}, {pt(c, vi, vj)},
      BufferStoreNode::make(c, ld(c, vi, vj) + ld(a, vi, vk) * ld(b, vk, vj), {vi, vj}),
      BufferStoreNode::make(c, PrimExpr(0.0f), {vi, vj}));
  Stmt loops = ForNode::make(
      i, 0, 128, ForKind::kSerial,
      ForNode::make(j, 0, 32, ForKind::kSerial,
                    ForNode::make(kk, 0, 64, ForKind::kSerial, BlockRealizeNode::make({i, j, kk}, PrimExpr(), block))));
  Stmt root = BlockRealizeNode::make({}, PrimExpr(), BlockNode::make("root", {}, {}, {}, loops));
  PrimFunc expected = PrimFunc::make("matmul", {a, b, c}, root, {{"global_symbol", "matmul"}});
  EXPECT_TRUE(StructuralEqual(f, expected)) << AsText(f) << "\nvs\n" << AsText(expected);
  EXPECT_EQ(StructuralHash(f), StructuralHash(expected));
  // A different reduction extent is not equal.
  PrimFunc other = create_prim_func({A, B, C}, "matmul");
  EXPECT_TRUE(StructuralEqual(f, other));
}

TEST(CreatePrimFunc, TwoStagePipelineAllocatesIntermediate) {
  auto A = placeholder({16}, DataType::Float(32), "A");
  auto B = compute({16}, [&](const std::vector<Var>& i) { return A({i[0]}) * 2.0f; }, "B", "elemwise");
  auto C = compute({16}, [&](const std::vector<Var>& i) { return B({i[0]}) + 1.0f; }, "C", "elemwise");
  auto order = PostOrder({C});
  ASSERT_EQ(order.size(), 3u);
  EXPECT_TRUE(order[0].same_as(A));
  EXPECT_TRUE(order[1].same_as(B));
  tir::PrimFunc f = create_prim_func({A, C}, "pipeline");
  EXPECT_EQ(AsText(f),
            "@prim_func\n"
            "def pipeline(A: Buffer((16,), \"float32\"), C: Buffer((16,), \"float32\")):\n"
            "  # attr global_symbol = \"pipeline\"\n"
            "  with block(\"root\"):\n"
            "    B = alloc_buffer((16,), \"float32\")\n"
            "    for i in range(0, 16):\n"
            "      with block(\"B\"):\n"
            "        vi = spatial(0, 16, i)\n"
            "        reads(A[vi])\n"
            "        writes(B[vi])\n"
            "        B[vi] = A[vi] * 2.0f\n"
            "    for i_1 in range(0, 16):\n"
            "      with block(\"C\"):\n"
            "        vi_1 = spatial(0, 16, i_1)\n"
            "        reads(B[vi_1])\n"
            "        writes(C[vi_1])\n"
            "        C[vi_1] = B[vi_1] + 1.0f\n");
}

TEST(CreatePrimFunc, ElementwiseMaxAndErrors) {
  auto A = placeholder({4, 8}, DataType::Float(32), "A");
  auto r = reduce_axis(Range(0, 8), "r");
  auto M = compute({4}, [&](const std::vector<Var>& i) { return max(A({i[0], r.var}), {r}); }, "M");
  tir::PrimFunc f = create_prim_func({A, M}, "rowmax");
  std::string text = AsText(f);
  EXPECT_NE(text.find("M[vi] = float32(-inf)"), std::string::npos) << text;
  EXPECT_NE(text.find("M[vi] = max(M[vi], A[vi, vr])"), std::string::npos) << text;
  EXPECT_THROW(create_prim_func({M}, "missing_input"), InternalError);
  EXPECT_THROW(compute({4}, [&](const std::vector<Var>& i) { return sum(A({i[0], r.var}), {r}) + 1.0f; }, "bad"),
               UserError);
  EXPECT_THROW(A({PrimExpr(0)}), UserError);
}

}  // namespace
}  // namespace tessera::te
