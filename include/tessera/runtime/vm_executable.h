// The parsed and validated VM executable JSON (vm.h documents the format and its validation):
// what VirtualMachine builds itself from. Kernels and params are checked against the module by
// the VirtualMachine; everything else here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/data_type.h"

namespace tessera::runtime {

enum class VMOpcode {
  kLoadConst, kAllocTensor, kInvokePacked, kReshapeTensor, kMove, kIf, kGoto, kKill, kRet, kFatal, kShapeOf, kLoadShape,
  kListNew, kListPush, kListLength, kListStack, kListAt,
  // Version 3 (vm.h "Functions, closures and ADTs").
  kInvoke, kInvokeClosure, kAllocClosure, kAllocADT, kGetField, kIfTag,
  // Version 4 (vm.h "Builtins").
  kCallBuiltin
};

/// Whether `op` needs version 3 (a function call, a closure or an ADT instruction).
bool IsVersion3Opcode(VMOpcode op);
/// The lowest executable version that may hold `op`: 1, 3 (function calls, closures, ADTs) or 4
/// (CallBuiltin). Version 2 adds no instruction of its own, only symbols in shapes.
int MinVersionOf(VMOpcode op);

/// The JSON "op" of `op`: "LoadConst", "InvokePacked", ...
const char* VMOpcodeName(VMOpcode op);

/// Shapes (vm.h "Shapes"): `shape` holds one extent per dim, kDynamicDim for a symbolic one, and
/// `dim_symbols` (as long as `shape`, or empty when every dim is static) the index of each dim's
/// symbol in VMExecutable::symbols, -1 for a static dim.
inline constexpr int64_t kDynamicDim = -1;

/// One instruction; the fields its op does not use keep their defaults. Every register is in
/// [0, num_registers) of the function holding it and every jump target inside that function.
struct VMInstruction {
  VMOpcode op = VMOpcode::kRet;
  int dst = -1;   ///< LoadConst, AllocTensor, ReshapeTensor, Move, ShapeOf, List*, AllocClosure, AllocADT,
                  ///< GetField: the register written
  int src = -1;   ///< ReshapeTensor, Move, ShapeOf, LoadShape, ListPush / ListLength / ListStack, GetField,
                  ///< IfTag: the register read; InvokeClosure: the closure ("closure")
  int value = -1; ///< ListPush: the tensor appended; ListAt: the position (an integer scalar tensor)
  int cond = -1;  ///< If: the condition register
  std::string name;             ///< LoadConst: the param; InvokePacked: the kernel; Fatal: the message;
                                ///< CallBuiltin: the builtin (runtime/vm_builtins.h)
  DataType dtype;               ///< AllocTensor, ListStack, CallBuiltin
  std::vector<int64_t> shape;   ///< AllocTensor, ReshapeTensor, ListStack, CallBuiltin (kDynamicDim for a symbolic dim)
  std::vector<int> dim_symbols; ///< AllocTensor, ReshapeTensor, ListStack, CallBuiltin: per dim, its symbol or -1
                                ///< (empty: static)
  std::map<std::string, std::string> attrs;  ///< CallBuiltin: the builtin's attributes
  std::vector<int> regs;        ///< InvokePacked, Invoke, InvokeClosure, CallBuiltin: args; Kill: the registers dropped;
                                ///< Ret: results; AllocClosure: captured; AllocADT: fields
  std::vector<int> dsts;        ///< Invoke, InvokeClosure: the registers the results go to (distinct)
  int func = -1;                ///< Invoke, AllocClosure: the function, an index into VMExecutable::functions
  int64_t tag = -1;             ///< AllocADT: the constructor tag; IfTag: the tag tested (both >= 0)
  int64_t index = -1;           ///< GetField: the field read (>= 0)
  int num_outputs = 0;          ///< InvokePacked: the last num_outputs args are written
  std::vector<std::string> checks;  ///< InvokePacked: the model nodes whose run-time checks it makes
  /// InvokePacked "shape_args": the symbols whose values the kernel gets in args[regs.size()];
  /// LoadShape "symbols": the symbols it binds, in order. Indices into VMExecutable::symbols.
  std::vector<int> symbols;
  int64_t offset = 0;        ///< Goto: pc += offset; If / IfTag: pc += offset when the condition holds
  int64_t false_offset = 0;  ///< If / IfTag: pc += false_offset otherwise
};

/// A function of a version-3 executable ("functions"[k]; vm.h "Functions, closures and ADTs"): it
/// runs in a frame of its own with num_registers registers, its params in registers
/// 0..num_params-1 at entry; each Ret returns num_results values.
struct VMFunction {
  std::string name;  ///< unique among the functions, non-empty
  int num_params = 0;
  int num_results = 0;
  int num_registers = 0;  ///< in [num_params, kMaxVMRegisters]
  std::vector<VMInstruction> instructions;  ///< non-empty; the last one is a Ret, a Fatal or a Goto
};

/// The function index that stands for main (the top-level program) where a function is named.
inline constexpr int kMainFunction = -1;

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
  int version = 1;        ///< the executable's "version": 1, 2, 3 or 4
  int num_registers = 0;  ///< main's: at least inputs.size(); input i is register i at entry
  std::vector<VMTensorInfo> inputs, outputs;
  std::vector<VMInstruction> instructions;  ///< main's
  std::vector<VMGuard> guards;
  std::vector<VMFunction> functions;  ///< version 3 "functions" (main is not one of them)
  /// Every symbol the program names (in inputs, outputs and instructions), in order of first
  /// appearance; instructions and shapes refer to them by index.
  std::vector<std::string> symbols;

  /// The instructions / registers of function `func` (kMainFunction: main's).
  const std::vector<VMInstruction>& Code(int func) const {
    return func == kMainFunction ? instructions : functions[func].instructions;
  }
  int NumRegisters(int func) const { return func == kMainFunction ? num_registers : functions[func].num_registers; }
};

/// Whether `name` is a valid symbol name: non-empty, letters, digits and _ . : - only.
bool IsValidSymbolName(const std::string& name);

/// The most registers main or a function may declare.
inline constexpr int kMaxVMRegisters = 1 << 20;

/// "instruction 3 (InvokePacked)": how messages name instruction `pc` of main.
std::string DescribeInstruction(const VMExecutable& exe, size_t pc);
/// "instruction 3 (GetField) of function 'sum'": instruction `pc` of function `func` (kMainFunction:
/// as the overload above).
std::string DescribeInstruction(const VMExecutable& exe, int func, size_t pc);
/// "the program" (main) or "function 'sum'", for messages.
std::string DescribeFunction(const VMExecutable& exe, int func);

/// Parses and validates a "tessera-vm" executable (vm.h). `origin` names the module in errors.
/// Throws UserError, never anything else, whatever the text.
VMExecutable ParseVMExecutable(std::string_view json, const std::string& origin);

}  // namespace tessera::runtime
