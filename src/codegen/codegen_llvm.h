// Internal: the TensorIR -> LLVM IR translator (one instance per llvm::Module).
//
// Input is a flat, lowered PrimFunc (no Block / BlockRealize / Reduce; one index per
// buffer access). Each PrimFunc `f` becomes
//   define i32 @f(ptr %args)            ; the kernel ABI (runtime/kernel_abi.h)
//   define internal i32 @f.compute(ptr noalias align 64 %A, ...)  ; alwaysinline
// so that the buffer pointers carry noalias into the body (the inliner turns the
// noalias parameters into scoped alias metadata). Parallel loops are outlined the
// same way (codegen_parallel.cc). The translation is split over files:
//   codegen_func.cc      types, functions, kernel wrapper, function state
//   codegen_expr.cc      PrimExpr -> llvm::Value
//   codegen_intrin.cc    Call intrinsics (exp, tanh, ...)
//   codegen_stmt.cc      statements, loops, Allocate
//   codegen_parallel.cc  outlining of parallel For into task functions
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "tessera/target/target.h"
#include "tessera/tir/function.h"
#include "tessera/tir/stmt.h"

namespace tessera::codegen::detail {

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::Module* module, const target::Target& target);

  /// Emits the kernel for `func` (symbol: attrs["global_symbol"], else its name).
  void AddFunction(const tir::PrimFunc& func);
  /// Defines `__tessera_parallel_launch` (a null TesseraParallelLaunchFn pointer).
  llvm::GlobalVariable* ParallelLaunchGlobal();

  // ---- types (codegen_func.cc)
  llvm::Type* LLVMType(DataType t) const;
  /// The in-memory type of a buffer element: as LLVMType, but bool is i8.
  llvm::Type* MemType(DataType t) const;

  // ---- expressions (codegen_expr.cc)
  llvm::Value* MakeValue(const ir::PrimExpr& e);

  // ---- statements (codegen_stmt.cc)
  void EmitStmt(const tir::Stmt& s);

 private:
  // Per-function state; saved and restored around outlined functions.
  struct FunctionState {
    llvm::Function* fn = nullptr;
    std::unordered_map<const ir::VarNode*, llvm::Value*> vars;
    std::set<const ir::VarNode*> aligned_buffers;  ///< data vars of 64-byte aligned buffers
    /// Data vars of parameters the kernel never stores to: their loads carry !invariant.load,
    /// so the register allocator may re-load a value (e.g. a conv's kernel vector) rather
    /// than spill an accumulator.
    std::set<const ir::VarNode*> readonly_buffers;
    int parallel_depth = 0;  ///< > 0 inside an outlined parallel body
    /// Heap buffers (Allocate) live at the insertion point, innermost last: an early return
    /// (EmitReturnIfNonZero) frees them.
    std::vector<llvm::Value*> heap_buffers;
  };

  // codegen_func.cc
  void SetFunctionAttributes(llvm::Function* fn, bool internal_body);
  llvm::Value* CreateEntryAlloca(llvm::Type* ty, llvm::Value* count, unsigned align, const char* name);
  /// Declares (or returns) the C library function `name` of type `fty`.
  llvm::FunctionCallee LibFunction(const std::string& name, llvm::FunctionType* fty);
  /// Returns `code` from the current function when it is non-zero, freeing the live heap
  /// buffers first; emission goes on in the block where it is zero.
  void EmitReturnIfNonZero(llvm::Value* code);
  /// Marks p as 64-byte aligned (llvm.assume "align", as __builtin_assume_aligned).
  void AssumeAligned(llvm::Value* p);
  llvm::Value* Lookup(const ir::VarNode* v) const;
  void Bind(const ir::VarNode* v, llvm::Value* value);
  void Unbind(const ir::VarNode* v);
  /// Emits an alwaysinline internal body function taking `params` (noalias align 64
  /// for aligned buffer vars) whose body is emitted by `body`. Returns the function.
  llvm::Function* EmitBodyFunction(const std::string& name, const std::vector<const ir::VarNode*>& params,
                                   const std::vector<llvm::Type*>& extra_param_types,
                                   const std::function<void(llvm::Function*)>& body);

  // codegen_expr.cc helpers
  llvm::Value* EmitBinary(const ir::PrimExpr& e);
  llvm::Value* EmitCompare(const ir::PrimExpr& e);
  /// select(c, a, b): an LLVM select, or branches that evaluate only the taken operand where c is
  /// one index condition for every lane and an operand loads memory (see codegen_expr.cc).
  llvm::Value* EmitSelect(const ir::PrimExpr& e);
  llvm::Value* EmitCast(DataType to, DataType from, llvm::Value* v);
  /// Throws InternalError for bfloat16 / float8 / float4, which codegen only loads, stores and reinterprets.
  void RequireComputeType(DataType t) const;
  llvm::Value* EmitFloorDivMod(bool is_div, DataType t, llvm::Value* a, llvm::Value* b);
  /// The divisor an integer division may use: b, or 1 where b is 0 or (signed) where a is the
  /// minimum and b is -1 (both trap on x86). Sets *zero to `b == 0` when a guard was needed
  /// (nullptr when b is a constant that needs none).
  llvm::Value* SafeDivisor(bool is_signed, llvm::Value* a, llvm::Value* b, llvm::Value** zero);
  /// q, or 0 where *zero holds (x / 0 = 0, as numpy).
  llvm::Value* ZeroWhereDivisorZero(llvm::Value* q, llvm::Value* zero);
  llvm::Value* EmitBufferLoad(const ir::PrimExpr& e);
  /// Address(es) of buffer[index]: a scalar pointer for a scalar or stride-1 Ramp
  /// index (*contiguous = true for the Ramp), else a vector of pointers.
  llvm::Value* BufferAddress(const tir::Buffer& buffer, const std::vector<ir::PrimExpr>& indices,
                             int lanes, bool* contiguous);
  llvm::Value* Splat(llvm::Value* v, int lanes);

  // codegen_intrin.cc
  llvm::Value* EmitCall(const ir::PrimExpr& e);
  /// exp(x); float32 (scalar or vector) inline, other types through llvm.exp.
  llvm::Value* EmitExp(DataType t, llvm::Value* x);
  // codegen_math.cc: inline float32 erf / tanh, Horner evaluation.
  llvm::Value* EmitErf(DataType t, llvm::Value* x);
  llvm::Value* EmitTanh(DataType t, llvm::Value* x);
  llvm::Value* EmitPolynomial(llvm::Value* z, const std::vector<double>& coeffs);
  llvm::Value* CallLibm(const std::string& fname, DataType t, const std::vector<llvm::Value*>& args);

  // codegen_stmt.cc
  void EmitFor(const tir::ForNode* op);
  void EmitSerialLoop(const tir::ForNode* op, llvm::Value* begin, llvm::Value* end);
  void EmitAllocate(const tir::AllocateNode* op);
  void EmitStore(const tir::BufferStoreNode* op);

  // codegen_parallel.cc
  void EmitParallelFor(const tir::ForNode* op);

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  target::Target target_;
  llvm::IRBuilder<> builder_;
  FunctionState state_;
  std::string symbol_;  ///< symbol of the kernel being emitted
  int num_outlined_ = 0;
};

/// The loop metadata node for a For of `kind` with constant extent (or -1).
llvm::MDNode* MakeLoopMetadata(llvm::LLVMContext& ctx, tir::ForKind kind, int64_t const_extent);

}  // namespace tessera::codegen::detail
