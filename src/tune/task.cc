#include "tessera/tune/task.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"

namespace tessera::tune {

std::string WorkloadHash(const tir::PrimFunc& func) {
  const tir::PrimFunc renamed = tir::PrimFunc::make("main", func->params, func->body, {}, func->shape_vars);
  return Fnv1a64Hex(tir::AsText(renamed));
}

std::string Fnv1a64Hex(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

// Counts float operations of stored values, weighted by the enclosing loops' trip counts.
class FlopCounter : public tir::StmtExprVisitor {
 public:
  double flops = 0;

 protected:
  void VisitStmt_(const tir::ForNode* op) override {
    int64_t ext = 1;
    ir::as_const_int(op->extent, &ext);
    const double saved = trips_;
    trips_ *= static_cast<double>(std::max<int64_t>(ext, 1));
    tir::StmtExprVisitor::VisitStmt_(op);
    trips_ = saved;
  }
  void VisitStmt_(const tir::BlockNode* op) override {
    // A block's init runs once per spatial point, far less often than its body: skip it.
    VisitStmt(op->body);
  }
  void VisitStmt_(const tir::BufferStoreNode* op) override {
    if (!op->value.dtype().is_float()) return;
    ops_ = 0;
    VisitExpr(op->value);
    flops += ops_ * trips_;
  }
  void VisitBinary_(const ir::PrimExprNode* op, const ir::PrimExpr& a, const ir::PrimExpr& b) override {
    if (op->dtype.is_float()) {
      switch (op->kind) {
        case ir::ExprKind::kAdd: case ir::ExprKind::kSub: case ir::ExprKind::kMul: case ir::ExprKind::kDiv:
        case ir::ExprKind::kMin: case ir::ExprKind::kMax:
          ops_ += 1;
          break;
        default:
          break;
      }
    }
    ir::ExprVisitor::VisitBinary_(op, a, b);
  }
  void VisitExpr_(const ir::CallNode* op) override {
    if (op->dtype.is_float()) ops_ += 1;
    ir::ExprVisitor::VisitExpr_(op);
  }

 private:
  double trips_ = 1;
  double ops_ = 0;
};

}  // namespace

double EstimateFlops(const tir::PrimFunc& func) {
  FlopCounter c;
  c.VisitStmt(func->body);
  return c.flops;
}

std::vector<TuneTask> DeduplicateTasks(std::vector<TuneTask> tasks) {
  std::vector<TuneTask> out;
  std::map<std::string, size_t> index;
  for (TuneTask& t : tasks) {
    auto [it, fresh] = index.emplace(t.workload_hash, out.size());
    if (fresh) {
      out.push_back(std::move(t));
      continue;
    }
    TuneTask& first = out[it->second];
    first.weight += t.weight;
    first.kernels.insert(first.kernels.end(), t.kernels.begin(), t.kernels.end());
  }
  return out;
}

}  // namespace tessera::tune
