// FaceDetector: letterbox the photo to the model input, run the model, decode, NMS, map back.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "detect/anchors.h"
#include "detect/decode.h"
#include "detect/layout.h"
#include "detect/nms.h"
#include "ninegrid/detect.h"

namespace ninegrid {

namespace {

// More candidates than this before NMS only happen with a near-zero score threshold; the best ones are
// kept so NMS (quadratic) stays fast.
constexpr size_t kMaxCandidates = 5000;

// The Input layers of an ncnn .param file that declare no shape: ncnn leaves the input size to the
// caller, so the engine needs one before it can plan. Returns an empty list for anything that is not an
// ncnn .param (ONNX files declare their input shapes).
std::vector<std::string> ncnn_inputs_without_shape(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string line;
  if (!f || !std::getline(f, line)) return {};
  if (line.find("7767517") == std::string::npos) return {};
  std::vector<std::string> names;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string type, layer_name, blob;
    int num_in = 0, num_out = 0;
    if (!(ls >> type >> layer_name >> num_in >> num_out) || type != "Input" || num_in != 0 || num_out != 1) continue;
    if (!(ls >> blob)) continue;
    bool has_shape = false;
    std::string param;
    while (ls >> param) has_shape = has_shape || param.rfind("0=", 0) == 0 || param.rfind("1=", 0) == 0;
    if (!has_shape) names.push_back(blob);
  }
  return names;
}

void check_options(const FaceDetectorOptions& o) {
  if (!(o.score_threshold >= 0 && o.score_threshold <= 1))
    throw Error("score threshold must be between 0 and 1, got " + std::to_string(o.score_threshold));
  if (!(o.nms_threshold >= 0 && o.nms_threshold <= 1))
    throw Error("NMS threshold must be between 0 and 1, got " + std::to_string(o.nms_threshold));
  if (o.input_size < 32 || o.input_size > 4096 || o.input_size % 32 != 0)
    throw Error("input size must be a multiple of 32 between 32 and 4096, got " + std::to_string(o.input_size));
  if (o.threads < 0) throw Error("threads must be 0 (one per core) or more, got " + std::to_string(o.threads));
}

// The float data of output `name`, checked to hold `numel` elements (or any number when numel < 0).
const float* output_floats(const Tensor& t, const std::string& name, int64_t numel) {
  if (t.dtype() != DataType::Float32)
    throw Error("face detector output '" + name + "' is " + dtype_name(t.dtype()) + ", expected float32");
  if (numel >= 0 && t.numel() != numel)
    throw Error("face detector output '" + name + "' has shape " + shape_str(t.shape()) + " (" +
                std::to_string(t.numel()) + " values), expected " + std::to_string(numel) + " values");
  return t.data_as<float>();
}

// (channels, rows, cols) of an insightface output, which is (1, C, H, W) or (C, H, W).
struct Chw {
  int64_t c = 0, h = 0, w = 0;
};
Chw output_chw(const Tensor& t, const std::string& name) {
  const Shape& s = t.shape();
  if (s.size() == 4 && s[0] == 1) return {s[1], s[2], s[3]};
  if (s.size() == 3) return {s[0], s[1], s[2]};
  throw Error("face detector output '" + name + "' has shape " + shape_str(s) + ", expected (1, C, H, W)");
}

}  // namespace

struct FaceDetector::State {
  FaceDetectorOptions options;
  std::shared_ptr<Model> model;
  std::unique_ptr<Session> session;
  detect::DetectorLayout layout;
  int input_w = 0, input_h = 0;
  std::vector<float> input;  // the model input, reused across calls
  std::vector<detect::Anchor> anchors;  // PyTorch priors and BlazeFace anchors, made once

  std::vector<Face> decode_retinaface_ncnn();
  std::vector<Face> decode_retinaface_onnx();
  std::vector<Face> decode_blazeface();
};

FaceDetector::FaceDetector(const std::string& model_path, const FaceDetectorOptions& options)
    : state_(std::make_unique<State>()) {
  check_options(options);
  State& s = *state_;
  s.options = options;

  Options load_options;
  load_options.threads = options.threads;
  load_options.tuning_cache = options.tuning_cache;
  load_options.use_tuning_cache = options.use_tuning_cache;
  const int default_side = options.arch == FaceArch::BlazeFace ? 128 : options.input_size;
  for (const std::string& name : ncnn_inputs_without_shape(model_path))
    load_options.input_shapes[name] = {1, 3, default_side, default_side};
  s.model = Model::load(model_path, load_options);

  try {
    s.layout = detect::match_detector_layout(options.arch, s.model->inputs(), s.model->outputs());
  } catch (const Error& e) {
    throw Error(model_path + ": " + e.what());
  }

  const ValueInfo* in = nullptr;
  for (const ValueInfo& v : s.model->inputs())
    if (v.name == s.layout.input) in = &v;
  if (!in || in->dtype != DataType::Float32)
    throw Error(model_path + ": the image input '" + s.layout.input + "' must be float32");
  const int64_t h = s.layout.nhwc ? in->shape[1] : in->shape[2];
  const int64_t w = s.layout.nhwc ? in->shape[2] : in->shape[3];
  const int side = s.layout.arch == FaceArch::BlazeFace ? 128 : options.input_size;
  if (h > 4096 || w > 4096) throw Error(model_path + ": input " + shape_str(in->shape) + " is too large");
  s.input_h = h > 0 ? static_cast<int>(h) : side;
  s.input_w = w > 0 ? static_cast<int>(w) : side;

  if (s.layout.arch == FaceArch::RetinaFaceOnnx) s.anchors = detect::pytorch_retinaface_priors(s.input_w, s.input_h);
  if (s.layout.arch == FaceArch::BlazeFace) s.anchors = detect::blazeface_anchors();
  s.input.resize(static_cast<size_t>(s.input_w) * s.input_h * 3);
  s.session = s.model->create_session();
}

const std::vector<std::string>& FaceDetector::warnings() const { return state_->model->warnings(); }

FaceDetector::~FaceDetector() = default;
FaceDetector::FaceDetector(FaceDetector&&) noexcept = default;
FaceDetector& FaceDetector::operator=(FaceDetector&&) noexcept = default;

FaceArch FaceDetector::arch() const { return state_->layout.arch; }
int FaceDetector::input_width() const { return state_->input_w; }
int FaceDetector::input_height() const { return state_->input_h; }

std::vector<Face> FaceDetector::State::decode_retinaface_ncnn() {
  std::vector<Face> faces;
  for (const detect::DetectorLayout::Level& lv : layout.levels) {
    Tensor scores = session->output(lv.scores), boxes = session->output(lv.boxes),
           landmarks = session->output(lv.landmarks);
    const Chw sc = output_chw(scores, lv.scores);
    const int64_t a = static_cast<int64_t>(detect::retinaface_base_anchors(lv.stride).size());
    if (sc.c != 2 * a)
      throw Error("face detector output '" + lv.scores + "' has " + std::to_string(sc.c) + " channels, expected " +
                  std::to_string(2 * a) + " (background and face per anchor)");
    const int64_t plane = sc.h * sc.w;
    const float* s = output_floats(scores, lv.scores, 2 * a * plane);
    const float* b = output_floats(boxes, lv.boxes, 4 * a * plane);
    const float* l = output_floats(landmarks, lv.landmarks, 10 * a * plane);
    // Both ranks check the layout: boxes and landmarks must be over the same rows x cols as the scores.
    const Chw bc = output_chw(boxes, lv.boxes), lc = output_chw(landmarks, lv.landmarks);
    if (bc.h != sc.h || bc.w != sc.w || lc.h != sc.h || lc.w != sc.w)
      throw Error("face detector outputs of stride " + std::to_string(lv.stride) + " disagree on the feature map size");
    const auto anchors = detect::retinaface_anchors(lv.stride, static_cast<int>(sc.h), static_cast<int>(sc.w));
    detect::decode_retinaface_level(s, b, l, anchors, static_cast<int>(sc.h), static_cast<int>(sc.w),
                                    options.score_threshold, faces);
  }
  return faces;
}

std::vector<Face> FaceDetector::State::decode_retinaface_onnx() {
  Tensor loc = session->output(layout.loc), conf = session->output(layout.conf), landms = session->output(layout.landms);
  const int64_t n = static_cast<int64_t>(anchors.size());
  std::vector<Face> faces;
  detect::decode_pytorch_retinaface(output_floats(loc, layout.loc, 4 * n), output_floats(conf, layout.conf, 2 * n),
                                    output_floats(landms, layout.landms, 10 * n), anchors, input_w, input_h,
                                    options.score_threshold, faces);
  return faces;
}

std::vector<Face> FaceDetector::State::decode_blazeface() {
  std::vector<Face> faces;
  size_t first = 0;
  for (const detect::DetectorLayout::Level& lv : layout.levels) {
    Tensor scores = session->output(lv.scores), boxes = session->output(lv.boxes);
    const int64_t count = scores.numel();
    if (first + static_cast<size_t>(count) > anchors.size())
      throw Error("face detector output '" + lv.scores + "' has more scores than BlazeFace has anchors");
    detect::decode_blazeface(output_floats(scores, lv.scores, count), output_floats(boxes, lv.boxes, 16 * count),
                             anchors.data() + first, static_cast<int>(count), input_w, input_h,
                             options.score_threshold, faces);
    first += static_cast<size_t>(count);
  }
  return faces;
}

std::vector<Face> FaceDetector::detect(const Image& image) {
  State& s = *state_;
  if (image.w <= 0 || image.h <= 0 || image.rgb.size() != static_cast<size_t>(image.w) * image.h * 3)
    throw Error("detect: the image is empty or its pixel buffer has the wrong size");

  const LetterboxGeometry g = letterbox_geometry(image.w, image.h, s.input_w, s.input_h);
  const uint8_t black[3] = {0, 0, 0};
  const Image boxed = letterbox(image, g, black);

  // Each architecture's input convention.
  const size_t plane = static_cast<size_t>(s.input_w) * s.input_h;
  const uint8_t* px = boxed.rgb.data();
  float* in = s.input.data();
  Shape shape;
  switch (s.layout.arch) {
    case FaceArch::RetinaFaceNcnn:  // RGB planes, raw 0..255
      for (size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) in[c * plane + i] = px[i * 3 + c];
      shape = {1, 3, s.input_h, s.input_w};
      break;
    case FaceArch::RetinaFaceOnnx: {  // BGR planes minus the ImageNet-style means
      const float mean_bgr[3] = {104.f, 117.f, 123.f};
      for (size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) in[c * plane + i] = px[i * 3 + (2 - c)] - mean_bgr[c];
      shape = {1, 3, s.input_h, s.input_w};
      break;
    }
    case FaceArch::BlazeFace:  // interleaved RGB scaled to [-1, 1]
      for (size_t i = 0; i < plane * 3; ++i) in[i] = px[i] / 127.5f - 1.f;
      shape = {1, s.input_h, s.input_w, 3};
      break;
    case FaceArch::Auto: throw Error("detect: the detector has no architecture");
  }
  s.session->set_input(s.layout.input, Tensor::wrap(DataType::Float32, shape, s.input.data()));
  s.session->run();

  std::vector<Face> faces;
  switch (s.layout.arch) {
    case FaceArch::RetinaFaceNcnn: faces = s.decode_retinaface_ncnn(); break;
    case FaceArch::RetinaFaceOnnx: faces = s.decode_retinaface_onnx(); break;
    case FaceArch::BlazeFace: faces = s.decode_blazeface(); break;
    case FaceArch::Auto: break;
  }
  detect::keep_top_k(faces, kMaxCandidates);
  // BlazeFace's dense, fixed-size anchors give many near-identical boxes: MediaPipe blends them.
  faces = s.layout.arch == FaceArch::BlazeFace ? detect::weighted_nms(std::move(faces), s.options.nms_threshold)
                                               : detect::nms(std::move(faces), s.options.nms_threshold);

  // Back to the photo's coordinates, clamped to it; boxes entirely in the letterbox padding vanish.
  std::vector<Face> out;
  const float W = static_cast<float>(image.w), H = static_cast<float>(image.h);
  auto clamp = [](float v, float hi) { return std::min(hi, std::max(0.f, v)); };
  for (Face f : faces) {
    f.x1 = clamp(g.to_source_x(f.x1), W);
    f.x2 = clamp(g.to_source_x(f.x2), W);
    f.y1 = clamp(g.to_source_y(f.y1), H);
    f.y2 = clamp(g.to_source_y(f.y2), H);
    for (auto& p : f.landmarks) {
      p[0] = clamp(g.to_source_x(p[0]), W);
      p[1] = clamp(g.to_source_y(p[1]), H);
    }
    if (f.x2 > f.x1 && f.y2 > f.y1) out.push_back(f);
  }
  return out;
}

}  // namespace ninegrid
