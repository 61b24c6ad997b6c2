// Relay's prelude (arXiv 1904.08368 §3.3; tvm/relay/std/prelude.rly): the algebraic data types a
// program may use without defining them.
//
//   type List[A] {       // a linked list: Cons cells ending in Nil
//     Cons(A, List[A]),
//     Nil,
//   }
//   type Option[A] {     // a value or none
//     Some(A),
//     None,
//   }
//
// The VM's tensor lists (TensorArray[...], graph/type.h ListTypeNode) are another, built-in type:
// O(1) append and stacking for ONNX sequences and scan outputs; List[A] holds values of any type.
#pragma once

#include <string>

#include "tessera/graph/module.h"

namespace tessera::graph {

/// List[A] { Cons(A, List[A]), Nil }: Cons has tag 0, Nil tag 1.
TypeData PreludeList();
/// Option[A] { Some(A), None }: Some has tag 0, None tag 1.
TypeData PreludeOption();
/// Adds the prelude's types to `mod` (UserError when it defines other types of those names).
void AddPrelude(IRModule* mod);
/// The prelude's type definitions as text (printer.h), to put before a program's text for ParseModule.
std::string PreludeText();

}  // namespace tessera::graph
