#include "quant_calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ninegrid::quant {

Histogram::Histogram()
    : min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()),
      pos_(kBins, 0),
      neg_(kBins, 0) {}

void Histogram::grow_to(double absmax) {
  if (width_ == 0) {
    width_ = absmax / kBins;
    return;
  }
  while (absmax > width_ * kBins) {
    for (int i = 0; i < kBins / 2; ++i) {
      pos_[i] = pos_[2 * i] + pos_[2 * i + 1];
      neg_[i] = neg_[2 * i] + neg_[2 * i + 1];
    }
    std::fill(pos_.begin() + kBins / 2, pos_.end(), 0);
    std::fill(neg_.begin() + kBins / 2, neg_.end(), 0);
    width_ *= 2;
  }
}

void Histogram::add(const float* x, size_t n) {
  double absmax = 0;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) {
      ++non_finite_;
      continue;
    }
    min_ = std::min(min_, static_cast<double>(v));
    max_ = std::max(max_, static_cast<double>(v));
    absmax = std::max(absmax, std::fabs(static_cast<double>(v)));
  }
  if (absmax > 0) grow_to(absmax);
  const double inv = width_ > 0 ? 1.0 / width_ : 0;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) continue;
    ++count_;
    if (v == 0.f) {
      ++zeros_;
      continue;
    }
    const double a = std::fabs(static_cast<double>(v)) * inv;
    const int bin = a >= kBins ? kBins - 1 : static_cast<int>(a);
    ++(v > 0 ? pos_ : neg_)[bin];
  }
}

Range minmax_range(const Histogram& h) {
  if (h.count() == 0) return {0, 0};
  return {h.min(), h.max()};
}

namespace {

// The upper edge of the smallest set of leading bins leaving at most `tail` values above it (0 when
// every value fits in the tail).
double tail_edge(const std::vector<uint64_t>& bins, double width, double tail) {
  double above = 0;
  for (size_t i = bins.size(); i-- > 0;) {
    if (above + static_cast<double>(bins[i]) > tail) return static_cast<double>(i + 1) * width;
    above += static_cast<double>(bins[i]);
  }
  return 0;
}

}  // namespace

Range percentile_range(const Histogram& h, double percentile) {
  if (h.count() == 0) return {0, 0};
  const double tail = std::max(0.0, (100.0 - percentile) / 100.0) * static_cast<double>(h.count());
  Range r = {h.min(), h.max()};
  if (h.bin_width() == 0) return r;  // only zeros
  if (h.max() > 0) r.hi = std::min(h.max(), tail_edge(h.positive(), h.bin_width(), tail));
  if (h.min() < 0) r.lo = std::max(h.min(), -tail_edge(h.negative(), h.bin_width(), tail));
  return r;
}

double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (double v : p) sp += v;
  for (double v : q) sq += v;
  if (sp <= 0 || sq <= 0) return std::numeric_limits<double>::infinity();
  const double eps = 1e-12;
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    const double pi = p[i] / sp;
    const double qi = std::max(q[i] / sq, eps);
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

size_t kl_threshold_bins(const std::vector<uint64_t>& hist, size_t quantized_bins) {
  size_t n = hist.size();
  while (n > 0 && hist[n - 1] == 0) --n;
  if (n <= quantized_bins || quantized_bins == 0) return n;
  // suffix[i] = values in bins i.. n-1: what a threshold of i bins clips.
  std::vector<double> suffix(n + 1, 0);
  for (size_t i = n; i-- > 0;) suffix[i] = suffix[i + 1] + static_cast<double>(hist[i]);

  size_t best = n;
  double best_kl = std::numeric_limits<double>::infinity();
  std::vector<double> p, q;
  for (size_t i = quantized_bins; i <= n; ++i) {
    // P: the first i bins, with everything beyond folded into the last (clipping saturates there).
    p.assign(hist.begin(), hist.begin() + static_cast<std::ptrdiff_t>(i));
    p[i - 1] += suffix[i];
    // Q: the first i bins (without the clipped values) merged into quantized_bins levels, each level's
    // count spread evenly over the bins of P it covers that are not empty.
    q.assign(i, 0.0);
    for (size_t k = 0; k < quantized_bins; ++k) {
      const size_t start = k * i / quantized_bins, end = (k + 1) * i / quantized_bins;
      double total = 0;
      size_t nonzero = 0;
      for (size_t j = start; j < end; ++j) {
        total += static_cast<double>(hist[j]);
        nonzero += p[j] != 0;
      }
      if (nonzero == 0) continue;
      for (size_t j = start; j < end; ++j)
        if (p[j] != 0) q[j] = total / static_cast<double>(nonzero);
    }
    const double kl = kl_divergence(p, q);
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  return best;
}

Range kl_range(const Histogram& h) {
  if (h.count() == 0) return {0, 0};
  Range r = {h.min(), h.max()};
  if (h.bin_width() == 0) return r;
  const bool is_signed = h.min() < 0;
  std::vector<uint64_t> mag = h.positive();
  if (is_signed)
    for (size_t i = 0; i < mag.size(); ++i) mag[i] += h.negative()[i];
  const size_t bins = kl_threshold_bins(mag, is_signed ? 128 : 256);
  const double t = static_cast<double>(bins) * h.bin_width();
  r.hi = std::min(h.max(), t);
  if (is_signed) r.lo = std::max(h.min(), -t);
  return r;
}

namespace {

// Clipping error of one side: sum over bins i >= k of n_i (c_i - k w)^2 with c_i = (i + 1/2) w, for every k,
// from suffix sums of n, n c and n c^2 (in units of the bin width, scaled by w^2 at the end).
std::vector<double> tail_errors(const std::vector<uint64_t>& bins) {
  const size_t n = bins.size();
  std::vector<double> s0(n + 1, 0), s1(n + 1, 0), s2(n + 1, 0);
  for (size_t i = n; i-- > 0;) {
    const double c = static_cast<double>(i) + 0.5, v = static_cast<double>(bins[i]);
    s0[i] = s0[i + 1] + v;
    s1[i] = s1[i + 1] + v * c;
    s2[i] = s2[i + 1] + v * c * c;
  }
  std::vector<double> err(n + 1);
  for (size_t k = 0; k <= n; ++k) {
    const double e = static_cast<double>(k);
    err[k] = std::max(0.0, s2[k] - 2 * e * s1[k] + e * e * s0[k]);
  }
  return err;
}

// The candidate edges of one side (in bins): 0 when the side is empty, else up to the last occupied bin's
// upper edge, every `stride` bins, the last edge always included.
std::vector<size_t> candidate_edges(size_t occupied, size_t max_count) {
  if (occupied == 0) return {0};
  const size_t stride = std::max<size_t>(1, (occupied + max_count - 1) / max_count);
  std::vector<size_t> edges;
  for (size_t k = stride; k < occupied; k += stride) edges.push_back(k);
  edges.push_back(occupied);
  return edges;
}

}  // namespace

Range mse_range(const Histogram& h) {
  if (h.count() == 0) return {0, 0};
  Range r = {h.min(), h.max()};
  if (h.bin_width() == 0) return r;  // only zeros
  auto occupied = [](const std::vector<uint64_t>& b) {
    size_t n = b.size();
    while (n > 0 && b[n - 1] == 0) --n;
    return n;
  };
  const size_t np = occupied(h.positive()), nn = occupied(h.negative());
  const std::vector<double> tail_p = tail_errors(h.positive()), tail_n = tail_errors(h.negative());
  // Nonzero values inside [-j, k] bins: all but the clipped ones (s0 of the tails, recomputed here).
  std::vector<double> above_p(h.positive().size() + 1, 0), above_n(h.negative().size() + 1, 0);
  for (size_t i = h.positive().size(); i-- > 0;) above_p[i] = above_p[i + 1] + static_cast<double>(h.positive()[i]);
  for (size_t i = h.negative().size(); i-- > 0;) above_n[i] = above_n[i + 1] + static_cast<double>(h.negative()[i]);
  const std::vector<size_t> ks = candidate_edges(np, nn ? 512 : Histogram::kBins);
  const std::vector<size_t> js = candidate_edges(nn, 512);
  double best = std::numeric_limits<double>::infinity();
  size_t best_k = np, best_j = nn;
  for (size_t k : ks)
    for (size_t j : js) {
      if (k + j == 0) continue;
      const double step = static_cast<double>(k + j) / 255.0;  // in bin widths
      const double inside = (above_p[0] - above_p[k]) + (above_n[0] - above_n[j]);
      const double e = inside * step * step / 12.0 + tail_p[k] + tail_n[j];
      if (e < best) {
        best = e;
        best_k = k;
        best_j = j;
      }
    }
  const double w = h.bin_width();
  if (h.max() > 0) r.hi = std::min(h.max(), static_cast<double>(best_k) * w);
  if (h.min() < 0) r.lo = std::max(h.min(), -static_cast<double>(best_j) * w);
  return r;
}

ActivationParams activation_params(Range r) {
  const double lo = std::min(r.lo, 0.0), hi = std::max(r.hi, 0.0);
  ActivationParams p;
  if (!(hi - lo >= 1e-30) || !std::isfinite(hi - lo)) return p;
  p.scale = static_cast<float>((hi - lo) / 255.0);
  if (!(p.scale > 0)) {
    p.scale = 1.f;
    return p;
  }
  const double zp = std::nearbyint(-lo / static_cast<double>(p.scale));
  p.zero_point = static_cast<uint8_t>(std::clamp(zp, 0.0, 255.0));
  return p;
}

float fake_quantize(float x, ActivationParams p) {
  float q = std::nearbyint(x / p.scale) + static_cast<float>(p.zero_point);
  q = std::clamp(q, 0.f, 255.f);
  return (q - static_cast<float>(p.zero_point)) * p.scale;
}

WeightQuant quantize_weights(const float* w, size_t outer, size_t channels, size_t inner, bool per_channel,
                             int weight_max) {
  const double qmax = weight_max;
  std::vector<double> absmax(channels, 0.0);
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < channels; ++c) {
      const float* s = w + (o * channels + c) * inner;
      for (size_t i = 0; i < inner; ++i) absmax[c] = std::max(absmax[c], std::fabs(static_cast<double>(s[i])));
    }
  double overall = 0;
  for (double m : absmax) overall = std::max(overall, m);
  WeightQuant r;
  const float fallback = overall > 0 ? static_cast<float>(overall / qmax) : 1.f;
  if (per_channel) {
    r.scale.resize(channels);
    for (size_t c = 0; c < channels; ++c) r.scale[c] = absmax[c] > 0 ? static_cast<float>(absmax[c] / qmax) : fallback;
  } else {
    r.scale = {fallback};
  }
  r.q.resize(outer * channels * inner);
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < channels; ++c) {
      const float s = r.scale[per_channel ? c : 0];
      const size_t base = (o * channels + c) * inner;
      for (size_t i = 0; i < inner; ++i) {
        const float v = std::nearbyint(w[base + i] / s);
        r.q[base + i] = static_cast<int8_t>(std::clamp(v, -static_cast<float>(qmax), static_cast<float>(qmax)));
      }
    }
  return r;
}

size_t quantize_bias(const float* b, size_t channels, float x_scale, const std::vector<float>& w_scale,
                     std::vector<int32_t>* q, std::vector<float>* scale) {
  q->resize(channels);
  scale->resize(w_scale.size());
  for (size_t i = 0; i < w_scale.size(); ++i) (*scale)[i] = x_scale * w_scale[i];
  size_t saturated = 0;
  for (size_t c = 0; c < channels; ++c) {
    const double unit = (*scale)[w_scale.size() == 1 ? 0 : c];
    double v = std::nearbyint(static_cast<double>(b[c]) / unit);
    if (!(v >= -2147483647.0 && v <= 2147483647.0)) {
      ++saturated;
      v = std::isnan(v) ? 0 : std::clamp(v, -2147483647.0, 2147483647.0);
    }
    (*q)[c] = static_cast<int32_t>(v);
  }
  return saturated;
}

void ChannelMeans::add(const float* x, const std::vector<int64_t>& shape, size_t axis, ActivationParams p) {
  size_t outer = 1, inner = 1;
  const size_t channels = static_cast<size_t>(shape.at(axis));
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(shape[d]);
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  if (sum_x.empty()) {
    sum_x.assign(channels, 0.0);
    sum_xq.assign(channels, 0.0);
  }
  if (sum_x.size() != channels) return;  // a tensor whose size changes between images: not corrected
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < channels; ++c) {
      const float* v = x + (o * channels + c) * inner;
      double s = 0, sq = 0;
      for (size_t i = 0; i < inner; ++i) {
        if (!std::isfinite(v[i])) continue;
        s += v[i];
        sq += fake_quantize(v[i], p);
      }
      sum_x[c] += s;
      sum_xq[c] += sq;
    }
  per_channel += outer * inner;
}

void accumulate_channel_absmax(const float* x, const std::vector<int64_t>& shape, size_t axis,
                               std::vector<double>* acc) {
  size_t outer = 1, inner = 1;
  const size_t channels = static_cast<size_t>(shape.at(axis));
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(shape[d]);
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  if (acc->empty()) acc->assign(channels, 0.0);
  if (acc->size() != channels) return;
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < channels; ++c) {
      const float* v = x + (o * channels + c) * inner;
      double m = (*acc)[c];
      for (size_t i = 0; i < inner; ++i)
        if (std::isfinite(v[i])) m = std::max(m, static_cast<double>(std::fabs(v[i])));
      (*acc)[c] = m;
    }
}

std::vector<double> output_mean_shift(const float* w, const float* w_quantized, size_t out_channels,
                                      size_t in_per_group, size_t taps, size_t groups, const ChannelMeans& m) {
  std::vector<double> shift(out_channels, 0.0);
  if (m.per_channel == 0 || groups == 0 || m.channels() != in_per_group * groups || out_channels % groups) return shift;
  const double n = static_cast<double>(m.per_channel);
  const size_t per_group = out_channels / groups;
  for (size_t o = 0; o < out_channels; ++o) {
    const size_t first = (o / per_group) * in_per_group;
    double s = 0;
    for (size_t i = 0; i < in_per_group; ++i) {
      const double ex = m.sum_x[first + i] / n, exq = m.sum_xq[first + i] / n;
      const size_t base = (o * in_per_group + i) * taps;
      for (size_t k = 0; k < taps; ++k) s += w_quantized[base + k] * exq - w[base + k] * ex;
    }
    shift[o] = s;
  }
  return shift;
}

void Agreement::add(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const double x = a[i], y = b[i];
    dot += x * y;
    norm_a += x * x;
    norm_b += y * y;
    const double d = std::fabs(x - y);
    if (!(d <= max_abs)) max_abs = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  }
  count += n;
}

double Agreement::cosine() const {
  if (norm_a == 0 && norm_b == 0) return 1;
  if (norm_a == 0 || norm_b == 0) return 0;
  return dot / std::sqrt(norm_a * norm_b);
}

}  // namespace ninegrid::quant
