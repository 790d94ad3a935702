// Feeds the input as a .npy file's bytes to parse_npy (src/core/npy.h), the reader behind
// `ninegrid run --input NAME=FILE.npy` and the tests' golden files.
#include <cstddef>
#include <cstdint>

#include "core/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ninegrid::parse_npy(data, size);
  } catch (const ninegrid::Error&) {
  }
  return 0;
}
