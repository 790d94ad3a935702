#include "detect/nms.h"

#include <algorithm>

namespace ninegrid::detect {

namespace {

void sort_by_score(std::vector<Face>& faces) {
  std::stable_sort(faces.begin(), faces.end(), [](const Face& a, const Face& b) { return a.score > b.score; });
}

float area(const Face& f) { return std::max(0.f, f.x2 - f.x1) * std::max(0.f, f.y2 - f.y1); }

}  // namespace

float box_iou(const Face& a, const Face& b) {
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (iw <= 0 || ih <= 0) return 0.f;
  const float inter = iw * ih;
  const float uni = area(a) + area(b) - inter;
  return uni > 0 ? inter / uni : 0.f;
}

void keep_top_k(std::vector<Face>& faces, size_t k) {
  if (faces.size() <= k) return;
  sort_by_score(faces);
  faces.resize(k);
}

std::vector<Face> nms(std::vector<Face> faces, float iou_threshold) {
  sort_by_score(faces);
  std::vector<Face> kept;
  for (const Face& f : faces) {
    bool keep = true;
    for (const Face& k : kept)
      if (box_iou(f, k) > iou_threshold) {
        keep = false;
        break;
      }
    if (keep) kept.push_back(f);
  }
  return kept;
}

std::vector<Face> weighted_nms(std::vector<Face> faces, float iou_threshold) {
  sort_by_score(faces);
  std::vector<bool> used(faces.size(), false);
  std::vector<Face> out;
  for (size_t i = 0; i < faces.size(); ++i) {
    if (used[i]) continue;
    const Face& best = faces[i];
    double total = 0, x1 = 0, y1 = 0, x2 = 0, y2 = 0, lm[5][2] = {};
    for (size_t j = i; j < faces.size(); ++j) {
      if (used[j] || (j != i && box_iou(best, faces[j]) <= iou_threshold)) continue;
      used[j] = true;
      const Face& f = faces[j];
      const double w = f.score;
      total += w;
      x1 += w * f.x1;
      y1 += w * f.y1;
      x2 += w * f.x2;
      y2 += w * f.y2;
      for (int k = 0; k < 5; ++k) {
        lm[k][0] += w * f.landmarks[k][0];
        lm[k][1] += w * f.landmarks[k][1];
      }
    }
    Face merged = best;
    if (total > 0) {  // scores of zero cannot be weighed: keep the best face as it is
      merged.x1 = static_cast<float>(x1 / total);
      merged.y1 = static_cast<float>(y1 / total);
      merged.x2 = static_cast<float>(x2 / total);
      merged.y2 = static_cast<float>(y2 / total);
      for (int k = 0; k < 5; ++k) {
        merged.landmarks[k][0] = static_cast<float>(lm[k][0] / total);
        merged.landmarks[k][1] = static_cast<float>(lm[k][1] / total);
      }
    }
    out.push_back(merged);
  }
  return out;
}

}  // namespace ninegrid::detect
