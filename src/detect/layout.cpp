#include "detect/layout.h"

#include <algorithm>

#include "detect/anchors.h"

namespace ninegrid::detect {

namespace {

// A dimension that is unknown (-1) or equal to `want`.
bool dim_is(const Shape& s, int axis, int64_t want) {
  if (axis < 0) axis += static_cast<int>(s.size());
  if (axis < 0 || axis >= static_cast<int>(s.size())) return false;
  return s[axis] < 0 || s[axis] == want;
}

const ValueInfo* find_output(const std::vector<ValueInfo>& outputs, const std::string& name) {
  for (const ValueInfo& o : outputs)
    if (o.name == name) return &o;
  return nullptr;
}

std::string describe(const std::vector<ValueInfo>& values) {
  std::string s;
  for (const ValueInfo& v : values) s += (s.empty() ? "" : ", ") + v.name + " " + shape_str(v.shape);
  return s.empty() ? "none" : s;
}

// Returns "" on success, else why the model is not an insightface RetinaFace.
std::string match_retinaface_ncnn(const std::vector<ValueInfo>& inputs, const std::vector<ValueInfo>& outputs,
                                  DetectorLayout& layout) {
  if (inputs.size() != 1) return "it needs exactly one input";
  const Shape& in = inputs[0].shape;
  if (in.size() != 4 || !dim_is(in, 1, 3)) return "its input must be (1, 3, H, W)";
  layout = DetectorLayout();
  layout.arch = FaceArch::RetinaFaceNcnn;
  layout.input = inputs[0].name;
  for (int stride : {32, 16, 8}) {
    DetectorLayout::Level lv;
    lv.stride = stride;
    const std::string s = std::to_string(stride);
    lv.scores = "face_rpn_cls_prob_reshape_stride" + s;
    lv.boxes = "face_rpn_bbox_pred_stride" + s;
    lv.landmarks = "face_rpn_landmark_pred_stride" + s;
    for (const std::string* name : {&lv.scores, &lv.boxes, &lv.landmarks})
      if (!find_output(outputs, *name)) return "it has no output named " + *name;
    layout.levels.push_back(lv);
  }
  return "";
}

std::string match_blazeface(const std::vector<ValueInfo>& inputs, const std::vector<ValueInfo>& outputs,
                            DetectorLayout& layout) {
  if (inputs.size() != 1) return "it needs exactly one input";
  const Shape& in = inputs[0].shape;
  if (in.size() != 4 || !dim_is(in, 3, 3)) return "its input must be NHWC (1, H, W, 3)";
  // Two score outputs (1, N, 1) and two box outputs (1, N, 16), paired by N: 512 (16x16x2), 384 (8x8x6).
  layout = DetectorLayout();
  layout.arch = FaceArch::BlazeFace;
  layout.input = inputs[0].name;
  layout.nhwc = true;
  if (outputs.size() != 4) return "it needs four outputs (two of scores, two of boxes)";
  for (const BlazeFaceGrid& g : blazeface_grids()) {
    const int64_t count = static_cast<int64_t>(g.cells) * g.cells * g.anchors_per_cell;
    DetectorLayout::Level lv;
    for (const ValueInfo& o : outputs) {
      if (o.shape.size() != 3 || o.shape[1] != count) continue;
      if (o.shape[2] == 1 && lv.scores.empty()) lv.scores = o.name;
      else if (o.shape[2] == 16 && lv.boxes.empty()) lv.boxes = o.name;
    }
    if (lv.scores.empty() || lv.boxes.empty())
      return "it needs outputs of shapes (1, " + std::to_string(count) + ", 1) and (1, " + std::to_string(count) +
             ", 16)";
    layout.levels.push_back(lv);
  }
  return "";
}

std::string match_retinaface_onnx(const std::vector<ValueInfo>& inputs, const std::vector<ValueInfo>& outputs,
                                  DetectorLayout& layout) {
  if (inputs.size() != 1) return "it needs exactly one input";
  const Shape& in = inputs[0].shape;
  if (in.size() != 4 || !dim_is(in, 1, 3)) return "its input must be (1, 3, H, W)";
  layout = DetectorLayout();
  layout.arch = FaceArch::RetinaFaceOnnx;
  layout.input = inputs[0].name;
  if (outputs.size() != 3) return "it needs three outputs: loc (1, N, 4), conf (1, N, 2), landms (1, N, 10)";
  for (const ValueInfo& o : outputs) {
    if (o.shape.size() != 3) return "its outputs must have rank 3 (1, N, 4 | 2 | 10)";
    std::string* slot = o.shape[2] == 4 ? &layout.loc : o.shape[2] == 2 ? &layout.conf
                                                        : o.shape[2] == 10 ? &layout.landms : nullptr;
    if (!slot || !slot->empty()) return "its outputs must be loc (1, N, 4), conf (1, N, 2), landms (1, N, 10)";
    *slot = o.name;
  }
  return "";
}

}  // namespace

DetectorLayout match_detector_layout(FaceArch arch, const std::vector<ValueInfo>& inputs,
                                     const std::vector<ValueInfo>& outputs) {
  using Matcher = std::string (*)(const std::vector<ValueInfo>&, const std::vector<ValueInfo>&, DetectorLayout&);
  const std::pair<FaceArch, Matcher> matchers[] = {{FaceArch::RetinaFaceNcnn, match_retinaface_ncnn},
                                                   {FaceArch::BlazeFace, match_blazeface},
                                                   {FaceArch::RetinaFaceOnnx, match_retinaface_onnx}};
  std::string reasons;
  for (const auto& m : matchers) {
    if (arch != FaceArch::Auto && arch != m.first) continue;
    DetectorLayout layout;
    std::string why = m.second(inputs, outputs, layout);
    if (why.empty()) return layout;
    reasons += std::string(reasons.empty() ? "" : "; ") + "not " + face_arch_name(m.first) + ": " + why;
  }
  const std::string model = " (inputs: " + describe(inputs) + "; outputs: " + describe(outputs) + ")";
  if (arch == FaceArch::Auto)
    throw Error("cannot tell which face detector this model is" + model + ": " + reasons +
                ". Name the architecture explicitly (FaceDetectorOptions::arch) if it is one of these");
  throw Error("the model does not fit " + std::string(face_arch_name(arch)) + model + ": " + reasons);
}

}  // namespace ninegrid::detect

// The public names, declared in ninegrid/detect.h.
namespace ninegrid {

FaceArch parse_face_arch(const std::string& name) {
  if (name == "auto") return FaceArch::Auto;
  if (name == "retinaface-ncnn" || name == "mnet" || name == "insightface") return FaceArch::RetinaFaceNcnn;
  if (name == "retinaface-onnx" || name == "retinaface-pytorch") return FaceArch::RetinaFaceOnnx;
  if (name == "blazeface") return FaceArch::BlazeFace;
  throw Error("unknown face detector architecture '" + name +
              "' (expected auto, retinaface-ncnn, retinaface-onnx or blazeface)");
}

const char* face_arch_name(FaceArch arch) {
  switch (arch) {
    case FaceArch::Auto: return "auto";
    case FaceArch::RetinaFaceNcnn: return "retinaface-ncnn";
    case FaceArch::RetinaFaceOnnx: return "retinaface-onnx";
    case FaceArch::BlazeFace: return "blazeface";
  }
  return "?";
}

}  // namespace ninegrid
