// Features of a lowered kernel for the cost model (cost_model.h): MetaSchedule-style per-store
// features (TensorIR, arXiv 2207.04296 §5; AutoTVM, arXiv 1805.08166 §4.2 "loop program
// features"), computed on the FLAT PrimFunc that tir::transform::LowerToFlat returns (loops,
// Allocate, IfThenElse, LetStmt and BufferStore / BufferLoad with one index; vectorized loops
// already turned into Ramp / Broadcast lanes, unrolled loops into copies of their body).
//
// One row per BufferStore (kPerStoreLength values), in program order:
//   computation  operations of the stored value (and of the index arithmetic), each counted once
//                per lane and multiplied by the trip count of the loops around the store:
//                float add/sub, mul, div/mod, min/max, fma-like (fma calls and float adds of a
//                product), math calls (exp, log, sqrt, tanh, ...), float compare/select, int
//                arithmetic, int/bool compare and logic, casts;
//   loop nest    trip count (product of the constant extents around the store; a non-constant
//                extent counts 1), number of loops, vector lanes of the stored value, product of
//                the extents of vectorized / unrolled / parallel loops around it (the last two
//                as loop kinds; LowerToFlat leaves parallel loops, and vectorized / unrolled ones
//                only where it could not lower them), innermost loop's extent and kind (one-hot:
//                serial, parallel, vectorized, unrolled; all 0 for a store outside any loop),
//                stores in the innermost loop's body (what unrolling multiplies), whether an
//                IfThenElse guards the store;
//   accesses     for the kMaxBuffers buffers the store touches most (by bytes touched, the stored
//                buffer included; unused slots 0): read?, written?, bytes touched (the distinct
//                elements the loop nest reaches, from the index's coefficients, at most the
//                buffer's size), |stride| w.r.t. the innermost loop (elements: the coefficient of
//                its variable in the flat index; 0 for a loop-invariant access), |stride| between
//                the lanes of a vector access (its Ramp's stride; 0 for a scalar or broadcast
//                index), |stride| w.r.t. the innermost of the lanes and loops the index varies
//                with, reuse (accesses / distinct elements), bytes accessed (accesses x element
//                bytes), the buffer's size in bytes.
// Every value is log2(1 + x)-scaled (strides and counts are >= 0; flags are 0 or 1).
//
// ExtractFeatures gives one fixed-length vector per function (kFeatureLength): the per-store rows
// summed (before scaling, then scaled), their element-wise maximum (scaled), and whole-function
// features: bytes allocated (Allocate), allocations, loops, stores, deepest loop nest, bytes of
// the parameters. A function without stores gives zeros but for the function features.
//
// Index coefficients: affine parts are exact (Add, Sub, Mul by a constant, Cast, LetStmt / Let
// variables substituted); floordiv / div by a constant c divides the coefficient by c
// (truncated), floormod / mod keeps it; a product of two varying terms counts as coefficient 1.
//
// Errors: InternalError when the function is not flat (a Block, or an access with more than one
// index).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tessera/tir/function.h"

namespace tessera::tune {

/// Buffers described per store.
inline constexpr size_t kMaxBuffers = 5;
/// Values per buffer slot: read, write, touched bytes, innermost-loop stride, lane stride, varying
/// stride, reuse, accessed bytes, buffer bytes.
inline constexpr size_t kPerBufferLength = 9;
/// Computation (10) + loop nest (13) values.
inline constexpr size_t kPerStoreHeadLength = 23;
inline constexpr size_t kPerStoreLength = kPerStoreHeadLength + kMaxBuffers * kPerBufferLength;
/// Whole-function values.
inline constexpr size_t kFunctionFeatureLength = 6;
/// ExtractFeatures' length: sum of rows, max of rows, function features.
inline constexpr size_t kFeatureLength = 2 * kPerStoreLength + kFunctionFeatureLength;

/// The name of every per-store value, in order (e.g. "float_mul", "vector_lanes",
/// "buf0.stride_innermost"; buffer slots "buf<i>.<read|write|touched_bytes|stride_innermost|
/// stride_lanes|stride_varying|reuse|accessed_bytes|buffer_bytes>"); kPerStoreLength names.
const std::vector<std::string>& PerStoreFeatureNames();
/// The name of every ExtractFeatures value: "sum.<per-store name>", "max.<per-store name>", then
/// the function features ("alloc_bytes", "num_allocs", "num_loops", "num_stores", "max_loop_depth",
/// "param_bytes"); kFeatureLength names.
const std::vector<std::string>& FeatureNames();
/// The index of `name` in FeatureNames() (or PerStoreFeatureNames() when `per_store`);
/// InternalError for an unknown name.
size_t FeatureIndex(const std::string& name, bool per_store = false);

/// One log-scaled row of kPerStoreLength values per BufferStore of `flat`, in program order.
std::vector<std::vector<float>> PerStoreFeatures(const tir::PrimFunc& flat);

/// The fixed-length (kFeatureLength) log-scaled feature vector of `flat`.
std::vector<float> ExtractFeatures(const tir::PrimFunc& flat);

}  // namespace tessera::tune
