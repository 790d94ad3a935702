// Turning detector outputs into candidate faces (before NMS), in model input pixels. Each function
// appends every candidate whose score is at least `score_threshold` and whose coordinates are finite.
#pragma once

#include <vector>

#include "detect/anchors.h"
#include "ninegrid/detect.h"

namespace ninegrid::detect {

// insightface RetinaFace, one stride. The outputs are channel-major over rows x cols positions:
//   scores    2A channels: [0, A) background, [A, 2A) face probability (already softmaxed)
//   boxes     4A channels: anchor a's (dx, dy, dw, dh) in channels 4a..4a+3
//   landmarks 10A channels: anchor a's five (dx, dy) in channels 10a..10a+9
// with A = anchors.size() / (rows * cols) and `anchors` from retinaface_anchors(). The box is centred
// at (cx + dx * w, cy + dy * h) with size (w * exp(dw), h * exp(dh)); landmark k is at
// (cx + dx_k * w, cy + dy_k * h).
void decode_retinaface_level(const float* scores, const float* boxes, const float* landmarks,
                             const std::vector<Anchor>& anchors, int rows, int cols, float score_threshold,
                             std::vector<Face>& out);

// PyTorch RetinaFace: loc (N, 4), conf (N, 2), landms (N, 10) row-major, priors from
// pytorch_retinaface_priors(). Box centre = prior centre + loc_xy * 0.1 * prior size, size = prior size
// * exp(loc_wh * 0.2); landmark k = prior centre + landms_k * 0.1 * prior size; all scaled by the input
// size. The score is conf[:, 1]; rows of conf that are not probabilities (a model exported without its
// final softmax) are softmaxed first.
void decode_pytorch_retinaface(const float* loc, const float* conf, const float* landms,
                               const std::vector<Anchor>& priors, int input_w, int input_h, float score_threshold,
                               std::vector<Face>& out);

// BlazeFace: per anchor one score logit and 16 numbers (x, y, w, h, then six keypoints (x, y)) in input
// pixels relative to the anchor centre (MediaPipe's x_scale = input size with fixed-size anchors).
// Score = sigmoid(logit clipped to +-100). Keypoints: 0 eye (image left), 1 eye (image right), 2 nose
// tip, 3 mouth centre, 4 and 5 ears; the Face gets eyes, nose, and the mouth centre in both mouth slots.
void decode_blazeface(const float* scores, const float* boxes, const Anchor* anchors, int count, int input_w,
                      int input_h, float score_threshold, std::vector<Face>& out);

}  // namespace ninegrid::detect
