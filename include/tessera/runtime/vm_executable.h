// The parsed and validated VM executable JSON (vm.h documents the format and its validation):
// what VirtualMachine builds itself from. Kernels and params are checked against the module by
// the VirtualMachine; everything else here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/data_type.h"

namespace tessera::runtime {

enum class VMOpcode {
  kLoadConst, kAllocTensor, kInvokePacked, kReshapeTensor, kMove, kIf, kGoto, kKill, kRet, kFatal, kShapeOf, kLoadShape,
  kListNew, kListPush, kListLength, kListStack, kListAt
};

/// The JSON "op" of `op`: "LoadConst", "InvokePacked", ...
const char* VMOpcodeName(VMOpcode op);

/// Shapes (vm.h "Shapes"): `shape` holds one extent per dim, kDynamicDim for a symbolic one, and
/// `dim_symbols` (as long as `shape`, or empty when every dim is static) the index of each dim's
/// symbol in VMExecutable::symbols, -1 for a static dim.
inline constexpr int64_t kDynamicDim = -1;

/// One instruction; the fields its op does not use keep their defaults. Every register is in
/// [0, num_registers) and every jump target inside the program.
struct VMInstruction {
  VMOpcode op = VMOpcode::kRet;
  int dst = -1;   ///< LoadConst, AllocTensor, ReshapeTensor, Move, ShapeOf, List*: the register written
  int src = -1;   ///< ReshapeTensor, Move, ShapeOf, LoadShape, ListPush / ListLength / ListStack: the register read
  int value = -1; ///< ListPush: the tensor appended; ListAt: the position (an integer scalar tensor)
  int cond = -1;  ///< If: the condition register
  std::string name;             ///< LoadConst: the param; InvokePacked: the kernel; Fatal: the message
  DataType dtype;               ///< AllocTensor, ListStack
  std::vector<int64_t> shape;   ///< AllocTensor, ReshapeTensor, ListStack (kDynamicDim for a symbolic dim)
  std::vector<int> dim_symbols; ///< AllocTensor, ReshapeTensor, ListStack: per dim, its symbol or -1 (empty: static)
  std::vector<int> regs;        ///< InvokePacked: args; Kill: the registers dropped; Ret: results
  int num_outputs = 0;          ///< InvokePacked: the last num_outputs args are written
  std::vector<std::string> checks;  ///< InvokePacked: the model nodes whose run-time checks it makes
  /// InvokePacked "shape_args": the symbols whose values the kernel gets in args[regs.size()];
  /// LoadShape "symbols": the symbols it binds, in order. Indices into VMExecutable::symbols.
  std::vector<int> symbols;
  int64_t offset = 0;        ///< Goto: pc += offset; If: pc += offset when the condition holds
  int64_t false_offset = 0;  ///< If: pc += false_offset otherwise
};

/// A program input or output: its name and type.
struct VMTensorInfo {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;            ///< kDynamicDim for a symbolic dim
  std::vector<int> dim_symbols;          ///< per dim, its symbol or -1 (empty: every dim static)
  std::vector<std::string> dim_names;    ///< per dim, its symbol's name or "" (as long as shape)
};

/// An input the model was specialized for (optional "guards", as the graph executor's).
struct VMGuard {
  int input = -1;     ///< index into VMExecutable::inputs
  std::string param;  ///< the params-blob tensor holding the value
};

struct VMExecutable {
  int num_registers = 0;  ///< at least inputs.size(); input i is register i at entry
  std::vector<VMTensorInfo> inputs, outputs;
  std::vector<VMInstruction> instructions;
  std::vector<VMGuard> guards;
  /// Every symbol the program names (in inputs, outputs and instructions), in order of first
  /// appearance; instructions and shapes refer to them by index.
  std::vector<std::string> symbols;
};

/// Whether `name` is a valid symbol name: non-empty, letters, digits and _ . : - only.
bool IsValidSymbolName(const std::string& name);

/// The most registers an executable may declare.
inline constexpr int kMaxVMRegisters = 1 << 20;

/// "instruction 3 (InvokePacked)": how messages name instruction `pc`.
std::string DescribeInstruction(const VMExecutable& exe, size_t pc);

/// Parses and validates a "tessera-vm" executable (vm.h). `origin` names the module in errors.
/// Throws UserError, never anything else, whatever the text.
VMExecutable ParseVMExecutable(std::string_view json, const std::string& origin);

}  // namespace tessera::runtime
