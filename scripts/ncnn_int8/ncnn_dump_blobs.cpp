// Runs an ncnn model (here: int8, as ncnn2int8 writes it) with ncnn's own library on one input and writes
// the named blobs as .npy: float blobs as float32, int8 blobs (an int8 layer's requantised output) as int8.
// Built and run by scripts/make_ncnn_int8_golden.sh against a built ncnn; not part of ninegrid's build.
//   ncnn_dump_blobs MODEL.param MODEL.bin INPUT.npy(float32 1xCxHxW) INPUT_BLOB OUT_DIR BLOB...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "net.h"

namespace {

std::vector<float> read_npy(const char* path, std::vector<int>& shape) {
  std::ifstream f(path, std::ios::binary);
  char magic[8];
  uint16_t header_len = 0;
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY\x01", 7) != 0 ||
      !f.read(reinterpret_cast<char*>(&header_len), 2)) {
    std::fprintf(stderr, "%s: not a version 1 .npy\n", path);
    std::exit(1);
  }
  std::string header(header_len, ' ');
  f.read(&header[0], header_len);
  if (header.find("'<f4'") == std::string::npos) {
    std::fprintf(stderr, "%s: float32 expected\n", path);
    std::exit(1);
  }
  const size_t a = header.find('(') + 1, b = header.find(')');
  const std::string dims = header.substr(a, b - a);
  size_t n = 1;
  for (size_t p = 0; p < dims.size();) {
    size_t q = dims.find(',', p);
    if (q == std::string::npos) q = dims.size();
    const std::string t = dims.substr(p, q - p);
    if (t.find_first_of("0123456789") != std::string::npos) {
      shape.push_back(std::atoi(t.c_str()));
      n *= static_cast<size_t>(shape.back());
    }
    p = q + 1;
  }
  std::vector<float> v(n);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * 4));
  return v;
}

// m has elempack 1: (c, h, w) with a channel step.
void write_npy(const std::string& path, const ncnn::Mat& m, bool int8) {
  const std::string shape = "(1, " + std::to_string(m.c) + ", " + std::to_string(m.h) + ", " + std::to_string(m.w) + ")";
  std::string header = std::string("{'descr': '") + (int8 ? "|i1" : "<f4") + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t header_len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&header_len), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  const size_t plane = static_cast<size_t>(m.w) * m.h * (int8 ? 1 : 4);
  for (int c = 0; c < m.c; ++c) f.write(static_cast<const char*>(m.channel(c).data), static_cast<std::streamsize>(plane));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: ncnn_dump_blobs MODEL.param MODEL.bin INPUT.npy INPUT_BLOB OUT_DIR BLOB...\n");
    return 2;
  }
  std::vector<int> shape;
  const std::vector<float> x = read_npy(argv[3], shape);
  if (shape.size() != 4 || shape[0] != 1) {
    std::fprintf(stderr, "%s: 1xCxHxW expected\n", argv[3]);
    return 1;
  }
  const int c = shape[1], h = shape[2], w = shape[3];
  ncnn::Mat in(w, h, c);
  for (int k = 0; k < c; ++k)
    std::memcpy(in.channel(k).data, x.data() + static_cast<size_t>(k) * h * w, sizeof(float) * h * w);

  ncnn::Net net;
  net.opt.lightmode = false;  // keep every intermediate blob for extraction
  net.opt.num_threads = 1;
  net.opt.use_int8_inference = true;
  net.opt.use_vulkan_compute = false;
  if (net.load_param(argv[1]) || net.load_model(argv[2])) {
    std::fprintf(stderr, "cannot load %s / %s\n", argv[1], argv[2]);
    return 1;
  }
  ncnn::Extractor ex = net.create_extractor();
  ex.input(argv[4], in);
  for (int i = 6; i < argc; ++i) {
    // Type 1 leaves the blob as the layer stored it (extract's default casts int8 to float); an int8 blob is
    // unpacked here, any other is taken as extract converts it (unpacked float32).
    ncnn::Mat stored, flat;
    if (ex.extract(argv[i], stored, 1) != 0) {
      std::fprintf(stderr, "cannot extract %s\n", argv[i]);
      return 1;
    }
    const bool int8 = stored.elembits() == 8;
    if (int8) ncnn::convert_packing(stored, flat, 1);
    else if (ex.extract(argv[i], flat) != 0) return 1;
    write_npy(std::string(argv[5]) + "/" + argv[i] + ".npy", flat, int8);
  }
  return 0;
}
