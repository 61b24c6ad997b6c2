// Buffer -> Tensor lookup: a compute body holds BufferLoads of buffers; this finds
// the tensor (operation) that owns a buffer, for te's own bookkeeping.
#pragma once

#include "tessera/te/tensor.h"

namespace tessera::te {

/// The live tensor whose buffer is `buffer`; an undefined Tensor if there is none.
Tensor TensorOfBuffer(const Buffer& buffer);

}  // namespace tessera::te
