// Index-mapping ops of the ONNX spec: broadcast_to (Expand), tile, pad (with a mode),
// gather_elements, gather_nd, trilu; the scatters scatter_elements / scatter_nd; and the arg
// reductions argmax / argmin (int64 output).
#include <set>

#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

Shape ToShape(const std::vector<int64_t>& v) {
  Shape s;
  for (int64_t d : v) s.emplace_back(d);
  return s;
}

Type BroadcastToRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  return TensorTypeNode::make(BroadcastShapes(x.shape, ToShape(attrs.GetInts("shape"))), x.dtype);
}

Type TileRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const std::vector<int64_t>& reps = attrs.GetInts("reps");
  TESSERA_CHECK(static_cast<int64_t>(reps.size()) == x.ndim(), "reps has ", reps.size(),
                " entries for a tensor of rank ", x.ndim());
  Shape out;
  for (size_t d = 0; d < reps.size(); ++d) {
    TESSERA_CHECK(reps[d] >= 0, "reps must be >= 0, got ", reps[d]);
    out.push_back(x.shape[d].is_static() ? Dim(x.shape[d].value() * reps[d]) : Dim::Any());
  }
  return TensorTypeNode::make(out, x.dtype);
}

Type PadRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const std::vector<int64_t>& before = attrs.GetInts("pad_before");
  const std::vector<int64_t>& after = attrs.GetInts("pad_after");
  TESSERA_CHECK(static_cast<int64_t>(before.size()) == x.ndim() && static_cast<int64_t>(after.size()) == x.ndim(),
                "pad_before / pad_after need one entry per axis (rank ", x.ndim(), ")");
  std::string mode = attrs.GetString("mode", "constant");
  TESSERA_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap", "unknown pad mode '",
                mode, "'");
  Shape out;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (!x.shape[d].is_static()) {
      out.push_back(Dim::Any());
      continue;
    }
    int64_t n = x.shape[d].value() + before[d] + after[d];
    TESSERA_CHECK(n >= 0, "padding makes axis ", d, " negative (", n, ")");
    out.push_back(Dim(n));
  }
  return TensorTypeNode::make(out, x.dtype);
}

Type GatherElementsRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& idx = TensorArg(args, 1);
  TESSERA_CHECK(idx.dtype.is_int(), "indices must be int32 or int64, got ", idx.dtype.str());
  TESSERA_CHECK(x.ndim() == idx.ndim(), "data rank ", x.ndim(), " != indices rank ", idx.ndim());
  NormalizeAxis(attrs.GetInt("axis", 0), x.ndim());
  return TensorTypeNode::make(idx.shape, x.dtype);
}

// x, k (one int64 value).
Type TriluRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& k = TensorArg(args, 1);
  TESSERA_CHECK(x.ndim() >= 2, "needs a tensor of rank >= 2, got ", ShapeStr(x.shape));
  TESSERA_CHECK(k.dtype.is_int() && k.ndim() <= 1, "k must be an int64 scalar, got ", k.dtype.str(), " ",
                ShapeStr(k.shape));
  return TensorTypeNode::make(x.shape, x.dtype);
}

// data, indices [.., k]: indices.shape[:-1] + data.shape[batch_dims + k:].
Type GatherNDRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& idx = TensorArg(args, 1);
  TESSERA_CHECK(idx.dtype.is_int(), "indices must be int32 or int64, got ", idx.dtype.str());
  const int64_t b = attrs.GetInt("batch_dims", 0), r = x.ndim(), q = idx.ndim();
  TESSERA_CHECK(q >= 1 && idx.shape.back().is_static(), "indices need rank >= 1 and a static last dim");
  const int64_t k = idx.shape.back().value();
  TESSERA_CHECK(b >= 0 && b < q && b < r, "batch_dims ", b, " must be smaller than both ranks (", r, ", ", q, ")");
  TESSERA_CHECK(k >= 1 && k <= r - b, "indices' last dim ", k, " must be in [1, ", r - b, "]");
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k, x.shape.end());
  return TensorTypeNode::make(out, x.dtype);
}

// data, indices, updates: the type of data. ScatterElements: updates has indices' shape and
// data's rank; ScatterND: updates is indices.shape[:-1] + data.shape[k:].
Type ScatterRel(const std::vector<Type>& args, const Attrs& attrs, bool nd) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& idx = TensorArg(args, 1);
  const TensorTypeNode& upd = TensorArg(args, 2);
  TESSERA_CHECK(idx.dtype.is_int(), "indices must be int32 or int64, got ", idx.dtype.str());
  CheckSameDtype(x, upd);
  const std::string reduction = attrs.GetString("reduction", "none");
  TESSERA_CHECK(reduction == "none" || reduction == "add" || reduction == "mul" || reduction == "max" ||
                    reduction == "min",
                "unknown reduction '", reduction, "' (none, add, mul, max, min)");
  TESSERA_CHECK(reduction == "none" || !x.dtype.is_bool(), "reduction '", reduction, "' of a bool tensor");
  if (!nd) {
    NormalizeAxis(attrs.GetInt("axis", 0), x.ndim());
    TESSERA_CHECK(idx.shape == upd.shape, "updates ", ShapeStr(upd.shape), " must have the indices' shape ",
                  ShapeStr(idx.shape));
    TESSERA_CHECK(idx.ndim() == x.ndim(), "indices rank ", idx.ndim(), " != data rank ", x.ndim());
  } else {
    TESSERA_CHECK(idx.ndim() >= 1 && idx.shape.back().is_static(), "indices need rank >= 1 and a static last dim");
    const int64_t k = idx.shape.back().value();
    TESSERA_CHECK(k >= 1 && k <= x.ndim(), "indices' last dim ", k, " must be in [1, ", x.ndim(), "]");
    Shape want(idx.shape.begin(), idx.shape.end() - 1);
    want.insert(want.end(), x.shape.begin() + k, x.shape.end());
    TESSERA_CHECK(upd.shape == want, "updates ", ShapeStr(upd.shape), " must be indices.shape[:-1] + data.shape[k:] ",
                  ShapeStr(want));
  }
  return TensorTypeNode::make(x.shape, x.dtype);
}

// unique_inverse(x) -> int64 [n] (topi/unique.h): n = x's element count, or x.shape[axis].
Type UniqueInverseRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  if (!attrs.Has("axis")) {
    TESSERA_CHECK(x.NumElements().has_value(), "needs static shapes, got ", ShapeStr(x.shape));
    return TensorTypeNode::make(std::vector<int64_t>{*x.NumElements()}, DataType::Int(64));
  }
  const int64_t axis = NormalizeAxis(attrs.GetInt("axis"), x.ndim());
  return TensorTypeNode::make(Shape{x.shape[axis]}, DataType::Int(64));
}

Type TopKIndicesRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.ndim() >= 1, "needs a tensor of rank >= 1");
  TESSERA_CHECK(!x.dtype.is_bool(), "needs a numeric tensor, got bool");
  const int64_t axis = NormalizeAxis(attrs.GetInt("axis", -1), x.ndim()), k = attrs.GetInt("k");
  TESSERA_CHECK(k >= 0 && (!x.shape[axis].is_static() || k <= x.shape[axis].value()), "k = ", k,
                " must be in [0, ", ShapeStr(x.shape), "[", axis, "]]");
  Shape out = x.shape;
  out[axis] = Dim(k);
  return TensorTypeNode::make(out, DataType::Int(64));
}

Type ArgReduceRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  int64_t axis = NormalizeAxis(attrs.GetInt("axis", 0), x.ndim());
  bool keepdims = attrs.GetInt("keepdims", 1) != 0;
  Shape out;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (d != axis) out.push_back(x.shape[d]);
    else if (keepdims) out.push_back(Dim(1));
  }
  return TensorTypeNode::make(out, DataType::Int(64));
}

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  r.Register("broadcast_to", 1, kBroadcast, BroadcastToRel,
             "numpy broadcast of x and `shape` (ONNX Expand). attrs: shape");
  r.Register("tile", 1, kInjective, TileRel, "repeats x reps[d] times along each axis d. attrs: reps");
  r.Register("pad", 1, kInjective, PadRel,
             "attrs: pad_before, pad_after (per axis; negative crops), mode (constant, reflect, edge, wrap), "
             "pad_value");
  r.Register("gather_elements", 2, kInjective, GatherElementsRel,
             "out[i] = data[i with i[axis] = indices[i]]; an index outside [-n, n) fails at run time. attrs: axis, "
             "source (names the model node in that error)");
  r.Register("gather_nd", 2, kInjective, GatherNDRel,
             "out[i, j] = data[batch, indices[i], j] (ONNX GatherND); an index outside [-n, n) fails at run time. "
             "attrs: batch_dims, source");
  r.Register("scatter_elements", 3, kOpaque,
             [](const std::vector<Type>& a, const Attrs& at) { return ScatterRel(a, at, false); },
             "data with updates written at indices along axis (ONNX ScatterElements); an index outside [-n, n) "
             "fails at run time. attrs: axis, reduction, source");
  r.Register("scatter_nd", 3, kOpaque,
             [](const std::vector<Type>& a, const Attrs& at) { return ScatterRel(a, at, true); },
             "data with update rows written at index tuples (ONNX ScatterND); an index outside [-n, n) fails at "
             "run time. attrs: reduction, source");
  r.Register("trilu", 2, kInjective, TriluRel,
             "zeroes the lower (upper=1) or upper (upper=0) triangle of the last two dims, offset by k. attrs: upper");
  r.Register("unique_inverse", 1, kOpaque, UniqueInverseRel,
             "ONNX Unique's inverse_indices: each element's (slice's, with attr axis) position among the distinct "
             "values, sorted or by first occurrence (topi/unique.h). attrs: axis (optional), sorted");
  r.Register("topk_indices", 1, kCommReduce, TopKIndicesRel,
             "the indices (int64) of the k largest / smallest elements along axis, sorted; ties by index "
             "(ONNX TopK; the values are gather_elements). attrs: k, axis, largest");
  r.Register("argmax", 1, kCommReduce, ArgReduceRel,
             "index of the max along axis (int64). attrs: axis, keepdims, select_last_index");
  r.Register("argmin", 1, kCommReduce, ArgReduceRel,
             "index of the min along axis (int64). attrs: axis, keepdims, select_last_index");
}

}  // namespace tessera::graph::op
