// Fuzz target onnx_import: ONNX import + InferType of arbitrary bytes (frontend::FromONNXBytes
// parses the ModelProto, converts every node and runs InferType on the result).
#include "fuzz_target.h"
#include "tessera/frontend/onnx_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(tessera::fuzz::Bytes(data, size));
  tessera::fuzz::AcceptUserErrors([&] { tessera::frontend::FromONNXBytes(bytes, {}, "fuzz.onnx"); });
  return 0;
}
