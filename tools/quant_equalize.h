// Cross-layer range equalisation for `ninegrid quantize --equalize`: before calibration, the channels of
// the tensor between two convolutions are rescaled so that one scale per tensor suits them all.
//
// Why: an activation is quantised with one scale per tensor, so a channel whose values span a sixth of
// the tensor's range gets a sixth of the levels, and if the next convolution weighs that channel heavily
// (a folded BatchNorm often makes it so), its rounding noise is amplified accordingly. Conv P -> [Relu]
// -> T -> Conv C computes the same function when P's output channel i (weights and bias) is divided by
// s_i > 0 and every weight of C reading channel i is multiplied by s_i (ReLU commutes with a positive
// scale). With s_i = sqrt(a_i / r_i), where a_i is channel i's range in T over the calibration images and
// r_i the largest weight of C reading it, channel i's range and its weights' range both become
// sqrt(a_i r_i): the activation's channels are drawn together at the cost of spreading C's weights
// (Nagel et al., "Data-Free Quantization", 2019, balance two layers' weight ranges the same way; here the
// activation's measured range stands in for the first layer's weights, as its error dominates).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ninegrid_onnx/onnx.pb.h"
#include "quant_plan.h"

namespace ninegrid::quant {

struct EqualizationPair {
  int producer = -1;           // the quantised Conv (or Conv+Relu island) writing the tensor
  std::string tensor;          // its output (after the Relu)
  std::vector<int> consumers;  // every reader: quantised Convs reading it as their input
};

// The pairs of a planned model: a quantised Conv with a constant float weight whose output (alone or
// through a Relu inside its island; not a Clip, which a rescaling would move) is read only by quantised
// Convs with constant float weights, and by nothing else (no graph output, no subgraph).
std::vector<EqualizationPair> equalization_pairs(const onnx::ModelProto& model, const QuantPlan& plan);

// The scales s_i = sqrt(a_i / r_i) for channel ranges a and consumer weight ranges r, normalised so that
// their geometric mean is 1 and kept within [1/64, 64] of it; a channel with a_i or r_i zero keeps 1.
std::vector<double> equalization_scales(const std::vector<double>& activation_range,
                                        const std::vector<double>& weight_range);

// Rescales every pair whose tensor has per-channel ranges in `channel_range` (absolute maxima over the
// calibration images, one per channel of the producer's output). Weights and biases are written as new
// initializers (the old ones may be shared). Returns how many pairs were rescaled.
int equalize(onnx::ModelProto& model, const std::vector<EqualizationPair>& pairs,
             const std::map<std::string, std::vector<double>>& channel_range);

}  // namespace ninegrid::quant
