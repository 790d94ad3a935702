// ninegrid bench: load time, latency statistics over repeated runs, and peak resident memory.
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <numeric>

#include "cli_common.h"
#include "commands.h"
#include "json_writer.h"
#include "progress.h"

namespace ninegrid::cli {

namespace {

// Six significant digits: timing noise is far larger, and fast models keep their digits (a fixed
// number of decimals would round a sub-microsecond latency to 0).
double six_digits(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

struct LatencyStats {
  double min = 0, median = 0, max = 0, mean = 0;
};

LatencyStats latency_stats(std::vector<double> ms) {
  LatencyStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  s.min = ms.front();
  s.max = ms.back();
  s.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(n);
  return s;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  ModelArgs margs;
  int runs = 20, warmup = 3;
  bool json = false;
  ArgParser p("bench",
              "Time a model: load time (Model::load plus session creation and planning), latency over R runs\n"
              "after W warm-up runs, and the process's peak resident memory. Inputs are a fixed pseudo-random\n"
              "pattern.");
  add_model_options(p, margs);
  p.option_int("--runs", "R", "timed runs", &runs, 1, 1000000);
  p.option_int("--warmup", "W", "untimed warm-up runs before timing", &warmup, 0, 1000000);
  p.flag("--json",
         "print one JSON object with model, threads, spin_microseconds (-1: the engine's choice), runs, warmup, "
         "load_ms, min_ms, median_ms, max_ms, mean_ms, peak_rss_mb",
         &json);
  int exit_code;
  if (!p.parse(argc, argv, &exit_code)) return exit_code;

  std::vector<GivenInput> none;
  LoadedModel loaded = load_model(margs, none);
  std::vector<Tensor> bound = bind_inputs(loaded, none);
  int threads = loaded.session->threads();

  Progress progress(warmup + runs);
  for (int i = 0; i < warmup; ++i) {
    loaded.session->run();
    progress.update("warm-up", i + 1);
  }
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    double t0 = now_ms();
    loaded.session->run();
    ms.push_back(now_ms() - t0);
    progress.update("run", warmup + i + 1);
  }
  progress.finish();
  LatencyStats lat = latency_stats(ms);
  double rss = peak_rss_mb();

  std::string shapes;
  const auto& ins = loaded.model->inputs();
  for (size_t i = 0; i < ins.size(); ++i)
    shapes += (shapes.empty() ? "" : " ") + ins[i].name + "=" + shape_str(loaded.input_shapes[i]);

  if (json) {
    JsonWriter w;
    w.begin_object();
    w.key("model").value(margs.model_path);
    w.key("inputs").begin_object();
    for (size_t i = 0; i < ins.size(); ++i) w.key(ins[i].name).int_array(loaded.input_shapes[i]);
    w.end_object();
    w.key("threads").value(threads);
    w.key("spin_microseconds").value(loaded.model->options().spin_microseconds);  // -1: the engine's choice
    w.key("opt_level").value(margs.opt_level);
    w.key("runs").value(runs);
    w.key("warmup").value(warmup);
    w.key("load_ms").value(six_digits(loaded.load_ms));
    w.key("min_ms").value(six_digits(lat.min));
    w.key("median_ms").value(six_digits(lat.median));
    w.key("max_ms").value(six_digits(lat.max));
    w.key("mean_ms").value(six_digits(lat.mean));
    w.key("peak_rss_mb").value(six_digits(rss));
    w.key("times_ms").begin_array();  // every timed run, in order (bench/compare.py takes medians over rounds)
    for (double t : ms) w.value(six_digits(t));
    w.end_array();
    w.end_object();
    std::printf("%s\n", w.str().c_str());
  } else {
    std::printf("model:     %s\n", margs.model_path.c_str());
    std::printf("inputs:    %s\n", shapes.c_str());
    const int asked = loaded.model->options().threads;
    const std::string fewer = asked > threads ? " (of " + std::to_string(asked) +
                                                    " asked: the tuning cache measured this model faster on fewer)"
                                              : "";
    std::printf("threads:   %d%s   opt-level: %d   runs: %d after %d warm-up\n", threads, fewer.c_str(),
                margs.opt_level, runs, warmup);
    std::printf("load:      %.2f ms\n", loaded.load_ms);
    std::printf("latency:   min %.3f  median %.3f  mean %.3f  max %.3f ms\n", lat.min, lat.median, lat.mean, lat.max);
    std::printf("peak RSS:  %.1f MB\n", rss);
  }
  return 0;
}

}  // namespace ninegrid::cli
