// CompactBufferAllocation: the intermediate of a fused producer / consumer shrinks to the
// tile one iteration of their common loop touches, allocated inside that loop; numerics
// unchanged; buffers it cannot compact (reduction carried across the loop, no common loop)
// are left alone.
#include <gtest/gtest.h>


#include "tir_interp.h"
#include "schedule/funcs.h"
#include "schedule/schedule_test_util.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/transform/compact_buffer_allocation.h"
#include "tessera/tir/transform/flatten_buffer.h"
#include "tessera/tir/transform/lower_blocks.h"
#include "tessera/tir/transform/lower_init_block.h"

namespace tessera::tir {
namespace {

using namespace testing;  // NOLINT
namespace T = tessera::tir::transform;

/// The root block's allocations and every opaque block's (name -> shape), by walking the body.
struct Allocs : StmtExprVisitor {
  std::map<std::string, std::pair<std::string, std::vector<int64_t>>> found;  // buffer -> (block, shape)
  void VisitStmt_(const BlockNode* op) override {
    for (const Buffer& b : op->alloc_buffers) {
      std::vector<int64_t> shape;
      for (const PrimExpr& d : b->shape) shape.push_back(ir::get_const_int(d));
      found[b->name] = {op->name_hint, shape};
    }
    StmtExprVisitor::VisitStmt_(op);
  }
};

Allocs AllocsOf(const PrimFunc& f) {
  Allocs a;
  a.VisitStmt(f->body);
  return a;
}

/// Lowers without compaction (LowerInitBlock, LowerBlocks, FlattenBuffer) and runs the
/// reference interpreter on seeded random inputs; returns every parameter's final contents.
std::vector<std::vector<float>> RunLowered(const PrimFunc& f) {
  return RunFlatOnRandomInputs(T::FlattenBuffer(T::LowerBlocks(T::LowerInitBlock(f))), f, 3);
}

TEST(CompactBufferAllocation, EpilogueTileUnderReverseComputeAt) {
  Schedule sch(MatmulRelu(8, 12, 5));
  auto l = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(l[0], {-1, 4});
  sch.reverse_compute_at(sch.get_block("D"), i[0]);
  PrimFunc before = sch.func();
  ASSERT_EQ(AllocsOf(before).found.at("C").second, (std::vector<int64_t>{8, 12}));

  PrimFunc after = T::CompactBufferAllocation(before);
  auto allocs = AllocsOf(after).found;
  // C: the 4 rows x 12 columns one iteration of i_0 writes (block C) and reads (block D).
  ASSERT_EQ(allocs.count("C"), 1u) << AsText(after);
  EXPECT_EQ(allocs.at("C").first, "compact_C");
  EXPECT_EQ(allocs.at("C").second, (std::vector<int64_t>{4, 12}));
  const std::string text = AsText(after);
  EXPECT_NE(text.find("C[vi - i_0 * 4, vj]"), std::string::npos) << text;
  EXPECT_EQ(RunLowered(before), RunLowered(after));
}

TEST(CompactBufferAllocation, PaddingWindowUnderComputeAt) {
  // P (the padded input) computed per 4-element tile of C: the 4 + 2 elements it needs.
  PrimFunc before = PadConvTiledComputeAt(16).func();
  PrimFunc after = T::CompactBufferAllocation(before);
  EXPECT_EQ(AllocsOf(after).found.at("P").second, (std::vector<int64_t>{6})) << AsText(after);
  EXPECT_EQ(RunLowered(before), RunLowered(after));
}

TEST(CompactBufferAllocation, LeavesBuffersItCannotShrink) {
  // No loop shared by producer and consumer: C keeps its shape at the root.
  PrimFunc f = MatmulRelu(8, 12, 5);
  EXPECT_EQ(T::CompactBufferAllocation(f)->body.get(), f->body.get());

  // Only the reduction block C touches X: the innermost common loop is k, which carries
  // C's accumulation across its iterations, so X must not be allocated inside it.
  Buffer A = F32("A", {4, 4}), B = F32("B", {4, 4}), X = F32("X", {4, 4}), D = F32("D", {4, 4});
  Stmt c = MakeCompute("C", X, {{"i", 4}, {"j", 4}}, {{"k", 4}},
                       [&](auto& s, auto& r) { return BufferLoadNode::make(A, {s[0], r[0]}) * BufferLoadNode::make(B, {r[0], s[1]}); },
                       ir::make_const(DataType::Float(32), 0.0));
  Stmt d = MakeCompute("D", D, {{"i", 4}, {"j", 4}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(A, {s[0], s[1]}); });
  PrimFunc g = MakeFunc("acc_only", {A, B, D}, {c, d}, {X});
  EXPECT_EQ(T::CompactBufferAllocation(g)->body.get(), g->body.get());
}

}  // namespace
}  // namespace tessera::tir
