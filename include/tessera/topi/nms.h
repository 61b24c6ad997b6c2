// ONNX NonMaxSuppression (opset 10/11; https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html,
// semantics of the reference implementation onnx/reference/ops/op_non_max_suppression.py), in
// steps that the importer joins (frontend/onnx/ops_data_dependent.cc):
//   1. kept = non_max_suppression(...): per batch and class, the selected boxes in order;
//   2. the coordinates of kept's non-zero slots (topi::nonzero, a count the VM binds): batch, class,
//      slot, in the order ONNX lists the selection;
//   3. non_max_suppression_indices maps them to ONNX's selected_indices.
// Static shapes: boxes [B, N, 4], scores [B, C, N].
#pragma once

#include "tessera/topi/util.h"

namespace tessera::topi {

/// Greedy NMS per batch and class: int32 [B, C, N], kept[b, c, s] = 1 + the box index of the s-th
/// box selected for class c of batch b, 0 after the last. The candidates (score > score_threshold;
/// every box when !has_score_threshold) are taken in order of descending score, equal scores by
/// ascending box index; a candidate is selected while fewer than max_output_boxes_per_class boxes
/// are, unless a selected box overlaps it with IoU > iou_threshold. IoU as the reference's
/// suppress_by_iou: boxes [y1, x1, y2, x2] (corners in any order) or, with center_point_box,
/// [x_center, y_center, width, height]; an empty intersection, a box of area <= 0 or a union <= 0
/// never suppresses. Computed in float32 (float64 for float64 boxes).
///
/// An extern stage (te::extern_op) that runs the reference's loop for the (batch, class) pairs in
/// parallel: gather the candidates, merge-sort them (O(N log N)), test each against the boxes
/// selected so far (O(N * max_output)), as ONNX Runtime.
///
/// boxes: float [B, N, 4]; scores: [B, C, N] of boxes' dtype; max_output_boxes_per_class: an
/// integer tensor of one element (<= 0 selects nothing); iou_threshold, score_threshold: float
/// tensors of one element. UserError on other shapes.
Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, const Tensor& max_output_boxes_per_class,
                           const Tensor& iou_threshold, const Tensor& score_threshold, bool center_point_box,
                           bool has_score_threshold);

/// ONNX's selected_indices, int64 [K, 3] (batch, class, box), from the coordinates `selected`
/// (int64 [3, K]: batch, class, slot) of kept's non-zero slots.
Tensor non_max_suppression_indices(const Tensor& selected, const Tensor& kept);

}  // namespace tessera::topi
