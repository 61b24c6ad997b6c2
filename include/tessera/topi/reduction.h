// Reductions over a set of axes (tag "comm_reduce"). `axes` empty reduces every axis;
// negative axes count from the end. keepdims keeps reduced dims with extent 1.
#pragma once

#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
/// sum / (number of reduced elements): a comm_reduce sum followed by an elemwise divide.
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor max(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor min(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor prod(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);

/// ONNX CumSum / CumProd along `axis` (shape and dtype of x): out[.., i, ..] is the sum (product)
/// of x[.., k, ..] over k <= i; exclusive: k < i (the first element is 0 / 1); reverse: k >= i
/// (k > i). A te::scan along the axis (tag "scan"; O(n) in the axis extent n: out[i] = out[i - 1]
/// + x[i], accumulated in x's dtype in order, as ONNX Runtime); reverse scans x read backwards and
/// an injective compute flips the result back.
Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse);
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse);

}  // namespace tessera::topi
