/* run_raw MODEL INPUT.f32 SHAPE OUTPUT OUT.f32: runs a model with one float input, read from a raw float32
 * file of the given shape (e.g. 1x3x512x512), and writes the output named OUTPUT as raw float32. The C API
 * of an installed ninegrid, built with pkg-config:
 *   cc run_raw.c $(pkg-config --cflags --libs ninegrid) -o run_raw
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ninegrid/ninegrid_c.h>

static int fail(const char* what) {
  fprintf(stderr, "run_raw: %s: %s\n", what, ng_last_error());
  return 1;
}

/* Reads `count` floats from `path` into a new buffer; NULL if it cannot. */
static float* read_floats(const char* path, long count) {
  float* data = malloc(sizeof(float) * (size_t)count);
  FILE* f = fopen(path, "rb");
  if (!data || !f || fread(data, sizeof(float), (size_t)count, f) != (size_t)count) {
    free(data);
    data = NULL;
  }
  if (f) fclose(f);
  return data;
}

static int write_floats(const char* path, const void* data, long count) {
  FILE* f = fopen(path, "wb");
  int ok = f && fwrite(data, sizeof(float), (size_t)count, f) == (size_t)count;
  if (f && fclose(f) != 0) ok = 0;
  return ok;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: run_raw MODEL INPUT.f32 SHAPE OUTPUT OUT.f32\n");
    return 2;
  }
  printf("ninegrid %s (headers %s)\n", ng_version(), NINEGRID_VERSION);

  int64_t shape[8];
  int rank = 0;
  long count = 1;
  for (char* p = argv[3]; *p && rank < 8; ++rank) {
    shape[rank] = strtoll(p, &p, 10);
    count *= (long)shape[rank];
    if (*p == 'x') ++p;
  }
  float* input = read_floats(argv[2], count);
  if (!input) {
    fprintf(stderr, "run_raw: cannot read %ld floats from %s\n", count, argv[2]);
    return 1;
  }

  int status = 1;
  ng_model* model = NULL;
  ng_session* session = NULL;
  ng_dtype dtype;
  const void* data = NULL;
  const int64_t* out_shape = NULL;
  int out_rank = 0;
  if (ng_model_load(argv[1], NULL, &model) != NG_OK) {
    fail("load");
  } else if (ng_session_create(model, &session) != NG_OK) {
    fail("session");
  } else if (ng_session_set_input(session, ng_model_input_name(model, 0), NG_FLOAT32, shape, rank, input) != NG_OK) {
    fail("input");
  } else if (ng_session_run(session) != NG_OK) {
    fail("run");
  } else if (ng_session_get_output(session, argv[4], &dtype, &data, &out_shape, &out_rank) != NG_OK) {
    fail("output");
  } else {
    long out_count = 1;
    for (int i = 0; i < out_rank; ++i) out_count *= (long)out_shape[i];
    if (dtype != NG_FLOAT32 || !write_floats(argv[5], data, out_count)) {
      fprintf(stderr, "run_raw: cannot write %s\n", argv[5]);
    } else {
      printf("%s: %ld values\n", argv[4], out_count);
      status = 0;
    }
  }
  ng_session_free(session);
  ng_model_free(model);
  free(input);
  return status;
}
