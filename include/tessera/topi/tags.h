// Tags of topi computes (te::OperationNode::tag): what default schedules key on.
//
// The injective family (elemwise ⊂ broadcast ⊂ injective) can always be inlined into its
// consumer; the others mark the "main" compute of an operator.
#pragma once

#include <string>

namespace tessera::topi::tag {

inline constexpr const char* kElemWise = "elemwise";    ///< out[i] = f(in[i]), same shape
inline constexpr const char* kBroadcast = "broadcast";  ///< numpy broadcasting of inputs
inline constexpr const char* kInjective = "injective";  ///< each output reads computed input points (pad, reshape...)
inline constexpr const char* kConv2dNCHW = "conv2d_nchw";
inline constexpr const char* kDense = "dense";          ///< dense, matmul, batch_matmul
inline constexpr const char* kPool = "pool";            ///< the window reduction of a pooling
inline constexpr const char* kCommReduce = "comm_reduce";
inline constexpr const char* kSoftmax = "softmax";      ///< the reductions and output of softmax
inline constexpr const char* kScan = "scan";            ///< a te::scan: a recurrence along an ordered axis

/// True for elemwise, broadcast and injective tags.
inline bool IsInjective(const std::string& t) { return t == kElemWise || t == kBroadcast || t == kInjective; }

}  // namespace tessera::topi::tag
