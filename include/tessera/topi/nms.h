// ONNX NonMaxSuppression (opset 10/11; https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html,
// semantics of the reference implementation onnx/reference/ops/op_non_max_suppression.py), in
// three steps that the importer joins (frontend/onnx/ops_data_dependent.cc):
//   1. order = topk_indices(scores, N, axis 2, largest): per batch and class the boxes by
//      descending score, ties by ascending index (the reference's order);
//   2. keep = non_max_suppression_keep(...): greedy selection along that order (below);
//   3. the coordinates of keep's non-zero elements (topi::nonzero, a count the VM binds), mapped
//      back to box indices by non_max_suppression_indices.
// Static shapes: boxes [B, N, 4], scores [B, C, N].
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// Greedy NMS along the score order: int32 [B, C, N], keep[b, c, t] = 1 when box order[b, c, t]
/// is selected for class c of batch b. A box is selected when it is a candidate (its score >
/// score_threshold; every box when !has_score_threshold), fewer than max_output_boxes_per_class
/// boxes were selected before it, and no box selected before it overlaps it with IoU >
/// iou_threshold. IoU as the reference's suppress_by_iou: boxes [y1, x1, y2, x2] (corners in any
/// order) or, with center_point_box, [x_center, y_center, width, height]; an empty intersection, a
/// box of area <= 0 or a union <= 0 never suppresses. Computed in float32 (float64 for float64
/// boxes).
///
/// An extern stage (te::extern_op) that runs the reference's greedy loop per batch and class, the
/// (batch, class) pairs in parallel: each candidate in score order is tested against the boxes
/// kept so far, at most max_output_boxes_per_class of them: O(N * max_output) per pair, as ONNX
/// Runtime.
///
/// boxes: float [B, N, 4]; scores: [B, C, N] of boxes' dtype; order: int64 [B, C, N];
/// max_output_boxes_per_class: an integer tensor of one element (<= 0 selects nothing);
/// iou_threshold, score_threshold: float tensors of one element. UserError on other shapes.
Tensor non_max_suppression_keep(const Tensor& boxes, const Tensor& scores, const Tensor& order,
                                const Tensor& max_output_boxes_per_class, const Tensor& iou_threshold,
                                const Tensor& score_threshold, bool center_point_box, bool has_score_threshold);

/// ONNX's selected_indices, int64 [K, 3] (batch, class, box), from keep's non-zero coordinates
/// `selected` (int64 [3, K]: batch, class, position in the order) and the order.
Tensor non_max_suppression_indices(const Tensor& selected, const Tensor& order);

}  // namespace tessera::topi
