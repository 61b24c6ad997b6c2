// CodeGenLLVM: the Call intrinsics of ir/expr.h, scalar and vector.
//
// exp, log, sqrt, fabs, floor, ceil, round, trunc, pow, fma, exp2, sin, cos map to
// LLVM intrinsics (the backend calls libm per lane where the CPU has no instruction).
// round is round-half-to-even (llvm.roundeven), as ONNX Round and TVM define it.
// tanh and erf call libm (tanhf / erff ...) lane by lane: accurate to a few ulp.
// sigmoid(x) = 1 / (1 + exp(-x)); rsqrt(x) = 1 / sqrt(x).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen_llvm.h"
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
  if (!(t.is_float() || t.is_bfloat16())) {
    TESSERA_THROW(UnsupportedError, "LLVM codegen: intrinsic ", name, " on ", t.str(),
                  " is not supported (float types only)");
  }
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
  static const std::pair<const char*, llvm::Intrinsic::ID> kUnary[] = {
      {"exp", llvm::Intrinsic::exp},     {"log", llvm::Intrinsic::log},
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
    llvm::Value* ex = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, builder_.CreateFNeg(args[0]));
    return builder_.CreateFDiv(one, builder_.CreateFAdd(one, ex));
  }
  if (name == "tanh" || name == "erf") {
    need(1);
    return CallLibm(name, t, args);
  }
  TESSERA_THROW(UnsupportedError, "LLVM codegen: unknown intrinsic '", name,
                "'; supported: exp, log, sqrt, rsqrt, tanh, sigmoid, fabs, floor, ceil, round, trunc, "
                "pow, erf, fma, exp2, sin, cos");
}

}  // namespace tessera::codegen::detail
