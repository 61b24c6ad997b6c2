// ONNX GridSample-16/20/22 (onnx/docs/Operators.md#GridSample; its reference implementation,
// onnx/reference/ops/op_grid_sample.py, and PyTorch's grid_sampler, which both follow):
// sample x [N, C, D1..Dr] at the normalised coordinates of grid [N, O1..Or, r] (grid's last
// axis lists the coordinates innermost dim first: x, y, z).
//
// Per spatial dim of extent d, a normalised g in [-1, 1] maps to the source coordinate
//   align_corners:  (g + 1) / 2 * (d - 1)      (-1 and 1 are the centres of the corner pixels)
//   otherwise:      ((g + 1) * d - 1) / 2      (-1 and 1 are the outer edges)
// nearest rounds it half to even; a coordinate outside [lo, hi] (align_corners: [0, d - 1],
// else [-0.5, d - 0.5]) is clamped to [0, d - 1] (padding "border") or reflected into
// [lo, hi] (padding "reflection"). Then nearest reads one pixel, linear the 2 and cubic the 4
// neighbours per dim (Keys' cubic with A = -0.75), and a tap outside the input reads 0
// ("zeros"), the clamped pixel ("border") or the reflected pixel ("reflection").
// Arithmetic in float32 (float64 for float64 x), as the reference.
#pragma once

#include <string>

#include "tessera/topi/util.h"

namespace tessera::topi {

/// out [N, C, O1..Or] = GridSample(x, grid). mode "nearest" / "linear" / "cubic"; padding_mode
/// "zeros" / "border" / "reflection". UserError on a grid whose shape does not match x (batch,
/// rank, last dim r) or an unknown mode.
Tensor grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode, const std::string& padding_mode,
                   bool align_corners);

}  // namespace tessera::topi
