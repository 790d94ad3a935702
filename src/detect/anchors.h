// Anchor boxes (priors) of the supported face detectors: the fixed boxes that each output position's
// offsets are relative to. Each list is in the order the model's outputs enumerate them.
#pragma once

#include <vector>

namespace ninegrid::detect {

// An anchor by centre and size. RetinaFace (insightface) anchors are in model input pixels; PyTorch
// RetinaFace priors and BlazeFace anchors are normalised to the input size (0..1).
struct Anchor {
  float cx = 0, cy = 0, w = 0, h = 0;
};

// ---- insightface RetinaFace (mnet.25, R50) ----
// The anchor shapes at one output position, as insightface's generate_anchors makes them: a base square
// of `base_size` reshaped to each aspect ratio (h / w), then scaled by each scale; ratio-major order.
// Returns (w, h) pairs.
std::vector<Anchor> insightface_base_anchors(int base_size, const std::vector<float>& ratios,
                                             const std::vector<float>& scales);
// RetinaFace's settings: base size 16, ratio 1, scales (32, 16) at stride 32, (8, 4) at stride 16 and
// (2, 1) at stride 8. Throws Error for any other stride.
std::vector<Anchor> retinaface_base_anchors(int stride);
// All anchors of one output level of rows x cols positions: anchor index a outermost, then row, then
// column, as the channel-major outputs (channel a of the scores, channels 4a..4a+3 of the boxes) hold
// them. The anchor at (row, col) is centred at (col * stride + base_size / 2, row * stride + base_size / 2):
// insightface's centre (base_size - 1) / 2 in pixel-index coordinates, plus half a pixel to make it
// continuous.
std::vector<Anchor> retinaface_anchors(int stride, int rows, int cols);

// ---- PyTorch RetinaFace (biubug6/Pytorch_Retinaface) ----
// Priors for an input of input_w x input_h: steps 8, 16, 32 with min sizes (16, 32), (64, 128),
// (256, 512); a feature map of ceil(input / step) positions per level; order level, row, column, min
// size. Normalised: centre ((col + 0.5) * step / input_w, ...), size (min_size / input_w, min_size / input_h).
std::vector<Anchor> pytorch_retinaface_priors(int input_w, int input_h);

// ---- MediaPipe BlazeFace (front camera, 128x128; the 256x256 back model has the same layout) ----
// MediaPipe's SSD anchors for BlazeFace: a 16x16 grid with 2 anchors per cell, then an 8x8 grid with 6
// per cell (896 in all); order grid, row, column, anchor. Normalised centres ((col + 0.5) / grid,
// (row + 0.5) / grid) and fixed size 1 x 1 (fixed_anchor_size: offsets are not scaled by anchor size).
std::vector<Anchor> blazeface_anchors();
// The two BlazeFace grids: (cells per side, anchors per cell).
struct BlazeFaceGrid {
  int cells;
  int anchors_per_cell;
};
const std::vector<BlazeFaceGrid>& blazeface_grids();

}  // namespace ninegrid::detect
