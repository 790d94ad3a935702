// The fuzz build's copy of stb_image and stb_image_write, compiled from the same Debian headers
// (libstb-dev) that the normal build's libstb.so is made from. Built here, the decoder gets libFuzzer's
// coverage instrumentation (the fuzzer can steer into its branches) and ASan checks its reads and writes;
// linked from libstb.so it would be a black box to both.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
