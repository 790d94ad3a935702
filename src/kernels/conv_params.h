// The description of one convolution that every conv kernel takes (the reference in kernels/ref/ and the
// fast ones for each ISA), and the epilogue fused into the conv's output write.
//
// Tensors are dense NCHW (NCDHW for 3-D) float32:
//   x: [batch, in_channels, in_h, in_w]
//   w: [out_channels, in_channels / groups, kernel_h, kernel_w]   (ONNX's OIHW)
//   y: [batch, out_channels, out_h, out_w]
// Output channel oc belongs to group g = oc / (out_channels / groups) and reads input channels
// [g * in_channels / groups, (g + 1) * in_channels / groups).
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace ninegrid {

struct Conv2dParams {
  int64_t batch = 1;
  int64_t in_channels = 1, out_channels = 1;
  int64_t groups = 1;
  int64_t in_h = 1, in_w = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  // Implicit zero padding. Output pixel (oh, ow) reads input pixel
  //   (oh * stride_h - pad_top + kh * dilation_h, ow * stride_w - pad_left + kw * dilation_w).
  // pad_bottom / pad_right only decide out_h / out_w (see conv_output_size); kernels never read them.
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  // Multiply-accumulates of the whole convolution.
  int64_t macs() const {
    return batch * out_channels * out_h * out_w * in_channels_per_group() * kernel_h * kernel_w;
  }
};

// The 3-D version (x: [batch, in_channels, in_d, in_h, in_w], w: [out_channels, in_channels / groups,
// kernel_d, kernel_h, kernel_w]); the same conventions, with a depth axis in front.
struct Conv3dParams {
  int64_t batch = 1;
  int64_t in_channels = 1, out_channels = 1;
  int64_t groups = 1;
  int64_t in_d = 1, in_h = 1, in_w = 1;
  int64_t out_d = 1, out_h = 1, out_w = 1;
  int64_t kernel_d = 1, kernel_h = 1, kernel_w = 1;
  int64_t stride_d = 1, stride_h = 1, stride_w = 1;
  int64_t dilation_d = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_front = 0, pad_top = 0, pad_left = 0;  // the back/bottom/right pads only size the output

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  int64_t macs() const {
    return batch * out_channels * out_d * out_h * out_w * in_channels_per_group() * kernel_d * kernel_h * kernel_w;
  }
};

// A transposed convolution (ONNX ConvTranspose) over up to three spatial axes. Axes are (depth, height,
// width); a 2-D op leaves depth at 1 (and pad 0), a 1-D op also height.
//   x: [batch, in_channels, in[0], in[1], in[2]]
//   w: [in_channels, out_channels / groups, kernel[0], kernel[1], kernel[2]]   (ONNX's IOHW)
//   y: [batch, out_channels, out[0], out[1], out[2]]
// Input pixel i scatters x[i] * w[k] to output pixel o = i * stride - pad_begin + k * dilation; the
// outputs off [0, out) are dropped. out is free: whatever output_padding / output_shape made it.
struct ConvTransposeParams {
  int64_t batch = 1;
  int64_t in_channels = 1, out_channels = 1;
  int64_t groups = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  // Every input pixel meets every tap (including those that land outside the output).
  int64_t macs() const {
    return batch * in_channels * in[0] * in[1] * in[2] * out_channels_per_group() * kernel[0] * kernel[1] * kernel[2];
  }
};

// What happens to each output value after the sum over the kernel window:
//   y = activation(sum + bias[oc] + residual[n, oc, oh, ow])
// A conv followed by BatchNorm, an activation and a residual Add thus writes its output once.
struct Epilogue {
  Activation activation;
  // Optional tensor with y's shape and layout, added before the activation (a fused residual Add).
  // It may be y itself only if the kernel reads each residual value before writing that output value;
  // the reference kernels do.
  const float* residual = nullptr;
};

// Output length along one axis for a kernel of `kernel` taps spread by `dilation`, sliding by `stride`
// over an input padded by pad_begin + pad_end: floor((in + pads - dilated_kernel) / stride) + 1.
// Returns 0 or less when the kernel does not fit (callers turn that into an error).
inline int64_t conv_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                                int64_t pad_end) {
  int64_t span = in + pad_begin + pad_end - ((kernel - 1) * dilation + 1);
  if (span < 0) return 0;
  return span / stride + 1;
}

}  // namespace ninegrid
