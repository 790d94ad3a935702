#include "import/ncnn/ncnn_param.h"

#include <charconv>
#include <cmath>
#include <unordered_map>

#include "ninegrid/tensor.h"

namespace ninegrid {
namespace ncnn {

namespace {

constexpr int32_t kMagic = 7767517;
constexpr int kArrayKeyBase = -23300;
// ncnn reads names with %255s; longer tokens are not names it could have written.
constexpr size_t kMaxNameLength = 255;

struct Token {
  std::string text;
  int line = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> tokens;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i])) {
      if (text[i] == '\n') ++line;
      ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    tokens.push_back({text.substr(start, i - start), line});
  }
  return tokens;
}

bool parse_int32(const std::string& s, int32_t& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;  // from_chars rejects a leading '+', scanf accepts it
  auto r = std::from_chars(b, e, out);
  return r.ec == std::errc() && r.ptr == e;
}

bool parse_float(const std::string& s, float& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, out, std::chars_format::general);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(out);
}

// ncnn's rule (vstr_is_float): a value is a float if its text has a '.', 'e' or 'E'.
bool looks_like_float(const std::string& s) { return s.find_first_of(".eE") != std::string::npos; }

bool parse_scalar(const std::string& s, ParamScalar& out) {
  out.is_float = looks_like_float(s);
  return out.is_float ? parse_float(s, out.f) : parse_int32(s, out.i);
}

// A parameter token is `<int>=<value>`: an optional '-', digits, then '='.
bool is_param_token(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t digits = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i > digits && i < s.size() && s[i] == '=';
}

std::string where(const Token& t) { return "ncnn param line " + std::to_string(t.line); }

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  ParamFile parse() {
    ParamFile file;
    const Token& magic = next("the magic number 7767517");
    int32_t m = 0;
    if (!parse_int32(magic.text, m) || m != kMagic)
      throw Error(where(magic) + ": expected the ncnn magic number 7767517, got '" + clip(magic.text) + "'");
    file.layer_count = read_count("layer count");
    file.blob_count = read_count("blob count");

    std::unordered_map<std::string, int> producer;  // blob name -> layer index
    for (int l = 0; l < file.layer_count; ++l) {
      LayerDecl layer = read_layer(l, file.layer_count);
      for (const std::string& b : layer.bottoms)
        if (!producer.count(b))
          throw Error(describe(layer) + ": input blob '" + clip(b) + "' is not produced by any earlier layer");
      for (const std::string& t : layer.tops) {
        auto it = producer.find(t);
        if (it != producer.end() && it->second == l)
          throw Error(describe(layer) + ": output blob '" + clip(t) + "' is listed twice");
        if (it != producer.end())
          throw Error(describe(layer) + ": output blob '" + clip(t) + "' is already produced by layer '" +
                      file.layers[it->second].name + "'");
        producer.emplace(t, l);
      }
      file.layers.push_back(std::move(layer));
    }
    if (pos_ < tokens_.size())
      throw Error(where(tokens_[pos_]) + ": unexpected text '" + clip(tokens_[pos_].text) + "' after the " +
                  std::to_string(file.layer_count) + " declared layers");
    if (static_cast<int64_t>(producer.size()) != file.blob_count)
      throw Error("ncnn param declares " + std::to_string(file.blob_count) + " blobs, but its layers produce " +
                  std::to_string(producer.size()));
    return file;
  }

 private:
  static std::string clip(const std::string& s) { return s.size() > 64 ? s.substr(0, 64) + "..." : s; }

  static std::string describe(const LayerDecl& l) {
    return "ncnn layer '" + clip(l.name) + "' (" + clip(l.type) + ", line " + std::to_string(l.line) + ")";
  }

  const Token& next(const std::string& what) {
    if (pos_ >= tokens_.size()) {
      int line = tokens_.empty() ? 1 : tokens_.back().line;
      throw Error("ncnn param line " + std::to_string(line) + ": file ends where " + what + " was expected");
    }
    return tokens_[pos_++];
  }

  int read_count(const std::string& what) {
    const Token& t = next("the " + what);
    int32_t v = 0;
    if (!parse_int32(t.text, v) || v <= 0)
      throw Error(where(t) + ": " + what + " must be a positive integer, got '" + clip(t.text) + "'");
    return v;
  }

  std::string read_name(const std::string& what, const LayerDecl* layer) {
    const Token& t = next(what);
    if (t.text.size() > kMaxNameLength)
      throw Error((layer ? describe(*layer) : where(t)) + ": " + what + " is longer than " +
                  std::to_string(kMaxNameLength) + " characters");
    return t.text;
  }

  LayerDecl read_layer(int index, int count) {
    LayerDecl layer;
    std::string ordinal = "layer " + std::to_string(index + 1) + " of " + std::to_string(count);
    if (pos_ < tokens_.size()) layer.line = tokens_[pos_].line;
    layer.type = read_name("the type of " + ordinal, nullptr);
    if (is_param_token(layer.type) || !starts_with_letter(layer.type))
      throw Error("ncnn param line " + std::to_string(layer.line) + ": '" + clip(layer.type) +
                  "' is not a layer type (" + ordinal + "; is the layer count too large?)");
    layer.name = read_name("the name of " + ordinal, nullptr);
    int n_bottoms = read_blob_count(layer, "input count");
    int n_tops = read_blob_count(layer, "output count");
    for (int i = 0; i < n_bottoms; ++i) layer.bottoms.push_back(read_name("an input blob name", &layer));
    for (int i = 0; i < n_tops; ++i) layer.tops.push_back(read_name("an output blob name", &layer));
    for (const std::string& b : layer.bottoms)
      if (is_param_token(b)) throw Error(describe(layer) + ": '" + clip(b) + "' is not a blob name (bad input count?)");
    for (const std::string& t : layer.tops)
      if (is_param_token(t)) throw Error(describe(layer) + ": '" + clip(t) + "' is not a blob name (bad output count?)");
    while (pos_ < tokens_.size() && is_param_token(tokens_[pos_].text)) read_param(layer, tokens_[pos_++]);
    return layer;
  }

  // A type starts with a letter (ncnn's layer registry names all do); anything else is a sign of a
  // miscounted or garbled file, reported here rather than as an unknown layer type.
  static bool starts_with_letter(const std::string& s) {
    return !s.empty() && ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'));
  }

  int read_blob_count(const LayerDecl& layer, const std::string& what) {
    const Token& t = next("the " + what + " of layer '" + clip(layer.name) + "'");
    int32_t v = 0;
    if (!parse_int32(t.text, v) || v < 0)
      throw Error(describe(layer) + ": " + what + " must be a non-negative integer, got '" + clip(t.text) + "'");
    // Each blob name is one token: a count larger than what is left cannot be right.
    if (static_cast<size_t>(v) > tokens_.size() - pos_)
      throw Error(describe(layer) + ": " + what + " " + std::to_string(v) + " is more than the names that follow");
    return v;
  }

  void read_param(LayerDecl& layer, const Token& t) {
    size_t eq = t.text.find('=');
    int32_t key = 0;
    if (!parse_int32(t.text.substr(0, eq), key))
      throw Error(describe(layer) + ": bad parameter key in '" + clip(t.text) + "'");
    const std::string value = t.text.substr(eq + 1);
    ParamValue v;
    int id = key;
    if (key <= kArrayKeyBase) {
      id = -(key - kArrayKeyBase);  // -23300 - id
      v.is_array = true;
      size_t comma = value.find(',');
      int32_t n = 0;
      if (!parse_int32(value.substr(0, comma), n) || n < 0)
        throw Error(describe(layer) + ": array parameter " + std::to_string(id) + " has a bad length in '" +
                    clip(t.text) + "'");
      size_t p = comma;
      while (p != std::string::npos) {
        size_t q = value.find(',', p + 1);
        std::string elem = value.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1);
        ParamScalar s;
        if (!parse_scalar(elem, s))
          throw Error(describe(layer) + ": array parameter " + std::to_string(id) + " has a bad element '" +
                      clip(elem) + "'");
        v.array.push_back(s);
        p = q;
      }
      if (static_cast<int64_t>(v.array.size()) != n)
        throw Error(describe(layer) + ": array parameter " + std::to_string(id) + " declares " + std::to_string(n) +
                    " elements but has " + std::to_string(v.array.size()));
    } else {
      if (!parse_scalar(value, v.scalar))
        throw Error(describe(layer) + ": parameter " + std::to_string(key) + " has a bad value '" + clip(value) + "'");
    }
    if (id < 0 || id >= kMaxParamId)
      throw Error(describe(layer) + ": parameter key " + std::to_string(key) + " is out of range (ids are 0.." +
                  std::to_string(kMaxParamId - 1) + ", arrays -23300..-23331)");
    if (layer.params.has(id))
      throw Error(describe(layer) + ": parameter " + std::to_string(id) + " is given twice");
    layer.params.set(id, std::move(v));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

int ParamDict::get_int(int id, int fallback) const {
  auto it = values_.find(id);
  if (it == values_.end()) return fallback;
  const ParamValue& v = it->second;
  if (v.is_array) throw Error("parameter " + std::to_string(id) + " must be an integer, got an array");
  if (v.scalar.is_float) throw Error("parameter " + std::to_string(id) + " must be an integer, got a float");
  return v.scalar.i;
}

float ParamDict::get_float(int id, float fallback) const {
  auto it = values_.find(id);
  if (it == values_.end()) return fallback;
  const ParamValue& v = it->second;
  if (v.is_array) throw Error("parameter " + std::to_string(id) + " must be a number, got an array");
  return v.scalar.is_float ? v.scalar.f : static_cast<float>(v.scalar.i);
}

std::vector<int> ParamDict::get_ints(int id) const {
  auto it = values_.find(id);
  if (it == values_.end()) return {};
  const ParamValue& v = it->second;
  if (!v.is_array) throw Error("parameter " + std::to_string(id) + " must be an array");
  std::vector<int> out;
  for (const ParamScalar& s : v.array) {
    if (s.is_float) throw Error("array parameter " + std::to_string(id) + " must hold integers, got a float");
    out.push_back(s.i);
  }
  return out;
}

std::vector<float> ParamDict::get_floats(int id) const {
  auto it = values_.find(id);
  if (it == values_.end()) return {};
  const ParamValue& v = it->second;
  if (!v.is_array) throw Error("parameter " + std::to_string(id) + " must be an array");
  std::vector<float> out;
  for (const ParamScalar& s : v.array) out.push_back(s.is_float ? s.f : static_cast<float>(s.i));
  return out;
}

void ParamDict::set(int id, ParamValue v) {
  if (!values_.emplace(id, std::move(v)).second) throw Error("parameter " + std::to_string(id) + " is given twice");
}

ParamFile parse_param_text(const std::string& text) { return Parser(tokenize(text)).parse(); }

}  // namespace ncnn
}  // namespace ninegrid
