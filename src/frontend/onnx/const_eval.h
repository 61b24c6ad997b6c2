// Import-time evaluation of the small ops that compute shapes (and of data movement over
// initializers), so that values such as Reshape's shape input are known when converting.
// Row-major NDArrays; data-movement ops work on bytes and so on every dtype.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/shape_util.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::frontend::onnx_import {

/// A new int64 array; shape defaults to [values.size()].
runtime::NDArray MakeInts(const std::vector<int64_t>& values, std::vector<int64_t> shape = {-1});
/// Elements converted to int64 / double (any int, uint, bool or float dtype).
std::vector<int64_t> ToInts(const runtime::NDArray& a);
std::vector<double> ToDoubles(const runtime::NDArray& a);
/// A new array of `dtype` holding `values` (converted).
runtime::NDArray FromDoubles(const std::vector<double>& values, const std::vector<int64_t>& shape, DataType dtype);
runtime::NDArray FromInts(const std::vector<int64_t>& values, const std::vector<int64_t>& shape, DataType dtype);

runtime::NDArray CastArray(const runtime::NDArray& a, DataType dtype);
/// A copy with another shape (same number of elements).
runtime::NDArray ReshapeArray(const runtime::NDArray& a, const std::vector<int64_t>& shape);
runtime::NDArray TransposeArray(const runtime::NDArray& a, const std::vector<int64_t>& perm);
/// numpy.take(a, indices, axis) with negative indices counting from the end.
runtime::NDArray GatherArray(const runtime::NDArray& a, const runtime::NDArray& indices, int64_t axis);
runtime::NDArray ConcatArrays(const std::vector<runtime::NDArray>& parts, int64_t axis);
/// ranges[d] for every axis d of a.
runtime::NDArray SliceArray(const runtime::NDArray& a, const std::vector<graph::SliceRange>& ranges);
/// Elementwise a (op) b with numpy broadcasting; op is one of + - * / (integer division truncates).
runtime::NDArray BinaryArray(const runtime::NDArray& a, const runtime::NDArray& b, char op);

}  // namespace tessera::frontend::onnx_import
