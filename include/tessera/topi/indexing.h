// Index-mapping computes of the ONNX spec: broadcast_to (Expand), tile, pad with a mode,
// gather_elements, trilu (tag "injective"), arg reductions (tag "comm_reduce") and TopK's sort
// (an extern stage).
// Static shapes only.
#pragma once

#include <string>
#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// numpy broadcast of x against `shape` (ONNX Expand: the output shape is the broadcast of
/// both, so `shape` may have 1s where x is larger).
Tensor broadcast_to(const Tensor& x, const std::vector<int64_t>& shape);

/// out.shape[d] = x.shape[d] * reps[d]; out[i] = x[i mod x.shape] (ONNX Tile).
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);

/// ONNX Pad: out.shape[d] = before[d] + x.shape[d] + after[d] (negative amounts crop).
/// mode "constant" (points outside x take pad_value), "reflect" (mirror without repeating the
/// edge; the padding must be smaller than the extent), "edge" (repeat the edge), "wrap"
/// (cyclic).
Tensor pad_mode(const Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                const std::string& mode, double pad_value);

/// pad_mode with amounts known only at run time (the VM's vm.pad, graph/op/vm.cc): `before` per dim
/// (an index expression; negative crops), `out_extents` the output's dims (x's extent + before +
/// after, which the caller's shape function computed and checked: reflect amounts below the
/// extent, no edge / wrap padding of an empty axis), `pad_value` an expression cast to x's dtype.
/// x's extents may be symbolic. UserError on an unknown mode or amounts of the wrong count.
Tensor pad_mode_run_time(const Tensor& x, const std::vector<PrimExpr>& before, const std::vector<PrimExpr>& out_extents,
                         const std::string& mode, const PrimExpr& pad_value);

/// ONNX GatherElements: out.shape = indices.shape; out[i] = data[i with i[axis] replaced by
/// indices[i]] (negative indices count from the end; one outside [-n, n) fails the kernel with
/// runtime::kKernelIndexOutOfRange, ir::checked_index).
Tensor gather_elements(const Tensor& data, const Tensor& indices, int64_t axis);

/// ONNX Trilu over the last two dims: upper keeps j - i >= k, lower keeps j - i <= k, the rest
/// is 0. k is an int64 tensor with one element (read at run time).
Tensor trilu(const Tensor& x, const Tensor& k, bool upper);

/// ONNX ArgMax / ArgMin along axis (int64 output): the first index of the extreme value, or
/// the last when select_last_index.
Tensor argmax(const Tensor& x, int64_t axis, bool keepdims, bool select_last_index);
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims, bool select_last_index);

/// The indices (int64) of ONNX TopK along axis: x's shape with k on the axis, the k largest
/// (smallest) elements in descending (ascending) order, equal elements by ascending index (the
/// spec's tie rule). Values are gather_elements(x, indices, axis). An extern stage (src/topi/sort.cc)
/// over the rows in parallel: for k * 8 <= n a sorted selection list of k positions (a position
/// better than the list's last is inserted: O(n + insertions * k), as ONNX Runtime's heap), else a
/// bottom-up merge sort of the positions (O(n log n)).
Tensor topk_indices(const Tensor& x, int64_t k, int64_t axis, bool largest);

}  // namespace tessera::topi
