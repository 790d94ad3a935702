// Per-thread scratch memory for kernels that need a work area during one run (Winograd's transformed
// tiles, Strassen's sums, a restaged input): grown on demand and kept, so a model run allocates nothing.
// The buffer stays valid until the calling thread asks again; no kernel holds it across a call into
// another op, so all of them share it.
#pragma once

#include <cstdint>

namespace ninegrid {

// At least `floats` floats, 64-byte aligned, owned by the calling thread.
float* thread_scratch(int64_t floats);

}  // namespace ninegrid
