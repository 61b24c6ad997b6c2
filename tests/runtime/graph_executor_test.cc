#include "tessera/runtime/graph_executor.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "tessera/runtime/param_io.h"
#include "tessera/runtime/thread_pool.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

NDArray Floats(std::vector<int64_t> shape, std::vector<float> values) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  a.CopyFromBytes(values.data(), values.size() * sizeof(float));
  return a;
}

std::vector<float> Values(const NDArray& a) {
  const float* p = a.data<float>();
  return std::vector<float>(p, p + a.NumElements());
}

// --- End to end through the fixture shared library: y = relu(x + bias). ---

TEST(GraphExecutor, RunsFixtureModel) {
  GraphExecutor ex(Module::LoadFromFile(TESSERA_FIXTURE_MODEL), 2);
  EXPECT_EQ(NumThreads(), 2);
  ASSERT_EQ(ex.NumInputs(), 1);
  EXPECT_EQ(ex.InputName(0), "x");
  EXPECT_EQ(ex.InputShape(0), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(ex.InputDType(0), DataType::Float(32));
  ASSERT_EQ(ex.NumOutputs(), 4);
  EXPECT_EQ(ex.OutputName(1), "y_flat");
  EXPECT_EQ(ex.OutputShape(1), (std::vector<int64_t>{8}));
  EXPECT_EQ(ex.OutputDType(0), DataType::Float(32));
  EXPECT_EQ(ex.NumNodes(), 2);
  EXPECT_EQ(ex.StorageBytes(), 64u + 64u + 128u);
  EXPECT_EQ(ex.InputIndex("x"), 0);
  EXPECT_EQ(ex.InputIndex("nope"), -1);
  EXPECT_EQ(ex.OutputIndex("bias"), 2);

  // bias = {-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5}
  ex.SetInput("x", Floats({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0}));
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("y")), (std::vector<float>{0, 0, 0, 0.5f, 1, 1.5f, 2, 2.5f}));
  ex.SetInput(0, Floats({2, 4}, {1, 1, 1, 1, -10, -10, -10, 10}));
  ex.Run();
  NDArray y = ex.GetOutput(0);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Values(y), (std::vector<float>{0, 0.5f, 1, 1.5f, 0, 0, 0, 12.5f}));
  EXPECT_EQ(Values(ex.GetOutput("y_flat")), Values(y));  // zero-copy reshape of y
  EXPECT_EQ(Values(ex.GetOutput("bias")), (std::vector<float>{-1, -0.5f, 0, 0.5f, 1, 1.5f, 2, 2.5f}));
  EXPECT_EQ(Values(ex.GetOutput("x_echo")), (std::vector<float>{1, 1, 1, 1, -10, -10, -10, 10}));

  // Outputs are fresh copies, 64-byte aligned.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(y.raw_data()) % 64, 0u);
  y.data<float>()[0] = 99;
  EXPECT_EQ(ex.GetOutput(0).data<float>()[0], 0.0f);
  EXPECT_FALSE(ex.GetOutput(0).SharesStorageWith(ex.GetOutput(0)));
}

// The first runs calibrate each node's launch mode (parallel / serial); every run, before,
// during and after the calibration, gives the same outputs.
TEST(GraphExecutor, LaunchModeCalibrationKeepsResults) {
  GraphExecutor ex(Module::LoadFromFile(TESSERA_FIXTURE_MODEL), 2);
  ex.SetInput(0, Floats({2, 4}, {1, 1, 1, 1, -10, -10, -10, 10}));
  for (int run = 0; run < 25; ++run) {
    ex.Run();
    ASSERT_EQ(Values(ex.GetOutput(0)), (std::vector<float>{0, 0.5f, 1, 1.5f, 0, 0, 0, 12.5f})) << "run " << run;
  }
}

TEST(GraphExecutor, RejectsBadInputs) {
  GraphExecutor ex(Module::LoadFromFile(TESSERA_FIXTURE_MODEL));
  NDArray good = Floats({2, 4}, std::vector<float>(8, 1.0f));
  EXPECT_THROW_WITH(ex.SetInput("input", good), UserError, "no input named 'input'", "'x'");
  EXPECT_THROW_WITH(ex.SetInput("x", Floats({4, 2}, std::vector<float>(8, 1.0f))), UserError, "'x'",
                    "expects shape [2, 4]", "got [4, 2]");
  EXPECT_THROW_WITH(ex.SetInput("x", NDArray::Empty({2, 4}, DataType::Int(32))), UserError,
                    "expects dtype float32", "got int32");
  EXPECT_THROW_WITH(ex.SetInput("x", NDArray()), UserError, "null");
  EXPECT_THROW_WITH(ex.SetInput(3, good), UserError, "out of range");
  EXPECT_THROW_WITH(ex.GetOutput(4), UserError, "out of range");
  EXPECT_THROW_WITH(ex.GetOutput("scores"), UserError, "no output named 'scores'", "'y', 'y_flat'");
  EXPECT_THROW(ex.InputName(-1), UserError);
}

TEST(GraphExecutor, ExecutorKeepsModuleAlive) {
  std::unique_ptr<GraphExecutor> ex;
  {
    Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
    ex = std::make_unique<GraphExecutor>(m);
  }
  ex->SetInput("x", Floats({2, 4}, std::vector<float>(8, 1.0f)));
  ex->Run();
  EXPECT_EQ(ex->GetOutput("y").data<float>()[0], 0.0f);
  GraphExecutor moved = std::move(*ex);
  ex.reset();
  moved.Run();
  EXPECT_EQ(moved.GetOutput("y").data<float>()[7], 3.5f);
}

// --- Graphs from a symbol table, to exercise validation and failures. ---

int32_t AddKernel(void* const* args) {
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* out = static_cast<float*>(args[2]);
  for (int i = 0; i < 4; ++i) out[i] = a[i] + b[i];
  return 0;
}
int32_t FailKernel(void* const*) { return 3; }
int32_t IndexOutOfRangeKernel(void* const*) { return kKernelIndexOutOfRange; }
int init_calls = 0;
int32_t GoodInit(char*, int64_t) { return ++init_calls, 0; }
int32_t BadInit(char* message, int64_t capacity) {
  std::snprintf(message, static_cast<size_t>(capacity), "no primitive for this shape");
  return 1;
}
int32_t AlignedKernel(void* const* args) {
  for (int i = 0; i < 3; ++i)
    if (reinterpret_cast<uintptr_t>(args[i]) % 64 != 0) return 1;
  return AddKernel(args);
}

using testing::TableSource;

// A module whose graph is `json` and whose params blob holds w = {10, 20, 30, 40} ([4]).
struct TestModel {
  explicit TestModel(std::string graph_json) : json(std::move(graph_json)) {}
  std::string json;
  std::string blob;
  int64_t blob_size = 0;
  Module module() {
    auto source = std::make_shared<TableSource>();
    source->table["add"] = reinterpret_cast<void*>(&AddKernel);
    source->table["fail"] = reinterpret_cast<void*>(&FailKernel);
    source->table["oob"] = reinterpret_cast<void*>(&IndexOutOfRangeKernel);
    source->table["aligned_add"] = reinterpret_cast<void*>(&AlignedKernel);
    source->table["ext_ok"] = reinterpret_cast<void*>(&AddKernel);
    source->table[std::string("ext_ok") + kKernelInitSuffix] = reinterpret_cast<void*>(&GoodInit);
    source->table["ext_bad"] = reinterpret_cast<void*>(&AddKernel);
    source->table[std::string("ext_bad") + kKernelInitSuffix] = reinterpret_cast<void*>(&BadInit);
    source->table[kGraphJsonSymbol] = json.data();
    blob = SaveParams({{"w", Floats({4}, {10, 20, 30, 40})}});
    blob_size = static_cast<int64_t>(blob.size());
    source->table[kParamsBlobSymbol] = blob.data();
    source->table[kParamsSizeSymbol] = &blob_size;
    return Module(source, "<test>");
  }
};

// in (value 0) + w (value 1) -> out (value 2); both storages 64 bytes.
std::string Graph(const std::string& storages, const std::string& values, const std::string& inputs,
                  const std::string& outputs, const std::string& nodes) {
  return R"({"format": "tessera-graph", "version": 1, "storages": )" + storages + R"(, "values": )" + values +
         R"(, "inputs": )" + inputs + R"(, "outputs": )" + outputs + R"(, "nodes": )" + nodes + "}";
}
const char* kStorages = R"([{"id": 0, "size_bytes": 64}, {"id": 1, "size_bytes": 128}])";
const char* kValues = R"([
  {"id": 0, "dtype": "float32", "shape": [4], "kind": "input", "storage": 0, "offset_bytes": 0},
  {"id": 1, "dtype": "float32", "shape": [4], "kind": "param", "param": "w"},
  {"id": 2, "dtype": "float32", "shape": [4], "kind": "intermediate", "storage": 1, "offset_bytes": 64}])";
const char* kInputs = R"([{"name": "in", "value": 0}])";
const char* kOutputs = R"([{"name": "out", "value": 2}])";
const char* kNodes = R"([{"name": "add_0", "kernel": "aligned_add", "args": [0, 1, 2]}])";

TEST(GraphExecutor, RunsGraphFromSymbolSource) {
  TestModel t{Graph(kStorages, kValues, kInputs, kOutputs, kNodes)};
  GraphExecutor ex(t.module());
  ex.SetInput("in", Floats({4}, {1, 2, 3, 4}));
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("out")), (std::vector<float>{11, 22, 33, 44}));
}

// Zero-copy I/O. in (v0) is read through its alias v3 (a reshape); out (v2) is written by the
// kernel; "same" is an alias of out (v4) and "echo" is the input itself: neither can be bound.
const char* kAliasValues = R"([
  {"id": 0, "dtype": "float32", "shape": [4], "kind": "input", "storage": 0, "offset_bytes": 0},
  {"id": 1, "dtype": "float32", "shape": [4], "kind": "param", "param": "w"},
  {"id": 2, "dtype": "float32", "shape": [4], "kind": "intermediate", "storage": 1, "offset_bytes": 64},
  {"id": 3, "dtype": "float32", "shape": [2, 2], "kind": "intermediate", "storage": 0, "offset_bytes": 0, "alias_of": 0},
  {"id": 4, "dtype": "float32", "shape": [1, 4], "kind": "intermediate", "storage": 1, "offset_bytes": 64, "alias_of": 2}])";
const char* kAliasOutputs = R"([{"name": "out", "value": 2}, {"name": "same", "value": 4}, {"name": "echo", "value": 0}])";

TEST(GraphExecutor, BindInputReadsCallerMemory) {
  TestModel t{Graph(kStorages, kAliasValues, kInputs, kAliasOutputs,
                    R"([{"name": "add_0", "kernel": "aligned_add", "args": [3, 1, 2]}])")};
  GraphExecutor ex(t.module());
  NDArray x = Floats({4}, {1, 2, 3, 4});
  EXPECT_TRUE(ex.BindInput(0, x));
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("out")), (std::vector<float>{11, 22, 33, 44}));
  x.data<float>()[0] = 5;  // no copy was made: the next run reads the new value
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("out"))[0], 15);
  EXPECT_EQ(Values(ex.GetOutput("echo"))[0], 5);
  // Misaligned memory is copied (aligned_add fails on a misaligned pointer).
  NDArray backing = Floats({5}, {0, 7, 7, 7, 7});
  NDArray misaligned = backing.CreateView({4}, DataType::Float(32), sizeof(float));
  EXPECT_FALSE(ex.BindInput(0, misaligned));
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("out")), (std::vector<float>{17, 27, 37, 47}));
  // SetInput after a bind copies into the executor's own storage again.
  ex.BindInput(0, x);
  ex.SetInput(0, Floats({4}, {0, 0, 0, 0}));
  x.data<float>()[0] = 100;
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("out")), (std::vector<float>{10, 20, 30, 40}));
  EXPECT_THROW_WITH(ex.BindInput(0, Floats({2}, {1, 2})), UserError, "input 'in'", "[4]", "[2]");
}

TEST(GraphExecutor, BindOutputWritesCallerArray) {
  TestModel t{Graph(kStorages, kAliasValues, kInputs, kAliasOutputs,
                    R"([{"name": "add_0", "kernel": "aligned_add", "args": [3, 1, 2]}])")};
  GraphExecutor ex(t.module());
  ex.SetInput(0, Floats({4}, {1, 2, 3, 4}));
  NDArray out = NDArray::Empty({4}, DataType::Float(32));
  EXPECT_TRUE(ex.BindOutput(0, out));
  EXPECT_FALSE(ex.BindOutput(1, NDArray::Empty({1, 4}, DataType::Float(32))));  // an alias of "out"
  EXPECT_FALSE(ex.BindOutput(2, NDArray::Empty({4}, DataType::Float(32))));     // the input
  ex.Run();
  EXPECT_EQ(Values(out), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(Values(ex.GetOutput("same")), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(Values(ex.GetOutput("echo")), (std::vector<float>{1, 2, 3, 4}));
  // A second bound array gets the next run; the first keeps its values.
  NDArray out2 = NDArray::Empty({4}, DataType::Float(32));
  EXPECT_TRUE(ex.BindOutput(0, out2));
  ex.SetInput(0, Floats({4}, {2, 2, 2, 2}));
  ex.Run();
  EXPECT_EQ(Values(out2), (std::vector<float>{12, 22, 32, 42}));
  EXPECT_EQ(Values(out), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_THROW_WITH(ex.BindOutput(0, NDArray::Empty({4}, DataType::Int(32))), UserError, "output 'out'", "float32",
                    "int32");
  // ReleaseBindings: the next run writes the executor's own storage, not out2.
  EXPECT_EQ(out2.UseCount(), 2);
  ex.ReleaseBindings();
  EXPECT_EQ(out2.UseCount(), 1);
  ex.SetInput(0, Floats({4}, {3, 3, 3, 3}));
  ex.Run();
  EXPECT_EQ(Values(out2), (std::vector<float>{12, 22, 32, 42}));
  EXPECT_EQ(Values(ex.GetOutput(0)), (std::vector<float>{13, 23, 33, 43}));
}

TEST(GraphExecutor, ProfileTimesEveryNode) {
  TestModel t{Graph(kStorages, kValues, kInputs, kOutputs,
                    R"([{"name": "first", "kernel": "add", "args": [0, 1, 2]},
                        {"name": "second", "kernel": "add", "args": [0, 1, 2]}])")};
  GraphExecutor ex(t.module());
  EXPECT_TRUE(ex.Profile().empty());
  ex.SetProfiling(true);
  ex.SetInput(0, Floats({4}, {1, 2, 3, 4}));
  for (int i = 0; i < 3; ++i) ex.Run();
  EXPECT_EQ(ex.ProfiledRuns(), 3);
  std::vector<GraphExecutor::NodeProfile> rows = ex.Profile();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE((rows[0].node == "first" && rows[1].node == "second") || (rows[0].node == "second" && rows[1].node == "first"));
  EXPECT_GE(rows[0].ms_per_run, rows[1].ms_per_run);
  EXPECT_EQ(rows[0].kernel, "add");
  EXPECT_EQ(rows[0].arg_shapes, "[4][4][4]");
  ex.SetProfiling(false);
  ex.Run();
  EXPECT_EQ(ex.ProfiledRuns(), 3);
}

TEST(GraphExecutor, FailingKernelNamesNode) {
  TestModel t{Graph(kStorages, kValues, kInputs, kOutputs,
                    R"([{"name": "add_0", "kernel": "add", "args": [0, 1, 2]},
                        {"name": "bad_node", "kernel": "fail", "args": [2]}])")};
  GraphExecutor ex(t.module());
  ex.SetInput("in", Floats({4}, {1, 2, 3, 4}));
  EXPECT_THROW_WITH(ex.Run(), Error, "bad_node", "fail", "status 3");
}

// kKernelIndexOutOfRange: a UserError naming the model nodes of the node's "checks" (none: the kernel).
TEST(GraphExecutor, IndexOutOfRangeNamesTheCheckedModelNodes) {
  auto run = [](const std::string& checks) {
    TestModel t{Graph(kStorages, kValues, kInputs, kOutputs,
                      R"([{"name": "gather_n0", "kernel": "oob", "args": [0, 1, 2])" + checks + "}]")};
    GraphExecutor ex(t.module());
    ex.SetInput("in", Floats({4}, {1, 2, 3, 4}));
    ex.Run();
  };
  EXPECT_THROW_WITH(run(R"J(, "checks": ["node 'emb' (op Gather, domain ai.onnx, opset 13)"])J"), UserError,
                    "index is out of range in node 'emb' (op Gather", "gather_n0", "[-n, n)");
  EXPECT_THROW_WITH(run(R"J(, "checks": ["node 'a' (op GatherND)", "node 'b' (op ScatterND)"])J"), UserError,
                    "one of node 'a' (op GatherND), node 'b' (op ScatterND)");
  EXPECT_THROW_WITH(run(""), UserError, "index is out of range in an index input", "gather_n0", "oob");
}

// Builds an executor for a broken graph and expects a UserError mentioning `parts`.
#define EXPECT_BAD_GRAPH(json, ...)                     \
  do {                                                  \
    TestModel t_{json};                                 \
    Module m_ = t_.module();                            \
    EXPECT_THROW_WITH(GraphExecutor ex_(m_), UserError, __VA_ARGS__); \
  } while (0)

// External kernels (BYOC, kernel_abi.h): <kernel>__init runs once when the executor is built; a
// failure is a UserError naming the kernel and its backend.
TEST(GraphExecutor, ExternalKernelInitRunsAtLoad) {
  auto graph = [](const std::string& kernel) {
    return Graph(kStorages, kValues, kInputs, kOutputs,
                 R"([{"name": "n0", "kernel": ")" + kernel + R"(", "args": [0, 1, 2]}])");
  };
  auto with_external = [&](const std::string& kernel) {
    std::string g = graph(kernel);
    g.pop_back();  // the closing brace
    return g + R"(, "external": [{"symbol": ")" + kernel + R"(", "compiler": "dnnl", "ops": ["add"]}]})";
  };
  init_calls = 0;
  TestModel ok{with_external("ext_ok")};
  GraphExecutor ex(ok.module());
  EXPECT_EQ(init_calls, 1);
  ex.SetInput("in", Floats({4}, {1, 2, 3, 4}));
  ex.Run();
  EXPECT_EQ(Values(ex.GetOutput("out")), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(init_calls, 1);
  TestModel bad{with_external("ext_bad")};
  Module m = bad.module();
  EXPECT_THROW_WITH(GraphExecutor e(m), UserError, "external function 'ext_bad' (BYOC backend 'dnnl') failed to initialize",
                    "no primitive for this shape", "without --byoc dnnl");
  const std::string g = graph("add");
  EXPECT_BAD_GRAPH(g.substr(0, g.size() - 1) + R"(, "external": [{"symbol": 3}]})", "external[0]");
}

TEST(GraphExecutor, ValidatesGraphJson) {
  EXPECT_BAD_GRAPH("{not json", "<test>", "not valid JSON");
  // A number too large for a double: nlohmann throws out_of_range, not parse_error (found by the
  // graph_executor fuzz target; was an uncaught exception, exit 3).
  EXPECT_BAD_GRAPH("11e777777", "<test>", "not valid JSON");
  EXPECT_BAD_GRAPH(R"({"format": "onnx", "version": 1})", "tessera-graph");
  EXPECT_BAD_GRAPH(R"({"format": "tessera-graph", "version": 2})", "version 2");
  EXPECT_BAD_GRAPH(R"({"format": "tessera-graph", "version": 1, "values": []})", "storages");
  // Unknown value id in a node's args.
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, kInputs, kOutputs,
                         R"([{"name": "n", "kernel": "add", "args": [0, 1, 9]}])"),
                   "node \"n\"", "unknown value id 9");
  // "checks" holds strings.
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, kInputs, kOutputs,
                         R"([{"name": "n", "kernel": "add", "args": [0, 1, 2], "checks": [3]}])"),
                   "node \"n\"", "\"checks\" must hold strings");
  // Unknown value id in outputs / inputs.
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, kInputs, R"([{"name": "o", "value": 5}])", kNodes),
                   "outputs[0]", "unknown value id 5");
  // Storage overflow: 4 floats at offset 64 of a 64-byte storage.
  EXPECT_BAD_GRAPH(Graph(R"([{"id": 0, "size_bytes": 64}, {"id": 1, "size_bytes": 64}])", kValues, kInputs,
                         kOutputs, kNodes),
                   "value 2", "overflows storage 1");
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "float32", "shape": [4], "kind": "input",
                                        "storage": 7, "offset_bytes": 0}])",
                         kInputs, "[]", "[]"),
                   "unknown storage id 7");
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "float32", "shape": [4], "kind": "input",
                                        "storage": 1, "offset_bytes": 32}])",
                         kInputs, "[]", "[]"),
                   "multiple of 64");
  // Duplicate names and ids.
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, R"([{"name": "in", "value": 0}, {"name": "in", "value": 0}])",
                         kOutputs, kNodes),
                   "duplicate name \"in\"");
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, kInputs, R"([{"name": "o", "value": 2}, {"name": "o", "value": 1}])",
                         kNodes),
                   "duplicate name \"o\"");
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, kInputs, kOutputs,
                         R"([{"name": "n", "kernel": "add", "args": [0, 1, 2]},
                             {"name": "n", "kernel": "add", "args": [0, 1, 2]}])"),
                   "duplicate node name \"n\"");
  EXPECT_BAD_GRAPH(Graph(R"([{"id": 0, "size_bytes": 64}, {"id": 0, "size_bytes": 64}])", "[]", "[]", "[]", "[]"),
                   "duplicate storage id 0");
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 3, "dtype": "float32", "shape": [1], "kind": "param", "param": "w"},
                                       {"id": 3, "dtype": "float32", "shape": [1], "kind": "param", "param": "w"}])",
                         "[]", "[]", "[]"),
                   "duplicate value id 3");
  // Kinds, dtypes, fields.
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "float32", "shape": [4], "kind": "weird"}])", "[]", "[]",
                         "[]"),
                   "kind \"weird\"");
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "flot32", "shape": [4], "kind": "param", "param": "w"}])",
                         "[]", "[]", "[]"),
                   "value 0", "flot32");
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "float32", "shape": "4", "kind": "param"}])", "[]", "[]",
                         "[]"),
                   "\"shape\" must be an array");
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, R"([{"name": "in", "value": 2}])", kOutputs, kNodes),
                   "whose kind is not \"input\"");
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, "[]", kOutputs, kNodes), "value 0", "no entry of \"inputs\"");
  // Params: missing from the blob, or of another shape.
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "float32", "shape": [4], "kind": "param", "param": "v"}])",
                         "[]", "[]", "[]"),
                   "parameter 'v'");
  EXPECT_BAD_GRAPH(Graph(kStorages, R"([{"id": 0, "dtype": "float32", "shape": [2, 2], "kind": "param", "param": "w"}])",
                         "[]", "[]", "[]"),
                   "parameter 'w'", "[4]", "[2, 2]");
  // Aliases: unknown root, a param root, an alias of an alias, other bytes.
  const std::string in_value = R"({"id": 0, "dtype": "float32", "shape": [4], "kind": "input", "storage": 0, "offset_bytes": 0})";
  auto alias = [&](const std::string& fields) {
    return Graph(kStorages, "[" + in_value + R"(, {"id": 1, "dtype": "float32", "shape": [4], "kind": "param", "param": "w"},
                 {"id": 5, "dtype": "float32", "shape": [2, 2], "kind": "intermediate", "storage": 0, )" + fields + "}]",
                 kInputs, "[]", "[]");
  };
  EXPECT_BAD_GRAPH(alias(R"("alias_of": 9)"), "value 5", "unknown value id 9");
  EXPECT_BAD_GRAPH(alias(R"("alias_of": 1)"), "value 5", "not itself an alias");
  EXPECT_BAD_GRAPH(alias(R"("alias_of": 5)"), "value 5", "not itself an alias");
  EXPECT_BAD_GRAPH(Graph(kStorages, "[" + in_value + R"(, {"id": 1, "dtype": "float32", "shape": [2], "kind": "intermediate",
                                                           "storage": 0, "alias_of": 0}])",
                         kInputs, "[]", "[]"),
                   "value 1", "storage, offset and byte size of value 0");
  // A kernel the library lacks.
  EXPECT_BAD_GRAPH(Graph(kStorages, kValues, kInputs, kOutputs,
                         R"([{"name": "conv_7", "kernel": "fused_conv_7", "args": [0, 1, 2]}])"),
                   "node 'conv_7'", "fused_conv_7");
}

TEST(GraphExecutor, ModuleWithoutGraphIsUserError) {
  auto source = std::make_shared<TableSource>();
  EXPECT_THROW_WITH(GraphExecutor ex(Module(source, "<kernels only>")), UserError, "<kernels only>",
                    "__tessera_graph_json");
}

TEST(GraphExecutor, CorruptParamsBlobNamesModule) {
  TestModel t{Graph(kStorages, kValues, kInputs, kOutputs, kNodes)};
  Module m = t.module();
  t.blob[0] = 'X';
  EXPECT_THROW_WITH(GraphExecutor ex(m), UserError, "<test>", "TSRPARAM");
}

}  // namespace
}  // namespace tessera::runtime
