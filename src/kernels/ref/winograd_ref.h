// Winograd minimal filtering F(m x m, 3 x 3) for 3x3 stride-1 convolutions (Lavin & Gray, "Fast Algorithms
// for Convolutional Neural Networks"), in plain C++: the transform matrices, the load-time weight transform
// shared with the fast kernels, and a tile-by-tile reference convolution that the fast x86 version
// (ops/conv_winograd.h) is tested against.
//
// One output tile of m x m pixels reads an alpha x alpha input patch (alpha = m + 2) and costs alpha^2
// multiplications per (input channel, output channel) pair instead of 9 m^2:
//   U = G g G^T          (alpha x alpha, per oc and ic, once at load time)
//   V = B^T d B          (alpha x alpha, per tile and ic)
//   M = sum_ic U (.) V   (element-wise product, summed over the input channels)
//   Y = A^T M A          (m x m output pixels)
// The matrices come from interpolation points (0, +-1, +-2, +-1/2 and infinity), built by the Toom-Cook
// construction below rather than typed in, so they are an independent check of the hand-factored
// transforms in the x86 kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/conv_params.h"

namespace ninegrid {

struct WinogradMatrices {
  int m = 0;      // output tile side
  int alpha = 0;  // input tile side, m + 2
  std::vector<double> at;  // A^T, m x alpha (row-major)
  std::vector<double> g;   // G, alpha x 3
  std::vector<double> bt;  // B^T, alpha x alpha
};

// The matrices of F(m x m, 3 x 3) for m = 2 (points 0, 1, -1), 4 (0, +-1, +-2) or 6 (0, +-1, +-2, +-1/2),
// each with the point at infinity. Throws Error for any other m.
const WinogradMatrices& winograd_matrices(int m);

// Whether the Winograd algorithm computes this convolution: a 3x3 kernel, stride 1, dilation 1, one group,
// non-negative pads and a non-empty output. (Whether it is also faster is the caller's decision.)
bool winograd_applicable(const Conv2dParams& p);

// U = G g G^T for every (oc, ic) pair of OIHW 3x3 weights, computed in double and rounded once:
// [out_channels][in_channels][alpha * alpha].
std::vector<float> winograd_transform_weights(int m, const float* oihw, int64_t out_channels, int64_t in_channels);
// The same for `pairs` consecutive 3x3 kernels (9 floats each) into out[pairs][alpha * alpha].
void winograd_transform_weights(int m, const float* kernels, int64_t pairs, float* out);
// The same with the output's layout given: pair p's value at position q (of alpha * alpha) goes to
// out[p * pair_stride + q * position_stride].
void winograd_transform_weights(int m, const float* kernels, int64_t pairs, int64_t pair_stride,
                                int64_t position_stride, float* out);

// y = epilogue(conv(x, w) + bias) on plain NCHW tensors by F(m x m, 3 x 3), one tile at a time, in float
// arithmetic (the rounding the fast kernels have, not a more accurate oracle). Requires
// winograd_applicable(p) (throws Error otherwise). The residual may be y itself.
void conv2d_winograd_ref(const Conv2dParams& p, const Epilogue& epilogue, int m, const float* x, const float* w,
                         const float* bias, float* y);

}  // namespace ninegrid
