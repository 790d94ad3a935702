// core/text_words.h: the words of a line and whole-word integers, as the tuning cache reads them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/text_words.h"

namespace ninegrid {
namespace {

TEST(TextWords, SplitsOnSpacesTabsAndCarriageReturns) {
  const std::vector<std::string_view> w = split_words("  conv\t1 22\r 333  ");
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0], "conv");
  EXPECT_EQ(w[1], "1");
  EXPECT_EQ(w[2], "22");
  EXPECT_EQ(w[3], "333");
  EXPECT_TRUE(split_words("").empty());
  EXPECT_TRUE(split_words(" \t ").empty());
}

TEST(TextWords, ManyWordsGrowTheVector) {
  std::string line;
  for (int i = 0; i < 100; ++i) line += std::to_string(i) + " ";
  const std::vector<std::string_view> w = split_words(line);
  ASSERT_EQ(w.size(), 100u);
  EXPECT_EQ(w[0], "0");
  EXPECT_EQ(w[99], "99");
}

TEST(TextWords, AFixedArrayCountsOnePastItsCapacity) {
  std::string_view out[3];
  EXPECT_EQ(split_words("a b", out, 3), 2u);
  EXPECT_EQ(out[1], "b");
  EXPECT_EQ(split_words("a b c", out, 3), 3u);
  EXPECT_EQ(out[2], "c");
  // Too many: the first three are filled and the count says 4, however many more there are.
  EXPECT_EQ(split_words("a b c d e f", out, 3), 4u);
  EXPECT_EQ(out[0], "a");
  EXPECT_EQ(out[2], "c");
}

TEST(TextWords, IntegersAreWholeWords) {
  long long v = 0;
  EXPECT_TRUE(parse_word_int("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(parse_word_int("-17", &v));
  EXPECT_EQ(v, -17);
  EXPECT_TRUE(parse_word_int("9223372036854775807", &v));
  EXPECT_EQ(v, 9223372036854775807LL);
  // Only what std::to_string writes: no leading zero, no negative zero.
  for (const char* bad : {"", "-", "+5", "5x", "x5", " 5", "5 ", "1.5", "9223372036854775808", "0x10", "007", "00",
                          "-0", "-05"})
    EXPECT_FALSE(parse_word_int(bad, &v)) << bad;
}

TEST(TextWords, SingleSpacedMeansTheWritersSpacing) {
  EXPECT_TRUE(single_spaced("a"));
  EXPECT_TRUE(single_spaced("a bc d"));
  for (const char* bad : {"", " a", "a ", "a  b", "a\tb", "a\r"}) EXPECT_FALSE(single_spaced(bad)) << bad;
}

}  // namespace
}  // namespace ninegrid
