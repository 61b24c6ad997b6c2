// Injective data-movement ops: reshape, transpose, concatenate, take, strided_slice,
// expand_dims, squeeze, and arange.
#include <algorithm>
#include <limits>
#include <set>

#include "op_groups.h"
#include "op_util.h"
#include "tessera/graph/shape_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

// newshape: the output extents (importers resolve ONNX's "0 = copy" first, so 0 is a literal
// zero extent); one -1 takes the remaining elements.
// A reshape whose output has symbolic dims: "symbols" names the -1 entries of newshape in order.
// The symbols and the static product must be the input's (a reshape moves no element).
Type SymbolicReshapeRel(const TensorTypeNode& x, const std::vector<int64_t>& ns, const Attrs& attrs) {
  const std::vector<Dim> names = SymbolsAttr(attrs);
  const std::string& symbols = attrs.GetString("symbols");
  Shape out;
  size_t next = 0;
  std::multiset<std::string> in_symbols, out_symbols;
  int64_t in_static = 1, out_static = 1;
  for (int64_t v : ns) {
    if (v == -1) {
      TESSERA_CHECK(next < names.size(), "reshape: newshape has more -1 entries than 'symbols' (", symbols, ") names");
      out.push_back(names[next]);
      out_symbols.insert(names[next++].name());
    } else {
      TESSERA_CHECK(v >= 0, "invalid newshape entry ", v);
      out.push_back(Dim(v));
      out_static *= v;
    }
  }
  TESSERA_CHECK(next == names.size(), "reshape: 'symbols' (", symbols, ") names more dims than newshape has -1 entries");
  for (const Dim& d : x.shape) {
    if (d.is_static()) in_static *= d.value();
    else in_symbols.insert(d.name());
  }
  TESSERA_CHECK(in_symbols == out_symbols && in_static == out_static, "cannot reshape ", ShapeStr(x.shape), " to ",
                ShapeStr(out), ": the element counts differ");
  return TensorTypeNode::make(out, x.dtype);
}

Type ReshapeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const std::vector<int64_t>& ns = attrs.GetInts("newshape");
  if (attrs.Has("symbols")) return SymbolicReshapeRel(x, ns, attrs);
  Shape out;
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] == -1) {
      TESSERA_CHECK(infer_at < 0, "newshape has more than one -1");
      infer_at = static_cast<int>(i);
      out.push_back(Dim::Any());
    } else {
      TESSERA_CHECK(ns[i] >= 0, "invalid newshape entry ", ns[i]);
      out.push_back(Dim(ns[i]));
      known *= ns[i];
    }
  }
  std::optional<int64_t> total = x.NumElements();
  if (infer_at >= 0) {
    if (total) {
      TESSERA_CHECK(known != 0 && *total % known == 0, "cannot reshape ", ShapeStr(x.shape), " (", *total,
                    " elements) with -1 into a multiple of ", known);
      out[infer_at] = Dim(*total / known);
    }
  } else if (total) {
    TESSERA_CHECK(*total == known, "cannot reshape ", ShapeStr(x.shape), " (", *total, " elements) to ",
                  ShapeStr(out), " (", known, " elements)");
  }
  return TensorTypeNode::make(out, x.dtype);
}

// arange: [x.shape[axis]] of start + i * step (ONNX Range whose length is a symbolic dim).
Type ArangeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const int64_t axis = attrs.GetInt("axis");
  TESSERA_CHECK(axis >= 0 && axis < x.ndim(), "arange: axis ", axis, " out of range for ", ShapeStr(x.shape));
  const DataType dtype = DataType::Parse(attrs.GetString("dtype"));
  TESSERA_CHECK(dtype.is_int() || dtype.is_uint() || dtype.is_floating(), "arange: dtype must be numeric, got ",
                dtype.str());
  return TensorTypeNode::make(Shape{x.shape[axis]}, dtype);
}

Type TransposeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  std::vector<int64_t> axes = attrs.GetInts("axes", {});
  if (axes.empty()) {
    for (int64_t i = x.ndim() - 1; i >= 0; --i) axes.push_back(i);
  }
  TESSERA_CHECK(static_cast<int64_t>(axes.size()) == x.ndim(), "axes has ", axes.size(),
                " entries for a tensor of rank ", x.ndim());
  std::vector<bool> seen(axes.size(), false);
  Shape out;
  for (int64_t a : axes) {
    int64_t n = NormalizeAxis(a, x.ndim());
    TESSERA_CHECK(!seen[n], "axes is not a permutation (axis ", a, " repeats)");
    seen[n] = true;
    out.push_back(x.shape[n]);
  }
  return TensorTypeNode::make(out, x.dtype);
}

// One argument: a tuple of tensors of equal rank and dtype, equal except along axis.
Type ConcatenateRel(const std::vector<Type>& args, const Attrs& attrs) {
  TESSERA_CHECK(args.size() == 1 && args[0], "concatenate takes one tuple argument");
  auto* tup = args[0]->as<TupleTypeNode>();
  TESSERA_CHECK(tup != nullptr, "concatenate takes a tuple of tensors, got ", args[0]->str());
  TESSERA_CHECK(!tup->fields.empty(), "concatenate of an empty tuple");
  const TensorTypeNode& first = TensorArg(tup->fields, 0);
  int64_t axis = NormalizeAxis(attrs.GetInt("axis", 0), first.ndim());
  Shape out = first.shape;
  bool static_sum = out[axis].is_static();
  int64_t sum = static_sum ? out[axis].value() : 0;
  for (size_t i = 1; i < tup->fields.size(); ++i) {
    const TensorTypeNode& t = TensorArg(tup->fields, i);
    CheckSameDtype(first, t);
    TESSERA_CHECK(t.ndim() == first.ndim(), "tensor ", i, " has rank ", t.ndim(), ", tensor 0 has rank ",
                  first.ndim());
    for (int64_t d = 0; d < t.ndim(); ++d) {
      if (d == axis) {
        if (t.shape[d].is_static()) sum += t.shape[d].value(); else static_sum = false;
      } else if (t.shape[d] != first.shape[d]) {
        TESSERA_THROW(UserError, "tensor ", i, " ", ShapeStr(t.shape), " differs from tensor 0 ",
                      ShapeStr(first.shape), " in dimension ", d, " (only axis ", axis, " may differ)");
      }
    }
  }
  out[axis] = static_sum ? Dim(sum) : Dim::Any();
  return TensorTypeNode::make(out, first.dtype);
}

// data, indices (int32/int64). With axis: data.shape[:axis] + indices.shape + data.shape[axis+1:];
// without: indices index the flattened data. mode: "clip" (default), "wrap" (negative indices
// count from the end, as ONNX Gather), "fast" (no bounds handling).
Type TakeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& idx = TensorArg(args, 1);
  TESSERA_CHECK(idx.dtype.is_int() && (idx.dtype.bits() == 32 || idx.dtype.bits() == 64),
                "indices must be int32 or int64, got ", idx.dtype.str());
  std::string mode = attrs.GetString("mode", "clip");
  TESSERA_CHECK(mode == "clip" || mode == "wrap" || mode == "fast" || mode == "raise", "unknown take mode '", mode,
                "' (clip, wrap, fast, raise)");
  if (!attrs.Has("axis")) return TensorTypeNode::make(idx.shape, x.dtype);
  int64_t axis = NormalizeAxis(attrs.GetInt("axis"), x.ndim());
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  return TensorTypeNode::make(out, x.dtype);
}

// begin, end, strides (default 1s), axes (default 0..len(begin)-1).
Type StridedSliceRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const std::vector<int64_t>& begin = attrs.GetInts("begin");
  const std::vector<int64_t>& end = attrs.GetInts("end");
  std::vector<int64_t> strides = attrs.GetInts("strides", std::vector<int64_t>(begin.size(), 1));
  std::vector<int64_t> axes = attrs.GetInts("axes", {});
  if (axes.empty()) {
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (strides.size() == 1 && begin.size() > 1) strides.assign(begin.size(), strides[0]);
  TESSERA_CHECK(end.size() == begin.size() && strides.size() == begin.size() && axes.size() == begin.size(),
                "begin, end, strides and axes must have the same length (", begin.size(), ", ", end.size(), ", ",
                strides.size(), ", ", axes.size(), ")");
  Shape out = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = NormalizeAxis(axes[i], x.ndim());
    if (x.shape[a].is_static()) {
      out[a] = Dim(NormalizeSlice(x.shape[a].value(), begin[i], end[i], strides[i]).extent);
    } else {
      bool whole = begin[i] == 0 && strides[i] == 1 && end[i] == std::numeric_limits<int64_t>::max();
      if (!whole) out[a] = Dim::Any();
    }
  }
  return TensorTypeNode::make(out, x.dtype);
}

Type ExpandDimsRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  int64_t n = attrs.GetInt("num_newaxis", 1);
  TESSERA_CHECK(n >= 0, "num_newaxis must be >= 0");
  int64_t axis = NormalizeAxis(attrs.GetInt("axis"), x.ndim() + 1);
  Shape out = x.shape;
  out.insert(out.begin() + axis, n, Dim(1));
  return TensorTypeNode::make(out, x.dtype);
}

Type SqueezeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  std::vector<int64_t> axes = attrs.GetInts("axis", {});
  std::vector<bool> drop(x.ndim(), false);
  if (axes.empty()) {
    for (int64_t i = 0; i < x.ndim(); ++i) drop[i] = x.shape[i].is_static() && x.shape[i].value() == 1;
  } else {
    for (int64_t a : axes) {
      int64_t n = NormalizeAxis(a, x.ndim());
      TESSERA_CHECK(!x.shape[n].is_static() || x.shape[n].value() == 1, "cannot squeeze axis ", a, " of extent ",
                    x.shape[n].str(), " (must be 1)");
      drop[n] = true;
    }
  }
  Shape out;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (!drop[i]) out.push_back(x.shape[i]);
  return TensorTypeNode::make(out, x.dtype);
}

}  // namespace

void RegisterTransformOps(OpRegistry& r) {
  r.Register("reshape", 1, kInjective, ReshapeRel,
             "attrs: newshape (static extents; one -1 infers), symbols (optional: the names of the symbolic output "
             "dims, comma-separated, one per -1 of newshape, which then infers nothing)");
  r.Register("transpose", 1, kInjective, TransposeRel, "attrs: axes (empty reverses)");
  r.Register("arange", 1, kInjective, ArangeRel,
             "start + i * step for i in [0, x.shape[axis]) (only x's extent is read: a Range whose length is a "
             "symbolic dim). attrs: axis, start, step (numbers), dtype");
  r.Register("concatenate", 1, kInjective, ConcatenateRel, "concatenates a tuple of tensors. attrs: axis");
  r.Register("take", 2, kInjective, TakeRel,
             "gather along axis. attrs: axis (optional), mode (clip, wrap, fast; raise: an index outside "
             "[-n, n) fails at run time), source (names the model node in that error)");
  r.Register("strided_slice", 1, kInjective, StridedSliceRel, "attrs: begin, end, strides, axes");
  r.Register("expand_dims", 1, kInjective, ExpandDimsRel, "attrs: axis, num_newaxis");
  r.Register("squeeze", 1, kInjective, SqueezeRel, "attrs: axis (empty: all extents of 1)");
}

}  // namespace tessera::graph::op
