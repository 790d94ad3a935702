// Feeds the input as the .bin weights of a fixed, real ncnn .param (RetinaFace mnet.25 by default) to
// Model::load_ncnn: the storage tags (float32, float16, int8, lookup table), truncation at every layer,
// and whatever the graph passes make of arbitrary weight values (NaN, infinity, denormals).
//
// The .param is read once at start-up: $NINEGRID_FUZZ_NCNN_PARAM, or the build's default
// (NINEGRID_FUZZ_NCNN_PARAM_DEFAULT, ../shared/models/mnet.25-opt.param).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "ninegrid/ninegrid.h"

namespace {
std::string g_param;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_param = ninegrid_fuzz::read_fixture(
      ninegrid_fuzz::env_or("NINEGRID_FUZZ_NCNN_PARAM", NINEGRID_FUZZ_NCNN_PARAM_DEFAULT));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ninegrid::Options options;
  options.threads = 1;
  try {
    ninegrid::Model::load_ncnn(g_param, data, size, options);
  } catch (const ninegrid::Error&) {
  }
  return 0;
}
