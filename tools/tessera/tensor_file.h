// Reading tensors for `tessera run --input NAME=FILE`: `.npy` (numpy) or `.pb` (a serialized
// ONNX TensorProto, as in the ONNX test data sets).
#pragma once

#include <string>

#include "tessera/runtime/ndarray.h"

namespace tessera::cli {

/// Loads FILE by its extension (.npy or .pb). UserError for a missing file, another
/// extension, or contents that do not parse.
runtime::NDArray LoadTensorFile(const std::string& path);

}  // namespace tessera::cli
