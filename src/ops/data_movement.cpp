#include "ops/data_movement.h"

#include <limits>

#include "kernels/ref/copy_strided.h"
#include "core/thread_pool.h"

namespace ninegrid {

namespace {
// Below this many bytes a copy is faster on one thread than the cost of waking the others.
constexpr int64_t kParallelCopyBytes = int64_t(256) << 10;
}  // namespace

std::vector<int64_t> dense_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

int64_t checked_numel(const Op& op, const Shape& shape, const char* what) {
  try {
    return shape_numel(shape);
  } catch (const Error& e) {
    op.error(std::string(what) + ": " + e.what());
  }
}

int64_t checked_mul(const Op& op, int64_t a, int64_t b, const char* what) {
  if (a < 0 || b < 0) op.error(std::string(what) + " is negative");
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    op.error(std::string(what) + " overflows (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  return a * b;
}

void expect_sized(const Op& op, const TensorDesc& t, const char* what) {
  if (dtype_size(t.dtype) == 0)
    op.error(std::string(what) + " has element type " + dtype_name(t.dtype) + ", which is unsupported");
}

std::vector<int> normalize_axes(const Op& op, const std::vector<int64_t>& axes, int rank) {
  std::vector<int> out;
  std::vector<char> seen(static_cast<size_t>(rank), 0);
  for (int64_t a : axes) {
    const int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank)
      op.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (seen[static_cast<size_t>(n)]) op.error("axis " + std::to_string(a) + " is repeated");
    seen[static_cast<size_t>(n)] = 1;
    out.push_back(static_cast<int>(n));
  }
  return out;
}

std::vector<int64_t> checked_indices(const Op& op, const Tensor& t, int64_t dim) {
  if (t.dtype() != DataType::Int64 && t.dtype() != DataType::Int32)
    op.error(std::string("indices must be int64 or int32, got ") + dtype_name(t.dtype()));
  std::vector<int64_t> idx(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = t.dtype() == DataType::Int64 ? t.data_as<int64_t>()[i] : t.data_as<int32_t>()[i];
    if (v < -dim || v >= dim)
      op.error("index " + std::to_string(v) + " is out of range for an axis of size " + std::to_string(dim));
    idx[static_cast<size_t>(i)] = v < 0 ? v + dim : v;
  }
  return idx;
}

void parallel_copy_strided(ThreadPool* pool, void* dst, const void* src, size_t elem_size, const Shape& shape,
                           const std::vector<int64_t>& src_strides) {
  const int rank = static_cast<int>(shape.size());
  const int64_t total = shape_numel(shape);
  if (total == 0) return;
  if (!pool || pool->size() <= 1 || rank == 0 || shape[0] < 2 ||
      total * static_cast<int64_t>(elem_size) < kParallelCopyBytes) {
    ref::copy_strided(dst, src, elem_size, rank, shape.data(), src_strides.data());
    return;
  }
  const int64_t row_elems = total / shape[0];  // output elements per index of the outermost dimension
  Shape part = shape;
  pool->parallel_for(shape[0], [&](int64_t begin, int64_t end) {
    Shape sub = part;
    sub[0] = end - begin;
    ref::copy_strided(static_cast<uint8_t*>(dst) + begin * row_elems * static_cast<int64_t>(elem_size),
                      static_cast<const uint8_t*>(src) + begin * src_strides[0] * static_cast<int64_t>(elem_size),
                      elem_size, rank, sub.data(), src_strides.data());
  });
}

}  // namespace ninegrid
