// CodeGenLLVM: PrimExpr -> llvm::Value (arithmetic, comparisons, casts, vectors, loads).
//
// Float arithmetic carries only the `contract` fast-math flag (FMA formation), so
// results stay within rounding of the C reference; no reassociation.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>

#include "codegen_llvm.h"
#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/tir/expr.h"
#include "tessera/tir/functor.h"

namespace tessera::codegen::detail {

namespace {
// Whether e reads a buffer.
bool ReadsMemory(const ir::PrimExpr& e) {
  struct V : tir::StmtExprVisitor {
    bool found = false;
    void VisitExpr_(const tir::BufferLoadNode*) override { found = true; }
  } v;
  v.VisitExpr(e);
  return v.found;
}

llvm::FastMathFlags ContractOnly() {
  llvm::FastMathFlags f;
  f.setAllowContract(true);
  return f;
}
}  // namespace

llvm::Value* CodeGenLLVM::Splat(llvm::Value* v, int lanes) {
  if (lanes <= 1 || v->getType()->isVectorTy()) return v;
  return builder_.CreateVectorSplat(lanes, v);
}

llvm::Value* CodeGenLLVM::MakeValue(const ir::PrimExpr& e) {
  using ir::ExprKind;
  TESSERA_ICHECK(e.defined(), "LLVM codegen: undefined expression");
  DataType t = e.dtype();
  switch (e->kind) {
    case ExprKind::kIntImm: {
      auto* op = e.as<ir::IntImmNode>();
      return llvm::ConstantInt::get(LLVMType(t), static_cast<uint64_t>(op->value), t.is_int());
    }
    case ExprKind::kFloatImm:
      RequireComputeType(t);
      return llvm::ConstantFP::get(LLVMType(t), e.as<ir::FloatImmNode>()->value);
    case ExprKind::kStringImm:
      return builder_.CreateGlobalStringPtr(e.as<ir::StringImmNode>()->value);
    case ExprKind::kVar:
      return Lookup(e.as<ir::VarNode>());
    case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kDiv:
    case ExprKind::kMod: case ExprKind::kFloorDiv: case ExprKind::kFloorMod:
    case ExprKind::kMin: case ExprKind::kMax: case ExprKind::kAnd: case ExprKind::kOr:
      return EmitBinary(e);
    case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT: case ExprKind::kLE:
    case ExprKind::kGT: case ExprKind::kGE:
      return EmitCompare(e);
    case ExprKind::kNot:
      return builder_.CreateNot(MakeValue(e.as<ir::NotNode>()->a));
    case ExprKind::kSelect:
      return EmitSelect(e);
    case ExprKind::kCast: {
      auto* op = e.as<ir::CastNode>();
      DataType from = op->value.dtype();
      llvm::Value* v = MakeValue(op->value);
      if (from.lanes() == 1 && t.lanes() > 1) {
        v = Splat(v, t.lanes());
        from = from.with_lanes(t.lanes());
      }
      return EmitCast(t, from, v);
    }
    case ExprKind::kCall:
      return EmitCall(e);
    case ExprKind::kRamp: {
      auto* op = e.as<ir::RampNode>();
      llvm::Value* base = Splat(MakeValue(op->base), op->lanes);
      llvm::Value* stride = Splat(MakeValue(op->stride), op->lanes);
      std::vector<llvm::Constant*> steps;
      llvm::Type* et = LLVMType(t.element_of());
      for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(et, i));
      llvm::Value* offs = builder_.CreateMul(stride, llvm::ConstantVector::get(steps));
      return builder_.CreateAdd(base, offs);
    }
    case ExprKind::kBroadcast: {
      auto* op = e.as<ir::BroadcastNode>();
      return builder_.CreateVectorSplat(op->lanes, MakeValue(op->value));
    }
    case ExprKind::kLet: {
      auto* op = e.as<ir::LetNode>();
      const ir::VarNode* v = op->var.get_var();
      auto old = state_.vars.find(v);
      llvm::Value* prev = old != state_.vars.end() ? old->second : nullptr;
      Bind(v, MakeValue(op->value));
      llvm::Value* r = MakeValue(op->body);
      if (prev) Bind(v, prev); else Unbind(v);
      return r;
    }
    case ExprKind::kBufferLoad:
      return EmitBufferLoad(e);
    case ExprKind::kReduce:
      break;
  }
  TESSERA_THROW(InternalError, "LLVM codegen: Reduce reached codegen; lower the PrimFunc first");
}

// A select evaluates both operands (an LLVM select), except where its condition is one scalar for
// every lane (a scalar select, or a broadcast condition) computed from indices alone, and an
// operand reads memory: then only the taken operand is evaluated, behind a branch. The chains of
// a concatenate (`i < off1 ? x0[..] : i < off2 ? x1[..] : ...`, one operand per input) would
// otherwise load from every input for each element: 128 loads per element for a 128-way concat
// (an unrolled RNN's outputs). An index condition is the same across an inner loop, so the branch
// predicts well; a condition that reads data (ONNX Where) stays a select, branch-free.
llvm::Value* CodeGenLLVM::EmitSelect(const ir::PrimExpr& e) {
  auto* op = e.as<ir::SelectNode>();
  const int lanes = e.dtype().lanes();
  ir::PrimExpr cond = op->condition;
  if (const auto* b = cond.as<ir::BroadcastNode>()) cond = b->value;
  const bool lazy = cond.dtype().lanes() == 1 && !ReadsMemory(cond) &&
                    (ReadsMemory(op->true_value) || ReadsMemory(op->false_value));
  if (!lazy) {
    llvm::Value* c = MakeValue(op->condition);
    llvm::Value* a = Splat(MakeValue(op->true_value), lanes);
    llvm::Value* b = Splat(MakeValue(op->false_value), lanes);
    return builder_.CreateSelect(c, a, b);
  }
  llvm::Value* c = MakeValue(cond);
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "select_true", fn);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx_, "select_false", fn);
  llvm::BasicBlock* merge_bb = llvm::BasicBlock::Create(ctx_, "select_end", fn);
  builder_.CreateCondBr(c, then_bb, else_bb);
  builder_.SetInsertPoint(then_bb);
  llvm::Value* a = Splat(MakeValue(op->true_value), lanes);
  llvm::BasicBlock* then_end = builder_.GetInsertBlock();  // operands may add blocks (checked_index)
  builder_.CreateBr(merge_bb);
  builder_.SetInsertPoint(else_bb);
  llvm::Value* b = Splat(MakeValue(op->false_value), lanes);
  llvm::BasicBlock* else_end = builder_.GetInsertBlock();
  builder_.CreateBr(merge_bb);
  builder_.SetInsertPoint(merge_bb);
  llvm::PHINode* phi = builder_.CreatePHI(a->getType(), 2);
  phi->addIncoming(a, then_end);
  phi->addIncoming(b, else_end);
  return phi;
}

void CodeGenLLVM::RequireComputeType(DataType t) const {
  if (t.is_bfloat16() || t.is_minifloat()) {
    TESSERA_THROW(InternalError, "LLVM codegen: arithmetic, constants or casts of ", t.str(),
                  " reached codegen; it is a storage type (run tir::transform::LowerStorageTypeCasts, and "
                  "graph::transform::LegalizeLowPrecision before lowering)");
  }
}

// Integer division is total (issue 15): x / 0 = 0 and x % 0 = 0 (numpy's answers; ONNX leaves
// them undefined, x86's idiv traps), MIN / -1 = MIN (two's-complement wrap) and MIN % -1 = 0,
// instead of SIGFPE. Constant divisors other than 0 (and -1 when signed) need no guard, so index
// arithmetic is unchanged.
llvm::Value* CodeGenLLVM::SafeDivisor(bool is_signed, llvm::Value* a, llvm::Value* b, llvm::Value** zero) {
  *zero = nullptr;
  const llvm::ConstantInt* c = llvm::dyn_cast<llvm::ConstantInt>(b);
  if (!c && b->getType()->isVectorTy())
    if (auto* cv = llvm::dyn_cast<llvm::Constant>(b)) c = llvm::dyn_cast_or_null<llvm::ConstantInt>(cv->getSplatValue());
  if (c && !c->isZero() && !(is_signed && c->isMinusOne())) return b;
  llvm::Type* ty = b->getType();
  llvm::Value* zero_v = llvm::Constant::getNullValue(ty);
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  *zero = builder_.CreateICmpEQ(b, zero_v);
  llvm::Value* bad = *zero;
  if (is_signed) {
    const unsigned bits = ty->getScalarSizeInBits();
    llvm::Value* min = llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(bits));
    llvm::Value* overflow = builder_.CreateAnd(builder_.CreateICmpEQ(a, min),
                                               builder_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty)));
    bad = builder_.CreateOr(bad, overflow);
  }
  return builder_.CreateSelect(bad, one, b);
}

llvm::Value* CodeGenLLVM::ZeroWhereDivisorZero(llvm::Value* q, llvm::Value* zero) {
  return zero ? builder_.CreateSelect(zero, llvm::Constant::getNullValue(q->getType()), q) : q;
}

llvm::Value* CodeGenLLVM::EmitFloorDivMod(bool is_div, DataType t, llvm::Value* a, llvm::Value* b) {
  if (t.is_float()) {
    builder_.setFastMathFlags(ContractOnly());
    llvm::Value* q = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
    return is_div ? q : builder_.CreateFSub(a, builder_.CreateFMul(q, b));
  }
  llvm::Value* b_zero = nullptr;
  if (t.is_uint() || t.is_bool()) {
    b = SafeDivisor(false, a, b, &b_zero);
    return is_div ? ZeroWhereDivisorZero(builder_.CreateUDiv(a, b), b_zero) : builder_.CreateURem(a, b);
  }
  // Truncated quotient / remainder, corrected when the remainder is non-zero and its
  // sign differs from the divisor's: floordiv = q - 1, floormod = r + b. (A guarded divisor of
  // 1 gives r = 0: no correction.)
  b = SafeDivisor(true, a, b, &b_zero);
  llvm::Value* r = builder_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(r->getType());
  llvm::Value* fix = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                        builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero));
  if (is_div) {
    llvm::Value* q = builder_.CreateSDiv(a, b);
    return ZeroWhereDivisorZero(builder_.CreateSub(q, builder_.CreateZExt(fix, q->getType())), b_zero);
  }
  return builder_.CreateSelect(fix, builder_.CreateAdd(r, b), r);
}

llvm::Value* CodeGenLLVM::EmitBinary(const ir::PrimExpr& e) {
  using ir::ExprKind;
  ir::PrimExpr ea, eb;
  TESSERA_ICHECK(ir::GetBinaryOperands(e, &ea, &eb));
  DataType t = e.dtype();
  RequireComputeType(t);
  int lanes = t.lanes();
  llvm::Value* a = Splat(MakeValue(ea), lanes);
  llvm::Value* b = Splat(MakeValue(eb), lanes);
  bool f = t.is_float();
  bool s = t.is_int();
  builder_.setFastMathFlags(ContractOnly());
  switch (e->kind) {
    case ExprKind::kAdd: return f ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b, "", false, s);
    case ExprKind::kSub: return f ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b, "", false, s);
    case ExprKind::kMul: return f ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b, "", false, s);
    case ExprKind::kDiv: {
      if (f) return builder_.CreateFDiv(a, b);
      llvm::Value* zero = nullptr;
      b = SafeDivisor(s, a, b, &zero);
      return ZeroWhereDivisorZero(s ? builder_.CreateSDiv(a, b) : builder_.CreateUDiv(a, b), zero);
    }
    case ExprKind::kMod: {
      if (f) return builder_.CreateFRem(a, b);
      llvm::Value* zero = nullptr;
      b = SafeDivisor(s, a, b, &zero);
      return s ? builder_.CreateSRem(a, b) : builder_.CreateURem(a, b);
    }
    case ExprKind::kFloorDiv: return EmitFloorDivMod(true, t, a, b);
    case ExprKind::kFloorMod: return EmitFloorDivMod(false, t, a, b);
    case ExprKind::kMin: case ExprKind::kMax: {
      bool is_min = e->kind == ExprKind::kMin;
      if (f) {
        // NaN propagates (numpy's maximum / minimum, ONNX Runtime's Max / Min / Relu / Clip):
        // a when a < b (min) / a > b (max) or a is NaN, else b (NaN when b is).
        llvm::Value* c = builder_.CreateOr(is_min ? builder_.CreateFCmpOLT(a, b) : builder_.CreateFCmpOGT(a, b),
                                           builder_.CreateFCmpUNO(a, a));
        return builder_.CreateSelect(c, a, b);
      }
      llvm::Value* c = s ? (is_min ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpSGT(a, b))
                         : (is_min ? builder_.CreateICmpULT(a, b) : builder_.CreateICmpUGT(a, b));
      return builder_.CreateSelect(c, a, b);
    }
    case ExprKind::kAnd: return builder_.CreateAnd(a, b);
    case ExprKind::kOr: return builder_.CreateOr(a, b);
    default: break;
  }
  TESSERA_THROW(InternalError, "LLVM codegen: not a binary arithmetic node");
}

llvm::Value* CodeGenLLVM::EmitCompare(const ir::PrimExpr& e) {
  using ir::ExprKind;
  using P = llvm::CmpInst::Predicate;
  ir::PrimExpr ea, eb;
  TESSERA_ICHECK(ir::GetBinaryOperands(e, &ea, &eb));
  DataType ot = ea.dtype();
  RequireComputeType(ot);
  int lanes = std::max(ea.dtype().lanes(), eb.dtype().lanes());
  llvm::Value* a = Splat(MakeValue(ea), lanes);
  llvm::Value* b = Splat(MakeValue(eb), lanes);
  bool f = ot.is_float();
  bool s = ot.is_int();
  P p;
  switch (e->kind) {
    case ExprKind::kEQ: p = f ? P::FCMP_OEQ : P::ICMP_EQ; break;
    case ExprKind::kNE: p = f ? P::FCMP_UNE : P::ICMP_NE; break;
    case ExprKind::kLT: p = f ? P::FCMP_OLT : s ? P::ICMP_SLT : P::ICMP_ULT; break;
    case ExprKind::kLE: p = f ? P::FCMP_OLE : s ? P::ICMP_SLE : P::ICMP_ULE; break;
    case ExprKind::kGT: p = f ? P::FCMP_OGT : s ? P::ICMP_SGT : P::ICMP_UGT; break;
    case ExprKind::kGE: p = f ? P::FCMP_OGE : s ? P::ICMP_SGE : P::ICMP_UGE; break;
    default: TESSERA_THROW(InternalError, "LLVM codegen: not a comparison");
  }
  return f ? builder_.CreateFCmp(p, a, b) : builder_.CreateICmp(p, a, b);
}

llvm::Value* CodeGenLLVM::EmitCast(DataType to, DataType from, llvm::Value* v) {
  llvm::Type* ty = LLVMType(to);
  if (from == to) return v;
  RequireComputeType(from);
  RequireComputeType(to);
  bool ff = from.is_float(), tf = to.is_float();
  if (to.is_bool()) {
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return ff ? builder_.CreateFCmpUNE(v, zero) : builder_.CreateICmpNE(v, zero);
  }
  if (from.is_handle() || to.is_handle()) {
    if (from.is_handle() && to.is_handle()) return v;
    return from.is_handle() ? builder_.CreatePtrToInt(v, ty) : builder_.CreateIntToPtr(v, ty);
  }
  if (ff && tf) return builder_.CreateFPCast(v, ty);
  if (ff) return to.is_int() ? builder_.CreateFPToSI(v, ty) : builder_.CreateFPToUI(v, ty);
  if (tf) return from.is_int() ? builder_.CreateSIToFP(v, ty) : builder_.CreateUIToFP(v, ty);
  return builder_.CreateIntCast(v, ty, from.is_int());
}

llvm::Value* CodeGenLLVM::BufferAddress(const tir::Buffer& buffer, const std::vector<ir::PrimExpr>& indices,
                                        int lanes, bool* contiguous) {
  TESSERA_ICHECK(!indices.empty(), "LLVM codegen: buffer access without index to ", buffer->name);
  ir::PrimExpr index = indices.size() == 1 ? indices[0] : buffer.OffsetOf(indices);
  llvm::Type* elem = MemType(buffer->dtype.element_of());
  llvm::Value* base = Lookup(buffer->data.get_var());
  *contiguous = false;
  if (index.dtype().lanes() == 1) {
    *contiguous = true;  // a scalar access (lanes == 1), or a dense vector at index
    return builder_.CreateInBoundsGEP(elem, base, MakeValue(index));
  }
  if (auto* ramp = index.as<ir::RampNode>(); ramp && ir::is_one(ramp->stride)) {
    *contiguous = true;
    return builder_.CreateInBoundsGEP(elem, base, MakeValue(ramp->base));
  }
  (void)lanes;
  return builder_.CreateInBoundsGEP(elem, base, MakeValue(index));  // vector of pointers
}

llvm::Value* CodeGenLLVM::EmitBufferLoad(const ir::PrimExpr& e) {
  auto* op = e.as<tir::BufferLoadNode>();
  DataType t = e.dtype();
  bool contiguous = false;
  llvm::Value* addr = BufferAddress(op->buffer, op->indices, t.lanes(), &contiguous);
  llvm::Type* mem_ty = MemType(t);
  llvm::Align align(std::max(1, (t.bits() + 7) / 8));
  llvm::Value* v;
  if (contiguous) {
    auto* load = builder_.CreateAlignedLoad(mem_ty, addr, align);
    if (state_.readonly_buffers.count(op->buffer->data.get_var()))
      load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx_, {}));
    v = load;
  } else {
    v = builder_.CreateMaskedGather(mem_ty, addr, align);
  }
  if (t.bits() < 8) v = builder_.CreateTrunc(v, LLVMType(t));
  return v;
}

}  // namespace tessera::codegen::detail
