// Parameter (de)serialization: the bytes behind a model library's __tessera_params_blob.
//
// Format "TSRPARAM" version 1. All integers little-endian; offsets from the blob start:
//
//   char[8]   magic "TSRPARAM"
//   uint32    version (= 1)
//   uint32    reserved (= 0)
//   uint64    count: the number of tensors
//   count times, in ascending name order:
//     uint32    name length L, then L bytes of name (UTF-8, no NUL, non-empty, unique)
//     uint32    dtype length D, then D bytes: DataType::str(), e.g. "float32"
//     uint32    ndim
//     int64     shape[ndim] (each >= 0)
//     uint64    nbytes (= product(shape) * dtype bytes)
//     zero padding up to the next multiple of 64 bytes from the blob start
//     nbytes    payload: the elements, row-major, little-endian
//   nothing after the last payload
//
// Payloads are 64-byte aligned relative to the blob start, so a blob that itself
// starts 64-byte aligned (codegen emits it so) could be used in place.
//
// Errors: LoadParams throws UserError naming the offset and what was wrong for a
// bad magic, an unknown version, a truncated blob, an invalid dtype, an nbytes that
// does not match shape and dtype, a duplicate name or trailing bytes.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime {

inline constexpr char kParamsMagic[8] = {'T', 'S', 'R', 'P', 'A', 'R', 'A', 'M'};
inline constexpr uint32_t kParamsVersion = 1;

/// Serializes `params` (every array defined) into the format above.
std::string SaveParams(const std::map<std::string, NDArray>& params);

/// Parses a blob written by SaveParams into fresh, 64-byte-aligned arrays.
std::map<std::string, NDArray> LoadParams(const void* data, size_t size);

}  // namespace tessera::runtime
