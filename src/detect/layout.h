// Recognising a face detector from its inputs and outputs: which architecture it is, which output
// holds what, and how its input is laid out.
#pragma once

#include <string>
#include <vector>

#include "ninegrid/detect.h"
#include "ninegrid/ninegrid.h"

namespace ninegrid::detect {

struct DetectorLayout {
  FaceArch arch = FaceArch::Auto;
  std::string input;  // the image input's name
  bool nhwc = false;  // input is (1, H, W, 3) rather than (1, 3, H, W)
  // retinaface-ncnn: one level per stride (32, 16, 8). blazeface: one level per anchor grid (16x16 with
  // 2 anchors per cell, then 8x8 with 6), `landmarks` empty (keypoints follow the box in `boxes`).
  struct Level {
    int stride = 0;  // retinaface-ncnn only
    std::string scores, boxes, landmarks;
  };
  std::vector<Level> levels;
  // retinaface-onnx: the three outputs.
  std::string loc, conf, landms;
};

// The layout of a model with these inputs and outputs for `arch`, or with Auto for whichever supported
// architecture fits (insightface RetinaFace by its output names, then BlazeFace and PyTorch RetinaFace
// by their output shapes; unknown dimensions (-1) match anything). Throws Error saying what was
// expected and what the model has.
DetectorLayout match_detector_layout(FaceArch arch, const std::vector<ValueInfo>& inputs,
                                     const std::vector<ValueInfo>& outputs);

}  // namespace ninegrid::detect
