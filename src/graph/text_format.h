// The literal encodings of the graph IR's text form, shared by the printer (printer.cc) and the
// parser (parser.cc) so that both sides agree on one definition:
//
//   inline scalar constants   1f (float32), 2.5f64 (float64), 3i64 (int64), 3 (int32), True / False (bool);
//                             every other rank-0 constant, and a non-finite float, goes to metadata
//   strings                   "..." with \" \\ \n \t \r and \xHH for the other control bytes and DEL
//   attrs                     k=v, ... with v as AttrValueStr writes it, strings quoted as above
//   metadata data             the array's raw bytes as lowercase hex, two digits a byte, in memory order
//   variable names            [A-Za-z_][A-Za-z0-9_]*: what a %name may hold (a digit first is a binding)
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/graph/attrs.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::graph::text {

/// The number `s` holds in full (std::from_chars: no leading '+', no spaces), or std::nullopt.
template <typename T>
std::optional<T> FromChars(std::string_view s) {
  T v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

/// The value of a hex digit (either case), or -1.
int HexDigit(char c);

/// The inline literal of a rank-0 constant, or "" when it must go to the metadata section.
std::string ScalarLiteral(const runtime::NDArray& a);

/// The rank-0 constant the literal `number` + `suffix` denotes (suffix "", "f", "f32", "f64",
/// "i32" or "i64"; number without a '.' or exponent for the integer suffixes; "True" / "False"
/// with no suffix for bool), or std::nullopt
/// when the suffix is unknown, the number malformed or out of the dtype's range.
std::optional<runtime::NDArray> ParseScalarLiteral(std::string_view number, std::string_view suffix);

/// `s` in double quotes with the escapes above.
std::string QuoteString(std::string_view s);

/// "k=v, ..." with string values quoted by QuoteString.
std::string AttrsText(const Attrs& attrs);

/// The lowercase hex of `n` bytes at `data`.
std::string HexEncode(const void* data, size_t n);
/// Decodes `hex` (2 * n digits, either case) into `out`; false on a non-hex digit or a length other than 2 * n.
bool HexDecode(std::string_view hex, void* out, size_t n);

/// `hint` made a legal variable name: other characters become '_', and a name that is empty or
/// starts with a digit gets a 'v' in front.
std::string LegalVarName(const std::string& hint);

}  // namespace tessera::graph::text
