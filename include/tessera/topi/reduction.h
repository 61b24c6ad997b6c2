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

}  // namespace tessera::topi
