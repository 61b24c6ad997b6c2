// Fuzz target npy: the .npy reader (runtime::ParseNpy, the parser under LoadNpy), and the
// writer on what it read: SerializeNpy(ParseNpy(x)) parses back to the same array.
#include <cstring>

#include "fuzz_target.h"
#include "tessera/runtime/npy_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::runtime;
  tessera::fuzz::AcceptUserErrors([&] {
    const NDArray a = ParseNpy(data, size, "fuzz.npy");
    const std::string again = SerializeNpy(a);
    const NDArray b = ParseNpy(again.data(), again.size(), "re-serialized");
    if (b.shape() != a.shape() || b.dtype() != a.dtype() || std::memcmp(a.raw_data(), b.raw_data(), a.NBytes()) != 0)
      TESSERA_THROW(tessera::InternalError, "SerializeNpy(ParseNpy(x)) does not parse back to the same array");
  });
  return 0;
}
