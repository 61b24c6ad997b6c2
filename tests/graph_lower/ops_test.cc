// Every graph op with a compute lowers through LowerPrimitiveFunction with typical attrs, its
// kernel shape agrees with the type relation, and scheduled / unscheduled kernels agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tessera/graph/expr.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/op_registry.h"
#include "tessera/graph_lower/compute_registry.h"
#include "tessera/graph_lower/lower.h"
#include "tessera/support/error.h"
#include "tessera/tir/transform/lower.h"
#include "topi_test_util.h"
#include "tir_interp.h"
#include "topi_test_util.h"

namespace tessera::graph_lower {
namespace {

using graph::Attrs;
using graph::Expr;
using topi::testing::Data;
const DataType f32 = DataType::Float(32);

struct OpCase {
  std::string op;
  std::vector<std::vector<int64_t>> shapes;
  Attrs attrs;
  std::vector<DataType> dtypes = {};  // default float32
};

// Lowers op(params...) and runs it scheduled and unscheduled; returns the output.
Data LowerAndRun(const OpCase& c) {
  std::vector<graph::Var> params;
  std::vector<Expr> args;
  std::vector<Data> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    DataType t = i < c.dtypes.size() ? c.dtypes[i] : f32;
    params.push_back(graph::VarNode::make("p" + std::to_string(i), graph::TensorTypeNode::make(c.shapes[i], t)));
    int64_t n = 1;
    for (int64_t d : c.shapes[i]) n *= d;
    Data d = topi::testing::Random(n, 10 + i, t.is_float() ? 0.1 : -3, t.is_float() ? 2 : 3);
    if (!t.is_float())
      for (double& v : d) v = std::floor(v);
    inputs.push_back(d);
  }
  if (c.op == "concatenate") args.push_back(graph::TupleNode::make(std::vector<Expr>(params.begin(), params.end())));
  else args.assign(params.begin(), params.end());
  Expr body = graph::CallNode::make(graph::OpNode::Get(c.op), args, c.attrs);
  graph::Function fn = graph::FunctionNode::make(params, body, nullptr, Attrs{{"Primitive", int64_t{1}}});
  graph::InferExprType(fn);
  auto out_shape = graph::StaticShape(body->checked_type()->as<graph::TensorTypeNode>()->shape);
  int64_t n = 1;
  for (int64_t d : *out_shape) n *= d;
  Data first;
  for (int mode = 0; mode < 3; ++mode) {
    const bool schedule = mode > 0;
    tir::PrimFunc f = LowerPrimitiveFunction(fn, "k", topi::testing::TestTarget(), schedule);
    if (mode == 2) f = tir::transform::LowerToFlat(f);
    std::vector<Data> storage = inputs;
    storage.emplace_back(n, -777.0);
    std::vector<Data*> ptrs;
    for (Data& d : storage) ptrs.push_back(&d);
    topi::testing::RunPrimFunc(f, ptrs);
    if (!schedule) first = storage.back();
    else topi::testing::ExpectNear(storage.back(), first, 1e-6, c.op.c_str());
  }
  return first;
}

using V = std::vector<int64_t>;

TEST(GraphLowerOps, EveryComputeLowersAndRuns) {
  std::vector<OpCase> cases = {
      {"nn.conv2d", {{1, 4, 7, 7}, {4, 2, 3, 3}}, Attrs({{"strides", V{2, 2}}, {"padding", V{1, 1, 1, 1}}, {"groups", int64_t{2}}})},
      {"nn.bias_add", {{2, 3, 4}, {3}}, Attrs({{"axis", int64_t{1}}})},
      {"nn.dense", {{3, 5}, {4, 5}}, {}},
      {"nn.matmul", {{2, 3, 5}, {5, 4}}, {}},
      {"nn.batch_matmul", {{2, 3, 5}, {1, 4, 5}}, {}},
      {"nn.max_pool2d", {{1, 2, 7, 7}}, Attrs({{"pool_size", V{3, 3}}, {"strides", V{2, 2}}, {"ceil_mode", int64_t{1}}})},
      {"nn.avg_pool2d", {{1, 2, 7, 7}}, Attrs({{"pool_size", V{3, 3}}, {"strides", V{2, 2}}, {"padding", V{1, 1, 1, 1}}, {"count_include_pad", int64_t{1}}})},
      {"nn.global_avg_pool2d", {{1, 3, 4, 5}}, {}},
      {"nn.softmax", {{2, 7}}, Attrs({{"axis", int64_t{-1}}})},
      {"nn.batch_norm", {{1, 3, 2, 2}, {3}, {3}, {3}, {3}}, Attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}})},
      {"nn.relu", {{5}}, {}},
      {"clip", {{5}}, Attrs({{"a_min", 0.5}, {"a_max", 1.5}})},
      {"sigmoid", {{5}}, {}},
      {"hard_sigmoid", {{5}}, Attrs({{"alpha", 0.3}, {"beta", 0.4}})},
      {"hard_swish", {{5}}, {}},
      {"exp", {{5}}, {}},
      {"log", {{5}}, {}},
      {"sqrt", {{5}}, {}},
      {"tanh", {{5}}, {}},
      {"negative", {{5}}, {}},
      {"abs", {{5}}, {}},
      {"copy", {{5}}, {}},
      {"cast", {{5}}, Attrs({{"dtype", std::string("int32")}})},
      {"add", {{2, 3}, {3}}, {}},
      {"subtract", {{2, 3}, {2, 1}}, {}},
      {"multiply", {{2, 3}, {3}}, {}},
      {"divide", {{2, 3}, {3}}, {}},
      {"power", {{2, 3}, {3}}, {}},
      {"maximum", {{2, 3}, {3}}, {}},
      {"minimum", {{2, 3}, {3}}, {}},
      {"reshape", {{2, 6}}, Attrs({{"newshape", V{3, -1}}})},
      {"transpose", {{2, 3, 4}}, Attrs({{"axes", V{1, 2, 0}}})},
      {"concatenate", {{2, 3}, {2, 2}}, Attrs({{"axis", int64_t{1}}})},
      {"take", {{4, 3}, {2}}, Attrs({{"axis", int64_t{0}}, {"mode", std::string("wrap")}}), {f32, DataType::Int(64)}},
      {"strided_slice", {{5, 6}}, Attrs({{"begin", V{-1, 0}}, {"end", V{-100, 6}}, {"strides", V{-2, 2}}})},
      {"expand_dims", {{2, 3}}, Attrs({{"axis", int64_t{1}}, {"num_newaxis", int64_t{2}}})},
      {"squeeze", {{2, 1, 3}}, Attrs({{"axis", V{1}}})},
      {"sum", {{2, 3, 4}}, Attrs({{"axis", V{1}}, {"keepdims", int64_t{1}}})},
      {"mean", {{2, 3, 4}}, Attrs({{"axis", V{0, 2}}})},
      {"max", {{2, 3, 4}}, Attrs({{"axis", V{2}}, {"exclude", int64_t{1}}})},
      {"min", {{2, 3, 4}}, {}},
      {"prod", {{2, 3}}, Attrs({{"axis", V{1}}})},
      // The Winograd convolution's ops (graph_lower/winograd_conv2d.h): 8x6 output, 12 tiles.
      {"nn.contrib_conv2d_winograd_input_transform", {{1, 2, 8, 6, 4}},
       Attrs({{"tile_size", int64_t{2}}, {"padding", V{1, 1, 1, 1}}, {"rows", int64_t{12}}})},
      {"nn.contrib_batch_matmul_pack", {{16, 12, 8}, {16, 1, 8, 16}},
       Attrs({{"units", int64_t{16}}, {"gemm_mr", int64_t{4}}, {"gemm_nv", int64_t{1}}})},
      {"nn.contrib_conv2d_winograd_output_transform", {{16, 12, 16}},
       Attrs({{"tile_size", int64_t{2}}, {"batch", int64_t{1}}, {"out_h", int64_t{8}}, {"out_w", int64_t{6}},
              {"channel_block", int64_t{8}}})},
  };
  RegisterComputes();
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.op);
    if (!graph::OpRegistry::Global().Has(c.op)) continue;
    Data out;
    ASSERT_NO_THROW(out = LowerAndRun(c));
    for (double v : out) EXPECT_TRUE(std::isfinite(v)) << c.op;
  }
}

// The type relations of the Winograd ops name the op and what is wrong.
TEST(GraphLowerOps, WinogradOpErrors) {
  RegisterComputes();
  auto infer = [](const std::string& op, std::vector<std::vector<int64_t>> shapes, Attrs attrs) {
    std::vector<graph::Var> params;
    for (size_t i = 0; i < shapes.size(); ++i)
      params.push_back(graph::VarNode::make("p" + std::to_string(i), graph::TensorTypeNode::make(shapes[i], f32)));
    Expr body = graph::CallNode::make(graph::OpNode::Get(op), std::vector<Expr>(params.begin(), params.end()), attrs);
    graph::InferExprType(graph::FunctionNode::make(params, body));
  };
  auto expect_error = [&](const std::string& op, std::vector<std::vector<int64_t>> shapes, Attrs attrs,
                          const std::string& what) {
    try {
      infer(op, std::move(shapes), std::move(attrs));
      ADD_FAILURE() << op << ": no error, expected '" << what << "'";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("nn.contrib_conv2d_winograd_input_transform", {{1, 8, 8, 6}}, Attrs({{"tile_size", int64_t{2}}}),
               "nn.contrib_conv2d_winograd_input_transform: data must be 5-D NCHWc, got (1, 8, 8, 6)");
  expect_error("nn.contrib_conv2d_winograd_input_transform", {{1, 2, 8, 6, 4}},
               Attrs({{"tile_size", int64_t{3}}, {"padding", V{1, 1, 1, 1}}}), "m must be 2 or 4, got 3");
  expect_error("nn.contrib_conv2d_winograd_input_transform", {{1, 2, 8, 6, 4}},
               Attrs({{"tile_size", int64_t{2}}, {"padding", V{1, 1, 1, 1}}, {"rows", int64_t{11}}}), "rows 11 < 12 tiles");
  expect_error("nn.contrib_batch_matmul_pack", {{16, 12, 8}, {16, 1, 9, 16}}, Attrs({{"units", int64_t{16}}}),
               "need a [B, M, K] and wp [B, NB, K, bn]");
  expect_error("nn.contrib_conv2d_winograd_output_transform", {{16, 12, 12}},
               Attrs({{"tile_size", int64_t{2}}, {"batch", int64_t{1}}, {"out_h", int64_t{8}}, {"out_w", int64_t{6}},
                      {"channel_block", int64_t{8}}}),
               "12 channels are not a multiple of the block 8");
}

TEST(GraphLowerOps, AttrsReachTheCompute) {
  // hard_sigmoid with alpha / beta, clip bounds, take wrap mode: spot values.
  Data hs = LowerAndRun({"hard_sigmoid", {{5}}, Attrs({{"alpha", 0.3}, {"beta", 0.4}})});
  Data x = topi::testing::Random(5, 10, 0.1, 2);
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(hs[i], std::clamp(0.3 * x[i] + 0.4, 0.0, 1.0), 1e-6);
  Data cl = LowerAndRun({"clip", {{5}}, Attrs({{"a_min", 0.5}, {"a_max", 1.5}})});
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(cl[i], std::clamp(x[i], 0.5, 1.5), 1e-6);
}

}  // namespace
}  // namespace tessera::graph_lower
