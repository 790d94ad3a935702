// The schedule search behind ninegrid::tune (include/ninegrid/tune.h).
//
// 1. Local search. The model is loaded with the rules alone and run once, so every tensor of a session
//    holds real data in its real layout. Convs are grouped by ConvKey (shape, epilogue, blocks, ISA cap,
//    threads); for each group not already in the cache, every candidate plan (ops/conv_select.h) is built
//    on the conv's weights and timed in place: on the session's own input, output and residual buffers,
//    with the session's thread pool. Candidates are timed in rounds, one run each per round in rotating
//    order, so drift on a shared machine hits them alike; a conv's time is its median over the rounds.
//    Two stages keep the count small: first every algorithm, ISA, tile and register tile with the
//    driver's own thread split, then every split of the two fastest. int8 convs (ng.QConv) are sites
//    too, with their own keys and candidates (ops/qconv_select.h) on their uint8 buffers.
// 2. Global search (layout_search.h; float convs only): the same timing for each conv under the other channel blocks its
//    neighbours could give it, the layout transforms' costs measured on the model's own tensor sizes,
//    and a dynamic programme over the graph choosing each conv's output block.
// 3. Confirmation in the model. A tuned plan must beat the rules' plan by a margin in isolation, and
//    again inside whole-model runs (interleaved rules / tuned sessions, per-layer profiles), where the
//    caches hold what the neighbouring layers left; otherwise the rules' plan is stored, so the next
//    load skips the conv without changing it. The searched layout is kept only if the whole model ran
//    faster with it.
// 4. The whole model's thread count (runtime/thread_choice.h). With the tuned cache, the model runs at
//    the threads asked for and at each halving of them down to one, in interleaved rounds; where fewer
//    threads ran it faster by the margin, the cache says so and loads asking for these threads run on the
//    fewer. The fewer-thread sessions use what the cache holds for their thread count (the rules where
//    `ninegrid tune --threads` never ran with it).
#include "ninegrid/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "graph/layout_search.h"
#include "graph/passes/passes.h"
#include "ops/conv_select.h"
#include "ops/qconv_select.h"
#include "ops/op.h"
#include "runtime/layout_choice.h"
#include "runtime/model_impl.h"
#include "runtime/session_impl.h"
#include "runtime/tuning_cache.h"

namespace ninegrid {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A tuned plan must be at least this much faster than the rules' (in isolation, and again in the model)
// to replace it: smaller differences are within the noise of a shared machine.
constexpr double kMinGain = 0.03;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Deterministic contents for input `index`: floats uniform in [0, 1), integers and booleans zero (a
// shape-driving integer input would need real values; such models cannot be tuned from shapes alone).
Tensor make_input(const ValueInfo& in, size_t index) {
  Tensor t = Tensor::zeros(in.dtype, in.shape);
  if (in.dtype == DataType::Float32) {
    uint32_t state = 12345u + 7919u * static_cast<uint32_t>(index);
    float* p = t.data_as<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      state = state * 1664525u + 1013904223u;
      p[i] = static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
    }
  }
  return t;
}

// One conv step of a session, with the buffers it reads and writes.
struct Site {
  ConvTunable* conv = nullptr;
  std::string node;
  // The op's buffers: floats for a Conv, bytes for an ng.QConv.
  const void* x = nullptr;
  void* y = nullptr;
  const void* residual = nullptr;
  size_t y_bytes = 0;
  std::vector<uint8_t> saved;  // an in-place residual's contents, restored before every run
};

struct Group {
  std::string key_text;
  ConvKey key;
  std::vector<size_t> sites;
  ConvPlan rules;
};

// Times `kernels` on the site: one warm-up run each, then rounds of one run each in rotating order until
// at least `min_rounds` are done and `seconds` have passed, or `max_rounds`. Returns each one's median in
// microseconds.
std::vector<double> time_kernels(Site& s, const std::vector<std::unique_ptr<ConvCandidate>>& kernels, ThreadPool* pool,
                                 int min_rounds, int max_rounds, double seconds) {
  const bool in_place = s.residual && s.residual == s.y;
  auto run = [&](const ConvCandidate& k) {
    if (in_place) std::memcpy(s.y, s.saved.data(), s.saved.size());
    const auto t0 = Clock::now();
    k.run(s.x, s.y, s.residual, pool);
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };
  for (const auto& k : kernels) run(*k);
  std::vector<std::vector<double>> samples(kernels.size());
  const auto t0 = Clock::now();
  for (int round = 0; round < max_rounds; ++round) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      const size_t k = (i + static_cast<size_t>(round)) % kernels.size();
      samples[k].push_back(run(*kernels[k]));
    }
    if (round + 1 >= min_rounds && seconds_since(t0) >= seconds) break;
  }
  if (in_place) std::memcpy(s.y, s.saved.data(), s.saved.size());
  std::vector<double> out;
  for (auto& v : samples) out.push_back(median(std::move(v)));
  return out;
}

// Builds each plan's kernel; a plan whose construction fails (it should not: every candidate fits) is
// dropped from both lists.
std::vector<std::unique_ptr<ConvCandidate>> build_all(const ConvTunable& conv, std::vector<ConvPlan>& plans) {
  std::vector<std::unique_ptr<ConvCandidate>> kernels;
  std::vector<ConvPlan> kept;
  for (const ConvPlan& p : plans) {
    try {
      kernels.push_back(conv.candidate(p));
      kept.push_back(p);
    } catch (const Error&) {
    }
  }
  plans = kept;
  return kernels;
}

std::string describe_conv(const ConvKey& k) {
  const Conv2dParams& p = k.p;
  std::string s = (k.int8 ? "int8 " : "") + std::to_string(p.in_channels) + "x" + std::to_string(p.in_h) + "x" + std::to_string(p.in_w) +
                  " -> " + std::to_string(p.out_channels) + ", " + std::to_string(p.kernel_h) + "x" +
                  std::to_string(p.kernel_w) + " s" + std::to_string(p.stride_h);
  if (p.dilation_h > 1) s += " d" + std::to_string(p.dilation_h);
  if (p.groups > 1) s += p.groups == p.in_channels ? " dw" : " g" + std::to_string(p.groups);
  if (k.activation != ActivationKind::None) s += std::string(" ") + activation_name(k.activation);
  if (k.residual) s += " +res";
  return s + ", " + std::to_string(k.in_block) + ">" + std::to_string(k.out_block);
}

// A loaded model and a planned session on deterministic inputs, run once.
struct Running {
  std::shared_ptr<Model> model;
  std::unique_ptr<Session> session;
  std::vector<Tensor> inputs;

  Running(const std::string& path, const Options& options) {
    {
      ModelLoadForTuning keep_weights;  // the session prepares its own convs, with their weights (build())
      model = Model::load(path, options);
    }
    session = model->create_session();
    for (size_t i = 0; i < model->inputs().size(); ++i) {
      const ValueInfo& in = model->inputs()[i];
      for (int64_t d : in.shape)
        if (d < 0)
          throw Error("input '" + in.name + "' has a dynamic shape " + shape_str(in.shape) +
                      ": give its shape to tune the model (--shape)");
      inputs.push_back(make_input(in, i));
    }
    run();
  }
  double run() {
    for (size_t i = 0; i < inputs.size(); ++i) session->set_input(model->inputs()[i].name, inputs[i]);
    const auto t0 = Clock::now();
    session->run();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }
  SessionImpl& impl() { return InternalAccess::impl(*session); }
};

// The conv steps of a session, with the buffers of its last run: valid until the session runs again
// (a run allocates the graph's outputs afresh and binds the inputs again).
std::vector<Site> find_sites(Running& r) {
  SessionImpl& s = r.impl();
  std::vector<Site> sites;
  const Graph& g = s.model().graph();
  for (const PlanStep& st : s.plan().steps) {
    ConvTunable* conv = st.op->conv_tunable();
    if (!conv) continue;
    Site site;
    site.conv = conv;
    site.node = g.nodes[st.node].name;
    const std::vector<Tensor>& t = s.tensors();
    site.x = t[st.inputs[0]].data();
    site.y = const_cast<void*>(t[st.outputs[0]].data());  // (the session's own arena)
    site.y_bytes = t[st.outputs[0]].nbytes();
    if (st.inputs.size() > 3 && st.inputs[3] >= 0) {
      site.residual = t[st.inputs[3]].data();
      if (site.residual == site.y) {
        const uint8_t* r = static_cast<const uint8_t*>(site.residual);
        site.saved.assign(r, r + site.y_bytes);
      }
    }
    sites.push_back(std::move(site));
  }
  return sites;
}

std::vector<Group> group_sites(const std::vector<Site>& sites) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < sites.size(); ++i) {
    const std::string text = format_conv_key(sites[i].conv->key());
    auto it = index.find(text);
    if (it == index.end()) {
      it = index.emplace(text, groups.size()).first;
      Group g;
      g.key_text = text;
      g.key = sites[i].conv->key();
      g.rules = sites[i].conv->plan();
      groups.push_back(g);
    }
    groups[it->second].sites.push_back(i);
  }
  return groups;
}

// The local search for one conv on one of its sites: the best plan and its time, the rules' time, and
// how many plans were timed.
struct LocalResult {
  ConvPlan best;
  double best_us = 0, rule_us = 0;
  int timed = 0;
};

LocalResult local_search(Site& site, const ConvKey& key, const ConvPlan& rules, const ExecSettings& settings,
                         ThreadPool* pool, double seconds) {
  LocalResult r;
  const std::vector<ConvPlan> all = key.int8 ? qconv_plan_candidates(key, settings)
                                             : conv_plan_candidates(key.p, key.in_block, key.out_block, settings);
  // Stage 1: each algorithm, ISA and tile with the driver's own split (and the rules' plan).
  std::vector<ConvPlan> first;
  for (const ConvPlan& p : all)
    if (p.split == ConvSplit::Auto || p == rules) first.push_back(p);
  std::vector<std::unique_ptr<ConvCandidate>> kernels = build_all(*site.conv, first);
  std::vector<double> times = time_kernels(site, kernels, pool, 5, 25, seconds * 0.6);
  kernels.clear();
  r.timed = static_cast<int>(first.size());
  std::vector<size_t> order(first.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return times[a] < times[b]; });
  // Stage 2: every split of the two fastest, timed again beside them and the rules' plan.
  std::vector<ConvPlan> second;
  auto same_but_split = [](ConvPlan a, ConvPlan b) {
    a.split = b.split = ConvSplit::Auto;
    return a == b;
  };
  for (size_t i = 0; i < order.size() && i < 2; ++i)
    for (const ConvPlan& p : all)
      if (same_but_split(p, first[order[i]]) && std::find(second.begin(), second.end(), p) == second.end())
        second.push_back(p);
  if (std::find(second.begin(), second.end(), rules) == second.end()) second.push_back(rules);
  if (second.size() > 1) {
    kernels = build_all(*site.conv, second);
    times = time_kernels(site, kernels, pool, 5, 25, seconds * 0.4);
    kernels.clear();
    r.timed += static_cast<int>(second.size());
  } else {
    std::vector<double> t;
    for (const ConvPlan& p : second) t.push_back(times[std::find(first.begin(), first.end(), p) - first.begin()]);
    times = t;
  }
  size_t best = 0, rule = 0;
  for (size_t i = 0; i < second.size(); ++i) {
    if (times[i] < times[best]) best = i;
    if (second[i] == rules) rule = i;
  }
  r.rule_us = times[rule];
  // Only a clear gain replaces the rules' plan.
  if (times[best] < times[rule] * (1 - kMinGain)) {
    r.best = second[best];
    r.best_us = times[best];
  } else {
    r.best = rules;
    r.best_us = times[rule];
  }
  return r;
}

// Time to transform a tensor of `shape` from one channel block to another: the ng.Reorder op the layout
// pass would insert, run on buffers of that size with the session's pool; median of several runs, in
// microseconds.
double time_transform(const Shape& shape, int64_t from, int64_t to, const ExecSettings& settings, ThreadPool* pool) {
  Node node;
  node.name = "layout_search_transform";
  node.op_type = "ng.Reorder";
  node.inputs = {0};
  node.outputs = {1};
  node.attrs.set("from_block", Attribute::of_int(from));
  node.attrs.set("to_block", Attribute::of_int(to));
  if (to > 1) node.attrs.set("ng.out_block", Attribute::of_int(to));
  std::unique_ptr<Op> op = OpRegistry::instance().create(node);
  std::vector<TensorDesc> in(1), out(1);
  in[0].dtype = DataType::Float32;
  in[0].shape = shape;
  op->infer(in, out);
  op->prepare(in, settings);
  Tensor x = Tensor::zeros(DataType::Float32, shape), y = Tensor::zeros(DataType::Float32, shape);
  OpContext ctx;
  ctx.inputs = {&x};
  ctx.outputs = {&y};
  ctx.pool = pool;
  std::vector<double> us;
  for (int i = 0; i < 12; ++i) {
    const auto t0 = Clock::now();
    op->run(ctx);
    if (i >= 3) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return median(us);
}

std::string temp_cache_path(const std::string& path) {
  return path + ".tuning" + std::to_string(static_cast<long long>(Clock::now().time_since_epoch().count() % 1000000));
}


struct BudgetExhausted {};

// The global search (see the top of this file): the layout problem of the pre-layout graph, conv costs
// for every (input block, output block) pair the programme asks for (from the cache, else timed in place
// on the conv's site with those blocks, and stored), transform costs timed on the values' shapes; the
// programme's choice is kept when it beats the rules' layout by a margin in its own estimate and then in
// whole-model runs.
void global_search(const std::string& model_path, const TuneOptions& options, Graph& prelayout,
                   const std::string& fingerprint, std::vector<Site>& sites, const ExecSettings& settings,
                   ThreadPool* pool, Clock::time_point t0, TuningCacheFile& file, TuneReport& report) {
  TuningEntries& mine = file.cpus[cpu_identity()];
  const int max_block = isa_block(settings.isa);
  LayoutProblem pb = layout_problem(prelayout, max_block);
  if (pb.nodes.empty()) return;
  // Float conv sites by node name (names the graph repeats are left to the rules).
  std::map<std::string, int> site_of;
  for (size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].conv->key().int8) continue;
    auto it = site_of.find(sites[i].node);
    if (it == site_of.end()) site_of[sites[i].node] = static_cast<int>(i);
    else it->second = -1;
  }
  int searchable = 0;
  for (LayoutProblem::Node& n : pb.nodes) {
    if (n.kind != LayoutProblem::Kind::Conv || n.tag < 0) continue;
    auto it = site_of.find(prelayout.nodes[static_cast<size_t>(n.tag)].name);
    if (it == site_of.end() || it->second < 0) {
      n.choices.resize(std::min<size_t>(n.choices.size(), 1));  // no site: the rules' block, cost unknown (0)
      continue;
    }
    if (n.choices.size() > 1) ++searchable;
    Site* site = &sites[static_cast<size_t>(it->second)];
    auto memo = std::make_shared<std::map<std::pair<int64_t, int64_t>, double>>();
    n.cost = [site, memo, &mine, &settings, pool, t0, &options](int64_t in, int64_t out) -> double {
      auto m = memo->find({in, out});
      if (m != memo->end()) return m->second;
      ConvKey key = site->conv->key();
      // A pair no vector kernel runs: far too slow to choose (the rules' own pair always has one).
      constexpr double kImpossible = 1e9;
      if (key.p.in_channels % in != 0 || key.p.out_channels % out != 0) return (*memo)[{in, out}] = kImpossible;
      key.in_block = in, key.out_block = out;
      const std::string text = format_conv_key(key);
      auto cached = mine.convs.find(text);
      double us;
      if (cached != mine.convs.end()) {
        us = cached->second.time_us;
      } else {
        if (seconds_since(t0) > options.budget_seconds * 0.9) throw BudgetExhausted();
        const ConvPlan rules = rule_conv_plan(key.p, in, out, settings);
        if (rules.kernel == ConvKernel::Ref) return (*memo)[{in, out}] = kImpossible;
        const LocalResult r = local_search(*site, key, rules, settings, pool, 0.02);
        mine.convs[text] = TunedConv{r.best, r.best_us, r.rule_us};
        us = r.best_us;
      }
      return (*memo)[{in, out}] = us;
    };
  }
  if (searchable == 0) return;
  auto transforms = std::make_shared<std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, double>>();
  pb.transform_cost = [&](int v, int64_t from, int64_t to) -> double {
    const Shape& shape = prelayout.values[static_cast<size_t>(v)].shape;
    const int64_t channels = shape.size() == 4 ? shape[1] : 0, plane = shape.size() == 4 ? shape[2] * shape[3] : 0;
    if (channels <= 0 || channels % from != 0 || channels % to != 0) return 0;
    const std::string key = format_reorder_key(channels, shape[0] * plane, from, to, settings.threads);
    auto cached = mine.reorders.find(key);
    if (cached != mine.reorders.end()) return cached->second;
    if (seconds_since(t0) > options.budget_seconds * 0.9) throw BudgetExhausted();
    const double us = std::max(0.01, time_transform(shape, from, to, settings, pool));
    mine.reorders[key] = us;
    return us;
  };
  const double rules_cost = layout_cost(pb, {});
  std::vector<int64_t> rule_blocks;
  layout_cost(pb, {}, &rule_blocks);
  const LayoutSolution best = solve_layout(pb, 64);
  report.layout_rule_us = rules_cost;
  report.layout_tuned_us = best.cost;
  std::map<int, int64_t> chosen;
  for (const LayoutProblem::Node& n : pb.nodes) {
    if (n.kind != LayoutProblem::Kind::Conv || n.tag < 0 || n.choices.size() < 2) continue;
    const int64_t b = best.block[static_cast<size_t>(n.output)];
    chosen[n.tag] = b;
    if (b != rule_blocks[static_cast<size_t>(n.output)]) ++report.layout_changes;
  }
  if (report.layout_changes == 0 || !(best.cost < rules_cost * (1 - kMinGain))) return;

  // Whole-model runs: the searched layout against the rules' layout, both with the tuned plans.
  mine.layouts[fingerprint] = chosen;
  const std::string trial_path = temp_cache_path(options.model.tuning_cache.empty() ? default_tuning_cache_path()
                                                                                     : options.model.tuning_cache);
  struct RemoveTrial {
    std::string path;
    ~RemoveTrial() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_trial{trial_path};
  Options with = options.model, without = options.model;
  with.tuning_cache = without.tuning_cache = trial_path;
  with.use_tuning_cache = without.use_tuning_cache = true;
  write_tuning_cache(trial_path, file);
  Running searched(model_path, with);
  TuningCacheFile no_layout = file;
  no_layout.cpus[cpu_identity()].layouts.erase(fingerprint);
  write_tuning_cache(trial_path, no_layout);
  Running local(model_path, without);
  std::vector<double> a, b;
  for (int round = 0; round < 9; ++round) {
    a.push_back(local.run());
    b.push_back(searched.run());
  }
  report.layout_kept = median(b) < median(a) * (1 - kMinGain / 2);
  if (!report.layout_kept) mine.layouts.erase(fingerprint);
}

}  // namespace

TuneReport tune(const std::string& model_path, const TuneOptions& options) {
  const auto t0 = Clock::now();
  TuneReport report;
  const std::string cache_path =
      options.model.tuning_cache.empty() ? default_tuning_cache_path() : options.model.tuning_cache;
  if (options.write_cache && cache_path.empty())
    throw Error("no tuning cache file: XDG_CACHE_HOME and HOME are both unset; give a file (--cache)");
  if (!(options.budget_seconds > 0)) throw Error("the tuning budget must be positive");
  std::string warning;
  TuningCacheFile file = read_tuning_cache(cache_path, &warning);
  if (!warning.empty()) report.warnings.push_back(warning + " (it will be replaced)");
  TuningEntries& mine = file.cpus[cpu_identity()];

  Options rules_options = options.model;
  rules_options.use_tuning_cache = false;
  std::unique_ptr<Running> rules_model;
  Graph prelayout;  // the graph as the layout pass sees it, for the global search
  std::string capture_fingerprint;
  bool captured = false;
  {
    LayoutCapture capture;
    rules_model = std::make_unique<Running>(model_path, rules_options);
    prelayout = std::move(capture.graph);
    capture_fingerprint = capture.fingerprint;
    captured = capture.captured;
  }
  Running& rules = *rules_model;
  const ExecSettings& settings = InternalAccess::impl(*rules.model).resolved().exec;
  // Measured again below: until then every session of this model runs on the threads asked for.
  const std::string model_key = InternalAccess::impl(*rules.model).thread_fingerprint();
  const int threads_asked = InternalAccess::impl(*rules.model).threads_asked();
  mine.threads.erase(model_key);
  report.threads_asked = report.threads = threads_asked;
  ThreadPool* pool = &rules.impl().pool();

  std::vector<Site> sites = find_sites(rules);
  std::vector<Group> groups = group_sites(sites);
  report.layers = static_cast<int>(sites.size());

  // ---- 1. Local search ----
  std::vector<size_t> to_time;
  for (size_t i = 0; i < groups.size(); ++i) {
    TunedConvReport c;
    for (size_t s : groups[i].sites) c.layers.push_back(sites[s].node);
    c.conv = describe_conv(groups[i].key);
    c.rule_plan = describe_plan(groups[i].rules);
    auto it = mine.convs.find(groups[i].key_text);
    if (options.model.use_tuning_cache && it != mine.convs.end()) {
      c.from_cache = true;
      c.tuned_plan = describe_plan(it->second.plan);
      c.tuned_us = it->second.time_us;
      c.rule_us = it->second.rule_time_us;
      ++report.from_cache;
    } else {
      to_time.push_back(i);
    }
    report.convs.push_back(c);
  }
  // Two fifths of the budget for the local search, shared by the convs in proportion to their MACs (the
  // large ones need the time, the small ones finish their minimum rounds anyway).
  double total_macs = 0;
  for (size_t i : to_time) total_macs += double(groups[i].key.p.macs());
  const int total_steps = static_cast<int>(to_time.size()) + 2;
  int done = 0;
  std::map<std::string, TunedConv> found;
  for (size_t i : to_time) {
    const Group& g = groups[i];
    if (options.progress) options.progress(done, total_steps, report.convs[i].layers.front());
    if (seconds_since(t0) > options.budget_seconds * 0.8) {
      report.budget_exhausted = true;
      break;
    }
    const double share = 0.4 * options.budget_seconds * double(g.key.p.macs()) / std::max(1.0, total_macs);
    const LocalResult r = local_search(sites[g.sites.front()], g.key, g.rules, settings, pool, share);
    TunedConvReport& c = report.convs[i];
    c.tuned_plan = describe_plan(r.best);
    c.tuned_us = r.best_us;
    c.rule_us = r.rule_us;
    c.candidates = r.timed;
    found[g.key_text] = TunedConv{r.best, r.best_us, r.rule_us};
    ++report.timed;
    ++done;
  }

  // ---- 3. Confirmation in the model ----
  for (const auto& [key, t] : found) mine.convs[key] = t;
  const std::string trial_path = temp_cache_path(cache_path.empty() ? "/tmp/ninegrid" : cache_path);
  struct RemoveTrial {
    std::string path;
    ~RemoveTrial() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_trial{trial_path};
  if (options.progress) options.progress(done, total_steps, "confirming in the model");
  {
    write_tuning_cache(trial_path, file);
    Options tuned_options = options.model;
    tuned_options.tuning_cache = trial_path;
    tuned_options.use_tuning_cache = true;
    Running tuned(model_path, tuned_options);
    const std::vector<StepProfile> a_steps = rules.session->profile(), b_steps = tuned.session->profile();
    bool aligned = a_steps.size() == b_steps.size();
    for (size_t i = 0; aligned && i < a_steps.size(); ++i) aligned = a_steps[i].name == b_steps[i].name;
    rules.session->set_profiling(true);
    tuned.session->set_profiling(true);
    // Per distinct conv, per round: the summed time of its layers in each session.
    std::map<std::string, std::vector<double>> a_us, b_us;
    std::map<std::string, std::string> key_of_node;
    for (const Group& g : groups)
      for (size_t s : g.sites) key_of_node[sites[s].node] = g.key_text;
    std::vector<double> a_ms, b_ms;
    const int rounds = 9;
    for (int round = 0; round < rounds; ++round) {
      a_ms.push_back(rules.run());
      b_ms.push_back(tuned.run());
      if (!aligned) continue;
      std::map<std::string, double> a_round, b_round;
      const std::vector<StepProfile> a = rules.session->profile(), b = tuned.session->profile();
      for (size_t i = 0; i < a.size(); ++i) {
        auto it = key_of_node.find(a[i].name);
        if (it == key_of_node.end()) continue;
        a_round[it->second] += a[i].time_ms * 1000;
        b_round[it->second] += b[i].time_ms * 1000;
      }
      for (const auto& [k, v] : a_round) a_us[k].push_back(v);
      for (const auto& [k, v] : b_round) b_us[k].push_back(v);
    }
    rules.session->set_profiling(false);
    tuned.session->set_profiling(false);
    for (size_t i : to_time) {
      const Group& g = groups[i];
      auto it = found.find(g.key_text);
      if (it == found.end() || it->second.plan == g.rules) continue;
      const double a = median(a_us[g.key_text]), b = median(b_us[g.key_text]);
      // No faster in the model (or not comparable): the rules' plan is what the cache keeps.
      if (!aligned || !(b < a * (1 - kMinGain))) {
        mine.convs[g.key_text] = TunedConv{g.rules, it->second.rule_time_us, it->second.rule_time_us};
        report.convs[i].kept_rules = true;
        report.convs[i].tuned_plan = describe_plan(g.rules);
        report.convs[i].tuned_us = it->second.rule_time_us;
      }
    }
  }
  ++done;

  // ---- 2. Global search over the convs' output blocks ----
  const int max_block = isa_block(settings.isa);
  if (options.search_layouts && captured && options.model.opt_level >= 2 && max_block >= 16 &&
      seconds_since(t0) < options.budget_seconds * 0.8) {
    if (options.progress) options.progress(done, total_steps, "searching the layout");
    // The confirmation's runs rebound the session's tensors: each run allocates the graph's outputs
    // afresh (a conv writing one had its old buffer freed) and binds the inputs again. Find the sites'
    // buffers again (the same steps in the same order).
    sites = find_sites(rules);
    try {
      global_search(model_path, options, prelayout, capture_fingerprint, sites, settings, pool, t0, file, report);
    } catch (const BudgetExhausted&) {
      report.budget_exhausted = true;
    } catch (const Error& e) {
      report.warnings.push_back(std::string("global layout search skipped: ") + e.what());
    }
  }

  // The final cache against the rules, interleaved whole-model runs.
  if (options.progress) options.progress(done, total_steps, "measuring the model");
  {
    write_tuning_cache(trial_path, file);
    Options tuned_options = options.model;
    tuned_options.tuning_cache = trial_path;
    tuned_options.use_tuning_cache = true;
    Running tuned(model_path, tuned_options);
    std::vector<double> a_ms, b_ms;
    for (int round = 0; round < 9; ++round) {
      a_ms.push_back(rules.run());
      b_ms.push_back(tuned.run());
    }
    report.rule_model_ms = median(a_ms);
    report.tuned_model_ms = median(b_ms);

    // ---- 4. The whole model's thread count ----
    if (threads_asked > 1) {
      if (options.progress) options.progress(done, total_steps, "timing the model on fewer threads");
      std::vector<std::unique_ptr<Running>> fewer;
      for (int t = threads_asked / 2; t >= 1; t /= 2) {
        Options o = tuned_options;
        o.threads = t;
        fewer.push_back(std::make_unique<Running>(model_path, o));
      }
      // Each session runs a block of consecutive runs per round, the first untimed: a model runs back to
      // back in use, with its own data in the caches and its workers awake. Alternating single runs of
      // sessions with different thread counts would time each with the other's data in the caches, which
      // costs the one on more cores most, enough to rank the counts wrongly (bench/REPORT.md). At least
      // 5 rounds, more for a fast model (up to two seconds of runs), so drift between rounds hits every
      // count alike.
      std::vector<Running*> sessions{&tuned};
      for (auto& f : fewer) sessions.push_back(f.get());
      std::vector<std::vector<double>> ms(sessions.size());
      const auto rounds_t0 = Clock::now();
      for (int round = 0; round < 25 && (round < 5 || seconds_since(rounds_t0) < 2.0); ++round)
        for (size_t i = 0; i < sessions.size(); ++i) {
          sessions[i]->run();
          for (int k = 0; k < 4; ++k) ms[i].push_back(sessions[i]->run());
        }
      const double asked_ms = median(ms[0]);
      report.model_ms_by_threads.push_back({threads_asked, asked_ms});
      int best = threads_asked;
      double best_ms = asked_ms;
      for (size_t i = 0; i < fewer.size(); ++i) {
        const double m = median(ms[i + 1]);
        report.model_ms_by_threads.push_back({fewer[i]->model->threads(), m});
        if (m < best_ms) {
          best = fewer[i]->model->threads();
          best_ms = m;
        }
      }
      if (best < threads_asked && best_ms < asked_ms * (1 - kMinGain)) {
        mine.threads[model_key] = best;
        report.threads = best;
      }
    }
  }
  ++done;
  if (options.progress) options.progress(done, total_steps, "done");

  if (options.write_cache) {
    write_tuning_cache(cache_path, file);
    report.cache_path = cache_path;
  }
  report.seconds = seconds_since(t0);
  return report;
}

}  // namespace ninegrid
