/* ninegrid C API: load a model, run it, read outputs. For C and for other languages' FFIs.
 *
 *   ng_model* model = NULL;
 *   if (ng_model_load("model.onnx", NULL, &model) != NG_OK) { puts(ng_last_error()); return 1; }
 *   ng_session* s = NULL;
 *   ng_session_create(model, &s);
 *   int64_t shape[4] = {1, 3, 224, 224};
 *   ng_session_set_input(s, "input", NG_FLOAT32, shape, 4, pixels);   // borrowed for the next run only
 *   ng_session_run(s);
 *   const float* out; const int64_t* out_shape; int rank;
 *   ng_session_get_output(s, "output", NULL, (const void**)&out, &out_shape, &rank);
 *   ng_session_free(s); ng_model_free(model);
 *
 * Errors: every function that can fail returns NG_OK, NG_ERROR (the model, an input or the run was
 * refused) or NG_INVALID_ARGUMENT (a NULL pointer or an impossible value); ng_last_error() then says
 * which call failed, on which file, node or input, and why (per thread; "" after a call that succeeded).
 *
 * Lifetimes and ownership:
 * - Input data is borrowed, never copied, and only for the next ng_session_run: it must stay valid and
 *   unchanged until that run returns, after which the session no longer refers to it. Every run needs its
 *   inputs set again; a run with an input not set since the last run fails with NG_ERROR naming it.
 * - Output pointers (data and shape) from ng_session_get_output belong to the session and stay valid
 *   until the next ng_session_run or ng_session_free on it, whichever comes first; copy what you keep
 *   longer. After a failed run there are no outputs (ng_session_get_output fails).
 * - Strings from ng_model_* belong to the model and live until ng_model_free. A session keeps its model's
 *   engine alive, so ng_model_free may come before ng_session_free.
 * - Profile strings from ng_session_profile_* belong to the session and stay valid until the next
 *   ng_session_profile_count or ng_session_free on it.
 * - A session is used by one thread at a time: a call made while another thread is inside a call on the
 *   same session fails with NG_ERROR instead of racing. Different sessions, of one model or several, may
 *   run at once on different threads.
 */
#ifndef NINEGRID_C_H
#define NINEGRID_C_H

#include <stddef.h>
#include <stdint.h>

#include "ninegrid/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { NG_OK = 0, NG_ERROR = 1, NG_INVALID_ARGUMENT = 2 } ng_status;

/* Element types; the values match ONNX's TensorProto.DataType. Every type of the C++ API's DataType
 * except strings, which the engine does not support. */
typedef enum {
  NG_UNDEFINED = 0, /* only returned by the queries below, for a NULL model or an index out of range */
  NG_FLOAT32 = 1,
  NG_UINT8 = 2,
  NG_INT8 = 3,
  NG_UINT16 = 4,
  NG_INT16 = 5,
  NG_INT32 = 6,
  NG_INT64 = 7,
  NG_BOOL = 9, /* one byte, 0 or 1 */
  NG_FLOAT16 = 10,
  NG_FLOAT64 = 11,
  NG_UINT32 = 12,
  NG_UINT64 = 13,
  NG_BFLOAT16 = 16 /* two bytes: the upper half of a float32's bits (uint16_t in C) */
} ng_dtype;

/* The library's version, "MAJOR.MINOR.PATCH" (NINEGRID_VERSION is the headers'). */
const char* ng_version(void);

typedef struct ng_model ng_model;
typedef struct ng_session ng_session;
typedef struct ng_options ng_options;

/* Options: all optional; pass NULL for defaults. Numbers are checked by the setters, names (isa,
 * conv_algorithms) when a model is loaded with them. The options are copied by ng_model_load*: they may
 * be changed or freed afterwards. */
ng_status ng_options_create(ng_options** out);
ng_status ng_options_set_threads(ng_options* o, int threads); /* worker threads per session; 0: one per core */
ng_status ng_options_set_opt_level(ng_options* o, int level); /* 0 none, 1 fusion and folding, 2 also layouts */
ng_status ng_options_set_input_shape(ng_options* o, const char* input, const int64_t* shape, int rank);
ng_status ng_options_set_weights_path(ng_options* o, const char* path); /* ncnn: the .bin file */
/* The kernels' instruction set: "" for the best this CPU has, or a cap: "ref", "avx2", "avx512" (x86-64), "neon",
   "dotprod" (AArch64). */
ng_status ng_options_set_isa(ng_options* o, const char* isa);
/* The algorithms a convolution may choose among: "" for all, or a comma-separated subset of
 * "winograd", "strassen", "direct", "indirect". */
ng_status ng_options_set_conv_algorithms(ng_options* o, const char* algorithms);
/* Winograd's output tile: 0 chooses per layer; 2, 4 or 6 forces it. */
ng_status ng_options_set_winograd_tile(ng_options* o, int tile);
/* How long an idle worker thread may spin before it sleeps, in microseconds: -1 lets the engine choose
 * (the default), 0 never spins, at most 1000000. Threads spin only while the process has cores to spare. */
ng_status ng_options_set_spin_microseconds(ng_options* o, int microseconds);
/* The tuning cache `ninegrid tune` writes (conv plans and layouts measured on this CPU, used at load time in
 * place of the rules' where it holds entries): a file to read instead of the default
 * $XDG_CACHE_HOME/ninegrid/tuning.cache; "" restores the default. A file that is not a valid tuning cache is
 * ignored with a warning (ng_model_warnings). */
ng_status ng_options_set_tuning_cache(ng_options* o, const char* path);
/* 0: read no tuning cache (every conv runs the rules' plan); 1, the default: read it. */
ng_status ng_options_set_use_tuning_cache(ng_options* o, int use);
/* The resource budget, checked before anything is allocated or run: a model or input shape that needs
 * more is refused with an error naming the node and the size. 0 removes a limit; the defaults (4 GiB for
 * one tensor, 8 GiB of working memory per session, 4 GiB for a model or weights file) are far above real
 * models. */
ng_status ng_options_set_max_tensor_bytes(ng_options* o, int64_t bytes);
ng_status ng_options_set_max_arena_bytes(ng_options* o, int64_t bytes);
ng_status ng_options_set_max_file_bytes(ng_options* o, int64_t bytes);
void ng_options_free(ng_options* o); /* NULL is allowed */

/* Loads an ONNX (.onnx) or ncnn (.param with .bin beside it) model; *out is NULL on failure. */
ng_status ng_model_load(const char* path, const ng_options* options, ng_model** out);
/* The same from memory: an ONNX ModelProto's bytes. The bytes are copied; free them when this returns.
 * Like files, they are held to the max_file_bytes limit. */
ng_status ng_model_load_onnx_memory(const void* data, size_t size, const ng_options* options, ng_model** out);
/* The same from memory: an ncnn .param text (param_size bytes, no terminating NUL needed) and its .bin
 * weights. Both are copied, and each is held to the max_file_bytes limit. */
ng_status ng_model_load_ncnn_memory(const char* param, size_t param_size, const void* weights, size_t weights_size,
                                    const ng_options* options, ng_model** out);
void ng_model_free(ng_model* m); /* NULL is allowed */
int ng_model_input_count(const ng_model* m);  /* 0 for NULL */
int ng_model_output_count(const ng_model* m); /* 0 for NULL */
/* Name of input/output i (owned by the model), or NULL if m is NULL or i is out of range. */
const char* ng_model_input_name(const ng_model* m, int i);
const char* ng_model_output_name(const ng_model* m, int i);
/* Element type of input/output i; NG_UNDEFINED if m is NULL or i is out of range. */
ng_dtype ng_model_input_dtype(const ng_model* m, int i);
ng_dtype ng_model_output_dtype(const ng_model* m, int i);
/* Shape of input/output i, as known after loading: ng_model_*_rank gives the number of dimensions, and
 * ng_model_*_shape the dimensions (owned by the model; NULL for rank 0), -1 for one that is dynamic
 * (decided by the inputs given to a run). Shapes set with ng_options_set_input_shape count as fixed, and
 * output shapes are inferred from the inputs' when those are fixed. The rank is -1 if m is NULL, i is
 * out of range, or, for an output, the rank itself is not known before a run (its shape depends on the
 * inputs' contents and the model declares none).
 *
 *   int rank = ng_model_input_rank(m, 0);
 *   const int64_t* dims = ng_model_input_shape(m, 0);
 *   for (int d = 0; d < rank; ++d)
 *     if (dims[d] < 0) printf("dim %d is dynamic: %s\n", d, ng_model_input_dim_name(m, 0, d));
 */
int ng_model_input_rank(const ng_model* m, int i);
int ng_model_output_rank(const ng_model* m, int i);
const int64_t* ng_model_input_shape(const ng_model* m, int i);
const int64_t* ng_model_output_shape(const ng_model* m, int i);
/* The model's name (symbol) for dimension `dim` of input/output i when that dimension is dynamic (ONNX's
 * dim_param, e.g. "batch"; owned by the model); "" for a fixed dimension or a dynamic one the model does
 * not name; NULL if m is NULL or i or dim is out of range. */
const char* ng_model_input_dim_name(const ng_model* m, int i, int dim);
const char* ng_model_output_dim_name(const ng_model* m, int i, int dim);
/* "onnx" or "ncnn"; the kernels' instruction set ("avx512", "avx2", "neon", "dotprod", "ref"). NULL for a NULL
   model. */
const char* ng_model_format(const ng_model* m);
const char* ng_model_isa(const ng_model* m);
/* What loading noticed but worked around (an ignored tuning cache and why), one message per line; "" when
 * nothing; NULL for a NULL model. Owned by the model. */
const char* ng_model_warnings(const ng_model* m);

ng_status ng_session_create(const ng_model* m, ng_session** out);
void ng_session_free(ng_session* s); /* NULL is allowed */
/* Worker threads of the session, the calling thread included; 0 for NULL. */
int ng_session_threads(const ng_session* s);
/* Binds an input without copying. `data` (the elements, row-major, of `dtype`, as many as `shape` says)
 * is borrowed for the next ng_session_run only: it must stay valid and unchanged until that run returns,
 * and is not used after it. `data` may be NULL only for an empty tensor. */
ng_status ng_session_set_input(ng_session* s, const char* name, ng_dtype dtype, const int64_t* shape, int rank,
                               const void* data);
/* Runs on the inputs set since the last run (all of them must be), then releases them. */
ng_status ng_session_run(ng_session* s);
/* An output of the last successful run. `dtype` may be NULL. The data and shape pointers stay valid until
 * the next ng_session_run or ng_session_free on this session. */
ng_status ng_session_get_output(ng_session* s, const char* name, ng_dtype* dtype, const void** data,
                                const int64_t** shape, int* rank);

/* Profiling: with it on (`on` non-zero), each run times every step. ng_session_profile_count takes a
 * snapshot of the session's plan (its steps, in execution order, with the times of the last profiled run;
 * 0 steps before the session is planned, which happens at creation when every input shape is fixed, else
 * at the first run) and sets *count. The getters read step `step` of the last snapshot; the strings belong
 * to the session and stay valid until the next ng_session_profile_count or ng_session_free. Out of range
 * (or no snapshot): NULL for strings, -1 for numbers. */
ng_status ng_session_set_profiling(ng_session* s, int on);
ng_status ng_session_profile_count(ng_session* s, int* count);
const char* ng_session_profile_name(const ng_session* s, int step);    /* the node's name */
const char* ng_session_profile_op_type(const ng_session* s, int step); /* "Conv", ... */
/* Ops merged into this step, comma-separated ("Add,Relu"); "" if none. */
const char* ng_session_profile_fused(const ng_session* s, int step);
/* Kernel and instruction set, e.g. "winograd43/avx512"; "ref" for the reference kernels. */
const char* ng_session_profile_algorithm(const ng_session* s, int step);
const char* ng_session_profile_precision(const ng_session* s, int step); /* "fp32", ... */
const char* ng_session_profile_layout(const ng_session* s, int step);    /* "NCHW", "NCHW16c", ... */
double ng_session_profile_time_ms(const ng_session* s, int step);        /* 0 if not timed */
int64_t ng_session_profile_macs(const ng_session* s, int step);          /* multiply-accumulates */
int64_t ng_session_profile_bytes(const ng_session* s, int step);         /* of its inputs and outputs */

/* Message of the last call on this thread that returned an ng_status: "" if it succeeded. Valid until the
 * next such call on this thread. */
const char* ng_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* NINEGRID_C_H */
