// data + bias along one axis (Relay nn.bias_add). Tag "broadcast".
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// data [..., C at axis, ...], bias [C] -> data's shape. Negative axis counts from the end.
Tensor bias_add(const Tensor& data, const Tensor& bias, int64_t axis = 1);

}  // namespace tessera::topi
