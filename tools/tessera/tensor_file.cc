// Reading `--input` tensors: see tensor_file.h.
#include "tensor_file.h"

#include <filesystem>

#include "tessera/frontend/tensor_proto.h"
#include "tessera/runtime/npy_io.h"
#include "tessera/support/error.h"

namespace tessera::cli {

runtime::NDArray LoadTensorFile(const std::string& path) {
  TESSERA_CHECK(std::filesystem::exists(path), "input file '", path, "' does not exist");
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".npy") return runtime::LoadNpy(path);
  if (ext == ".pb") return frontend::ReadTensorProtoFile(path).value;
  TESSERA_THROW(UserError, "input file '", path, "': unknown extension '", ext,
                "'; give a numpy .npy file or a serialized ONNX TensorProto .pb file");
}

}  // namespace tessera::cli
