// Internal to the runtime: the register dataflow check of a VM executable (vm.h "Validation"),
// run by ParseVMExecutable once the instructions are parsed (registers and jumps in range).
//
// A forward analysis over the control-flow graph of the relative jumps, per basic block, to a
// fixed point: a register is *assigned* at a point when every path from the entry reaching it
// writes it after its last Kill (inputs are assigned at entry), and *read-only* when some path
// leaves a param (LoadConst) or an input in it (directly, moved or reshaped). Every read (an
// InvokePacked argument, a ReshapeTensor / Move / ShapeOf / LoadShape source, an If condition, a
// Ret result) must be of an assigned register, and no InvokePacked output may be read-only (kernels
// never write params or the caller's inputs). Code that no path from the entry reaches is not checked.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "tessera/runtime/vm_executable.h"

namespace tessera::runtime {

struct DataflowError {
  std::string where;  ///< "instruction 4 (InvokePacked)", or "the program"
  std::string what;
};

/// The first violation in program order, or nullopt when there is none.
std::optional<DataflowError> FindDataflowError(const VMExecutable& exe);

}  // namespace tessera::runtime
