#include "detect/decode.h"

#include <algorithm>
#include <cmath>

namespace ninegrid::detect {

namespace {

bool finite_face(const Face& f) {
  if (!std::isfinite(f.x1) || !std::isfinite(f.y1) || !std::isfinite(f.x2) || !std::isfinite(f.y2) ||
      !std::isfinite(f.score))
    return false;
  for (const auto& p : f.landmarks)
    if (!std::isfinite(p[0]) || !std::isfinite(p[1])) return false;
  return true;
}

// Offsets predicted for exp() are clamped so that a garbage output cannot overflow to infinity; e^20
// times any anchor is already far larger than any image.
float safe_exp(float v) { return std::exp(std::min(v, 20.f)); }

void set_box(Face& f, float cx, float cy, float w, float h) {
  f.x1 = cx - w * 0.5f;
  f.y1 = cy - h * 0.5f;
  f.x2 = cx + w * 0.5f;
  f.y2 = cy + h * 0.5f;
}

}  // namespace

void decode_retinaface_level(const float* scores, const float* boxes, const float* landmarks,
                             const std::vector<Anchor>& anchors, int rows, int cols, float score_threshold,
                             std::vector<Face>& out) {
  const size_t plane = static_cast<size_t>(rows) * cols;
  if (plane == 0) return;
  const size_t num_anchors = anchors.size() / plane;
  for (size_t a = 0; a < num_anchors; ++a) {
    const float* face_prob = scores + (num_anchors + a) * plane;
    const float* box = boxes + a * 4 * plane;
    const float* lm = landmarks + a * 10 * plane;
    for (size_t i = 0; i < plane; ++i) {
      const float score = face_prob[i];
      if (!(score >= score_threshold)) continue;
      const Anchor& an = anchors[a * plane + i];
      Face f;
      f.score = score;
      set_box(f, an.cx + box[0 * plane + i] * an.w, an.cy + box[1 * plane + i] * an.h,
              an.w * safe_exp(box[2 * plane + i]), an.h * safe_exp(box[3 * plane + i]));
      for (int k = 0; k < 5; ++k) {
        f.landmarks[k][0] = an.cx + lm[(2 * k) * plane + i] * an.w;
        f.landmarks[k][1] = an.cy + lm[(2 * k + 1) * plane + i] * an.h;
      }
      if (finite_face(f)) out.push_back(f);
    }
  }
}

void decode_pytorch_retinaface(const float* loc, const float* conf, const float* landms,
                               const std::vector<Anchor>& priors, int input_w, int input_h, float score_threshold,
                               std::vector<Face>& out) {
  const float variance_centre = 0.1f, variance_size = 0.2f;
  for (size_t n = 0; n < priors.size(); ++n) {
    const float* c = conf + 2 * n;
    float score = c[1];
    const bool probabilities = c[0] >= 0 && c[1] >= 0 && std::fabs(c[0] + c[1] - 1) < 1e-3f;
    if (!probabilities) score = 1 / (1 + std::exp(std::min(100.f, std::max(-100.f, c[0] - c[1]))));
    if (!(score >= score_threshold)) continue;
    const Anchor& p = priors[n];
    const float* l = loc + 4 * n;
    Face f;
    f.score = score;
    const float cx = p.cx + l[0] * variance_centre * p.w;
    const float cy = p.cy + l[1] * variance_centre * p.h;
    const float w = p.w * safe_exp(l[2] * variance_size);
    const float h = p.h * safe_exp(l[3] * variance_size);
    set_box(f, cx * input_w, cy * input_h, w * input_w, h * input_h);
    const float* m = landms + 10 * n;
    for (int k = 0; k < 5; ++k) {
      f.landmarks[k][0] = (p.cx + m[2 * k] * variance_centre * p.w) * input_w;
      f.landmarks[k][1] = (p.cy + m[2 * k + 1] * variance_centre * p.h) * input_h;
    }
    if (finite_face(f)) out.push_back(f);
  }
}

void decode_blazeface(const float* scores, const float* boxes, const Anchor* anchors, int count, int input_w,
                      int input_h, float score_threshold, std::vector<Face>& out) {
  // Which of the six BlazeFace keypoints fills each of the five Face landmarks.
  const int keypoint_for_landmark[5] = {0, 1, 2, 3, 3};
  for (int n = 0; n < count; ++n) {
    const float logit = std::min(100.f, std::max(-100.f, scores[n]));
    const float score = 1 / (1 + std::exp(-logit));
    if (!(score >= score_threshold)) continue;
    const Anchor& a = anchors[n];
    const float* b = boxes + 16 * static_cast<size_t>(n);
    // Offsets are in input pixels; anchors are normalised with size 1 (fixed-size anchors).
    const float ax = a.cx * input_w, ay = a.cy * input_h;
    Face f;
    f.score = score;
    set_box(f, ax + b[0] * a.w, ay + b[1] * a.h, b[2] * a.w, b[3] * a.h);
    for (int k = 0; k < 5; ++k) {
      const int kp = keypoint_for_landmark[k];
      f.landmarks[k][0] = ax + b[4 + 2 * kp] * a.w;
      f.landmarks[k][1] = ay + b[5 + 2 * kp] * a.h;
    }
    if (f.x2 > f.x1 && f.y2 > f.y1 && finite_face(f)) out.push_back(f);
  }
}

}  // namespace ninegrid::detect
