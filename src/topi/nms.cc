#include "tessera/topi/nms.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

const DataType kI64 = DataType::Int(64);

PrimExpr I64(int64_t v) { return ir::make_const(kI64, v); }

// The one element of a scalar-like tensor, cast to `t`.
PrimExpr Scalar(const Tensor& s, DataType t) { return ir::cast(t, s(std::vector<PrimExpr>(s.shape().size(), Index(0)))); }

void CheckScalar(const Tensor& s, const char* what) {
  TESSERA_CHECK(Product(ConstShape(s)) == 1, "non_max_suppression: ", what, " must have one element, got ",
                ShapeString(s.shape()));
}

// A box's extent along one axis: [min, max].
struct Span {
  PrimExpr lo, hi;
};

// Whether box `a` suppresses box `b` (both float [4] reads): the reference's suppress_by_iou.
PrimExpr Suppresses(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b, bool center, const PrimExpr& thr) {
  auto spans = [&](const std::vector<PrimExpr>& v, int axis) {  // axis 0: x, 1: y
    if (center) {
      const PrimExpr half = v[2 + axis] / ir::make_const(v[0].dtype(), 2.0);
      return Span{v[axis] - half, v[axis] + half};
    }
    const PrimExpr p = v[1 - axis], q = v[3 - axis];  // [y1, x1, y2, x2]
    return Span{ir::min(p, q), ir::max(p, q)};
  };
  const Span ax = spans(a, 0), ay = spans(a, 1), bx = spans(b, 0), by = spans(b, 1);
  const PrimExpr ix_lo = ir::max(ax.lo, bx.lo), ix_hi = ir::min(ax.hi, bx.hi);
  const PrimExpr iy_lo = ir::max(ay.lo, by.lo), iy_hi = ir::min(ay.hi, by.hi);
  const PrimExpr zero = ir::make_zero(thr.dtype());
  const PrimExpr inter = (ix_hi - ix_lo) * (iy_hi - iy_lo);
  const PrimExpr area_a = (ax.hi - ax.lo) * (ay.hi - ay.lo), area_b = (bx.hi - bx.lo) * (by.hi - by.lo);
  const PrimExpr uni = area_a + area_b - inter;
  return ix_hi > ix_lo && iy_hi > iy_lo && inter > zero && area_a > zero && area_b > zero && uni > zero &&
         inter / uni > thr;
}

}  // namespace

Tensor non_max_suppression_keep(const Tensor& boxes, const Tensor& scores, const Tensor& order,
                                const Tensor& max_output_boxes_per_class, const Tensor& iou_threshold,
                                const Tensor& score_threshold, bool center_point_box, bool has_score_threshold) {
  const std::vector<int64_t> bs = ConstShape(boxes), ss = ConstShape(scores), os = ConstShape(order);
  TESSERA_CHECK(bs.size() == 3 && bs[2] == 4, "non_max_suppression: boxes must be [batches, boxes, 4], got ",
                ShapeString(bs));
  TESSERA_CHECK(ss.size() == 3 && ss[0] == bs[0] && ss[2] == bs[1],
                "non_max_suppression: scores must be [batches, classes, boxes] = [", bs[0], ", C, ", bs[1], "], got ",
                ShapeString(ss));
  TESSERA_CHECK(os == ss && order.dtype() == kI64, "non_max_suppression: the order must be int64 ", ShapeString(ss));
  TESSERA_CHECK(boxes.dtype().is_floating() && scores.dtype() == boxes.dtype(),
                "non_max_suppression: boxes and scores must share a float dtype, got ", boxes.dtype().str(), " and ",
                scores.dtype().str());
  TESSERA_CHECK(bs[1] < (int64_t{1} << 23), "non_max_suppression: ", bs[1], " boxes; at most 2^23 - 1 are supported");
  CheckScalar(max_output_boxes_per_class, "max_output_boxes_per_class");
  CheckScalar(iou_threshold, "iou_threshold");
  CheckScalar(score_threshold, "score_threshold");
  const DataType ft = boxes.dtype() == DataType::Float(64) ? boxes.dtype() : DataType::Float(32);
  const PrimExpr iou_thr = Scalar(iou_threshold, ft), score_thr = Scalar(score_threshold, ft);
  const PrimExpr max_out = Scalar(max_output_boxes_per_class, kI64);
  const PrimExpr big = I64(int64_t{1} << 40);
  const int64_t n = bs[1];

  auto box = [&](const PrimExpr& b, const PrimExpr& idx) {
    std::vector<PrimExpr> v;
    for (int k = 0; k < 4; ++k) v.push_back(ir::cast(ft, boxes({b, idx, Index(k)})));
    return v;
  };
  auto at = [&](const PrimExpr& b, const PrimExpr& c, const PrimExpr& t) {
    return ir::cast(DataType::Int(32), order({b, c, t}));
  };
  auto candidate = [&](const PrimExpr& b, const PrimExpr& c, const PrimExpr& t) {
    return has_score_threshold ? ir::cast(ft, scores({b, c, at(b, c, t)})) > score_thr : ir::make_const(DataType::Bool(), 1);
  };
  // Box t is kept given S[t] (the sum below).
  auto kept = [&](const PrimExpr& s, const PrimExpr& b, const PrimExpr& c, const PrimExpr& t) {
    return candidate(b, c, t) && s < big && s < max_out;
  };
  te::IterVar tp = te::reduce_axis(Range(Index(0), Index(std::max<int64_t>(n, 1))), "tp");
  Tensor s = te::scan(
      MakeShape(ss), kI64, 2,
      [&](const std::vector<Var>& i, const Tensor& self) {
        const PrimExpr b = i[0], c = i[1], t = i[2];
        const PrimExpr earlier = PrimExpr(tp.var) < t;
        const PrimExpr p = ir::min(PrimExpr(tp.var), ir::max(t - Index(1), Index(0)));  // read only computed points
        const PrimExpr kept_p = earlier && kept(self({b, c, p}), b, c, p);
        const PrimExpr hit = Suppresses(box(b, at(b, c, p)), box(b, at(b, c, t)), center_point_box, iou_thr);
        return te::sum(ir::select(kept_p, ir::select(hit, big, I64(1)), I64(0)), {tp});
      },
      "T_nms_suppressors", tag::kScan);
  return te::compute(
      MakeShape(ss),
      [&](const std::vector<Var>& i) {
        return ir::cast(DataType::Int(32), kept(s({i[0], i[1], i[2]}), i[0], i[1], i[2]));
      },
      "T_nms_keep", tag::kInjective);
}

Tensor non_max_suppression_indices(const Tensor& selected, const Tensor& order) {
  TESSERA_CHECK(selected.shape().size() == 2 && IsConst(selected.shape()[0], 3) && selected.dtype() == kI64,
                "non_max_suppression: the selected coordinates must be int64 [3, K], got ", ShapeString(selected.shape()));
  TESSERA_CHECK(order.shape().size() == 3, "non_max_suppression: the order must be [B, C, N]");
  const PrimExpr k = selected.shape()[1];
  return te::compute(
      {k, Index(3)},
      [&](const std::vector<Var>& i) {
        auto coord = [&](int r) { return ir::cast(DataType::Int(32), selected({Index(r), i[0]})); };
        const PrimExpr box = order({coord(0), coord(1), coord(2)});
        return ir::select(PrimExpr(i[1]) == Index(2), box, selected({ir::min(PrimExpr(i[1]), Index(1)), i[0]}));
      },
      "T_nms_indices", tag::kInjective);
}

}  // namespace tessera::topi
