// Tensors whose storage the caller fills in full right away: their pages are faulted in at allocation
// (FirstTouch::Now, core/aligned_memory.h), in huge pages while the system hands those out fast.
#pragma once

#include "core/aligned_memory.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

// Tensor::empty (uninitialised storage, same size checks), its pages faulted in as `touch` says.
Tensor empty_tensor(DataType dtype, const Shape& shape, FirstTouch touch);

}  // namespace ninegrid
