// Calibration images for `ninegrid quantize`: finding them in a directory and turning each into the
// tensor the model expects (size, resize mode, channel order, mean and scale, NCHW or NHWC).
#pragma once

#include <string>
#include <vector>

#include "ninegrid/detect.h"

namespace ninegrid::quant {

// How a photo becomes a model input: x = (pixel - mean[c]) * scale[c], pixel in 0..255, c in the model's
// channel order (after --bgr).
struct Preprocess {
  enum class Resize { Stretch, Letterbox, CenterCrop };
  int width = 0, height = 0;
  int channels = 3;  // 3: colour (RGB or BGR); 1: grey (ITU-R 601 luma)
  bool bgr = false;
  bool nhwc = false;
  Resize resize = Resize::Stretch;
  float mean[3] = {0, 0, 0};
  float scale[3] = {1.f / 255, 1.f / 255, 1.f / 255};
};

// The image files (JPEG, PNG, BMP, GIF, TGA, PNM by extension, any case: what load_image reads) directly in `dir`,
// sorted by name. Throws Error when `dir` is not a readable directory or holds no image; `ignored` gets
// how many other files were skipped.
std::vector<std::string> list_images(const std::string& dir, int* ignored);

// The model input for one photo: channels * height * width floats in the layout `p` asks for.
std::vector<float> preprocess_image(const Image& photo, const Preprocess& p);

// "stretch", "letterbox", "crop"; throws Error otherwise.
Preprocess::Resize parse_resize(const std::string& name);

}  // namespace ninegrid::quant
