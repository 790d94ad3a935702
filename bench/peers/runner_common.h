// What the peer runners (ncnn_runner.cpp, mnn_runner.cpp) share: their command line, .npy files in and out,
// the input pattern, the clock, peak resident memory and the JSON line bench/compare.py reads. It mirrors
// bench/ort_runner.js so that the three peers are driven and reported the same way.
//
// Header-only on purpose: each runner is one g++ command in bench/peers/build_{ncnn,mnn}.sh, linked against
// a peer library that is not part of ninegrid's build.
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace peer {

struct Args {
  std::vector<std::string> model;                  // positional: the model file(s)
  int threads = 1, runs = 20, warmup = 3;
  std::map<std::string, std::vector<int>> shapes;  // --shape NAME=1x3x640x640
  std::map<std::string, std::string> inputs;       // --input NAME=FILE.npy
  std::string save;                                // --save-outputs DIR
  bool json = false;
  std::vector<std::string> flags;                  // runner-specific switches (e.g. --fp16), passed through
};

inline std::vector<int> parse_dims(const std::string& s) {
  std::vector<int> d;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find_first_of("x,", p);
    if (q == std::string::npos) q = s.size();
    const std::string t = s.substr(p, q - p);
    char* end = nullptr;
    long v = std::strtol(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0' || v <= 0) throw std::runtime_error("bad dimension '" + t + "' in '" + s + "'");
    d.push_back(static_cast<int>(v));
    p = q + 1;
  }
  return d;
}

// Parses the command line; `known_flags` are the runner's own value-less switches.
inline Args parse_args(int argc, char** argv, const std::vector<std::string>& known_flags) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return argv[++i];
    };
    auto split = [&](const std::string& v) {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error(k + " expects NAME=VALUE, got '" + v + "'");
      return std::make_pair(v.substr(0, eq), v.substr(eq + 1));
    };
    if (k == "--threads") a.threads = std::atoi(next().c_str());
    else if (k == "--runs") a.runs = std::atoi(next().c_str());
    else if (k == "--warmup") a.warmup = std::atoi(next().c_str());
    else if (k == "--shape") { auto kv = split(next()); a.shapes[kv.first] = parse_dims(kv.second); }
    else if (k == "--input") { auto kv = split(next()); a.inputs[kv.first] = kv.second; }
    else if (k == "--save-outputs") a.save = next();
    else if (k == "--json") a.json = true;
    else if (std::find(known_flags.begin(), known_flags.end(), k) != known_flags.end()) a.flags.push_back(k);
    else if (k.size() > 1 && k[0] == '-') throw std::runtime_error("unknown option " + k);
    else a.model.push_back(k);
  }
  if (a.threads < 1 || a.runs < 0 || a.warmup < 0) throw std::runtime_error("--threads >= 1, --runs/--warmup >= 0");
  return a;
}

inline bool has_flag(const Args& a, const char* f) {
  return std::find(a.flags.begin(), a.flags.end(), f) != a.flags.end();
}

struct Npy {
  std::vector<int> shape;
  std::vector<float> data;
};

// Reads a little-endian float32 C-order .npy (what bench/compare.py and ort_runner.js write).
inline Npy read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  char magic[8];
  f.read(magic, 8);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  uint32_t hl = 0;
  if (magic[6] == 1) {
    uint16_t h16 = 0;
    f.read(reinterpret_cast<char*>(&h16), 2);
    hl = h16;
  } else {
    f.read(reinterpret_cast<char*>(&hl), 4);
  }
  std::string header(hl, ' ');
  f.read(&header[0], hl);
  if (header.find("'<f4'") == std::string::npos) throw std::runtime_error(path + ": not float32 ('<f4')");
  if (header.find("'fortran_order': True") != std::string::npos) throw std::runtime_error(path + ": Fortran order");
  const size_t a = header.find('(', header.find("'shape'")), b = header.find(')', a);
  Npy n;
  size_t count = 1;
  for (size_t p = a + 1; p < b;) {
    size_t q = header.find(',', p);
    if (q == std::string::npos || q > b) q = b;
    const std::string t = header.substr(p, q - p);
    if (t.find_first_of("0123456789") != std::string::npos) {
      n.shape.push_back(std::atoi(t.c_str()));
      count *= static_cast<size_t>(n.shape.back());
    }
    p = q + 1;
  }
  n.data.resize(count);
  f.read(reinterpret_cast<char*>(n.data.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (!f) throw std::runtime_error(path + ": shorter than its shape says");
  return n;
}

inline void write_npy(const std::string& path, const std::vector<int>& shape, const float* data) {
  std::string dims;
  size_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
    count *= static_cast<size_t>(shape[i]);
  }
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t hl = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&hl), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(float)));
}

// A file name for a tensor name (ONNX names may hold '/', ':' ...), as ort_runner.js makes it.
inline std::string file_name(const std::string& tensor) {
  std::string s = tensor;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return s;
}

// An entry of a --shape/--input map for a tensor: by its exact name, else by its file name (a name given as
// bench/compare.py knows it from the .npy files ort_runner.js saved, e.g. input_0 for input:0).
template <class Map>
typename Map::const_iterator find_tensor(const Map& m, const std::string& tensor) {
  auto it = m.find(tensor);
  if (it != m.end()) return it;
  for (it = m.begin(); it != m.end(); ++it)
    if (file_name(it->first) == file_name(tensor)) return it;
  return m.end();
}

// The input values when none are given: ort_runner.js's fillPattern, so that timing runs see the same data.
inline void fill_pattern(float* out, size_t n) {
  uint32_t s = 12345;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    out[i] = static_cast<float>(s >> 8) / 16777216.0f;
  }
}

inline double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// VmHWM, as ninegrid's own `bench` reports it (tools/cli_common.cpp).
inline double peak_rss_mb() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
    std::fclose(f);
    if (kib >= 0) return static_cast<double>(kib) / 1024.0;
  }
  return 0;
}

inline std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o + "\"";
}

// One JSON line with ort_runner.js's fields: bench/compare.py takes times_ms, load_ms and peak_rss_mb.
inline void report(const std::string& engine, const Args& a, double load_ms, const std::vector<double>& times) {
  std::vector<double> s = times;
  std::sort(s.begin(), s.end());
  const double median = s.empty() ? 0 : (s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2);
  double sum = 0;
  for (double t : s) sum += t;
  const double rss = peak_rss_mb();
  if (!a.json) {
    std::printf("%s: load %.1f ms, median %.3f ms (min %.3f, max %.3f), peak RSS %.1f MB\n", engine.c_str(), load_ms,
                median, s.empty() ? 0 : s.front(), s.empty() ? 0 : s.back(), rss);
    return;
  }
  std::string o = "{\"engine\": " + json_string(engine) + ", \"model\": " + json_string(a.model.empty() ? "" : a.model[0]);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                ", \"threads\": %d, \"runs\": %d, \"warmup\": %d, \"load_ms\": %.6g, \"min_ms\": %.6g, \"median_ms\": %.6g, "
                "\"max_ms\": %.6g, \"mean_ms\": %.6g, \"peak_rss_mb\": %.6g",
                a.threads, a.runs, a.warmup, load_ms, s.empty() ? 0 : s.front(), median, s.empty() ? 0 : s.back(),
                s.empty() ? 0 : sum / static_cast<double>(s.size()), rss);
  o += buf;
  o += ", \"times_ms\": [";
  for (size_t i = 0; i < times.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", times[i]);
    o += buf;
  }
  o += "]}";
  std::printf("%s\n", o.c_str());
}

}  // namespace peer
