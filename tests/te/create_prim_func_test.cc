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

// An extern stage (te::extern_op): one block without iter vars around its statements, reading its
// input whole and writing its output whole, its scratch allocated by the block; a scan's block has an
// ordered iter var that reads its own output.
TEST(CreatePrimFunc, ExternStageAndScan) {
  auto A = placeholder({4}, DataType::Float(32), "A");
  const tir::Buffer acc = tir::Buffer::make("acc", DataType::Float(32), {1});
  auto B = extern_op(
      {4}, DataType::Float(32), {A},
      [&](const std::vector<tir::Buffer>& in, const tir::Buffer& out) {
        Var i("i", DataType::Int(32));
        using tir::BufferLoadNode, tir::BufferStoreNode;
        return tir::SeqStmtNode::make(
            {BufferStoreNode::make(acc, make_const(DataType::Float(32), 0.0), {0}),
             tir::ForNode::make(i, 0, 4, tir::ForKind::kSerial,
                                tir::SeqStmtNode::make({BufferStoreNode::make(acc, BufferLoadNode::make(acc, {0}) +
                                                                                        BufferLoadNode::make(in[0], {i}),
                                                                              {0}),
                                                        BufferStoreNode::make(out, BufferLoadNode::make(acc, {0}), {i})}))});
      },
      "B", "extern", {acc});
  auto C = scan({4}, DataType::Float(32), 0,
                [&](const std::vector<Var>& i, const Tensor& self) {
                  return B({i[0]}) + select(i[0] > 0, self({max(i[0] - 1, 0)}), make_const(DataType::Float(32), 0.0));
                },
                "C");
  EXPECT_EQ(AsText(create_prim_func({A, C}, "running")),
            "@prim_func\n"
            "def running(A: Buffer((4,), \"float32\"), C: Buffer((4,), \"float32\")):\n"
            "  # attr global_symbol = \"running\"\n"
            "  with block(\"root\"):\n"
            "    B = alloc_buffer((4,), \"float32\")\n"
            "    with block(\"B\"):\n"
            "      reads(A[0:4])\n"
            "      writes(B[0:4])\n"
            "      acc = alloc_buffer((1,), \"float32\")\n"
            "      acc[0] = 0.0f\n"
            "      for i in range(0, 4):\n"
            "        acc[0] = acc[0] + A[i]\n"
            "        B[i] = acc[0]\n"
            "    for i_1 in range(0, 4):\n"
            "      with block(\"C\"):\n"
            "        vi = scan(0, 4, i_1)\n"
            "        reads(B[vi], C[max(vi - 1, 0)])\n"
            "        writes(C[vi])\n"
            "        C[vi] = B[vi] + select(vi > 0, C[max(vi - 1, 0)], 0.0f)\n");
  // A body that touches a buffer it was not given is refused, naming it.
  const tir::Buffer stray = tir::Buffer::make("stray", DataType::Float(32), {4});
  try {
    extern_op({4}, DataType::Float(32), {A},
              [&](const std::vector<tir::Buffer>&, const tir::Buffer& out) {
                return tir::BufferStoreNode::make(out, tir::BufferLoadNode::make(stray, {0}), {0});
              },
              "bad");
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'stray'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::te
