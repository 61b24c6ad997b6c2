// DeadCodeElimination: removes what cannot affect a function's result (Relay's
// DeadCodeElimination, src/relay/transforms/dead_code.cc, without its inlining).
//
//   let %x = value; body   -> body            when %x is not used in body (ops are pure)
//   (a, b, c).1            -> b               a field of a literal tuple; the others die
//   if (c) { t } else { f } -> t / f          when c is a scalar bool constant
//
// Dataflow nodes no one uses are already unreachable from the result (the IR is a DAG from
// it), so these rewrites are all there is to do. Repeats until nothing changes. Types kept.
#pragma once

#include "tessera/graph/module.h"

namespace tessera::graph::transform {

IRModule DeadCodeElimination(const IRModule& mod);

}  // namespace tessera::graph::transform
