// Feeds one input as an ncnn model to Model::load_ncnn: the bytes up to the first NUL are the .param
// text, the bytes after it the .bin weights (no NUL: no weights). A separator rather than a length
// prefix, so that mutations inside the text do not move the split point.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_input.h"
#include "ninegrid/ninegrid.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t param_size = nul ? static_cast<size_t>(nul - data) : size;
  const std::string param(reinterpret_cast<const char*>(data), param_size);
  const uint8_t* weights = nul ? nul + 1 : data + size;
  const size_t weights_size = size - (weights - data);

  ninegrid::Options options;
  options.threads = 1;
  try {
    ninegrid::Model::load_ncnn(param, weights, weights_size, options);
  } catch (const ninegrid::Error&) {
  }
  return 0;
}
