// The RPC server (`tessera-runtime rpc server`): runs uploaded model libraries for clients on
// this machine (protocol: rpc/protocol.h).
//
// Sessions run one at a time, in order of arrival (timings are never disturbed by a second
// client), each in a forked child process with its own private temporary folder (mkdtemp, mode
// 0700) for the uploaded libraries: a model that crashes ends its session, not the server. A
// session: Hello -> HelloReply; then any number of UploadModule (loaded with
// Module::LoadFromFile, whose artifact checks apply: another architecture, version or missing
// CPU features is an Error reply naming the client's file) and Run (RunModel, run_model.h)
// requests; Goodbye or a closed connection ends it. A model-level failure (load error, bad
// input, failing kernel) is an Error reply and the session goes on; a protocol violation (see
// protocol.h) is logged, answered with an Error when the socket still takes it, and closes
// the connection; a client silent for `idle_timeout_s` is disconnected. The server itself never
// stops on a client's input.
//
// Log: one line per event on `log` (stderr for the CLI), prefixed "tessera-runtime rpc: ".
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "tessera/runtime/rpc/protocol.h"
#include "tessera/runtime/rpc/socket.h"

namespace tessera::runtime::rpc {

struct ServerOptions {
  std::string host = "127.0.0.1";  ///< address to listen on (0.0.0.0: every interface)
  int port = 9190;                 ///< 0: any free port (reported to on_listening)
  Limits limits;                   ///< bounds on what clients send
  int idle_timeout_s = 300;        ///< a session waiting longer for a client's bytes is closed
  int max_sessions = 0;            ///< stop after this many sessions (0: serve forever)
  std::string name = "tessera-runtime";  ///< the peer name sent in HelloReply (plus version, arch)
};

/// Listens and serves sessions (see the header comment) until max_sessions were served; calls
/// `on_listening(port)` once the socket listens. Throws UserError only when it cannot listen.
void Serve(const ServerOptions& options, std::ostream& log, const std::function<void(int port)>& on_listening = {});

/// Serves one session on `conn` in this process (what each forked child runs), writing uploaded
/// libraries under `work_dir` (an existing private folder). Never throws: every failure is
/// logged and, where possible, answered with an Error message.
void ServeSession(Socket conn, const ServerOptions& options, const std::string& work_dir, std::ostream& log);

}  // namespace tessera::runtime::rpc
