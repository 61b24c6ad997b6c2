// The ai.onnx.ml domain's tensor operators (opset 1; docs/Operators-ml.md of the ONNX spec):
//
//   Binarizer(X; threshold = 0)  Y = X > threshold ? 1 : 0 in X's type (float / double / int32 /
//                                int64; a NaN gives 0, as the ONNX reference implementation;
//                                ONNX Runtime refuses a NaN input).
//   ArrayFeatureExtractor(X, Y)  the elements of X's last axis at the int64 indices Y (any shape,
//                                read flattened): [..., N] -> [..., |Y|]; a 1-D X gives [1, |Y|]
//                                (ONNX Runtime's shape). Constant indices outside [0, N) are an
//                                import error; run-time ones outside [-N, N) fail the run (a
//                                negative one counts from the end, where ONNX Runtime refuses it).
//
// The tree-ensemble model operators (TreeEnsemble-5, TreeEnsembleRegressor and TreeEnsembleClassifier
// 1 / 3) are ops_tree_ensemble.cc's, registered from here. The domain's other model operators
// (LinearClassifier, SVMClassifier, ...) and its string operators (LabelEncoder over strings) are not
// supported; they are refused naming the domain.
#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

void ConvertBinarizer(NodeContext& ctx) {
  const DataType dt = ctx.InputType(0).dtype;
  if (dt != DataType::Float(32) && dt != DataType::Float(64) && dt != DataType::Int(32) && dt != DataType::Int(64))
    ctx.Fail("X must be float, double, int32 or int64, got " + dt.str());
  const double threshold = ctx.AttrFloat("threshold", 0.0f);
  Expr above = ctx.Call("greater", {ctx.Input(0), ctx.ScalarConst(threshold, dt)});
  ctx.SetOutput(0, ctx.Call("where", {above, ctx.ScalarConst(1, dt), ctx.ScalarConst(0, dt)}));
}

void ConvertArrayFeatureExtractor(NodeContext& ctx) {
  std::vector<int64_t> xs = ctx.InputShape(0);
  if (xs.empty()) ctx.Fail("X must have rank >= 1, got a scalar");
  if (ctx.InputType(1).dtype != DataType::Int(64)) ctx.Fail("Y must be int64, got " + ctx.InputType(1).dtype.str());
  Expr x = ctx.Input(0);
  if (xs.size() == 1) {
    x = Reshape(ctx, x, {1, xs[0]});
    xs.insert(xs.begin(), 1);
  }
  const int64_t axis = static_cast<int64_t>(xs.size()) - 1, n = xs.back();
  Expr indices = Reshape(ctx, ctx.Input(1), {-1});
  runtime::NDArray constant = ctx.InputConst(1);
  if (constant.defined()) {
    const std::vector<int64_t> values = ToInts(constant);
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i] < 0 || values[i] >= n)
        ctx.Fail("index " + std::to_string(values[i]) + " (element " + std::to_string(i) + " of Y) is outside [0, " +
                 std::to_string(n) + "), the last axis of X");
    return ctx.SetOutput(0, ctx.Call("take", {x, indices}, Attrs{{"axis", axis}, {"mode", std::string("wrap")}}));
  }
  ctx.SetOutput(0, ctx.Call("take", {x, indices},
                            Attrs{{"axis", axis}, {"mode", std::string("raise")}, {"source", ctx.Label()}}));
}

}  // namespace

void RegisterMLConverters(ConverterTable& t) {
  const std::string d = "ai.onnx.ml";
  t[ConverterKey(d, "Binarizer")] = ConvertBinarizer;
  t[ConverterKey(d, "ArrayFeatureExtractor")] = ConvertArrayFeatureExtractor;
  RegisterTreeEnsembleConverters(t);
}

}  // namespace tessera::frontend::onnx_import
