// ONNX Col2Im-18 (N-D), composed from graph ops: the adjoint of im2col. The input
// [N, C * prod(block), L] holds, for each of the L sliding blocks and each kernel offset j,
// one value; Col2Im sums every value into the image position it was taken from:
//
//   out[n, c, p] = sum over j, b with p = b * stride + j * dilation - pad_begin of
//                  in[n, c * prod(block) + j, b]   (b: the block's N-D index, row major)
//
// Each kernel offset j is one strided placement of the [N, C, b1..bk] block grid: zero
// insertion to the stride (reshape to [.., b, 1, ..], pad the unit dims, reshape), then a pad
// (negative amounts crop) to the padded image at offset j * dilation. The placements are
// summed and the pads cropped off. image_shape and block_shape must be known at import.
// Spec: onnx.defs.get_schema("Col2Im"), reference onnx/reference/ops/op_col2im.py.
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertCol2Im(NodeContext& ctx) {
  const std::vector<int64_t> image = ctx.InputInts(1, "image_shape");
  const std::vector<int64_t> block = ctx.InputInts(2, "block_shape");
  const size_t k = image.size();
  if (k == 0 || block.size() != k)
    ctx.Fail("image_shape and block_shape must have the same non-zero length, got " + std::to_string(image.size()) +
             " and " + std::to_string(block.size()));
  const std::vector<int64_t> xs = ctx.InputShape(0);
  if (xs.size() != 3) ctx.Fail("input must be [N, C * prod(block_shape), L] (rank 3), got rank " + std::to_string(xs.size()));
  auto ints = [&](const std::string& name, size_t n, int64_t dflt) {
    std::vector<int64_t> v = ctx.AttrInts(name, std::vector<int64_t>(n, dflt));
    if (v.size() != n)
      ctx.Fail("attribute '" + name + "' must have " + std::to_string(n) + " values, got " + std::to_string(v.size()));
    return v;
  };
  const std::vector<int64_t> strides = ints("strides", k, 1), dil = ints("dilations", k, 1), pads = ints("pads", 2 * k, 0);
  int64_t kprod = 1, lprod = 1;
  std::vector<int64_t> blocks(k), padded(k);
  for (size_t d = 0; d < k; ++d) {
    if (block[d] < 1 || image[d] < 1) ctx.Fail("image_shape and block_shape must be >= 1");
    if (strides[d] < 1 || dil[d] < 1) ctx.Fail("strides and dilations must be >= 1");
    if (pads[d] < 0 || pads[k + d] < 0) ctx.Fail("pads must be >= 0");
    padded[d] = image[d] + pads[d] + pads[k + d];
    const int64_t span = dil[d] * (block[d] - 1) + 1;
    if (padded[d] < span) ctx.Fail("the block (with dilation) is larger than the padded image in dim " + std::to_string(d));
    blocks[d] = (padded[d] - span) / strides[d] + 1;
    kprod *= block[d];
    lprod *= blocks[d];
  }
  if (xs[1] % kprod != 0)
    ctx.Fail("input dim 1 (" + std::to_string(xs[1]) + ") must be a multiple of prod(block_shape) = " + std::to_string(kprod));
  if (xs[2] != lprod)
    ctx.Fail("input dim 2 (" + std::to_string(xs[2]) + ") must equal the number of sliding blocks " + std::to_string(lprod));
  const int64_t n = xs[0], c = xs[1] / kprod;
  const int64_t rank = static_cast<int64_t>(k) + 2;

  std::vector<int64_t> grid_shape = {n, c, kprod};
  grid_shape.insert(grid_shape.end(), blocks.begin(), blocks.end());
  Expr grid = Reshape(ctx, ctx.Input(0), grid_shape);
  std::vector<int64_t> plane = {n, c};
  plane.insert(plane.end(), blocks.begin(), blocks.end());
  std::vector<int64_t> interleaved = {n, c}, stretched = {n, c}, unit_pad(2 + 2 * k, 0);
  bool strided = false;
  for (size_t d = 0; d < k; ++d) {
    interleaved.push_back(blocks[d]);
    interleaved.push_back(1);
    unit_pad[2 + 2 * d + 1] = strides[d] - 1;
    stretched.push_back(blocks[d] * strides[d]);
    strided = strided || strides[d] > 1;
  }

  Expr sum;
  std::vector<int64_t> j(k, 0);  // the kernel offset, row major
  for (int64_t jj = 0; jj < kprod; ++jj) {
    Expr x = Reshape(ctx, SliceAxis(ctx, grid, 2, jj, jj + 1), plane);
    if (strided) {
      x = ctx.Call("pad", {Reshape(ctx, x, interleaved)},
                   Attrs{{"pad_before", std::vector<int64_t>(unit_pad.size(), 0)}, {"pad_after", unit_pad}});
      x = Reshape(ctx, x, stretched);
    }
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    for (size_t d = 0; d < k; ++d) {
      before[2 + d] = j[d] * dil[d];
      after[2 + d] = padded[d] - before[2 + d] - blocks[d] * strides[d];  // >= 1 - stride: crops zeros only
    }
    x = ctx.Call("pad", {x}, Attrs{{"pad_before", before}, {"pad_after", after}});
    sum = sum ? ctx.Call("add", {sum, x}) : x;
    for (int64_t d = static_cast<int64_t>(k) - 1; d >= 0; --d) {
      if (++j[d] < block[d]) break;
      j[d] = 0;
    }
  }
  std::vector<int64_t> crop_before(rank, 0), crop_after(rank, 0);
  bool crop = false;
  for (size_t d = 0; d < k; ++d) {
    crop_before[2 + d] = -pads[d];
    crop_after[2 + d] = -pads[k + d];
    crop = crop || pads[d] != 0 || pads[k + d] != 0;
  }
  if (crop) sum = ctx.Call("pad", {sum}, Attrs{{"pad_before", crop_before}, {"pad_after", crop_after}});
  ctx.SetOutput(0, sum);
}

}  // namespace

void RegisterCol2ImConverters(ConverterTable& t) { t["Col2Im"] = ConvertCol2Im; }

}  // namespace tessera::frontend::onnx_import
