// SimplifyInference, FoldConstant, FoldScaleAxis, EliminateCommonSubexpr, DeadCodeElimination,
// UnflattenReductions and the verifier: IR before -> IR expected after, compared as printed text of hand-built
// modules (constants print as meta[Constant][i] with their type, so values are checked apart).
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/dead_code_elimination.h"
#include "tessera/graph/transform/eliminate_common_subexpr.h"
#include "tessera/graph/transform/fold_constant.h"
#include "tessera/graph/transform/fold_scale_axis.h"
#include "tessera/graph/transform/simplify_inference.h"
#include "tessera/graph/transform/unflatten_reductions.h"
#include "tessera/graph/verify.h"
#include "tessera/support/error.h"
#include "graph_test_util.h"

namespace tessera::graph {
namespace {

using testing::Call;
using testing::F32;
using testing::Main;
using testing::Text;
using testing::Values;

Constant Weights(std::vector<int64_t> shape) { return Values(shape, {0.5f, -1.f, 2.f, 0.25f, 3.f}); }

Attrs ConvAttrs(int64_t groups = 1) {
  return Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
               {"dilation", std::vector<int64_t>{1, 1}}, {"groups", groups}};
}
Expr Conv(Expr x, Expr w, int64_t groups = 1) { return CallNode::make(OpNode::Get("nn.conv2d"), {x, w}, ConvAttrs(groups)); }

std::vector<float> Floats(const Expr& e) {
  const auto* c = e->as<ConstantNode>();
  EXPECT_NE(c, nullptr);
  if (!c) return {};
  return std::vector<float>(c->data.data<float>(), c->data.data<float>() + c->data.NumElements());
}

// ---- SimplifyInference ------------------------------------------------------------------

TEST(SimplifyInference, BatchNormBecomesMultiplyAddWithConstantScaleAndShift) {
  Var x = VarNode::make("x", F32({1, 2, 4, 4}));
  Expr bn = Call("nn.batch_norm", {x, Values({2}, {2.f, 3.f}), Values({2}, {1.f, -1.f}), Values({2}, {0.5f, 1.f}),
                                   Values({2}, {4.f, 9.f})},
                 Attrs{{"axis", int64_t{1}}, {"epsilon", 0.0}});
  IRModule after = transform::SimplifyInference(Main({x}, bn));

  Var x2 = VarNode::make("x", F32({1, 2, 4, 4}));
  Expr expected = Call("add", {Call("multiply", {x2, Weights({2, 1, 1})}), Weights({2, 1, 1})});
  EXPECT_EQ(Text(after), Text(Main({x2}, expected)));

  const auto* add = after.main()->body->as<CallNode>();
  const auto* mul = add->args[0]->as<CallNode>();
  // scale = gamma / sqrt(var + eps) = [1, 1]; shift = beta - mean * scale = [0.5, -2]
  EXPECT_EQ(Floats(mul->args[1]), (std::vector<float>{1.f, 1.f}));
  EXPECT_EQ(Floats(add->args[1]), (std::vector<float>{0.5f, -2.f}));
}

TEST(SimplifyInference, BatchNormOfNonConstantStatisticsBuildsExpressions) {
  Var x = VarNode::make("x", F32({1, 2, 3}));
  Var g = VarNode::make("g", F32({2}));
  Constant b = Weights({2}), m = Weights({2}), v = Weights({2});
  Expr bn = Call("nn.batch_norm", {x, g, b, m, v}, Attrs{{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  IRModule after = transform::SimplifyInference(Main({x, g}, bn));

  Var x2 = VarNode::make("x", F32({1, 2, 3}));
  Var g2 = VarNode::make("g", F32({2}));
  auto eps = runtime::NDArray::Empty({}, DataType::Float(32));
  *eps.data<float>() = 1e-5f;
  Expr s = Call("divide", {g2, Call("sqrt", {Call("add", {v, ConstantNode::make(eps)})})});
  Expr t = Call("subtract", {b, Call("multiply", {m, s})});
  Attrs ed{{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}};
  Expr expected = Call("add", {Call("multiply", {x2, Call("expand_dims", {s}, ed)}), Call("expand_dims", {t}, ed)});
  EXPECT_EQ(Text(after), Text(Main({x2, g2}, expected)));
}

TEST(SimplifyInference, IdentitiesAreRemoved) {
  Var x = VarNode::make("x", F32({2, 3}));
  Expr y = Call("copy", {Call("cast", {Call("reshape", {Call("transpose", {Call("exp", {x})},
                                                                  Attrs{{"axes", std::vector<int64_t>{0, 1}}})},
                                                  Attrs{{"newshape", std::vector<int64_t>{2, 3}}})},
                                  Attrs{{"dtype", std::string("float32")}})});
  IRModule after = transform::SimplifyInference(Main({x}, Call("nn.relu", {y})));
  Var x2 = VarNode::make("x", F32({2, 3}));
  EXPECT_EQ(Text(after), Text(Main({x2}, Call("nn.relu", {Call("exp", {x2})}))));
}

TEST(SimplifyInference, PowerBySmallConstantsBecomesMultiplies) {
  // x^3 (GPT-2's tanh GELU), x^2, x^4, x^1; x^0.5 (sqrt differs at -inf), x^2.5 and a [2, 3]
  // exponent stay powers.
  Var x = VarNode::make("x", F32({2, 3}));
  auto pw = [](const Expr& b, const Expr& e) { return Call("power", {b, e}); };
  Expr body = TupleNode::make({pw(x, Values({}, {3.f})), pw(x, Values({1}, {2.f})), pw(x, Values({}, {4.f})),
                               pw(x, Values({}, {0.5f})), pw(x, Values({}, {1.f})), pw(x, Values({}, {2.5f})), pw(x, Values({2, 3}, {2.f}))});
  IRModule after = transform::SimplifyInference(Main({x}, body));
  Var x2 = VarNode::make("x", F32({2, 3}));
  Expr sq = Call("multiply", {x2, x2});
  Expr expected = TupleNode::make({Call("multiply", {Call("multiply", {x2, x2}), x2}), Call("multiply", {x2, x2}),
                                   Call("multiply", {sq, sq}),
                                   pw(x2, Values({}, {0.5f})), x2, pw(x2, Values({}, {2.5f})), pw(x2, Values({2, 3}, {2.f}))});
  EXPECT_EQ(Text(after), Text(Main({x2}, expected)));
}

TEST(SimplifyInference, ConvTapsThatReadOnlyPaddingAreDropped) {
  // DeepLabV3's ASPP on a 14 x 14 map: a 3 x 3 conv of dilation 24, padding 24 reads the image
  // with its center tap only (the others land 24 rows / columns away) -> a 1 x 1 conv of the
  // center weights, padding 0; at dilation 6 every tap reads most outputs' rows: unchanged. Along
  // W alone (dilation [1, 20], padding [1, 20]): the H taps stay.
  auto conv = [](const Expr& x, const Expr& w, std::vector<int64_t> dilation, std::vector<int64_t> pad) {
    return Call("nn.conv2d", {x, w}, Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"dilation", dilation},
                                          {"padding", pad}});
  };
  auto slice = [](const Expr& w, std::vector<int64_t> begin, std::vector<int64_t> end) {
    return Call("strided_slice", {w}, Attrs{{"begin", begin}, {"end", end}, {"strides", std::vector<int64_t>{1, 1}},
                                            {"axes", std::vector<int64_t>{2, 3}}});
  };
  Var x = VarNode::make("x", F32({1, 4, 14, 14}));
  Constant w = Weights({2, 4, 3, 3});
  Expr body = TupleNode::make({conv(x, w, {24, 24}, {24, 24, 24, 24}), conv(x, w, {6, 6}, {6, 6, 6, 6}),
                               conv(x, w, {1, 20}, {1, 20, 1, 20})});
  IRModule after = transform::SimplifyInference(Main({x}, body));
  Var x2 = VarNode::make("x", F32({1, 4, 14, 14}));
  Expr expected = TupleNode::make({conv(x2, slice(w, {1, 1}, {2, 2}), {24, 24}, {0, 0, 0, 0}),
                                   conv(x2, w, {6, 6}, {6, 6, 6, 6}),
                                   conv(x2, slice(w, {0, 1}, {3, 2}), {1, 20}, {1, 0, 1, 0})});
  EXPECT_EQ(Text(InferType(after)), Text(InferType(Main({x2}, expected))));
}

TEST(SimplifyInference, ConvTapsLiveForFewOutputsAreSplitIntoOneConvPerTap) {
  // A 3 x 1 kernel of dilation 4, padding 4 along H of a 5-row map: tap 0 reads the image for
  // output row 4 only, tap 1 for all 5, tap 2 for row 0 (7 of 15 tap-rows live): one conv per
  // tap over its rows (the input rows it reads, no padding), zero-padded back to 5 rows, summed.
  // W (one tap, all live) is not split.
  auto slice = [](const Expr& e, int64_t begin, int64_t end) {
    return Call("strided_slice", {e}, Attrs{{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                            {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{2}}});
  };
  auto conv = [](const Expr& x, const Expr& w, std::vector<int64_t> pad) {
    return Call("nn.conv2d", {x, w}, Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"dilation", std::vector<int64_t>{4, 1}},
                                          {"padding", pad}});
  };
  auto pad_rows = [](const Expr& e, int64_t before, int64_t after) {
    return Call("pad", {e}, Attrs{{"pad_before", std::vector<int64_t>{0, 0, before, 0}},
                                  {"pad_after", std::vector<int64_t>{0, 0, after, 0}}, {"mode", std::string("constant")},
                                  {"pad_value", 0.0}});
  };
  Var x = VarNode::make("x", F32({1, 2, 5, 4}));
  Constant w = Weights({3, 2, 3, 1});
  IRModule after = transform::SimplifyInference(Main({x}, conv(x, w, {4, 0, 4, 0})));
  Var x2 = VarNode::make("x", F32({1, 2, 5, 4}));
  const std::vector<int64_t> none{0, 0, 0, 0};
  Expr top = pad_rows(conv(slice(x2, 0, 1), slice(w, 0, 1), none), 4, 0);
  Expr mid = conv(slice(x2, 0, 5), slice(w, 1, 2), none);
  Expr bottom = pad_rows(conv(slice(x2, 4, 5), slice(w, 2, 3), none), 0, 4);
  EXPECT_EQ(Text(after), Text(Main({x2}, Call("add", {Call("add", {top, mid}), bottom}))));
}

// ---- UnflattenReductions -------------------------------------------------------------------

Attrs ReshapeTo(std::vector<int64_t> s) { return Attrs{{"newshape", s}}; }
Attrs MeanOver(std::vector<int64_t> axes) { return Attrs{{"axis", axes}, {"keepdims", int64_t{1}}}; }

// GroupNorm(1, C) as PyTorch exports it before opset 18 (InstanceNormalization of the
// [N, 1, C*H*W] view), `stat_bias` added to the variance from outside ([N, 1, 1]).
Expr FlattenedGroupNorm(const Expr& x, int64_t n, int64_t m, const Expr& stat_bias, const Expr& gamma) {
  Expr r = Call("reshape", {x}, ReshapeTo({n, 1, m}));
  Expr d = Call("subtract", {r, Call("mean", {r}, MeanOver({2}))});
  Expr var = Call("add", {Call("mean", {Call("multiply", {d, d})}, MeanOver({-1})), stat_bias});
  Expr inv = Call("divide", {Values({}, {1.f}), Call("sqrt", {var})});
  return Call("multiply", {Call("multiply", {d, inv}), gamma});
}

TEST(UnflattenReductions, OneGroupNormRunsOverTheTensorsOwnAxes) {
  Var x = VarNode::make("x", F32({2, 8, 4, 4}));
  Constant bias = Values({2, 1, 1}, {1e-5f, 2e-5f}), gamma = Values({1, 1}, {1.5f});
  Expr y = Call("reshape", {FlattenedGroupNorm(x, 2, 128, bias, gamma)}, ReshapeTo({2, 8, 4, 4}));
  IRModule after = transform::UnflattenReductions(Main({x}, Call("nn.relu", {y})));

  Var x2 = VarNode::make("x", F32({2, 8, 4, 4}));
  Expr d = Call("subtract", {x2, Call("mean", {x2}, MeanOver({1, 2, 3}))});
  Expr var = Call("add", {Call("mean", {Call("multiply", {d, d})}, MeanOver({1, 2, 3})),
                          Call("reshape", {bias}, ReshapeTo({2, 1, 1, 1}))});
  Expr inv = Call("divide", {Values({}, {1.f}), Call("sqrt", {var})});
  Expr y2 = Call("multiply", {Call("multiply", {d, inv}), gamma});
  EXPECT_EQ(Text(after), Text(Main({x2}, Call("nn.relu", {y2}))));
}

TEST(UnflattenReductions, AFlattenedValueUsedElsewhereOrSeveralGroupsAreLeftAlone) {
  Var x = VarNode::make("x", F32({1, 8, 4, 4}));
  Constant bias = Values({}, {1e-5f}), gamma = Values({1, 1}, {1.5f});
  // The normalized flattened value is also a result of the function: it escapes.
  Expr norm = FlattenedGroupNorm(x, 1, 128, bias, gamma);
  IRModule escapes = Main({x}, TupleNode::make({Call("reshape", {norm}, ReshapeTo({1, 8, 4, 4})), norm}));
  EXPECT_EQ(Text(transform::UnflattenReductions(escapes)), Text(escapes));
  // Two groups ([1, 2, 64]): per-group statistics, not a per-sample one.
  Expr r = Call("reshape", {x}, ReshapeTo({1, 2, 64}));
  Expr d = Call("subtract", {r, Call("mean", {r}, MeanOver({2}))});
  IRModule groups = Main({x}, Call("reshape", {d}, ReshapeTo({1, 8, 4, 4})));
  EXPECT_EQ(Text(transform::UnflattenReductions(groups)), Text(groups));
  // A reduction over another axis of the view.
  Expr r1 = Call("reshape", {x}, ReshapeTo({1, 1, 128}));
  Expr d1 = Call("subtract", {r1, Call("mean", {r1}, MeanOver({1}))});
  IRModule other_axis = Main({x}, Call("reshape", {d1}, ReshapeTo({1, 8, 4, 4})));
  EXPECT_EQ(Text(transform::UnflattenReductions(other_axis)), Text(other_axis));
}

// ---- FoldConstant -------------------------------------------------------------------------

/// A test evaluator: element-wise add / multiply / negative of constants (enough to check
/// the pass finds the right roots and replaces them).
std::vector<runtime::NDArray> TinyEvaluate(const std::vector<Expr>& exprs, int* calls) {
  ++*calls;
  std::function<runtime::NDArray(const Expr&)> eval = [&](const Expr& e) -> runtime::NDArray {
    if (const auto* c = e->as<ConstantNode>()) return c->data;
    const auto* call = e->as<CallNode>();
    const std::string op = call->op->as<OpNode>()->name;
    runtime::NDArray a = eval(call->args[0]);
    runtime::NDArray out = runtime::NDArray::Empty(a.shape(), a.dtype());
    runtime::NDArray b = call->args.size() > 1 ? eval(call->args[1]) : a;
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      float x = a.data<float>()[i], y = b.data<float>()[b.NumElements() == 1 ? 0 : i];
      out.data<float>()[i] = op == "add" ? x + y : op == "multiply" ? x * y : -x;
    }
    return out;
  };
  std::vector<runtime::NDArray> out;
  for (const auto& e : exprs) out.push_back(eval(e));
  return out;
}

TEST(FoldConstant, MaximalConstantSubgraphsAreEvaluatedInOneCall) {
  Var x = VarNode::make("x", F32({3}));
  Constant a = Values({3}, {1.f, 2.f, 3.f}), b = Values({3}, {10.f, 20.f, 30.f});
  Expr c1 = Call("multiply", {Call("add", {a, b}), Call("negative", {a})});  // -(a+b)*a... all constant
  Expr c2 = Call("negative", {b});
  Expr y = Call("add", {Call("multiply", {x, c1}), c2});
  int calls = 0;
  IRModule after = transform::FoldConstant(Main({x}, y), [&](const std::vector<Expr>& e) { return TinyEvaluate(e, &calls); });
  EXPECT_EQ(calls, 1);
  Var x2 = VarNode::make("x", F32({3}));
  EXPECT_EQ(Text(after), Text(Main({x2}, Call("add", {Call("multiply", {x2, Weights({3})}), Weights({3})}))));
  const auto* add = after.main()->body->as<CallNode>();
  EXPECT_EQ(Floats(add->args[0]->as<CallNode>()->args[1]), (std::vector<float>{-11.f, -44.f, -99.f}));
  EXPECT_EQ(Floats(add->args[1]), (std::vector<float>{-10.f, -20.f, -30.f}));
}

TEST(FoldConstant, NothingConstantMeansNoEvaluation) {
  Var x = VarNode::make("x", F32({3}));
  IRModule before = Main({x}, Call("add", {x, Weights({3})}));
  int calls = 0;
  IRModule after = transform::FoldConstant(before, [&](const std::vector<Expr>& e) { return TinyEvaluate(e, &calls); });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(Text(after), Text(before));
}

TEST(FoldConstant, TupleAccessOfLiteralTupleIsResolved) {
  Var x = VarNode::make("x", F32({3}));
  Var y = VarNode::make("y", F32({3}));
  Expr body = Call("add", {TupleGetItemNode::make(TupleNode::make({x, y}), 1), x});
  IRModule after = transform::FoldConstant(Main({x, y}, body), nullptr);
  Var x2 = VarNode::make("x", F32({3}));
  Var y2 = VarNode::make("y", F32({3}));
  EXPECT_EQ(Text(after), Text(Main({x2, y2}, Call("add", {y2, x2}))));
}

// ---- FoldScaleAxis ------------------------------------------------------------------------

TEST(FoldScaleAxis, ScaleAfterConvFoldsIntoWeights) {
  Var x = VarNode::make("x", F32({1, 3, 5, 5}));
  Constant w = Weights({2, 3, 3, 3});
  Constant s = Values({2, 1, 1}, {2.f, 3.f});
  Constant t = Values({2, 1, 1}, {1.f, 1.f});
  Expr y = Call("nn.relu", {Call("add", {Call("multiply", {Conv(x, w), s}), t})});
  IRModule after = transform::FoldScaleAxis(Main({x}, y));

  Var x2 = VarNode::make("x", F32({1, 3, 5, 5}));
  Expr expected = Call("nn.relu", {Call("add", {Conv(x2, Call("multiply", {w, Weights({2, 1, 1, 1})})), t})});
  EXPECT_EQ(Text(after), Text(Main({x2}, expected)));
  const auto* conv = after.main()->body->as<CallNode>()->args[0]->as<CallNode>()->args[0]->as<CallNode>();
  EXPECT_EQ(Floats(conv->args[1]->as<CallNode>()->args[1]), (std::vector<float>{2.f, 3.f}));
}

TEST(FoldScaleAxis, ScaleAfterBiasAddScalesBiasToo) {
  Var x = VarNode::make("x", F32({1, 3, 5, 5}));
  Constant w = Weights({2, 3, 3, 3}), b = Weights({2});
  Expr y = Call("multiply", {Values({1, 2, 1, 1}, {2.f, 3.f}),
                             Call("nn.bias_add", {Conv(x, w), b}, Attrs{{"axis", int64_t{1}}})});
  IRModule after = transform::FoldScaleAxis(Main({x}, y));
  Var x2 = VarNode::make("x", F32({1, 3, 5, 5}));
  Expr expected = Call("nn.bias_add", {Conv(x2, Call("multiply", {w, Weights({2, 1, 1, 1})})),
                                       Call("multiply", {b, Weights({2})})},
                       Attrs{{"axis", int64_t{1}}});
  EXPECT_EQ(Text(after), Text(Main({x2}, expected)));
}

TEST(FoldScaleAxis, ScaleBeforeDepthwiseConvFoldsPerGroup) {
  Var x = VarNode::make("x", F32({1, 2, 5, 5}));
  Constant w = Weights({4, 1, 3, 3});  // depthwise, multiplier 2
  Expr y = Conv(Call("multiply", {x, Values({2, 1, 1}, {2.f, 3.f})}), w, 2);
  IRModule after = transform::FoldScaleAxis(Main({x}, y));
  Var x2 = VarNode::make("x", F32({1, 2, 5, 5}));
  EXPECT_EQ(Text(after), Text(Main({x2}, Conv(x2, Call("multiply", {w, Weights({4, 1, 1, 1})}), 2))));
  const auto* conv = after.main()->body->as<CallNode>();
  EXPECT_EQ(Floats(conv->args[1]->as<CallNode>()->args[1]), (std::vector<float>{2.f, 2.f, 3.f, 3.f}));
}

TEST(FoldScaleAxis, ScaleAfterDenseFoldsIntoRows) {
  Var x = VarNode::make("x", F32({1, 3}));
  Constant w = Weights({2, 3});
  Expr y = Call("multiply", {Call("nn.dense", {x, w}), Values({2}, {2.f, 3.f})});
  IRModule after = transform::FoldScaleAxis(Main({x}, y));
  Var x2 = VarNode::make("x", F32({1, 3}));
  EXPECT_EQ(Text(after), Text(Main({x2}, Call("nn.dense", {x2, Call("multiply", {w, Weights({2, 1})})}))));
}

TEST(FoldScaleAxis, SharedConvOrNonChannelScaleIsLeftAlone) {
  Var x = VarNode::make("x", F32({1, 3, 5, 5}));
  Expr conv = Conv(x, Weights({2, 3, 3, 3}));
  Expr shared = Call("add", {Call("multiply", {conv, Values({2, 1, 1}, {2.f, 3.f})}), conv});
  IRModule before = Main({x}, shared);
  EXPECT_EQ(Text(transform::FoldScaleAxis(before)), Text(before));
  Expr per_column = Call("multiply", {Conv(x, Weights({2, 3, 3, 3})), Values({5}, {1.f, 2.f})});
  IRModule before2 = Main({x}, per_column);
  EXPECT_EQ(Text(transform::FoldScaleAxis(before2)), Text(before2));
}

// ---- EliminateCommonSubexpr ------------------------------------------------------------------

TEST(EliminateCommonSubexpr, IdenticalCallsAndConstantsMerge) {
  Var x = VarNode::make("x", F32({3}));
  Expr a = Call("add", {x, Values({3}, {1.f, 2.f, 3.f})});
  Expr b = Call("add", {x, Values({3}, {1.f, 2.f, 3.f})});  // same values, another node
  Expr c = Call("add", {x, Values({3}, {1.f, 2.f, 4.f})});  // different values
  Expr y = Call("add", {Call("multiply", {Call("exp", {a}), Call("exp", {b})}), c});
  IRModule after = transform::EliminateCommonSubexpr(Main({x}, y));
  Var x2 = VarNode::make("x", F32({3}));
  Expr e = Call("exp", {Call("add", {x2, Weights({3})})});
  Expr expected = Call("add", {Call("multiply", {e, e}), Call("add", {x2, Weights({3})})});
  EXPECT_EQ(Text(after), Text(Main({x2}, expected)));
}

TEST(EliminateCommonSubexpr, DifferentAttrsDoNotMerge) {
  Var x = VarNode::make("x", F32({2, 3}));
  Expr a = Call("transpose", {x}, Attrs{{"axes", std::vector<int64_t>{1, 0}}});
  Expr b = Call("reshape", {x}, Attrs{{"newshape", std::vector<int64_t>{3, 2}}});
  IRModule before = Main({x}, Call("add", {a, b}));
  EXPECT_EQ(Text(transform::EliminateCommonSubexpr(before)), Text(before));
}

// ---- DeadCodeElimination ----------------------------------------------------------------------

TEST(DeadCodeElimination, UnusedLetsAndTupleFieldsAreDropped) {
  Var x = VarNode::make("x", F32({3}));
  Var dead = VarNode::make("dead");
  Var live = VarNode::make("live");
  Var dead2 = VarNode::make("dead2");
  Expr body = LetNode::make(
      dead2, Call("exp", {x}),
      LetNode::make(dead, Call("negative", {VarNode::make("unused_inner", F32({3}))}),
                    LetNode::make(live, Call("exp", {x}),
                                  TupleGetItemNode::make(TupleNode::make({Call("sigmoid", {x}), live}), 1))));
  // `dead`'s value refers to a free var: dropping the binding removes it.
  IRModule after = transform::DeadCodeElimination(IRModule::FromMain(FunctionNode::make({x}, body)));
  Var x2 = VarNode::make("x", F32({3}));
  Var live2 = VarNode::make("live");
  EXPECT_EQ(Text(after), Text(Main({x2}, LetNode::make(live2, Call("exp", {x2}), live2))));
}

// ---- Verifier -------------------------------------------------------------------------------

TEST(Verifier, SoundModulePasses) {
  Var x = VarNode::make("x", F32({3}));
  IRModule mod = Main({x}, TupleGetItemNode::make(TupleNode::make({Call("exp", {x}), x}), 0));
  VerifyOptions o;
  o.require_types = true;
  EXPECT_TRUE(VerifyModule(mod, o).empty());
}

TEST(Verifier, CatchesFreeVariableBadTupleIndexUntypedAndNonOpInPrimitive) {
  Var x = VarNode::make("x", F32({3}));
  Var free = VarNode::make("free", F32({3}));
  Var p = VarNode::make("p", F32({3}));
  Attrs prim;
  prim.Set("Primitive", 1);
  Function inner = FunctionNode::make({p}, Call("exp", {p}));
  Function bad_prim = FunctionNode::make({p}, CallNode::make(inner, {p}), nullptr, prim);
  Expr body = Call("add", {CallNode::make(bad_prim, {x}),
                           Call("add", {free, TupleGetItemNode::make(TupleNode::make({x}), 3)})});
  IRModule mod = IRModule::FromMain(FunctionNode::make({x}, body));
  VerifyOptions o;
  o.require_types = true;
  std::vector<std::string> problems = VerifyModule(mod, o);
  std::string all;
  for (const auto& s : problems) all += s + "\n";
  EXPECT_NE(all.find("free variable %free"), std::string::npos) << all;
  EXPECT_NE(all.find("tuple access .3 of a tuple of 1 fields"), std::string::npos) << all;
  EXPECT_NE(all.find("no checked type"), std::string::npos) << all;
  EXPECT_NE(all.find("primitive function calls a non-op"), std::string::npos) << all;
  EXPECT_THROW(CheckModule(mod, o, "pass Broken"), InternalError);
}

TEST(Verifier, ALetBoundFunctionMayCallItselfButAPlainLetMayNot) {
  // let %loop = fn (%v) { if (%c) { %loop(exp(%v)) } else { %v } }; %loop(x): sound (a loop).
  // let %y = add(%y, x); %y: %y is free in its own value.
  Var x = VarNode::make("x", F32({3}));
  Var c = VarNode::make("c", TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()));
  Var v = VarNode::make("v", F32({3}));
  Var loop = VarNode::make("loop", FuncTypeNode::make({F32({3})}, F32({3})));
  Expr fn = FunctionNode::make({v}, IfNode::make(c, CallNode::make(loop, {Call("exp", {v})}), v), F32({3}));
  VerifyOptions o;
  o.require_types = true;
  const IRModule good = InferType(IRModule::FromMain(FunctionNode::make({x, c}, LetNode::make(loop, fn, CallNode::make(loop, {x})))));
  EXPECT_TRUE(VerifyModule(good, o).empty());
  // The call of %loop in its own body and at the let's body is a use: dead-code elimination keeps it.
  EXPECT_EQ(PrintModule(transform::DeadCodeElimination(good)), PrintModule(good));
  Var y = VarNode::make("y", F32({3}));
  const IRModule bad = IRModule::FromMain(FunctionNode::make({x}, LetNode::make(y, Call("add", {y, x}), y)));
  std::string all;
  for (const auto& s : VerifyModule(bad)) all += s + "\n";
  EXPECT_NE(all.find("free variable %y"), std::string::npos) << all;
}

TEST(Verifier, InstrumentChecksTypesOnlyAfterInferType) {
  Var x = VarNode::make("x", F32({3}));
  IRModule untyped = IRModule::FromMain(FunctionNode::make({x}, Call("exp", {x})));
  VerifierInstrument v;
  EXPECT_NO_THROW(v.RunAfterPass({"SimplifyInference", "", 0}, ir::IRView::Of(untyped)));
  EXPECT_THROW(v.RunAfterPass({"InferType", "", 0}, ir::IRView::Of(untyped)), InternalError);
  int not_a_graph = 0;
  EXPECT_NO_THROW(v.RunAfterPass({"InferType", "", 0}, ir::IRView::Of(not_a_graph, [] { return std::string(); })));
}

}  // namespace
}  // namespace tessera::graph
