// ng.QAdd: C = A + B on uint8 tensors with numpy broadcasting, what graph/passes/fuse_qdq.cpp makes of
// Add(DequantizeLinear(a), DequantizeLinear(b)) [-> Relu] -> QuantizeLinear. Attributes: a_scale,
// a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point, qmin, qmax (a fused ReLU: qmin =
// y_zero_point). The arithmetic is kernels/quantized.h's QuantizedAdd. With ng.out_block = B > 1 (set by
// the layout pass) A, B and C are channel-blocked NCHW[B]c: element-wise, so only inputs of C's shape (or
// single values) are allowed then. Two inputs of C's shape run on the vector kernel (quantized_add: x86's in
// kernels/x86/qconv_kernels_x86.h, AArch64's in kernels/arm/qadd_arm.h, bit for bit QuantizedAdd), split over
// the pool; anything else on the reference's broadcasting loop.
#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "ir/quant_attrs.h"
#include "kernels/quantized.h"
#include "ops/binary_op.h"
#include "ops/blocked_layout.h"
#include "ops/exec_settings.h"
#if defined(__x86_64__)
#include "kernels/x86/qconv_kernels_x86.h"
#elif defined(__aarch64__)
#include "kernels/arm/qadd_arm.h"
#endif

namespace ninegrid {
namespace {

class QAdd final : public Op {
 public:
  explicit QAdd(const Node& node) : Op(node) {
    try {
      const TensorQuant a = read_tensor_quant(node.attrs, "a"), b = read_tensor_quant(node.attrs, "b");
      const TensorQuant y = read_tensor_quant(node.attrs, "y");
      add_.a_zero_point = a.zero_point, add_.b_zero_point = b.zero_point, add_.out_zero_point = y.zero_point;
      add_.a_multiplier = a.scale / y.scale;
      add_.b_multiplier = b.scale / y.scale;
      const QClamp clamp = read_qclamp(node.attrs);
      add_.qmin = clamp.qmin, add_.qmax = clamp.qmax;
    } catch (const Error& e) {
      error(e.what());
    }
    block_ = read_output_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    drop_fast();
    expect_inputs(in, 2, 2);
    out[0].shape = infer_binary_same_type(*this, TypeList<uint8_t>(), in);
    out[0].dtype = DataType::UInt8;
    if (block_ > 1) {
      expect_blockable_float_or_int8(*this, block_, TensorDesc{DataType::UInt8, out[0].shape, nullptr, true});
      for (const TensorDesc& t : in)
        if (t.shape != out[0].shape && shape_numel(t.shape) != 1)
          error("the channel-blocked layout (ng.out_block " + std::to_string(block_) +
                ") needs inputs of the output's shape " + shape_str(out[0].shape) + ", got " + shape_str(t.shape));
    }
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    drop_fast();
#if defined(__x86_64__) || defined(__aarch64__)
    if (in.size() != 2 || in[0].shape != in[1].shape) return;
    const Isa isa = runnable_isa(settings.isa);
#if defined(__x86_64__)
    if (isa == Isa::Ref || is_arm_isa(isa)) return;
    const bool vnni = isa >= Isa::Avx512 && cpu_features().avx512vnni;
    fast_ = vnni ? vnni::quantized_add : avx2::quantized_add;
    algorithm_ = vnni ? "int8-vnni-add" : "int8-avx2-add";
#else
    if (!is_arm_isa(isa)) return;
    fast_ = neon::quantized_add;
    algorithm_ = "int8-neon-add";
#endif
    fast_add_.a_zero_point = add_.a_zero_point, fast_add_.b_zero_point = add_.b_zero_point;
    fast_add_.out_zero_point = add_.out_zero_point;
    fast_add_.a_multiplier = add_.a_multiplier, fast_add_.b_multiplier = add_.b_multiplier;
    fast_add_.qmin = add_.qmin, fast_add_.qmax = add_.qmax;
#else
    (void)in, (void)settings;
#endif
  }

  void run(OpContext& ctx) override {
#if defined(__x86_64__) || defined(__aarch64__)
    const Tensor &a = ctx.input(0), &b = ctx.input(1);
    if (fast_ && a.shape() == b.shape()) {
      const uint8_t *pa = a.data_as<uint8_t>(), *pb = b.data_as<uint8_t>();
      uint8_t* y = ctx.output(0).data_as<uint8_t>();
      const int64_t n = a.numel();
      const Shape& s = a.shape();
      if (block_ > 1 && s.size() == 4) {
        // Blocked: in bands of rows per plane, the band the convs around it give each thread.
        const int64_t row = s[3] * block_;
        parallel_row_bands(ctx.pool, s, block_, n, [&](int64_t r0, int64_t r1) {
          fast_(fast_add_, pa + r0 * row, pb + r0 * row, y + r0 * row, (r1 - r0) * row);
        });
        return;
      }
      // Chunks of whole cache lines, at least 16 KiB each.
      constexpr int64_t kChunk = 16 * 1024;
      const int64_t chunks = (n + kChunk - 1) / kChunk;
      auto run = [&](int64_t begin, int64_t end) {
        const int64_t from = begin * kChunk, to = end * kChunk < n ? end * kChunk : n;
        fast_(fast_add_, pa + from, pb + from, y + from, to - from);
      };
      if (ctx.pool && ctx.pool->size() > 1 && chunks > 1) ctx.pool->parallel_for(chunks, run);
      else run(0, chunks);
      return;
    }
#endif
    run_broadcast_binary<uint8_t, uint8_t, uint8_t>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), add_);
  }

  std::string algorithm() const override { return algorithm_; }

 private:
  void drop_fast() {
#if defined(__x86_64__) || defined(__aarch64__)
    fast_ = nullptr;
#endif
    algorithm_ = "";
  }

  QuantizedAdd add_;
  const char* algorithm_ = "";
#if defined(__x86_64__) || defined(__aarch64__)
  // The vector kernel prepare() chose for two inputs of the output's shape, or null.
  void (*fast_)(const X86QuantizedAdd&, const uint8_t*, const uint8_t*, uint8_t*, int64_t) = nullptr;
  X86QuantizedAdd fast_add_;
#endif
  int64_t block_ = 1;  // channel block of A, B and C (1 = plain NCHW)
};

NINEGRID_REGISTER_OP("ng.QAdd", QAdd);

}  // namespace
}  // namespace ninegrid
