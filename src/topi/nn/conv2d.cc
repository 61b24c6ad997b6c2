#include "tessera/topi/nn/conv2d.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/transform.h"

namespace tessera::topi {

Tensor conv2d_nchw(const Tensor& data, const Tensor& weight, const Conv2DParams& p) {
  std::vector<int64_t> ds = ConstShape(data), ws = ConstShape(weight);
  TESSERA_CHECK(ds.size() == 4, "conv2d: data must be 4-D NCHW, got rank ", ds.size());
  TESSERA_CHECK(ws.size() == 4, "conv2d: weight must be 4-D OIHW, got rank ", ws.size());
  TESSERA_CHECK(data.dtype() == weight.dtype(), "conv2d: data and weight dtypes differ");
  const int64_t n = ds[0], c = ds[1], h = ds[2], w = ds[3];
  const int64_t o = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  const int64_t groups = p.groups;
  TESSERA_CHECK(groups >= 1 && o % groups == 0 && c == cg * groups, "conv2d: data channels ", c, ", weight ",
                o, "x", cg, " and groups ", groups, " are inconsistent");
  const auto [sh, sw] = p.strides;
  const auto [dh, dw] = p.dilation;
  const auto [pt, pl, pb, pr] = p.padding;
  TESSERA_CHECK(sh >= 1 && sw >= 1 && dh >= 1 && dw >= 1, "conv2d: strides and dilation must be >= 1");
  const int64_t oh = (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1;
  const int64_t ow = (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1;
  TESSERA_CHECK(h + pt + pb >= (kh - 1) * dh + 1 && w + pl + pr >= (kw - 1) * dw + 1 && oh >= 1 && ow >= 1,
                "conv2d: the kernel is larger than the padded input");
  Tensor in = data;
  if (pt || pl || pb || pr) in = pad(data, {0, 0, pt, pl}, {0, 0, pb, pr}, ir::make_zero(data.dtype()));
  const int64_t out_per_group = o / groups;
  te::IterVar rc = te::reduce_axis(Range(Index(0), Index(cg)), "rc");
  te::IterVar ry = te::reduce_axis(Range(Index(0), Index(kh)), "ry");
  te::IterVar rx = te::reduce_axis(Range(Index(0), Index(kw)), "rx");
  return te::compute(
      MakeShape({n, o, oh, ow}),
      [&](const std::vector<Var>& i) {
        PrimExpr cin = groups == 1 ? PrimExpr(rc.var) : ir::floordiv(i[1], Index(out_per_group)) * Index(cg) + rc.var;
        PrimExpr y = i[2] * Index(sh) + ry.var * Index(dh);
        PrimExpr x = i[3] * Index(sw) + rx.var * Index(dw);
        return te::sum(in({i[0], cin, y, x}) * weight({PrimExpr(i[1]), rc.var, ry.var, rx.var}), {rc, ry, rx});
      },
      "conv2d_nchw", tag::kConv2dNCHW);
}

}  // namespace tessera::topi
