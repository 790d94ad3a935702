// Per-thread scratch memory for kernels that need a work area during one run (Winograd's transformed
// tiles, Strassen's sums, a restaged input): grown on demand and kept, so a model run allocates nothing.
// The buffer stays valid until the calling thread asks again; no kernel holds it across a call into
// another op, so all of them share it.
#pragma once

#include <cstdint>

namespace ninegrid {

// Separate buffers per thread, so that a kernel's own work area can sit beside an op's staged copy of its
// input: ops stage into slot 0 (as do the kernels that run on unstaged inputs), kernels that may run on a
// staged input take slot 1 (the AVX2 int8 pointwise kernel on widened inputs).
constexpr int kThreadScratchSlots = 2;

// At least `floats` floats, 64-byte aligned, owned by the calling thread: buffer `slot` of kThreadScratchSlots.
float* thread_scratch(int64_t floats, int slot = 0);

}  // namespace ninegrid
