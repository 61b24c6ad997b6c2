// The graph IR verifier: checks the invariants every pass must keep (MLIR's verifiers run
// after each pass in debug builds; so do ours, through VerifierInstrument).
//
//   - no null children; every call of an op has the op's registered number of arguments;
//   - no free variables: every variable used is a parameter of an enclosing function or
//     bound by an enclosing let (a let-bound function also in its own body: a loop, Relay's
//     recursive let);
//   - a function with attribute Primitive = 1 calls only ops (no functions, no nested
//     functions, no let / if) — what FuseOps produces and the lowering expects;
//   - a TupleGetItem index is within its tuple's arity (a literal tuple, or a typed one);
//   - every GlobalVar names a function of the module, every constructor (called or in a pattern)
//     belongs to a type the module defines and is called with one argument per field; a match
//     pattern binds each variable once, and its variables are bound in its clause's result;
//     a primitive function names no global, constructor or match;
//   - with `require_types` (after InferType): every expression but op references carries a
//     checked type, and a literal tuple's type has as many fields as the tuple.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/module.h"
#include "tessera/ir/pass.h"

namespace tessera::graph {

struct VerifyOptions {
  bool require_types = false;
};

/// The violated invariants of `mod`, one line each ("@main: free variable %x"); empty when sound.
std::vector<std::string> VerifyModule(const IRModule& mod, const VerifyOptions& options = {});

/// Throws InternalError listing the problems of `mod` (`where` names the pass that ran).
void CheckModule(const IRModule& mod, const VerifyOptions& options, const std::string& where);

/// After every pass on a graph::IRModule: CheckModule, with require_types after InferType.
/// The driver adds it in debug builds (and with `tessera compile --verify-ir`).
class VerifierInstrument : public ir::PassInstrument {
 public:
  std::string name() const override { return "Verifier"; }
  void RunAfterPass(const ir::PassInfo& info, const ir::IRView& ir) override;
};

}  // namespace tessera::graph
