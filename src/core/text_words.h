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

// The whole word as a decimal integer written as std::to_string writes it (an optional '-', then digits
// with no leading zero; "0" but not "-0"): false on anything else or overflow. Since nothing else is
// accepted, a value read back formats to the same word.
inline bool parse_word_int(std::string_view word, long long* value) {
  const size_t digits = word.size() - (!word.empty() && word[0] == '-');
  if (digits == 0 || (word[word.size() - digits] == '0' && (digits > 1 || word[0] == '-'))) return false;
  const char* end = word.data() + word.size();
  const auto [ptr, ec] = std::from_chars(word.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

// Words separated by single spaces, nothing before the first or after the last: the spacing the tuning
// cache's writer uses.
inline bool single_spaced(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\t' || s[i] == '\r' || (s[i] == ' ' && s[i + 1] == ' ')) return false;
  return true;
}

}  // namespace ninegrid
