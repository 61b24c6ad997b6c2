// Little-endian field encoding for the RPC protocol (rpc/protocol.h): a writer that appends
// fields to a payload and a bounds-checked reader that takes them back out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tessera::runtime::rpc {

class WireWriter {
 public:
  void U32(uint32_t v);
  void U64(uint64_t v);
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v);
  /// u32 length + bytes.
  void String(std::string_view s);
  /// Raw bytes, no length.
  void Bytes(const void* data, size_t n) { out_.append(static_cast<const char*>(data), n); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

/// Reads fields from a payload. Every read that runs past the end, and every bound broken,
/// throws ProtocolError "malformed <message>: <field> ...".
class WireReader {
 public:
  WireReader(std::string_view data, const char* message) : data_(data), message_(message) {}
  uint32_t U32(const char* field);
  uint64_t U64(const char* field);
  int64_t I64(const char* field) { return static_cast<int64_t>(U64(field)); }
  double F64(const char* field);
  /// A string of at most max_bytes; with `text`, control characters (< 0x20, 0x7f) are refused.
  std::string String(const char* field, size_t max_bytes, bool text = true);
  /// The next n bytes (a view into the payload).
  std::string_view Bytes(const char* field, uint64_t n);
  size_t remaining() const { return data_.size() - pos_; }
  /// ProtocolError when bytes are left over.
  void ExpectEnd();
  /// Throws ProtocolError "malformed <message>: <what>".
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  void Need(const char* field, uint64_t n);
  std::string_view data_;
  size_t pos_ = 0;
  const char* message_;
};

}  // namespace tessera::runtime::rpc
