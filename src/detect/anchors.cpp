#include "detect/anchors.h"

#include <cmath>
#include <string>

#include "ninegrid/tensor.h"

namespace ninegrid::detect {

std::vector<Anchor> insightface_base_anchors(int base_size, const std::vector<float>& ratios,
                                             const std::vector<float>& scales) {
  std::vector<Anchor> out;
  for (float ratio : ratios) {
    // Same area as the base square, aspect h / w = ratio, rounded to whole pixels as insightface does.
    const float w = std::round(base_size / std::sqrt(ratio));
    const float h = std::round(w * ratio);
    for (float scale : scales) {
      Anchor a;
      a.w = w * scale;
      a.h = h * scale;
      out.push_back(a);
    }
  }
  return out;
}

std::vector<Anchor> retinaface_base_anchors(int stride) {
  switch (stride) {
    case 32: return insightface_base_anchors(16, {1.f}, {32.f, 16.f});
    case 16: return insightface_base_anchors(16, {1.f}, {8.f, 4.f});
    case 8: return insightface_base_anchors(16, {1.f}, {2.f, 1.f});
    default: throw Error("RetinaFace has no anchors for stride " + std::to_string(stride) + " (only 8, 16, 32)");
  }
}

std::vector<Anchor> retinaface_anchors(int stride, int rows, int cols) {
  const float base_centre = 16 / 2.f;
  std::vector<Anchor> out;
  for (const Anchor& base : retinaface_base_anchors(stride))
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        Anchor a = base;
        a.cx = static_cast<float>(c * stride) + base_centre;
        a.cy = static_cast<float>(r * stride) + base_centre;
        out.push_back(a);
      }
  return out;
}

std::vector<Anchor> pytorch_retinaface_priors(int input_w, int input_h) {
  if (input_w <= 0 || input_h <= 0)
    throw Error("PyTorch RetinaFace priors need a positive input size, got " + std::to_string(input_w) + "x" +
                std::to_string(input_h));
  struct Level {
    int step;
    float min_sizes[2];
  };
  const Level levels[] = {{8, {16, 32}}, {16, {64, 128}}, {32, {256, 512}}};
  std::vector<Anchor> out;
  for (const Level& lv : levels) {
    const int rows = (input_h + lv.step - 1) / lv.step;
    const int cols = (input_w + lv.step - 1) / lv.step;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        for (float m : lv.min_sizes) {
          Anchor a;
          a.cx = (c + 0.5f) * lv.step / input_w;
          a.cy = (r + 0.5f) * lv.step / input_h;
          a.w = m / input_w;
          a.h = m / input_h;
          out.push_back(a);
        }
  }
  return out;
}

const std::vector<BlazeFaceGrid>& blazeface_grids() {
  // MediaPipe's face_detection_front options: strides 8, 16, 16, 16 on a 128 input; the three stride-16
  // layers share one 8x8 grid, each contributing 2 anchors (aspect 1 plus the interpolated scale).
  static const std::vector<BlazeFaceGrid> grids = {{16, 2}, {8, 6}};
  return grids;
}

std::vector<Anchor> blazeface_anchors() {
  std::vector<Anchor> out;
  for (const BlazeFaceGrid& g : blazeface_grids())
    for (int r = 0; r < g.cells; ++r)
      for (int c = 0; c < g.cells; ++c)
        for (int k = 0; k < g.anchors_per_cell; ++k) {
          Anchor a;
          a.cx = (c + 0.5f) / g.cells;
          a.cy = (r + 0.5f) / g.cells;
          a.w = 1.f;
          a.h = 1.f;
          out.push_back(a);
        }
  return out;
}

}  // namespace ninegrid::detect
