// Reading serialized ONNX TensorProto files (the input_<i>.pb / output_<i>.pb files of the
// ONNX test data sets) into runtime::NDArray.
#pragma once

#include <string>

#include "tessera/runtime/ndarray.h"

namespace tessera::frontend {

struct NamedTensor {
  std::string name;  ///< the TensorProto's name ("" in the original ONNX test sets)
  runtime::NDArray value;
};

/// Reads one serialized onnx.TensorProto. Element types: float, double, int8/16/32/64,
/// uint8/16/32/64, bool; data from raw_data (little-endian) or the typed fields.
/// Throws UserError naming the file for a missing/unreadable/corrupt file or a size mismatch,
/// UnsupportedError for other element types (float16, string...) or external data.
NamedTensor ReadTensorProtoFile(const std::string& path);

/// The same from the serialized bytes; `source` names them in error messages.
NamedTensor ParseTensorProto(const std::string& bytes, const std::string& source = "<memory>");

}  // namespace tessera::frontend
