// Reference reductions (ReduceSum, ReduceMean, ReduceMax, ... ) over any set of axes, and ArgMax/ArgMin
// over one axis.
//
// ReduceGeometry views the input as its dimensions with size-1 ones dropped and neighbours of the same kind
// (kept or reduced) merged. If the innermost merged dimension is reduced, each output reduces contiguous
// runs; if it is kept, a row of outputs is accumulated together while the reduced dimensions stream by, so
// both read the input in memory order.
#pragma once

#include <cstdint>
#include <vector>

namespace ninegrid {
namespace ref {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

struct ReduceGeometry {
  std::vector<int64_t> dims;      // merged input dims, outermost first; never empty
  std::vector<char> reduced;      // per merged dim
  int64_t out_numel = 0;          // product of the kept dims
  int64_t reduce_count = 0;       // elements reduced into each output (may be 0)
  // The kernel's unit of work: one output when the innermost dim is reduced, else one row of
  // dims.back() outputs.
  int64_t work_units = 0;
};

// `reduce_axis[d]` says whether input dimension d is reduced.
ReduceGeometry make_reduce_geometry(const std::vector<int64_t>& shape, const std::vector<bool>& reduce_axis);

// Computes work units [begin, end) of the reduction; y is in row-major order of the kept dimensions.
// Empty reductions give the identity: 0 for sums, 1 for Prod, -inf / lowest for Max, +inf / max for Min,
// NaN for a float Mean (0 for an integer one), -inf for LogSum and LogSumExp. Floating-point sums
// accumulate in double. Instantiated for float, double, int32_t and int64_t (integers: Sum, Mean, Max,
// Min, Prod, L1, SumSquare, wrapping on overflow).
template <class T>
void reduce(ReduceKind kind, const ReduceGeometry& g, const T* x, T* y, int64_t begin, int64_t end);

// ArgMax (want_max) or ArgMin over the middle axis of x viewed as (outer, axis, inner), writing the index
// of the first (or, with last_index, the last) extreme element for outputs [begin, end) of the
// (outer, inner) result. Requires axis >= 1. Instantiated for the ONNX numeric types.
template <class T>
void arg_reduce(const T* x, int64_t* y, int64_t axis, int64_t inner, bool want_max, bool last_index, int64_t begin,
                int64_t end);

}  // namespace ref
}  // namespace ninegrid
