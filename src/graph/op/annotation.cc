// BYOC annotations (arXiv 2105.03215 §3.2; Relay's annotation.compiler_begin / compiler_end):
// AnnotateTarget wraps each input of a call an external backend supports in compiler_begin and
// its result in compiler_end, both with attr compiler = the backend's name; MergeCompilerRegions
// removes the pairs inside a region and PartitionGraph outlines each region. Identity on types;
// opaque, so that nothing fuses across them. They never reach lowering (no compute).
#include "op_groups.h"
#include "op_util.h"

namespace tessera::graph::op {

namespace {

// Any value (a tensor or a tuple) passes through; attr compiler is required.
Type AnnotationRel(const std::vector<Type>& args, const Attrs& attrs) {
  TESSERA_CHECK(args.size() == 1 && args[0], "takes one argument");
  TESSERA_CHECK(!attrs.GetString("compiler", "").empty(), "needs attr compiler (the backend's name)");
  return args[0];
}

}  // namespace

void RegisterAnnotationOps(OpRegistry& r) {
  r.Register("annotation.compiler_begin", 1, kOpaque, AnnotationRel,
             "an input entering a region of an external backend. attrs: compiler");
  r.Register("annotation.compiler_end", 1, kOpaque, AnnotationRel,
             "a value leaving a region of an external backend. attrs: compiler");
}

}  // namespace tessera::graph::op
