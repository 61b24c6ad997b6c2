#include "json_fields.h"

#include <algorithm>

#include <cstddef>
#include <cstdint>

#include "tessera/runtime/ndarray.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

void JsonFields::Fail(const std::string& where, const std::string& what) const {
  TESSERA_THROW(UserError, "invalid ", program_, " in module '", origin_, "': ", where, ": ", what, ". ", advice_);
}

JsonFields::json JsonFields::ParseRoot(std::string_view text, const char* format, int64_t max_version) const {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large
    Fail("the text", std::string("not valid JSON (") + e.what() + ")");
  }
  if (!root.is_object()) Fail("the root", "expected a JSON object");
  if (String(root, "format", "the root") != format) Fail("\"format\"", std::string("expected \"") + format + "\"");
  const int64_t version = Int(root, "version", "the root");
  if (version < 1 || version > max_version)
    Fail("\"version\"", "version " + std::to_string(version) + " is not supported by this runtime (it reads version " +
                            (max_version == 1 ? std::string("1") : "1 to " + std::to_string(max_version)) + ")");
  return root;
}

const JsonFields::json& JsonFields::Field(const json& obj, const char* key, const std::string& where) const {
  if (!obj.is_object()) Fail(where, "expected a JSON object");
  auto it = obj.find(key);
  if (it == obj.end()) Fail(where, std::string("missing field \"") + key + "\"");
  return *it;
}

const JsonFields::json& JsonFields::Array(const json& obj, const char* key, const std::string& where) const {
  const json& v = Field(obj, key, where);
  if (!v.is_array()) Fail(where, std::string("field \"") + key + "\" must be an array");
  return v;
}

int64_t JsonFields::IntValue(const json& v, const std::string& where, const char* key) const {
  // A uint64 above INT64_MAX is an integer too, which get<int64_t> would wrap.
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
    Fail(where, std::string("field \"") + key + "\" must be an integer");
  return v.get<int64_t>();
}

int64_t JsonFields::Int(const json& obj, const char* key, const std::string& where) const {
  return IntValue(Field(obj, key, where), where, key);
}

std::string JsonFields::String(const json& obj, const char* key, const std::string& where) const {
  const json& v = Field(obj, key, where);
  if (!v.is_string()) Fail(where, std::string("field \"") + key + "\" must be a string");
  return v.get<std::string>();
}

std::vector<std::string> JsonFields::Strings(const json& obj, const char* key, const std::string& where) const {
  std::vector<std::string> out;
  for (const json& s : Array(obj, key, where)) {
    if (!s.is_string()) Fail(where, std::string("\"") + key + "\" must hold strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

DataType JsonFields::TensorDType(const json& obj, const char* key, const std::string& where) const {
  DataType t;
  try {
    t = DataType::Parse(String(obj, key, where));
  } catch (const UserError& e) {
    Fail(where, e.what());
  }
  if (t.is_void() || t.is_handle()) Fail(where, "dtype must be a tensor element type");
  return t;
}

std::vector<int64_t> JsonFields::Shape(const json& obj, const char* key, const std::string& where) const {
  std::vector<int64_t> shape;
  for (const json& d : Array(obj, key, where)) {
    const int64_t extent = IntValue(d, where, key);
    if (extent < 0) Fail(where, std::string("negative extent in ") + key);
    shape.push_back(extent);
  }
  return shape;
}

size_t JsonFields::NBytes(const std::vector<int64_t>& shape, DataType dtype, const std::string& where) const {
  size_t n = 1, nbytes = 0;
  bool overflow = false;
  for (int64_t d : shape) overflow = overflow || __builtin_mul_overflow(n, static_cast<size_t>(d), &n);
  overflow = overflow || __builtin_mul_overflow(n, static_cast<size_t>(dtype.bytes()), &nbytes) ||
             nbytes > static_cast<size_t>(PTRDIFF_MAX);
  if (overflow) Fail(where, "shape " + ShapeToString(shape) + " is too large");
  return nbytes;
}

std::vector<std::pair<int, std::string>> ReadGuards(const JsonFields& ctx, const nlohmann::json& root,
                                                    const std::vector<std::string>& input_names, const char* what) {
  std::vector<std::pair<int, std::string>> out;
  if (!root.contains("guards")) return out;
  const nlohmann::json& guards = ctx.Array(root, "guards", "the root");
  for (size_t i = 0; i < guards.size(); ++i) {
    const std::string where = Entry("guards", i);
    const std::string input = ctx.String(guards[i], "input", where);
    auto it = std::find(input_names.begin(), input_names.end(), input);
    if (it == input_names.end()) ctx.Fail(where, "input \"" + input + "\" is not a " + what + " input");
    out.emplace_back(static_cast<int>(it - input_names.begin()), ctx.String(guards[i], "param", where));
  }
  return out;
}

}  // namespace tessera::runtime
