// ONNX TensorProto / element-type conversion (internal to the frontend).
#pragma once

#include <string>

#include "onnx.pb.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::frontend {

/// The DataType of an ONNX TensorProto.DataType value; UnsupportedError ("<where>: ...") for
/// string, complex and unknown codes.
DataType DataTypeFromONNX(int elem_type, const std::string& where);

/// Copies a TensorProto's data (raw_data or typed fields) into a new NDArray.
runtime::NDArray TensorProtoToNDArray(const onnx::TensorProto& t, const std::string& where);

}  // namespace tessera::frontend
