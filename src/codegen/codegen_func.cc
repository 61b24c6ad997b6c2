// CodeGenLLVM: types, the kernel wrapper of the ABI, body functions, function state.
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>

#include "codegen_llvm.h"
#include "tessera/tir/functor.h"
#include "tessera/support/error.h"

namespace tessera::codegen::detail {

CodeGenLLVM::CodeGenLLVM(llvm::Module* module, const target::Target& target)
    : module_(module), ctx_(module->getContext()), target_(target), builder_(module->getContext()) {}

llvm::Type* CodeGenLLVM::LLVMType(DataType t) const {
  llvm::Type* elem = nullptr;
  if (t.is_void()) return llvm::Type::getVoidTy(ctx_);
  if (t.is_handle()) {
    elem = llvm::PointerType::get(ctx_, 0);
  } else if (t.is_bool()) {
    elem = llvm::Type::getInt1Ty(ctx_);
  } else if (t.is_int() || t.is_uint()) {
    elem = llvm::Type::getIntNTy(ctx_, t.bits());
  } else if (t.is_bfloat16() || t.is_minifloat()) {
    // Storage only: values are codes, converted by tir::LowerStorageTypeCasts.
    elem = llvm::Type::getIntNTy(ctx_, t.bits());
  } else if (t.is_float()) {
    switch (t.bits()) {
      case 16: elem = llvm::Type::getHalfTy(ctx_); break;
      case 32: elem = llvm::Type::getFloatTy(ctx_); break;
      case 64: elem = llvm::Type::getDoubleTy(ctx_); break;
      default: break;
    }
  }
  if (elem == nullptr) {
    TESSERA_THROW(UnsupportedError, "LLVM codegen: data type ", t.str(), " is not supported");
  }
  return t.lanes() > 1 ? llvm::FixedVectorType::get(elem, t.lanes()) : elem;
}

llvm::Type* CodeGenLLVM::MemType(DataType t) const {
  // bool and the 4- / 2-bit types occupy one byte per element (runtime/data_type.h).
  if (t.bits() < 8) return LLVMType(DataType::UInt(8, t.lanes()));
  return LLVMType(t);
}

void CodeGenLLVM::SetFunctionAttributes(llvm::Function* fn, bool internal_body) {
  fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn->addFnAttr("target-features", target_.FeatureString());
  // Without these the x86 backend splits 512-bit vectors on CPUs that prefer 256 bits.
  fn->addFnAttr("min-legal-vector-width", std::to_string(target_.vector_width_bits));
  fn->addFnAttr("prefer-vector-width", std::to_string(target_.vector_width_bits));
  fn->addFnAttr("no-trapping-math", "true");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (internal_body) fn->addFnAttr(llvm::Attribute::AlwaysInline);
}

llvm::Value* CodeGenLLVM::CreateEntryAlloca(llvm::Type* ty, llvm::Value* count, unsigned align,
                                            const char* name) {
  llvm::BasicBlock& entry = state_.fn->getEntryBlock();
  llvm::IRBuilder<> b(&entry, entry.getFirstInsertionPt());
  llvm::AllocaInst* a = b.CreateAlloca(ty, count, name);
  a->setAlignment(llvm::Align(align));
  return a;
}

llvm::FunctionCallee CodeGenLLVM::LibFunction(const std::string& name, llvm::FunctionType* fty) {
  llvm::FunctionCallee callee = module_->getOrInsertFunction(name, fty);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) f->addFnAttr(llvm::Attribute::NoUnwind);
  return callee;
}

void CodeGenLLVM::EmitReturnIfNonZero(llvm::Value* code) {
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx_, "fail", state_.fn);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, "ok", state_.fn);
  llvm::Value* bad = builder_.CreateICmpNE(code, builder_.getInt32(0));
  builder_.CreateCondBr(bad, fail, ok, llvm::MDBuilder(ctx_).createBranchWeights(1, 1000));
  builder_.SetInsertPoint(fail);
  if (!state_.heap_buffers.empty()) {
    auto dealloc = LibFunction("free", llvm::FunctionType::get(builder_.getVoidTy(), {builder_.getPtrTy()}, false));
    for (auto it = state_.heap_buffers.rbegin(); it != state_.heap_buffers.rend(); ++it) builder_.CreateCall(dealloc, {*it});
  }
  builder_.CreateRet(code);
  builder_.SetInsertPoint(ok);
}

void CodeGenLLVM::AssumeAligned(llvm::Value* p) {
  builder_.CreateAlignmentAssumption(module_->getDataLayout(), p, 64);
}

llvm::Value* CodeGenLLVM::Lookup(const ir::VarNode* v) const {
  auto it = state_.vars.find(v);
  TESSERA_ICHECK(it != state_.vars.end(), "LLVM codegen: variable '", v->name_hint,
                 "' is used but not defined (is the PrimFunc lowered to flat form?)");
  return it->second;
}

void CodeGenLLVM::Bind(const ir::VarNode* v, llvm::Value* value) { state_.vars[v] = value; }
void CodeGenLLVM::Unbind(const ir::VarNode* v) { state_.vars.erase(v); }

llvm::Function* CodeGenLLVM::EmitBodyFunction(const std::string& name,
                                              const std::vector<const ir::VarNode*>& params,
                                              const std::vector<llvm::Type*>& extra_param_types,
                                              const std::function<void(llvm::Function*)>& body) {
  std::vector<llvm::Type*> types;
  for (const ir::VarNode* v : params) types.push_back(LLVMType(v->dtype));
  for (llvm::Type* t : extra_param_types) types.push_back(t);
  auto* fty = llvm::FunctionType::get(builder_.getInt32Ty(), types, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, module_);
  SetFunctionAttributes(fn, /*internal_body=*/true);

  FunctionState saved = std::move(state_);
  auto saved_ip = builder_.saveIP();
  state_ = FunctionState{};
  state_.fn = fn;
  state_.aligned_buffers = saved.aligned_buffers;
  state_.readonly_buffers = saved.readonly_buffers;
  state_.parallel_depth = saved.parallel_depth;
  for (size_t i = 0; i < params.size(); ++i) {
    llvm::Argument* arg = fn->getArg(static_cast<unsigned>(i));
    arg->setName(params[i]->name_hint);
    if (state_.aligned_buffers.count(params[i])) {
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttr(llvm::Attribute::NoCapture);
      arg->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    }
    Bind(params[i], arg);
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  body(fn);
  if (builder_.GetInsertBlock()->getTerminator() == nullptr) builder_.CreateRet(builder_.getInt32(0));
  state_ = std::move(saved);
  builder_.restoreIP(saved_ip);
  return fn;
}

void CodeGenLLVM::AddFunction(const tir::PrimFunc& func) {
  auto it = func->attrs.find("global_symbol");
  symbol_ = it != func->attrs.end() ? it->second : func->name;
  TESSERA_ICHECK(module_->getNamedValue(symbol_) == nullptr, "LLVM codegen: duplicate kernel symbol ",
                 symbol_);
  auto* ptr_ty = builder_.getPtrTy();
  auto* kernel = llvm::Function::Create(llvm::FunctionType::get(builder_.getInt32Ty(), {ptr_ty}, false),
                                        llvm::Function::ExternalLinkage, symbol_, module_);
  SetFunctionAttributes(kernel, /*internal_body=*/false);
  kernel->getArg(0)->setName("args");
  kernel->addParamAttr(0, llvm::Attribute::NoCapture);
  kernel->addParamAttr(0, llvm::Attribute::ReadOnly);

  state_ = FunctionState{};
  std::vector<const ir::VarNode*> params;
  struct StoredBuffers : tir::StmtExprVisitor {
    std::set<const ir::VarNode*> vars;
    void VisitStmt_(const tir::BufferStoreNode* op) override {
      vars.insert(op->buffer->data.get_var());
      tir::StmtExprVisitor::VisitStmt_(op);
    }
  } stored_visitor;
  stored_visitor.VisitStmt(func->body);
  const std::set<const ir::VarNode*>& stored = stored_visitor.vars;
  for (const tir::Buffer& b : func->params) {
    params.push_back(b->data.get_var());
    state_.aligned_buffers.insert(b->data.get_var());
    if (!stored.count(b->data.get_var())) state_.readonly_buffers.insert(b->data.get_var());
  }
  for (const ir::Var& v : func->shape_vars) params.push_back(v.get_var());
  llvm::Function* compute = EmitBodyFunction(symbol_ + ".compute", params, {},
                                             [&](llvm::Function*) { EmitStmt(func->body); });

  state_.fn = kernel;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", kernel));
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < func->params.size(); ++i) {
    const tir::Buffer& b = func->params[i];
    llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr_ty, kernel->getArg(0), i);
    auto* p = builder_.CreateAlignedLoad(ptr_ty, slot, llvm::Align(8), b->name);
    p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
    p->setMetadata(llvm::LLVMContext::MD_align,
                   llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(builder_.getInt64(64))}));
    bool static_shape = true;
    for (const auto& d : b->shape) static_shape &= d.as<ir::IntImmNode>() != nullptr;
    if (static_shape) {
      int64_t bytes = b.NumElements() * ((b->dtype.bits() + 7) / 8) * b->dtype.lanes();
      if (bytes > 0) {
        p->setMetadata(llvm::LLVMContext::MD_dereferenceable,
                       llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(builder_.getInt64(bytes))}));
      }
    }
    AssumeAligned(p);
    call_args.push_back(p);
  }
  if (!func->shape_vars.empty()) {
    // The extra slot (runtime/kernel_abi.h): a const int64_t* to the shape vars' values.
    llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr_ty, kernel->getArg(0), func->params.size());
    auto* shapes = builder_.CreateAlignedLoad(ptr_ty, slot, llvm::Align(8), "shape_vars");
    shapes->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
    auto* i64 = builder_.getInt64Ty();
    for (size_t i = 0; i < func->shape_vars.size(); ++i) {
      const ir::Var& v = func->shape_vars[i];
      llvm::Value* p = builder_.CreateConstInBoundsGEP1_64(i64, shapes, i);
      llvm::Value* value = builder_.CreateAlignedLoad(i64, p, llvm::Align(8), v->name_hint);
      llvm::Value* cast = EmitCast(v.dtype(), DataType::Int(64), value);
      // An extent: never negative (lets LLVM turn floordiv / floormod by constants into shifts).
      if (v.dtype().is_int()) {
        builder_.CreateAssumption(builder_.CreateICmpSGE(cast, llvm::ConstantInt::get(cast->getType(), 0)));
      }
      call_args.push_back(cast);
    }
  }
  builder_.CreateRet(builder_.CreateCall(compute, call_args));
  state_ = FunctionState{};
  builder_.ClearInsertionPoint();
}

llvm::MDNode* MakeLoopMetadata(llvm::LLVMContext& ctx, tir::ForKind kind, int64_t const_extent) {
  std::vector<llvm::Metadata*> ops;
  ops.push_back(nullptr);  // self reference, filled below
  ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.mustprogress")}));
  auto true_md = llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx));
  if (kind == tir::ForKind::kVectorized) {
    ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"), true_md}));
  } else if (kind == tir::ForKind::kUnrolled) {
    ops.push_back(llvm::MDNode::get(
        ctx, {llvm::MDString::get(ctx, const_extent >= 0 ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable")}));
  }
  llvm::MDNode* md = llvm::MDNode::getDistinct(ctx, ops);
  md->replaceOperandWith(0, md);
  return md;
}

}  // namespace tessera::codegen::detail
