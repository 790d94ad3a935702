// ninegrid profile: where the time goes. Runs the model with per-layer timing and reports, per layer, the
// op, fused epilogue, algorithm, shapes, median time and share, MACs, GFLOP/s, bytes moved, operational
// intensity and the fraction of this machine's measured peak (the roofline model of the Raspberry Pi
// paper §2). --html writes a self-contained page with the table and a log-log roofline chart.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "cli_common.h"
#include "commands.h"
#include "json_writer.h"
#include "machine_peak.h"

namespace ninegrid::cli {

namespace {

struct LayerProfile {
  std::string name, op, fused, algorithm, precision;
  std::vector<Shape> inputs, outputs;
  double median_ms = 0, min_ms = 0, max_ms = 0, share = 0;
  int64_t macs = 0;
  double bytes = 0;        // every input (weights included) read once, every output written once
  double gflops = 0, intensity = 0, peak_fraction = 0;
};

struct Profile {
  std::string model, isa;
  int threads = 1, runs = 0;
  double total_ms = 0, peak_gflops = 0, bandwidth_gbs = 0;
  // The median over runs of each run's summed layer times. The layers' medians, taken one layer at a time,
  // add up to less than a typical run whenever the slow moments of different runs fall on different
  // layers; this is the figure to hold against `ninegrid bench`.
  double run_median_ms = 0;
  std::vector<double> run_ms;  // each run's summed layer times, in run order
  std::vector<LayerProfile> layers;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "+") + p;
  return s;
}

Profile measure(const LoadedModel& loaded, int runs, int warmup) {
  Session& s = *loaded.session;
  s.set_profiling(true);
  for (int i = 0; i < warmup; ++i) s.run();
  std::vector<std::vector<double>> times;
  std::vector<double> run_sums;
  std::vector<StepProfile> steps;
  for (int r = 0; r < runs; ++r) {
    s.run();
    steps = s.profile();
    if (times.empty()) times.resize(steps.size());
    double sum = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      times[i].push_back(steps[i].time_ms);
      sum += steps[i].time_ms;
    }
    run_sums.push_back(sum);
  }
  Profile p;
  p.runs = runs;
  p.run_median_ms = median(run_sums);
  p.run_ms = run_sums;
  p.threads = s.threads();
  p.isa = loaded.model->isa();
  p.peak_gflops = measure_fma_peak_gflops(p.isa) * p.threads;
  p.bandwidth_gbs = measure_memory_bandwidth_gbs();
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepProfile& st = steps[i];
    LayerProfile l;
    l.name = st.name;
    l.op = st.op_type;
    l.fused = joined(st.fused);
    l.algorithm = st.algorithm;
    l.precision = st.precision;
    l.inputs = st.input_shapes;
    l.outputs = st.output_shapes;
    l.bytes = static_cast<double>(st.bytes);
    l.median_ms = median(times[i]);
    l.min_ms = *std::min_element(times[i].begin(), times[i].end());
    l.max_ms = *std::max_element(times[i].begin(), times[i].end());
    l.macs = st.macs;
    const double flops = 2.0 * l.macs;
    l.gflops = l.median_ms > 0 ? flops / (l.median_ms * 1e6) : 0;
    l.intensity = l.bytes > 0 ? flops / l.bytes : 0;
    l.peak_fraction = p.peak_gflops > 0 ? l.gflops / p.peak_gflops : 0;
    p.total_ms += l.median_ms;
    p.layers.push_back(std::move(l));
  }
  for (auto& l : p.layers) l.share = p.total_ms > 0 ? l.median_ms / p.total_ms : 0;
  return p;
}

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& sh : shapes) s += (s.empty() ? "" : " ") + shape_str(sh);
  return s;
}

void print_table(const Profile& p) {
  std::printf("model %s: %d threads, %s, median of %d runs; machine peak %.1f GFLOP/s, memory %.1f GB/s\n\n",
              p.model.c_str(), p.threads, p.isa.c_str(), p.runs, p.peak_gflops, p.bandwidth_gbs);
  size_t w = 4;
  for (const auto& l : p.layers) w = std::max(w, std::min<size_t>(l.name.size(), 40));
  std::printf("%4s  %-*s  %-11s %-14s %-18s %-5s %-22s %9s %6s %13s %8s %9s %6s %6s\n", "#", int(w), "name", "op",
              "fused", "algorithm", "prec", "output", "ms", "share", "MACs", "GFLOP/s", "MB", "F/B", "peak");
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    std::string name = l.name.size() > 40 ? "..." + l.name.substr(l.name.size() - 37) : l.name;
    std::printf("%4zu  %-*s  %-11s %-14s %-18s %-5s %-22s %9.3f %5.1f%% %13lld %8.2f %9.3f %6.2f %5.1f%%\n", i,
                int(w), name.c_str(), l.op.c_str(), l.fused.c_str(), l.algorithm.c_str(), l.precision.c_str(),
                shapes_text(l.outputs).c_str(),
                l.median_ms, 100 * l.share, static_cast<long long>(l.macs), l.gflops, l.bytes / 1e6, l.intensity,
                100 * l.peak_fraction);
  }
  std::printf("\ntotal %.3f ms (sum of layer medians); a whole run %.3f ms (median of the runs' sums)\n", p.total_ms,
              p.run_median_ms);
}

void write_json_data(JsonWriter& w, const Profile& p) {
  w.begin_object();
  w.key("model").value(p.model);
  w.key("isa").value(p.isa);
  w.key("threads").value(p.threads);
  w.key("runs").value(p.runs);
  w.key("total_ms").value(p.total_ms);
  w.key("run_median_ms").value(p.run_median_ms);
  w.key("run_ms").begin_array();
  for (double t : p.run_ms) w.value(t);
  w.end_array();
  w.key("peak_gflops").value(p.peak_gflops);
  w.key("bandwidth_gbs").value(p.bandwidth_gbs);
  w.key("layers").begin_array();
  for (const auto& l : p.layers) {
    w.begin_object();
    w.key("name").value(l.name);
    w.key("op").value(l.op);
    w.key("fused").value(l.fused);
    w.key("algorithm").value(l.algorithm);
    w.key("precision").value(l.precision);
    w.key("inputs").value(shapes_text(l.inputs));
    w.key("outputs").value(shapes_text(l.outputs));
    w.key("median_ms").value(l.median_ms);
    w.key("min_ms").value(l.min_ms);
    w.key("max_ms").value(l.max_ms);
    w.key("share").value(l.share);
    w.key("macs").value(l.macs);
    w.key("gflops").value(l.gflops);
    w.key("bytes").value(l.bytes);
    w.key("intensity").value(l.intensity);
    w.key("peak_fraction").value(l.peak_fraction);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// The page: data embedded as JSON; a small script builds the table and the SVG roofline when it loads.
const char* kHtmlHead = R"HTML(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>ninegrid profile</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td.l,th.l{text-align:left}th{background:#f3f3f3;position:sticky;top:0}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px}
svg text{font-size:11px}
</style></head><body>
<h1>ninegrid profile</h1><p id="summary"></p>
<svg id="roofline" width="760" height="480" xmlns="http://www.w3.org/2000/svg"></svg>
<div class="legend" id="legend"></div>
<h2>Layers</h2><table id="layers"><thead><tr><th>#</th><th class="l">name</th><th class="l">op</th><th class="l">fused</th>
<th class="l">algorithm</th><th class="l">input</th><th class="l">output</th><th>ms</th><th>share</th><th>MACs</th><th>GFLOP/s</th>
<th>bytes</th><th>FLOP/byte</th><th>of peak</th></tr></thead><tbody></tbody></table>
<script>
const data = )HTML";

const char* kHtmlTail = R"HTML(;
const palette = ["#1f77b4","#ff7f0e","#2ca02c","#d62728","#9467bd","#8c564b","#e377c2","#7f7f7f","#bcbd22","#17becf"];
const ops = [...new Set(data.layers.map(l => l.op))];
const color = op => palette[ops.indexOf(op) % palette.length];
document.getElementById("summary").textContent =
  `${data.model}: ${data.threads} thread(s), ${data.isa}, median of ${data.runs} runs, layers' medians ${data.total_ms.toFixed(3)} ms, ` +
  `a whole run ${data.run_median_ms.toFixed(3)} ms; ` +
  `measured peak ${data.peak_gflops.toFixed(1)} GFLOP/s, memory ${data.bandwidth_gbs.toFixed(1)} GB/s`;
const tbody = document.querySelector("#layers tbody");
data.layers.forEach((l, i) => {
  const tr = document.createElement("tr");
  tr.className = "layer";
  const cells = [i, l.name, l.op, l.fused, l.algorithm, l.inputs, l.outputs, l.median_ms.toFixed(3),
    (100 * l.share).toFixed(1) + "%", l.macs.toLocaleString(), l.gflops.toFixed(2), Math.round(l.bytes).toLocaleString(),
    l.intensity.toFixed(2), (100 * l.peak_fraction).toFixed(1) + "%"];
  cells.forEach((c, j) => { const td = document.createElement("td"); td.textContent = c; if (j >= 1 && j <= 6) td.className = "l"; tr.appendChild(td); });
  tbody.appendChild(tr);
});
const svg = document.getElementById("roofline"), NS = "http://www.w3.org/2000/svg";
const W = 760, H = 480, L = 60, R = 20, T = 20, B = 50;
const pts = data.layers.filter(l => l.macs > 0 && l.median_ms > 0);
const xmin = 0.01, xmax = 1000, ymax = Math.max(data.peak_gflops * 2, 1), ymin = ymax / 1e5;
const lx = v => L + (Math.log10(v) - Math.log10(xmin)) / (Math.log10(xmax) - Math.log10(xmin)) * (W - L - R);
const ly = v => H - B - (Math.log10(v) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin)) * (H - T - B);
function el(name, attrs, text) { const e = document.createElementNS(NS, name); for (const k in attrs) e.setAttribute(k, attrs[k]); if (text) e.textContent = text; svg.appendChild(e); return e; }
el("rect", {x: L, y: T, width: W - L - R, height: H - T - B, fill: "none", stroke: "#999"});
for (let e = -2; e <= 3; e++) { const x = lx(10 ** e); el("line", {x1: x, x2: x, y1: T, y2: H - B, stroke: "#eee"}); el("text", {x: x - 10, y: H - B + 16}, String(10 ** e)); }
for (let e = Math.ceil(Math.log10(ymin)); e <= Math.log10(ymax); e++) { const y = ly(10 ** e); el("line", {x1: L, x2: W - R, y1: y, y2: y, stroke: "#eee"}); el("text", {x: 8, y: y + 4}, String(10 ** e)); }
el("text", {x: W / 2 - 80, y: H - 10}, "operational intensity (FLOP/byte)");
el("text", {x: 4, y: 14}, "GFLOP/s");
// Roofs: memory bandwidth up to the ridge point, then the compute peak.
const ridge = data.peak_gflops / data.bandwidth_gbs;
el("line", {class: "roof", x1: lx(xmin), y1: ly(Math.max(xmin * data.bandwidth_gbs, ymin)), x2: lx(ridge), y2: ly(data.peak_gflops), stroke: "#444", "stroke-width": 2});
el("line", {class: "roof", x1: lx(ridge), y1: ly(data.peak_gflops), x2: lx(xmax), y2: ly(data.peak_gflops), stroke: "#444", "stroke-width": 2});
el("text", {x: lx(ridge) + 6, y: ly(data.peak_gflops) - 6}, `peak ${data.peak_gflops.toFixed(0)} GFLOP/s`);
el("text", {x: lx(0.02), y: ly(Math.max(0.02 * data.bandwidth_gbs, ymin)) - 8}, `${data.bandwidth_gbs.toFixed(0)} GB/s`);
pts.forEach(l => {
  const c = el("circle", {class: "point", cx: lx(Math.min(Math.max(l.intensity, xmin), xmax)), cy: ly(Math.max(l.gflops, ymin)), r: 4, fill: color(l.op), "fill-opacity": 0.8});
  const t = document.createElementNS(NS, "title"); t.textContent = `${l.name} (${l.op}): ${l.gflops.toFixed(2)} GFLOP/s at ${l.intensity.toFixed(2)} FLOP/byte`; c.appendChild(t);
});
document.getElementById("legend").innerHTML = ops.map(o => `<span><i style="background:${color(o)}"></i>${o}</span>`).join("");
document.body.setAttribute("data-points", String(pts.length));
</script></body></html>
)HTML";

void write_html(const std::string& path, const Profile& p) {
  JsonWriter w;
  write_json_data(w, p);
  std::string json = w.str();
  // "</" inside the JSON (e.g. a layer named "a</script>") would end the script element early.
  std::string safe;
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') safe += "<\\";
    else safe += json[i];
  }
  std::ofstream f(path);
  if (!f) throw Error("cannot write '" + path + "'");
  f << kHtmlHead << safe << kHtmlTail;
  if (!f) throw Error("failed writing '" + path + "'");
}

}  // namespace

int cmd_profile(int argc, char** argv) {
  ModelArgs margs;
  int runs = 10, warmup = 2;
  bool json = false;
  std::string html;
  ArgParser p("profile",
              "Per-layer time and roofline: op, fused ops, algorithm, shapes, median time and share, MACs,\n"
              "GFLOP/s, bytes moved, operational intensity and the fraction of this machine's measured peak.");
  add_model_options(p, margs);
  p.option_int("--runs", "R", "timed runs (each layer's median is reported)", &runs, 1, 100000);
  p.option_int("--warmup", "W", "untimed runs first", &warmup, 0, 100000);
  p.option("--html", "FILE", "also write a self-contained HTML page with the table and a roofline chart", &html);
  p.flag("--json", "print the profile as one JSON object instead of a table", &json);
  int exit_code;
  if (!p.parse(argc, argv, &exit_code)) return exit_code;

  std::vector<GivenInput> none;
  LoadedModel loaded = load_model(margs, none);
  std::vector<Tensor> keep = bind_inputs(loaded, none);
  Profile prof = measure(loaded, runs, warmup);
  prof.model = margs.model_path;
  if (json) {
    JsonWriter w;
    write_json_data(w, prof);
    std::printf("%s\n", w.str().c_str());
  } else {
    print_table(prof);
  }
  if (!html.empty()) {
    write_html(html, prof);
    if (!json) std::printf("wrote %s\n", html.c_str());
  }
  return 0;
}

}  // namespace ninegrid::cli
