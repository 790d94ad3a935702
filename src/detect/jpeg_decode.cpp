// JPEG decoding with libjpeg-turbo's TurboJPEG API, which reports every failure as a return code (no
// setjmp/longjmp through C++ frames).
#include <turbojpeg.h>

#include <memory>

#include "detect/image_decode.h"

namespace ninegrid {
namespace detect_internal {

namespace {

struct HandleCloser {
  void operator()(void* h) const { tjDestroy(h); }
};
using Handle = std::unique_ptr<void, HandleCloser>;

// Adobe CMYK/YCCK JPEGs store inverted ink values: white is (255, 255, 255, 255). RGB is each
// channel times K, as stb_image did for these files before JPEG moved here.
void cmyk_to_rgb(const unsigned char* cmyk, Image& img) {
  const size_t pixels = static_cast<size_t>(img.w) * img.h;
  for (size_t i = 0; i < pixels; ++i) {
    const unsigned k = cmyk[i * 4 + 3];
    for (int c = 0; c < 3; ++c) img.rgb[i * 3 + c] = static_cast<uint8_t>((cmyk[i * 4 + c] * k + 127) / 255);
  }
}

}  // namespace

// What stb_image would take for a JPEG: its marker reader skips any run of 0xFF fill bytes before the
// start-of-image byte, so FF FF ... FF D8 reaches stb's own (unchecked) JPEG decoder unless it comes here;
// libjpeg-turbo refuses the fill bytes with its own message (found by fuzz/image_fuzzer).
bool is_jpeg(const unsigned char* data, size_t size) {
  if (size < 2 || data[0] != 0xFF) return false;
  size_t i = 1;
  while (i < size && data[i] == 0xFF) ++i;
  return i < size && data[i] == 0xD8;
}

Image decode_jpeg(const unsigned char* data, size_t size, const std::string& what) {
  Handle h(tjInitDecompress());
  if (!h) throw Error("cannot decode " + what + ": " + tjGetErrorStr2(nullptr));
  const unsigned long n = static_cast<unsigned long>(size);
  int w = 0, ht = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(h.get(), data, n, &w, &ht, &subsampling, &colorspace) != 0)
    throw Error("cannot read " + what + ": not a JPEG ninegrid can decode: " + tjGetErrorStr2(h.get()));
  check_image_size(w, ht, what);

  // TJFLAG_LIMITSCANS: a progressive JPEG of a few KB with thousands of scans would otherwise take
  // minutes. A warning (a truncated or slightly corrupt file) still gives a whole image, as browsers
  // show one; only fatal errors fail.
  const int flags = TJFLAG_LIMITSCANS | TJFLAG_ACCURATEDCT;
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  Image img(w, ht);
  std::unique_ptr<unsigned char[]> cmyk_pixels;
  unsigned char* out = img.rgb.data();
  if (cmyk) {
    cmyk_pixels.reset(new unsigned char[static_cast<size_t>(w) * ht * 4]);
    out = cmyk_pixels.get();
  }
  if (tjDecompress2(h.get(), data, n, out, w, 0, ht, cmyk ? TJPF_CMYK : TJPF_RGB, flags) != 0 &&
      tjGetErrorCode(h.get()) != TJERR_WARNING)
    throw Error("cannot decode " + what + ": " + tjGetErrorStr2(h.get()));
  if (cmyk) cmyk_to_rgb(cmyk_pixels.get(), img);
  return img;
}

}  // namespace detect_internal
}  // namespace ninegrid
