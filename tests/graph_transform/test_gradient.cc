// Gradient (graph/transform/gradient.h): the IR reverse-mode AD builds for small cases (IR in ->
// expected IR out, as printed text), its refusals, and every gradient rule checked against central
// finite differences. Each numeric check builds one module per group of ops (BuildJIT once):
// every case's loss sum(op(inputs) * W) (W a fixed random tensor, so that no rule hides behind a
// constant sum such as softmax's) and its gradients, then runs it at the inputs and at each input
// element moved by +-h (all cases at once: a case's loss reads only its own inputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "tessera/driver/build.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/gradient.h"
#include "tessera/runtime/float_formats.h"
#include "tessera/runtime/executor.h"
#include "tessera/support/error.h"

namespace tessera::graph {
namespace {

using Ints = std::vector<int64_t>;

Type F32(Ints shape) { return TensorTypeNode::make(shape, DataType::Float(32)); }
Expr Call(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) { return CallOp(op, std::move(args), std::move(attrs)); }
Expr Scalar(double v, DataType dt = DataType::Float(32)) {
  auto a = runtime::NDArray::Empty({}, dt);
  runtime::StoreFromDouble(a.raw_data(), 0, dt, v);
  return ConstantNode::make(a);
}
Expr Filled(double v, Ints shape) { return Call("broadcast_to", {Scalar(v)}, Attrs{{"shape", shape}}); }
std::string Text(const Function& f) { return PrintModule(InferType(IRModule::FromMain(f))); }

// ---- IR in -> IR out -----------------------------------------------------------------------

TEST(Gradient, MultiplyWithBroadcastGivesAdjointsCollapsedToEachOperand) {
  Var x = VarNode::make("x", F32({2, 3}));
  Var w = VarNode::make("w", F32({3}));
  Function after = transform::GradientFunction(FunctionNode::make({x, w}, Call("multiply", {x, w})));

  // seed: ones of y's shape; dx = seed * w; dw = sum over the broadcast axis of seed * x.
  Var x2 = VarNode::make("x", F32({2, 3}));
  Var w2 = VarNode::make("w", F32({3}));
  Expr seed = Filled(1, {2, 3});
  Expr dx = Call("multiply", {seed, w2});
  Expr dw = Call("sum", {Call("multiply", {seed, x2})}, Attrs{{"axis", Ints{0}}, {"keepdims", int64_t{0}}, {"exclude", int64_t{0}}});
  Expr y2 = Call("multiply", {x2, w2});
  EXPECT_EQ(Text(after), Text(FunctionNode::make({x2, w2}, TupleNode::make({y2, TupleNode::make({dx, dw})}))));
}

TEST(Gradient, AdjointsOfAValueUsedTwiceAreAdded) {
  Var x = VarNode::make("x", F32({4}));
  Function after = transform::GradientFunction(FunctionNode::make({x}, Call("tanh", {Call("multiply", {x, x})})));

  Var x2 = VarNode::make("x", F32({4}));
  Expr sq = Call("multiply", {x2, x2});
  Expr y = Call("tanh", {sq});
  // d tanh: g (1 - y^2); then multiply's two uses of x, accumulated with add.
  Expr g = Call("multiply", {Filled(1, {4}), Call("subtract", {Scalar(1), Call("multiply", {y, y})})});
  Expr dx = Call("add", {Call("multiply", {g, x2}), Call("multiply", {g, x2})});
  EXPECT_EQ(Text(after), Text(FunctionNode::make({x2}, TupleNode::make({y, TupleNode::make({dx})}))));
}

TEST(Gradient, AnXThatYDoesNotDependOnGetsZeros) {
  Var x = VarNode::make("x", F32({2}));
  Var z = VarNode::make("z", F32({3}));
  Expr y = Call("exp", {x});
  std::vector<Expr> grads = transform::Gradient(y, {x, z});
  ASSERT_EQ(grads.size(), 2u);
  Expr zeros = Filled(0, {3});
  InferExprType(zeros);
  EXPECT_EQ(PrintExpr(grads[1]), PrintExpr(zeros));
  EXPECT_EQ(TypeStr(grads[1]->checked_type()), "Tensor[(3,), float32]");
}

TEST(Gradient, YAsItsOwnXGetsTheSeed) {
  Var x = VarNode::make("x", F32({2}));
  std::vector<Expr> grads = transform::Gradient(x, {x});
  Expr ones = Filled(1, {2});
  InferExprType(ones);
  EXPECT_EQ(PrintExpr(grads[0]), PrintExpr(ones));
}

TEST(Gradient, OpWithoutRuleIsRefusedNamingIt) {
  Var x = VarNode::make("x", F32({1, 1, 4, 4}));
  auto w = runtime::NDArray::Empty({1, 1, 3, 3}, DataType::Float(32));
  std::fill(w.data<float>(), w.data<float>() + 9, 1.f);
  Expr conv = Call("nn.conv2d", {x, ConstantNode::make(w)},
                   Attrs{{"strides", Ints{1, 1}}, {"padding", Ints{0, 0, 0, 0}}, {"dilation", Ints{1, 1}}, {"groups", int64_t{1}}});
  Expr y = Call("exp", {conv});
  try {
    transform::Gradient(y, {x});
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("Gradient through op nn.conv2d is not supported"), std::string::npos) << e.what();
  }
  // An op no x reaches needs no rule: the conv's input here is a constant.
  Var b = VarNode::make("b", F32({1, 1, 2, 2}));
  Expr y2 = Call("add", {Call("nn.conv2d", {ConstantNode::make(runtime::NDArray::Empty({1, 1, 4, 4}, DataType::Float(32))),
                                            ConstantNode::make(w)},
                              Attrs{{"strides", Ints{1, 1}}, {"padding", Ints{0, 0, 0, 0}}, {"dilation", Ints{1, 1}},
                                    {"groups", int64_t{1}}}),
                         b});
  EXPECT_NO_THROW(transform::Gradient(y2, {b}));
}

TEST(Gradient, IfOnThePathIsRefused) {
  Var x = VarNode::make("x", F32({2}));
  Var c = VarNode::make("c", TensorTypeNode::make(Ints{}, DataType::Bool()));
  Expr y = IfNode::make(c, Call("exp", {x}), x);
  EXPECT_THROW(transform::Gradient(y, {x}), UnsupportedError);
}

TEST(Gradient, NonFloatXOrYIsAUserError) {
  Var i = VarNode::make("i", TensorTypeNode::make(Ints{2}, DataType::Int(32)));
  Var x = VarNode::make("x", F32({2}));
  EXPECT_THROW(transform::Gradient(Call("exp", {x}), {i}), UserError);
  EXPECT_THROW(transform::Gradient(Call("add", {i, i}), {x}), UserError);
}

TEST(Gradient, EveryRuleIsOfARegisteredOp) {
  for (const std::string& op : transform::ListGradientOps()) EXPECT_TRUE(OpRegistry::Global().Has(op)) << op;
  EXPECT_TRUE(transform::HasGradientRule("nn.matmul"));
  EXPECT_FALSE(transform::HasGradientRule("nn.conv2d"));
}

// ---- numerics: finite differences ----------------------------------------------------------

using Build = std::function<Expr(const std::vector<Var>& in)>;
struct Case {
  std::string name;
  std::vector<Ints> shapes;
  Build build;
  double lo = -2, hi = 2;  ///< the inputs' values are drawn from [lo, hi]
  double tol = 1e-5;       ///< relative to 1 + |finite difference|
};

constexpr DataType kF64 = DataType::Float(64);

runtime::NDArray RandomArray(const Ints& shape, std::mt19937& rng, double lo, double hi) {
  auto a = runtime::NDArray::Empty(shape, kF64);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<double>()[i] = u(rng);
  return a;
}

double ScalarOf(const runtime::NDArray& a) { return a.data<double>()[0]; }

/// Builds every case's loss and gradients into one module, then compares each gradient element
/// with (loss(x + h) - loss(x - h)) / 2h.
void ExpectGradientsMatchFiniteDifferences(const std::vector<Case>& cases) {
  std::mt19937 rng(7);
  std::vector<Var> params;
  std::vector<Expr> outputs;
  std::vector<std::string> names;
  std::vector<std::vector<Var>> vars(cases.size());
  std::vector<std::vector<runtime::NDArray>> values(cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(cases[c].name);
    for (size_t k = 0; k < cases[c].shapes.size(); ++k) {
      std::string name = "c" + std::to_string(c) + "_" + std::to_string(k);
      vars[c].push_back(VarNode::make(name, TensorTypeNode::make(cases[c].shapes[k], kF64)));
      values[c].push_back(RandomArray(cases[c].shapes[k], rng, cases[c].lo, cases[c].hi));
      params.push_back(vars[c].back());
    }
    Expr y = cases[c].build(vars[c]);
    InferExprType(y);
    const auto* yt = TensorTypeOf(y);
    ASSERT_NE(yt, nullptr) << cases[c].name;
    Ints yshape = *StaticShape(yt->shape);
    Expr loss = Call("multiply", {y, ConstantNode::make(RandomArray(yshape, rng, 0.5, 1.5))});
    if (!yshape.empty()) loss = Call("sum", {loss});
    std::vector<Expr> xs(vars[c].begin(), vars[c].end());
    std::vector<Expr> grads;
    try {
      grads = transform::Gradient(loss, xs);
    } catch (const std::exception& e) {
      FAIL() << cases[c].name << ": " << e.what();
    }
    outputs.push_back(loss);
    names.push_back("loss" + std::to_string(c));
    for (size_t k = 0; k < grads.size(); ++k) {
      outputs.push_back(grads[k]);
      names.push_back("grad" + std::to_string(c) + "_" + std::to_string(k));
    }
  }
  IRModule mod = InferType(IRModule::FromMain(FunctionNode::make(params, TupleNode::make(outputs))));
  std::unique_ptr<runtime::Executor> run = runtime::MakeExecutor(driver::BuildJIT(mod, names), 1);  // a let: the VM
  runtime::Executor& exec = *run;
  auto output = [&](const std::string& name) { return exec.GetOutput(exec.OutputIndex(name)); };
  auto set_all = [&] {
    for (size_t c = 0; c < cases.size(); ++c)
      for (size_t k = 0; k < vars[c].size(); ++k) exec.SetInput(vars[c][k]->name_hint, values[c][k]);
  };
  set_all();
  exec.Run();
  std::vector<std::vector<runtime::NDArray>> grads(cases.size());
  for (size_t c = 0; c < cases.size(); ++c)
    for (size_t k = 0; k < vars[c].size(); ++k)
      grads[c].push_back(output("grad" + std::to_string(c) + "_" + std::to_string(k)));

  // Round r moves element r of each case's flattened inputs (cases with fewer elements sit out).
  std::vector<int64_t> total(cases.size(), 0);
  int64_t rounds = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    for (const auto& v : values[c]) total[c] += v.NumElements();
    rounds = std::max(rounds, total[c]);
  }
  const double h = 1e-5;
  auto locate = [&](size_t c, int64_t r) {
    size_t k = 0;
    while (r >= values[c][k].NumElements()) r -= values[c][k++].NumElements();
    return std::make_pair(k, r);
  };
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<double> plus(cases.size()), minus(cases.size());
    for (int side = 0; side < 2; ++side) {
      for (size_t c = 0; c < cases.size(); ++c) {
        if (r >= total[c]) continue;
        auto [k, j] = locate(c, r);
        values[c][k].data<double>()[j] += side == 0 ? h : -2 * h;
      }
      set_all();
      exec.Run();
      for (size_t c = 0; c < cases.size(); ++c) {
        double l = ScalarOf(output("loss" + std::to_string(c)));
        (side == 0 ? plus : minus)[c] = l;
      }
    }
    for (size_t c = 0; c < cases.size(); ++c) {
      if (r >= total[c]) continue;
      auto [k, j] = locate(c, r);
      values[c][k].data<double>()[j] += h;  // restored
      const double fd = (plus[c] - minus[c]) / (2 * h);
      const double got = grads[c][k].data<double>()[j];
      EXPECT_NEAR(got, fd, cases[c].tol * (1 + std::fabs(fd))) << cases[c].name << ": input " << k << " element " << j;
    }
  }
}

Attrs A(std::initializer_list<AttrInit> items) { return Attrs(items); }
Build Unary(const std::string& op, Attrs attrs = {}) {
  return [op, attrs](const std::vector<Var>& in) { return Call(op, {in[0]}, attrs); };
}
Build Binary(const std::string& op, Attrs attrs = {}) {
  return [op, attrs](const std::vector<Var>& in) { return Call(op, {in[0], in[1]}, attrs); };
}
std::vector<Case> BroadcastingArithmeticCases() {
  return {
      {"add", {{2, 3}, {3}}, Binary("add")},
      {"subtract", {{2, 1, 3}, {4, 1}}, Binary("subtract")},
      {"multiply", {{3}, {2, 3}}, Binary("multiply")},
      {"divide", {{2, 3}, {2, 1}}, Binary("divide"), 0.5, 2},
      {"power", {{2, 3}, {3}}, Binary("power"), 0.5, 2},
      {"maximum", {{2, 3}, {2, 3}}, Binary("maximum")},
      {"minimum", {{3, 1}, {2}}, Binary("minimum")},
      {"where", {{2, 3}, {3}},
       [](const std::vector<Var>& in) {
         auto c = runtime::NDArray::Empty({2, 3}, DataType::Bool());
         for (int i = 0; i < 6; ++i) runtime::StoreFromDouble(c.raw_data(), i, DataType::Bool(), i % 2);
         return Call("where", {ConstantNode::make(c), in[0], in[1]});
       }},
      {"x used twice", {{4}}, [](const std::vector<Var>& in) { return Call("add", {Call("multiply", {in[0], in[0]}), in[0]}); }},
  };
}

TEST(GradientNumerics, BroadcastingArithmetic) { ExpectGradientsMatchFiniteDifferences(BroadcastingArithmeticCases()); }

std::vector<Case> ElementwiseMathCases() {
  return {
      {"negative", {{5}}, Unary("negative")},
      {"copy", {{5}}, Unary("copy")},
      {"exp", {{5}}, Unary("exp")},
      {"log", {{5}}, Unary("log"), 0.3, 3},
      {"sqrt", {{5}}, Unary("sqrt"), 0.3, 3},
      {"tanh", {{5}}, Unary("tanh")},
      {"sigmoid", {{5}}, Unary("sigmoid")},
      {"abs", {{5}}, Unary("abs")},
      {"reciprocal", {{5}}, Unary("reciprocal"), 0.5, 2},
      {"sin", {{5}}, Unary("sin")},
      {"cos", {{5}}, Unary("cos")},
      {"tan", {{5}}, Unary("tan"), -1, 1},
      {"sinh", {{5}}, Unary("sinh")},
      {"cosh", {{5}}, Unary("cosh")},
      {"asin", {{5}}, Unary("asin"), -0.9, 0.9},
      {"acos", {{5}}, Unary("acos"), -0.9, 0.9},
      {"atan", {{5}}, Unary("atan")},
      {"asinh", {{5}}, Unary("asinh")},
      {"acosh", {{5}}, Unary("acosh"), 1.2, 3},
      {"atanh", {{5}}, Unary("atanh"), -0.9, 0.9},
      {"erf", {{5}}, Unary("erf")},
      {"floor", {{5}}, Unary("floor"), 0.1, 0.9},
      {"ceil", {{5}}, Unary("ceil"), 0.1, 0.9},
      {"round", {{5}}, Unary("round"), 0.1, 0.4},
      {"sign", {{5}}, Unary("sign"), 0.1, 0.9},
      {"clip", {{6}}, Unary("clip", A({{"a_min", -1.0}, {"a_max", 1.0}}))},
      {"cast", {{5}}, [](const std::vector<Var>& in) {
         return Call("multiply", {in[0], Call("cast", {Call("cast", {in[0]}, A({{"dtype", "float32"}}))}, A({{"dtype", "float64"}}))});
       }, -2, 2, 1e-2},  // float32's rounding makes the finite difference coarse
  };
}

TEST(GradientNumerics, ElementwiseMath) { ExpectGradientsMatchFiniteDifferences(ElementwiseMathCases()); }

std::vector<Case> ActivationsCases() {
  return {
      {"relu", {{6}}, Unary("nn.relu")},
      {"leaky_relu", {{6}}, Unary("nn.leaky_relu", A({{"alpha", 0.1}}))},
      {"elu", {{6}}, Unary("nn.elu", A({{"alpha", 0.8}}))},
      {"selu", {{6}}, Unary("nn.selu")},
      {"celu", {{6}}, Unary("nn.celu", A({{"alpha", 0.7}}))},
      {"thresholded_relu", {{6}}, Unary("nn.thresholded_relu", A({{"alpha", 0.5}}))},
      {"softplus", {{6}}, Unary("nn.softplus")},
      {"softsign", {{6}}, Unary("nn.softsign")},
      {"mish", {{6}}, Unary("nn.mish")},
      {"gelu", {{6}}, Unary("nn.gelu")},
      {"gelu tanh", {{6}}, Unary("nn.gelu", A({{"approximate", "tanh"}}))},
      {"swish", {{6}}, Unary("nn.swish", A({{"alpha", 1.5}}))},
      {"shrink", {{6}}, Unary("nn.shrink", A({{"lambd", 0.5}, {"bias", 0.2}}))},
      {"hard_sigmoid", {{6}}, Unary("hard_sigmoid", A({{"alpha", 0.3}, {"beta", 0.4}}))},
      {"hard_swish", {{8}}, Unary("hard_swish"), -5, 5},
      {"prelu", {{2, 3}, {3}}, Binary("nn.prelu")},
      {"softmax", {{2, 4}}, Unary("nn.softmax", A({{"axis", int64_t{1}}}))},
      {"log_softmax", {{3, 2}}, Unary("nn.log_softmax", A({{"axis", int64_t{0}}}))},
  };
}

TEST(GradientNumerics, Activations) { ExpectGradientsMatchFiniteDifferences(ActivationsCases()); }

std::vector<Case> LinearAlgebraCases() {
  auto bmm = [](int64_t ta, int64_t tb) { return Binary("nn.batch_matmul", A({{"transpose_a", ta}, {"transpose_b", tb}})); };
  return {
      {"dense", {{2, 3}, {4, 3}}, Binary("nn.dense")},
      {"dense 3-D", {{2, 2, 3}, {2, 3}}, Binary("nn.dense")},
      {"matmul", {{2, 3}, {3, 4}}, Binary("nn.matmul")},
      {"matmul batch broadcast", {{2, 1, 2, 3}, {3, 3, 2}}, Binary("nn.matmul")},
      {"matmul vector @ matrix", {{3}, {3, 2}}, Binary("nn.matmul")},
      {"matmul matrix @ vector", {{2, 2, 3}, {3}}, Binary("nn.matmul")},
      {"matmul vector @ vector", {{3}, {3}}, Binary("nn.matmul")},
      {"batch_matmul", {{2, 2, 3}, {2, 4, 3}}, bmm(0, 1)},
      {"batch_matmul nn", {{2, 2, 3}, {2, 3, 4}}, bmm(0, 0)},
      {"batch_matmul tn", {{2, 3, 2}, {2, 3, 4}}, bmm(1, 0)},
      {"batch_matmul tt", {{1, 3, 2}, {2, 4, 3}}, bmm(1, 1)},
      {"bias_add", {{2, 3, 2}, {3}}, Binary("nn.bias_add", A({{"axis", int64_t{1}}}))},
  };
}

TEST(GradientNumerics, LinearAlgebra) { ExpectGradientsMatchFiniteDifferences(LinearAlgebraCases()); }

std::vector<Case> ReductionsCases() {
  auto reduce = [](const std::string& op, Ints axis, int64_t keepdims, int64_t exclude = 0) {
    return Unary(op, A({{"axis", axis}, {"keepdims", keepdims}, {"exclude", exclude}}));
  };
  return {
      {"sum", {{2, 3, 2}}, reduce("sum", {1}, 0)},
      {"sum all", {{2, 3}}, reduce("sum", {}, 0)},
      {"sum exclude", {{2, 3, 2}}, reduce("sum", {1}, 1, 1)},
      {"mean", {{2, 3, 2}}, reduce("mean", {0, 2}, 1)},
      {"mean all", {{3, 2}}, reduce("mean", {}, 0)},
      {"max", {{2, 4}}, reduce("max", {1}, 0)},
      {"min", {{3, 2}}, reduce("min", {}, 1)},
      {"global_avg_pool2d", {{1, 2, 2, 3}}, Unary("nn.global_avg_pool2d")},
  };
}

TEST(GradientNumerics, Reductions) { ExpectGradientsMatchFiniteDifferences(ReductionsCases()); }

std::vector<Case> DataMovementCases() {
  auto idx = [](Ints shape, std::vector<int64_t> v) {
    auto a = runtime::NDArray::Empty(shape, DataType::Int(64));
    std::copy(v.begin(), v.end(), a.data<int64_t>());
    return ConstantNode::make(a);
  };
  return {
      {"reshape", {{2, 3}}, Unary("reshape", A({{"newshape", Ints{3, 2}}}))},
      {"transpose", {{2, 3, 2}}, Unary("transpose", A({{"axes", Ints{2, 0, 1}}}))},
      {"transpose reversed", {{2, 3}}, Unary("transpose")},
      {"expand_dims", {{2, 3}}, Unary("expand_dims", A({{"axis", int64_t{-1}}, {"num_newaxis", int64_t{2}}}))},
      {"squeeze", {{2, 1, 3}}, Unary("squeeze", A({{"axis", Ints{1}}}))},
      {"broadcast_to", {{3, 1}}, Unary("broadcast_to", A({{"shape", Ints{2, 3, 4}}}))},
      {"strided_slice", {{4, 5}}, Unary("strided_slice", A({{"begin", Ints{1, -4}}, {"end", Ints{3, 4}}, {"axes", Ints{0, 1}}}))},
      {"pad", {{2, 3}}, Unary("pad", A({{"pad_before", Ints{1, 0}}, {"pad_after", Ints{2, 1}}, {"mode", "constant"}, {"pad_value", 0.0}}))},
      {"pad cropping", {{3, 4}}, Unary("pad", A({{"pad_before", Ints{-1, 1}}, {"pad_after", Ints{0, -2}}, {"mode", "constant"}, {"pad_value", 0.0}}))},
      {"tile", {{2, 3}}, Unary("tile", A({{"reps", Ints{2, 3}}}))},
      {"concatenate", {{2, 3}, {2, 1}},
       [](const std::vector<Var>& in) { return Call("concatenate", {TupleNode::make({in[0], in[1], in[0]})}, A({{"axis", int64_t{1}}})); }},
      {"take", {{4, 3}},
       [idx](const std::vector<Var>& in) {
         return Call("take", {in[0], idx({2, 3}, {0, 3, -1, 1, 1, 0})}, A({{"axis", int64_t{0}}, {"mode", "wrap"}}));
       }},
      {"gather_elements", {{3, 2}},
       [idx](const std::vector<Var>& in) {
         return Call("gather_elements", {in[0], idx({2, 2}, {2, 0, 2, 2})}, A({{"axis", int64_t{0}}}));
       }},
      {"tuple and let", {{3}},
       [](const std::vector<Var>& in) {
         Var t = VarNode::make("t", nullptr);
         Expr pair = TupleNode::make({Call("exp", {in[0]}), in[0]});
         Expr body = Call("multiply", {TupleGetItemNode::make(t, 0), TupleGetItemNode::make(t, 1)});
         return LetNode::make(t, pair, body);
       }},
  };
}

TEST(GradientNumerics, DataMovement) { ExpectGradientsMatchFiniteDifferences(DataMovementCases()); }

std::vector<Case> SmallMlpLossCases() {
  // mean((relu(x W1^T + b1) @ W2 - target)^2) over a batch, gradients with respect to all weights.
  auto target = runtime::NDArray::Empty({4, 2}, kF64);
  for (int i = 0; i < 8; ++i) target.data<double>()[i] = 0.25 * i - 1;
  return {
      {"mlp", {{4, 3}, {5, 3}, {5}, {5, 2}},
       [target](const std::vector<Var>& in) {
         Expr h = Call("nn.relu", {Call("nn.bias_add", {Call("nn.dense", {in[0], in[1]}), in[2]}, A({{"axis", int64_t{-1}}}))});
         Expr d = Call("subtract", {Call("nn.matmul", {h, in[3]}), ConstantNode::make(target)});
         return Call("mean", {Call("multiply", {d, d})});
       }},
  };
}

TEST(GradientNumerics, SmallMlpLoss) { ExpectGradientsMatchFiniteDifferences(SmallMlpLossCases()); }

// Every op with a rule has a case above (ListGradientOps is the list gradient.h points to).
TEST(GradientNumerics, EveryRuleHasACase) {
  std::set<std::string> covered;
  for (const std::vector<Case>& group : {BroadcastingArithmeticCases(), ElementwiseMathCases(), ActivationsCases(), LinearAlgebraCases(), ReductionsCases(), DataMovementCases(), SmallMlpLossCases(),}) {
    for (const Case& c : group) {
      std::vector<Var> in;
      for (const Ints& shape : c.shapes) in.push_back(VarNode::make("x", TensorTypeNode::make(shape, kF64)));
      PostOrderVisit(c.build(in), [&](const Expr& e) {
        if (const auto* call = e->as<CallNode>())
          if (const auto* op = call->op->as<OpNode>()) covered.insert(op->name);
      });
    }
  }
  for (const std::string& op : transform::ListGradientOps()) EXPECT_TRUE(covered.count(op)) << op << " has no numeric case";
}

}  // namespace
}  // namespace tessera::graph
