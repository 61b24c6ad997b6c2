#include "tessera/topi/nms.h"

#include "sort_util.h"
#include "tessera/support/error.h"
#include "tessera/tir/stmt.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

using namespace detail;  // NOLINT
using tir::Buffer;
using tir::Stmt;

const DataType kI64 = DataType::Int(64);

void CheckScalar(const Tensor& s, const char* what) {
  TESSERA_CHECK(Product(ConstShape(s)) == 1, "non_max_suppression: ", what, " must have one element, got ",
                ShapeString(s.shape()));
}

// A box as its extents: x in [xlo, xhi], y in [ylo, yhi] (index 0..3 of `v`).
using Extents = std::vector<PrimExpr>;

// The extents of a box as stored: [y1, x1, y2, x2] (corners in any order), or with center
// [x_center, y_center, width, height].
Extents ExtentsOf(const std::vector<PrimExpr>& v, bool center) {
  if (center) {
    const PrimExpr two = ir::make_const(v[0].dtype(), 2.0);
    const PrimExpr hw = v[2] / two, hh = v[3] / two;
    return {v[0] - hw, v[0] + hw, v[1] - hh, v[1] + hh};
  }
  return {ir::min(v[1], v[3]), ir::max(v[1], v[3]), ir::min(v[0], v[2]), ir::max(v[0], v[2])};
}

// Whether box a suppresses box b: the reference's suppress_by_iou (IoU > thr; an empty intersection,
// an area <= 0 or a union <= 0 never suppresses).
PrimExpr Suppresses(const Extents& a, const Extents& b, const PrimExpr& thr) {
  const PrimExpr ix_lo = ir::max(a[0], b[0]), ix_hi = ir::min(a[1], b[1]);
  const PrimExpr iy_lo = ir::max(a[2], b[2]), iy_hi = ir::min(a[3], b[3]);
  const PrimExpr zero = ir::make_zero(thr.dtype());
  const PrimExpr inter = (ix_hi - ix_lo) * (iy_hi - iy_lo);
  const PrimExpr area_a = (a[1] - a[0]) * (a[3] - a[2]), area_b = (b[1] - b[0]) * (b[3] - b[2]);
  const PrimExpr uni = area_a + area_b - inter;
  return ix_hi > ix_lo && iy_hi > iy_lo && inter > zero && area_a > zero && area_b > zero && uni > zero &&
         inter / uni > thr;
}

}  // namespace

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, const Tensor& max_output_boxes_per_class,
                           const Tensor& iou_threshold, const Tensor& score_threshold, bool center_point_box,
                           bool has_score_threshold) {
  const std::vector<int64_t> bs = ConstShape(boxes), ss = ConstShape(scores);
  TESSERA_CHECK(bs.size() == 3 && bs[2] == 4, "non_max_suppression: boxes must be [batches, boxes, 4], got ",
                ShapeString(bs));
  TESSERA_CHECK(ss.size() == 3 && ss[0] == bs[0] && ss[2] == bs[1],
                "non_max_suppression: scores must be [batches, classes, boxes] = [", bs[0], ", C, ", bs[1], "], got ",
                ShapeString(ss));
  TESSERA_CHECK(boxes.dtype().is_floating() && scores.dtype() == boxes.dtype(),
                "non_max_suppression: boxes and scores must share a float dtype, got ", boxes.dtype().str(), " and ",
                scores.dtype().str());
  CheckScalar(max_output_boxes_per_class, "max_output_boxes_per_class");
  CheckScalar(iou_threshold, "iou_threshold");
  CheckScalar(score_threshold, "score_threshold");
  const DataType ft = boxes.dtype() == DataType::Float(64) ? boxes.dtype() : DataType::Float(32);
  const int64_t n = bs[1], classes = ss[1], pairs = ss[0] * ss[1];
  // Per (batch, class) row: the candidates and their scores for the merge sort, and the extents of
  // the boxes kept so far.
  const MergeSortScratch sort = MergeSortScratch::Make("nms", pairs, n, scores.dtype());
  const Buffer kept_ext = Buffer::make("nms_kept_extents", ft, MakeShape({pairs, std::max<int64_t>(n, 1), 4}));
  auto body = [&](const std::vector<Buffer>& in, const Buffer& out) {
    auto scalar = [&](const Buffer& buf, DataType t) {
      return ir::cast(t, Load(buf, std::vector<PrimExpr>(buf->shape.size(), Index(0))));
    };
    const PrimExpr iou_thr = scalar(in[3], ft), score_thr = scalar(in[4], ft), max_out = scalar(in[2], kI64);
    Var bc("bc", DataType::Int(32)), p("p", DataType::Int(32)), t("t", DataType::Int(32)), j("j", DataType::Int(32));
    const PrimExpr b = ir::floordiv(bc, Index(classes)), c = ir::floormod(bc, Index(classes));
    auto score = [&](const PrimExpr& box) { return Load(in[1], {b, c, box}); };
    auto box_at = [&](const PrimExpr& box) {
      std::vector<PrimExpr> v;
      for (int k = 0; k < 4; ++k) v.push_back(ir::cast(ft, Load(in[0], {b, box, Index(k)})));
      return v;
    };
    // Per pair: the number of candidates, of kept boxes, and whether the candidate tested is
    // suppressed (local state).
    Stmt per_pair = WithLocal("nms_state", DataType::Int(32), 3, [&](const Buffer& state) {
      const PrimExpr n_cand = Load(state, {Index(0)}), n_kept = Load(state, {Index(1)});
      const PrimExpr suppressed = Load(state, {Index(2)});
      // 1. The candidates (score > score_threshold; every box without one), in box order.
      const PrimExpr candidate = has_score_threshold ? ir::cast(ft, score(p)) > score_thr : ir::make_const(DataType::Bool(), 1);
      Stmt gather = Loop(p, Index(n), If(candidate, tir::SeqStmtNode::make({Store(sort.a, p, {bc, n_cand}),
                                                                             Store(sort.ka, score(p), {bc, n_cand}),
                                                                             Store(state, n_cand + Index(1), {Index(0)})})));
      // 2. Sorted by descending score, equal scores by box index (the reference's order).
      auto before = [](PrimExpr s1, PrimExpr p1, PrimExpr s2, PrimExpr p2) { return s1 > s2 || (s1 == s2 && p1 < p2); };
      auto [sort_stmt, sorted] = MergeSortRow(sort, bc, n_cand, n, before);
      // 3. Greedy: each candidate in order against the boxes kept so far, whose extents `kept_ext`
      // holds (out[.., s] - 1 are their indices). The reference stops at the first suppressing box;
      // here the rest of the loop skips the test.
      const PrimExpr box = Load(sorted, {bc, t});
      Extents cand;  // the candidate's extents, bound once per candidate
      std::vector<Var> cand_vars;
      for (int k = 0; k < 4; ++k) {
        cand_vars.emplace_back("e" + std::to_string(k), ft);
        cand.push_back(cand_vars.back());
      }
      Extents kept_j;
      for (int k = 0; k < 4; ++k) kept_j.push_back(Load(kept_ext, {bc, j, Index(k)}));
      Stmt test = Loop(j, n_kept, If(suppressed == Index(0),
                                     If(Suppresses(kept_j, cand, iou_thr), Store(state, Index(1), {Index(2)}))));
      std::vector<Stmt> keep_seq = {Store(out, box + Index(1), {b, c, n_kept})};
      for (int k = 0; k < 4; ++k) keep_seq.push_back(Store(kept_ext, cand[k], {bc, n_kept, Index(k)}));
      keep_seq.push_back(Store(state, n_kept + Index(1), {Index(1)}));
      Stmt per_candidate = tir::SeqStmtNode::make({Store(state, Index(0), {Index(2)}), test,
                                                   If(suppressed == Index(0), tir::SeqStmtNode::make(keep_seq))});
      const Extents ext = ExtentsOf(box_at(box), center_point_box);
      for (int k = 4; k-- > 0;) per_candidate = tir::LetStmtNode::make(cand_vars[k], ext[k], per_candidate);
      Stmt greedy = Loop(t, n_cand, If(ir::cast(kI64, n_kept) < max_out, per_candidate));
      Var z("z", DataType::Int(32));
      return tir::SeqStmtNode::make({Store(state, Index(0), {Index(0)}), Store(state, Index(0), {Index(1)}),
                                     Loop(z, Index(n), Store(out, Index(0), {b, c, z})), gather, sort_stmt, greedy});
    });
    return Loop(bc, Index(pairs), per_pair, tir::ForKind::kParallel);
  };
  return te::extern_op(MakeShape(ss), DataType::Int(32),
                       {boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold}, body, "T_nms",
                       "extern", {sort.a, sort.b, sort.ka, sort.kb, kept_ext});
}

Tensor non_max_suppression_indices(const Tensor& selected, const Tensor& kept) {
  TESSERA_CHECK(selected.shape().size() == 2 && IsConst(selected.shape()[0], 3) && selected.dtype() == kI64,
                "non_max_suppression: the selected coordinates must be int64 [3, K], got ", ShapeString(selected.shape()));
  TESSERA_CHECK(kept.shape().size() == 3, "non_max_suppression: the kept boxes must be [B, C, N]");
  const PrimExpr k = selected.shape()[1];
  return te::compute(
      {k, Index(3)},
      [&](const std::vector<Var>& i) {
        auto coord = [&](int r) { return ir::cast(DataType::Int(32), selected({Index(r), i[0]})); };
        const PrimExpr box = ir::cast(kI64, kept({coord(0), coord(1), coord(2)}) - Index(1));
        return ir::select(PrimExpr(i[1]) == Index(2), box, selected({ir::min(PrimExpr(i[1]), Index(1)), i[0]}));
      },
      "T_nms_indices", tag::kInjective);
}

}  // namespace tessera::topi
