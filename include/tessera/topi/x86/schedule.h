// Default x86 schedule of a PrimFunc built by te::create_prim_func from topi computes.
//
// A simple, always-correct baseline (tuned schedules replace it, issue #3):
//   1. every spatial-only block that writes an intermediate buffer (pad, elemwise, broadcast,
//      injective stages) is compute_inline'd into its consumers when the primitive allows it;
//   2. for every remaining block (outputs and reductions), the spatial loops outside its
//      reduction loops are handled: the outer ones are fused while their combined extent is
//      below `min_parallel_extent` (batch 1 gives no parallelism alone) and the result is
//      parallelized; when the innermost loop is spatial and indexes the last (contiguous)
//      dim of the output, it is vectorized, split first when longer than `vector_lanes`
//      (by vector_lanes, or half / a quarter of it when that divides the extent exactly).
//      For a reduction block whose innermost spatial loop indexes the output's last dim, that
//      loop (or its inner split part) is moved inside the reduction loops, the init is split
//      off with decompose_reduction, and both the update's and the init's lane loops are
//      vectorized (out[.., x:x+16] += ... per reduction step).
// Other extents are split by vector_lanes with a predicate (or, with `vectorize_partial`
// off, left unvectorized); tir's VectorizeLoop then keeps that loop serial, correctly. Every step is a checked schedule primitive;
// one that the schedule library refuses is skipped, so the result is always a valid
// schedule of the same computation.
//
// Blocks with duplicate names (two topi computes of the same op) are renamed "<name>_1", ...
// first, because a tir::Schedule needs unique block names.
#pragma once

#include <cstdint>

#include "tessera/tir/function.h"
#include "tessera/tir/schedule/schedule.h"

namespace tessera::topi::x86 {

struct ScheduleOptions {
  int vector_lanes = 16;             ///< float32 lanes of one AVX-512 register
  int64_t min_parallel_extent = 16;  ///< fuse outer spatial loops until this many iterations
  bool inline_injective = true;
  bool parallelize = true;
  bool vectorize = true;
  bool vectorize_partial = true;     ///< vectorize a predicated (non-dividing) split
  bool vectorize_reductions = true;  ///< move the lane loop of a reduction inside its reduction loops
};

/// A copy of `func` whose blocks have unique names.
tir::PrimFunc UniquifyBlockNames(const tir::PrimFunc& func);

/// Applies the default schedule; returns the schedule (its func() and trace()).
tir::Schedule ScheduleDefault(const tir::PrimFunc& func, const ScheduleOptions& options = {});

/// ScheduleDefault(func, options).func().
tir::PrimFunc DefaultSchedule(const tir::PrimFunc& func, const ScheduleOptions& options = {});

}  // namespace tessera::topi::x86
