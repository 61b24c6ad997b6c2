#include "vm_dataflow.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace tessera::runtime {
namespace {

// Bound on the analysis state (two bits per register per basic block), in 64-bit words: 128 MiB.
constexpr size_t kMaxStateWords = size_t{1} << 24;

// The register sets at one point of the program: `assigned` (on every path) and `read_only` (on
// some path), one bit per register.
struct State {
  std::vector<uint64_t> assigned, read_only;

  static bool Test(const std::vector<uint64_t>& s, int r) { return (s[r >> 6] >> (r & 63)) & 1; }
  static void Put(std::vector<uint64_t>& s, int r, bool on) {
    const uint64_t bit = uint64_t{1} << (r & 63);
    s[r >> 6] = on ? s[r >> 6] | bit : s[r >> 6] & ~bit;
  }
  void Write(int r, bool ro) {
    Put(assigned, r, true);
    Put(read_only, r, ro);
  }
  // Merges `other` (a path's state) into this one; true when this one changed.
  bool Meet(const State& other) {
    bool changed = false;
    for (size_t w = 0; w < assigned.size(); ++w) {
      const uint64_t a = assigned[w] & other.assigned[w], ro = read_only[w] | other.read_only[w];
      changed = changed || a != assigned[w] || ro != read_only[w];
      assigned[w] = a;
      read_only[w] = ro;
    }
    return changed;
  }
};

// What instruction `in` does to the state.
void Apply(const VMInstruction& in, State& s) {
  switch (in.op) {
    case VMOpcode::kLoadConst: s.Write(in.dst, true); break;
    case VMOpcode::kAllocTensor:
    case VMOpcode::kShapeOf:
    case VMOpcode::kListNew:
    case VMOpcode::kListPush:
    case VMOpcode::kListLength:
    case VMOpcode::kListStack:
    case VMOpcode::kCallBuiltin: s.Write(in.dst, false); break;
    case VMOpcode::kAllocClosure:
    case VMOpcode::kAllocADT: s.Write(in.dst, false); break;
    // An element may be an input or a param pushed: as read-only as a Move of it. So may a field
    // or a function's result.
    case VMOpcode::kListAt:
    case VMOpcode::kGetField: s.Write(in.dst, true); break;
    case VMOpcode::kInvoke:
    case VMOpcode::kInvokeClosure:
      for (int r : in.dsts) s.Write(r, true);
      break;
    case VMOpcode::kReshapeTensor:
    case VMOpcode::kMove: s.Write(in.dst, State::Test(s.read_only, in.src)); break;
    case VMOpcode::kKill:
      for (int r : in.regs) {
        State::Put(s.assigned, r, false);
        State::Put(s.read_only, r, false);
      }
      break;
    default: break;
  }
}

// The first problem of instruction `in` in state `s` (before it runs), or "".
std::string Check(const VMInstruction& in, const State& s) {
  auto unassigned = [&](int r) -> std::string {
    if (State::Test(s.assigned, r)) return "";
    return "reads register " + std::to_string(r) +
           ", which is not written on every path reaching it (read before any instruction writes it, or after a "
           "Kill)";
  };
  auto all_assigned = [&](const std::vector<int>& regs) -> std::string {
    for (int r : regs)
      if (std::string e = unassigned(r); !e.empty()) return e;
    return "";
  };
  switch (in.op) {
    case VMOpcode::kInvokePacked:
      for (size_t k = 0; k < in.regs.size(); ++k) {
        if (std::string e = unassigned(in.regs[k]); !e.empty()) return e;
        if (k + static_cast<size_t>(in.num_outputs) >= in.regs.size() && State::Test(s.read_only, in.regs[k]))
          return "kernel '" + in.name + "' writes register " + std::to_string(in.regs[k]) +
                 ", which may hold a param or an input: kernels write only tensors of AllocTensor";
      }
      return "";
    case VMOpcode::kReshapeTensor:
    case VMOpcode::kMove:
    case VMOpcode::kShapeOf:
    case VMOpcode::kLoadShape:
    case VMOpcode::kListLength:
    case VMOpcode::kListStack:
    case VMOpcode::kGetField:
    case VMOpcode::kIfTag: return unassigned(in.src);
    case VMOpcode::kListPush:
    case VMOpcode::kListAt:
      if (std::string e = unassigned(in.src); !e.empty()) return e;
      return unassigned(in.value);
    case VMOpcode::kIf: return unassigned(in.cond);
    case VMOpcode::kCallBuiltin: return all_assigned(in.regs);
    case VMOpcode::kInvokeClosure:
      if (std::string e = unassigned(in.src); !e.empty()) return e;
      return all_assigned(in.regs);
    case VMOpcode::kRet:
    case VMOpcode::kInvoke:
    case VMOpcode::kAllocClosure:
    case VMOpcode::kAllocADT: return all_assigned(in.regs);
    default: return "";
  }
}

bool IsJump(VMOpcode op) { return op == VMOpcode::kIf || op == VMOpcode::kIfTag; }

// The first violation of function `func` (kMainFunction: main), in program order.
std::optional<DataflowError> FindDataflowError(const VMExecutable& exe, int func) {
  const auto& code = exe.Code(func);
  const int num_registers = exe.NumRegisters(func);
  // Registers assigned (and read-only: the caller's values) at entry: main's inputs, a function's params.
  const size_t entry_values =
      func == kMainFunction ? exe.inputs.size() : static_cast<size_t>(exe.functions[func].num_params);
  const int64_t n = static_cast<int64_t>(code.size());
  if (n == 0) return std::nullopt;
  // Basic blocks: they start at 0, at every jump target and after every jump or Ret.
  std::vector<uint8_t> leader(n + 1, 0);
  leader[0] = 1;
  for (int64_t pc = 0; pc < n; ++pc) {
    const VMInstruction& in = code[pc];
    if (IsJump(in.op)) leader[pc + in.offset] = leader[pc + in.false_offset] = 1;
    if (in.op == VMOpcode::kGoto) leader[pc + in.offset] = 1;
    if (IsJump(in.op) || in.op == VMOpcode::kGoto || in.op == VMOpcode::kRet || in.op == VMOpcode::kFatal)
      leader[pc + 1] = 1;
  }
  std::vector<int64_t> starts;      // block b covers [starts[b], starts[b + 1])
  std::vector<int> block_at(n, -1);  // the block starting at pc
  for (int64_t pc = 0; pc < n; ++pc)
    if (leader[pc]) {
      block_at[pc] = static_cast<int>(starts.size());
      starts.push_back(pc);
    }
  starts.push_back(n);
  const size_t num_blocks = starts.size() - 1;
  const size_t words = (static_cast<size_t>(num_registers) + 63) / 64;
  if (words > 0 && num_blocks > kMaxStateWords / (2 * words))
    return DataflowError{DescribeFunction(exe, func), std::to_string(num_blocks) + " basic blocks of " +
                                                          std::to_string(num_registers) +
                                                          " registers are too many to validate"};

  // The successors of block b (by the jumps of its last instruction).
  auto successors = [&](size_t b) {
    const int64_t last = starts[b + 1] - 1;
    const VMInstruction& in = code[last];
    std::vector<int> out;
    if (IsJump(in.op)) out = {block_at[last + in.offset], block_at[last + in.false_offset]};
    else if (in.op == VMOpcode::kGoto) out = {block_at[last + in.offset]};
    else if (in.op != VMOpcode::kRet && in.op != VMOpcode::kFatal)
      out = {block_at[last + 1]};  // the last instruction is a Ret, Fatal or Goto
    return out;
  };

  // Entry states, to a fixed point: `assigned` only shrinks and `read_only` only grows.
  std::vector<State> entry(num_blocks);
  std::vector<uint8_t> reached(num_blocks, 0), queued(num_blocks, 0);
  entry[0] = {std::vector<uint64_t>(words, 0), std::vector<uint64_t>(words, 0)};
  for (size_t i = 0; i < entry_values; ++i) entry[0].Write(static_cast<int>(i), true);
  reached[0] = queued[0] = 1;
  std::deque<size_t> work{0};
  while (!work.empty()) {
    const size_t b = work.front();
    work.pop_front();
    queued[b] = 0;
    State s = entry[b];
    for (int64_t pc = starts[b]; pc < starts[b + 1]; ++pc) Apply(code[pc], s);
    for (int next : successors(b)) {
      bool changed = true;
      if (!reached[next]) {
        entry[next] = s;
        reached[next] = 1;
      } else {
        changed = entry[next].Meet(s);
      }
      if (changed && !queued[next]) {
        queued[next] = 1;
        work.push_back(static_cast<size_t>(next));
      }
    }
  }

  for (size_t b = 0; b < num_blocks; ++b) {
    if (!reached[b]) continue;
    State s = entry[b];
    for (int64_t pc = starts[b]; pc < starts[b + 1]; ++pc) {
      if (std::string what = Check(code[pc], s); !what.empty())
        return DataflowError{DescribeInstruction(exe, func, static_cast<size_t>(pc)), what};
      Apply(code[pc], s);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<DataflowError> FindDataflowError(const VMExecutable& exe) {
  const int num_functions = static_cast<int>(exe.functions.size());
  for (int func = kMainFunction; func < num_functions; ++func)
    if (auto error = FindDataflowError(exe, func)) return error;
  return std::nullopt;
}

}  // namespace tessera::runtime
