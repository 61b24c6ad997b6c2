// The RPC message formats (rpc/protocol.h).
#include "tessera/runtime/rpc/protocol.h"

#include <cstring>

#include "wire.h"

namespace tessera::runtime::rpc {
namespace {

std::string MiB(uint64_t bytes) {
  return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

void EncodeTensor(WireWriter& w, const NamedTensor& t) {
  TESSERA_CHECK(t.value.defined(), "RPC: tensor '", t.name, "' is undefined");
  w.String(t.name);
  w.String(t.value.dtype().str());
  w.U32(static_cast<uint32_t>(t.value.ndim()));
  for (int64_t d : t.value.shape()) w.I64(d);
  w.U64(t.value.NBytes());
  w.Bytes(t.value.raw_data(), t.value.NBytes());
}

NamedTensor DecodeTensor(WireReader& r) {
  NamedTensor t;
  t.name = r.String("a tensor's name", kMaxNameBytes);
  const std::string what = "tensor '" + t.name + "'";
  const std::string dtype_str = r.String("a tensor's dtype", kMaxDTypeBytes);
  DataType dtype;
  try {
    dtype = DataType::Parse(dtype_str);
  } catch (const UserError&) {
    r.Fail(what + " has an unknown dtype '" + dtype_str + "'");
  }
  if (dtype.lanes() != 1 || dtype.is_void() || dtype.is_handle()) {
    r.Fail(what + " has dtype '" + dtype_str + "', which is not a scalar element type");
  }
  const uint32_t ndim = r.U32("a tensor's ndim");
  if (ndim > kMaxRank) r.Fail(what + " has " + std::to_string(ndim) + " dimensions; at most " +
                              std::to_string(kMaxRank) + " are allowed");
  std::vector<int64_t> shape(ndim);
  uint64_t bytes = static_cast<uint64_t>(dtype.bytes());
  bool overflow = false;
  for (uint32_t i = 0; i < ndim; ++i) {
    shape[i] = r.I64("a tensor's extent");
    if (shape[i] < 0) r.Fail(what + " has a negative extent " + std::to_string(shape[i]));
    overflow = overflow || __builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[i]), &bytes);
  }
  const uint64_t nbytes = r.U64("a tensor's byte count");
  if (overflow || nbytes != bytes) {
    r.Fail(what + " of shape " + ShapeToString(shape) + " " + dtype.str() + " has a byte count of " +
           std::to_string(nbytes) + ", which does not match its shape");
  }
  std::string_view data = r.Bytes("a tensor's data", nbytes);
  t.value = NDArray::Empty(shape, dtype);
  if (nbytes > 0) std::memcpy(t.value.raw_data(), data.data(), nbytes);
  return t;
}

void EncodeTensors(WireWriter& w, const std::vector<NamedTensor>& ts) {
  TESSERA_CHECK(ts.size() <= kMaxTensors, "RPC: ", ts.size(), " tensors in one message; at most ", kMaxTensors);
  w.U32(static_cast<uint32_t>(ts.size()));
  for (const NamedTensor& t : ts) EncodeTensor(w, t);
}

std::vector<NamedTensor> DecodeTensors(WireReader& r) {
  const uint32_t n = r.U32("the tensor count");
  if (n > kMaxTensors) r.Fail(std::to_string(n) + " tensors; at most " + std::to_string(kMaxTensors) + " are allowed");
  std::vector<NamedTensor> ts;
  ts.reserve(n);
  for (uint32_t i = 0; i < n; ++i) ts.push_back(DecodeTensor(r));
  return ts;
}

}  // namespace

std::string MessageTypeName(uint32_t type) {
  switch (static_cast<MessageType>(type)) {
    case MessageType::kHello: return "Hello";
    case MessageType::kHelloReply: return "HelloReply";
    case MessageType::kUploadModule: return "UploadModule";
    case MessageType::kModuleLoaded: return "ModuleLoaded";
    case MessageType::kRun: return "Run";
    case MessageType::kRunResult: return "RunResult";
    case MessageType::kError: return "Error";
    case MessageType::kGoodbye: return "Goodbye";
  }
  return "type " + std::to_string(type);
}

bool SentByClient(MessageType type) {
  return type == MessageType::kHello || type == MessageType::kUploadModule || type == MessageType::kRun ||
         type == MessageType::kGoodbye;
}

uint64_t MaxPayload(MessageType type, const Limits& limits) {
  switch (type) {
    case MessageType::kUploadModule: return limits.max_module_bytes + 4 + kMaxFileNameBytes + 8;
    case MessageType::kRun:
    case MessageType::kRunResult: return limits.max_run_bytes;
    case MessageType::kGoodbye: return 0;
    default: return kMaxControlPayload;
  }
}

std::string EncodeHeader(MessageType type, uint64_t payload_bytes) {
  WireWriter w;
  w.Bytes(kMagic, sizeof kMagic);
  w.U32(static_cast<uint32_t>(type));
  w.U64(payload_bytes);
  return w.Take();
}

FrameHeader DecodeHeader(std::string_view bytes, bool at_server, const Limits& limits) {
  TESSERA_ICHECK(bytes.size() == kHeaderBytes);
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    std::string got;
    for (int i = 0; i < 4; ++i) {
      auto c = static_cast<unsigned char>(bytes[i]);
      got += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) +
                                                                                 std::string(1, "0123456789abcdef"[c & 15]);
    }
    TESSERA_THROW(ProtocolError, "bad magic '", got, "' (expected 'TSRP'): the peer does not speak the Tessera RPC "
                  "protocol (connect with `tessera run --rpc HOST:PORT` to a `tessera-runtime rpc server`)");
  }
  WireReader r(bytes.substr(4), "frame header");
  const uint32_t raw_type = r.U32("the message type");
  const uint64_t size = r.U64("the payload length");
  if (raw_type < 1 || raw_type > static_cast<uint32_t>(MessageType::kGoodbye)) {
    TESSERA_THROW(ProtocolError, "unknown message type ", raw_type, " (protocol version ", kProtocolVersion,
                  " knows types 1 to 8)");
  }
  const auto type = static_cast<MessageType>(raw_type);
  if (SentByClient(type) != at_server) {
    TESSERA_THROW(ProtocolError, "a ", at_server ? "server" : "client", " does not accept ", MessageTypeName(raw_type),
                  " messages: only a ", at_server ? "server" : "client", " sends them");
  }
  const uint64_t max = MaxPayload(type, limits);
  if (size > max) {
    std::string hint;
    if (at_server && type == MessageType::kUploadModule) hint = " (raise it with the server's --max-module-mb)";
    if (at_server && type == MessageType::kRun) hint = " (raise it with the server's --max-run-mb)";
    TESSERA_THROW(ProtocolError, "a ", MessageTypeName(raw_type), " message of ", size,
                  " bytes is over the limit of ", max, " bytes", max >= (1 << 20) ? " (" + MiB(max) + ")" : "", hint);
  }
  return {type, size};
}

std::string Encode(const Hello& m) {
  WireWriter w;
  w.U32(m.version);
  w.String(m.peer.substr(0, kMaxPeerBytes));
  return w.Take();
}

std::string Encode(const HelloReply& m) {
  WireWriter w;
  w.U32(m.version);
  w.String(m.peer.substr(0, kMaxPeerBytes));
  w.String(m.arch.substr(0, kMaxArchBytes));
  w.U64(m.limits.max_module_bytes);
  w.U64(m.limits.max_run_bytes);
  return w.Take();
}

std::string Encode(const UploadModule& m) {
  WireWriter w;
  w.String(m.file_name.substr(0, kMaxFileNameBytes));
  w.U64(m.bytes.size());
  w.Bytes(m.bytes.data(), m.bytes.size());
  return w.Take();
}

std::string Encode(const ModuleLoaded& m) {
  WireWriter w;
  w.U32(m.num_inputs);
  w.U32(m.num_outputs);
  return w.Take();
}

std::string Encode(const RunRequest& m) {
  WireWriter w;
  w.U32(m.threads);
  w.U32(m.bench);
  EncodeTensors(w, m.inputs);
  return w.Take();
}

std::string Encode(const RunReply& m) {
  WireWriter w;
  w.F64(m.median_ms);
  EncodeTensors(w, m.outputs);
  return w.Take();
}

std::string Encode(const ErrorReply& m) {
  WireWriter w;
  w.String(m.message.size() > kMaxErrorBytes ? m.message.substr(0, kMaxErrorBytes - 3) + "..." : m.message);
  return w.Take();
}

uint32_t PeekVersion(std::string_view payload, const char* message) {
  WireReader r(payload, message);
  return r.U32("the protocol version");
}

Hello DecodeHello(std::string_view payload) {
  WireReader r(payload, "Hello");
  Hello m;
  m.version = r.U32("the protocol version");
  m.peer = r.String("the peer name", kMaxPeerBytes);
  r.ExpectEnd();
  return m;
}

HelloReply DecodeHelloReply(std::string_view payload) {
  WireReader r(payload, "HelloReply");
  HelloReply m;
  m.version = r.U32("the protocol version");
  m.peer = r.String("the peer name", kMaxPeerBytes);
  m.arch = r.String("the architecture", kMaxArchBytes);
  m.limits.max_module_bytes = r.U64("the module size limit");
  m.limits.max_run_bytes = r.U64("the run size limit");
  r.ExpectEnd();
  return m;
}

UploadModule DecodeUploadModule(std::string_view payload) {
  WireReader r(payload, "UploadModule");
  UploadModule m;
  m.file_name = r.String("the file name", kMaxFileNameBytes);
  const uint64_t size = r.U64("the module size");
  if (size != r.remaining()) {
    r.Fail("the module size field says " + std::to_string(size) + " bytes but " + std::to_string(r.remaining()) +
           " follow");
  }
  if (size == 0) r.Fail("the module is empty");
  m.bytes = std::string(r.Bytes("the module", size));
  return m;
}

ModuleLoaded DecodeModuleLoaded(std::string_view payload) {
  WireReader r(payload, "ModuleLoaded");
  ModuleLoaded m;
  m.num_inputs = r.U32("the input count");
  m.num_outputs = r.U32("the output count");
  r.ExpectEnd();
  return m;
}

RunRequest DecodeRunRequest(std::string_view payload) {
  WireReader r(payload, "Run");
  RunRequest m;
  m.threads = r.U32("the thread count");
  m.bench = r.U32("the bench count");
  if (m.threads > 4096) r.Fail("the thread count " + std::to_string(m.threads) + " is over 4096");
  if (m.bench > 1000000) r.Fail("the bench count " + std::to_string(m.bench) + " is over 1000000");
  m.inputs = DecodeTensors(r);
  r.ExpectEnd();
  return m;
}

RunReply DecodeRunReply(std::string_view payload) {
  WireReader r(payload, "RunResult");
  RunReply m;
  m.median_ms = r.F64("the median latency");
  if (m.median_ms != m.median_ms) r.Fail("the median latency is NaN");
  m.outputs = DecodeTensors(r);
  r.ExpectEnd();
  return m;
}

ErrorReply DecodeErrorReply(std::string_view payload) {
  WireReader r(payload, "Error");
  ErrorReply m;
  m.message = r.String("the message", kMaxErrorBytes, /*text=*/false);
  r.ExpectEnd();
  return m;
}

}  // namespace tessera::runtime::rpc
