#include <gtest/gtest.h>

#include <filesystem>

#include "onnx.pb.h"
#include "tessera/frontend/tensor_proto.h"
#include "tessera/support/error.h"

namespace tessera::frontend {
namespace {

TEST(TensorProto, TypedFieldsAndRawData) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::INT32);
  t.add_dims(2);
  t.add_dims(2);
  for (int v : {1, -2, 3, 4}) t.add_int32_data(v);
  NamedTensor n = ParseTensorProto(t.SerializeAsString());
  EXPECT_EQ(n.name, "w");
  EXPECT_EQ(n.value.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(n.value.dtype(), DataType::Int(32));
  EXPECT_EQ(n.value.data<int32_t>()[1], -2);

  onnx::TensorProto r;
  r.set_data_type(onnx::TensorProto::FLOAT);
  r.add_dims(3);
  float vals[3] = {0.5f, 1.5f, -2.f};
  r.set_raw_data(std::string(reinterpret_cast<char*>(vals), sizeof(vals)));
  NamedTensor f = ParseTensorProto(r.SerializeAsString());
  EXPECT_EQ(f.value.data<float>()[2], -2.f);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(2);
  b.add_int32_data(1);
  b.add_int32_data(0);
  NamedTensor bn = ParseTensorProto(b.SerializeAsString());
  EXPECT_TRUE(bn.value.data<bool>()[0]);
  EXPECT_FALSE(bn.value.data<bool>()[1]);
}

TEST(TensorProto, Errors) {
  onnx::TensorProto bad;
  bad.set_data_type(onnx::TensorProto::FLOAT);
  bad.add_dims(4);
  bad.add_float_data(1.f);
  EXPECT_THROW(ParseTensorProto(bad.SerializeAsString(), "bad.pb"), UserError);
  onnx::TensorProto half;  // float16 needs one bit pattern in int32_data per element
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(1);
  EXPECT_THROW(ParseTensorProto(half.SerializeAsString()), UserError);
  onnx::TensorProto int4;  // 3 int4 elements need 2 packed bytes
  int4.set_data_type(onnx::TensorProto::INT4);
  int4.add_dims(3);
  int4.set_raw_data(std::string(1, '\x21'));
  EXPECT_THROW(ParseTensorProto(int4.SerializeAsString()), UserError);
  onnx::TensorProto text;
  text.set_data_type(onnx::TensorProto::STRING);
  text.add_dims(1);
  text.add_string_data("a");
  EXPECT_THROW(ParseTensorProto(text.SerializeAsString()), UnsupportedError);
}

TEST(TensorProto, ReadsStorageTypes) {
  onnx::TensorProto int4;  // [1, -2, 7]: nibbles 0x1, 0xE in byte 0 (low first), 0x7 in byte 1
  int4.set_data_type(onnx::TensorProto::INT4);
  int4.add_dims(3);
  int4.set_raw_data(std::string("\xE1\x07", 2));
  runtime::NDArray a = ParseTensorProto(int4.SerializeAsString()).value;
  ASSERT_EQ(a.dtype(), DataType::Int(4));
  const auto* p = static_cast<const int8_t*>(a.raw_data());
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[1], -2);
  EXPECT_EQ(p[2], 7);
  onnx::TensorProto half;
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(2);
  half.add_int32_data(0x3C00);  // 1.0
  half.add_int32_data(0xC000);  // -2.0
  runtime::NDArray h = ParseTensorProto(half.SerializeAsString()).value;
  ASSERT_EQ(h.dtype(), DataType::Float(16));
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw_data())[1], 0xC000);
  EXPECT_THROW(ReadTensorProtoFile("/nonexistent/input_0.pb"), UserError);
}

TEST(TensorProto, ReadsModelZooTestData) {
  std::string p = std::string(TESSERA_SHARED_DIR) + "/models/mnist-8/test_data_set_0/input_0.pb";
  if (!std::filesystem::exists(p)) GTEST_SKIP();
  NamedTensor in = ReadTensorProtoFile(p);
  EXPECT_EQ(in.value.shape(), (std::vector<int64_t>{1, 1, 28, 28}));
  EXPECT_EQ(in.value.dtype(), DataType::Float(32));
  NamedTensor out = ReadTensorProtoFile(std::string(TESSERA_SHARED_DIR) + "/models/mnist-8/test_data_set_0/output_0.pb");
  EXPECT_EQ(out.value.shape(), (std::vector<int64_t>{1, 10}));
}

}  // namespace
}  // namespace tessera::frontend
