#include "ir/attribute.h"

namespace ninegrid {

namespace {
const char* kind_name(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::Int: return "int";
    case Attribute::Kind::Float: return "float";
    case Attribute::Kind::String: return "string";
    case Attribute::Kind::Ints: return "ints";
    case Attribute::Kind::Floats: return "floats";
    case Attribute::Kind::Strings: return "strings";
    case Attribute::Kind::TensorValue: return "tensor";
  }
  return "?";
}

[[noreturn]] void wrong_kind(const std::string& name, const Attribute& a, const char* want) {
  throw Error("attribute '" + name + "' is " + kind_name(a.kind) + ", expected " + want);
}
}  // namespace

const Attribute* Attributes::find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  const Attribute* a = find(name);
  if (!a) return fallback;
  if (a->kind != Attribute::Kind::Int) wrong_kind(name, *a, "int");
  return a->i;
}

float Attributes::get_float(const std::string& name, float fallback) const {
  const Attribute* a = find(name);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::Int) return static_cast<float>(a->i);
  if (a->kind != Attribute::Kind::Float) wrong_kind(name, *a, "float");
  return a->f;
}

std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  const Attribute* a = find(name);
  if (!a) return fallback;
  if (a->kind != Attribute::Kind::String) wrong_kind(name, *a, "string");
  return a->s;
}

std::vector<int64_t> Attributes::get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  const Attribute* a = find(name);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::Int) return {a->i};
  if (a->kind != Attribute::Kind::Ints) wrong_kind(name, *a, "ints");
  return a->ints;
}

std::vector<float> Attributes::get_floats(const std::string& name, const std::vector<float>& fallback) const {
  const Attribute* a = find(name);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::Float) return {a->f};
  if (a->kind != Attribute::Kind::Floats) wrong_kind(name, *a, "floats");
  return a->floats;
}

const Tensor& Attributes::get_tensor(const std::string& name) const {
  const Attribute* a = find(name);
  if (!a) throw Error("attribute '" + name + "' is missing");
  if (a->kind != Attribute::Kind::TensorValue) wrong_kind(name, *a, "tensor");
  return a->t;
}

}  // namespace ninegrid
