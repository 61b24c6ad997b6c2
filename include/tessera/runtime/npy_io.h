// NumPy .npy / .npz files (format spec: numpy.lib.format, NEP 1).
//
// .npy: magic "\x93NUMPY", version 1.0 (uint16 header length) or 2.0 / 3.0 (uint32),
// then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ending in '\n' so the data starts 64-byte aligned, then the
// raw elements. Supported element types ('<' little-endian, '|' / '=' also accepted
// where numpy writes them): f2 f4 f8, i1 i2 i4 i8, u1 u2 u4 u8, b1 (bool).
// Writing produces the same bytes as numpy.save for these types (version 1.0, or 2.0
// for headers over 64 KiB). bfloat16, float8 / float4 and 4- / 2-bit integer arrays, which
// numpy has no dtype for, are written as void elements ('<V2' / '|V1', as numpy.save writes
// ml_dtypes arrays): np.load(f).view(ml_dtypes.bfloat16) reads them back; they cannot be read
// as inputs (give those as ONNX TensorProto .pb files).
//
// .npz: a zip archive with one "<name>.npy" member per array, as numpy.savez writes
// (stored, uncompressed); reading also accepts numpy.savez_compressed (deflate). Through libzip,
// which a runtime may be built without (CMake TESSERA_NPZ, e.g. the cross-compiled runtime-only
// build): then NpzSupported() is false and LoadNpz / SaveNpz throw a UserError saying so and to
// use .npy files instead.
//
// Errors: UserError naming the file for a missing or unreadable file, a bad magic or
// header, Fortran order ("save a C-ordered copy: np.ascontiguousarray(a)"), big-endian
// data ("convert with a.astype(a.dtype.newbyteorder('<'))"), a truncated payload;
// UnsupportedError for other element types (complex, object, strings).
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

/// Reads a .npy file.
NDArray LoadNpy(const std::string& path);
/// Parses .npy bytes; `what` names the source in errors (a path or a zip member).
NDArray ParseNpy(const void* data, size_t size, const std::string& what);

/// Writes `array` as a .npy file (UserError when the file cannot be written).
void SaveNpy(const std::string& path, const NDArray& array);
/// The .npy bytes of `array`.
std::string SerializeNpy(const NDArray& array);

/// True when this runtime was built with libzip, so LoadNpz / SaveNpz work.
bool NpzSupported();
/// Reads every "<name>.npy" member of a .npz archive, keyed by <name>.
std::map<std::string, NDArray> LoadNpz(const std::string& path);
/// Writes one stored "<name>.npy" member per entry (as numpy.savez does), replacing the file.
void SaveNpz(const std::string& path, const std::map<std::string, NDArray>& arrays);

}  // namespace tessera::runtime
