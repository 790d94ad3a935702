// PNG, BMP, GIF (first frame), TGA and PNM decoding with stb_image (Debian's libstb.so; the
// fuzz build compiles the same header in, see fuzz/stb_instrumented.c).
#include <stb/stb_image.h>

#include <cstdint>
#include <cstring>

#include "detect/image_decode.h"

namespace ninegrid {
namespace detect_internal {

namespace {

// The reason stb gives for its last failure. It is null when stb failed without setting one, and a
// null char* must not reach std::string.
std::string stb_code() {
  const char* reason = stbi_failure_reason();
  return reason && *reason ? reason : "no reason given";
}

std::string stb_reason() {
  // stb's reasons are terse codes ("outofdata", "bad huffman code"): say what they mean for the user too.
  return "the file is damaged, cut short or a variant ninegrid cannot read (stb_image: " + stb_code() + ")";
}

bool is_png(const unsigned char* data, size_t size) {
  return size >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0;
}

// Refuses a PNG one of whose chunks (before IEND) claims more bytes than the file has left. stb_image
// would fail on it too, but only after growing its IDAT buffer to the claimed length: a 4 KB file could
// make it allocate 2 GB (found by fuzz/image_fuzzer).
void check_png_chunks(const unsigned char* data, size_t size, const std::string& what) {
  size_t pos = 8;
  while (size - pos >= 8) {
    const uint32_t length = (uint32_t(data[pos]) << 24) | (uint32_t(data[pos + 1]) << 16) |
                            (uint32_t(data[pos + 2]) << 8) | data[pos + 3];
    const std::string type(reinterpret_cast<const char*>(data + pos + 4), 4);
    // 12 bytes of each chunk are its length, type and CRC.
    if (length > size - pos - 8 || size - pos - 8 - length < 4)
      throw Error("cannot read " + what + ": its PNG chunk at byte " + std::to_string(pos) + " claims " +
                  std::to_string(length) + " bytes, more than the file has left (truncated or corrupt)");
    if (type == "IEND") return;
    pos += 12 + static_cast<size_t>(length);
  }
  // Every PNG ends with an IEND chunk; stb would stop on the bytes missing from the next chunk's header
  // and name the chunk type it read from them (often nothing: a reason of "ID" or "").
  throw Error("cannot read " + what + ": it ends at byte " + std::to_string(size) +
              " before its PNG end chunk (IEND): the file is truncated");
}

// Binary PGM and PPM (stb_image reads no other PNM kinds).
bool is_pnm(const unsigned char* data, size_t size) {
  return size >= 2 && data[0] == 'P' && (data[1] == '5' || data[1] == '6');
}

bool is_pnm_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Refuses a PNM header with a number of 10 or more digits. stb_image 2.27 accumulates each number (width,
// height, maxval) in an int with no overflow check (UBSan: signed integer overflow in
// stbi__pnm_getinteger, found by fuzz/image_fuzzer), so a width of 4294967298 became 2. The header is
// walked by stb's rules: whitespace and '#' comments to the end of the line between the numbers. Nine
// digits cannot overflow, and stb accepts nothing that large anyway.
void check_pnm_header(const unsigned char* data, size_t size, const std::string& what) {
  size_t i = 2;  // after "P5" or "P6"
  for (int field = 0; field < 3; ++field) {
    for (;;) {
      while (i < size && is_pnm_space(data[i])) ++i;
      if (i >= size || data[i] != '#') break;
      while (i < size && data[i] != '\n' && data[i] != '\r') ++i;
    }
    size_t digits = 0;
    for (; i < size && data[i] >= '0' && data[i] <= '9'; ++i) ++digits;
    if (digits > 9)
      throw Error("cannot read " + what + ": its PNM header has a number of " + std::to_string(digits) +
                  " digits (width, height and maxval must each be below 10^9)");
  }
}

// A TGA (the one format stb accepts without a magic number) whose file is too short for the pixels its
// header declares. stb_image reads past the end as zeros, so 25 bytes declaring 33324 x 1059 pixels
// decoded into a 35-Mpixel image of nothing, seconds of work (found by fuzz/image_fuzzer). Uncompressed
// pixels take their own bytes; a run-length packet (one byte, then one pixel) covers at most 128.
void check_tga_size(const unsigned char* data, size_t size, int w, int h, const std::string& what) {
  static const char* const kMagics[] = {"\x89PNG", "\xFF\xD8", "GIF8", "BM", "8BPS", "#?RADIANCE", "#?RGBE", "P5", "P6"};
  for (const char* m : kMagics)
    if (size >= std::strlen(m) && std::memcmp(data, m, std::strlen(m)) == 0) return;
  // stb reads a header cut short as zeros past the end (a 17-byte file decoded into megapixels).
  if (size < 18)
    throw Error("cannot read " + what + ": a TGA file of " + std::to_string(size) +
                " bytes, shorter than its 18-byte header: truncated or corrupt");
  const int type = data[2], bits = data[16];
  const bool rle = type >= 9 && type <= 11;
  if (!(rle || (type >= 1 && type <= 3)) || bits == 0) return;
  // Colour-mapped images store indices of the header's index width; others store pixels.
  const uint64_t pixel_bytes = (static_cast<uint64_t>(bits) + 7) / 8;
  const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
  const uint64_t least = rle ? (pixels + 127) / 128 * (1 + pixel_bytes) : pixels * pixel_bytes;
  if (size - 18 < least)
    throw Error("cannot read " + what + ": a TGA header declaring " + std::to_string(w) + "x" + std::to_string(h) +
                " pixels, but the file has " + std::to_string(size) + " bytes, fewer than those pixels need (" +
                std::to_string(least) + "): truncated or corrupt");
}

}  // namespace

Image decode_with_stb(const unsigned char* data, size_t size, const std::string& what) {
  if (size > static_cast<size_t>(INT32_MAX)) throw Error("cannot read " + what + ": larger than 2 GB");
  const int n = static_cast<int>(size);
  // Photoshop and Radiance files are not photos a detector takes, and stb_image 2.27's PSD reader has
  // undefined behaviour on alpha it un-premultiplies (a float out of uint8's range, found by
  // fuzz/image_fuzzer): refused by their magic numbers before stb sees them.
  if ((size >= 4 && std::memcmp(data, "8BPS", 4) == 0) || (size >= 2 && std::memcmp(data, "#?", 2) == 0))
    throw Error("cannot read " + what + ": Photoshop (PSD) and Radiance (HDR) images are not supported; "
                "convert it to PNG or JPEG");
  if (is_pnm(data, size)) check_pnm_header(data, size, what);  // before stb parses the header
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, n, &w, &h, &channels))
    throw Error("cannot read " + what + ": not an image format ninegrid can decode (JPEG, PNG, BMP, GIF, " +
                "TGA, PNM; stb_image: " + stb_code() + ")");
  check_image_size(w, h, what);
  if (is_png(data, size)) check_png_chunks(data, size, what);
  check_tga_size(data, size, w, h, what);
  // stb_image 2.27 decodes 16-bit PNM samples in the wrong byte order, and converting their channels it
  // reads twice the buffer it allocated (ASan: heap-buffer-overflow in stbi__convert_16_to_8, found by
  // fuzz/image_fuzzer). stb's own header parser says whether the file is one.
  if (is_pnm(data, size) && stbi_is_16_bit_from_memory(data, n))
    throw Error("cannot read " + what + ": 16-bit PGM/PPM files (maxval above 255) are not supported");

  stbi_uc* pixels = stbi_load_from_memory(data, n, &w, &h, &channels, 3);
  if (!pixels) throw Error("cannot decode " + what + ": " + stb_reason());
  Image img;
  img.w = w;
  img.h = h;
  img.rgb.assign(pixels, pixels + static_cast<size_t>(w) * h * 3);
  stbi_image_free(pixels);
  return img;
}

}  // namespace detect_internal
}  // namespace ninegrid
