// NMS on hand-made boxes; expected survivors and merged coordinates computed by hand.
#include <gtest/gtest.h>

#include "detect/nms.h"

namespace ninegrid::detect {
namespace {

Face box(float x1, float y1, float x2, float y2, float score) {
  Face f;
  f.x1 = x1;
  f.y1 = y1;
  f.x2 = x2;
  f.y2 = y2;
  f.score = score;
  return f;
}

TEST(DetectNms, IouOfHandMadeBoxes) {
  // Half-overlapping 10x10 squares: intersection 50, union 150.
  EXPECT_FLOAT_EQ(box_iou(box(0, 0, 10, 10, 1), box(5, 0, 15, 10, 1)), 1.f / 3);
  // Shifted by (1, 1): intersection 81, union 119.
  EXPECT_FLOAT_EQ(box_iou(box(0, 0, 10, 10, 1), box(1, 1, 11, 11, 1)), 81.f / 119);
  EXPECT_EQ(box_iou(box(0, 0, 10, 10, 1), box(10, 0, 20, 10, 1)), 0.f);  // touching edges
  EXPECT_EQ(box_iou(box(0, 0, 0, 0, 1), box(0, 0, 0, 0, 1)), 0.f);       // empty boxes
}

TEST(DetectNms, KeepsBestOfEachOverlappingGroup) {
  // Given out of score order: B overlaps A by IoU 0.68 (suppressed), D overlaps A by 1/3 (kept at 0.4),
  // C is alone.
  std::vector<Face> in = {box(1, 1, 11, 11, 0.8f), box(5, 0, 15, 10, 0.6f), box(20, 20, 30, 30, 0.7f),
                          box(0, 0, 10, 10, 0.9f)};
  std::vector<Face> out = nms(in, 0.4f);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].score, 0.9f);
  EXPECT_EQ(out[0].x1, 0.f);
  EXPECT_EQ(out[1].score, 0.7f);
  EXPECT_EQ(out[1].x1, 20.f);
  EXPECT_EQ(out[2].score, 0.6f);
  EXPECT_EQ(out[2].x1, 5.f);
  // A stricter threshold also removes D (1/3 > 0.3).
  EXPECT_EQ(nms(in, 0.3f).size(), 2u);
  // Threshold 1 keeps everything that is not identical; threshold 0 keeps only disjoint boxes.
  EXPECT_EQ(nms(in, 1.0f).size(), 4u);
  EXPECT_EQ(nms(in, 0.0f).size(), 2u);
  EXPECT_TRUE(nms({}, 0.4f).empty());
}

TEST(DetectNms, WeightedNmsBlendsByScore) {
  // A and B overlap by IoU 80/120; the blend weighs A 3:1. C is far away.
  Face a = box(0, 0, 10, 10, 0.75f), b = box(2, 0, 12, 10, 0.25f), c = box(50, 50, 60, 60, 0.5f);
  a.landmarks[0][0] = 4;
  b.landmarks[0][0] = 8;
  c.landmarks[0][0] = 55;
  std::vector<Face> out = weighted_nms({b, c, a}, 0.3f);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[0].x1, 0.5f);
  EXPECT_FLOAT_EQ(out[0].x2, 10.5f);
  EXPECT_FLOAT_EQ(out[0].y2, 10.f);
  EXPECT_FLOAT_EQ(out[0].landmarks[0][0], 5.f);
  EXPECT_FLOAT_EQ(out[0].score, 0.75f);
  EXPECT_FLOAT_EQ(out[1].x1, 50.f);
  EXPECT_FLOAT_EQ(out[1].landmarks[0][0], 55.f);
}

TEST(DetectNms, TopKKeepsTheBest) {
  std::vector<Face> f = {box(0, 0, 1, 1, 0.1f), box(0, 0, 1, 1, 0.9f), box(0, 0, 1, 1, 0.5f)};
  keep_top_k(f, 2);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].score, 0.9f);
  EXPECT_EQ(f[1].score, 0.5f);
}

}  // namespace
}  // namespace ninegrid::detect
