#include "tessera/graph/attrs.h"

#include <charconv>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::graph {

namespace {
const char* KindName(const AttrValue& v) {
  switch (v.index()) {
    case 0: return "int";
    case 1: return "double";
    case 2: return "string";
    case 3: return "int array";
    default: return "double array";
  }
}

std::string DoubleStr(double d) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, res.ptr) + "f";
}
}  // namespace

Attrs::Attrs(std::initializer_list<AttrInit> items) {
  for (const AttrInit& i : items) SetValue(i.name, i.value);
}

Attrs& Attrs::SetValue(const std::string& name, AttrValue value) {
  for (auto& [k, v] : items_) {
    if (k == name) {
      v = std::move(value);
      return *this;
    }
  }
  items_.emplace_back(name, std::move(value));
  return *this;
}

const AttrValue* Attrs::Find(const std::string& name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return &v;
  return nullptr;
}

const AttrValue& Attrs::Get(const std::string& name, const char* want) const {
  const AttrValue* v = Find(name);
  if (!v) {
    TESSERA_THROW(InternalError, "attribute '", name, "' is missing (expected ", want,
                  "); attrs present: {", str(), "}");
  }
  return *v;
}

int64_t Attrs::GetInt(const std::string& name) const {
  const AttrValue& v = Get(name, "int");
  if (auto* p = std::get_if<int64_t>(&v)) return *p;
  TESSERA_THROW(InternalError, "attribute '", name, "' is a ", KindName(v), ", expected int");
}

double Attrs::GetDouble(const std::string& name) const {
  const AttrValue& v = Get(name, "double");
  if (auto* p = std::get_if<double>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  TESSERA_THROW(InternalError, "attribute '", name, "' is a ", KindName(v), ", expected double");
}

const std::string& Attrs::GetString(const std::string& name) const {
  const AttrValue& v = Get(name, "string");
  if (auto* p = std::get_if<std::string>(&v)) return *p;
  TESSERA_THROW(InternalError, "attribute '", name, "' is a ", KindName(v), ", expected string");
}

const std::vector<int64_t>& Attrs::GetInts(const std::string& name) const {
  const AttrValue& v = Get(name, "int array");
  if (auto* p = std::get_if<std::vector<int64_t>>(&v)) return *p;
  TESSERA_THROW(InternalError, "attribute '", name, "' is a ", KindName(v), ", expected int array");
}

std::vector<double> Attrs::GetDoubles(const std::string& name) const {
  const AttrValue& v = Get(name, "double array");
  if (auto* p = std::get_if<std::vector<double>>(&v)) return *p;
  if (auto* p = std::get_if<std::vector<int64_t>>(&v)) return std::vector<double>(p->begin(), p->end());
  TESSERA_THROW(InternalError, "attribute '", name, "' is a ", KindName(v), ", expected double array");
}

std::string AttrValueStr(const AttrValue& v) {
  std::ostringstream os;
  switch (v.index()) {
    case 0: os << std::get<int64_t>(v); break;
    case 1: os << DoubleStr(std::get<double>(v)); break;
    case 2: os << '"' << std::get<std::string>(v) << '"'; break;
    case 3: {
      const auto& xs = std::get<std::vector<int64_t>>(v);
      os << "[";
      for (size_t i = 0; i < xs.size(); ++i) os << (i ? ", " : "") << xs[i];
      os << "]";
      break;
    }
    default: {
      const auto& xs = std::get<std::vector<double>>(v);
      os << "[";
      for (size_t i = 0; i < xs.size(); ++i) os << (i ? ", " : "") << DoubleStr(xs[i]);
      os << "]";
    }
  }
  return os.str();
}

std::string Attrs::str() const {
  std::string s;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i) s += ", ";
    s += items_[i].first + "=" + AttrValueStr(items_[i].second);
  }
  return s;
}

}  // namespace tessera::graph
