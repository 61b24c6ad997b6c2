// Fuzz target graph_executor: what the runtime's loader parses of an artifact's embedded data —
// the graph JSON and the params blob — through a GraphExecutor built over a symbol table in
// memory (no library): ParseGraphPlan, LoadParams, the storages and their views, the params'
// match with the graph, each node's kernel lookup; then one Run (every kernel a no-op), SetInput
// and GetOutput. Input: the graph JSON, a NUL byte, the params blob (no NUL: the JSON alone).
#include <cstring>
#include <map>

#include "fuzz_target.h"
#include "memory_module.h"
#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/graph_plan.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/runtime/module.h"

namespace {

// Storages the executor would allocate, before it does: bounded so that a plan asking for
// terabytes is not "found" as an out-of-memory crash (a valid plan may ask for that much).
constexpr size_t kMaxStorageBytes = size_t{256} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::runtime;
  auto [json, blob] = tessera::fuzz::SplitAtNul(tessera::fuzz::Bytes(data, size));
  GraphPlan plan;
  if (!tessera::fuzz::AcceptUserErrors([&] { plan = ParseGraphPlan(json, "fuzz"); })) return 0;
  size_t total = 0;
  for (const PlanStorage& s : plan.storages) {
    if (s.size_bytes > kMaxStorageBytes - total) return 0;
    total += s.size_bytes;
  }
  tessera::fuzz::AcceptUserErrors([&] {
    GraphExecutor ex(Module(std::make_shared<tessera::fuzz::MemorySymbols>(std::move(json), std::move(blob)), "fuzz"));
    for (int i = 0; i < ex.NumInputs(); ++i) {
      NDArray in = NDArray::Empty(ex.InputShape(i), ex.InputDType(i));
      std::memset(in.raw_data(), 0, in.NBytes());
      ex.SetInput(i, in);
    }
    ex.Run();
    for (int i = 0; i < ex.NumOutputs(); ++i) ex.GetOutput(ex.OutputName(i));
  });
  return 0;
}
