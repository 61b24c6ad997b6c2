// The `run` subcommand shared by `tessera run` and `tessera-runtime run`: load a compiled model
// library, feed it input tensors, run it here or on an RPC server (--rpc HOST:PORT, rpc/client.h),
// print the outputs, write them (--output OUT.npz, --output-dir DIR: one DIR/<name>.npy each),
// and with --bench N print the median latency of N runs ("median X ms", measured where the model
// ran). Output to stdout is the same for a local and a remote run.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "tessera/runtime/ndarray.h"

namespace tessera::cli {

struct RunOptions {
  std::string library;              ///< MODEL.so
  std::vector<std::string> inputs;  ///< NAME=FILE
  std::string output;               ///< .npz to write, or ""
  std::string output_dir;           ///< folder for one .npy per output, or ""
  int bench = 0;
  int threads = 0;
  bool force_threads = false;       ///< --force-threads: more than 4 x the hardware threads
  std::string rpc;                  ///< HOST:PORT of an RPC server, or "" to run here
};

/// Reads one --input FILE (the tool decides which formats it reads). UserError when it cannot.
using TensorLoader = std::function<runtime::NDArray(const std::string& path)>;

/// Registers the options of `run` on `cmd`; `input_help` describes --input's FILE formats.
void AddRunOptions(CLI::App& cmd, RunOptions& options, const std::string& input_help);

/// Runs the command (see the header comment); returns the exit code (0). UserError for bad
/// options, unreadable inputs, and every failure of the run, local or remote.
int RunCommand(const RunOptions& options, const TensorLoader& load);

/// Splits "NAME=FILE" at the first '='. UserError when there is no '=' or a side is empty.
std::pair<std::string, std::string> ParseNamedFile(const std::string& spec);

}  // namespace tessera::cli
