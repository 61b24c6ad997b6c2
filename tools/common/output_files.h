// Showing and writing a model's outputs for the `run` subcommands (run_command.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tessera/runtime/run_model.h"

namespace tessera::cli {

/// "output NAME: [1, 10] float32 [v0, v1, ... up to 8 values]" (values for float32 only).
void PrintOutput(std::ostream& os, const runtime::NamedTensor& output);

/// The .npy file name of an output: its name with every character other than [A-Za-z0-9._-]
/// replaced by '_' (a leading '.' too), plus ".npy"; "output.npy" for an empty name.
std::string NpyFileName(const std::string& output_name);

/// Writes every output as DIR/NpyFileName(name), creating DIR (and its parents) when missing.
/// Returns the paths written. UserError when DIR cannot be created or written, or when two
/// outputs map to one file name.
std::vector<std::string> SaveNpyDir(const std::string& dir, const std::vector<runtime::NamedTensor>& outputs);

}  // namespace tessera::cli
