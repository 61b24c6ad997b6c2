// FlattenBuffer: N-d buffer accesses -> 1-d row-major accesses.
//
// Every BufferLoad / BufferStore / Allocate of a buffer with ndim != 1 is rewritten to
// a 1-d view of the same memory: a Buffer with the same name, dtype, scope and data
// variable and shape {product of the shape}; the index is Buffer::OffsetOf(indices)
// (honours strides), simplified. PrimFunc params keep their N-d buffers (the calling
// convention's shapes); the body only uses the views. Run after LowerBlocks (blocks
// left in place keep their N-d regions; VerifyFlat rejects them anyway).
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc FlattenBuffer(const PrimFunc& func);

}  // namespace tessera::tir::transform
