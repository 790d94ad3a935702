// The conv policy: the one place that decides how a float 2-D convolution runs (DESIGN.md techniques 4-8
// and 11; the int8 ng.QConv's twin is ops/qconv_select.h, with the same plan value, keys and tuner, whose
// blocks follow plan_layout's int8 rules, which the layout search does not model). It returns a ConvPlan
// (ops/conv_plan.h), a plain value, from one of two sources:
//
//   the rules      hand-fitted from measurements on two kinds of core (the first match wins):
//     winograd     3x3 stride-1 dense convs with enough channels, when the Winograd cost model
//                  (ops/conv_cost_model.h) expects it to beat the direct kernel by a clear margin;
//     strassen     large 1x1 convs where one level of Strassen's recursion pays;
//     indirect     dense strided convs past the first layer and dense convs on small planes, where it
//                  measured faster than the direct kernel (ops/conv_indirect.h);
//     direct       the register-blocked direct, first-layer, pointwise and depthwise kernels
//                  (ops/conv_fast.h; the kernel and vector width by shape and blocks);
//     indirect     again, for what the direct kernels cannot do (grouped convs with few channels per group);
//     ref          when none applies, the reference kernel;
//   the tuner      plans measured on this CPU by `ninegrid tune` (runtime/tuner.h), handed over in
//                  ExecSettings::tuned_plans; each is checked against the conv and the settings before it
//                  replaces the rules' plan, so a stale or forged entry can only be ignored.
//
// The same holds for the channel block a conv writes (rule_conv_out_block), which the layout pass asks
// for. ExecSettings::conv_algorithms (Options::conv_algorithms) restricts every choice, so a wrong answer
// can be bisected to an algorithm; ExecSettings::winograd_tile forces a tile.
//
// Every algorithm has the same interface (prepack at load time, run per inference, output written once
// with bias, activation and residual fused), so the Conv op holds one Conv2dKernel and does not care
// which it is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "ops/conv_plan.h"
#include "ops/exec_settings.h"

namespace ninegrid {

class ThreadPool;

class Conv2dKernel {
 public:
  virtual ~Conv2dKernel() = default;
  // y = activation(conv(x) + bias + residual) for the whole batch, x in the input block, y and the
  // optional residual (may be y itself) in the output block. `pool` may be null (one thread).
  virtual void run(const float* x, float* y, const float* residual, ThreadPool* pool) const = 0;
  // E.g. "winograd43/avx512", "pointwise/avx2", "indirect/avx512".
  virtual std::string name() const = 0;
};

// One plan's kernel on a conv's weights as the tuner times it, on the op's own buffers: floats for a Conv,
// uint8 for an ng.QConv (ops/qconv_select.h). Same contract as Conv2dKernel::run.
class ConvCandidate {
 public:
  virtual ~ConvCandidate() = default;
  virtual void run(const void* x, void* y, const void* residual, ThreadPool* pool) const = 0;
};

// What the tuner (runtime/tuner.h) sees of a conv op prepared for a session (Conv, ng.QConv): the conv's
// key and plan, and the means to build other plans' kernels on the same weights. Op::conv_tunable()
// returns it for a 2-D conv that runs a vector kernel, null otherwise.
class ConvTunable {
 public:
  virtual ~ConvTunable() = default;
  // The conv as prepared (shape, epilogue, blocks, ISA cap, threads; key().int8 for an int8 conv) and the
  // plan it runs.
  virtual const ConvKey& key() const = 0;
  virtual const ConvPlan& plan() const = 0;
  // Whether that plan came from the tuning cache (ExecSettings::tuned_plans) rather than the rules.
  virtual bool tuned() const = 0;
  // The kernel of `plan` on this conv's weights (a float conv's plan.in_block/out_block may differ from the
  // key's: the tuner times other layouts on the same buffers; an int8 conv's may not). Throws Error when the
  // plan does not fit, and when the op adopted the kernel its model or another session prepared
  // (Op::adopt_prepared_state): it has no weights then, which a fixed-shape model releases after packing
  // (the tuner loads its models with ModelLoadForTuning, so that their sessions prepare their own convs).
  virtual std::unique_ptr<ConvCandidate> candidate(const ConvPlan& plan) const = 0;
};

// ---- One algorithm's plan by the rules (tests and benchmarks force an algorithm with these; the plan's
// kernel is ConvKernel::Ref when the algorithm cannot run the conv with these blocks under `isa`). ----

// The direct family's kernel: Auto picks by shape (the first-layer kernel for a plain image with few
// channels), the others force one.
enum class ConvAlgorithm { Auto, Direct, Pointwise, Depthwise, FirstLayer };
ConvPlan fast_conv_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa,
                        ConvAlgorithm want = ConvAlgorithm::Auto);
// Winograd with output tile `tile` (2, 4, 6; 0: the cost model's).
ConvPlan winograd_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, int tile = 0);
// Strassen with `levels` of recursion (0, 1; -1: the cost model's).
ConvPlan strassen_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, int levels = -1);
ConvPlan indirect_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);

// ---- The policy ----

// The rules' plan for one conv whose input and output are stored with these blocks.
ConvPlan rule_conv_plan(const Conv2dParams& p, int64_t in_block, int64_t out_block, const ExecSettings& settings);

// Whether `plan` computes this conv correctly on this CPU within the settings: its blocks, ISA (run by
// the CPU, within the cap), algorithm (allowed), tile (the forced one, if any), register tile and split
// are all ones its driver supports for this shape. Every tuned plan passes this before it is used.
bool conv_plan_fits(const ConvPlan& plan, const Conv2dParams& p, const ExecSettings& settings);

// Every plan the tuner may time for this conv with these blocks (ops' candidates: each algorithm the
// settings allow and the conv fits, on each vector width the CPU runs, with each Winograd tile (6 only when
// forced), register tile, Strassen depth, and, with more than one thread, each thread split). Each passes
// conv_plan_fits. The rules' plan is among them when it is not ConvKernel::Ref.
std::vector<ConvPlan> conv_plan_candidates(const Conv2dParams& p, int64_t in_block, int64_t out_block,
                                           const ExecSettings& settings);

// The key under which a conv's tuned plan is stored (the settings give the ISA cap and the threads).
ConvKey conv_key(const Conv2dParams& p, ActivationKind activation, bool residual, int64_t in_block, int64_t out_block,
                 const ExecSettings& settings);

// The cache's plan for the key in ExecSettings::tuned_plans (not ConvKernel::Ref), or null; unchecked: the
// policies (choose_conv_plan, choose_qconv_plan) check it against the conv before using it.
const ConvPlan* tuned_plan_entry(const ConvKey& key, const ExecSettings& settings);

// The plan a conv runs: the tuned one when the settings hold a fitting plan for its key (then *tuned is
// set, if given), else the rules'.
ConvPlan choose_conv_plan(const ConvKey& key, const ExecSettings& settings, bool* tuned = nullptr);

// Builds the plan's driver (packing the weights OIHW, bias out_channels values or null; a PRelu
// activation's slopes are copied), or returns null for ConvKernel::Ref. Throws Error when the plan does
// not fit the conv.
std::unique_ptr<Conv2dKernel> make_conv2d_kernel(const ConvPlan& plan, const Conv2dParams& p, const float* weights,
                                                 const float* bias, const Activation& activation);

// choose_conv_plan then make_conv2d_kernel, for a conv without a fused residual.
std::unique_ptr<Conv2dKernel> select_conv2d_kernel(const Conv2dParams& p, const float* weights, const float* bias,
                                                   const Activation& activation, int64_t in_block, int64_t out_block,
                                                   const ExecSettings& settings);

// ---- Layouts ----

// The block the rules give a conv's output when a blocked reader wants it (the layout pass decides
// plain outputs and fused residuals itself): the widest block up to `max_block` (the ISA's) and down to
// 8 (4 under NEON) that divides the channels, else 1; a depthwise conv keeps a narrower blocked input's
// block (each output channel reads only its own input channel, and a wider output block would make the
// kernel restage its input into that block on every run: bench/REPORT.md, "Design decisions and their
// measurements").
int64_t rule_conv_out_block(int64_t out_channels, int max_block, int64_t in_block, bool depthwise);

}  // namespace ninegrid
