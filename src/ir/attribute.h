// Node attributes: the typed key/value parameters of an operator (kernel_shape, strides, alpha, ...).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ninegrid/tensor.h"

namespace ninegrid {

struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, TensorValue };
  Kind kind = Kind::Int;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  Tensor t;

  static Attribute of_int(int64_t v) { Attribute a; a.kind = Kind::Int; a.i = v; return a; }
  static Attribute of_float(float v) { Attribute a; a.kind = Kind::Float; a.f = v; return a; }
  static Attribute of_string(std::string v) { Attribute a; a.kind = Kind::String; a.s = std::move(v); return a; }
  static Attribute of_ints(std::vector<int64_t> v) { Attribute a; a.kind = Kind::Ints; a.ints = std::move(v); return a; }
  static Attribute of_floats(std::vector<float> v) { Attribute a; a.kind = Kind::Floats; a.floats = std::move(v); return a; }
  static Attribute of_strings(std::vector<std::string> v) { Attribute a; a.kind = Kind::Strings; a.strings = std::move(v); return a; }
  static Attribute of_tensor(Tensor v) { Attribute a; a.kind = Kind::TensorValue; a.t = std::move(v); return a; }
};

// Typed lookups with defaults. A present attribute of the wrong kind is an Error (the caller adds the
// node's name), never a silent default.
class Attributes {
 public:
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  void set(const std::string& name, Attribute a) { map_[name] = std::move(a); }
  void erase(const std::string& name) { map_.erase(name); }
  const std::map<std::string, Attribute>& all() const { return map_; }

  int64_t get_int(const std::string& name, int64_t fallback) const;
  float get_float(const std::string& name, float fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> get_floats(const std::string& name, const std::vector<float>& fallback = {}) const;
  // Throws if absent.
  const Tensor& get_tensor(const std::string& name) const;
  const Attribute* find(const std::string& name) const;

 private:
  std::map<std::string, Attribute> map_;
};

}  // namespace ninegrid
