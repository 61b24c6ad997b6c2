// DataType: the scalar type of a tensor element or of a PrimExpr, as in DLPack.
//
// A DataType is (code, bits, lanes): code is DLPack's type code (int, uint, float,
// bfloat), bits the width of one lane, lanes > 1 for vector types produced by
// vectorize (e.g. float32x16 is one AVX-512 register). Header-only: the IR layers
// use it too, exactly as TVM's IR builds on its runtime DataType.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/support/error.h"

namespace tessera::runtime {

class DataType {
 public:
  /// DLPack type codes (dlpack.h DLDataTypeCode).
  enum Code : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kHandle = 3, kBFloat = 4 };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType Float(int bits, int lanes = 1) { return {kFloat, bits, lanes}; }
  static constexpr DataType Int(int bits, int lanes = 1) { return {kInt, bits, lanes}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {kUInt, bits, lanes}; }
  static constexpr DataType BFloat16(int lanes = 1) { return {kBFloat, 16, lanes}; }
  static constexpr DataType Bool(int lanes = 1) { return {kUInt, 1, lanes}; }
  static constexpr DataType Handle() { return {kHandle, 64, 1}; }
  static constexpr DataType Void() { return {kHandle, 0, 0}; }

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  /// Bytes of one element (all lanes); bool occupies one byte.
  constexpr int bytes() const { return ((bits_ + 7) / 8) * lanes_; }

  constexpr bool is_float() const { return code_ == kFloat; }
  constexpr bool is_bfloat16() const { return code_ == kBFloat && bits_ == 16; }
  constexpr bool is_int() const { return code_ == kInt; }
  constexpr bool is_uint() const { return code_ == kUInt && bits_ != 1; }
  constexpr bool is_bool() const { return code_ == kUInt && bits_ == 1; }
  constexpr bool is_handle() const { return code_ == kHandle && bits_ != 0; }
  constexpr bool is_void() const { return code_ == kHandle && bits_ == 0; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }

  constexpr DataType element_of() const { return {code_, bits_, 1}; }
  constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

  constexpr bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  constexpr bool operator!=(const DataType& o) const { return !(*this == o); }

  /// "float32", "int64", "bool", "float32x16", "handle", "void".
  std::string str() const {
    if (is_void()) return "void";
    if (is_handle()) return "handle";
    std::string s;
    if (is_bool()) {
      s = "bool";
    } else {
      switch (code_) {
        case kInt: s = "int"; break;
        case kUInt: s = "uint"; break;
        case kFloat: s = "float"; break;
        case kBFloat: s = "bfloat"; break;
        default: s = "unknown"; break;
      }
      s += std::to_string(bits_);
    }
    if (lanes_ > 1) s += "x" + std::to_string(lanes_);
    return s;
  }

  /// Parses the form str() prints. Throws UserError on anything else (also on a
  /// malformed width or lane count such as "float", "int3x" or "float32x0").
  static DataType Parse(const std::string& s) {
    auto fail = [&]() -> DataType {
      TESSERA_THROW(UserError, "unknown data type '", s,
                    "': expected e.g. float32, int64, bool, float32x16");
    };
    // Parses a positive decimal number of at most 5 digits; -1 when malformed.
    auto parse_num = [](const std::string& t) -> int {
      if (t.empty() || t.size() > 5) return -1;
      int v = 0;
      for (char c : t) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
      }
      return v;
    };
    std::string base = s;
    int lanes = 1;
    if (auto x = s.find('x'); x != std::string::npos && x > 0) {
      base = s.substr(0, x);
      lanes = parse_num(s.substr(x + 1));
      if (lanes < 1 || lanes > 65535) return fail();
    }
    if (base == "bool") return Bool(lanes);
    if (lanes == 1 && base == "handle") return Handle();
    if (lanes == 1 && base == "void") return Void();
    auto parse_bits = [&](const std::string& prefix, Code code) -> DataType {
      int bits = parse_num(base.substr(prefix.size()));
      if (bits < 1 || bits > 255) return fail();
      return DataType(code, bits, lanes);
    };
    if (base.rfind("bfloat", 0) == 0) return parse_bits("bfloat", kBFloat);
    if (base.rfind("float", 0) == 0) return parse_bits("float", kFloat);
    if (base.rfind("uint", 0) == 0) return parse_bits("uint", kUInt);
    if (base.rfind("int", 0) == 0) return parse_bits("int", kInt);
    return fail();
  }

 private:
  Code code_ = kFloat;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

}  // namespace tessera::runtime

namespace tessera {
using runtime::DataType;
}  // namespace tessera
