// Schedule core: the symbol table of handles, get_block, get_loops, annotate.
#include "tessera/tir/schedule/schedule.h"

#include <set>

#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT

Schedule::Schedule(PrimFunc func) : func_(std::move(func)) {
  TESSERA_ICHECK(func_.defined(), "Schedule: undefined PrimFunc");
  if (!func_->body.as<BlockRealizeNode>()) {
    TESSERA_THROW(ScheduleError, "Schedule: the body of function '", func_->name,
                  "' is not a root block; schedule functions built by te::create_prim_func, before lowering");
  }
  std::set<std::string> names;
  for (const auto& b : CollectBlocks(func_->body)) {
    if (!names.insert(b.block->name_hint).second) {
      TESSERA_THROW(ScheduleError, "Schedule: function '", func_->name, "' has two blocks named '",
                    b.block->name_hint, "'; block names must be unique to be scheduled");
    }
  }
}

BlockRV Schedule::NewBlockRV(const std::string& name) {
  Symbol s;
  s.is_block = true;
  s.block_name = name;
  symbols_.push_back(s);
  return BlockRV{static_cast<int64_t>(symbols_.size()) - 1};
}

LoopRV Schedule::NewLoopRV(const Var& loop_var) {
  Symbol s;
  s.is_block = false;
  s.loop_var = loop_var;
  symbols_.push_back(s);
  return LoopRV{static_cast<int64_t>(symbols_.size()) - 1};
}

const Schedule::Symbol& Schedule::Lookup(int64_t id, bool is_block, const char* primitive) const {
  if (id < 0 || id >= static_cast<int64_t>(symbols_.size()) || symbols_[id].is_block != is_block) {
    TESSERA_THROW(ScheduleError, primitive, ": ", is_block ? "block" : "loop", " handle ",
                  is_block ? "b" : "l", id, " does not belong to this schedule");
  }
  return symbols_[id];
}

sched::BlockInfo ScheduleAccess::ResolveBlock(const Schedule& s, const BlockRV& rv, const char* prim) {
  const auto& sym = s.Lookup(rv.id, true, prim);
  auto info = FindBlock(s.func_->body, sym.block_name);
  if (!info) {
    auto it = s.removed_blocks_.find(sym.block_name);
    if (it != s.removed_blocks_.end()) {
      TESSERA_THROW(ScheduleError, prim, ": block '", sym.block_name, "' (b", rv.id,
                    ") no longer exists: it was removed by ", it->second);
    }
    TESSERA_THROW(ScheduleError, prim, ": block '", sym.block_name, "' (b", rv.id, ") is not in function '",
                  s.func_->name, "'");
  }
  if (info->scope == nullptr) {
    TESSERA_THROW(ScheduleError, prim, ": block '", sym.block_name, "' is the root block, which cannot be scheduled");
  }
  return *info;
}

sched::LoopInfo ScheduleAccess::ResolveLoop(const Schedule& s, const LoopRV& rv, const char* prim) {
  const auto& sym = s.Lookup(rv.id, false, prim);
  auto info = FindLoop(s.func_->body, sym.loop_var.get_var());
  if (!info) {
    auto it = s.removed_loops_.find(sym.loop_var.get_var());
    if (it != s.removed_loops_.end()) {
      TESSERA_THROW(ScheduleError, prim, ": loop ", sym.loop_var->name_hint, " (l", rv.id,
                    ") no longer exists: it was removed by ", it->second);
    }
    TESSERA_THROW(ScheduleError, prim, ": loop ", sym.loop_var->name_hint, " (l", rv.id,
                  ") is not in function '", s.func_->name, "'");
  }
  return *info;
}

void ScheduleAccess::RemoveLoop(Schedule& s, const Var& v, const char* prim) {
  s.removed_loops_[v.get_var()] = prim;
  s.removed_loop_vars_.push_back(v);
}

void ScheduleAccess::RemoveBlock(Schedule& s, const std::string& name, const char* prim) {
  s.removed_blocks_[name] = prim;
}

void ScheduleAccess::Commit(Schedule& s, const Stmt& body, Instruction inst) {
  if (body.defined()) s.func_ = s.func_.WithBody(body);
  s.trace_.Append(std::move(inst));
}

std::string ScheduleAccess::FreshBlockName(const Schedule& s, const std::string& base) {
  std::set<std::string> names;
  for (const auto& b : CollectBlocks(s.func_->body)) names.insert(b.block->name_hint);
  if (!names.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!names.count(n)) return n;
  }
}

const ForNode* Schedule::GetFor(const LoopRV& loop) const {
  return ScheduleAccess::ResolveLoop(*this, loop, "GetFor").loop;
}

const BlockNode* Schedule::GetBlock(const BlockRV& block) const {
  return ScheduleAccess::ResolveBlock(*this, block, "GetBlock").block;
}

// ------------------------------------------------------------------ get_block / get_loops
BlockRV Schedule::get_block(const std::string& name) {
  auto info = FindBlock(func_->body, name);
  if (!info) {
    auto it = removed_blocks_.find(name);
    if (it != removed_blocks_.end()) {
      TESSERA_THROW(ScheduleError, "get_block: block '", name, "' was removed by ", it->second);
    }
    std::string known;
    for (const auto& b : CollectBlocks(func_->body)) {
      if (b.scope) known += (known.empty() ? "'" : ", '") + b.block->name_hint + "'";
    }
    TESSERA_THROW(ScheduleError, "get_block: no block named '", name, "' in function '", func_->name,
                  "' (blocks: ", known, ")");
  }
  if (info->scope == nullptr) {
    TESSERA_THROW(ScheduleError, "get_block: '", name, "' is the root block, which cannot be scheduled");
  }
  BlockRV rv = NewBlockRV(name);
  trace_.Append(Instruction{"get_block", {}, {{"name", name}}, {RVRef{'b', rv.id}}});
  return rv;
}

std::vector<LoopRV> Schedule::get_loops(const BlockRV& block) {
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, "get_loops");
  std::vector<LoopRV> out;
  Instruction inst{"get_loops", {RVRef{'b', block.id}}, {}, {}};
  for (const ForNode* f : info.loops) {
    out.push_back(NewLoopRV(f->loop_var));
    inst.outputs.push_back(RVRef{'l', out.back().id});
  }
  trace_.Append(std::move(inst));
  return out;
}

// ------------------------------------------------------------------ annotate
namespace {
TraceAttr AnnotationAttr(const PrimExpr& value, const char* what) {
  if (auto* i = value.as<ir::IntImmNode>()) return TraceAttr(int64_t{i->value});
  if (auto* f = value.as<ir::FloatImmNode>()) return TraceAttr(f->value);
  if (auto* s = value.as<ir::StringImmNode>()) return TraceAttr(s->value);
  TESSERA_THROW(ScheduleError, "annotate: the value for ", what,
                " must be an integer, float or string immediate");
}
}  // namespace

void Schedule::annotate(const LoopRV& loop, const std::string& key, const PrimExpr& value) {
  LoopInfo info = ScheduleAccess::ResolveLoop(*this, loop, "annotate");
  if (key.empty()) TESSERA_THROW(ScheduleError, "annotate: empty annotation key");
  TraceAttr attr = AnnotationAttr(value, ("loop " + LoopName(info.loop)).c_str());
  auto ann = info.loop->annotations;
  ann[key] = value;
  const ForNode* f = info.loop;
  Stmt nf = ForNode::make(f->loop_var, f->min, f->extent, f->for_kind, f->body, ann);
  ScheduleAccess::Commit(*this, ReplaceStmts(func_->body, {{f, nf}}),
                         Instruction{"annotate", {RVRef{'l', loop.id}}, {{"ann_key", key}, {"ann_val", attr}}, {}});
}

void Schedule::annotate(const BlockRV& block, const std::string& key, const PrimExpr& value) {
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, "annotate");
  if (key.empty()) TESSERA_THROW(ScheduleError, "annotate: empty annotation key");
  TraceAttr attr = AnnotationAttr(value, ("block '" + info.block->name_hint + "'").c_str());
  const BlockNode* b = info.block;
  auto ann = b->annotations;
  ann[key] = value;
  Stmt nb = BlockNode::make(b->name_hint, b->iter_vars, b->reads, b->writes, b->body, b->init, b->alloc_buffers, ann);
  Stmt nr = BlockRealizeNode::make(info.realize->iter_values, info.realize->predicate, nb);
  ScheduleAccess::Commit(*this, ReplaceStmts(func_->body, {{info.realize, nr}}),
                         Instruction{"annotate", {RVRef{'b', block.id}}, {{"ann_key", key}, {"ann_val", attr}}, {}});
}

}  // namespace tessera::tir
