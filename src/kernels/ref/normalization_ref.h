// Reference normalisation kernels on dense [batch, channels, plane] data (plane = the product of the
// spatial dimensions): BatchNormalization in inference form, InstanceNormalization and LRN.
#pragma once

#include <cstdint>

namespace ninegrid {

// y[n, c, i] = x[n, c, i] * scale[c] + shift[c] for the (n, c) planes [plane_begin, plane_end) of the
// batch * channels planes. Inference BatchNormalization is this with scale = gamma / sqrt(var + eps) and
// shift = beta - mean * scale (see batch_norm_to_affine).
void channel_affine_ref(int64_t channels, int64_t plane_size, const float* scale, const float* shift, const float* x,
                        float* y, int64_t plane_begin, int64_t plane_end);

// Folds inference BatchNormalization's parameters into channel_affine_ref's scale and shift.
void batch_norm_to_affine(int64_t channels, const float* gamma, const float* beta, const float* mean, const float* var,
                          float epsilon, float* scale, float* shift);

// y = gamma[c] * (x - mean) / sqrt(variance + epsilon) + beta[c], with the mean and (population)
// variance of each (n, c) plane, for planes [plane_begin, plane_end).
void instance_norm_ref(int64_t channels, int64_t plane_size, const float* gamma, const float* beta, float epsilon,
                       const float* x, float* y, int64_t plane_begin, int64_t plane_end);

// Local response normalisation across channels (ONNX LRN):
//   y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta
// for batches [batch_begin, batch_end).
void lrn_ref(int64_t channels, int64_t plane_size, int64_t size, float alpha, float beta, float bias, const float* x,
             float* y, int64_t batch_begin, int64_t batch_end);

}  // namespace ninegrid
