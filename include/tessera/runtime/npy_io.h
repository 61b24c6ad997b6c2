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
// Reading a file (LoadNpy) reads only a regular file (support/file_read.h: a FIFO, a device such
// as /dev/zero or a directory is refused before reading) and only what its header declares: the
// preamble (a header of at most 1 MiB), then exactly the payload's bytes, once the file is known
// to hold them; nothing is allocated for a payload the file does not have.
//
// Errors: UserError naming the file for a missing or unreadable file, a bad magic or
// header, Fortran order ("save a C-ordered copy: np.ascontiguousarray(a)"), big-endian
// data ("convert with a.astype(a.dtype.newbyteorder('<'))"), a truncated payload;
// UnsupportedError for other element types (complex, object, strings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

/// Reads a .npy file.
NDArray LoadNpy(const std::string& path);
/// Parses .npy bytes; `what` names the source in errors (a path or a zip member).
NDArray ParseNpy(const void* data, size_t size, const std::string& what);
/// Reads one .npy from a stream of `size` bytes: `read(out, n)` puts the next n bytes in `out`
/// (it is never asked for more than `size` in all; it throws UserError when it cannot read).
/// Reads the preamble, then exactly the payload the header declares, allocated only once `size`
/// is known to hold it. LoadNpy, ParseNpy and LoadNpz read through it.
NDArray ReadNpy(const std::function<void(void* out, size_t n)>& read, uint64_t size, const std::string& what);

/// Writes `array` as a .npy file (UserError when the file cannot be written).
void SaveNpy(const std::string& path, const NDArray& array);
/// The .npy bytes of `array`.
std::string SerializeNpy(const NDArray& array);

/// True when this runtime was built with libzip, so LoadNpz / SaveNpz work.
bool NpzSupported();
/// Reads every "<name>.npy" member of a .npz archive, keyed by <name> (a regular file only, as
/// LoadNpy). Members must be stored or deflated (numpy writes nothing else), and each member is
/// read as ReadNpy reads a stream: what its header declares, after checking that the member's
/// size holds it and that its size is plausible for its compressed size (deflate expands at most
/// 1032 times), so a corrupt or hostile archive cannot make it allocate more than ~1000 times
/// its own size.
std::map<std::string, NDArray> LoadNpz(const std::string& path);
/// The same from the archive's bytes; `what` names them in errors.
std::map<std::string, NDArray> ParseNpz(const void* data, size_t size, const std::string& what);
/// Writes one stored "<name>.npy" member per entry (as numpy.savez does), replacing the file.
/// UserError for a name that is empty or holds '/', '\' or a control character (a member
/// name must not be a path: tools map output names first, tools/common/output_names.h).
void SaveNpz(const std::string& path, const std::map<std::string, NDArray>& arrays);

}  // namespace tessera::runtime
