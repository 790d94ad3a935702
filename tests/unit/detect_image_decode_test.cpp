// decode_image on inputs found by fuzz/image_fuzzer and on the rarer JPEG forms. Every input is built
// here: small images encoded with stb_image_write or TurboJPEG, then edited byte by byte.
#include <gtest/gtest.h>

#include <stb/stb_image_write.h>
#include <turbojpeg.h>

#include <cstdint>
#include <string>

#include "ninegrid/detect.h"

namespace ninegrid {
namespace {

void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

// An 8x8 image of a horizontal ramp, encoded as JPEG (quality 90) or PNG in memory.
std::string encoded(bool jpeg) {
  uint8_t rgb[8 * 8 * 3];
  for (int i = 0; i < 8 * 8 * 3; ++i) rgb[i] = static_cast<uint8_t>((i % 24) * 10);
  std::string out;
  if (jpeg) stbi_write_jpg_to_func(append, &out, 8, 8, 3, rgb, 90);
  else stbi_write_png_to_func(append, &out, 8, 8, 3, rgb, 8 * 3);
  return out;
}

std::string error_of(const std::string& bytes) {
  try {
    decode_image(bytes.data(), bytes.size());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DetectImageDecode, DecodesJpegAndPngFromMemory) {
  for (bool jpeg : {true, false}) {
    const std::string bytes = encoded(jpeg);
    Image img = decode_image(bytes.data(), bytes.size());
    ASSERT_EQ(img.w, 8);
    ASSERT_EQ(img.h, 8);
    // The ramp survives (JPEG only approximately): pixel 5 of row 0 is 150, 160, 170.
    EXPECT_NEAR(img.pixel(5, 0)[0], 150, jpeg ? 12 : 0);
    EXPECT_NEAR(img.pixel(5, 0)[2], 170, jpeg ? 12 : 0);
  }
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
}

// Found by fuzz/image_fuzzer: a DHT segment may declare up to 16 x 255 codes, but a Huffman table holds
// 256. Debian 12's stb_image (2.27) wrote the excess past its table (UBSan: index 257 out of bounds for
// stbi_uc[257]) and then went on to decode the image as if nothing had happened; JPEG now goes through
// libjpeg-turbo, which refuses the table.
TEST(DetectImageDecode, JpegHuffmanTableWithMoreThan256CodesIsRefused) {
  std::string jpeg = encoded(true);
  // AC table 3 (unused by the image): 150 codes of length 15 and 150 of length 16, then 300 symbols.
  std::string dht = "\xFF\xC4";
  const int length = 2 + 1 + 16 + 300;
  dht += static_cast<char>(length >> 8);
  dht += static_cast<char>(length & 0xFF);
  dht += '\x13';
  dht += std::string(14, '\0');
  dht += '\x96';
  dht += '\x96';
  for (int i = 0; i < 300; ++i) dht += static_cast<char>(i & 0xFF);
  jpeg.insert(2, dht);  // right after SOI
  const std::string msg = error_of(jpeg);
  EXPECT_NE(msg.find("Huffman"), std::string::npos) << msg;
}

// Found by fuzz/image_fuzzer: stb_image skips 0xFF fill bytes before a JPEG's start marker, so a file
// beginning FF FF ... FF D8 with the oversized Huffman table above went to stb's JPEG decoder (the same
// write past its table) instead of libjpeg-turbo. Such files now go to libjpeg-turbo, which refuses them:
// a valid JPEG behind fill bytes (stb decoded it) is an error too.
TEST(DetectImageDecode, JpegBehindFillBytesNeverReachesStb) {
  const std::string padded = std::string(5, '\xFF') + encoded(true).substr(1);  // FF x5, then D8 ...
  const std::string msg = error_of(padded);
  EXPECT_NE(msg.find("not a JPEG ninegrid can decode"), std::string::npos) << msg;
  EXPECT_NE(error_of("\xFF\xFF").find("cannot"), std::string::npos);  // all fill bytes: still an error
}

// Adobe CMYK JPEGs (inverted ink: 255 is none) decode to RGB as each channel times K.
TEST(DetectImageDecode, CmykJpegIsConvertedToRgb) {
  // Stored (255, 0, 0, 255): no cyan ink, full magenta and yellow, no black: red. And K = 128: half grey.
  uint8_t cmyk[8 * 8 * 4];
  for (int i = 0; i < 64; ++i) {
    const bool top = i < 32;
    cmyk[i * 4 + 0] = 255;
    cmyk[i * 4 + 1] = top ? 0 : 255;
    cmyk[i * 4 + 2] = top ? 0 : 255;
    cmyk[i * 4 + 3] = top ? 255 : 128;
  }
  tjhandle h = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(h, cmyk, 8, 0, 8, TJPF_CMYK, &buf, &size, TJSAMP_444, 100, 0), 0) << tjGetErrorStr2(h);
  const std::string bytes(reinterpret_cast<char*>(buf), size);
  tjFree(buf);
  tjDestroy(h);

  Image img = decode_image(bytes.data(), bytes.size());
  ASSERT_EQ(img.w, 8);
  EXPECT_NEAR(img.pixel(2, 1)[0], 255, 3);
  EXPECT_NEAR(img.pixel(2, 1)[1], 0, 3);
  EXPECT_NEAR(img.pixel(2, 1)[2], 0, 3);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(img.pixel(2, 6)[c], 128, 3);
}

// Found by fuzz/image_fuzzer: a few KB PNG whose IDAT chunk claims 2 GB made stb_image grow its buffer to
// that size before finding the bytes missing. Such a file is now refused before stb sees it, saying why.
TEST(DetectImageDecode, PngChunkClaimingMoreThanTheFileIsRefusedFirst) {
  std::string png = encoded(false);
  const size_t idat = png.find("IDAT") - 4;
  ASSERT_LT(idat, png.size());
  png[idat] = '\x7F';
  png[idat + 1] = png[idat + 2] = png[idat + 3] = '\xF0';
  const std::string msg = error_of(png);
  EXPECT_NE(msg.find("more than the file has left"), std::string::npos) << msg;
}

// Found by fuzz/image_fuzzer: a PGM with maxval above 255 (16-bit samples), asked for RGB, made stb_image
// 2.27 convert the samples as 8-bit and then read twice that buffer as 16-bit (heap-buffer-overflow in
// stbi__convert_16_to_8). 16-bit PNM is refused; 8-bit PNM still decodes.
TEST(DetectImageDecode, SixteenBitPnmIsRefusedEightBitDecodes) {
  const std::string grey16 = std::string("P5\n2 2\n65535\n") + std::string("\x12\x34\x56\x78\x9a\xbc\xde\xf0", 8);
  EXPECT_NE(error_of(grey16).find("16-bit"), std::string::npos) << error_of(grey16);
  const std::string rgb8 = std::string("P6\n2 1\n255\n") + std::string("\x10\x20\x30\x40\x50\x60", 6);
  Image img = decode_image(rgb8.data(), rgb8.size());
  ASSERT_EQ(img.w, 2);
  EXPECT_EQ(img.pixel(1, 0)[2], 0x60);
}

// Found by fuzz/image_fuzzer: stb_image 2.27 reads PNM header numbers into an int without an overflow
// check, so a PPM claiming a width of 2^32 + 2 decoded as an image 2 pixels wide.
TEST(DetectImageDecode, PnmHeaderNumberBeyondAnIntIsRefused) {
  const std::string ppm = std::string("P6\n4294967298 1\n255\n") + std::string(6, '\x40');
  const std::string msg = error_of(ppm);
  EXPECT_NE(msg.find("PNM header"), std::string::npos) << msg;
  // Comments and whitespace between the numbers are skipped as stb skips them.
  const std::string commented = std::string("P6 # a comment 12345678901\n2 1\n#\n255\n") + std::string(6, '\x40');
  EXPECT_EQ(decode_image(commented.data(), commented.size()).w, 2);
}

// Issue 17: an undecodable image was reported with an empty reason ("cannot decode image 'x': "). Bytes
// of no known format, a PNG cut short and a JPEG cut inside its headers each say what was wrong.
TEST(DetectImageDecode, UndecodableImagesSayWhy) {
  auto reason_after_colon = [](const std::string& msg) {
    const size_t colon = msg.rfind(": ");
    return colon == std::string::npos ? std::string() : msg.substr(colon + 2);
  };
  const std::string garbage = "this is a text file, not an image";
  EXPECT_NE(error_of(garbage).find("not an image format"), std::string::npos) << error_of(garbage);
  for (bool jpeg : {true, false}) {
    const std::string bytes = encoded(jpeg);
    // A JPEG missing its end still decodes (as browsers show one); one cut inside its headers does not.
    const std::string cut = bytes.substr(0, jpeg ? 20 : bytes.size() / 2);
    const std::string msg = error_of(cut);
    ASSERT_FALSE(msg.empty()) << (jpeg ? "JPEG" : "PNG") << " cut short decoded without an error";
    EXPECT_GE(reason_after_colon(msg).size(), 4u) << msg;
  }
}

// Found by fuzz/image_fuzzer: a 25-byte TGA declaring 33324 x 1059 run-length-coded pixels decoded (past
// the file's end, as zeros) into a 35-Mpixel image, seconds of work; a TGA too short for its pixels is
// refused. A whole 2x2 uncompressed TGA still decodes, bottom row first as the format stores it.
TEST(DetectImageDecode, TgaShorterThanItsPixelsIsRefused) {
  auto tga_header = [](int type, int w, int h, int bits) {
    std::string hd(18, '\0');
    hd[2] = static_cast<char>(type);
    hd[12] = static_cast<char>(w & 255);
    hd[13] = static_cast<char>(w >> 8);
    hd[14] = static_cast<char>(h & 255);
    hd[15] = static_cast<char>(h >> 8);
    hd[16] = static_cast<char>(bits);
    return hd;
  };
  const std::string bomb = tga_header(11, 33324, 1059, 8) + std::string(7, '\x7f');
  EXPECT_NE(error_of(bomb).find("TGA header declaring 33324x1059"), std::string::npos) << error_of(bomb);
  const std::string cut_header = tga_header(3, 2048, 2048, 8).substr(0, 17);
  EXPECT_NE(error_of(cut_header).find("18-byte header"), std::string::npos) << error_of(cut_header);
  const std::string short_raw = tga_header(2, 64, 64, 24) + std::string(100, '\x10');
  EXPECT_NE(error_of(short_raw).find("truncated"), std::string::npos) << error_of(short_raw);
  // BGR pixels, bottom-left first: blue, green / red, white.
  const std::string pixels = std::string("\xff\x00\x00" "\x00\xff\x00" "\x00\x00\xff" "\xff\xff\xff", 12);
  const std::string whole = tga_header(2, 2, 2, 24) + pixels;
  Image img = decode_image(whole.data(), whole.size());
  ASSERT_EQ(img.w, 2);
  ASSERT_EQ(img.h, 2);
  EXPECT_EQ(img.pixel(0, 1)[2], 255);  // bottom-left is blue
  EXPECT_EQ(img.pixel(0, 0)[0], 255);  // top-left is red
}

// Found by fuzz/image_fuzzer: stb_image 2.27's PSD reader converts an out-of-range float to uint8 (UB)
// when it un-premultiplies alpha. PSD and HDR files are refused by their magic numbers.
TEST(DetectImageDecode, PsdAndHdrAreRefusedByName) {
  const std::string psd = std::string("8BPS\0\1", 6) + std::string(40, '\0');
  EXPECT_NE(error_of(psd).find("Photoshop (PSD)"), std::string::npos) << error_of(psd);
  const std::string hdr = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 2\n" + std::string(16, '\x40');
  EXPECT_NE(error_of(hdr).find("Radiance (HDR)"), std::string::npos) << error_of(hdr);
}

}  // namespace
}  // namespace ninegrid
