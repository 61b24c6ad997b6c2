// Elementwise and broadcasting math: unary ops keep the input type; binary ops broadcast per
// numpy rules and require equal dtypes.
#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

Type FloatUnaryRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_floating(), "needs a float tensor, got ", x.dtype.str());
  return IdentityRel(args, attrs);
}

Type BroadcastRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& a = TensorArg(args, 0);
  const TensorTypeNode& b = TensorArg(args, 1);
  CheckSameDtype(a, b);
  return TensorTypeNode::make(BroadcastShapes(a.shape, b.shape), a.dtype);
}

Type ClipRel(const std::vector<Type>& args, const Attrs& attrs) {
  double lo = attrs.GetDouble("a_min"), hi = attrs.GetDouble("a_max");
  TESSERA_CHECK(lo <= hi, "a_min ", lo, " > a_max ", hi);
  return IdentityRel(args, attrs);
}

Type CastRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const std::string mode = attrs.GetString("round_mode", "up");
  TESSERA_CHECK(mode == "up" || mode == "down" || mode == "nearest", "round_mode must be up, down or nearest, got '",
                mode, "'");
  return TensorTypeNode::make(x.shape, DataType::Parse(attrs.GetString("dtype")));
}

Type ReinterpretRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const DataType to = DataType::Parse(attrs.GetString("dtype"));
  TESSERA_CHECK(to.bits() == x.dtype.bits() && !to.is_bool() && !x.dtype.is_bool(),
                "reinterpret needs non-bool types of one width, got ", x.dtype.str(), " -> ", to.str());
  return TensorTypeNode::make(x.shape, to);
}

}  // namespace

void RegisterTensorOps(OpRegistry& r) {
  r.Register("clip", 1, kElemWise, ClipRel, "min(max(x, a_min), a_max). attrs: a_min, a_max");
  r.Register("sigmoid", 1, kElemWise, FloatUnaryRel, "1 / (1 + exp(-x))");
  r.Register("hard_sigmoid", 1, kElemWise, FloatUnaryRel,
             "max(0, min(1, alpha * x + beta)). attrs: alpha (default 0.2), beta (default 0.5)");
  r.Register("hard_swish", 1, kElemWise, FloatUnaryRel, "x * max(0, min(1, x / 6 + 1 / 2))");
  r.Register("exp", 1, kElemWise, FloatUnaryRel, "e^x");
  r.Register("log", 1, kElemWise, FloatUnaryRel, "natural logarithm");
  r.Register("sqrt", 1, kElemWise, FloatUnaryRel, "square root");
  r.Register("tanh", 1, kElemWise, FloatUnaryRel, "hyperbolic tangent");
  r.Register("negative", 1, kElemWise, IdentityRel, "-x");
  r.Register("abs", 1, kElemWise, IdentityRel, "|x|");
  r.Register("copy", 1, kElemWise, IdentityRel, "a copy of x");
  r.Register("cast", 1, kElemWise, CastRel,
             "x converted to dtype. attrs: dtype (e.g. \"float32\"); for float8 results saturate (default 1: "
             "out-of-range values become +-max, else inf / NaN) and, for float8_e8m0fnu, round_mode (up, down, "
             "nearest; default up), as ONNX Cast");
  r.Register("reinterpret", 1, kElemWise, ReinterpretRel,
             "the bits of each element read as dtype (same width; ONNX BitCast). attrs: dtype");
  for (const char* name : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum"}) {
    r.Register(name, 2, kBroadcast, BroadcastRel, "numpy-broadcasting binary op");
  }
}

}  // namespace tessera::graph::op
