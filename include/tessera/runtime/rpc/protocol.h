// The Tessera RPC protocol, version 1: run a compiled model on another machine (TVM paper §6).
//
// A host uploads a model library and inputs to a device's server (`tessera-runtime rpc server`,
// rpc/server.h), which loads the library with the normal loader (Module::LoadFromFile: its
// artifact checks apply), runs it and sends the outputs and the median latency back
// (rpc/client.h; `tessera run --rpc HOST:PORT`). Transport: one TCP connection per session; the
// client speaks first and each request gets exactly one reply.
//
// Frame. Every message, in both directions, is a 16-byte header and a payload:
//   offset 0   4 bytes  magic "TSRP" (0x54 0x53 0x52 0x50)
//   offset 4   u32      message type (MessageType)
//   offset 8   u64      payload length in bytes (bounded per type: MaxPayload)
//   offset 16           payload
// Integers are little-endian, f64 is IEEE-754 binary64 little-endian; a `string` is a u32 byte
// count and the bytes (no NUL; bounded per field). The frame header and the first field of
// Hello / HelloReply (the version) stay the same in every protocol version, so two versions
// always recognise each other.
//
// Messages (C: client, S: server), payload fields in order:
//   1 Hello         C->S  u32 version (kProtocolVersion); string peer (who is calling, e.g.
//                         "tessera 0.1.0 x86_64"; <= 256 bytes). The first message of a session.
//   2 HelloReply    S->C  u32 version; string peer ("tessera-runtime 0.1.0 aarch64", <= 256);
//                         string arch (runtime::HostArch(), <= 64); u64 max_module_bytes;
//                         u64 max_run_bytes (the server's Limits, so a client can refuse early).
//   3 UploadModule  C->S  string file_name (the client's name for it, for messages; <= 255
//                         bytes); u64 size; size bytes: the model shared library.
//                         Reply: ModuleLoaded, or Error (the loader's message, e.g. another
//                         architecture or version) and the connection stays open.
//   4 ModuleLoaded  S->C  u32 number of inputs; u32 number of outputs (of the loaded graph).
//   5 Run           C->S  u32 threads (0: the server's default); u32 bench (timed runs, 0: none);
//                         u32 n (<= kMaxTensors); n x tensor: the inputs.
//                         Reply: RunResult, or Error (bad input names / shapes / dtypes, no module
//                         uploaded yet, a kernel failure); the connection stays open.
//   6 RunResult     S->C  f64 median_ms (< 0: not measured); u32 n; n x tensor: the outputs, in
//                         graph order.
//   7 Error         S->C  string message (<= kMaxErrorBytes): what failed on the server.
//   8 Goodbye       C->S  empty: the client ends the session (closing the socket does too).
// tensor = string name (<= kMaxNameBytes); string dtype (DataType::str() of a scalar type, e.g.
//          "float32", "int64", "bool"; <= 32); u32 ndim (<= kMaxRank); ndim x i64 extents
//          (>= 0); u64 nbytes (== product of extents x element bytes); nbytes bytes, row-major.
//
// Validation: every field is checked (lengths within the payload and their bounds, no control
// characters in names, known dtypes, extents matching nbytes, no bytes left over). A peer that
// breaks the protocol — bad magic, another version, an unknown or misdirected type, a payload
// over its bound, a malformed or truncated message — gets an Error (when the socket still
// takes it) and the connection is closed; a server logs it and serves the next connection.
// Every violation is a ProtocolError.
//
// Security: the server runs the code it is sent. Serve on loopback or a trusted network only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/run_model.h"
#include "tessera/support/error.h"

namespace tessera::runtime::rpc {

/// The peer broke the protocol (see the header comment); the connection must be closed.
class ProtocolError : public UserError {
 public:
  using UserError::UserError;
};

inline constexpr char kMagic[4] = {'T', 'S', 'R', 'P'};
inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kHeaderBytes = 16;

inline constexpr size_t kMaxPeerBytes = 256;       ///< Hello / HelloReply peer string
inline constexpr size_t kMaxArchBytes = 64;        ///< HelloReply arch
inline constexpr size_t kMaxFileNameBytes = 255;   ///< UploadModule file_name
inline constexpr size_t kMaxNameBytes = 4096;      ///< a tensor's name
inline constexpr size_t kMaxDTypeBytes = 32;       ///< a tensor's dtype string
inline constexpr uint32_t kMaxRank = 32;           ///< a tensor's ndim
inline constexpr uint32_t kMaxTensors = 4096;      ///< tensors in one Run / RunResult
inline constexpr size_t kMaxErrorBytes = 60000;    ///< Error message (longer ones are cut)
inline constexpr uint64_t kMaxControlPayload = 64 * 1024;  ///< Hello, HelloReply, ModuleLoaded, Error, Goodbye

enum class MessageType : uint32_t {
  kHello = 1,
  kHelloReply = 2,
  kUploadModule = 3,
  kModuleLoaded = 4,
  kRun = 5,
  kRunResult = 6,
  kError = 7,
  kGoodbye = 8,
};

/// "Hello", "RunResult", ...; "type N" for a number that is none.
std::string MessageTypeName(uint32_t type);
/// True for the types a client sends (Hello, UploadModule, Run, Goodbye).
bool SentByClient(MessageType type);

/// The size bounds a side enforces on what it receives (the server's are configurable:
/// tessera-runtime rpc server --max-module-mb / --max-run-mb).
struct Limits {
  uint64_t max_module_bytes = uint64_t{1} << 30;  ///< an uploaded library (UploadModule's size)
  uint64_t max_run_bytes = uint64_t{1} << 30;     ///< a Run / RunResult payload (all its tensors)
};

/// The largest payload a message of `type` may have under `limits`.
uint64_t MaxPayload(MessageType type, const Limits& limits);

struct FrameHeader {
  MessageType type;
  uint64_t payload_bytes;
};

/// The 16 header bytes of a frame.
std::string EncodeHeader(MessageType type, uint64_t payload_bytes);
/// Checks and decodes a frame header (`bytes` must be kHeaderBytes long) received by a
/// server (`at_server` true: only client types accepted) or a client (only server types).
/// ProtocolError for a bad magic, an unknown or misdirected type, or a payload over
/// MaxPayload(type, limits) — naming the limit and, for the server's, its option.
FrameHeader DecodeHeader(std::string_view bytes, bool at_server, const Limits& limits);

// --- Payloads. Encode* returns the payload bytes; Decode* checks every field and throws
// ProtocolError naming the message and the field. ---

struct Hello {
  uint32_t version = kProtocolVersion;
  std::string peer;
};
struct HelloReply {
  uint32_t version = kProtocolVersion;
  std::string peer;
  std::string arch;
  Limits limits;
};
struct UploadModule {
  std::string file_name;
  std::string bytes;
};
struct ModuleLoaded {
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 0;
};
struct RunRequest {
  uint32_t threads = 0;
  uint32_t bench = 0;
  std::vector<NamedTensor> inputs;
};
struct RunReply {
  double median_ms = -1;
  std::vector<NamedTensor> outputs;
};
struct ErrorReply {
  std::string message;
};

std::string Encode(const Hello& m);
std::string Encode(const HelloReply& m);
std::string Encode(const UploadModule& m);
std::string Encode(const ModuleLoaded& m);
std::string Encode(const RunRequest& m);
std::string Encode(const RunReply& m);
/// Cuts the message to kMaxErrorBytes.
std::string Encode(const ErrorReply& m);

/// Hello's version only (the first field in every protocol version), so a server can answer a
/// client of another version with a clear Error before decoding the rest.
uint32_t PeekVersion(std::string_view payload, const char* message);
Hello DecodeHello(std::string_view payload);
HelloReply DecodeHelloReply(std::string_view payload);
UploadModule DecodeUploadModule(std::string_view payload);
ModuleLoaded DecodeModuleLoaded(std::string_view payload);
RunRequest DecodeRunRequest(std::string_view payload);
RunReply DecodeRunReply(std::string_view payload);
ErrorReply DecodeErrorReply(std::string_view payload);

}  // namespace tessera::runtime::rpc
