// Internal to the runtime: the register dataflow check of a VM executable (vm.h "Validation"),
// run by ParseVMExecutable once the instructions are parsed (registers and jumps in range).
//
// Main and each function (version 3) separately: a forward analysis over the control-flow graph of
// the relative jumps (If, IfTag, Goto; a call returns to the next instruction), per basic block,
// to a fixed point: a register is *assigned* at a point when every path from the entry reaching
// it writes it after its last Kill (main's inputs, a function's params are assigned at entry), and
// *read-only* when some path may leave a param (LoadConst), an input, a function's param, a call's
// result or a list element / ADT field read (ListAt, GetField) in it (directly, moved or reshaped).
// Every read (an InvokePacked / Invoke / InvokeClosure argument, a ReshapeTensor / Move / ShapeOf /
// LoadShape / List* / GetField / IfTag source, an InvokeClosure closure, an AllocClosure capture, an
// AllocADT field, an If condition, a Ret result) must be of an assigned register, and no
// InvokePacked output may be read-only (kernels never write params or the caller's values). Code
// that no path from the entry reaches is not checked.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "tessera/runtime/vm_executable.h"

namespace tessera::runtime {

struct DataflowError {
  std::string where;  ///< "instruction 4 (InvokePacked)" (" of function 'f'"), or "the program" / "function 'f'"
  std::string what;
};

/// The first violation in program order (main's, then each function's), or nullopt when there is none.
std::optional<DataflowError> FindDataflowError(const VMExecutable& exe);

}  // namespace tessera::runtime
