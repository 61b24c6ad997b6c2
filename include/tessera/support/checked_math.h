// Overflow-checked int64 arithmetic for shapes, strides, windows and element counts (issue 15):
// a model whose attributes or shapes overflow int64 (a dilation of 2^62, a [2^40, 2^40] tensor)
// gets a UserError naming the quantity, never a wrapped value that indexes out of bounds.
#pragma once

#include <cstdint>
#include <string_view>

#include "tessera/support/error.h"

namespace tessera {

/// a * b; UserError "<what> overflows int64 (<a> * <b>)" when it does not fit.
inline int64_t CheckedMul(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    TESSERA_THROW(UserError, what, " overflows int64 (", a, " * ", b, "); check the model's shapes and attributes");
  return r;
}

/// a + b; UserError "<what> overflows int64 (<a> + <b>)" when it does not fit.
inline int64_t CheckedAdd(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    TESSERA_THROW(UserError, what, " overflows int64 (", a, " + ", b, "); check the model's shapes and attributes");
  return r;
}

}  // namespace tessera
