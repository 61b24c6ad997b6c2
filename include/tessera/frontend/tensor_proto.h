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

/// Reads one serialized onnx.TensorProto. Element types: float16/32/64, bfloat16, the float8
/// formats (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), float4e2m1, int2/4/8/16/32/64,
/// uint2/4/8/16/32/64, bool; data from raw_data (little-endian) or the typed fields (16- and
/// 8-bit floats as bit patterns in int32_data). 4- and 2-bit elements, packed by ONNX, are
/// unpacked one per byte (data_type.h). Throws UserError naming the file for a
/// missing/unreadable/corrupt file, one that is not a regular file (FIFO, device, folder) or is
/// over 2 GiB, or a size mismatch, UnsupportedError for other element
/// types (string, complex) or external data.
NamedTensor ReadTensorProtoFile(const std::string& path);

/// The same from the serialized bytes; `source` names them in error messages.
NamedTensor ParseTensorProto(const std::string& bytes, const std::string& source = "<memory>");

}  // namespace tessera::frontend
