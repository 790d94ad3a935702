// Feeds the input as an image file's bytes to decode_image (src/detect/image_io.cpp), the decoder
// behind load_image and `ninegrid detect`: format sniffing, the size limit, then stb_image's JPEG, PNG,
// BMP, GIF, TGA, PSD, HDR and PNM decoders (compiled into the fuzz build, so instrumented).
#include <cstddef>
#include <cstdint>

#include "ninegrid/detect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ninegrid::decode_image(data, size);
  } catch (const ninegrid::Error&) {
  }
  return 0;
}
