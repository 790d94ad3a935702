// PNG files from 8-bit RGB pixels, for write_image. Each row is Paeth-filtered (the filter that leaves the
// smallest values on photos) and the rows are deflated by zlib at level 1 with run-length matching
// (Z_RLE): on a 512 x 512 photo about 4 times faster than stb_image_write's encoder, which tries every
// filter per row and then searches hash chains, and a third smaller (bench/REPORT.md, "Writing the drawn
// photos"). `ninegrid detect` writes one per photo, so the encoder's speed is part of its time per photo.
#pragma once

#include <cstdint>
#include <string>

namespace ninegrid {

// The bytes of a PNG file (8-bit truecolour, no interlacing) holding the w x h pixels at rgb, rows of
// 3 * w bytes top to bottom. w and h are at least 1; Error if zlib fails (out of memory).
std::string encode_png_rgb(const uint8_t* rgb, int w, int h);

}  // namespace ninegrid
