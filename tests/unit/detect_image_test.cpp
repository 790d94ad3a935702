// Image files, resampling, letterboxing and drawing. Expected pixel values come from PIL (the same
// photo and resizes done with Pillow's BILINEAR filter) or from hand computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ninegrid/detect.h"

namespace ninegrid {
namespace {

const char* kAstronaut = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png";

Image grey_row(std::vector<uint8_t> values) {
  Image img(static_cast<int>(values.size()), 1);
  for (size_t i = 0; i < values.size(); ++i)
    for (int c = 0; c < 3; ++c) img.rgb[i * 3 + c] = values[i];
  return img;
}

std::string expect_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

TEST(DetectImage, LoadsThePhoto) {
  Image img = load_image(kAstronaut);
  ASSERT_EQ(img.w, 512);
  ASSERT_EQ(img.h, 512);
  // Pillow reads these pixels of the same file.
  EXPECT_EQ(img.pixel(0, 0)[0], 154);
  EXPECT_EQ(img.pixel(0, 0)[1], 147);
  EXPECT_EQ(img.pixel(0, 0)[2], 151);
  EXPECT_EQ(img.pixel(220, 120)[0], 219);
  EXPECT_EQ(img.pixel(220, 120)[1], 182);
  EXPECT_EQ(img.pixel(220, 120)[2], 152);
}

TEST(DetectImage, MissingOrNonImageFilesAreErrorsNamingTheFile) {
  const std::string missing = testing::TempDir() + "/no_such_photo.jpg";
  std::string msg = expect_error([&] { load_image(missing); });
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;

  const std::string text = testing::TempDir() + "/not_a_photo.png";
  std::ofstream(text) << "hello, I am a text file\n";
  msg = expect_error([&] { load_image(text); });
  EXPECT_NE(msg.find(text), std::string::npos) << msg;

  const std::string empty = testing::TempDir() + "/empty.png";
  std::ofstream(empty).close();
  msg = expect_error([&] { load_image(empty); });
  EXPECT_NE(msg.find(empty), std::string::npos) << msg;

  // A PNG cut short: the header is readable, the pixels are not.
  std::ifstream f(kAstronaut, std::ios::binary);
  std::string head(4096, '\0');
  f.read(&head[0], static_cast<std::streamsize>(head.size()));
  const std::string cut = testing::TempDir() + "/cut.png";
  std::ofstream(cut, std::ios::binary) << head;
  msg = expect_error([&] { load_image(cut); });
  EXPECT_NE(msg.find(cut), std::string::npos) << msg;

  EXPECT_NE(expect_error([&] { load_image(testing::TempDir()); }).find("cannot"), std::string::npos);
  std::remove(text.c_str());
  std::remove(empty.c_str());
  std::remove(cut.c_str());
}

TEST(DetectImage, PngRoundTripAndJpegWrite) {
  Image img(5, 3);
  for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] = static_cast<uint8_t>(i * 17);
  const std::string png = testing::TempDir() + "/rt.png";
  write_image(png, img);
  Image back = load_image(png);
  ASSERT_EQ(back.w, 5);
  ASSERT_EQ(back.h, 3);
  EXPECT_EQ(back.rgb, img.rgb);
  const std::string jpg = testing::TempDir() + "/rt.JPG";
  write_image(jpg, img);
  EXPECT_EQ(load_image(jpg).w, 5);
  EXPECT_THROW(write_image(testing::TempDir() + "/x.gif", img), Error);
  const std::string missing_dir = testing::TempDir() + "/no/such/dir/x.png";
  const std::string why = expect_error([&] { write_image(missing_dir, img); });
  EXPECT_NE(why.find(missing_dir), std::string::npos) << why;
  EXPECT_NE(why.find("No such file or directory"), std::string::npos) << why;  // the system's reason
  EXPECT_THROW(write_image(png, Image()), Error);
  std::remove(png.c_str());
  std::remove(jpg.c_str());
}

// CRC-32 (ISO-HDLC, as PNG's chunks carry), bit by bit: written here on its own, not zlib's.
uint32_t crc32_bitwise(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t big_endian_u32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint32_t(uint8_t(s[at + 3]));
}

// write_image's PNG encoder: random pixels (the filter's predictions wrap around bytes), smooth gradients
// and flat areas (long runs), widths of 1 to a few hundred pixels and single rows; stb_image reads back the
// same pixels, and the file is PNG's structure: signature, IHDR with the size and 8-bit truecolour, IDAT,
// an empty IEND last, every chunk's CRC right.
TEST(DetectImage, PngEncoderRoundTripsThroughAnotherDecoder) {
  std::mt19937 rng(2026);
  const int sizes[][2] = {{1, 1}, {2, 1}, {1, 3}, {5, 3}, {257, 129}, {640, 17}, {3, 300}};
  const std::string path = testing::TempDir() + "/encoder.png";
  for (const auto& size : sizes)
    for (int pattern = 0; pattern < 3; ++pattern) {
      Image img(size[0], size[1]);
      for (int y = 0; y < img.h; ++y)
        for (int x = 0; x < img.w; ++x)
          for (int c = 0; c < 3; ++c) {
            uint8_t& v = img.rgb[(static_cast<size_t>(y) * img.w + x) * 3 + c];
            v = pattern == 0 ? static_cast<uint8_t>(rng()) : pattern == 1 ? static_cast<uint8_t>(x * 3 + y * 5 + c * 70)
                                                                          : static_cast<uint8_t>(x < img.w / 2 ? 0 : 255);
          }
      const std::string what = std::to_string(img.w) + "x" + std::to_string(img.h) + " pattern " + std::to_string(pattern);
      write_image(path, img);
      const Image back = load_image(path);
      ASSERT_EQ(back.w, img.w) << what;
      ASSERT_EQ(back.h, img.h) << what;
      EXPECT_EQ(back.rgb, img.rgb) << what;

      std::ifstream f(path, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      const std::string file = ss.str();
      ASSERT_GT(file.size(), 8u) << what;
      EXPECT_EQ(file.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << what;
      std::vector<std::string> types;
      size_t at = 8;
      while (at + 12 <= file.size()) {
        const uint32_t length = big_endian_u32(file, at);
        ASSERT_LE(at + 12 + length, file.size()) << what;
        const std::string type_and_data = file.substr(at + 4, 4 + length);
        EXPECT_EQ(big_endian_u32(file, at + 8 + length), crc32_bitwise(type_and_data)) << what << " " << types.size();
        types.push_back(type_and_data.substr(0, 4));
        if (types.back() == "IHDR") {
          ASSERT_EQ(length, 13u) << what;
          EXPECT_EQ(big_endian_u32(file, at + 8), static_cast<uint32_t>(img.w)) << what;
          EXPECT_EQ(big_endian_u32(file, at + 12), static_cast<uint32_t>(img.h)) << what;
          EXPECT_EQ(file.substr(at + 16, 5), std::string("\x08\x02\x00\x00\x00", 5)) << what;
        }
        if (types.back() == "IEND") {
          EXPECT_EQ(length, 0u) << what;
        }
        at += 12 + length;
      }
      EXPECT_EQ(at, file.size()) << what;
      EXPECT_EQ(types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"})) << what;
    }
  std::remove(path.c_str());
}

TEST(DetectImage, ResizeMatchesPillowBilinear) {
  // Enlarging is bilinear with half-pixel centres: [0, 100] -> [0, 25, 75, 100].
  Image up = resize_bilinear(grey_row({0, 100}), 4, 1);
  EXPECT_EQ(up.rgb[0 * 3], 0);
  EXPECT_EQ(up.rgb[1 * 3], 25);
  EXPECT_EQ(up.rgb[2 * 3], 75);
  EXPECT_EQ(up.rgb[3 * 3], 100);
  // Shrinking 2x widens the triangle to radius 2: weights 0.75, 0.75, 0.25 (and mirrored) over 1.75.
  Image down = resize_bilinear(grey_row({0, 100, 200, 40}), 2, 1);
  EXPECT_EQ(down.rgb[0], 71);   // (75 + 50) / 1.75
  EXPECT_EQ(down.rgb[3], 117);  // (25 + 150 + 30) / 1.75
  // A flat image stays flat at any size.
  Image flat(7, 5);
  std::fill(flat.rgb.begin(), flat.rgb.end(), 200);
  for (const Image& r : {resize_bilinear(flat, 3, 2), resize_bilinear(flat, 20, 13), resize_bilinear(flat, 1, 1)})
    for (uint8_t v : r.rgb) ASSERT_EQ(v, 200);
  EXPECT_THROW(resize_bilinear(flat, 0, 4), Error);
  EXPECT_THROW(resize_bilinear(Image(), 4, 4), Error);
}

// resize_bilinear's separable triangle filter, written plainly here: per axis and output coordinate the
// source range and normalised weights, a horizontal pass into float rows, then a vertical pass rounded to
// bytes, each sum over its taps in order from zero.
Image resize_twin(const Image& src, int w, int h) {
  struct Axis {
    std::vector<int> first, count;
    std::vector<std::vector<float>> weights;
  };
  auto axis = [](int n_src, int n_dst) {
    Axis a;
    const double scale = static_cast<double>(n_src) / n_dst, radius = std::max(scale, 1.0);
    for (int o = 0; o < n_dst; ++o) {
      const double centre = (o + 0.5) * scale;
      const int taps = static_cast<int>(std::ceil(radius)) * 2 + 1;
      int lo = std::max(0, static_cast<int>(std::floor(centre - radius)));
      int hi = std::min({n_src, static_cast<int>(std::ceil(centre + radius)), lo + taps});
      std::vector<double> v;
      double total = 0;
      for (int i = lo; i < hi; ++i) {
        const double t = std::fabs((i + 0.5 - centre) / radius);
        v.push_back(t < 1 ? 1 - t : 0);
        total += v.back();
      }
      std::vector<float> wt;
      for (double x : v) wt.push_back(static_cast<float>(static_cast<float>(x) / total));
      a.first.push_back(lo);
      a.count.push_back(hi - lo);
      a.weights.push_back(wt);
    }
    return a;
  };
  const Axis ax = axis(src.w, w), ay = axis(src.h, h);
  std::vector<float> rows(static_cast<size_t>(src.h) * w * 3);
  for (int y = 0; y < src.h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        float sum = 0;
        for (int k = 0; k < ax.count[x]; ++k) sum += ax.weights[x][k] * src.pixel(ax.first[x] + k, y)[c];
        rows[(static_cast<size_t>(y) * w + x) * 3 + c] = sum;
      }
  Image out(w, h);
  for (int y = 0; y < h; ++y)
    for (int i = 0; i < w * 3; ++i) {
      float sum = 0;
      for (int k = 0; k < ay.count[y]; ++k) sum += ay.weights[y][k] * rows[static_cast<size_t>(ay.first[y] + k) * w * 3 + i];
      out.rgb[static_cast<size_t>(y) * w * 3 + i] = static_cast<uint8_t>(std::min(255.f, std::max(0.f, sum + 0.5f)));
    }
  return out;
}

// The optimised resize (float rows, four lanes per pixel) against its plain twin above, byte for byte:
// random photos-sized and tiny images, enlarged, shrunk (wider filters) and both at once, and the photo.
TEST(DetectImage, ResizeMatchesItsPlainTwin) {
  std::mt19937 rng(77);
  const int cases[][4] = {{512, 512, 640, 640}, {600, 400, 640, 427}, {37, 23, 5, 90}, {1, 1, 3, 2}, {9, 1, 1, 1},
                          {640, 480, 128, 96},  {7, 300, 40, 41},     {128, 128, 640, 640}};
  for (const auto& c : cases) {
    Image src(c[0], c[1]);
    for (uint8_t& v : src.rgb) v = static_cast<uint8_t>(rng());
    const std::string what = std::to_string(c[0]) + "x" + std::to_string(c[1]) + " -> " + std::to_string(c[2]) + "x" +
                             std::to_string(c[3]);
    EXPECT_EQ(resize_bilinear(src, c[2], c[3]).rgb, resize_twin(src, c[2], c[3]).rgb) << what;
  }
  const Image photo = load_image(kAstronaut);
  EXPECT_EQ(resize_bilinear(photo, 640, 640).rgb, resize_twin(photo, 640, 640).rgb);
  EXPECT_EQ(resize_bilinear(photo, 128, 77).rgb, resize_twin(photo, 128, 77).rgb);
}

TEST(DetectImage, LetterboxGeometryRoundTrip) {
  // A 512x256 photo into 128x128: scale 1/4, 128x64, centred with 32 rows above and below.
  LetterboxGeometry g = letterbox_geometry(512, 256, 128, 128);
  EXPECT_EQ(g.scaled_w, 128);
  EXPECT_EQ(g.scaled_h, 64);
  EXPECT_EQ(g.pad_x, 0);
  EXPECT_EQ(g.pad_y, 32);
  EXPECT_FLOAT_EQ(g.to_source_x(64), 256.f);
  EXPECT_FLOAT_EQ(g.to_source_y(32), 0.f);
  EXPECT_FLOAT_EQ(g.to_source_y(96), 256.f);
  EXPECT_FLOAT_EQ(g.to_canvas_y(128), 64.f);
  // Tall photo 300x500 into 640x640: scale 1.28, 384x640, pad 128 on the left.
  LetterboxGeometry t = letterbox_geometry(300, 500, 640, 640);
  EXPECT_EQ(t.scaled_w, 384);
  EXPECT_EQ(t.pad_x, 128);
  EXPECT_EQ(t.pad_y, 0);
  for (float x : {0.f, 17.5f, 150.f, 300.f}) EXPECT_NEAR(t.to_source_x(t.to_canvas_x(x)), x, 1e-3);
  for (float y : {0.f, 99.25f, 500.f}) EXPECT_NEAR(t.to_source_y(t.to_canvas_y(y)), y, 1e-3);
  EXPECT_THROW(letterbox_geometry(0, 10, 128, 128), Error);
}

TEST(DetectImage, LetterboxPlacesTheScaledImageOnTheFill) {
  Image src(4, 2);
  std::fill(src.rgb.begin(), src.rgb.end(), 100);
  LetterboxGeometry g = letterbox_geometry(4, 2, 8, 8);  // scaled 8x4 at y = 2
  const uint8_t fill[3] = {1, 2, 3};
  Image out = letterbox(src, g, fill);
  ASSERT_EQ(out.w, 8);
  ASSERT_EQ(out.h, 8);
  EXPECT_EQ(out.pixel(0, 0)[0], 1);
  EXPECT_EQ(out.pixel(7, 1)[2], 3);
  EXPECT_EQ(out.pixel(0, 2)[0], 100);
  EXPECT_EQ(out.pixel(7, 5)[1], 100);
  EXPECT_EQ(out.pixel(3, 6)[1], 2);
  // A tall image: the fill goes in the columns beside it, on every row.
  Image tall(2, 4);
  std::fill(tall.rgb.begin(), tall.rgb.end(), 100);
  const LetterboxGeometry t = letterbox_geometry(2, 4, 8, 8);  // scaled 4x8 at x = 2
  Image side = letterbox(tall, t, fill);
  for (int y = 0; y < 8; ++y) {
    for (int x : {0, 1, 6, 7})
      for (int c = 0; c < 3; ++c) EXPECT_EQ(side.pixel(x, y)[c], fill[c]) << x << "," << y;
    for (int x = 2; x < 6; ++x) EXPECT_EQ(side.pixel(x, y)[0], 100) << x << "," << y;
  }
}

TEST(DetectImage, DrawsBoxAndLandmarksAndClips) {
  Image img(100, 100);
  Face f;
  f.x1 = 20;
  f.y1 = 30;
  f.x2 = 60;
  f.y2 = 80;
  f.score = 0.9f;
  for (int k = 0; k < 5; ++k) {
    f.landmarks[k][0] = 30.f + 5 * k;
    f.landmarks[k][1] = 50.f;
  }
  Face outside = f;  // mostly beyond the image: clipped, no crash
  outside.x1 = -50;
  outside.x2 = 1e9f;
  outside.landmarks[0][0] = -1e9f;
  draw_faces(img, {f, outside});
  EXPECT_EQ(img.pixel(40, 30)[1], 230);  // on the top edge: green
  EXPECT_EQ(img.pixel(40, 30)[0], 0);
  EXPECT_EQ(img.pixel(20, 55)[1], 230);  // left edge
  EXPECT_EQ(img.pixel(45, 65)[1], 0);    // inside the box, away from landmarks: untouched
  EXPECT_EQ(img.pixel(40, 50)[0], 255);  // landmark 2 (nose): yellow
  EXPECT_EQ(img.pixel(40, 50)[1], 220);
  EXPECT_EQ(img.pixel(5, 5)[1], 0);  // far from everything
}

}  // namespace
}  // namespace ninegrid
