// The RPC client: runs a model library on a remote `tessera-runtime rpc server` (rpc/server.h,
// protocol: rpc/protocol.h). `tessera run MODEL.so --rpc HOST:PORT` uses it.
//
//   rpc::Client client("127.0.0.1:9190");            // connect + handshake
//   client.Upload("model.so");                       // the server loads it (its checks apply)
//   RunModelResult r = client.Run(inputs, {.threads = 0, .bench = 10});
//
// Errors: UserError for a bad address or a refused connection (saying how to start a server),
// for a library or inputs over the server's limits (before sending), and for every Error reply,
// whose message it carries prefixed with the server's address (e.g. the loader's "was compiled
// for x86_64 but this machine is aarch64"); ProtocolError when the server breaks the protocol or
// closes the connection mid-session (e.g. the model crashed it: see the server's log).
#pragma once

#include <string>
#include <vector>

#include "tessera/runtime/rpc/protocol.h"
#include "tessera/runtime/rpc/socket.h"

namespace tessera::runtime::rpc {

class Client {
 public:
  /// Connects to `address` ("HOST:PORT") and does the handshake; `limits` bound the replies.
  explicit Client(const std::string& address, const Limits& limits = {});
  /// Says Goodbye (best effort) and closes.
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// The server's HelloReply: who it is ("tessera-runtime 0.1.0 aarch64"), its arch and limits.
  const HelloReply& server() const { return server_; }

  /// Uploads the library at `path`; the server loads it. Returns its input / output counts.
  ModuleLoaded Upload(const std::string& path);
  /// Runs the uploaded model remotely (RunModel's semantics, run_model.h).
  RunModelResult Run(const std::vector<NamedTensor>& inputs, const RunModelOptions& options = {});

 private:
  /// Receives the reply to a request: `expected`, or an Error (thrown as UserError).
  Message Expect(MessageType expected);

  std::string address_;
  Limits limits_;
  Socket socket_;
  HelloReply server_;
};

}  // namespace tessera::runtime::rpc
