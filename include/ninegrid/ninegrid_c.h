/* ninegrid C API: load a model, run it, read outputs. For C and for other languages' FFIs.
 *
 *   ng_model* model = NULL;
 *   if (ng_model_load("model.onnx", NULL, &model) != NG_OK) { puts(ng_last_error()); return 1; }
 *   ng_session* s = NULL;
 *   ng_session_create(model, &s);
 *   int64_t shape[4] = {1, 3, 224, 224};
 *   ng_session_set_input(s, "input", NG_FLOAT32, shape, 4, pixels);   // read in place during run
 *   ng_session_run(s);
 *   const float* out; const int64_t* out_shape; int rank;
 *   ng_session_get_output(s, "output", NULL, (const void**)&out, &out_shape, &rank);
 *   ng_session_free(s); ng_model_free(model);
 *
 * Every function returns NG_OK or an error code; ng_last_error() then describes the failure (per thread).
 * Pointers returned by ng_session_get_output stay valid until the next ng_session_run or ng_session_free.
 */
#ifndef NINEGRID_C_H
#define NINEGRID_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { NG_OK = 0, NG_ERROR = 1, NG_INVALID_ARGUMENT = 2 } ng_status;

/* Element types; the values match ONNX's TensorProto.DataType. */
typedef enum { NG_FLOAT32 = 1, NG_UINT8 = 2, NG_INT8 = 3, NG_INT32 = 6, NG_INT64 = 7 } ng_dtype;

typedef struct ng_model ng_model;
typedef struct ng_session ng_session;
typedef struct ng_options ng_options;

/* Options: all optional; pass NULL for defaults. */
ng_status ng_options_create(ng_options** out);
ng_status ng_options_set_threads(ng_options* o, int threads);
ng_status ng_options_set_opt_level(ng_options* o, int level);
ng_status ng_options_set_input_shape(ng_options* o, const char* input, const int64_t* shape, int rank);
ng_status ng_options_set_weights_path(ng_options* o, const char* path);
void ng_options_free(ng_options* o);

/* Loads an ONNX (.onnx) or ncnn (.param with .bin beside it) model. */
ng_status ng_model_load(const char* path, const ng_options* options, ng_model** out);
void ng_model_free(ng_model* m);
int ng_model_input_count(const ng_model* m);
int ng_model_output_count(const ng_model* m);
/* Name of input/output i (owned by the model), or NULL if i is out of range. */
const char* ng_model_input_name(const ng_model* m, int i);
const char* ng_model_output_name(const ng_model* m, int i);

ng_status ng_session_create(const ng_model* m, ng_session** out);
void ng_session_free(ng_session* s);
/* Binds an input without copying: `data` must stay valid and unchanged until ng_session_run returns. */
ng_status ng_session_set_input(ng_session* s, const char* name, ng_dtype dtype, const int64_t* shape, int rank,
                               const void* data);
ng_status ng_session_run(ng_session* s);
/* dtype may be NULL. */
ng_status ng_session_get_output(ng_session* s, const char* name, ng_dtype* dtype, const void** data,
                                const int64_t** shape, int* rank);

/* Message of the last failed call on this thread ("" if none). */
const char* ng_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* NINEGRID_C_H */
