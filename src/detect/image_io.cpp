// Reading and writing photos: files in, the decoder for their format (image_decode.h); PNG out through
// png_encode.h, JPEG through stb_image_write.
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <stb/stb_image_write.h>

#include "detect/image_decode.h"
#include "detect/png_encode.h"
#include "ninegrid/detect.h"

namespace ninegrid {

namespace detect_internal {

void check_image_size(int w, int h, const std::string& what) {
  if (w <= 0 || h <= 0 || static_cast<long long>(w) * h > kMaxPixels)
    throw Error("cannot read " + what + ": " + std::to_string(w) + "x" + std::to_string(h) +
                " pixels is outside the supported size (at most 64 Mpixel)");
}

}  // namespace detect_internal

namespace {

std::string read_all(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open image '" + path + "': " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  // A directory opens but fails to read (EISDIR).
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) throw Error("cannot read image '" + path + "': " + std::strerror(err));
  return bytes;
}

std::string lower_extension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Decodes an image held in memory with the decoder for its format. `what` names it in errors.
Image decode(const void* bytes, size_t size, const std::string& what) {
  using namespace detect_internal;
  if (size == 0) throw Error("cannot read " + what + ": it is empty");
  const auto* data = static_cast<const unsigned char*>(bytes);
  return is_jpeg(data, size) ? decode_jpeg(data, size, what) : decode_with_stb(data, size, what);
}

}  // namespace

Image decode_image(const void* data, size_t size) { return decode(data, size, "image"); }

Image load_image(const std::string& path) {
  const std::string bytes = read_all(path);
  return decode(bytes.data(), bytes.size(), "image '" + path + "'");
}

void write_image(const std::string& path, const Image& image) {
  if (image.w <= 0 || image.h <= 0 || image.rgb.size() != static_cast<size_t>(image.w) * image.h * 3)
    throw Error("cannot write image '" + path + "': the image is empty or its pixel buffer has the wrong size");
  const std::string ext = lower_extension(path);
  int ok = 0;
  if (ext == "png") {
    const std::string png = encode_png_rgb(image.rgb.data(), image.w, image.h);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw Error("cannot write image '" + path + "': " + std::strerror(errno));
    ok = std::fwrite(png.data(), 1, png.size(), f) == png.size();
    const int err = errno;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) {
      std::remove(path.c_str());  // no truncated file left behind
      throw Error("cannot write image '" + path + "': " + std::strerror(err ? err : errno));
    }
  } else if (ext == "jpg" || ext == "jpeg") {
    ok = stbi_write_jpg(path.c_str(), image.w, image.h, 3, image.rgb.data(), 92);
  } else {
    throw Error("cannot write image '" + path + "': unknown extension (use .png, .jpg or .jpeg)");
  }
  if (!ok) throw Error("cannot write image '" + path + "' (is the directory there and writable?)");
}

}  // namespace ninegrid
