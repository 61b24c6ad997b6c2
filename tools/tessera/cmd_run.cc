// `tessera run`: the shared run subcommand (tools/common/run_command.h) with inputs read as
// .npy or ONNX TensorProto .pb files (tensor_file.h).
#include <memory>

#include "commands.h"
#include "run_command.h"
#include "tensor_file.h"

namespace tessera::cli {

Action AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a compiled model library on input tensors, here or on an RPC server");
  AddRunOptions(*cmd, *opts, "NAME=FILE: an input tensor, FILE is .npy or an ONNX TensorProto .pb");
  return [opts] { return RunCommand(*opts, LoadTensorFile); };
}

}  // namespace tessera::cli
