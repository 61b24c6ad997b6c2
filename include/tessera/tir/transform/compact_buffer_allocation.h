// CompactBufferAllocation: shrink each intermediate buffer to the region one iteration of
// its innermost enclosing loop touches, and allocate it there (TVM's
// tir.transform.CompactBufferAllocation; TensorIR, arXiv 2207.04296, §4.1).
//
// After compute_at / reverse_compute_at, a producer and its consumer share a loop: a conv's
// output tile is written and read by the fused epilogue inside one iteration of the tile
// loop, yet the buffer the root block allocates still spans the whole tensor (a 4.8 MB heap
// allocation for a 112x112x96 conv, written out of cache and read back). This pass gives
// such a buffer the shape of the per-iteration region (e.g. [1, 1, 1, 4, 16]) and allocates
// it in the body of that loop (a stack slot; inside a parallel loop, one per task).
//
// For each buffer of the root block's alloc_buffers (a symbolic dimension, dynamic shapes,
// must compact to a constant extent, else the buffer is left as it is):
//  * the accesses are the read / write regions of the blocks that touch it, mapped to loop
//    variables through the blocks' bindings;
//  * L = the innermost loop enclosing every access (their loop paths' common prefix);
//  * legality: no loop from the root down to L is bound to a reduction iter var of a block
//    that touches the buffer (a reduction carried across iterations of L would need the
//    buffer to outlive one iteration); the accesses must be directly under the root block;
//  * per dimension, the union over accesses of [min, min + extent) with the loops inside L
//    relaxed over their ranges; when every access's bounds differ from the first's by
//    constants the dimension becomes that constant extent at a symbolic offset (in L's and
//    outer loop vars), otherwise it keeps its full extent at offset 0.
// When the compacted size is smaller, every access index i becomes i - offset, the region
// mins likewise, and the buffer (scope "local") moves to an opaque block (no iter vars)
// around L's body; the root block no longer allocates it.
//
// Input: a scheduled PrimFunc with blocks (before LowerBlocks; after LowerInitBlock).
// Index expressions inside blocks may refer to loop variables afterwards (the offsets), which
// LowerBlocks accepts. Never throws on well-formed input: a buffer it cannot prove compactable
// is left as it was.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc CompactBufferAllocation(const PrimFunc& func);

}  // namespace tessera::tir::transform
