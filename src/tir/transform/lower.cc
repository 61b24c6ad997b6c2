// LowerToFlat (tir/transform/lower.h): the lowering pipeline, top to bottom.
#include "tessera/tir/transform/lower.h"

#include "tessera/tir/transform/compact_buffer_allocation.h"
#include "tessera/tir/transform/flatten_buffer.h"
#include "tessera/tir/transform/loop_partition.h"
#include "tessera/tir/transform/lower_blocks.h"
#include "tessera/tir/transform/lower_init_block.h"
#include "tessera/tir/transform/lower_storage_type_casts.h"
#include "tessera/tir/transform/remove_no_op.h"
#include "tessera/tir/transform/simplify.h"
#include "tessera/tir/transform/unroll_loop.h"
#include "tessera/tir/transform/vectorize_loop.h"
#include "tessera/tir/transform/verify_flat.h"

namespace tessera::tir::transform {

namespace {

Pass Required(const char* name, const char* summary, PrimFunc (*f)(const PrimFunc&)) {
  return PrimFuncPass({name, summary, 0, true}, f);
}

Pass Optional(const char* name, const char* summary, int opt_level, PrimFunc (*f)(const PrimFunc&)) {
  return PrimFuncPass({name, summary, opt_level, false}, f);
}

PrimFunc SimplifyFunc(const PrimFunc& f) { return Simplify(f); }

PrimFunc Verify(const PrimFunc& f) {
  VerifyFlat(f);
  return f;
}

}  // namespace

Sequential LowerToFlatPasses() {
  const char* kSimplify = "arithmetic simplification; trivial loops and branches removed";
  return Sequential({
      Required("LowerStorageTypeCasts", "casts to / from storage-only types -> integer bit arithmetic",
               LowerStorageTypeCasts),
      Required("CompactBufferAllocation", "intermediate buffers shrink to the region used", CompactBufferAllocation),
      Required("LowerInitBlock", "a reduction's init -> a store guarded by the first iteration", LowerInitBlock),
      Required("LowerBlocks", "blocks -> loops and statements", LowerBlocks),
      Required("FlattenBuffer", "N-D buffer accesses -> 1-D", FlattenBuffer),
      Required("Simplify", kSimplify, SimplifyFunc),
      Optional("LoopPartition", "a loop with a predicate -> a body without it and a tail", 1, LoopPartition),
      Required("Simplify", kSimplify, SimplifyFunc),
      Required("VectorizeLoop", "vectorize loops -> vector expressions (serial when they cannot be)", VectorizeLoop),
      Required("UnrollLoop", "unroll loops -> copies of their body", UnrollLoop),
      Required("Simplify", kSimplify, SimplifyFunc),
      Optional("RemoveNoOp", "empty loops and stores of a value to itself removed", 1, RemoveNoOp),
      Required("VerifyFlat", "checks the flat form codegen consumes", Verify),
  });
}

IRModule LowerToFlat(const IRModule& mod, const PassContext& ctx) { return LowerToFlatPasses()(mod, ctx); }

PrimFunc LowerToFlat(const PrimFunc& func) {
  IRModule mod;
  mod.Add(func);
  return LowerToFlat(mod, PassContext{}).functions().front();
}

}  // namespace tessera::tir::transform
