// CodeGenLLVM: outlining of parallel For loops (TVM's parallel-launch lowering).
//
//   for (i = min; i < min + extent; ++i) body          // kind = parallel
// becomes, in the enclosing function,
//   closure = {min, extent, <free vars of body>}        // stack struct
//   launch = __tessera_parallel_launch
//   rc = launch ? launch(task, &closure, 0) : task(0, 1, &closure)
//   if (rc != 0) return rc
// and the task `int32_t task(int32_t id, int32_t n, void* closure)` runs the static
// share [lo, hi) of the range (the first extent % n tasks take one extra iteration)
// through an alwaysinline body function whose buffer parameters are noalias.
// Parallel loops nested inside the body run serially.
#include <set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>

#include "codegen_llvm.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/tir/functor.h"

namespace tessera::codegen::detail {

namespace {

/// The variables a statement uses but does not define, in order of first use.
class FreeVarCollector : public tir::StmtExprVisitor {
 public:
  std::vector<const ir::VarNode*> free_vars;
  std::set<const ir::VarNode*> defined;

  void Use(const ir::VarNode* v) {
    if (!defined.count(v) && seen_.insert(v).second) free_vars.push_back(v);
  }

 protected:
  using tir::StmtExprVisitor::VisitExpr_;
  using tir::StmtExprVisitor::VisitStmt_;
  void VisitExpr_(const ir::VarNode* op) override { Use(op); }
  void VisitExpr_(const tir::BufferLoadNode* op) override {
    Use(op->buffer->data.get_var());
    for (const auto& i : op->indices) VisitExpr(i);
  }
  void VisitExpr_(const ir::LetNode* op) override {
    VisitExpr(op->value);
    defined.insert(op->var.get_var());
    VisitExpr(op->body);
  }
  void VisitStmt_(const tir::BufferStoreNode* op) override {
    Use(op->buffer->data.get_var());
    VisitExpr(op->value);
    for (const auto& i : op->indices) VisitExpr(i);
  }
  void VisitStmt_(const tir::ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    defined.insert(op->loop_var.get_var());
    VisitStmt(op->body);
  }
  void VisitStmt_(const tir::LetStmtNode* op) override {
    VisitExpr(op->value);
    defined.insert(op->var.get_var());
    VisitStmt(op->body);
  }
  void VisitStmt_(const tir::AllocateNode* op) override {
    for (const auto& d : op->buffer->shape) VisitExpr(d);
    defined.insert(op->buffer->data.get_var());
    VisitStmt(op->body);
  }

 private:
  std::set<const ir::VarNode*> seen_;
};

}  // namespace

llvm::GlobalVariable* CodeGenLLVM::ParallelLaunchGlobal() {
  if (auto* g = module_->getNamedGlobal(runtime::kParallelLaunchSymbol)) return g;
  auto* ptr = builder_.getPtrTy();
  auto* g = new llvm::GlobalVariable(*module_, ptr, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
                                     llvm::ConstantPointerNull::get(ptr), runtime::kParallelLaunchSymbol);
  g->setAlignment(llvm::Align(8));
  return g;
}

void CodeGenLLVM::EmitParallelFor(const tir::ForNode* op) {
  FreeVarCollector collector;
  collector.defined.insert(op->loop_var.get_var());
  collector.VisitStmt(op->body);
  const std::vector<const ir::VarNode*>& free_vars = collector.free_vars;

  auto* i32 = builder_.getInt32Ty();
  auto* i64 = builder_.getInt64Ty();
  auto* ptr = builder_.getPtrTy();
  std::vector<llvm::Type*> fields = {i64, i64};
  for (const ir::VarNode* v : free_vars) fields.push_back(LLVMType(v->dtype));
  auto* closure_ty = llvm::StructType::get(ctx_, fields);
  std::string name = symbol_ + ".par" + std::to_string(num_outlined_++);
  DataType vt = op->loop_var.dtype();

  // The body: [lo, hi) of the loop with every free variable as a parameter.
  llvm::Function* body_fn = EmitBodyFunction(name + ".body", free_vars, {i64, i64}, [&](llvm::Function* fn) {
    state_.parallel_depth++;
    unsigned n = static_cast<unsigned>(free_vars.size());
    llvm::Value* lo = EmitCast(vt, DataType::Int(64), fn->getArg(n));
    llvm::Value* hi = EmitCast(vt, DataType::Int(64), fn->getArg(n + 1));
    EmitSerialLoop(op, lo, hi);
  });

  // The task: unpacks the closure and runs its share.
  auto saved_ip = builder_.saveIP();
  auto* task = llvm::Function::Create(llvm::FunctionType::get(i32, {i32, i32, ptr}, false),
                                      llvm::Function::InternalLinkage, name, module_);
  SetFunctionAttributes(task, /*internal_body=*/false);
  task->addFnAttr(llvm::Attribute::NoInline);  // one copy, not one more in the serial fallback
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", task));
  {
    llvm::Value* id = builder_.CreateSExt(task->getArg(0), i64);
    llvm::Value* n = builder_.CreateSExt(task->getArg(1), i64);
    llvm::Value* cl = task->getArg(2);
    llvm::Value* begin = builder_.CreateLoad(i64, builder_.CreateStructGEP(closure_ty, cl, 0));
    llvm::Value* extent = builder_.CreateLoad(i64, builder_.CreateStructGEP(closure_ty, cl, 1));
    llvm::Value* chunk = builder_.CreateSDiv(extent, n);
    llvm::Value* rest = builder_.CreateSRem(extent, n);
    llvm::Value* extra = builder_.CreateSelect(builder_.CreateICmpSLT(id, rest), id, rest);
    llvm::Value* lo = builder_.CreateAdd(builder_.CreateAdd(begin, builder_.CreateMul(id, chunk)), extra);
    llvm::Value* more = builder_.CreateZExt(builder_.CreateICmpSLT(id, rest), i64);
    llvm::Value* hi = builder_.CreateAdd(builder_.CreateAdd(lo, chunk), more);
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < free_vars.size(); ++i) {
      llvm::Type* ft = fields[i + 2];
      auto* v = builder_.CreateLoad(ft, builder_.CreateStructGEP(closure_ty, cl, static_cast<unsigned>(i + 2)),
                                    free_vars[i]->name_hint);
      if (state_.aligned_buffers.count(free_vars[i])) {
        v->setMetadata(llvm::LLVMContext::MD_align,
                       llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(builder_.getInt64(64))}));
        AssumeAligned(v);
      }
      args.push_back(v);
    }
    args.push_back(lo);
    args.push_back(hi);
    builder_.CreateRet(builder_.CreateCall(body_fn, args));
  }
  builder_.restoreIP(saved_ip);

  // The launch, in the enclosing function.
  llvm::Value* closure = CreateEntryAlloca(closure_ty, nullptr, 8, "closure");
  builder_.CreateStore(EmitCast(DataType::Int(64), op->min.dtype(), MakeValue(op->min)),
                       builder_.CreateStructGEP(closure_ty, closure, 0));
  builder_.CreateStore(EmitCast(DataType::Int(64), op->extent.dtype(), MakeValue(op->extent)),
                       builder_.CreateStructGEP(closure_ty, closure, 1));
  for (size_t i = 0; i < free_vars.size(); ++i) {
    builder_.CreateStore(Lookup(free_vars[i]),
                         builder_.CreateStructGEP(closure_ty, closure, static_cast<unsigned>(i + 2)));
  }
  llvm::Value* launch = builder_.CreateAlignedLoad(ptr, ParallelLaunchGlobal(), llvm::Align(8), "launch");
  auto* serial_bb = llvm::BasicBlock::Create(ctx_, "par.serial", state_.fn);
  auto* pool_bb = llvm::BasicBlock::Create(ctx_, "par.pool", state_.fn);
  auto* join_bb = llvm::BasicBlock::Create(ctx_, "par.join", state_.fn);
  builder_.CreateCondBr(builder_.CreateIsNull(launch), serial_bb, pool_bb);
  builder_.SetInsertPoint(serial_bb);
  llvm::Value* r_serial = builder_.CreateCall(task, {builder_.getInt32(0), builder_.getInt32(1), closure});
  builder_.CreateBr(join_bb);
  builder_.SetInsertPoint(pool_bb);
  auto* launch_ty = llvm::FunctionType::get(i32, {ptr, ptr, i32}, false);
  llvm::Value* r_pool = builder_.CreateCall(launch_ty, launch, {task, closure, builder_.getInt32(0)});
  builder_.CreateBr(join_bb);
  builder_.SetInsertPoint(join_bb);
  llvm::PHINode* rc = builder_.CreatePHI(i32, 2, "par.rc");
  rc->addIncoming(r_serial, serial_bb);
  rc->addIncoming(r_pool, pool_bb);
  EmitReturnIfNonZero(rc);
}

}  // namespace tessera::codegen::detail
