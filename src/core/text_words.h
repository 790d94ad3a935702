// Splitting a line of text into words and reading whole-word integers, without iostreams: every load
// parses the tuning cache (a line per tuned conv), and a string stream per line made a cache of a few
// hundred models' convs cost milliseconds to read (bench/REPORT.md).
#pragma once

#include <charconv>
#include <string_view>
#include <vector>

namespace ninegrid {

// The words of `s` separated by spaces, tabs or carriage returns, as views into `s`, into out[0 ..
// capacity); returns how many there are, but counts no further than capacity + 1 (too many).
inline size_t split_words(std::string_view s, std::string_view* out, size_t capacity) {
  size_t i = 0, count = 0;
  for (;;) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    if (i == s.size() || count > capacity) return count;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (count < capacity) out[count] = s.substr(start, i - start);
    ++count;
  }
}

// All the words of `s` (as above).
inline std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> out(8);
  size_t count;
  while ((count = split_words(s, out.data(), out.size())) > out.size()) out.resize(out.size() * 4);
  out.resize(count);
  return out;
}

// The whole word as a decimal integer (an optional '-', then digits); false on anything else or overflow.
inline bool parse_word_int(std::string_view word, long long* value) {
  if (word.empty()) return false;
  const char* end = word.data() + word.size();
  const auto [ptr, ec] = std::from_chars(word.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

}  // namespace ninegrid
