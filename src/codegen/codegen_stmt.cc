// CodeGenLLVM: statements. Loops are emitted as header / body / latch with the loop
// metadata of their kind on the back edge; Allocate gives a 64-byte aligned buffer.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>

#include "codegen_llvm.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"

namespace tessera::codegen::detail {

namespace {
// Local buffers up to this size live on the stack (in the entry block, so a loop
// around the Allocate reuses one slot); larger ones are heap allocated.
constexpr int64_t kMaxStackAllocBytes = 256 * 1024;
}  // namespace

void CodeGenLLVM::EmitStmt(const tir::Stmt& s) {
  using tir::StmtKind;
  TESSERA_ICHECK(s.defined(), "LLVM codegen: undefined statement");
  switch (s->kind) {
    case StmtKind::kBufferStore:
      return EmitStore(s.as<tir::BufferStoreNode>());
    case StmtKind::kFor:
      return EmitFor(s.as<tir::ForNode>());
    case StmtKind::kSeqStmt:
      for (const tir::Stmt& c : s.as<tir::SeqStmtNode>()->seq) EmitStmt(c);
      return;
    case StmtKind::kIfThenElse: {
      auto* op = s.as<tir::IfThenElseNode>();
      llvm::Value* cond = MakeValue(op->condition);
      auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", state_.fn);
      auto* else_bb = op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", state_.fn) : nullptr;
      auto* end_bb = llvm::BasicBlock::Create(ctx_, "if.end", state_.fn);
      builder_.CreateCondBr(cond, then_bb, else_bb ? else_bb : end_bb);
      builder_.SetInsertPoint(then_bb);
      EmitStmt(op->then_case);
      builder_.CreateBr(end_bb);
      if (else_bb) {
        builder_.SetInsertPoint(else_bb);
        EmitStmt(op->else_case);
        builder_.CreateBr(end_bb);
      }
      builder_.SetInsertPoint(end_bb);
      return;
    }
    case StmtKind::kLetStmt: {
      auto* op = s.as<tir::LetStmtNode>();
      const ir::VarNode* v = op->var.get_var();
      auto old = state_.vars.find(v);
      llvm::Value* prev = old != state_.vars.end() ? old->second : nullptr;
      Bind(v, MakeValue(op->value));
      EmitStmt(op->body);
      if (prev) Bind(v, prev); else Unbind(v);
      return;
    }
    case StmtKind::kEvaluate: {
      const ir::PrimExpr& v = s.as<tir::EvaluateNode>()->value;
      if (!v.as<ir::IntImmNode>()) MakeValue(v);
      return;
    }
    case StmtKind::kAllocate:
      return EmitAllocate(s.as<tir::AllocateNode>());
    case StmtKind::kBlock:
    case StmtKind::kBlockRealize:
      break;
  }
  TESSERA_THROW(InternalError,
                "LLVM codegen: Block / BlockRealize reached codegen; run the TIR lowering passes first");
}

void CodeGenLLVM::EmitStore(const tir::BufferStoreNode* op) {
  DataType t = op->value.dtype();
  bool contiguous = false;
  llvm::Value* addr = BufferAddress(op->buffer, op->indices, t.lanes(), &contiguous);
  llvm::Value* v = MakeValue(op->value);
  int index_lanes = 1;
  for (const auto& i : op->indices) index_lanes = std::max(index_lanes, i.dtype().lanes());
  if (index_lanes > 1 && t.lanes() == 1) {  // scalar value stored to several lanes
    v = Splat(v, index_lanes);
    t = t.with_lanes(index_lanes);
  }
  if (t.bits() < 8) v = t.is_int() ? builder_.CreateSExt(v, MemType(t)) : builder_.CreateZExt(v, MemType(t));
  llvm::Align align(std::max(1, (t.bits() + 7) / 8));
  if (contiguous) {
    builder_.CreateAlignedStore(v, addr, align);
  } else {
    builder_.CreateMaskedScatter(v, addr, align);
  }
}

void CodeGenLLVM::EmitFor(const tir::ForNode* op) {
  if (op->for_kind == tir::ForKind::kParallel && state_.parallel_depth == 0) {
    EmitParallelFor(op);
    return;
  }
  DataType vt = op->loop_var.dtype();
  llvm::Value* begin = EmitCast(vt, op->min.dtype(), MakeValue(op->min));
  llvm::Value* extent = EmitCast(vt, op->extent.dtype(), MakeValue(op->extent));
  llvm::Value* end = builder_.CreateAdd(begin, extent, "", false, /*nsw=*/true);
  EmitSerialLoop(op, begin, end);
}

void CodeGenLLVM::EmitSerialLoop(const tir::ForNode* op, llvm::Value* begin, llvm::Value* end) {
  llvm::BasicBlock* pre = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, "for.header." + op->loop_var->name_hint, state_.fn);
  auto* body = llvm::BasicBlock::Create(ctx_, "for.body." + op->loop_var->name_hint, state_.fn);
  auto* exit = llvm::BasicBlock::Create(ctx_, "for.end." + op->loop_var->name_hint, state_.fn);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* iv = builder_.CreatePHI(begin->getType(), 2, op->loop_var->name_hint);
  iv->addIncoming(begin, pre);
  builder_.CreateCondBr(builder_.CreateICmpSLT(iv, end), body, exit);
  builder_.SetInsertPoint(body);
  const ir::VarNode* v = op->loop_var.get_var();
  Bind(v, iv);
  EmitStmt(op->body);
  Unbind(v);
  llvm::Value* next = builder_.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), "", false, true);
  llvm::BranchInst* back = builder_.CreateBr(header);
  int64_t const_extent = -1;
  if (auto* imm = op->extent.as<ir::IntImmNode>()) const_extent = imm->value;
  back->setMetadata(llvm::LLVMContext::MD_loop, MakeLoopMetadata(ctx_, op->for_kind, const_extent));
  iv->addIncoming(next, builder_.GetInsertBlock());
  builder_.SetInsertPoint(exit);
}

void CodeGenLLVM::EmitAllocate(const tir::AllocateNode* op) {
  const tir::Buffer& buf = op->buffer;
  llvm::Type* elem = MemType(buf->dtype);
  int64_t elem_bytes = static_cast<int64_t>(module_->getDataLayout().getTypeAllocSize(elem));
  bool static_shape = true;
  for (const auto& d : buf->shape) static_shape &= d.as<ir::IntImmNode>() != nullptr;
  int64_t count = static_shape ? std::max<int64_t>(1, buf.NumElements()) : -1;
  const ir::VarNode* data = buf->data.get_var();
  state_.aligned_buffers.insert(data);
  if (buf->scope == "local" && static_shape && count * elem_bytes <= kMaxStackAllocBytes) {
    llvm::Value* p = CreateEntryAlloca(elem, builder_.getInt64(count), 64, buf->name.c_str());
    Bind(data, p);
    EmitStmt(op->body);
    Unbind(data);
    return;
  }
  // Heap ("global" scope, dynamic or large): aligned_alloc(64, bytes rounded up to 64).
  llvm::Value* bytes;
  if (static_shape) {
    bytes = builder_.getInt64((count * elem_bytes + 63) / 64 * 64);
  } else {
    llvm::Value* n = builder_.getInt64(elem_bytes);
    for (const auto& d : buf->shape) {
      n = builder_.CreateMul(n, EmitCast(DataType::Int(64), d.dtype(), MakeValue(d)));
    }
    bytes = builder_.CreateAnd(builder_.CreateAdd(n, builder_.getInt64(63 + 64)), builder_.getInt64(~int64_t{63}));
  }
  auto* i64 = builder_.getInt64Ty();
  auto* ptr = builder_.getPtrTy();
  auto alloc = LibFunction("aligned_alloc", llvm::FunctionType::get(ptr, {i64, i64}, false));
  auto dealloc = LibFunction("free", llvm::FunctionType::get(builder_.getVoidTy(), {ptr}, false));
  llvm::Value* p = builder_.CreateCall(alloc, {builder_.getInt64(64), bytes}, buf->name);
  llvm::Value* failed = builder_.CreateICmpEQ(p, llvm::ConstantPointerNull::get(ptr));
  EmitReturnIfNonZero(builder_.CreateSelect(failed, builder_.getInt32(runtime::kKernelOutOfMemory),
                                            builder_.getInt32(runtime::kKernelOk)));
  Bind(data, p);
  state_.heap_buffers.push_back(p);  // freed by an early return inside the body too
  EmitStmt(op->body);
  state_.heap_buffers.pop_back();
  Unbind(data);
  builder_.CreateCall(dealloc, {p});
}

}  // namespace tessera::codegen::detail
