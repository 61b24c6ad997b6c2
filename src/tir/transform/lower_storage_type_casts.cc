// LowerStorageTypeCasts (tir/transform/lower_storage_type_casts.h).
#include "tessera/tir/transform/lower_storage_type_casts.h"

#include "tessera/tir/float_format_cast.h"
#include "tessera/tir/functor.h"

namespace tessera::tir::transform {
namespace {

class CastLowerer : public StmtExprMutator {
 protected:
  ir::PrimExpr VisitExpr_(const ir::CastNode* op, const ir::PrimExpr& e) override {
    ir::PrimExpr value = VisitExpr(op->value);
    if (NeedsSoftwareCast(value.dtype(), e.dtype())) return CastStorageType(e.dtype(), value);
    return value.same_as(op->value) ? e : ir::cast(e.dtype(), value);
  }
};

}  // namespace

PrimFunc LowerStorageTypeCasts(const PrimFunc& func) {
  CastLowerer m;
  Stmt body = m.VisitStmt(func->body);
  if (body.same_as(func->body)) return func;
  return func.WithBody(body);
}

}  // namespace tessera::tir::transform
