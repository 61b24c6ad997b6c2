#include "tessera/topi/nn/pooling.h"

#include <algorithm>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"
#include "tessera/topi/transform.h"

namespace tessera::topi {

int64_t PoolOutDim(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride, int64_t dilation,
                   bool ceil_mode) {
  TESSERA_CHECK(k >= 1 && stride >= 1 && dilation >= 1, "pool: pool_size, strides and dilation must be >= 1");
  const int64_t span = in + pad_begin + pad_end - ((k - 1) * dilation + 1);
  TESSERA_CHECK(span >= 0, "pool: the window (", k, ", dilation ", dilation, ") is larger than the padded input (",
                in + pad_begin + pad_end, ")");
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // A last window that would start inside the end padding is dropped (PyTorch / ONNX).
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

namespace {

struct Window {
  int64_t out_h, out_w;
  Tensor padded;  // data padded so every tap of every window is in bounds
};

Window PadForPool(const Tensor& data, const Pool2DParams& p, PrimExpr pad_value) {
  std::vector<int64_t> ds = ConstShape(data);
  TESSERA_CHECK(ds.size() == 4 || ds.size() == 5, "pool2d: data must be 4-D NCHW or 5-D NCHW<b>c, got rank ",
                ds.size());
  const auto [pt, pl, pb, pr] = p.padding;
  Window w;
  w.out_h = PoolOutDim(ds[2], pt, pb, p.pool_size[0], p.strides[0], p.dilation[0], p.ceil_mode);
  w.out_w = PoolOutDim(ds[3], pl, pr, p.pool_size[1], p.strides[1], p.dilation[1], p.ceil_mode);
  // ceil_mode may let the last window overhang the end padding: pad that overhang too.
  int64_t need_h = (w.out_h - 1) * p.strides[0] + (p.pool_size[0] - 1) * p.dilation[0] + 1;
  int64_t need_w = (w.out_w - 1) * p.strides[1] + (p.pool_size[1] - 1) * p.dilation[1] + 1;
  int64_t after_h = std::max(pb, need_h - pt - ds[2]);
  int64_t after_w = std::max(pr, need_w - pl - ds[3]);
  w.padded = data;
  if (pt || pl || after_h || after_w) {
    std::vector<int64_t> before = {0, 0, pt, pl}, after = {0, 0, after_h, after_w};
    if (ds.size() == 5) before.push_back(0), after.push_back(0);  // the channel block is not padded
    w.padded = pad(data, before, after, pad_value);
  }
  return w;
}

// The window reduction shared by max and avg pooling.
Tensor PoolReduce(const Window& w, const Pool2DParams& p, bool is_max, const std::string& name) {
  std::vector<int64_t> ds = ConstShape(w.padded);
  te::IterVar ry = te::reduce_axis(Range(Index(0), Index(p.pool_size[0])), "ry");
  te::IterVar rx = te::reduce_axis(Range(Index(0), Index(p.pool_size[1])), "rx");
  std::vector<int64_t> os = {ds[0], ds[1], w.out_h, w.out_w};
  if (ds.size() == 5) os.push_back(ds[4]);
  return te::compute(
      MakeShape(os),
      [&](const std::vector<Var>& i) {
        PrimExpr y = i[2] * Index(p.strides[0]) + ry.var * Index(p.dilation[0]);
        PrimExpr x = i[3] * Index(p.strides[1]) + rx.var * Index(p.dilation[1]);
        std::vector<PrimExpr> at = {i[0], i[1], y, x};
        if (i.size() == 5) at.push_back(i[4]);
        PrimExpr v = w.padded(at);
        return is_max ? te::max(v, {ry, rx}) : te::sum(v, {ry, rx});
      },
      name, tag::kPool);
}

// Number of taps k in [0, K) whose input coordinate base + k*dil lies in [lo, hi).
PrimExpr TapCount(PrimExpr base, int64_t lo, int64_t hi, int64_t k, int64_t dil) {
  auto ceildiv = [&](PrimExpr a) { return ir::floordiv(a + Index(dil - 1), Index(dil)); };
  PrimExpr first = ir::max(ceildiv(Index(lo) - base), Index(0));
  PrimExpr last = ir::min(ceildiv(Index(hi) - base), Index(k));
  return ir::max(last - first, Index(0));
}

}  // namespace

Tensor max_pool2d(const Tensor& data, const Pool2DParams& p) {
  Window w = PadForPool(data, p, ir::min_value(data.dtype()));
  return PoolReduce(w, p, /*is_max=*/true, "pool_max");
}

Tensor max_pool2d_indices(const Tensor& data, const Pool2DParams& p, bool column_major) {
  std::vector<int64_t> ds = ConstShape(data);
  TESSERA_CHECK(ds.size() == 4, "max_pool2d_indices: data must be 4-D NCHW, got rank ", ds.size());
  Window w = PadForPool(data, p, ir::min_value(data.dtype()));
  Tensor best = PoolReduce(w, p, /*is_max=*/true, "pool_max");
  const int64_t h = ds[2], wd = ds[3];
  const auto [pt, pl, pb, pr] = p.padding;
  (void)pb;
  (void)pr;
  te::IterVar ry = te::reduce_axis(Range(Index(0), Index(p.pool_size[0])), "ry");
  te::IterVar rx = te::reduce_axis(Range(Index(0), Index(p.pool_size[1])), "rx");
  const DataType i64 = DataType::Int(64);
  const int64_t none = h * wd;  // larger than every in-image key
  // key = y * W + x of the first (smallest key) in-image tap holding the window's maximum.
  Tensor key = te::compute(
      best.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr py = i[2] * Index(p.strides[0]) + ry.var * Index(p.dilation[0]);
        PrimExpr px = i[3] * Index(p.strides[1]) + rx.var * Index(p.dilation[1]);
        PrimExpr y = py - Index(pt), x = px - Index(pl);
        PrimExpr inside = y >= Index(0) && y < Index(h) && x >= Index(0) && x < Index(wd);
        PrimExpr hit = inside && w.padded({i[0], i[1], py, px}) == best(AsExprs(i));
        return te::min(ir::select(hit, ir::cast(i64, y * Index(wd) + x), ir::make_const(i64, none)), {ry, rx});
      },
      "pool_argmax_key", tag::kCommReduce);
  return te::compute(
      best.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr k = key(AsExprs(i));
        PrimExpr plane = (ir::cast(i64, i[0]) * ir::make_const(i64, ds[1]) + ir::cast(i64, i[1])) *
                         ir::make_const(i64, h * wd);
        PrimExpr within = column_major ? ir::floormod(k, ir::make_const(i64, wd)) * ir::make_const(i64, h) +
                                             ir::floordiv(k, ir::make_const(i64, wd))
                                       : k;
        return plane + within;
      },
      "pool_argmax", tag::kElemWise);
}

Tensor avg_pool2d(const Tensor& data, const Pool2DParams& p) {
  TESSERA_CHECK(data.dtype().is_float(), "avg_pool2d needs a float tensor, got ", data.dtype().str());
  std::vector<int64_t> ds = ConstShape(data);
  Window w = PadForPool(data, p, ir::make_zero(data.dtype()));
  Tensor s = PoolReduce(w, p, /*is_max=*/false, "pool_sum");
  const auto [pt, pl, pb, pr] = p.padding;
  const int64_t h = ds[2], wd = ds[3];
  const bool incl = p.count_include_pad;
  return te::compute(
      s.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr base_y = i[2] * Index(p.strides[0]) - Index(pt);
        PrimExpr base_x = i[3] * Index(p.strides[1]) - Index(pl);
        PrimExpr cy = TapCount(base_y, incl ? -pt : 0, incl ? h + pb : h, p.pool_size[0], p.dilation[0]);
        PrimExpr cx = TapCount(base_x, incl ? -pl : 0, incl ? wd + pr : wd, p.pool_size[1], p.dilation[1]);
        PrimExpr count = ir::cast(data.dtype(), ir::max(cy * cx, Index(1)));
        return s(AsExprs(i)) / count;
      },
      "pool_avg", tag::kElemWise);
}

Tensor global_avg_pool2d(const Tensor& data) {
  TESSERA_CHECK(data.dtype().is_float(), "global_avg_pool2d needs a float tensor, got ", data.dtype().str());
  std::vector<int64_t> ds = ConstShape(data);
  TESSERA_CHECK(ds.size() == 4 || ds.size() == 5,
                "global_avg_pool2d: data must be 4-D NCHW or 5-D NCHW<b>c, got rank ", ds.size());
  te::IterVar ry = te::reduce_axis(Range(Index(0), Index(ds[2])), "ry");
  te::IterVar rx = te::reduce_axis(Range(Index(0), Index(ds[3])), "rx");
  std::vector<int64_t> os = {ds[0], ds[1], 1, 1};
  if (ds.size() == 5) os.push_back(ds[4]);
  Tensor s = te::compute(
      MakeShape(os),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> at = {i[0], i[1], PrimExpr(ry.var), PrimExpr(rx.var)};
        if (i.size() == 5) at.push_back(i[4]);
        return te::sum(data(at), {ry, rx});
      },
      "global_pool_sum", tag::kPool);
  PrimExpr count = ir::make_const(data.dtype(), static_cast<double>(ds[2] * ds[3]));
  return te::compute(
      s.shape(), [&](const std::vector<Var>& i) { return s(AsExprs(i)) / count; }, "global_avg_pool",
      tag::kElemWise);
}

}  // namespace tessera::topi
