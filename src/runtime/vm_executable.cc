#include "tessera/runtime/vm_executable.h"

#include <map>
#include <set>

#include "json_fields.h"
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
    {VMOpcode::kListAt, "ListAt"},
};

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

// Reads the fields of one instruction, checking registers and jump targets.
class InstructionReader {
 public:
  InstructionReader(const JsonFields& ctx, const VMExecutable& exe, SymbolTable& symbols, size_t num_instructions)
      : ctx_(ctx), exe_(exe), symbols_(symbols), n_(static_cast<int64_t>(num_instructions)) {}

  VMInstruction Read(const json& j, size_t pc) {
    const std::string at = "instruction " + std::to_string(pc);
    const std::string op = ctx_.String(j, "op", at);
    VMInstruction in;
    bool known = false;
    for (const auto& o : kOpcodes) {
      if (op != o.name) continue;
      in.op = o.op;
      known = true;
    }
    if (!known)
      ctx_.Fail(at, "unknown op \"" + op + "\" (expected LoadConst, AllocTensor, InvokePacked, ReshapeTensor, "
                                            "Move, If, Goto, Kill, Ret, Fatal, ShapeOf, LoadShape, ListNew, ListPush, "
                                            "ListLength, ListStack or ListAt)");
    const std::string where = at + " (" + op + ")";
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
      case VMOpcode::kListStack:
        in.dst = Register(j, "dst", where);
        in.src = Register(j, "src", where);
        in.dtype = ctx_.TensorDType(j, "dtype", where);
        symbols_.Shape(j, "shape", where, in.dtype, in.shape, in.dim_symbols);
        if (in.dim_symbols.empty() || in.dim_symbols[0] < 0)
          ctx_.Fail(where, "the stacked shape's first dim must be a symbol (ListStack binds it to the list's length)");
        break;
      case VMOpcode::kRet:
        in.regs = Registers(j, "results", where);
        if (in.regs.size() != exe_.outputs.size())
          ctx_.Fail(where, "returns " + std::to_string(in.regs.size()) + " results but the program has " +
                               std::to_string(exe_.outputs.size()) + " outputs");
        break;
    }
    return in;
  }

 private:
  int RegisterValue(const json& v, const char* key, const std::string& where) const {
    const int64_t r = ctx_.IntValue(v, where, key);
    if (r < 0 || r >= exe_.num_registers)
      ctx_.Fail(where, "register " + std::to_string(r) + " of \"" + key + "\" is out of range: the program has " +
                           std::to_string(exe_.num_registers) + " registers (num_registers)");
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
  // A relative jump from `pc` that lands inside the program and is no jump to itself.
  int64_t Offset(const json& j, const char* key, int64_t pc, const std::string& where) const {
    const int64_t offset = ctx_.Int(j, key, where);
    if (offset < -pc || offset >= n_ - pc)
      ctx_.Fail(where, std::string("\"") + key + "\" " + std::to_string(offset) + " jumps outside the program (to " +
                           (offset < -pc ? "before instruction 0" : "past its last instruction, " +
                                                                        std::to_string(n_ - 1)) + ")");
    if (offset == 0)
      ctx_.Fail(where, std::string("\"") + key + "\" 0 jumps to the instruction itself (a loop forever)");
    return offset;
  }

  const JsonFields& ctx_;
  const VMExecutable& exe_;
  SymbolTable& symbols_;
  int64_t n_;
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
// shape, by a LoadShape or as a ListStack's first dim (vm.h "Shapes"). Which path binds it is checked
// at run time.
void CheckSymbolsBound(const JsonFields& ctx, const VMExecutable& exe) {
  std::vector<uint8_t> bound(exe.symbols.size(), 0);
  for (const VMTensorInfo& t : exe.inputs)
    for (int s : t.dim_symbols)
      if (s >= 0) bound[s] = 1;
  for (const VMInstruction& in : exe.instructions) {
    if (in.op == VMOpcode::kLoadShape)
      for (int s : in.symbols) bound[s] = 1;
    if (in.op == VMOpcode::kListStack) bound[in.dim_symbols[0]] = 1;
  }
  auto check = [&](const std::vector<int>& used, const std::string& where) {
    for (int s : used)
      if (s >= 0 && !bound[s])
        ctx.Fail(where, "symbol '" + exe.symbols[s] + "' is bound nowhere: no input's shape names it and no "
                        "LoadShape binds it");
  };
  for (size_t k = 0; k < exe.outputs.size(); ++k) check(exe.outputs[k].dim_symbols, Entry("outputs", k));
  for (size_t pc = 0; pc < exe.instructions.size(); ++pc) {
    const VMInstruction& in = exe.instructions[pc];
    if (in.op == VMOpcode::kAllocTensor || in.op == VMOpcode::kReshapeTensor || in.op == VMOpcode::kListStack)
      check(in.dim_symbols, DescribeInstruction(exe, pc));
    if (in.op == VMOpcode::kInvokePacked) check(in.symbols, DescribeInstruction(exe, pc));
  }
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

std::string DescribeInstruction(const VMExecutable& exe, size_t pc) {
  return "instruction " + std::to_string(pc) + " (" +
         (pc < exe.instructions.size() ? VMOpcodeName(exe.instructions[pc].op) : "none") + ")";
}

VMExecutable ParseVMExecutable(std::string_view text, const std::string& origin) {
  const JsonFields ctx(origin, "VM executable",
                       "The executable and the library do not match or the library is corrupt; rebuild the model");
  const json root = ctx.ParseRoot(text, "tessera-vm", 2);

  VMExecutable exe;
  SymbolTable symbols(ctx, exe.symbols);
  const int64_t registers = ctx.Int(root, "num_registers", "the root");
  exe.inputs = ParseTensors(ctx, root, "inputs", symbols, exe.symbols);
  exe.outputs = ParseTensors(ctx, root, "outputs", symbols, exe.symbols);
  if (registers < static_cast<int64_t>(exe.inputs.size()) || registers > kMaxVMRegisters)
    ctx.Fail("\"num_registers\"", std::to_string(registers) + " must be in [" + std::to_string(exe.inputs.size()) +
                                      ", " + std::to_string(kMaxVMRegisters) +
                                      "] (input i is register i; at most 2^20 registers)");
  exe.num_registers = static_cast<int>(registers);

  const json& code = ctx.Array(root, "instructions", "the root");
  if (code.empty()) ctx.Fail("\"instructions\"", "the program has no instructions (it must end with a Ret)");
  InstructionReader reader(ctx, exe, symbols, code.size());
  for (size_t pc = 0; pc < code.size(); ++pc) exe.instructions.push_back(reader.Read(code[pc], pc));
  const size_t last = exe.instructions.size() - 1;
  const VMOpcode end = exe.instructions[last].op;
  if (end != VMOpcode::kRet && end != VMOpcode::kGoto && end != VMOpcode::kFatal)
    ctx.Fail(DescribeInstruction(exe, last), "the program can run past its last instruction: it must end with a Ret, "
                                             "a Fatal or a Goto");

  std::vector<std::string> input_names;
  for (const VMTensorInfo& in : exe.inputs) input_names.push_back(in.name);
  for (auto& [input, param] : ReadGuards(ctx, root, input_names, "program")) exe.guards.push_back({input, param});
  CheckSymbolsBound(ctx, exe);
  if (auto error = FindDataflowError(exe)) ctx.Fail(error->where, error->what);
  return exe;
}

}  // namespace tessera::runtime
