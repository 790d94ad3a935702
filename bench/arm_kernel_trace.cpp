// Runs one NEON conv kernel of libninegrid once on a RetinaFace-like layer, for bench/arm_mca.py: under
// `qemu-aarch64 -d in_asm,exec,nochain` the log holds every translated block and each block run, from
// which the script takes the kernel's hot loop as the library compiled it and hands it to llvm-mca.
// Prints the library's load address (the blocks' addresses are the library's offsets plus it) and the
// kernel's address (the blocks run before it are the loader's and the library's initialisation).
//   ninegrid_arm_kernel_trace dw3x3s1|dw3x3s2|pointwise|direct3x3|first3x3s2|winograd43
//   ninegrid_arm_kernel_trace qdw3x3s1|qdw3x3s2|qpointwise|qdirect3x3 dotprod|neon    (int8, bench/arm_int8_mca.py)
// Only the instructions run matter here, not the values: inputs and weights are arbitrary.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/arm/qconv_kernels_arm.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/winograd_x86.h"

namespace {

constexpr int64_t kLanes = 4;  // NEON: NCHW4c

struct Layer {
  int64_t in_channels, out_channels, in_h, in_w, kernel, stride, pad, in_block;
  bool depthwise;
};

int64_t blocks(int64_t channels) { return (channels + kLanes - 1) / kLanes; }

// The layer's shapes in the fp32 or the int8 kernels' arguments (NCHW4c out).
template <class Args>
void set_geometry(Args& a, const Layer& l) {
  a.in_channels = l.in_channels, a.in_h = l.in_h, a.in_w = l.in_w;
  a.out_channels = l.out_channels;
  a.out_h = (l.in_h + 2 * l.pad - l.kernel) / l.stride + 1;
  a.out_w = (l.in_w + 2 * l.pad - l.kernel) / l.stride + 1;
  a.groups = l.depthwise ? l.in_channels : 1;
  a.in_channels_per_group = l.in_channels / a.groups, a.out_channels_per_group = l.out_channels / a.groups;
  a.kernel_h = a.kernel_w = l.kernel, a.stride_h = a.stride_w = l.stride, a.pad_top = a.pad_left = l.pad;
  a.in_block = l.in_block, a.out_block = kLanes;
}

void run(const Layer& l, void (*kernel)(const ninegrid::X86ConvArgs&, const ninegrid::X86ConvRange&)) {
  ninegrid::X86ConvArgs a;
  set_geometry(a, l);
  a.activation = ninegrid::ActivationKind::Relu;  // RetinaFace-MobileNet0.25's convs: ReLU
  const int64_t in_floats = (l.in_block == 1 ? l.in_channels : blocks(l.in_channels) * kLanes) * l.in_h * l.in_w;
  const int64_t weight_floats = blocks(l.out_channels) * kLanes * a.in_channels_per_group * l.kernel * l.kernel;
  std::vector<float> x(in_floats), w(weight_floats), bias(blocks(l.out_channels) * kLanes, 0.f),
      y(blocks(l.out_channels) * kLanes * a.out_h * a.out_w);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6.f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.125f - 0.375f;
  a.x = x.data(), a.weights = w.data(), a.bias = bias.data(), a.y = y.data();
  ninegrid::X86ConvRange r;
  r.oc_block_end = blocks(l.out_channels), r.row_end = a.out_h;
  kernel(a, r);
  double sum = 0;
  for (float v : y) sum += v;
  std::printf("checksum %g\n", sum);
}

// Phase 2 of Winograd F(4x4, 3x3) (the multiply: 36 GEMMs) for one chunk of 48 tiles, 64 -> 64 channels,
// as ops/conv_winograd lays it out for a 28x28 or larger plane (register tiles of 12 tiles x 2 vectors).
void run_winograd_multiply() {
  const int64_t tiles = 48, channels = 64, positions = 36, vectors = ninegrid::neon::kWinogradOcVectors;
  ninegrid::WinogradX86Args a;
  a.m = 4, a.in_channels = a.out_channels = channels, a.ic_padded = a.oc_padded = channels;
  a.chunk_capacity = tiles, a.u_group_vectors = vectors;
  a.v_pos_stride = a.mm_pos_stride = tiles * channels + 16;
  std::vector<float> u(positions * channels * channels), v(positions * a.v_pos_stride),
      mm(positions * a.mm_pos_stride), bias(channels, 0.f);
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(i % 7) * 0.125f - 0.375f;
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13) - 6.f;
  a.u = u.data(), a.v = v.data(), a.mm = mm.data(), a.bias = bias.data();
  const int64_t groups = channels / (vectors * kLanes);
  ninegrid::neon::winograd_multiply(a, tiles, 0, positions * groups);
  double sum = 0;
  for (float m : mm) sum += m;
  std::printf("checksum %g\n", sum);
}

using QKernel = void (*)(const ninegrid::X86QConvArgs&, const ninegrid::X86ConvRange&);

// The int8 kernels (kernels/arm/qconv_kernels_arm.h) on the same layers: NCHW4c in and out, a ReLU-like
// clamp, no residual. Weight buffers are sized for the largest packing (the depthwise one: kernel_h x
// (kernel_w + 3) offsets x 4 lanes x 4 taps per block); their values do not matter.
void run_int8(const Layer& l, QKernel kernel) {
  ninegrid::X86QConvArgs a;
  set_geometry(a, l);
  const int64_t oc_padded = blocks(l.out_channels) * kLanes;
  std::vector<uint8_t> x(blocks(l.in_channels) * kLanes * l.in_h * l.in_w), y(oc_padded * a.out_h * a.out_w);
  std::vector<int8_t> w(oc_padded * a.in_channels_per_group * l.kernel * (l.kernel + 3) * 4);
  std::vector<int32_t> bias(oc_padded, 1000), tap_zero_sums(oc_padded * l.kernel * l.kernel, 0);
  std::vector<float> multiplier(oc_padded, 0.01f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 7 % 251);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i * 5 % 255 - 127);
  a.weights = w.data(), a.bias = bias.data(), a.tap_zero_sums = tap_zero_sums.data();
  a.x_zero_point = l.depthwise ? 3 : 3 - ninegrid::kArmInputZeroPointShift;
  a.requantize.multiplier = multiplier.data(), a.requantize.out_zero_point = 0;
  a.x = x.data(), a.y = y.data();
  ninegrid::X86ConvRange r;
  r.oc_block_end = blocks(l.out_channels), r.row_end = a.out_h;
  kernel(a, r);
  long sum = 0;
  for (uint8_t v : y) sum += v;
  std::printf("checksum %ld\n", sum);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3) {
    // int8: the same layers (depthwise, pointwise, direct 3x3) on the dotprod or neon kernels.
    const bool dotprod = !std::strcmp(argv[2], "dotprod");
    if (!dotprod && std::strcmp(argv[2], "neon")) {
      std::fprintf(stderr, "unknown int8 kernel set '%s' (dotprod or neon)\n", argv[2]);
      return 2;
    }
    const char* name = argv[1];
    QKernel kernel = nullptr;
    Layer l{};
    if (!std::strcmp(name, "qdw3x3s1")) {
      kernel = dotprod ? ninegrid::dotprod::qconv2d_depthwise : ninegrid::neon::qconv2d_depthwise;
      l = {32, 32, 32, 32, 3, 1, 1, kLanes, true};
    } else if (!std::strcmp(name, "qdw3x3s2")) {
      kernel = dotprod ? ninegrid::dotprod::qconv2d_depthwise : ninegrid::neon::qconv2d_depthwise;
      l = {32, 32, 64, 64, 3, 2, 1, kLanes, true};
    } else if (!std::strcmp(name, "qpointwise")) {
      kernel = dotprod ? ninegrid::dotprod::qconv2d_pointwise : ninegrid::neon::qconv2d_pointwise;
      l = {64, 64, 20, 20, 1, 1, 0, kLanes, false};
    } else if (!std::strcmp(name, "qdirect3x3")) {
      kernel = dotprod ? ninegrid::dotprod::qconv2d_direct : ninegrid::neon::qconv2d_direct;
      l = {64, 32, 20, 20, 3, 1, 1, kLanes, false};
    } else {
      std::fprintf(stderr, "unknown int8 kernel '%s'\n", name);
      return 2;
    }
    Dl_info info;
    if (!dladdr(reinterpret_cast<void*>(kernel), &info)) {
      std::fprintf(stderr, "dladdr failed\n");
      return 1;
    }
    std::printf("library %s base %p entry %p\n", info.dli_fname, info.dli_fbase, reinterpret_cast<void*>(kernel));
    run_int8(l, kernel);
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s dw3x3s1|dw3x3s2|pointwise|direct3x3|first3x3s2|winograd43\n", argv[0]);
    return 2;
  }
  const char* name = argv[1];
  void (*kernel)(const ninegrid::X86ConvArgs&, const ninegrid::X86ConvRange&) = nullptr;
  Layer l{};
  // Channel counts and planes as in RetinaFace-MobileNet0.25, the planes cut down to keep the log small.
  if (!std::strcmp(name, "dw3x3s1")) {
    kernel = ninegrid::neon::conv2d_depthwise, l = {32, 32, 32, 32, 3, 1, 1, kLanes, true};
  } else if (!std::strcmp(name, "dw3x3s2")) {
    kernel = ninegrid::neon::conv2d_depthwise, l = {32, 32, 64, 64, 3, 2, 1, kLanes, true};
  } else if (!std::strcmp(name, "pointwise")) {
    kernel = ninegrid::neon::conv2d_pointwise, l = {64, 64, 20, 20, 1, 1, 0, kLanes, false};
  } else if (!std::strcmp(name, "direct3x3")) {
    kernel = ninegrid::neon::conv2d_direct, l = {64, 32, 20, 20, 3, 1, 1, kLanes, false};
  } else if (!std::strcmp(name, "winograd43")) {
    kernel = nullptr;
  } else if (!std::strcmp(name, "first3x3s2")) {
    kernel = ninegrid::neon::conv2d_direct, l = {3, 8, 64, 64, 3, 2, 1, 1, false};
  } else {
    std::fprintf(stderr, "unknown kernel '%s'\n", name);
    return 2;
  }
  void* entry = kernel ? reinterpret_cast<void*>(kernel) : reinterpret_cast<void*>(ninegrid::neon::winograd_multiply);
  Dl_info info;
  if (!dladdr(entry, &info)) {
    std::fprintf(stderr, "dladdr failed\n");
    return 1;
  }
  std::printf("library %s base %p entry %p\n", info.dli_fname, info.dli_fbase, entry);
  if (kernel) run(l, kernel);
  else run_winograd_multiply();
  return 0;
}
