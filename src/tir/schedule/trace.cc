// Trace printing, JSON (de)serialization and replay (trace.h).
#include "tessera/tir/schedule/trace.h"

#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/ir/op.h"
#include "tessera/tir/schedule/schedule.h"

namespace tessera::tir {

namespace {
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string AttrStr(const TraceAttr& a) {
  std::ostringstream os;
  if (auto* i = std::get_if<int64_t>(&a)) {
    os << *i;
  } else if (auto* d = std::get_if<double>(&a)) {
    os << std::setprecision(17) << *d;
  } else if (auto* s = std::get_if<std::string>(&a)) {
    os << Quote(*s);
  } else {
    const auto& v = std::get<std::vector<int64_t>>(a);
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
  }
  return os.str();
}
}  // namespace

std::string Instruction::str() const {
  std::ostringstream os;
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << outputs[i].str();
  if (outputs.size() == 1 && kind == "get_loops") os << ",";
  if (!outputs.empty()) os << " = ";
  os << "sch." << kind << "(";
  bool first = true;
  for (const auto& in : inputs) {
    os << (first ? "" : ", ") << in.str();
    first = false;
  }
  for (const auto& [name, value] : attrs) {
    os << (first ? "" : ", ");
    if (!(kind == "get_block" && name == "name")) os << name << "=";
    // An index map prints as the Python lambda it is (TVM prints it so too).
    if (name == "index_map" && std::holds_alternative<std::string>(value)) os << std::get<std::string>(value);
    else os << AttrStr(value);
    first = false;
  }
  os << ")";
  return os.str();
}

std::string Trace::str() const {
  std::string out;
  for (const auto& inst : insts_) out += inst.str() + "\n";
  return out;
}

// ------------------------------------------------------------------ JSON
std::string Trace::ToJSON() const {
  using nlohmann::json;
  json insts = json::array();
  for (const auto& inst : insts_) {
    json j;
    j["kind"] = inst.kind;
    j["inputs"] = json::array();
    for (const auto& in : inst.inputs) j["inputs"].push_back(in.str());
    j["attrs"] = json::array();
    for (const auto& [name, value] : inst.attrs) {
      json v;
      if (auto* i = std::get_if<int64_t>(&value)) v = *i;
      else if (auto* d = std::get_if<double>(&value)) v = *d;
      else if (auto* s = std::get_if<std::string>(&value)) v = *s;
      else v = std::get<std::vector<int64_t>>(value);
      j["attrs"].push_back(json::array({name, v}));
    }
    j["outputs"] = json::array();
    for (const auto& out : inst.outputs) j["outputs"].push_back(out.str());
    insts.push_back(j);
  }
  return json{{"instructions", insts}}.dump();
}

namespace {
RVRef ParseRV(const nlohmann::json& j) {
  if (!j.is_string()) TESSERA_THROW(UserError, "Trace::FromJSON: a handle must be a string like \"b0\" or \"l3\"");
  std::string s = j.get<std::string>();
  if (s.size() < 2 || (s[0] != 'b' && s[0] != 'l') ||
      s.find_first_not_of("0123456789", 1) != std::string::npos) {
    TESSERA_THROW(UserError, "Trace::FromJSON: malformed handle \"", s, "\" (expected b<N> or l<N>)");
  }
  return RVRef{s[0], std::stoll(s.substr(1))};
}
}  // namespace

Trace Trace::FromJSON(const std::string& text) {
  using nlohmann::json;
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    TESSERA_THROW(UserError, "Trace::FromJSON: not valid JSON: ", e.what());
  }
  if (!root.is_object() || !root.contains("instructions") || !root["instructions"].is_array()) {
    TESSERA_THROW(UserError, "Trace::FromJSON: expected an object with an \"instructions\" array");
  }
  Trace t;
  for (const auto& j : root["instructions"]) {
    if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string()) {
      TESSERA_THROW(UserError, "Trace::FromJSON: an instruction without a \"kind\" string");
    }
    Instruction inst;
    inst.kind = j["kind"].get<std::string>();
    for (const auto& in : j.value("inputs", json::array())) inst.inputs.push_back(ParseRV(in));
    for (const auto& out : j.value("outputs", json::array())) inst.outputs.push_back(ParseRV(out));
    for (const auto& a : j.value("attrs", json::array())) {
      if (!a.is_array() || a.size() != 2 || !a[0].is_string()) {
        TESSERA_THROW(UserError, "Trace::FromJSON: attribute of '", inst.kind, "' is not a [name, value] pair");
      }
      const json& v = a[1];
      TraceAttr value;
      if (v.is_number_integer()) value = v.get<int64_t>();
      else if (v.is_number_float()) value = v.get<double>();
      else if (v.is_string()) value = v.get<std::string>();
      else if (v.is_array()) {
        std::vector<int64_t> ints;
        for (const auto& x : v) {
          if (!x.is_number_integer()) TESSERA_THROW(UserError, "Trace::FromJSON: array attributes must hold integers");
          ints.push_back(x.get<int64_t>());
        }
        value = ints;
      } else {
        TESSERA_THROW(UserError, "Trace::FromJSON: unsupported value of attribute '", a[0].get<std::string>(), "'");
      }
      inst.attrs.emplace_back(a[0].get<std::string>(), value);
    }
    t.Append(std::move(inst));
  }
  return t;
}

// ------------------------------------------------------------------ replay
namespace {
const TraceAttr& GetAttr(const Instruction& inst, const std::string& name) {
  for (const auto& [n, v] : inst.attrs) {
    if (n == name) return v;
  }
  TESSERA_THROW(UserError, "Trace replay: instruction '", inst.kind, "' lacks attribute '", name, "'");
}

template <typename T>
const T& GetAs(const Instruction& inst, const std::string& name) {
  const TraceAttr& a = GetAttr(inst, name);
  if (auto* p = std::get_if<T>(&a)) return *p;
  TESSERA_THROW(UserError, "Trace replay: attribute '", name, "' of '", inst.kind, "' has the wrong type");
}
}  // namespace

void Trace::ApplyToSchedule(Schedule& sch) const {
  std::map<std::pair<char, int64_t>, int64_t> rv;  // (kind, id in this trace) -> id in sch
  for (const auto& inst : insts_) {
    auto in = [&](size_t i, char kind) -> int64_t {
      if (i >= inst.inputs.size() || inst.inputs[i].kind != kind) {
        TESSERA_THROW(UserError, "Trace replay: instruction '", inst.kind, "' expects a ",
                      kind == 'b' ? "block" : "loop", " handle as input ", i);
      }
      auto it = rv.find({kind, inst.inputs[i].id});
      if (it == rv.end()) {
        TESSERA_THROW(UserError, "Trace replay: instruction '", inst.kind, "' uses ", inst.inputs[i].str(),
                      " before it is defined");
      }
      return it->second;
    };
    auto B = [&](size_t i) { return BlockRV{in(i, 'b')}; };
    auto L = [&](size_t i) { return LoopRV{in(i, 'l')}; };
    auto bind = [&](const std::vector<int64_t>& ids, char kind) {
      if (ids.size() != inst.outputs.size()) {
        TESSERA_THROW(ScheduleError, "Trace replay: '", inst.kind, "' produced ", ids.size(),
                      " handles but the trace recorded ", inst.outputs.size());
      }
      for (size_t i = 0; i < ids.size(); ++i) rv[{kind, inst.outputs[i].id}] = ids[i];
    };
    auto loops_in = [&]() {
      std::vector<LoopRV> ls;
      for (size_t i = 0; i < inst.inputs.size(); ++i) ls.push_back(L(i));
      return ls;
    };
    auto loop_ids = [](const std::vector<LoopRV>& ls) {
      std::vector<int64_t> ids;
      for (auto& l : ls) ids.push_back(l.id);
      return ids;
    };
    const std::string& k = inst.kind;
    if (k == "get_block") {
      bind({sch.get_block(GetAs<std::string>(inst, "name")).id}, 'b');
    } else if (k == "get_loops") {
      bind(loop_ids(sch.get_loops(B(0))), 'l');
    } else if (k == "split") {
      bind(loop_ids(sch.split(L(0), GetAs<std::vector<int64_t>>(inst, "factors"))), 'l');
    } else if (k == "fuse") {
      bind({sch.fuse(loops_in()).id}, 'l');
    } else if (k == "reorder") {
      sch.reorder(loops_in());
    } else if (k == "parallel") {
      sch.parallel(L(0));
    } else if (k == "vectorize") {
      sch.vectorize(L(0));
    } else if (k == "unroll") {
      sch.unroll(L(0));
    } else if (k == "compute_inline") {
      sch.compute_inline(B(0));
    } else if (k == "reverse_compute_inline") {
      sch.reverse_compute_inline(B(0));
    } else if (k == "compute_at") {
      sch.compute_at(B(0), L(1));
    } else if (k == "reverse_compute_at") {
      sch.reverse_compute_at(B(0), L(1));
    } else if (k == "cache_read") {
      bind({sch.cache_read(B(0), static_cast<int>(GetAs<int64_t>(inst, "read_buffer_index")),
                           GetAs<std::string>(inst, "storage_scope")).id}, 'b');
    } else if (k == "cache_write") {
      bind({sch.cache_write(B(0), static_cast<int>(GetAs<int64_t>(inst, "write_buffer_index")),
                            GetAs<std::string>(inst, "storage_scope")).id}, 'b');
    } else if (k == "rfactor") {
      bind({sch.rfactor(L(0), static_cast<int>(GetAs<int64_t>(inst, "factor_axis"))).id}, 'b');
    } else if (k == "decompose_reduction") {
      bind({sch.decompose_reduction(B(0), L(1)).id}, 'b');
    } else if (k == "transform_layout") {
      sch.transform_layout(B(0), static_cast<int>(GetAs<int64_t>(inst, "buffer_index")),
                           GetAs<int64_t>(inst, "is_write_buffer") != 0,
                           IndexMap::Parse(GetAs<std::string>(inst, "index_map")));
    } else if (k == "decompose_padding") {
      bind({sch.decompose_padding(B(0), L(1)).id}, 'b');
    } else if (k == "annotate") {
      const TraceAttr& v = GetAttr(inst, "ann_val");
      PrimExpr value;
      if (auto* i = std::get_if<int64_t>(&v)) value = ir::make_const(DataType::Int(32), *i);
      else if (auto* d = std::get_if<double>(&v)) value = ir::make_const(DataType::Float(32), *d);
      else if (auto* s = std::get_if<std::string>(&v)) value = ir::StringImmNode::make(*s);
      else TESSERA_THROW(UserError, "Trace replay: annotate value must be an int, float or string");
      const std::string& key = GetAs<std::string>(inst, "ann_key");
      if (!inst.inputs.empty() && inst.inputs[0].kind == 'l') sch.annotate(L(0), key, value);
      else sch.annotate(B(0), key, value);
    } else {
      TESSERA_THROW(UserError, "Trace replay: unknown instruction kind '", k, "'");
    }
  }
}

}  // namespace tessera::tir
