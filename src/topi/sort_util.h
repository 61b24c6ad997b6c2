// Statement builders shared by the extern stages that sort (topi::topk_indices, src/topi/sort.cc;
// topi::non_max_suppression, src/topi/nms.cc): a bottom-up merge sort of one row of int32 values
// of (key, value) pairs written as TensorIR statements (te::extern_op bodies).
#pragma once

#include <functional>
#include <utility>

#include "tessera/tir/stmt.h"
#include "tessera/topi/util.h"

namespace tessera::topi::detail {

inline PrimExpr Load(const tir::Buffer& b, std::vector<PrimExpr> idx) {
  return tir::BufferLoadNode::make(b, std::move(idx));
}
inline tir::Stmt Store(const tir::Buffer& b, PrimExpr v, std::vector<PrimExpr> idx) {
  return tir::BufferStoreNode::make(b, std::move(v), std::move(idx));
}
/// for v in [0, extent): body.
inline tir::Stmt Loop(const Var& v, PrimExpr extent, tir::Stmt body, tir::ForKind kind = tir::ForKind::kSerial) {
  return tir::ForNode::make(v, Index(0), std::move(extent), kind, std::move(body));
}
inline tir::Stmt If(PrimExpr c, tir::Stmt then_case, tir::Stmt else_case = tir::Stmt()) {
  return tir::IfThenElseNode::make(std::move(c), std::move(then_case), std::move(else_case));
}

/// The scratch of MergeSortRow: values a, b int32 [rows, n] and their keys ka, kb [rows, n] (the
/// pairs ping-pong between a / ka and b / kb; keys are read in order, not gathered, while merging).
struct MergeSortScratch {
  tir::Buffer a, b, ka, kb;
  static MergeSortScratch Make(const std::string& prefix, int64_t rows, int64_t n, DataType key_dtype);
  std::vector<tir::Buffer> buffers() const { return {a, b, ka, kb}; }
};

/// A buffer of `n` scalars of `dtype` private to the statements `body` builds over it (a "local"
/// tir::AllocateNode: on the stack, where LLVM keeps it in registers): the mutable state of an
/// extern's loop.
tir::Stmt WithLocal(const std::string& name, DataType dtype, int64_t n,
                    const std::function<tir::Stmt(const tir::Buffer&)>& body);

/// A strict total order of (key, value) pairs: whether (k1, v1) comes before (k2, v2).
using PairOrder = std::function<PrimExpr(PrimExpr k1, PrimExpr v1, PrimExpr k2, PrimExpr v2)>;

/// Sorts the pairs (ka, a)[row, 0..count) (count <= n, a run-time value) by `before`, in
/// ceil(log2 n) passes of doubling width (a pass whose width reaches count copies); returns the
/// statements and the value buffer that holds the sorted row (a or b: fixed by n). O(n log n).
/// The merge's two read positions are local state (WithLocal).
std::pair<tir::Stmt, tir::Buffer> MergeSortRow(const MergeSortScratch& s, const PrimExpr& row, const PrimExpr& count,
                                               int64_t n, const PairOrder& before);

}  // namespace tessera::topi::detail
