// UnflattenReductions: a per-sample statistic computed over a flattened view of a tensor is
// computed over the tensor's own axes, so the view's reshapes disappear.
//
// PyTorch exports GroupNorm(1, C) (PoolFormer, and every GroupNorm before ONNX opset 18) as
//   r = Reshape(x [N, C, H, W] -> [N, 1, C*H*W]); InstanceNormalization(r); Reshape(-> [N, C, H, W])
// whose statistics are means over axis 2 of r. The reshapes pin x to NCHW between two NCHWc
// convolutions (AlterOpLayout transforms the layout back and forth around them, and the
// reduction reads x through that transform). Since a reduction over every non-batch element
// does not depend on how those elements are ordered, the region between the reshapes is
// rewritten over x itself:
//
//   r = reshape(x, [N, 1, M])          (x static, rank >= 3, M = the product of x's dims 1..)
//     -> x
//   reduce(v, axis=[2] or [-1], keepdims=1)    (sum / mean / max / min / prod of a region value)
//     -> reduce(v', axis=[1, ..., rank-1], keepdims=1)      [N, 1, 1] -> [N, 1, ..., 1]
//   an elementwise / broadcast op of region values and operands from outside whose dims are
//   all 1 ([1, 1], a scalar) or [N, 1, 1]
//     -> the same op of the rewritten values; an outside [N, 1, 1] (N > 1) is reshaped to
//        [N, 1, ..., 1]
//   reshape(v, x's shape)  (an exit of the region)
//     -> v'
//
// The region is every node reachable from r through such ops; the rewrite happens only when
// each of its nodes is used only inside the region or by an exit (no flattened value escapes),
// when it is not the function's result, and when no node belongs to two regions. Anything else
// leaves the graph as it is. GroupNorm with more than one group (a reshape to [N, G, M / G]) is
// not rewritten. Same values: the reductions see the same elements.
//
// Runs InferType first and returns a typed module.
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule UnflattenReductions(const IRModule& mod);

}  // namespace tessera::graph::transform
