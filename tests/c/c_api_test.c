/* The C API from C: load the RetinaFace ncnn model, run it on the astronaut photo, and compare one output
 * with the reference implementation's golden file; then the documented lifetimes (inputs borrowed for one
 * run, outputs valid until the next run), argument checking, settings, profiling and loading from memory,
 * the input/output queries (dtype, shape, dynamic dimensions and their names) and runs of every element
 * type, and that errors come back as status codes with a message naming the call and what was wrong. Prints
 * "N passed, M failed" and exits non-zero on any failure.
 *
 *   c_api_test SHARED_DIR ASTRONAUT_PNG
 */
#include <math.h>
#include <pthread.h>
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

/* The whole file in a malloc'd buffer; returns its size or -1. */
static long read_file(const char* path, char** out) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  *out = malloc((size_t)n + 1);
  if (!*out || fread(*out, 1, (size_t)n, f) != (size_t)n) n = -1;
  fclose(f);
  return n;
}

static const char* const OUT16 = "face_rpn_cls_prob_reshape_stride16";

/* A copy of output `name` of the last run (malloc'd), its element count in *n; NULL on failure. */
static float* copy_output(ng_session* s, const char* name, long* n) {
  const float* out = NULL;
  const int64_t* shape = NULL;
  int rank = 0;
  if (ng_session_get_output(s, name, NULL, (const void**)&out, &shape, &rank) != NG_OK) return NULL;
  long count = 1;
  for (int i = 0; i < rank; ++i) count *= (long)shape[i];
  float* copy = malloc(sizeof(float) * (size_t)count);
  memcpy(copy, out, sizeof(float) * (size_t)count);
  *n = count;
  return copy;
}

/* Input data is borrowed for one run; outputs live until the next run. */
static void test_lifetimes(ng_model* model, const float* chw, int h, int w) {
  ng_session* s = NULL;
  CHECK(ng_session_create(model, &s) == NG_OK, "session");
  if (!s) return;
  int64_t shape[4] = {1, 3, h, w};
  size_t bytes = sizeof(float) * 3 * (size_t)h * (size_t)w;

  /* The input buffer is freed after the run it was set for: the next run must refuse to start, naming the
   * input, rather than read the freed buffer. Before the fix (03e1a76) the session kept the binding and the
   * second run read the freed 3 MB buffer: SIGSEGV, as its pages go back to the system. */
  float* buffer = malloc(bytes);
  memcpy(buffer, chw, bytes);
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, buffer) == NG_OK, "set input");
  CHECK(ng_session_run(s) == NG_OK, "first run");
  CHECK(strcmp(ng_last_error(), "") == 0, "no error message after a success: '%s'", ng_last_error());
  long n = 0;
  float* first = copy_output(s, OUT16, &n);
  CHECK(first != NULL, "output of the first run");
  free(buffer);
  CHECK(ng_session_run(s) == NG_ERROR, "a run without set_input since the last run is refused");
  CHECK(strstr(ng_last_error(), "'data'") != NULL && strstr(ng_last_error(), "not set") != NULL,
        "the error names the input that was not set");
  CHECK(strstr(ng_last_error(), "ng_session_run") != NULL, "the error names the call");

  /* After a failed run there are no outputs (not the last good run's, nor a half-computed one; before, the
   * session handed out whatever tensors its last attempt had bound). */
  const void* data = NULL;
  const int64_t* oshape = NULL;
  int rank = 0;
  CHECK(ng_session_get_output(s, OUT16, NULL, &data, &oshape, &rank) == NG_ERROR, "no outputs after a failed run");
  CHECK(strstr(ng_last_error(), OUT16) != NULL && strstr(ng_last_error(), "not available") != NULL,
        "the error names the output and says why");

  /* Set again, it runs again, to the same result. */
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK, "set input again");
  CHECK(ng_session_run(s) == NG_OK, "run after setting the input again");
  const float* out16 = NULL;
  CHECK(ng_session_get_output(s, OUT16, NULL, (const void**)&out16, &oshape, &rank) == NG_OK, "output");
  CHECK(first && out16 && memcmp(first, out16, sizeof(float) * (size_t)n) == 0, "same result as the first run");

  /* Output pointers stay valid until the next run: reading every other output, and the same output again,
   * leaves them in place and unchanged. */
  for (int i = 0; i < ng_model_output_count(model); ++i) {
    const void* d = NULL;
    const int64_t* sh = NULL;
    int r = 0;
    CHECK(ng_session_get_output(s, ng_model_output_name(model, i), NULL, &d, &sh, &r) == NG_OK, "output %d", i);
  }
  const float* again = NULL;
  CHECK(ng_session_get_output(s, OUT16, NULL, (const void**)&again, &oshape, &rank) == NG_OK, "output again");
  CHECK(again == out16, "the same output is the same buffer until the next run");
  CHECK(first && memcmp(first, out16, sizeof(float) * (size_t)n) == 0, "still unchanged");
  CHECK(rank == 4 && oshape[0] == 1, "its shape is still readable");
  free(first);
  ng_session_free(s);
}

/* NULL pointers and impossible values are refused with a message naming the call and the input, never an
 * "internal error", never a crash. */
static void test_arguments(ng_model* model, const float* chw, int h, int w) {
  ng_session* s = NULL;
  CHECK(ng_session_create(NULL, &s) == NG_INVALID_ARGUMENT && s == NULL, "NULL model");
  CHECK(ng_session_create(model, NULL) == NG_INVALID_ARGUMENT, "NULL out");
  CHECK(ng_session_create(model, &s) == NG_OK, "session");
  if (!s) return;
  int64_t shape[4] = {1, 3, h, w};
  CHECK(ng_session_set_input(NULL, "data", NG_FLOAT32, shape, 4, chw) == NG_INVALID_ARGUMENT, "NULL session");
  CHECK(ng_session_set_input(s, NULL, NG_FLOAT32, shape, 4, chw) == NG_INVALID_ARGUMENT, "NULL name");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, NULL) == NG_INVALID_ARGUMENT, "NULL data");
  CHECK(strstr(ng_last_error(), "'data'") && strstr(ng_last_error(), "NULL"), "names the input and the NULL");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, NULL, 4, chw) == NG_INVALID_ARGUMENT, "NULL shape");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 17, chw) == NG_INVALID_ARGUMENT, "rank 17");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, -1, chw) == NG_INVALID_ARGUMENT, "rank -1");
  int64_t negative[4] = {1, 3, -5, w};
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, negative, 4, chw) == NG_INVALID_ARGUMENT, "negative dim");
  CHECK(strstr(ng_last_error(), "negative") != NULL, "says the dimension is negative: %s", ng_last_error());
  int64_t huge[4] = {1, (int64_t)1 << 40, (int64_t)1 << 40, 1 << 20};
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, huge, 4, chw) == NG_INVALID_ARGUMENT, "overflowing shape");
  CHECK(strstr(ng_last_error(), "internal error") == NULL, "not an internal error: %s", ng_last_error());
  CHECK(ng_session_set_input(s, "data", (ng_dtype)99, shape, 4, chw) == NG_INVALID_ARGUMENT, "unknown dtype");
  CHECK(strstr(ng_last_error(), "dtype 99") != NULL, "names the dtype: %s", ng_last_error());
  CHECK(ng_session_set_input(s, "data", NG_INT64, shape, 4, chw) == NG_ERROR, "wrong dtype for the input");
  CHECK(strstr(ng_last_error(), "'data'") && strstr(ng_last_error(), "float32") && strstr(ng_last_error(), "int64"),
        "names the input and both dtypes: %s", ng_last_error());
  int64_t rank3[3] = {3, h, w};
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, rank3, 3, chw) == NG_ERROR, "wrong rank");
  CHECK(strstr(ng_last_error(), "'data'") != NULL, "names the input: %s", ng_last_error());
  CHECK(ng_session_set_input(s, "nope", NG_FLOAT32, shape, 4, chw) == NG_ERROR, "unknown input");
  CHECK(strstr(ng_last_error(), "'nope'") != NULL && strstr(ng_last_error(), "data") != NULL,
        "names the input and lists the model's: %s", ng_last_error());
  CHECK(ng_session_run(s) == NG_ERROR, "a run with nothing set");
  CHECK(strstr(ng_last_error(), "'data'") != NULL, "names the input: %s", ng_last_error());
  const void* d = NULL;
  const int64_t* sh = NULL;
  int r = 0;
  CHECK(ng_session_get_output(s, OUT16, NULL, NULL, &sh, &r) == NG_INVALID_ARGUMENT, "NULL data out");
  CHECK(ng_session_get_output(s, OUT16, NULL, &d, NULL, &r) == NG_INVALID_ARGUMENT, "NULL shape out");
  CHECK(ng_session_get_output(s, OUT16, NULL, &d, &sh, NULL) == NG_INVALID_ARGUMENT, "NULL rank out");
  CHECK(ng_session_get_output(NULL, OUT16, NULL, &d, &sh, &r) == NG_INVALID_ARGUMENT, "NULL session");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(s) == NG_OK, "run");
  CHECK(ng_session_get_output(s, "nope", NULL, &d, &sh, &r) == NG_ERROR, "unknown output");
  CHECK(strstr(ng_last_error(), "'nope'") != NULL, "names the output: %s", ng_last_error());
  CHECK(ng_session_set_profiling(NULL, 1) == NG_INVALID_ARGUMENT, "NULL session");
  CHECK(ng_session_profile_count(s, NULL) == NG_INVALID_ARGUMENT, "NULL count");
  CHECK(ng_session_profile_name(NULL, 0) == NULL && ng_session_profile_macs(NULL, 0) == -1, "NULL session");
  CHECK(ng_session_threads(NULL) == 0, "NULL session");
  CHECK(ng_model_format(NULL) == NULL && ng_model_isa(NULL) == NULL && ng_model_input_count(NULL) == 0, "NULL model");
  CHECK(ng_model_input_name(model, -1) == NULL && ng_model_output_name(model, 9) == NULL, "out of range");
  ng_session_free(s);
  ng_session_free(NULL);
  ng_model_free(NULL);
  ng_options_free(NULL);

  ng_options* o = NULL;
  CHECK(ng_options_create(NULL) == NG_INVALID_ARGUMENT, "NULL out");
  CHECK(ng_options_create(&o) == NG_OK, "options");
  CHECK(ng_options_set_threads(NULL, 1) == NG_INVALID_ARGUMENT, "NULL options");
  CHECK(ng_options_set_threads(o, -1) == NG_INVALID_ARGUMENT, "negative threads");
  CHECK(ng_options_set_opt_level(o, 3) == NG_INVALID_ARGUMENT, "opt level 3");
  CHECK(ng_options_set_input_shape(o, NULL, shape, 4) == NG_INVALID_ARGUMENT, "NULL input name");
  CHECK(ng_options_set_input_shape(o, "data", NULL, 4) == NG_INVALID_ARGUMENT, "NULL shape");
  CHECK(ng_options_set_input_shape(o, "data", negative, 4) == NG_INVALID_ARGUMENT, "negative dim");
  CHECK(strstr(ng_last_error(), "'data'") != NULL, "names the input: %s", ng_last_error());
  CHECK(ng_options_set_input_shape(o, "data", huge, 4) == NG_INVALID_ARGUMENT, "overflowing shape");
  CHECK(ng_options_set_weights_path(o, NULL) == NG_INVALID_ARGUMENT, "NULL path");
  CHECK(ng_options_set_isa(o, NULL) == NG_INVALID_ARGUMENT, "NULL isa");
  CHECK(ng_options_set_conv_algorithms(NULL, "direct") == NG_INVALID_ARGUMENT, "NULL options");
  CHECK(ng_options_set_winograd_tile(o, 5) == NG_INVALID_ARGUMENT, "tile 5");
  CHECK(strstr(ng_last_error(), "5") != NULL, "names the value: %s", ng_last_error());
  CHECK(ng_options_set_spin_microseconds(NULL, 0) == NG_INVALID_ARGUMENT, "NULL options");
  CHECK(ng_options_set_spin_microseconds(o, -2) == NG_INVALID_ARGUMENT, "spin -2");
  CHECK(strstr(ng_last_error(), "ng_options_set_spin_microseconds") != NULL && strstr(ng_last_error(), "-2") != NULL,
        "names the call and the value: %s", ng_last_error());
  CHECK(ng_options_set_spin_microseconds(o, 1000001) == NG_INVALID_ARGUMENT, "spin over a second");
  CHECK(ng_options_set_spin_microseconds(o, -1) == NG_OK && ng_options_set_spin_microseconds(o, 1000000) == NG_OK,
        "spin -1 and 1000000");
  CHECK(ng_options_set_max_tensor_bytes(o, -1) == NG_INVALID_ARGUMENT, "negative budget");
  CHECK(ng_options_set_max_arena_bytes(NULL, 1) == NG_INVALID_ARGUMENT, "NULL options");
  CHECK(ng_options_set_max_file_bytes(o, -2) == NG_INVALID_ARGUMENT, "negative budget");
  CHECK(strstr(ng_last_error(), "ng_options_set_max_file_bytes") != NULL, "names the call: %s", ng_last_error());
  ng_model* m = NULL;
  CHECK(ng_model_load("x.onnx", o, NULL) == NG_INVALID_ARGUMENT, "NULL out");
  CHECK(ng_model_load_onnx_memory(NULL, 10, o, &m) == NG_INVALID_ARGUMENT && m == NULL, "NULL data");
  CHECK(ng_model_load_ncnn_memory(NULL, 10, NULL, 0, o, &m) == NG_INVALID_ARGUMENT && m == NULL, "NULL param");
  ng_options_free(o);
}

/* Settings reach the kernels; the budget refuses oversized plans with the node and the size. */
static void test_settings(const char* param, const float* chw, int h, int w) {
  int64_t shape[4] = {1, 3, h, w};
  ng_options* o = NULL;
  ng_model* m = NULL;
  CHECK(ng_options_create(&o) == NG_OK, "options");
  CHECK(ng_options_set_threads(o, 1) == NG_OK && ng_options_set_isa(o, "ref") == NG_OK, "isa ref");
  CHECK(ng_model_load(param, o, &m) == NG_OK, "load with isa ref");
  if (m) {
    CHECK(strcmp(ng_model_isa(m), "ref") == 0, "isa is ref: %s", ng_model_isa(m));
    CHECK(strcmp(ng_model_format(m), "ncnn") == 0, "format is ncnn: %s", ng_model_format(m));
    ng_model_free(m);
    m = NULL;
  }
  CHECK(ng_options_set_isa(o, "sse9") == NG_OK, "names are checked at load");
  CHECK(ng_model_load(param, o, &m) == NG_ERROR && m == NULL, "unknown isa");
  CHECK(strstr(ng_last_error(), "'sse9'") != NULL, "names the isa: %s", ng_last_error());
  CHECK(ng_options_set_isa(o, "") == NG_OK && ng_options_set_conv_algorithms(o, "fft") == NG_OK, "set");
  CHECK(ng_model_load(param, o, &m) == NG_ERROR && strstr(ng_last_error(), "'fft'") != NULL, "unknown algorithm: %s",
        ng_last_error());
  CHECK(ng_options_set_conv_algorithms(o, "direct") == NG_OK && ng_options_set_winograd_tile(o, 6) == NG_OK, "set");
  CHECK(ng_model_load(param, o, &m) == NG_OK, "load with direct convolutions only");
  if (m) {
    ng_session* s = NULL;
    CHECK(ng_session_create(m, &s) == NG_OK, "session");
    CHECK(ng_session_threads(s) == 1, "one thread: %d", ng_session_threads(s));
    CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(s) == NG_OK, "run");
    int count = 0, direct = 0, other = 0;
    CHECK(ng_session_profile_count(s, &count) == NG_OK && count > 0, "profile");
    for (int i = 0; i < count; ++i) {
      if (strcmp(ng_session_profile_op_type(s, i), "Conv") != 0) continue;
      const char* a = ng_session_profile_algorithm(s, i);
      if (strncmp(a, "direct/", 7) == 0) direct++;
      if (strncmp(a, "winograd", 8) == 0 || strncmp(a, "indirect", 8) == 0 || strncmp(a, "strassen", 8) == 0) other++;
    }
    if (strcmp(ng_model_isa(m), "ref") != 0) CHECK(direct > 0 && other == 0, "direct %d, others %d", direct, other);
    ng_session_free(s);
    ng_model_free(m);
    m = NULL;
  }

  /* A session that never spins computes what one with the engine's spin limit does, bit for bit. */
  float* by_spin[2] = {NULL, NULL};
  long counts[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ng_options_free(o);
    CHECK(ng_options_create(&o) == NG_OK && ng_options_set_threads(o, 2) == NG_OK, "options");
    CHECK(ng_options_set_spin_microseconds(o, i == 0 ? -1 : 0) == NG_OK, "spin");
    CHECK(ng_model_load(param, o, &m) == NG_OK, "load with spin %d", i == 0 ? -1 : 0);
    if (!m) continue;
    ng_session* s = NULL;
    CHECK(ng_session_create(m, &s) == NG_OK && ng_session_threads(s) == 2, "session of two threads");
    CHECK(s && ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(s) == NG_OK, "run");
    if (s) by_spin[i] = copy_output(s, OUT16, &counts[i]);
    ng_session_free(s);
    ng_model_free(m);
    m = NULL;
  }
  CHECK(by_spin[0] && by_spin[1] && counts[0] == counts[1] &&
            memcmp(by_spin[0], by_spin[1], sizeof(float) * (size_t)counts[0]) == 0,
        "the same outputs whether threads spin or not");
  free(by_spin[0]);
  free(by_spin[1]);

  /* The budget: a plan over it is refused before anything is allocated, naming the node and the size. */
  ng_options_free(o);
  CHECK(ng_options_create(&o) == NG_OK, "options");
  CHECK(ng_options_set_input_shape(o, "data", shape, 4) == NG_OK, "input shape");
  CHECK(ng_options_set_max_tensor_bytes(o, 1 << 16) == NG_OK, "budget");
  CHECK(ng_model_load(param, o, &m) == NG_ERROR && m == NULL, "a tensor over the budget is refused");
  CHECK(strstr(ng_last_error(), "node 'mobilenet0_conv0_fwd'") != NULL && strstr(ng_last_error(), "KiB") != NULL,
        "names the node and the size: %s", ng_last_error());
  CHECK(strstr(ng_last_error(), param) != NULL, "names the file: %s", ng_last_error());
  CHECK(ng_options_set_max_tensor_bytes(o, 0) == NG_OK && ng_options_set_max_arena_bytes(o, 1 << 16) == NG_OK, "set");
  CHECK(ng_model_load(param, o, &m) == NG_OK, "the arena is checked per session");
  if (m) {
    ng_session* s = NULL;
    CHECK(ng_session_create(m, &s) == NG_ERROR && s == NULL, "a session over the arena budget is refused");
    CHECK(strstr(ng_last_error(), "working memory") != NULL && strstr(ng_last_error(), param) != NULL,
          "says what and names the file: %s", ng_last_error());
    CHECK(strstr(ng_last_error(), "internal error") == NULL, "not an internal error");
    ng_model_free(m);
    m = NULL;
  }
  CHECK(ng_options_set_max_arena_bytes(o, 0) == NG_OK && ng_options_set_max_file_bytes(o, 100) == NG_OK, "set");
  CHECK(ng_model_load(param, o, &m) == NG_ERROR && strstr(ng_last_error(), "100 bytes") != NULL, "file budget: %s",
        ng_last_error());
  ng_options_free(o);
}

/* Per-step profile: timed with profiling on, owned by the session until the next snapshot. */
static void test_profiling(ng_model* model, const float* chw, int h, int w) {
  ng_session* s = NULL;
  CHECK(ng_session_create(model, &s) == NG_OK, "session");
  if (!s) return;
  int64_t shape[4] = {1, 3, h, w};
  int count = -1;
  CHECK(ng_session_profile_count(s, &count) == NG_OK && count == 0, "no steps before the first plan: %d", count);
  CHECK(ng_session_set_profiling(s, 1) == NG_OK, "profiling on");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(s) == NG_OK, "run");
  CHECK(ng_session_profile_count(s, &count) == NG_OK && count > 10, "steps: %d", count);
  double total = 0;
  int relu_fused = 0;
  for (int i = 0; i < count; ++i) {
    CHECK(ng_session_profile_name(s, i) && ng_session_profile_op_type(s, i) && ng_session_profile_algorithm(s, i) &&
              ng_session_profile_precision(s, i) && ng_session_profile_layout(s, i) && ng_session_profile_fused(s, i),
          "strings of step %d", i);
    CHECK(ng_session_profile_time_ms(s, i) >= 0 && ng_session_profile_bytes(s, i) > 0, "numbers of step %d", i);
    total += ng_session_profile_time_ms(s, i);
    if (strstr(ng_session_profile_fused(s, i), "Relu")) relu_fused++;
  }
  CHECK(total > 0, "timed: %g ms", total);
  CHECK(relu_fused > 0, "fused activations are listed");
  const char* name0 = ng_session_profile_name(s, 0);
  CHECK(strcmp(name0, "mobilenet0_conv0_fwd") == 0, "first step: %s", name0);
  CHECK(strcmp(ng_session_profile_op_type(s, 0), "Conv") == 0, "a Conv");
  CHECK(strcmp(ng_session_profile_precision(s, 0), "fp32") == 0, "fp32");
  /* 8 output channels, 3x3x3 kernels, stride 2, pad 1. */
  int64_t oh = (h - 1) / 2 + 1, ow = (w - 1) / 2 + 1;
  CHECK(ng_session_profile_macs(s, 0) == 8 * oh * ow * 27, "MACs of the first conv: %lld",
        (long long)ng_session_profile_macs(s, 0));
  CHECK(ng_session_profile_name(s, count) == NULL && ng_session_profile_name(s, -1) == NULL, "out of range: NULL");
  CHECK(ng_session_profile_time_ms(s, count) == -1.0 && ng_session_profile_bytes(s, count) == -1, "out of range: -1");
  /* The snapshot stays as taken until the next ng_session_profile_count, whatever runs meanwhile. */
  double t0 = ng_session_profile_time_ms(s, 0);
  CHECK(ng_session_set_profiling(s, 0) == NG_OK, "profiling off");
  CHECK(ng_session_set_input(s, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(s) == NG_OK, "run");
  CHECK(ng_session_profile_name(s, 0) == name0 && ng_session_profile_time_ms(s, 0) == t0, "snapshot unchanged");
  ng_session_free(s);
}

/* Two threads on one session (which the header forbids): every call either succeeds or fails with
 * NG_ERROR saying another thread is inside a call (or that its input was consumed by the other thread's
 * run); nothing crashes, and the session works normally afterwards. */
struct race {
  ng_session* s;
  const float* x;
  int64_t shape[2];
  int ok, busy, other;
  char other_msg[512];
  pthread_barrier_t* start;
};

static void* race_thread(void* arg) {
  struct race* r = arg;
  pthread_barrier_wait(r->start);
  for (int i = 0; i < 2000; ++i) {
    const void* d = NULL;
    const int64_t* sh = NULL;
    int rank = 0;
    ng_status st[3];
    st[0] = ng_session_set_input(r->s, "x", NG_FLOAT32, r->shape, 2, r->x);
    const char* e0 = st[0] == NG_OK ? "" : ng_last_error();
    int busy0 = strstr(e0, "another thread") != NULL;
    st[1] = ng_session_run(r->s);
    int busy1 = st[1] != NG_OK && strstr(ng_last_error(), "another thread") != NULL;
    int unset1 = st[1] != NG_OK && strstr(ng_last_error(), "not set") != NULL;
    st[2] = ng_session_get_output(r->s, "y", NULL, &d, &sh, &rank);
    int busy2 = st[2] != NG_OK && strstr(ng_last_error(), "another thread") != NULL;
    int none2 = st[2] != NG_OK && strstr(ng_last_error(), "not available") != NULL;
    r->ok += (st[0] == NG_OK) + (st[1] == NG_OK) + (st[2] == NG_OK);
    r->busy += busy0 + busy1 + busy2;
    if ((st[0] != NG_OK && !busy0) || (st[1] != NG_OK && !busy1 && !unset1) || (st[2] != NG_OK && !busy2 && !none2)) {
      r->other++;
      snprintf(r->other_msg, sizeof r->other_msg, "%s", ng_last_error());
    }
  }
  return NULL;
}

static void test_one_session_two_threads(ng_model* relu) {
  ng_session* s = NULL;
  CHECK(ng_session_create(relu, &s) == NG_OK, "session");
  if (!s) return;
  float x[4] = {-1, 2, -3, 4};
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  struct race a = {s, x, {1, 4}, 0, 0, 0, "", &start}, b = a;
  pthread_t ta, tb;
  pthread_create(&ta, NULL, race_thread, &a);
  pthread_create(&tb, NULL, race_thread, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&start);
  CHECK(a.other == 0 && b.other == 0, "only the documented errors: %s%s", a.other_msg, b.other_msg);
  CHECK(a.ok + b.ok > 0, "calls went through (%d, busy %d)", a.ok + b.ok, a.busy + b.busy);
  printf("two threads on one session: %d calls went through, %d refused as busy\n", a.ok + b.ok, a.busy + b.busy);
  const float* y = NULL;
  const int64_t* ys = NULL;
  int rank = 0;
  CHECK(ng_session_set_input(s, "x", NG_FLOAT32, a.shape, 2, x) == NG_OK && ng_session_run(s) == NG_OK &&
            ng_session_get_output(s, "y", NULL, (const void**)&y, &ys, &rank) == NG_OK && y[1] == 2.0f && y[0] == 0.0f,
        "the session works afterwards");
  ng_session_free(s);
}

/* A Relu over a 1x4 float32 input "x" to output "y", as an ONNX ModelProto (opset 13), made with
 * onnx.helper.make_model(make_graph([make_node("Relu", ["x"], ["y"], name="relu")], ...)).SerializeToString(). */
static const unsigned char RELU_ONNX[] = {
    0x08, 0x08, 0x12, 0x00, 0x3a, 0x41, 0x0a, 0x12, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x1a, 0x04, 0x72, 0x65, 0x6c,
    0x75, 0x22, 0x04, 0x52, 0x65, 0x6c, 0x75, 0x12, 0x01, 0x72, 0x5a, 0x13, 0x0a, 0x01, 0x78, 0x12, 0x0e, 0x0a, 0x0c,
    0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x04, 0x62, 0x13, 0x0a, 0x01, 0x79, 0x12, 0x0e,
    0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x04, 0x42, 0x04, 0x0a, 0x00, 0x10,
    0x0d};

/* Loading from memory: the buffers are copied, so they may be overwritten and freed as soon as the call
 * returns; the model gives the same result as the one loaded from the files. */
static void test_memory_loading(const char* shared, ng_model* from_file, const float* chw, int h, int w) {
  char path[4096];
  char *param = NULL, *weights = NULL;
  snprintf(path, sizeof path, "%s/models/mnet.25-opt.param", shared);
  long param_size = read_file(path, &param);
  snprintf(path, sizeof path, "%s/models/mnet.25-opt.bin", shared);
  long weights_size = read_file(path, &weights);
  CHECK(param_size > 0 && weights_size > 0, "read the ncnn files");
  if (param_size <= 0 || weights_size <= 0) return;
  ng_model* m = NULL;
  CHECK(ng_model_load_ncnn_memory(param, (size_t)param_size, weights, (size_t)weights_size, NULL, &m) == NG_OK,
        "ncnn from memory");
  memset(param, 0, (size_t)param_size);
  memset(weights, 0xff, (size_t)weights_size);
  free(param);
  free(weights);
  if (m) {
    CHECK(strcmp(ng_model_format(m), "ncnn") == 0, "format ncnn");
    int64_t shape[4] = {1, 3, h, w};
    ng_session *a = NULL, *b = NULL;
    CHECK(ng_session_create(m, &a) == NG_OK && ng_session_create(from_file, &b) == NG_OK, "sessions");
    ng_model_free(m); /* a session keeps its model's engine alive */
    if (a && b) {
      CHECK(ng_session_set_input(a, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(a) == NG_OK, "run");
      CHECK(ng_session_set_input(b, "data", NG_FLOAT32, shape, 4, chw) == NG_OK && ng_session_run(b) == NG_OK, "run");
      long na = 0, nb = 0;
      float* oa = copy_output(a, OUT16, &na);
      float* ob = copy_output(b, OUT16, &nb);
      CHECK(oa && ob && na == nb && memcmp(oa, ob, sizeof(float) * (size_t)na) == 0, "same as from the files");
      free(oa);
      free(ob);
    }
    ng_session_free(a);
    ng_session_free(b);
  }
  ng_model* bad = NULL;
  CHECK(ng_model_load_ncnn_memory("7767517\n", 8, NULL, 0, NULL, &bad) == NG_ERROR && bad == NULL, "truncated param");
  CHECK(strstr(ng_last_error(), "ng_model_load_ncnn_memory") != NULL, "names the call: %s", ng_last_error());

  /* ONNX from memory. */
  unsigned char* bytes = malloc(sizeof RELU_ONNX);
  memcpy(bytes, RELU_ONNX, sizeof RELU_ONNX);
  CHECK(ng_model_load_onnx_memory(bytes, sizeof RELU_ONNX, NULL, &m) == NG_OK, "onnx from memory");
  memset(bytes, 0, sizeof RELU_ONNX);
  free(bytes);
  if (m) {
    CHECK(strcmp(ng_model_format(m), "onnx") == 0, "format onnx");
    CHECK(strcmp(ng_model_input_name(m, 0), "x") == 0 && strcmp(ng_model_output_name(m, 0), "y") == 0, "names");
    ng_session* s = NULL;
    CHECK(ng_session_create(m, &s) == NG_OK, "session");
    float x[4] = {-1.5f, 0.0f, 2.5f, -0.0f};
    int64_t shape[2] = {1, 4};
    const float* y = NULL;
    const int64_t* ys = NULL;
    int rank = 0;
    CHECK(s && ng_session_set_input(s, "x", NG_FLOAT32, shape, 2, x) == NG_OK && ng_session_run(s) == NG_OK &&
              ng_session_get_output(s, "y", NULL, (const void**)&y, &ys, &rank) == NG_OK,
          "run the relu");
    CHECK(y && rank == 2 && ys[1] == 4 && y[0] == 0.0f && y[1] == 0.0f && y[2] == 2.5f && y[3] == 0.0f, "relu values");
    ng_session_free(s);
    test_one_session_two_threads(m);
    ng_model_free(m);
  }
  ng_options* small = NULL;
  ng_options_create(&small);
  ng_options_set_max_file_bytes(small, 50);
  CHECK(ng_model_load_onnx_memory(RELU_ONNX, sizeof RELU_ONNX, small, &bad) == NG_ERROR && bad == NULL, "over budget");
  CHECK(strstr(ng_last_error(), "77 bytes") && strstr(ng_last_error(), "max_file_bytes"), "says so: %s", ng_last_error());
  CHECK(ng_model_load_ncnn_memory("7767517\n", 8, RELU_ONNX, 60, small, &bad) == NG_ERROR &&
            strstr(ng_last_error(), "the weights is 60 bytes"), "ncnn weights over budget: %s", ng_last_error());
  ng_options_free(small);
  CHECK(ng_model_load_onnx_memory(RELU_ONNX, 20, NULL, &bad) == NG_ERROR && bad == NULL, "truncated onnx");
  CHECK(strstr(ng_last_error(), "ng_model_load_onnx_memory") && strstr(ng_last_error(), "ONNX"), "says what: %s",
        ng_last_error());
}

/* Inputs x_<t> ["batch", 2] and outputs y_<t> = Transpose(x_<t>) [2, "batch"] for each of the 13 element
 * types, in the order of TYPES below (ONNX opset 13), made with the onnx package:
 *   ins = [make_tensor_value_info("x_" + n, t, ["batch", 2]) for n, t in types]
 *   outs = [make_tensor_value_info("y_" + n, t, [2, "batch"]) for n, t in types]
 *   make_model(make_graph([make_node("Transpose", ["x_" + n], ["y_" + n], perm=[1, 0]) for n, _ in types],
 *                         "g", ins, outs)).SerializeToString()   (ir_version 8) */
static const unsigned char EVERY_DTYPE_ONNX[] = {
    0x08, 0x08, 0x12, 0x00, 0x3a, 0xa5, 0x0a, 0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x66, 0x33, 0x32, 0x12, 0x05, 0x79,
    0x5f, 0x66, 0x33, 0x32, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04,
    0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x26, 0x0a, 0x04, 0x78, 0x5f, 0x75, 0x38,
    0x12, 0x04, 0x79, 0x5f, 0x75, 0x38, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d,
    0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x26, 0x0a, 0x04, 0x78, 0x5f,
    0x69, 0x38, 0x12, 0x04, 0x79, 0x5f, 0x69, 0x38, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65,
    0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x28, 0x0a, 0x05,
    0x78, 0x5f, 0x75, 0x31, 0x36, 0x12, 0x05, 0x79, 0x5f, 0x75, 0x31, 0x36, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73,
    0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07,
    0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x69, 0x31, 0x36, 0x12, 0x05, 0x79, 0x5f, 0x69, 0x31, 0x36, 0x22, 0x09, 0x54,
    0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40,
    0x00, 0xa0, 0x01, 0x07, 0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x69, 0x33, 0x32, 0x12, 0x05, 0x79, 0x5f, 0x69, 0x33,
    0x32, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72,
    0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x69, 0x36, 0x34, 0x12, 0x05,
    0x79, 0x5f, 0x69, 0x36, 0x34, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a,
    0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x24, 0x0a, 0x03, 0x78, 0x5f, 0x62,
    0x12, 0x03, 0x79, 0x5f, 0x62, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a,
    0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x66,
    0x31, 0x36, 0x12, 0x05, 0x79, 0x5f, 0x66, 0x31, 0x36, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73,
    0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x28, 0x0a,
    0x05, 0x78, 0x5f, 0x66, 0x36, 0x34, 0x12, 0x05, 0x79, 0x5f, 0x66, 0x36, 0x34, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e,
    0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01,
    0x07, 0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x75, 0x33, 0x32, 0x12, 0x05, 0x79, 0x5f, 0x75, 0x33, 0x32, 0x22, 0x09,
    0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01,
    0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x28, 0x0a, 0x05, 0x78, 0x5f, 0x75, 0x36, 0x34, 0x12, 0x05, 0x79, 0x5f, 0x75,
    0x36, 0x34, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65, 0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65,
    0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x0a, 0x2a, 0x0a, 0x06, 0x78, 0x5f, 0x62, 0x66, 0x31, 0x36,
    0x12, 0x06, 0x79, 0x5f, 0x62, 0x66, 0x31, 0x36, 0x22, 0x09, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x70, 0x6f, 0x73, 0x65,
    0x2a, 0x0d, 0x0a, 0x04, 0x70, 0x65, 0x72, 0x6d, 0x40, 0x01, 0x40, 0x00, 0xa0, 0x01, 0x07, 0x12, 0x01, 0x67, 0x5a,
    0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x66, 0x33, 0x32, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x01, 0x12, 0x0d, 0x0a, 0x07, 0x12,
    0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1b, 0x0a, 0x04, 0x78, 0x5f, 0x75, 0x38, 0x12,
    0x13, 0x0a, 0x11, 0x08, 0x02, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08,
    0x02, 0x5a, 0x1b, 0x0a, 0x04, 0x78, 0x5f, 0x69, 0x38, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x03, 0x12, 0x0d, 0x0a, 0x07,
    0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x75, 0x31,
    0x36, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x04, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a,
    0x02, 0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x69, 0x31, 0x36, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x05, 0x12,
    0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78,
    0x5f, 0x69, 0x33, 0x32, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x06, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74,
    0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x69, 0x36, 0x34, 0x12, 0x13, 0x0a, 0x11,
    0x08, 0x07, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1a,
    0x0a, 0x03, 0x78, 0x5f, 0x62, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x09, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61,
    0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x66, 0x31, 0x36, 0x12, 0x13, 0x0a,
    0x11, 0x08, 0x0a, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a,
    0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x66, 0x36, 0x34, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x0b, 0x12, 0x0d, 0x0a, 0x07, 0x12,
    0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x75, 0x33, 0x32,
    0x12, 0x13, 0x0a, 0x11, 0x08, 0x0c, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02,
    0x08, 0x02, 0x5a, 0x1c, 0x0a, 0x05, 0x78, 0x5f, 0x75, 0x36, 0x34, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x0d, 0x12, 0x0d,
    0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x5a, 0x1d, 0x0a, 0x06, 0x78, 0x5f,
    0x62, 0x66, 0x31, 0x36, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x10, 0x12, 0x0d, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74,
    0x63, 0x68, 0x0a, 0x02, 0x08, 0x02, 0x62, 0x1c, 0x0a, 0x05, 0x79, 0x5f, 0x66, 0x33, 0x32, 0x12, 0x13, 0x0a, 0x11,
    0x08, 0x01, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1b,
    0x0a, 0x04, 0x79, 0x5f, 0x75, 0x38, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x02, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a,
    0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1b, 0x0a, 0x04, 0x79, 0x5f, 0x69, 0x38, 0x12, 0x13, 0x0a,
    0x11, 0x08, 0x03, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62,
    0x1c, 0x0a, 0x05, 0x79, 0x5f, 0x75, 0x31, 0x36, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x04, 0x12, 0x0d, 0x0a, 0x02, 0x08,
    0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1c, 0x0a, 0x05, 0x79, 0x5f, 0x69, 0x31, 0x36,
    0x12, 0x13, 0x0a, 0x11, 0x08, 0x05, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74,
    0x63, 0x68, 0x62, 0x1c, 0x0a, 0x05, 0x79, 0x5f, 0x69, 0x33, 0x32, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x06, 0x12, 0x0d,
    0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1c, 0x0a, 0x05, 0x79, 0x5f,
    0x69, 0x36, 0x34, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x07, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05,
    0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1a, 0x0a, 0x03, 0x79, 0x5f, 0x62, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x09, 0x12,
    0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1c, 0x0a, 0x05, 0x79,
    0x5f, 0x66, 0x31, 0x36, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x0a, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12,
    0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1c, 0x0a, 0x05, 0x79, 0x5f, 0x66, 0x36, 0x34, 0x12, 0x13, 0x0a, 0x11,
    0x08, 0x0b, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1c,
    0x0a, 0x05, 0x79, 0x5f, 0x75, 0x33, 0x32, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x0c, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02,
    0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x62, 0x1c, 0x0a, 0x05, 0x79, 0x5f, 0x75, 0x36, 0x34, 0x12,
    0x13, 0x0a, 0x11, 0x08, 0x0d, 0x12, 0x0d, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63,
    0x68, 0x62, 0x1d, 0x0a, 0x06, 0x79, 0x5f, 0x62, 0x66, 0x31, 0x36, 0x12, 0x13, 0x0a, 0x11, 0x08, 0x10, 0x12, 0x0d,
    0x0a, 0x02, 0x08, 0x02, 0x0a, 0x07, 0x12, 0x05, 0x62, 0x61, 0x74, 0x63, 0x68, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d,
};

static const struct {
  const char* suffix;
  ng_dtype dtype;
  size_t size;
} TYPES[] = {{"f32", NG_FLOAT32, 4}, {"u8", NG_UINT8, 1},   {"i8", NG_INT8, 1},      {"u16", NG_UINT16, 2},
             {"i16", NG_INT16, 2},   {"i32", NG_INT32, 4},  {"i64", NG_INT64, 8},    {"b", NG_BOOL, 1},
             {"f16", NG_FLOAT16, 2}, {"f64", NG_FLOAT64, 8}, {"u32", NG_UINT32, 4}, {"u64", NG_UINT64, 8},
             {"bf16", NG_BFLOAT16, 2}};
enum { NTYPES = sizeof TYPES / sizeof TYPES[0] };

/* Queries on a model of every element type with named dynamic dimensions, then a run of every type: each
 * output is its input transposed, byte for byte. */
static void test_every_dtype(void) {
  ng_model* m = NULL;
  CHECK(ng_model_load_onnx_memory(EVERY_DTYPE_ONNX, sizeof EVERY_DTYPE_ONNX, NULL, &m) == NG_OK, "load");
  if (!m) return;
  CHECK(ng_model_input_count(m) == NTYPES && ng_model_output_count(m) == NTYPES, "%d inputs, %d outputs",
        ng_model_input_count(m), ng_model_output_count(m));
  for (int i = 0; i < NTYPES && i < ng_model_input_count(m); ++i) {
    char name[16];
    snprintf(name, sizeof name, "x_%s", TYPES[i].suffix);
    CHECK(strcmp(ng_model_input_name(m, i), name) == 0, "input %d is %s", i, ng_model_input_name(m, i));
    CHECK(ng_model_input_dtype(m, i) == TYPES[i].dtype, "input %s has dtype %d", name, ng_model_input_dtype(m, i));
    CHECK(ng_model_output_dtype(m, i) == TYPES[i].dtype, "output %d has dtype %d", i, ng_model_output_dtype(m, i));
    const int64_t* in = ng_model_input_shape(m, i);
    CHECK(ng_model_input_rank(m, i) == 2 && in && in[0] == -1 && in[1] == 2, "input %s: ['batch', 2]", name);
    CHECK(strcmp(ng_model_input_dim_name(m, i, 0), "batch") == 0, "dim 0 of %s is 'batch': '%s'", name,
          ng_model_input_dim_name(m, i, 0));
    CHECK(strcmp(ng_model_input_dim_name(m, i, 1), "") == 0, "dim 1 of %s is fixed, without a name", name);
    const int64_t* out = ng_model_output_shape(m, i);
    CHECK(ng_model_output_rank(m, i) == 2 && out && out[0] == 2 && out[1] == -1, "output %d: [2, 'batch']", i);
    CHECK(strcmp(ng_model_output_dim_name(m, i, 1), "batch") == 0 && strcmp(ng_model_output_dim_name(m, i, 0), "") == 0,
          "output %d's dimension names", i);
  }
  /* Out of range: NULL, -1, NG_UNDEFINED. */
  CHECK(ng_model_input_dtype(m, NTYPES) == NG_UNDEFINED && ng_model_output_dtype(m, -1) == NG_UNDEFINED, "dtype");
  CHECK(ng_model_input_rank(m, NTYPES) == -1 && ng_model_output_rank(NULL, 0) == -1, "rank");
  CHECK(ng_model_input_shape(m, -1) == NULL && ng_model_output_shape(NULL, 0) == NULL, "shape");
  CHECK(ng_model_input_dim_name(m, 0, 2) == NULL && ng_model_input_dim_name(m, 0, -1) == NULL &&
            ng_model_output_dim_name(m, NTYPES, 0) == NULL && ng_model_input_dim_name(NULL, 0, 0) == NULL,
        "dimension name out of range");

  /* Three rows of every type: distinct bytes per element, so a wrong stride or element size shows. */
  enum { ROWS = 3 };
  unsigned char inputs[NTYPES][ROWS * 2 * 8];
  ng_session* s = NULL;
  CHECK(ng_session_create(m, &s) == NG_OK, "session");
  if (s) {
    int64_t shape[2] = {ROWS, 2};
    for (int i = 0; i < NTYPES; ++i) {
      for (size_t b = 0; b < sizeof inputs[i]; ++b) inputs[i][b] = (unsigned char)(TYPES[i].dtype == NG_BOOL ? b % 2 : 7 * b + i);
      char name[16];
      snprintf(name, sizeof name, "x_%s", TYPES[i].suffix);
      CHECK(ng_session_set_input(s, name, TYPES[i].dtype, shape, 2, inputs[i]) == NG_OK, "set %s", name);
    }
    CHECK(ng_session_run(s) == NG_OK, "run every type");
    for (int i = 0; i < NTYPES; ++i) {
      char name[16];
      snprintf(name, sizeof name, "y_%s", TYPES[i].suffix);
      const unsigned char* y = NULL;
      const int64_t* ys = NULL;
      int rank = 0;
      ng_dtype dt = NG_UNDEFINED;
      CHECK(ng_session_get_output(s, name, &dt, (const void**)&y, &ys, &rank) == NG_OK, "get %s", name);
      if (!y) continue;
      CHECK(dt == TYPES[i].dtype && rank == 2 && ys[0] == 2 && ys[1] == ROWS, "%s: dtype %d, shape %lldx%lld", name,
            dt, (long long)ys[0], (long long)(rank > 1 ? ys[1] : 0));
      int same = 1;
      const size_t e = TYPES[i].size;
      for (int r = 0; r < ROWS; ++r)
        for (int c = 0; c < 2; ++c) same = same && memcmp(y + (c * ROWS + r) * e, inputs[i] + (r * 2 + c) * e, e) == 0;
      CHECK(same, "%s is x transposed", name);
    }
    ng_session_free(s);
  }
  ng_model_free(m);

  /* Shapes given in the options are fixed: no dynamic dimension, no name, and once every input's is known,
   * the outputs' are inferred. */
  ng_options* o = NULL;
  ng_options_create(&o);
  for (int i = 0; i < NTYPES; ++i) {
    char name[16];
    snprintf(name, sizeof name, "x_%s", TYPES[i].suffix);
    int64_t fixed[2] = {5 + i, 2};
    CHECK(ng_options_set_input_shape(o, name, fixed, 2) == NG_OK, "input shape of %s", name);
  }
  CHECK(ng_model_load_onnx_memory(EVERY_DTYPE_ONNX, sizeof EVERY_DTYPE_ONNX, o, &m) == NG_OK, "load with shapes");
  for (int i = 0; m && i < NTYPES; ++i) {
    const int64_t* in = ng_model_input_shape(m, i);
    const int64_t* out = ng_model_output_shape(m, i);
    CHECK(in && in[0] == 5 + i && in[1] == 2 && strcmp(ng_model_input_dim_name(m, i, 0), "") == 0, "x_%s is %dx2",
          TYPES[i].suffix, 5 + i);
    CHECK(out && out[0] == 2 && out[1] == 5 + i && strcmp(ng_model_output_dim_name(m, i, 1), "") == 0,
          "y_%s is 2x%d", TYPES[i].suffix, 5 + i);
  }
  ng_model_free(m);
  ng_options_free(o);
}

/* The ncnn RetinaFace: an input with unnamed dynamic dimensions; with its shape given, outputs are known. */
static void test_ncnn_queries(const char* param, int h, int w) {
  ng_model* m = NULL;
  CHECK(ng_model_load(param, NULL, &m) == NG_OK, "load");
  if (m) {
    const int64_t* in = ng_model_input_shape(m, 0);
    CHECK(ng_model_input_dtype(m, 0) == NG_FLOAT32 && ng_model_input_rank(m, 0) == 4, "float32, rank 4");
    CHECK(in && in[0] == 1 && in[1] == -1 && in[2] == -1 && in[3] == -1, "1x?x?x?");
    CHECK(in && strcmp(ng_model_input_dim_name(m, 0, 2), "") == 0, "ncnn names no dimension");
    ng_model_free(m);
  }
  ng_options* o = NULL;
  ng_options_create(&o);
  int64_t shape[4] = {1, 3, h, w};
  ng_options_set_input_shape(o, "data", shape, 4);
  CHECK(ng_model_load(param, o, &m) == NG_OK, "load with a shape");
  if (m) {
    int found = 0;
    for (int i = 0; i < ng_model_output_count(m); ++i) {
      if (strcmp(ng_model_output_name(m, i), OUT16) != 0) continue;
      found = 1;
      const int64_t* d = ng_model_output_shape(m, i);
      /* Two anchors times two classes per cell of the stride-16 grid. */
      CHECK(ng_model_output_rank(m, i) == 4 && d && d[0] == 1 && d[1] == 4 && d[2] == h / 16 && d[3] == w / 16,
            "%s is 1x4x%dx%d", OUT16, h / 16, w / 16);
      CHECK(ng_model_output_dtype(m, i) == NG_FLOAT32, "float32");
    }
    CHECK(found, "output %s listed", OUT16);
    ng_model_free(m);
  }
  ng_options_free(o);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: c_api_test SHARED_DIR ASTRONAUT_PNG\n");
    return 2;
  }
  /* The library and the headers it was built with report one version, and the string spells the numbers. */
  char numbers[64];
  snprintf(numbers, sizeof numbers, "%d.%d.%d", NINEGRID_VERSION_MAJOR, NINEGRID_VERSION_MINOR, NINEGRID_VERSION_PATCH);
  CHECK(strcmp(ng_version(), NINEGRID_VERSION) == 0, "ng_version() %s vs NINEGRID_VERSION %s", ng_version(),
        NINEGRID_VERSION);
  CHECK(strcmp(numbers, NINEGRID_VERSION) == 0, "NINEGRID_VERSION %s vs its numbers %s", NINEGRID_VERSION, numbers);

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
    test_lifetimes(model, chw, h, w);
    test_arguments(model, chw, h, w);
    test_profiling(model, chw, h, w);
    test_memory_loading(argv[1], model, chw, h, w);
    ng_model_free(model);
  }
  ng_options_free(opts);
  test_settings(param, chw, h, w);
  test_every_dtype();
  test_ncnn_queries(param, h, w);

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
