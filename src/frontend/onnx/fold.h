// Import-time folding of elementwise ops over known values (comparisons, Where, Not, ... in
// shape subgraphs such as torch's Expand(x, Where(Equal(shape, -1), 1, shape))). Values are
// carried as long double, which holds every int64 exactly.
#pragma once

#include <functional>
#include <vector>

#include "context.h"

namespace tessera::frontend::onnx_import {

/// Elements per folded result above which converters emit graph ops instead.
inline constexpr int64_t kMaxFoldElements = 1 << 16;

/// out[i] = f(ins[0][b0(i)], ins[1][b1(i)], ...) with numpy broadcasting of the inputs;
/// the result has dtype out_dtype (ints are truncated toward zero).
runtime::NDArray FoldBroadcast(const std::vector<runtime::NDArray>& ins, DataType out_dtype,
                               const std::function<long double(const std::vector<long double>&)>& f);

/// True when every present input of the node is known and the broadcast result is small.
/// Inputs 0..required-1 must be present (UserError naming the absent one).
bool CanFold(NodeContext& ctx, int required);

}  // namespace tessera::frontend::onnx_import
