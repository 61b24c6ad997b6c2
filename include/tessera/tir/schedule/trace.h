// Trace: the record of schedule primitives applied to a PrimFunc (TensorIR §3.4,
// TVM's tir.schedule.Trace). A trace prints as Python-like lines
//
//   b0 = sch.get_block("C")
//   l1, l2, l3 = sch.get_loops(b0)
//   l4, l5 = sch.split(l1, factors=[8, 16])
//   sch.parallel(l4)
//
//   sch.transform_layout(b0, buffer_index=0, is_write_buffer=1, index_map=lambda i, j: (j, i))
//
// serializes to / from JSON, and replays onto a fresh Schedule of an equal PrimFunc.
// An index map is kept as its text (IndexMap::str, index_map.h), printed unquoted.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessera::tir {

class Schedule;

/// A handle to a block of a Schedule's current function (see schedule.h).
struct BlockRV {
  int64_t id = -1;
  bool defined() const { return id >= 0; }
};

/// A handle to a loop of a Schedule's current function (see schedule.h).
struct LoopRV {
  int64_t id = -1;
  bool defined() const { return id >= 0; }
};

/// A handle as an instruction operand: kind ('b' block, 'l' loop) and id.
struct RVRef {
  char kind = 'b';
  int64_t id = -1;
  std::string str() const { return std::string(1, kind) + std::to_string(id); }
  bool operator==(const RVRef&) const = default;
};

/// A literal attribute of an instruction.
using TraceAttr = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

/// One primitive call: `outputs = sch.kind(inputs..., attr_name=attr_value, ...)`.
struct Instruction {
  std::string kind;                                       ///< primitive name, e.g. "split"
  std::vector<RVRef> inputs;                              ///< handles passed in
  std::vector<std::pair<std::string, TraceAttr>> attrs;   ///< literal arguments, in order
  std::vector<RVRef> outputs;                             ///< handles created
  /// The instruction as one Python-like line.
  std::string str() const;
};

class Trace {
 public:
  const std::vector<Instruction>& instructions() const { return insts_; }
  void Append(Instruction inst) { insts_.push_back(std::move(inst)); }
  size_t size() const { return insts_.size(); }

  /// One line per instruction (Instruction::str), each ending in '\n'.
  std::string str() const;
  /// {"instructions": [{"kind": ..., "inputs": ["b0", ...], "attrs": [[name, value], ...],
  ///   "outputs": ["l1", ...]}, ...]} as text.
  std::string ToJSON() const;
  /// Parses ToJSON's output; throws UserError on malformed input.
  static Trace FromJSON(const std::string& json);
  /// Replays every instruction onto `sch` (normally a fresh schedule of a function equal
  /// to the one this trace was recorded on). Handles are mapped from this trace's ids to
  /// the ones `sch` creates. Throws ScheduleError when an instruction is illegal there,
  /// UserError for an unknown instruction kind.
  void ApplyToSchedule(Schedule& sch) const;

 private:
  std::vector<Instruction> insts_;
};

}  // namespace tessera::tir
