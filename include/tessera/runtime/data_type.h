// DataType: the scalar type of a tensor element or of a PrimExpr, as in DLPack.
//
// A DataType is (code, bits, lanes): code is DLPack's type code (int, uint, float,
// bfloat, and DLPack 1.1's 8- and 4-bit float formats), bits the width of one lane,
// lanes > 1 for vector types produced by vectorize (e.g. float32x16 is one AVX-512
// register). Header-only: the IR layers use it too, exactly as TVM's IR builds on its
// runtime DataType.
//
// Storage-only types. float16, bfloat16, the float8 / float4 formats and the 4- and 2-bit
// integers are stored, loaded and converted, but arithmetic on them is computed in float32
// (int8 / uint8 for the narrow integers) by the graph pass LegalizeLowPrecision. Types
// narrower than a byte are stored one element per byte: a 4-bit integer sign- or
// zero-extended, a float4 code in the low nibble (ONNX packs two per byte on the wire;
// the TensorProto reader unpacks them). Formats: ONNX IR spec "Float8 types" and
// "4 bit types"; OCP Microscaling Formats (MX) v1.0 for e8m0 and e2m1.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/support/error.h"

namespace tessera::runtime {

class DataType {
 public:
  /// DLPack type codes (dlpack.h DLDataTypeCode).
  enum Code : uint8_t {
    kInt = 0,
    kUInt = 1,
    kFloat = 2,
    kHandle = 3,
    kBFloat = 4,
    kFloat8E4M3FN = 10,    ///< 1-4-3, bias 7, no inf, NaN = S.1111.111, max 448
    kFloat8E4M3FNUZ = 11,  ///< 1-4-3, bias 8, no inf, no -0, NaN = 0x80, max 240
    kFloat8E5M2 = 12,      ///< 1-5-2, bias 15, IEEE-like (inf, NaN), max 57344
    kFloat8E5M2FNUZ = 13,  ///< 1-5-2, bias 16, no inf, no -0, NaN = 0x80, max 57344
    kFloat8E8M0FNU = 14,   ///< 0-8-0: a power of two 2^(e - 127), NaN = 0xFF, no sign, no zero
    kFloat4E2M1FN = 17,    ///< 1-2-1, bias 1, no inf, no NaN, max 6
  };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType Float(int bits, int lanes = 1) { return {kFloat, bits, lanes}; }
  static constexpr DataType Int(int bits, int lanes = 1) { return {kInt, bits, lanes}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {kUInt, bits, lanes}; }
  static constexpr DataType BFloat16(int lanes = 1) { return {kBFloat, 16, lanes}; }
  static constexpr DataType Bool(int lanes = 1) { return {kUInt, 1, lanes}; }
  static constexpr DataType Float8E4M3FN(int lanes = 1) { return {kFloat8E4M3FN, 8, lanes}; }
  static constexpr DataType Float8E4M3FNUZ(int lanes = 1) { return {kFloat8E4M3FNUZ, 8, lanes}; }
  static constexpr DataType Float8E5M2(int lanes = 1) { return {kFloat8E5M2, 8, lanes}; }
  static constexpr DataType Float8E5M2FNUZ(int lanes = 1) { return {kFloat8E5M2FNUZ, 8, lanes}; }
  static constexpr DataType Float8E8M0FNU(int lanes = 1) { return {kFloat8E8M0FNU, 8, lanes}; }
  static constexpr DataType Float4E2M1FN(int lanes = 1) { return {kFloat4E2M1FN, 4, lanes}; }
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
  /// One of the float8 / float4 formats (not float16 or bfloat16).
  constexpr bool is_minifloat() const { return code_ >= kFloat8E4M3FN && code_ <= kFloat4E2M1FN; }
  /// Any floating-point format, IEEE or not.
  constexpr bool is_floating() const { return is_float() || is_bfloat16() || is_minifloat(); }
  /// A type that is stored but not computed on (see the file comment): float16, bfloat16,
  /// the minifloats, and integers narrower than 8 bits.
  constexpr bool is_storage_only() const {
    return (is_float() && bits_ == 16) || is_bfloat16() || is_minifloat() ||
           ((code_ == kInt || code_ == kUInt) && bits_ > 1 && bits_ < 8);
  }
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
    } else if (is_minifloat()) {
      s = MinifloatName(code_);
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
    for (Code c : {kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ, kFloat8E8M0FNU, kFloat4E2M1FN}) {
      if (base == MinifloatName(c)) return DataType(c, c == kFloat4E2M1FN ? 4 : 8, lanes);
    }
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
  /// ml_dtypes' names (as numpy shows them), which TVM uses too.
  static constexpr const char* MinifloatName(Code c) {
    switch (c) {
      case kFloat8E4M3FN: return "float8_e4m3fn";
      case kFloat8E4M3FNUZ: return "float8_e4m3fnuz";
      case kFloat8E5M2: return "float8_e5m2";
      case kFloat8E5M2FNUZ: return "float8_e5m2fnuz";
      case kFloat8E8M0FNU: return "float8_e8m0fnu";
      case kFloat4E2M1FN: return "float4_e2m1fn";
      default: return "unknown";
    }
  }

  Code code_ = kFloat;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

}  // namespace tessera::runtime

namespace tessera {
using runtime::DataType;
}  // namespace tessera
