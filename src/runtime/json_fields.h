// Internal to the runtime: reading its JSON programs (the executor graph, graph_plan.cc; the VM
// executable, vm_executable.cc). Field accessors that turn a missing or mistyped field into a
// UserError saying which entry of which module's program is wrong:
//   "invalid <program> in module '<origin>': <where>: <what>. <advice>"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/runtime/data_type.h"

namespace tessera::runtime {

class JsonFields {
 public:
  using json = nlohmann::json;

  /// `program` names the JSON in messages ("graph JSON"); `advice` ends every message.
  JsonFields(const std::string& origin, std::string program, std::string advice)
      : origin_(origin), program_(std::move(program)), advice_(std::move(advice)) {}

  [[noreturn]] void Fail(const std::string& where, const std::string& what) const;

  /// Parses `text`: a JSON object whose "format" is `format` and whose "version" is in
  /// [1, max_version].
  json ParseRoot(std::string_view text, const char* format, int64_t max_version = 1) const;

  const json& Field(const json& obj, const char* key, const std::string& where) const;
  const json& Array(const json& obj, const char* key, const std::string& where) const;
  int64_t IntValue(const json& v, const std::string& where, const char* key) const;
  int64_t Int(const json& obj, const char* key, const std::string& where) const;
  std::string String(const json& obj, const char* key, const std::string& where) const;
  /// An array of strings (e.g. "checks").
  std::vector<std::string> Strings(const json& obj, const char* key, const std::string& where) const;
  /// A tensor element type (DataType::Parse; neither void nor handle).
  DataType TensorDType(const json& obj, const char* key, const std::string& where) const;
  /// An array of non-negative extents.
  std::vector<int64_t> Shape(const json& obj, const char* key, const std::string& where) const;
  /// The bytes of `shape` x `dtype`; fails when they overflow or exceed PTRDIFF_MAX.
  size_t NBytes(const std::vector<int64_t>& shape, DataType dtype, const std::string& where) const;

 private:
  const std::string& origin_;
  std::string program_, advice_;
};

/// "values[3]": entry i of a list, for messages.
inline std::string Entry(const char* list, size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; }

/// The optional "guards" list of a program (inputs specialized at compile time, graph_executor.h):
/// per entry, the index of its "input" among `input_names` and its "param". Fails (naming the
/// entry) on an input that is no `what` input ("graph", "program").
std::vector<std::pair<int, std::string>> ReadGuards(const JsonFields& ctx, const nlohmann::json& root,
                                                    const std::vector<std::string>& input_names, const char* what);

}  // namespace tessera::runtime
