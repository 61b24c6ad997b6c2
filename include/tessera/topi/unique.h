// ONNX Unique (opset 11; https://onnx.ai/onnx/operators/onnx__Unique.html, numpy.unique's
// semantics): the distinct elements (or, with an axis, the distinct slices along it) of x, sorted
// ascending (slices lexicographically in row-major order) or in order of first occurrence. The
// importer (frontend/onnx/ops_data_dependent.cc) joins two computes:
//   inverse = unique_inverse(x): for each element / slice, the position of its value among the
//     distinct ones (ONNX's inverse_indices; static shape). The count of distinct values is
//     max(inverse) + 1, which the VM binds to the outputs' symbolic extent;
//   unique_select(inverse, count, kind): per distinct value, its first occurrence (ONNX's indices;
//     the values Y are x taken there) or its number of occurrences (counts).
// Work: the flattened elements are merge-sorted (an extern stage, O(n log n)); slices along an axis
// are compared pairwise (O(n^2 m) for n slices of m elements, a first-difference table); the
// select steps are one pass over the inverse (O(n + count)).
#pragma once

#include <optional>
#include <string>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// int64 [n]: the position of each element of x (axis absent: n = x's element count, row-major)
/// or of each slice along `axis` (n = x.shape[axis]) among x's distinct values, sorted ascending
/// when `sorted`, else in order of first occurrence. NaNs are equal to each other and sort after
/// every number (numpy.unique's equal_nan default). Static shapes; UserError on an axis out of
/// range.
Tensor unique_inverse(const Tensor& x, std::optional<int64_t> axis, bool sorted);

/// int64 [count]: for each distinct position j < count of `inverse` (int64 [n], unique_inverse's
/// output; count its maximum + 1), kind "first" the smallest k with inverse[k] == j (ONNX's
/// indices), kind "counts" the number of such k. count may be a symbolic extent. UserError on
/// another kind.
Tensor unique_select(const Tensor& inverse, const PrimExpr& count, const std::string& kind);

}  // namespace tessera::topi
