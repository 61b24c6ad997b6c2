// External codegens (byoc/external_codegen.h) through the driver: a small CNN built with
// `byoc = {backend}` (JIT: the external regions compiled into a temporary library) against the same
// model on Tessera's own kernels; a rejected op stays on Tessera's path; a region with two results;
// a compiler failure names the backend and the region.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include <nlohmann/json.hpp>

#include "tessera/byoc/external_codegen.h"
#include "tessera/driver/build.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/support/error.h"

namespace tessera::byoc {
namespace {

using namespace tessera::graph;

Type F32(std::vector<int64_t> shape) { return TensorTypeNode::make(std::move(shape), DataType::Float(32)); }
Expr Op(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
  return CallNode::make(OpNode::Get(op), std::move(args), std::move(attrs));
}
runtime::NDArray Random(std::vector<int64_t> shape, uint32_t seed) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = u(rng);
  return a;
}
Expr Const(std::vector<int64_t> shape, uint32_t seed) { return ConstantNode::make(Random(std::move(shape), seed)); }

const Attrs kConv{{"padding", std::vector<int64_t>{1, 1, 1, 1}}};

// x [1, 3, 12, 12] -> conv 3x3 (8) + bias [8, 1, 1] -> relu -> max_pool 2x2 -> grouped conv (2 groups)
// -> clip(0, 6) -> avg_pool 2x2 -> (middle) -> [1, 8*3*3] -> dense (10) + bias -> softmax.
// `middle` is applied between the second conv block and the flatten (e.g. an unsupported op).
IRModule SmallCNN(const std::function<Expr(Expr)>& middle = [](Expr e) { return e; }) {
  Var x = VarNode::make("x", F32({1, 3, 12, 12}));
  Expr c1 = Op("add", {Op("nn.conv2d", {x, Const({8, 3, 3, 3}, 1)}, kConv), Const({8, 1, 1}, 2)});
  Expr p1 = Op("nn.max_pool2d", {Op("nn.relu", {c1})},
               Attrs{{"pool_size", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  Attrs grouped = kConv;
  grouped.Set("groups", int64_t{2});
  Expr c2 = Op("nn.bias_add", {Op("nn.conv2d", {p1, Const({8, 4, 3, 3}, 3)}, grouped), Const({8}, 4)});
  Expr a2 = Op("clip", {c2}, Attrs{{"a_min", 0.0}, {"a_max", 6.0}});
  Expr p2 = Op("nn.avg_pool2d", {a2},
               Attrs{{"pool_size", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  Expr flat = Op("reshape", {middle(p2)}, Attrs{{"newshape", std::vector<int64_t>{1, 72}}});
  Expr d = Op("nn.bias_add", {Op("nn.dense", {flat, Const({10, 72}, 5)}), Const({10}, 6)}, Attrs{{"axis", int64_t{-1}}});
  return IRModule::FromMain(FunctionNode::make({x}, Op("nn.softmax", {d}, Attrs{{"axis", int64_t{-1}}})));
}

struct Result {
  std::vector<float> y;
  nlohmann::json graph;
};

Result Compile(const IRModule& mod, const std::vector<std::string>& byoc, std::vector<std::string> outputs = {"y"},
               std::vector<int64_t> x_shape = {1, 3, 12, 12}) {
  driver::BuildOptions options;
  options.byoc = byoc;
  runtime::Module m = driver::BuildJIT(mod, outputs, options);
  runtime::GraphExecutor exec(m, 1);
  exec.SetInput("x", Random(x_shape, 7));
  exec.Run();
  Result r;
  for (size_t o = 0; o < outputs.size(); ++o) {
    runtime::NDArray out = exec.GetOutput(static_cast<int>(o));
    r.y.insert(r.y.end(), out.data<float>(), out.data<float>() + out.NumElements());
  }
  r.graph = nlohmann::json::parse(m.GraphJson());
  return r;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::abs(want[i])) << "at " << i;
}

std::vector<std::string> KernelsOf(const nlohmann::json& g) {
  std::vector<std::string> k;
  for (const auto& n : g["nodes"]) k.push_back(n["kernel"]);
  return k;
}

TEST(ExternalCodegen, RegistryNamesAndUnknownBackend) {
  EXPECT_EQ(ExternalCodegenNames(), (std::vector<std::string>{"csource", "dnnl"}));
  try {
    GetExternalCodegen("tpu");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'tpu': no external codegen has that name; the backends are: csource, dnnl"),
              std::string::npos)
        << e.what();
  }
}

class Backend : public ::testing::TestWithParam<std::string> {};

// The regions of SmallCNN: csource stops at the reshape, dnnl does not.
std::vector<std::string> Regions(const std::string& backend) {
  if (backend == "dnnl") return {"dnnl_0"};
  return {backend + "_0", backend + "_1"};
}

TEST_P(Backend, SmallCNNMatchesTesseraKernels) {
  const Result ref = Compile(SmallCNN(), {});
  const Result got = Compile(SmallCNN(), {GetParam()});
  ExpectClose(got.y, ref.y);
  // Everything runs externally: csource leaves the reshape to Tessera (a zero-copy alias there), so
  // two regions around it; dnnl takes it as a view, so one region.
  ASSERT_TRUE(got.graph.contains("external"));
  const std::vector<std::string> regions = Regions(GetParam());
  ASSERT_EQ(got.graph["external"].size(), regions.size());
  for (const auto& x : got.graph["external"]) EXPECT_EQ(x["compiler"], GetParam());
  EXPECT_EQ(got.graph["external"][0]["symbol"], GetParam() + "_0");
  const std::vector<std::string> ops = got.graph["external"][0]["ops"];
  std::vector<std::string> want = {"nn.conv2d", "add", "nn.relu", "nn.max_pool2d", "nn.bias_add", "clip", "nn.avg_pool2d"};
  if (GetParam() == "dnnl") want.insert(want.end(), {"reshape", "nn.dense", "nn.softmax"});
  EXPECT_EQ(ops, want);
  EXPECT_EQ(KernelsOf(got.graph), regions);
  EXPECT_FALSE(ref.graph.contains("external"));
}

// erf is no backend's op: it stays a Tessera kernel between two external regions.
TEST_P(Backend, RejectedOpStaysOnTesserasPath) {
  auto with_erf = [] { return SmallCNN([](Expr e) { return Op("erf", {e}); }); };
  const Result ref = Compile(with_erf(), {});
  const Result got = Compile(with_erf(), {GetParam()});
  ExpectClose(got.y, ref.y);
  const std::vector<std::string> kernels = KernelsOf(got.graph);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0], GetParam() + "_0");
  EXPECT_EQ(kernels[1].rfind("fused_erf", 0), 0u) << kernels[1];
  EXPECT_EQ(kernels[2], GetParam() + "_1");
}

// conv -> relu in one region whose conv value also leaves it (to erf): the region returns both.
TEST_P(Backend, RegionWithTwoResults) {
  Var x = VarNode::make("x", F32({1, 3, 12, 12}));
  Expr conv = Op("nn.conv2d", {x, Const({4, 3, 3, 3}, 1)}, kConv);
  Expr y = Op("add", {Op("nn.relu", {conv}), Op("erf", {conv})});
  IRModule mod = IRModule::FromMain(FunctionNode::make({x}, TupleNode::make({y, conv})));
  const Result ref = Compile(mod, {}, {"y", "conv"});
  const Result got = Compile(mod, {GetParam()}, {"y", "conv"});
  ExpectClose(got.y, ref.y);
  ASSERT_TRUE(got.graph.contains("external"));
  // The external node writes two values: 1 input + 1 weight + 2 outputs.
  for (const auto& n : got.graph["nodes"])
    if (n["kernel"] == GetParam() + "_0") EXPECT_EQ(n["args"].size(), 4u);
}

// Two executors over one module (each with its own copy of the weights): dnnl prepares a region's
// weights per weight pointer, so alternating runs must both stay right.
TEST_P(Backend, TwoExecutorsShareOneModule) {
  const Result ref = Compile(SmallCNN(), {});
  driver::BuildOptions options;
  options.byoc = {GetParam()};
  runtime::Module m = driver::BuildJIT(SmallCNN(), {"y"}, options);
  runtime::GraphExecutor a(m, 1), b(m, 1);
  for (int round = 0; round < 3; ++round) {
    for (runtime::GraphExecutor* e : {&a, &b}) {
      e->SetInput("x", Random({1, 3, 12, 12}, 7));
      e->Run();
      runtime::NDArray out = e->GetOutput(0);
      ExpectClose(std::vector<float>(out.data<float>(), out.data<float>() + out.NumElements()), ref.y);
    }
  }
}

TEST_P(Backend, CompilerFailureNamesBackendAndRegion) {
  struct Env {  // $CC / $CXX set to `false` (a compiler that always fails), restored after
    std::string name, old;
    bool had;
    explicit Env(std::string n) : name(std::move(n)), had(std::getenv(name.c_str()) != nullptr) {
      if (had) old = std::getenv(name.c_str());
      setenv(name.c_str(), "false", 1);
    }
    ~Env() { had ? setenv(name.c_str(), old.c_str(), 1) : unsetenv(name.c_str()); }
  } cc("CC"), cxx("CXX");
  try {
    Compile(SmallCNN(), {GetParam()});
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    std::string regions;
    for (const std::string& r : Regions(GetParam())) regions += (regions.empty() ? "" : ", ") + r;
    EXPECT_NE(msg.find("BYOC backend '" + GetParam() + "': compiling its regions (" + regions + ") failed"),
              std::string::npos)
        << msg;
  }
}

// dnnl's predicate refuses an op it knows by its attrs: an average pool with ceil_mode (oneDNN's
// windows past the end count differently) stays a Tessera kernel between two dnnl regions.
TEST(Dnnl, OpItsPredicateRefusesStaysOnTesserasPath) {
  auto model = [] {
    Var x = VarNode::make("x", F32({1, 3, 12, 12}));
    Expr c1 = Op("nn.relu", {Op("nn.conv2d", {x, Const({8, 3, 3, 3}, 1)}, kConv)});
    Expr pool = Op("nn.avg_pool2d", {c1}, Attrs{{"pool_size", std::vector<int64_t>{3, 3}},
                                                {"strides", std::vector<int64_t>{2, 2}}, {"ceil_mode", int64_t{1}}});
    return IRModule::FromMain(FunctionNode::make({x}, Op("nn.conv2d", {pool, Const({4, 8, 3, 3}, 2)}, kConv)));
  };
  const Result ref = Compile(model(), {});
  const Result got = Compile(model(), {"dnnl"});
  ExpectClose(got.y, ref.y);
  const std::vector<std::string> kernels = KernelsOf(got.graph);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0], "dnnl_0");
  EXPECT_EQ(kernels[1].rfind("fused_avg_pool2d", 0), 0u) << kernels[1];
  EXPECT_EQ(kernels[2], "dnnl_1");
  for (const auto& x : got.graph["external"]) {
    const std::vector<std::string> ops = x["ops"];
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "nn.avg_pool2d"), 0) << x.dump();
  }
}

// LayerNormalization and the erf GELU as the ONNX importer expands them, around a [2, 6, 16] x
// [16, 8] matmul + bias: dnnl runs them as its composites (layer_normalization_forward, the GELU a
// post-op of the matmul), one region, matching Tessera's kernels.
Expr Scalar(float v) {
  auto a = runtime::NDArray::Empty({}, DataType::Float(32));
  a.data<float>()[0] = v;
  return ConstantNode::make(a);
}
Expr LayerNormExpansion(Expr x, int64_t c) {
  auto mean = [](Expr e) { return Op("mean", {e}, Attrs{{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}}); };
  Expr d = Op("subtract", {x, mean(x)});
  Expr inv = Op("divide", {Scalar(1.f), Op("sqrt", {Op("add", {mean(Op("multiply", {d, d})), Scalar(1e-5f)})})});
  return Op("add", {Op("multiply", {Op("multiply", {d, inv}), Const({c}, 11)}), Const({c}, 12)});
}
Expr GeluExpansion(Expr x) {
  Expr h = Op("add", {Op("erf", {Op("divide", {x, Scalar(1.4142135f)})}), Scalar(1.f)});
  return Op("multiply", {Op("multiply", {x, h}), Scalar(0.5f)});
}

TEST(Dnnl, LayerNormAndGeluRunAsComposites) {
  auto model = [] {
    Var x = VarNode::make("x", F32({2, 6, 16}));
    Expr mm = Op("add", {Op("nn.matmul", {LayerNormExpansion(x, 16), Const({16, 8}, 13)}), Const({8}, 14)});
    return IRModule::FromMain(FunctionNode::make({x}, GeluExpansion(mm)));
  };
  const Result ref = Compile(model(), {}, {"y"}, {2, 6, 16});
  const Result got = Compile(model(), {"dnnl"}, {"y"}, {2, 6, 16});
  ExpectClose(got.y, ref.y);
  EXPECT_EQ(KernelsOf(got.graph), std::vector<std::string>{"dnnl_0"});
  const std::vector<std::string> ops = got.graph["external"][0]["ops"];
  EXPECT_EQ(ops, (std::vector<std::string>{"dnnl.layer_norm", "nn.matmul", "add", "dnnl.gelu"}));
}

// A region its backend finds not worth a call (a GELU alone: no anchor op) goes back to Tessera's
// path with its composite inlined: plain ops, fused into Tessera's kernels.
TEST(Dnnl, RefusedRegionsCompositesGoBackToPlainOps) {
  auto model = [] {
    Var x = VarNode::make("x", F32({2, 6, 16}));
    return IRModule::FromMain(FunctionNode::make({x}, GeluExpansion(x)));
  };
  const Result ref = Compile(model(), {}, {"y"}, {2, 6, 16});
  const Result got = Compile(model(), {"dnnl"}, {"y"}, {2, 6, 16});
  ExpectClose(got.y, ref.y);
  EXPECT_FALSE(got.graph.contains("external")) << got.graph.dump();
  EXPECT_EQ(KernelsOf(got.graph), KernelsOf(ref.graph));
}

INSTANTIATE_TEST_SUITE_P(Backends, Backend, ::testing::Values("csource", "dnnl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera::byoc
