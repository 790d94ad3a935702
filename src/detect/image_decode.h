// Image decoders behind decode_image and load_image (image_io.cpp), one file per library:
//   jpeg_decode.cpp  JPEG with libjpeg-turbo (Debian's libturbojpeg0-dev)
//   stb_decode.cpp   PNG, BMP, GIF, TGA, PNM with stb_image (PSD and HDR refused) (Debian's libstb-dev)
// JPEG does not go through stb_image: Debian 12's stb_image 2.27 writes past its Huffman tables on a
// JPEG whose DHT segment declares more than 256 codes (found by fuzz/image_fuzzer), and its JPEG decoder
// has more known memory-safety faults of that kind, fixed upstream only after 2.27.
//
// Each decoder takes the bytes and `what` (the image's name for error messages, e.g. "image 'a.jpg'") and
// returns 8-bit RGB or throws Error.
#pragma once

#include <cstddef>
#include <string>

#include "ninegrid/detect.h"

namespace ninegrid {
namespace detect_internal {

// Larger images are refused before decoding: 64 Mpixel is 192 MiB of RGB, far beyond any detector input.
constexpr long long kMaxPixels = 64LL * 1024 * 1024;

// Throws Error unless w x h is a non-empty image of at most kMaxPixels.
void check_image_size(int w, int h, const std::string& what);

bool is_jpeg(const unsigned char* data, size_t size);
Image decode_jpeg(const unsigned char* data, size_t size, const std::string& what);
Image decode_with_stb(const unsigned char* data, size_t size, const std::string& what);

}  // namespace detect_internal
}  // namespace ninegrid
