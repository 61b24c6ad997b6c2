#include "tessera/frontend/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "onnx/tensor_convert.h"
#include "tessera/support/error.h"

namespace tessera::frontend {

DataType DataTypeFromONNX(int elem_type, const std::string& where) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: return DataType::Float(32);
    case onnx::TensorProto::DOUBLE: return DataType::Float(64);
    case onnx::TensorProto::INT8: return DataType::Int(8);
    case onnx::TensorProto::INT16: return DataType::Int(16);
    case onnx::TensorProto::INT32: return DataType::Int(32);
    case onnx::TensorProto::INT64: return DataType::Int(64);
    case onnx::TensorProto::UINT8: return DataType::UInt(8);
    case onnx::TensorProto::UINT16: return DataType::UInt(16);
    case onnx::TensorProto::UINT32: return DataType::UInt(32);
    case onnx::TensorProto::UINT64: return DataType::UInt(64);
    case onnx::TensorProto::BOOL: return DataType::Bool();
    default: break;
  }
  std::string name = onnx::TensorProto::DataType_IsValid(elem_type)
                         ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type))
                         : "code " + std::to_string(elem_type);
  TESSERA_THROW(UnsupportedError, where, ": element type ", name,
                " is not supported (supported: float, double, int8-64, uint8-64, bool)");
}

namespace {

template <typename Dst, typename Field>
void CopyTyped(const Field& field, const runtime::NDArray& out, const std::string& where) {
  TESSERA_CHECK(static_cast<int64_t>(field.size()) == out.NumElements(), where, ": tensor holds ", field.size(),
                " values but its shape ", runtime::ShapeToString(out.shape()), " needs ", out.NumElements());
  Dst* dst = static_cast<Dst*>(out.raw_data());
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<Dst>(field.Get(i));
}

}  // namespace

runtime::NDArray TensorProtoToNDArray(const onnx::TensorProto& t, const std::string& where) {
  TESSERA_CHECK(!t.has_segment(), where, ": segmented tensors are not supported");
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    TESSERA_THROW(UnsupportedError, where,
                  ": tensor data stored in an external file is not supported; save the model with "
                  "onnx.save(model, path, save_as_external_data=False)");
  }
  DataType dtype = DataTypeFromONNX(t.data_type(), where);
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape) TESSERA_CHECK(d >= 0, where, ": negative tensor dimension ", d);
  runtime::NDArray out = runtime::NDArray::Empty(shape, dtype);
  if (t.has_raw_data()) {
    TESSERA_CHECK(t.raw_data().size() == out.NBytes(), where, ": raw_data has ", t.raw_data().size(),
                  " bytes but shape ", runtime::ShapeToString(shape), " of ", dtype.str(), " needs ", out.NBytes());
    if (out.NBytes()) std::memcpy(out.raw_data(), t.raw_data().data(), out.NBytes());
    return out;
  }
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: CopyTyped<float>(t.float_data(), out, where); break;
    case onnx::TensorProto::DOUBLE: CopyTyped<double>(t.double_data(), out, where); break;
    case onnx::TensorProto::INT64: CopyTyped<int64_t>(t.int64_data(), out, where); break;
    case onnx::TensorProto::INT32: CopyTyped<int32_t>(t.int32_data(), out, where); break;
    case onnx::TensorProto::INT16: CopyTyped<int16_t>(t.int32_data(), out, where); break;
    case onnx::TensorProto::INT8: CopyTyped<int8_t>(t.int32_data(), out, where); break;
    case onnx::TensorProto::UINT16: CopyTyped<uint16_t>(t.int32_data(), out, where); break;
    case onnx::TensorProto::UINT8: CopyTyped<uint8_t>(t.int32_data(), out, where); break;
    case onnx::TensorProto::BOOL: CopyTyped<bool>(t.int32_data(), out, where); break;
    case onnx::TensorProto::UINT32: CopyTyped<uint32_t>(t.uint64_data(), out, where); break;
    case onnx::TensorProto::UINT64: CopyTyped<uint64_t>(t.uint64_data(), out, where); break;
    default: TESSERA_ICHECK(false, "unhandled dtype");
  }
  return out;
}

NamedTensor ParseTensorProto(const std::string& bytes, const std::string& source) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) {
    TESSERA_THROW(UserError, source,
                  ": not a valid serialized onnx.TensorProto (truncated or corrupt); expected a .pb file "
                  "as in the ONNX test data sets");
  }
  return NamedTensor{t.name(), TensorProtoToNDArray(t, source)};
}

NamedTensor ReadTensorProtoFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) TESSERA_THROW(UserError, path, ": cannot open the tensor file; check that the path exists and is readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseTensorProto(ss.str(), path);
}

}  // namespace tessera::frontend
