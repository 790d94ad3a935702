// The text .param format of ncnn: a magic number (7767517), the layer and blob counts, then one layer per
// line: type, name, input count, output count, input blob names, output blob names, and `key=value`
// parameters. A value is an int, a float (its text contains '.', 'e' or 'E', as ncnn decides), or, for
// a key <= -23300, an array for key -(key + 23300) written `count,v1,v2,...`.
//
// This file only tokenises and validates the text; mapping layers onto graph nodes is the importer's job.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ninegrid {
namespace ncnn {

// ncnn stores at most this many parameters per layer (NCNN_MAX_PARAM_COUNT); keys are 0..31.
constexpr int kMaxParamId = 32;

struct ParamScalar {
  bool is_float = false;
  int32_t i = 0;
  float f = 0.f;
};

struct ParamValue {
  bool is_array = false;
  ParamScalar scalar;              // when !is_array
  std::vector<ParamScalar> array;  // when is_array
};

// One layer's parameters. Lookups throw Error naming the key on a value of the wrong kind; the caller
// adds the layer's name.
class ParamDict {
 public:
  bool has(int id) const { return values_.count(id) != 0; }
  // An integer parameter; a float value is an error (ncnn would reinterpret its bits).
  int get_int(int id, int fallback) const;
  // A float parameter; an integer value is converted (ncnn's converters always write floats with a '.').
  float get_float(int id, float fallback) const;
  // Array parameters. Absent gives an empty vector; a scalar is an error.
  std::vector<int> get_ints(int id) const;
  std::vector<float> get_floats(int id) const;

  // Throws if the key was already set.
  void set(int id, ParamValue v);
  const std::map<int, ParamValue>& all() const { return values_; }

 private:
  std::map<int, ParamValue> values_;
};

struct LayerDecl {
  std::string type;
  std::string name;
  std::vector<std::string> bottoms;
  std::vector<std::string> tops;
  ParamDict params;
  int line = 0;  // 1-based line of the layer's type token, for error messages
};

struct ParamFile {
  int layer_count = 0;
  int blob_count = 0;
  std::vector<LayerDecl> layers;
};

// Parses and validates the text: magic, positive counts, exactly layer_count layers, exactly blob_count
// distinct output blobs, every input blob produced by an earlier layer, no blob produced twice, well
// formed parameters. Throws Error with the line and layer name on anything else.
ParamFile parse_param_text(const std::string& text);

}  // namespace ncnn
}  // namespace ninegrid
