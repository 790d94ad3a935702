// The arithmetic of `ninegrid quantize`: activation statistics collected over the calibration images,
// the three ways of choosing a tensor's range from them (min/max, percentile, KL divergence), and the
// quantisation parameters that follow (uint8 asymmetric activations, int8 symmetric weights, int32
// biases). Pure functions on plain arrays, so they are tested on known histograms
// (tests/unit/quant_calibration_test.cpp) without a model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ninegrid::quant {

// A tensor's values over every calibration image: exact min and max, and a histogram of |x| kept
// separately for positive and negative values (sharing one bin width), exact zeros counted apart.
//
// The range is not known before the images are seen, so the bins grow: the first nonzero batch sets the
// bin width so its largest |x| lands in the last bin; a later batch with a larger |x| doubles the width
// (merging bins pairwise, which is exact: no count moves across an old bin edge) until it fits. At the
// end the occupied bins number between kBins/2 and kBins, whatever the order of the images.
class Histogram {
 public:
  static constexpr int kBins = 4096;

  Histogram();
  // Adds n values; NaN and infinities are counted in non_finite() and otherwise ignored.
  void add(const float* x, size_t n);

  double min() const { return min_; }  // +inf / -inf before any finite value
  double max() const { return max_; }
  uint64_t count() const { return count_; }  // finite values, zeros included
  uint64_t zeros() const { return zeros_; }
  uint64_t non_finite() const { return non_finite_; }
  double bin_width() const { return width_; }  // 0 until a nonzero value arrives
  // Bin i counts the values with |x| in [i * bin_width, (i + 1) * bin_width) (the last bin also
  // holds |x| == kBins * bin_width), positive ones in positive(), negative ones in negative().
  const std::vector<uint64_t>& positive() const { return pos_; }
  const std::vector<uint64_t>& negative() const { return neg_; }

 private:
  void grow_to(double absmax);

  double min_, max_;
  uint64_t count_ = 0, zeros_ = 0, non_finite_ = 0;
  double width_ = 0;
  std::vector<uint64_t> pos_, neg_;
};

// A real interval [lo, hi] to be mapped onto the quantised range.
struct Range {
  double lo = 0, hi = 0;
};

// [min, max] of everything seen (0, 0 when nothing finite was).
Range minmax_range(const Histogram& h);

// Clips the tails: hi is the smallest bin edge with at most (100 - percentile)% of all values above it,
// lo the same below (each tail on its own, so 99.99 keeps 99.98% of the values in between at worst); never
// wider than [min, max]. percentile must be in (0, 100]; 100 gives [min, max].
Range percentile_range(const Histogram& h, double percentile);

// TensorRT's entropy calibration: the clipping threshold T whose quantised distribution is closest,
// in Kullback-Leibler divergence, to the observed one. The histogram searched is of |x| without the exact
// zeros (zero is always exact, and ReLU outputs' spike at zero would otherwise dominate the search). A
// tensor with no negative values maps [0, T] onto uint8's 256 levels, so the search compares 256
// quantised bins; a signed one maps [-T, T] symmetrically, 128 levels a side (as TensorRT does). The
// result is [max(min, -T), min(max, T)].
Range kl_range(const Histogram& h);

// The KL search proper, on any histogram of magnitudes: the number of leading bins (from
// `quantized_bins` up to hist.size()) whose clipped distribution, merged into `quantized_bins` levels,
// diverges least from it; the threshold is then that many bin widths. Trailing empty bins are ignored;
// a histogram with no more occupied bins than `quantized_bins` returns its occupied length.
size_t kl_threshold_bins(const std::vector<uint64_t>& hist, size_t quantized_bins);
// KL(P || Q) of two unnormalised histograms of the same length, each normalised to sum 1; bins where P is
// 0 contribute nothing; where P > 0 and Q == 0, Q is taken as a tiny epsilon.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q);

// The range whose uint8 quantisation of the observed values has the least squared error: rounding noise
// (step^2 / 12 for every nonzero value inside; exact zeros stay exact) plus the clipping error of the values
// outside (each bin's values taken at its centre). PyTorch's HistogramObserver minimises the same error. The
// ends searched are bin edges (every one for a tensor without negative values; for a signed one, a grid of
// at most 512 edges a side, searched jointly since both ends share the step); never wider than [min, max].
Range mse_range(const Histogram& h);

// uint8 asymmetric parameters for a range: the range is first widened to include 0 (so zero, padding
// and ReLU's floor are exact), then scale = (hi - lo) / 255 and zero_point = round(-lo / scale) in
// [0, 255]. A range of only zeros (or narrower than 1e-30) gets scale 1, zero point 0.
struct ActivationParams {
  float scale = 1.f;
  uint8_t zero_point = 0;
};
ActivationParams activation_params(Range r);
// What quantising and dequantising x with these parameters gives (as QuantizeLinear then
// DequantizeLinear compute it: round half to even, saturate to [0, 255]).
float fake_quantize(float x, ActivationParams p);

// int8 symmetric weights: scale = max|w| / weight_max over each slice (one per output channel when
// per_channel, else one for the tensor), q = round(w / scale) in [-weight_max, weight_max], zero point 0.
// weight_max 127 uses the whole int8 range; 63 gives 7-bit weights, whose products the AVX2 kernels without
// VNNI sum four at a time (kernels/x86/simd_int8_avx2.h, QVecAvx2W7). `channels`
// slices of the weight are `inner` contiguous values apart (axis 0 of a Conv weight: inner = all but
// the first dimension); `outer` repeats of that pattern cover the whole tensor (a Gemm weight quantised
// along axis 1 has outer = rows, channels = columns, inner = 1). A slice of zeros borrows the largest
// scale of the others (1 if the tensor is all zero), so its bias keeps its precision and no scale is 0.
struct WeightQuant {
  std::vector<float> scale;  // channels values when per_channel, else 1
  std::vector<int8_t> q;     // same layout as the input
};
WeightQuant quantize_weights(const float* w, size_t outer, size_t channels, size_t inner, bool per_channel,
                             int weight_max = 127);

// int32 bias in units of x_scale * w_scale[c]: round(b / (x_scale * w_scale[c])), saturated to int32.
// Returns how many values saturated (0 unless the scales are absurdly small).
size_t quantize_bias(const float* b, size_t channels, float x_scale, const std::vector<float>& w_scale,
                     std::vector<int32_t>* q, std::vector<float>* scale);

// Bias correction. Quantisation shifts a layer's output mean: its inputs are rounded with a bias (a
// ReLU output's many small values round down more often than up, clipping lowers the large ones) and its
// weights are rounded too, and over a reduction of hundreds of inputs these small shifts add up instead
// of averaging out. The per-channel means of a layer's input in float and after quantisation, gathered
// on the calibration images, give the shift of each output channel, which its bias then absorbs (as in
// Nagel et al., "Data-Free Quantization", 2019, from data rather than from BatchNorm statistics).
struct ChannelMeans {
  std::vector<double> sum_x, sum_xq;  // per channel, over every value seen
  uint64_t per_channel = 0;           // values seen per channel
  // Adds a tensor whose channels lie along `axis` of `shape`, quantised with `p` for sum_xq.
  void add(const float* x, const std::vector<int64_t>& shape, size_t axis, ActivationParams p);
  size_t channels() const { return sum_x.size(); }
};

// Raises acc[c] to the largest |x| of channel c of a tensor whose channels lie along `axis` of `shape`
// (acc is sized on first use; a tensor of another channel count leaves it alone).
void accumulate_channel_absmax(const float* x, const std::vector<int64_t>& shape, size_t axis,
                               std::vector<double>* acc);

// The shift of each output channel's mean, sum over its inputs and taps of w_q * E[x_q] - w * E[x], for
// a weight laid out [out_channels, in_per_group, taps] with out_channels / groups outputs per group
// (a Conv's weight; a Gemm's as [N, K, 1]). The bias to write is the float bias minus this.
std::vector<double> output_mean_shift(const float* w, const float* w_quantized, size_t out_channels,
                                      size_t in_per_group, size_t taps, size_t groups, const ChannelMeans& m);

// Cosine similarity and largest absolute difference of two tensors, accumulated over many of them.
struct Agreement {
  double dot = 0, norm_a = 0, norm_b = 0, max_abs = 0;
  uint64_t count = 0;
  void add(const float* a, const float* b, size_t n);
  // 1 when both are all zero; 0 when exactly one is.
  double cosine() const;
};

}  // namespace ninegrid::quant
