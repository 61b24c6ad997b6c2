// Executor: what runs a compiled model, whichever program it holds. A static dataflow program is
// a graph (GraphExecutor, graph_executor.h: one static memory plan, kernels called in order); a
// program with control flow is bytecode (VirtualMachine, vm.h). One `tessera compile` writes one
// or the other into the library's __tessera_graph_json (its "format": "tessera-graph" or
// "tessera-vm"), and MakeExecutor picks the executor from it. Callers that only set inputs, run and
// read outputs (RunModel, `tessera run`, the RPC server, Python) go through this interface.
//
// Symbolic dims (vm.h "Shapes"): a VM program's input or output may have dims whose extent is a
// symbol bound at run time (Relay's Any). InputShape / OutputShape give -1 for such a dim and
// InputDimNames / OutputDimNames its symbol's name ("" for a static dim; a graph program's dims are
// all static). A caller checking an array against an input checks the rank and the static dims
// only (ShapeAccepts) and leaves the symbols to the executor: SetInput checks the same, Run binds
// the symbols across inputs (a symbol used by two inputs must have one extent: UserError).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/data_type.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

class Executor {
 public:
  virtual ~Executor() = default;

  virtual int NumInputs() const = 0;
  virtual int NumOutputs() const = 0;
  virtual const std::string& InputName(int index) const = 0;
  virtual const std::string& OutputName(int index) const = 0;
  /// The input's / output's shape: -1 for a symbolic dim.
  virtual const std::vector<int64_t>& InputShape(int index) const = 0;
  virtual const std::vector<int64_t>& OutputShape(int index) const = 0;
  /// One string per dim of InputShape / OutputShape: the symbol's name for a symbolic dim, "" for a
  /// static one. The default: every dim static (a graph program).
  virtual std::vector<std::string> InputDimNames(int index) const;
  virtual std::vector<std::string> OutputDimNames(int index) const;
  virtual DataType InputDType(int index) const = 0;
  virtual DataType OutputDType(int index) const = 0;
  /// Index of an input / output by name, or -1.
  virtual int InputIndex(const std::string& name) const = 0;
  virtual int OutputIndex(const std::string& name) const = 0;

  /// Sets input `name` / `index` for the following Run()s. UserError on an unknown name (the
  /// message lists the inputs), an index out of range, or a dtype / shape other than the input's
  /// (another rank or another extent of a static dim; a symbolic dim takes any extent).
  virtual void SetInput(const std::string& name, const NDArray& value) = 0;
  virtual void SetInput(int index, const NDArray& value) = 0;
  /// Runs the program once. tessera::Error naming the failing kernel (graph_executor.h, vm.h).
  virtual void Run() = 0;
  /// A fresh copy of output `index` of the last Run() (UserError when out of range).
  virtual NDArray GetOutput(int index) const = 0;

 protected:
  Executor() = default;
  Executor(const Executor&) = default;
  Executor& operator=(const Executor&) = default;
};

/// Whether an array of shape `given` fits `expected` (an InputShape): the same rank and the same
/// extent in every dim that is not -1 (symbolic).
bool ShapeAccepts(const std::vector<int64_t>& expected, const std::vector<int64_t>& given);
/// "[seq, 4]": `shape` with each dim that has a name in `dim_names` shown as its name (as
/// ShapeToString when `dim_names` is empty or all "").
std::string ShapeToString(const std::vector<int64_t>& shape, const std::vector<std::string>& dim_names);

/// The program's "format" in `module`'s __tessera_graph_json: "tessera-graph" or "tessera-vm".
/// UserError naming the module when it has no such JSON, the JSON does not parse, or its format
/// is missing or neither. Reads only the format: the executor validates the rest.
std::string ProgramFormat(const Module& module);
/// The same for the program's JSON text (read from a file without loading it: artifact_file.h);
/// `origin` names it in errors.
std::string ProgramFormat(std::string_view json, const std::string& origin);

/// A GraphExecutor or a VirtualMachine for `module`, by ProgramFormat. num_threads as their
/// constructors'. Throws what they throw on a malformed program.
std::unique_ptr<Executor> MakeExecutor(Module module, int num_threads = 0);

}  // namespace tessera::runtime
