#include "text_format.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace tessera::graph::text {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The shortest text that reads back as exactly `d` (std::to_chars' guarantee).
std::string ShortestDouble(double d) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr);
}

template <typename T>
runtime::NDArray Scalar(T v) {
  runtime::NDArray a = runtime::NDArray::Empty({}, runtime::DataTypeOf<T>());
  *a.data<T>() = v;
  return a;
}

}  // namespace

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string ScalarLiteral(const runtime::NDArray& a) {
  const DataType t = a.dtype();
  if (t == DataType::Float(32)) {
    float f = *a.data<float>();
    return std::isfinite(f) ? ShortestDouble(f) + "f" : "";
  }
  if (t == DataType::Float(64)) {
    double d = *a.data<double>();
    return std::isfinite(d) ? ShortestDouble(d) + "f64" : "";
  }
  if (t == DataType::Int(64)) return std::to_string(*a.data<int64_t>()) + "i64";
  if (t == DataType::Int(32)) return std::to_string(*a.data<int32_t>());
  if (t.is_bool()) {
    uint8_t b = *static_cast<const uint8_t*>(a.raw_data());
    if (b > 1) return "";  // not a canonical bool: keep its byte in the metadata
    return b ? "True" : "False";
  }
  return "";
}

std::optional<runtime::NDArray> ParseScalarLiteral(std::string_view number, std::string_view suffix) {
  if (suffix.empty() && (number == "True" || number == "False")) return Scalar(number == "True");
  const bool integral = number.find_first_of(".eE") == std::string_view::npos;
  if (suffix == "f" || suffix == "f32" || (suffix.empty() && !integral)) {
    auto d = FromChars<double>(number);
    if (!d || std::fabs(*d) > std::numeric_limits<float>::max()) return std::nullopt;
    return Scalar(static_cast<float>(*d));
  }
  if (suffix == "f64") {
    auto d = FromChars<double>(number);
    if (!d) return std::nullopt;
    return Scalar(*d);
  }
  if (!integral) return std::nullopt;
  if (suffix.empty() || suffix == "i32") {
    auto v = FromChars<int32_t>(number);
    if (!v) return std::nullopt;
    return Scalar(*v);
  }
  if (suffix == "i64") {
    auto v = FromChars<int64_t>(number);
    if (!v) return std::nullopt;
    return Scalar(*v);
  }
  return std::nullopt;
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\x";
          out += kHexDigits[u >> 4];
          out += kHexDigits[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string AttrsText(const Attrs& attrs) {
  std::string s;
  for (const auto& [name, value] : attrs.items()) {
    if (!s.empty()) s += ", ";
    const auto* str = std::get_if<std::string>(&value);
    s += name + "=" + (str ? QuoteString(*str) : AttrValueStr(value));
  }
  return s;
}

std::string HexEncode(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHexDigits[p[i] >> 4];
    out[2 * i + 1] = kHexDigits[p[i] & 15];
  }
  return out;
}

bool HexDecode(std::string_view hex, void* out, size_t n) {
  if (hex.size() != 2 * n) return false;
  auto* p = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    p[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string LegalVarName(const std::string& hint) {
  std::string name = hint;
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) c = '_';
  }
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name = "v" + name;
  return name;
}

}  // namespace tessera::graph::text
