// A tiny streaming JSON writer for the tools' --json output. It tracks nesting to place commas and
// escapes strings per RFC 8259; non-finite numbers, which JSON cannot express, are written as null.
//
//   JsonWriter w;
//   w.begin_object();
//   w.key("model").value(path);
//   w.key("shape").begin_array(); for (auto d : shape) w.value(d); w.end_array();
//   w.end_object();
//   std::puts(w.str().c_str());
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ninegrid::cli {

// `s` as a quoted JSON string literal: quotes, backslashes and control characters escaped, other bytes
// (UTF-8 included) passed through.
std::string json_quote(const std::string& s);

class JsonWriter {
 public:
  // indent > 0 pretty-prints with that many spaces per level; 0 writes one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The next value is this member of the enclosing object.
  JsonWriter& key(const std::string& k);

  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(int64_t i);
  JsonWriter& value(int i) { return value(static_cast<int64_t>(i)); }
  JsonWriter& value(uint64_t u);
  JsonWriter& value(bool b);
  JsonWriter& null();
  // An array of integers on one line (shapes).
  JsonWriter& int_array(const std::vector<int64_t>& values);

  // The text so far; complete once every begin_* has its end_*.
  const std::string& str() const { return out_; }

 private:
  struct Level {
    bool is_object;
    int count;
  };
  // Writes the separator and indentation due before a new element (or nothing after a key).
  void before_value();
  void newline(size_t depth);
  JsonWriter& raw(const std::string& text);

  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace ninegrid::cli
