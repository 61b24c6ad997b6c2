// CodeGenLLVM: the Call intrinsics of ir/expr.h, scalar and vector.
//
// float32 exp is emitted inline (Cephes expf: Cody-Waite range reduction and a
// degree-6 polynomial, ~1 ulp) so that vector lanes stay in registers instead of
// calling expf once per lane; sigmoid uses it too. Other float types use llvm.exp.
// log, sqrt, fabs, floor, ceil, round, trunc, pow, fma, exp2, sin, cos map to
// LLVM intrinsics (the backend calls libm per lane where the CPU has no instruction).
// round is round-half-to-even (llvm.roundeven), as ONNX Round and TVM define it.
// float32 erf and tanh are inline too (codegen_math.cc); tan, asin, acos, atan, sinh, cosh,
// asinh, acosh, atanh (and erf / tanh of other types) call libm (tanf ...) lane by lane:
// accurate to a few ulp.
// sigmoid(x) = 1 / (1 + exp(-x)); rsqrt(x) = 1 / sqrt(x).
// The integer intrinsics bitwise_and / or / xor / not and shift_left / shift_right map to
// and / or / xor / not and shl / lshr (unsigned) / ashr (signed), an out-of-range amount giving 0.
// reinterpret is a bitcast (storage types are LLVM integers: codegen_func.cc LLVMType).
// checked_index branches to a return of kKernelIndexOutOfRange when an index lane is out of range.
#include <algorithm>
#include <iterator>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen_llvm.h"
#include "tessera/runtime/kernel_abi.h"
#include "tessera/support/error.h"

namespace tessera::codegen::detail {

llvm::Value* CodeGenLLVM::CallLibm(const std::string& fname, DataType t, const std::vector<llvm::Value*>& args) {
  // float32 -> f<name>f, float64 -> <name>; half / bfloat16 go through float32.
  DataType et = t.element_of();
  bool narrow = et.bits() == 16;
  llvm::Type* scalar_ty = narrow ? builder_.getFloatTy() : LLVMType(et);
  std::string name = fname + (scalar_ty->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> param_types(args.size(), scalar_ty);
  auto callee = LibFunction(name, llvm::FunctionType::get(scalar_ty, param_types, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotAccessMemory();  // we assume -fno-math-errno, as clang does for these kernels
    f->setWillReturn();
  }
  auto call_scalar = [&](std::vector<llvm::Value*> xs) -> llvm::Value* {
    for (auto& x : xs) if (narrow) x = builder_.CreateFPExt(x, scalar_ty);
    llvm::Value* r = builder_.CreateCall(callee, xs);
    return narrow ? builder_.CreateFPTrunc(r, LLVMType(et)) : r;
  };
  if (t.lanes() == 1) return call_scalar(args);
  llvm::Value* out = llvm::PoisonValue::get(LLVMType(t));
  for (int i = 0; i < t.lanes(); ++i) {
    std::vector<llvm::Value*> xs;
    for (llvm::Value* a : args) xs.push_back(builder_.CreateExtractElement(a, builder_.getInt32(i)));
    out = builder_.CreateInsertElement(out, call_scalar(xs), builder_.getInt32(i));
  }
  return out;
}

llvm::Value* CodeGenLLVM::EmitExp(DataType t, llvm::Value* x) {
  if (!(t.is_float() && t.bits() == 32)) return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
  llvm::Type* ft = x->getType();
  llvm::Type* it = LLVMType(DataType::Int(32, t.lanes()));
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  auto ci = [&](int64_t v) { return llvm::ConstantInt::get(it, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* b, llvm::Value* d) {
    return builder_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ft}, {a, b, d});
  };
  // Clamp so that n = round(x / ln2) lies in [-150, 128]; out-of-range x is fixed below.
  llvm::Value* xc = builder_.CreateSelect(builder_.CreateFCmpOLT(x, c(-104.0)), c(-104.0), x);
  xc = builder_.CreateSelect(builder_.CreateFCmpOGT(xc, c(88.8)), c(88.8), xc);
  llvm::Value* n = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                                 builder_.CreateFMul(xc, c(1.44269504088896341)));
  llvm::Value* r = fmuladd(n, c(-0.693359375), xc);
  r = fmuladd(n, c(2.12194440e-4), r);
  llvm::Value* p = c(1.9875691500E-4);
  for (double k : {1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1}) {
    p = fmuladd(p, r, c(k));
  }
  p = builder_.CreateFAdd(fmuladd(p, builder_.CreateFMul(r, r), r), c(1.0));
  // 2^n as two normal powers of two (n may be below the normal exponent range).
  llvm::Value* ni = builder_.CreateFPToSI(n, it);
  llvm::Value* n1 = builder_.CreateAShr(ni, ci(1));
  llvm::Value* n2 = builder_.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* e) {
    return builder_.CreateBitCast(builder_.CreateShl(builder_.CreateAdd(e, ci(127)), ci(23)), ft);
  };
  llvm::Value* res = builder_.CreateFMul(builder_.CreateFMul(p, pow2(n1)), pow2(n2));
  res = builder_.CreateSelect(builder_.CreateFCmpOGT(x, c(88.72283935546875)),
                              llvm::ConstantFP::getInfinity(ft), res);
  res = builder_.CreateSelect(builder_.CreateFCmpOLT(x, c(-103.972084045410)), c(0.0), res);
  return builder_.CreateSelect(builder_.CreateFCmpUNO(x, x), x, res);
}

llvm::Value* CodeGenLLVM::EmitCall(const ir::PrimExpr& e) {
  auto* op = e.as<ir::CallNode>();
  DataType t = e.dtype();
  std::vector<llvm::Value*> args;
  for (const auto& a : op->args) args.push_back(Splat(MakeValue(a), t.lanes()));
  auto need = [&](size_t n) {
    if (args.size() != n) {
      TESSERA_THROW(InternalError, "LLVM codegen: intrinsic ", op->op, " takes ", n, " arguments, got ",
                    args.size());
    }
  };
  const std::string& name = op->op;
  if (name == "reinterpret") {
    need(1);
    return builder_.CreateBitCast(args[0], LLVMType(t));
  }
  if (name == "checked_index") {
    need(2);
    // Out of [-n, n) in any lane: the kernel returns kKernelIndexOutOfRange (ir/op.h).
    llvm::Value* lo = builder_.CreateNeg(args[1]);
    llvm::Value* bad = builder_.CreateOr(builder_.CreateICmpSLT(args[0], lo), builder_.CreateICmpSGE(args[0], args[1]));
    if (t.lanes() > 1) bad = builder_.CreateOrReduce(bad);
    EmitReturnIfNonZero(builder_.CreateSelect(bad, builder_.getInt32(runtime::kKernelIndexOutOfRange),
                                              builder_.getInt32(runtime::kKernelOk)));
    llvm::Value* negative = builder_.CreateICmpSLT(args[0], llvm::Constant::getNullValue(args[0]->getType()));
    return builder_.CreateSelect(negative, builder_.CreateAdd(args[0], args[1]), args[0]);
  }
  if (t.is_int() || t.is_uint()) {
    if (name == "bitwise_not") {
      need(1);
      return builder_.CreateNot(args[0]);
    }
    if (name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor") {
      need(2);
      const auto opc = name == "bitwise_and" ? llvm::Instruction::And
                       : name == "bitwise_or" ? llvm::Instruction::Or
                                              : llvm::Instruction::Xor;
      return builder_.CreateBinOp(opc, args[0], args[1]);
    }
    if (name == "shift_left" || name == "shift_right") {
      need(2);
      // An amount >= the width (or negative) shifts everything out: 0 (LLVM gives poison).
      llvm::Value* width = llvm::ConstantInt::get(args[1]->getType(), t.bits());
      llvm::Value* in_range = builder_.CreateICmpULT(args[1], width);
      llvm::Value* shifted = name == "shift_left"  ? builder_.CreateShl(args[0], args[1])
                             : t.is_uint()         ? builder_.CreateLShr(args[0], args[1])
                                                   : builder_.CreateAShr(args[0], args[1]);
      return builder_.CreateSelect(in_range, builder_.CreateFreeze(shifted),
                                   llvm::Constant::getNullValue(args[0]->getType()));
    }
  }
  if (!(t.is_float() || t.is_bfloat16())) {
    TESSERA_THROW(UnsupportedError, "LLVM codegen: intrinsic ", name, " on ", t.str(),
                  " is not supported (float types only)");
  }
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
  static const std::pair<const char*, llvm::Intrinsic::ID> kUnary[] = {
      {"log", llvm::Intrinsic::log},
      {"sqrt", llvm::Intrinsic::sqrt},   {"fabs", llvm::Intrinsic::fabs},
      {"floor", llvm::Intrinsic::floor}, {"ceil", llvm::Intrinsic::ceil},
      {"round", llvm::Intrinsic::roundeven}, {"trunc", llvm::Intrinsic::trunc},
      {"exp2", llvm::Intrinsic::exp2},   {"sin", llvm::Intrinsic::sin},
      {"cos", llvm::Intrinsic::cos},
  };
  for (const auto& [n, id] : kUnary) {
    if (name == n) {
      need(1);
      return builder_.CreateUnaryIntrinsic(id, args[0]);
    }
  }
  if (name == "exp") {
    need(1);
    return EmitExp(t, args[0]);
  }
  if (name == "pow") {
    need(2);
    return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
  }
  if (name == "fma") {
    need(3);
    return builder_.CreateIntrinsic(llvm::Intrinsic::fma, {args[0]->getType()}, args);
  }
  llvm::Value* one = llvm::ConstantFP::get(LLVMType(t), 1.0);
  if (name == "rsqrt") {
    need(1);
    return builder_.CreateFDiv(one, builder_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]));
  }
  if (name == "sigmoid") {
    need(1);
    llvm::Value* ex = EmitExp(t, builder_.CreateFNeg(args[0]));
    return builder_.CreateFDiv(one, builder_.CreateFAdd(one, ex));
  }
  if (name == "erf") {
    need(1);
    return EmitErf(t, args[0]);
  }
  if (name == "tanh") {
    need(1);
    return EmitTanh(t, args[0]);
  }
  static const char* kLibm[] = {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"};
  if (std::find_if(std::begin(kLibm), std::end(kLibm), [&](const char* n) { return name == n; }) != std::end(kLibm)) {
    need(1);
    return CallLibm(name, t, args);
  }
  TESSERA_THROW(UnsupportedError, "LLVM codegen: unknown intrinsic '", name,
                "'; supported: exp, log, sqrt, rsqrt, tanh, sigmoid, fabs, floor, ceil, round, trunc, "
                "pow, erf, fma, exp2, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh");
}

}  // namespace tessera::codegen::detail
