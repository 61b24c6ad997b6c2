// Dynamic shapes in the VirtualMachine (vm.h "Shapes"; Relay's Any, Nimble arXiv 2006.03031):
// symbols bound by the inputs and by LoadShape, symbolic AllocTensor / ReshapeTensor / outputs,
// InvokePacked "shape_args" (kernel_abi.h: args[num_buffers] points to the shape variables),
// ShapeOf, their validation, the Executor interface (InputDimNames) and the storage pool's release
// policy under changing shapes. Host C++ kernels in a symbol table: no LLVM.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/param_io.h"
#include "tessera/runtime/run_model.h"
#include "tessera/runtime/vm.h"
#include "tessera/runtime/vm_executable.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

using testing::TableSource;

NDArray Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  EXPECT_EQ(static_cast<size_t>(a.NumElements()), values.size());
  if (!values.empty()) a.CopyFromBytes(values.data(), values.size() * sizeof(float));
  return a;
}
// A float32 array of `shape` holding 0, 1, 2, ...
NDArray Iota(std::vector<int64_t> shape) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = static_cast<float>(i);
  return a;
}
template <typename T>
NDArray Ints(std::vector<int64_t> shape, const std::vector<T>& values) {
  NDArray a = NDArray::Empty(std::move(shape), DataTypeOf<T>());
  if (!values.empty()) a.CopyFromBytes(values.data(), values.size() * sizeof(T));
  return a;
}
// `text` with the first `from` replaced by `to` (which must be there).
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}
std::vector<float> Values(const NDArray& a) {
  const float* p = a.data<float>();
  return std::vector<float>(p, p + a.NumElements());
}
std::vector<int64_t> Int64s(const NDArray& a) {
  const int64_t* p = a.data<int64_t>();
  return std::vector<int64_t>(p, p + a.NumElements());
}

bool Aligned(void* const* args, int n) {
  for (int i = 0; i < n; ++i)
    if (reinterpret_cast<uintptr_t>(args[i]) % 64 != 0) return false;
  return true;
}

// Kernels compiled "with symbolic extents": the extra slot args[num_buffers] is a const int64_t*
// to their shape variables (kernel_abi.h).

// add_n(a, b, out; n): out[i] = a[i] + b[i], i < n.
int32_t AddN(void* const* args) {
  if (!Aligned(args, 3)) return 1;
  const int64_t n = static_cast<const int64_t*>(args[3])[0];
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* out = static_cast<float*>(args[2]);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  return 0;
}
// add_2d(a, b, out; rows, cols): out = a + b over rows x cols elements.
int32_t Add2D(void* const* args) {
  if (!Aligned(args, 3)) return 1;
  const int64_t* dims = static_cast<const int64_t*>(args[3]);
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* out = static_cast<float*>(args[2]);
  for (int64_t i = 0; i < dims[0] * dims[1]; ++i) out[i] = a[i] + b[i];
  return 0;
}
// concat(a, b, out; n, m): out = a ++ b (float32 [n], [m] -> [n + m]).
int32_t Concat(void* const* args) {
  if (!Aligned(args, 3)) return 1;
  const int64_t* dims = static_cast<const int64_t*>(args[3]);
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* out = static_cast<float*>(args[2]);
  std::memcpy(out, a, static_cast<size_t>(dims[0]) * sizeof(float));
  std::memcpy(out + dims[0], b, static_cast<size_t>(dims[1]) * sizeof(float));
  return 0;
}
// concat_shape(shape_a, shape_b, out): the shape function of concat, int64 [1] = [a0 + b0].
int32_t ConcatShape(void* const* args) {
  auto* a = static_cast<const int64_t*>(args[0]);
  auto* b = static_cast<const int64_t*>(args[1]);
  static_cast<int64_t*>(args[2])[0] = a[0] + b[0];
  return 0;
}
// echo3(out; s0, s1, s2): out (int64 [3]) = the three shape values it was given.
int32_t Echo3(void* const* args) {
  const int64_t* v = static_cast<const int64_t*>(args[1]);
  auto* out = static_cast<int64_t*>(args[0]);
  for (int i = 0; i < 3; ++i) out[i] = v[i];
  return 0;
}
// Static kernel (no slot): out (float32 [4]) = a + a.
int32_t Double4(void* const* args) {
  auto* a = static_cast<const float*>(args[0]);
  auto* out = static_cast<float*>(args[1]);
  for (int i = 0; i < 4; ++i) out[i] = 2 * a[i];
  return 0;
}

// A module over `json` with the kernels above and params: dims = int32 [2] {2, 3},
// neg = int64 [2] {4, -3}, big = int64 [] 2^62, f = float32 [2], m2 = int64 [1, 2].
struct DynModel {
  explicit DynModel(std::string program) : json(std::move(program)) {}
  std::string json, blob;
  int64_t blob_size = 0;
  Module module() {
    auto source = std::make_shared<TableSource>();
    source->table["add_n"] = reinterpret_cast<void*>(&AddN);
    source->table["add_2d"] = reinterpret_cast<void*>(&Add2D);
    source->table["concat"] = reinterpret_cast<void*>(&Concat);
    source->table["concat_shape"] = reinterpret_cast<void*>(&ConcatShape);
    source->table["echo3"] = reinterpret_cast<void*>(&Echo3);
    source->table["double4"] = reinterpret_cast<void*>(&Double4);
    source->table[kGraphJsonSymbol] = json.data();
    blob = SaveParams({{"dims", Ints<int32_t>({2}, {2, 3})},
                       {"neg", Ints<int64_t>({2}, {4, -3})},
                       {"big", Ints<int64_t>({}, {INT32_MAX})},
                       {"over", Ints<int64_t>({2}, {4, int64_t{1} << 31})},
                       {"f", Floats({2}, {2, 3})},
                       {"m2", Ints<int64_t>({1, 2}, {2, 3})}});
    blob_size = static_cast<int64_t>(blob.size());
    source->table[kParamsBlobSymbol] = blob.data();
    source->table[kParamsSizeSymbol] = &blob_size;
    return Module(source, "<dyn>");
  }
};

std::string Exe(const std::string& inputs, const std::string& outputs, const std::string& instructions,
                int num_registers = 12) {
  return R"({"format": "tessera-vm", "version": 2, "num_registers": )" + std::to_string(num_registers) +
         R"(, "inputs": )" + inputs + R"(, "outputs": )" + outputs + R"(, "instructions": )" + instructions + "}";
}

// y = a + b over inputs a, b of float32 ["n"].
const std::string kAddN = Exe(
    R"([{"name": "a", "dtype": "float32", "shape": ["n"]}, {"name": "b", "dtype": "float32", "shape": ["n"]}])",
    R"([{"name": "y", "dtype": "float32", "shape": ["n"]}])", R"([
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": ["n"]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [0, 1, 2], "num_outputs": 1, "shape_args": ["n"]},
      {"op": "Ret", "results": [2]}])");

TEST(VMDynamicShape, InputsBindSymbols) {
  DynModel t{kAddN};
  VirtualMachine vm(t.module());
  EXPECT_EQ(vm.InputShape(0), (std::vector<int64_t>{-1}));
  EXPECT_EQ(vm.InputDimNames(1), (std::vector<std::string>{"n"}));
  EXPECT_EQ(vm.OutputShape(0), (std::vector<int64_t>{-1}));
  EXPECT_EQ(vm.OutputDimNames(0), (std::vector<std::string>{"n"}));
  EXPECT_EQ(vm.Symbols(), (std::vector<std::string>{"n"}));
  for (int64_t n : {5, 1, 300, 0, 5}) {
    std::vector<NDArray> out = vm.Invoke({Iota({n}), Iota({n})});
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n}));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[0].data<float>()[i], 2.0f * static_cast<float>(i));
  }
  // Two inputs disagreeing on a symbol: both inputs, the dim and the symbol are named.
  EXPECT_THROW_WITH(vm.Invoke({Iota({3}), Iota({4})}), UserError, "<dyn>",
                    "input 'b' dim 0 is 4, but symbol 'n' is 3 from input 'a' dim 0");
  // A wrong rank: the symbolic shape by its names.
  EXPECT_THROW_WITH(vm.Invoke({Iota({3, 1}), Iota({3})}), UserError, "input 'a' expects shape [n]", "got [3, 1]",
                    "rank 2, not 1");
  EXPECT_THROW_WITH(vm.Invoke({Ints<int32_t>({3}, {1, 2, 3}), Iota({3})}), UserError, "input 'a'",
                    "expects dtype float32", "got int32");
  // An extent over 2^31 - 1 (an empty array holds no data): kernels index symbolic extents with int32.
  const NDArray wide = NDArray::Empty({int64_t{1} << 31, 0}, DataType::Float(32));
  DynModel wide_model{Exe(R"([{"name": "a", "dtype": "float32", "shape": ["n", 0]}])",
                          R"([{"name": "y", "dtype": "float32", "shape": ["n", 0]}])", R"([{"op": "Ret", "results": [0]}])")};
  VirtualMachine wide_vm(wide_model.module());
  EXPECT_THROW_WITH(wide_vm.Invoke({wide}), UserError, "input 'a' dim 0 is 2147483648 (symbol 'n'), over 2^31 - 1",
                    "index with 32 bits");
  EXPECT_EQ(Values(vm.Invoke({Floats({2}, {1, 2}), Floats({2}, {10, 20})})[0]), (std::vector<float>{11, 22}));
}

TEST(VMDynamicShape, StaticDimsNextToSymbolsAndASymbolTwiceInOneInput) {
  DynModel t{Exe(
      R"([{"name": "x", "dtype": "float32", "shape": ["rows", 4]}, {"name": "sq", "dtype": "float32", "shape": ["k", "k"]}])",
      R"([{"name": "y", "dtype": "float32", "shape": ["rows", 4]}])", R"([
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": ["rows", 4]},
      {"op": "InvokePacked", "kernel": "add_2d", "args": [0, 0, 2], "num_outputs": 1, "shape_args": ["rows", "cols"]},
      {"op": "Ret", "results": [2]}])")};
  // "cols" is bound nowhere: refused at load.
  Module bad = t.module();
  EXPECT_THROW_WITH(VirtualMachine v(bad), UserError, "<dyn>", "instruction 1 (InvokePacked)", "symbol 'cols'",
                    "bound nowhere");
  DynModel good{Replace(t.json, R"(["rows", "cols"])", R"(["rows", "k"])")};
  VirtualMachine vm(good.module());
  EXPECT_EQ(vm.InputShape(0), (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(vm.InputDimNames(0), (std::vector<std::string>{"rows", ""}));
  // add_2d over rows x k elements: with k = 4 that is the whole [rows, 4].
  std::vector<NDArray> out = vm.Invoke({Iota({2, 4}), Iota({4, 4})});
  EXPECT_EQ(Values(out[0]), (std::vector<float>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_THROW_WITH(vm.Invoke({Iota({2, 5}), Iota({4, 4})}), UserError, "input 'x' expects shape [rows, 4]",
                    "got [2, 5]", "dim 1 is 5, not 4");
  EXPECT_THROW_WITH(vm.Invoke({Iota({2, 4}), Iota({4, 3})}), UserError,
                    "input 'sq' dim 1 is 3, but symbol 'k' is 4 from input 'sq' dim 0");
}

// shape_args: the values in the order given (a symbol may appear twice); "shape_args": [] adds no
// slot (a static kernel).
TEST(VMDynamicShape, ShapeArgsPassTheSymbolsValuesInOrder) {
  DynModel t{Exe(R"([{"name": "x", "dtype": "float32", "shape": ["m", "n"]}])",
                 R"([{"name": "v", "dtype": "int64", "shape": [3]}, {"name": "d", "dtype": "float32", "shape": [4]}])",
                 R"([
      {"op": "AllocTensor", "dst": 1, "dtype": "int64", "shape": [3]},
      {"op": "InvokePacked", "kernel": "echo3", "args": [1], "num_outputs": 1, "shape_args": ["n", "m", "n"]},
      {"op": "ReshapeTensor", "dst": 2, "src": 0, "shape": [4]},
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "double4", "args": [2, 3], "num_outputs": 1, "shape_args": []},
      {"op": "Ret", "results": [1, 3]}])")};
  VirtualMachine vm(t.module());
  std::vector<NDArray> out = vm.Invoke({Iota({1, 4})});
  EXPECT_EQ(Int64s(out[0]), (std::vector<int64_t>{4, 1, 4}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{0, 2, 4, 6}));
  out = vm.Invoke({Iota({4, 1})});
  EXPECT_EQ(Int64s(out[0]), (std::vector<int64_t>{1, 4, 1}));
  // The ReshapeTensor to the static [4] checks the element count of this run.
  EXPECT_THROW_WITH(vm.Invoke({Iota({2, 3})}), UserError, "instruction 2 (ReshapeTensor)", "(float32 [2, 3]) to [4]");
}

// ReshapeTensor with symbols, and ShapeOf.
TEST(VMDynamicShape, ReshapeWithSymbolsAndShapeOf) {
  DynModel t{Exe(R"([{"name": "x", "dtype": "float32", "shape": ["m", "n"]}])",
                 R"([{"name": "t", "dtype": "float32", "shape": ["n", "m"]},
                     {"name": "s", "dtype": "int64", "shape": [2]}, {"name": "s0", "dtype": "int64", "shape": [0]}])",
                 R"([
      {"op": "ReshapeTensor", "dst": 1, "src": 0, "shape": ["n", "m"]},
      {"op": "ShapeOf", "dst": 2, "src": 1},
      {"op": "ReshapeTensor", "dst": 3, "src": 0, "shape": []},
      {"op": "ShapeOf", "dst": 3, "src": 3},
      {"op": "Ret", "results": [1, 2, 3]}])")};
  VirtualMachine vm(t.module());
  EXPECT_THROW_WITH(vm.Invoke({Iota({2, 3})}), UserError, "instruction 2 (ReshapeTensor)", "(float32 [2, 3]) to []");
  DynModel t2{Replace(Replace(t.json, R"("shape": []})", R"("shape": ["m", "n", 1]})"), R"("shape": [0]})",
                       R"("shape": [3]})")};
  VirtualMachine vm2(t2.module());
  std::vector<NDArray> out = vm2.Invoke({Iota({2, 3})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(out[0].SharesStorageWith(out[1]));
  EXPECT_EQ(out[1].dtype(), DataType::Int(64));
  EXPECT_EQ(Int64s(out[1]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Int64s(out[2]), (std::vector<int64_t>{2, 3, 1}));
  // A reshape whose symbols give another element count.
  DynModel t3{Exe(R"([{"name": "x", "dtype": "float32", "shape": ["m", "n"]}])",
                  R"([{"name": "t", "dtype": "float32", "shape": ["n", "n"]}])", R"([
      {"op": "ReshapeTensor", "dst": 1, "src": 0, "shape": ["n", "n"]},
      {"op": "Ret", "results": [1]}])")};
  VirtualMachine vm3(t3.module());
  EXPECT_EQ(Values(vm3.Invoke({Iota({3, 3})})[0]).size(), 9u);
  EXPECT_THROW_WITH(vm3.Invoke({Iota({2, 3})}), UserError, "instruction 0 (ReshapeTensor)",
                    "(float32 [2, 3]) to [n, n] = [3, 3]", "element counts differ");
}

// The Relay pattern: ShapeOf -> a shape-function kernel -> LoadShape -> AllocTensor of the new
// symbol -> the kernel with shape_args.
const std::string kConcat = Exe(
    R"([{"name": "a", "dtype": "float32", "shape": ["n"]}, {"name": "b", "dtype": "float32", "shape": ["m"]}])",
    R"([{"name": "y", "dtype": "float32", "shape": [1, "k"]}])", R"([
      {"op": "ShapeOf", "dst": 2, "src": 0},
      {"op": "ShapeOf", "dst": 3, "src": 1},
      {"op": "AllocTensor", "dst": 4, "dtype": "int64", "shape": [1]},
      {"op": "InvokePacked", "kernel": "concat_shape", "args": [2, 3, 4], "num_outputs": 1},
      {"op": "Kill", "regs": [2, 3]},
      {"op": "LoadShape", "src": 4, "symbols": ["k"]},
      {"op": "Kill", "regs": [4]},
      {"op": "AllocTensor", "dst": 5, "dtype": "float32", "shape": ["k"]},
      {"op": "InvokePacked", "kernel": "concat", "args": [0, 1, 5], "num_outputs": 1, "shape_args": ["n", "m"]},
      {"op": "AllocTensor", "dst": 6, "dtype": "float32", "shape": ["k"]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [5, 5, 6], "num_outputs": 1, "shape_args": ["k"]},
      {"op": "Kill", "regs": [5]},
      {"op": "ReshapeTensor", "dst": 7, "src": 6, "shape": [1, "k"]},
      {"op": "Ret", "results": [7]}])");

TEST(VMDynamicShape, ShapeFunctionThroughLoadShape) {
  DynModel t{kConcat};
  VirtualMachine vm(t.module());
  std::vector<NDArray> out = vm.Invoke({Floats({2}, {1, 2}), Floats({3}, {3, 4, 5})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2, 4, 6, 8, 10}));
  out = vm.Invoke({Floats({0}, {}), Floats({1}, {7})});
  EXPECT_EQ(Values(out[0]), (std::vector<float>{14}));
  // The Executor interface: SetInput takes any extent of a symbolic dim; Run binds.
  std::unique_ptr<Executor> ex = MakeExecutor(t.module());
  EXPECT_EQ(ex->InputDimNames(1), (std::vector<std::string>{"m"}));
  EXPECT_EQ(ex->OutputDimNames(0), (std::vector<std::string>{"", "k"}));
  ex->SetInput("a", Floats({1}, {1}));
  ex->SetInput("b", Floats({2}, {2, 3}));
  ex->Run();
  EXPECT_EQ(Values(ex->GetOutput(0)), (std::vector<float>{2, 4, 6}));
  EXPECT_THROW_WITH(ex->SetInput("a", Floats({1, 1}, {1})), UserError, "SetInput", "input 'a' expects shape [n]",
                    "got [1, 1]");
}

// LoadShape's source: an int32 or int64 tensor of 0 or 1 dims with one element per symbol, no
// negative value. A symbol may be bound again.
TEST(VMDynamicShape, LoadShapeChecksItsSource) {
  auto program = [](const std::string& param, const std::string& symbols) {
    return Exe(R"([{"name": "x", "dtype": "float32", "shape": [4]}])",
               R"([{"name": "y", "dtype": "float32", "shape": ["d0", "d1"]}])", R"([
      {"op": "LoadConst", "dst": 1, "param": ")" + param + R"("},
      {"op": "LoadShape", "src": 1, "symbols": )" + symbols + R"(},
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": ["d0", "d1"]},
      {"op": "Ret", "results": [2]}])");
  };
  const NDArray x = Iota({4});
  {
    DynModel t{program("dims", R"(["d0", "d1"])")};  // int32 [2] {2, 3}
    VirtualMachine vm(t.module());
    EXPECT_EQ(vm.Invoke({x})[0].shape(), (std::vector<int64_t>{2, 3}));
  }
  {
    DynModel t{program("m2", R"(["d0", "d1"])")};  // int64 [1, 2]: 2-D
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "instruction 1 (LoadShape)", "register 1 holds int64 [1, 2]",
                      "not an int32 or int64 tensor of 0 or 1 dims");
  }
  {
    DynModel t{program("f", R"(["d0", "d1"])")};  // float32
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "instruction 1 (LoadShape)", "float32 [2]", "int32 or int64");
  }
  {
    DynModel t{program("neg", R"(["d0", "d1"])")};  // {4, -3}
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "<dyn>", "instruction 1 (LoadShape)",
                      "a shape computed at run time has the negative extent -3 (symbol 'd1')");
  }
  {
    DynModel t{program("over", R"(["d0", "d1"])")};  // {4, 2^31}: over the int32 extents of kernels
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "instruction 1 (LoadShape)",
                      "has the extent 2147483648 (symbol 'd1'), over 2^31 - 1");
  }
  {
    // 3 symbols for 2 values (d2 unused but bound).
    DynModel t{program("dims", R"(["d0", "d1", "d2"])")};
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "instruction 1 (LoadShape)", "holds 2 values",
                      "binds 3 symbols ('d0', 'd1', 'd2')");
  }
  {
    // A 0-D int64 source, and a symbol bound twice: the later value counts.
    DynModel t{Exe(R"([{"name": "x", "dtype": "float32", "shape": ["n"]}])",
                   R"([{"name": "y", "dtype": "float32", "shape": ["n"]}])", R"([
      {"op": "LoadConst", "dst": 1, "param": "big"},
      {"op": "LoadShape", "src": 1, "symbols": ["n"]},
      {"op": "ShapeOf", "dst": 2, "src": 0},
      {"op": "LoadShape", "src": 2, "symbols": ["n"]},
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": ["n"]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [0, 0, 3], "num_outputs": 1, "shape_args": ["n"]},
      {"op": "Ret", "results": [3]}])")};
    VirtualMachine vm(t.module());
    EXPECT_EQ(Values(vm.Invoke({Floats({3}, {1, 2, 3})})[0]), (std::vector<float>{2, 4, 6}));
  }
  {
    // A shape of (2^31 - 1) x (2^31 - 1) floats: too large, named.
    DynModel t{Exe(R"([{"name": "x", "dtype": "float32", "shape": [4]}])",
                   R"([{"name": "y", "dtype": "float32", "shape": [4]}])", R"([
      {"op": "LoadConst", "dst": 1, "param": "big"},
      {"op": "LoadShape", "src": 1, "symbols": ["huge"]},
      {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": ["huge", "huge"]},
      {"op": "Ret", "results": [0]}])")};
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({x}), UserError, "instruction 2 (AllocTensor)", "[huge, huge]", "too large");
  }
}

// A symbol whose LoadShape a path skips: a UserError naming the instruction at run time; the VM
// runs again afterwards.
TEST(VMDynamicShape, UnboundSymbolOnThePathTakenIsAUserError) {
  DynModel t{Exe(R"([{"name": "x", "dtype": "float32", "shape": [4]}, {"name": "c", "dtype": "int32", "shape": []}])",
                 R"([{"name": "y", "dtype": "float32", "shape": ["d0", "d1"]}])", R"([
      {"op": "If", "cond": 1, "true_offset": 1, "false_offset": 3},
      {"op": "LoadConst", "dst": 2, "param": "dims"},
      {"op": "LoadShape", "src": 2, "symbols": ["d0", "d1"]},
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": ["d0", "d1"]},
      {"op": "Ret", "results": [3]}])")};
  VirtualMachine vm(t.module());
  EXPECT_EQ(vm.Invoke({Iota({4}), Ints<int32_t>({}, {1})})[0].shape(), (std::vector<int64_t>{2, 3}));
  // Symbols do not survive from one run to the next.
  EXPECT_THROW_WITH(vm.Invoke({Iota({4}), Ints<int32_t>({}, {0})}), UserError, "<dyn>", "instruction 3 (AllocTensor)",
                    "symbol 'd0'", "not bound on the path taken");
  EXPECT_EQ(vm.Invoke({Iota({4}), Ints<int32_t>({}, {1})})[0].shape(), (std::vector<int64_t>{2, 3}));
  // The same at a Ret (an output's symbol) and an InvokePacked (shape_args).
  DynModel r{Exe(R"([{"name": "x", "dtype": "float32", "shape": [4]}, {"name": "c", "dtype": "int32", "shape": []}])",
                 R"([{"name": "y", "dtype": "float32", "shape": [4]}, {"name": "z", "dtype": "float32", "shape": [4]}])",
                 R"([
      {"op": "If", "cond": 1, "true_offset": 1, "false_offset": 3},
      {"op": "LoadConst", "dst": 2, "param": "dims"},
      {"op": "LoadShape", "src": 2, "symbols": ["d0", "d1"]},
      {"op": "AllocTensor", "dst": 3, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [0, 0, 3], "num_outputs": 1, "shape_args": ["d1"]},
      {"op": "Ret", "results": [3, 3]}])")};
  VirtualMachine vr(r.module());
  const std::vector<float> y = Values(vr.Invoke({Iota({4}), Ints<int32_t>({}, {1})})[0]);  // n = d1 = 3 elements
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 3), (std::vector<float>{0, 2, 4}));
  EXPECT_THROW_WITH(vr.Invoke({Iota({4}), Ints<int32_t>({}, {0})}), UserError, "instruction 4 (InvokePacked)",
                    "symbol 'd1'", "not bound");
  DynModel t2{Replace(t.json, R"("dtype": "float32", "shape": ["d0", "d1"]},)", R"("dtype": "float32", "shape": [2, 3]},)")};
  VirtualMachine v2(t2.module());
  EXPECT_EQ(v2.Invoke({Iota({4}), Ints<int32_t>({}, {1})})[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THROW_WITH(v2.Invoke({Iota({4}), Ints<int32_t>({}, {0})}), UserError, "instruction 4 (Ret)", "symbol 'd0'",
                    "not bound");
}

// Ret checks the output's static dims and that its symbolic dims equal the symbols' values.
TEST(VMDynamicShape, RetChecksSymbolicOutputs) {
  auto program = [](const std::string& output_shape) {
    return Exe(R"([{"name": "x", "dtype": "float32", "shape": ["n"]}])",
               R"([{"name": "y", "dtype": "float32", "shape": )" + output_shape + "}]", R"([
      {"op": "ShapeOf", "dst": 1, "src": 0},
      {"op": "LoadShape", "src": 1, "symbols": ["k"]},
      {"op": "Ret", "results": [0]}])");
  };
  {
    DynModel t{program(R"(["k"])")};
    VirtualMachine vm(t.module());
    EXPECT_EQ(Values(vm.Invoke({Floats({2}, {1, 2})})[0]), (std::vector<float>{1, 2}));  // an input: copied
  }
  {
    DynModel t{program(R"([1, "n"])")};
    VirtualMachine vm(t.module());
    EXPECT_THROW_WITH(vm.Invoke({Floats({2}, {1, 2})}), UserError, "instruction 2 (Ret)", "result 0 (register 0) is "
                      "float32 [2] but output 'y' is float32 [1, n] = [1, 2] in this run");
  }
  {
    DynModel t{program(R"([3])")};
    VirtualMachine vm(t.module());
    EXPECT_EQ(Values(vm.Invoke({Floats({3}, {1, 2, 3})})[0]), (std::vector<float>{1, 2, 3}));
    EXPECT_THROW_WITH(vm.Invoke({Floats({2}, {1, 2})}), UserError, "instruction 2 (Ret)", "is float32 [2]",
                      "output 'y' is float32 [3]");
  }
  {
    // An output symbol bound by a LoadShape to another value than the result's extent.
    DynModel t{Exe(R"([{"name": "x", "dtype": "float32", "shape": ["n"]}])",
                   R"([{"name": "y", "dtype": "float32", "shape": ["d1"]}])", R"([
      {"op": "LoadConst", "dst": 1, "param": "dims"},
      {"op": "LoadShape", "src": 1, "symbols": ["d0", "d1"]},
      {"op": "Ret", "results": [0]}])")};
    VirtualMachine vm(t.module());
    EXPECT_EQ(Values(vm.Invoke({Floats({3}, {1, 2, 3})})[0]), (std::vector<float>{1, 2, 3}));
    EXPECT_THROW_WITH(vm.Invoke({Floats({2}, {1, 2})}), UserError, "output 'y' is float32 [d1] = [3] in this run");
  }
}

#define EXPECT_BAD_DYN_VM(json, ...)                                      \
  do {                                                                    \
    DynModel t_{json};                                                    \
    Module m_ = t_.module();                                              \
    EXPECT_THROW_WITH(VirtualMachine vm_(m_), UserError, __VA_ARGS__);    \
  } while (0)

TEST(VMDynamicShape, ValidationOfSymbols) {
  const std::string in = R"([{"name": "x", "dtype": "float32", "shape": ["n"]}])";
  const std::string out = R"([{"name": "y", "dtype": "float32", "shape": ["n"]}])";
  // Bound nowhere: in an AllocTensor, a ReshapeTensor, shape_args, an output.
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": ["q", 2]},
                                    {"op": "Ret", "results": [0]}])"),
                    "<dyn>", "instruction 0 (AllocTensor)", "symbol 'q' is bound nowhere");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "ReshapeTensor", "dst": 1, "src": 0, "shape": ["n", "one"]},
                                    {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (ReshapeTensor)", "symbol 'one'");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": ["n"]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [0, 0, 1], "num_outputs": 1, "shape_args": ["n", "m"]},
      {"op": "Ret", "results": [1]}])"),
                    "instruction 1 (InvokePacked)", "symbol 'm'");
  EXPECT_BAD_DYN_VM(Exe(in, R"([{"name": "y", "dtype": "float32", "shape": ["n2"]}])", R"([{"op": "Ret", "results": [0]}])"),
                    "outputs[0]", "symbol 'n2'");
  // Malformed names, and entries that are neither.
  EXPECT_BAD_DYN_VM(Exe(R"([{"name": "x", "dtype": "float32", "shape": ["se q"]}])", out, R"([{"op": "Ret", "results": [0]}])"),
                    "inputs[0]", "\"se q\" is no valid symbol name");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": [""]},
                                    {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (AllocTensor)", "\"\" is no valid symbol name");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": [2.5]},
                                    {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (AllocTensor)", "must be an integer");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": ["n"]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [0, 0, 1], "num_outputs": 1, "shape_args": ["n/2"]},
      {"op": "Ret", "results": [1]}])"),
                    "instruction 1 (InvokePacked)", "\"n/2\" is no valid symbol name");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": ["n"]},
      {"op": "InvokePacked", "kernel": "add_n", "args": [0, 0, 1], "num_outputs": 1, "shape_args": [3]},
      {"op": "Ret", "results": [1]}])"),
                    "instruction 1 (InvokePacked)", "\"shape_args\"[0] must be a symbol name");
  // LoadShape and ShapeOf fields.
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "LoadShape", "src": 0, "symbols": ["a", "a"]}, {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (LoadShape)", "symbol 'a' appears twice");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "LoadShape", "src": 0, "symbols": "a"}, {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (LoadShape)", "\"symbols\" must be an array");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "LoadShape", "src": 3, "symbols": ["a"]}, {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (LoadShape)", "reads register 3");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "ShapeOf", "dst": 1, "src": 2}, {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (ShapeOf)", "reads register 2");
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "ShapeOf", "dst": 12, "src": 0}, {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (ShapeOf)", "register 12");
  // A symbol's static part still checked for size; versions.
  EXPECT_BAD_DYN_VM(Exe(in, out, R"([{"op": "AllocTensor", "dst": 1, "dtype": "float32",
                                      "shape": ["n", 4611686018427387904, 4]}, {"op": "Ret", "results": [0]}])"),
                    "instruction 0 (AllocTensor)", "too large");
  EXPECT_BAD_DYN_VM(Replace(kAddN, R"("version": 2)", R"("version": 5)"), "version 5", "reads version 1 to 4");
  // A LoadShape binds a symbol for the whole program (which path is checked at run time), and a
  // ShapeOf result is a fresh tensor a kernel may write.
  DynModel ok{Exe(in, R"([{"name": "y", "dtype": "int64", "shape": ["r"]}])", R"([
      {"op": "ShapeOf", "dst": 1, "src": 0},
      {"op": "LoadShape", "src": 1, "symbols": ["r"]},
      {"op": "InvokePacked", "kernel": "echo3", "args": [1], "num_outputs": 1, "shape_args": ["r", "n", "r"]},
      {"op": "Ret", "results": [1]}])")};
  EXPECT_NO_THROW(VirtualMachine v(ok.module()));
  // Symbols in inspect-style access.
  const VMExecutable exe = ParseVMExecutable(kConcat, "<dyn>");
  EXPECT_EQ(exe.symbols, (std::vector<std::string>{"n", "m", "k"}));
  EXPECT_EQ(exe.outputs[0].dim_symbols, (std::vector<int>{-1, 2}));
  EXPECT_EQ(exe.outputs[0].dim_names, (std::vector<std::string>{"", "k"}));
  EXPECT_EQ(exe.instructions[8].symbols, (std::vector<int>{0, 1}));
  EXPECT_EQ(exe.instructions[7].shape, (std::vector<int64_t>{kDynamicDim}));
}

// ParseVMExecutable and the VM on mutated copies of a dynamic-shape executable: UserError or a
// program that loads, never anything else; those that load and run only forward also run (host
// kernels that read their extents from the slot) or fail with a UserError.
TEST(VMDynamicShape, MutatedExecutablesThrowOnlyUserError) {
  std::mt19937 rng(77);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::string> tokens = {"\"n\"", "\"m\"", "\"k\"", "\"q\"", "\"\"", "\"a b\"", "0", "1",
                                           "-1", "2.5", "null", "[]", "[\"k\"]", "\"ShapeOf\"", "\"LoadShape\""};
  int loaded = 0;
  for (int i = 0; i < 300; ++i) {
    std::string text = kConcat;
    for (int e = 0; e < 1 + static_cast<int>(pick(2)); ++e) {
      // Replace one token (a quoted string or a number) with another.
      size_t at = text.find_first_of("\"0123456789", pick(text.size()));
      if (at == std::string::npos) continue;
      size_t end = text[at] == '"' ? text.find('"', at + 1) + 1 : text.find_first_not_of("0123456789", at);
      if (end == std::string::npos || end < at) continue;
      text.replace(at, end - at, tokens[pick(tokens.size())]);
    }
    try {
      ParseVMExecutable(text, "<mut>");
      ++loaded;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("<mut>"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UserError: " << e.what() << "\nfor: " << text;
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_LT(loaded, 300);
}

// Version-1 executables without the new fields: static shapes, no symbols.
TEST(VMDynamicShape, StaticExecutablesHaveNoSymbols) {
  const std::string v1 = R"({"format": "tessera-vm", "version": 1, "num_registers": 3,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [4]}],
    "outputs": [{"name": "y", "dtype": "float32", "shape": [4]}],
    "instructions": [
      {"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": [4]},
      {"op": "InvokePacked", "kernel": "double4", "args": [0, 1], "num_outputs": 1},
      {"op": "Ret", "results": [1]}]})";
  const VMExecutable exe = ParseVMExecutable(v1, "<v1>");
  EXPECT_TRUE(exe.symbols.empty());
  EXPECT_TRUE(exe.inputs[0].dim_symbols.empty());
  EXPECT_EQ(exe.inputs[0].dim_names, (std::vector<std::string>{""}));
  EXPECT_TRUE(exe.instructions[0].dim_symbols.empty());
  DynModel t{v1};
  VirtualMachine vm(t.module());
  EXPECT_EQ(vm.InputDimNames(0), (std::vector<std::string>{""}));
  EXPECT_EQ(Values(vm.Invoke({Iota({4})})[0]), (std::vector<float>{0, 2, 4, 6}));
  EXPECT_THROW_WITH(vm.Invoke({Iota({5})}), UserError, "input 'x' expects shape [4], got [5]");
}

// A misaligned input of a symbolic shape is copied at its own shape.
TEST(VMDynamicShape, MisalignedSymbolicInputIsCopied) {
  DynModel t{kAddN};
  VirtualMachine vm(t.module());
  alignas(64) static float buffer[20] = {0, 1, 2, 3, 4, 5, 6};
  static int64_t shape[1] = {6};
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = buffer + 1;
  managed->dl_tensor.device = {kDLCPU, 0};
  managed->dl_tensor.ndim = 1;
  managed->dl_tensor.dtype = {kDLFloat, 32, 1};
  managed->dl_tensor.shape = shape;
  managed->deleter = [](DLManagedTensor* m) { delete m; };
  NDArray x = NDArray::FromDLPack(managed);
  EXPECT_EQ(Values(vm.Invoke({x, Iota({6})})[0]), (std::vector<float>{1, 3, 5, 7, 9, 11}));
}

// RunModel (tessera run, tessera-runtime, the RPC server) with symbolic inputs.
TEST(VMDynamicShape, RunModelAcceptsSymbolicInputs) {
  DynModel t{kConcat};
  RunModelResult r = RunModel(t.module(), {{"a", Floats({1}, {1})}, {"b", Floats({3}, {1, 2, 3})}});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].value.shape(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(Values(r.outputs[0].value), (std::vector<float>{2, 2, 4, 6}));
  EXPECT_THROW_WITH(RunModel(t.module(), {{"a", Floats({1}, {1})}}), UserError,
                    "input 'b' (shape [m], float32) was not given");
  EXPECT_THROW_WITH(RunModel(t.module(), {{"a", Floats({1, 1}, {1})}, {"b", Floats({1}, {1})}}), UserError,
                    "input 'a' expects shape [n], got [1, 1]");
  DynModel add{kAddN};
  EXPECT_THROW_WITH(RunModel(add.module(), {{"a", Floats({1}, {1})}, {"b", Floats({2}, {1, 2})}}), UserError,
                    "input 'b' dim 0 is 2, but symbol 'n' is 1 from input 'a' dim 0");
}

// Executor helpers for callers (run_model.cc, Python): ShapeAccepts and ShapeToString with names.
TEST(VMDynamicShape, ExecutorShapeHelpers) {
  EXPECT_TRUE(ShapeAccepts({-1, 4}, {7, 4}));
  EXPECT_TRUE(ShapeAccepts({-1, 4}, {0, 4}));
  EXPECT_FALSE(ShapeAccepts({-1, 4}, {7, 5}));
  EXPECT_FALSE(ShapeAccepts({-1, 4}, {7}));
  EXPECT_TRUE(ShapeAccepts({}, {}));
  EXPECT_EQ(ShapeToString({-1, 4}, {"seq", ""}), "[seq, 4]");
  EXPECT_EQ(ShapeToString({2, 4}, {}), "[2, 4]");
}

// 10,000 runs with random extents in [1, 512] through symbolic AllocTensors, a shape function and
// three kernels: the pool's release policy (vm.h "Memory") keeps it under
//   2 * B(previous run) + B(this run) <= 3 * B_max
// where B(run) is the bytes the run's allocations ask for (rounded up to 64): two ShapeOf results
// and the int64 [1] (64 each), and two float32 [k] tensors, k = n + m <= 1024: B_max = 3 * 64 +
// 2 * 4096 = 8384, which is also the largest live set of a run (both [k] tensors live at once).
// Without the release policy the pool keeps a storage of every size class the runs ever needed.
TEST(VMDynamicShape, PoolStaysBoundedUnderRandomShapes) {
  DynModel t{kConcat};
  VirtualMachine vm(t.module());
  std::mt19937 rng(20261125);
  std::uniform_int_distribution<int64_t> extent(1, 512);
  auto rounded = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  const size_t b_max = 3 * 64 + 2 * 4096;
  size_t peak = 0;
  int64_t previous_b = 0;
  for (int run = 0; run < 10000; ++run) {
    const int64_t n = extent(rng), m = extent(rng);
    const NDArray a = Iota({n}), b = Iota({m});
    {
      std::vector<NDArray> out = vm.Invoke({a, b});
      ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{1, n + m})) << "run " << run;
      ASSERT_EQ(out[0].data<float>()[n + m - 1], 2.0f * static_cast<float>(m - 1)) << "run " << run;
      ASSERT_EQ(out[0].data<float>()[n - 1], 2.0f * static_cast<float>(n - 1)) << "run " << run;
      const int64_t this_b = 3 * 64 + 2 * rounded(4 * (n + m));
      ASSERT_LE(vm.PoolBytes(), static_cast<size_t>(2 * previous_b + this_b)) << "run " << run;
      previous_b = this_b;
    }
    peak = std::max(peak, vm.PoolBytes());
    ASSERT_LE(vm.PoolBytes(), 3 * b_max) << "run " << run;
  }
  EXPECT_LE(peak, 3 * b_max);
  EXPECT_GT(vm.PoolAllocations(), 100);  // the shapes did change: storages were made and freed
  // Back to one shape: after a run or two, nothing is allocated any more.
  const NDArray a = Iota({100}), b = Iota({200});
  vm.Invoke({a, b});
  vm.Invoke({a, b});
  const int64_t allocations = vm.PoolAllocations();
  const size_t bytes = vm.PoolBytes();
  for (int i = 0; i < 100; ++i) vm.Invoke({a, b});
  EXPECT_EQ(vm.PoolAllocations(), allocations);
  EXPECT_EQ(vm.PoolBytes(), bytes);
  EXPECT_LE(bytes, 3 * 64 + 2 * static_cast<size_t>(rounded(4 * 300)) * 2);
}

// Outputs the caller keeps stay valid and are not reused, and the pool frees their storage after
// the caller drops them and a run leaves it idle.
TEST(VMDynamicShape, KeptOutputsSurviveTheRelease) {
  DynModel t{kAddN};
  VirtualMachine vm(t.module());
  std::vector<NDArray> big = vm.Invoke({Iota({1000}), Iota({1000})});
  const size_t with_big = vm.PoolBytes();
  EXPECT_GE(with_big, 4000u);
  for (int i = 0; i < 3; ++i) vm.Invoke({Iota({4}), Iota({4})});
  EXPECT_EQ(big[0].data<float>()[999], 1998.0f);
  EXPECT_GE(vm.PoolBytes(), 4000u);  // still held by the caller
  big.clear();
  vm.Invoke({Iota({4}), Iota({4})});  // the big storage is idle in this run: freed
  EXPECT_EQ(vm.PoolBytes(), 64u);
}

}  // namespace
}  // namespace tessera::runtime
