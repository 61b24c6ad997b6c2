#include "tessera/frontend/tensor_proto.h"

#include <algorithm>
#include <cstring>

#include "onnx/tensor_convert.h"
#include "tessera/support/checked_math.h"
#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

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
    case onnx::TensorProto::FLOAT16: return DataType::Float(16);
    case onnx::TensorProto::BFLOAT16: return DataType::BFloat16();
    case onnx::TensorProto::FLOAT8E4M3FN: return DataType::Float8E4M3FN();
    case onnx::TensorProto::FLOAT8E4M3FNUZ: return DataType::Float8E4M3FNUZ();
    case onnx::TensorProto::FLOAT8E5M2: return DataType::Float8E5M2();
    case onnx::TensorProto::FLOAT8E5M2FNUZ: return DataType::Float8E5M2FNUZ();
    case onnx::TensorProto::FLOAT8E8M0: return DataType::Float8E8M0FNU();
    case onnx::TensorProto::FLOAT4E2M1: return DataType::Float4E2M1FN();
    case onnx::TensorProto::INT4: return DataType::Int(4);
    case onnx::TensorProto::UINT4: return DataType::UInt(4);
    case onnx::TensorProto::INT2: return DataType::Int(2);
    case onnx::TensorProto::UINT2: return DataType::UInt(2);
    default: break;
  }
  std::string name = onnx::TensorProto::DataType_IsValid(elem_type)
                         ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type))
                         : "code " + std::to_string(elem_type);
  TESSERA_THROW(UnsupportedError, where, ": element type ", name,
                " is not supported (supported: float16/32/64, bfloat16, float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz/e8m0, "
                "float4e2m1, int2/4/8/16/32/64, uint2/4/8/16/32/64, bool)");
}

namespace {

template <typename Dst, typename Field>
void CopyTyped(const Field& field, const runtime::NDArray& out, const std::string& where) {
  TESSERA_CHECK(static_cast<int64_t>(field.size()) == out.NumElements(), where, ": tensor holds ", field.size(),
                " values but its shape ", runtime::ShapeToString(out.shape()), " needs ", out.NumElements());
  Dst* dst = static_cast<Dst*>(out.raw_data());
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<Dst>(field.Get(i));
}

/// Elements narrower than a byte (ONNX packs 8 / bits of them per byte, the first in the low
/// bits) unpacked one per byte: signed types sign-extended, the others zero-extended.
void UnpackSubByte(const uint8_t* packed, size_t packed_size, const runtime::NDArray& out, const std::string& where) {
  const int bits = out.dtype().bits();
  const int per_byte = 8 / bits;
  const int64_t n = out.NumElements();
  TESSERA_CHECK(static_cast<int64_t>(packed_size) == (n + per_byte - 1) / per_byte, where, ": ", out.dtype().str(),
                " tensor of shape ", runtime::ShapeToString(out.shape()), " needs ", (n + per_byte - 1) / per_byte,
                " packed bytes, got ", packed_size);
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t v = (packed[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    if (out.dtype().is_int() && (v >> (bits - 1)) & 1) v |= static_cast<uint8_t>(~mask);
    dst[i] = v;
  }
}

// How many elements the tensor's payload can hold: raw_data's bytes over the element size (sub-byte
// elements packed), else the length of the typed field its data type uses.
int64_t PayloadElements(const onnx::TensorProto& t, DataType dtype) {
  if (t.has_raw_data()) {
    const int64_t bytes = static_cast<int64_t>(t.raw_data().size());
    return dtype.bits() < 8 && !dtype.is_bool() ? bytes * (8 / dtype.bits()) : bytes / std::max(1, dtype.bytes());
  }
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: return t.float_data_size();
    case onnx::TensorProto::DOUBLE: return t.double_data_size();
    case onnx::TensorProto::INT64: return t.int64_data_size();
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: return t.uint64_data_size();
    default: break;
  }
  const int64_t words = t.int32_data_size();  // every other type: one element per int32 (sub-byte: packed)
  return dtype.bits() < 8 && !dtype.is_bool() ? words * (8 / dtype.bits()) : words;
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
  int64_t count = 1;
  for (int64_t d : shape) {
    TESSERA_CHECK(d >= 0, where, ": negative tensor dimension ", d);
    count = CheckedMul(count, d, where + ": the element count of shape " + runtime::ShapeToString(shape));
  }
  // The payload must hold the elements before anything is allocated for them: a 40-byte
  // initializer declaring [1, 2^40] is a corrupt model, not a 4 TiB allocation.
  const int64_t available = PayloadElements(t, dtype);
  TESSERA_CHECK(count <= available, where, ": its shape ", runtime::ShapeToString(shape), " needs ", count,
                " elements of ", dtype.str(), " but the tensor holds data for ", available,
                "; the model is truncated or corrupt");
  runtime::NDArray out = runtime::NDArray::Empty(shape, dtype);
  if (dtype.bits() < 8 && !dtype.is_bool()) {
    if (t.has_raw_data()) {
      UnpackSubByte(reinterpret_cast<const uint8_t*>(t.raw_data().data()), t.raw_data().size(), out, where);
    } else {
      std::vector<uint8_t> packed(t.int32_data().begin(), t.int32_data().end());
      UnpackSubByte(packed.data(), packed.size(), out, where);
    }
    return out;
  }
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
    // 16- and 8-bit float formats: int32_data holds their bit patterns.
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: CopyTyped<uint16_t>(t.int32_data(), out, where); break;
    case onnx::TensorProto::FLOAT8E4M3FN:
    case onnx::TensorProto::FLOAT8E4M3FNUZ:
    case onnx::TensorProto::FLOAT8E5M2:
    case onnx::TensorProto::FLOAT8E5M2FNUZ:
    case onnx::TensorProto::FLOAT8E8M0: CopyTyped<uint8_t>(t.int32_data(), out, where); break;
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
  return ParseTensorProto(ReadRegularFile(path, "tensor file (.pb)", kMaxProtobufBytes), path);
}

}  // namespace tessera::frontend
