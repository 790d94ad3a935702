// ninegrid quantize: a float ONNX model and a directory of calibration images in, a QDQ int8 ONNX model
// out (see quant_onnx.h for its form), with an optional per-layer accuracy report.
//
// How: the model is tidied (quant_onnx.h: prepare_model), loaded by ninegrid at opt-level 0 to learn
// every value's type, and the tensors to quantise are chosen. A copy with those tensors added as graph
// outputs runs on every calibration image, feeding each tensor's values into a histogram
// (quant_calibration.h); the chosen method turns each histogram into a range and the range into uint8
// parameters. The QDQ model is written, then loaded back to check that ninegrid accepts it; --report runs
// it (with each dequantised tensor added as an output) next to the float model on the same images.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "progress.h"
#include "quant_calibration.h"
#include "quant_equalize.h"
#include "quant_images.h"
#include "quant_model.h"
#include "quant_plan.h"
#include "quant_qdq.h"

namespace ninegrid::cli {

namespace {

using quant::ActivationParams;
using quant::Histogram;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream ss(text);
  while (std::getline(ss, cur, sep)) parts.push_back(cur);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

double parse_number(const std::string& text, const std::string& option) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw Error(option + " expects numbers, got '" + text + "'");
  return v;
}

// "a,b,c" or a single "a" (used for every channel).
void parse_per_channel(const std::string& text, const std::string& option, int channels, float out[3]) {
  const std::vector<std::string> parts = split(text, ',');
  if (parts.size() != 1 && static_cast<int>(parts.size()) != channels)
    throw Error(option + " expects 1 or " + std::to_string(channels) + " comma-separated values, got '" + text + "'");
  for (int c = 0; c < channels; ++c) out[c] = static_cast<float>(parse_number(parts[parts.size() == 1 ? 0 : c], option));
}

void parse_size(const std::string& text, int* w, int* h) {
  const size_t x = text.find('x');
  try {
    if (x == std::string::npos) throw Error("");
    const double a = parse_number(text.substr(0, x), "--size"), b = parse_number(text.substr(x + 1), "--size");
    if (a < 1 || b < 1 || a > 16384 || b > 16384 || a != std::floor(a) || b != std::floor(b)) throw Error("");
    *w = static_cast<int>(a);
    *h = static_cast<int>(b);
  } catch (const Error&) {
    throw Error("--size expects WIDTHxHEIGHT (e.g. 640x640), got '" + text + "'");
  }
}

struct Args {
  std::string model, calibration, output;
  std::string method = "percentile";
  std::string percentile = "99.99";
  bool per_channel = false;
  int weight_bits = 8;
  std::vector<std::string> keep_float;
  std::string mean, scale, size, layout, resize = "stretch";
  bool rgb = false, bgr = false;
  int limit = 0;
  int threads = 0;
  bool report = false;
  bool no_bias_correction = false;
  bool no_equalize = false;
  int opt_level = 2;
};

// The statistics of one tensor over the calibration images.
struct TensorCalibration {
  Histogram hist;
};

// What --report accumulates for one tensor.
struct TensorReport {
  quant::Agreement int8;  // the int8 model's dequantised tensor against fp32
  quant::Agreement own;   // fp32 against fp32 quantised alone with its parameters
  double absmax = 0;      // of the fp32 tensor
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Runs `session` on one preprocessed image bound to `input`.
void run_on(Session& s, const std::string& input, const Shape& shape, std::vector<float>& pixels) {
  s.set_input(input, Tensor::wrap(DataType::Float32, shape, pixels.data()));
  s.run();
}

std::vector<float> read_input(const std::string& path, const quant::Preprocess& pre) {
  Image photo;
  try {
    photo = load_image(path);
  } catch (const Error& e) {
    throw Error(std::string("calibration image: ") + e.what());
  }
  return quant::preprocess_image(photo, pre);
}

Tensor float_output(const Session& s, const std::string& name) {
  Tensor t = s.output(name);
  if (t.dtype() != DataType::Float32)
    throw Error("tensor '" + name + "' came out as " + dtype_name(t.dtype()) + ", not float32");
  return t;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("cannot write '" + path + "'");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error("cannot write '" + path + "'");
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
  Args a;
  ArgParser p("quantize",
              "Quantise a float ONNX model to int8 with calibration images, and write it as a standard QDQ ONNX\n"
              "model (QuantizeLinear/DequantizeLinear pairs) that ninegrid and ONNX Runtime both run.\n"
              "\n"
              "Activations become uint8 (asymmetric, one scale per tensor), weights int8 (symmetric; per output\n"
              "channel with --per-channel), biases int32. Quantised: Conv (with a following Relu/Clip inside the\n"
              "island), Gemm and MatMul with constant weights, Add, Concat, MaxPool, AveragePool,\n"
              "GlobalAveragePool; everything else stays float. Before quantising, BatchNormalization after a Conv\n"
              "is folded into it, Identity nodes are removed and Constant nodes become initializers; the opset is\n"
              "raised to 13 when lower (refused, naming the node, when an operator would change meaning).\n"
              "\n"
              "Two corrections, on unless turned off: the channels between convolutions are equalised before\n"
              "calibrating (see --no-equalize), and biases absorb the mean shift rounding causes (see\n"
              "--no-bias-correction). Progress goes to stderr; the summary and --report to stdout.");
  p.positional("MODEL", "the float model (ONNX; ncnn models are not supported yet)", &a.model);
  p.option("--calibration", "DIR",
           "directory of calibration images (JPEG, PNG, BMP, ...; files directly in it, sorted by name): a "
           "few hundred photos like those the model will see; required",
           &a.calibration);
  p.option("-o", "FILE", "where to write the quantised model; required", &a.output);
  p.option("--method", "NAME",
           "how each tensor's range is chosen from its values over the images: minmax (smallest to largest), "
           "percentile (clip the tails beyond --percentile), kl (TensorRT's entropy calibration: the clipping "
           "threshold whose quantised histogram diverges least from the observed one), mse (the range whose "
           "rounding plus clipping error is least, as PyTorch's HistogramObserver chooses)",
           &a.method);
  p.option("--percentile", "P", "with --method percentile: keep P% of the values on each side, clip the rest",
           &a.percentile);
  p.flag("--per-channel", "weights: one scale per output channel (default: one per tensor)", &a.per_channel);
  p.option_int("--weight-bits", "N",
               "8: weights in [-127, 127] (the default); 7: in [-63, 63], for CPUs with AVX2 but without "
               "AVX-512 VNNI, where ninegrid then multiplies four input channels per instruction with nothing "
               "added (its int8-avx2-w7 kernels; 8-bit weights add a vector for each one holding a pair that "
               "could overflow, or take two channels per instruction; ONNX Runtime's reduce_range exists for "
               "the same reason) at a small cost in accuracy (see --report)",
               &a.weight_bits, 7, 8);
  p.repeated("--keep-float", "NODE,...",
             "leave these nodes in float (by node name, or by the name of a tensor they write); their inputs "
             "may still be quantised by a quantised neighbour",
             &a.keep_float);
  p.option("--size", "WxH", "resize the images to this input size", &a.size,
           "the model input's height and width; required when they are dynamic");
  p.option("--layout", "nchw|nhwc", "input layout", &a.layout,
           "nchw, or nhwc when the input's last dimension is 1 or 3 and its second is not");
  p.flag("--rgb", "channels in R, G, B order (the default)", &a.rgb);
  p.flag("--bgr", "channels in B, G, R order (OpenCV- and Caffe-style models)", &a.bgr);
  p.option("--mean", "M[,M,M]", "subtracted from each pixel (0..255), per channel in the model's channel order",
           &a.mean, "0");
  p.option("--scale", "S[,S,S]", "multiplies each pixel after the mean is subtracted, per channel", &a.scale,
           "1/255 = 0.00392157: inputs in [0, 1]");
  p.option("--resize", "MODE",
           "stretch (to the input size, ignoring aspect), letterbox (fit inside, centred, black borders: as "
           "ninegrid detect feeds detectors) or crop (cover the input, cut the middle: classifiers)",
           &a.resize);
  p.flag("--no-equalize",
         "do not equalise: by default the channels between each Conv and the Convs reading it are first "
         "rescaled so that one activation scale suits all of them (the float model computes the same; a "
         "first pass over the images measures each channel's range)",
         &a.no_equalize);
  p.flag("--no-bias-correction",
         "do not correct biases: by default each Conv's and Gemm's bias absorbs the shift of its output mean "
         "that rounding its inputs and weights causes, measured on the images (a second pass over them)",
         &a.no_bias_correction);
  p.option_int("--limit", "N", "use at most the first N images (0: all)", &a.limit, 0, 1000000);
  p.option_int("--threads", "N", "worker threads (0: one per core)", &a.threads, 0, 1024);
  p.flag("--report",
         "after writing, run the int8 model (in ninegrid) and the float model on the calibration images and "
         "print, per quantised layer, the cosine similarity and largest error of its output against fp32, "
         "the worst layers flagged",
         &a.report);
  p.option_int("--opt-level", "N", "optimisation level of the int8 model run by --report", &a.opt_level, 0, 2);
  p.epilog(
      "Grey models (1 input channel) get the photo's luma. Common settings:\n"
      "  torchvision classifiers:  --resize crop --mean 123.675,116.28,103.53 --scale 0.017125,0.017507,0.017429\n"
      "  RetinaFace (PyTorch):     --bgr --mean 104,117,123 --scale 1 --resize letterbox\n"
      "  RetinaFace (insightface): --mean 0 --scale 1 --resize letterbox\n"
      "\n"
      "example: ninegrid quantize resnet18.onnx --calibration photos/ --per-channel --method percentile \\\n"
      "           --resize crop --mean 123.675,116.28,103.53 --scale 0.017125,0.017507,0.017429 \\\n"
      "           -o resnet18_int8.onnx --report");
  int exit_code;
  if (!p.parse(argc, argv, &exit_code)) return exit_code;
  auto usage = [](const std::string& message) {
    std::fprintf(stderr, "ninegrid quantize: error: %s (see 'ninegrid quantize --help')\n", message.c_str());
    return kUsageExitCode;
  };
  if (a.calibration.empty()) return usage("--calibration DIR is required");
  if (a.output.empty()) return usage("-o FILE is required");
  if (a.method != "minmax" && a.method != "percentile" && a.method != "kl" && a.method != "mse")
    return usage("--method expects minmax, percentile, kl or mse, got '" + a.method + "'");
  double percentile = 0;
  try {
    percentile = parse_number(a.percentile, "--percentile");
  } catch (const Error& e) {
    return usage(e.what());
  }
  if (!(percentile > 50 && percentile <= 100)) return usage("--percentile expects a number above 50 and at most 100");
  if (a.rgb && a.bgr) return usage("--rgb and --bgr contradict each other");
  if (!a.layout.empty() && a.layout != "nchw" && a.layout != "nhwc")
    return usage("--layout expects nchw or nhwc, got '" + a.layout + "'");
  quant::Preprocess pre;
  try {
    pre.resize = quant::parse_resize(a.resize);
  } catch (const Error& e) {
    return usage(std::string("--resize: ") + e.what());
  }
  std::vector<std::string> keep_float;
  for (const std::string& list : a.keep_float)
    for (const std::string& name : split(list, ','))
      if (!name.empty()) keep_float.push_back(name);
  {
    std::error_code ec;
    if (std::filesystem::equivalent(a.model, a.output, ec))
      return usage("-o would overwrite the float model '" + a.model + "'");
  }

  // The model, tidied.
  Options base_options;
  base_options.threads = a.threads;
  onnx::ModelProto model = quant::read_onnx_model(a.model, base_options.max_file_bytes);
  const quant::PrepareNotes notes = quant::prepare_model(model);
  const std::vector<std::string> inputs = quant::graph_inputs(model);
  if (inputs.size() != 1) {
    std::string list;
    for (const auto& n : inputs) list += (list.empty() ? "'" : ", '") + n + "'";
    throw Error("ninegrid quantize feeds one image input, and this model has " + std::to_string(inputs.size()) +
                " inputs" + (list.empty() ? "" : " (" + list + ")"));
  }
  const std::string input = inputs[0];
  const std::string prepared_bytes = quant::serialize_model(model);

  // The input's shape and the preprocessing it implies.
  Options o0 = base_options;
  o0.opt_level = 0;
  std::shared_ptr<Model> declared = Model::load_onnx(prepared_bytes.data(), prepared_bytes.size(), o0);
  const ValueInfo in_info = declared->inputs()[0];
  if (in_info.dtype != DataType::Float32 || in_info.shape.size() != 4)
    throw Error("input '" + input + "' is " + std::string(dtype_name(in_info.dtype)) + " " + shape_str(in_info.shape) +
                "; ninegrid quantize feeds images to a float input of rank 4 (NCHW or NHWC)");
  const Shape ds = in_info.shape;
  const bool ch_second = ds[1] == 1 || ds[1] == 3, ch_last = ds[3] == 1 || ds[3] == 3;
  pre.nhwc = a.layout.empty() ? (ch_last && !ch_second) : a.layout == "nhwc";
  const int64_t c_dim = pre.nhwc ? ds[3] : ds[1];
  const int64_t h_dim = pre.nhwc ? ds[1] : ds[2], w_dim = pre.nhwc ? ds[2] : ds[3];
  if (c_dim != -1 && c_dim != 1 && c_dim != 3)
    throw Error("input '" + input + "' " + shape_str(ds) + " has " + std::to_string(c_dim) + " channels in layout " +
                (pre.nhwc ? "NHWC" : "NCHW") + "; images give 1 (grey) or 3 (colour)" +
                (a.layout.empty() ? " (give --layout if the guess is wrong)" : ""));
  if (ds[0] > 1)
    throw Error("input '" + input + "' " + shape_str(ds) + " has a fixed batch of " + std::to_string(ds[0]) +
                "; ninegrid quantize feeds one image at a time (export with batch 1 or a dynamic batch)");
  pre.channels = c_dim == 1 ? 1 : 3;
  if (!a.size.empty()) {
    try {
      parse_size(a.size, &pre.width, &pre.height);
    } catch (const Error& e) {
      return usage(e.what());
    }
  } else {
    if (h_dim < 1 || w_dim < 1)
      throw Error("input '" + input + "' " + shape_str(ds) + " has a dynamic height or width: give --size WxH");
    pre.width = static_cast<int>(w_dim);
    pre.height = static_cast<int>(h_dim);
  }
  pre.bgr = a.bgr;
  try {
    if (!a.mean.empty()) parse_per_channel(a.mean, "--mean", pre.channels, pre.mean);
    if (!a.scale.empty()) parse_per_channel(a.scale, "--scale", pre.channels, pre.scale);
  } catch (const Error& e) {
    return usage(e.what());
  }
  const Shape input_shape = pre.nhwc ? Shape{1, pre.height, pre.width, pre.channels}
                                     : Shape{1, pre.channels, pre.height, pre.width};
  o0.input_shapes[input] = input_shape;

  // Images (checked before the long work starts).
  int ignored = 0;
  std::vector<std::string> images = quant::list_images(a.calibration, &ignored);
  if (a.limit > 0 && static_cast<int>(images.size()) > a.limit) images.resize(static_cast<size_t>(a.limit));

  // Value types, and the plan.
  quant::ValueTypes types;
  {
    onnx::ModelProto every = model;
    quant::add_graph_outputs(every, quant::node_outputs(model));
    const std::string bytes = quant::serialize_model(every);
    std::shared_ptr<Model> typed = Model::load_onnx(bytes.data(), bytes.size(), o0);
    for (const ValueInfo& v : typed->inputs()) types[v.name] = {v.dtype, v.shape, true};
    for (const ValueInfo& v : typed->outputs()) types[v.name] = {v.dtype, v.shape, !v.shape.empty()};
  }
  declared.reset();
  const quant::QuantPlan plan = quant::plan_quantization(model, types, keep_float);
  if (plan.layers.empty()) throw Error("nothing to quantise: the model has no Conv, Gemm, MatMul, Add, Concat or pooling "
                                       "node with float inputs (or --keep-float names them all)");

  std::printf("model:        %s (opset %lld%s)\n", a.model.c_str(), static_cast<long long>(notes.old_opset),
              notes.new_opset != notes.old_opset ? (", raised to " + std::to_string(notes.new_opset)).c_str() : "");
  if (notes.batchnorms || notes.identities || notes.constants)
    std::printf("prepared:     %d BatchNormalization folded into Conv, %d Identity removed, %d Constant -> initializer\n",
                notes.batchnorms, notes.identities, notes.constants);
  std::printf("input:        %s %s, %s, %s, mean %g,%g,%g scale %g,%g,%g, %s\n", input.c_str(),
              shape_str(input_shape).c_str(), pre.nhwc ? "NHWC" : "NCHW",
              pre.channels == 1 ? "grey" : pre.bgr ? "BGR" : "RGB", pre.mean[0], pre.mean[1], pre.mean[2], pre.scale[0],
              pre.scale[1], pre.scale[2], a.resize.c_str());
  std::printf("calibration:  %zu image%s from %s%s, method %s%s\n", images.size(), images.size() == 1 ? "" : "s",
              a.calibration.c_str(), ignored ? (" (" + std::to_string(ignored) + " other files ignored)").c_str() : "",
              a.method.c_str(), a.method == "percentile" ? (" " + fmt("%g", percentile) + "%").c_str() : "");
  std::map<std::string, int> op_counts;
  for (const auto& l : plan.layers) ++op_counts[l.op_type];
  std::string ops;
  for (const auto& [op, n] : op_counts) ops += (ops.empty() ? "" : ", ") + std::to_string(n) + " " + op;
  // The weights' symmetric range: [-weight_max, weight_max].
  const int weight_max = a.weight_bits == 7 ? 63 : 127;
  std::printf("quantising:   %zu layers (%s), %zu tensors; weights int8 %s%s\n", plan.layers.size(), ops.c_str(),
              plan.tensors.size(), a.per_channel ? "per channel" : "per tensor",
              a.weight_bits == 7 ? ", 7-bit [-63, 63]" : "");
  for (const std::string& why : plan.left_float) std::printf("  left float: %s\n", why.c_str());
  std::fflush(stdout);

  // Equalisation (quant_equalize.h): a first pass for the channel ranges between paired convolutions,
  // then the model is rescaled and everything after calibrates the rescaled model.
  if (!a.no_equalize) {
    const std::vector<quant::EqualizationPair> pairs = quant::equalization_pairs(model, plan);
    std::vector<std::string> between;
    for (const auto& pair : pairs) between.push_back(pair.tensor);
    onnx::ModelProto probe = model;
    quant::add_graph_outputs(probe, between);
    const std::string bytes = quant::serialize_model(probe);
    std::shared_ptr<Model> probe_model = Model::load_onnx(bytes.data(), bytes.size(), o0);
    std::unique_ptr<Session> s = probe_model->create_session();
    std::map<std::string, std::vector<double>> ranges;
    Progress progress(static_cast<int>(images.size()));
    for (size_t i = 0; i < images.size() && !between.empty(); ++i) {
      std::vector<float> x = read_input(images[i], pre);
      run_on(*s, input, input_shape, x);
      for (const std::string& t : between) {
        const Tensor v = float_output(*s, t);
        if (v.shape().size() >= 2) quant::accumulate_channel_absmax(v.data_as<float>(), v.shape(), 1, &ranges[t]);
      }
      progress.update("equalising", static_cast<int>(i + 1));
    }
    progress.finish();
    const int equalized = quant::equalize(model, pairs, ranges);
    std::printf("equalised:    %d of %zu Conv -> Conv pairs\n", equalized, pairs.size());
  }

  // Calibration: the float model with every tensor to quantise as an output.
  onnx::ModelProto calib = model;
  quant::add_graph_outputs(calib, plan.tensors);
  const std::string calib_bytes = quant::serialize_model(calib);
  std::shared_ptr<Model> fp_model = Model::load_onnx(calib_bytes.data(), calib_bytes.size(), o0);
  std::unique_ptr<Session> fp = fp_model->create_session();
  std::vector<std::string> calibrated;  // tensors with their own parameters (not MaxPool's shared ones)
  for (const std::string& t : plan.tensors)
    if (!plan.shares.count(t)) calibrated.push_back(t);
  // A plan tensor's value after a run of `fp` on `x`.
  auto fp_value = [&](const std::string& t, std::vector<float>& x) {
    return t == input ? Tensor::wrap(DataType::Float32, input_shape, x.data()) : float_output(*fp, t);
  };
  std::map<std::string, TensorCalibration> stats;
  {
    Progress progress(static_cast<int>(images.size()));
    for (size_t i = 0; i < images.size(); ++i) {
      std::vector<float> x = read_input(images[i], pre);
      run_on(*fp, input, input_shape, x);
      for (const std::string& t : calibrated) {
        const Tensor v = fp_value(t, x);
        stats[t].hist.add(v.data_as<float>(), static_cast<size_t>(v.numel()));
      }
      progress.update("calibrating", static_cast<int>(i + 1));
    }
  }
  std::map<std::string, ActivationParams> params;
  int64_t non_finite = 0;
  for (const std::string& t : calibrated) {
    const Histogram& h = stats[t].hist;
    non_finite += static_cast<int64_t>(h.non_finite());
    // The image input is bounded by its preprocessing and has no outliers to clip: every method keeps
    // its whole range (clipping it would saturate the bright or dark pixels of every image).
    const std::string method = t == input ? "minmax" : a.method;
    quant::Range r = method == "kl"           ? quant::kl_range(h)
                     : method == "mse"        ? quant::mse_range(h)
                     : method == "percentile" ? quant::percentile_range(h, percentile)
                                              : quant::minmax_range(h);
    if (plan.nonnegative.count(t)) {  // its negatives are all dropped by a Relu downstream
      r.lo = std::max(r.lo, 0.0);
      r.hi = std::max(r.hi, 0.0);
    }
    params[t] = quant::activation_params(r);
  }
  stats.clear();
  if (non_finite) std::printf("warning: %lld NaN or infinite values seen during calibration (ignored)\n",
                              static_cast<long long>(non_finite));
  auto params_of = [&](std::string t) {
    while (plan.shares.count(t)) t = plan.shares.at(t);
    return params.at(t);
  };

  // Bias correction: a second pass for the per-channel means of the Conv and Gemm inputs, in float and
  // quantised with the parameters just chosen.
  std::map<std::string, quant::ChannelMeans> input_means;
  if (!a.no_bias_correction) {
    std::set<std::string> wanted;
    for (const auto& l : plan.layers)
      if (l.op_type.rfind("Conv", 0) == 0 || l.op_type.rfind("Gemm", 0) == 0) wanted.insert(l.inputs.at(0));
    Progress progress(static_cast<int>(images.size()));
    for (size_t i = 0; i < images.size(); ++i) {
      std::vector<float> x = read_input(images[i], pre);
      run_on(*fp, input, input_shape, x);
      for (const std::string& t : wanted) {
        const Tensor v = fp_value(t, x);
        if (v.shape().size() < 2) continue;
        input_means[t].add(v.data_as<float>(), v.shape(), 1, params_of(t));
      }
      progress.update("bias correction", static_cast<int>(i + 1));
    }
  }

  // The QDQ model.
  onnx::ModelProto qdq = model;
  int bias_corrected = 0;
  const std::map<std::string, std::string> dequantized = quant::insert_qdq(
      qdq, plan, params, a.per_channel, !a.no_bias_correction ? &input_means : nullptr, &bias_corrected,
      weight_max);
  if (!a.no_bias_correction) std::printf("bias:         corrected in %d layers\n", bias_corrected);
  {
    auto* meta = qdq.add_metadata_props();
    meta->set_key("ninegrid.quantize");
    meta->set_value("method=" + a.method + (a.method == "percentile" ? " percentile=" + a.percentile : "") +
                    " weights=" + (a.per_channel ? "per-channel" : "per-tensor") +
                    " weight-bits=" + std::to_string(a.weight_bits) +
                    " equalize=" + (a.no_equalize ? "no" : "yes") +
                    " bias-correction=" + (a.no_bias_correction ? "no" : "yes") + " images=" +
                    std::to_string(images.size()));
  }
  const std::string qdq_bytes = quant::serialize_model(qdq);
  write_file(a.output, qdq_bytes);
  {
    Options check = base_options;
    check.opt_level = a.opt_level;
    check.input_shapes[input] = input_shape;
    Model::load_onnx(qdq_bytes.data(), qdq_bytes.size(), check)->create_session();
  }
  std::printf("wrote:        %s (%.1f MiB; ninegrid loads it)\n", a.output.c_str(), qdq_bytes.size() / 1048576.0);
  std::fflush(stdout);
  if (!a.report) return 0;

  // The report: the int8 model (every dequantised tensor an output) against fp32 on the same images.
  onnx::ModelProto probe = qdq;
  std::vector<std::string> probe_outputs;
  for (const std::string& t : plan.tensors) probe_outputs.push_back(dequantized.at(t));
  quant::add_graph_outputs(probe, probe_outputs);
  const std::string probe_bytes = quant::serialize_model(probe);
  Options oq = base_options;
  oq.opt_level = a.opt_level;
  oq.input_shapes[input] = input_shape;
  std::shared_ptr<Model> q_model = Model::load_onnx(probe_bytes.data(), probe_bytes.size(), oq);
  std::unique_ptr<Session> q = q_model->create_session();
  std::vector<std::string> model_outputs;
  for (const auto& o : model.graph().output()) model_outputs.push_back(o.name());

  std::map<std::string, TensorReport> rep;
  std::map<std::string, quant::Agreement> out_rep;
  {
    Progress progress(static_cast<int>(images.size()));
    for (size_t i = 0; i < images.size(); ++i) {
      std::vector<float> x = read_input(images[i], pre);
      run_on(*fp, input, input_shape, x);
      run_on(*q, input, input_shape, x);
      for (const std::string& t : plan.tensors) {
        const Tensor ref = fp_value(t, x);
        const Tensor got = float_output(*q, dequantized.at(t));
        if (got.numel() != ref.numel()) throw Error("tensor '" + t + "' has different sizes in the two models");
        const float* r = ref.data_as<float>();
        const size_t n = static_cast<size_t>(ref.numel());
        std::vector<float> rectified;  // a tensor whose negatives no reader sees is compared without them
        if (plan.nonnegative.count(t)) {
          rectified.assign(r, r + n);
          for (float& v : rectified) v = std::max(v, 0.f);
          r = rectified.data();
        }
        TensorReport& tr = rep[t];
        tr.int8.add(got.data_as<float>(), r, n);
        const ActivationParams pp = params_of(t);
        std::vector<float> fq(n);
        for (size_t k = 0; k < n; ++k) {
          fq[k] = quant::fake_quantize(r[k], pp);
          tr.absmax = std::max(tr.absmax, static_cast<double>(std::fabs(r[k])));
        }
        tr.own.add(fq.data(), r, n);
      }
      for (const std::string& o : model_outputs) {
        const Tensor ref = float_output(*fp, o), got = float_output(*q, o);
        if (got.numel() != ref.numel()) throw Error("output '" + o + "' has different sizes in the two models");
        out_rep[o].add(got.data_as<float>(), ref.data_as<float>(), static_cast<size_t>(ref.numel()));
      }
      progress.update("report", static_cast<int>(i + 1));
    }
  }

  // Per layer: its output's agreement, and how much it lowered its inputs' (the accuracy this layer loses).
  struct Row {
    const quant::QuantLayer* layer;
    double cosine, max_abs, steps, own, lost;
  };
  std::vector<Row> rows;
  for (const auto& l : plan.layers) {
    const TensorReport& tr = rep.at(l.output);
    double in_cos = 1;
    for (const auto& in : l.inputs) in_cos = std::min(in_cos, rep.at(in).int8.cosine());
    const double cos = tr.int8.cosine();
    rows.push_back({&l, cos, tr.int8.max_abs, tr.int8.max_abs / params_of(l.output).scale, tr.own.cosine(),
                    std::max(0.0, in_cos - cos)});
  }
  std::vector<const Row*> worst;
  for (const Row& r : rows) worst.push_back(&r);
  std::stable_sort(worst.begin(), worst.end(), [](const Row* x, const Row* y) { return x->lost > y->lost; });
  worst.resize(std::min<size_t>(worst.size(), 5));
  while (!worst.empty() && worst.back()->lost < 1e-4) worst.pop_back();

  size_t name_w = 4, op_w = 2;
  for (const Row& r : rows) {
    name_w = std::max(name_w, std::min<size_t>(r.layer->name.size(), 48));
    op_w = std::max(op_w, r.layer->op_type.size());
  }
  std::printf("\nper-layer accuracy: the int8 model (ninegrid, opt-level %d) against fp32 on %zu image%s\n"
              "  cosine, max|err|: of the layer's dequantised output with fp32's (errors of earlier layers included)\n"
              "  steps: max|err| in quantisation steps of the output; own: cosine of fp32's output quantised alone\n"
              "  (the loss of its range); lost: how much lower the cosine is than its inputs' (this layer's share)\n\n",
              a.opt_level, images.size(), images.size() == 1 ? "" : "s");
  std::printf("  %-*s  %-*s  %9s  %10s  %8s  %9s  %9s\n", static_cast<int>(name_w), "layer", static_cast<int>(op_w), "op",
              "cosine", "max|err|", "steps", "own", "lost");
  for (const Row& r : rows) {
    const bool flagged = std::find(worst.begin(), worst.end(), &r) != worst.end();
    std::string name = r.layer->name;
    if (name.size() > name_w) name = "..." + name.substr(name.size() - (name_w - 3));
    std::printf("  %-*s  %-*s  %9.6f  %10.4g  %8.1f  %9.6f  %9.6f%s\n", static_cast<int>(name_w), name.c_str(),
                static_cast<int>(op_w), r.layer->op_type.c_str(), r.cosine, r.max_abs, r.steps, r.own, r.lost,
                flagged ? "  <<" : "");
  }
  std::printf("\nmodel outputs against fp32:\n");
  size_t out_w = 6;
  for (const auto& o : model_outputs) out_w = std::max(out_w, o.size());
  std::printf("  %-*s  %9s  %10s\n", static_cast<int>(out_w), "output", "cosine", "max|err|");
  for (const auto& o : model_outputs)
    std::printf("  %-*s  %9.6f  %10.4g\n", static_cast<int>(out_w), o.c_str(), out_rep[o].cosine(), out_rep[o].max_abs);
  if (!worst.empty()) {
    std::printf("\nlayers losing the most accuracy (<<):");
    std::string names;
    for (const Row* r : worst) {
      std::printf(" %s (%.4f)", r->layer->name.c_str(), r->lost);
      names += (names.empty() ? "" : ",") + r->layer->keep_name;
    }
    std::printf("\nto try them in float: --keep-float %s\n", names.c_str());
  }
  return 0;
}

}  // namespace ninegrid::cli
