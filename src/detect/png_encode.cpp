#include "detect/png_encode.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "ninegrid/tensor.h"  // Error

namespace ninegrid {

namespace {

// The Paeth predictor of the PNG specification (section 9.4): of left, up and upper-left, the one nearest to
// left + up - upper-left, ties in that order.
inline uint8_t paeth(int left, int up, int upper_left) {
  const int p = left + up - upper_left;
  const int pa = std::abs(p - left), pb = std::abs(p - up), pc = std::abs(p - upper_left);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(left);
  return static_cast<uint8_t>(pb <= pc ? up : upper_left);
}

// Row y of the image as PNG stores it: filter type 4 (Paeth), then each byte minus its prediction from the
// byte 3 to the left (the same channel of the previous pixel) and the bytes above, none outside the image:
// the first pixel predicts from the byte above, the first row from the byte to the left.
void filter_row_paeth(const uint8_t* row, const uint8_t* above, int64_t row_bytes, uint8_t* out) {
  out[0] = 4;
  uint8_t* d = out + 1;
  if (!above) {
    for (int64_t i = 0; i < row_bytes; ++i) d[i] = static_cast<uint8_t>(row[i] - (i >= 3 ? row[i - 3] : 0));
    return;
  }
  for (int64_t i = 0; i < 3 && i < row_bytes; ++i) d[i] = static_cast<uint8_t>(row[i] - above[i]);
  for (int64_t i = 3; i < row_bytes; ++i) d[i] = static_cast<uint8_t>(row[i] - paeth(row[i - 3], above[i], above[i - 3]));
}

void put_u32(std::string& s, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  s.append(b, 4);
}

// A chunk: length, type, data, and the CRC-32 of type and data.
void put_chunk(std::string& s, const char type[4], const uint8_t* data, size_t size) {
  put_u32(s, static_cast<uint32_t>(size));
  s.append(type, 4);
  s.append(reinterpret_cast<const char*>(data), size);
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(type), 4);
  if (size > 0) crc = crc32(crc, data, static_cast<uInt>(size));
  put_u32(s, static_cast<uint32_t>(crc));
}

}  // namespace

std::string encode_png_rgb(const uint8_t* rgb, int w, int h) {
  if (w <= 0 || h <= 0) throw Error("encode_png_rgb: the image is empty");
  const int64_t row_bytes = int64_t(w) * 3;
  std::vector<uint8_t> filtered(static_cast<size_t>((row_bytes + 1) * h));
  for (int y = 0; y < h; ++y)
    filter_row_paeth(rgb + y * row_bytes, y > 0 ? rgb + (y - 1) * row_bytes : nullptr, row_bytes,
                     filtered.data() + y * (row_bytes + 1));

  // One zlib stream, what IDAT holds. Up to 1 GiB of rows (photos are at most 64 Mpixel, 192 MiB), so the
  // sizes fit zlib's 32-bit counts and the compressed chunk PNG's 2^31 - 1 bytes.
  if (filtered.size() > (size_t(1) << 30)) throw Error("encode_png_rgb: the image is too large");
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15, 8, Z_RLE) != Z_OK) throw Error("encode_png_rgb: zlib failed to start");
  std::vector<uint8_t> idat;
  try {
    idat.resize(deflateBound(&z, static_cast<uLong>(filtered.size())));
  } catch (...) {
    deflateEnd(&z);
    throw;
  }
  z.next_in = filtered.data();
  z.avail_in = static_cast<uInt>(filtered.size());
  z.next_out = idat.data();
  z.avail_out = static_cast<uInt>(idat.size());
  const int rc = deflate(&z, Z_FINISH);  // one call: deflateBound's room always suffices
  const size_t idat_size = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error("encode_png_rgb: zlib failed to compress the pixels");

  std::string png("\x89PNG\r\n\x1a\n", 8);
  uint8_t header[13];
  const uint32_t dims[2] = {static_cast<uint32_t>(w), static_cast<uint32_t>(h)};
  for (int k = 0; k < 2; ++k)
    for (int b = 0; b < 4; ++b) header[4 * k + b] = static_cast<uint8_t>(dims[k] >> (24 - 8 * b));
  header[8] = 8;   // bits per channel
  header[9] = 2;   // truecolour
  header[10] = 0;  // deflate
  header[11] = 0;  // adaptive filtering (a filter type per row)
  header[12] = 0;  // no interlacing
  put_chunk(png, "IHDR", header, sizeof header);
  put_chunk(png, "IDAT", idat.data(), idat_size);
  put_chunk(png, "IEND", nullptr, 0);
  return png;
}

}  // namespace ninegrid
