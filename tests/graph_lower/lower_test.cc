// LowerPrimitiveFunction on small fused graph functions, run on the reference interpreter
// (scheduled and unscheduled) against C++ references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tessera/graph/expr.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/graph_lower/lower.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/transform/lower.h"
#include "tir_interp.h"
#include "topi_test_util.h"

namespace tessera::graph_lower {
namespace {

using graph::Attrs;
using graph::Expr;
using topi::testing::Data;
const DataType f32 = DataType::Float(32);

graph::Var Param(const std::string& name, const std::vector<int64_t>& shape) {
  return graph::VarNode::make(name, graph::TensorTypeNode::make(shape, f32));
}
Expr Call(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return graph::CallNode::make(graph::OpNode::Get(op), std::move(args), std::move(attrs));
}
graph::Function Primitive(std::vector<graph::Var> params, Expr body) {
  Attrs a;
  a.Set("Primitive", 1);
  return graph::FunctionNode::make(std::move(params), std::move(body), nullptr, a);
}

// Runs the lowered kernel unscheduled, scheduled, scheduled + LowerToFlat (interpreted) and,
// with codegen, through the LLVM JIT; checks they agree and returns the outputs.
std::vector<Data> RunBoth(const graph::Function& fn, const std::vector<Data>& inputs, std::vector<size_t> out_sizes) {
  std::vector<Data> results;
  for (int mode = 0; mode < 4; ++mode) {
    if (mode == 3 && !topi::testing::HaveJIT()) break;
    tir::PrimFunc f = LowerPrimitiveFunction(fn, "fused", topi::testing::TestTarget(), mode > 0);
    if (mode >= 2) f = tir::transform::LowerToFlat(f);
    EXPECT_EQ(f->params.size(), inputs.size() + out_sizes.size());
    std::vector<Data> storage = inputs;
    for (size_t n : out_sizes) storage.emplace_back(n, -777.0);
    std::vector<Data*> ptrs;
    for (Data& d : storage) ptrs.push_back(&d);
    if (mode == 3) topi::testing::RunJIT(f, storage);
    else topi::testing::RunPrimFunc(f, ptrs);
    std::vector<Data> outs(storage.begin() + inputs.size(), storage.end());
    if (!results.empty()) {
      const char* what = mode == 1 ? "scheduled" : mode == 2 ? "scheduled + flat" : "scheduled + LLVM JIT";
      for (size_t i = 0; i < outs.size(); ++i) topi::testing::ExpectNear(outs[i], results[i], 1e-5, what);
    } else {
      results = outs;
    }
  }
  return results;
}

TEST(GraphLower, RegisterComputesIsIdempotentAndCoversTheOps) {
  RegisterComputes();
  RegisterComputes();
  std::vector<std::string> ops = OpsWithCompute();
  std::set<std::string> have(ops.begin(), ops.end());
  for (const char* op : {"nn.conv2d", "nn.bias_add", "nn.dense", "nn.matmul", "nn.batch_matmul", "nn.max_pool2d",
                         "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.softmax", "nn.batch_norm", "nn.relu", "clip",
                         "sigmoid", "hard_sigmoid", "hard_swish", "exp", "sqrt", "tanh", "negative", "add",
                         "subtract", "multiply", "divide", "power", "maximum", "minimum", "copy", "cast"}) {
    EXPECT_TRUE(have.count(op)) << op;
  }
  for (const char* op : {"reshape", "transpose", "concatenate", "take", "strided_slice", "expand_dims", "squeeze"}) {
    if (graph::OpRegistry::Global().Has(op)) {
      EXPECT_TRUE(have.count(op)) << op;
    }
  }
}

TEST(GraphLower, Conv2dBiasReluFused) {
  auto x = Param("x", {1, 2, 6, 5});
  auto w = Param("w", {3, 2, 3, 3});
  auto b = Param("b", {3});
  Attrs ca;
  ca.Set("strides", std::vector<int64_t>{1, 1}).Set("padding", std::vector<int64_t>{1, 1, 1, 1});
  Expr conv = Call("nn.conv2d", {x, w}, ca);
  Attrs ba;
  ba.Set("axis", 1);
  Expr body = Call("nn.relu", {Call("nn.bias_add", {conv, b}, ba)});
  Data dx = topi::testing::Random(60, 1), dw = topi::testing::Random(54, 2), db = topi::testing::Random(3, 3);
  Data out = RunBoth(Primitive({x, w, b}, body), {dx, dw, db}, {90})[0];
  Data want;
  for (int o = 0; o < 3; ++o)
    for (int y = 0; y < 6; ++y)
      for (int xx = 0; xx < 5; ++xx) {
        double acc = db[o];
        for (int c = 0; c < 2; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int iy = y + ky - 1, ix = xx + kx - 1;
              if (iy >= 0 && iy < 6 && ix >= 0 && ix < 5)
                acc += dx[(c * 6 + iy) * 5 + ix] * dw[((o * 2 + c) * 3 + ky) * 3 + kx];
            }
        want.push_back(std::max(acc, 0.0));
      }
  topi::testing::ExpectNear(out, want, 1e-4, "conv2d+bias_add+relu");
}

TEST(GraphLower, AddRelu) {
  auto a = Param("a", {4, 19});
  auto b = Param("b", {19});
  Expr body = Call("nn.relu", {Call("add", {a, b})});
  Data da = topi::testing::Random(76, 4), db = topi::testing::Random(19, 5), want;
  for (int i = 0; i < 76; ++i) want.push_back(std::max(da[i] + db[i % 19], 0.0));
  topi::testing::ExpectNear(RunBoth(Primitive({a, b}, body), {da, db}, {76})[0], want, 1e-6, "add+relu");
}

TEST(GraphLower, ConcatenateTwoInputs) {
  auto a = Param("a", {2, 3});
  auto b = Param("b", {2, 2});
  Attrs at;
  at.Set("axis", 1);
  Expr body = Call("concatenate", {graph::TupleNode::make({a, b})}, at);
  Data da = topi::testing::Random(6, 6), db = topi::testing::Random(4, 7), want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) want.push_back(da[i * 3 + j]);
    for (int j = 0; j < 2; ++j) want.push_back(db[i * 2 + j]);
  }
  topi::testing::ExpectNear(RunBoth(Primitive({a, b}, body), {da, db}, {10})[0], want, 0, "concatenate");
}

TEST(GraphLower, TupleOutputsWithParamAndRepeat) {
  auto a = Param("a", {3, 4});
  Expr e = Call("exp", {a});
  Expr body = graph::TupleNode::make({e, a, e});
  Data da = topi::testing::Random(12, 8), ex;
  for (double v : da) ex.push_back(static_cast<float>(std::exp(v)));
  std::vector<Data> outs = RunBoth(Primitive({a}, body), {da}, {12, 12, 12});
  topi::testing::ExpectNear(outs[0], ex, 1e-6, "exp output");
  topi::testing::ExpectNear(outs[1], da, 0, "param output is copied");
  topi::testing::ExpectNear(outs[2], ex, 1e-6, "repeated output is copied");
}

TEST(GraphLower, SymbolicDimsBecomeOneShapeVarEach) {
  // x [batch, 4] + y [batch, 4] -> one shape var "batch", shared by every buffer (DimExtent).
  const graph::Type t = graph::TensorTypeNode::make({graph::Dim::Symbolic("batch"), graph::Dim(4)}, f32);
  auto x = graph::VarNode::make("x", t);
  auto y = graph::VarNode::make("y", t);
  tir::PrimFunc f = LowerPrimitiveFunction(Primitive({x, y}, Call("nn.relu", {Call("add", {x, y})})), "f",
                                           topi::testing::TestTarget());
  ASSERT_EQ(f->shape_vars.size(), 1u);
  EXPECT_EQ(f->shape_vars[0]->name_hint, "batch");
  EXPECT_EQ(f->shape_vars[0].get(), DimExtent(graph::Dim::Symbolic("batch")).get());
  for (const tir::Buffer& b : f->params) EXPECT_EQ(b->shape[0].get(), f->shape_vars[0].get()) << b->name;
}

TEST(GraphLower, AnExtentNoRelationComputedIsUnsupported) {
  auto x = graph::VarNode::make("x", graph::TensorTypeNode::make({graph::Dim::Any(), graph::Dim(4)}, f32));
  graph::Function fn = Primitive({x}, Call("nn.relu", {x}));
  try {
    LowerPrimitiveFunction(fn, "f", topi::testing::TestTarget());
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("'?'"), std::string::npos) << e.what();
  }
}

TEST(GraphLower, AComputeWithoutSymbolicShapesSaysSo) {
  // nn.max_pool2d's compute needs static shapes: a clear refusal, not an internal error.
  auto x = graph::VarNode::make(
      "x", graph::TensorTypeNode::make({graph::Dim(1), graph::Dim(3), graph::Dim::Symbolic("h"), graph::Dim(8)}, f32));
  graph::Attrs attrs;
  attrs.Set("pool_size", std::vector<int64_t>{2, 2});
  attrs.Set("strides", std::vector<int64_t>{2, 2});
  try {
    LowerPrimitiveFunction(Primitive({x}, Call("nn.max_pool2d", {x}, attrs)), "f", topi::testing::TestTarget());
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("with symbolic shapes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nn.max_pool2d"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::graph_lower
