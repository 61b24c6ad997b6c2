// The subcommands of the `tessera` CLI: each registers its options on the CLI11 app and
// returns the action to run once the command line is parsed.
#pragma once

#include <functional>
#include <map>

#include <CLI/CLI.hpp>

#include "tessera/frontend/onnx_importer.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::cli {

using Action = std::function<int()>;

/// `tessera compile MODEL.onnx -o MODEL.so [--target T] [--dump-ir DIR] [--time-passes] [--db TUNING.jsonl]
///  [--input-shape NAME=D0,D1,...] [--dynamic] [--input-value NAME=NUMBER|FILE]`
Action AddCompileCommand(CLI::App& app);
/// `tessera tune MODEL.onnx --db TUNING.jsonl (--time 10m | --trials N) [--target T] [--threads T]`
Action AddTuneCommand(CLI::App& app);

/// One --input-shape: a static extent (> 0) per dim, or -1 for a dim kept symbolic.
struct InputShapeSpec {
  std::string name;
  std::vector<int64_t> dims;
  std::map<int, std::string> symbols;  ///< dim index -> the symbol name the spec gave ("seq")
};
/// "input=1,3,224,224" → {"input", {1, 3, 224, 224}}; "ids=1,?" keeps dim 1 symbolic (named as the
/// model names it), "ids=1,seq" keeps it symbolic and names it "seq" (inputs naming the same symbol
/// share the extent). UserError naming the flag otherwise.
InputShapeSpec ParseInputShape(const std::string& spec);
/// "sr=16000" → {"sr", rank-0 int64 16000} (a float literal gives float64; the importer converts
/// it to the input's dtype), "x=FILE.npy|.pb" → the file's tensor; UserError naming the flag otherwise.
std::pair<std::string, runtime::NDArray> ParseInputValue(const std::string& spec);
/// The import options of `--input-shape` and `--input-value` flags (compile and tune): each parsed as
/// above; an input named twice by --input-shape or --input-value is a UserError.
frontend::ImportOptions ImportOptionsFromFlags(const std::vector<std::string>& input_shapes,
                                               const std::vector<std::string>& input_values);
/// `tessera run MODEL.so --input NAME=FILE ... [--output OUT.npz] [--output-dir DIR] [--bench N] [--threads T]
///  [--rpc HOST:PORT]` (tools/common/run_command.h)
Action AddRunCommand(CLI::App& app);
/// `tessera inspect MODEL.onnx|MODEL.so`
Action AddInspectCommand(CLI::App& app);

}  // namespace tessera::cli
