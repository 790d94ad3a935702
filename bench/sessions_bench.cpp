// Many sessions at once: S threads, each running its own Session of one model (Options::threads = W) R
// times, and the wall time until all are done. With S * W above the cores the process may use, this shows
// what the worker pools cost when they outnumber the cores (issue 17); with S = 1, plain latency.
//
//   ninegrid_sessions_bench MODEL [--configs 8x1,8x2,...] [--runs R] [--rounds K]
//
// Each configuration (SxW) is timed in K rounds, the configurations interleaved within a round, each round
// loading the model afresh. One line per round and configuration, then a summary with the median.
// Only the public API is used, so the same binary measures any build of libninegrid.so
// (LD_LIBRARY_PATH=DIR picks one).
#include <ninegrid/ninegrid.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Config {
  int sessions = 1;
  int workers = 1;
};

std::vector<Config> parse_configs(const std::string& text) {
  std::vector<Config> configs;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    Config c;
    if (std::sscanf(item.c_str(), "%dx%d", &c.sessions, &c.workers) != 2 || c.sessions < 1 || c.workers < 1) {
      std::fprintf(stderr, "bad configuration '%s' (expected SxW, e.g. 8x2)\n", item.c_str());
      std::exit(2);
    }
    configs.push_back(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return configs;
}

// Wall seconds for config.sessions threads to each run their own session `runs` times, after one untimed
// run each. The clock starts when every session is created and warmed up.
double time_config(const std::string& path, const Config& config, int runs) {
  ninegrid::Options options;
  options.threads = config.workers;
  auto model = ninegrid::Model::load(path, options);

  std::vector<std::vector<float>> inputs;  // per model input, shared read-only by all sessions
  for (const auto& info : model->inputs()) {
    int64_t count = 1;
    for (int64_t d : info.shape) {
      if (d < 0) throw std::runtime_error("input " + info.name + " has a dynamic shape");
      count *= d;
    }
    std::vector<float> values(static_cast<size_t>(count));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 255) / 255.0f - 0.5f;
    inputs.push_back(std::move(values));
  }

  std::mutex mutex;
  std::condition_variable cv;
  int ready = 0;
  bool go = false;
  std::exception_ptr failure;
  std::vector<std::thread> threads;
  for (int s = 0; s < config.sessions; ++s) {
    threads.emplace_back([&] {
      try {
        auto session = model->create_session();
        // Borrowed inputs are bound for one run only: bind them before each (a wrap, no copy).
        auto run = [&] {
          for (size_t i = 0; i < inputs.size(); ++i) {
            const auto& info = model->inputs()[i];
            session->set_input(info.name, ninegrid::Tensor::wrap(ninegrid::DataType::Float32, info.shape,
                                                                 const_cast<float*>(inputs[i].data())));
          }
          session->run();
        };
        run();
        {
          std::unique_lock<std::mutex> lock(mutex);
          ++ready;
          cv.notify_all();
          cv.wait(lock, [&] { return go; });
        }
        for (int r = 0; r < runs; ++r) run();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        failure = std::current_exception();
        ++ready;
        cv.notify_all();
      }
    });
  }
  std::chrono::steady_clock::time_point start;
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return ready == config.sessions; });
    go = true;
    start = std::chrono::steady_clock::now();
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failure) std::rethrow_exception(failure);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::printf(
        "usage: %s MODEL [--configs 1x1,1x2,2x1,4x2,8x1,8x2] [--runs 20] [--rounds 3]\n"
        "  SxW: S sessions on S threads at once, each with W threads (Options::threads), each running the model\n"
        "  R times; prints the wall time of each configuration per round and the median over rounds.\n",
        argv[0]);
    return argc < 2 ? 2 : 0;
  }
  std::string path = argv[1];
  std::vector<Config> configs = parse_configs("1x1,1x2,2x1,4x2,8x1,8x2");
  int runs = 20;
  int rounds = 3;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", arg.c_str());
      return 2;
    }
    if (arg == "--configs") configs = parse_configs(argv[++i]);
    else if (arg == "--runs") runs = std::atoi(argv[++i]);
    else if (arg == "--rounds") rounds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  std::map<std::string, std::vector<double>> times;
  std::vector<std::string> order;
  try {
    for (int round = 0; round < rounds; ++round) {
      for (const Config& c : configs) {
        std::string name = std::to_string(c.sessions) + "x" + std::to_string(c.workers);
        double seconds = time_config(path, c, runs);
        if (!times.count(name)) order.push_back(name);
        times[name].push_back(seconds);
        std::printf("round %d %s: %.3f s (%d runs per session)\n", round, name.c_str(), seconds, runs);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::printf("config  median_s  ms_per_run_per_session\n");
  for (const auto& name : order) {
    auto v = times[name];
    std::sort(v.begin(), v.end());
    double median = v[v.size() / 2];
    std::printf("%-6s  %8.3f  %8.3f\n", name.c_str(), median, median * 1000.0 / runs);
  }
  return 0;
}
