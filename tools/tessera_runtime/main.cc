// tessera-runtime: run compiled model libraries on the machine they were compiled for — the
// device side of Tessera, with no compiler in it (it links only the runtime).
//   tessera-runtime run MODEL.so --input NAME=FILE.npy ... [--output OUT.npz | --output-dir DIR]
//                       [--bench N] [--threads T] [--rpc HOST:PORT]
//   tessera-runtime rpc server [--host 127.0.0.1] [--port 9190] [--max-module-mb M] [--max-run-mb R]
//                       [--idle-timeout S]
// Exit codes: 0 success, 1 a user error (bad file, wrong input, an artifact for another machine),
// 2 a command-line error, 3 an internal error (a bug in Tessera: please report it).
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "run_command.h"
#include "tessera/runtime/npy_io.h"
#include "tessera/runtime/rpc/server.h"
#include "tessera/support/error.h"

namespace {

using tessera::UserError;

/// --input files: .npy only (the .pb reader lives in the compiler's frontend).
tessera::runtime::NDArray LoadNpyInput(const std::string& path) {
  TESSERA_CHECK(std::filesystem::exists(path), "input file '", path, "' does not exist");
  const std::string ext = std::filesystem::path(path).extension().string();
  TESSERA_CHECK(ext == ".npy", "input file '", path, "': tessera-runtime reads numpy .npy files only; convert it "
                "on the host (an ONNX .pb: numpy.save(name, onnx.numpy_helper.to_array(tensor)))");
  return tessera::runtime::LoadNpy(path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-runtime: run compiled Tessera model libraries on this machine, or serve them over RPC"};
  app.require_subcommand(1);

  auto run_opts = std::make_shared<tessera::cli::RunOptions>();
  auto* run = app.add_subcommand("run", "Run a compiled model library on .npy input tensors");
  tessera::cli::AddRunOptions(*run, *run_opts, "NAME=FILE.npy: an input tensor");

  auto* rpc = app.add_subcommand("rpc", "Remote execution (TVM-style RPC)");
  rpc->require_subcommand(1);
  tessera::runtime::rpc::ServerOptions server;
  double max_module_mb = 1024, max_run_mb = 1024;
  auto* serve = rpc->add_subcommand("server", "Serve model runs to `tessera run --rpc HOST:PORT` clients (loopback "
                                              "or trusted networks only: clients upload code that runs here)");
  serve->add_option("--host", server.host, "address to listen on")->capture_default_str();
  serve->add_option("--port", server.port, "port to listen on (0: any free port, printed in the log)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve->add_option("--max-module-mb", max_module_mb, "largest model library a client may upload, in MiB")
      ->check(CLI::Range(0.001, 1048576.0))
      ->capture_default_str();
  serve->add_option("--max-run-mb", max_run_mb, "largest Run request / reply (all tensors), in MiB")
      ->check(CLI::Range(0.001, 1048576.0))
      ->capture_default_str();
  serve->add_option("--idle-timeout", server.idle_timeout_s,
                    "close a session whose client sends nothing for this many seconds (0: never)")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand(run)) return tessera::cli::RunCommand(*run_opts, LoadNpyInput);
    if (rpc->got_subcommand(serve)) {
      server.limits.max_module_bytes = static_cast<uint64_t>(max_module_mb * 1024 * 1024);
      server.limits.max_run_bytes = static_cast<uint64_t>(max_run_mb * 1024 * 1024);
      tessera::runtime::rpc::Serve(server, std::cerr);
      return 0;
    }
  } catch (const tessera::InternalError& e) {
    std::cerr << "tessera-runtime: " << e.what() << "\n(this is a bug in Tessera)\n";
    return 3;
  } catch (const tessera::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessera-runtime: internal error: " << e.what() << "\n";
    return 3;
  }
  return 2;
}
