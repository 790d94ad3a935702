#include "quant_images.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

namespace ninegrid::quant {

std::vector<std::string> list_images(const std::string& dir, int* ignored) {
  namespace fs = std::filesystem;
  static const std::set<std::string> kExtensions = {".jpg", ".jpeg", ".png", ".bmp", ".gif",
                                                    ".tga", ".pnm",  ".ppm", ".pgm"};
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error("calibration directory '" + dir + "' " + (fs::exists(dir, ec) ? "is not a directory" : "does not exist"));
  std::vector<std::string> images;
  int other = 0;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw Error("cannot read calibration directory '" + dir + "': " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error("cannot read calibration directory '" + dir + "': " + ec.message());
    std::error_code fe;
    if (!it->is_regular_file(fe) && !it->is_symlink(fe)) continue;
    std::string ext = it->path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (kExtensions.count(ext)) images.push_back(it->path().string());
    else ++other;
  }
  std::sort(images.begin(), images.end());
  if (ignored) *ignored = other;
  if (images.empty())
    throw Error("calibration directory '" + dir + "' holds no images (JPEG, PNG, BMP, GIF, TGA or PNM files" +
                (other ? ", " + std::to_string(other) + " other file" + (other == 1 ? "" : "s") + " ignored)" : ")"));
  return images;
}

Preprocess::Resize parse_resize(const std::string& name) {
  if (name == "stretch") return Preprocess::Resize::Stretch;
  if (name == "letterbox") return Preprocess::Resize::Letterbox;
  if (name == "crop") return Preprocess::Resize::CenterCrop;
  throw Error("unknown resize mode '" + name + "' (stretch, letterbox or crop)");
}

std::vector<float> preprocess_image(const Image& photo, const Preprocess& p) {
  Image sized;
  switch (p.resize) {
    case Preprocess::Resize::Stretch: sized = resize_bilinear(photo, p.width, p.height); break;
    case Preprocess::Resize::Letterbox: {
      const uint8_t black[3] = {0, 0, 0};
      sized = letterbox(photo, letterbox_geometry(photo.w, photo.h, p.width, p.height), black);
      break;
    }
    case Preprocess::Resize::CenterCrop: {
      // Scale so the photo covers the input, then cut the middle.
      const double s = std::max(static_cast<double>(p.width) / photo.w, static_cast<double>(p.height) / photo.h);
      const int w = std::max(p.width, static_cast<int>(std::lround(photo.w * s)));
      const int h = std::max(p.height, static_cast<int>(std::lround(photo.h * s)));
      const Image big = resize_bilinear(photo, w, h);
      sized = Image(p.width, p.height);
      const int x0 = (w - p.width) / 2, y0 = (h - p.height) / 2;
      for (int y = 0; y < p.height; ++y)
        std::copy(big.pixel(x0, y0 + y), big.pixel(x0, y0 + y) + 3 * p.width, sized.pixel(0, y));
      break;
    }
  }
  const size_t plane = static_cast<size_t>(p.width) * p.height;
  std::vector<float> out(plane * p.channels);
  for (size_t i = 0; i < plane; ++i) {
    const uint8_t* px = sized.rgb.data() + 3 * i;
    for (int c = 0; c < p.channels; ++c) {
      float v;
      if (p.channels == 1) v = 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
      else v = px[p.bgr ? 2 - c : c];
      v = (v - p.mean[c]) * p.scale[c];
      out[p.nhwc ? i * p.channels + c : c * plane + i] = v;
    }
  }
  return out;
}

}  // namespace ninegrid::quant
