// ONNX MaxUnpool-9/11/22 (1-D to 3-D), composed: a scatter of X into zeros at the flat indices
// of MaxPool's second output.
//
//   X, I [N, C, d1..dk]; inferred extent per spatial dim: (d - 1) * stride - pad_b - pad_e + kernel
//   Y_inferred.flat[I.flat[e]] = X.flat[e], 0 elsewhere; indices address the whole inferred
//   tensor [N, C, inferred...] (MaxPool's flattening, N and C included).
// With output_shape (known at import), the reference implementation
// (onnx/reference/ops/op_max_unpool.py) scatters into the inferred shape and zero-pads it at the
// end of each dim to output_shape; a smaller output_shape is refused. Out-of-range indices are
// the user's error (the scatter clamps nothing).
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertMaxUnpool(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0), is = ctx.InputShape(1);
  const size_t k = xs.size() < 2 ? 0 : xs.size() - 2;
  if (k == 0) ctx.Fail("X must be [N, C, d1..dk] with k >= 1, got rank " + std::to_string(xs.size()));
  if (is != xs) ctx.Fail("I must have the shape of X");
  if (!ctx.InputType(1).dtype.is_int()) ctx.Fail("I must be an int64 tensor, got " + ctx.InputType(1).dtype.str());
  const std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape", {});
  if (kernel.size() != k)
    ctx.Fail("attribute 'kernel_shape' must have " + std::to_string(k) + " values, got " + std::to_string(kernel.size()));
  const std::vector<int64_t> strides = ctx.AttrInts("strides", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> pads = ctx.AttrInts("pads", std::vector<int64_t>(2 * k, 0));
  if (strides.size() != k || pads.size() != 2 * k) ctx.Fail("strides must have k values and pads 2k values");
  std::vector<int64_t> inferred = {xs[0], xs[1]};
  int64_t total = xs[0] * xs[1];
  for (size_t d = 0; d < k; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[k + d] < 0)
      ctx.Fail("kernel_shape and strides must be >= 1 and pads >= 0");
    const int64_t e = (xs[2 + d] - 1) * strides[d] - pads[d] - pads[k + d] + kernel[d];
    if (e < 1) ctx.Fail("the inferred output extent of spatial dim " + std::to_string(d) + " is " + std::to_string(e));
    inferred.push_back(e);
    total *= e;
  }
  int64_t count = 1;
  for (int64_t v : xs) count *= v;
  const DataType dt = ctx.InputType(0).dtype;
  Expr zeros = ctx.Call("broadcast_to", {ctx.ScalarConst(0, dt)}, Attrs{{"shape", std::vector<int64_t>{total}}});
  Expr y = ctx.Call("scatter_elements",
                    {zeros, Reshape(ctx, ctx.Input(1), {count}), Reshape(ctx, ctx.Input(0), {count})},
                    Attrs{{"axis", int64_t{0}}});
  y = Reshape(ctx, y, inferred);
  if (ctx.HasInput(2)) {
    const std::vector<int64_t> out = ctx.InputInts(2, "output_shape");
    if (out.size() != xs.size())
      ctx.Fail("output_shape must have " + std::to_string(xs.size()) + " values, got " + std::to_string(out.size()));
    std::vector<int64_t> after(out.size(), 0);
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] < inferred[d])
        ctx.Fail("output_shape[" + std::to_string(d) + "] = " + std::to_string(out[d]) +
                 " is smaller than the inferred extent " + std::to_string(inferred[d]));
      after[d] = out[d] - inferred[d];
    }
    if (after != std::vector<int64_t>(out.size(), 0))
      y = ctx.Call("pad", {y}, Attrs{{"pad_before", std::vector<int64_t>(out.size(), 0)}, {"pad_after", after}});
  }
  ctx.SetOutput(0, y);
}

}  // namespace

void RegisterMaxUnpoolConverters(ConverterTable& t) { t["MaxUnpool"] = ConvertMaxUnpool; }

}  // namespace tessera::frontend::onnx_import
