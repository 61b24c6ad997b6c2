// Fuzz target artifact: a model library file read without loading it (runtime::ParseArtifactImage:
// ELF header, section headers, symbol table, the data symbols), then everything `tessera inspect`
// parses of it: the target record, the graph JSON (ParseGraphPlan) and the params blob
// (LoadParams). The content hash is checked but a mismatch does not stop the parsing (the fuzzer
// would otherwise never get past it).
#include "fuzz_target.h"
#include "tessera/runtime/artifact_file.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/graph_plan.h"
#include "tessera/runtime/param_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::runtime;
  ArtifactFile a;
  if (!tessera::fuzz::AcceptUserErrors([&] { a = ParseArtifactImage(tessera::fuzz::Bytes(data, size), "fuzz.so"); }))
    return 0;
  tessera::fuzz::AcceptUserErrors([&] { ParseArtifactInfo(a.target_info, "fuzz.so"); });
  tessera::fuzz::AcceptUserErrors([&] { CheckContentHash(a.content_hash, a.graph_json, a.params_blob, "fuzz.so"); });
  tessera::fuzz::AcceptUserErrors([&] { ParseGraphPlan(a.graph_json, "fuzz.so"); });
  tessera::fuzz::AcceptUserErrors([&] { LoadParams(a.params_blob.data(), a.params_blob.size()); });
  return 0;
}
