// VM codegen: see include/tessera/driver/vm_codegen.h.
#include "tessera/driver/vm_codegen.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "primitive_call.h"
#include "tessera/graph/expr_util.h"
#include "tessera/graph/functor.h"
#include "tessera/support/checked_math.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

using graph::Expr;
using graph::ExprNode;
using nlohmann::json;

/// A value in registers: a tensor's register, or a tuple's fields.
struct RegValue {
  int reg = -1;
  std::vector<RegValue> fields;
};

/// Structured code: a plain instruction, an If with its two blocks, or a loop (a block that runs
/// again at each kContinue in it and ends at a kBreak).
struct Item;
using Block = std::vector<Item>;
struct Item {
  enum Kind { kPlain, kIf, kLoop, kBreak, kContinue };
  Kind kind = kPlain;
  json instr;                    // kPlain
  std::vector<int> reads, writes;
  int cond = -1;                 // kIf: the condition register (with tag >= 0: the ADT tested)
  int tag = -1;                  // kIf: >= 0 for an IfTag (cond holds an ADT of that constructor tag)
  Block then_block, else_block;  // kIf
  Block body;                    // kLoop
};

Item Plain(json instr, std::vector<int> reads, std::vector<int> writes) {
  Item it;
  it.instr = std::move(instr);
  it.reads = std::move(reads);
  it.writes = std::move(writes);
  return it;
}

Item ItemOf(Item::Kind kind) {
  Item it;
  it.kind = kind;
  return it;
}

Item KillItem(const std::set<int>& regs) {
  return Plain({{"op", "Kill"}, {"regs", std::vector<int>(regs.begin(), regs.end())}}, {}, {});
}

/// The registers live where a loop's kBreak goes (after the loop) and at its start (where a
/// kContinue goes), innermost loop last.
struct LoopLiveness {
  std::set<int> after, head;
};

/// Inserts a Kill after the last use of every register on every path through `block`, given the
/// registers live after it; returns the registers live before it. A loop's registers live at its
/// start are found by iterating to a fixpoint (a register read in a later iteration stays live
/// through the whole body).
std::set<int> InsertKills(Block& block, std::set<int> live, std::vector<LoopLiveness>& loops) {
  Block out;
  for (auto it = block.rbegin(); it != block.rend(); ++it) {
    Item& item = *it;
    switch (item.kind) {
      case Item::kBreak: live = loops.back().after; break;
      case Item::kContinue: live = loops.back().head; break;
      case Item::kLoop: {
        std::set<int> head;
        for (;;) {
          Block trial = item.body;
          loops.push_back({live, head});
          std::set<int> h = InsertKills(trial, {}, loops);
          loops.pop_back();
          if (h == head) break;
          head = std::move(h);
        }
        loops.push_back({live, head});
        InsertKills(item.body, {}, loops);
        loops.pop_back();
        live = std::move(head);
        break;
      }
      case Item::kPlain: {
        if (item.instr["op"] == "Ret") {  // the run ends: nothing to kill after it
          live.insert(item.reads.begin(), item.reads.end());
          break;
        }
        std::set<int> dead;
        for (int r : item.reads) if (!live.count(r)) dead.insert(r);
        for (int r : item.writes) if (!live.count(r)) dead.insert(r);
        if (!dead.empty()) out.push_back(KillItem(dead));
        for (int r : item.writes) live.erase(r);
        for (int r : item.reads) live.insert(r);
        break;
      }
      case Item::kIf: {
        const std::set<int> live_then = InsertKills(item.then_block, live, loops);
        const std::set<int> live_else = InsertKills(item.else_block, live, loops);
        std::set<int> live_in = live_then;
        live_in.insert(live_else.begin(), live_else.end());
        live_in.insert(item.cond);
        for (auto [blk, live_b] : {std::pair{&item.then_block, &live_then}, std::pair{&item.else_block, &live_else}}) {
          std::set<int> dead;
          for (int r : live_in) if (!live_b->count(r)) dead.insert(r);
          if (!dead.empty()) blk->insert(blk->begin(), KillItem(dead));
        }
        live = std::move(live_in);
        break;
      }
    }
    out.push_back(std::move(item));
  }
  std::reverse(out.begin(), out.end());
  block = std::move(out);
  return live;
}

json GotoTo(size_t from, size_t to) {
  return {{"op", "Goto"}, {"offset", static_cast<int64_t>(to) - static_cast<int64_t>(from)}};
}

/// Appends `block` to `code` with each If's and loop's relative offsets (`loops`: the start and
/// the kBreak positions of each enclosing loop, innermost last).
void Flatten(const Block& block, json& code, std::vector<std::pair<size_t, std::vector<size_t>>>& loops) {
  for (const Item& item : block) {
    switch (item.kind) {
      case Item::kPlain: code.push_back(item.instr); break;
      case Item::kBreak:
        loops.back().second.push_back(code.size());
        code.push_back(json{});
        break;
      case Item::kContinue: code.push_back(GotoTo(code.size(), loops.back().first)); break;
      case Item::kLoop: {
        loops.push_back({code.size(), {}});
        Flatten(item.body, code, loops);
        for (size_t at : loops.back().second) code[at] = GotoTo(at, code.size());
        loops.pop_back();
        break;
      }
      case Item::kIf: {
        const size_t at_if = code.size();
        code.push_back(json{});
        Flatten(item.then_block, code, loops);
        const size_t at_goto = code.size();
        code.push_back(json{});
        const size_t else_start = code.size();
        Flatten(item.else_block, code, loops);
        const auto false_offset = static_cast<int64_t>(else_start - at_if);
        code[at_if] = item.tag >= 0 ? json{{"op", "IfTag"}, {"src", item.cond}, {"tag", item.tag}, {"true_offset", 1},
                                           {"false_offset", false_offset}}
                                    : json{{"op", "If"}, {"cond", item.cond}, {"true_offset", 1},
                                           {"false_offset", false_offset}};
        code[at_goto] = GotoTo(at_goto, code.size());
        break;
      }
    }
  }
}

/// The nodes `root` needs whatever branch an If in it takes: reachable without entering a branch.
std::unordered_set<const ExprNode*> NeededOutsideBranches(const Expr& root) {
  std::unordered_set<const ExprNode*> needed;
  std::vector<const ExprNode*> stack{root.get()};
  while (!stack.empty()) {
    const ExprNode* e = stack.back();
    stack.pop_back();
    if (!needed.insert(e).second) continue;
    if (const auto* c = e->as<graph::CallNode>()) {
      for (const auto& a : c->args) stack.push_back(a.get());
    } else if (const auto* t = e->as<graph::TupleNode>()) {
      for (const auto& f : t->fields) stack.push_back(f.get());
    } else if (const auto* g = e->as<graph::TupleGetItemNode>()) {
      stack.push_back(g->tuple.get());
    } else if (const auto* i = e->as<graph::IfNode>()) {
      stack.push_back(i->cond.get());
    } else if (const auto* m = e->as<graph::MatchNode>()) {
      stack.push_back(m->data.get());  // each clause runs only when it matches
    } else if (const auto* l = e->as<graph::LetNode>()) {
      stack.push_back(l->body.get());  // a let-bound function's body runs where it is called
    }
  }
  return needed;
}

/// A tensor type's shape as VM JSON: an integer per static dim, the symbol's name per symbolic one
/// (runtime/vm.h). UnsupportedError naming `what` for an extent no type relation computed ("?").
json ShapeJson(const graph::Type& type, const std::string& what) {
  const auto* tt = type ? type->as<graph::TensorTypeNode>() : nullptr;
  TESSERA_ICHECK(tt != nullptr, what, " is not a tensor (type ", type ? type->str() : "<none>", ")");
  json shape = json::array();
  for (const graph::Dim& d : tt->shape) {
    if (d.is_static()) {
      shape.push_back(d.value());
      continue;
    }
    if (d.name() == "?")
      TESSERA_THROW(UnsupportedError, what, " has the shape ", graph::ShapeStr(tt->shape),
                    ": an extent that no type relation could compute ('?') needs a shape function, which this op "
                    "does not have yet; bind the input dims at import (--input-shape NAME=D0,D1,...)");
    shape.push_back(d.name());
  }
  return shape;
}

/// Whether some "shape" of `infos` (inputs / outputs JSON) names a symbol.
bool HasSymbols(const json& infos) {
  for (const auto& info : infos)
    for (const auto& d : info["shape"])
      if (d.is_string()) return true;
  return false;
}

/// The symbolic dims of a primitive function's kernel, in the order of its shape_vars (first
/// appearance over the params' shapes, then the outputs': te::create_prim_func's order, as
/// graph_lower names each symbolic dim's extent after the dim).
std::vector<std::string> KernelShapeSymbols(const graph::FunctionNode& fn, const graph::Type& result) {
  std::vector<std::string> out;
  std::function<void(const graph::Type&)> visit = [&](const graph::Type& t) {
    if (!t) return;
    if (const auto* tt = t->as<graph::TensorTypeNode>()) {
      for (const graph::Dim& d : tt->shape)
        if (d.is_symbolic() && std::find(out.begin(), out.end(), d.name()) == out.end()) out.push_back(d.name());
    } else if (const auto* tup = t->as<graph::TupleTypeNode>()) {
      for (const auto& f : tup->fields) visit(f);
    }
  };
  for (const auto& p : fn.params) visit(p->checked_type());
  visit(result);
  return out;
}

/// The call of an op whose name starts with `prefix` that is `fn`'s whole body, its arguments fn's
/// params (FuseOps gives each opaque VM op its own function over params), or nullptr.
const graph::CallNode* OpCallOverParams(const graph::FunctionNode* fn, const std::string& prefix) {
  const auto* c = fn->body->as<graph::CallNode>();
  const auto* op = c ? c->op->as<graph::OpNode>() : nullptr;
  if (!op || op->name.rfind(prefix, 0) != 0) return nullptr;
  for (const auto& a : c->args)
    if (!a->as<graph::VarNode>()) return nullptr;
  return c;
}

/// The register of `operand`, a param of `fn`, given the registers of fn's arguments in order.
int ParamRegister(const graph::FunctionNode& fn, const std::vector<int>& args, const graph::Expr& operand) {
  for (size_t p = 0; p < fn.params.size(); ++p)
    if (fn.params[p].get() == operand.get()) return args[p];
  TESSERA_THROW(InternalError, "VM codegen: an operand of a VM op is no param of its primitive function");
}

/// The call of a VM op whose output's symbolic dims are the values of a shape operand, its last, that is
/// `fn`'s whole body, or nullptr: graph/op/vm.cc's data-dependent-shape ops, the vm.* ops with attr
/// "symbols" (vm.reshape, vm.full, vm.reduce, vm.broadcast_to, vm.tile, vm.slice, vm.pad, vm.range,
/// vm.resize, vm.nonzero).
const graph::CallNode* ShapeFromValues(const graph::FunctionNode* fn) {
  const graph::CallNode* c = OpCallOverParams(fn, "vm.");
  return c && c->attrs.Has("symbols") ? c : nullptr;
}

/// The vm.list_* call that is `fn`'s whole body (a list instruction of the VM, no kernel), or nullptr.
const graph::CallNode* ListCall(const graph::FunctionNode* fn) { return OpCallOverParams(fn, "vm.list_"); }

/// The vm.fatal call that is `fn`'s whole body (FuseOps gives the opaque op its own function), or nullptr.
const graph::CallNode* FatalCall(const graph::FunctionNode* fn) {
  const auto* c = fn->body->as<graph::CallNode>();
  const auto* op = c ? c->op->as<graph::OpNode>() : nullptr;
  return op && op->name == "vm.fatal" ? c : nullptr;
}

/// The registers of `v`, its tuple fields flattened left to right (how functions take and return
/// values, and ADTs and closures hold them: the VM has no tuples).
void Flat(const RegValue& v, std::vector<int>& out) {
  if (v.reg >= 0) {
    out.push_back(v.reg);
    return;
  }
  for (const RegValue& f : v.fields) Flat(f, out);
}

std::vector<int> Flat(const RegValue& v) {
  std::vector<int> out;
  Flat(v, out);
  return out;
}

/// Whether every use of `var` in `e` is the callee of a call, in tail position of `e` when
/// `tail_only` (`in_tail`: `e` itself is in tail position); none may be inside a nested function.
/// What makes a let-bound function a loop (vm_codegen.h).
bool OnlyCallsOf(const Expr& e, const graph::VarNode* var, bool tail_only, bool in_tail,
                 std::map<std::pair<const ExprNode*, bool>, bool>& memo) {
  if (auto it = memo.find({e.get(), in_tail}); it != memo.end()) return it->second;
  bool ok = true;
  auto all = [&](const std::vector<Expr>& es) {
    for (const Expr& x : es) ok = ok && OnlyCallsOf(x, var, tail_only, false, memo);
  };
  if (e.get() == var) {
    ok = false;  // a use as a value
  } else if (const auto* c = e->as<graph::CallNode>()) {
    if (c->op.get() == var) ok = !tail_only || in_tail;
    else ok = OnlyCallsOf(c->op, var, tail_only, false, memo);
    all(c->args);
  } else if (const auto* t = e->as<graph::TupleNode>()) {
    all(t->fields);
  } else if (const auto* g = e->as<graph::TupleGetItemNode>()) {
    ok = OnlyCallsOf(g->tuple, var, tail_only, false, memo);
  } else if (const auto* i = e->as<graph::IfNode>()) {
    ok = OnlyCallsOf(i->cond, var, tail_only, false, memo) && OnlyCallsOf(i->true_branch, var, tail_only, in_tail, memo) &&
         OnlyCallsOf(i->false_branch, var, tail_only, in_tail, memo);
  } else if (const auto* l = e->as<graph::LetNode>()) {
    ok = OnlyCallsOf(l->value, var, tail_only, false, memo) && OnlyCallsOf(l->body, var, tail_only, in_tail, memo);
  } else if (const auto* m = e->as<graph::MatchNode>()) {
    ok = OnlyCallsOf(m->data, var, tail_only, false, memo);
    for (const auto& clause : m->clauses) ok = ok && OnlyCallsOf(clause.rhs, var, tail_only, false, memo);
  } else if (const auto* f = e->as<graph::FunctionNode>()) {
    if (f->attrs.GetInt("Primitive", 0) != 1 && !graph::IsExternalFunction(*f)) {
      const std::vector<graph::Var> free = graph::FreeVars(*f);
      ok = std::none_of(free.begin(), free.end(), [&](const graph::Var& v) { return v.get() == var; });
    }
  }
  memo[{e.get(), in_tail}] = ok;
  return ok;
}

/// Whether the let-bound function of `let` is a loop: it calls itself only in tail position, and
/// the let's body only calls it (never passes it as a value or captures it in a closure).
bool IsLoopFunction(const graph::LetNode& let) {
  const auto* fn = let.value->as<graph::FunctionNode>();
  if (!fn) return false;
  std::map<std::pair<const ExprNode*, bool>, bool> in_fn, in_body;
  return OnlyCallsOf(fn->body, let.var.get(), true, true, in_fn) &&
         OnlyCallsOf(let.body, let.var.get(), false, false, in_body);
}

/// A VM function to compile (runtime/vm.h "Functions, closures and ADTs"): a global function of the
/// module, or a function value lifted to one (Relay's LambdaLift): its free variables come first in
/// its params, and `self` (the let var a recursive closure names itself by) is the closure rebuilt
/// from them at entry.
struct FunctionJob {
  std::string name;
  const graph::FunctionNode* fn = nullptr;
  std::vector<graph::Var> captured;
  const graph::VarNode* self = nullptr;
};

/// A block being compiled: what it has computed, what it needs on every path, and its enclosing
/// block's scope.
struct Scope {
  Scope* parent = nullptr;
  Block* block = nullptr;
  std::unordered_set<const ExprNode*> needed;  // NeededOutsideBranches of the block's root
  std::unordered_map<const ExprNode*, RegValue> memo;

  const RegValue* Find(const ExprNode* e) const {
    for (const Scope* s = this; s; s = s->parent)
      if (auto it = s->memo.find(e); it != s->memo.end()) return &it->second;
    return nullptr;
  }
  /// Where `e` is computed: the outermost enclosing scope that needs it on every path (so that a
  /// value also needed after an If is computed once, before it), else this one.
  Scope& Home(const ExprNode* e) {
    Scope* home = this;
    for (Scope* s = this; s; s = s->parent)
      if (s->needed.count(e)) home = s;
    return *home;
  }
};

class Compiler {
 public:
  explicit Compiler(const graph::IRModule& mod) : mod_(mod) {}

  ExecutorPlan Build(const std::vector<std::string>& output_names,
                     const std::map<std::string, runtime::NDArray>& input_guards) {
    const graph::Function& main = mod_.main();
    guards_ = GuardParams(main, input_guards, params_);
    Block root_block;
    Scope root{nullptr, &root_block, NeededOutsideBranches(main->body), {}};
    json inputs = json::array();
    for (const auto& p : main->params) {
      const std::string what = "graph input '" + p->name_hint + "'";
      if (!p->checked_type()->as<graph::TensorTypeNode>())
        TESSERA_THROW(UnsupportedError, what, " has the type ", p->checked_type()->str(),
                      ": a program's inputs are tensors (pass an ADT or a closure to a function it calls)");
      inputs.push_back({{"name", p->name_hint},
                        {"dtype", DTypeOf(p->checked_type()).str()},
                        {"shape", ShapeJson(p->checked_type(), what)}});
      root.memo[p.get()] = RegValue{NewReg(), {}};
    }
    // The results: main's body, a tensor or a tuple of tensors (maybe under lets).
    const graph::Type& ret = main->body->checked_type();
    std::vector<graph::Type> result_types{ret};
    if (const auto* tt = ret->as<graph::TupleTypeNode>()) result_types = tt->fields;
    TESSERA_ICHECK(result_types.size() == output_names.size(), "main has ", result_types.size(), " results but ",
                   output_names.size(), " output names were given");
    json outputs = json::array();
    for (size_t i = 0; i < result_types.size(); ++i) {
      const graph::Type& t = result_types[i];
      if (!t->as<graph::TensorTypeNode>())
        TESSERA_THROW(UnsupportedError, "output '", output_names[i], "' has the type ", t->str(),
                      ": a program's outputs are tensors");
      outputs.push_back({{"name", output_names[i]},
                         {"dtype", DTypeOf(t).str()},
                         {"shape", ShapeJson(t, "output '" + output_names[i] + "'")}});
    }
    const std::vector<int> results = Flat(Compile(main->body, root));
    TESSERA_ICHECK(results.size() == result_types.size(), "main's results fill ", results.size(), " registers");
    root_block.push_back(Plain({{"op", "Ret"}, {"results", results}}, results, {}));
    std::vector<LoopLiveness> no_loops;
    InsertKills(root_block, {}, no_loops);

    json j;
    j["format"] = "tessera-vm";
    j["num_registers"] = num_regs_;
    j["inputs"] = std::move(inputs);
    j["outputs"] = std::move(outputs);
    j["instructions"] = json::array();
    std::vector<std::pair<size_t, std::vector<size_t>>> no_enclosing_loops;
    Flatten(root_block, j["instructions"], no_enclosing_loops);
    // The functions main calls, and those they call, ... (each compiled once, in order of first use).
    json functions = json::array();
    for (size_t k = 0; k < jobs_.size(); ++k) functions.push_back(CompileFunction(static_cast<int>(k)));
    if (!functions.empty()) j["functions"] = std::move(functions);
    // Version 4 has CallBuiltin, 3 functions, closures and ADTs; 2 names symbols (dynamic shapes); a
    // program with none of them stays readable by older runtimes.
    j["version"] = uses_builtins_                ? 4
                   : uses_v3_ || !jobs_.empty() ? 3
                   : HasSymbols(j["inputs"]) || HasSymbols(j["outputs"]) || symbolic_allocs_ ? 2
                                                                                            : 1;
    if (!guards_.empty()) {
      j["guards"] = json::array();
      for (const auto& [input, param] : guards_) j["guards"].push_back({{"input", input}, {"param", param}});
    }
    ExecutorPlan out;
    out.graph_json = j.dump();
    out.params = std::move(params_);
    out.kernels = std::move(kernels_.kernels());
    out.kernel_calls = kernels_.calls();
    out.num_nodes = num_invokes_;
    out.storage_bytes = out.unplanned_bytes = alloc_bytes_;
    return out;
  }

 private:
  int NewReg() { return num_regs_++; }

  /// The VM function of job k: its params (captured values, then the function's own) in registers
  /// 0.., its body, a Ret of its result's registers.
  json CompileFunction(int k) {
    const FunctionJob job = jobs_[k];  // a copy: compiling may add jobs
    num_regs_ = 0;
    loop_functions_.clear();
    loops_.clear();
    Block root_block;
    Scope root{nullptr, &root_block, NeededOutsideBranches(job.fn->body), {}};
    std::vector<int> captured_regs;
    for (const graph::Var& v : job.captured) {
      root.memo[v.get()] = JoinRegisters(v->checked_type());
      Flat(root.memo[v.get()], captured_regs);
    }
    for (const graph::Var& p : job.fn->params) root.memo[p.get()] = JoinRegisters(p->checked_type());
    const int num_params = num_regs_;
    if (job.self) {  // the closure itself, for the recursive calls of its body
      const int self = NewReg();
      root_block.push_back(
          Plain({{"op", "AllocClosure"}, {"dst", self}, {"func", k}, {"captured", captured_regs}}, captured_regs, {self}));
      root.memo[job.self] = RegValue{self, {}};
    }
    const std::vector<int> results = Flat(Compile(job.fn->body, root));
    root_block.push_back(Plain({{"op", "Ret"}, {"results", results}}, results, {}));
    std::vector<LoopLiveness> no_loops;
    InsertKills(root_block, {}, no_loops);
    json f;
    f["name"] = job.name;
    f["num_params"] = num_params;
    f["num_results"] = results.size();
    f["num_registers"] = num_regs_;
    f["instructions"] = json::array();
    std::vector<std::pair<size_t, std::vector<size_t>>> no_enclosing_loops;
    Flatten(root_block, f["instructions"], no_enclosing_loops);
    return f;
  }

  /// The VM function index of global function `name` (compiled after main).
  int GlobalIndex(const std::string& name) {
    if (name == "main") TESSERA_THROW(UnsupportedError, "VM codegen: @main is called; call another function instead");
    auto [it, added] = global_index_.try_emplace(name, static_cast<int>(jobs_.size()));
    if (added) {
      const graph::Function& fn = mod_.Lookup(name);
      if (fn->attrs.GetInt("Primitive", 0) == 1 || graph::IsExternalFunction(*fn))
        TESSERA_THROW(UnsupportedError, "VM codegen: @", name, " is a primitive or external function called by name");
      jobs_.push_back({name, fn.get(), {}, nullptr});
    }
    return it->second;
  }

  /// A closure of function value `fn` (Relay's AllocClosure after LambdaLift): the VM function of
  /// `fn` with its free variables as first params, and their registers captured. `self`: the let
  /// var fn names itself by, or null.
  RegValue CompileClosure(const graph::FunctionNode* fn, const graph::VarNode* self, Scope& scope) {
    std::vector<graph::Var> captured;
    for (const graph::Var& v : graph::FreeVars(*fn))
      if (v.get() != self) captured.push_back(v);
    std::vector<int> regs;
    for (const graph::Var& v : captured) {
      if (loop_functions_.count(v.get()))
        TESSERA_THROW(UnsupportedError, "VM codegen: a function value uses the loop function %", v->name_hint);
      Flat(Compile(v, scope), regs);
    }
    auto [it, added] = lifted_index_.try_emplace(fn, static_cast<int>(jobs_.size()));
    if (added) {
      const std::string hint = self ? self->name_hint : "lambda";
      jobs_.push_back({hint + "_" + std::to_string(jobs_.size()), fn, captured, self});
    }
    uses_v3_ = true;
    const int out = NewReg();
    scope.block->push_back(
        Plain({{"op", "AllocClosure"}, {"dst", out}, {"func", it->second}, {"captured", regs}}, regs, {out}));
    return RegValue{out, {}};
  }

  /// A call of a function (a global: Invoke; a closure: InvokeClosure) with its result in fresh registers.
  RegValue CompileInvoke(const graph::CallNode* call, Scope& scope) {
    std::vector<int> args;
    for (const auto& a : call->args) Flat(Compile(a, scope), args);
    const RegValue result = JoinRegisters(call->checked_type());
    const std::vector<int> dst = Flat(result);
    std::vector<int> reads = args;
    json instr;
    if (const auto* g = call->op->as<graph::GlobalVarNode>()) {
      instr = {{"op", "Invoke"}, {"func", GlobalIndex(g->name)}, {"args", args}, {"dst", dst}};
    } else {
      const RegValue closure = Compile(call->op, scope);
      TESSERA_ICHECK(closure.reg >= 0, "a closure is a tuple");
      instr = {{"op", "InvokeClosure"}, {"closure", closure.reg}, {"args", args}, {"dst", dst}};
      reads.push_back(closure.reg);
    }
    uses_v3_ = true;
    scope.block->push_back(Plain(std::move(instr), reads, dst));
    return result;
  }

  /// `Cons(x, xs)`: an AllocADT of the constructor's tag over its fields' registers (flattened).
  RegValue CompileConstructorCall(const graph::CallNode* call, const graph::ConstructorNode& ctor, Scope& scope) {
    std::vector<int> fields;
    for (const auto& a : call->args) Flat(Compile(a, scope), fields);
    const int out = NewReg();
    uses_v3_ = true;
    scope.block->push_back(
        Plain({{"op", "AllocADT"}, {"dst", out}, {"tag", ctor.tag}, {"fields", fields}}, fields, {out}));
    return RegValue{out, {}};
  }

  using Continuation = std::function<void(Scope&)>;

  /// Emits into `scope` the tests of `pattern` against `value` (of `type`): a constructor pattern is
  /// an IfTag whose then block reads the fields its sub-patterns use (GetField) and tests them; a
  /// failed test falls through to what follows. When every test passes, the pattern's variables are
  /// bound and `then` runs in the innermost block.
  void EmitPatternTest(const graph::ClausePatternNode& pattern, const RegValue& value, const graph::Type& type,
                       Scope& scope, const Continuation& then) {
    switch (pattern.kind) {
      case graph::ClausePatternKind::kWildcard: return then(scope);
      case graph::ClausePatternKind::kVar:
        scope.memo[pattern.var.get()] = value;
        return then(scope);
      case graph::ClausePatternKind::kTuple: {
        const auto* tt = type->as<graph::TupleTypeNode>();
        TESSERA_ICHECK(tt && tt->fields.size() == pattern.fields.size(), "a tuple pattern of another arity");
        return EmitFieldTests(pattern.fields, value.fields, tt->fields, 0, scope, then);
      }
      case graph::ClausePatternKind::kConstructor: {
        const auto* adt = type->as<graph::ADTTypeNode>();
        TESSERA_ICHECK(adt != nullptr && value.reg >= 0, "a constructor pattern on a value of type ", type->str());
        Item item = ItemOf(Item::kIf);
        item.cond = value.reg;
        item.tag = pattern.ctor->tag;
        const std::vector<graph::Type> types = graph::ConstructorFieldTypes(*pattern.ctor, *adt);
        std::vector<RegValue> fields;
        int index = 0;  // GetField counts flattened fields
        for (size_t f = 0; f < types.size(); ++f) {
          fields.push_back(JoinRegisters(types[f]));
          for (int reg : Flat(fields.back())) {
            if (pattern.fields[f]->kind != graph::ClausePatternKind::kWildcard)
              item.then_block.push_back(Plain({{"op", "GetField"}, {"dst", reg}, {"src", value.reg}, {"index", index}},
                                              {value.reg}, {reg}));
            ++index;
          }
        }
        Scope inner{&scope, &item.then_block, {}, {}};
        EmitFieldTests(pattern.fields, fields, types, 0, inner, then);
        uses_v3_ = true;
        scope.block->push_back(std::move(item));
        return;
      }
    }
  }

  /// The tests of patterns[i...] against values[i...], each nested in the one before.
  void EmitFieldTests(const std::vector<graph::ClausePattern>& patterns, const std::vector<RegValue>& values,
                      const std::vector<graph::Type>& types, size_t i, Scope& scope, const Continuation& then) {
    if (i == patterns.size()) return then(scope);
    EmitPatternTest(*patterns[i], values[i], types[i], scope,
                    [&](Scope& s) { EmitFieldTests(patterns, values, types, i + 1, s, then); });
  }

  /// A match: a block that runs the clauses' tests in order; the first whose tests pass moves its
  /// result into the join registers and leaves the block (kBreak); when none does, Fatal.
  RegValue CompileMatch(const graph::MatchNode* match, const graph::Type& type, Scope& scope) {
    const RegValue data = Compile(match->data, scope);
    const RegValue join = JoinRegisters(type);
    Item block = ItemOf(Item::kLoop);
    Scope body{&scope, &block.body, {}, {}};
    for (const graph::MatchClause& clause : match->clauses) {
      EmitPatternTest(*clause.pattern, data, match->data->checked_type(), body, [&](Scope& s) {
        Scope rhs{&s, s.block, NeededOutsideBranches(clause.rhs), {}};
        EmitMoves(Compile(clause.rhs, rhs), join, *s.block);
        s.block->push_back(ItemOf(Item::kBreak));
      });
    }
    block.body.push_back(Plain({{"op", "Fatal"},
                                {"message", "no clause of a match (of a value of type " +
                                                match->data->checked_type()->str() + ") matches the value"}},
                               {}, {}));
    scope.block->push_back(std::move(block));
    return join;
  }

  RegValue Compile(const Expr& e, Scope& where) {
    if (const RegValue* known = where.Find(e.get())) return *known;
    Scope& scope = where.Home(e.get());
    RegValue v;
    if (const auto* c = e->as<graph::ConstantNode>()) {
      // One param per constant, however many blocks load it.
      auto [it, added] = param_of_.try_emplace(c, "p" + std::to_string(params_.size()));
      const std::string& name = it->second;
      if (added) params_[name] = c->data;
      v.reg = NewReg();
      scope.block->push_back(Plain({{"op", "LoadConst"}, {"dst", v.reg}, {"param", name}}, {}, {v.reg}));
    } else if (const auto* call = e->as<graph::CallNode>()) {
      v = CompileCall(call, scope);
    } else if (const auto* t = e->as<graph::TupleNode>()) {
      for (const auto& f : t->fields) v.fields.push_back(Compile(f, scope));
    } else if (const auto* g = e->as<graph::TupleGetItemNode>()) {
      const RegValue tuple = Compile(g->tuple, scope);
      TESSERA_ICHECK(g->index >= 0 && g->index < static_cast<int>(tuple.fields.size()), "tuple index ", g->index,
                     " out of range");
      v = tuple.fields[g->index];
    } else if (const auto* i = e->as<graph::IfNode>()) {
      v = CompileIf(i, e->checked_type(), scope);
    } else if (const auto* l = e->as<graph::LetNode>()) {
      v = CompileLet(l, scope, nullptr);
    } else if (const auto* m = e->as<graph::MatchNode>()) {
      v = CompileMatch(m, e->checked_type(), scope);
    } else if (const auto* g = e->as<graph::GlobalVarNode>()) {
      // A global used as a value: a closure that captures nothing.
      const int index = GlobalIndex(g->name);
      v.reg = NewReg();
      uses_v3_ = true;
      scope.block->push_back(Plain({{"op", "AllocClosure"}, {"dst", v.reg}, {"func", index}, {"captured", json::array()}},
                                   {}, {v.reg}));
    } else if (const auto* fn = e->as<graph::FunctionNode>()) {
      v = CompileClosure(fn, nullptr, scope);
    } else if (const auto* var = e->as<graph::VarNode>()) {
      if (loop_functions_.count(var))
        TESSERA_THROW(UnsupportedError, "VM codegen: the loop function %", var->name_hint, " is used as a value");
      TESSERA_THROW(InternalError, "VM codegen: free variable %", var->name_hint);
    } else {
      TESSERA_THROW(InternalError, "VM codegen: an expression of kind ", static_cast<int>(e->kind), " as a value");
    }
    scope.memo[e.get()] = v;
    return v;
  }

  RegValue CompileCall(const graph::CallNode* call, Scope& scope) {
    if (const auto* var = call->op->as<graph::VarNode>(); var && loop_functions_.count(var))
      return CompileLoop(call, var, scope);
    if (const auto* ctor = call->op->as<graph::ConstructorNode>()) return CompileConstructorCall(call, *ctor, scope);
    const auto* fn = call->op->as<graph::FunctionNode>();
    if (fn && graph::IsExternalFunction(*fn))
      TESSERA_THROW(UnsupportedError, "an external function (BYOC backend '", fn->attrs.GetString("Compiler"),
                    "') in a program with control flow is not supported yet: compile without --byoc");
    if (!fn || fn->attrs.GetInt("Primitive", 0) != 1) {
      TESSERA_ICHECK(!call->op->as<graph::OpNode>(), "VM codegen expects calls of primitive functions: run FuseOps first");
      return CompileInvoke(call, scope);  // a global, a closure, or a function value called in place
    }
    std::vector<int> args;
    for (const auto& a : call->args) {
      const RegValue r = Compile(a, scope);
      TESSERA_ICHECK(r.reg >= 0, "a primitive function's argument is a tuple");
      args.push_back(r.reg);
    }
    if (const graph::CallNode* list = ListCall(fn)) return CompileListOp(*fn, *list, args, scope);
    if (const graph::CallNode* shape_of = OpCallOverParams(fn, "vm.shape_of")) {
      const int src = ParamRegister(*fn, args, shape_of->args[0]), out = NewReg();
      symbolic_allocs_ = true;  // ShapeOf is an instruction of version 2
      scope.block->push_back(Plain({{"op", "ShapeOf"}, {"dst", out}, {"src", src}}, {src}, {out}));
      return RegValue{out, {}};
    }
    if (const graph::CallNode* decode = OpCallOverParams(fn, "vm.image_decode")) {
      // A builtin of the runtime (runtime/vm_builtins.h) decodes; its result's extents bind h and w.
      const int src = ParamRegister(*fn, args, decode->args[0]), out = NewReg();
      uses_builtins_ = true;
      scope.block->push_back(Plain({{"op", "CallBuiltin"}, {"dst", out}, {"name", "image_decode"}, {"args", {src}},
                                    {"attrs", {{"pixel_format", decode->attrs.GetString("pixel_format")}}},
                                    {"dtype", "uint8"}, {"shape", ShapeJson(call->checked_type(), "a decoded image")}},
                                   {src}, {out}));
      return RegValue{out, {}};
    }
    const json shape = ShapeJson(call->checked_type(), "a kernel output");
    for (const auto& d : shape) symbolic_allocs_ |= d.is_string();
    const DataType dtype = DTypeOf(call->checked_type());
    const int out = NewReg();
    if (const graph::CallNode* fatal = FatalCall(fn)) {
      // The run ends here with the op's message; the AllocTensor after it is never reached and only
      // gives `out` a writer on this path, as every register read needs.
      scope.block->push_back(Plain({{"op", "Fatal"}, {"message", fatal->attrs.GetString("message")}}, {}, {}));
      scope.block->push_back(
          Plain({{"op", "AllocTensor"}, {"dst", out}, {"dtype", dtype.str()}, {"shape", shape}}, {}, {out}));
      return RegValue{out, {}};
    }
    if (const graph::CallNode* dyn = ShapeFromValues(fn)) {
      // The output's dims are the values of a run-time shape operand: bind its symbols first.
      // The registers of the op's operands: the call's arguments in the order of fn's params.
      auto reg_of = [&](const graph::Expr& operand) { return ParamRegister(*fn, args, operand); };
      const bool is_reshape = dyn->op->as<graph::OpNode>()->name == "vm.reshape";
      const int shape_reg = reg_of(dyn->args.back());
      // The operand holds the values of the output's symbolic dims, in order (static dims, as
      // NonZero's rank, have none).
      json names = json::array();
      for (const auto& d : shape)
        if (d.is_string()) names.push_back(d);
      scope.block->push_back(Plain({{"op", "LoadShape"}, {"src", shape_reg}, {"symbols", names}}, {shape_reg}, {}));
      symbolic_allocs_ = true;
      if (is_reshape) {
        const int src = reg_of(dyn->args[0]);
        scope.block->push_back(Plain({{"op", "ReshapeTensor"}, {"dst", out}, {"src", src}, {"shape", shape}}, {src}, {out}));
        return RegValue{out, {}};
      }
    }
    if (IsReshapeOnly(fn)) {
      scope.block->push_back(
          Plain({{"op", "ReshapeTensor"}, {"dst", out}, {"src", args[0]}, {"shape", shape}}, {args[0]}, {out}));
      return RegValue{out, {}};
    }
    // The bytes of a static allocation (a symbolic one is sized at run time).
    if (auto static_shape = graph::StaticShape(call->checked_type()->as<graph::TensorTypeNode>()->shape)) {
      int64_t bytes = dtype.bytes();
      for (int64_t d : *static_shape)
        bytes = CheckedMul(bytes, d, "the size of a kernel output " + runtime::ShapeToString(*static_shape));
      alloc_bytes_ += static_cast<size_t>((bytes + 63) / 64 * 64);
    }
    scope.block->push_back(
        Plain({{"op", "AllocTensor"}, {"dst", out}, {"dtype", dtype.str()}, {"shape", shape}}, {}, {out}));
    graph::Function fn_ref = std::static_pointer_cast<const graph::FunctionNode>(call->op);
    const std::string kernel = kernels_.KernelFor(fn_ref);
    args.push_back(out);
    json instr = {{"op", "InvokePacked"}, {"kernel", kernel}, {"args", args}, {"num_outputs", 1}};
    if (auto symbols = KernelShapeSymbols(*fn, call->checked_type()); !symbols.empty()) instr["shape_args"] = symbols;
    if (auto checks = RuntimeChecks(fn_ref); !checks.empty()) instr["checks"] = checks;
    scope.block->push_back(Plain(std::move(instr), args, {}));
    ++num_invokes_;
    return RegValue{out, {}};
  }

  /// A list instruction (runtime/vm.h "Lists of tensors") for the vm.list_* call that is fn's body;
  /// `args` hold the call's arguments in the order of fn's params.
  RegValue CompileListOp(const graph::FunctionNode& fn, const graph::CallNode& list, const std::vector<int>& args,
                         Scope& scope) {
    auto reg_of = [&](const graph::Expr& operand) { return ParamRegister(fn, args, operand); };
    const std::string& name = list.op->as<graph::OpNode>()->name;
    const int out = NewReg();
    if (name == "vm.list_new") {
      scope.block->push_back(Plain({{"op", "ListNew"}, {"dst", out}}, {}, {out}));
    } else if (name == "vm.list_push") {
      const int src = reg_of(list.args[0]), value = reg_of(list.args[1]);
      scope.block->push_back(Plain({{"op", "ListPush"}, {"dst", out}, {"src", src}, {"value", value}}, {src, value}, {out}));
    } else if (name == "vm.list_length") {
      const int src = reg_of(list.args[0]);
      scope.block->push_back(Plain({{"op", "ListLength"}, {"dst", out}, {"src", src}}, {src}, {out}));
    } else if (name == "vm.list_at") {
      const int src = reg_of(list.args[0]), index = reg_of(list.args[1]);
      scope.block->push_back(Plain({{"op", "ListAt"}, {"dst", out}, {"src", src}, {"index", index}}, {src, index}, {out}));
    } else if (name == "vm.list_stack") {
      const int src = reg_of(list.args[0]);
      symbolic_allocs_ = true;  // the stacked length is a symbol: executable version 2
      scope.block->push_back(Plain({{"op", "ListStack"}, {"dst", out}, {"src", src},
                                    {"dtype", DTypeOf(list.checked_type()).str()},
                                    {"shape", ShapeJson(list.checked_type(), "a stacked list")}},
                                   {src}, {out}));
    } else {
      TESSERA_THROW(InternalError, "VM codegen: unknown list op ", name);
    }
    return RegValue{out, {}};
  }

  /// Fresh registers shaped as `type` (a tensor, or a tuple of them).
  RegValue JoinRegisters(const graph::Type& type) {
    RegValue v;
    if (const auto* tt = type->as<graph::TupleTypeNode>()) {
      for (const auto& f : tt->fields) v.fields.push_back(JoinRegisters(f));
    } else {
      v.reg = NewReg();
    }
    return v;
  }

  static void EmitMoves(const RegValue& from, const RegValue& to, Block& block) {
    if (to.reg >= 0) {
      TESSERA_ICHECK(from.reg >= 0, "an If branch gives a tuple where a tensor is expected");
      block.push_back(Plain({{"op", "Move"}, {"dst", to.reg}, {"src", from.reg}}, {from.reg}, {to.reg}));
      return;
    }
    TESSERA_ICHECK(from.fields.size() == to.fields.size(), "If branches of different tuple sizes");
    for (size_t i = 0; i < to.fields.size(); ++i) EmitMoves(from.fields[i], to.fields[i], block);
  }

  /// An If item in `scope`: its condition computed there, each branch compiled by `branch(expr,
  /// inner scope)` into its own block.
  void EmitIf(const graph::IfNode* node, Scope& scope, const std::function<void(const Expr&, Scope&)>& branch) {
    const RegValue cond = Compile(node->cond, scope);
    TESSERA_ICHECK(cond.reg >= 0, "an If condition is a tuple");
    Item item = ItemOf(Item::kIf);
    item.cond = cond.reg;
    for (auto [expr, block] : {std::pair{&node->true_branch, &item.then_block},
                               std::pair{&node->false_branch, &item.else_block}}) {
      Scope inner{&scope, block, NeededOutsideBranches(*expr), {}};
      branch(*expr, inner);
    }
    scope.block->push_back(std::move(item));
  }

  /// An If whose branches end with Moves into the same join registers.
  RegValue CompileIf(const graph::IfNode* node, const graph::Type& type, Scope& scope) {
    const RegValue join = JoinRegisters(type);
    EmitIf(node, scope, [&](const Expr& branch, Scope& inner) { EmitMoves(Compile(branch, inner), join, *inner.block); });
    return join;
  }

  /// A let binding: a function is remembered for the calls of its var (loops); another value is
  /// computed and its var names its registers. Then the body, in tail position of `loop` when set.
  RegValue CompileLet(const graph::LetNode* let, Scope& scope, const graph::VarNode* loop) {
    const auto* fn = let->value->as<graph::FunctionNode>();
    if (fn && IsLoopFunction(*let)) {
      loop_functions_[let->var.get()] = fn;
    } else if (fn) {
      // A function value: a closure (recursive when its body names its own var).
      const std::vector<graph::Var> free = graph::FreeVars(*fn);
      const bool recursive =
          std::any_of(free.begin(), free.end(), [&](const graph::Var& v) { return v.get() == let->var.get(); });
      scope.memo[let->var.get()] = CompileClosure(fn, recursive ? let->var.get() : nullptr, scope);
    } else {
      scope.memo[let->var.get()] = Compile(let->value, scope);
    }
    if (loop) {
      CompileTail(let->body, scope, loop);
      return {};
    }
    return Compile(let->body, scope);
  }

  /// A call of a let-bound function `var` from outside its body: a loop (Relay's tail-recursive
  /// loop function). The arguments go to the parameters' registers; the body runs; a tail call of
  /// `var` in it assigns the parameters anew and jumps back (kContinue), any other result leaves
  /// the loop with it (kBreak). The loop's result registers are returned.
  RegValue CompileLoop(const graph::CallNode* call, const graph::VarNode* var, Scope& scope) {
    const graph::FunctionNode* fn = loop_functions_.at(var);
    TESSERA_ICHECK(std::none_of(loops_.begin(), loops_.end(), [&](const ActiveLoop& l) { return l.var == var; }),
                   "VM codegen: the loop %", var->name_hint, " calls itself other than in tail position");
    TESSERA_ICHECK(fn->params.size() == call->args.size(), "a call of %", var->name_hint, " with ",
                   call->args.size(), " arguments for ", fn->params.size(), " parameters");
    ActiveLoop loop{var, {}, JoinRegisters(call->checked_type())};
    for (const graph::Var& p : fn->params) loop.params.push_back(JoinRegisters(p->checked_type()));
    for (size_t i = 0; i < fn->params.size(); ++i) EmitMoves(Compile(call->args[i], scope), loop.params[i], *scope.block);
    Item item = ItemOf(Item::kLoop);
    Scope inner{&scope, &item.body, NeededOutsideBranches(fn->body), {}};
    for (size_t i = 0; i < fn->params.size(); ++i) inner.memo[fn->params[i].get()] = loop.params[i];
    loops_.push_back(loop);
    CompileTail(fn->body, inner, var);
    loops_.pop_back();
    scope.block->push_back(std::move(item));
    return loop.result;
  }

  /// `e` in tail position of the body of the innermost loop (`var`'s).
  void CompileTail(const Expr& e, Scope& scope, const graph::VarNode* var) {
    const ActiveLoop loop = loops_.back();  // a copy: compiling the body may push inner loops
    const auto* call = e->as<graph::CallNode>();
    if (call && call->op.get() == var) {
      // The next iteration: every argument first, then the parameters (an argument may read one).
      std::vector<RegValue> next;
      for (size_t i = 0; i < call->args.size(); ++i) {
        const RegValue v = Compile(call->args[i], scope);
        next.push_back(JoinRegisters(call->args[i]->checked_type()));
        EmitMoves(v, next.back(), *scope.block);
      }
      for (size_t i = 0; i < next.size(); ++i) EmitMoves(next[i], loop.params[i], *scope.block);
      scope.block->push_back(ItemOf(Item::kContinue));
      return;
    }
    if (const auto* i = e->as<graph::IfNode>()) {
      EmitIf(i, scope, [&](const Expr& branch, Scope& inner) { CompileTail(branch, inner, var); });
      return;
    }
    if (const auto* l = e->as<graph::LetNode>()) {
      CompileLet(l, scope, var);
      return;
    }
    EmitMoves(Compile(e, scope), loop.result, *scope.block);
    scope.block->push_back(ItemOf(Item::kBreak));
  }

  /// A loop being compiled: its function's var, the registers of its parameters and of its result.
  struct ActiveLoop {
    const graph::VarNode* var = nullptr;
    std::vector<RegValue> params;
    RegValue result;
  };

  int num_regs_ = 0;
  int num_invokes_ = 0;
  const graph::IRModule& mod_;
  std::unordered_map<const graph::VarNode*, const graph::FunctionNode*> loop_functions_;  // let-bound loops
  std::vector<FunctionJob> jobs_;                 // the VM functions, by index
  std::map<std::string, int> global_index_;                          // a global's name -> its job
  std::unordered_map<const graph::FunctionNode*, int> lifted_index_;  // a function value -> its job
  bool uses_builtins_ = false;                    // a CallBuiltin: executable version 4
  bool uses_v3_ = false;                          // an instruction of version 3 (closures, ADTs, calls)
  std::vector<ActiveLoop> loops_;  // the loops whose bodies are being compiled, innermost last
  bool symbolic_allocs_ = false;  // some AllocTensor / ReshapeTensor shape names a symbol
  size_t alloc_bytes_ = 0;
  std::map<std::string, runtime::NDArray> params_;
  std::unordered_map<const graph::ConstantNode*, std::string> param_of_;
  KernelTable kernels_;
  std::vector<std::pair<std::string, std::string>> guards_;
};

}  // namespace

bool HasControlFlow(const graph::IRModule& mod) {
  bool found = false;
  graph::PostOrderVisit(mod.main()->body, [&](const Expr& e) {
    const auto* fn = e->as<graph::FunctionNode>();
    found |= e->as<graph::IfNode>() || e->as<graph::LetNode>() || e->as<graph::MatchNode>() ||
             e->as<graph::GlobalVarNode>() || e->as<graph::ConstructorNode>() ||
             (fn && fn->attrs.GetInt("Primitive", 0) != 1 && !graph::IsExternalFunction(*fn));
  });
  return found;
}

bool HasSymbolicShapes(const graph::IRModule& mod) {
  const graph::Function& main = mod.main();
  bool found = std::any_of(main->params.begin(), main->params.end(),
                           [](const graph::Var& p) { return graph::HasSymbolicDims(p->checked_type()); });
  graph::PostOrderVisit(main->body,
                        [&](const Expr& e) { found |= e->has_checked_type() && graph::HasSymbolicDims(e->checked_type()); });
  return found;
}

ExecutorPlan VMCodegen(const graph::IRModule& fused, const std::vector<std::string>& output_names,
                       const std::map<std::string, runtime::NDArray>& input_guards) {
  return Compiler(fused).Build(output_names, input_guards);
}

}  // namespace tessera::driver
