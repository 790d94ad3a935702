// Shared by the ncnn importer tests (ncnn_import_test.cpp, ncnn_int8_test.cpp): a writer of .bin contents in
// ncnn's ModelBin layout, and the check that an import error names what it should.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ninegrid/ninegrid.h"

namespace ninegrid {
namespace ncnn_test {

// Builds .bin contents.
struct BinWriter {
  std::string bytes;
  void u32(uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); }
  void f32(float v) { bytes.append(reinterpret_cast<const char*>(&v), 4); }
  void u16(uint16_t v) { bytes.append(reinterpret_cast<const char*>(&v), 2); }
  void u8(uint8_t v) { bytes.push_back(static_cast<char>(v)); }
  void pad4() {
    while (bytes.size() % 4) bytes.push_back('\0');
  }
  // A "type 0" float32 blob (tag 0) and a "type 1" raw blob.
  void raw_blob(const std::vector<float>& v) {
    u32(0);
    raw(v);
  }
  void raw(const std::vector<float>& v) {
    for (float x : v) f32(x);
  }
  // A "type 0" int8 blob, as ncnn2int8 writes quantised weights: the int8 tag, the bytes, padding to 4.
  void int8_blob(const std::vector<int8_t>& v) {
    u32(0x000D4B38);
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size());
    pad4();
  }
};

// Expects fn to throw Error whose message contains every one of `parts`.
inline void expect_error(const std::function<void()>& fn, std::initializer_list<const char*> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an Error mentioning '" << *parts.begin() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  }
}

}  // namespace ncnn_test
}  // namespace ninegrid
