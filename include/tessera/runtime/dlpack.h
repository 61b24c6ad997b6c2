// DLPack tensor structs (https://dmlc.github.io/dlpack/latest/c_api.html, v0.8 ABI).
//
// Declared here with DLPack's exact names and layout so that code which already
// speaks DLPack (PyTorch, NumPy, JAX via their from_dlpack) can take NDArrays
// without a dependency on the dlpack package. If a translation unit also includes
// the official dlpack.h, define TESSERA_USE_SYSTEM_DLPACK before including this
// header and it only includes <dlpack/dlpack.h>.
#pragma once

#ifdef TESSERA_USE_SYSTEM_DLPACK
#include <dlpack/dlpack.h>
#else
#ifndef DLPACK_VERSION
#define DLPACK_VERSION 80
#define DLPACK_ABI_VERSION 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Where a tensor lives. Only kDLCPU is produced by Tessera.
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/// Type codes; tessera::DataType uses the same numbering for 0..4.
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  // DLPack 1.1: the 8-, 6- and 4-bit float formats.
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/// A non-owning view of a strided tensor. strides == NULL means compact row-major.
/// Strides and byte_offset are in elements and bytes respectively.
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/// A DLTensor plus the means to release it: the consumer calls deleter(self) once done.
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLPACK_VERSION
#endif  // TESSERA_USE_SYSTEM_DLPACK
