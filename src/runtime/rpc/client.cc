// The RPC client (rpc/client.h).
#include "tessera/runtime/rpc/client.h"

#include <filesystem>

#include "tessera/runtime/artifact_info.h"
#include "tessera/support/file_read.h"
#include "tessera/support/version.h"

namespace tessera::runtime::rpc {

Client::Client(const std::string& address, const Limits& limits) : address_(address), limits_(limits) {
  auto [host, port] = ParseAddress(address);
  socket_ = Socket::Connect(host, port);
  SendMessage(socket_, MessageType::kHello, Encode(Hello{kProtocolVersion, std::string("tessera ") + TESSERA_VERSION + " " + HostArch()}));
  Message m = Expect(MessageType::kHelloReply);
  const uint32_t version = PeekVersion(m.payload, "HelloReply");
  if (version != kProtocolVersion) {
    TESSERA_THROW(ProtocolError, "the RPC server at ", address_, " speaks protocol version ", version,
                  " but this client speaks version ", kProtocolVersion,
                  ": use a tessera and a tessera-runtime of the same release");
  }
  server_ = DecodeHelloReply(m.payload);
}

Client::~Client() {
  try {
    if (socket_.valid()) SendMessage(socket_, MessageType::kGoodbye, "");
  } catch (const std::exception&) {
    // The server is gone already.
  }
}

Message Client::Expect(MessageType expected) {
  std::optional<Message> m;
  try {
    m = ReceiveMessage(socket_, /*at_server=*/false, limits_);
  } catch (const ProtocolError& e) {
    TESSERA_THROW(ProtocolError, "the RPC server at ", address_, ": ", e.what());
  }
  if (!m) {
    TESSERA_THROW(ProtocolError, "the RPC server at ", address_, " closed the connection before answering (",
                  MessageTypeName(static_cast<uint32_t>(expected)),
                  " expected); if it crashed running the model, its log says how");
  }
  if (m->type == MessageType::kError) {
    TESSERA_THROW(UserError, "on the RPC server ", address_, ": ", DecodeErrorReply(m->payload).message);
  }
  if (m->type != expected) {
    TESSERA_THROW(ProtocolError, "the RPC server at ", address_, " answered ", MessageTypeName(static_cast<uint32_t>(m->type)),
                  " where ", MessageTypeName(static_cast<uint32_t>(expected)), " was expected");
  }
  return std::move(*m);
}

ModuleLoaded Client::Upload(const std::string& path) {
  TESSERA_CHECK(std::filesystem::exists(path), "model library '", path,
                "' does not exist: check the path, or build the model first (tessera compile)");
  RegularFile file(path, "model library");  // not a FIFO, device or folder
  TESSERA_CHECK(file.size() > 0, "model library '", path, "' is empty: rebuild it (tessera compile)");
  TESSERA_CHECK(file.size() <= server_.limits.max_module_bytes, "model library '", path, "' is ", file.size(),
                " bytes, over the RPC server's limit of ", server_.limits.max_module_bytes,
                " bytes: restart the server with a larger --max-module-mb");
  UploadModule up{std::filesystem::path(path).filename().string(), file.ReadAll()};
  SendMessage(socket_, MessageType::kUploadModule, Encode(up));
  return DecodeModuleLoaded(Expect(MessageType::kModuleLoaded).payload);
}

RunModelResult Client::Run(const std::vector<NamedTensor>& inputs, const RunModelOptions& options) {
  TESSERA_CHECK(options.threads >= 0 && options.threads <= 4096, "RPC run: --threads ", options.threads,
                " is out of range (1 to 4096; 0: the server's default)");
  TESSERA_CHECK(options.bench >= 0 && options.bench <= 1000000, "RPC run: --bench ", options.bench,
                " is out of range (0 to 1000000)");
  RunRequest req{static_cast<uint32_t>(options.threads), static_cast<uint32_t>(options.bench), inputs};
  std::string payload = Encode(req);
  TESSERA_CHECK(payload.size() <= server_.limits.max_run_bytes, "the inputs take ", payload.size(),
                " bytes, over the RPC server's limit of ", server_.limits.max_run_bytes,
                " bytes: restart the server with a larger --max-run-mb");
  SendMessage(socket_, MessageType::kRun, payload);
  RunReply reply = DecodeRunReply(Expect(MessageType::kRunResult).payload);
  return {std::move(reply.outputs), reply.median_ms};
}

}  // namespace tessera::runtime::rpc
