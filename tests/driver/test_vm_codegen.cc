// VM codegen: the bytecode of small fused programs with If (expected instructions), and programs
// built end to end (BuildJIT) run by the VirtualMachine against C++ references.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver_test_util.h"
#include "tessera/driver/build.h"
#include "tessera/driver/vm_codegen.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/parser.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/fuse_ops.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/runtime/vm.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

using namespace tessera::graph;
using testing::Call;
using testing::F32;
using testing::Random;

IRModule Fused(Function main) { return InferType(transform::FuseOps(InferType(IRModule::FromMain(std::move(main))))); }

Type Bool() { return TensorTypeNode::make(std::vector<int64_t>{}, DataType::Bool()); }

/// One line per instruction, e.g. "InvokePacked fused_exp_0 [0, 3]", "If 1 +1 +6", "Kill [3]".
std::string Listing(const nlohmann::json& j) {
  std::string out;
  for (const auto& in : j["instructions"]) {
    const std::string op = in["op"];
    std::string line = op;
    if (op == "If") {
      line += " " + in["cond"].dump() + " +" + in["true_offset"].dump() + " +" + in["false_offset"].dump();
    } else if (op == "Goto") {
      line += (in["offset"].get<int64_t>() >= 0 ? " +" : " ") + in["offset"].dump();
    } else if (op == "InvokePacked") {
      line += " " + in["kernel"].get<std::string>() + " " + in["args"].dump();
    } else if (op == "AllocTensor" || op == "LoadConst" || op == "ReshapeTensor" || op == "Move") {
      line += " " + in["dst"].dump();
      if (in.contains("src")) line += " <- " + in["src"].dump();
      if (in.contains("param")) line += " " + in["param"].get<std::string>();
    } else if (op == "Kill") {
      line += " " + in["regs"].dump();
    } else if (op == "ListNew" || op == "ListPush" || op == "ListLength" || op == "ListStack") {
      line += " " + in["dst"].dump();
      if (in.contains("src")) line += " <- " + in["src"].dump();
      if (in.contains("value")) line += " + " + in["value"].dump();
      if (in.contains("shape")) line += " " + in["shape"].dump();
    } else if (op == "Ret") {
      line += " " + in["results"].dump();
    }
    out += line + "\n";
  }
  return out;
}

TEST(VMCodegen, IfCompilesToTwoBlocksJoinedByMovesWithKillsAfterLastUses) {
  // main(x, c) = add(if c { exp(x) } else { negative(relu(x)) }, x)
  Var x = VarNode::make("x", F32({8}));
  Var c = VarNode::make("c", Bool());
  Expr branch = IfNode::make(c, Call("exp", {x}), Call("negative", {Call("nn.relu", {x})}));
  IRModule mod = Fused(FunctionNode::make({x, c}, Call("add", {branch, x})));
  ASSERT_TRUE(HasControlFlow(mod));
  ExecutorPlan plan = VMCodegen(mod, {"y"});
  const auto j = nlohmann::json::parse(plan.graph_json);
  EXPECT_EQ(j["format"], "tessera-vm");
  EXPECT_EQ(j["num_registers"], 6);
  // Registers: x 0, c 1, the If's result 2, then 3, else 4, the add 5. The condition dies at the If
  // (killed at the start of both blocks); each branch's tensor dies at its Move into the join
  // register; x and the If's result die at the add.
  EXPECT_EQ(Listing(j),
            "If 1 +1 +7\n"
            "Kill [1]\n"
            "AllocTensor 3\n"
            "InvokePacked fused_exp_0 [0,3]\n"
            "Move 2 <- 3\n"
            "Kill [3]\n"
            "Goto +6\n"
            "Kill [1]\n"
            "AllocTensor 4\n"
            "InvokePacked fused_relu_negative_1 [0,4]\n"
            "Move 2 <- 4\n"
            "Kill [4]\n"
            "AllocTensor 5\n"
            "InvokePacked fused_add_2 [2,0,5]\n"
            "Kill [0,2]\n"
            "Ret [5]\n");
  EXPECT_EQ(plan.num_nodes, 3);
  EXPECT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(j["inputs"][1]["dtype"], "bool");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({8}));
}

TEST(VMCodegen, AValueUsedOnlyInOneBranchIsKilledAtTheOtherBranchsStart) {
  // main(x, z, c) = if c { exp(x) } else { negative(z) }: x is live into the If but only the then
  // branch reads it, z only the else branch: each block first kills what it does not read.
  Var x = VarNode::make("x", F32({4}));
  Var z = VarNode::make("z", F32({4}));
  Var c = VarNode::make("c", Bool());
  ExecutorPlan plan =
      VMCodegen(Fused(FunctionNode::make({x, z, c}, IfNode::make(c, Call("exp", {x}), Call("negative", {z})))), {"y"});
  EXPECT_EQ(Listing(nlohmann::json::parse(plan.graph_json)),
            "If 2 +1 +8\n"
            "Kill [1,2]\n"
            "AllocTensor 4\n"
            "InvokePacked fused_exp_0 [0,4]\n"
            "Kill [0]\n"
            "Move 3 <- 4\n"
            "Kill [4]\n"
            "Goto +7\n"
            "Kill [0,2]\n"
            "AllocTensor 5\n"
            "InvokePacked fused_negative_1 [1,5]\n"
            "Kill [1]\n"
            "Move 3 <- 5\n"
            "Kill [5]\n"
            "Ret [3]\n");
}

TEST(VMCodegen, AValueNeededAfterTheIfIsComputedOnceBeforeIt) {
  // k = sigmoid(x) is read by the then branch and by the add after the If: it is computed once,
  // before the If, even though the If (the first output) asks for it first.
  Var x = VarNode::make("x", F32({4}));
  Var c = VarNode::make("c", Bool());
  Expr k = Call("sigmoid", {x});
  Expr body = TupleNode::make({IfNode::make(c, Call("exp", {k}), Call("negative", {x})), Call("add", {k, k})});
  ExecutorPlan plan = VMCodegen(Fused(FunctionNode::make({x, c}, body)), {"a", "b"});
  const std::string listing = Listing(nlohmann::json::parse(plan.graph_json));
  const size_t sigmoid = listing.find("InvokePacked fused_sigmoid");
  ASSERT_NE(sigmoid, std::string::npos) << listing;
  EXPECT_EQ(listing.find("InvokePacked fused_sigmoid", sigmoid + 1), std::string::npos) << listing;
  EXPECT_LT(sigmoid, listing.find("If ")) << listing;
  EXPECT_EQ(plan.num_nodes, 4);
}

TEST(VMCodegen, AConstantReadInBothBranchesIsOneParam) {
  // w is loaded in each block that reads it, from one param of the blob.
  Var x = VarNode::make("x", F32({4}));
  Var c = VarNode::make("c", Bool());
  Constant w = ConstantNode::make(Random({4}, 3));
  ExecutorPlan plan = VMCodegen(
      Fused(FunctionNode::make({x, c}, IfNode::make(c, Call("add", {x, w}), Call("multiply", {x, w})))), {"y"});
  EXPECT_EQ(plan.params.size(), 1u);
  const std::string listing = Listing(nlohmann::json::parse(plan.graph_json));
  const size_t first = listing.find("LoadConst");
  ASSERT_NE(first, std::string::npos) << listing;
  const size_t second = listing.find("LoadConst", first + 1);
  ASSERT_NE(second, std::string::npos) << listing;
  EXPECT_NE(listing.find(" p0\n", first), std::string::npos) << listing;
  EXPECT_EQ(listing.find(" p1\n"), std::string::npos) << listing;
}

TEST(VMCodegen, StaticProgramsHaveNoControlFlow) {
  Var x = VarNode::make("x", F32({4}));
  EXPECT_FALSE(HasControlFlow(Fused(FunctionNode::make({x}, Call("exp", {x})))));
}

TEST(VMCodegen, ExternalFunctionsInAProgramWithControlFlowAreRefused) {
  Var x = VarNode::make("x", F32({4}));
  Var c = VarNode::make("c", Bool());
  Var p = VarNode::make("p", F32({4}));
  Attrs attrs;
  attrs.Set("Compiler", std::string("dnnl"));
  attrs.Set("global_symbol", std::string("dnnl_0"));
  Function ext = FunctionNode::make({p}, Call("exp", {p}), nullptr, attrs);
  IRModule mod = Fused(FunctionNode::make({x, c}, IfNode::make(c, CallNode::make(ext, {x}), Call("negative", {x}))));
  try {
    VMCodegen(mod, {"y"});
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("compile without --byoc"), std::string::npos) << e.what();
  }
}

TEST(VMCodegen, SymbolicShapesNameTheirSymbolsAndPassThemToKernels) {
  // y = reshape(relu(exp(x) + b), [n, 4, 16]) of x [n, 64]: a static program but for the symbol n.
  Type xt = TensorTypeNode::make(Shape{Dim::Symbolic("n"), Dim(64)}, DataType::Float(32));
  Var x = VarNode::make("x", xt);
  Var b = VarNode::make("b", F32({64}));
  Attrs to3d;
  to3d.Set("newshape", std::vector<int64_t>{-1, 4, 16});
  to3d.Set("symbols", std::string("n"));
  Expr sum = Call("add", {Call("exp", {x}), b});
  IRModule mod = Fused(FunctionNode::make({x, b}, Call("reshape", {Call("nn.relu", {sum})}, to3d)));
  EXPECT_FALSE(HasControlFlow(mod));
  ASSERT_TRUE(HasSymbolicShapes(mod));
  const nlohmann::json j = nlohmann::json::parse(VMCodegen(mod, {"y"}).graph_json);
  EXPECT_EQ(j["version"], 2);  // symbols need a runtime that knows them
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::parse(R"(["n", 64])"));
  EXPECT_EQ(j["inputs"][1]["shape"], nlohmann::json::parse("[64]"));
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::parse(R"(["n", 4, 16])"));
  // exp, add, relu and the reshape fuse into one kernel, which gets n.
  EXPECT_EQ(j["instructions"], nlohmann::json::parse(R"([
    {"op": "AllocTensor", "dst": 2, "dtype": "float32", "shape": ["n", 4, 16]},
    {"op": "InvokePacked", "kernel": "fused_exp_add_relu_reshape_0", "args": [0, 1, 2], "num_outputs": 1,
     "shape_args": ["n"]},
    {"op": "Kill", "regs": [0, 1]},
    {"op": "Ret", "results": [2]}])"));

  // A static program has no symbols.
  Var s = VarNode::make("s", F32({4}));
  EXPECT_FALSE(HasSymbolicShapes(Fused(FunctionNode::make({s}, Call("exp", {s})))));
}

TEST(VMCodegen, ADataDependentShapeIsBoundByLoadShapeBeforeItsView) {
  // y = exp(vm.reshape(x, vm.reshape_shape(x, s))) with s a run-time shape of length 2.
  Var x = VarNode::make("x", F32({2, 6}));
  Var s = VarNode::make("s", TensorTypeNode::make(std::vector<int64_t>{2}, DataType::Int(64)));
  Attrs view;
  view.Set("symbols", std::string("a,b"));
  Expr resolved = Call("vm.reshape_shape", {x, s});
  IRModule mod = Fused(FunctionNode::make({x, s}, Call("exp", {Call("vm.reshape", {x, resolved}, view)})));
  ASSERT_TRUE(HasSymbolicShapes(mod));
  const nlohmann::json j = nlohmann::json::parse(VMCodegen(mod, {"y"}).graph_json);
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::parse(R"(["a", "b"])"));
  std::string ops;
  for (const auto& in : j["instructions"]) {
    ops += in["op"].get<std::string>() + " ";
    if (in["op"] == "LoadShape") EXPECT_EQ(in["symbols"], nlohmann::json::parse(R"(["a", "b"])")) << in;
    if (in["op"] == "ReshapeTensor") EXPECT_EQ(in["src"], 0) << in;
  }
  // The shape function's kernel, LoadShape, the zero-copy view, then exp's kernel.
  EXPECT_EQ(ops, "AllocTensor InvokePacked Kill LoadShape Kill ReshapeTensor Kill AllocTensor InvokePacked Kill Ret ")
      << j.dump();
}

TEST(VMCodegen, AnExtentNoRelationComputedIsRefused) {
  Type xt = TensorTypeNode::make(Shape{Dim::Any(), Dim(4)}, DataType::Float(32));
  Var x = VarNode::make("x", xt);
  IRModule mod = Fused(FunctionNode::make({x}, Call("exp", {x})));
  try {
    VMCodegen(mod, {"y"});
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("'?'"), std::string::npos) << e.what();
  }
}

runtime::NDArray Scalar(bool v) {
  auto a = runtime::NDArray::Empty({}, DataType::Bool());
  *static_cast<uint8_t*>(a.raw_data()) = v ? 1 : 0;
  return a;
}

TEST(VMCodegen, BuiltProgramRunsTheTakenBranchInTheVM) {
  // y = (if c { exp(x) * 2 } else { relu(x) - 1 }) + x, built and JIT-compiled, run by the VM.
  Var x = VarNode::make("x", F32({64}));
  Var c = VarNode::make("c", Bool());
  auto two = runtime::NDArray::Empty({}, DataType::Float(32));
  *two.data<float>() = 2.f;
  auto one = runtime::NDArray::Empty({}, DataType::Float(32));
  *one.data<float>() = 1.f;
  Expr branch = IfNode::make(c, Call("multiply", {Call("exp", {x}), ConstantNode::make(two)}),
                             Call("subtract", {Call("nn.relu", {x}), ConstantNode::make(one)}));
  IRModule mod = IRModule::FromMain(FunctionNode::make({x, c}, Call("add", {branch, x})));
  runtime::Module module = BuildJIT(mod, {"y"});
  ASSERT_EQ(runtime::ProgramFormat(module), "tessera-vm");
  std::unique_ptr<runtime::Executor> exec = runtime::MakeExecutor(module);
  auto* vm = dynamic_cast<runtime::VirtualMachine*>(exec.get());
  ASSERT_NE(vm, nullptr);
  const runtime::NDArray in = Random({64}, 7, -2.f, 2.f);
  // Two threads: each InvokePacked's first calls calibrate its launches (launch_calibration.h);
  // every run, during and after, gives the same outputs.
  const int threads = runtime::NumThreads();
  runtime::SetNumThreads(2);
  for (int run = 0; run < 16; ++run) {
    const bool taken = run % 2 == 0;
    std::vector<runtime::NDArray> out = vm->Invoke({in, Scalar(taken)});
    ASSERT_EQ(out.size(), 1u);
    for (int i = 0; i < 64; ++i) {
      const float v = in.data<float>()[i];
      const float want = (taken ? std::exp(v) * 2.f : std::max(v, 0.f) - 1.f) + v;
      EXPECT_NEAR(out[0].data<float>()[i], want, 1e-5f * std::max(1.f, std::fabs(want))) << "run " << run << " i " << i;
    }
  }
  runtime::SetNumThreads(threads);
}

TEST(VMCodegen, TenThousandRunsAlternatingBranchesAllocateNothingAfterWarmUp) {
  // The Done-when of issue 14: the VM loses no memory over 10,000 calls (with ASan / LSan in the
  // sanitizer build): after both branches ran once, the storage pool serves every AllocTensor.
  Var x = VarNode::make("x", F32({256}));
  Var c = VarNode::make("c", Bool());
  Expr then_b = Call("exp", {Call("nn.relu", {x})});
  Expr else_b = Call("negative", {Call("sigmoid", {x})});
  IRModule mod = IRModule::FromMain(FunctionNode::make({x, c}, Call("add", {IfNode::make(c, then_b, else_b), x})));
  runtime::VirtualMachine vm(BuildJIT(mod, {"y"}));
  const runtime::NDArray in = Random({256}, 11);
  vm.Invoke({in, Scalar(true)});
  vm.Invoke({in, Scalar(false)});
  const int64_t allocations = vm.PoolAllocations();
  const size_t bytes = vm.PoolBytes();
  float checksum = 0;
  for (int run = 0; run < 10000; ++run) checksum += vm.Invoke({in, Scalar(run % 3 == 0)})[0].data<float>()[0];
  EXPECT_EQ(vm.PoolAllocations(), allocations);
  EXPECT_EQ(vm.PoolBytes(), bytes);
  const float v = in.data<float>()[0];
  const float taken = std::exp(std::max(v, 0.f)) + v, other = -1.f / (1.f + std::exp(-v)) + v;
  EXPECT_NEAR(checksum, 3334 * taken + 6666 * other, 1e-2f * (std::fabs(3334 * taken) + std::fabs(6666 * other)));
}

// A loop as the importer writes ONNX Loop (Relay's tail-recursive loop function):
//   main(x: f32[n], m: i64[]) = let %loop = fn (%i, %v) { if (less(%i, %m)) { %loop(add(%i, 1),
//   tanh(%v) * 0.5 + x) } else { (%v,) } }; %loop(0, x).0
Function LoopProgram(int64_t n) {
  Var x = VarNode::make("x", F32({n}));
  const Type i64 = TensorTypeNode::make(std::vector<int64_t>{}, DataType::Int(64));
  Var m = VarNode::make("m", i64);
  Var i = VarNode::make("i", i64), v = VarNode::make("v", F32({n}));
  auto scalar = [](DataType t, double value) {
    auto a = runtime::NDArray::Empty({}, t);
    if (t == DataType::Int(64)) *a.data<int64_t>() = static_cast<int64_t>(value);
    else *a.data<float>() = static_cast<float>(value);
    return ConstantNode::make(a);
  };
  const Type result = TupleTypeNode::make({F32({n})});
  Var loop = VarNode::make("loop", FuncTypeNode::make({i64, F32({n})}, result));
  Expr next = Call("add", {Call("multiply", {Call("tanh", {v}), scalar(DataType::Float(32), 0.5)}), x});
  Expr body = IfNode::make(Call("less", {i, m}), CallNode::make(loop, {Call("add", {i, scalar(DataType::Int(64), 1)}), next}),
                           TupleNode::make({v}));
  Expr let = LetNode::make(loop, FunctionNode::make({i, v}, body, result),
                           CallNode::make(loop, {scalar(DataType::Int(64), 0), x}));
  return FunctionNode::make({x, m}, TupleGetItemNode::make(let, 0));
}

std::vector<float> LoopReference(const runtime::NDArray& x, int64_t m) {
  std::vector<float> v(x.data<float>(), x.data<float>() + x.NumElements());
  for (int64_t it = 0; it < m; ++it)
    for (size_t k = 0; k < v.size(); ++k) v[k] = std::tanh(v[k]) * 0.5f + x.data<float>()[k];
  return v;
}

runtime::NDArray Int64Scalar(int64_t value) {
  auto a = runtime::NDArray::Empty({}, DataType::Int(64));
  *a.data<int64_t>() = value;
  return a;
}

TEST(VMCodegen, ALoopFunctionCompilesToABodyThatJumpsBackAndKeepsLoopInvariantRegistersLive) {
  IRModule mod = Fused(LoopProgram(8));
  ASSERT_TRUE(HasControlFlow(mod));
  ExecutorPlan plan = VMCodegen(mod, {"y"});
  const auto j = nlohmann::json::parse(plan.graph_json);
  // Registers: x 0, m 1, the loop's result 2, its params i 3 and v 4. The first iteration's arguments
  // move into the params; the body tests i < m, and either computes the next values (into fresh
  // registers, then the params) and jumps back to the test, or moves v into the result and jumps
  // past the loop. x and m, read in every iteration, are killed only after it.
  EXPECT_EQ(Listing(j),
            "LoadConst 5 p0\n"
            "Move 3 <- 5\n"
            "Kill [5]\n"
            "Move 4 <- 0\n"
            "AllocTensor 6\n"
            "InvokePacked fused_less_0 [3,1,6]\n"
            "If 6 +1 +20\n"
            "Kill [6]\n"
            "LoadConst 7 p1\n"
            "AllocTensor 8\n"
            "InvokePacked fused_add_1 [3,7,8]\n"
            "Kill [3,7]\n"
            "Move 9 <- 8\n"
            "Kill [8]\n"
            "LoadConst 10 p2\n"
            "AllocTensor 11\n"
            "InvokePacked fused_tanh_multiply_add_2 [4,10,0,11]\n"
            "Kill [4,10]\n"
            "Move 12 <- 11\n"
            "Kill [11]\n"
            "Move 3 <- 9\n"
            "Kill [9]\n"
            "Move 4 <- 12\n"
            "Kill [12]\n"
            "Goto -20\n"
            "Goto +5\n"
            "Kill [0,1,3,6]\n"
            "Move 2 <- 4\n"
            "Kill [4]\n"
            "Goto +1\n"
            "Ret [2]\n");
}

TEST(VMCodegen, BuiltLoopRunsItsRunTimeTripCountInTheVM) {
  runtime::VirtualMachine vm(BuildJIT(IRModule::FromMain(LoopProgram(64)), {"y"}));
  const runtime::NDArray x = Random({64}, 5, -2.f, 2.f);
  for (int64_t m : {0, 1, 2, 7, 100, -3}) {
    std::vector<runtime::NDArray> out = vm.Invoke({x, Int64Scalar(m)});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> want = LoopReference(x, m);
    for (int k = 0; k < 64; ++k) EXPECT_NEAR(out[0].data<float>()[k], want[k], 1e-5f) << "m " << m << " k " << k;
  }
}

TEST(VMCodegen, ALoopOfTenThousandIterationsReusesItsStorage) {
  // Each iteration's tensors go back to the pool when the next overwrites the params: a run of
  // 10,000 iterations allocates no more than a run of 3.
  runtime::VirtualMachine vm(BuildJIT(IRModule::FromMain(LoopProgram(256)), {"y"}));
  const runtime::NDArray x = Random({256}, 9);
  vm.Invoke({x, Int64Scalar(3)});
  const int64_t allocations = vm.PoolAllocations();
  const size_t bytes = vm.PoolBytes();
  std::vector<runtime::NDArray> out = vm.Invoke({x, Int64Scalar(10000)});
  EXPECT_EQ(vm.PoolAllocations(), allocations);
  EXPECT_EQ(vm.PoolBytes(), bytes);
  EXPECT_NEAR(out[0].data<float>()[3], LoopReference(x, 10000)[3], 1e-5f);
}

// LoopProgram with a scan output as the importer writes it: a list carried by the loop (%s), the
// next value pushed in the tail call, stacked after the loop: y = (v_1, ..., v_m) of [m, n].
Function LoopWithScanOutput(int64_t n) {
  Var x = VarNode::make("x", F32({n}));
  const Type i64 = TensorTypeNode::make(std::vector<int64_t>{}, DataType::Int(64));
  const Type list = ListTypeNode::make(F32({n}));
  Var m = VarNode::make("m", i64);
  Var i = VarNode::make("i", i64), v = VarNode::make("v", F32({n})), l = VarNode::make("s", list);
  auto one = runtime::NDArray::Empty({}, DataType::Int(64));
  *one.data<int64_t>() = 1;
  auto zero = runtime::NDArray::Empty({}, DataType::Int(64));
  *zero.data<int64_t>() = 0;
  const Type result = TupleTypeNode::make({F32({n}), list});
  Var loop = VarNode::make("loop", FuncTypeNode::make({i64, F32({n}), list}, result));
  Expr next = Call("add", {Call("tanh", {v}), x});
  Expr body = IfNode::make(Call("less", {i, m}),
                           CallNode::make(loop, {Call("add", {i, ConstantNode::make(one)}), next,
                                                 Call("vm.list_push", {l, next})}),
                           TupleNode::make({v, l}));
  Expr empty = Call("vm.list_new", {}, Attrs{{"dtype", std::string("float32")}, {"shape", std::vector<int64_t>{n}}});
  Expr let = LetNode::make(loop, FunctionNode::make({i, v, l}, body, result),
                           CallNode::make(loop, {ConstantNode::make(zero), x, empty}));
  return FunctionNode::make({x, m}, Call("vm.list_stack", {TupleGetItemNode::make(let, 1)},
                                         Attrs{{"length_symbol", std::string("steps")}}));
}

TEST(VMCodegen, AScanOutputOfALoopIsAListPushedEachIterationAndStackedAfter) {
  IRModule mod = Fused(LoopWithScanOutput(4));
  const std::string listing = Listing(nlohmann::json::parse(VMCodegen(mod, {"y"}).graph_json));
  EXPECT_NE(listing.find("ListNew"), std::string::npos) << listing;
  EXPECT_NE(listing.find("ListPush"), std::string::npos) << listing;
  EXPECT_NE(listing.find("ListStack"), std::string::npos) << listing;
  EXPECT_NE(listing.find("[\"steps\",4]"), std::string::npos) << listing;
  runtime::VirtualMachine vm(BuildJIT(IRModule::FromMain(LoopWithScanOutput(4)), {"y"}));
  const runtime::NDArray x = Random({4}, 3, -1.f, 1.f);
  for (int64_t steps : {0, 1, 5, 300}) {
    std::vector<runtime::NDArray> out = vm.Invoke({x, Int64Scalar(steps)});
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{steps, 4}));
    std::vector<float> v(x.data<float>(), x.data<float>() + 4);
    for (int64_t t = 0; t < steps; ++t) {
      for (int k = 0; k < 4; ++k) {
        v[k] = std::tanh(v[k]) + x.data<float>()[k];
        EXPECT_NEAR(out[0].data<float>()[t * 4 + k], v[k], 1e-5f) << "steps " << steps << " t " << t;
      }
    }
  }
}

// The graph steps that --dump-ir writes read back (graph/parser.h) to the same text (type
// comments aside: some steps dump before InferType): the text format round trips through the
// pipeline's dumps (a program without tensor constants, whose
// dumps need no metadata section; parser_test.cc covers metadata).
TEST(VMCodegen, GraphIRDumpsParseBackToTheSameText) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera_vm_dump_roundtrip";
  std::filesystem::remove_all(dir);
  Var x = VarNode::make("x", F32({4, 8}));
  Var c = VarNode::make("c", Bool());
  auto two = runtime::NDArray::Empty({}, DataType::Float(32));
  *two.data<float>() = 2.f;
  Expr h = Call("nn.relu", {x});
  Expr branch = IfNode::make(c, Call("multiply", {Call("exp", {h}), ConstantNode::make(two)}), Call("negative", {h}));
  BuildOptions o;
  o.dump_ir_dir = dir.string();
  BuildJIT(IRModule::FromMain(FunctionNode::make({x, c}, TupleNode::make({Call("add", {branch, x}), h}))), {"y", "h"}, o);
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  int graph_steps = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().rfind("def @", 0) != 0) continue;  // a TIR, plan or code step
    ++graph_steps;
    const IRModule parsed = ParseModule(text.str(), f.filename().string());
    // A dump taken before InferType has no type comments; the parsed module is typed.
    auto strip = [](std::string t) {
      for (size_t at; (at = t.find(" /* ty=")) != std::string::npos;) t.erase(at, t.find("*/", at) + 2 - at);
      while (!t.empty() && t.back() == '\n') t.pop_back();
      return t;
    };
    EXPECT_EQ(strip(PrintModule(parsed)), strip(text.str())) << f.filename();
  }
  EXPECT_GE(graph_steps, 12);  // InferType ... FuseOps, InferType
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::driver
