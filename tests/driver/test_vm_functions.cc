// VM codegen of Relay as a language (arXiv 1904.08368 §3; Relay VM, arXiv 2006.03031 §4): global
// functions that call each other (Invoke), closures (AllocClosure / InvokeClosure), algebraic data
// types (AllocADT) and match (IfTag / GetField). Programs are written in the graph IR's text form
// (graph/parser.h), built end to end (BuildJIT: FuseOps over every function, kernels through LLVM)
// and run by the VirtualMachine against C++ references; the bytecode's shape is checked too.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/driver/build.h"
#include "tessera/driver/vm_codegen.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/parser.h"
#include "tessera/graph/prelude.h"
#include "tessera/graph/transform/fuse_ops.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/vm.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

using graph::IRModule;
using runtime::NDArray;

NDArray Vec4(float a, float b, float c, float d) {
  NDArray x = NDArray::Empty({4}, DataType::Float(32));
  float* p = x.data<float>();
  p[0] = a, p[1] = b, p[2] = c, p[3] = d;
  return x;
}

NDArray Int64(int64_t v) {
  NDArray x = NDArray::Empty({}, DataType::Int(64));
  *x.data<int64_t>() = v;
  return x;
}

/// The VM of the program `text` (the prelude's types come first).
std::unique_ptr<runtime::VirtualMachine> Build(const std::string& text, const std::vector<std::string>& outputs = {"y"}) {
  const IRModule mod = graph::ParseModule(graph::PreludeText() + text, "program.ir");
  runtime::Module module = BuildJIT(mod, outputs);
  EXPECT_EQ(runtime::ProgramFormat(module), "tessera-vm");
  return std::make_unique<runtime::VirtualMachine>(module);
}

/// The VM executable JSON of `text`, after FuseOps.
nlohmann::json Bytecode(const std::string& text) {
  const IRModule mod = graph::ParseModule(graph::PreludeText() + text, "program.ir");
  const IRModule fused = graph::InferType(graph::transform::FuseOps(mod));
  EXPECT_TRUE(HasControlFlow(fused));
  return nlohmann::json::parse(VMCodegen(fused, {"y"}).graph_json);
}

// @build(n, x) = [n x, (n-1) x, ..., x] (recursive, not a loop), @sum folds it recursively.
const std::string kListProgram = R"(
def @build(%n: Tensor[(), int64], %x: Tensor[(4,), float32]) -> List[Tensor[(4,), float32]] {
  if (equal(%n, 0i64)) {
    Nil()
  } else {
    Cons(multiply(%x, cast(%n, dtype="float32")), @build(subtract(%n, 1i64), %x))
  }
}

def @sum(%xs: List[Tensor[(4,), float32]], %zero: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  match (%xs) {
    Cons(%h, %t) => add(%h, @sum(%t, %zero)),
    Nil => %zero,
  }
}
)";

TEST(VMFunctions, GlobalsCompileToVMFunctionsCalledByInvokeAndMatchesToIfTagAndGetField) {
  const auto j = Bytecode(kListProgram + R"(
def @main(%x: Tensor[(4,), float32], %n: Tensor[(), int64]) {
  @sum(@build(%n, %x), multiply(%x, 0f))
}
)");
  EXPECT_EQ(j["version"], 3);
  ASSERT_TRUE(j.contains("functions"));
  std::map<std::string, nlohmann::json> functions;
  for (const auto& f : j["functions"]) functions[f["name"].get<std::string>()] = f;
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions["build"]["num_params"], 2);
  EXPECT_EQ(functions["build"]["num_results"], 1);
  EXPECT_EQ(functions["sum"]["num_params"], 2);
  auto ops = [](const nlohmann::json& code) {
    std::multiset<std::string> out;
    for (const auto& in : code) out.insert(in["op"].get<std::string>());
    return out;
  };
  const auto main_ops = ops(j["instructions"]);
  EXPECT_EQ(main_ops.count("Invoke"), 2u);
  const auto build_ops = ops(functions["build"]["instructions"]);
  EXPECT_EQ(build_ops.count("AllocADT"), 2u);  // Nil and Cons
  EXPECT_EQ(build_ops.count("Invoke"), 1u);    // the recursive call
  const auto sum_ops = ops(functions["sum"]["instructions"]);
  EXPECT_EQ(sum_ops.count("IfTag"), 2u);       // Cons, then Nil
  EXPECT_EQ(sum_ops.count("GetField"), 2u);    // %h and %t
  EXPECT_EQ(sum_ops.count("Fatal"), 1u);       // no clause matched
  // The Cons test reads the list; its fields are read only when it matched.
  for (const auto& in : functions["sum"]["instructions"]) {
    if (in["op"] == "IfTag") {
      EXPECT_EQ(in["src"], 0);
      EXPECT_EQ(in["true_offset"], 1);
      break;
    }
  }
}

TEST(VMFunctions, RecursiveFunctionsOverAListRunInTheVM) {
  auto vm = Build(kListProgram + R"(
def @main(%x: Tensor[(4,), float32], %n: Tensor[(), int64]) {
  @sum(@build(%n, %x), multiply(%x, 0f))
}
)");
  const NDArray x = Vec4(1.f, -2.f, 0.5f, 3.f);
  for (int64_t n : {0, 1, 2, 7, 300}) {
    const std::vector<NDArray> out = vm->Invoke({x, Int64(n)});
    ASSERT_EQ(out.size(), 1u);
    const float k = static_cast<float>(n * (n + 1) / 2);
    for (int i = 0; i < 4; ++i)
      EXPECT_NEAR(out[0].data<float>()[i], x.data<float>()[i] * k, 1e-4f * std::max(1.f, k)) << "n " << n << " i " << i;
  }
}

TEST(VMFunctions, ClosuresCaptureValuesAndArePassedToFunctions) {
  // @map applies a closure to every element; the closure captures %x (scale by x) and %b.
  auto vm = Build(kListProgram + R"(
def @map(%f: fn (Tensor[(4,), float32]) -> Tensor[(4,), float32], %l: List[Tensor[(4,), float32]]) -> List[Tensor[(4,), float32]] {
  match (%l) {
    Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),
    Nil => Nil(),
  }
}

def @main(%x: Tensor[(4,), float32], %n: Tensor[(), int64], %b: Tensor[(4,), float32]) {
  let %scale = fn (%v: Tensor[(4,), float32]) { add(multiply(%v, %x), %b) };
  @sum(@map(%scale, @build(%n, %x)), multiply(%x, 0f))
}
)");
  const NDArray x = Vec4(1.f, 2.f, -1.f, 0.25f), b = Vec4(0.5f, 0.f, 1.f, -2.f);
  for (int64_t n : {0, 3, 50}) {
    const std::vector<NDArray> out = vm->Invoke({x, Int64(n), b});
    const float k = static_cast<float>(n * (n + 1) / 2);
    for (int i = 0; i < 4; ++i) {
      const float xi = x.data<float>()[i], want = xi * xi * k + static_cast<float>(n) * b.data<float>()[i];
      EXPECT_NEAR(out[0].data<float>()[i], want, 1e-4f * std::max(1.f, std::fabs(want))) << "n " << n << " i " << i;
    }
  }
}

TEST(VMFunctions, ALocalFunctionThatRecursesOtherThanInTailPositionIsARecursiveClosure) {
  // fact(n) = n * fact(n - 1): a let-bound function that is no loop (its call is not a tail call).
  const std::string text = R"(
def @main(%n: Tensor[(), int64], %x: Tensor[(4,), float32]) {
  let %fact = fn (%k: Tensor[(), int64]) -> Tensor[(4,), float32] {
    if (equal(%k, 0i64)) { divide(%x, %x) } else { multiply(cast(%k, dtype="float32"), %fact(subtract(%k, 1i64))) }
  };
  %fact(%n)
}
)";
  const auto j = Bytecode(text);
  ASSERT_EQ(j["functions"].size(), 1u);
  EXPECT_EQ(j["functions"][0]["name"], "fact_0");
  EXPECT_EQ(j["functions"][0]["num_params"], 2);  // the captured %x, then %k
  auto vm = Build(text);
  const NDArray x = Vec4(1.f, 2.f, 3.f, 4.f);
  double want = 1;
  for (int64_t n = 0; n <= 10; ++n) {
    if (n > 0) want *= static_cast<double>(n);
    const std::vector<NDArray> out = vm->Invoke({Int64(n), x});
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[0].data<float>()[i], want, 1e-6 * want) << "n " << n;
  }
}

TEST(VMFunctions, MutuallyRecursiveGlobalsAndNestedPatterns) {
  // @even / @odd over a list of bools; main matches an Option of a pair of lists with nested patterns.
  auto vm = Build(R"(
def @even(%l: List[Tensor[(), int64]]) -> Tensor[(), bool] {
  match (%l) {
    Cons(_, %t) => @odd(%t),
    Nil => True,
  }
}

def @odd(%l: List[Tensor[(), int64]]) -> Tensor[(), bool] {
  match (%l) {
    Cons(_, %t) => @even(%t),
    Nil => False,
  }
}

def @ints(%n: Tensor[(), int64]) -> List[Tensor[(), int64]] {
  if (equal(%n, 0i64)) { Nil() } else { Cons(%n, @ints(subtract(%n, 1i64))) }
}

def @main(%n: Tensor[(), int64]) {
  %0 = @ints(%n);
  %1 = if (@even(%0)) { Some((%0, Cons(100i64, Nil()))) } else { None() };
  match (%1) {
    Some((Cons(%first, _), Cons(%hundred, Nil))) => add(%first, %hundred),
    Some((Nil, _)) => -1i64,
    _ => -2i64,
  }
}
)");
  for (int64_t n : {0, 1, 2, 5, 6, 1001}) {
    const std::vector<NDArray> out = vm->Invoke({Int64(n)});
    const int64_t want = n % 2 == 1 ? -2 : n == 0 ? -1 : n + 100;
    EXPECT_EQ(*out[0].data<int64_t>(), want) << "n " << n;
  }
}

TEST(VMFunctions, AMatchNoClauseMatchesStopsTheRunWithAnError) {
  auto vm = Build(R"(
def @main(%n: Tensor[(), int64]) {
  %0 = if (equal(%n, 0i64)) { None() } else { Some(%n) };
  match (%0) {
    Some(%v) => %v,
  }
}
)");
  EXPECT_EQ(*vm->Invoke({Int64(4)})[0].data<int64_t>(), 4);
  try {
    vm->Invoke({Int64(0)});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no clause of a match (of a value of type Option[Tensor[(), int64]])"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(*vm->Invoke({Int64(7)})[0].data<int64_t>(), 7);  // the VM runs again
}

TEST(VMFunctions, UnboundedRecursionIsAUserErrorNotACrash) {
  auto vm = Build(R"(
def @forever(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  add(@forever(%x), %x)
}

def @main(%x: Tensor[(4,), float32]) {
  @forever(%x)
}
)");
  try {
    vm->Invoke({Vec4(1, 2, 3, 4)});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("call depth"), std::string::npos) << e.what();
  }
}

TEST(VMFunctions, ProgramInputsAndOutputsAreTensors) {
  const std::string text = graph::PreludeText() + R"(
def @main(%x: Tensor[(4,), float32]) {
  Cons(%x, Nil())
}
)";
  const IRModule mod = graph::ParseModule(text, "program.ir");
  try {
    BuildJIT(mod, {"y"});
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("output 'y' has the type List[Tensor[(4,), float32]]: a program's outputs are "
                                         "tensors"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::driver
