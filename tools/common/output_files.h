// Showing and writing a model's outputs for the `run` subcommands (run_command.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "output_names.h"
#include "tessera/runtime/run_model.h"

namespace tessera::cli {

/// "output NAME: [1, 10] float32 [v0, v1, ... up to 8 values]" (values for float32 only).
void PrintOutput(std::ostream& os, const runtime::NamedTensor& output);

/// Writes every output as DIR/<file name>, creating DIR (and its parents) when missing; the file
/// names follow output_names.h (NpyFileName, made unique), and a note for each output whose name
/// changed goes to `notes`. Returns the paths written, in graph order. UserError when DIR cannot
/// be created or written.
std::vector<std::string> SaveNpyDir(const std::string& dir, const std::vector<runtime::NamedTensor>& outputs,
                                    std::ostream& notes);

/// Writes every output to the .npz archive `path` as "<member>.npy", the members named by
/// output_names.h (NpzMemberName, made unique), with a note on `notes` for each renamed output.
/// Returns the number of members. UserError when the file cannot be written.
size_t SaveNpzOutputs(const std::string& path, const std::vector<runtime::NamedTensor>& outputs, std::ostream& notes);

}  // namespace tessera::cli
