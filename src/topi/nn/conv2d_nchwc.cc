#include "tessera/topi/nn/conv2d_nchwc.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

// The subsampling stage of a strided 1x1 convolution (conv2d_nchwc.h kNCHWcSubsampleName).
Tensor SubsampleNCHWc(const Tensor& data, int64_t sh, int64_t sw, int64_t oh, int64_t ow) {
  std::vector<int64_t> ds = ConstShape(data);
  return te::compute(
      MakeShape({ds[0], ds[1], oh, ow, ds[4]}),
      [&](const std::vector<Var>& i) {
        return data({PrimExpr(i[0]), PrimExpr(i[1]), i[2] * Index(sh), i[3] * Index(sw), PrimExpr(i[4])});
      },
      kNCHWcSubsampleName, tag::kInjective);
}

// The im2col stage (conv2d_nchwc.h kNCHWcIm2colName): col[n, co, ky, kx, y * OW + x, ci] =
// in[n, co, y * sh + ky * dh, x * sw + kx * dw, ci].
Tensor Im2colNCHWc(const Tensor& in, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                   int64_t oh, int64_t ow) {
  std::vector<int64_t> ds = ConstShape(in);
  return te::compute(
      MakeShape({ds[0], ds[1], kh, kw, oh * ow, ds[4]}),
      [&](const std::vector<Var>& i) {
        PrimExpr y = floordiv(i[4], Index(ow)) * Index(sh) + i[2] * Index(dh);
        PrimExpr x = floormod(i[4], Index(ow)) * Index(sw) + i[3] * Index(dw);
        return in({PrimExpr(i[0]), PrimExpr(i[1]), y, x, PrimExpr(i[5])});
      },
      kNCHWcIm2colName, tag::kInjective);
}

void CheckParams(const Conv2DParams& p, const char* op) {
  TESSERA_CHECK(p.strides[0] >= 1 && p.strides[1] >= 1 && p.dilation[0] >= 1 && p.dilation[1] >= 1, op,
                ": strides and dilation must be >= 1");
  for (int64_t v : p.padding) TESSERA_CHECK(v >= 0, op, ": negative padding");
}

}  // namespace

// The select reads a clamped address only to stay in bounds; the stage is computed once into its
// own buffer, so the convolution's inner loop has no select.
Tensor PadNCHWcStage(const Tensor& data, const std::array<int64_t, 4>& padding) {
  const auto [pt, pl, pb, pr] = padding;
  if (!pt && !pl && !pb && !pr) return data;
  std::vector<int64_t> ds = ConstShape(data);
  const int64_t h = ds[2], w = ds[3];
  std::vector<int64_t> out = {ds[0], ds[1], h + pt + pb, w + pl + pr, ds[4]};
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        PrimExpr y = i[2] - Index(pt), x = i[3] - Index(pl);
        PrimExpr inside = y >= Index(0) && y < Index(h) && x >= Index(0) && x < Index(w);
        PrimExpr yc = ir::min(ir::max(y, Index(0)), Index(h - 1));
        PrimExpr xc = ir::min(ir::max(x, Index(0)), Index(w - 1));
        return ir::select(inside, data({PrimExpr(i[0]), PrimExpr(i[1]), yc, xc, PrimExpr(i[4])}),
                          ir::make_zero(data.dtype()));
      },
      kNCHWcPadName, tag::kInjective);
}

std::array<int64_t, 2> Conv2DOutHW(int64_t h, int64_t w, int64_t kh, int64_t kw, const Conv2DParams& p) {
  const auto [pt, pl, pb, pr] = p.padding;
  const int64_t eh = (kh - 1) * p.dilation[0] + 1, ew = (kw - 1) * p.dilation[1] + 1;
  TESSERA_CHECK(h + pt + pb >= eh && w + pl + pr >= ew, "conv2d: the kernel is larger than the padded input");
  return {(h + pt + pb - eh) / p.strides[0] + 1, (w + pl + pr - ew) / p.strides[1] + 1};
}

Tensor conv2d_NCHWc(const Tensor& data, const Tensor& kernel, const Conv2DParams& p, bool im2col) {
  std::vector<int64_t> ds = ConstShape(data), ks = ConstShape(kernel);
  TESSERA_CHECK(ds.size() == 5, "conv2d_NCHWc: data must be 5-D NCHWc, got rank ", ds.size());
  TESSERA_CHECK(ks.size() == 6, "conv2d_NCHWc: kernel must be 6-D [K/k, C/c, KH, KW, c, k], got rank ", ks.size());
  TESSERA_CHECK(data.dtype() == kernel.dtype(), "conv2d_NCHWc: data and kernel dtypes differ");
  const int64_t g = p.groups;
  TESSERA_CHECK(g >= 1 && ks[0] % g == 0 && ks[1] * g == ds[1] && ks[4] == ds[4], "conv2d_NCHWc: kernel channel blocks ",
                ks[1], "x", ks[4], " in ", g, " groups do not match data ", ds[1], "x", ds[4], " (output blocks ", ks[0],
                ")");
  CheckParams(p, "conv2d_NCHWc");
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], ks[2], ks[3], p);
  Tensor in = PadNCHWcStage(data, p.padding);
  int64_t sh = p.strides[0], sw = p.strides[1];
  const int64_t dh = p.dilation[0], dw = p.dilation[1];
  const bool unpadded = p.padding == std::array<int64_t, 4>{0, 0, 0, 0};
  im2col = im2col && ks[2] * ks[3] > 1;
  if (ks[2] == 1 && ks[3] == 1 && unpadded && (sh > 1 || sw > 1)) {
    in = SubsampleNCHWc(data, sh, sw, oh, ow);
    sh = sw = 1;
  }
  te::IterVar rco = te::reduce_axis(Range(Index(0), Index(ks[1])), "rco");
  Tensor col = im2col ? Im2colNCHWc(in, ks[2], ks[3], sh, sw, dh, dw, oh, ow) : in;
  te::IterVar ry = te::reduce_axis(Range(Index(0), Index(ks[2])), "ry");
  te::IterVar rx = te::reduce_axis(Range(Index(0), Index(ks[3])), "rx");
  te::IterVar rci = te::reduce_axis(Range(Index(0), Index(ds[4])), "rci");
  return te::compute(
      MakeShape({ds[0], ks[0], oh, ow, ks[5]}),
      [&](const std::vector<Var>& i) {
        PrimExpr y = i[2] * Index(sh) + ry.var * Index(dh);
        PrimExpr x = i[3] * Index(sw) + rx.var * Index(dw);
        // The data block: rco within the output block's group.
        const PrimExpr co = g == 1 ? PrimExpr(rco.var) : ir::floordiv(i[1], Index(ks[0] / g)) * Index(ks[1]) + rco.var;
        PrimExpr v = im2col ? col({PrimExpr(i[0]), co, ry.var, rx.var, i[2] * Index(ow) + i[3], rci.var})
                            : in({PrimExpr(i[0]), co, y, x, rci.var});
        return te::sum(v * kernel({PrimExpr(i[1]), rco.var, ry.var, rx.var, rci.var, PrimExpr(i[4])}),
                       {rco, ry, rx, rci});
      },
      "conv2d_NCHWc", tag::kConv2dNCHWc);
}

bool IsDepthwiseNCHWc(const std::vector<int64_t>& data, const std::vector<int64_t>& kernel, int64_t groups) {
  return groups > 1 && data.size() == 5 && kernel.size() == 6 && kernel[0] == data[1] && kernel[1] == 1 &&
         kernel[4] == 1 && kernel[5] == data[4];
}

Tensor depthwise_conv2d_NCHWc(const Tensor& data, const Tensor& kernel, const Conv2DParams& p) {
  std::vector<int64_t> ds = ConstShape(data), ks = ConstShape(kernel);
  TESSERA_CHECK(ds.size() == 5, "depthwise_conv2d_NCHWc: data must be 5-D NCHWc, got rank ", ds.size());
  TESSERA_CHECK(ks.size() == 6 && ks[1] == 1 && ks[4] == 1,
                "depthwise_conv2d_NCHWc: kernel must be [C/c, 1, KH, KW, 1, c], got rank ", ks.size());
  TESSERA_CHECK(data.dtype() == kernel.dtype(), "depthwise_conv2d_NCHWc: data and kernel dtypes differ");
  TESSERA_CHECK(ks[0] == ds[1] && ks[5] == ds[4], "depthwise_conv2d_NCHWc: kernel blocks ", ks[0], "x", ks[5],
                " do not match data ", ds[1], "x", ds[4]);
  CheckParams(p, "depthwise_conv2d_NCHWc");
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], ks[2], ks[3], p);
  Tensor in = PadNCHWcStage(data, p.padding);
  const int64_t sh = p.strides[0], sw = p.strides[1], dh = p.dilation[0], dw = p.dilation[1];
  te::IterVar ry = te::reduce_axis(Range(Index(0), Index(ks[2])), "ry");
  te::IterVar rx = te::reduce_axis(Range(Index(0), Index(ks[3])), "rx");
  return te::compute(
      MakeShape({ds[0], ds[1], oh, ow, ds[4]}),
      [&](const std::vector<Var>& i) {
        PrimExpr y = i[2] * Index(sh) + ry.var * Index(dh);
        PrimExpr x = i[3] * Index(sw) + rx.var * Index(dw);
        return te::sum(in({PrimExpr(i[0]), PrimExpr(i[1]), y, x, PrimExpr(i[4])}) *
                           kernel({PrimExpr(i[1]), Index(0), ry.var, rx.var, Index(0), PrimExpr(i[4])}),
                       {ry, rx});
      },
      "depthwise_conv2d_NCHWc", tag::kDepthwiseConv2dNCHWc);
}

}  // namespace tessera::topi
