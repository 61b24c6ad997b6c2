// Comparisons, logic, select and modulo with numpy broadcasting (tag "broadcast", or
// "elemwise" for equal shapes). Comparisons take two tensors of one dtype and give bool;
// the logical ops take and give bool.
#pragma once

#include "tessera/topi/broadcast.h"

namespace tessera::topi {

Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);

Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);

/// Bitwise and / or / xor / not of integer tensors (one dtype; ONNX BitwiseAnd ... BitwiseNot)
/// and ONNX BitShift (shift_left / shift_right by the second operand; an amount >= the bit
/// width gives 0).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& x);
Tensor shift_left(const Tensor& a, const Tensor& b);
Tensor shift_right(const Tensor& a, const Tensor& b);

/// out = cond ? x : y, all three broadcast together (ONNX Where); cond is bool, x and y share
/// a dtype.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);

/// ONNX Mod. fmod = false: the remainder takes the divisor's sign (integers only, floor
/// modulo); fmod = true: C fmod / truncated modulo, the dividend's sign (ints and floats).
Tensor mod(const Tensor& a, const Tensor& b, bool fmod);

}  // namespace tessera::topi
