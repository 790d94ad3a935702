// Feeds the input, as the bytes of an ONNX ModelProto, to Model::load_onnx with the default options
// (opt level 2): protobuf parsing, import validation, every graph pass, and shape inference of the whole
// graph when the input shapes are declared.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "ninegrid/ninegrid.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ninegrid::Options options;
  options.threads = 1;
  try {
    ninegrid::Model::load_onnx(data, size, options);
  } catch (const ninegrid::Error&) {
  }
  return 0;
}
