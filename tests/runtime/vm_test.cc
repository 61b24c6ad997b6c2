// VirtualMachine (vm.h), its executable (vm_executable.h) and MakeExecutor (executor.h), over
// modules built from a table of C++ kernels and a params blob.
#include "tessera/runtime/vm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/param_io.h"
#include "tessera/runtime/run_model.h"
#include "tessera/runtime/vm_executable.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

NDArray Floats(std::vector<int64_t> shape, std::vector<float> values) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  a.CopyFromBytes(values.data(), values.size() * sizeof(float));
  return a;
}
template <typename T>
NDArray Scalar(T value) {
  NDArray a = NDArray::Empty({}, DataTypeOf<T>());
  a.CopyFromBytes(&value, sizeof value);
  return a;
}
std::vector<float> Values(const NDArray& a) {
  const float* p = a.data<float>();
  return std::vector<float>(p, p + a.NumElements());
}

// Kernels over float32 [4] (kernel_abi.h: inputs then outputs). Each fails unless its pointers
// are 64-byte aligned, as kernel_abi.h promises.
bool Aligned(void* const* args, int n) {
  for (int i = 0; i < n; ++i)
    if (reinterpret_cast<uintptr_t>(args[i]) % 64 != 0) return false;
  return true;
}
int32_t AddKernel(void* const* args) {
  if (!Aligned(args, 3)) return 1;
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* out = static_cast<float*>(args[2]);
  for (int i = 0; i < 4; ++i) out[i] = a[i] + b[i];
  return 0;
}
int32_t MulKernel(void* const* args) {
  if (!Aligned(args, 3)) return 1;
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* out = static_cast<float*>(args[2]);
  for (int i = 0; i < 4; ++i) out[i] = a[i] * b[i];
  return 0;
}
int32_t FailKernel(void* const*) { return 3; }
int32_t IndexOutOfRangeKernel(void* const*) { return kKernelIndexOutOfRange; }

using testing::TableSource;

// A module whose program is `json` and whose params blob holds w = {10, 20, 30, 40} ([4]) and
// one = 1 (int32 []).
struct TestModel {
  explicit TestModel(std::string program) : json(std::move(program)) {}
  std::string json;
  std::string blob;
  int64_t blob_size = 0;
  Module module() {
    auto source = std::make_shared<TableSource>();
    source->table["add"] = reinterpret_cast<void*>(&AddKernel);
    source->table["mul"] = reinterpret_cast<void*>(&MulKernel);
    source->table["fail"] = reinterpret_cast<void*>(&FailKernel);
    source->table["oob"] = reinterpret_cast<void*>(&IndexOutOfRangeKernel);
    source->table[kGraphJsonSymbol] = json.data();
    blob = SaveParams({{"w", Floats({4}, {10, 20, 30, 40})}, {"one", Scalar<int32_t>(1)}});
    blob_size = static_cast<int64_t>(blob.size());
    source->table[kParamsBlobSymbol] = blob.data();
    source->table[kParamsSizeSymbol] = &blob_size;
    return Module(source, "<test>");
  }
};

// A program over inputs x (float32 [4]) and c (int32 []) with output y (float32 [4]).
std::string Program(const std::string& instructions, int num_registers = 8, const std::string& extra = "") {
  return R"({"format": "tessera-vm", "version": 1, "num_registers": )" + std::to_string(num_registers) +
         R"(, "inputs": [{"name": "x", "dtype": "float32", "shape": [4]}, {"name": "c", "dtype": "int32", "shape": []}],
          "outputs": [{"name": "y", "dtype": "float32", "shape": [4]}], "instructions": )" +
         instructions + extra + "}";
}

// y = c ? x + w : x * w.
const char* kIfProgram = R"([
  {"op": "LoadConst", "dst": 2, "param": "w"},
  {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [4]},
  {"op": "If", "cond": 1, "true_offset": 1, "false_offset": 3},
  {"op": "InvokePacked", "kernel": "add", "args": [0, 2, 3], "num_outputs": 1},
  {"op": "Goto", "offset": 2},
  {"op": "InvokePacked", "kernel": "mul", "args": [0, 2, 3], "num_outputs": 1},
  {"op": "Ret", "results": [3]}])";

TEST(VirtualMachine, IfChoosesTheKernelByTheCondition) {
  TestModel t{Program(kIfProgram)};
  VirtualMachine vm(t.module());
  EXPECT_EQ(vm.NumInstructions(), 7);
  ASSERT_EQ(vm.NumInputs(), 2);
  EXPECT_EQ(vm.InputName(1), "c");
  EXPECT_EQ(vm.InputDType(1), DataType::Int(32));
  EXPECT_EQ(vm.InputShape(0), (std::vector<int64_t>{4}));
  EXPECT_EQ(vm.OutputName(0), "y");
  EXPECT_EQ(vm.OutputIndex("y"), 0);
  EXPECT_EQ(vm.InputIndex("nope"), -1);
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  std::vector<NDArray> out = vm.Invoke({x, Scalar<int32_t>(1)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{11, 22, 33, 44}));
  out = vm.Invoke({x, Scalar<int32_t>(0)});
  EXPECT_EQ(Values(out[0]), (std::vector<float>{10, 40, 90, 160}));
  out = vm.Invoke({x, Scalar<int32_t>(-7)});  // any non-zero value is true
  EXPECT_EQ(Values(out[0]), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(Values(x), (std::vector<float>{1, 2, 3, 4}));  // inputs are only read
}

TEST(VirtualMachine, FatalEndsTheRunWithItsMessageOnlyOnItsPath) {
  // y = c ? x + w : Fatal: the then path runs, the else path fails naming the message and the
  // instruction; the VM runs again afterwards. The AllocTensor after the Fatal is never reached.
  TestModel t{Program(R"([
  {"op": "LoadConst", "dst": 2, "param": "w"},
  {"op": "If", "cond": 1, "true_offset": 1, "false_offset": 5},
  {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [4]},
  {"op": "InvokePacked", "kernel": "add", "args": [0, 2, 3], "num_outputs": 1},
  {"op": "Move", "dst": 4, "src": 3},
  {"op": "Goto", "offset": 4},
  {"op": "Fatal", "message": "node 'If_0': the else branch cannot run with these shapes"},
  {"op": "AllocTensor", "dst": 5, "dtype": "float32", "shape": [4]},
  {"op": "Move", "dst": 4, "src": 5},
  {"op": "Ret", "results": [4]}])")};
  VirtualMachine vm(t.module());
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{11, 22, 33, 44}));
  try {
    vm.Invoke({x, Scalar<int32_t>(0)});
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node 'If_0': the else branch cannot run with these shapes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("instruction 6 (Fatal)"), std::string::npos) << msg;
  }
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{11, 22, 33, 44}));
}

TEST(VirtualMachine, IfConditionOfOtherDtypes) {
  auto program = [](const std::string& cond_dtype) {
    std::string p = Program(kIfProgram);
    return p.replace(p.find(R"("dtype": "int32")"), 16, R"("dtype": ")" + cond_dtype + "\"");
  };
  TestModel f{program("float32")};
  VirtualMachine vf(f.module());
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  EXPECT_EQ(Values(vf.Invoke({x, Scalar<float>(-0.0f)})[0]), (std::vector<float>{10, 40, 90, 160}));  // -0 is false
  EXPECT_EQ(Values(vf.Invoke({x, Scalar<float>(0.5f)})[0]), (std::vector<float>{11, 22, 33, 44}));
  TestModel b{program("bool")};
  VirtualMachine vb(b.module());
  EXPECT_EQ(Values(vb.Invoke({x, Scalar<bool>(true)})[0]), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(Values(vb.Invoke({x, Scalar<bool>(false)})[0]), (std::vector<float>{10, 40, 90, 160}));
}

TEST(VirtualMachine, ExecutorInterface) {
  TestModel t{Program(kIfProgram)};
  std::unique_ptr<Executor> ex = MakeExecutor(t.module());
  ASSERT_NE(dynamic_cast<VirtualMachine*>(ex.get()), nullptr);
  EXPECT_THROW_WITH(ex->Run(), UserError, "input 'x'", "not set");
  EXPECT_THROW_WITH(ex->GetOutput(0), UserError, "no outputs");
  EXPECT_THROW_WITH(ex->SetInput("z", Floats({4}, {1, 2, 3, 4})), UserError, "no input named 'z'", "'x', 'c'");
  EXPECT_THROW_WITH(ex->SetInput("x", Floats({2}, {1, 2})), UserError, "'x'", "expects shape [4]", "got [2]");
  EXPECT_THROW_WITH(ex->SetInput(2, Floats({4}, {1, 2, 3, 4})), UserError, "out of range");
  ex->SetInput("x", Floats({4}, {1, 2, 3, 4}));
  ex->SetInput(1, Scalar<int32_t>(0));
  ex->Run();
  NDArray y = ex->GetOutput(0);
  EXPECT_EQ(Values(y), (std::vector<float>{10, 40, 90, 160}));
  y.data<float>()[0] = 99;  // a copy
  EXPECT_EQ(Values(ex->GetOutput(0)), (std::vector<float>{10, 40, 90, 160}));
  EXPECT_THROW_WITH(ex->GetOutput(1), UserError, "out of range");

  // RunModel (tessera run) runs VM programs too.
  RunModelResult r = RunModel(t.module(), {{"x", Floats({4}, {1, 2, 3, 4})}, {"c", Scalar<int32_t>(1)}});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].name, "y");
  EXPECT_EQ(Values(r.outputs[0].value), (std::vector<float>{11, 22, 33, 44}));
}

// ReshapeTensor and Move are zero-copy; outputs that are inputs or params are copies, pool
// tensors are handed over.
TEST(VirtualMachine, ReshapeMoveAndLoadConst) {
  const std::string program = R"({"format": "tessera-vm", "version": 1, "num_registers": 7,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [2, 2]}],
    "outputs": [{"name": "y", "dtype": "float32", "shape": [2, 2]},
                {"name": "x_flat", "dtype": "float32", "shape": [4]},
                {"name": "w", "dtype": "float32", "shape": [4]}, {"name": "y_again", "dtype": "float32", "shape": [4]}],
    "instructions": [
      {"op": "ReshapeTensor", "dst": 1, "src": 0, "shape": [4]},
      {"op": "Move", "dst": 2, "src": 1},
      {"op": "LoadConst", "dst": 3, "param": "w"},
      {"op": "AllocTensor", "dst": 4, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "add", "args": [2, 3, 4], "num_outputs": 1},
      {"op": "ReshapeTensor", "dst": 5, "src": 4, "shape": [2, 2]},
      {"op": "Ret", "results": [5, 1, 3, 4]}]})";
  TestModel t{program};
  VirtualMachine vm(t.module());
  const NDArray x = Floats({2, 2}, {1, 2, 3, 4});
  std::vector<NDArray> out = vm.Invoke({x});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Values(out[2]), (std::vector<float>{10, 20, 30, 40}));
  EXPECT_EQ(Values(out[3]), (std::vector<float>{11, 22, 33, 44}));
  // Every output is the caller's own: not the input, not the param, not another output.
  EXPECT_FALSE(out[1].SharesStorageWith(x));
  EXPECT_FALSE(out[3].SharesStorageWith(out[0]));
  out[2].data<float>()[0] = -1;
  EXPECT_EQ(Values(vm.Invoke({x})[2]), (std::vector<float>{10, 20, 30, 40}));
  // The kept outputs are not reused by later runs.
  out[0].data<float>()[0] = 7;
  vm.Invoke({Floats({2, 2}, {0, 0, 0, 0})});
  EXPECT_EQ(Values(out[0]), (std::vector<float>{7, 22, 33, 44}));
}

// A misaligned input (e.g. through DLPack) is copied to aligned memory for the kernels.
TEST(VirtualMachine, MisalignedInputIsCopied) {
  TestModel t{Program(kIfProgram)};
  VirtualMachine vm(t.module());
  alignas(64) static float buffer[20] = {0, 1, 2, 3, 4};
  auto* managed = new DLManagedTensor{};
  static int64_t shape[1] = {4};
  managed->dl_tensor.data = buffer + 1;
  managed->dl_tensor.device = {kDLCPU, 0};
  managed->dl_tensor.ndim = 1;
  managed->dl_tensor.dtype = {kDLFloat, 32, 1};
  managed->dl_tensor.shape = shape;
  managed->deleter = [](DLManagedTensor* m) { delete m; };
  NDArray x = NDArray::FromDLPack(managed);
  ASSERT_NE(reinterpret_cast<uintptr_t>(x.raw_data()) % 64, 0u);
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{11, 22, 33, 44}));
}

// Kill gives a storage back to the pool: the next AllocTensor of a size it fits reuses it.
TEST(VirtualMachine, KillReturnsStorageToThePool) {
  auto program = [](const std::string& kill, const std::string& second_shape) {
    return Program(R"([
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "add", "args": [0, 0, 2], "num_outputs": 1},)" + kill + R"(
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": )" + second_shape + R"(},
      {"op": "AllocTensor", "dst": 4, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "add", "args": [0, 0, 4], "num_outputs": 1},
      {"op": "Ret", "results": [4]}])");
  };
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  // (allocations, bytes) of the pool after one run.
  auto pool = [&](const std::string& kill, const std::string& second_shape) {
    TestModel t{program(kill, second_shape)};
    VirtualMachine vm(t.module());
    EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(0)})[0]), (std::vector<float>{2, 4, 6, 8}));
    return std::make_pair(vm.PoolAllocations(), vm.PoolBytes());
  };
  const std::string kill = R"({"op": "Kill", "regs": [2]},)";
  using P = std::pair<int64_t, size_t>;
  EXPECT_EQ(pool("", "[4]"), P(3, 192));
  EXPECT_EQ(pool(kill, "[4]"), P(2, 128));   // r3 reuses r2's storage
  EXPECT_EQ(pool(kill, "[16]"), P(2, 128));  // 64 bytes: still fits r2's 64-byte storage
  EXPECT_EQ(pool(kill, "[17]"), P(2, 192));  // 128 bytes: too large for it (r4 takes it)

  // Overwriting a register drops its tensor too; a tensor takes no free storage over twice its
  // rounded size.
  TestModel t{Program(R"([
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": [64]},
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": [64]},
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [64]},
      {"op": "Kill", "regs": [2]},
      {"op": "AllocTensor", "dst": 4, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "add", "args": [0, 0, 4], "num_outputs": 1},
      {"op": "Ret", "results": [4]}])")};
  VirtualMachine vm(t.module());
  EXPECT_EQ(vm.PoolAllocations(), 0);
  vm.Invoke({x, Scalar<int32_t>(0)});
  // A (r2), B (the second r2: A is still in r2 while it allocates), A again for r3 (free once r2
  // was overwritten), C for r4 (B is free but its 256 bytes are over twice the 64 needed).
  EXPECT_EQ(vm.PoolAllocations(), 3);
  EXPECT_EQ(vm.PoolBytes(), 256u + 256u + 64u);
  vm.Invoke({x, Scalar<int32_t>(0)});
  EXPECT_EQ(vm.PoolAllocations(), 3);
}

// Runs with the same shapes allocate nothing after the first one, whichever branch they take,
// through Invoke and through the Executor interface.
TEST(VirtualMachine, RepeatedRunsAllocateNothing) {
  TestModel t{Program(kIfProgram)};
  VirtualMachine vm(t.module());
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  vm.Invoke({x, Scalar<int32_t>(1)});
  const int64_t allocations = vm.PoolAllocations();
  const size_t bytes = vm.PoolBytes();
  EXPECT_EQ(allocations, 1);
  EXPECT_EQ(bytes, 64u);
  const NDArray yes = Scalar<int32_t>(1), no = Scalar<int32_t>(0);
  for (int i = 0; i < 1000; ++i) {
    std::vector<NDArray> out = vm.Invoke({x, i % 2 ? yes : no});
    ASSERT_EQ(out[0].data<float>()[1], i % 2 ? 22.0f : 40.0f) << "run " << i;
  }
  EXPECT_EQ(vm.PoolAllocations(), allocations);
  EXPECT_EQ(vm.PoolBytes(), bytes);
  vm.SetInput(0, x);
  for (int i = 0; i < 1000; ++i) {
    vm.SetInput(1, i % 2 ? yes : no);
    vm.Run();
  }
  EXPECT_EQ(Values(vm.GetOutput(0)), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(vm.PoolAllocations(), allocations);
}

TEST(VirtualMachine, RejectsBadInputs) {
  TestModel t{Program(kIfProgram)};
  VirtualMachine vm(t.module());
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "<test>", "takes 2 inputs", "'x', 'c'", "got 1");
  EXPECT_THROW_WITH(vm.Invoke({Floats({2}, {1, 2}), Scalar<int32_t>(1)}), UserError, "input 'x'",
                    "expects shape [4]", "got [2]");
  EXPECT_THROW_WITH(vm.Invoke({x, Scalar<int64_t>(1)}), UserError, "input 'c'", "expects dtype int32", "got int64");
  EXPECT_THROW_WITH(vm.Invoke({x, NDArray()}), UserError, "input 'c'", "null");
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{11, 22, 33, 44}));
}

TEST(VirtualMachine, GuardsCheckSpecializedInputs) {
  TestModel t{Program(kIfProgram, 8, R"(, "guards": [{"input": "c", "param": "one"}])")};
  VirtualMachine vm(t.module());
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_THROW_WITH(vm.Invoke({x, Scalar<int32_t>(0)}), UserError, "input 'c' is [0]", "compiled for [1]",
                    "--input-value c=");
  TestModel bad{Program(kIfProgram, 8, R"(, "guards": [{"input": "c", "param": "w"}])")};
  Module m = bad.module();
  EXPECT_THROW_WITH(VirtualMachine v(m), UserError, "guard of input 'c'", "parameter 'w'");
}

// A failing kernel: the error of the graph executor, naming the instruction and its kernel; the
// VM runs again afterwards.
TEST(VirtualMachine, KernelFailureLeavesTheVmUsable) {
  // The failing kernel runs only when c is 0.
  const std::string program = Program(R"J([
    {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": [4]},
    {"op": "If", "cond": 1, "true_offset": 3, "false_offset": 1},
    {"op": "InvokePacked", "kernel": "oob", "args": [0, 2], "num_outputs": 1,
     "checks": ["node 'g' (op Gather, domain ai.onnx, opset 13)"]},
    {"op": "InvokePacked", "kernel": "fail", "args": [0, 2], "num_outputs": 1},
    {"op": "InvokePacked", "kernel": "add", "args": [0, 0, 2], "num_outputs": 1},
    {"op": "Ret", "results": [2]}])J");
  TestModel t{program};
  VirtualMachine vm(t.module());
  const NDArray x = Floats({4}, {1, 2, 3, 4});
  EXPECT_THROW_WITH(vm.Invoke({x, Scalar<int32_t>(0)}), UserError,
                    "index is out of range in node 'g' (op Gather", "instruction 2 (InvokePacked, kernel 'oob')",
                    "<test>", "[-n, n)");
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(vm.PoolAllocations(), 1);  // the failed run's storage came back
  // Another status: a tessera::Error, not a UserError.
  std::string other = program;
  other.replace(other.find(R"("kernel": "oob")"), 15, R"("kernel": "add")");
  other.replace(other.find(R"("true_offset": 3, "false_offset": 1)"), 35, R"("true_offset": 2, "false_offset": 2)");
  TestModel f{other};
  VirtualMachine vf(f.module());
  try {
    vf.Invoke({x, Scalar<int32_t>(1)});
    ADD_FAILURE() << "expected an Error";
  } catch (const UserError& e) {
    ADD_FAILURE() << "a kernel status other than the documented ones is no UserError: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("instruction 3 (InvokePacked, kernel 'fail')"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("status 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Values(vm.Invoke({x, Scalar<int32_t>(1)})[0]), (std::vector<float>{2, 4, 6, 8}));
}

// Builds a VM for a broken program and expects a UserError mentioning `parts`.
#define EXPECT_BAD_VM(json, ...)                                          \
  do {                                                                    \
    TestModel t_{json};                                                   \
    Module m_ = t_.module();                                              \
    EXPECT_THROW_WITH(VirtualMachine vm_(m_), UserError, __VA_ARGS__);    \
  } while (0)

TEST(VirtualMachine, ValidatesTheExecutable) {
  // Registers out of range.
  EXPECT_BAD_VM(Program(R"([{"op": "AllocTensor", "dst": 8, "dtype": "float32", "shape": [4]},
                            {"op": "Ret", "results": [0]}])"),
                "<test>", "instruction 0 (AllocTensor)", "register 8", "8 registers");
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [-1]}])"), "instruction 0 (Ret)", "register -1");
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [0]}])", 1), "num_registers", "1 must be in [2");
  // Jumps outside the program, or to themselves.
  EXPECT_BAD_VM(Program(R"([{"op": "If", "cond": 1, "true_offset": 1, "false_offset": 2},
                            {"op": "Ret", "results": [0]}])"),
                "instruction 0 (If)", "\"false_offset\" 2 jumps outside the program");
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [0]}, {"op": "Goto", "offset": -2}])"),
                "instruction 1 (Goto)", "-2 jumps outside", "before instruction 0");
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [0]}, {"op": "Goto", "offset": 0}])"), "instruction 1 (Goto)",
                "itself");
  // A register read before it is written on one of the paths (here: the true path).
  EXPECT_BAD_VM(Program(R"([
      {"op": "If", "cond": 1, "true_offset": 1, "false_offset": 3},
      {"op": "LoadConst", "dst": 2, "param": "w"},
      {"op": "Goto", "offset": 2},
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [4]},
      {"op": "Ret", "results": [3]}])"),
                "instruction 4 (Ret)", "reads register 3", "not written on every path");
  // ... or after a Kill.
  EXPECT_BAD_VM(Program(R"([
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [4]},
      {"op": "Kill", "regs": [3]},
      {"op": "Ret", "results": [3]}])"),
                "instruction 2 (Ret)", "reads register 3");
  // A kernel writing a param or an input.
  EXPECT_BAD_VM(Program(R"([
      {"op": "LoadConst", "dst": 2, "param": "w"},
      {"op": "Move", "dst": 3, "src": 2},
      {"op": "InvokePacked", "kernel": "add", "args": [0, 0, 3], "num_outputs": 1},
      {"op": "Ret", "results": [3]}])"),
                "instruction 2 (InvokePacked)", "writes register 3", "param or an input");
  EXPECT_BAD_VM(Program(R"([{"op": "InvokePacked", "kernel": "add", "args": [0, 0, 0], "num_outputs": 1},
                            {"op": "Ret", "results": [0]}])"),
                "instruction 0 (InvokePacked)", "writes register 0");
  // The kernel or the param the module lacks.
  EXPECT_BAD_VM(Program(R"([{"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": [4]},
                            {"op": "InvokePacked", "kernel": "fused_conv_7", "args": [0, 0, 2], "num_outputs": 1},
                            {"op": "Ret", "results": [2]}])"),
                "instruction 1 (InvokePacked)", "kernel 'fused_conv_7'");
  EXPECT_BAD_VM(Program(R"([{"op": "LoadConst", "dst": 2, "param": "v"}, {"op": "Ret", "results": [2]}])"),
                "instruction 0 (LoadConst)", "parameter 'v'", "params blob");
  // Falling off the end.
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [0]}, {"op": "Move", "dst": 2, "src": 0}])"),
                "instruction 1 (Move)", "past its last instruction", "Ret, a Fatal or a Goto");
  EXPECT_BAD_VM(Program("[]"), "no instructions");
  // Format, version, JSON.
  EXPECT_BAD_VM(R"({"format": "tessera-graph", "version": 1})", "<test>", "expected \"tessera-vm\"");
  EXPECT_BAD_VM(R"({"format": "tessera-vm", "version": 5})", "version 5", "reads version 1 to 4");
  EXPECT_BAD_VM(R"({"format": "tessera-vm", "version": 0})", "version 0", "reads version 1 to 4");
  EXPECT_BAD_VM("{not json", "not valid JSON");
  // dtypes and shapes.
  EXPECT_BAD_VM(Program(R"([{"op": "AllocTensor", "dst": 2, "dtype": "flot32", "shape": [4]},
                            {"op": "Ret", "results": [0]}])"),
                "instruction 0 (AllocTensor)", "flot32");
  EXPECT_BAD_VM(Program(R"([{"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": [-4]},
                            {"op": "Ret", "results": [0]}])"),
                "instruction 0 (AllocTensor)", "negative extent");
  EXPECT_BAD_VM(Program(R"([{"op": "ReshapeTensor", "dst": 2, "src": 0, "shape": [4611686018427387904, 4]},
                            {"op": "Ret", "results": [2]}])"),
                "instruction 0 (ReshapeTensor)", "too large");
  // Ops, fields, results, names.
  EXPECT_BAD_VM(Program(R"([{"op": "Jump", "offset": 1}, {"op": "Ret", "results": [0]}])"), "instruction 0",
                "unknown op \"Jump\"");
  EXPECT_BAD_VM(Program(R"([{"op": "Move", "dst": 2}, {"op": "Ret", "results": [0]}])"), "instruction 0 (Move)",
                "missing field \"src\"");
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [0, 0]}])"), "instruction 0 (Ret)", "returns 2 results",
                "1 outputs");
  EXPECT_BAD_VM(Program(R"([{"op": "InvokePacked", "kernel": "add", "args": [0], "num_outputs": 2},
                            {"op": "Ret", "results": [0]}])"),
                "instruction 0 (InvokePacked)", "num_outputs 2");
  std::string dup = Program(R"([{"op": "Ret", "results": [0]}])");
  dup.replace(dup.find(R"("name": "c")"), 11, R"("name": "x")");
  EXPECT_BAD_VM(dup, "inputs[1]", "duplicate name \"x\"");
  EXPECT_BAD_VM(Program(R"([{"op": "Ret", "results": [0]}])", 8, R"(, "guards": [{"input": "q", "param": "one"}])"),
                "guards[0]", "\"q\"");
}

// Run-time checks the static validation cannot make: result types, reshape sizes, conditions.
TEST(VirtualMachine, RunTimeChecksNameTheInstruction) {
  auto run = [](const std::string& instructions) {
    TestModel t{Program(instructions)};
    VirtualMachine vm(t.module());
    vm.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(1)});
  };
  EXPECT_THROW_WITH(run(R"([{"op": "Ret", "results": [1]}])"), UserError, "instruction 0 (Ret)",
                    "result 0 (register 1) is int32 []", "output 'y' is float32 [4]");
  EXPECT_THROW_WITH(run(R"([{"op": "ReshapeTensor", "dst": 2, "src": 0, "shape": [5]},
                            {"op": "Ret", "results": [2]}])"),
                    UserError, "instruction 0 (ReshapeTensor)", "(float32 [4]) to [5]");
  EXPECT_THROW_WITH(run(R"([{"op": "If", "cond": 0, "true_offset": 1, "false_offset": 1},
                            {"op": "Ret", "results": [0]}])"),
                    UserError, "instruction 0 (If)", "float32 [4]", "not one scalar element");
}

// Lists of tensors (vm.h): pushes share the list they extend, ListLength counts, ListStack stacks in
// order and binds the stacked length's symbol; bad programs fail naming the instruction.
TEST(VirtualMachine, ListsOfTensorsPushLengthAndStack) {
  auto program = [](const std::string& instructions) {
    return R"({"format": "tessera-vm", "version": 2, "num_registers": 8,
      "inputs": [{"name": "x", "dtype": "float32", "shape": [4]}, {"name": "c", "dtype": "int32", "shape": []}],
      "outputs": [{"name": "y", "dtype": "float32", "shape": ["n", 4]}, {"name": "len", "dtype": "int64", "shape": []}],
      "instructions": )" + instructions + "}";
  };
  // l1 = [x], l3 = [x, w, x], l2 = [x, x]: l1 is unchanged by the pushes that extend it.
  TestModel t{program(R"([
    {"op": "ListNew", "dst": 2}, {"op": "ListPush", "dst": 3, "src": 2, "value": 0},
    {"op": "LoadConst", "dst": 4, "param": "w"}, {"op": "ListPush", "dst": 5, "src": 3, "value": 4},
    {"op": "ListPush", "dst": 6, "src": 5, "value": 0}, {"op": "ListPush", "dst": 7, "src": 3, "value": 0},
    {"op": "Move", "dst": 5, "src": 7}, {"op": "ListLength", "dst": 7, "src": 6},
    {"op": "ListStack", "dst": 2, "src": 6, "dtype": "float32", "shape": ["n", 4]},
    {"op": "ListLength", "dst": 3, "src": 5}, {"op": "Kill", "regs": [5, 6]},
    {"op": "Ret", "results": [2, 3]}])")};
  VirtualMachine vm(t.module());
  for (int run = 0; run < 3; ++run) {
    std::vector<NDArray> out = vm.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(1)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(Values(out[0]), (std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40, 1, 2, 3, 4}));
    EXPECT_EQ(out[1].data<int64_t>()[0], 2);  // [x, x]
  }
  // ListAt: the element at a position, negative from the end; outside [-length, length) fails.
  auto at = [](int position) {
    return R"({"format": "tessera-vm", "version": 1, "num_registers": 8,
      "inputs": [{"name": "x", "dtype": "float32", "shape": [4]}, {"name": "c", "dtype": "int32", "shape": []}],
      "outputs": [{"name": "y", "dtype": "float32", "shape": [4]}], "instructions": [
      {"op": "ListNew", "dst": 2}, {"op": "ListPush", "dst": 2, "src": 2, "value": 0},
      {"op": "LoadConst", "dst": 4, "param": "w"}, {"op": "ListPush", "dst": 2, "src": 2, "value": 4},
      {"op": "ListPush", "dst": 2, "src": 2, "value": 0}, {"op": "LoadConst", "dst": 5, "param": "one"},
      {"op": "ListAt", "dst": 3, "src": 2, "index": )" + std::string(position == 1 ? "5" : "1") + R"(},
      {"op": "Ret", "results": [3]}]})";
  };
  TestModel at_param{at(1)};  // position: the param "one" = 1 -> w
  VirtualMachine vm_at(at_param.module());
  EXPECT_EQ(Values(vm_at.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(0)})[0]), (std::vector<float>{10, 20, 30, 40}));
  TestModel at_input{at(0)};  // position: the input c
  VirtualMachine vm_c(at_input.module());
  EXPECT_EQ(Values(vm_c.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(-2)})[0]), (std::vector<float>{10, 20, 30, 40}));
  EXPECT_EQ(Values(vm_c.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(2)})[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_THROW_WITH(vm_c.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(3)}), UserError, "instruction 6 (ListAt)",
                    "position 3 is out of range [-3, 2]");
  EXPECT_THROW_WITH(vm_c.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(-4)}), UserError, "position -4");

  // An empty list stacks to [0, 4].
  TestModel empty{program(R"([{"op": "ListNew", "dst": 2}, {"op": "ListLength", "dst": 3, "src": 2},
    {"op": "ListStack", "dst": 4, "src": 2, "dtype": "float32", "shape": ["n", 4]}, {"op": "Ret", "results": [4, 3]}])")};
  VirtualMachine vm_empty(empty.module());
  std::vector<NDArray> out = vm_empty.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(1)});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(out[1].data<int64_t>()[0], 0);

  // The programs below end in an unreachable tail that binds "n" (every symbol an output uses must be
  // bound somewhere).
  const std::string binds_n = R"(, {"op": "ListNew", "dst": 4},
    {"op": "ListStack", "dst": 4, "src": 4, "dtype": "float32", "shape": ["n", 4]}, {"op": "Ret", "results": [4, 1]}])";
  auto run = [&](std::string instructions) {
    instructions.replace(instructions.rfind(']'), 1, binds_n);
    TestModel m{program(instructions)};
    VirtualMachine v(m.module());
    v.Invoke({Floats({4}, {1, 2, 3, 4}), Scalar<int32_t>(1)});
  };
  // An element of another type than the stacked one.
  EXPECT_THROW_WITH(run(R"([{"op": "ListNew", "dst": 2}, {"op": "ListPush", "dst": 3, "src": 2, "value": 1},
    {"op": "ListLength", "dst": 5, "src": 3},
    {"op": "ListStack", "dst": 4, "src": 3, "dtype": "float32", "shape": ["n", 4]}, {"op": "Ret", "results": [4, 5]}])"),
                    UserError, "instruction 3 (ListStack)", "element 0 of the list is int32 []");
  // A list where a tensor is read, and a tensor where a list is read.
  EXPECT_THROW_WITH(run(R"([{"op": "ListNew", "dst": 2}, {"op": "Ret", "results": [2, 2]}])"), UserError,
                    "instruction 1 (Ret)", "as a tensor, but it holds a list");
  EXPECT_THROW_WITH(run(R"([{"op": "ListLength", "dst": 2, "src": 0}, {"op": "Ret", "results": [0, 2]}])"), UserError,
                    "instruction 0 (ListLength)", "as a list, but it holds a tensor");
  // At load: a stacked shape whose first dim is no symbol; a push of an unwritten register.
  EXPECT_THROW_WITH(run(R"([{"op": "ListNew", "dst": 2},
    {"op": "ListStack", "dst": 4, "src": 2, "dtype": "float32", "shape": [3, 4]}, {"op": "Ret", "results": [4, 1]}])"),
                    UserError, "instruction 1 (ListStack)", "first dim must be a symbol");
  EXPECT_THROW_WITH(run(R"([{"op": "ListNew", "dst": 2}, {"op": "ListPush", "dst": 3, "src": 2, "value": 6},
    {"op": "Ret", "results": [0, 1]}])"),
                    UserError, "instruction 1 (ListPush)", "reads register 6");
}

TEST(Executor, MakeExecutorPicksByFormat) {
  TestModel vm_model{Program(kIfProgram)};
  EXPECT_EQ(ProgramFormat(vm_model.module()), "tessera-vm");
  std::unique_ptr<Executor> vm = MakeExecutor(vm_model.module(), 1);
  EXPECT_NE(dynamic_cast<VirtualMachine*>(vm.get()), nullptr);

  TestModel graph{R"({"format": "tessera-graph", "version": 1, "storages": [{"id": 0, "size_bytes": 64}],
    "values": [{"id": 0, "dtype": "float32", "shape": [4], "kind": "input", "storage": 0},
               {"id": 1, "dtype": "float32", "shape": [4], "kind": "param", "param": "w"}],
    "inputs": [{"name": "x", "value": 0}], "outputs": [{"name": "w", "value": 1}], "nodes": []})"};
  EXPECT_EQ(ProgramFormat(graph.module()), "tessera-graph");
  std::unique_ptr<Executor> ge = MakeExecutor(graph.module());
  ASSERT_NE(dynamic_cast<GraphExecutor*>(ge.get()), nullptr);
  ge->SetInput("x", Floats({4}, {0, 0, 0, 0}));
  ge->Run();
  EXPECT_EQ(Values(ge->GetOutput(0)), (std::vector<float>{10, 20, 30, 40}));
}

TEST(Executor, ProgramFormatErrors) {
  auto format = [](const std::string& json) {
    TestModel t{json};
    return ProgramFormat(t.module());
  };
  EXPECT_THROW_WITH(format(R"({"version": 1})"), UserError, "<test>", "no \"format\"", "tessera-vm");
  EXPECT_THROW_WITH(format(R"({"format": "tessera-foo"})"), UserError, "<test>", "format \"tessera-foo\"");
  EXPECT_THROW_WITH(format(R"({"format": 3})"), UserError, "no \"format\"");
  EXPECT_THROW_WITH(format("[1, 2"), UserError, "<test>", "not valid JSON");
  EXPECT_THROW_WITH(format("[1, 2]"), UserError, "no \"format\"");
  TestModel t{"{}"};
  EXPECT_THROW_WITH(MakeExecutor(t.module()), UserError, "no \"format\"");
  auto source = std::make_shared<TableSource>();
  EXPECT_THROW_WITH(ProgramFormat(Module(source, "<kernels only>")), UserError, "<kernels only>",
                    "__tessera_graph_json");
}

// ParseVMExecutable on mutated and truncated copies of a valid executable throws UserError or
// returns, never anything else.
TEST(VMExecutable, MutatedTextThrowsOnlyUserError) {
  const std::string valid = Program(kIfProgram, 8, R"(, "guards": [{"input": "c", "param": "one"}])");
  ASSERT_NO_THROW(ParseVMExecutable(valid, "<fuzz>"));
  std::mt19937 rng(20240611);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::string alphabet = "{}[]\",:-0123456789eE.truefalsnul xyz";
  const std::vector<std::string> tokens = {"-1", "0", "1", "7", "9223372036854775807", "18446744073709551615",
                                           "-9223372036854775808", "1e400", "null", "[]", "{}", "\"Goto\"",
                                           "\"If\"", "\"Kill\"", "\"bool\"", "2.5", "\"\""};
  int parsed = 0;
  for (int i = 0; i < 400; ++i) {
    std::string s = valid;
    const int edits = 1 + static_cast<int>(pick(3));
    for (int e = 0; e < edits && !s.empty(); ++e) {
      switch (pick(5)) {
        case 0: s.resize(pick(s.size())); break;                           // truncate
        case 1: s[pick(s.size())] = alphabet[pick(alphabet.size())]; break;  // flip a character
        case 2: s.erase(pick(s.size()), 1 + pick(8)); break;               // delete a run
        case 3: {                                                          // replace a number
          size_t at = s.find_first_of("0123456789", pick(s.size()));
          if (at == std::string::npos) break;
          const size_t end = s.find_first_not_of("0123456789", at);
          s.replace(at, end == std::string::npos ? std::string::npos : end - at, tokens[pick(tokens.size())]);
          break;
        }
        default: {  // duplicate a run
          const size_t at = pick(s.size());
          s.insert(pick(s.size()), s.substr(at, 1 + pick(40)));
        }
      }
    }
    try {
      ParseVMExecutable(s, "<fuzz>");
      ++parsed;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("<fuzz>"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UserError: " << e.what() << "\nfor: " << s;
    }
  }
  EXPECT_LT(parsed, 400);  // the mutations do break it
}

}  // namespace
}  // namespace tessera::runtime
