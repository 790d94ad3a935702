#include "ops/conv_select.h"

#include <sstream>
#include <utility>

#include "ninegrid/tensor.h"
#include "ops/conv_cost_model.h"
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

// The first-layer kernel (kernels/x86/conv_first_layer_impl.h) handles a plain NCHW input, one group and
// stride 1 or 2 along the width, with any channel counts; the choice by shape takes it for an image with
// few channels in and at most 8 out, where the direct kernel has one 8-lane FMA per broadcast. From 16
// output channels on the direct kernel was faster (ninegrid_kernel_bench first/ rows; measured:
// bench/REPORT.md, "Design decisions and their measurements").
constexpr int64_t kFirstLayerMaxInChannels = 4;
constexpr int64_t kFirstLayerMaxOutChannels = 8;

[[maybe_unused]] bool is_first_layer(const Conv2dParams& p, int64_t in_block) {
  return in_block == 1 && p.in_channels <= kFirstLayerMaxInChannels && p.out_channels <= kFirstLayerMaxOutChannels;
}

ConvPlan plan_of(ConvKernel kernel, Isa isa, int64_t in_block, int64_t out_block) {
  ConvPlan plan;
  plan.kernel = kernel;
  plan.isa = isa;
  plan.in_block = in_block, plan.out_block = out_block;
  return plan;
}

ConvPlan no_plan(int64_t in_block, int64_t out_block) { return plan_of(ConvKernel::Ref, Isa::Ref, in_block, out_block); }

// Where the indirect kernel beats the direct one (ninegrid_conv_algorithms_bench): dense strided convs
// past the first layer, whose direct row tiles are short, and dense convs on small planes, where the
// nine-grid leaves few centre pixels per row; the indirect kernel tiles the flattened output instead. The
// direct kernel keeps the first layer and larger stride-1 planes. Measured: bench/REPORT.md, "Design
// decisions and their measurements".
bool indirect_beats_direct(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  if (p.groups != 1 || p.in_channels < 32) return false;
  // Strided 1x1 convs run as a gather and the pointwise kernel where it fits (ops/conv_fast.h).
  const bool pointwise = p.kernel_h == 1 && p.kernel_w == 1;
  if (pointwise && fast_conv_plan(p, in_block, out_block, isa, ConvAlgorithm::Pointwise).kernel != ConvKernel::Ref)
    return false;
  // Strided convs onto a small plane are the exception: there the direct kernel won, alone and in
  // ResNet-50; at 14x14 outputs and above the indirect kernel kept its lead or tied (measured:
  // bench/REPORT.md, "Design decisions and their measurements").
  if (p.stride_h > 1 || p.stride_w > 1) return p.out_h * p.out_w > 64;
  return !pointwise && p.out_h * p.out_w <= 64;
}

ConvKernel kernel_of(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::Direct: return ConvKernel::Direct;
    case ConvAlgorithm::Pointwise: return ConvKernel::Pointwise;
    case ConvAlgorithm::Depthwise: return ConvKernel::Depthwise;
    case ConvAlgorithm::FirstLayer: return ConvKernel::FirstLayer;
    case ConvAlgorithm::Auto: break;
  }
  return ConvKernel::Ref;
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

bool isa_within(Isa isa, Isa cap) {
  return isa != Isa::Ref && cpu_runs(isa) && is_arm_isa(isa) == is_arm_isa(cap) && isa <= cap;
}

bool allowed_kernel(ConvKernel k, unsigned allowed) {
  switch (k) {
    case ConvKernel::Ref: return true;
    case ConvKernel::Winograd: return allowed & kConvWinograd;
    case ConvKernel::Strassen: return allowed & kConvStrassen;
    case ConvKernel::Indirect: return allowed & kConvIndirect;
    default: return allowed & kConvDirect;
  }
}

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

// ---- One algorithm's rules ----

ConvPlan fast_conv_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, ConvAlgorithm want) {
  const ConvPlan none = no_plan(in_block, out_block);
#if defined(__x86_64__) || defined(__aarch64__)
  isa = runnable_isa(isa);
  if (isa == Isa::Ref || !fast_conv_shape_ok(p)) return none;
  if (!is_kernel_channel_block(in_block, p.in_channels) || !is_kernel_channel_block(out_block, p.out_channels)) return none;
#endif
#if defined(__aarch64__)
  // NEON: 4 channels per register, the kernel by shape (there is no first-layer kernel for 4 lanes).
  const ConvKernel kernel = want == ConvAlgorithm::Auto ? fast_kernel_by_shape(p) : kernel_of(want);
  if (FastConv2d::fits(p, in_block, out_block, Isa::Neon, kernel)) return plan_of(kernel, Isa::Neon, in_block, out_block);
  return none;
#elif defined(__x86_64__)
  if (!isa_takes_block(isa, in_block) || !isa_takes_block(isa, out_block)) return none;
  // The rules take the first-layer kernel with 16-lane vectors only: with AVX2's 16 registers its tile is
  // 8 channels x 1 vector, and on a Zen 3 core it ran at 0.5-0.7x the direct kernel's speed on every first/
  // shape of ninegrid_kernel_bench (bench/REPORT.md, "Design decisions and their measurements").
  if (want == ConvAlgorithm::FirstLayer ||
      (want == ConvAlgorithm::Auto && isa >= Isa::Avx512 && is_first_layer(p, in_block))) {
    // Output pixels across the lanes: the widest vectors whatever the output block.
    const Isa widest = isa >= Isa::Avx512 ? Isa::Avx512 : Isa::Avx2;
    if (FastConv2d::fits(p, in_block, out_block, widest, ConvKernel::FirstLayer))
      return plan_of(ConvKernel::FirstLayer, widest, in_block, out_block);
    if (want == ConvAlgorithm::FirstLayer) return none;
  }

  // Vector widths to try: the output block fixes it; plain NCHW output may use either (the narrower
  // first when the wider would mostly compute padding channels).
  int64_t widths[2] = {0, 0};
  if (out_block == 16) {
    widths[0] = isa >= Isa::Avx512 ? 16 : 0;
  } else if (out_block == 8) {
    // 16-lane kernels write NCHW8c as pairs of blocks (kernels/x86/conv_epilogue_impl.h): twice the
    // work per instruction, worth the padding vector's waste from 16 channels on (24: 32 computed).
    // (Not for a depthwise conv already in 8-channel blocks: restaging its input into 16-channel blocks
    // costs more than the wider vectors save on a memory-bound layer, as on BlazeFace's. Nor for a plain
    // image in with an odd number of 8-channel blocks out, where a quarter or more of the wide vectors'
    // lanes would be padding, as in BlazeFace's 3->24 first conv. Measured: bench/REPORT.md, "Design
    // decisions and their measurements".)
    const bool wide_wastes = in_block == 1 && p.out_channels % 16 != 0;
    if (isa >= Isa::Avx512 && p.out_channels > 8 && !(conv_is_depthwise(p) && in_block == 8) && !wide_wastes)
      widths[0] = 16, widths[1] = 8;
    else
      widths[0] = 8;
  } else if (isa >= Isa::Avx512 && p.out_channels > 8) {
    widths[0] = 16, widths[1] = 8;
  } else {
    widths[0] = 8, widths[1] = isa >= Isa::Avx512 ? 16 : 0;
  }
  const ConvKernel kernel = want == ConvAlgorithm::Auto ? fast_kernel_by_shape(p) : kernel_of(want);
  for (int64_t lanes : widths) {
    if (lanes == 0) continue;
    const Isa kernel_isa = lanes == 16 ? Isa::Avx512 : Isa::Avx2;
    if (FastConv2d::fits(p, in_block, out_block, kernel_isa, kernel))
      return plan_of(kernel, kernel_isa, in_block, out_block);
  }
  return none;
#else
  (void)p, (void)isa, (void)want;
  return none;
#endif
}

ConvPlan winograd_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, int tile) {
  // What the driver runs, few channels included (tests and benchmarks force it; the policy asks supports()).
  if (!WinogradConv2d::runs(p, in_block, out_block, isa)) return no_plan(in_block, out_block);
  ConvPlan plan = plan_of(ConvKernel::Winograd, runnable_isa(isa), in_block, out_block);
  plan.winograd_tile = tile != 0 ? tile : winograd_default_tile(p, plan.isa, this_winograd_core());
  return plan;
}

ConvPlan strassen_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, int levels) {
  if (!StrassenConv1x1::supports(p, in_block, out_block, isa)) return no_plan(in_block, out_block);
  const Isa kernel_isa = StrassenConv1x1::kernel_isa(p, in_block, out_block, isa);
  ConvPlan plan = plan_of(ConvKernel::Strassen, kernel_isa, in_block, out_block);
  const bool split = StrassenConv1x1::splittable(p, in_block, out_block);
  plan.strassen_levels = levels >= 0 ? levels : (split && strassen_recursion_pays(p, kernel_isa) ? 1 : 0);
  return plan;
}

ConvPlan indirect_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  const Isa kernel_isa = IndirectConv2d::best_isa(p, in_block, out_block, isa);
  if (kernel_isa == Isa::Ref) return no_plan(in_block, out_block);
  return plan_of(ConvKernel::Indirect, kernel_isa, in_block, out_block);
}

// ---- The policy ----

ConvPlan rule_conv_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, const ExecSettings& settings) {
  const Isa isa = settings.isa;
  const unsigned allowed = settings.conv_algorithms;
  if ((allowed & kConvWinograd) && WinogradConv2d::supports(p, in_block, out_block, isa) &&
      winograd_estimated_speedup(p, isa, this_winograd_core()) >= kWinogradMinSpeedup)
    return winograd_plan(p, in_block, out_block, isa, settings.winograd_tile);
  if ((allowed & kConvStrassen) && StrassenConv1x1::supports(p, in_block, out_block, isa) &&
      StrassenConv1x1::splittable(p, in_block, out_block) && strassen_estimated_saving(p, isa) >= kStrassenMinSaving)
    return strassen_plan(p, in_block, out_block, isa, 1);
  if ((allowed & kConvIndirect) && indirect_beats_direct(p, in_block, out_block, isa) &&
      IndirectConv2d::supports(p, in_block, out_block, isa))
    return indirect_plan(p, in_block, out_block, isa);
  if (allowed & kConvDirect) {
    const ConvPlan direct = fast_conv_plan(p, in_block, out_block, isa);
    if (direct.kernel != ConvKernel::Ref) return direct;
  }
  if (allowed & kConvIndirect) return indirect_plan(p, in_block, out_block, isa);
  return no_plan(in_block, out_block);
}

bool conv_plan_fits(const ConvPlan& plan, const Conv2dParams& p, const ExecSettings& settings) {
  if (plan.int8_form != QConvForm::None) return false;  // an int8 plan's (ops/qconv_select.h)
  if (plan.kernel == ConvKernel::Ref) return true;
  if (!isa_within(plan.isa, settings.isa) || !allowed_kernel(plan.kernel, settings.conv_algorithms)) return false;
  const int64_t in = plan.in_block, out = plan.out_block;
  const bool no_split = plan.split == ConvSplit::Auto || plan.split == ConvSplit::Serial;
  switch (plan.kernel) {
    case ConvKernel::FirstLayer:
    case ConvKernel::Depthwise:
      if (plan.oc_tile == 1) return false;  // (these kernels have one register tile)
      [[fallthrough]];
    case ConvKernel::Direct:
    case ConvKernel::Pointwise:
      return FastConv2d::fits(p, in, out, plan.isa, plan.kernel) && plan.oc_tile >= 0 && plan.oc_tile <= 2 &&
             plan.winograd_tile == 0 && plan.strassen_levels == 0 && plan.split != ConvSplit::Tiles;
    case ConvKernel::Winograd:
      return WinogradConv2d::supports(p, in, out, plan.isa) && runnable_isa(plan.isa) == plan.isa &&
             (plan.winograd_tile == 2 || plan.winograd_tile == 4 || plan.winograd_tile == 6) &&
             (settings.winograd_tile == 0 || settings.winograd_tile == plan.winograd_tile) && plan.oc_tile >= 0 &&
             plan.oc_tile <= 2 &&
             plan.strassen_levels == 0 && plan.split != ConvSplit::Rows;
    case ConvKernel::Strassen:
      return StrassenConv1x1::supports(p, in, out, plan.isa) &&
             StrassenConv1x1::kernel_isa(p, in, out, plan.isa) == plan.isa &&
             (plan.strassen_levels == 0 || (plan.strassen_levels == 1 && StrassenConv1x1::splittable(p, in, out))) &&
             plan.oc_tile == 0 && plan.winograd_tile == 0 && no_split;
    case ConvKernel::Indirect:
      return IndirectConv2d::fits(p, in, out, plan.isa) && plan.oc_tile == 0 && plan.winograd_tile == 0 &&
             plan.strassen_levels == 0 && plan.split != ConvSplit::Tiles;
    case ConvKernel::Ref: break;
  }
  return false;
}

std::vector<ConvPlan> conv_plan_candidates(const Conv2dParams& p, int64_t in_block, int64_t out_block,
                                           const ExecSettings& settings) {
  std::vector<ConvPlan> out;
  const bool threaded = settings.threads > 1;
  auto add = [&](ConvPlan plan, std::initializer_list<ConvSplit> splits) {
    for (ConvSplit split : splits) {
      if (!threaded && split != ConvSplit::Auto) continue;
      plan.split = split;
      if (conv_plan_fits(plan, p, settings)) out.push_back(plan);
    }
  };
  // The vector ISAs at or below the cap that this CPU runs, widest first.
  std::vector<Isa> isas;
  for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Neon})  // (Dotprod runs NEON's fp32 kernels)
    if (isa_within(isa, settings.isa)) isas.push_back(isa);
  const auto all_splits = {ConvSplit::Auto, ConvSplit::Serial, ConvSplit::Channels, ConvSplit::Rows, ConvSplit::Tiles};
  for (Isa isa : isas) {
    // Winograd: tiles 2 and 4 (6 rounds too coarsely to be chosen unless forced).
    for (int tile : {2, 4, 6}) {
      if (tile == 6 && settings.winograd_tile != 6) continue;
      ConvPlan plan = plan_of(ConvKernel::Winograd, isa, in_block, out_block);
      plan.winograd_tile = tile;
      // Both register tiles where the chunks fit the tall one; elsewhere the rule's (always wide).
      const bool fits_tall = WinogradConv2d::applicable(p) && winograd_fits_tall_tile(p, tile, isa);
      for (int oc_tile : {0, 1, 2}) {
        if ((oc_tile == 0) == fits_tall) continue;
        plan.oc_tile = oc_tile;
        add(plan, all_splits);
      }
    }
    for (int levels : {0, 1}) {
      ConvPlan plan = plan_of(ConvKernel::Strassen, isa, in_block, out_block);
      plan.strassen_levels = levels;
      add(plan, all_splits);
    }
    add(plan_of(ConvKernel::Indirect, isa, in_block, out_block), all_splits);
    // The direct family: the kernel by shape, and the first-layer kernel where it fits.
    for (ConvKernel kernel : {fast_kernel_by_shape(p), ConvKernel::FirstLayer}) {
      for (int oc_tile : {0, 1}) {
        if (oc_tile == 1 && kernel != ConvKernel::Direct && kernel != ConvKernel::Pointwise) continue;
        ConvPlan plan = plan_of(kernel, isa, in_block, out_block);
        plan.oc_tile = oc_tile;
        add(plan, all_splits);
      }
    }
  }
  const ConvPlan rules = rule_conv_plan(p, in_block, out_block, settings);
  bool have_rules = rules.kernel == ConvKernel::Ref;
  for (const ConvPlan& c : out) have_rules = have_rules || c == rules;
  if (!have_rules) out.insert(out.begin(), rules);
  return out;
}

ConvKey conv_key(const Conv2dParams& p, ActivationKind activation, bool residual, int64_t in_block, int64_t out_block,
                 const ExecSettings& settings) {
  ConvKey k;
  k.p = p;
  k.activation = activation;
  k.residual = residual;
  k.in_block = in_block, k.out_block = out_block;
  k.isa = settings.isa;
  k.threads = settings.threads;
  return k;
}

const ConvPlan* tuned_plan_entry(const ConvKey& key, const ExecSettings& settings) {
  if (!settings.tuned_plans) return nullptr;
  auto it = settings.tuned_plans->find(format_conv_key(key));
  if (it == settings.tuned_plans->end() || it->second.kernel == ConvKernel::Ref) return nullptr;
  return &it->second;
}

ConvPlan choose_conv_plan(const ConvKey& key, const ExecSettings& settings, bool* tuned_out) {
  const ConvPlan* tuned = tuned_plan_entry(key, settings);
  const bool use = tuned && tuned->in_block == key.in_block && tuned->out_block == key.out_block &&
                   conv_plan_fits(*tuned, key.p, settings);
  if (tuned_out) *tuned_out = use;
  return use ? *tuned : rule_conv_plan(key.p, key.in_block, key.out_block, settings);
}

std::unique_ptr<Conv2dKernel> make_conv2d_kernel(const ConvPlan& plan, const Conv2dParams& p, const float* weights,
                                                 const float* bias, const Activation& activation) {
  switch (plan.kernel) {
    case ConvKernel::Ref: return nullptr;
    case ConvKernel::Winograd: return std::make_unique<KernelOf<WinogradConv2d>>(p, weights, bias, activation, plan);
    case ConvKernel::Strassen: return std::make_unique<KernelOf<StrassenConv1x1>>(p, weights, bias, activation, plan);
    case ConvKernel::Indirect: return std::make_unique<KernelOf<IndirectConv2d>>(p, weights, bias, activation, plan);
    default: return std::make_unique<KernelOf<FastConv2d>>(p, weights, bias, activation, plan);
  }
}

std::unique_ptr<Conv2dKernel> select_conv2d_kernel(const Conv2dParams& p, const float* weights, const float* bias,
                                                   const Activation& activation, int64_t in_block, int64_t out_block,
                                                   const ExecSettings& settings) {
  const ConvPlan plan = choose_conv_plan(conv_key(p, activation.kind, false, in_block, out_block, settings), settings);
  return make_conv2d_kernel(plan, p, weights, bias, activation);
}

// ---- Layouts ----

int64_t rule_conv_out_block(int64_t out_channels, int max_block, int64_t in_block, bool depthwise) {
  // The blocks the vector kernels take: 16 and 8 (AVX-512), 8 (AVX2), 4 (NEON).
  const int64_t smallest = max_block < 8 ? max_block : 8;
  int64_t b = 1;
  for (int64_t c = max_block; c >= smallest && c > 1; c /= 2)
    if (out_channels % c == 0) {
      b = c;
      break;
    }
  if (b > 1 && depthwise && in_block > 1 && in_block < b) b = in_block;
  return b;
}

}  // namespace ninegrid
