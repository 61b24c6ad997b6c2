// Fuzz target rpc_messages: the RPC protocol's decoders (runtime/rpc/protocol.h), fed what a
// hostile peer could send. The first byte picks the decoder (frame headers at the server and at
// the client, and every payload); the rest is its input. A payload that decodes is encoded again
// and must decode to the same message (Encode / Decode agree).
#include <cstring>

#include "fuzz_target.h"
#include "tessera/runtime/rpc/protocol.h"

namespace {

using namespace tessera::runtime;
using namespace tessera::runtime::rpc;

void Same(bool ok, const char* what) {
  if (!ok) TESSERA_THROW(tessera::InternalError, what, ": Decode(Encode(Decode(x))) differs from Decode(x)");
}

bool SameTensors(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const NDArray &x = a[i].value, &y = b[i].value;
    if (a[i].name != b[i].name || x.dtype() != y.dtype() || x.shape() != y.shape() ||
        std::memcmp(x.raw_data(), y.raw_data(), x.NBytes()) != 0)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in = tessera::fuzz::Bytes(data + 1, size - 1);
  const Limits limits{uint64_t{1} << 20, uint64_t{1} << 20};
  tessera::fuzz::AcceptUserErrors([&] {
    switch (data[0] % 10) {
      case 0:
        if (in.size() >= kHeaderBytes) DecodeHeader(in.substr(0, kHeaderBytes), true, limits);
        break;
      case 1:
        if (in.size() >= kHeaderBytes) DecodeHeader(in.substr(0, kHeaderBytes), false, limits);
        break;
      case 2: {
        const Hello m = DecodeHello(in);
        const Hello r = DecodeHello(Encode(m));
        Same(r.version == m.version && r.peer == m.peer, "Hello");
        break;
      }
      case 3: {
        const HelloReply m = DecodeHelloReply(in);
        const HelloReply r = DecodeHelloReply(Encode(m));
        Same(r.version == m.version && r.peer == m.peer && r.arch == m.arch &&
                 r.limits.max_module_bytes == m.limits.max_module_bytes &&
                 r.limits.max_run_bytes == m.limits.max_run_bytes,
             "HelloReply");
        break;
      }
      case 4: {
        const UploadModule m = DecodeUploadModule(in);
        const UploadModule r = DecodeUploadModule(Encode(m));
        Same(r.file_name == m.file_name && r.bytes == m.bytes, "UploadModule");
        break;
      }
      case 5: {
        const ModuleLoaded m = DecodeModuleLoaded(in);
        const ModuleLoaded r = DecodeModuleLoaded(Encode(m));
        Same(r.num_inputs == m.num_inputs && r.num_outputs == m.num_outputs, "ModuleLoaded");
        break;
      }
      case 6: {
        const RunRequest m = DecodeRunRequest(in);
        const RunRequest r = DecodeRunRequest(Encode(m));
        Same(r.threads == m.threads && r.bench == m.bench && SameTensors(r.inputs, m.inputs), "Run");
        break;
      }
      case 7: {
        const RunReply m = DecodeRunReply(in);
        const RunReply r = DecodeRunReply(Encode(m));
        Same(std::memcmp(&r.median_ms, &m.median_ms, sizeof(double)) == 0 && SameTensors(r.outputs, m.outputs),
             "RunResult");
        break;
      }
      case 8: {
        const ErrorReply m = DecodeErrorReply(in);
        Same(DecodeErrorReply(Encode(m)).message == m.message, "Error");
        break;
      }
      default:
        PeekVersion(in, "Hello");
        break;
    }
  });
  return 0;
}
