// Helpers of the codegen tests: aligned host arrays, random data, module building.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/ir/op.h"
#include "tessera/tir/function.h"

namespace tessera::codegen::testing {

/// A 64-byte aligned array, as the kernel ABI requires.
template <typename T>
class AlignedArray {
 public:
  explicit AlignedArray(size_t n) : n_(n) {
    size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    data_ = static_cast<T*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
    std::memset(static_cast<void*>(data_), 0, bytes == 0 ? 64 : bytes);
  }
  ~AlignedArray() { std::free(data_); }
  AlignedArray(const AlignedArray&) = delete;
  AlignedArray& operator=(const AlignedArray&) = delete;
  T* data() { return data_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) { return data_[i]; }

  void FillUniform(double lo, double hi, unsigned seed) {
    std::mt19937 rng(seed);
    for (size_t i = 0; i < n_; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        data_[i] = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
      } else {
        data_[i] = static_cast<T>(std::uniform_int_distribution<int64_t>(static_cast<int64_t>(lo),
                                                                          static_cast<int64_t>(hi))(rng));
      }
    }
  }

 private:
  size_t n_;
  T* data_;
};

inline tir::IRModule ModuleOf(const tir::PrimFunc& f) {
  tir::IRModule mod;
  mod.Add(f);
  return mod;
}

/// JIT-compiles `f` for the host and returns its module (the kernel is f's name).
inline runtime::Module JIT(const tir::PrimFunc& f) { return BuildJIT(ModuleOf(f), driver::HostTarget()); }

inline tir::Buffer Buf1D(const std::string& name, DataType t, int64_t n) {
  return tir::Buffer::make(name, t, {ir::make_const(DataType::Int(32), n)});
}

}  // namespace tessera::codegen::testing
