// Reference quantised average pooling (ng.QAveragePool, ng.QGlobalAveragePool): exact integer window
// sums requantised by kernels/quantized_ops.h's QuantizedAverage. Plain NCHW uint8.
#pragma once

#include <cstdint>

#include "kernels/quantized_ops.h"
#include "kernels/ref/pool_ref.h"

namespace ninegrid {

// The window geometry and divisor are AveragePool's (kernels/ref/pool_ref.h): the count is the taps
// inside the input, or with count_include_pad also those in the padding, which add nothing to the sum
// (a padded tap is the real value 0, x = zero point). A window without counted taps gives the real 0.
// Processes planes [plane_begin, plane_end).
void qaverage_pool_ref(const PoolParams& p, bool count_include_pad, const QuantizedAverage& q, const uint8_t* x,
                       uint8_t* y, int64_t plane_begin, int64_t plane_end);

// The mean of each whole plane of `plane_size` values: y[plane].
void qglobal_average_pool_ref(int64_t plane_size, const QuantizedAverage& q, const uint8_t* x, uint8_t* y,
                              int64_t plane_begin, int64_t plane_end);

}  // namespace ninegrid
