// The ONNX gather / scatter family beyond Gather and GatherElements: GatherND, ScatterElements
// and ScatterND (onnx/docs/Operators.md). Static shapes; indices int32 or int64, negative
// values count from the end of their axis. An index outside [-n, n) makes the kernel return
// runtime::kKernelIndexOutOfRange (ir::checked_index), which the graph executor reports as an
// error naming the node: the spec leaves such an index undefined, ONNX Runtime refuses it.
//
// The scatters are written as gathers over the updates (TE has no in-place stores): each
// output element searches the updates aimed at it, so the work is |output| x |updates along
// the searched axes|: ScatterElements searches indices' extent along `axis`, ScatterND every
// update row. reduction "none" takes the last update aimed at an element (the spec leaves
// duplicates undefined; this is the reference's sequential order), "add" / "mul" / "max" /
// "min" combine every update with the data element.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// ONNX GatherND: data [r], indices [q] (last dim k <= r - batch_dims). out shape:
/// indices.shape[:-1] + data.shape[batch_dims + k:]; the first batch_dims dims of data and
/// indices are shared. UserError when the shapes disagree.
Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t batch_dims);

/// ONNX ScatterElements: out = data with out[p with p[axis] = indices[p]] = updates[p] for every
/// p in indices' shape (updates has indices' shape, rank of data). reduction: "none", "add",
/// "mul", "max", "min".
Tensor scatter_elements(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis,
                        const std::string& reduction);

/// ONNX ScatterND: indices [.., k], updates indices.shape[:-1] + data.shape[k:];
/// out[indices[u], ...] = updates[u, ...]. reduction as scatter_elements.
Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates, const std::string& reduction);

}  // namespace tessera::topi
