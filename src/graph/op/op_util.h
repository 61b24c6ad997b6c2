// Helpers shared by the type relations of src/graph/op/*.cc. They throw UserError with
// messages in the op user's terms; InferType prefixes the op name and argument types.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/attrs.h"
#include "tessera/graph/type.h"

namespace tessera::graph::op {

/// Argument `i` as a tensor type; UserError when it is a tuple/function or missing.
const TensorTypeNode& TensorArg(const std::vector<Type>& args, size_t i);

/// numpy broadcasting of two dims: equal, or one is static 1. A symbolic dim against a static
/// extent n != 1 yields n; two different symbolic names yield an error.
Dim BroadcastDim(const Dim& a, const Dim& b);
/// numpy broadcasting of two shapes (right-aligned).
Shape BroadcastShapes(const Shape& a, const Shape& b);

/// The symbolic dims named by a comma-separated attr `key` ("symbols": reshape, the vm.* data-dependent
/// ops; "dim_symbols": vm.list_new's element); UserError for an empty name.
std::vector<Dim> SymbolsAttr(const Attrs& attrs, const std::string& key = "symbols");

/// Maps a possibly negative axis into [0, ndim); UserError when out of range.
int64_t NormalizeAxis(int64_t axis, int64_t ndim);

/// UserError unless a and b have the same dtype.
void CheckSameDtype(const TensorTypeNode& a, const TensorTypeNode& b);

/// Padding of a 2-D window op as [top, left, bottom, right]; accepts 1, 2 or 4 values.
std::vector<int64_t> Padding2D(const Attrs& attrs);

/// Output extent of a sliding window: floor((in + pad - (k-1)*dil - 1) / stride) + 1, or the
/// ceil variant (dropping a last window that would start inside the end padding, as PyTorch and
/// ONNX do). A symbolic input extent yields Dim::Any().
Dim WindowOutDim(const Dim& in, int64_t pad_total, int64_t kernel, int64_t stride, int64_t dilation,
                 bool ceil_mode, int64_t pad_begin);

/// A type relation for unary elementwise ops: the output type is the input type.
Type IdentityRel(const std::vector<Type>& args, const Attrs& attrs);

/// Resize's attrs shared by image.resize and vm.resize (image.cc): mode, coordinate_transformation_mode
/// and nearest_mode known, no interpolation of bools, attr `axes` distinct and in [0, rank of x).
/// Throws UserError naming the bad attr.
void CheckResizeModeAttrs(const TensorTypeNode& x, const Attrs& attrs);

}  // namespace tessera::graph::op
