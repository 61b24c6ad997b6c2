// Outputs whose size the data decides: ONNX NonZero, and the stream compaction that Compress and
// NonMaxSuppression build on. The VM runs them in two kernels (graph/op/vm.cc vm.nonzero_count /
// vm.nonzero; Relay VM's shape functions, arXiv 2006.03031 §3): the first counts, the VM binds the
// count to the output's symbolic extent, the second writes the values for that extent.
//
// The values are a stream compaction: an extern stage (te::extern_op) counts the non-zero elements of
// 64 chunks of the flattened input in parallel, takes the chunks' first output columns as a prefix
// sum, and each chunk writes its elements' coordinates from there (in parallel): O(n).
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// The number of non-zero elements of x (any dtype; a NaN is non-zero): int64 [1]. x's extents may
/// be symbolic.
Tensor nonzero_count(const Tensor& x);

/// ONNX NonZero (opset 9/13): int64 [max(rank, 1), count], column j the coordinates of x's j-th
/// non-zero element in row-major order (a scalar x is read as a 1-element vector, as numpy's
/// nonzero of a 0-d array). `count` is nonzero_count(x)'s value, usually the kernel's symbolic
/// extent: columns past the true count are left unwritten, elements past `count` are dropped. x's
/// extents may be symbolic.
Tensor nonzero(const Tensor& x, const PrimExpr& count);

}  // namespace tessera::topi
