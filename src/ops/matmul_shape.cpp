#include "ops/matmul_shape.h"

#include <algorithm>

namespace ninegrid {

std::string infer_matmul_shape(const Shape& a_in, const Shape& b_in, MatMulShape* out) {
  if (a_in.empty() || b_in.empty())
    return "inputs must have rank 1 or more, got " + shape_str(a_in) + " and " + shape_str(b_in);
  Shape a = a_in, b = b_in;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  if (b[b.size() - 2] != s.k)
    return "inner dimensions differ: A " + shape_str(a_in) + " has K = " + std::to_string(s.k) + ", B " +
           shape_str(b_in) + " has K = " + std::to_string(b[b.size() - 2]);
  const size_t batch_rank = std::max(a.size(), b.size()) - 2;
  s.batch.assign(batch_rank, 1);
  s.a_batch.assign(batch_rank, 1);
  s.b_batch.assign(batch_rank, 1);
  const size_t a_skip = batch_rank - (a.size() - 2), b_skip = batch_rank - (b.size() - 2);
  for (size_t i = 0; i < batch_rank; ++i) {
    if (i >= a_skip) s.a_batch[i] = a[i - a_skip];
    if (i >= b_skip) s.b_batch[i] = b[i - b_skip];
    if (s.a_batch[i] != s.b_batch[i] && s.a_batch[i] != 1 && s.b_batch[i] != 1)
      return "batch dimensions of A " + shape_str(a_in) + " and B " + shape_str(b_in) + " do not broadcast";
    s.batch[i] = s.a_batch[i] == 1 ? s.b_batch[i] : s.a_batch[i];
  }
  s.output = s.batch;
  if (!a_vector) s.output.push_back(s.m);
  if (!b_vector) s.output.push_back(s.n);
  *out = std::move(s);
  return {};
}

void MatMulShape::operands_of(int64_t bt, int64_t* a_matrix, int64_t* b_matrix) const {
  int64_t rem = bt, ai = 0, bi = 0, a_stride = 1, b_stride = 1;
  for (size_t d = batch.size(); d-- > 0;) {
    const int64_t coord = rem % batch[d];
    rem /= batch[d];
    if (a_batch[d] != 1) ai += coord * a_stride;
    if (b_batch[d] != 1) bi += coord * b_stride;
    a_stride *= a_batch[d];
    b_stride *= b_batch[d];
  }
  *a_matrix = ai;
  *b_matrix = bi;
}

}  // namespace ninegrid
