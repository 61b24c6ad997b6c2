#include "block_util.h"

#include <cstdio>
#include <cstdlib>

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"

namespace tessera::topi::x86 {
namespace {

class RealizeCollector : public tir::StmtExprVisitor {
 public:
  explicit RealizeCollector(const tir::StmtNode* root) : root_(root) {}
  std::vector<const tir::BlockRealizeNode*> realizes;

 protected:
  void VisitStmt_(const tir::BlockRealizeNode* op) override {
    if (op != root_) realizes.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  const tir::StmtNode* root_;
};

}  // namespace

std::vector<const tir::BlockRealizeNode*> NonRootRealizes(const tir::PrimFunc& f) {
  RealizeCollector c(f->body.get());
  c.VisitStmt(f->body);
  return c.realizes;
}

std::vector<const tir::BlockNode*> NonRootBlocks(const tir::PrimFunc& f) {
  std::vector<const tir::BlockNode*> blocks;
  for (const auto* r : NonRootRealizes(f)) blocks.push_back(r->block_node());
  return blocks;
}

const tir::BlockRealizeNode* FindRealize(const tir::PrimFunc& f, const std::string& name) {
  for (const auto* r : NonRootRealizes(f))
    if (r->block_node()->name_hint == name) return r;
  return nullptr;
}

void DebugRefusedStep(const char* schedule, const char* step, const ScheduleError& err) {
  if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "%s %s: %s\n", schedule, step, err.what());
}

const tir::IterVar* IterOf(const tir::BlockRealizeNode* r, const ir::VarNode* loop_var) {
  const tir::BlockNode* b = r->block_node();
  for (size_t i = 0; i < b->iter_vars.size(); ++i)
    if (r->iter_values[i].get() == loop_var) return &b->iter_vars[i];
  return nullptr;
}

BlockLoopNest FindLoopNest(const tir::PrimFunc& f, const std::string& name) {
  struct Finder : tir::StmtExprVisitor {
    const std::string* name;
    std::vector<const tir::ForNode*> stack;
    BlockLoopNest found;
    void VisitStmt_(const tir::ForNode* op) override {
      stack.push_back(op);
      StmtExprVisitor::VisitStmt_(op);
      stack.pop_back();
    }
    void VisitStmt_(const tir::BlockRealizeNode* op) override {
      if (op->block_node()->name_hint == *name) {
        found.realize = op;
        found.loops = stack;
        return;
      }
      // A block's own loops start a new scope.
      std::vector<const tir::ForNode*> saved;
      saved.swap(stack);
      StmtExprVisitor::VisitStmt_(op);
      stack.swap(saved);
    }
  } finder;
  finder.name = &name;
  finder.VisitStmt(f->body);
  BlockLoopNest nest = finder.found;
  for (size_t i = 0; i < nest.loops.size(); ++i) {
    const tir::Stmt& body = nest.loops[i]->body;
    const void* next = i + 1 < nest.loops.size() ? static_cast<const void*>(nest.loops[i + 1])
                                                 : static_cast<const void*>(nest.realize);
    if (static_cast<const void*>(body.get()) != next) nest.perfect = false;
  }
  return nest;
}

int64_t ConstExtentOf(const tir::ForNode* loop) {
  int64_t v = -1;
  return ir::as_const_int(loop->extent, &v) ? v : -1;
}

int64_t ConstExtent(const tir::Schedule& sch, const tir::LoopRV& loop) {
  int64_t v = -1;
  if (!ir::as_const_int(sch.GetFor(loop)->extent, &v)) return -1;
  return v;
}

int64_t IntAnnotation(const tir::BlockNode* b, const std::string& key, int64_t dflt) {
  auto it = b->annotations.find(key);
  int64_t v = dflt;
  if (it == b->annotations.end() || !ir::as_const_int(it->second, &v)) return dflt;
  return v;
}

bool ReadsBuffer(const tir::BlockNode* b, const tir::Buffer& buf) {
  for (const auto& r : b->reads)
    if (r.buffer.same_as(buf)) return true;
  return false;
}

bool IsParam(const tir::PrimFunc& f, const tir::Buffer& buf) {
  for (const auto& p : f->params)
    if (buf.same_as(p)) return true;
  return false;
}

std::string SoleReader(const tir::PrimFunc& f, const tir::BlockNode* producer) {
  if (producer->writes.empty()) return "";
  const tir::Buffer& out = producer->writes[0].buffer;
  std::string reader;
  int readers = 0;
  for (const tir::BlockNode* b : NonRootBlocks(f))
    if (b != producer && ReadsBuffer(b, out)) ++readers, reader = b->name_hint;
  return readers == 1 ? reader : "";
}

bool FuseEpilogue(Schedule& sch, const std::string& epilogue, const LoopRV& tile_loop, const ScheduleOptions& opt,
                  const char* schedule) {
  if (epilogue.empty()) return false;
  try {
    BlockRV e = sch.get_block(epilogue);
    sch.reverse_compute_at(e, tile_loop);
    if (!opt.vectorize) return true;
    std::vector<LoopRV> el = sch.get_loops(e);
    const int64_t e_ext = ConstExtent(sch, el.back());
    if (e_ext > 1 && e_ext <= 16) {
      sch.vectorize(el.back());
    } else if (e_ext > 16 && e_ext % opt.vector_lanes == 0 && e_ext / opt.vector_lanes <= 16) {
      // A tile row of several vectors (nv > 1): vectors of the target's width, unrolled.
      std::vector<LoopRV> parts = sch.split(el.back(), {-1, opt.vector_lanes});
      sch.vectorize(parts[1]);
      sch.unroll(parts[0]);  // el.back() is not visited below: its parts are scheduled here
    }
    const auto* tile_var = sch.GetFor(tile_loop)->loop_var.get();
    size_t first = el.size();
    for (size_t i = 0; i < el.size(); ++i)
      if (sch.GetFor(el[i])->loop_var.get() == tile_var) first = i + 1;
    for (size_t i = first; i + 1 < el.size(); ++i)
      if (ConstExtent(sch, el[i]) > 1 && ConstExtent(sch, el[i]) <= 16) sch.unroll(el[i]);
    return true;
  } catch (const ScheduleError& err) {
    DebugRefusedStep(schedule, "epilogue", err);
    return false;
  }
}

}  // namespace tessera::topi::x86
