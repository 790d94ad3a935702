#include "ops/conv_plan.h"

#include <charconv>

#include "core/text_words.h"

namespace ninegrid {

namespace {

constexpr ConvKernel kKernels[] = {ConvKernel::Ref,       ConvKernel::FirstLayer, ConvKernel::Direct,
                                   ConvKernel::Pointwise, ConvKernel::Depthwise,  ConvKernel::Winograd,
                                   ConvKernel::Strassen,  ConvKernel::Indirect};
constexpr ConvSplit kSplits[] = {ConvSplit::Auto, ConvSplit::Serial, ConvSplit::Channels, ConvSplit::Rows,
                                 ConvSplit::Tiles};
constexpr QConvForm kForms[] = {QConvForm::None, QConvForm::Bytes, QConvForm::Words, QConvForm::Wide};
constexpr Isa kIsas[] = {Isa::Ref, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Dotprod};

bool valid_block(int64_t b) { return b == 1 || b == 4 || b == 8 || b == 16; }

// Appends v's decimal digits, as std::to_string writes them, without a temporary string.
void append_int(std::string& out, int64_t v) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
}

}  // namespace

const char* conv_kernel_name(ConvKernel k) {
  switch (k) {
    case ConvKernel::Ref: return "ref";
    case ConvKernel::FirstLayer: return "first-layer";
    case ConvKernel::Direct: return "direct";
    case ConvKernel::Pointwise: return "pointwise";
    case ConvKernel::Depthwise: return "depthwise";
    case ConvKernel::Winograd: return "winograd";
    case ConvKernel::Strassen: return "strassen";
    case ConvKernel::Indirect: return "indirect";
  }
  return "?";
}

const char* conv_split_name(ConvSplit s) {
  switch (s) {
    case ConvSplit::Auto: return "auto";
    case ConvSplit::Serial: return "serial";
    case ConvSplit::Channels: return "channels";
    case ConvSplit::Rows: return "rows";
    case ConvSplit::Tiles: return "tiles";
  }
  return "?";
}

const char* qconv_form_name(QConvForm f) {
  switch (f) {
    case QConvForm::None: return "none";
    case QConvForm::Bytes: return "bytes";
    case QConvForm::Words: return "words";
    case QConvForm::Wide: return "wide";
  }
  return "?";
}

std::string describe_plan(const ConvPlan& plan) {
  std::string s = conv_kernel_name(plan.kernel);
  if (plan.kernel == ConvKernel::Winograd) s += std::to_string(plan.winograd_tile) + "3";
  if (plan.kernel == ConvKernel::Strassen) s = plan.strassen_levels ? "strassen1" : "gemm";
  if (plan.kernel == ConvKernel::Ref) return s;
  s += std::string("/") + isa_name(plan.isa) + " " + std::to_string(plan.in_block) + ">" + std::to_string(plan.out_block);
  if (plan.oc_tile != 0) s += " tile" + std::to_string(plan.oc_tile);
  if (plan.int8_form != QConvForm::None) s += std::string(" ") + qconv_form_name(plan.int8_form);
  if (plan.split != ConvSplit::Auto) s += std::string(" ") + conv_split_name(plan.split);
  return s;
}

std::string format_conv_plan(const ConvPlan& p) {
  std::string out = std::string(conv_kernel_name(p.kernel)) + ' ' + isa_name(p.isa);
  for (int64_t v : {p.in_block, p.out_block, int64_t(p.oc_tile), int64_t(p.winograd_tile), int64_t(p.strassen_levels)})
    out += ' ', append_int(out, v);
  out += ' ';
  out += conv_split_name(p.split);
  if (p.int8_form != QConvForm::None) out += std::string(" ") + qconv_form_name(p.int8_form);
  return out;
}

bool parse_conv_plan(std::string_view text, ConvPlan* plan) {
  // kernel isa in_block out_block oc_tile winograd_tile strassen_levels split [int8 form]
  std::string_view w[9];
  const size_t words = split_words(text, w, 9);
  if (words != 8 && words != 9) return false;
  long long in_block = 0, out_block = 0, oc_tile = -1, tile = -1, levels = -1;
  if (!parse_word_int(w[2], &in_block) || !parse_word_int(w[3], &out_block) || !parse_word_int(w[4], &oc_tile) ||
      !parse_word_int(w[5], &tile) || !parse_word_int(w[6], &levels))
    return false;
  ConvPlan p;
  bool found = false;
  if (words == 9) {
    for (QConvForm f : kForms)
      if (w[8] == qconv_form_name(f) && f != QConvForm::None) p.int8_form = f, found = true;
    if (!found) return false;
    found = false;
  }
  for (ConvKernel k : kKernels)
    if (w[0] == conv_kernel_name(k)) p.kernel = k, found = true;
  if (!found) return false;
  found = false;
  for (Isa i : kIsas)
    if (w[1] == isa_name(i)) p.isa = i, found = true;
  if (!found) return false;
  found = false;
  for (ConvSplit s : kSplits)
    if (w[7] == conv_split_name(s)) p.split = s, found = true;
  if (!found) return false;
  if (!valid_block(in_block) || !valid_block(out_block)) return false;
  if (oc_tile < 0 || oc_tile > 2 || (tile != 0 && tile != 2 && tile != 4 && tile != 6) || levels < 0 || levels > 1)
    return false;
  p.in_block = in_block, p.out_block = out_block;
  p.oc_tile = static_cast<int>(oc_tile), p.winograd_tile = static_cast<int>(tile);
  p.strassen_levels = static_cast<int>(levels);
  *plan = p;
  return true;
}

std::string format_conv_key(const ConvKey& k) {
  const Conv2dParams& p = k.p;
  std::string out;
  out.reserve(96);
  for (int64_t v : {p.batch, p.in_channels, p.out_channels, p.groups, p.in_h, p.in_w, p.out_h, p.out_w, p.kernel_h,
                    p.kernel_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.pad_top, p.pad_left,
                    p.pad_bottom, p.pad_right})
    append_int(out, v), out += ' ';
  out += activation_name(k.activation);
  for (int64_t v : {int64_t(k.residual ? 1 : 0), k.in_block, k.out_block}) out += ' ', append_int(out, v);
  out += ' ';
  out += isa_name(k.isa);
  out += ' ';
  append_int(out, k.threads);
  if (k.int8) out += " int8 ", append_int(out, k.w7_rest_tenths);
  return out;
}

bool parse_conv_key(std::string_view text, ConvKey* key) {
  // 18 sizes, activation, residual, in_block, out_block, isa, threads [int8 rest_tenths]
  std::string_view w[26];
  const size_t words = split_words(text, w, 26);
  if (words != 24 && words != 26) return false;
  long long v[18];
  for (int i = 0; i < 18; ++i)
    if (!parse_word_int(w[i], &v[i])) return false;
  const std::string_view activation = w[18], isa = w[22];
  long long residual = -1, in_block = 0, out_block = 0, threads = 0, rest_tenths = -1;
  if (!parse_word_int(w[19], &residual) || !parse_word_int(w[20], &in_block) || !parse_word_int(w[21], &out_block) ||
      !parse_word_int(w[23], &threads))
    return false;
  const bool int8 = words == 26;
  if (int8 && (w[24] != "int8" || !parse_word_int(w[25], &rest_tenths) || rest_tenths < -1 || rest_tenths > 10))
    return false;
  // Sizes a model could have (a plane side, a channel count, a kernel side below 2^20), never zero or
  // negative where the kernels divide or loop by them.
  constexpr long long kMax = 1 << 20;
  for (int i = 0; i < 14; ++i)
    if (v[i] < 1 || v[i] > kMax) return false;
  for (int i = 14; i < 18; ++i)
    if (v[i] < 0 || v[i] > kMax) return false;
  ConvKey k;
  Conv2dParams& p = k.p;
  p.batch = v[0], p.in_channels = v[1], p.out_channels = v[2], p.groups = v[3];
  p.in_h = v[4], p.in_w = v[5], p.out_h = v[6], p.out_w = v[7];
  p.kernel_h = v[8], p.kernel_w = v[9], p.stride_h = v[10], p.stride_w = v[11];
  p.dilation_h = v[12], p.dilation_w = v[13];
  p.pad_top = v[14], p.pad_left = v[15], p.pad_bottom = v[16], p.pad_right = v[17];
  if (p.in_channels % p.groups != 0 || p.out_channels % p.groups != 0) return false;
  // The output plane must be the one the rest gives (ONNX's floor formula).
  auto out_size = [](int64_t in, int64_t pad, int64_t kernel, int64_t stride, int64_t dilation) {
    const int64_t span = (kernel - 1) * dilation + 1;
    return in + pad < span ? int64_t(0) : (in + pad - span) / stride + 1;
  };
  if (out_size(p.in_h, p.pad_top + p.pad_bottom, p.kernel_h, p.stride_h, p.dilation_h) != p.out_h ||
      out_size(p.in_w, p.pad_left + p.pad_right, p.kernel_w, p.stride_w, p.dilation_w) != p.out_w)
    return false;
  bool found = false;
  for (int a = 0; a <= static_cast<int>(ActivationKind::Silu); ++a)
    if (activation == activation_name(static_cast<ActivationKind>(a))) k.activation = static_cast<ActivationKind>(a), found = true;
  if (!found || (residual != 0 && residual != 1)) return false;
  found = false;
  for (Isa i : kIsas)
    if (isa == isa_name(i)) k.isa = i, found = true;
  if (!found || !valid_block(in_block) || !valid_block(out_block) || threads < 1 || threads > 1024) return false;
  if (p.in_channels % in_block != 0 || p.out_channels % out_block != 0) return false;
  k.residual = residual == 1;
  k.in_block = in_block, k.out_block = out_block;
  k.threads = static_cast<int>(threads);
  k.int8 = int8;
  k.w7_rest_tenths = int8 ? static_cast<int>(rest_tenths) : -1;
  *key = k;
  return true;
}

}  // namespace ninegrid
