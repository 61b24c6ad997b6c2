// Ops that only the VM runs (runtime/vm.h; driver/vm_codegen.h):
//   vm.fatal(x) -> Tensor[shape, dtype]: the run fails with `message` (UserError) when it is reached,
//     as the Relay VM's Fatal instruction. The importer puts it in an If branch that cannot run
//     with the compiled shapes (ONNX Runtime fails at run time there too). Its argument only
//     keeps it from being folded or hoisted out of the branch; its type is its attrs' (the
//     other branch's). attrs: message (string), shape (ints), dtype (string). Opaque; no compute.
#include "op_groups.h"
#include "op_util.h"

namespace tessera::graph::op {

namespace {

Type FatalRel(const std::vector<Type>& args, const Attrs& attrs) {
  TESSERA_CHECK(args.size() == 1 && args[0], "takes one argument");
  TESSERA_CHECK(attrs.Has("message") && attrs.Has("shape") && attrs.Has("dtype"),
                "needs attrs message, shape and dtype");
  for (int64_t d : attrs.GetInts("shape")) TESSERA_CHECK(d >= 0, "shape has a negative extent ", d);
  return TensorTypeNode::make(attrs.GetInts("shape"), DataType::Parse(attrs.GetString("dtype")));
}

}  // namespace

void RegisterVMOps(OpRegistry& r) {
  r.Register("vm.fatal", 1, kOpaque, FatalRel,
             "fails the run with `message` when reached (an If branch that cannot run). attrs: message, shape, dtype");
}

}  // namespace tessera::graph::op
