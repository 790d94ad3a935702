#include <gtest/gtest.h>

#include <cstdio>

#include "core/npy.h"

namespace ninegrid {
namespace {

TEST(Npy, RoundTrip) {
  Tensor t = Tensor::from_vector<float>(DataType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6.5f});
  std::string path = testing::TempDir() + "/rt.npy";
  write_npy(path, t);
  Tensor r = read_npy(path);
  ASSERT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.dtype(), DataType::Float32);
  EXPECT_EQ(r.data_as<float>()[5], 6.5f);
  std::remove(path.c_str());
}

TEST(Npy, ReadsGoldenFileWrittenByNumpy) {
  Tensor t = read_npy(std::string(NINEGRID_SHARED_DIR) + "/models/mnet.25-golden/face_rpn_cls_prob_reshape_stride32.npy");
  EXPECT_EQ(t.dtype(), DataType::Float32);
  EXPECT_GE(t.rank(), 3);
}

TEST(Npy, TruncatedDataIsAnError) {
  Tensor t = Tensor::zeros(DataType::Float32, {4, 4});
  std::string path = testing::TempDir() + "/tr.npy";
  write_npy(path, t);
  std::string bytes;
  {
    FILE* f = std::fopen(path.c_str(), "rb");
    char buf[4096];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    bytes.assign(buf, n);
  }
  EXPECT_THROW(parse_npy(bytes.data(), bytes.size() - 4), Error);
  EXPECT_THROW(parse_npy(bytes.data(), 5), Error);
  std::remove(path.c_str());
}

// A version 1.0 .npy file: magic, header length, the header padded as NumPy pads it, then `data`.
std::string npy_bytes(std::string header, const std::string& data) {
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

// Found by fuzz/npy_fuzzer: a 128-byte file whose header claims 44 billion float16 values (88 GB) was
// allocated for before its data was found missing, which is an out-of-memory abort under ASan and an
// "out of memory" error naming no cause without it.
TEST(Npy, HeaderAskingForMoreThanTheFileHoldsIsRefusedBeforeAllocating) {
  const std::string bytes =
      npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 44444444442), }", std::string(16, '\0'));
  try {
    parse_npy(bytes.data(), bytes.size());
    FAIL() << "no Error thrown";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST(Npy, ShapeWhoseElementCountOverflowsIsAnError) {
  const std::string bytes = npy_bytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999, 999999999999999999), }", "");
  EXPECT_THROW(parse_npy(bytes.data(), bytes.size()), Error);
}

}  // namespace
}  // namespace ninegrid
