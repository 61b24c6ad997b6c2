// WireWriter / WireReader (wire.h).
#include "wire.h"

#include <cstring>

#include "tessera/runtime/rpc/protocol.h"

namespace tessera::runtime::rpc {

void WireWriter::U32(uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out_.append(b, 4);
}

void WireWriter::U64(uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out_.append(b, 8);
}

void WireWriter::F64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  U64(bits);
}

void WireWriter::String(std::string_view s) {
  U32(static_cast<uint32_t>(s.size()));
  out_.append(s);
}

void WireReader::Fail(const std::string& what) const {
  TESSERA_THROW(ProtocolError, "malformed ", message_, " message: ", what);
}

void WireReader::Need(const char* field, uint64_t n) {
  if (n > remaining()) {
    Fail(std::string(field) + " needs " + std::to_string(n) + " byte(s) but only " + std::to_string(remaining()) +
         " remain in the payload");
  }
}

uint32_t WireReader::U32(const char* field) {
  Need(field, 4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
  pos_ += 4;
  return v;
}

uint64_t WireReader::U64(const char* field) {
  Need(field, 8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

double WireReader::F64(const char* field) {
  uint64_t bits = U64(field);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::string WireReader::String(const char* field, size_t max_bytes, bool text) {
  const uint32_t n = U32(field);
  if (n > max_bytes) {
    Fail(std::string(field) + " is " + std::to_string(n) + " bytes long; at most " + std::to_string(max_bytes) +
         " are allowed");
  }
  std::string_view s = Bytes(field, n);
  if (text) {
    for (char c : s) {
      auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) Fail(std::string(field) + " contains a control character");
    }
  }
  return std::string(s);
}

std::string_view WireReader::Bytes(const char* field, uint64_t n) {
  Need(field, n);
  std::string_view s = data_.substr(pos_, n);
  pos_ += n;
  return s;
}

void WireReader::ExpectEnd() {
  if (remaining() != 0) Fail(std::to_string(remaining()) + " unexpected byte(s) after the last field");
}

}  // namespace tessera::runtime::rpc
