// The RPC server (rpc/server.h).
#include "tessera/runtime/rpc/server.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/run_model.h"
#include "tessera/support/version.h"

namespace tessera::runtime::rpc {
namespace {

constexpr char kLogPrefix[] = "tessera-runtime rpc: ";

/// A fresh private temporary folder, removed (with what is in it) on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-rpc-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    TESSERA_CHECK(mkdtemp(buf.data()) != nullptr, "cannot create a temporary folder for uploaded models in ",
                  std::filesystem::temp_directory_path().string(), ": ", std::strerror(errno),
                  "; set TMPDIR to a writable folder");
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The client's file name reduced to a safe base name (it only names the upload in messages
/// and on disk: [A-Za-z0-9._-], no leading dot).
std::string SafeFileName(const std::string& name) {
  std::string base = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
  std::string out;
  for (char c : base) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  while (!out.empty() && out.front() == '.') out.erase(out.begin());
  return out.empty() ? "model.so" : out.substr(0, 100);
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

class Session {
 public:
  Session(Socket conn, const ServerOptions& options, const std::string& work_dir, std::ostream& log)
      : conn_(std::move(conn)), options_(options), work_dir_(work_dir), log_(log) {}

  void Serve() {
    log_ << kLogPrefix << "connection from " << conn_.peer() << "\n";
    try {
      if (!Handshake()) return;
      while (auto m = ReceiveMessage(conn_, /*at_server=*/true, options_.limits)) {
        if (m->type == MessageType::kGoodbye) break;
        if (m->type == MessageType::kHello) throw ProtocolError("a second Hello in one session");
        if (m->type == MessageType::kUploadModule) HandleUpload(DecodeUploadModule(m->payload));
        if (m->type == MessageType::kRun) HandleRun(DecodeRunRequest(m->payload));
      }
      log_ << kLogPrefix << "session with " << conn_.peer() << " ended\n";
    } catch (const ProtocolError& e) {
      Close(std::string("protocol error: ") + e.what());
    } catch (const std::bad_alloc&) {
      Close("out of memory");
    } catch (const std::exception& e) {
      Close(e.what());
    }
  }

 private:
  // Hello -> HelloReply. False (after an Error) when the client speaks another version.
  bool Handshake() {
    std::optional<Message> m = ReceiveMessage(conn_, /*at_server=*/true, options_.limits);
    if (!m) {
      log_ << kLogPrefix << conn_.peer() << " closed the connection without a message\n";
      return false;
    }
    if (m->type != MessageType::kHello) {
      throw ProtocolError("the first message must be Hello, not " + MessageTypeName(static_cast<uint32_t>(m->type)));
    }
    const uint32_t version = PeekVersion(m->payload, "Hello");
    if (version != kProtocolVersion) {
      throw ProtocolError("the client speaks protocol version " + std::to_string(version) +
                          " but this server speaks version " + std::to_string(kProtocolVersion) +
                          ": use a tessera and a tessera-runtime of the same release");
    }
    Hello hello = DecodeHello(m->payload);
    log_ << kLogPrefix << conn_.peer() << " is " << (hello.peer.empty() ? "an unnamed client" : hello.peer) << "\n";
    HelloReply reply;
    reply.peer = options_.name + " " + TESSERA_VERSION + " " + HostArch();
    reply.arch = HostArch();
    reply.limits = options_.limits;
    SendMessage(conn_, MessageType::kHelloReply, Encode(reply));
    return true;
  }

  void SendError(const std::string& message) {
    log_ << kLogPrefix << "error for " << conn_.peer() << ": " << message << "\n";
    SendMessage(conn_, MessageType::kError, Encode(ErrorReply{message}));
  }

  void HandleUpload(const UploadModule& up) {
    module_.reset();
    const std::string name = SafeFileName(up.file_name);
    const std::string dir = work_dir_ + "/" + std::to_string(++uploads_);  // dlopen caches by path: a new one each time
    const std::string path = dir + "/" + name;
    log_ << kLogPrefix << conn_.peer() << " uploaded '" << up.file_name << "' (" << up.bytes.size() << " bytes)\n";
    try {
      std::filesystem::create_directory(dir);
      {
        std::ofstream f(path, std::ios::binary);
        f.write(up.bytes.data(), static_cast<std::streamsize>(up.bytes.size()));
        TESSERA_CHECK(f.good(), "the server cannot write the uploaded library to ", path, " (disk full?)");
      }
      Module module = Module::LoadFromFile(path);
      std::filesystem::remove_all(dir);  // the mapping stays valid
      module_ = std::make_unique<Module>(std::move(module));
      std::unique_ptr<Executor> exec = MakeExecutor(*module_);  // checks the program now, not at the first Run
      ModuleLoaded loaded{static_cast<uint32_t>(exec->NumInputs()), static_cast<uint32_t>(exec->NumOutputs())};
      SendMessage(conn_, MessageType::kModuleLoaded, Encode(loaded));
    } catch (const Error& e) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      std::string message = e.what();
      ReplaceAll(message, path, up.file_name.empty() ? name : up.file_name);  // the client's name, not ours
      SendError(message);
    }
  }

  void HandleRun(const RunRequest& run) {
    if (!module_) {
      SendError("no model library was uploaded in this session: upload one (UploadModule) before Run");
      return;
    }
    RunReply reply;
    try {
      RunModelResult result = RunModel(*module_, run.inputs, {static_cast<int>(run.threads), static_cast<int>(run.bench)});
      reply.outputs = std::move(result.outputs);
      reply.median_ms = result.median_ms;
    } catch (const Error& e) {
      SendError(e.what());
      return;
    }
    std::string payload = Encode(reply);
    if (payload.size() > options_.limits.max_run_bytes) {
      SendError("the outputs take " + std::to_string(payload.size()) + " bytes, over the server's limit of " +
                std::to_string(options_.limits.max_run_bytes) + " (--max-run-mb)");
      return;
    }
    log_ << kLogPrefix << "ran the model for " << conn_.peer() << " (" << reply.outputs.size() << " output(s)"
         << (reply.median_ms >= 0 ? ", median " + std::to_string(reply.median_ms) + " ms" : std::string()) << ")\n";
    SendMessage(conn_, MessageType::kRunResult, payload);
  }

  // Logs why the connection closes and tells the client, if it still listens.
  void Close(const std::string& why) {
    log_ << kLogPrefix << "closing the connection from " << conn_.peer() << ": " << why << "\n";
    try {
      conn_.SetTimeouts(2);
      SendMessage(conn_, MessageType::kError, Encode(ErrorReply{why}));
      conn_.CloseGracefully();
    } catch (const std::exception&) {
      // The client is gone: nothing more to tell it.
    }
    conn_.Close();
  }

  Socket conn_;
  const ServerOptions& options_;
  const std::string& work_dir_;
  std::ostream& log_;
  std::unique_ptr<Module> module_;
  int uploads_ = 0;
};

}  // namespace

void ServeSession(Socket conn, const ServerOptions& options, const std::string& work_dir, std::ostream& log) {
  try {
    if (options.idle_timeout_s > 0) conn.SetTimeouts(options.idle_timeout_s);
    Session(std::move(conn), options, work_dir, log).Serve();
  } catch (const std::exception& e) {
    log << kLogPrefix << "session failed: " << e.what() << "\n";
  }
  log.flush();
}

void Serve(const ServerOptions& options, std::ostream& log, const std::function<void(int port)>& on_listening) {
  signal(SIGPIPE, SIG_IGN);  // a client that goes away is an error on its socket, not a signal
  Listener listener(options.host, options.port);
  log << kLogPrefix << "listening on " << options.host << ":" << listener.port() << " (" << HostArch()
      << ", Tessera " << TESSERA_VERSION << ", protocol version " << kProtocolVersion << ")\n";
  if (on_listening) on_listening(listener.port());
  for (int served = 0; options.max_sessions <= 0 || served < options.max_sessions; ++served) {
    Socket conn;
    try {
      conn = listener.Accept();
    } catch (const Error& e) {
      log << kLogPrefix << e.what() << "\n";
      continue;
    }
    std::optional<TempDir> dir;
    try {
      dir.emplace();
    } catch (const Error& e) {
      log << kLogPrefix << "refusing " << conn.peer() << ": " << e.what() << "\n";
      continue;
    }
    log.flush();
    std::cout.flush();
    std::cerr.flush();
    const std::string peer = conn.peer();
    pid_t pid = fork();
    if (pid == 0) {  // the session's own process
      listener.Close();
      ServeSession(std::move(conn), options, dir->path(), log);
      std::cout.flush();
      _exit(0);
    }
    conn.Close();
    if (pid < 0) {
      log << kLogPrefix << "cannot start a process for " << peer << ": " << std::strerror(errno) << "\n";
      continue;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
      log << kLogPrefix << "the session with " << peer << " crashed (signal " << WTERMSIG(status) << ", "
          << strsignal(WTERMSIG(status)) << "): the model library it ran is broken; serving the next connection\n";
    }
    log.flush();
  }
}

}  // namespace tessera::runtime::rpc
