// The parser of the graph IR's text form: reads back what printer.h writes, so that
// PrintModule(ParseModule(PrintModule(m, {.metadata = true})), {.metadata = true}) is the same
// text for a typed module (Relay's text format round trip).
//
// Grammar (the printer's output; `//` and other `/* */` comments may appear between tokens):
//
//   module    := (typedef | def)* metadata?
//   typedef   := 'type' IDENT ['[' IDENT {',' IDENT} ']'] '{' ctor {',' ctor} [','] '}'
//   ctor      := IDENT ['(' type {',' type} ')']
//   def       := 'def' GLOBAL function
//   function  := '(' [param {',' param}] ')' ['->' type] [fnattrs] '{' block '}'
//   param     := LOCAL ':' type
//   fnattrs   := '/*' 'attrs' ':' attr {',' attr} '*/'
//   block     := {stmt ';'} expr
//   stmt      := LOCAL '=' expr                      a %N binding (no variable: the name stands for expr)
//              | 'let' LOCAL [':' type] '=' expr     the rest of the block is the let's body; when
//                                                    expr is a 'fn', LOCAL is defined in it too (a
//                                                    recursive let), typed by the fn's signature
//   expr      := primary {'.' INT | '(' args ')' | tycomment}
//   primary   := LOCAL | GLOBAL | CTOR | scalar | meta | OPNAME ['(' args ')']
//              | '(' ')' | '(' expr ')' | '(' expr ',' [expr {',' expr} [',']] ')'    tuples
//              | 'if' '(' expr ')' '{' block '}' 'else' '{' block '}'
//              | 'fn' function | '{' block '}'
//              | 'match' '(' expr ')' '{' clause {',' clause} [','] '}'
//   clause    := pattern '=>' expr                   (the pattern's variables are seen by expr only)
//   pattern   := '_' | LOCAL [':' type] | CTOR ['(' pattern {',' pattern} ')']
//              | '(' [pattern {',' pattern} [',']] ')'
//   args      := [arg {',' arg}], positional arguments before attrs
//   arg       := expr | attr
//   attr      := IDENT '=' value
//   value     := INT | DOUBLE | ['-'] ('inff' | 'nanf') | STRING | '[' [value {',' value}] ']'
//   scalar    := 1f | 1.5f | 1f64 | 3i64 | 3 | 'True' | 'False'       (text_format.h; 1.5 = 1.5f)
//   meta      := 'meta' '[' 'Constant' ']' '[' INT ']'
//   tycomment := '/*' 'ty' '=' type '*/'                 (read and dropped: InferType recomputes)
//   type      := 'Tensor' '[' shape ',' DTYPE ']' | '(' [type {',' type} [',']] ')'
//              | 'fn' '(' [type {',' type}] ')' '->' type | 'TensorArray' '[' type ']'   (a tensor type)
//              | ADT ['[' type {',' type} ']']   (as many args as the type has params) | '_'
//              | TYPEPARAM                        (inside a typedef: one of its params)
//   shape     := '(' [dim {',' dim} [',']] ')'
//   dim       := an integer >= 0, or a symbolic name: the raw text up to the next ',' or ')'
//                outside brackets ("batch_size", "?", "x[0]"), trimmed
//   metadata  := '#' '[' 'metadata' ']' {'Constant' '[' INT ']' ':' DTYPE shape HEX}
//
// Attr values: an INT (no suffix) is an int64, a number with the suffix 'f' (or a '.' or an
// exponent) a double; a list holds ints or doubles, not both; `[]` reads as an empty int list
// (which GetDoubles accepts too). Strings use the escapes of text_format.h.
//
// Semantics. A type is defined before it is used (a typedef may name itself: List[A] in Cons); a
// CTOR is a constructor name of a type defined above (it takes precedence over an op of the same
// name); a GLOBAL (@f) may name a function defined anywhere in the text (mutual recursion): one
// that names no def is an error at the end. Names resolve innermost scope first: a block sees the bindings, lets and
// parameters of the blocks and functions around it (a nested fn may use the enclosing
// function's names), and a name may be defined once per block. Every %N binding stands for one
// node, so a node used twice in the text is one shared node. `meta[Constant][i]` is the i-th
// constant of the metadata section (one node per index); the section starts at a line that is
// exactly `#[metadata]` and runs to the end of the text; its entries are numbered from 0 in order,
// and each line holds exactly the bytes its dtype and (static) shape need. A let printed
// inside a block (not as an operand `{ let ...; ... }`) takes the rest of the block as its body.
// The function attrs comment becomes the FunctionNode's attrs (Primitive, Compiler,
// global_symbol, Composite ...).
//
// ParseModule type-checks as it reads (each binding's expression with InferExprType; not in a
// function that names a global defined after it or itself) and runs InferType on the result: a type error names the line of the binding it is in. Type
// relations read attrs with typed getters meant for attrs that passes build; here the text
// builds them, so any failure there is reported as a UserError too.
//
// Errors: a UserError "source:line:column: expected X, found Y" (or "unknown operator 'foo'",
// "unknown variable %x", "meta[Constant][0] needs the #[metadata] section ...", a type error),
// never a crash: nesting deeper than 200 levels is an error too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/graph/module.h"

namespace tessera::graph {

/// The module `text` holds; typed (InferType has run). `source` names the text in errors.
IRModule ParseModule(std::string_view text, const std::string& source = "<text>");

/// One expression as PrintExpr writes it (`fn (...) {...}`, or bindings and a result), with an
/// optional metadata section. Its free variables must be among `free_vars` (matched by name as
/// the printer writes it: name_hint with the legal characters). Not type-checked: call
/// InferExprType on the result.
Expr ParseExpr(std::string_view text, const std::string& source = "<text>", const std::vector<Var>& free_vars = {});

}  // namespace tessera::graph
