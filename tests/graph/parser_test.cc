// The graph IR's text form round trip: PrintModule(ParseModule(PrintModule(m, meta)), meta) is the
// same text, and the parsed module the same graph (ExprEqual below); the printer's scoping of If
// branches; the parser's errors (source:line:column) and its robustness to mutated text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/parser.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/fuse_ops.h"
#include "test_util.h"

namespace tessera::graph {
namespace {

using testing::CallOp;
using testing::F32;

const PrintOptions kMeta{.metadata = true};

Type Bool() { return TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()); }

Constant Random(const std::vector<int64_t>& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  runtime::NDArray a = runtime::NDArray::Empty(shape, DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = dist(rng);
  return ConstantNode::make(a);
}

template <typename T>
Constant Scalar(T v, DataType dtype = runtime::DataTypeOf<T>()) {
  runtime::NDArray a = runtime::NDArray::Empty({}, dtype);
  std::memcpy(a.raw_data(), &v, sizeof(T));
  return ConstantNode::make(a);
}

// Structural equality of two graphs: same kinds, ops, attrs, constant bytes and types, variables
// matched one to one by position of definition (names may differ). Sharing is not compared: the
// text prints a node both If branches use once per branch.
class ExprEqual {
 public:
  bool operator()(const Expr& a, const Expr& b) {
    auto key = std::make_pair(a.get(), b.get());
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    return memo_[key] = Compare(a, b);
  }

 private:
  // A definition (parameter, let): `a` stands for `b` from here on (a function the original
  // shares between two places is two functions in the text).
  bool Bind(const Var& a, const Var& b) {
    vars_[a.get()] = b.get();
    return StructuralEqual(a->type_annotation, b->type_annotation);
  }
  // A use: the variable bound to `a` (a free variable is bound on first use).
  bool Use(const Var& a, const Var& b) {
    auto it = vars_.find(a.get());
    return it == vars_.end() ? Bind(a, b) : it->second == b.get();
  }

  bool Compare(const Expr& a, const Expr& b) {
    if (a->kind != b->kind) return false;
    if (a->has_checked_type() && b->has_checked_type() && !StructuralEqual(a->checked_type(), b->checked_type())) {
      return false;
    }
    switch (a->kind) {
      case ExprKind::kVar: return Use(Downcast<VarNode>(a), Downcast<VarNode>(b));
      case ExprKind::kOp: return a->as<OpNode>()->name == b->as<OpNode>()->name;
      case ExprKind::kConstant: {
        const runtime::NDArray &x = a->as<ConstantNode>()->data, &y = b->as<ConstantNode>()->data;
        return x.dtype() == y.dtype() && x.shape() == y.shape() &&
               std::memcmp(x.raw_data(), y.raw_data(), x.NBytes()) == 0;
      }
      case ExprKind::kCall: {
        auto *x = a->as<CallNode>(), *y = b->as<CallNode>();
        return x->attrs == y->attrs && (*this)(x->op, y->op) && All(x->args, y->args);
      }
      case ExprKind::kTuple: return All(a->as<TupleNode>()->fields, b->as<TupleNode>()->fields);
      case ExprKind::kTupleGetItem: {
        auto *x = a->as<TupleGetItemNode>(), *y = b->as<TupleGetItemNode>();
        return x->index == y->index && (*this)(x->tuple, y->tuple);
      }
      case ExprKind::kLet: {
        auto *x = a->as<LetNode>(), *y = b->as<LetNode>();
        return (*this)(x->value, y->value) && Bind(x->var, y->var) && (*this)(x->body, y->body);
      }
      case ExprKind::kIf: {
        auto *x = a->as<IfNode>(), *y = b->as<IfNode>();
        return (*this)(x->cond, y->cond) && (*this)(x->true_branch, y->true_branch) &&
               (*this)(x->false_branch, y->false_branch);
      }
      case ExprKind::kFunction: {
        auto *x = a->as<FunctionNode>(), *y = b->as<FunctionNode>();
        if (x->params.size() != y->params.size() || !(x->attrs == y->attrs)) return false;
        for (size_t i = 0; i < x->params.size(); ++i)
          if (!Bind(x->params[i], y->params[i])) return false;
        return (*this)(x->body, y->body);
      }
    }
    return false;
  }

  bool All(const std::vector<Expr>& xs, const std::vector<Expr>& ys) {
    if (xs.size() != ys.size()) return false;
    for (size_t i = 0; i < xs.size(); ++i)
      if (!(*this)(xs[i], ys[i])) return false;
    return true;
  }

  std::map<std::pair<const ExprNode*, const ExprNode*>, bool> memo_;
  std::map<const VarNode*, const VarNode*> vars_;
};

bool ModulesEqual(const IRModule& a, const IRModule& b) {
  if (a.functions().size() != b.functions().size()) return false;
  ExprEqual eq;
  for (const auto& [name, f] : a.functions()) {
    if (!b.Contains(name) || !eq(f, b.Lookup(name))) return false;
  }
  return true;
}

// Prints `m` with metadata, parses it back, and checks the text and the graph are the same.
IRModule RoundTrip(const IRModule& m) {
  const std::string text = PrintModule(m, kMeta);
  IRModule parsed = ParseModule(text, "round_trip");
  EXPECT_EQ(PrintModule(parsed, kMeta), text);
  EXPECT_TRUE(ModulesEqual(m, parsed)) << text;
  return parsed;
}

IRModule Typed(std::vector<Var> params, Expr body) {
  return InferType(IRModule::FromMain(FunctionNode::make(std::move(params), std::move(body))));
}

Attrs ConvAttrs() {
  return Attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}},
               {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{1}}};
}

IRModule ConvBiasRelu() {
  Var x = VarNode::make("input", F32({1, 3, 8, 8}));
  Expr conv = CallOp("nn.conv2d", {x, Random({4, 3, 3, 3}, 1)}, ConvAttrs());
  Expr bias = CallOp("nn.bias_add", {conv, Random({4}, 2)}, Attrs{{"axis", 1}});
  return Typed({x}, CallOp("nn.relu", {bias}));
}

TEST(Parser, ConvBiasReluWithWeightConstants) {
  IRModule m = ConvBiasRelu();
  IRModule parsed = RoundTrip(m);
  const std::string text = PrintModule(m, kMeta);
  EXPECT_NE(text.find("\n\n#[metadata]\nConstant[0]: float32 (4, 3, 3, 3) "), std::string::npos) << text;
  EXPECT_NE(text.find("\nConstant[1]: float32 (4,) "), std::string::npos) << text;
  // Without the option (--dump-ir) no data is written, and the functions print the same.
  const std::string plain = PrintModule(m);
  EXPECT_EQ(plain.find("#[metadata]"), std::string::npos);
  EXPECT_EQ(text.substr(0, plain.size()), plain);
  EXPECT_EQ(PrintModule(parsed), plain);
}

TEST(Parser, FusedModuleKeepsPrimitiveAndExternalFunctionAttrs) {
  IRModule fused = InferType(transform::FuseOps(ConvBiasRelu()));
  const std::string text = PrintModule(fused, kMeta);
  ASSERT_NE(text.find("/* attrs: Primitive=1 */"), std::string::npos) << text;
  IRModule parsed = RoundTrip(fused);
  int primitives = 0;
  PostOrderVisit(parsed.main()->body, [&](const Expr& e) {
    if (const auto* f = e->as<FunctionNode>()) primitives += static_cast<int>(f->attrs.GetInt("Primitive", 0));
  });
  EXPECT_EQ(primitives, 1);

  // An external (BYOC) function: a global function with Compiler / global_symbol, called by main.
  Var p = VarNode::make("p", F32({2, 2}));
  Attrs ext_attrs{{"Compiler", std::string("ccompiler")}, {"global_symbol", std::string("ccompiler_0")}};
  Function ext = FunctionNode::make({p}, CallOp("exp", {p}), nullptr, ext_attrs);
  Var x = VarNode::make("x", F32({2, 2}));
  IRModule m = IRModule::FromMain(FunctionNode::make({x}, CallNode::make(ext, {x})));
  m.Add("ccompiler_0", ext);
  IRModule ext_parsed = RoundTrip(InferType(m));
  EXPECT_EQ(ext_parsed.Lookup("ccompiler_0")->attrs.GetString("Compiler"), "ccompiler");
  EXPECT_EQ(ext_parsed.Lookup("ccompiler_0")->attrs.GetString("global_symbol"), "ccompiler_0");
}

// main(x, c, d) = add(outer, k), outer = if c { add(inner, k) } else { multiply(s, k) },
// inner = if d { relu(exp(s)) } else { negative(s) }, k = sigmoid(x), s = tanh(x).
Function NestedIf() {
  Var x = VarNode::make("x", F32({4}));
  Var c = VarNode::make("c", Bool());
  Var d = VarNode::make("d", Bool());
  Expr k = CallOp("sigmoid", {x});
  Expr s = CallOp("tanh", {x});
  Expr inner = IfNode::make(d, CallOp("nn.relu", {CallOp("exp", {s})}), CallOp("negative", {s}));
  Expr outer = IfNode::make(c, CallOp("add", {inner, k}), CallOp("multiply", {s, k}));
  return FunctionNode::make({x, c, d}, CallOp("add", {outer, k}));
}

TEST(Printer, BranchOnlyNodesArePrintedInsideTheirBranch) {
  // k is needed on every path of main: bound there (before the if that first reaches it). s is
  // needed by each branch but not by main: printed in each branch's block.
  EXPECT_EQ(PrintExpr(NestedIf()),
            "fn (%x: Tensor[(4,), float32], %c: Tensor[(), bool], %d: Tensor[(), bool]) {\n"
            "  %4 = sigmoid(%x);\n"
            "  %6 = if (%c) {\n"
            "    %3 = if (%d) {\n"
            "      %0 = tanh(%x);\n"
            "      %1 = exp(%0);\n"
            "      nn.relu(%1)\n"
            "    } else {\n"
            "      %2 = tanh(%x);\n"
            "      negative(%2)\n"
            "    };\n"
            "    add(%3, %4)\n"
            "  } else {\n"
            "    %5 = tanh(%x);\n"
            "    multiply(%5, %4)\n"
            "  };\n"
            "  add(%6, %4)\n"
            "}");
}

TEST(Parser, NestedIfRoundTrips) {
  IRModule m = InferType(IRModule::FromMain(NestedIf()));
  const std::string text = PrintModule(m);
  EXPECT_NE(text.find("  } else {\n    %5 = tanh(%x) /* ty=Tensor[(4,), float32] */;\n"), std::string::npos) << text;
  IRModule parsed = RoundTrip(m);
  // The parsed if binds its branches' own nodes inside them too.
  auto* add = parsed.main()->body->as<CallNode>();
  ASSERT_NE(add, nullptr);
  auto* outer = add->args[0]->as<IfNode>();
  ASSERT_NE(outer, nullptr);
  EXPECT_NE(outer->true_branch->as<CallNode>(), nullptr);
}

TEST(Parser, LetsInChainsOperandsAndBranches) {
  Var x = VarNode::make("x", F32({3}));
  Var c = VarNode::make("c", Bool());
  Var y = VarNode::make("y");
  Var z = VarNode::make("z", F32({3}));
  Var w = VarNode::make("w");
  // An operand let: add(let w = exp(x); multiply(w, w), x) inside the then branch.
  Expr operand_let = LetNode::make(w, CallOp("exp", {x}), CallOp("multiply", {w, w}));
  Expr branch = IfNode::make(c, CallOp("add", {operand_let, x}), CallOp("negative", {x}));
  Expr body = LetNode::make(y, CallOp("sigmoid", {x}),
                            LetNode::make(z, CallOp("add", {y, x}), CallOp("add", {branch, z})));
  IRModule m = Typed({x, c}, body);
  const std::string text = PrintModule(m);
  EXPECT_NE(text.find("  let %y = %0;\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  let %z: Tensor[(3,), float32] = %1;\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" = {\n      %2 = exp(%x) /* ty=Tensor[(3,), float32] */;\n      let %w = %2;\n"),
            std::string::npos)
      << text;
  RoundTrip(m);
}

TEST(Parser, TuplesAndTupleAccess) {
  Var t = VarNode::make("t", TupleTypeNode::make({F32({2}), TupleTypeNode::make({F32({3})})}));
  Var x = VarNode::make("x", F32({2}));
  Expr first = TupleGetItemNode::make(t, 0);
  Expr nested = TupleGetItemNode::make(TupleGetItemNode::make(t, 1), 0);
  Expr pair = TupleNode::make({CallOp("add", {first, x}), TupleNode::make({nested}), TupleNode::make({})});
  Expr body = TupleNode::make({TupleGetItemNode::make(pair, 0), TupleGetItemNode::make(pair, 1), pair});
  IRModule m = Typed({t, x}, body);
  const std::string text = PrintModule(m);
  EXPECT_NE(text.find("%t: (Tensor[(2,), float32], (Tensor[(3,), float32],))"), std::string::npos) << text;
  EXPECT_NE(text.find("%t.1"), std::string::npos) << text;
  EXPECT_NE(text.find("()"), std::string::npos) << text;
  RoundTrip(m);
}

TEST(Parser, EveryAttrKind) {
  Var x = VarNode::make("x", F32({2}));
  Attrs attrs{{"i", int64_t{3}},
              {"neg", int64_t{-7}},
              {"big", std::numeric_limits<int64_t>::max()},
              {"small", std::numeric_limits<int64_t>::min()},
              {"d", 0.1},
              {"tiny", 5e-324},
              {"huge", 1.7976931348623157e308},
              {"negzero", -0.0},
              {"inf", std::numeric_limits<double>::infinity()},
              {"ninf", -std::numeric_limits<double>::infinity()},
              {"s", std::string("NCHW")},
              {"esc", std::string("a\"b\\c\nd\te\x01 */ /* ty=")},
              {"empty", std::string("")},
              {"ints", std::vector<int64_t>{1, -2, 3}},
              {"doubles", std::vector<double>{0.5, -1e-300, 2}},
              {"no_ints", std::vector<int64_t>{}}};
  // The relation of nn.relu ignores attrs: the call carries every kind.
  IRModule m = Typed({x}, CallOp("nn.relu", {x}, attrs));
  IRModule parsed = RoundTrip(m);
  EXPECT_EQ(parsed.main()->body->as<CallNode>()->attrs, attrs);
  Attrs fn_attrs{{"Primitive", int64_t{1}}, {"Composite", std::string("dnnl.conv2d_relu")}};
  Var p = VarNode::make("p", F32({2}));
  Function f = FunctionNode::make({p}, CallOp("exp", {p}), nullptr, fn_attrs);
  IRModule with_fn = RoundTrip(Typed({x}, CallNode::make(f, {x})));
  EXPECT_EQ(with_fn.main()->body->as<CallNode>()->op->as<FunctionNode>()->attrs, fn_attrs);

  // NaN: Attrs compare NaN unequal, so only the text and the value's kind are checked.
  Attrs nan_attrs{{"nan", std::nan("")}, {"nans", std::vector<double>{-std::nan("")}}};
  IRModule nan_m = Typed({x}, CallOp("nn.relu", {x}, nan_attrs));
  const std::string text = PrintModule(nan_m);
  EXPECT_NE(text.find("nan=nanf, nans=[-nanf]"), std::string::npos) << text;
  IRModule nan_parsed = ParseModule(text);
  EXPECT_EQ(PrintModule(nan_parsed), text);
  EXPECT_TRUE(std::isnan(nan_parsed.main()->body->as<CallNode>()->attrs.GetDouble("nan")));
}

TEST(Parser, EveryInlineScalarAndMetaScalar) {
  std::vector<Expr> fields = {
      Scalar(0.1f), Scalar(-0.0f), Scalar(std::numeric_limits<float>::denorm_min()),
      Scalar(std::numeric_limits<float>::max()), Scalar(0.1), Scalar(std::numeric_limits<double>::denorm_min()),
      Scalar(-1.5), Scalar(std::numeric_limits<int64_t>::min()), Scalar(std::numeric_limits<int64_t>::max()),
      Scalar(std::numeric_limits<int32_t>::min()), Scalar(int32_t{7}), Scalar(true), Scalar(false),
      // Not inline: other dtypes, and non-finite floats (bit-exact through the metadata).
      Scalar(int8_t{-3}), Scalar(uint8_t{200}), Scalar(uint16_t{0x3c00}, DataType::Float(16)),
      Scalar(std::numeric_limits<float>::infinity()), Scalar(-std::numeric_limits<double>::infinity()),
      Scalar(uint32_t{0x7fc00123}, DataType::Float(32)),  // a NaN with a payload
  };
  IRModule m = Typed({}, TupleNode::make(fields));
  const std::string text = PrintModule(m);
  EXPECT_NE(text.find("(0.10000000149011612f, -0f, 1.401298464324817e-45f, 3.4028234663852886e+38f, 0.1f64, "
                      "5e-324f64, -1.5f64, -9223372036854775808i64, 9223372036854775807i64, -2147483648, 7, "
                      "True, False, meta[Constant][0] /* ty=Tensor[(), int8] */"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("meta[Constant][5] /* ty=Tensor[(), float32] */)"), std::string::npos) << text;
  IRModule parsed = RoundTrip(m);
  const auto* tuple = parsed.main()->body->as<TupleNode>();
  ASSERT_NE(tuple, nullptr);
  uint32_t nan_bits = 0;
  std::memcpy(&nan_bits, tuple->fields.back()->as<ConstantNode>()->data.raw_data(), 4);
  EXPECT_EQ(nan_bits, 0x7fc00123u);
}

TEST(Parser, SymbolicDimsAndVariableNames) {
  Var x = VarNode::make("input.1", F32({Dim::Symbolic("batch_size"), Dim::Symbolic("x[0]"), Dim::Any(), 4}));
  Var y = VarNode::make("0", F32({Dim::Symbolic("batch_size"), Dim::Symbolic("x[0]"), Dim::Any(), 4}));
  Var z = VarNode::make("input_1", F32({1}));
  Expr body = TupleNode::make({CallOp("add", {x, y}), z});
  const std::string text = PrintExpr(FunctionNode::make({x, y, z}, body));
  EXPECT_NE(text.find("fn (%input_1: Tensor[(batch_size, x[0], ?, 4), float32], %v0: "), std::string::npos) << text;
  EXPECT_NE(text.find("%input_1_1: Tensor[(1,), float32]"), std::string::npos) << text;
  RoundTrip(Typed({x, y, z}, body));
}

// Lists of tensors (the VM's tensor arrays): a List-typed parameter, a push and a stack print as
// TensorArray[...] types and vm.list_* calls and read back the same.
TEST(Parser, ListsOfTensorsRoundTrip) {
  Var l = VarNode::make("l", ListTypeNode::make(F32({Dim::Symbolic("n"), 4})));
  Var x = VarNode::make("x", F32({Dim::Symbolic("n"), 4}));
  Expr pushed = CallOp("vm.list_push", {l, x});
  Expr body = TupleNode::make({CallOp("vm.list_stack", {pushed}, Attrs{{"length_symbol", std::string("len")}}),
                               CallOp("vm.list_length", {pushed})});
  IRModule m = Typed({l, x}, body);
  const std::string text = PrintModule(m, kMeta);
  EXPECT_NE(text.find("%l: TensorArray[Tensor[(n, 4), float32]]"), std::string::npos) << text;
  EXPECT_NE(text.find("Tensor[(len, n, 4), float32]"), std::string::npos) << text;
  RoundTrip(m);
}

TEST(Parser, ParseExprReadsFunctionsAndFreeVariables) {
  Var a = VarNode::make("a", F32({2}));
  Expr e = CallOp("add", {CallOp("exp", {a}), a});
  EXPECT_EQ(PrintExpr(ParseExpr(PrintExpr(e), "<e>", {a})), PrintExpr(e));
  Expr parsed = ParseExpr("%0 = exp(%a);\nadd(%0, %a)", "<e>", {a});
  EXPECT_TRUE(ExprEqual()(parsed, e));
  Function f = FunctionNode::make({a}, CallOp("multiply", {a, Random({2}, 3)}));
  const std::string text = PrintExpr(f, kMeta);
  EXPECT_EQ(PrintExpr(ParseExpr(text), kMeta), text);
  EXPECT_TRUE(ExprEqual()(ParseExpr(text), f));
}

// The message of the UserError ParseModule throws on `text`.
std::string ParseError(const std::string& text) {
  try {
    ParseModule(text, "bad.ir");
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(Parser, ErrorsNameLineAndColumn) {
  const std::string head = "def @main(%x: Tensor[(2,), float32]) {\n";
  EXPECT_EQ(ParseError(head + "  nn.frobnicate(%x)\n}\n"), "bad.ir:2:3: unknown operator 'nn.frobnicate'");
  EXPECT_EQ(ParseError(head + "  %0 = exp(%x);\n  add(%0, %y)\n}\n"), "bad.ir:3:11: unknown variable %y");
  EXPECT_EQ(ParseError(head + "  exp(%x)\n"), "bad.ir:3:1: expected '}', found end of input");
  EXPECT_EQ(ParseError(head + "  %0 = exp(%x)\n  %0\n}\n"), "bad.ir:3:3: expected ';', found '%0'");
  const std::string meta_error = ParseError(head + "  add(%x, meta[Constant][0] /* ty=Tensor[(2,), float32] */)\n}\n");
  EXPECT_EQ(meta_error.rfind("bad.ir:2:11: meta[Constant][0] needs the #[metadata] section", 0), 0u) << meta_error;
  const std::string one_constant = "\n#[metadata]\nConstant[0]: float32 (2,) 0000803f0000803f\n";
  EXPECT_EQ(ParseError(head + "  add(%x, meta[Constant][1])\n}\n" + one_constant),
            "bad.ir:2:11: meta[Constant][1]: the metadata section has 1 constants");
  EXPECT_EQ(ParseError(head + "  %x\n}\n#[metadata]\nConstant[0]: float32 (2,) 0000803f\n"),
            "bad.ir:5:27: Constant[0]: float32 (2,) holds 8 bytes, found 8 hex digits");
  EXPECT_EQ(ParseError(head + "  nn.relu(%x, %x)\n}\n"), "bad.ir:2:3: operator nn.relu takes 1 argument(s), got 2");
  EXPECT_EQ(ParseError(head + "  add(%x, axis=1, %x)\n}\n"),
            "bad.ir:2:19: expected an attribute 'name=value' (positional arguments come first), found '%x'");
  EXPECT_EQ(ParseError(head + "  %0 = exp(%x);\n  %0 = exp(%0);\n  %0\n}\n"),
            "bad.ir:3:3: %0 is already defined in this block (at bad.ir:2:3)");
  const std::string dtype_error = ParseError("def @main(%x: Tensor[(2,), floot32]) {\n  %x\n}\n");
  EXPECT_EQ(dtype_error.rfind("bad.ir:1:28: unknown data type 'floot32'", 0), 0u) << dtype_error;
  const std::string type_error = ParseError(head + "  %0 = add(%x, 1f64);\n  %0\n}\n");
  EXPECT_EQ(type_error.rfind("bad.ir:2:3: type error in add(", 0), 0u) << type_error;
  EXPECT_EQ(ParseError(head + "  \"unterminated\n}\n"), "bad.ir:2:3: unterminated string: expected '\"'");
}

TEST(Parser, MutatedTextThrowsOnlyUserErrors) {
  // One module with most of the syntax: metadata, attrs of each kind, if, let, tuples, a fused function.
  IRModule m = InferType(transform::FuseOps(ConvBiasRelu()));
  Function nested = NestedIf();
  m.Add("nested", nested);
  Var x = VarNode::make("x", F32({2}));
  Var y = VarNode::make("y");
  Expr relu = CallOp("nn.relu", {x}, Attrs{{"s", std::string("a\"b")}, {"d", std::vector<double>{0.5}}});
  Expr item = TupleGetItemNode::make(TupleNode::make({y, relu}), 1);
  m.Add("misc", FunctionNode::make({x}, LetNode::make(y, CallOp("exp", {x}), item)));
  const std::string text = PrintModule(InferType(m), kMeta);
  ASSERT_NO_THROW(ParseModule(text));

  std::mt19937 rng(14);
  const std::string alphabet = "(){}[],;:=.%@\"\\/*#-+0123456789aefxT \n";
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  int parsed_ok = 0;
  for (int round = 0; round < 300; ++round) {
    std::string t = text;
    const int edits = 1 + static_cast<int>(pick(3));
    for (int k = 0; k < edits && !t.empty(); ++k) {
      const size_t at = pick(t.size());
      switch (pick(6)) {
        case 0: t.resize(at); break;
        case 1: t.erase(at, 1 + pick(12)); break;
        case 2: t[at] = alphabet[pick(alphabet.size())]; break;
        case 3: t.insert(at, 1, alphabet[pick(alphabet.size())]); break;
        case 4: t.insert(at, t.substr(at, 1 + pick(20))); break;
        default: {
          const size_t digit = t.find_first_of("0123456789", at);
          if (digit != std::string::npos) t[digit] = static_cast<char>('0' + pick(10));
        }
      }
    }
    try {
      ParseModule(t, "mutated");
      ++parsed_ok;
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("mutated", 0), 0u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UserError: " << e.what() << "\nfor the text:\n" << t;
    }
  }
  EXPECT_LT(parsed_ok, 300);
}

}  // namespace
}  // namespace tessera::graph
