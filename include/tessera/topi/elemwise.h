// Generic elementwise computes: out has x's shape and out[i] = f(x[i]). Tag "elemwise".
#pragma once

#include <functional>
#include <string>

#include "tessera/topi/util.h"

namespace tessera::topi {

using UnaryFn = std::function<PrimExpr(PrimExpr)>;

/// out[i] = f(x[i]); out's dtype is f's result dtype.
Tensor Unary(const Tensor& x, const UnaryFn& f, const std::string& name);

/// out[i] = x[i]: a kernel whose output is one of its inputs still writes its own buffer.
Tensor copy(const Tensor& x, const std::string& name = "T_copy");

}  // namespace tessera::topi
