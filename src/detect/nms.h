// Non-maximum suppression: of several boxes on one face, keep one.
#pragma once

#include <vector>

#include "ninegrid/detect.h"

namespace ninegrid::detect {

// Intersection over union of two boxes; 0 when either is empty.
float box_iou(const Face& a, const Face& b);

// Classic (hard) NMS: best score first, a face is kept unless its IoU with an already kept face exceeds
// `iou_threshold`. Returns the kept faces, best first. Ties in score keep their input order.
std::vector<Face> nms(std::vector<Face> faces, float iou_threshold);

// MediaPipe's weighted NMS: take the best remaining face and every remaining face whose IoU with it
// exceeds `iou_threshold` (itself included); output their score-weighted mean box and landmarks with
// the best score; remove them all; repeat. Steadier boxes than hard NMS for BlazeFace's dense anchors.
std::vector<Face> weighted_nms(std::vector<Face> faces, float iou_threshold);

// Keeps the `k` best-scoring faces (stable for ties), so NMS stays fast with a very low threshold.
void keep_top_k(std::vector<Face>& faces, size_t k);

}  // namespace ninegrid::detect
