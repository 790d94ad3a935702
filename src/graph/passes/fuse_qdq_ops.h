// The QDQ islands fuse_qdq() turns into int8 ops besides Conv and Add (fuse_qdq.cpp): fully connected
// layers, Concat of differently scaled inputs, average pooling and data movement. Each returns how many it fused;
// they run after activations_to_uint8, on uint8 DequantizeLinear/QuantizeLinear pairs.
#pragma once

#include "ir/graph.h"

namespace ninegrid {

// DQ(x) -> Gemm(alpha = beta = 1, transA = 0; B = DQ(int8 constant), C = [N] bias or none) or
// DQ(x) -> MatMul(B = DQ(int8 constant matrix)), then [Relu | Clip ->] Q   ->  ng.QGemm.
int fuse_gemm_islands(Graph& g);
// Concat(DQ(x_0), DQ(x_1), ...) [-> Relu | Clip] -> Q with parameters that differ, or with the
// activation  ->  ng.QConcat (the activation its clamp).
int fuse_concat_islands(Graph& g);
// DQ(x) -> AveragePool | GlobalAveragePool -> Q  ->  ng.QAveragePool | ng.QGlobalAveragePool.
int fuse_average_pool_islands(Graph& g);
// DQ(x) -> [ops that only move values (Reshape, Slice, nearest Resize, MaxPool, ...) ->] Q  ->  the same ops
// on x, with ng.QRequantize where the Q's parameters differ from the DQ's (fuse_qdq_moves.cpp).
int fuse_moving_chains(Graph& g);

}  // namespace ninegrid
