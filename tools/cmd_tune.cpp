// ninegrid tune: the schedule search (ninegrid/tune.h): times each distinct conv of a model under every
// candidate plan on this CPU, searches the channel blocks over the graph, confirms the result in the
// model, writes the tuning cache, and prints per distinct conv the rules' plan, the tuned plan and both
// times.
#include <cstdio>
#include <memory>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "json_writer.h"
#include "ninegrid/tune.h"
#include "progress.h"

namespace ninegrid::cli {

namespace {

std::string layers_label(const std::vector<std::string>& layers) {
  std::string s = layers.empty() ? "?" : layers.front();
  if (s.size() > 28) s = "..." + s.substr(s.size() - 25);
  if (layers.size() > 1) s += " +" + std::to_string(layers.size() - 1);
  return s;
}

void print_table(const TuneReport& r) {
  std::printf("%-34s %-34s %-30s %9s  %-30s %9s %6s\n", "layer", "conv", "rules' plan", "us", "tuned plan", "us",
              "gain");
  for (const TunedConvReport& c : r.convs) {
    if (c.tuned_plan.empty()) continue;  // not reached within the budget
    const double gain = c.tuned_us > 0 ? c.rule_us / c.tuned_us : 1.0;
    std::string note = c.from_cache ? " (cache)" : c.kept_rules ? " (rules kept: no gain in the model)" : "";
    std::printf("%-34s %-34s %-30s %9.1f  %-30s %9.1f %5.2fx%s\n", layers_label(c.layers).c_str(), c.conv.c_str(),
                c.rule_plan.c_str(), c.rule_us, c.tuned_plan.c_str(), c.tuned_us, gain, note.c_str());
  }
  std::printf("\n%d conv layers, %zu distinct: %d timed, %d from the cache%s; %.1f s\n", r.layers, r.convs.size(),
              r.timed, r.from_cache, r.budget_exhausted ? " (budget exhausted: the rest keep the rules' plans)" : "",
              r.seconds);
  if (r.layout_rule_us > 0)
    std::printf("global layout search: %d conv output blocks changed, estimated %.1f us -> %.1f us, %s\n",
                r.layout_changes, r.layout_rule_us, r.layout_tuned_us,
                r.layout_kept ? "kept" : "not kept (no faster in the model)");
  int changed = 0;
  for (const TunedConvReport& c : r.convs) changed += !c.tuned_plan.empty() && c.tuned_plan != c.rule_plan;
  std::printf("%d of %zu distinct convs run another plan than the rules'\n", changed, r.convs.size());
  std::printf("model latency (median of interleaved runs): rules %.3f ms, tuned %.3f ms (%.2fx)\n", r.rule_model_ms,
              r.tuned_model_ms, r.tuned_model_ms > 0 ? r.rule_model_ms / r.tuned_model_ms : 1.0);
  if (!r.model_ms_by_threads.empty()) {
    std::printf("model latency by threads (tuned, median of interleaved runs):");
    for (const auto& [t, ms] : r.model_ms_by_threads) std::printf(" %d: %.3f ms", t, ms);
    if (r.threads < r.threads_asked)
      std::printf("\n  sessions asking for %d threads will run this model on %d (faster there)\n", r.threads_asked,
                  r.threads);
    else
      std::printf("\n  sessions run this model on the %d threads asked for\n", r.threads_asked);
  }
  if (!r.cache_path.empty()) std::printf("tuning cache written: %s\n", r.cache_path.c_str());
}

void print_json(const TuneReport& r) {
  JsonWriter w;
  w.begin_object();
  w.key("layers").value(r.layers);
  w.key("timed").value(r.timed);
  w.key("from_cache").value(r.from_cache);
  w.key("budget_exhausted").value(r.budget_exhausted);
  w.key("seconds").value(r.seconds);
  w.key("rule_model_ms").value(r.rule_model_ms);
  w.key("tuned_model_ms").value(r.tuned_model_ms);
  w.key("layout_changes").value(r.layout_changes);
  w.key("layout_rule_us").value(r.layout_rule_us);
  w.key("layout_tuned_us").value(r.layout_tuned_us);
  w.key("layout_kept").value(r.layout_kept);
  w.key("threads_asked").value(r.threads_asked);
  w.key("threads").value(r.threads);
  w.key("model_ms_by_threads").begin_array();
  for (const auto& [t, ms] : r.model_ms_by_threads) {
    w.begin_object();
    w.key("threads").value(t);
    w.key("ms").value(ms);
    w.end_object();
  }
  w.end_array();
  w.key("cache").value(r.cache_path);
  w.key("convs").begin_array();
  for (const TunedConvReport& c : r.convs) {
    w.begin_object();
    w.key("layers").begin_array();
    for (const std::string& l : c.layers) w.value(l);
    w.end_array();
    w.key("conv").value(c.conv);
    w.key("rule_plan").value(c.rule_plan);
    w.key("rule_us").value(c.rule_us);
    w.key("tuned_plan").value(c.tuned_plan);
    w.key("tuned_us").value(c.tuned_us);
    w.key("candidates").value(c.candidates);
    w.key("from_cache").value(c.from_cache);
    w.key("kept_rules").value(c.kept_rules);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  std::printf("%s\n", w.str().c_str());
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  ModelArgs margs;
  std::string cache;
  int budget = 120;
  bool retime = false, no_layouts = false, dry_run = false, json = false;
  ArgParser p("tune",
              "Schedule search: time each distinct conv of the model under every candidate plan (algorithm,\n"
              "vector width, Winograd tile, register tile, Strassen depth, thread split; for the int8 convs of a\n"
              "quantised model their kernel family, AVX2 form and split) in place on this CPU, search the float\n"
              "convs' channel blocks over the graph, confirm in whole-model runs, and write the tuning cache\n"
              "that later loads (run, bench, profile, detect, the APIs) use on this CPU. Tune with the\n"
              "--threads (and --isa) the model will run with: plans are kept per thread count. With more\n"
              "than one thread it also times the whole model on fewer, and where fewer run it faster, loads\n"
              "asking for those threads run it on the fewer.");
  add_model_options(p, margs, ModelOptionSet{/*threads=*/true, /*opt_level=*/true, /*tuning_cache=*/false});
  p.option("--cache", "FILE", "the tuning cache to read and write", &cache, "$XDG_CACHE_HOME/ninegrid/tuning.cache");
  p.option_int("--budget", "SECONDS", "stop starting new measurements after this long", &budget, 1, 86400, "120");
  p.flag("--retime", "time every conv again, even those the cache holds", &retime);
  p.flag("--no-layout-search", "keep the rules' channel blocks (local search only)", &no_layouts);
  p.flag("--dry-run", "report only; write no cache", &dry_run);
  p.flag("--json", "print one JSON object instead of the table", &json);
  int exit_code;
  if (!p.parse(argc, argv, &exit_code)) return exit_code;

  // The input shapes as every other subcommand resolves them (--shape, a dynamic batch as 1).
  std::vector<GivenInput> none;
  ModelArgs resolve = margs;
  resolve.no_tuning_cache = true;
  LoadedModel loaded = load_model(resolve, none);
  TuneOptions o;
  o.model = options_from_args(margs);
  for (size_t i = 0; i < loaded.model->inputs().size(); ++i)
    o.model.input_shapes[loaded.model->inputs()[i].name] = loaded.input_shapes[i];
  loaded = LoadedModel();
  o.model.tuning_cache = cache;
  o.model.use_tuning_cache = !retime;
  o.budget_seconds = budget;
  o.search_layouts = !no_layouts;
  o.write_cache = !dry_run;
  std::unique_ptr<Progress> progress;
  o.progress = [&](int done, int total, const std::string& what) {
    if (!progress) progress = std::make_unique<Progress>(total, 0);
    std::string phase = "tuning " + what;
    if (phase.size() > 40) phase = phase.substr(0, 37) + "...";
    phase.resize(40, ' ');
    progress->update(phase.c_str(), done);
  };
  const TuneReport r = tune(margs.model_path, o);
  if (progress) progress->finish();
  for (const std::string& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (json)
    print_json(r);
  else
    print_table(r);
  return 0;
}

}  // namespace ninegrid::cli
