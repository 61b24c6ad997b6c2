// Image ops: image.resize (ONNX Resize and Upsample; the computation is topi::resize),
// image.grid_sample (ONNX GridSample; topi::grid_sample), and the steps of ONNX NonMaxSuppression
// (topi/nms.h): vision.nms(boxes [B, N, 4], scores [B, C, N], max_output, iou_threshold,
// score_threshold: one element each) -> int32 [B, C, N] (1 + the selected boxes' indices per batch
// and class, 0 after), and vision.nms_indices(selected int64 [3, K], kept) -> int64 [K, 3].
#include <set>

#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

void CheckResizeModeAttrs(const TensorTypeNode& x, const Attrs& attrs) {
  const std::string mode = attrs.GetString("mode", "nearest");
  TESSERA_CHECK(mode == "nearest" || mode == "linear" || mode == "cubic", "unknown mode '", mode,
                "' (nearest, linear, cubic)");
  TESSERA_CHECK(mode == "nearest" || !x.dtype.is_bool(), mode, " interpolation of a bool tensor");
  static const std::set<std::string> kCoordinateModes = {
      "half_pixel",         "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
      "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  const std::string coord = attrs.GetString("coordinate_transformation_mode", "half_pixel");
  TESSERA_CHECK(kCoordinateModes.count(coord), "unknown coordinate_transformation_mode '", coord,
                "' (half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
                "tf_half_pixel_for_nn, tf_crop_and_resize)");
  static const std::set<std::string> kNearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                                      "simple"};
  const std::string nearest = attrs.GetString("nearest_mode", "round_prefer_floor");
  TESSERA_CHECK(kNearestModes.count(nearest), "unknown nearest_mode '", nearest,
                "' (round_prefer_floor, round_prefer_ceil, floor, ceil)");
  std::set<int64_t> seen;
  for (int64_t axis : attrs.GetInts("axes")) {
    TESSERA_CHECK(axis >= 0 && axis < x.ndim(), "axis ", axis, " is out of range for rank ", x.ndim());
    TESSERA_CHECK(seen.insert(axis).second, "axis ", axis, " is listed twice");
  }
}

namespace {

// x: any tensor. attrs: axes (the resized axes), sizes (their output extents), scales (the
// coordinate-transform scale of each), mode, coordinate_transformation_mode, nearest_mode,
// cubic_coeff_a, exclude_outside, extrapolation_value, antialias, roi_start / roi_end.
Type ResizeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  CheckResizeModeAttrs(x, attrs);
  const std::vector<int64_t>& axes = attrs.GetInts("axes");
  const std::vector<int64_t>& sizes = attrs.GetInts("sizes");
  TESSERA_CHECK(sizes.size() == axes.size() && attrs.GetDoubles("scales").size() == axes.size(), sizes.size(),
                " sizes and ", attrs.GetDoubles("scales").size(), " scales for ", axes.size(), " resized axes");
  if (attrs.GetString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
    TESSERA_CHECK(attrs.Has("roi_start") && attrs.Has("roi_end") &&
                      attrs.GetDoubles("roi_start").size() == axes.size() &&
                      attrs.GetDoubles("roi_end").size() == axes.size(),
                  "tf_crop_and_resize needs a roi start and end for each of the ", axes.size(), " resized axes");
  }
  for (double s : attrs.GetDoubles("scales")) TESSERA_CHECK(s > 0, "scales must be > 0, got ", s);
  Shape out = x.shape;
  for (size_t a = 0; a < axes.size(); ++a) {
    TESSERA_CHECK(sizes[a] >= 1, "output extent ", sizes[a], " of axis ", axes[a], " must be >= 1");
    out[axes[a]] = Dim(sizes[a]);
  }
  return TensorTypeNode::make(out, x.dtype);
}

// x [N, C, D1..Dr], grid [N, O1..Or, r] -> [N, C, O1..Or]. attrs: mode, padding_mode, align_corners.
Type GridSampleRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& g = TensorArg(args, 1);
  TESSERA_CHECK(x.dtype.is_floating() && g.dtype.is_floating(), "x and grid must be float tensors, got ", x.dtype.str(),
                " and ", g.dtype.str());
  const int64_t r = x.ndim() - 2;
  TESSERA_CHECK(r >= 1, "x must be [N, C, D1, ...], got ", ShapeStr(x.shape));
  TESSERA_CHECK(g.ndim() == r + 2 && g.shape.back() == Dim(r), "grid must be [N, O1..O", r, ", ", r, "], got ",
                ShapeStr(g.shape));
  const std::string mode = attrs.GetString("mode", "linear"), pad = attrs.GetString("padding_mode", "zeros");
  TESSERA_CHECK(mode == "nearest" || mode == "linear" || mode == "cubic", "unknown mode '", mode,
                "' (nearest, linear, cubic)");
  TESSERA_CHECK(pad == "zeros" || pad == "border" || pad == "reflection", "unknown padding_mode '", pad,
                "' (zeros, border, reflection)");
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), g.shape.begin() + 1, g.shape.end() - 1);
  return TensorTypeNode::make(out, x.dtype);
}

Type NmsRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& boxes = TensorArg(args, 0);
  const TensorTypeNode& scores = TensorArg(args, 1);
  TESSERA_CHECK(boxes.ndim() == 3 && boxes.shape[2] == Dim(4) && boxes.dtype.is_floating(),
                "boxes must be float [batches, boxes, 4], got ", boxes.dtype.str(), " ", ShapeStr(boxes.shape));
  TESSERA_CHECK(scores.ndim() == 3 && scores.shape[0] == boxes.shape[0] && scores.shape[2] == boxes.shape[1] &&
                    scores.dtype == boxes.dtype,
                "scores must be ", boxes.dtype.str(), " [batches, classes, boxes] for boxes ", ShapeStr(boxes.shape),
                ", got ", scores.dtype.str(), " ", ShapeStr(scores.shape));
  const char* names[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i = 2; i < 5; ++i) {
    const TensorTypeNode& t = TensorArg(args, i);
    TESSERA_CHECK(t.NumElements() == std::optional<int64_t>(1), names[i - 2], " must have one element, got ",
                  ShapeStr(t.shape));
    TESSERA_CHECK(i == 2 ? t.dtype.is_int() : t.dtype.is_floating(), names[i - 2], " has dtype ", t.dtype.str());
  }
  return TensorTypeNode::make(scores.shape, DataType::Int(32));
}

Type NmsIndicesRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& selected = TensorArg(args, 0);
  TESSERA_CHECK(selected.ndim() == 2 && selected.shape[0] == Dim(3) && selected.dtype == DataType::Int(64),
                "the selected coordinates must be int64 [3, K], got ", ShapeStr(selected.shape));
  TESSERA_CHECK(TensorArg(args, 1).ndim() == 3, "the kept boxes must be [batches, classes, boxes]");
  return TensorTypeNode::make(Shape{selected.shape[1], Dim(3)}, DataType::Int(64));
}

}  // namespace

void RegisterImageOps(OpRegistry& r) {
  r.Register("image.resize", 1, kInjective, ResizeRel,
             "ONNX Resize / Upsample: nearest, linear or cubic interpolation over `axes` (topi/image/resize.h). "
             "attrs: axes, sizes, scales, mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a, "
             "exclude_outside, extrapolation_value, antialias, roi_start, roi_end");
  r.Register("image.grid_sample", 2, kInjective, GridSampleRel,
             "ONNX GridSample: x sampled at the normalised grid coordinates (topi/image/grid_sample.h). "
             "attrs: mode, padding_mode, align_corners");
  r.Register("vision.nms", 5, kOpaque, NmsRel,
             "ONNX NonMaxSuppression's greedy selection per batch and class (topi/nms.h): int32 [B, C, N], 1 + the "
             "selected boxes in order, 0 after. attrs: center_point_box, has_score_threshold");
  r.Register("vision.nms_indices", 2, kInjective, NmsIndicesRel,
             "ONNX NonMaxSuppression's selected_indices from the kept positions' coordinates: int64 [K, 3]");
}

}  // namespace tessera::graph::op
