// Fuzz target npz: the .npz reader (runtime::ParseNpz over libzip: the archive, each member's
// size and compression, each member's .npy).
#include "fuzz_target.h"
#include "tessera/runtime/npy_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::fuzz::AcceptUserErrors([&] { tessera::runtime::ParseNpz(data, size, "fuzz.npz"); });
  return 0;
}
