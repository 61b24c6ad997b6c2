// Attrs: the static attributes of a Call (strides, axis, dtype...) and of a Function
// ("Primitive" = 1 for fused functions).
//
// An ordered map name -> value, kept in insertion order so printing is stable and
// reads like the op's signature. Values are int64, double, string, vector<int64> or
// vector<double>. Typed getters throw InternalError naming the attr when it is missing
// or of another kind: converters and passes build attrs, so a mismatch is a Tessera bug.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tessera::graph {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

/// One `{name, value}` of an Attrs initializer list. Numbers normalize as in Attrs::Set
/// (any integer -> int64, any floating-point -> double).
struct AttrInit {
  template <typename T>
  AttrInit(const char* name, T&& v) : name(name), value(Normalize(std::forward<T>(v))) {}
  template <typename T>
  static AttrValue Normalize(T&& v) {
    using U = std::decay_t<T>;
    if constexpr (std::is_integral_v<U>) return AttrValue(static_cast<int64_t>(v));
    else if constexpr (std::is_floating_point_v<U>) return AttrValue(static_cast<double>(v));
    else if constexpr (std::is_same_v<U, AttrValue>) return std::forward<T>(v);
    else if constexpr (std::is_convertible_v<U, std::string>) return AttrValue(std::string(v));
    else return AttrValue(std::forward<T>(v));
  }
  std::string name;
  AttrValue value;
};

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<AttrInit> items);

  /// Sets (or replaces) `name`; returns *this so calls chain. Any integer (and bool) is stored
  /// as int64, any floating-point value as double, string literals as std::string.
  template <typename T>
  Attrs& Set(const std::string& name, T&& value) {
    return SetValue(name, AttrInit::Normalize(std::forward<T>(value)));
  }
  Attrs& SetValue(const std::string& name, AttrValue value);

  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

  int64_t GetInt(const std::string& name) const;
  /// Accepts an int64 attr too (converted).
  double GetDouble(const std::string& name) const;
  const std::string& GetString(const std::string& name) const;
  const std::vector<int64_t>& GetInts(const std::string& name) const;
  /// Accepts a vector<int64> attr too (converted).
  std::vector<double> GetDoubles(const std::string& name) const;

  int64_t GetInt(const std::string& name, int64_t dflt) const { return Has(name) ? GetInt(name) : dflt; }
  double GetDouble(const std::string& name, double dflt) const { return Has(name) ? GetDouble(name) : dflt; }
  std::string GetString(const std::string& name, const std::string& dflt) const {
    return Has(name) ? GetString(name) : dflt;
  }
  std::vector<int64_t> GetInts(const std::string& name, const std::vector<int64_t>& dflt) const {
    return Has(name) ? GetInts(name) : dflt;
  }

  /// "strides=[1, 1], padding=[0, 0, 0, 0], data_layout=\"NCHW\"" (doubles as "0.5f").
  std::string str() const;
  bool operator==(const Attrs& o) const { return items_ == o.items_; }

 private:
  const AttrValue* Find(const std::string& name) const;
  const AttrValue& Get(const std::string& name, const char* want) const;
  std::vector<std::pair<std::string, AttrValue>> items_;
};

/// One value as the printer writes it: 3, 0.5f, "NCHW", [1, 2].
std::string AttrValueStr(const AttrValue& v);

}  // namespace tessera::graph
