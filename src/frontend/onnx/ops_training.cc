// The optimizer update rules of the ai.onnx.preview.training domain (opset 1): Adagrad,
// Momentum, Adam, composed from elementwise graph ops. Each takes R (the learning rate, a float
// scalar), T (the update count, an int64 scalar; both may be run-time inputs) and n groups of
// tensors: X (parameters), G (gradients) and the optimizer's state (Adagrad: H; Momentum: V;
// Adam: V, H); its outputs are the n new X followed by the new states. Formulas: the ONNX
// operator spec (docs/Operators.md, "ai.onnx.preview.training"), as its reference
// implementation computes them, with R and T converted to X's float type.
#include "context.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

struct Step {
  NodeContext& ctx;
  DataType dt;
  Expr K(double v) const { return ctx.ScalarConst(v, dt); }
  Expr Add(Expr a, Expr b) const { return ctx.Call("add", {std::move(a), std::move(b)}); }
  Expr Sub(Expr a, Expr b) const { return ctx.Call("subtract", {std::move(a), std::move(b)}); }
  Expr Mul(Expr a, Expr b) const { return ctx.Call("multiply", {std::move(a), std::move(b)}); }
  Expr Div(Expr a, Expr b) const { return ctx.Call("divide", {std::move(a), std::move(b)}); }
  Expr Sqrt(Expr a) const { return ctx.Call("sqrt", {std::move(a)}); }
  Expr AsFloat(Expr a) const { return ctx.Call("cast", {std::move(a)}, Attrs{{"dtype", dt.str()}}); }
  /// T > 0 as a bool scalar.
  Expr Positive(Expr t) const { return ctx.Call("greater", {std::move(t), ctx.ScalarConst(0, DataType::Int(64))}); }
  Expr Where(Expr c, Expr a, Expr b) const { return ctx.Call("where", {std::move(c), std::move(a), std::move(b)}); }
};

/// The number of optimized tensors: (inputs - 2) / per_group, checked.
int Groups(NodeContext& ctx, int per_group, const char* names) {
  const int n = (ctx.NumInputs() - 2) / per_group;
  if (ctx.NumInputs() < 2 + per_group || (ctx.NumInputs() - 2) % per_group != 0)
    ctx.Fail("expects R, T and n groups of (" + std::string(names) + "), got " + std::to_string(ctx.NumInputs()) +
             " inputs");
  for (int i = 0; i < 2; ++i)
    if (ctx.InputType(i).ndim() != 0) ctx.Fail(std::string(i == 0 ? "R" : "T") + " must be a scalar");
  if (ctx.InputType(1).dtype != DataType::Int(64)) ctx.Fail("T must be int64, got " + ctx.InputType(1).dtype.str());
  return n;
}

Step Begin(NodeContext& ctx) {
  const DataType dt = ctx.InputType(2).dtype;
  if (!(dt.is_float() && dt.bits() >= 32)) ctx.Fail("X must be float32 or float64, got " + dt.str());
  return Step{ctx, dt};
}

// Adagrad: r = R / (1 + T * decay_factor); g = norm_coefficient * X + G; H' = H + g^2;
// X' = X - r * g / (sqrt(H') + epsilon).
void ConvertAdagrad(NodeContext& ctx) {
  const int n = Groups(ctx, 3, "X, G, H");
  Step s = Begin(ctx);
  const double decay = ctx.AttrFloat("decay_factor", 0.f), eps = ctx.AttrFloat("epsilon", 0.f),
               norm = ctx.AttrFloat("norm_coefficient", 0.f);
  Expr r = s.Div(s.AsFloat(ctx.Input(0)), s.Add(s.K(1), s.Mul(s.AsFloat(ctx.Input(1)), s.K(decay))));
  for (int i = 0; i < n; ++i) {
    Expr x = ctx.Input(2 + i), g = ctx.Input(2 + n + i), h = ctx.Input(2 + 2 * n + i);
    Expr gr = s.Add(s.Mul(s.K(norm), x), g);
    Expr h_new = s.Add(h, s.Mul(gr, gr));
    ctx.SetOutput(i, s.Sub(x, s.Div(s.Mul(r, gr), s.Add(s.Sqrt(h_new), s.K(eps)))));
    ctx.SetOutput(n + i, h_new);
  }
}

// Momentum: g = norm_coefficient * X + G; V' = alpha * V + (T > 0 ? beta : 1) * g;
// standard: X' = X - R * V'; nesterov: X' = X - R * (g + alpha * V').
void ConvertMomentum(NodeContext& ctx) {
  const int n = Groups(ctx, 3, "X, G, V");
  Step s = Begin(ctx);
  const double alpha = ctx.AttrFloat("alpha", 0.f), beta = ctx.AttrFloat("beta", 0.f),
               norm = ctx.AttrFloat("norm_coefficient", 0.f);
  const std::string mode = ctx.AttrString("mode", "");
  if (mode != "standard" && mode != "nesterov") ctx.Fail("mode must be 'standard' or 'nesterov', got '" + mode + "'");
  Expr r = s.AsFloat(ctx.Input(0));
  Expr beta_adjusted = s.Where(s.Positive(ctx.Input(1)), s.K(beta), s.K(1));
  for (int i = 0; i < n; ++i) {
    Expr x = ctx.Input(2 + i), g = ctx.Input(2 + n + i), v = ctx.Input(2 + 2 * n + i);
    Expr gr = s.Add(s.Mul(s.K(norm), x), g);
    Expr v_new = s.Add(s.Mul(s.K(alpha), v), s.Mul(beta_adjusted, gr));
    Expr step = mode == "standard" ? v_new : s.Add(gr, s.Mul(s.K(alpha), v_new));
    ctx.SetOutput(i, s.Sub(x, s.Mul(r, step)));
    ctx.SetOutput(n + i, v_new);
  }
}

// Adam: g = norm_coefficient * X + G; V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g^2;
// r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
// X' = (1 - norm_coefficient_post) (X - r V' / (sqrt(H') + epsilon)).
void ConvertAdam(NodeContext& ctx) {
  const int n = Groups(ctx, 4, "X, G, V, H");
  Step s = Begin(ctx);
  const double alpha = ctx.AttrFloat("alpha", 0.9f), beta = ctx.AttrFloat("beta", 0.999f),
               eps = ctx.AttrFloat("epsilon", 1e-6f), norm = ctx.AttrFloat("norm_coefficient", 0.f),
               post = ctx.AttrFloat("norm_coefficient_post", 0.f);
  Expr r = s.AsFloat(ctx.Input(0)), t = s.AsFloat(ctx.Input(1));
  Expr corrected = s.Div(s.Mul(r, s.Sqrt(s.Sub(s.K(1), ctx.Call("power", {s.K(beta), t})))),
                         s.Sub(s.K(1), ctx.Call("power", {s.K(alpha), t})));
  Expr r_adjusted = s.Where(s.Positive(ctx.Input(1)), corrected, r);
  for (int i = 0; i < n; ++i) {
    Expr x = ctx.Input(2 + i), g = ctx.Input(2 + n + i), v = ctx.Input(2 + 2 * n + i), h = ctx.Input(2 + 3 * n + i);
    Expr gr = s.Add(s.Mul(s.K(norm), x), g);
    Expr v_new = s.Add(s.Mul(s.K(alpha), v), s.Mul(s.K(1 - alpha), gr));
    Expr h_new = s.Add(s.Mul(s.K(beta), h), s.Mul(s.K(1 - beta), s.Mul(gr, gr)));
    Expr x_new = s.Sub(x, s.Mul(r_adjusted, s.Div(v_new, s.Add(s.Sqrt(h_new), s.K(eps)))));
    ctx.SetOutput(i, s.Mul(s.K(1 - post), x_new));
    ctx.SetOutput(n + i, v_new);
    ctx.SetOutput(2 * n + i, h_new);
  }
}

}  // namespace

void RegisterTrainingConverters(ConverterTable& t) {
  const std::string d = "ai.onnx.preview.training";
  t[ConverterKey(d, "Adagrad")] = ConvertAdagrad;
  t[ConverterKey(d, "Momentum")] = ConvertMomentum;
  t[ConverterKey(d, "Adam")] = ConvertAdam;
}

}  // namespace tessera::frontend::onnx_import
