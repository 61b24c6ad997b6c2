// VectorizeLoop: a For of kind vectorized with constant extent n becomes straight-line
// vector code: the loop var is replaced by ramp(min, 1, n), loop-invariant scalars are
// broadcast, loads / stores with a ramp index load / store n lanes, and the result
// is simplified (ramp(i * 128, 1, 8) rather than broadcast(i * 128, 8) + ramp(0, 1, 8)).
//
// An if whose condition does not depend on the loop var stays a scalar if around the
// vectorized branches. A body that is `if (guard) then` (no else) whose guard depends on the
// loop var only through upper bounds non-decreasing in it (a tail's or an unpadding copy's
// guard, dynamic shapes) is versioned: `if (guard at the last lane) <then vectorized> else
// <the serial loop>`. Falls back to a serial loop when the body cannot be vectorized: an
// inner loop, an if on the loop var, an allocate, a let, a block, a non-constant extent, an index already a vector,
// or a store whose index does not depend on the loop var (a reduction into one
// element). The fallback loop carries the annotation
// "vectorize_fallback" = StringImm(reason), shown by the printer.
#pragma once

#include "tessera/tir/function.h"

namespace tessera::tir::transform {

PrimFunc VectorizeLoop(const PrimFunc& func);

}  // namespace tessera::tir::transform
