// Internal helpers shared by the schedule primitives: locating blocks and loops in the
// current function, replacing statements, a small affine simplifier, symbolic interval
// bounds (the region analysis of compute_at), and block read / write region detection.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/schedule/schedule.h"

namespace tessera::tir::sched {

using ir::VarNode;

// ------------------------------------------------------------------ locating
/// A BlockRealize in the function, with the statements from the function body down to it.
struct BlockInfo {
  Stmt realize_stmt;
  const BlockRealizeNode* realize = nullptr;
  const BlockNode* block = nullptr;
  std::vector<Stmt> path;               ///< function body ... realize_stmt (inclusive)
  std::vector<const ForNode*> loops;    ///< loops between the scope block and the realize, outermost first
  std::vector<Stmt> loop_stmts;         ///< the same loops as Stmts
  const BlockNode* scope = nullptr;     ///< enclosing block (nullptr for the root block)
};

struct LoopInfo {
  Stmt stmt;
  const ForNode* loop = nullptr;
  std::vector<Stmt> path;  ///< function body ... stmt (inclusive)
};

/// Every BlockRealize under `root` (the root block's included), in program order.
std::vector<BlockInfo> CollectBlocks(const Stmt& root);
std::optional<BlockInfo> FindBlock(const Stmt& root, const std::string& name);
std::optional<LoopInfo> FindLoop(const Stmt& root, const VarNode* loop_var);
/// Non-root blocks under `s` (BlockRealize nodes), in program order.
std::vector<const BlockRealizeNode*> BlocksUnder(const Stmt& s);
/// Whether `inner` lies in the subtree of `outer`.
bool Contains(const Stmt& outer, const StmtNode* inner);

/// Replaces statements by identity in one pass. A replacement that is an undefined Stmt
/// removes the statement; loops and sequences left empty are removed too.
Stmt ReplaceStmts(const Stmt& root, const std::map<const StmtNode*, Stmt>& repl);

// ------------------------------------------------------------------ expressions
/// Affine canonical form of integer index expressions (sum of coeff * atom + constant),
/// with floordiv / floormod by constants folded where the divisor divides the terms.
PrimExpr Simplify(const PrimExpr& e);
/// Structural equality of expressions, variables by identity.
bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b);
/// a - b when it simplifies to a constant.
bool ConstDiff(const PrimExpr& a, const PrimExpr& b, int64_t* diff);
std::set<const VarNode*> VarsIn(const PrimExpr& e);
bool UsesAnyVar(const PrimExpr& e, const std::set<const VarNode*>& vars);
bool UsesAnyVar(const Stmt& s, const std::set<const VarNode*>& vars);

/// A symbolic interval [lo, hi] (inclusive); ok = false when it could not be bounded.
struct Bound {
  PrimExpr lo, hi;
  bool ok = false;
};
/// Bounds e when each variable of `relax` ranges over its Range (other vars stay symbolic).
Bound EvalBound(const PrimExpr& e, const std::map<const VarNode*, Range>& relax);

bool IsConstTrue(const PrimExpr& e);
std::vector<PrimExpr> SplitConjuncts(const PrimExpr& e);
PrimExpr Conjoin(const std::vector<PrimExpr>& terms);  ///< true when empty

// ------------------------------------------------------------------ blocks
/// Read regions of a block detected from the loads in its init and body, in first-use
/// order: per dimension one point when every access agrees, a span when they differ by
/// constants, the buffer's full extent otherwise. Buffers the block writes are left out
/// (a reduction's read of its own output is not a read region, as in TVM).
std::vector<BufferRegion> DetectReadRegions(const BlockNode* block);
/// The block with reads re-detected (and writes given).
Stmt WithRegions(const BlockNode* block, Stmt body, Stmt init, std::vector<BufferRegion> writes);
/// Every store in a statement.
std::vector<const BufferStoreNode*> CollectStores(const Stmt& s);
/// Whether the block's statement reads `buffer` anywhere.
bool ReadsBuffer(const BlockNode* block, const Buffer& buffer);
bool WritesBuffer(const BlockNode* block, const Buffer& buffer);
/// "a reduction" (an init or a reduction iter var), "a scan" (an ordered iter var, te::scan), or
/// nullptr for a block whose iter vars are all spatial: what the primitives that need a spatial
/// block name in their refusal.
const char* NonSpatialKind(const BlockNode* block);
/// For a realize: the set of loop vars its reduction iter vars are bound to.
std::set<const VarNode*> ReductionLoopVars(const BlockRealizeNode* realize);
std::set<const VarNode*> SpatialLoopVars(const BlockRealizeNode* realize);

std::string LoopName(const ForNode* loop);

/// Copies of the loops info.loops[from..] whose vars are in `spatial` (fresh vars named
/// <loop var><suffix>), for a block placed beside the original one (decompose_reduction's
/// init, rfactor's write-back).
struct LoopCopies {
  std::vector<const ForNode*> loops;           ///< the originals, outermost first
  std::vector<Var> vars;                       ///< their copies' loop vars
  std::map<const VarNode*, PrimExpr> map;      ///< original loop var -> copy
  size_t from = 0;                             ///< the first loop of info.loops considered
  /// `body` under the copies (outermost first), their bounds substituted.
  Stmt Wrap(Stmt body) const;
  /// The conjuncts of the block's predicate that use no loop of info.loops[from..] left
  /// uncopied, with the copies substituted: the predicate of a block under the copies.
  PrimExpr Predicate(const BlockInfo& info) const;
};
LoopCopies CopySpatialLoops(const BlockInfo& info, size_t from, const std::set<const VarNode*>& spatial,
                            const std::string& suffix);

/// Fresh copies of a block's spatial iter vars (same names and domains), bound like the
/// originals with `loop_map` substituted into the bindings.
struct IterVarCopies {
  std::vector<IterVar> ivs;
  std::vector<PrimExpr> bindings;
  std::map<const VarNode*, PrimExpr> map;  ///< original iter var -> copy
};
IterVarCopies CopySpatialIterVars(const BlockRealizeNode* realize, const std::map<const VarNode*, PrimExpr>& loop_map);
/// Simplifies block bindings, predicates and loop bounds under s (after a substitution).
Stmt SimplifyBindings(const Stmt& s);
/// Replaces the root block's alloc_buffers (added / removed) in the function body.
Stmt UpdateRootAllocs(const Stmt& body, const std::vector<Buffer>& add, const Buffer& remove);

}  // namespace tessera::tir::sched

namespace tessera::tir {
/// Internal access to Schedule's state for the primitive implementations.
struct ScheduleAccess {
  static sched::BlockInfo ResolveBlock(const Schedule& s, const BlockRV& rv, const char* prim);
  static sched::LoopInfo ResolveLoop(const Schedule& s, const LoopRV& rv, const char* prim);
  static LoopRV NewLoop(Schedule& s, const Var& v) { return s.NewLoopRV(v); }
  static BlockRV NewBlock(Schedule& s, const std::string& name) { return s.NewBlockRV(name); }
  static void RemoveLoop(Schedule& s, const Var& v, const char* prim);
  static void RemoveBlock(Schedule& s, const std::string& name, const char* prim);
  /// Installs a new function body and records the instruction.
  static void Commit(Schedule& s, const Stmt& body, Instruction inst);
  static const PrimFunc& Func(const Schedule& s) { return s.func_; }
  /// A block name not used in the function: base, base_1, base_2, ...
  static std::string FreshBlockName(const Schedule& s, const std::string& base);
};
}  // namespace tessera::tir
