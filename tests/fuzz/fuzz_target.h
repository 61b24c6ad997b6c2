// What every fuzz target (tests/fuzz/*.cc) shares. A target is the libFuzzer entry point
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
// over one parser of untrusted bytes. The contract it checks: any input gives a result or a
// tessera::UserError (UnsupportedError and rpc::ProtocolError are UserErrors); nothing else —
// no signal, no sanitizer report, no hang, no InternalError (a bug: the CLI exits 3 for it), no
// other exception. An exception that escapes the target aborts, which libFuzzer reports as a crash.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer (TESSERA_FUZZ=ON, clang, ASan +
// UBSan; scripts/fuzz.sh runs them), and in every normal build as a replay executable
// (replay_main.cc) that ctest runs over the target's corpus, tests/fuzz/corpus/<target>/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/support/error.h"

namespace tessera::fuzz {

/// Runs `fn`, accepting a UserError (the documented answer to bad input) and nothing else.
template <typename Fn>
bool AcceptUserErrors(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const InternalError&) {
    throw;  // a bug, even for bad input
  } catch (const UserError&) {
    return false;
  }
}

inline std::string_view Bytes(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace tessera::fuzz
