// Binary ops with numpy broadcasting (static shapes; right-aligned, a dim of 1 stretches).
// Tag "broadcast" ("elemwise" when both shapes are equal). Both inputs must share a dtype.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

using BinaryFn = std::function<PrimExpr(PrimExpr, PrimExpr)>;

/// numpy broadcast of two static shapes; UserError naming both when incompatible.
std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// The read of t at the point `out_index` of an output whose rank is >= t's rank
/// (right-aligned; extent-1 dims of t read index 0).
PrimExpr BroadcastRead(const Tensor& t, const std::vector<Var>& out_index);

/// out[i] = f(a[bcast(i)], b[bcast(i)]).
Tensor BroadcastBinary(const Tensor& a, const Tensor& b, const BinaryFn& f, const std::string& name);

Tensor add(const Tensor& a, const Tensor& b);
Tensor subtract(const Tensor& a, const Tensor& b);
Tensor multiply(const Tensor& a, const Tensor& b);
/// Float: true division; int: truncated (C) division.
Tensor divide(const Tensor& a, const Tensor& b);
/// Float only: a ** b.
Tensor power(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

}  // namespace tessera::topi
