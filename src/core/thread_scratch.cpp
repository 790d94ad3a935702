#include "core/thread_scratch.h"

#include "core/aligned_memory.h"

namespace ninegrid {

float* thread_scratch(int64_t floats, int slot) {
  static thread_local AlignedFloats scratch[kThreadScratchSlots];
  AlignedFloats& buffer = scratch[slot];
  if (buffer.size() < floats) buffer = AlignedFloats(floats);
  return buffer.data();
}

}  // namespace ninegrid
