// TensorIR statements (TensorIR, arXiv 2207.04296, §3; TVM include/tvm/tir/stmt.h).
//
// A scheduled PrimFunc is a loop nest of For whose leaves are BlockRealize: a Block
// declares its iteration variables (spatial or reduction, each with its domain),
// the buffer regions it reads and writes, an optional `init` (the reduction's
// initialisation, run when every reduction iter var is at its minimum) and a body.
// BlockRealize binds each block iter var to an expression of the surrounding loop
// variables, guarded by a predicate. Schedule primitives transform loops around
// blocks; lowering (tir/transform) removes blocks and flattens buffers, leaving
// plain loops of BufferStore that codegen consumes.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/tir/expr.h"

namespace tessera::tir {

enum class StmtKind : uint8_t {
  kBufferStore, kFor, kSeqStmt, kIfThenElse, kLetStmt, kEvaluate, kAllocate,
  kBlock, kBlockRealize,
};

struct StmtNode {
  const StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

class Stmt : public ir::NodeRef<StmtNode> {
 public:
  using NodeRef::NodeRef;
  Stmt() = default;
  template <typename T>
  Stmt(std::shared_ptr<const T> n) : NodeRef(std::move(n)) {}  // NOLINT: implicit upcast
};

/// buffer[indices] = value. A Ramp index with a vector value stores several lanes.
struct BufferStoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBufferStore;
  Buffer buffer;
  PrimExpr value;
  std::vector<PrimExpr> indices;
  BufferStoreNode(Buffer b, PrimExpr v, std::vector<PrimExpr> i)
      : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
  static Stmt make(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices);
};

enum class ForKind : uint8_t {
  kSerial,      ///< plain loop
  kParallel,    ///< iterations split across the runtime thread pool
  kVectorized,  ///< lowered to vector lanes by VectorizeLoop (extent must be constant)
  kUnrolled,    ///< fully unrolled by UnrollLoop (extent must be constant)
};
const char* ForKindName(ForKind kind);

/// for (loop_var = min; loop_var < min + extent; ++loop_var) body
struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  Var loop_var;
  PrimExpr min, extent;
  ForKind for_kind;
  Stmt body;
  std::map<std::string, PrimExpr> annotations;
  ForNode(Var v, PrimExpr mn, PrimExpr ext, ForKind k, Stmt b, std::map<std::string, PrimExpr> ann)
      : StmtNode(kKind), loop_var(std::move(v)), min(std::move(mn)), extent(std::move(ext)),
        for_kind(k), body(std::move(b)), annotations(std::move(ann)) {}
  static Stmt make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
                   std::map<std::string, PrimExpr> annotations = {});
};

/// Statements run in order. make() flattens nested sequences and returns the single
/// statement itself when there is only one.
struct SeqStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeqStmt;
  std::vector<Stmt> seq;
  explicit SeqStmtNode(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
  static Stmt make(std::vector<Stmt> seq);
};

struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  PrimExpr condition;
  Stmt then_case;
  Stmt else_case;  ///< may be undefined
  IfThenElseNode(PrimExpr c, Stmt t, Stmt e)
      : StmtNode(kKind), condition(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  static Stmt make(PrimExpr condition, Stmt then_case, Stmt else_case = Stmt());
};

struct LetStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLetStmt;
  Var var;
  PrimExpr value;
  Stmt body;
  LetStmtNode(Var v, PrimExpr val, Stmt b) : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Stmt make(Var var, PrimExpr value, Stmt body);
};

/// Evaluates an expression for its effect (e.g. an intrinsic call); a no-op when pure.
struct EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  PrimExpr value;
  explicit EvaluateNode(PrimExpr v) : StmtNode(kKind), value(std::move(v)) {}
  static Stmt make(PrimExpr value);
};

/// Allocates `buffer` (scope "local": on the stack / in a workspace; "global": heap)
/// for the duration of body. Produced by lowering from Block::alloc_buffers.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Buffer buffer;
  Stmt body;
  AllocateNode(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  static Stmt make(Buffer buffer, Stmt body);
};

enum class IterVarType : uint8_t {
  kDataPar,     ///< spatial: each value is an independent output point
  kCommReduce,  ///< reduction: values are combined with a commutative reducer
  kOrdered,     ///< scan: points are computed in increasing order, each may read the block's
                ///< own output at earlier points (te::scan; TVM's kOrdered). Never parallel,
                ///< vectorized or inlined.
};

/// A block iteration variable with its domain.
struct IterVar {
  Var var;
  Range dom;
  IterVarType iter_type = IterVarType::kDataPar;
};

/// A block: the unit of computation that schedules move and transform (TensorIR §3.1).
struct BlockNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBlock;
  std::string name_hint;
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  Stmt body;
  Stmt init;                          ///< may be undefined (no reduction)
  std::vector<Buffer> alloc_buffers;  ///< buffers allocated for this block's scope
  std::map<std::string, PrimExpr> annotations;
  BlockNode() : StmtNode(kKind) {}
  static Stmt make(std::string name_hint, std::vector<IterVar> iter_vars,
                   std::vector<BufferRegion> reads, std::vector<BufferRegion> writes, Stmt body,
                   Stmt init = Stmt(), std::vector<Buffer> alloc_buffers = {},
                   std::map<std::string, PrimExpr> annotations = {});
};

/// Runs `block` with its iter vars bound to iter_values when predicate holds.
struct BlockRealizeNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBlockRealize;
  std::vector<PrimExpr> iter_values;
  PrimExpr predicate;
  Stmt block;  ///< always a BlockNode
  BlockRealizeNode(std::vector<PrimExpr> v, PrimExpr p, Stmt b)
      : StmtNode(kKind), iter_values(std::move(v)), predicate(std::move(p)), block(std::move(b)) {}
  /// Checks block is a Block and iter_values has one value per block iter var.
  static Stmt make(std::vector<PrimExpr> iter_values, PrimExpr predicate, Stmt block);
  const BlockNode* block_node() const { return static_cast<const BlockNode*>(block.get()); }
};

}  // namespace tessera::tir
