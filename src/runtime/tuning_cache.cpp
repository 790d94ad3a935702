#include "runtime/tuning_cache.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <unistd.h>

#include "core/cpu_features.h"
#include "core/text_words.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {

constexpr const char* kHeader = "ninegrid-tuning-cache 1";
// Far above what tuning every model of a zoo writes (a line per distinct conv and layout).
constexpr std::uintmax_t kMaxFileBytes = 16u << 20;
// Options::threads allows at most this many.
constexpr int64_t kMaxThreadsEntry = 1024;
constexpr double kMaxMicroseconds = 1e9;  // a conv or reorder slower than 1000 s is not a measurement

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

// "a | b | c" -> {"a", "b", "c"} (trimmed).
std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t bar = s.find('|', start);
    out.push_back(trim(s.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start)));
    if (bar == std::string_view::npos) return out;
    start = bar + 1;
  }
}

// A finite time in (0, kMaxMicroseconds], whole token.
bool parse_time(std::string_view word, double* t) {
  if (word.empty() || word.size() > 32) return false;
  const std::string token(word);
  char* end = nullptr;
  const double v = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size() || !std::isfinite(v) || v <= 0 || v > kMaxMicroseconds) return false;
  *t = v;
  return true;
}

bool parse_int(std::string_view token, int64_t lo, int64_t hi, int64_t* v) {
  if (token.empty() || token.size() > 19) return false;
  for (char c : token)
    if (c < '0' || c > '9') return false;
  long long x = 0;
  if (!parse_word_int(token, &x) || x < lo || x > hi) return false;
  *v = x;
  return true;
}

bool valid_block(int64_t b) { return b == 1 || b == 4 || b == 8 || b == 16; }

bool parse_reorder_key(std::string_view s) {
  const std::vector<std::string_view> w = split_words(s);
  int64_t channels, plane, from, to, threads;
  return w.size() == 5 && parse_int(w[0], 1, 1 << 20, &channels) && parse_int(w[1], 1, int64_t(1) << 40, &plane) &&
         parse_int(w[2], 1, 16, &from) && parse_int(w[3], 1, 16, &to) && parse_int(w[4], 1, 1024, &threads) &&
         valid_block(from) && valid_block(to) && from != to && channels % from == 0 && channels % to == 0 &&
         format_reorder_key(channels, plane, from, to, static_cast<int>(threads)) == s;
}

bool parse_fingerprint(std::string_view s) {
  if (s.size() != 16) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool parse_layout(std::string_view s, std::map<int, int64_t>* out) {
  std::map<int, int64_t> layout;
  for (std::string_view item : split_words(s)) {
    const size_t colon = item.find(':');
    int64_t node, block;
    if (colon == std::string_view::npos || !parse_int(item.substr(0, colon), 0, 1 << 24, &node) ||
        !parse_int(item.substr(colon + 1), 1, 16, &block) || !valid_block(block) || layout.count(int(node)))
      return false;
    layout[static_cast<int>(node)] = block;
  }
  if (layout.empty()) return false;
  *out = std::move(layout);
  return true;
}

// Parses the file's text; on a fault returns false with *error saying where and what.
bool parse(const std::string& text, TuningCacheFile* file, std::string* error) {
  const std::string_view all(text);
  size_t next = 0;  // where the next line starts
  auto getline = [&](std::string_view* line) {
    if (next >= all.size()) return false;
    const size_t end = std::min(all.find('\n', next), all.size());
    *line = all.substr(next, end - next);
    next = end + 1;
    return true;
  };
  std::string_view line;
  int number = 0;
  auto fail = [&](const std::string& what) {
    *error = "line " + std::to_string(number) + ": " + what;
    return false;
  };
  if (!getline(&line) || trim(line) != kHeader) {
    number = 1;
    return fail(std::string("not a ninegrid tuning cache (the first line must be '") + kHeader + "')");
  }
  number = 1;
  TuningEntries* current = nullptr;
  int64_t entries = 0;
  bool ended = false;
  while (getline(&line)) {
    ++number;
    line = trim(line);
    if (line.empty()) continue;
    if (ended) return fail("text after the 'end' line");
    const size_t space = line.find(' ');
    const std::string_view kind = line.substr(0, space);
    const std::string_view rest = space == std::string_view::npos ? std::string_view() : trim(line.substr(space + 1));
    if (kind == "cpu") {
      if (rest.empty() || rest.size() > 512) return fail("a cpu line needs the CPU's identity");
      current = &file->cpus[std::string(rest)];
      ++entries;
      continue;
    }
    if (kind == "end") {
      int64_t count;
      if (!parse_int(rest, 0, int64_t(1) << 40, &count)) return fail("malformed end line");
      if (count != entries)
        return fail("the file says it holds " + std::to_string(count) + " lines but holds " + std::to_string(entries) +
                    " (truncated or edited)");
      ended = true;
      continue;
    }
    if (!current) return fail("an entry before any cpu line");
    const std::vector<std::string_view> f = fields(rest);
    if (kind == "conv") {
      ConvKey key;
      TunedConv t;
      // Single spaces and the parsers' canonical numbers and names: the text is what format_conv_key and
      // format_conv_plan would write, so the key matches the lookups' (without formatting it again).
      if (f.size() != 3 || !single_spaced(f[0]) || !parse_conv_key(f[0], &key)) return fail("malformed conv key");
      if (!single_spaced(f[1]) || !parse_conv_plan(f[1], &t.plan)) return fail("malformed conv plan");
      if (t.plan.kernel == ConvKernel::Ref || t.plan.in_block != key.in_block || t.plan.out_block != key.out_block)
        return fail("the plan does not match its conv's blocks");
      std::string_view times[2];
      if (split_words(f[2], times, 2) != 2 || !parse_time(times[0], &t.time_us) || !parse_time(times[1], &t.rule_time_us))
        return fail("malformed times");
      current->convs[std::string(f[0])] = t;
    } else if (kind == "reorder") {
      double us;
      if (f.size() != 2 || !parse_reorder_key(f[0]) || !parse_time(f[1], &us)) return fail("malformed reorder entry");
      current->reorders[std::string(f[0])] = us;
    } else if (kind == "layout") {
      std::map<int, int64_t> layout;
      if (f.size() != 2 || !parse_fingerprint(f[0]) || !parse_layout(f[1], &layout))
        return fail("malformed layout entry");
      current->layouts[std::string(f[0])] = std::move(layout);
    } else if (kind == "threads") {
      int64_t threads;
      if (f.size() != 2 || !parse_fingerprint(f[0]) || !parse_int(f[1], 1, kMaxThreadsEntry, &threads))
        return fail("malformed threads entry");
      current->threads[std::string(f[0])] = static_cast<int>(threads);
    } else {
      return fail("unknown entry '" + std::string(kind.substr(0, 32)) + "'");
    }
    ++entries;
  }
  if (!ended) return fail("no 'end' line (truncated)");
  return true;
}

}  // namespace

std::string format_reorder_key(int64_t channels, int64_t plane, int64_t from, int64_t to, int threads) {
  return std::to_string(channels) + " " + std::to_string(plane) + " " + std::to_string(from) + " " +
         std::to_string(to) + " " + std::to_string(threads);
}

std::string default_tuning_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  // The XDG spec: a relative value is invalid and to be ignored.
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/ninegrid/tuning.cache";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/ninegrid/tuning.cache";
  return "";
}

TuningCacheFile read_tuning_cache(const std::string& path, std::string* warning) {
  TuningCacheFile file;
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return file;
  auto ignored = [&](const std::string& why) {
    if (warning) *warning = "tuning cache '" + path + "' ignored: " + why;
    return TuningCacheFile();
  };
  if (!std::filesystem::is_regular_file(path, ec)) return ignored("not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return ignored("cannot read its size");
  if (size > kMaxFileBytes) return ignored("larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  std::ifstream f(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!f || !f.read(text.data(), static_cast<std::streamsize>(size))) return ignored("cannot read it");
  if (text.find('\0') != std::string::npos) return ignored("binary data in a text file");
  std::string error;
  if (!parse(text, &file, &error)) return ignored(error);
  return file;
}

TuningEntries read_tuning_entries(const std::string& path, std::string* warning) {
  TuningCacheFile file = read_tuning_cache(path, warning);
  auto it = file.cpus.find(cpu_identity());
  if (it == file.cpus.end() || it->second.empty()) {
    bool others = false;
    for (const auto& kv : file.cpus) others = others || !kv.second.empty();
    if (others && warning)
      *warning = "tuning cache '" + path + "' ignored: it holds results for other CPUs only, none for this one (" +
                 cpu_identity() + "); run `ninegrid tune` here";
    return TuningEntries();
  }
  return std::move(it->second);
}

void write_tuning_cache(const std::string& path, const TuningCacheFile& file) {
  if (path.empty()) throw Error("no tuning cache file: set XDG_CACHE_HOME or HOME, or give a file");
  std::ostringstream out;
  out << kHeader << "\n";
  out.precision(6);
  out << std::fixed;
  int64_t entries = 0;
  for (const auto& [cpu, e] : file.cpus) {
    if (e.empty()) continue;
    out << "cpu " << cpu << "\n";
    ++entries;
    for (const auto& [key, t] : e.convs) {
      out << "conv " << key << " | " << format_conv_plan(t.plan) << " | " << t.time_us << " " << t.rule_time_us << "\n";
      ++entries;
    }
    for (const auto& [key, us] : e.reorders) {
      out << "reorder " << key << " | " << us << "\n";
      ++entries;
    }
    for (const auto& [fingerprint, layout] : e.layouts) {
      out << "layout " << fingerprint << " |";
      for (const auto& [node, block] : layout) out << " " << node << ":" << block;
      out << "\n";
      ++entries;
    }
    for (const auto& [fingerprint, threads] : e.threads) {
      out << "threads " << fingerprint << " | " << threads << "\n";
      ++entries;
    }
  }
  out << "end " << entries << "\n";
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  const std::string temp = path + ".tmp" + std::to_string(static_cast<long long>(::getpid()));
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("cannot write the tuning cache '" + temp + "'");
    const std::string text = out.str();
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!f) throw Error("cannot write the tuning cache '" + temp + "'");
  }
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw Error("cannot replace the tuning cache '" + path + "'");
  }
}

}  // namespace ninegrid
