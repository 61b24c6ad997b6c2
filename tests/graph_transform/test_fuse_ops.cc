// FuseOps: IR before -> IR expected after, compared as printed text of hand-built modules.
#include <gtest/gtest.h>

#include <functional>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/fuse_ops.h"

namespace tessera::graph {
namespace {

Type F32(std::vector<int64_t> shape) { return TensorTypeNode::make(shape, DataType::Float(32)); }

Constant Weights(std::vector<int64_t> shape) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = 0.01f * static_cast<float>(i % 7);
  return ConstantNode::make(a);
}

Expr Conv(Expr x, Expr w) {
  return CallNode::make(OpNode::Get("nn.conv2d"), {x, w},
                        Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                              {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{1}}});
}
Expr Call1(const std::string& op, std::vector<Expr> args) { return CallNode::make(OpNode::Get(op), std::move(args)); }

Function Primitive(std::vector<Var> params, Expr body) {
  Attrs attrs;
  attrs.Set("Primitive", 1);
  return FunctionNode::make(std::move(params), std::move(body), nullptr, attrs);
}

TEST(FuseOps, ConvBiasReluResidualFuseIntoOneFunction) {
  Var x = VarNode::make("x", F32({1, 4, 8, 8}));
  Constant w = Weights({4, 4, 3, 3});
  Constant b = Weights({1, 4, 1, 1});
  // relu(conv(x, w) + b) + x
  Expr y = Call1("add", {Call1("nn.relu", {Call1("add", {Conv(x, w), b})}), x});
  IRModule before = InferType(IRModule::FromMain(FunctionNode::make({x}, y)));
  IRModule after = InferType(transform::FuseOps(before));

  Var p0 = VarNode::make("p0", F32({1, 4, 8, 8}));
  Var p1 = VarNode::make("p1", F32({4, 4, 3, 3}));
  Var p2 = VarNode::make("p2", F32({1, 4, 1, 1}));
  Function fused = Primitive({p0, p1, p2}, Call1("add", {Call1("nn.relu", {Call1("add", {Conv(p0, p1), p2})}), p0}));
  Var x2 = VarNode::make("x", F32({1, 4, 8, 8}));
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, CallNode::make(fused, {x2, w, b}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, AConcatenateTakesDataMovementButNotAResizeIntoItsInputs) {
  // concatenate(resize(a), transpose(b)): the concatenate's select chain evaluates every input at
  // every element, so the resize stays a kernel of its own; the transpose (a load) joins.
  Var a = VarNode::make("a", F32({1, 2, 4, 4}));
  Var b = VarNode::make("b", F32({1, 8, 8, 3}));
  Attrs resize{{"axes", std::vector<int64_t>{2, 3}}, {"sizes", std::vector<int64_t>{8, 8}},
               {"scales", std::vector<double>{2.0, 2.0}}, {"mode", std::string("linear")}};
  Attrs to_nchw{{"axes", std::vector<int64_t>{0, 3, 1, 2}}};
  Attrs axis1{{"axis", int64_t{1}}};
  auto concat = [&](const Expr& x, const Expr& y) {
    return CallNode::make(OpNode::Get("concatenate"), {TupleNode::make({x, CallNode::make(OpNode::Get("transpose"), {y}, to_nchw)})},
                          axis1);
  };
  Expr y = concat(CallNode::make(OpNode::Get("image.resize"), {a}, resize), b);
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({a, b}, y)))));

  Var p0 = VarNode::make("p0", F32({1, 2, 4, 4}));
  Function resize_fn = Primitive({p0}, CallNode::make(OpNode::Get("image.resize"), {p0}, resize));
  Var q0 = VarNode::make("p0", F32({1, 2, 8, 8}));
  Var q1 = VarNode::make("p1", F32({1, 8, 8, 3}));
  Function concat_fn = Primitive({q0, q1}, concat(q0, q1));
  Var a2 = VarNode::make("a", F32({1, 2, 4, 4}));
  Var b2 = VarNode::make("b", F32({1, 8, 8, 3}));
  IRModule expected = InferType(
      IRModule::FromMain(FunctionNode::make({a2, b2}, CallNode::make(concat_fn, {CallNode::make(resize_fn, {a2}), b2}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, DiamondFusesWhenEveryUseIsInside) {
  // exp feeds relu and sigmoid, both inside add's group: the whole diamond is one function
  // (TVM's post-dominator rule).
  Var x = VarNode::make("x", F32({2, 3}));
  Expr e = Call1("exp", {x});
  Expr y = Call1("add", {Call1("nn.relu", {e}), Call1("sigmoid", {e})});
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y)))));

  Var p0 = VarNode::make("p0", F32({2, 3}));
  Expr e_in = Call1("exp", {p0});
  Function fused = Primitive({p0}, Call1("add", {Call1("nn.relu", {e_in}), Call1("sigmoid", {e_in})}));
  Var x2 = VarNode::make("x", F32({2, 3}));
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, CallNode::make(fused, {x2}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, SharedProducerWithAnOutsideUseStaysSeparate) {
  // exp also feeds the second output: it cannot disappear into add's function.
  Var x = VarNode::make("x", F32({2, 3}));
  Expr e = Call1("exp", {x});
  Expr y = TupleNode::make({Call1("add", {Call1("nn.relu", {e}), Call1("sigmoid", {e})}), Call1("negative", {e})});
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y)))));

  Var a0 = VarNode::make("p0", F32({2, 3}));
  Function f_exp = Primitive({a0}, Call1("exp", {a0}));
  Var c0 = VarNode::make("p0", F32({2, 3}));
  Function f_add = Primitive({c0}, Call1("add", {Call1("nn.relu", {c0}), Call1("sigmoid", {c0})}));
  Var d0 = VarNode::make("p0", F32({2, 3}));
  Function f_neg = Primitive({d0}, Call1("negative", {d0}));
  Var x2 = VarNode::make("x", F32({2, 3}));
  Expr e2 = CallNode::make(f_exp, {x2});
  Expr y2 = TupleNode::make({CallNode::make(f_add, {e2}), CallNode::make(f_neg, {e2})});
  IRModule expected = InferType(IRModule::FromMain(FunctionNode::make({x2}, y2)));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, GeluEpilogueFusesIntoTheDense) {
  // y = dense(x, w) + b; gelu(y) = y * (erf(y * c) + 1) * 0.5: y has two uses, both in the
  // epilogue, so the dense, its bias and the whole GELU are one function.
  Var x = VarNode::make("x", F32({4, 8}));
  Constant w = Weights({16, 8}), b = Weights({16});
  Constant c = Weights({}), one = Weights({}), half = Weights({});
  Expr yb = Call1("add", {Call1("nn.dense", {x, w}), b});
  Expr g = Call1("multiply", {Call1("multiply", {yb, Call1("add", {Call1("erf", {Call1("multiply", {yb, c})}), one})}), half});
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, g)))));
  const std::string text = PrintModule(after);
  // One primitive function (one `Primitive` attribute) holding nn.dense and erf.
  size_t count = 0;
  for (size_t pos = text.find("Primitive"); pos != std::string::npos; pos = text.find("Primitive", pos + 1)) ++count;
  EXPECT_EQ(count, 1u) << text;
  EXPECT_NE(text.find("nn.dense"), std::string::npos) << text;
  EXPECT_NE(text.find("erf"), std::string::npos) << text;
}

TEST(FuseOps, OptLevelZeroMakesOneFunctionPerCall) {
  Var x = VarNode::make("x", F32({4}));
  Expr y = Call1("nn.relu", {Call1("exp", {x})});
  transform::FuseOpsOptions o;
  o.fuse_opt_level = 0;
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y))), o));
  Var a = VarNode::make("p0", F32({4}));
  Var b = VarNode::make("p0", F32({4}));
  Var x2 = VarNode::make("x", F32({4}));
  Expr expected_body = CallNode::make(Primitive({b}, Call1("nn.relu", {b})),
                                      {CallNode::make(Primitive({a}, Call1("exp", {a})), {x2})});
  EXPECT_EQ(PrintModule(after), PrintModule(InferType(IRModule::FromMain(FunctionNode::make({x2}, expected_body)))));
}

TEST(FuseOps, ConvIsNotFusedIntoAnotherConv) {
  Var x = VarNode::make("x", F32({1, 4, 8, 8}));
  Expr y = Conv(Call1("nn.relu", {Conv(x, Weights({4, 4, 3, 3}))}), Weights({4, 4, 3, 3}));
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, y)))));
  int primitives = 0;
  PostOrderVisit(after.main()->body, [&](const Expr& e) {
    if (const auto* f = e->as<FunctionNode>()) primitives += f->attrs.GetInt("Primitive", 0);
  });
  EXPECT_EQ(primitives, 2);
}

// Counts the primitive functions of main and returns the printed text of the one that calls `op`.
std::string PrimitiveCalling(const IRModule& m, const std::string& op, int* primitives) {
  std::string found;
  *primitives = 0;
  PostOrderVisit(m.main()->body, [&](const Expr& e) {
    const auto* f = e->as<FunctionNode>();
    if (!f || !f->attrs.GetInt("Primitive", 0)) return;
    ++*primitives;
    bool calls = false;
    PostOrderVisit(f->body, [&](const Expr& b) {
      if (const auto* c = b->as<CallNode>())
        if (const auto* o = c->op->as<OpNode>()) calls |= o->name == op;
    });
    if (calls) found = PrintModule(IRModule::FromMain(FunctionNode::make(f->params, f->body)));
  });
  return found;
}

TEST(FuseOps, DenseFusesIntoAnAddWhoseOtherOperandIsASlice) {
  // An unrolled RNN step: add(strided_slice(xp), dense(h, R)). The add's group starts with the
  // slice of its other operand; the dense, whose only consumer is the elementwise add, joins it:
  // one function with the dense, the slice and the add (its epilogue), params in first-use order.
  Var xp = VarNode::make("xp", F32({3, 16}));
  Var h = VarNode::make("h", F32({1, 8}));
  Constant r = Weights({16, 8});
  Attrs slice{{"begin", std::vector<int64_t>{1}}, {"end", std::vector<int64_t>{2}},
              {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{0}}};
  Expr y = Call1("add", {CallNode::make(OpNode::Get("strided_slice"), {xp}, slice), Call1("nn.dense", {h, r})});
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({xp, h}, y)))));

  Var p0 = VarNode::make("p0", F32({3, 16}));
  Var p1 = VarNode::make("p1", F32({1, 8}));
  Var p2 = VarNode::make("p2", F32({16, 8}));
  Function fused = Primitive({p0, p1, p2}, Call1("add", {CallNode::make(OpNode::Get("strided_slice"), {p0}, slice),
                                                          Call1("nn.dense", {p1, p2})}));
  Var xp2 = VarNode::make("xp", F32({3, 16}));
  Var h2 = VarNode::make("h", F32({1, 8}));
  IRModule expected =
      InferType(IRModule::FromMain(FunctionNode::make({xp2, h2}, CallNode::make(fused, {xp2, h2, r}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, CallsInsideIfBranchesAreGroupedAndTheIfStays) {
  // main(x, c) = add(if c { exp(relu(x)) } else { negative(x) }, x): each branch's chain fuses into
  // one function inside its branch; the If itself, its condition and the add after it stay outside
  // (the add reads the If's result as a whole: nothing fuses across the If).
  Var x = VarNode::make("x", F32({8}));
  Var c = VarNode::make("c", TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()));
  Expr branch_if = IfNode::make(c, Call1("exp", {Call1("nn.relu", {x})}), Call1("negative", {x}));
  IRModule after = InferType(transform::FuseOps(
      InferType(IRModule::FromMain(FunctionNode::make({x, c}, Call1("add", {branch_if, x}))))));

  Var x2 = VarNode::make("x", F32({8}));
  Var c2 = VarNode::make("c", TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()));
  Var p0 = VarNode::make("p0", F32({8}));
  Var q0 = VarNode::make("p0", F32({8}));
  Var a0 = VarNode::make("p0", F32({8}));
  Var a1 = VarNode::make("p1", F32({8}));
  Expr expected_if = IfNode::make(c2, CallNode::make(Primitive({p0}, Call1("exp", {Call1("nn.relu", {p0})})), {x2}),
                                  CallNode::make(Primitive({q0}, Call1("negative", {q0})), {x2}));
  IRModule expected = InferType(IRModule::FromMain(
      FunctionNode::make({x2, c2}, CallNode::make(Primitive({a0, a1}, Call1("add", {a0, a1})), {expected_if, x2}))));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, AProducerUsedOnlyInsideABranchJoinsTheBranchsGroup) {
  // h = relu(x) is used only by exp(h) in the then branch: it fuses there, so it runs only when
  // that branch is taken. k = sigmoid(x) is used in both branches: it keeps its own function outside.
  Var x = VarNode::make("x", F32({8}));
  Var c = VarNode::make("c", TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()));
  Expr h = Call1("nn.relu", {x});
  Expr k = Call1("sigmoid", {x});
  Expr body = IfNode::make(c, Call1("add", {Call1("exp", {h}), k}), Call1("negative", {k}));
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x, c}, body)))));
  const std::string text = PrintModule(after);
  int primitives = 0;
  const std::string exp_fn = PrimitiveCalling(after, "exp", &primitives);
  EXPECT_EQ(primitives, 3) << text;
  EXPECT_NE(exp_fn.find("nn.relu"), std::string::npos) << exp_fn;
  EXPECT_EQ(exp_fn.find("sigmoid"), std::string::npos) << exp_fn;
  EXPECT_EQ(PrimitiveCalling(after, "negative", &primitives).find("sigmoid"), std::string::npos) << text;
  EXPECT_NE(text.find("if ("), std::string::npos) << text;
}

Constant Scalar(DataType t, double v) {
  auto a = runtime::NDArray::Empty({}, t);
  if (t == DataType::Int(64)) *a.data<int64_t>() = static_cast<int64_t>(v);
  else *a.data<float>() = static_cast<float>(v);
  return ConstantNode::make(a);
}

/// main(x, m) = let %loop = fn (%i, %v) { if (cond(%i, %m)) { %loop(next_i(%i), next_v(%v, %x)) }
/// else { (%v,) } }; %loop(0, x).0 — the loop the importer writes for ONNX Loop; `cond`, `next_i` and
/// `next_v` build the three computations from their operands.
Function LoopMain(const std::function<Expr(Expr, Expr)>& cond, const std::function<Expr(Expr, Expr)>& next_i,
                  const std::function<Expr(Expr, Expr, Expr)>& next_v) {
  const Type i64 = TensorTypeNode::make(std::vector<int64_t>{}, DataType::Int(64));
  Var x = VarNode::make("x", F32({8})), m = VarNode::make("m", i64);
  Var i = VarNode::make("i", i64), v = VarNode::make("v", F32({8}));
  const Type result = TupleTypeNode::make({F32({8})});
  Var loop = VarNode::make("loop", FuncTypeNode::make({i64, F32({8})}, result));
  Expr body = IfNode::make(cond(i, m),
                           CallNode::make(loop, {next_i(i, Scalar(DataType::Int(64), 1)),
                                                 next_v(v, Scalar(DataType::Float(32), 0.5), x)}),
                           TupleNode::make({v}));
  Expr let = LetNode::make(loop, FunctionNode::make({i, v}, body, result),
                           CallNode::make(loop, {Scalar(DataType::Int(64), 0), x}));
  return FunctionNode::make({x, m}, TupleGetItemNode::make(let, 0));
}

TEST(FuseOps, CallsInALoopFunctionAreGroupedAndTheLoopStays) {
  // The loop's test, its counter and its tanh * 0.5 + x chain each become a primitive function in the
  // body; the let-bound function, its tail call and the call that starts it stay as they are.
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(LoopMain(
      [](Expr i, Expr m) { return Call1("less", {i, m}); }, [](Expr i, Expr one) { return Call1("add", {i, one}); },
      [](Expr v, Expr half, Expr x) { return Call1("add", {Call1("multiply", {Call1("tanh", {v}), half}), x}); })))));
  auto prim = [](std::vector<Type> types, const std::function<Expr(const std::vector<Var>&)>& body) {
    std::vector<Var> ps;
    for (size_t k = 0; k < types.size(); ++k) ps.push_back(VarNode::make("p" + std::to_string(k), types[k]));
    return [=](std::vector<Expr> args) { return CallNode::make(Primitive(ps, body(ps)), std::move(args)); };
  };
  const Type i64 = TensorTypeNode::make(std::vector<int64_t>{}, DataType::Int(64));
  const Type f32 = TensorTypeNode::make(std::vector<int64_t>{}, DataType::Float(32));
  auto less = prim({i64, i64}, [](const std::vector<Var>& p) { return Call1("less", {p[0], p[1]}); });
  auto add = prim({i64, i64}, [](const std::vector<Var>& p) { return Call1("add", {p[0], p[1]}); });
  auto chain = prim({F32({8}), f32, F32({8})}, [](const std::vector<Var>& p) {
    return Call1("add", {Call1("multiply", {Call1("tanh", {p[0]}), p[1]}), p[2]});
  });
  IRModule expected = InferType(IRModule::FromMain(LoopMain(
      [&](Expr i, Expr m) { return less({i, m}); }, [&](Expr i, Expr one) { return add({i, one}); },
      [&](Expr v, Expr half, Expr x) { return chain({v, half, x}); })));
  EXPECT_EQ(PrintModule(after), PrintModule(expected));
}

TEST(FuseOps, DenseIsNotFusedIntoAReductionOfItsOutput) {
  // LayerNorm after a dense: y = dense(x, w) + b; y - mean(y). y's uses are both in the
  // subtract's group, but that group reduces y: the dense keeps its own function (bias epilogue),
  // and the mean and subtract form the other.
  Var x = VarNode::make("x", F32({4, 8}));
  Expr y = Call1("add", {Call1("nn.dense", {x, Weights({16, 8})}), Weights({16})});
  Expr m = CallNode::make(OpNode::Get("mean"), {y}, Attrs{{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}});
  Expr out = Call1("subtract", {y, m});
  IRModule after = InferType(transform::FuseOps(InferType(IRModule::FromMain(FunctionNode::make({x}, out)))));
  int primitives = 0;
  const std::string dense_fn = PrimitiveCalling(after, "nn.dense", &primitives);
  EXPECT_EQ(primitives, 2) << PrintModule(after);
  EXPECT_NE(dense_fn.find("add"), std::string::npos) << dense_fn;
  EXPECT_EQ(dense_fn.find("mean"), std::string::npos) << dense_fn;
  EXPECT_NE(PrimitiveCalling(after, "mean", &primitives).find("subtract"), std::string::npos) << PrintModule(after);
}

}  // namespace
}  // namespace tessera::graph
