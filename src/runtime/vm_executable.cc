#include "tessera/runtime/vm_executable.h"

#include <algorithm>
#include <map>
#include <set>

#include "json_fields.h"
#include "tessera/runtime/vm_builtins.h"
#include "tessera/support/error.h"
#include "vm_dataflow.h"

namespace tessera::runtime {
namespace {

using json = nlohmann::json;

constexpr struct {
  VMOpcode op;
  const char* name;
} kOpcodes[] = {
    {VMOpcode::kLoadConst, "LoadConst"},   {VMOpcode::kAllocTensor, "AllocTensor"},
    {VMOpcode::kInvokePacked, "InvokePacked"}, {VMOpcode::kReshapeTensor, "ReshapeTensor"},
    {VMOpcode::kMove, "Move"},             {VMOpcode::kIf, "If"},
    {VMOpcode::kGoto, "Goto"},             {VMOpcode::kKill, "Kill"},
    {VMOpcode::kRet, "Ret"},               {VMOpcode::kFatal, "Fatal"},
    {VMOpcode::kShapeOf, "ShapeOf"},       {VMOpcode::kLoadShape, "LoadShape"},
    {VMOpcode::kListNew, "ListNew"},       {VMOpcode::kListPush, "ListPush"},
    {VMOpcode::kListLength, "ListLength"}, {VMOpcode::kListStack, "ListStack"},
    {VMOpcode::kListAt, "ListAt"},         {VMOpcode::kInvoke, "Invoke"},
    {VMOpcode::kInvokeClosure, "InvokeClosure"}, {VMOpcode::kAllocClosure, "AllocClosure"},
    {VMOpcode::kAllocADT, "AllocADT"},     {VMOpcode::kGetField, "GetField"},
    {VMOpcode::kIfTag, "IfTag"},           {VMOpcode::kCallBuiltin, "CallBuiltin"},
};

// " of function 'sum'", or "" for main: what follows an instruction's name in messages.
std::string FunctionSuffix(const VMExecutable& exe, int func) {
  return func == kMainFunction ? std::string() : " of function '" + exe.functions[func].name + "'";
}

// The symbols of an executable: names interned into VMExecutable::symbols.
class SymbolTable {
 public:
  SymbolTable(const JsonFields& ctx, std::vector<std::string>& symbols) : ctx_(ctx), symbols_(symbols) {}

  // The index of symbol `v` (a JSON string), checking its name; `what` says where it stands.
  int Intern(const json& v, const std::string& where, const std::string& what) {
    if (!v.is_string()) ctx_.Fail(where, what + " must be a symbol name (a string)");
    const std::string name = v.get<std::string>();
    if (!IsValidSymbolName(name))
      ctx_.Fail(where, what + " \"" + name + "\" is no valid symbol name (non-empty; letters, digits, _ . : - only)");
    auto [it, added] = index_.emplace(name, static_cast<int>(symbols_.size()));
    if (added) symbols_.push_back(name);
    return it->second;
  }
  std::vector<int> InternAll(const json& obj, const char* key, const std::string& where) {
    std::vector<int> out;
    const json& arr = ctx_.Array(obj, key, where);
    for (size_t i = 0; i < arr.size(); ++i)
      out.push_back(Intern(arr[i], where, std::string("\"") + key + "\"[" + std::to_string(i) + "]"));
    return out;
  }

  // A shape (vm.h "Shapes"): extents >= 0 and symbol names. Fails when its static part (symbols
  // counted as 1) is too large for `dtype`.
  void Shape(const json& obj, const char* key, const std::string& where, DataType dtype, std::vector<int64_t>& shape,
             std::vector<int>& dim_symbols) {
    shape.clear();
    dim_symbols.clear();
    bool symbolic = false;
    std::vector<int64_t> static_part;
    for (const json& d : ctx_.Array(obj, key, where)) {
      if (d.is_string()) {
        dim_symbols.push_back(Intern(d, where, "dim " + std::to_string(shape.size()) + " of \"" + key + "\""));
        shape.push_back(kDynamicDim);
        static_part.push_back(1);
        symbolic = true;
        continue;
      }
      const int64_t extent = ctx_.IntValue(d, where, key);
      if (extent < 0) ctx_.Fail(where, std::string("negative extent in ") + key);
      shape.push_back(extent);
      static_part.push_back(extent);
      dim_symbols.push_back(-1);
    }
    if (!symbolic) dim_symbols.clear();
    ctx_.NBytes(static_part, dtype, where);
  }

 private:
  const JsonFields& ctx_;
  std::vector<std::string>& symbols_;
  std::map<std::string, int> index_;
};

// Reads the fields of one instruction of function `func` (kMainFunction: main), checking registers,
// jump targets, function indices and counts. The function headers are read before any instruction.
class InstructionReader {
 public:
  InstructionReader(const JsonFields& ctx, const VMExecutable& exe, SymbolTable& symbols, int func,
                    size_t num_instructions)
      : ctx_(ctx), exe_(exe), symbols_(symbols), func_(func), n_(static_cast<int64_t>(num_instructions)),
        unit_(DescribeFunction(exe, func)), suffix_(FunctionSuffix(exe, func)) {}

  VMInstruction Read(const json& j, size_t pc) {
    const std::string at = "instruction " + std::to_string(pc);
    const std::string op = ctx_.String(j, "op", at + suffix_);
    VMInstruction in;
    bool known = false;
    for (const auto& o : kOpcodes) {
      if (op != o.name) continue;
      in.op = o.op;
      known = true;
    }
    if (!known)
      ctx_.Fail(at + suffix_, "unknown op \"" + op + "\" (expected LoadConst, AllocTensor, InvokePacked, "
                              "ReshapeTensor, Move, If, Goto, Kill, Ret, Fatal, ShapeOf, LoadShape, ListNew, ListPush, "
                              "ListLength, ListStack, ListAt, Invoke, InvokeClosure, AllocClosure, AllocADT, GetField, "
                              "IfTag or CallBuiltin)");
    const std::string where = at + " (" + op + ")" + suffix_;
    if (const int needed = MinVersionOf(in.op); exe_.version < needed)
      ctx_.Fail(where, op + " needs version " + std::to_string(needed) + " (this executable declares version " +
                           std::to_string(exe_.version) + ")");
    const int64_t here = static_cast<int64_t>(pc);
    switch (in.op) {
      case VMOpcode::kLoadConst:
        in.dst = Register(j, "dst", where);
        in.name = ctx_.String(j, "param", where);
        break;
      case VMOpcode::kAllocTensor:
        in.dst = Register(j, "dst", where);
        in.dtype = ctx_.TensorDType(j, "dtype", where);
        symbols_.Shape(j, "shape", where, in.dtype, in.shape, in.dim_symbols);
        break;
      case VMOpcode::kInvokePacked: {
        in.name = ctx_.String(j, "kernel", where);
        in.regs = Registers(j, "args", where);
        const int64_t outputs = ctx_.Int(j, "num_outputs", where);
        if (outputs < 0 || outputs > static_cast<int64_t>(in.regs.size()))
          ctx_.Fail(where, "num_outputs " + std::to_string(outputs) + " must be in [0, " +
                               std::to_string(in.regs.size()) + "] (the number of args)");
        in.num_outputs = static_cast<int>(outputs);
        if (j.contains("checks")) in.checks = ctx_.Strings(j, "checks", where);
        if (j.contains("shape_args")) in.symbols = symbols_.InternAll(j, "shape_args", where);
        break;
      }
      case VMOpcode::kReshapeTensor:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        symbols_.Shape(j, "shape", where, DataType::UInt(8), in.shape, in.dim_symbols);  // the element count fits
        break;
      case VMOpcode::kMove:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        break;
      case VMOpcode::kIf:
        in.cond = Register(j, "cond", where);
        in.offset = Offset(j, "true_offset", here, where);
        in.false_offset = Offset(j, "false_offset", here, where);
        break;
      case VMOpcode::kGoto: in.offset = Offset(j, "offset", here, where); break;
      case VMOpcode::kKill: in.regs = Registers(j, "regs", where); break;
      case VMOpcode::kFatal: in.name = ctx_.String(j, "message", where); break;
      case VMOpcode::kShapeOf:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        break;
      case VMOpcode::kLoadShape: {
        in.src = Register(j, "src", where);
        in.symbols = symbols_.InternAll(j, "symbols", where);
        std::set<int> seen;
        for (int s : in.symbols)
          if (!seen.insert(s).second) ctx_.Fail(where, "symbol '" + exe_.symbols[s] + "' appears twice in \"symbols\"");
        break;
      }
      case VMOpcode::kListNew: in.dst = Register(j, "dst", where); break;
      case VMOpcode::kListPush:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        in.value = Register(j, "value", where);
        break;
      case VMOpcode::kListLength:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        break;
      case VMOpcode::kListAt:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        in.value = Register(j, "index", where);
        break;
      case VMOpcode::kCallBuiltin: ReadCallBuiltin(j, where, in); break;
      case VMOpcode::kListStack:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        in.dtype = ctx_.TensorDType(j, "dtype", where);
        symbols_.Shape(j, "shape", where, in.dtype, in.shape, in.dim_symbols);
        if (in.dim_symbols.empty() || in.dim_symbols[0] < 0)
          ctx_.Fail(where, "the stacked shape's first dim must be a symbol (ListStack binds it to the list's length)");
        break;
      case VMOpcode::kRet: {
        in.regs = Registers(j, "results", where);
        const size_t expected = func_ == kMainFunction ? exe_.outputs.size()
                                                       : static_cast<size_t>(exe_.functions[func_].num_results);
        if (in.regs.size() != expected)
          ctx_.Fail(where, "returns " + std::to_string(in.regs.size()) + " results but " + unit_ + " has " +
                               std::to_string(expected) +
                               (func_ == kMainFunction ? " outputs" : " results (num_results)"));
        break;
      }
      case VMOpcode::kInvoke: {
        in.func = Function(j, where);
        const VMFunction& callee = exe_.functions[in.func];
        in.regs = Registers(j, "args", where);
        in.dsts = Destinations(j, where);
        Count(in.regs.size(), callee.num_params, "passes", "args", "params (num_params)", callee, where);
        Count(in.dsts.size(), callee.num_results, "takes", "results in \"dst\"", "results (num_results)", callee, where);
        break;
      }
      case VMOpcode::kInvokeClosure:
        in.src = Register(j, "closure", where);
        in.regs = Registers(j, "args", where);
        in.dsts = Destinations(j, where);
        break;
      case VMOpcode::kAllocClosure: {
        in.dst = Register(j, "dst", where);
        in.func = Function(j, where);
        in.regs = Registers(j, "captured", where);
        const VMFunction& callee = exe_.functions[in.func];
        if (in.regs.size() > static_cast<size_t>(callee.num_params))
          ctx_.Fail(where, "captures " + std::to_string(in.regs.size()) + " values but function '" + callee.name +
                               "' takes " + std::to_string(callee.num_params) + " params (num_params)");
        break;
      }
      case VMOpcode::kAllocADT:
        in.dst = Register(j, "dst", where);
        in.tag = NonNegative(j, "tag", where);
        in.regs = Registers(j, "fields", where);
        break;
      case VMOpcode::kGetField:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        in.index = NonNegative(j, "index", where);
        break;
      case VMOpcode::kIfTag:
        in.src = Register(j, "src", where);
        in.tag = NonNegative(j, "tag", where);
        in.offset = Offset(j, "true_offset", here, where);
        in.false_offset = Offset(j, "false_offset", here, where);
        break;
    }
    return in;
  }

 private:
  // CallBuiltin: a known builtin, its number of args, exactly its attributes (strings, checked by
  // the builtin), and the result's dtype and shape (whose symbols it binds).
  void ReadCallBuiltin(const json& j, const std::string& where, VMInstruction& in) {
    in.dst = Register(j, "dst", where);
    in.name = ctx_.String(j, "name", where);
    const VMBuiltin* builtin = FindVMBuiltin(in.name);
    if (!builtin) {
      std::string known;
      for (const std::string& n : VMBuiltinNames()) known += (known.empty() ? "" : ", ") + n;
      ctx_.Fail(where, "unknown builtin \"" + in.name + "\" (this runtime has: " + known + ")");
    }
    in.regs = Registers(j, "args", where);
    if (in.regs.size() != static_cast<size_t>(builtin->num_args))
      ctx_.Fail(where, "builtin " + in.name + " takes " + std::to_string(builtin->num_args) + " args, got " +
                           std::to_string(in.regs.size()));
    const json& attrs = ctx_.Field(j, "attrs", where);
    if (!attrs.is_object()) ctx_.Fail(where, "\"attrs\" must be an object of strings");
    for (const auto& [key, value] : attrs.items()) {
      if (!value.is_string()) ctx_.Fail(where, "attr \"" + key + "\" must be a string");
      if (std::find(builtin->attrs.begin(), builtin->attrs.end(), key) == builtin->attrs.end())
        ctx_.Fail(where, "builtin " + in.name + " has no attr \"" + key + "\"");
      in.attrs[key] = value.get<std::string>();
    }
    for (const std::string& key : builtin->attrs)
      if (!in.attrs.count(key)) ctx_.Fail(where, "builtin " + in.name + " needs attr \"" + key + "\"");
    try {
      builtin->check_attrs(in.attrs);
    } catch (const UserError& e) {
      ctx_.Fail(where, e.what());
    }
    in.dtype = ctx_.TensorDType(j, "dtype", where);
    symbols_.Shape(j, "shape", where, in.dtype, in.shape, in.dim_symbols);
  }

  int RegisterValue(const json& v, const char* key, const std::string& where) const {
    const int64_t r = ctx_.IntValue(v, where, key);
    const int registers = exe_.NumRegisters(func_);
    if (r < 0 || r >= registers)
      ctx_.Fail(where, "register " + std::to_string(r) + " of \"" + key + "\" is out of range: " + unit_ + " has " +
                           std::to_string(registers) + " registers (num_registers)");
    return static_cast<int>(r);
  }
  int Register(const json& j, const char* key, const std::string& where) const {
    return RegisterValue(ctx_.Field(j, key, where), key, where);
  }
  std::vector<int> Registers(const json& j, const char* key, const std::string& where) const {
    std::vector<int> regs;
    for (const json& r : ctx_.Array(j, key, where)) regs.push_back(RegisterValue(r, key, where));
    return regs;
  }
  // Invoke / InvokeClosure "dst": distinct registers.
  std::vector<int> Destinations(const json& j, const std::string& where) const {
    std::vector<int> dsts = Registers(j, "dst", where);
    std::set<int> seen;
    for (int r : dsts)
      if (!seen.insert(r).second) ctx_.Fail(where, "register " + std::to_string(r) + " appears twice in \"dst\"");
    return dsts;
  }
  // "func": an index into "functions".
  int Function(const json& j, const std::string& where) const {
    const int64_t k = ctx_.Int(j, "func", where);
    if (k < 0 || k >= static_cast<int64_t>(exe_.functions.size()))
      ctx_.Fail(where, "\"func\" " + std::to_string(k) + " is out of range: the executable has " +
                           std::to_string(exe_.functions.size()) + " functions");
    return static_cast<int>(k);
  }
  int64_t NonNegative(const json& j, const char* key, const std::string& where) const {
    const int64_t v = ctx_.Int(j, key, where);
    if (v < 0) ctx_.Fail(where, std::string("\"") + key + "\" " + std::to_string(v) + " must be >= 0");
    return v;
  }
  // Invoke: as many args / dst registers as the callee's params / results.
  void Count(size_t given, int expected, const char* verb, const char* what, const char* callee_what,
             const VMFunction& callee, const std::string& where) const {
    if (given != static_cast<size_t>(expected))
      ctx_.Fail(where, std::string(verb) + " " + std::to_string(given) + " " + what + " but function '" +
                           callee.name + "' has " + std::to_string(expected) + " " + callee_what);
  }
  // A relative jump from `pc` that lands inside the function and is no jump to itself.
  int64_t Offset(const json& j, const char* key, int64_t pc, const std::string& where) const {
    const int64_t offset = ctx_.Int(j, key, where);
    if (offset < -pc || offset >= n_ - pc)
      ctx_.Fail(where, std::string("\"") + key + "\" " + std::to_string(offset) + " jumps outside " + unit_ +
                           " (to " +
                           (offset < -pc ? "before instruction 0" : "past its last instruction, " +
                                                                        std::to_string(n_ - 1)) + ")");
    if (offset == 0)
      ctx_.Fail(where, std::string("\"") + key + "\" 0 jumps to the instruction itself (a loop forever)");
    return offset;
  }

  const JsonFields& ctx_;
  const VMExecutable& exe_;
  SymbolTable& symbols_;
  int func_;
  int64_t n_;
  std::string unit_, suffix_;
};

std::vector<VMTensorInfo> ParseTensors(const JsonFields& ctx, const json& root, const char* list, SymbolTable& symbols,
                                       const std::vector<std::string>& names_of_symbols) {
  std::vector<VMTensorInfo> out;
  std::set<std::string> names;
  const json& arr = ctx.Array(root, list, "the root");
  for (size_t i = 0; i < arr.size(); ++i) {
    const std::string where = Entry(list, i);
    VMTensorInfo t;
    t.name = ctx.String(arr[i], "name", where);
    t.dtype = ctx.TensorDType(arr[i], "dtype", where);
    symbols.Shape(arr[i], "shape", where, t.dtype, t.shape, t.dim_symbols);
    t.dim_names.assign(t.shape.size(), "");
    for (size_t d = 0; d < t.dim_symbols.size(); ++d)
      if (t.dim_symbols[d] >= 0) t.dim_names[d] = names_of_symbols[t.dim_symbols[d]];
    if (!names.insert(t.name).second) ctx.Fail(where, "duplicate name \"" + t.name + "\"");
    out.push_back(std::move(t));
  }
  return out;
}

// Every symbol a shape, a shape_args list or an output uses must be bound somewhere: by an input's
// shape, by a LoadShape or as a ListStack's first dim, in main or in any function (symbols are
// global to a run; vm.h "Shapes"). Which path binds it is checked at run time.
void CheckSymbolsBound(const JsonFields& ctx, const VMExecutable& exe) {
  std::vector<uint8_t> bound(exe.symbols.size(), 0);
  for (const VMTensorInfo& t : exe.inputs)
    for (int s : t.dim_symbols)
      if (s >= 0) bound[s] = 1;
  const int num_functions = static_cast<int>(exe.functions.size());
  for (int func = kMainFunction; func < num_functions; ++func)
    for (const VMInstruction& in : exe.Code(func)) {
      if (in.op == VMOpcode::kLoadShape)
        for (int s : in.symbols) bound[s] = 1;
      if (in.op == VMOpcode::kListStack) bound[in.dim_symbols[0]] = 1;
      if (in.op == VMOpcode::kCallBuiltin)
        for (int s : in.dim_symbols)
          if (s >= 0) bound[s] = 1;
    }
  auto check = [&](const std::vector<int>& used, const std::string& where) {
    for (int s : used)
      if (s >= 0 && !bound[s])
        ctx.Fail(where, "symbol '" + exe.symbols[s] + "' is bound nowhere: no input's shape names it and no "
                        "LoadShape binds it");
  };
  for (size_t k = 0; k < exe.outputs.size(); ++k) check(exe.outputs[k].dim_symbols, Entry("outputs", k));
  for (int func = kMainFunction; func < num_functions; ++func) {
    const std::vector<VMInstruction>& code = exe.Code(func);
    for (size_t pc = 0; pc < code.size(); ++pc) {
      const VMInstruction& in = code[pc];
      if (in.op == VMOpcode::kAllocTensor || in.op == VMOpcode::kReshapeTensor || in.op == VMOpcode::kListStack)
        check(in.dim_symbols, DescribeInstruction(exe, func, pc));
      if (in.op == VMOpcode::kInvokePacked) check(in.symbols, DescribeInstruction(exe, func, pc));
    }
  }
}

// The headers of the version-3 "functions" (name, counts; their instructions are read after every
// header, so that a call can check its callee's counts).
void ReadFunctionHeaders(const JsonFields& ctx, const json& functions, VMExecutable& exe) {
  std::set<std::string> names;
  for (size_t k = 0; k < functions.size(); ++k) {
    const std::string where = Entry("functions", k);
    VMFunction f;
    f.name = ctx.String(functions[k], "name", where);
    if (f.name.empty()) ctx.Fail(where, "a function's \"name\" must be non-empty");
    if (!names.insert(f.name).second) ctx.Fail(where, "duplicate function name \"" + f.name + "\"");
    const std::string in_f = where + " ('" + f.name + "')";
    const int64_t registers = ctx.Int(functions[k], "num_registers", in_f);
    const int64_t params = ctx.Int(functions[k], "num_params", in_f);
    const int64_t results = ctx.Int(functions[k], "num_results", in_f);
    if (params < 0 || params > kMaxVMRegisters) ctx.Fail(in_f, "num_params " + std::to_string(params) + " must be in [0, 2^20]");
    if (results < 0 || results > kMaxVMRegisters)
      ctx.Fail(in_f, "num_results " + std::to_string(results) + " must be in [0, 2^20]");
    if (registers < params || registers > kMaxVMRegisters)
      ctx.Fail(in_f, "num_registers " + std::to_string(registers) + " must be in [" + std::to_string(params) + ", " +
                         std::to_string(kMaxVMRegisters) + "] (param i is register i; at most 2^20 registers)");
    f.num_params = static_cast<int>(params);
    f.num_results = static_cast<int>(results);
    f.num_registers = static_cast<int>(registers);
    exe.functions.push_back(std::move(f));
  }
}

// The instructions of function `func` (kMainFunction: main), from the JSON array `code`: at least
// one, and the last one cannot fall through.
std::vector<VMInstruction> ReadCode(const JsonFields& ctx, const json& code, const std::string& where,
                                    VMExecutable& exe, SymbolTable& symbols, int func) {
  const std::string unit = DescribeFunction(exe, func);
  if (code.empty()) ctx.Fail(where, unit + " has no instructions (it must end with a Ret)");
  InstructionReader reader(ctx, exe, symbols, func, code.size());
  std::vector<VMInstruction> out;
  for (size_t pc = 0; pc < code.size(); ++pc) out.push_back(reader.Read(code[pc], pc));
  const VMOpcode end = out.back().op;
  if (end != VMOpcode::kRet && end != VMOpcode::kGoto && end != VMOpcode::kFatal)
    ctx.Fail("instruction " + std::to_string(out.size() - 1) + " (" + VMOpcodeName(end) + ")" +
                 FunctionSuffix(exe, func),
             unit + " can run past its last instruction: it must end with a Ret, a Fatal or a Goto");
  return out;
}

}  // namespace

bool IsValidSymbolName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

const char* VMOpcodeName(VMOpcode op) {
  for (const auto& o : kOpcodes)
    if (o.op == op) return o.name;
  return "?";
}

int MinVersionOf(VMOpcode op) {
  if (op == VMOpcode::kCallBuiltin) return 4;
  return IsVersion3Opcode(op) ? 3 : 1;
}

bool IsVersion3Opcode(VMOpcode op) {
  switch (op) {
    case VMOpcode::kInvoke:
    case VMOpcode::kInvokeClosure:
    case VMOpcode::kAllocClosure:
    case VMOpcode::kAllocADT:
    case VMOpcode::kGetField:
    case VMOpcode::kIfTag: return true;
    default: return false;
  }
}

std::string DescribeInstruction(const VMExecutable& exe, size_t pc) {
  return DescribeInstruction(exe, kMainFunction, pc);
}

std::string DescribeInstruction(const VMExecutable& exe, int func, size_t pc) {
  const std::vector<VMInstruction>& code = exe.Code(func);
  return "instruction " + std::to_string(pc) + " (" + (pc < code.size() ? VMOpcodeName(code[pc].op) : "none") + ")" +
         FunctionSuffix(exe, func);
}

std::string DescribeFunction(const VMExecutable& exe, int func) {
  return func == kMainFunction ? std::string("the program") : "function '" + exe.functions[func].name + "'";
}

VMExecutable ParseVMExecutable(std::string_view text, const std::string& origin) {
  const JsonFields ctx(origin, "VM executable",
                       "The executable and the library do not match or the library is corrupt; rebuild the model");
  const json root = ctx.ParseRoot(text, "tessera-vm", 4);

  VMExecutable exe;
  exe.version = static_cast<int>(ctx.Int(root, "version", "the root"));
  SymbolTable symbols(ctx, exe.symbols);
  const int64_t registers = ctx.Int(root, "num_registers", "the root");
  exe.inputs = ParseTensors(ctx, root, "inputs", symbols, exe.symbols);
  exe.outputs = ParseTensors(ctx, root, "outputs", symbols, exe.symbols);
  if (registers < static_cast<int64_t>(exe.inputs.size()) || registers > kMaxVMRegisters)
    ctx.Fail("\"num_registers\"", std::to_string(registers) + " must be in [" + std::to_string(exe.inputs.size()) +
                                      ", " + std::to_string(kMaxVMRegisters) +
                                      "] (input i is register i; at most 2^20 registers)");
  exe.num_registers = static_cast<int>(registers);

  const json* functions = nullptr;
  if (root.contains("functions")) {
    if (exe.version < 3)
      ctx.Fail("\"functions\"", "functions need version 3 (this executable declares version " +
                                     std::to_string(exe.version) + ")");
    functions = &ctx.Array(root, "functions", "the root");
    ReadFunctionHeaders(ctx, *functions, exe);
  }
  exe.instructions = ReadCode(ctx, ctx.Array(root, "instructions", "the root"), "\"instructions\"", exe, symbols,
                              kMainFunction);
  for (size_t k = 0; functions && k < functions->size(); ++k) {
    const std::string where = Entry("functions", k) + " ('" + exe.functions[k].name + "')";
    exe.functions[k].instructions =
        ReadCode(ctx, ctx.Array((*functions)[k], "instructions", where), where, exe, symbols, static_cast<int>(k));
  }

  std::vector<std::string> input_names;
  for (const VMTensorInfo& in : exe.inputs) input_names.push_back(in.name);
  for (auto& [input, param] : ReadGuards(ctx, root, input_names, "program")) exe.guards.push_back({input, param});
  CheckSymbolsBound(ctx, exe);
  if (auto error = FindDataflowError(exe)) ctx.Fail(error->where, error->what);
  return exe;
}

}  // namespace tessera::runtime
