// Target::Parse: the `llvm ...` form, `native` and the tags (tessera/target/target.h).
#include <sstream>

#include "tags.h"
#include "tessera/support/error.h"
#include "tessera/target/target.h"

namespace tessera::target {
namespace {

std::string AcceptedForms() {
  std::string tags;
  for (const std::string& n : Target::TagNames()) tags += (tags.empty() ? "" : ", ") + n;
  return "accepted: 'llvm [-mtriple=<triple>] [-mcpu=<cpu>|native] [-mattr=+feat,-feat,...] [-num-cores=<n>]' "
         "(e.g. 'llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1'), 'native', or a tag (" +
         tags + ") optionally followed by -mattr= / -num-cores=";
}

int ParseCount(const std::string& spec, const std::string& token, const std::string& text) {
  int v = 0;
  if (text.empty() || text.size() > 6) v = -1;
  for (char c : text) {
    if (c < '0' || c > '9') {
      v = -1;
      break;
    }
    v = v * 10 + (c - '0');
  }
  if (v < 1) {
    TESSERA_THROW(UserError, "bad target '", spec, "': option '", token, "' needs a positive integer; ",
                  AcceptedForms());
  }
  return v;
}

std::vector<std::string> ParseFeatures(const std::string& spec, const std::string& mattr) {
  std::vector<std::string> out;
  std::istringstream is(mattr);
  for (std::string f; std::getline(is, f, ',');) {
    if (f.size() < 2 || (f[0] != '+' && f[0] != '-')) {
      TESSERA_THROW(UserError, "bad target '", spec, "': feature '", f, "' in -mattr must be +name or -name; ",
                    AcceptedForms());
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace

Target Target::Parse(const std::string& spec) {
  std::istringstream is(spec);
  std::vector<std::string> tokens;
  for (std::string tok; is >> tok;) tokens.push_back(tok);
  if (tokens.empty()) TESSERA_THROW(UserError, "empty target; ", AcceptedForms());

  std::string triple, cpu = "native";
  std::vector<std::string> features;
  const detail::TagInfo* tag = detail::FindTag(tokens[0]);
  if (tag != nullptr) {
    triple = tag->triple, cpu = tag->cpu, features = tag->features;
  } else if (tokens[0] != "llvm" && tokens[0] != "native") {
    TESSERA_THROW(UserError, "bad target '", spec, "': unknown target '", tokens[0], "'; ", AcceptedForms());
  }
  const bool fixed_machine = tokens[0] != "llvm";  // a tag or native: no -mtriple / -mcpu
  int cores = 0;
  std::vector<std::string> seen;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    const size_t eq = tok.find('=');
    const std::string key = tok.substr(0, eq == std::string::npos ? tok.size() : eq + 1);
    const std::string value = eq == std::string::npos ? "" : tok.substr(eq + 1);
    const bool known = key == "-mcpu=" || key == "-mattr=" || key == "-mtriple=" || key == "-num-cores=";
    if (!known || (fixed_machine && (key == "-mcpu=" || key == "-mtriple="))) {
      TESSERA_THROW(UserError, "bad target '", spec, "': unknown option '", tok, "'",
                    known ? std::string(" after '") + tokens[0] + "' (it fixes the triple and CPU)" : "", "; ",
                    AcceptedForms());
    }
    for (const std::string& s : seen)
      if (s == key) TESSERA_THROW(UserError, "bad target '", spec, "': '", key, "' given twice; ", AcceptedForms());
    seen.push_back(key);
    if (value.empty()) {
      TESSERA_THROW(UserError, "bad target '", spec, "': option '", tok, "' has no value; ", AcceptedForms());
    }
    if (key == "-mcpu=") {
      cpu = value;
    } else if (key == "-mtriple=") {
      triple = value;
    } else if (key == "-mattr=") {
      for (std::string& f : ParseFeatures(spec, value)) features.push_back(std::move(f));
    } else {
      cores = ParseCount(spec, tok, value);
    }
  }
  return Make(triple, cpu, features, cores);
}

}  // namespace tessera::target
