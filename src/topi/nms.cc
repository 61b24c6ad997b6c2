#include "tessera/topi/nms.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"
#include "tessera/tir/stmt.h"

namespace tessera::topi {

using tir::Buffer;

namespace {

const DataType kI64 = DataType::Int(64);

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
  CheckScalar(max_output_boxes_per_class, "max_output_boxes_per_class");
  CheckScalar(iou_threshold, "iou_threshold");
  CheckScalar(score_threshold, "score_threshold");
  const DataType ft = boxes.dtype() == DataType::Float(64) ? boxes.dtype() : DataType::Float(32);
  const int64_t n = bs[1];

  const int64_t classes = ss[1];
  // Per (batch, class): the positions kept so far (in the score order) and their count, and a
  // flag for the box being tested.
  const Buffer kept = Buffer::make("nms_kept", DataType::Int(32), MakeShape(ss));
  const Buffer count = Buffer::make("nms_count", DataType::Int(32), MakeShape({ss[0], ss[1]}));
  const Buffer hit = Buffer::make("nms_suppressed", DataType::Int(32), MakeShape({ss[0], ss[1]}));
  auto body = [&](const std::vector<Buffer>& in, const Buffer& keep) {
    auto load = [](const Buffer& buf, std::vector<PrimExpr> idx) { return tir::BufferLoadNode::make(buf, std::move(idx)); };
    auto store = [](const Buffer& buf, PrimExpr v, std::vector<PrimExpr> idx) {
      return tir::BufferStoreNode::make(buf, std::move(v), std::move(idx));
    };
    auto scalar = [&](const Buffer& buf, DataType t) {
      return ir::cast(t, load(buf, std::vector<PrimExpr>(buf->shape.size(), Index(0))));
    };
    const PrimExpr iou_thr = scalar(in[4], ft), score_thr = scalar(in[5], ft), max_out = scalar(in[3], kI64);
    Var bc("bc", DataType::Int(32)), t("t", DataType::Int(32)), j("j", DataType::Int(32));
    const PrimExpr b = ir::floordiv(bc, Index(classes)), c = ir::floormod(bc, Index(classes));
    auto box_at = [&](const PrimExpr& pos) {  // the box at position pos of the order
      const PrimExpr idx = ir::cast(DataType::Int(32), load(in[2], {b, c, pos}));
      std::vector<PrimExpr> v;
      for (int k = 0; k < 4; ++k) v.push_back(ir::cast(ft, load(in[0], {b, idx, Index(k)})));
      return v;
    };
    const PrimExpr n_kept = load(count, {b, c});
    const PrimExpr candidate =
        has_score_threshold
            ? ir::cast(ft, load(in[1], {b, c, ir::cast(DataType::Int(32), load(in[2], {b, c, t}))})) > score_thr
            : ir::make_const(DataType::Bool(), 1);
    // Box t against every kept box: suppressed when one overlaps it by more than the threshold.
    tir::Stmt test = tir::ForNode::make(
        j, Index(0), n_kept, tir::ForKind::kSerial,
        tir::IfThenElseNode::make(Suppresses(box_at(load(kept, {b, c, j})), box_at(t), center_point_box, iou_thr),
                                  store(hit, Index(1), {b, c})));
    tir::Stmt select = tir::IfThenElseNode::make(
        load(hit, {b, c}) == Index(0),
        tir::SeqStmtNode::make({store(kept, t, {b, c, n_kept}), store(keep, Index(1), {b, c, t}),
                                store(count, n_kept + Index(1), {b, c})}));
    tir::Stmt step = tir::IfThenElseNode::make(
        ir::cast(kI64, n_kept) < max_out && candidate,
        tir::SeqStmtNode::make({store(hit, Index(0), {b, c}), test, select}));
    Var z("z", DataType::Int(32));
    tir::Stmt per_class = tir::SeqStmtNode::make(
        {store(count, Index(0), {b, c}),
         tir::ForNode::make(z, Index(0), Index(n), tir::ForKind::kSerial, store(keep, Index(0), {b, c, z})),
         tir::ForNode::make(t, Index(0), Index(n), tir::ForKind::kSerial, step)});
    return tir::ForNode::make(bc, Index(0), Index(ss[0] * ss[1]), tir::ForKind::kParallel, per_class);
  };
  return te::extern_op(MakeShape(ss), DataType::Int(32), {boxes, scores, order, max_output_boxes_per_class,
                                                          iou_threshold, score_threshold},
                       body, "T_nms_keep", "extern", {kept, count, hit});
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
