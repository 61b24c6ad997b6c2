// Activation functions (ONNX LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, Softplus, Softsign,
// Mish, Gelu, Swish, Shrink, PRelu) and log_softmax. Float tensors unless noted; the output
// type is the input type.
#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

Type FloatActRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_floating(), "needs a float tensor, got ", x.dtype.str());
  return IdentityRel(args, attrs);
}

// x, slope: slope broadcasts to x's shape (unidirectionally).
Type PReluRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const TensorTypeNode& s = TensorArg(args, 1);
  CheckSameDtype(x, s);
  Shape out = BroadcastShapes(x.shape, s.shape);
  TESSERA_CHECK(out == x.shape, "slope ", ShapeStr(s.shape), " does not broadcast to the data shape ",
                ShapeStr(x.shape));
  return FloatActRel(args, attrs);
}

Type LogSoftmaxRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  TESSERA_CHECK(x.dtype.is_floating(), "log_softmax needs a float tensor, got ", x.dtype.str());
  NormalizeAxis(attrs.GetInt("axis", -1), x.ndim());
  return TensorTypeNode::make(x.shape, x.dtype);
}

}  // namespace

void RegisterActivationOps(OpRegistry& r) {
  r.Register("nn.leaky_relu", 1, kElemWise, FloatActRel, "x < 0 ? alpha x : x. attrs: alpha");
  r.Register("nn.elu", 1, kElemWise, FloatActRel, "x < 0 ? alpha (e^x - 1) : x. attrs: alpha");
  r.Register("nn.selu", 1, kElemWise, FloatActRel, "gamma (x <= 0 ? alpha (e^x - 1) : x). attrs: alpha, gamma");
  r.Register("nn.celu", 1, kElemWise, FloatActRel, "max(0, x) + min(0, alpha (e^(x/alpha) - 1)). attrs: alpha");
  r.Register("nn.thresholded_relu", 1, kElemWise, FloatActRel, "x > alpha ? x : 0. attrs: alpha");
  r.Register("nn.softplus", 1, kElemWise, FloatActRel, "log(1 + e^x)");
  r.Register("nn.softsign", 1, kElemWise, FloatActRel, "x / (1 + |x|)");
  r.Register("nn.mish", 1, kElemWise, FloatActRel, "x tanh(softplus(x))");
  r.Register("nn.gelu", 1, kElemWise, FloatActRel, "Gaussian error linear unit. attrs: approximate (\"none\" / \"tanh\")");
  r.Register("nn.swish", 1, kElemWise, FloatActRel, "x sigmoid(alpha x). attrs: alpha");
  r.Register("nn.shrink", 1, kElemWise, IdentityRel,
             "x < -lambd ? x + bias : x > lambd ? x - bias : 0. attrs: lambd, bias");
  r.Register("nn.prelu", 2, kBroadcast, PReluRel, "x < 0 ? slope x : x (slope broadcasts to x)");
  r.Register("nn.log_softmax", 1, kOpaque, LogSoftmaxRel, "log(softmax(x)) along one axis. attrs: axis");
}

}  // namespace tessera::graph::op
