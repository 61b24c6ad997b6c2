// Per-store features of a flat PrimFunc (feature_extractor.h). One pass over the statements
// keeps the loop nest around the current point; at each BufferStore an OpCounter walks the stored
// value and the indices (operations and buffer accesses), and the accesses are summarized per
// buffer from their index coefficients.
#include "tessera/tune/feature_extractor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "index_coefficient.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/tir/functor.h"

namespace tessera::tune {
namespace {

using ir::ExprKind;
using ir::PrimExpr;
using tir::ForKind;

// Indices into a per-store row (PerStoreFeatureNames()).
enum Head : size_t {
  kFloatAddSub, kFloatMul, kFloatDivMod, kFloatMinMax, kFloatFma, kFloatMathCall, kFloatCmpSelect,
  kIntArith, kIntCmpLogic, kCast,
  kTripCount, kNumLoops, kVectorLanes, kVectorizedExtent, kUnrolledExtent, kParallelExtent,
  kInnermostExtent, kInnermostSerial, kInnermostParallel, kInnermostVectorized, kInnermostUnrolled,
  kStoresInInnermostBody, kGuarded,
};
enum PerBuffer : size_t {
  kRead, kWrite, kTouchedBytes, kStrideInnermost, kStrideLanes, kStrideVarying, kReuse, kAccessedBytes, kBufferBytes,
};

using Row = std::vector<double>;  // unscaled

struct Loop {
  const ir::VarNode* var;
  int64_t extent;     // 1 when not constant
  ForKind kind;
  int64_t stores_in_body;  // BufferStores directly in the body (not in nested loops)
};

struct Access {
  tir::Buffer buffer;
  PrimExpr index;
  bool write;
};

int64_t ConstOr(const PrimExpr& e, int64_t fallback) {
  int64_t v = 0;
  return ir::as_const_int(e, &v) ? v : fallback;
}

int64_t ElementBytes(const tir::Buffer& b) { return std::max(1, (b->dtype.bits() + 7) / 8); }

// Elements of a buffer with a constant shape; -1 otherwise.
int64_t NumElementsOrUnknown(const tir::Buffer& b) {
  int64_t n = 1;
  for (const auto& d : b->shape) {
    const int64_t e = ConstOr(d, -1);
    if (e < 0) return -1;
    n *= e;
  }
  return n;
}

bool IsFloatType(DataType t) { return t.is_floating(); }
bool IsFloatMul(const PrimExpr& e) { return e.defined() && e->kind == ExprKind::kMul && IsFloatType(e.dtype()); }

// Counts operations (per lane) and collects loads of an expression.
class OpCounter : public tir::StmtExprVisitor {
 public:
  explicit OpCounter(Row& row, std::vector<Access>& accesses) : row_(row), accesses_(accesses) {}

 protected:
  using tir::StmtExprVisitor::VisitExpr_;

  void VisitBinary_(const ir::PrimExprNode* op, const PrimExpr& a, const PrimExpr& b) override {
    const double lanes = op->dtype.lanes();
    const bool fp = IsFloatType(a.dtype());
    switch (op->kind) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
        row_[fp ? kFloatAddSub : kIntArith] += lanes;
        if (fp && (IsFloatMul(a) || IsFloatMul(b))) row_[kFloatFma] += lanes;
        break;
      case ExprKind::kMul: row_[fp ? kFloatMul : kIntArith] += lanes; break;
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: row_[fp ? kFloatDivMod : kIntArith] += lanes; break;
      case ExprKind::kMin:
      case ExprKind::kMax: row_[fp ? kFloatMinMax : kIntArith] += lanes; break;
      default: row_[fp ? kFloatCmpSelect : kIntCmpLogic] += lanes; break;  // comparisons, and, or
    }
    tir::StmtExprVisitor::VisitBinary_(op, a, b);
  }
  void VisitExpr_(const ir::NotNode* op) override {
    row_[kIntCmpLogic] += op->dtype.lanes();
    tir::StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const ir::SelectNode* op) override {
    row_[IsFloatType(op->dtype) ? kFloatCmpSelect : kIntCmpLogic] += op->dtype.lanes();
    tir::StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const ir::CastNode* op) override {
    row_[kCast] += op->dtype.lanes();
    tir::StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const ir::CallNode* op) override {
    row_[op->op == "fma" ? kFloatFma : kFloatMathCall] += op->dtype.lanes();
    tir::StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const tir::BufferLoadNode* op) override {
    TESSERA_ICHECK(op->indices.size() == 1, "feature extraction needs a flat function (LowerToFlat): a load of '",
                   op->buffer->name, "' has ", op->indices.size(), " indices");
    accesses_.push_back({op->buffer, op->indices[0], false});
    tir::StmtExprVisitor::VisitExpr_(op);
  }

 private:
  Row& row_;
  std::vector<Access>& accesses_;
};

// BufferStores directly in `s` (not inside a nested loop).
int64_t CountShallowStores(const tir::Stmt& s) {
  if (!s.defined()) return 0;
  switch (s->kind) {
    case tir::StmtKind::kBufferStore: return 1;
    case tir::StmtKind::kSeqStmt: {
      int64_t n = 0;
      for (const auto& c : static_cast<const tir::SeqStmtNode*>(s.get())->seq) n += CountShallowStores(c);
      return n;
    }
    case tir::StmtKind::kIfThenElse: {
      const auto* op = static_cast<const tir::IfThenElseNode*>(s.get());
      return CountShallowStores(op->then_case) + CountShallowStores(op->else_case);
    }
    case tir::StmtKind::kLetStmt: return CountShallowStores(static_cast<const tir::LetStmtNode*>(s.get())->body);
    case tir::StmtKind::kAllocate: return CountShallowStores(static_cast<const tir::AllocateNode*>(s.get())->body);
    default: return 0;
  }
}

// Summary of one access under the current loop nest.
struct AccessSummary {
  double touched_elements;
  double stride_innermost;  // w.r.t. the innermost loop
  double stride_lanes;      // between the lanes of a vector (Ramp) index
  double stride_varying;    // w.r.t. the innermost of the lanes and loops the index varies with
};

AccessSummary Summarize(const Access& a, const std::vector<Loop>& loops, const detail::LetBindings& lets) {
  // The loops the index walks, innermost last; a vector (Ramp) index adds its lanes as the
  // innermost one.
  std::vector<std::pair<int64_t, int64_t>> walk;  // (extent, |coefficient|)
  for (const auto& l : loops) walk.emplace_back(l.extent, std::llabs(detail::IndexCoefficient(a.index, l.var, lets)));
  const double stride_innermost = walk.empty() ? 0.0 : static_cast<double>(walk.back().second);
  double stride_lanes = 0;
  if (a.index->kind == ExprKind::kRamp) {
    const auto* r = static_cast<const ir::RampNode*>(a.index.get());
    walk.emplace_back(r->lanes, std::llabs(ConstOr(r->stride, 1)));
    stride_lanes = static_cast<double>(walk.back().second);
  } else if (a.index.dtype().lanes() > 1) {
    walk.emplace_back(a.index.dtype().lanes(), 0);  // a Broadcast index: one element, all lanes
  }
  double span = 1, product = 1;
  for (const auto& [extent, coef] : walk) {
    if (coef == 0) continue;
    span += static_cast<double>(coef) * static_cast<double>(extent - 1);
    product *= static_cast<double>(extent);
  }
  double touched = std::min(span, product);
  const int64_t elems = NumElementsOrUnknown(a.buffer);
  if (elems > 0) touched = std::min(touched, static_cast<double>(elems));
  AccessSummary s{touched, stride_innermost, stride_lanes, 0};
  for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
    if (it->second != 0 && it->first > 1) {
      s.stride_varying = static_cast<double>(it->second);
      break;
    }
  }
  return s;
}

class Extractor : public tir::StmtExprVisitor {
 public:
  std::vector<Row> rows;
  double alloc_bytes = 0, num_allocs = 0, num_loops = 0, max_depth = 0;

 protected:
  using tir::StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const tir::ForNode* op) override {
    ++num_loops;
    loops_.push_back({op->loop_var.get_var(), std::max<int64_t>(1, ConstOr(op->extent, 1)), op->for_kind,
                      CountShallowStores(op->body)});
    max_depth = std::max(max_depth, static_cast<double>(loops_.size()));
    VisitStmt(op->body);
    loops_.pop_back();
  }
  void VisitStmt_(const tir::LetStmtNode* op) override {
    lets_[op->var.get_var()] = op->value;
    VisitStmt(op->body);
    lets_.erase(op->var.get_var());
  }
  void VisitStmt_(const tir::IfThenElseNode* op) override {
    ++guards_;
    VisitStmt(op->then_case);
    if (op->else_case.defined()) VisitStmt(op->else_case);
    --guards_;
  }
  void VisitStmt_(const tir::AllocateNode* op) override {
    ++num_allocs;
    const int64_t elems = NumElementsOrUnknown(op->buffer);
    if (elems > 0) alloc_bytes += static_cast<double>(elems * ElementBytes(op->buffer));
    VisitStmt(op->body);
  }
  void VisitStmt_(const tir::BlockNode*) override { NotFlat("a Block"); }
  void VisitStmt_(const tir::BlockRealizeNode*) override { NotFlat("a BlockRealize"); }
  void VisitStmt_(const tir::BufferStoreNode* op) override;

 private:
  [[noreturn]] static void NotFlat(const char* what) {
    TESSERA_THROW(InternalError, "feature extraction needs a flat function (tir::transform::LowerToFlat): found ", what);
  }

  std::vector<Loop> loops_;
  detail::LetBindings lets_;
  int guards_ = 0;
};

void Extractor::VisitStmt_(const tir::BufferStoreNode* op) {
  TESSERA_ICHECK(op->indices.size() == 1, "feature extraction needs a flat function (LowerToFlat): a store to '",
                 op->buffer->name, "' has ", op->indices.size(), " indices");
  Row row(kPerStoreLength, 0.0);
  std::vector<Access> accesses{{op->buffer, op->indices[0], true}};
  OpCounter counter(row, accesses);
  counter.VisitExpr(op->value);
  counter.VisitExpr(op->indices[0]);

  double trip = 1, vec = 1, unroll = 1, par = 1;
  bool any_vec = false, any_unroll = false, any_par = false;
  for (const auto& l : loops_) {
    trip *= static_cast<double>(l.extent);
    if (l.kind == ForKind::kVectorized) vec *= static_cast<double>(l.extent), any_vec = true;
    if (l.kind == ForKind::kUnrolled) unroll *= static_cast<double>(l.extent), any_unroll = true;
    if (l.kind == ForKind::kParallel) par *= static_cast<double>(l.extent), any_par = true;
  }
  for (size_t i = kFloatAddSub; i <= kCast; ++i) row[i] *= trip;
  row[kTripCount] = trip;
  row[kNumLoops] = static_cast<double>(loops_.size());
  row[kVectorLanes] = op->value.dtype().lanes();
  row[kVectorizedExtent] = any_vec ? vec : 0;
  row[kUnrolledExtent] = any_unroll ? unroll : 0;
  row[kParallelExtent] = any_par ? par : 0;
  if (!loops_.empty()) {
    const Loop& inner = loops_.back();
    row[kInnermostExtent] = static_cast<double>(inner.extent);
    row[inner.kind == ForKind::kSerial     ? kInnermostSerial
        : inner.kind == ForKind::kParallel ? kInnermostParallel
        : inner.kind == ForKind::kVectorized ? kInnermostVectorized
                                             : kInnermostUnrolled] = 1;
    row[kStoresInInnermostBody] = static_cast<double>(inner.stores_in_body);
  }
  row[kGuarded] = guards_ > 0 ? 1 : 0;

  // Accesses per buffer: flags and counts summed, footprint and strides of its largest access.
  struct BufferFeatures {
    tir::Buffer buffer;
    bool read = false, write = false;
    double accesses = 0;  // elements
    AccessSummary largest{0, 0, 0, 0};
  };
  std::vector<BufferFeatures> buffers;
  for (const auto& a : accesses) {
    auto it = std::find_if(buffers.begin(), buffers.end(), [&](const BufferFeatures& b) { return b.buffer.same_as(a.buffer); });
    if (it == buffers.end()) it = buffers.insert(buffers.end(), BufferFeatures{a.buffer});
    (a.write ? it->write : it->read) = true;
    it->accesses += trip * a.index.dtype().lanes();
    AccessSummary s = Summarize(a, loops_, lets_);
    if (s.touched_elements > it->largest.touched_elements) it->largest = s;
  }
  auto touched_bytes = [](const BufferFeatures& b) {
    return b.largest.touched_elements * static_cast<double>(ElementBytes(b.buffer));
  };
  std::stable_sort(buffers.begin(), buffers.end(), [&](const BufferFeatures& x, const BufferFeatures& y) {
    return touched_bytes(x) > touched_bytes(y);
  });
  for (size_t i = 0; i < buffers.size() && i < kMaxBuffers; ++i) {
    const BufferFeatures& b = buffers[i];
    double* slot = row.data() + kPerStoreHeadLength + i * kPerBufferLength;
    const double elem_bytes = static_cast<double>(ElementBytes(b.buffer));
    const int64_t elems = NumElementsOrUnknown(b.buffer);
    slot[kRead] = b.read;
    slot[kWrite] = b.write;
    slot[kTouchedBytes] = touched_bytes(b);
    slot[kStrideInnermost] = b.largest.stride_innermost;
    slot[kStrideLanes] = b.largest.stride_lanes;
    slot[kStrideVarying] = b.largest.stride_varying;
    slot[kReuse] = b.accesses / std::max(1.0, b.largest.touched_elements);
    slot[kAccessedBytes] = b.accesses * elem_bytes;
    slot[kBufferBytes] = elems > 0 ? static_cast<double>(elems) * elem_bytes : 0;
  }
  rows.push_back(std::move(row));
  // Loads inside the indices of loads were visited by the counter; nothing else to visit.
}

float Scale(double x) { return static_cast<float>(std::log2(1.0 + std::max(0.0, x))); }

std::vector<float> ScaleRow(const Row& r) {
  std::vector<float> out(r.size());
  std::transform(r.begin(), r.end(), out.begin(), Scale);
  return out;
}

Extractor Run(const tir::PrimFunc& flat) {
  TESSERA_ICHECK(flat.defined(), "feature extraction of an undefined PrimFunc");
  Extractor ex;
  ex.VisitStmt(flat->body);
  return ex;
}

}  // namespace

std::vector<std::vector<float>> PerStoreFeatures(const tir::PrimFunc& flat) {
  Extractor ex = Run(flat);
  std::vector<std::vector<float>> out;
  for (const auto& r : ex.rows) out.push_back(ScaleRow(r));
  return out;
}

std::vector<float> ExtractFeatures(const tir::PrimFunc& flat) {
  Extractor ex = Run(flat);
  Row sum(kPerStoreLength, 0.0), max(kPerStoreLength, 0.0);
  for (const auto& r : ex.rows) {
    for (size_t i = 0; i < kPerStoreLength; ++i) {
      sum[i] += r[i];
      max[i] = std::max(max[i], r[i]);
    }
  }
  double param_bytes = 0;
  for (const auto& p : flat->params) {
    const int64_t elems = NumElementsOrUnknown(p);
    if (elems > 0) param_bytes += static_cast<double>(elems * ElementBytes(p));
  }
  Row all = sum;
  all.insert(all.end(), max.begin(), max.end());
  for (double f : {ex.alloc_bytes, ex.num_allocs, ex.num_loops, static_cast<double>(ex.rows.size()), ex.max_depth,
                   param_bytes}) {
    all.push_back(f);
  }
  TESSERA_ICHECK(all.size() == kFeatureLength);
  return ScaleRow(all);
}

}  // namespace tessera::tune
