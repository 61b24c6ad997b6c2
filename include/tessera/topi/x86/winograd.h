// x86 schedules of the Winograd transforms (topi/nn/winograd.h); the GEMM between them is the
// packed batch GEMM (x86/dense.h).
//
// winograd_input_transform, loops e, p, c (c = co * c_block + ci) become
//   parallel(p)                     one task per tile
//     co                            channel blocks of the input
//       unroll e (alpha^2)          each copy keeps its select case: the few +- terms of one
//                                   V element; LLVM shares the alpha^2 tile loads among them
//         vectorize ci              c_block lanes, contiguous in the NCHWc input and in V
// Its padding stage (data_pad_NCHWc) keeps the default schedule.
//
// winograd_output_transform (with the conv's epilogue, bias / relu / residual add, inlined into
// it by reverse_compute_inline), loops n, ko, y, x, ki become
//   parallel(fuse(n, ko, yo))       one task per (output-channel block, row of tiles)
//     xo                            tiles of the row
//       unroll yi (m), unroll xi (m) the m x m outputs of a tile: each copy keeps its select case
//         vectorize ki              k lanes, contiguous in M and in the NCHWc output
#pragma once

#include <set>
#include <string>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// Whether the default schedule must keep a block as its own stage (the output transform, so
/// that its consumers are inlined into it rather than it into them).
bool KeepWinogradStage(const std::string& block_name);

/// Schedules every Winograd input / output transform block of `sch` as described above. Returns
/// the names of the blocks it scheduled. Every step is a checked primitive; one the library
/// refuses is skipped, so the result is always valid.
std::set<std::string> ScheduleWinograd(tir::Schedule& sch, const ScheduleOptions& options);

/// ScheduleWinograd as an anchor schedule, keeping the KeepWinogradStage stages and the input
/// transform's padding stage (conv2d_nchwc.h KeepAsStage).
AnchorSchedule WinogradAnchor();

}  // namespace tessera::topi::x86
