// decompose_reduction (TensorIR §3.3): split a reduction block's init into its own block,
// placed just before a chosen loop, under copies of the spatial loops inside that loop.
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT

BlockRV Schedule::decompose_reduction(const BlockRV& block, const LoopRV& loop) {
  static const char* kPrim = "decompose_reduction";
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  LoopInfo linfo = ScheduleAccess::ResolveLoop(*this, loop, kPrim);
  const BlockNode* b = info.block;
  const std::string& name = b->name_hint;
  if (!b->init.defined()) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", name, "' has no init (it is not a reduction, or was already decomposed)");
  }
  int k = -1;
  for (size_t i = 0; i < info.loops.size(); ++i) {
    if (info.loops[i] == linfo.loop) k = static_cast<int>(i);
  }
  if (k < 0) TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(linfo.loop), " is not an ancestor of block '", name, "'");
  std::set<const VarNode*> red = ReductionLoopVars(info.realize);
  std::set<const VarNode*> spatial = SpatialLoopVars(info.realize);
  for (int i = 0; i < k; ++i) {
    if (red.count(info.loops[i]->loop_var.get_var())) {
      TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(info.loops[i]), " above loop ", LoopName(linfo.loop),
                    " is bound to a reduction iter var of block '", name,
                    "'; decompose at a loop outside every reduction loop");
    }
  }
  for (size_t i = k; i < info.loops.size(); ++i) {
    const VarNode* v = info.loops[i]->loop_var.get_var();
    if (spatial.count(v) && red.count(v)) {
      TESSERA_THROW(ScheduleError, kPrim, ": loop ", LoopName(info.loops[i]),
                    " is bound to both spatial and reduction iter vars of block '", name, "'");
    }
  }
  // Copies of the spatial loops at and below `loop`, and the init block's fresh spatial iter
  // vars, bound like the originals.
  const LoopCopies loops = CopySpatialLoops(info, k, spatial, "_init");
  IterVarCopies ivc = CopySpatialIterVars(info.realize, loops.map);
  const std::map<const VarNode*, PrimExpr>& iv_map = ivc.map;
  for (const auto& iv : b->iter_vars) {
    if (iv.iter_type == IterVarType::kCommReduce && UsesAnyVar(b->init, {iv.var.get_var()})) {
      TESSERA_THROW(ScheduleError, kPrim, ": the init of block '", name, "' uses reduction iter var '", iv.var->name_hint, "'");
    }
  }
  Stmt init_body = Substitute(b->init, iv_map);
  std::vector<BufferRegion> writes = b->writes;
  for (auto& w : writes) {
    for (auto& r : w.region) r = Range(Substitute(r.min, iv_map), Substitute(r.extent, iv_map));
  }
  std::string init_name = ScheduleAccess::FreshBlockName(*this, name + "_init");
  Stmt init_block = BlockNode::make(init_name, ivc.ivs, {}, writes, init_body);
  init_block = WithRegions(init_block.as<BlockNode>(), init_body, Stmt(), writes);
  // The predicate terms that only involve loops the init block still has.
  Stmt nest = loops.Wrap(BlockRealizeNode::make(ivc.bindings, loops.Predicate(info), init_block));
  // The reduction block without its init.
  Stmt nb = BlockNode::make(name, b->iter_vars, b->reads, b->writes, b->body, Stmt(), b->alloc_buffers, b->annotations);
  Stmt nr = BlockRealizeNode::make(info.realize->iter_values, info.realize->predicate, nb);
  Stmt new_loop = ReplaceStmts(linfo.stmt, {{info.realize, nr}});
  Stmt new_body = ReplaceStmts(func_->body, {{linfo.loop, SeqStmtNode::make({nest, new_loop})}});
  BlockRV out = NewBlockRV(init_name);
  ScheduleAccess::Commit(*this, new_body,
                         Instruction{kPrim, {RVRef{'b', block.id}, RVRef{'l', loop.id}}, {}, {RVRef{'b', out.id}}});
  return out;
}

}  // namespace tessera::tir
