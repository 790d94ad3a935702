#!/usr/bin/python3
"""Export torchvision classifiers to ONNX with PyTorch's own outputs, for whole-model correctness tests.

For each model: fixed seed, random initialisation (no weight download: weights=None), BatchNorm layers given
non-trivial statistics and affine parameters (so that an engine's BatchNorm folding is really exercised),
eval(), a fixed seeded input 1x3x224x224, and then

    <cache>/models/torchvision/<name>.onnx           torch.onnx.export, opset 13, static shapes, BN kept
    <cache>/models/torchvision/<name>.input.npy      the input (float32, 1x3x224x224)
    <cache>/models/torchvision/<name>.expected.npy   PyTorch's output on it (float32, 1x1000)

Each model is also run in float64; the float32 reference must agree with it to well within the tests'
tolerance (1e-4 of the output's range), otherwise the model is too ill-conditioned to be a fair test.

Run with Debian's interpreter: /usr/bin/python3 scripts/export_torchvision.py [--cache DIR] [--only NAME ...]
"""
import argparse
import collections
import os
import sys
import time
import warnings
import zlib

import numpy as np
import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (torchvision constructor, extra constructor arguments)
MODELS = collections.OrderedDict([
    ("mobilenet_v2", (torchvision.models.mobilenet_v2, {})),
    ("mobilenet_v3_large", (torchvision.models.mobilenet_v3_large, {})),
    ("resnet18", (torchvision.models.resnet18, {})),
    ("resnet50", (torchvision.models.resnet50, {})),
    ("shufflenet_v2_x1_0", (torchvision.models.shufflenet_v2_x1_0, {})),
    ("efficientnet_b0", (torchvision.models.efficientnet_b0, {})),
    ("squeezenet1_1", (torchvision.models.squeezenet1_1, {})),
    ("googlenet", (torchvision.models.googlenet, {"aux_logits": False, "init_weights": True})),
    ("regnet_y_400mf", (torchvision.models.regnet_y_400mf, {})),
])

INPUT_SHAPE = (1, 3, 224, 224)
# The float32 reference must sit this close to the float64 one (fraction of the output's range): 5x below
# the tests' 1e-4, so that a correct engine cannot fail them through the reference's own rounding.
REFERENCE_NOISE_LIMIT = 2e-5


def seed_for(name):
    # A stable per-model seed: each model's export does not depend on which others are exported.
    return 20240 + zlib.crc32(name.encode()) % 100000


def batchnorms(model):
    return [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def randomise_batchnorm(model, generator):
    """Give every BatchNorm random affine parameters and statistics that are plausible but not trivial.

    Random affine parameters first; then the running statistics are measured on a seeded calibration batch
    (so activations stay O(1) through deep networks; measured means and variances are far from 0 and 1) and
    perturbed a little: means shifted by 0.05 standard deviations, variances scaled by 0.8..1.25. Larger
    perturbations compound through deep networks with squeeze-excitation (EfficientNet) until float32 itself
    is too noisy to test against. Folding BN into a conv changes every weight and bias, which a wrong fold
    cannot hide.
    """
    bns = batchnorms(model)
    with torch.no_grad():
        for bn in bns:
            c = bn.num_features
            bn.weight.copy_(0.5 + torch.rand(c, generator=generator))
            bn.bias.copy_(0.1 * torch.randn(c, generator=generator))
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the calibration pass
        # Only the BatchNorms in training mode: dropout and stochastic depth stay off, so the statistics
        # are those of the network as it will be evaluated.
        model.eval()
        for bn in bns:
            bn.train()
        calibration = torch.randn((8,) + INPUT_SHAPE[1:], generator=generator)
        model(calibration)
        model.eval()
        for bn in bns:
            c = bn.num_features
            std = bn.running_var.sqrt()
            bn.running_mean.add_(0.05 * std * torch.randn(c, generator=generator))
            bn.running_var.mul_(torch.exp(torch.empty(c).uniform_(-0.22, 0.22, generator=generator)))
            bn.momentum = 0.1
    return len(bns)


def build(name):
    constructor, kwargs = MODELS[name]
    torch.manual_seed(seed_for(name))
    generator = torch.Generator().manual_seed(seed_for(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GoogLeNet warns about its (intended) init_weights choice
        model = constructor(weights=None, **kwargs)
    bn_count = randomise_batchnorm(model, generator)
    model.eval()
    x = torch.randn(INPUT_SHAPE, generator=generator)
    return model, x, bn_count


def export_one(name, out_dir):
    start = time.time()
    model, x, bn_count = build(name)
    with torch.no_grad():
        expected = model(x)
        expected64 = model.double()(x.double())
        model.float()
    if not torch.isfinite(expected).all():
        raise SystemExit(f"{name}: PyTorch's output is not finite")
    span = float(expected.max() - expected.min())
    noise = float((expected.double() - expected64).abs().max()) / span
    if noise > REFERENCE_NOISE_LIMIT:
        raise SystemExit(f"{name}: float32 reference differs from float64 by {noise:.2e} of the output range "
                         f"(limit {REFERENCE_NOISE_LIMIT}): too ill-conditioned to test against")

    onnx_path = os.path.join(out_dir, name + ".onnx")
    tmp_path = onnx_path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # PRESERVE (the model is in eval mode) keeps BatchNormalization nodes: in EVAL mode the exporter
        # would fold them into the convs itself, and the engine's own folding would go untested.
        torch.onnx.export(model, (x,), tmp_path, opset_version=13, input_names=["input"],
                          output_names=["output"], do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE)
    np.save(os.path.join(out_dir, name + ".input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out_dir, name + ".expected.npy"), expected.numpy().astype(np.float32))
    os.replace(tmp_path, onnx_path)  # last, so a present .onnx means a complete export

    import onnx
    graph = onnx.load(onnx_path, load_external_data=False).graph
    ops = collections.Counter(node.op_type for node in graph.node)
    print(f"{name}: {time.time() - start:.1f}s, output {tuple(expected.shape)} range [{float(expected.min()):.3g}, "
          f"{float(expected.max()):.3g}], float32-vs-float64 {noise:.1e} of range, {bn_count} BatchNorm")
    print("    ops: " + ", ".join(f"{op} {n}" for op, n in sorted(ops.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=os.environ.get("NINEGRID_CACHE", os.path.join(REPO, ".cache")))
    parser.add_argument("--only", nargs="+", choices=list(MODELS), help="export only these models")
    parser.add_argument("--missing", action="store_true", help="skip models whose .onnx already exists")
    args = parser.parse_args()

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    out_dir = os.path.join(args.cache, "models", "torchvision")
    os.makedirs(out_dir, exist_ok=True)
    names = args.only or list(MODELS)
    for name in names:
        if args.missing and os.path.exists(os.path.join(out_dir, name + ".onnx")):
            print(f"{name}: present, skipped")
            continue
        export_one(name, out_dir)
    print(f"torchvision exports in {out_dir}")


if __name__ == "__main__":
    sys.exit(main())
