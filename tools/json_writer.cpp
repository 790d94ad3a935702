#include "json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ninegrid/tensor.h"

namespace ninegrid::cli {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::newline(size_t depth) {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) {
    if (!out_.empty()) throw Error("JsonWriter: more than one top-level value");
    return;
  }
  Level& top = stack_.back();
  if (top.is_object) throw Error("JsonWriter: a value inside an object needs a key");
  if (top.count++ > 0) out_ += indent_ > 0 ? "," : ", ";
  newline(stack_.size());
}

JsonWriter& JsonWriter::key(const std::string& k) {
  if (stack_.empty() || !stack_.back().is_object || after_key_) throw Error("JsonWriter: key outside an object");
  Level& top = stack_.back();
  if (top.count++ > 0) out_ += indent_ > 0 ? "," : ", ";
  newline(stack_.size());
  out_ += json_quote(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::raw(const std::string& text) {
  before_value();
  out_ += text;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({true, 0});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back({false, 0});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().is_object || after_key_) throw Error("JsonWriter: unbalanced end_object");
  bool had_members = stack_.back().count > 0;
  stack_.pop_back();
  if (had_members) newline(stack_.size());
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().is_object) throw Error("JsonWriter: unbalanced end_array");
  bool had_items = stack_.back().count > 0;
  stack_.pop_back();
  if (had_items) newline(stack_.size());
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::value(const std::string& s) { return raw(json_quote(s)); }

JsonWriter& JsonWriter::value(double d) {
  if (!std::isfinite(d)) return raw("null");
  char buf[32];
  // %.17g round-trips every double; trim to the shortest of a few precisions that still round-trips.
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return raw(buf);
}

JsonWriter& JsonWriter::value(int64_t i) { return raw(std::to_string(i)); }
JsonWriter& JsonWriter::value(uint64_t u) { return raw(std::to_string(u)); }
JsonWriter& JsonWriter::value(bool b) { return raw(b ? "true" : "false"); }
JsonWriter& JsonWriter::null() { return raw("null"); }

JsonWriter& JsonWriter::int_array(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  text += "]";
  return raw(text);
}

}  // namespace ninegrid::cli
