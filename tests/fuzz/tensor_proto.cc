// Fuzz target tensor_proto: the ONNX TensorProto (.pb) reader (frontend::ParseTensorProto, the
// parser under ReadTensorProtoFile and the importer's initializers).
#include "fuzz_target.h"
#include "tessera/frontend/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(tessera::fuzz::Bytes(data, size));
  tessera::fuzz::AcceptUserErrors([&] { tessera::frontend::ParseTensorProto(bytes, "fuzz.pb"); });
  return 0;
}
