// Shape and layout transforms (tag "injective" unless noted). Static shapes only.
#pragma once

#include <string>
#include <vector>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// The same elements in row-major order with shape `newshape` (one entry may be -1: inferred).
/// UserError when the element counts differ.
Tensor reshape(const Tensor& x, const std::vector<int64_t>& newshape);

/// out.shape[i] = x.shape[axes[i]]; empty axes reverses the dims. Negative axes allowed.
Tensor transpose(const Tensor& x, std::vector<int64_t> axes = {});

/// Joins the inputs along `axis`; all other extents and the dtypes must agree.
Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis);

/// How take treats indices outside [0, n).
enum class TakeMode {
  kNormalize,  ///< ONNX Gather: a negative index counts from the end (i + n); then clamped to [0, n-1]
  kClip,       ///< Relay "clip": clamped to [0, n-1] (so -1 reads element 0)
  kWrap,       ///< Relay "wrap": i mod n (floor modulo)
  kRaise,      ///< numpy "raise" (ONNX Gather with run-time indices): -n <= i < n, negative counted
               ///< from the end; any other index fails the kernel (ir::checked_index)
};

/// Gather (ONNX Gather / Relay take): out = data.shape[:axis] + indices.shape +
/// data.shape[axis+1:], out[.., j.., ..] = data[.., indices[j..], ..]. indices are any int
/// dtype. Every mode keeps reads inside data; kRaise makes the kernel return
/// runtime::kKernelIndexOutOfRange instead of reading elsewhere.
Tensor take(const Tensor& data, const Tensor& indices, int64_t axis, TakeMode mode = TakeMode::kNormalize);

/// ONNX Slice semantics. For each listed axis (all axes 0..begin.size()-1 when `axes` is
/// empty): negative begin / end count from the end, then are clamped to [0, n] (step > 0)
/// or [0, n-1] / [-1, n-1] (step < 0); out extent = max(0, ceil((end - begin) / step)).
/// strides empty means all 1; a zero stride is a UserError.
Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& strides, const std::vector<int64_t>& axes = {});

/// Inserts `num_newaxis` dims of extent 1 at `axis` (in [-ndim-1, ndim]).
Tensor expand_dims(const Tensor& x, int64_t axis, int num_newaxis = 1);

/// Removes the listed extent-1 dims (all extent-1 dims when `axes` is empty).
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes = {});

/// Constant padding: out.shape[i] = before[i] + x.shape[i] + after[i]; points outside x take
/// pad_value (converted to x's dtype). Default name "pad_temp".
Tensor pad(const Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
           PrimExpr pad_value, const std::string& name = "pad_temp");

}  // namespace tessera::topi
