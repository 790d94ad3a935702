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

}  // namespace
}  // namespace ninegrid
