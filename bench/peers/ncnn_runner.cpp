// Times an ncnn model (fp32 or int8, .param + .bin) the way bench/ort_runner.js times ONNX Runtime, for
// bench/compare.py --peers ncnn; or saves its outputs as .npy for the conversion check.
//
//   ncnn_runner MODEL.param MODEL.bin [--threads T] [--runs R] [--warmup W] [--shape NAME=1x3x640x640]
//               [--input NAME=FILE.npy] [--save-outputs DIR] [--json] [--fp16]
//
// The library is set up as ncnn's own benchncnn sets it up (pool allocators, light mode, Winograd and sgemm
// convolution, packing layout, int8 inference, all cores, no dynamic OpenMP), except that fp16/bf16 storage
// stays off unless --fp16 is given: the fp32 comparison is fp32 on every side. Load time is load_param plus
// load_model (ncnn transforms and packs weights there); a timed run is one Extractor that takes the input and
// extracts every output blob (unpacked to plain layout, as extract() returns it).
//
// Shapes are ONNX's, batch 1 first (1xCxHxW); ncnn drops the batch and stores the rest as c, (d,) h, w. An
// input without --shape or --input takes the shape its Input layer declares in the .param.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cpu.h"
#include "net.h"
#include "runner_common.h"

namespace {

// ONNX dims (batch first) -> an ncnn Mat of that shape.
ncnn::Mat make_mat(const std::vector<int>& onnx_dims) {
  std::vector<int> d = onnx_dims;
  if (d.size() >= 2 && d[0] == 1) d.erase(d.begin());
  switch (d.size()) {
    case 1: return ncnn::Mat(d[0]);
    case 2: return ncnn::Mat(d[1], d[0]);
    case 3: return ncnn::Mat(d[2], d[1], d[0]);
    case 4: return ncnn::Mat(d[3], d[2], d[1], d[0]);
    default: throw std::runtime_error("ncnn takes inputs of 1 to 4 dimensions after the batch");
  }
}

// The plain (c, d, h, w) elements of a Mat, without the channel-stride padding.
std::vector<float> mat_values(const ncnn::Mat& m, std::vector<int>* shape) {
  const int per_channel = m.w * m.h * m.d;
  std::vector<float> v(static_cast<size_t>(per_channel) * m.c);
  for (int q = 0; q < m.c; ++q) {
    if (m.elembits() == 32) {
      const float* p = m.channel(q);
      std::copy(p, p + per_channel, v.begin() + static_cast<long>(q) * per_channel);
    } else if (m.elembits() == 8) {  // a requantised int8 blob: its integer values
      const signed char* p = m.channel(q);
      for (int k = 0; k < per_channel; ++k) v[static_cast<size_t>(q) * per_channel + k] = p[k];
    } else {
      throw std::runtime_error("output with " + std::to_string(m.elembits()) + "-bit elements");
    }
  }
  *shape = {1};
  if (m.dims == 4) *shape = {1, m.c, m.d, m.h, m.w};
  if (m.dims == 3) *shape = {1, m.c, m.h, m.w};
  if (m.dims == 2) *shape = {1, m.h, m.w};
  if (m.dims == 1) *shape = {1, m.w};
  return v;
}

// The shape each Input layer of a .param declares (0=w 1=h 11=d 2=c), as ONNX dims with batch 1; empty when
// it declares none.
std::map<std::string, std::vector<int>> declared_input_shapes(const std::string& param_path) {
  std::map<std::string, std::vector<int>> out;
  std::ifstream f(param_path);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string type, name;
    int nb = 0, nt = 0;
    if (!(ls >> type >> name >> nb >> nt) || type != "Input" || nt < 1) continue;
    std::string top, kv;
    for (int i = 0; i < nb; ++i) ls >> kv;
    ls >> top;
    for (int i = 1; i < nt; ++i) ls >> kv;
    int w = 0, h = 0, d = 0, c = 0;
    while (ls >> kv) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const int key = std::atoi(kv.substr(0, eq).c_str()), value = std::atoi(kv.substr(eq + 1).c_str());
      if (key == 0) w = value;
      if (key == 1) h = value;
      if (key == 11) d = value;
      if (key == 2) c = value;
    }
    std::vector<int> dims{1};
    for (int v : {c, d, h, w})
      if (v > 0) dims.push_back(v);
    if (dims.size() > 1) out[top] = dims;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const peer::Args a = peer::parse_args(argc, argv, {"--fp16"});
    if (a.model.size() != 2) throw std::runtime_error("usage: ncnn_runner MODEL.param MODEL.bin [options] (see the source)");

    static ncnn::UnlockedPoolAllocator blob_pool;
    static ncnn::PoolAllocator workspace_pool;
    blob_pool.set_size_compare_ratio(0.f);
    workspace_pool.set_size_compare_ratio(0.f);
    ncnn::set_cpu_powersave(0);
    ncnn::set_omp_dynamic(0);
    ncnn::set_omp_num_threads(a.threads);

    ncnn::Net net;
    net.opt.lightmode = true;
    net.opt.num_threads = a.threads;
    net.opt.blob_allocator = &blob_pool;
    net.opt.workspace_allocator = &workspace_pool;
    net.opt.use_vulkan_compute = false;
    net.opt.use_winograd_convolution = true;
    net.opt.use_sgemm_convolution = true;
    net.opt.use_int8_inference = true;
    net.opt.use_packing_layout = true;
    const bool fp16 = peer::has_flag(a, "--fp16");
    net.opt.use_fp16_packed = fp16;
    net.opt.use_fp16_storage = fp16;
    net.opt.use_fp16_arithmetic = fp16;
    net.opt.use_bf16_storage = false;
    net.opt.use_bf16_packed = false;

    const double t0 = peer::now_ms();
    if (net.load_param(a.model[0].c_str()) != 0) throw std::runtime_error("ncnn cannot load " + a.model[0]);
    if (net.load_model(a.model[1].c_str()) != 0) throw std::runtime_error("ncnn cannot load " + a.model[1]);
    const double load_ms = peer::now_ms() - t0;

    const auto declared = declared_input_shapes(a.model[0]);
    std::vector<std::pair<std::string, ncnn::Mat>> inputs;
    for (const char* name : net.input_names()) {
      ncnn::Mat m;
      auto given = peer::find_tensor(a.inputs, name);
      if (given != a.inputs.end()) {
        peer::Npy n = peer::read_npy(given->second);
        m = make_mat(n.shape);
        const size_t per_channel = static_cast<size_t>(m.w) * m.h * m.d;
        if (per_channel * m.c != n.data.size()) throw std::runtime_error("input " + std::string(name) + ": size");
        for (int q = 0; q < m.c; ++q)
          std::copy(n.data.begin() + static_cast<long>(q * per_channel),
                    n.data.begin() + static_cast<long>((q + 1) * per_channel), static_cast<float*>(m.channel(q)));
      } else {
        auto shape = peer::find_tensor(a.shapes, name);
        auto decl = declared.find(name);
        if (shape == a.shapes.end() && decl == declared.end())
          throw std::runtime_error(std::string("input ") + name + " needs --shape " + name + "=...");
        m = make_mat(shape != a.shapes.end() ? shape->second : decl->second);
        const size_t per_channel = static_cast<size_t>(m.w) * m.h * m.d;
        std::vector<float> v(per_channel * m.c);
        peer::fill_pattern(v.data(), v.size());
        for (int q = 0; q < m.c; ++q)
          std::copy(v.begin() + static_cast<long>(q * per_channel), v.begin() + static_cast<long>((q + 1) * per_channel),
                    static_cast<float*>(m.channel(q)));
      }
      inputs.emplace_back(name, m);
    }
    const std::vector<const char*> outputs = net.output_names();

    auto run = [&](bool save) {
      ncnn::Extractor ex = net.create_extractor();
      for (const auto& in : inputs) ex.input(in.first.c_str(), in.second);
      for (const char* name : outputs) {
        ncnn::Mat out;
        if (ex.extract(name, out) != 0) throw std::runtime_error(std::string("ncnn cannot compute ") + name);
        if (save) {
          std::vector<int> shape;
          std::vector<float> v = mat_values(out, &shape);
          peer::write_npy(a.save + "/" + peer::file_name(name) + ".npy", shape, v.data());
        }
      }
    };
    if (!a.save.empty()) run(true);
    for (int i = 0; i < a.warmup; ++i) run(false);
    std::vector<double> times;
    for (int i = 0; i < a.runs; ++i) {
      const double s = peer::now_ms();
      run(false);
      times.push_back(peer::now_ms() - s);
    }
    peer::report("ncnn", a, load_ms, times);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncnn_runner: error: %s\n", e.what());
    return 1;
  }
}
