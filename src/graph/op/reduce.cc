// Reductions over a set of axes (TVM's sum/mean/max/min): attrs axis (empty = all axes),
// keepdims (0/1), exclude (0/1: reduce every axis *not* listed); the running reductions
// cumsum / cumprod (ONNX CumSum / CumProd): attrs axis, exclusive, reverse.
#include <set>

#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

Type ReduceRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  std::vector<int64_t> axes = attrs.GetInts("axis", {});
  bool keepdims = attrs.GetInt("keepdims", 0) != 0;
  bool exclude = attrs.GetInt("exclude", 0) != 0;
  std::set<int64_t> listed;
  for (int64_t a : axes) {
    int64_t n = NormalizeAxis(a, x.ndim());
    TESSERA_CHECK(listed.insert(n).second, "axis ", a, " listed twice");
  }
  Shape out;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    bool reduced = axes.empty() ? !exclude : (listed.count(i) != 0) != exclude;
    if (!reduced) {
      out.push_back(x.shape[i]);
    } else if (keepdims) {
      out.push_back(Dim(1));
    }
  }
  return TensorTypeNode::make(out, x.dtype);
}

// cumsum / cumprod: the type of x; axis in range; bool is refused (ONNX: numeric types).
Type CumulativeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.ndim() >= 1, "needs a tensor of rank >= 1");
  TESSERA_CHECK(!x.dtype.is_bool(), "needs a numeric tensor, got bool");
  NormalizeAxis(attrs.GetInt("axis", 0), x.ndim());
  return TensorTypeNode::make(x.shape, x.dtype);
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  for (const char* name : {"sum", "mean", "max", "min", "prod"}) {
    r.Register(name, 1, kCommReduce, ReduceRel, "reduction. attrs: axis, keepdims, exclude");
  }
  r.Register("cumsum", 1, kCommReduce, CumulativeRel, "running sum along axis. attrs: axis, exclusive, reverse");
  r.Register("cumprod", 1, kCommReduce, CumulativeRel, "running product along axis. attrs: axis, exclusive, reverse");
}

}  // namespace tessera::graph::op
