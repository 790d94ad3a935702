#include "ops/conv_select.h"

#include <sstream>
#include <utility>

#include "ninegrid/tensor.h"
#include "ops/conv_fast.h"
#include "ops/conv_indirect.h"
#include "ops/conv_strassen.h"
#include "ops/conv_winograd.h"

namespace ninegrid {

namespace {

// Winograd must beat the direct kernel by this factor in its own cost model before it is chosen: the
// model is approximate, and Winograd costs 4x the weight memory (F(4x4)) and a little accuracy.
constexpr double kWinogradMinSpeedup = 1.2;
// Strassen must save this fraction of a GEMM's time in its cost model: its GEMM kernel runs a little
// slower than the pointwise kernel (measured with ninegrid_conv_algorithms_bench: bench/REPORT.md,
// "Design decisions and their measurements"), so a marginal saving loses to the pointwise kernel.
constexpr double kStrassenMinSaving = 0.05;

// Where the indirect kernel beats the direct one (ninegrid_conv_algorithms_bench): dense strided convs
// past the first layer, whose direct row tiles are short, and dense convs on small planes, where the
// nine-grid leaves few centre pixels per row; the indirect kernel tiles the flattened output instead. The
// direct kernel keeps the first layer and larger stride-1 planes. Measured: bench/REPORT.md, "Design
// decisions and their measurements".
bool indirect_beats_direct(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  if (p.groups != 1 || p.in_channels < 32) return false;
  // Strided 1x1 convs run as a gather and the pointwise kernel where it fits (ops/conv_fast.h).
  const bool pointwise = p.kernel_h == 1 && p.kernel_w == 1;
  if (pointwise && FastConv2d::supports(p, in_block, out_block, isa, ConvAlgorithm::Pointwise)) return false;
  // Strided convs onto a small plane are the exception: there the direct kernel won, alone and in
  // ResNet-50; at 14x14 outputs and above the indirect kernel kept its lead or tied (measured:
  // bench/REPORT.md, "Design decisions and their measurements").
  if (p.stride_h > 1 || p.stride_w > 1) return p.out_h * p.out_w > 64;
  return !pointwise && p.out_h * p.out_w <= 64;
}

// One algorithm's class behind the common interface.
template <typename Impl>
class KernelOf final : public Conv2dKernel {
 public:
  template <typename... Args>
  explicit KernelOf(Args&&... args) : impl_(std::forward<Args>(args)...) {}
  void run(const float* x, float* y, const float* residual, ThreadPool* pool) const override {
    impl_.run(x, y, residual, pool);
  }
  std::string name() const override { return std::string(impl_.algorithm()) + "/" + impl_.isa(); }

 private:
  Impl impl_;
};

}  // namespace

unsigned parse_conv_algorithms(const std::string& names) {
  if (names.empty()) return kConvAll;
  unsigned flags = 0;
  std::stringstream list(names);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name == "winograd") flags |= kConvWinograd;
    else if (name == "strassen") flags |= kConvStrassen;
    else if (name == "direct") flags |= kConvDirect;
    else if (name == "indirect") flags |= kConvIndirect;
    else if (!name.empty())
      throw Error("unknown convolution algorithm '" + name +
                  "' (expected a comma-separated list of winograd, strassen, direct, indirect)");
  }
  return flags;
}

std::unique_ptr<Conv2dKernel> select_conv2d_kernel(const Conv2dParams& p, const float* weights, const float* bias,
                                                   const Activation& activation, int64_t in_block, int64_t out_block,
                                                   const ExecSettings& settings) {
  const Isa isa = settings.isa;
  const unsigned allowed = settings.conv_algorithms;
  const int tile = settings.winograd_tile;
  if ((allowed & kConvWinograd) && WinogradConv2d::supports(p, in_block, out_block, isa) &&
      WinogradConv2d::estimated_speedup(p, isa) >= kWinogradMinSpeedup)
    return std::make_unique<KernelOf<WinogradConv2d>>(p, weights, bias, activation, isa, in_block, out_block, tile);
  if ((allowed & kConvStrassen) && StrassenConv1x1::supports(p, in_block, out_block, isa) &&
      StrassenConv1x1::splittable(p, in_block, out_block) &&
      StrassenConv1x1::estimated_saving(p, isa) >= kStrassenMinSaving)
    return std::make_unique<KernelOf<StrassenConv1x1>>(p, weights, bias, activation, isa, in_block, out_block, 1);
  if ((allowed & kConvIndirect) && indirect_beats_direct(p, in_block, out_block, isa) &&
      IndirectConv2d::supports(p, in_block, out_block, isa))
    return std::make_unique<KernelOf<IndirectConv2d>>(p, weights, bias, activation, isa, in_block, out_block);
  if ((allowed & kConvDirect) && FastConv2d::supports(p, in_block, out_block, isa))
    return std::make_unique<KernelOf<FastConv2d>>(p, weights, bias, activation, isa, in_block, out_block);
  if ((allowed & kConvIndirect) && IndirectConv2d::supports(p, in_block, out_block, isa))
    return std::make_unique<KernelOf<IndirectConv2d>>(p, weights, bias, activation, isa, in_block, out_block);
  return nullptr;
}

}  // namespace ninegrid
