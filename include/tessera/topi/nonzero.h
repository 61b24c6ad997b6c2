// Outputs whose size the data decides: ONNX NonZero, and the stream compaction that Compress and
// NonMaxSuppression build on. The VM runs them in two kernels (graph/op/vm.cc vm.nonzero_count /
// vm.nonzero; Relay VM's shape functions, arXiv 2006.03031 §3): the first counts, the VM binds the
// count to the output's symbolic extent, the second writes the values for that extent.
//
// Compaction without a scatter (te computes are gathers): a prefix count c over the flattened
// input (te::scan, O(n)), then output j is the position p with mask[p] and c[p] = j + 1, which a
// binary search over the non-decreasing c finds in at most 31 steps (n < 2^31, the VM's extent
// limit): O(n + K log n) for K selected elements.
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// The number of non-zero elements of x (any dtype; a NaN is non-zero): int64 [1]. x's extents may
/// be symbolic.
Tensor nonzero_count(const Tensor& x);

/// ONNX NonZero (opset 9/13): int64 [max(rank, 1), count], column j the coordinates of x's j-th
/// non-zero element in row-major order (a scalar x is read as a 1-element vector, as numpy's
/// nonzero of a 0-d array). `count` is nonzero_count(x)'s value, usually the kernel's symbolic
/// extent; a count above the true one reads the last position. x's extents may be symbolic.
Tensor nonzero(const Tensor& x, const PrimExpr& count);

/// The row-major positions of x's non-zero elements, int32 [count] (nonzero before unravelling).
Tensor nonzero_positions(const Tensor& x, const PrimExpr& count);

}  // namespace tessera::topi
