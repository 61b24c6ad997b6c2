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
#include <utility>
#include <variant>
#include <vector>

namespace tessera::graph {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items);

  /// Sets (or replaces) `name`; returns *this so calls chain.
  Attrs& Set(const std::string& name, AttrValue value);
  Attrs& Set(const std::string& name, int value) { return Set(name, AttrValue(int64_t{value})); }
  Attrs& Set(const std::string& name, const char* value) { return Set(name, AttrValue(std::string(value))); }

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
