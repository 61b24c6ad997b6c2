// .npz in a runtime built without libzip (CMake TESSERA_NPZ=OFF, or AUTO without libzip, as the
// cross-compiled runtime-only build): every call says so (npy_io.h).
#include "tessera/runtime/npy_io.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

bool NpzSupported() { return false; }

std::map<std::string, NDArray> LoadNpz(const std::string& path) {
  TESSERA_THROW(UserError, "cannot read '", path,
                "': this runtime was built without .npz support (no libzip); give each tensor as a .npy file");
}

std::map<std::string, NDArray> ParseNpz(const void* data, size_t size, const std::string& what) {
  TESSERA_THROW(UserError, "cannot read ", what,
                ": this runtime was built without .npz support (no libzip); give each tensor as a .npy file");
}

void SaveNpz(const std::string& path, const std::map<std::string, NDArray>& arrays) {
  TESSERA_THROW(UserError, "cannot write '", path,
                "': this runtime was built without .npz support (no libzip); write each output as a .npy file "
                "instead (tessera-runtime run --output-dir DIR writes DIR/<output name>.npy)");
}

}  // namespace tessera::runtime
