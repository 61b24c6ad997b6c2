// A TVMScript-like text form of TensorIR, for --dump-ir and test failure messages.
//
//   @prim_func
//   def matmul(A: Buffer((128, 128), "float32"), B: Buffer(...), C: Buffer(...)):
//     with block("root"):
//       for i in range(0, 128) parallel:
//         for j in range(0, 128):
//           for k in range(0, 128):
//             with block("C"):
//               vi = spatial(0, 128, i)          # (domain min, domain extent, binding)
//               vj = spatial(0, 128, j)
//               vk = reduce(0, 128, k)
//               reads(A[vi, vk], B[vk, vj])      # extent-1 ranges shown as a point
//               writes(C[vi, vj])
//               with init():
//                 C[vi, vj] = 0.0f
//               C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
//
// Loops print `range(min, min + extent)` followed by the kind unless serial. Integer
// division: `//` floordiv, `%` floormod, truncdiv(a, b) / truncmod(a, b) for Div / Mod;
// float32 literals end in `f`, other non-int32 literals print as `int64(3)`;
// vectors as ramp(base, stride, lanes) and broadcast(value, lanes). Buffers print
// by their data variable, so FlattenBuffer's 1-d views print as the parameter they
// view (`C[i * 32 + j]`). Distinct variables or buffers (different data) that share
// a name get suffixes _1, _2 ... The text is for people; it is not parsed back (yet).
#pragma once

#include <ostream>
#include <string>

#include "tessera/tir/function.h"

namespace tessera::tir {

std::string AsText(const PrimExpr& e);
std::string AsText(const Stmt& s);
std::string AsText(const PrimFunc& f);
std::string AsText(const IRModule& m);

std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace tessera::tir
