// The RPC protocol's message encoding and decoding (rpc/protocol.h): round trips of every
// message, and every way a frame or payload can be malformed, oversized or truncated.
#include "tessera/runtime/rpc/protocol.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tessera/runtime/rpc/socket.h"
#include "test_util.h"

namespace tessera::runtime::rpc {
namespace {

NDArray Floats(std::vector<int64_t> shape, std::vector<float> values) {
  NDArray a = NDArray::Empty(std::move(shape), DataType::Float(32));
  a.CopyFromBytes(values.data(), values.size() * sizeof(float));
  return a;
}

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }  // x86 / aarch64: LE
std::string U64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
std::string Str(const std::string& s) { return U32(static_cast<uint32_t>(s.size())) + s; }

TEST(RpcProtocol, HeaderLayoutIsTheDocumentedOne) {
  std::string h = EncodeHeader(MessageType::kRun, 0x0102030405060708ull);
  ASSERT_EQ(h.size(), kHeaderBytes);
  EXPECT_EQ(h.substr(0, 4), "TSRP");
  EXPECT_EQ(h.substr(4, 4), U32(5));
  EXPECT_EQ(h.substr(8, 8), U64(0x0102030405060708ull));
  EXPECT_EQ(Encode(Hello{1, "me"}), U32(1) + Str("me"));
}

TEST(RpcProtocol, DecodeHeaderAcceptsEachSidesTypes) {
  Limits limits;
  FrameHeader h = DecodeHeader(EncodeHeader(MessageType::kUploadModule, 1000), /*at_server=*/true, limits);
  EXPECT_EQ(h.type, MessageType::kUploadModule);
  EXPECT_EQ(h.payload_bytes, 1000u);
  h = DecodeHeader(EncodeHeader(MessageType::kRunResult, 12), /*at_server=*/false, limits);
  EXPECT_EQ(h.type, MessageType::kRunResult);
}

TEST(RpcProtocol, DecodeHeaderRefusesBadFrames) {
  Limits limits;
  limits.max_module_bytes = 1000;
  limits.max_run_bytes = 2000;
  std::string bad_magic = EncodeHeader(MessageType::kHello, 4);
  bad_magic[0] = 'G';
  bad_magic[3] = '\x01';
  EXPECT_THROW_WITH(DecodeHeader(bad_magic, true, limits), ProtocolError, "bad magic 'GSR\\x01'", "TSRP");
  std::string unknown = EncodeHeader(MessageType::kHello, 0);
  unknown.replace(4, 4, U32(77));
  EXPECT_THROW_WITH(DecodeHeader(unknown, true, limits), ProtocolError, "unknown message type 77");
  unknown.replace(4, 4, U32(0));
  EXPECT_THROW_WITH(DecodeHeader(unknown, true, limits), ProtocolError, "unknown message type 0");
  EXPECT_THROW_WITH(DecodeHeader(EncodeHeader(MessageType::kRunResult, 0), true, limits), ProtocolError,
                    "server does not accept RunResult");
  EXPECT_THROW_WITH(DecodeHeader(EncodeHeader(MessageType::kRun, 0), false, limits), ProtocolError,
                    "client does not accept Run");
  // Sizes: each type's bound.
  EXPECT_NO_THROW(DecodeHeader(EncodeHeader(MessageType::kRun, 2000), true, limits));
  EXPECT_THROW_WITH(DecodeHeader(EncodeHeader(MessageType::kRun, 2001), true, limits), ProtocolError,
                    "Run message of 2001 bytes is over the limit of 2000", "--max-run-mb");
  EXPECT_THROW_WITH(DecodeHeader(EncodeHeader(MessageType::kUploadModule, uint64_t{1} << 62), true, limits),
                    ProtocolError, "over the limit", "--max-module-mb");
  EXPECT_THROW_WITH(DecodeHeader(EncodeHeader(MessageType::kHello, kMaxControlPayload + 1), true, limits),
                    ProtocolError, "Hello message", "over the limit");
  EXPECT_THROW_WITH(DecodeHeader(EncodeHeader(MessageType::kGoodbye, 1), true, limits), ProtocolError,
                    "over the limit of 0");
  EXPECT_EQ(MaxPayload(MessageType::kError, limits), kMaxControlPayload);
}

TEST(RpcProtocol, RoundTripsEveryMessage) {
  Hello hello = DecodeHello(Encode(Hello{1, "tessera 0.1.0 x86_64"}));
  EXPECT_EQ(hello.version, 1u);
  EXPECT_EQ(hello.peer, "tessera 0.1.0 x86_64");

  HelloReply hr;
  hr.peer = "tessera-runtime 0.1.0 aarch64";
  hr.arch = "aarch64";
  hr.limits = {123, 456};
  HelloReply hr2 = DecodeHelloReply(Encode(hr));
  EXPECT_EQ(hr2.peer, hr.peer);
  EXPECT_EQ(hr2.arch, "aarch64");
  EXPECT_EQ(hr2.limits.max_module_bytes, 123u);
  EXPECT_EQ(hr2.limits.max_run_bytes, 456u);

  std::string lib("\x7f" "ELF\0\1\2", 7);
  UploadModule up = DecodeUploadModule(Encode(UploadModule{"model.so", lib}));
  EXPECT_EQ(up.file_name, "model.so");
  EXPECT_EQ(up.bytes, lib);

  ModuleLoaded ml = DecodeModuleLoaded(Encode(ModuleLoaded{2, 3}));
  EXPECT_EQ(ml.num_inputs, 2u);
  EXPECT_EQ(ml.num_outputs, 3u);

  RunRequest run;
  run.threads = 4;
  run.bench = 10;
  NDArray ids = NDArray::Empty({3}, DataType::Int(64));
  for (int i = 0; i < 3; ++i) ids.data<int64_t>()[i] = -i;
  run.inputs = {{"x", Floats({2, 2}, {1, -2, 3.5f, 4})}, {"ids", ids}, {"empty", NDArray::Empty({0, 5}, DataType::Bool())},
                {"scalar", Floats({}, {7})}};
  RunRequest run2 = DecodeRunRequest(Encode(run));
  EXPECT_EQ(run2.threads, 4u);
  EXPECT_EQ(run2.bench, 10u);
  ASSERT_EQ(run2.inputs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(run2.inputs[i].name, run.inputs[i].name);
    EXPECT_EQ(run2.inputs[i].value.dtype(), run.inputs[i].value.dtype());
    EXPECT_EQ(run2.inputs[i].value.shape(), run.inputs[i].value.shape());
    ASSERT_EQ(run2.inputs[i].value.NBytes(), run.inputs[i].value.NBytes());
    EXPECT_EQ(std::memcmp(run2.inputs[i].value.raw_data(), run.inputs[i].value.raw_data(), run.inputs[i].value.NBytes()), 0);
  }

  RunReply reply = DecodeRunReply(Encode(RunReply{1.25, {{"y", Floats({1}, {9})}}}));
  EXPECT_EQ(reply.median_ms, 1.25);
  ASSERT_EQ(reply.outputs.size(), 1u);
  EXPECT_EQ(reply.outputs[0].value.data<float>()[0], 9.0f);

  EXPECT_EQ(DecodeErrorReply(Encode(ErrorReply{"line 1\nline 2"})).message, "line 1\nline 2");
  EXPECT_EQ(DecodeErrorReply(Encode(ErrorReply{std::string(100000, 'e')})).message.size(), kMaxErrorBytes);
  EXPECT_EQ(PeekVersion(Encode(Hello{7, "future"}), "Hello"), 7u);
}

TEST(RpcProtocol, EveryTruncationOfAPayloadIsAProtocolError) {
  RunRequest run;
  run.inputs = {{"x", Floats({2, 2}, {1, 2, 3, 4})}, {"y", Floats({1}, {5})}};
  const std::string payload = Encode(run);
  for (size_t n = 0; n < payload.size(); ++n) {
    EXPECT_THROW(DecodeRunRequest(payload.substr(0, n)), ProtocolError) << "prefix of " << n << " bytes";
  }
  EXPECT_THROW_WITH(DecodeRunRequest(payload + "x"), ProtocolError, "1 unexpected byte(s)");
  const std::string hr = Encode(HelloReply{});
  for (size_t n = 0; n < hr.size(); ++n) EXPECT_THROW(DecodeHelloReply(hr.substr(0, n)), ProtocolError);
  const std::string reply = Encode(RunReply{2.0, run.inputs});
  for (size_t n = 0; n < reply.size(); ++n) EXPECT_THROW(DecodeRunReply(reply.substr(0, n)), ProtocolError);
}

TEST(RpcProtocol, MalformedFieldsAreProtocolErrors) {
  const std::string head = U32(0) + U32(0) + U32(1);  // threads, bench, one tensor
  auto tensor = [](const std::string& name, const std::string& dtype, std::vector<int64_t> dims, uint64_t nbytes,
                   const std::string& data) {
    std::string t = Str(name) + Str(dtype) + U32(static_cast<uint32_t>(dims.size()));
    for (int64_t d : dims) t += U64(static_cast<uint64_t>(d));
    return t + U64(nbytes) + data;
  };
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "complex64", {1}, 8, std::string(8, '\0'))), ProtocolError,
                    "unknown dtype 'complex64'");
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "float32x4", {1}, 16, std::string(16, '\0'))), ProtocolError,
                    "not a scalar element type");
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "handle", {1}, 8, std::string(8, '\0'))), ProtocolError,
                    "not a scalar element type");
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "float32", {-1}, 0, "")), ProtocolError, "negative extent");
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "float32", {2, 3}, 20, std::string(20, '\0'))), ProtocolError,
                    "byte count of 20", "[2, 3]");
  // Extents whose product overflows 64 bits cannot claim any byte count.
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "float32", {int64_t{1} << 40, int64_t{1} << 40}, 0, "")),
                    ProtocolError, "does not match its shape");
  // A byte count past the payload.
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("x", "float32", {1 << 20}, 4 << 20, "")), ProtocolError,
                    "needs 4194304 byte(s)");
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor("bad\x01name", "float32", {1}, 4, "abcd")), ProtocolError,
                    "control character");
  EXPECT_THROW_WITH(DecodeRunRequest(head + tensor(std::string(kMaxNameBytes + 1, 'n'), "float32", {1}, 4, "abcd")),
                    ProtocolError, "at most 4096");
  std::string rank = Str("x") + Str("float32") + U32(kMaxRank + 1);
  EXPECT_THROW_WITH(DecodeRunRequest(head + rank), ProtocolError, "33 dimensions");
  EXPECT_THROW_WITH(DecodeRunRequest(U32(0) + U32(0) + U32(kMaxTensors + 1)), ProtocolError, "4097 tensors");
  EXPECT_THROW_WITH(DecodeRunRequest(U32(5000) + U32(0) + U32(0)), ProtocolError, "thread count 5000");
  // A string length past the payload, a lying module size, an empty module.
  EXPECT_THROW_WITH(DecodeHello(U32(1) + U32(100) + "abc"), ProtocolError, "malformed Hello", "only 3 remain");
  EXPECT_THROW_WITH(DecodeHello(U32(1) + U32(1000) + "abc"), ProtocolError, "1000 bytes long; at most 256");
  EXPECT_THROW_WITH(DecodeUploadModule(Str("m.so") + U64(10) + "12345"), ProtocolError, "says 10 bytes but 5 follow");
  EXPECT_THROW_WITH(DecodeUploadModule(Str("m.so") + U64(0)), ProtocolError, "the module is empty");
  EXPECT_THROW_WITH(DecodeUploadModule(Str(std::string(300, 'f')) + U64(1) + "x"), ProtocolError, "at most 255");
  EXPECT_THROW_WITH(DecodeRunReply(U64(0x7ff8000000000000ull) + U32(0)), ProtocolError, "NaN");
  EXPECT_THROW(DecodeModuleLoaded(U32(1)), ProtocolError);
}

TEST(RpcProtocol, NamesOfTypes) {
  EXPECT_EQ(MessageTypeName(1), "Hello");
  EXPECT_EQ(MessageTypeName(8), "Goodbye");
  EXPECT_EQ(MessageTypeName(99), "type 99");
  EXPECT_TRUE(SentByClient(MessageType::kUploadModule));
  EXPECT_FALSE(SentByClient(MessageType::kError));
}

TEST(RpcAddress, ParsesHostAndPort) {
  EXPECT_EQ(ParseAddress("127.0.0.1:9190"), (std::pair<std::string, int>{"127.0.0.1", 9190}));
  EXPECT_EQ(ParseAddress("localhost:1"), (std::pair<std::string, int>{"localhost", 1}));
  EXPECT_EQ(ParseAddress("[::1]:65535"), (std::pair<std::string, int>{"::1", 65535}));
  EXPECT_THROW_WITH(ParseAddress("127.0.0.1"), UserError, "expected HOST:PORT");
  EXPECT_THROW_WITH(ParseAddress(":80"), UserError, "the host is empty");
  EXPECT_THROW_WITH(ParseAddress("h:0"), UserError, "from 1 to 65535");
  EXPECT_THROW_WITH(ParseAddress("h:65536"), UserError, "from 1 to 65535");
  EXPECT_THROW_WITH(ParseAddress("h:12x"), UserError, "'12x'");
  EXPECT_THROW_WITH(ParseAddress("[::1]80"), UserError, "[IPv6]:PORT");
}

}  // namespace
}  // namespace tessera::runtime::rpc
