// run_on_photo MODEL PHOTO OUT_DIR: feeds a photo to a model whose one input takes raw RGB pixels (0..255,
// 1x3xHxW, as RetinaFace-MobileNet0.25 from ../shared/models does) and writes every output to
// OUT_DIR/<output name>.npy. Only the installed public API: ninegrid.h, detect.h (image decoding), npy.h.
#include <cstdio>
#include <string>
#include <vector>

#include <ninegrid/detect.h>
#include <ninegrid/ninegrid.h>
#include <ninegrid/npy.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: run_on_photo MODEL PHOTO OUT_DIR\n");
    return 2;
  }
  try {
    std::printf("ninegrid %s (headers %s)\n", ninegrid::version(), NINEGRID_VERSION);
    ninegrid::Options options;
    options.threads = 1;
    auto model = ninegrid::Model::load(argv[1], options);
    auto session = model->create_session();

    const ninegrid::Image photo = ninegrid::load_image(argv[2]);  // interleaved RGB
    const size_t plane = static_cast<size_t>(photo.w) * photo.h;
    std::vector<float> chw(3 * plane);                             // planar, as the model wants it
    for (size_t c = 0; c < 3; ++c)
      for (size_t i = 0; i < plane; ++i) chw[c * plane + i] = photo.rgb[i * 3 + c];

    const std::string input = model->inputs().at(0).name;
    session->set_input(input, ninegrid::Tensor::wrap(ninegrid::DataType::Float32, {1, 3, photo.h, photo.w}, chw.data()));
    session->run();
    for (const ninegrid::ValueInfo& info : model->outputs()) {
      const std::string& name = info.name;
      const ninegrid::Tensor out = session->output(name);
      ninegrid::write_npy(std::string(argv[3]) + "/" + name + ".npy", out);
      std::printf("%s: %zu values\n", name.c_str(), static_cast<size_t>(out.numel()));
    }
  } catch (const ninegrid::Error& e) {
    std::fprintf(stderr, "run_on_photo: %s\n", e.what());
    return 1;
  }
  return 0;
}
