// The individual optimisation passes. Each takes a topologically sorted graph, keeps it sorted, and
// returns how many rewrites it made (for tests and `ninegrid info`).
#pragma once

#include "graph/infer_values.h"
#include "graph/layout_search.h"
#include "ir/graph.h"

namespace ninegrid {

// Identity and (inference) Dropout nodes are bypassed: their readers read the input directly.
int remove_identity(Graph& g);
// Nodes none of whose outputs is read by another node or is a graph output.
int remove_dead_nodes(Graph& g);
// DequantizeLinear -> Conv [-> Relu/Clip] -> QuantizeLinear islands become ng.QConv (int8 activations
// become uint8 first), and likewise Add, Gemm/MatMul, Concat, pools and value-moving ops their int8
// forms (fuse_qdq.cpp); returns how many islands were fused. Before fold_constants, which would fold the
// weights' DequantizeLinear into float constants.
int fuse_qdq(Graph& g);
// Nodes whose inputs are all known at load time (weights, and shapes when every input shape is fixed)
// are evaluated once and replaced by constants; every value's shape is recorded (annotate_shapes).
int fold_constants(Graph& g, const ResourceLimits& limits = {});
// BatchNormalization after a Conv, ConvTranspose or Gemm whose output it alone reads is folded into the
// weights and bias of that layer.
int fold_batchnorm(Graph& g);
// Mul and Add by per-channel (or scalar) constants after a Conv or ConvTranspose are folded into its
// weights and bias.
int fold_channel_affine(Graph& g);
// Spelled-out HardSwish subgraphs (x * relu6(x + 3) / 6, x * HardSigmoid(x)) become HardSwish nodes.
int recognize_hardswish(Graph& g);
// Mul(x, Sigmoid(x)) (PyTorch's SiLU) becomes an ng.Silu node.
int recognize_silu(Graph& g);
// 4-D tensors whose channel count is not a multiple of `multiple` get zero channels up to the next one
// where every node touching them allows it (convs, ReLUs, pools, Adds, zero-padding Concats), so they
// can be channel-blocked; graph inputs and outputs keep their shapes. Needs fixed input shapes.
int widen_channels(Graph& g, int64_t multiple);
// An Add of a Conv's output and another tensor of the same shape becomes the Conv's residual input.
int fuse_residual_add(Graph& g);
// An ng.QAdd of an ng.QConv's output (read by nothing else) and another uint8 tensor of the same shape
// moves into the conv's requantising epilogue, with the unfused graph's arithmetic (fuse_qadd.cpp).
int fuse_qadd_residual(Graph& g);
// An activation whose input is a Conv's output, read by nothing else, moves into the Conv's epilogue.
int fuse_activation(Graph& g);
// An element-wise activation after a Concat whose every part is a conv output read by nothing else moves
// into those convs' epilogues (RetinaFace's SSH modules: conv, conv, conv -> Concat -> Relu).
int fuse_activation_through_concat(Graph& g);
// A Mul and/or Add by scalar constants right after a Conv's fused activation (act(conv) * a + b, which
// cannot fold into the weights) become the conv's ng.affine_after. Returns how many convs took one.
int fuse_affine_after_activation(Graph& g);
// x + x * gate, with one gate value per (batch, channel), becomes one Mul that adds x after its product
// (ng.add_operand; fuse_gate_residual.cpp). Returns how many Adds the Muls took in.
int fuse_gate_residual(Graph& g);
// A 2-D ConvTranspose whose kernel equals its stride (b x b, unpadded, one group) becomes a 1x1 Conv to
// b * b times the channels and a DepthToSpace(b, DCR) (conv_transpose_as_pointwise.cpp), where its output
// channels are a multiple of `channel_multiple`; its fused activation goes to the Conv. Before the layout
// plan. Returns how many it rewrote.
int conv_transpose_as_pointwise(Graph& g, int64_t channel_multiple);
// Such a ConvTranspose (kernel == stride) reading only a DepthToSpace(DCR) becomes one 1x1 Conv on the
// shuffle's input and one DepthToSpace of both strides (a DBNet-style head's two ConvTransposes). After
// conv_transpose_as_pointwise. Returns how many it folded.
int fold_shuffle_into_conv_transpose(Graph& g);
// lateral + Resize(top) in nearest mode becomes the Resize adding the lateral as it writes
// (ng.add_operand = 4; fuse_upsample_add.cpp). After the layout plan. Returns how many Adds it took in.
int fuse_upsample_add(Graph& g);
// Small convs reading the same input with the same geometry and writing plain NCHW (detection heads)
// become one conv with their output channels concatenated, followed by a Split. Runs after plan_layout.
// Returns the number of merged groups.
int merge_sibling_convs(Graph& g);
// Chooses plain or channel-blocked (NCHW[P]c, P from max_block down to 8, or P = max_block when that is
// smaller: NEON's 4) storage for every 4-D float tensor, and for every 4-D int8 tensor of a quantised
// model (P from max_block, the ISA's int8 block, down to 4), and inserts ng.Reorder nodes where needed;
// returns how many. Needs fixed input shapes (else does nothing).
// `conv_blocks` (optional, indexed by node of `g` as given): the output block the global layout search
// (graph/layout_search.h) chose for a Conv, 0 for the rules' (ops/conv_select.h); taken where the conv's
// output is blocked at all and no fused residual decides it.
int plan_layout(Graph& g, int max_block, const std::vector<int64_t>* conv_blocks = nullptr);
// The layout pass's view of `g` (before plan_layout) for the global layout search: one problem node per
// graph node whose layout matters, in order, each Conv's `tag` its node index and its `choices` the
// rules' block first, then the other blocks that divide its channels (down to 8, 4 under NEON). The
// convs' costs and the transforms' are the caller's to fill in. Infers shapes where missing, as
// plan_layout does; empty without fixed shapes, and for a quantised graph (ng.QConv nodes, whose int8
// block rules the problem does not model).
LayoutProblem layout_problem(Graph& g, int max_block);

}  // namespace ninegrid
