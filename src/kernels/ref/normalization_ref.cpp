#include "kernels/ref/normalization_ref.h"

#include <algorithm>
#include <cmath>

namespace ninegrid {

void channel_affine_ref(int64_t channels, int64_t plane_size, const float* scale, const float* shift, const float* x,
                        float* y, int64_t plane_begin, int64_t plane_end) {
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const int64_t c = plane % channels;
    const float a = scale[c], b = shift[c];
    const float* xp = x + plane * plane_size;
    float* yp = y + plane * plane_size;
    for (int64_t i = 0; i < plane_size; ++i) yp[i] = xp[i] * a + b;
  }
}

void batch_norm_to_affine(int64_t channels, const float* gamma, const float* beta, const float* mean, const float* var,
                          float epsilon, float* scale, float* shift) {
  for (int64_t c = 0; c < channels; ++c) {
    scale[c] = gamma[c] / std::sqrt(var[c] + epsilon);
    shift[c] = beta[c] - mean[c] * scale[c];
  }
}

void instance_norm_ref(int64_t channels, int64_t plane_size, const float* gamma, const float* beta, float epsilon,
                       const float* x, float* y, int64_t plane_begin, int64_t plane_end) {
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const int64_t c = plane % channels;
    const float* xp = x + plane * plane_size;
    float* yp = y + plane * plane_size;
    // Two passes in double: the mean first, then the variance around it (no cancellation).
    double sum = 0.0;
    for (int64_t i = 0; i < plane_size; ++i) sum += xp[i];
    const double mean = plane_size > 0 ? sum / static_cast<double>(plane_size) : 0.0;
    double sq = 0.0;
    for (int64_t i = 0; i < plane_size; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
    const double var = plane_size > 0 ? sq / static_cast<double>(plane_size) : 0.0;
    const float a = static_cast<float>(gamma[c] / std::sqrt(var + epsilon));
    const float b = static_cast<float>(beta[c] - mean * a);
    for (int64_t i = 0; i < plane_size; ++i) yp[i] = xp[i] * a + b;
  }
}

void lrn_ref(int64_t channels, int64_t plane_size, int64_t size, float alpha, float beta, float bias, const float* x,
             float* y, int64_t batch_begin, int64_t batch_end) {
  const int64_t before = (size - 1) / 2;     // floor((size - 1) / 2)
  const int64_t after = size - 1 - before;   // ceil((size - 1) / 2)
  for (int64_t n = batch_begin; n < batch_end; ++n) {
    const float* xn = x + n * channels * plane_size;
    float* yn = y + n * channels * plane_size;
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t c0 = std::max<int64_t>(0, c - before), c1 = std::min(channels - 1, c + after);
      for (int64_t i = 0; i < plane_size; ++i) {
        float sq = 0.f;
        for (int64_t j = c0; j <= c1; ++j) sq += xn[j * plane_size + i] * xn[j * plane_size + i];
        yn[c * plane_size + i] = xn[c * plane_size + i] / std::pow(bias + alpha / static_cast<float>(size) * sq, beta);
      }
    }
  }
}

}  // namespace ninegrid
