/* The C API from C: load the RetinaFace ncnn model, run it on the astronaut photo, and compare one output
 * with the reference implementation's golden file; then check that errors come back as status codes with a
 * message. Prints "N passed, M failed" and exits non-zero on any failure.
 *
 *   c_api_test SHARED_DIR ASTRONAUT_PNG
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_image.h>

#include "ninegrid/ninegrid_c.h"

static int passed = 0, failed = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) {                                            \
      passed++;                                            \
    } else {                                               \
      failed++;                                            \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);          \
      printf(__VA_ARGS__);                                 \
      printf(" (last error: %s)\n", ng_last_error());      \
    }                                                      \
  } while (0)

/* Reads a little-endian float32 .npy (version 1) into a malloc'd buffer; returns the element count or -1. */
static long read_npy_f32(const char* path, float** out) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre + 1, "NUMPY", 5) != 0 || pre[6] != 1) {
    fclose(f);
    return -1;
  }
  unsigned hlen = pre[8] | (pre[9] << 8);
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f) - 10 - (long)hlen;
  fseek(f, 10 + (long)hlen, SEEK_SET);
  long n = bytes / 4;
  *out = malloc((size_t)bytes);
  if (!*out || fread(*out, 4, (size_t)n, f) != (size_t)n) n = -1;
  fclose(f);
  return n;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: c_api_test SHARED_DIR ASTRONAUT_PNG\n");
    return 2;
  }
  char param[4096], golden[4096];
  snprintf(param, sizeof param, "%s/models/mnet.25-opt.param", argv[1]);
  snprintf(golden, sizeof golden, "%s/models/mnet.25-golden/face_rpn_cls_prob_reshape_stride16.npy", argv[1]);

  int w, h, c;
  unsigned char* rgb = stbi_load(argv[2], &w, &h, &c, 3);
  CHECK(rgb != NULL, "cannot decode %s", argv[2]);
  if (!rgb) goto done;
  float* chw = malloc(sizeof(float) * 3 * (size_t)w * (size_t)h);
  for (int ch = 0; ch < 3; ++ch)
    for (int i = 0; i < w * h; ++i) chw[(size_t)ch * w * h + i] = (float)rgb[i * 3 + ch];

  ng_options* opts = NULL;
  CHECK(ng_options_create(&opts) == NG_OK, "options");
  CHECK(ng_options_set_threads(opts, 1) == NG_OK, "threads");
  ng_model* model = NULL;
  CHECK(ng_model_load(param, opts, &model) == NG_OK, "load %s", param);
  if (model) {
    CHECK(ng_model_input_count(model) == 1, "one input");
    CHECK(ng_model_output_count(model) == 9, "nine outputs, got %d", ng_model_output_count(model));
    CHECK(strcmp(ng_model_input_name(model, 0), "data") == 0, "input named data");
    CHECK(ng_model_input_name(model, 5) == NULL, "out-of-range input name is NULL");
    ng_session* s = NULL;
    CHECK(ng_session_create(model, &s) == NG_OK, "session");
    int64_t shape[4] = {1, 3, h, w};
    CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK, "set input");
    CHECK(ng_session_set_input(s, "nope", NG_FLOAT32, shape, 4, chw) == NG_ERROR, "unknown input is an error");
    CHECK(strstr(ng_last_error(), "nope") != NULL, "error names the input");
    CHECK(ng_session_run(s) == NG_OK, "run");
    const float* out = NULL;
    const int64_t* oshape = NULL;
    int rank = 0;
    ng_dtype dt;
    CHECK(ng_session_get_output(s, "face_rpn_cls_prob_reshape_stride16", &dt, (const void**)&out, &oshape, &rank) ==
              NG_OK, "get output");
    float* ref = NULL;
    long n = read_npy_f32(golden, &ref);
    CHECK(n > 0, "read golden %s", golden);
    if (out && n > 0) {
      long count = 1;
      for (int i = 0; i < rank; ++i) count *= oshape[i];
      CHECK(dt == NG_FLOAT32, "float output");
      CHECK(count == n, "element count %ld vs golden %ld", count, n);
      float worst = 0;
      for (long i = 0; i < n && count == n; ++i) {
        float d = fabsf(out[i] - ref[i]);
        if (d > worst) worst = d;
      }
      CHECK(worst <= 1e-4f, "max abs difference to golden %g", worst);
    }
    free(ref);
    ng_session_free(s);
    ng_model_free(model);
  }
  ng_options_free(opts);

  /* Errors come back as codes with a message, never a crash. */
  ng_model* bad = NULL;
  CHECK(ng_model_load("/nonexistent/model.onnx", NULL, &bad) == NG_ERROR && bad == NULL, "missing file is an error");
  CHECK(strstr(ng_last_error(), "/nonexistent/model.onnx") != NULL, "error names the file");
  CHECK(ng_model_load(NULL, NULL, &bad) == NG_INVALID_ARGUMENT, "NULL path is an invalid argument");
  CHECK(ng_session_run(NULL) == NG_INVALID_ARGUMENT, "NULL session is an invalid argument");
  free(chw);
  stbi_image_free(rgb);
done:
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
