// CodeGenLLVM: float32 erf and tanh emitted inline (vector lanes stay in registers instead of
// one libm call per lane). Both are odd: evaluated on |x| and the sign copied back; NaN
// propagates.
//
// erf (|x| < 0.5): the Maclaurin series 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)) to
//   n = 6 (truncation error < 1e-9 there).
// erf (|x| >= 0.5): Abramowitz & Stegun 7.1.26, erf(a) = 1 - t (a1 + t (a2 + ... + t a5))
//   exp(-a^2), t = 1 / (1 + p a); absolute error <= 1.5e-7, i.e. relative <= 3e-7 here.
// tanh (|x| < 0.125): the Maclaurin series x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835
//   (truncation error ~1e-12 relative).
// tanh (|x| >= 0.125): 1 - 2 / (exp(2a) + 1), exp inline (EmitExp); saturates to 1.
// Other float types call libm (CallLibm).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen_llvm.h"

namespace tessera::codegen::detail {

namespace {
bool IsF32(DataType t) { return t.is_float() && t.bits() == 32; }
}  // namespace

/// Evaluates sum_k coeffs[k] * z^k by Horner's rule (coeffs lowest degree first).
llvm::Value* CodeGenLLVM::EmitPolynomial(llvm::Value* z, const std::vector<double>& coeffs) {
  llvm::Type* ft = z->getType();
  llvm::Value* p = llvm::ConstantFP::get(ft, coeffs.back());
  for (size_t k = coeffs.size() - 1; k-- > 0;)
    p = builder_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {ft}, {p, z, llvm::ConstantFP::get(ft, coeffs[k])});
  return p;
}

llvm::Value* CodeGenLLVM::EmitErf(DataType t, llvm::Value* x) {
  if (!IsF32(t)) return CallLibm("erf", t, {x});
  llvm::Type* ft = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  llvm::Value* a = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* a2 = builder_.CreateFMul(a, a);
  // Small |x|: 2/sqrt(pi) * a * P(a^2).
  const double k = 1.1283791670955126;  // 2 / sqrt(pi)
  llvm::Value* small = builder_.CreateFMul(
      a, EmitPolynomial(a2, {k, -k / 3, k / 10, -k / 42, k / 216, -k / 1320, k / 9360}));
  // Large |x|: 1 - t Q(t) exp(-a^2).
  llvm::Value* tt = builder_.CreateFDiv(c(1.0), builder_.CreateFAdd(c(1.0), builder_.CreateFMul(c(0.3275911), a)));
  llvm::Value* q = EmitPolynomial(tt, {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429});
  llvm::Value* large =
      builder_.CreateFSub(c(1.0), builder_.CreateFMul(builder_.CreateFMul(tt, q), EmitExp(t, builder_.CreateFNeg(a2))));
  llvm::Value* r = builder_.CreateSelect(builder_.CreateFCmpOLT(a, c(0.5)), small, large);
  r = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
  return builder_.CreateSelect(builder_.CreateFCmpUNO(x, x), x, r);
}

llvm::Value* CodeGenLLVM::EmitTanh(DataType t, llvm::Value* x) {
  if (!IsF32(t)) return CallLibm("tanh", t, {x});
  llvm::Type* ft = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  llvm::Value* a = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* a2 = builder_.CreateFMul(a, a);
  llvm::Value* small =
      builder_.CreateFMul(a, EmitPolynomial(a2, {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835}));
  llvm::Value* e = EmitExp(t, builder_.CreateFMul(c(2.0), a));
  llvm::Value* large = builder_.CreateFSub(c(1.0), builder_.CreateFDiv(c(2.0), builder_.CreateFAdd(e, c(1.0))));
  llvm::Value* r = builder_.CreateSelect(builder_.CreateFCmpOLT(a, c(0.125)), small, large);
  r = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
  return builder_.CreateSelect(builder_.CreateFCmpUNO(x, x), x, r);
}

}  // namespace tessera::codegen::detail
