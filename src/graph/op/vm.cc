// Ops that only the VM runs (runtime/vm.h; driver/vm_codegen.h):
//   vm.fatal(x) -> Tensor[shape, dtype]: the run fails with `message` (UserError) when it is reached,
//     as the Relay VM's Fatal instruction. The importer puts it in an If branch that cannot run
//     with the compiled shapes (ONNX Runtime fails at run time there too). Its argument only
//     keeps it from being folded or hoisted out of the branch; its type is its attrs' (the
//     other branch's). attrs: message (string), shape (ints), dtype (string). Opaque; no compute.
//
// Data-dependent shapes (a shape operand computed at run time; Relay's shape functions): the
// output's dims are symbols (attrs "symbols", comma-separated) that the VM binds from the values of
// a 1-D int64 shape operand (LoadShape), checked >= 0 there; VMCodegen emits the LoadShape.
//   vm.reshape_shape(x, s) -> Tensor[(r,), int64]: ONNX Reshape's shape s (int64 [r]) resolved
//     against x's shape: 0 copies x's dim (unless attr allowzero = 1), -1 is the element count over
//     the product of the others. A kernel (a shape function). Opaque.
//   vm.reshape(x, shape) -> Tensor[(symbols...), x.dtype]: x viewed with the shape's values
//     (ReshapeTensor: no kernel, no copy; the VM checks the element count). Opaque.
//   vm.full(shape) -> Tensor[(symbols...), dtype]: every element `value` (attrs value: a double for
//     a float dtype, an int64 otherwise; dtype: string); ONNX ConstantOfShape with a run-time shape.
//     Opaque.
//   vm.reduce_shape(x, axes) -> Tensor[(n,), int64]: the shape of reducing x (rank r) over the
//     run-time axes (int64 [k], in [-r, r); empty: every axis, or none with attr noop_with_empty_axes
//     = 1): with attr keepdims = 1 (n = r) each reduced dim is 1, with keepdims = 0 (n = r - k, or 0
//     for an empty k) the reduced dims are dropped. An axis out of range fails the kernel
//     (kKernelIndexOutOfRange, naming attr source: the model node). A kernel (a shape function). Opaque.
//   vm.unsqueeze_shape(x, axes) -> Tensor[(r + k,), int64]: x's shape with a 1 inserted at each
//     run-time axis (int64 [k], in [-(r + k), r + k); out of range fails naming attr source).
//   vm.broadcast_shape(x, shape) -> Tensor[(max(r, n),), int64]: numpy broadcasting of x's shape and
//     a run-time shape (int64 [n]; ONNX Expand); extents that do not broadcast give -1 (LoadShape
//     refuses it).
//   vm.tile_shape(x, repeats) -> Tensor[(r,), int64]: x's dims times the run-time repeats (int64 [r]).
//   vm.broadcast_to(x, shape), vm.tile(x, shape) -> Tensor[(symbols...), x.dtype]: x broadcast or
//     tiled to the shape those functions computed. Opaque.
//   vm.reduce(x, shape) -> Tensor[(symbols...), x.dtype]: x reduced to `shape` (vm.reduce_shape's
//     keepdims form: each dim 1 or x's): attr kind sum, mean, max, min, prod or logsumexp
//     (log(sum(exp(x - max))) + max). Opaque.
//   vm.slice_params(x, starts, ends, axes, steps) -> Tensor[(3, r), int64]: ONNX Slice-10/13 resolved
//     at run time against x's shape (rank r; the four operands int64 [k]): row 0 each dim's first
//     index, row 1 its step, row 2 its extent. A dim no axis names keeps 0, 1, x's extent; a negative
//     start / end counts from the end; both are clamped into [0, dim] for a positive step, [-1,
//     dim - 1] for a negative one; the extent is max(0, ceil((end - start) / step)). A step of 0 or
//     an axis outside [-r, r) or named twice fails the kernel (kKernelIndexOutOfRange, naming attr
//     source); so does,
//     with attr check_ends = 1 (TopK's run-time k), an end outside [0, dim], and with attr split_part
//     = 1 / 2 (a part of Split with run-time sizes) a part that is not 0 <= start <= end <= dim on
//     its axis, or (2, the last part) whose end is not dim. A kernel.
//   vm.slice(x, params, shape) -> Tensor[(symbols...), x.dtype]: out[i] = x[params[0] + i * params[1]]
//     over the extents `shape` (vm.slice_params' row 2). Opaque.
//   vm.pad_params(x, pads, axes) -> Tensor[(2, r), int64]: ONNX Pad-11/13/18's run-time pads (int64 [2k]:
//     the k begins, then the k ends) over the axes (int64 [k], in [-r, r); out of range fails the
//     kernel naming attr source): row 0 each dim's begin amount (0 where no axis names it), row 1
//     its output extent (x's + begin + end; negative amounts crop). An extent below 0, reflect
//     padding not below the axis' extent or edge / wrap padding of an empty axis (attr mode) gives
//     -1, which LoadShape refuses. A kernel.
//   vm.pad(x, params, value, shape) -> Tensor[(symbols...), x.dtype]: x padded by params' row 0 to the
//     extents `shape` (params' row 1) in attr mode (constant, reflect, edge, wrap; topi::
//     pad_mode_run_time); value: a tensor of one element, the constant. Opaque.
//   vm.range_shape(start, limit, delta) -> Tensor[(1,), int64]: ONNX Range's length max(0, ceil((limit -
//     start) / delta)) in float64 from three run-time scalars of one dtype; a delta of 0 gives -1, which
//     LoadShape refuses. A kernel (a shape function).
//   vm.range(start, delta, shape) -> Tensor[(symbol,), start.dtype]: out[i] = start + i * delta (float
//     types computed in float64 and rounded once, as the compile-time importer). Opaque.
//   vm.resize_shape(x, values) -> Tensor[(r,), int64]: the output shape of ONNX Resize / Upsample
//     with run-time `values` over attr axes (k distinct axes of x): attr kind "scales" (values float
//     [k]: out = floor(in * scale)) or "sizes" (values int64 [k]: out = size, or with attr
//     keep_aspect_ratio_policy not_larger / not_smaller one scale s = min / max of size / in and out =
//     max(1, floor(s * in + 0.5))). Dims no axis names keep x's. A scale that is not positive, an
//     output extent below 1 or above 2^53, a size below 1 or an empty resized input axis gives -1,
//     which LoadShape refuses. A kernel (a shape function).
//   vm.nonzero_count(x) -> Tensor[(1,), int64]: the number of non-zero elements of x (any dtype). A
//     kernel (a shape function).
//   vm.nonzero(x, count) -> Tensor[(max(r, 1), symbol), int64]: ONNX NonZero, column j the
//     coordinates of x's j-th non-zero element in row-major order (topi::nonzero); the one symbol
//     (attr "symbols") is bound from count. Opaque.
//   vm.unique_select(inverse, count) -> Tensor[(symbol,), int64]: ONNX Unique's indices (attr kind
//     "first": each distinct value's first occurrence) or counts (kind "counts") from the inverse
//     (int64 [n], unique_inverse) and the number of distinct values (int64 [1]), which binds the
//     symbol (topi::unique_select). Opaque.
//   vm.image_decode(encoded) -> Tensor[(h, w, c), uint8]: ONNX ImageDecoder of a 1-D uint8 stream
//     (runtime/image_decode.h), run by the VM's builtin image_decode (CallBuiltin; no kernel); attrs
//     pixel_format (RGB, BGR: c = 3; Grayscale: c = 1) and symbols (two: h and w, bound by the call).
//   vm.shape_of(x) -> Tensor[(r,), int64]: x's extents at run time (the VM's ShapeOf; no kernel): how
//     the importer turns a shape value of symbolic dims (ONNX Shape of a tensor whose extents the
//     run decides) into a tensor when it is used as data.
//
// Lists of tensors (the VM's ListNew / ListPush / ListLength / ListStack instructions, runtime/vm.h;
// no kernels: VMCodegen emits the instructions):
//   vm.list_new() -> TensorArray[Tensor[shape, dtype]]: an empty list; attrs dtype (string), shape (ints, -1
//     for a symbolic dim) and dim_symbols (the names of the -1 dims, comma-separated, in order).
//   vm.list_push(list, x) -> the list's type: the list with x appended (x of its element type).
//   vm.list_length(list) -> Tensor[(), int64].
//   vm.list_at(list, index) -> the element type: the element at `index` (an integer scalar; in
//     [-length, length), negative from the end).
//   vm.list_stack(list) -> Tensor[(length_symbol, element dims...), element dtype]: the elements
//     stacked along a new axis 0; attr length_symbol names the stacked length, which the VM binds.
//   vm.resize(x, values, roi, shape) -> Tensor[(symbols...), x.dtype]: topi::resize with run-time
//     operands: the output extents are `shape`'s values, the scales values (kind "scales") or the
//     extents over x's (kind "sizes", the policy's single scale); roi (float [2k]: starts, ends) is
//     read with coordinate_transformation_mode tf_crop_and_resize only. attrs: those of
//     image.resize but sizes / scales / roi_*, plus kind, keep_aspect_ratio_policy, symbols. Opaque.
#include <algorithm>

#include "op_groups.h"
#include "op_util.h"
#include "tessera/runtime/image_decode.h"

namespace tessera::graph::op {

namespace {

Type FatalRel(const std::vector<Type>& args, const Attrs& attrs) {
  TESSERA_CHECK(args.size() == 1 && args[0], "takes one argument");
  TESSERA_CHECK(attrs.Has("message") && attrs.Has("shape") && attrs.Has("dtype"),
                "needs attrs message, shape and dtype");
  for (int64_t d : attrs.GetInts("shape")) TESSERA_CHECK(d >= 0, "shape has a negative extent ", d);
  return TensorTypeNode::make(attrs.GetInts("shape"), DataType::Parse(attrs.GetString("dtype")));
}

// The output dims named by attr "symbols", one per element of a 1-D shape operand of length r.
Shape SymbolDims(const Attrs& attrs, const TensorTypeNode& shape) {
  TESSERA_CHECK(shape.ndim() == 1 && shape.shape[0].is_static() && shape.dtype == DataType::Int(64),
                "the shape operand must be a 1-D int64 tensor of static length, got ",
                TensorTypeNode::make(shape.shape, shape.dtype)->str());
  Shape out = SymbolsAttr(attrs);
  TESSERA_CHECK(static_cast<int64_t>(out.size()) == shape.shape[0].value(), "attr symbols '",
                attrs.GetString("symbols"), "' names ", out.size(), " dims for a shape of length ",
                shape.shape[0].value());
  return out;
}

// x's dtype over the shape operand's symbols, one per dim of x (vm.reduce, vm.slice, vm.pad, vm.resize).
Type SameRankSymbolic(const TensorTypeNode& x, const Attrs& attrs, const TensorTypeNode& shape) {
  Shape out = SymbolDims(attrs, shape);
  TESSERA_CHECK(static_cast<int64_t>(out.size()) == x.ndim(), "the shape has ", out.size(), " dims for a tensor of rank ",
                x.ndim());
  return TensorTypeNode::make(out, x.dtype);
}

Type ReshapeShapeRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& s = TensorArg(args, 1);
  TESSERA_CHECK(s.ndim() == 1 && s.shape[0].is_static() && (s.dtype == DataType::Int(64)),
                "the shape must be a 1-D int64 tensor of static length");
  TensorArg(args, 0);
  return TensorTypeNode::make(s.shape, DataType::Int(64));
}

Type VMReshapeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  return TensorTypeNode::make(SymbolDims(attrs, TensorArg(args, 1)), x.dtype);
}

Type FullRel(const std::vector<Type>& args, const Attrs& attrs) {
  return TensorTypeNode::make(SymbolDims(attrs, TensorArg(args, 0)), DataType::Parse(attrs.GetString("dtype")));
}

Type ReduceShapeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& axes = TensorArg(args, 1);
  TESSERA_CHECK(axes.ndim() == 1 && axes.shape[0].is_static() && axes.dtype == DataType::Int(64),
                "the axes must be a 1-D int64 tensor of static length");
  const int64_t k = axes.shape[0].value();
  int64_t n = x.ndim();
  if (attrs.GetInt("keepdims", 1) == 0) n = k == 0 ? (attrs.GetInt("noop_with_empty_axes", 0) ? x.ndim() : 0) : x.ndim() - k;
  TESSERA_CHECK(n >= 0, k, " axes for a tensor of rank ", x.ndim());
  return TensorTypeNode::make(std::vector<int64_t>{n}, DataType::Int(64));
}

Type VMReduceRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const std::string kind = attrs.GetString("kind");
  TESSERA_CHECK(kind == "sum" || kind == "mean" || kind == "max" || kind == "min" || kind == "prod" ||
                    kind == "logsumexp",
                "unknown reduction kind '", kind, "'");
  return SameRankSymbolic(x, attrs, TensorArg(args, 1));  // the keepdims form
}

// A shape function's result: int64 [n].
Type ShapeVector(int64_t n) { return TensorTypeNode::make(std::vector<int64_t>{n}, DataType::Int(64)); }

int64_t VectorLength(const TensorTypeNode& t, const char* what) {
  TESSERA_CHECK(t.ndim() == 1 && t.shape[0].is_static() && t.dtype == DataType::Int(64), what,
                " must be a 1-D int64 tensor of static length");
  return t.shape[0].value();
}

Type UnsqueezeShapeRel(const std::vector<Type>& args, const Attrs&) {
  return ShapeVector(TensorArg(args, 0).ndim() + VectorLength(TensorArg(args, 1), "the axes"));
}

Type BroadcastShapeRel(const std::vector<Type>& args, const Attrs&) {
  return ShapeVector(std::max(TensorArg(args, 0).ndim(), VectorLength(TensorArg(args, 1), "the shape")));
}

Type TileShapeRel(const std::vector<Type>& args, const Attrs&) {
  const int64_t r = TensorArg(args, 0).ndim();
  TESSERA_CHECK(VectorLength(TensorArg(args, 1), "the repeats") == r, "the repeats need one entry per dim of x");
  return ShapeVector(r);
}

// vm.broadcast_to / vm.tile: x's dtype, the shape operand's symbols (rank >= x's).
Type SymbolicLikeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  Shape out = SymbolDims(attrs, TensorArg(args, 1));
  TESSERA_CHECK(static_cast<int64_t>(out.size()) >= x.ndim(), "the shape has fewer dims than x");
  return TensorTypeNode::make(out, x.dtype);
}

Type SliceParamsRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const int64_t k = VectorLength(TensorArg(args, 1), "the starts");
  TESSERA_CHECK(VectorLength(TensorArg(args, 2), "the ends") == k && VectorLength(TensorArg(args, 3), "the axes") == k &&
                    VectorLength(TensorArg(args, 4), "the steps") == k,
                "starts, ends, axes and steps must have the same length");
  return TensorTypeNode::make(std::vector<int64_t>{3, x.ndim()}, DataType::Int(64));
}

Type VMSliceRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& params = TensorArg(args, 1);
  TESSERA_CHECK(params.ndim() == 2 && params.dtype == DataType::Int(64), "the params must be int64 [3, rank]");
  return SameRankSymbolic(x, attrs, TensorArg(args, 2));
}

Type PadParamsRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const int64_t k = VectorLength(TensorArg(args, 2), "the axes");
  TESSERA_CHECK(VectorLength(TensorArg(args, 1), "the pads") == 2 * k, "the pads need 2 entries per axis (", 2 * k,
                " for ", k, " axes)");
  const std::string mode = attrs.GetString("mode", "constant");
  TESSERA_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap", "unknown mode '", mode,
                "' (constant, reflect, edge, wrap)");
  return TensorTypeNode::make(std::vector<int64_t>{2, x.ndim()}, DataType::Int(64));
}

Type VMPadRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& params = TensorArg(args, 1);
  TESSERA_CHECK(params.ndim() == 2 && params.dtype == DataType::Int(64), "the params must be int64 [2, rank]");
  const TensorTypeNode& value = TensorArg(args, 2);
  TESSERA_CHECK(value.dtype == x.dtype, "the constant value has dtype ", value.dtype.str(), ", x ", x.dtype.str());
  return SameRankSymbolic(x, attrs, TensorArg(args, 3));
}

// Range's three scalars share a dtype (ONNX Range's T).
const TensorTypeNode& RangeScalars(const std::vector<Type>& args, std::initializer_list<size_t> which) {
  const TensorTypeNode& start = TensorArg(args, 0);
  for (size_t i : which) {
    const TensorTypeNode& t = TensorArg(args, i);
    TESSERA_CHECK(t.NumElements() == std::optional<int64_t>(1), "Range's operands must be scalars, got ",
                  ShapeStr(t.shape));
    TESSERA_CHECK(t.dtype == start.dtype, "Range's operands must share a dtype: ", start.dtype.str(), " and ",
                  t.dtype.str());
  }
  return start;
}

Type RangeShapeRel(const std::vector<Type>& args, const Attrs&) {
  RangeScalars(args, {0, 1, 2});
  return ShapeVector(1);
}

Type VMRangeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& start = RangeScalars(args, {0, 1});
  return TensorTypeNode::make(SymbolDims(attrs, TensorArg(args, 2)), start.dtype);
}

// The resized axes' count, checked against the run-time values (scales or sizes).
int64_t ResizeValues(const TensorTypeNode& x, const TensorTypeNode& values, const Attrs& attrs) {
  CheckResizeModeAttrs(x, attrs);
  const int64_t k = static_cast<int64_t>(attrs.GetInts("axes").size());
  const std::string kind = attrs.GetString("kind");
  TESSERA_CHECK(kind == "scales" || kind == "sizes", "attr kind must be scales or sizes, got '", kind, "'");
  TESSERA_CHECK(values.ndim() == 1 && values.shape[0].is_static() && values.shape[0].value() == k, "the ", kind,
                " must be a 1-D tensor of ", k, " values (one per resized axis), got ", ShapeStr(values.shape));
  TESSERA_CHECK(kind == "sizes" ? values.dtype == DataType::Int(64) : values.dtype.is_floating(), "the ", kind,
                " have dtype ", values.dtype.str(), " (sizes: int64; scales: a float type)");
  const std::string policy = attrs.GetString("keep_aspect_ratio_policy", "stretch");
  TESSERA_CHECK(policy == "stretch" || policy == "not_larger" || policy == "not_smaller",
                "unknown keep_aspect_ratio_policy '", policy, "' (stretch, not_larger, not_smaller)");
  return k;
}

Type ResizeShapeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  ResizeValues(x, TensorArg(args, 1), attrs);
  return ShapeVector(x.ndim());
}

Type VMResizeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const int64_t k = ResizeValues(x, TensorArg(args, 1), attrs);
  if (attrs.GetString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
    const TensorTypeNode& roi = TensorArg(args, 2);
    TESSERA_CHECK(roi.ndim() == 1 && roi.shape[0].is_static() && roi.shape[0].value() == 2 * k && roi.dtype.is_floating(),
                  "tf_crop_and_resize needs a float roi of ", 2 * k, " values (starts, then ends), got ",
                  roi.dtype.str(), " ", ShapeStr(roi.shape));
  }
  return SameRankSymbolic(x, attrs, TensorArg(args, 3));
}

Type NonZeroCountRel(const std::vector<Type>& args, const Attrs&) {
  TensorArg(args, 0);
  return ShapeVector(1);
}

Type VMNonZeroRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  Shape k = SymbolDims(attrs, TensorArg(args, 1));
  TESSERA_CHECK(k.size() == 1, "NonZero's output has one symbolic extent, attr symbols names ", k.size());
  return TensorTypeNode::make(Shape{Dim(std::max<int64_t>(x.ndim(), 1)), k[0]}, DataType::Int(64));
}

Type UniqueSelectRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& inverse = TensorArg(args, 0);
  TESSERA_CHECK(inverse.ndim() == 1 && inverse.dtype == DataType::Int(64), "the inverse must be int64 [n], got ",
                inverse.dtype.str(), " ", ShapeStr(inverse.shape));
  const std::string kind = attrs.GetString("kind");
  TESSERA_CHECK(kind == "first" || kind == "counts", "attr kind must be first or counts, got '", kind, "'");
  return TensorTypeNode::make(SymbolDims(attrs, TensorArg(args, 1)), DataType::Int(64));
}

const ListTypeNode& ListArg(const std::vector<Type>& args, size_t i) {
  TESSERA_CHECK(i < args.size() && args[i], "missing argument ", i);
  const auto* l = args[i]->as<ListTypeNode>();
  TESSERA_CHECK(l, "argument ", i, " must be a list of tensors, got ", args[i]->str());
  return *l;
}

Type ListNewRel(const std::vector<Type>&, const Attrs& attrs) {
  const std::vector<int64_t>& dims = attrs.GetInts("shape");
  const std::vector<Dim> names = attrs.Has("dim_symbols") ? SymbolsAttr(attrs, "dim_symbols") : std::vector<Dim>{};
  Shape shape;
  size_t next = 0;
  for (int64_t d : dims) {
    TESSERA_CHECK(d >= -1, "invalid element extent ", d);
    if (d >= 0) {
      shape.push_back(Dim(d));
      continue;
    }
    TESSERA_CHECK(next < names.size(), "the element shape has more -1 dims than attr dim_symbols names");
    shape.push_back(names[next++]);
  }
  TESSERA_CHECK(next == names.size(), "attr dim_symbols names more dims than the element shape has -1 dims");
  return ListTypeNode::make(TensorTypeNode::make(shape, DataType::Parse(attrs.GetString("dtype"))));
}

Type ListPushRel(const std::vector<Type>& args, const Attrs&) {
  const ListTypeNode& list = ListArg(args, 0);
  const TensorTypeNode& x = TensorArg(args, 1);
  TESSERA_CHECK(StructuralEqual(list.element, TensorTypeNode::make(x.shape, x.dtype)), "the value pushed is ",
                TensorTypeNode::make(x.shape, x.dtype)->str(), " but the list holds ", list.element->str());
  return args[0];
}

Type ShapeOfRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& x = TensorArg(args, 0);
  return TensorTypeNode::make(std::vector<int64_t>{x.ndim()}, DataType::Int(64));
}

Type ImageDecodeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& encoded = TensorArg(args, 0);
  TESSERA_CHECK(encoded.ndim() == 1 && encoded.dtype == DataType::UInt(8), "the encoded stream must be 1-D uint8, got ",
                encoded.dtype.str(), " ", ShapeStr(encoded.shape));
  const Shape hw = SymbolsAttr(attrs);
  TESSERA_CHECK(hw.size() == 2, "attr symbols must name two dims (height, width), got ", hw.size());
  const int channels = runtime::ChannelsOf(runtime::ParsePixelFormat(attrs.GetString("pixel_format")));
  return TensorTypeNode::make(Shape{hw[0], hw[1], Dim(channels)}, DataType::UInt(8));
}

Type ListLengthRel(const std::vector<Type>& args, const Attrs&) {
  ListArg(args, 0);
  return TensorTypeNode::make(Shape{}, DataType::Int(64));
}

Type ListAtRel(const std::vector<Type>& args, const Attrs&) {
  const ListTypeNode& list = ListArg(args, 0);
  const TensorTypeNode& index = TensorArg(args, 1);
  TESSERA_CHECK(index.dtype.is_int() && index.NumElements() == std::optional<int64_t>(1),
                "the position must be one integer, got ", index.dtype.str(), " ", ShapeStr(index.shape));
  return list.element;
}

Type ListStackRel(const std::vector<Type>& args, const Attrs& attrs) {
  const auto* element = ListArg(args, 0).element->as<TensorTypeNode>();
  const std::string& length = attrs.GetString("length_symbol");
  TESSERA_CHECK(!length.empty(), "attr length_symbol must name the stacked length");
  Shape shape{Dim::Symbolic(length)};
  shape.insert(shape.end(), element->shape.begin(), element->shape.end());
  return TensorTypeNode::make(shape, element->dtype);
}

}  // namespace

void RegisterVMOps(OpRegistry& r) {
  r.Register("vm.range_shape", 3, kOpaque, RangeShapeRel, "ONNX Range's run-time length: int64 [1]. attrs: source");
  r.Register("vm.range", 3, kOpaque, VMRangeRel, "start + i * delta over a run-time length. attrs: symbols");
  r.Register("vm.pad_params", 3, kOpaque, PadParamsRel,
             "ONNX Pad's run-time pads over run-time axes: int64 [2, rank] (begins, output extents). attrs: mode, "
             "source");
  r.Register("vm.pad", 4, kOpaque, VMPadRel, "x padded by run-time amounts. attrs: mode, symbols");
  r.Register("vm.resize_shape", 2, kOpaque, ResizeShapeRel,
             "ONNX Resize's output shape from run-time scales or sizes: int64 [rank]. attrs: axes, kind, "
             "keep_aspect_ratio_policy");
  r.Register("vm.resize", 4, kOpaque, VMResizeRel,
             "x resized with run-time scales or sizes (and roi). attrs: image.resize's but sizes, scales, roi_*; kind, "
             "keep_aspect_ratio_policy, symbols");
  r.Register("vm.slice_params", 5, kOpaque, SliceParamsRel,
             "ONNX Slice's run-time starts, ends, axes, steps resolved per dim: int64 [3, rank]. attrs: source, "
             "check_ends, split_part");
  r.Register("vm.slice", 3, kOpaque, VMSliceRel, "x sliced at run-time starts and steps. attrs: symbols");
  r.Register("vm.unsqueeze_shape", 2, kOpaque, UnsqueezeShapeRel, "x's shape with 1s inserted at run-time axes");
  r.Register("vm.broadcast_shape", 2, kOpaque, BroadcastShapeRel, "x's shape broadcast with a run-time shape");
  r.Register("vm.tile_shape", 2, kOpaque, TileShapeRel, "x's shape times run-time repeats");
  r.Register("vm.broadcast_to", 2, kOpaque, SymbolicLikeRel, "x broadcast to a run-time shape. attrs: symbols");
  r.Register("vm.tile", 2, kOpaque, SymbolicLikeRel, "x tiled to a run-time shape. attrs: symbols");
  r.Register("vm.reduce_shape", 2, kOpaque, ReduceShapeRel,
             "the shape of a reduction over run-time axes. attrs: keepdims, noop_with_empty_axes");
  r.Register("vm.reduce", 2, kOpaque, VMReduceRel,
             "x reduced to a run-time shape (its values bind attr symbols). attrs: kind, symbols");
  r.Register("vm.reshape_shape", 2, kOpaque, ReshapeShapeRel,
             "ONNX Reshape's run-time shape resolved against x's shape (0 copies, -1 infers). attrs: allowzero");
  r.Register("vm.reshape", 2, kOpaque, VMReshapeRel,
             "x viewed with a run-time shape (its values bind attr symbols). attrs: symbols");
  r.Register("vm.full", 1, kOpaque, FullRel,
             "a tensor of a run-time shape (its values bind attr symbols) filled with value. attrs: symbols, value, "
             "dtype");
  r.Register("vm.nonzero_count", 1, kOpaque, NonZeroCountRel, "the number of non-zero elements: int64 [1]");
  r.Register("vm.nonzero", 2, kOpaque, VMNonZeroRel,
             "ONNX NonZero: int64 [max(rank, 1), count], the coordinates of the non-zero elements. attrs: symbols");
  r.Register("vm.unique_select", 2, kOpaque, UniqueSelectRel,
             "ONNX Unique's indices or counts per distinct value: int64 [count]. attrs: kind (first, counts), symbols");
  r.Register("vm.list_new", 0, kOpaque, ListNewRel,
             "an empty list of tensors (the VM's ListNew). attrs: dtype, shape (-1: symbolic), dim_symbols");
  r.Register("vm.list_push", 2, kOpaque, ListPushRel, "the list with a tensor appended (the VM's ListPush)");
  r.Register("vm.shape_of", 1, kOpaque, ShapeOfRel, "x's extents at run time: int64 [rank] (the VM's ShapeOf)");
  r.Register("vm.image_decode", 1, kOpaque, ImageDecodeRel,
             "ONNX ImageDecoder: uint8 [h, w, c] (the VM's builtin image_decode). attrs: pixel_format, symbols");
  r.Register("vm.list_length", 1, kOpaque, ListLengthRel, "the list's length: int64 [] (the VM's ListLength)");
  r.Register("vm.list_at", 2, kOpaque, ListAtRel, "the list's element at a run-time position (the VM's ListAt)");
  r.Register("vm.list_stack", 1, kOpaque, ListStackRel,
             "the list's tensors stacked along a new axis 0 (the VM's ListStack). attrs: length_symbol");
  r.Register("vm.fatal", 1, kOpaque, FatalRel,
             "fails the run with `message` when reached (an If branch that cannot run). attrs: message, shape, dtype");
}

}  // namespace tessera::graph::op
