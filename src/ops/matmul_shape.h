// The shapes numpy.matmul gives MatMul and MatMulInteger: A [..., M, K] times B [..., K, N], a 1-D A a row
// [1, K] and a 1-D B a column [K, 1] (the added dimension left out of the result), the leading (batch)
// dimensions broadcast right-aligned. One place for both ops' shape rules and batch indexing.
#pragma once

#include <cstdint>
#include <string>

#include "ninegrid/tensor.h"

namespace ninegrid {

struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  Shape batch;            // the output's batch dimensions
  Shape a_batch, b_batch;  // A's and B's, padded with leading 1s to batch's rank
  Shape output;

  int64_t batches() const { return shape_numel(batch); }
  // The matrix of A and of B that output batch `bt` reads (a broadcast dimension stays at 0).
  void operands_of(int64_t bt, int64_t* a_matrix, int64_t* b_matrix) const;
};

// The shapes for inputs of shapes a and b; an empty string, or what is wrong with them.
std::string infer_matmul_shape(const Shape& a, const Shape& b, MatMulShape* out);

}  // namespace ninegrid
