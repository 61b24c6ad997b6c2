// VirtualMachine executables of version 3 (vm.h "Functions, closures and ADTs"): functions,
// recursion, closures and ADTs, over modules built from a table of C++ kernels on float32 scalars.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/runtime/param_io.h"
#include "tessera/runtime/vm.h"
#include "tessera/runtime/vm_executable.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

template <typename T>
NDArray Scalar(T value) {
  NDArray a = NDArray::Empty({}, DataTypeOf<T>());
  a.CopyFromBytes(&value, sizeof value);
  return a;
}
float F(const NDArray& a) { return a.data<float>()[0]; }

// Kernels over float32 [] (kernel_abi.h: inputs then outputs).
int32_t DecKernel(void* const* args) {  // out = a - 1
  *static_cast<float*>(args[1]) = *static_cast<const float*>(args[0]) - 1;
  return 0;
}
int32_t AddKernel(void* const* args) {  // out = a + b
  *static_cast<float*>(args[2]) = *static_cast<const float*>(args[0]) + *static_cast<const float*>(args[1]);
  return 0;
}
int32_t FailKernel(void* const*) { return 3; }

// A module whose program is `json`, with kernels dec, addf and fail and params zero = 0, one = 1
// (float32 []).
struct Model {
  explicit Model(std::string program) : json(std::move(program)) {}
  std::string json, blob;
  int64_t blob_size = 0;
  Module module() {
    auto source = std::make_shared<testing::TableSource>();
    source->table["dec"] = reinterpret_cast<void*>(&DecKernel);
    source->table["addf"] = reinterpret_cast<void*>(&AddKernel);
    source->table["fail"] = reinterpret_cast<void*>(&FailKernel);
    source->table[kGraphJsonSymbol] = json.data();
    blob = SaveParams({{"zero", Scalar<float>(0)}, {"one", Scalar<float>(1)}});
    blob_size = static_cast<int64_t>(blob.size());
    source->table[kParamsBlobSymbol] = blob.data();
    source->table[kParamsSizeSymbol] = &blob_size;
    return Module(source, "<fn>");
  }
};

const char* kScalarOutput = R"([{"name": "y", "dtype": "float32", "shape": []}])";

// An executable over inputs n, x (float32 []) and c (int32 []): registers 0, 1, 2 of main.
std::string Exe(const std::string& functions, const std::string& main, const std::string& outputs = kScalarOutput,
                int num_registers = 16, int version = 3) {
  return R"({"format": "tessera-vm", "version": )" + std::to_string(version) +
         R"(, "num_registers": )" + std::to_string(num_registers) +
         R"(, "inputs": [{"name": "n", "dtype": "float32", "shape": []}, {"name": "x", "dtype": "float32", "shape": []},
                    {"name": "c", "dtype": "int32", "shape": []}],
         "outputs": )" + outputs + (functions.empty() ? "" : R"(, "functions": )" + functions) +
         R"(, "instructions": )" + main + "}";
}

// The functions the tests call, by index. Lists are ADTs: tag 0 = Nil, tag 1 = Cons(head, tail).
// build(n) = [n, n - 1, ..., 1], sum(list), add(a, b), map(closure, list), is_even(list) /
// is_odd(list) (whether its length is even / odd, mutually recursive), classify(adt) = 0 for tag 0,
// 1 for tag 1, else field 0; pair(a) = (a, a); forever(a) calls itself; field2(adt) = field 2;
// match(a) = IfTag on a; boom(a) calls a failing kernel.
const char* kLibrary = R"([
  {"name": "build", "num_params": 1, "num_results": 1, "num_registers": 5, "instructions": [
    {"op": "If", "cond": 0, "true_offset": 3, "false_offset": 1},
    {"op": "AllocADT", "dst": 1, "tag": 0, "fields": []},
    {"op": "Ret", "results": [1]},
    {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": []},
    {"op": "InvokePacked", "kernel": "dec", "args": [0, 2], "num_outputs": 1},
    {"op": "Invoke", "func": 0, "args": [2], "dst": [3]},
    {"op": "AllocADT", "dst": 4, "tag": 1, "fields": [0, 3]},
    {"op": "Ret", "results": [4]}]},
  {"name": "sum", "num_params": 1, "num_results": 1, "num_registers": 6, "instructions": [
    {"op": "IfTag", "src": 0, "tag": 0, "true_offset": 1, "false_offset": 3},
    {"op": "LoadConst", "dst": 1, "param": "zero"},
    {"op": "Ret", "results": [1]},
    {"op": "GetField", "dst": 2, "src": 0, "index": 0},
    {"op": "GetField", "dst": 3, "src": 0, "index": 1},
    {"op": "Invoke", "func": 1, "args": [3], "dst": [4]},
    {"op": "AllocTensor", "dst": 5, "dtype": "float32", "shape": []},
    {"op": "InvokePacked", "kernel": "addf", "args": [2, 4, 5], "num_outputs": 1},
    {"op": "Ret", "results": [5]}]},
  {"name": "add", "num_params": 2, "num_results": 1, "num_registers": 3, "instructions": [
    {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": []},
    {"op": "InvokePacked", "kernel": "addf", "args": [0, 1, 2], "num_outputs": 1},
    {"op": "Ret", "results": [2]}]},
  {"name": "map", "num_params": 2, "num_results": 1, "num_registers": 7, "instructions": [
    {"op": "IfTag", "src": 1, "tag": 1, "true_offset": 2, "false_offset": 1},
    {"op": "Ret", "results": [1]},
    {"op": "GetField", "dst": 2, "src": 1, "index": 0},
    {"op": "GetField", "dst": 3, "src": 1, "index": 1},
    {"op": "InvokeClosure", "closure": 0, "args": [2], "dst": [4]},
    {"op": "Invoke", "func": 3, "args": [0, 3], "dst": [5]},
    {"op": "AllocADT", "dst": 6, "tag": 1, "fields": [4, 5]},
    {"op": "Ret", "results": [6]}]},
  {"name": "is_even", "num_params": 1, "num_results": 1, "num_registers": 3, "instructions": [
    {"op": "IfTag", "src": 0, "tag": 0, "true_offset": 1, "false_offset": 3},
    {"op": "LoadConst", "dst": 1, "param": "one"},
    {"op": "Ret", "results": [1]},
    {"op": "GetField", "dst": 1, "src": 0, "index": 1},
    {"op": "Invoke", "func": 5, "args": [1], "dst": [2]},
    {"op": "Ret", "results": [2]}]},
  {"name": "is_odd", "num_params": 1, "num_results": 1, "num_registers": 3, "instructions": [
    {"op": "IfTag", "src": 0, "tag": 0, "true_offset": 1, "false_offset": 3},
    {"op": "LoadConst", "dst": 1, "param": "zero"},
    {"op": "Ret", "results": [1]},
    {"op": "GetField", "dst": 1, "src": 0, "index": 1},
    {"op": "Invoke", "func": 4, "args": [1], "dst": [2]},
    {"op": "Ret", "results": [2]}]},
  {"name": "classify", "num_params": 1, "num_results": 1, "num_registers": 3, "instructions": [
    {"op": "IfTag", "src": 0, "tag": 0, "true_offset": 1, "false_offset": 3},
    {"op": "LoadConst", "dst": 1, "param": "zero"},
    {"op": "Ret", "results": [1]},
    {"op": "IfTag", "src": 0, "tag": 1, "true_offset": 1, "false_offset": 3},
    {"op": "LoadConst", "dst": 1, "param": "one"},
    {"op": "Ret", "results": [1]},
    {"op": "GetField", "dst": 2, "src": 0, "index": 0},
    {"op": "Ret", "results": [2]}]},
  {"name": "pair", "num_params": 1, "num_results": 2, "num_registers": 1, "instructions": [
    {"op": "Ret", "results": [0, 0]}]},
  {"name": "forever", "num_params": 1, "num_results": 1, "num_registers": 2, "instructions": [
    {"op": "Invoke", "func": 8, "args": [0], "dst": [1]},
    {"op": "Ret", "results": [1]}]},
  {"name": "field2", "num_params": 1, "num_results": 1, "num_registers": 2, "instructions": [
    {"op": "GetField", "dst": 1, "src": 0, "index": 2},
    {"op": "Ret", "results": [1]}]},
  {"name": "match", "num_params": 1, "num_results": 1, "num_registers": 1, "instructions": [
    {"op": "IfTag", "src": 0, "tag": 0, "true_offset": 1, "false_offset": 1},
    {"op": "Ret", "results": [0]}]},
  {"name": "boom", "num_params": 1, "num_results": 1, "num_registers": 2, "instructions": [
    {"op": "AllocTensor", "dst": 1, "dtype": "float32", "shape": []},
    {"op": "InvokePacked", "kernel": "fail", "args": [0, 1], "num_outputs": 1},
    {"op": "Ret", "results": [1]}]}
])";
enum Fn { kBuild, kSum, kAdd, kMap, kIsEven, kIsOdd, kClassify, kPair, kForever, kField2, kMatch, kBoom };

std::vector<NDArray> RunVM(VirtualMachine& vm, float n, float x = 0, int32_t c = 0) {
  return vm.Invoke({Scalar<float>(n), Scalar<float>(x), Scalar<int32_t>(c)});
}

// main: sum(build(n)), build and sum both recursive (n nested calls each).
const char* kSumMain = R"([
  {"op": "Invoke", "func": 0, "args": [0], "dst": [3]},
  {"op": "Invoke", "func": 1, "args": [3], "dst": [4]},
  {"op": "Ret", "results": [4]}])";

TEST(VMFunctions, RecursiveSumOverARecursivelyBuiltList) {
  Model t{Exe(kLibrary, kSumMain)};
  VirtualMachine vm(t.module());
  EXPECT_EQ(vm.NumInstructions(), 3);
  EXPECT_EQ(F(RunVM(vm, 1000)[0]), 500500.0f);
  EXPECT_EQ(F(RunVM(vm, 10)[0]), 55.0f);
  EXPECT_EQ(F(RunVM(vm, 0)[0]), 0.0f);  // sum returns the param "zero": the caller gets a copy
  EXPECT_EQ(F(RunVM(vm, 1)[0]), 1.0f);
  const VMExecutable exe = ParseVMExecutable(t.json, "<fn>");
  ASSERT_EQ(exe.functions.size(), 12u);
  EXPECT_EQ(exe.version, 3);
  EXPECT_EQ(exe.functions[kSum].name, "sum");
  EXPECT_EQ(exe.functions[kSum].num_registers, 6);
  EXPECT_EQ(exe.functions[kPair].num_results, 2);
  EXPECT_EQ(exe.functions[kBuild].instructions[5].op, VMOpcode::kInvoke);
  EXPECT_EQ(exe.functions[kBuild].instructions[5].func, kBuild);
  EXPECT_EQ(exe.functions[kBuild].instructions[5].dsts, (std::vector<int>{3}));
  EXPECT_EQ(exe.functions[kSum].instructions[0].op, VMOpcode::kIfTag);
  EXPECT_EQ(exe.functions[kSum].instructions[0].tag, 0);
  EXPECT_EQ(exe.functions[kSum].instructions[4].index, 1);
  EXPECT_EQ(DescribeInstruction(exe, kSum, 4), "instruction 4 (GetField) of function 'sum'");
  EXPECT_EQ(DescribeInstruction(exe, 2), "instruction 2 (Ret)");
}

// The pool (vm.h "Memory") with recursion: each level of build and sum allocates 64 bytes, so
// B(run) = 2 n 64 bytes. build's elements live to the end of the run (the list holds them), while
// the sums unwind: a callee's frame goes before its caller allocates, so one storage serves them
// all (n + 1 storages). Runs with the same n allocate nothing after the first, and with changing n
// the pool stays within 2 B(previous) + B(this).
TEST(VMFunctions, RecursionKeepsThePoolBounded) {
  Model t{Exe(kLibrary, kSumMain)};
  VirtualMachine vm(t.module());
  ASSERT_EQ(F(RunVM(vm, 1000)[0]), 500500.0f);
  const int64_t allocations = vm.PoolAllocations();
  EXPECT_EQ(allocations, 1001);
  EXPECT_EQ(vm.PoolBytes(), 1001u * 64);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(F(RunVM(vm, 1000)[0]), 500500.0f);
  EXPECT_EQ(vm.PoolAllocations(), allocations);
  EXPECT_EQ(vm.PoolBytes(), 1001u * 64);
  auto bytes = [](int n) { return size_t{2} * n * 64; };
  int previous = 1000;
  for (int n : {10, 700, 3, 1200, 1200, 50, 0, 900}) {
    const float expected = static_cast<float>(n) * (n + 1) / 2;
    ASSERT_EQ(F(RunVM(vm, static_cast<float>(n))[0]), expected) << n;
    EXPECT_LE(vm.PoolBytes(), 2 * bytes(previous) + bytes(n)) << n;
    previous = n;
  }
}

// Closures: AllocClosure with captures, InvokeClosure with the remaining args, a closure passed to
// a function (map); closures move and die like other values.
TEST(VMFunctions, ClosuresCaptureAndCallAndPassToFunctions) {
  const char* main = R"([
    {"op": "Invoke", "func": 0, "args": [0], "dst": [3]},
    {"op": "AllocClosure", "dst": 4, "func": 2, "captured": [1]},
    {"op": "Invoke", "func": 3, "args": [4, 3], "dst": [5]},
    {"op": "Invoke", "func": 1, "args": [5], "dst": [6]},
    {"op": "AllocClosure", "dst": 7, "func": 2, "captured": []},
    {"op": "InvokeClosure", "closure": 7, "args": [1, 1], "dst": [8]},
    {"op": "AllocClosure", "dst": 9, "func": 2, "captured": [1, 8]},
    {"op": "InvokeClosure", "closure": 9, "args": [], "dst": [10]},
    {"op": "Move", "dst": 11, "src": 9},
    {"op": "Kill", "regs": [9, 4, 5]},
    {"op": "InvokeClosure", "closure": 11, "args": [], "dst": [12]},
    {"op": "Invoke", "func": 1, "args": [3], "dst": [13]},
    {"op": "Ret", "results": [6, 8, 10, 12, 13]}])";
  const char* outputs = R"([{"name": "mapped_sum", "dtype": "float32", "shape": []},
    {"name": "twice", "dtype": "float32", "shape": []}, {"name": "thrice", "dtype": "float32", "shape": []},
    {"name": "thrice_moved", "dtype": "float32", "shape": []}, {"name": "sum", "dtype": "float32", "shape": []}])";
  Model t{Exe(kLibrary, main, outputs)};
  VirtualMachine vm(t.module());
  for (int run = 0; run < 3; ++run) {
    std::vector<NDArray> out = RunVM(vm, 100, 0.5f);
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(F(out[0]), 5050.0f + 100 * 0.5f);  // sum(map(x + _, [100 .. 1]))
    EXPECT_EQ(F(out[1]), 1.0f);
    EXPECT_EQ(F(out[2]), 1.5f);
    EXPECT_EQ(F(out[3]), 1.5f);
    EXPECT_EQ(F(out[4]), 5050.0f);  // map left the list it read as it was
  }
}

// main's first 8 instructions: r3 = a list of n cells Cons(x, ...), built by a loop (r4, r5: the
// counter; two storages taken in turn).
const char* kLoopBuild = R"(
  {"op": "AllocADT", "dst": 3, "tag": 0, "fields": []},
  {"op": "Move", "dst": 4, "src": 0},
  {"op": "If", "cond": 4, "true_offset": 1, "false_offset": 6},
  {"op": "AllocADT", "dst": 3, "tag": 1, "fields": [1, 3]},
  {"op": "AllocTensor", "dst": 5, "dtype": "float32", "shape": []},
  {"op": "InvokePacked", "kernel": "dec", "args": [4, 5], "num_outputs": 1},
  {"op": "Move", "dst": 4, "src": 5},
  {"op": "Goto", "offset": -5},)";

// Mutual recursion (is_even / is_odd over a list of n cells: n + 1 nested calls), a function
// returning one register twice, and the call depth limit, kMaxVMCallDepth nested calls.
TEST(VMFunctions, MutualRecursionAndTheDepthLimit) {
  const std::string main = std::string("[") + kLoopBuild + R"(
    {"op": "Invoke", "func": 4, "args": [3], "dst": [6]},
    {"op": "Invoke", "func": 5, "args": [3], "dst": [7]},
    {"op": "Invoke", "func": 7, "args": [1], "dst": [8, 9]},
    {"op": "AllocTensor", "dst": 10, "dtype": "float32", "shape": []},
    {"op": "InvokePacked", "kernel": "addf", "args": [8, 9, 10], "num_outputs": 1},
    {"op": "Ret", "results": [6, 7, 10]}])";
  const char* outputs = R"([{"name": "even", "dtype": "float32", "shape": []},
    {"name": "odd", "dtype": "float32", "shape": []}, {"name": "twice", "dtype": "float32", "shape": []}])";
  Model t{Exe(kLibrary, main, outputs)};
  VirtualMachine vm(t.module());
  auto check = [&](float n, float even) {
    std::vector<NDArray> out = RunVM(vm, n, 4);
    EXPECT_EQ(F(out[0]), even) << n;
    EXPECT_EQ(F(out[1]), 1 - even) << n;
    EXPECT_EQ(F(out[2]), 8.0f) << n;
  };
  check(7, 0);
  check(10, 1);
  check(0, 1);
  check(kMaxVMCallDepth - 1, 0);  // 99,999 cells: 100,000 nested calls, the most allowed
  EXPECT_THROW_WITH(RunVM(vm, kMaxVMCallDepth), UserError, "module '<fn>'",
                    "instruction 4 (Invoke) of function 'is_odd'", "call depth exceeds 100000 (unbounded recursion?)");
  check(1001, 0);
  EXPECT_LE(vm.PoolBytes(), 6u * 64);
}

// IfTag over several constructors; ADT fields holding a list and another ADT.
TEST(VMFunctions, IfTagBranchesOnTheConstructor) {
  const char* main = R"([
    {"op": "AllocADT", "dst": 3, "tag": 0, "fields": []},
    {"op": "AllocADT", "dst": 4, "tag": 1, "fields": []},
    {"op": "AllocADT", "dst": 5, "tag": 7, "fields": [1]},
    {"op": "Invoke", "func": 6, "args": [3], "dst": [6]},
    {"op": "Invoke", "func": 6, "args": [4], "dst": [7]},
    {"op": "Invoke", "func": 6, "args": [5], "dst": [8]},
    {"op": "ListNew", "dst": 9},
    {"op": "ListPush", "dst": 9, "src": 9, "value": 1},
    {"op": "ListPush", "dst": 9, "src": 9, "value": 0},
    {"op": "AllocADT", "dst": 10, "tag": 3, "fields": [9, 5]},
    {"op": "Kill", "regs": [9, 5]},
    {"op": "GetField", "dst": 11, "src": 10, "index": 0},
    {"op": "ListLength", "dst": 12, "src": 11},
    {"op": "GetField", "dst": 13, "src": 10, "index": 1},
    {"op": "Invoke", "func": 6, "args": [13], "dst": [14]},
    {"op": "ListAt", "dst": 15, "src": 11, "index": 2},
    {"op": "Ret", "results": [6, 7, 8, 12, 14, 15]}])";
  const char* outputs = R"([{"name": "nil", "dtype": "float32", "shape": []},
    {"name": "one", "dtype": "float32", "shape": []}, {"name": "field", "dtype": "float32", "shape": []},
    {"name": "len", "dtype": "int64", "shape": []}, {"name": "nested", "dtype": "float32", "shape": []},
    {"name": "at", "dtype": "float32", "shape": []}])";
  Model t{Exe(kLibrary, main, outputs)};
  VirtualMachine vm(t.module());
  const NDArray n = Scalar<float>(9), x = Scalar<float>(2.5f);
  for (int32_t c : {0, -1}) {  // ListAt's position: the input c
    std::vector<NDArray> out = vm.Invoke({n, x, Scalar<int32_t>(c)});
    EXPECT_EQ(F(out[0]), 0.0f);
    EXPECT_EQ(F(out[1]), 1.0f);
    EXPECT_EQ(F(out[2]), 2.5f);
    EXPECT_EQ(out[3].data<int64_t>()[0], 2);
    EXPECT_EQ(F(out[4]), 2.5f);
    EXPECT_EQ(F(out[5]), c == 0 ? 2.5f : 9.0f);
    EXPECT_FALSE(out[2].SharesStorageWith(x));  // an input returned through a field is copied
  }
}

// Lists of a million ADT cells (Cons(x, tail)) and of a million list cells, built by a loop in main
// and dropped by a Kill, or by the error ending the run: freed in a loop (no stack overflow; with
// destructors recursing per cell, ASan reports one).
TEST(VMFunctions, MillionCellListsAreFreedWithoutRecursion) {
  const char* main = R"([
    {"op": "AllocADT", "dst": 3, "tag": 0, "fields": []},
    {"op": "ListNew", "dst": 6},
    {"op": "Move", "dst": 4, "src": 0},
    {"op": "If", "cond": 4, "true_offset": 1, "false_offset": 7},
    {"op": "AllocADT", "dst": 3, "tag": 1, "fields": [1, 3]},
    {"op": "ListPush", "dst": 6, "src": 6, "value": 1},
    {"op": "AllocTensor", "dst": 5, "dtype": "float32", "shape": []},
    {"op": "InvokePacked", "kernel": "dec", "args": [4, 5], "num_outputs": 1},
    {"op": "Move", "dst": 4, "src": 5},
    {"op": "Goto", "offset": -6},
    {"op": "GetField", "dst": 7, "src": 3, "index": 0},
    {"op": "ListLength", "dst": 8, "src": 6},
    {"op": "If", "cond": 2, "true_offset": 1, "false_offset": 2},
    {"op": "Fatal", "message": "the lists go with the frames"},
    {"op": "Kill", "regs": [3, 6]},
    {"op": "Ret", "results": [7, 8]}])";
  const char* outputs = R"([{"name": "head", "dtype": "float32", "shape": []},
    {"name": "len", "dtype": "int64", "shape": []}])";
  Model t{Exe(kLibrary, main, outputs)};
  VirtualMachine vm(t.module());
  std::vector<NDArray> out = RunVM(vm, 1e6f, 3, 0);
  EXPECT_EQ(F(out[0]), 3.0f);
  EXPECT_EQ(out[1].data<int64_t>()[0], 1000000);
  // 200,000 cells: a recursive destructor overflows the stack as well (a test second saved).
  EXPECT_THROW_WITH(RunVM(vm, 2e5f, 3, 1), UserError, "the lists go with the frames", "instruction 13 (Fatal)");
  EXPECT_EQ(RunVM(vm, 3, 3, 0)[1].data<int64_t>()[0], 3);
  EXPECT_LE(vm.PoolBytes(), 6u * 64);  // the counter's storages, taken in turn
}

// Run-time errors name the instruction and its function; the VM runs again afterwards. main
// returns x when c is 0, else runs `failing` (from instruction 2).
void ExpectRunTimeError(const std::string& failing, const std::vector<const char*>& parts, bool user_error = true) {
  Model t{Exe(kLibrary, R"([{"op": "If", "cond": 2, "true_offset": 2, "false_offset": 1},
    {"op": "Ret", "results": [1]}, )" + failing + "]")};
  VirtualMachine vm(t.module());
  try {
    RunVM(vm, 5, 2, 1);
    ADD_FAILURE() << "expected an error from " << failing;
  } catch (const UserError& e) {
    EXPECT_TRUE(user_error) << e.what();
    for (const char* part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  } catch (const Error& e) {
    EXPECT_FALSE(user_error) << e.what();
    for (const char* part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  EXPECT_EQ(F(RunVM(vm, 5, 2, 0)[0]), 2.0f) << failing;
  EXPECT_EQ(F(RunVM(vm, 5, 7, 0)[0]), 7.0f) << failing;
}

TEST(VMFunctions, RunTimeErrorsNameTheInstructionAndFunction) {
  ExpectRunTimeError(R"({"op": "Invoke", "func": 9, "args": [1], "dst": [3]}, {"op": "Ret", "results": [3]})",
                     {"<fn>", "instruction 0 (GetField) of function 'field2'", "as an ADT, but it holds a tensor"});
  ExpectRunTimeError(R"({"op": "AllocADT", "dst": 3, "tag": 4, "fields": [1, 1]},
                        {"op": "Invoke", "func": 9, "args": [3], "dst": [4]}, {"op": "Ret", "results": [4]})",
                     {"instruction 0 (GetField) of function 'field2'", "field 2 is out of range",
                      "ADT in register 0 (tag 4) has 2 fields"});
  ExpectRunTimeError(R"({"op": "Invoke", "func": 10, "args": [1], "dst": [3]}, {"op": "Ret", "results": [3]})",
                     {"instruction 0 (IfTag) of function 'match'", "as an ADT, but it holds a tensor"});
  ExpectRunTimeError(R"({"op": "AllocADT", "dst": 3, "tag": 0, "fields": []},
                        {"op": "InvokeClosure", "closure": 3, "args": [], "dst": [4]}, {"op": "Ret", "results": [4]})",
                     {"instruction 3 (InvokeClosure)", "as a closure, but it holds an ADT"});
  ExpectRunTimeError(R"({"op": "InvokeClosure", "closure": 1, "args": [], "dst": [4]}, {"op": "Ret", "results": [4]})",
                     {"instruction 2 (InvokeClosure)", "as a closure, but it holds a tensor"});
  ExpectRunTimeError(R"({"op": "AllocClosure", "dst": 3, "func": 2, "captured": [1]},
                        {"op": "InvokeClosure", "closure": 3, "args": [1, 1], "dst": [4]}, {"op": "Ret", "results": [4]})",
                     {"instruction 3 (InvokeClosure)", "function 'add' with 1 captured values, called with 2 args",
                      "takes 2 params (num_params)"});
  ExpectRunTimeError(R"({"op": "AllocClosure", "dst": 3, "func": 2, "captured": [1]},
                        {"op": "InvokeClosure", "closure": 3, "args": [1], "dst": [4, 5]}, {"op": "Ret", "results": [4]})",
                     {"instruction 3 (InvokeClosure)", "2 results in \"dst\"", "returns 1 results (num_results)"});
  ExpectRunTimeError(R"({"op": "AllocADT", "dst": 3, "tag": 0, "fields": []}, {"op": "Ret", "results": [3]})",
                     {"instruction 3 (Ret)", "as a tensor, but it holds an ADT"});
  ExpectRunTimeError(R"({"op": "AllocClosure", "dst": 3, "func": 2, "captured": []}, {"op": "Ret", "results": [3]})",
                     {"instruction 3 (Ret)", "as a tensor, but it holds a closure"});
  ExpectRunTimeError(R"({"op": "AllocADT", "dst": 3, "tag": 0, "fields": []},
                        {"op": "ListLength", "dst": 4, "src": 3}, {"op": "Ret", "results": [4]})",
                     {"instruction 3 (ListLength)", "as a list, but it holds an ADT"});
  ExpectRunTimeError(R"({"op": "Invoke", "func": 8, "args": [1], "dst": [3]}, {"op": "Ret", "results": [3]})",
                     {"instruction 0 (Invoke) of function 'forever'", "call depth exceeds 100000 (unbounded recursion?)"});
  // A kernel failure in a function: the graph executor's error, naming the function.
  ExpectRunTimeError(R"({"op": "Invoke", "func": 11, "args": [1], "dst": [3]}, {"op": "Ret", "results": [3]})",
                     {"instruction 1 (InvokePacked, kernel 'fail') of function 'boom' of module '<fn>'"}, false);
}

// Builds a VM for a broken executable and expects a UserError mentioning `parts`.
#define EXPECT_BAD_EXE(json, ...)                                      \
  do {                                                                 \
    Model t_{json};                                                    \
    Module m_ = t_.module();                                           \
    EXPECT_THROW_WITH(VirtualMachine vm_(m_), UserError, __VA_ARGS__); \
  } while (0)

// One function "f" of 1 param, 1 result and 3 registers with `code`, main calling it.
std::string OneFunction(const std::string& code, const std::string& header = "") {
  return Exe(R"([{"name": "f", "num_params": 1, "num_results": 1, "num_registers": 3)" + header +
                 R"(, "instructions": )" + code + "}]",
             R"([{"op": "Invoke", "func": 0, "args": [1], "dst": [3]}, {"op": "Ret", "results": [3]}])");
}

TEST(VMFunctions, LoadTimeValidation) {
  const std::string ret0 = R"([{"op": "Ret", "results": [0]}])";
  ASSERT_NO_THROW(ParseVMExecutable(OneFunction(ret0), "<fn>"));
  // Function indices and counts of Invoke / AllocClosure.
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "Invoke", "func": 12, "args": [0], "dst": [3]}, {"op": "Ret", "results": [3]}])"),
                 "<fn>", "instruction 0 (Invoke)", "\"func\" 12 is out of range", "12 functions");
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "AllocClosure", "dst": 3, "func": -1, "captured": []}, {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (AllocClosure)", "\"func\" -1 is out of range");
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "Invoke", "func": 2, "args": [0], "dst": [3]}, {"op": "Ret", "results": [3]}])"),
                 "instruction 0 (Invoke)", "passes 1 args but function 'add' has 2 params");
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "Invoke", "func": 7, "args": [0], "dst": [3]}, {"op": "Ret", "results": [3]}])"),
                 "instruction 0 (Invoke)", "takes 1 results in \"dst\" but function 'pair' has 2 results");
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "Invoke", "func": 7, "args": [0], "dst": [3, 3]}, {"op": "Ret", "results": [3]}])"),
                 "instruction 0 (Invoke)", "register 3 appears twice in \"dst\"");
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "AllocClosure", "dst": 3, "func": 2, "captured": [0, 1, 1]}, {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (AllocClosure)", "captures 3 values but function 'add' takes 2 params");
  EXPECT_BAD_EXE(Exe(kLibrary, R"([{"op": "AllocADT", "dst": 3, "tag": -1, "fields": []}, {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (AllocADT)", "\"tag\" -1 must be >= 0");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "IfTag", "src": 0, "tag": -2, "true_offset": 1, "false_offset": 1}, {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (IfTag) of function 'f'", "\"tag\" -2 must be >= 0");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "GetField", "dst": 1, "src": 0, "index": -1}, {"op": "Ret", "results": [1]}])"),
                 "instruction 0 (GetField) of function 'f'", "\"index\" -1 must be >= 0");
  // Definite assignment in a function: only the params are assigned at entry.
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Move", "dst": 2, "src": 1}, {"op": "Ret", "results": [2]}])"),
                 "instruction 0 (Move) of function 'f'", "reads register 1", "not written on every path");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "IfTag", "src": 0, "tag": 1, "true_offset": 1, "false_offset": 2},
                                 {"op": "GetField", "dst": 1, "src": 0, "index": 0},
                                 {"op": "Ret", "results": [1]}])"),
                 "instruction 2 (Ret) of function 'f'", "reads register 1");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "AllocADT", "dst": 1, "tag": 0, "fields": [2]}, {"op": "Ret", "results": [1]}])"),
                 "instruction 0 (AllocADT) of function 'f'", "reads register 2");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "InvokeClosure", "closure": 2, "args": [], "dst": [1]}, {"op": "Ret", "results": [1]}])"),
                 "instruction 0 (InvokeClosure) of function 'f'", "reads register 2");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Invoke", "func": 0, "args": [0], "dst": [1]}, {"op": "Kill", "regs": [1]},
                                 {"op": "Ret", "results": [1]}])"),
                 "instruction 2 (Ret) of function 'f'", "reads register 1");
  // Kernels write no param, call result or field.
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "InvokePacked", "kernel": "dec", "args": [0, 0], "num_outputs": 1},
                                 {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (InvokePacked) of function 'f'", "writes register 0", "param or an input");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Invoke", "func": 0, "args": [0], "dst": [1]},
                                 {"op": "InvokePacked", "kernel": "dec", "args": [0, 1], "num_outputs": 1},
                                 {"op": "Ret", "results": [1]}])"),
                 "instruction 1 (InvokePacked) of function 'f'", "writes register 1");
  // Registers, jumps, the end, results of a function.
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Move", "dst": 3, "src": 0}, {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (Move) of function 'f'", "register 3", "function 'f' has 3 registers");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Goto", "offset": 2}, {"op": "Ret", "results": [0]}])"),
                 "instruction 0 (Goto) of function 'f'", "\"offset\" 2 jumps outside function 'f'");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Ret", "results": [0]}, {"op": "IfTag", "src": 0, "tag": 0, "true_offset": -2, "false_offset": -1}])"),
                 "instruction 1 (IfTag) of function 'f'", "\"true_offset\" -2 jumps outside function 'f'");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Ret", "results": [0]}, {"op": "Move", "dst": 1, "src": 0}])"),
                 "instruction 1 (Move) of function 'f'", "function 'f' can run past its last instruction");
  EXPECT_BAD_EXE(OneFunction("[]"), "functions[0] ('f')", "function 'f' has no instructions");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Ret", "results": [0, 0]}])"), "instruction 0 (Ret) of function 'f'",
                 "returns 2 results but function 'f' has 1 results");
  EXPECT_BAD_EXE(OneFunction(R"([{"op": "Nope"}])"), "instruction 0 of function 'f'", "unknown op \"Nope\"");
  // Headers: names, counts.
  const std::string f = R"({"name": "f", "num_params": 0, "num_results": 0, "num_registers": 1, "instructions": [{"op": "Ret", "results": []}]})";
  const std::string main = R"([{"op": "Ret", "results": [0]}])";
  EXPECT_BAD_EXE(Exe("[" + f + ", " + f + "]", main), "functions[1]", "duplicate function name \"f\"");
  std::string unnamed = f;
  unnamed.replace(unnamed.find(R"("f")"), 3, R"("")");
  EXPECT_BAD_EXE(Exe("[" + unnamed + "]", main), "functions[0]", "\"name\" must be non-empty");
  EXPECT_BAD_EXE(OneFunction(ret0, R"(, "num_params": 4)"), "functions[0] ('f')", "num_registers 3 must be in [4");
  EXPECT_BAD_EXE(Exe(R"([{"name": "g", "num_params": -1, "num_results": 0, "num_registers": 1, "instructions": []}])", main),
                 "functions[0] ('g')", "num_params -1");
  EXPECT_BAD_EXE(Exe(R"({"name": "g"})", main), "field \"functions\" must be an array");
  // Versions: functions and their instructions need version 3.
  EXPECT_BAD_EXE(Exe("", R"([{"op": "Invoke", "func": 0, "args": [0], "dst": [3]}, {"op": "Ret", "results": [3]}])",
                     kScalarOutput, 16, 2),
                 "instruction 0 (Invoke)", "Invoke needs version 3 (this executable declares version 2)");
  EXPECT_BAD_EXE(Exe("", R"([{"op": "AllocADT", "dst": 3, "tag": 0, "fields": []}, {"op": "Ret", "results": [0]}])",
                     kScalarOutput, 16, 1),
                 "instruction 0 (AllocADT)", "needs version 3 (this executable declares version 1)");
  EXPECT_BAD_EXE(Exe("[" + f + "]", main, kScalarOutput, 16, 2), "\"functions\"", "functions need version 3");
  // Symbols: bound in any function counts; used but bound nowhere names the function.
  const std::string binds = R"([{"op": "ShapeOf", "dst": 1, "src": 0}, {"op": "LoadShape", "src": 1, "symbols": ["k"]},
    {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": ["k"]}, {"op": "Ret", "results": [0]}])";
  EXPECT_NO_THROW(ParseVMExecutable(OneFunction(binds), "<fn>"));
  std::string unbound = binds;
  unbound.replace(unbound.find(R"("symbols": ["k"])"), 16, R"("symbols": ["j"])");
  EXPECT_BAD_EXE(OneFunction(unbound), "instruction 2 (AllocTensor) of function 'f'", "symbol 'k' is bound nowhere");
}

// ParseVMExecutable on mutated copies of a version-3 executable throws UserError or returns, never
// anything else; the VM built from one that parses runs or fails with an Error, never crashes.
TEST(VMFunctions, MutatedExecutablesFailCleanly) {
  const std::string valid = Exe(kLibrary, kSumMain);
  const std::vector<std::pair<std::string, std::string>> swaps = {
      {R"("func": 1)", R"("func": 0)"}, {R"("func": 0)", R"("func": 3)"},   {R"("index": 1)", R"("index": 0)"},
      {R"("tag": 0)", R"("tag": 1)"},   {R"("dst": [3])", R"("dst": [])"},  {R"("args": [3])", R"("args": [2])"},
      {R"("src": 0, "index": 0)", R"("src": 1, "index": 0)"}, {R"("num_params": 1)", R"("num_params": 0)"},
      {R"("version": 3)", R"("version": 2)"}};
  int parsed = 0;
  for (const auto& [from, to] : swaps) {
    for (size_t at = valid.find(from); at != std::string::npos; at = valid.find(from, at + 1)) {
      std::string s = valid;
      s.replace(at, from.size(), to);
      try {
        ParseVMExecutable(s, "<mut>");
        ++parsed;
        Model t{s};
        VirtualMachine vm(t.module());
        RunVM(vm, 20);
      } catch (const Error&) {  // UserError included
      }
    }
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace tessera::runtime
