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

PrimFunc LowerToFlat(const PrimFunc& func) {
  PrimFunc f = func;
  f = LowerStorageTypeCasts(f);
  f = CompactBufferAllocation(f);
  f = LowerInitBlock(f);
  f = LowerBlocks(f);
  f = FlattenBuffer(f);
  f = Simplify(f);
  f = LoopPartition(f);
  f = Simplify(f);
  f = VectorizeLoop(f);
  f = UnrollLoop(f);
  f = Simplify(f);
  f = RemoveNoOp(f);
  VerifyFlat(f);
  return f;
}

}  // namespace tessera::tir::transform
