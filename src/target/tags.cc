// The named targets (tags.h): each expands to an explicit triple, CPU and feature list.
#include "tags.h"

namespace tessera::target::detail {
namespace {

// x86-64 micro-architecture levels (the psABI's x86-64-v2 / v3 / v4), as LLVM feature names.
std::vector<std::string> X86V3Features() {
  return {"+sse",  "+sse2", "+sse3", "+ssse3", "+sse4.1", "+sse4.2", "+popcnt", "+cx16", "+sahf",
          "+avx",  "+avx2", "+bmi",  "+bmi2",  "+f16c",   "+fma",    "+lzcnt",  "+movbe", "+xsave"};
}

std::vector<std::string> X86V4Features() {
  std::vector<std::string> f = X86V3Features();
  for (const char* x : {"+avx512f", "+avx512cd", "+avx512bw", "+avx512dq", "+avx512vl"}) f.push_back(x);
  return f;
}

}  // namespace

const std::vector<TagInfo>& AllTags() {
  static const std::vector<TagInfo> tags = {
      {{"x86-64-v3", "avx2"}, "x86_64-pc-linux-gnu", "x86-64-v3", X86V3Features()},
      {{"x86-64-v4", "avx512"}, "x86_64-pc-linux-gnu", "x86-64-v4", X86V4Features()},
      {{"aarch64"}, "aarch64-linux-gnu", "generic", {"+fp-armv8", "+neon"}},
  };
  return tags;
}

const TagInfo* FindTag(const std::string& name) {
  for (const TagInfo& t : AllTags())
    for (const std::string& n : t.names)
      if (n == name) return &t;
  return nullptr;
}

}  // namespace tessera::target::detail
