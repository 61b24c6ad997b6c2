// GraphExecutor: runs a compiled static graph (TVM's graph executor, arXiv 1802.04799 §3/§5).
//
// The executor reads the module's graph JSON, loads the parameters from its params
// blob, allocates every storage once (the static memory plan the compiler made,
// each storage 64-byte aligned), precomputes each node's `void* args[]` and then
// Run() only calls the kernels in order: no allocation, no lookup per run.
// With more than one thread, the first five runs also calibrate each node's launch mode:
// a small kernel (under 30 us) that runs clearly faster serially keeps its launches on the
// calling thread from then on (ScopedSerialLaunches; same tasks, same results);
// TESSERA_LAUNCH_CALIBRATION=0 turns that off. TESSERA_PROFILE=1 times every node and prints
// the per-kernel times (ms per run, sorted) to stderr when the executor is destroyed.
//
// Graph JSON (symbol __tessera_graph_json), version 1:
//
//   {"format": "tessera-graph", "version": 1,
//    "storages": [{"id": 0, "size_bytes": 4096}, ...],
//    "values": [{"id": 0, "dtype": "float32", "shape": [1, 3, 240, 320],
//                "kind": "input" | "param" | "intermediate",
//                "storage": 0, "offset_bytes": 0,  // input / intermediate: where it lives
//                "alias_of": 5,                     // optional: a zero-copy view of value 5
//                "param": "p3"},                    // param: its name in the params blob
//               ...],
//    "inputs":  [{"name": "input", "value": 0}, ...],
//    "outputs": [{"name": "scores", "value": 7}, ...],
//    "nodes":   [{"name": "fused_conv2d_add_relu_3", "kernel": "fused_conv2d_add_relu_3",
//                 "args": [0, 3, 4],
//                 "checks": ["node 'g' (op Gather, domain ai.onnx, opset 13)"]},  // optional
//               ...],
//    "guards":  [{"input": "sr", "param": "p9"}]}  // optional: inputs specialized at compile time
//
// - storages: byte buffers; several values may share one: values whose lifetimes do not overlap
//   (memory planning), and a value with its aliases ("alias_of": a zero-copy reshape, same
//   storage, offset and bytes; the root is an input or intermediate and no alias itself). offset_bytes must be a multiple of 64 (kernel_abi.h promises aligned
//   pointers) and offset_bytes + bytes(shape, dtype) <= size_bytes.
// - values: every id unique; a param names a tensor of the blob with the same dtype
//   and shape; every "input" value is listed in "inputs" exactly once and every
//   "inputs" entry refers to an "input" value.
// - outputs: any value (also an input or a param); names unique.
// - nodes: run in order; `args` are value ids in the kernel's parameter order
//   (inputs then outputs, kernel_abi.h); names unique; each kernel must exist. `checks` names
//   the model nodes whose run-time checks (indices in range) the kernel makes.
// - guards: inputs the model was specialized for (tessera compile --input-value): Run() first
//   checks that each holds the bytes of its param (same dtype and shape), else throws a UserError
//   naming the input, the value given and the value compiled for.
//
// Zero-copy I/O: BindInput lets the kernels read an input straight from the caller's memory and
// BindOutput lets them write an output straight into the caller's array (both 64-byte aligned,
// kernel_abi.h): every argument that refers to the value or to one of its aliases is repointed,
// so Run() copies nothing. Where that is impossible (misaligned memory; an output that is a
// graph input, a parameter or the same bytes as another output) they return false and the
// caller copies (SetInput / GetOutput).
//
// Profiling: SetProfiling(true) (or TESSERA_PROFILE=1) times every node; Profile() returns the
// per-kernel times, and with the environment variable the table goes to stderr at destruction.
//
// Errors: a malformed or inconsistent graph throws UserError naming the module and
// the offending entry; SetInput/GetOutput with a bad name, dtype or shape throw
// UserError (listing the valid names / the expected vs given type); a kernel that
// returns non-zero makes Run() throw naming the node and kernel: UserError for
// kKernelIndexOutOfRange (an index in the inputs is out of range; it names the model nodes of
// `checks`) and kKernelOutOfMemory, tessera::Error for any other status.
//
// Threads: a GraphExecutor is not thread-safe (one Run / SetInput / GetOutput at a time: it owns
// the storages its kernels write). To run one model from several threads, share one Module (its
// methods only look symbols up; copies share the loaded library) and give each thread its own
// GraphExecutor (or call RunModel, which makes one per call): they share nothing but the library's
// read-only code and data. Kernels' parallel loops use the process-wide thread pool
// (thread_pool.h): one launch at a time gets its workers, a launch from another thread meanwhile
// runs its tasks on its own thread, with the same results. Construct executors with num_threads 0
// while others run (num_threads > 0 resizes the pool, which waits for the running launch).
// tests/runtime/concurrency_test.cc checks this, also under ThreadSanitizer (scripts/test.sh --tsan).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/runtime/executor.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

/// The Executor (executor.h) of "tessera-graph" programs.
class GraphExecutor final : public Executor {
 public:
  /// Builds the executor for `module`'s graph. num_threads > 0 sets the process-wide
  /// thread pool size (SetNumThreads); 0 leaves it unchanged.
  explicit GraphExecutor(Module module, int num_threads = 0);
  ~GraphExecutor() override;
  GraphExecutor(GraphExecutor&&) noexcept;
  GraphExecutor& operator=(GraphExecutor&&) noexcept;

  int NumInputs() const override;
  int NumOutputs() const override;
  const std::string& InputName(int index) const override;
  const std::string& OutputName(int index) const override;
  const std::vector<int64_t>& InputShape(int index) const override;
  const std::vector<int64_t>& OutputShape(int index) const override;
  DataType InputDType(int index) const override;
  DataType OutputDType(int index) const override;
  /// Index of an input / output by name, or -1.
  int InputIndex(const std::string& name) const override;
  int OutputIndex(const std::string& name) const override;

  /// Copies `value` into input `name`'s storage. UserError on an unknown name (the
  /// message lists the inputs) or a dtype / shape differing from the graph's.
  void SetInput(const std::string& name, const NDArray& value) override;
  void SetInput(int index, const NDArray& value) override;

  /// Zero-copy SetInput: until the next SetInput / BindInput of this input, the kernels read it
  /// from `value`'s memory, which the executor keeps alive (a handle) but does not copy; the
  /// caller must not change it during Run(). Returns false, and copies as SetInput does, when
  /// value's data is not 64-byte aligned. UserError as SetInput.
  bool BindInput(int index, const NDArray& value);

  /// Zero-copy GetOutput: the following Run()s write output `index` into `value` (dtype and shape
  /// of the output, 64-byte aligned; UserError on a dtype or shape mismatch) until the next
  /// BindOutput of it; GetOutput then copies from `value`. Returns false, binding nothing, when
  /// value is misaligned or the output cannot be bound (it is a graph input or a parameter, or
  /// shares its bytes with an earlier output): then read it with GetOutput.
  bool BindOutput(int index, const NDArray& value);

  /// Points every bound input and output back at the executor's own storage and drops its
  /// handles to the caller's arrays (the bound inputs must then be set again before a Run()).
  void ReleaseBindings();

  /// Calls every node's kernel in order. tessera::Error naming the node on failure.
  void Run() override;

  /// A fresh copy of output `index` / `name` (UserError when out of range / unknown).
  NDArray GetOutput(int index) const override;
  NDArray GetOutput(const std::string& name) const;

  /// Starts (true: counters reset) or stops timing every node of the following Run()s.
  void SetProfiling(bool on);
  /// One kernel call of the graph with its time.
  struct NodeProfile {
    std::string node;    ///< the node's name in the graph JSON
    std::string kernel;  ///< the kernel (or external function) it calls
    std::string arg_shapes;  ///< the shape of every argument, e.g. "[1, 3, 224, 224][64, 3, 7, 7]..."
    double ms_per_run = 0;   ///< mean wall time per profiled Run(), milliseconds
    bool serial = false;     ///< its parallel loops run on the calling thread (launch calibration)
  };
  /// The nodes' times over the profiled runs, slowest first (empty before a profiled Run()).
  std::vector<NodeProfile> Profile() const;
  /// Number of Run()s that Profile() covers.
  int64_t ProfiledRuns() const;

  /// Number of nodes (kernel calls) per Run().
  int NumNodes() const;
  /// Total bytes of the storages the plan allocated (params excluded).
  size_t StorageBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::runtime
