// ng.Reorder: the layout transform the layout pass inserts where a tensor's producer and reader disagree
// on the channel block (1 = plain NCHW, 8 or 16 = NCHW8c / NCHW16c). The logical shape is unchanged.
// float32, and the uint8 / int8 tensors of quantised models (plain loops: the planner keeps int8 tensors
// blocked from one quantised op to the next, so these run only where a model leaves its int8 part).
#include "kernels/ref/reorder_ref.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "core/cpu_features.h"
#include "ops/elementwise_common.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Reorder final : public Op {
 public:
  explicit Reorder(const Node& node) : Op(node) {
    from_ = node.attrs.get_int("from_block", 1);
    to_ = node.attrs.get_int("to_block", 1);
    if (from_ < 1 || to_ < 1) error("blocks must be positive");
  }
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    const DataType t = in[0].dtype;
    if (t != DataType::Float32 && t != DataType::UInt8 && t != DataType::Int8)
      error(std::string("unsupported: input of type ") + dtype_name(t) + " (float32, uint8 and int8 supported)");
    if (in[0].shape.size() != 4) error("expects a 4-D tensor, got " + shape_str(in[0].shape));
    const int64_t c = in[0].shape[1];
    if (c % from_ != 0 || c % to_ != 0)
      error("blocks " + std::to_string(from_) + " and " + std::to_string(to_) + " must divide the " +
            std::to_string(c) + " channels");
    out[0] = {t, in[0].shape, nullptr, true};
    isa_ = Isa::Ref;
  }
  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override { isa_ = settings.isa; }
  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3);
    if (x.dtype() != DataType::Float32) {
      const uint8_t* src = static_cast<const uint8_t*>(x.data());
      uint8_t* dst = static_cast<uint8_t*>(y.data());
      parallel_range(ctx.pool, n * c, n * c * plane, [&](int64_t b, int64_t e) {
        reorder_blocks_u8_ref(src, dst, c, plane, from_, to_, b, e);
      });
      return;
    }
    const float* src = x.data_as<float>();
    float* dst = y.data_as<float>();
#if defined(__x86_64__)
    // Plain <-> the vector width's block: the ISA kernels transpose whole P x P tiles in registers.
    const Isa isa = isa_;
    const int64_t blocked = from_ == 1 ? to_ : to_ == 1 ? from_ : 0;
    if ((blocked == 16 && isa >= Isa::Avx512) || (blocked == 8 && isa >= Isa::Avx2)) {
      const bool wide = blocked == 16;
      auto fn = from_ == 1 ? (wide ? avx512::reorder_nchw_to_blocked : avx2::reorder_nchw_to_blocked)
                           : (wide ? avx512::reorder_blocked_to_nchw : avx2::reorder_blocked_to_nchw);
      const int64_t blocks = c / blocked;
      ctx.pool->parallel_for(n * blocks, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t image = t / blocks, b = t % blocks;
          fn(src + image * c * plane, dst + image * c * plane, c, plane, b, b + 1);
        }
      });
      return;
    }
#elif defined(__aarch64__)
    const int64_t blocked = from_ == 1 ? to_ : to_ == 1 ? from_ : 0;
    if (blocked == 4 && is_arm_isa(isa_)) {
      auto fn = from_ == 1 ? neon::reorder_nchw_to_blocked : neon::reorder_blocked_to_nchw;
      const int64_t blocks = c / blocked;
      ctx.pool->parallel_for(n * blocks, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t image = t / blocks, b = t % blocks;
          fn(src + image * c * plane, dst + image * c * plane, c, plane, b, b + 1);
        }
      });
      return;
    }
#endif
    ctx.pool->parallel_for(n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        reorder_blocks_ref(src + b * c * plane, dst + b * c * plane, 1, c, plane, from_, to_);
    });
  }

 private:
  int64_t from_ = 1, to_ = 1;
  Isa isa_ = Isa::Ref;  // the vector transposes' instruction set (Ref: the reference kernel)
};

NINEGRID_REGISTER_OP("ng.Reorder", Reorder);

}  // namespace
}  // namespace ninegrid
