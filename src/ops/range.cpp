// Range: the 1-D sequence start, start + delta, ... up to (not including) limit. The three scalars must be
// known at plan time, since they decide the output's length.
#include <cmath>
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

// A scalar read as double (float types) or int64 (integer types).
struct Scalar {
  double f = 0;
  int64_t i = 0;
};

bool is_float_type(DataType t) { return t == DataType::Float32 || t == DataType::Float64; }

class Range final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 3, 3);
    const DataType t = in[0].dtype;
    if (t != DataType::Float32 && t != DataType::Float64 && t != DataType::Int16 && t != DataType::Int32 &&
        t != DataType::Int64)
      error(std::string("element type ") + dtype_name(t) + " is unsupported (float, double, int16, int32, int64)");
    static const char* names[] = {"start", "limit", "delta"};
    Scalar v[3];
    for (int k = 0; k < 3; ++k) {
      if (in[k].dtype != t)
        error(std::string("'") + names[k] + "' is " + dtype_name(in[k].dtype) + " but 'start' is " + dtype_name(t));
      if (!in[k].value) contents_needed(static_cast<size_t>(k), std::string("input '") + names[k] + "'");
      if (in[k].value->numel() != 1)
        error(std::string("'") + names[k] + "' must be a scalar, got shape " + shape_str(in[k].shape));
      v[k] = read(*in[k].value);
    }
    start_ = v[0];
    delta_ = v[2];
    int64_t n = 0;
    if (is_float_type(t)) {
      if (delta_.f == 0 || std::isnan(delta_.f)) error("'delta' must be a non-zero number");
      const double count = std::ceil((v[1].f - v[0].f) / delta_.f);
      if (std::isnan(count) || count > double(int64_t(1) << 40))
        error("the range from " + std::to_string(v[0].f) + " to " + std::to_string(v[1].f) + " by " +
              std::to_string(delta_.f) + " has too many elements");
      n = count > 0 ? static_cast<int64_t>(count) : 0;
    } else {
      if (delta_.i == 0) error("'delta' must not be 0");
      // Unsigned distances cannot overflow, whatever the int64 endpoints.
      const bool up = delta_.i > 0;
      if (up ? v[1].i > v[0].i : v[1].i < v[0].i) {
        const uint64_t dist = up ? static_cast<uint64_t>(v[1].i) - static_cast<uint64_t>(v[0].i)
                                 : static_cast<uint64_t>(v[0].i) - static_cast<uint64_t>(v[1].i);
        const uint64_t step = up ? static_cast<uint64_t>(delta_.i) : uint64_t(0) - static_cast<uint64_t>(delta_.i);
        const uint64_t count = (dist - 1) / step + 1;
        if (count > (uint64_t(1) << 40)) error("the range has too many elements (" + std::to_string(count) + ")");
        n = static_cast<int64_t>(count);
      }
    }
    out[0].dtype = t;
    out[0].shape = {n};
  }

  void run(OpContext& ctx) override {
    Tensor& y = ctx.output(0);
    const int64_t n = y.numel();
    switch (y.dtype()) {
      case DataType::Float32: fill<float>(y, n); break;
      case DataType::Float64: fill<double>(y, n); break;
      case DataType::Int16: fill<int16_t>(y, n); break;
      case DataType::Int32: fill<int32_t>(y, n); break;
      case DataType::Int64: fill<int64_t>(y, n); break;
      default: error("unreachable element type");
    }
  }

 private:
  static Scalar read(const Tensor& t) {
    Scalar s;
    switch (t.dtype()) {
      case DataType::Float32: s.f = t.data_as<float>()[0]; break;
      case DataType::Float64: s.f = t.data_as<double>()[0]; break;
      case DataType::Int16: s.i = t.data_as<int16_t>()[0]; break;
      case DataType::Int32: s.i = t.data_as<int32_t>()[0]; break;
      case DataType::Int64: s.i = t.data_as<int64_t>()[0]; break;
      default: break;
    }
    return s;
  }

  template <class T>
  void fill(Tensor& y, int64_t n) const {
    T* p = y.data_as<T>();
    for (int64_t k = 0; k < n; ++k) {
      if (std::is_floating_point<T>::value)
        p[k] = static_cast<T>(start_.f + static_cast<double>(k) * delta_.f);
      else  // every value lies between start and limit, so it fits T; the unsigned sum avoids signed overflow
        p[k] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(start_.i) +
                                                   static_cast<uint64_t>(k) * static_cast<uint64_t>(delta_.i)));
    }
  }

  Scalar start_, delta_;
};

NINEGRID_REGISTER_OP("Range", Range);

}  // namespace
}  // namespace ninegrid
