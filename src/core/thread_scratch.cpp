#include "core/thread_scratch.h"

#include "core/aligned_memory.h"

namespace ninegrid {

float* thread_scratch(int64_t floats) {
  static thread_local AlignedFloats scratch;
  if (scratch.size() < floats) scratch = AlignedFloats(floats);
  return scratch.data();
}

}  // namespace ninegrid
