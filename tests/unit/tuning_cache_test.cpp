// The tuning cache (runtime/tuning_cache.h) and its use at load time: what one write stores the next read
// returns; a file truncated anywhere, garbage, single-byte corruptions, another version's or another CPU's
// file are ignored whole with a warning and never crash; at load, the warning reaches Model::warnings(),
// a plan that does not fit its conv is ignored in favour of the rules', a fitting one is used, and a file
// can be named or switched off in Options.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/cpu_features.h"
#include "ninegrid/ninegrid.h"
#include "ops/conv_select.h"
#include "runtime/session_impl.h"
#include "runtime/tuning_cache.h"

namespace ninegrid {
namespace {

const char* kParam = NINEGRID_SHARED_DIR "/models/mnet.25-opt.param";

// A directory of this test's own, removed afterwards.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() / ("ninegrid-cache-test-" + std::to_string(::getpid()) + "-" +
                                                      std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
  static inline int counter_ = 0;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

ConvKey some_key(int64_t channels) {
  ConvKey k;
  k.p.in_channels = k.p.out_channels = channels;
  k.p.in_h = k.p.in_w = k.p.out_h = k.p.out_w = 28;
  k.p.kernel_h = k.p.kernel_w = 3;
  k.p.pad_top = k.p.pad_left = k.p.pad_bottom = k.p.pad_right = 1;
  k.activation = ActivationKind::Relu;
  k.in_block = k.out_block = 16;
  k.isa = Isa::Avx512;
  k.threads = 2;
  return k;
}

TuningCacheFile sample_file() {
  TuningCacheFile f;
  TuningEntries& e = f.cpus[cpu_identity()];
  ConvPlan plan;
  plan.kernel = ConvKernel::Winograd;
  plan.isa = Isa::Avx512;
  plan.in_block = plan.out_block = 16;
  plan.winograd_tile = 4;
  plan.split = ConvSplit::Tiles;
  e.convs[format_conv_key(some_key(64))] = TunedConv{plan, 812.5, 901.25};
  plan.kernel = ConvKernel::Direct;
  plan.winograd_tile = 0;
  plan.oc_tile = 1;
  plan.split = ConvSplit::Rows;
  e.convs[format_conv_key(some_key(32))] = TunedConv{plan, 100, 120};
  e.reorders[format_reorder_key(64, 784, 16, 8, 2)] = 5.5;
  e.layouts["0123456789abcdef"] = {{3, 16}, {7, 8}};
  e.threads["fedcba9876543210"] = 3;
  f.cpus["SomeOtherVendor|Other CPU|avx2|L1d 32K|L2 256K|L3 8192K"].reorders[format_reorder_key(8, 4, 8, 1, 1)] = 1;
  return f;
}

TEST(TuningCache, WhatIsWrittenIsReadBack) {
  TempDir dir;
  const std::string path = dir.file("sub/dir/tuning.cache");  // the directory is created
  write_tuning_cache(path, sample_file());
  std::string warning;
  const TuningCacheFile back = read_tuning_cache(path, &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(back.cpus.size(), 2u);
  const TuningEntries& e = back.cpus.at(cpu_identity());
  ASSERT_EQ(e.convs.size(), 2u);
  const TunedConv& w = e.convs.at(format_conv_key(some_key(64)));
  EXPECT_EQ(w.plan.kernel, ConvKernel::Winograd);
  EXPECT_EQ(w.plan.winograd_tile, 4);
  EXPECT_EQ(w.plan.split, ConvSplit::Tiles);
  EXPECT_DOUBLE_EQ(w.time_us, 812.5);
  EXPECT_DOUBLE_EQ(w.rule_time_us, 901.25);
  const TunedConv& d = e.convs.at(format_conv_key(some_key(32)));
  EXPECT_EQ(d.plan.oc_tile, 1);
  EXPECT_EQ(d.plan.split, ConvSplit::Rows);
  EXPECT_DOUBLE_EQ(e.reorders.at(format_reorder_key(64, 784, 16, 8, 2)), 5.5);
  ASSERT_EQ(e.layouts.count("0123456789abcdef"), 1u);
  EXPECT_EQ(e.layouts.at("0123456789abcdef").at(7), 8);
  ASSERT_EQ(e.threads.count("fedcba9876543210"), 1u);
  EXPECT_EQ(e.threads.at("fedcba9876543210"), 3);
  // This CPU's entries only; the other CPU's stay in the file.
  EXPECT_EQ(read_tuning_entries(path, &warning).convs.size(), 2u);
  EXPECT_EQ(warning, "");
}

TEST(TuningCache, AMissingFileIsNoError) {
  TempDir dir;
  std::string warning;
  EXPECT_TRUE(read_tuning_entries(dir.file("absent.cache"), &warning).empty());
  EXPECT_EQ(warning, "");
}

TEST(TuningCache, EveryTruncationIsIgnoredWithAWarning) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  write_tuning_cache(path, sample_file());
  const std::string text = read_text(path);
  // Every prefix that loses part of the last line ("end N\n" without its newline still reads as whole).
  const size_t whole = text.size() - 1;
  for (size_t n = 0; n < whole; ++n) {
    write_text(path, text.substr(0, n));
    std::string warning;
    const TuningCacheFile f = read_tuning_cache(path, &warning);
    EXPECT_TRUE(f.cpus.empty()) << "prefix of " << n << " bytes was accepted";
    EXPECT_NE(warning.find("ignored"), std::string::npos) << "prefix of " << n << " bytes: no warning";
  }
}

TEST(TuningCache, GarbageAndCorruptionsAreRejectedOrWellFormed) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  std::mt19937 rng(7);
  // Random bytes, random printable text, a binary file.
  for (int trial = 0; trial < 200; ++trial) {
    std::string junk(static_cast<size_t>(rng() % 600), '\0');
    for (char& c : junk) c = static_cast<char>(trial % 2 ? rng() % 256 : 32 + rng() % 95);
    if (trial % 3 == 0) junk = "ninegrid-tuning-cache 1\n" + junk;
    write_text(path, junk);
    std::string warning;
    const TuningCacheFile f = read_tuning_cache(path, &warning);
    EXPECT_TRUE(f.cpus.empty()) << "trial " << trial;
    EXPECT_FALSE(warning.empty()) << "trial " << trial;
  }
  // One byte of a valid file changed: either rejected, or every entry still parses to valid values (a
  // digit of a time changed, say); never a crash.
  write_tuning_cache(path, sample_file());
  const std::string text = read_text(path);
  int rejected = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bad = text;
    bad[rng() % bad.size()] = static_cast<char>(trial % 4 == 0 ? rng() % 256 : "0123456789 |-.x\n"[rng() % 16]);
    write_text(path, bad);
    std::string warning;
    const TuningCacheFile f = read_tuning_cache(path, &warning);
    if (f.cpus.empty()) {
      ++rejected;
      EXPECT_FALSE(warning.empty());
      continue;
    }
    for (const auto& [cpu, e] : f.cpus)
      for (const auto& [key, t] : e.convs) {
        ConvKey k;
        EXPECT_TRUE(parse_conv_key(key, &k)) << key;
        EXPECT_GT(t.time_us, 0);
        EXPECT_NE(t.plan.kernel, ConvKernel::Ref);
      }
  }
  EXPECT_GT(rejected, 200);
}

TEST(TuningCache, KeysAndPlansAreCheckedFieldByField) {
  ConvKey k;
  const std::string good = format_conv_key(some_key(64));
  ASSERT_TRUE(parse_conv_key(good, &k));
  EXPECT_EQ(k.p.in_channels, 64);
  // An output plane that does not follow from the rest, a zero stride, a block not dividing the channels,
  // an unknown activation, a trailing field: all refused.
  for (const std::string& bad : std::vector<std::string>{
           "1 64 64 1 28 28 27 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2",
        "1 64 64 1 28 28 28 28 3 3 0 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2",
        "1 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 12 avx512 2",
        "1 60 60 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2",
        "1 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Swish 0 16 16 avx512 2", good + " 9", "",
        "1 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 0"})
    EXPECT_FALSE(parse_conv_key(bad, &k)) << bad;
  ConvPlan p;
  EXPECT_TRUE(parse_conv_plan("winograd avx512 16 16 0 4 0 tiles", &p));
  for (const std::string& bad : std::vector<std::string>{"winograd avx512 16 16 0 5 0 tiles", "winograd avx513 16 16 0 4 0 tiles",
                                 "direct avx2 8 8 3 0 0 auto", "direct avx2 8 8 1 0 0 sideways",
                                 "direct avx2 7 8 1 0 0 auto", "direct avx2 8 8 1 0 0", "strassen avx2 8 8 0 0 2 auto"})
    EXPECT_FALSE(parse_conv_plan(bad, &p)) << bad;
  // int8 convs: the key ends in "int8" and the weights' rest class (-1 to 10), the plan may name an AVX2
  // form; both read back as written. Float keys and plans without them are still read (older files).
  ConvKey q = some_key(64);
  q.int8 = true;
  q.w7_rest_tenths = 3;
  const std::string qtext = format_conv_key(q);
  EXPECT_EQ(qtext, good + " int8 3");
  ASSERT_TRUE(parse_conv_key(qtext, &k));
  EXPECT_TRUE(k.int8);
  EXPECT_EQ(k.w7_rest_tenths, 3);
  EXPECT_EQ(format_conv_key(k), qtext);
  ASSERT_TRUE(parse_conv_key(good, &k));
  EXPECT_FALSE(k.int8);
  for (const std::string& bad : std::vector<std::string>{good + " int8", good + " int8 11", good + " int8 -2",
                                                         good + " int9 0", good + " int8 0 1", good + " int8 x"})
    EXPECT_FALSE(parse_conv_key(bad, &k)) << bad;
  ConvPlan qp;
  qp.kernel = ConvKernel::Pointwise;
  qp.isa = Isa::Avx2;
  qp.in_block = qp.out_block = 8;
  qp.split = ConvSplit::Rows;
  for (QConvForm f : {QConvForm::Bytes, QConvForm::Words, QConvForm::Wide}) {
    qp.int8_form = f;
    ASSERT_TRUE(parse_conv_plan(format_conv_plan(qp), &p)) << format_conv_plan(qp);
    EXPECT_EQ(p, qp);
  }
  EXPECT_EQ(format_conv_plan(qp), "pointwise avx2 8 8 0 0 0 rows wide");
  for (const std::string& bad : std::vector<std::string>{"pointwise avx2 8 8 0 0 0 rows none",
                                                         "pointwise avx2 8 8 0 0 0 rows dwords",
                                                         "pointwise avx2 8 8 0 0 0 rows wide 1"})
    EXPECT_FALSE(parse_conv_plan(bad, &p)) << bad;
}

TEST(TuningCache, EveryNumberIsAWholeWord) {
  // The fields are read word by word: a number with anything stuck to it, one past 64 bits, a word too few
  // or too many, are refused; tabs and repeated spaces still separate words (the file's canonical form,
  // single spaces, is what the reader's round-trip check then asks for).
  ConvKey k;
  const std::string good = format_conv_key(some_key(64));
  EXPECT_TRUE(parse_conv_key("\t" + good + "  ", &k));
  const size_t last = good.rfind(' ');
  for (const std::string& bad : std::vector<std::string>{
           "1x 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2",
           "1 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2.0",
           "99999999999999999999 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2",
           "+1 64 64 1 28 28 28 28 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2", good.substr(0, last),
           good + " int8 3 4", good + " int8 3x"})
    EXPECT_FALSE(parse_conv_key(bad, &k)) << bad;
  ConvPlan p;
  EXPECT_TRUE(parse_conv_plan("winograd\tavx512 16 16  0 4 0 tiles", &p));
  EXPECT_EQ(p.winograd_tile, 4);
  for (const std::string& bad : std::vector<std::string>{"winograd avx512 16 16 0 4x 0 tiles", "winograd avx512 16",
                                                         "winograd avx512 16 16 0 -4 0 tiles", ""})
    EXPECT_FALSE(parse_conv_plan(bad, &p)) << bad;
}

TEST(TuningCache, AnEntryNotAsTheWriterWritesItIsRefused) {
  // The reader checks an entry's spacing and numbers instead of formatting it back: a key or plan with two
  // spaces, a tab, or a number with a leading zero or a '+' would never match a lookup, so the file is
  // refused as any malformed file is.
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  write_tuning_cache(path, sample_file());
  const std::string text = read_text(path);
  const std::string key = format_conv_key(some_key(64));
  ASSERT_NE(text.find(key), std::string::npos);
  const std::string plan = "winograd avx512 16 16 0 4 0 tiles";
  ASSERT_NE(text.find(plan), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> edits{
      {key, "1  " + key.substr(2)}, {key, "1\t" + key.substr(2)}, {key, "01 " + key.substr(2)},
      {key, "+1 " + key.substr(2)}, {plan, "winograd avx512 16 16 0 04 0 tiles"},
      {plan, "winograd avx512 16 16 -0 4 0 tiles"}, {plan, "winograd avx512  16 16 0 4 0 tiles"}};
  for (const auto& [from, to] : edits) {
    std::string bad = text;
    bad.replace(bad.find(from), from.size(), to);
    write_text(path, bad);
    std::string warning;
    EXPECT_TRUE(read_tuning_cache(path, &warning).cpus.empty()) << to;
    EXPECT_NE(warning.find("malformed conv"), std::string::npos) << warning;
  }
  write_text(path, text);  // and the file as written is read
  std::string warning;
  EXPECT_EQ(read_tuning_entries(path, &warning).convs.size(), 2u);
  EXPECT_EQ(warning, "");
}

TEST(TuningCache, AnotherCpusFileIsIgnoredWithAWarning) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  TuningCacheFile f = sample_file();
  f.cpus.erase(cpu_identity());
  write_tuning_cache(path, f);
  std::string warning;
  EXPECT_TRUE(read_tuning_entries(path, &warning).empty());
  EXPECT_NE(warning.find("other CPUs"), std::string::npos) << warning;
  // Another version of the format.
  std::string text = read_text(path);
  text.replace(0, text.find('\n'), "ninegrid-tuning-cache 2");
  write_text(path, text);
  EXPECT_TRUE(read_tuning_entries(path, &warning).empty());
  EXPECT_NE(warning.find("not a ninegrid tuning cache"), std::string::npos) << warning;
}

// ---- At load time ----

// The steps of a planned session that run a vector conv: (key, plan, tuned).
struct ConvStep {
  ConvKey key;
  ConvPlan plan;
  bool tuned;
};
std::vector<ConvStep> conv_steps(Session& s) {
  std::vector<ConvStep> out;
  SessionImpl& impl = InternalAccess::impl(s);
  for (const PlanStep& st : impl.plan().steps)
    if (ConvTunable* c = st.op->conv_tunable()) out.push_back({c->key(), c->plan(), c->tuned()});
  return out;
}

Options mnet_options(const std::string& cache) {
  Options o;
  o.threads = 1;
  o.input_shapes["data"] = {1, 3, 96, 128};
  o.tuning_cache = cache;
  return o;
}

TEST(TuningCacheAtLoad, FittingPlansAreUsedAndOthersIgnored) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  std::vector<ConvStep> rules;
  {
    Options o = mnet_options(path);
    o.use_tuning_cache = false;
    auto m = Model::load(kParam, o);
    auto s = m->create_session();
    rules = conv_steps(*s);
  }
  ASSERT_GT(rules.size(), 10u);
  // For every conv, another of its candidates; for the first, a plan that cannot run it (Winograd on a
  // conv that is not 3x3 stride 1, or a 1x1 Strassen on one that is not 1x1): it must be ignored.
  TuningCacheFile f;
  TuningEntries& e = f.cpus[cpu_identity()];
  ExecSettings settings;
  settings.isa = hardware_isa();
  settings.threads = 1;
  std::map<std::string, ConvPlan> wanted;
  for (size_t i = 0; i < rules.size(); ++i) {
    const ConvKey& k = rules[i].key;
    const std::string text = format_conv_key(k);
    if (wanted.count(text)) continue;
    std::vector<ConvPlan> c = conv_plan_candidates(k.p, k.in_block, k.out_block, settings);
    ConvPlan pick = c[(i * 7 + 3) % c.size()];
    if (i == 0) {
      pick = rules[i].plan;
      pick.kernel = k.p.kernel_h == 3 ? ConvKernel::Strassen : ConvKernel::Winograd;
      pick.winograd_tile = pick.kernel == ConvKernel::Winograd ? 4 : 0;
      pick.oc_tile = 0;
      ASSERT_FALSE(conv_plan_fits(pick, k.p, settings));
    }
    wanted[text] = pick;
    e.convs[text] = TunedConv{pick, 1, 1};
  }
  write_tuning_cache(path, f);
  auto m = Model::load(kParam, mnet_options(path));
  EXPECT_TRUE(m->warnings().empty());
  auto s = m->create_session();
  const std::vector<ConvStep> got = conv_steps(*s);
  ASSERT_EQ(got.size(), rules.size());
  const std::string first = format_conv_key(rules[0].key);
  int tuned = 0;
  for (const ConvStep& c : got) {
    const std::string text = format_conv_key(c.key);
    if (text == first) {
      EXPECT_FALSE(c.tuned);
      EXPECT_EQ(c.plan, rules[0].plan) << "an unfit plan must leave the rules' in place";
      continue;
    }
    EXPECT_TRUE(c.tuned) << text;
    EXPECT_EQ(c.plan, wanted.at(text)) << text;
    tuned += c.tuned;
  }
  EXPECT_GT(tuned, 10);
  // The profile says which plans came from the cache.
  s->run({{"data", Tensor::zeros(DataType::Float32, {1, 3, 96, 128})}});
  int profiled_tuned = 0;
  for (const StepProfile& p : s->profile()) profiled_tuned += p.tuned;
  EXPECT_EQ(profiled_tuned, tuned);
  // Switched off, or pointed elsewhere: the rules.
  Options off = mnet_options(path);
  off.use_tuning_cache = false;
  auto m2 = Model::load(kParam, off);
  auto s2 = m2->create_session();
  for (const ConvStep& c : conv_steps(*s2)) EXPECT_FALSE(c.tuned);
}

TEST(TuningCacheAtLoad, ACorruptFileWarnsAndLeavesTheRules) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  write_text(path, "ninegrid-tuning-cache 1\ncpu " + cpu_identity() + "\nconv 1 2 3\nend 2\n");
  auto m = Model::load(kParam, mnet_options(path));
  ASSERT_EQ(m->warnings().size(), 1u);
  EXPECT_NE(m->warnings()[0].find(path), std::string::npos) << m->warnings()[0];
  EXPECT_NE(m->warnings()[0].find("ignored"), std::string::npos) << m->warnings()[0];
  auto s = m->create_session();
  for (const ConvStep& c : conv_steps(*s)) EXPECT_FALSE(c.tuned);
}

TEST(TuningCache, ThreadsEntriesAreChecked) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  const std::string head = "ninegrid-tuning-cache 1\ncpu " + cpu_identity() + "\n";
  write_text(path, head + "threads 0123456789abcdef | 2\nend 2\n");
  std::string warning;
  EXPECT_EQ(read_tuning_entries(path, &warning).threads.at("0123456789abcdef"), 2);
  EXPECT_EQ(warning, "");
  for (const std::string& bad : {"threads 0123456789abcdef | 0", "threads 0123456789abcdef | 1025",
                                 "threads 0123456789abcdef | -1", "threads 0123456789abcdef | 1.5",
                                 "threads 0123456789abcdef | 2 3", "threads 0123456789abcdef", "threads xyz | 2",
                                 "threads 0123456789abcdef | "}) {
    write_text(path, head + bad + "\nend 2\n");
    warning.clear();
    EXPECT_TRUE(read_tuning_cache(path, &warning).cpus.empty()) << bad;
    EXPECT_NE(warning.find("ignored"), std::string::npos) << bad;
  }
}

// A threads entry for the model (its fingerprint at the threads asked for) runs its sessions on fewer;
// never on more than asked; not when asking for another count or with the cache off. The fewer-thread
// session computes exactly what a load asking for that count does.
TEST(TuningCacheAtLoad, AThreadsEntryRunsTheModelOnFewerThreads) {
  TempDir dir;
  const std::string path = dir.file("tuning.cache");
  Options two = mnet_options(path);
  two.threads = 2;
  const std::string fingerprint = InternalAccess::impl(*Model::load(kParam, two)).thread_fingerprint();
  ASSERT_EQ(fingerprint.size(), 16u);
  Options three = two;
  three.threads = 3;
  EXPECT_NE(InternalAccess::impl(*Model::load(kParam, three)).thread_fingerprint(), fingerprint);

  auto with_entry = [&](int threads) {
    TuningCacheFile f;
    f.cpus[cpu_identity()].threads[fingerprint] = threads;
    write_tuning_cache(path, f);
  };
  const Tensor x = [] {
    Tensor t = Tensor::zeros(DataType::Float32, {1, 3, 96, 128});
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    float* p = t.data_as<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
    return t;
  }();
  auto outputs = [&](const Model& m) {
    auto s = m.create_session();
    EXPECT_EQ(s->threads(), m.threads());
    std::map<std::string, Tensor> out = s->run({{"data", x}});
    std::vector<std::vector<float>> v;
    for (auto& [name, t] : out) v.emplace_back(t.data_as<float>(), t.data_as<float>() + t.numel());
    return v;
  };

  with_entry(1);
  auto capped = Model::load(kParam, two);
  EXPECT_TRUE(capped->warnings().empty());
  EXPECT_EQ(capped->threads(), 1);
  Options one = two;
  one.threads = 1;
  EXPECT_EQ(outputs(*capped), outputs(*Model::load(kParam, one)));
  EXPECT_EQ(Model::load(kParam, three)->threads(), 3);
  Options off = two;
  off.use_tuning_cache = false;
  EXPECT_EQ(Model::load(kParam, off)->threads(), 2);
  with_entry(8);  // more than asked: the count asked for
  EXPECT_EQ(Model::load(kParam, two)->threads(), 2);
}

TEST(TuningCacheAtLoad, TheDefaultFileIsUnderXdgCacheHome) {
  TempDir dir;
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string old = saved ? saved : "";
  ::setenv("XDG_CACHE_HOME", dir.file("xdg").c_str(), 1);
  EXPECT_EQ(default_tuning_cache_path(), dir.file("xdg") + "/ninegrid/tuning.cache");
  // A corrupt default file is found (and ignored with a warning) with no file named in the options.
  std::filesystem::create_directories(dir.file("xdg") + "/ninegrid");
  write_text(dir.file("xdg") + "/ninegrid/tuning.cache", "garbage");
  auto m = Model::load(kParam, mnet_options(""));
  EXPECT_EQ(m->warnings().size(), 1u);
  ::setenv("XDG_CACHE_HOME", "relative/path", 1);  // invalid by the XDG spec: HOME's .cache instead
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') {
    EXPECT_EQ(default_tuning_cache_path(), std::string(home) + "/.cache/ninegrid/tuning.cache");
  }
  ::setenv("XDG_CACHE_HOME", old.c_str(), 1);
}

}  // namespace
}  // namespace ninegrid
