// Anchor and prior generation; expected values computed by hand from each project's published formula.
#include <gtest/gtest.h>

#include "detect/anchors.h"
#include "ninegrid/tensor.h"

namespace ninegrid::detect {
namespace {

TEST(DetectAnchors, InsightfaceBaseAnchors) {
  // Ratio 1: a 16x16 base times each scale.
  auto a = insightface_base_anchors(16, {1.f}, {32.f, 16.f});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].w, 512.f);
  EXPECT_EQ(a[0].h, 512.f);
  EXPECT_EQ(a[1].w, 256.f);
  // Ratio 0.5: w = round(16 / sqrt(0.5)) = round(22.63) = 23, h = round(23 * 0.5) = 12.
  auto b = insightface_base_anchors(16, {0.5f}, {1.f});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].w, 23.f);
  EXPECT_EQ(b[0].h, 12.f);
}

TEST(DetectAnchors, RetinaFaceMnetAnchorsFor640) {
  EXPECT_EQ(retinaface_base_anchors(16)[0].w, 128.f);
  EXPECT_EQ(retinaface_base_anchors(16)[1].w, 64.f);
  EXPECT_EQ(retinaface_base_anchors(8)[0].w, 32.f);
  EXPECT_EQ(retinaface_base_anchors(8)[1].w, 16.f);
  EXPECT_THROW(retinaface_base_anchors(4), Error);

  // Stride 32 on a 640 input: 20x20 positions, 2 anchors each.
  auto a = retinaface_anchors(32, 20, 20);
  ASSERT_EQ(a.size(), 800u);
  EXPECT_EQ(a[0].cx, 8.f);  // first position, first (largest) anchor
  EXPECT_EQ(a[0].cy, 8.f);
  EXPECT_EQ(a[0].w, 512.f);
  EXPECT_EQ(a[1].cx, 40.f);  // next column
  EXPECT_EQ(a[20].cy, 40.f);  // next row
  EXPECT_EQ(a[400].cx, 8.f);  // second anchor plane starts over
  EXPECT_EQ(a[400].w, 256.f);
  EXPECT_EQ(a[799].cx, 19 * 32 + 8.f);  // last: anchor 1, row 19, column 19
  EXPECT_EQ(a[799].cy, 616.f);
  EXPECT_EQ(a[799].w, 256.f);
  // All three strides: (20*20 + 40*40 + 80*80) * 2 anchors.
  size_t total = a.size() + retinaface_anchors(16, 40, 40).size() + retinaface_anchors(8, 80, 80).size();
  EXPECT_EQ(total, 16800u);
  auto s8 = retinaface_anchors(8, 80, 80);
  EXPECT_EQ(s8.back().cx, 79 * 8 + 8.f);
  EXPECT_EQ(s8.back().w, 16.f);
}

TEST(DetectAnchors, PytorchRetinaFacePriors) {
  auto p = pytorch_retinaface_priors(640, 640);
  ASSERT_EQ(p.size(), 16800u);  // (80*80 + 40*40 + 20*20) * 2
  EXPECT_FLOAT_EQ(p[0].cx, 0.5f * 8 / 640);
  EXPECT_FLOAT_EQ(p[0].cy, 0.00625f);
  EXPECT_FLOAT_EQ(p[0].w, 16.f / 640);
  EXPECT_FLOAT_EQ(p[1].cx, 0.00625f);  // same position, second min size
  EXPECT_FLOAT_EQ(p[1].w, 32.f / 640);
  EXPECT_FLOAT_EQ(p[2].cx, 1.5f * 8 / 640);  // next column
  EXPECT_FLOAT_EQ(p[12800].w, 64.f / 640);  // first prior of step 16
  EXPECT_FLOAT_EQ(p[12800].cx, 8.f / 640);
  EXPECT_FLOAT_EQ(p.back().cx, 19.5f * 32 / 640);
  EXPECT_FLOAT_EQ(p.back().cy, 0.975f);
  EXPECT_FLOAT_EQ(p.back().w, 0.8f);
  // Non-square, not a multiple of the steps: ceil(300/8) x ceil(200/8) = 38x25, 19x13, 10x7; 2 each.
  auto q = pytorch_retinaface_priors(300, 200);
  EXPECT_EQ(q.size(), 2u * (38 * 25 + 19 * 13 + 10 * 7));
  EXPECT_FLOAT_EQ(q[0].w, 16.f / 300);
  EXPECT_FLOAT_EQ(q[0].h, 16.f / 200);
  EXPECT_THROW(pytorch_retinaface_priors(0, 10), Error);
}

TEST(DetectAnchors, BlazeFaceAnchors) {
  auto a = blazeface_anchors();
  ASSERT_EQ(a.size(), 896u);  // 16*16*2 + 8*8*6
  EXPECT_FLOAT_EQ(a[0].cx, 0.5f / 16);
  EXPECT_FLOAT_EQ(a[0].cy, 0.5f / 16);
  EXPECT_EQ(a[0].w, 1.f);
  EXPECT_FLOAT_EQ(a[1].cx, 0.5f / 16);  // second anchor of the same cell
  EXPECT_FLOAT_EQ(a[2].cx, 1.5f / 16);  // next cell
  EXPECT_FLOAT_EQ(a[32].cy, 1.5f / 16);  // next row (16 cells * 2)
  EXPECT_FLOAT_EQ(a[511].cx, 15.5f / 16);
  EXPECT_FLOAT_EQ(a[512].cx, 0.5f / 8);  // 8x8 grid starts
  EXPECT_FLOAT_EQ(a[517].cx, 0.5f / 8);  // its sixth anchor of the first cell
  EXPECT_FLOAT_EQ(a[518].cx, 1.5f / 8);
  EXPECT_FLOAT_EQ(a[895].cx, 7.5f / 8);
  EXPECT_FLOAT_EQ(a[895].cy, 0.9375f);
}

}  // namespace
}  // namespace ninegrid::detect
