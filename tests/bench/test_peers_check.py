#!/usr/bin/env python3
"""bench/peers/peers.py, the check that keeps a broken peer conversion out of bench/compare.py --peers: its
.npy reader against NumPy's writer, output matching (by name, by unique size, none), the cosine that decides
'ok' against 'mismatch', running a command and judging what it wrote, compare.py's peer tables, its
thread table and its phase table on made-up rows (ninegrid's own check row among them), and convert_models.py's
MNN quantiser configs with the rule that quantises again when the config changes (a stand-in quantized.out). No
peer build needed."""
import json
import os
import stat
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import peers  # noqa: E402
import compare  # noqa: E402
import convert_models  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


rng = np.random.default_rng(7)
with tempfile.TemporaryDirectory() as tmp:
    ref, good, bad = (os.path.join(tmp, d) for d in ("ref", "good", "bad"))
    for d in (ref, good, bad):
        os.makedirs(d)
    a = rng.standard_normal((1, 4, 20, 20)).astype(np.float32)
    b = rng.standard_normal((1, 1000)).astype(np.float32)
    np.save(os.path.join(ref, "boxes.npy"), a)
    np.save(os.path.join(ref, "logits.npy"), b)

    shape, values = peers.read_npy(os.path.join(ref, "boxes.npy"))
    expect(shape == (1, 4, 20, 20), f"read_npy shape {shape}")
    expect(np.array_equal(np.frombuffer(values.tobytes(), np.float32), a.ravel()), "read_npy values")

    # A faithful conversion: the same values up to rounding, ncnn-style without the batch dimension, and an
    # output under another name that is the only one of its size.
    np.save(os.path.join(good, "boxes.npy"), a[0] + 1e-5 * rng.standard_normal(a[0].shape).astype(np.float32))
    np.save(os.path.join(good, "fc_out.npy"), b)
    pairs = dict(peers.compare_outputs(ref, good))
    expect(set(pairs) == {"boxes", "logits"}, f"matched outputs {pairs}")
    expect(all(c is not None and c > 0.9999 for c in pairs.values()), f"faithful cosines {pairs}")

    # A broken one: one output with its channels in the wrong order, one of a different size.
    np.save(os.path.join(bad, "boxes.npy"), a[:, ::-1].copy())
    np.save(os.path.join(bad, "logits.npy"), b[:, :999].copy())
    pairs = dict(peers.compare_outputs(ref, bad))
    expect(pairs["boxes"] is not None and pairs["boxes"] < 0.5, f"permuted output cosine {pairs['boxes']}")
    expect(pairs["logits"] is None, f"an output of another size must not match: {pairs['logits']}")

    expect(abs(peers.cosine([1, 2, 3], [-1, -2, -3]) + 1) < 1e-12, "cosine of opposite vectors")
    expect(peers.cosine([0, 0], [0, 0]) == 1.0 and peers.cosine([0, 0], [1, 0]) == 0.0, "cosine of zero vectors")

    shapes = peers.input_shapes(ref)
    expect(shapes == ["--shape", "boxes=1x4x20x20", "--shape", "logits=1x1000"], f"input_shapes {shapes}")

    # The check's inputs: ORT's 0..1 pattern becomes what the model's preprocessing makes of 0..255 pixels
    # (torchvision's mean and scale for resnet18 and its int8 row), other inputs stay as they are.
    pix = os.path.join(tmp, "pix")
    os.makedirs(pix)
    u = rng.random((1, 3, 4, 5), dtype=np.float32)
    np.save(os.path.join(pix, "input.npy"), u)
    np.save(os.path.join(pix, "mask.npy"), u[:, :1])
    expect(peers.pixel_like_inputs(pix, "resnet18_int8"), "pixel_like_inputs changed nothing")
    mean = np.array([123.675, 116.28, 103.53], np.float32).reshape(1, 3, 1, 1)
    norm = np.array([0.017125, 0.017507, 0.017429], np.float32).reshape(1, 3, 1, 1)
    expect(np.allclose(np.load(os.path.join(pix, "input.npy")), (u * 255 - mean) * norm, atol=1e-5),
           "pixel-like input values")
    expect(np.array_equal(np.load(os.path.join(pix, "mask.npy")), u[:, :1]), "a 1-channel input must stay")
    expect(not peers.pixel_like_inputs(pix, "blazeface"), "no preprocessing known for blazeface")

    # run_and_compare: a command that writes the faithful outputs passes, one that writes the broken ones is a
    # mismatch, one that fails is reported as failed with its last line.
    copy = "import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])"
    out1, out2 = os.path.join(tmp, "run1"), os.path.join(tmp, "run2")
    status, worst, _ = peers.run_and_compare([sys.executable, "-c", copy, good, out1], ref, out1, 0.999)
    expect(status == "ok" and worst > 0.9999, f"run_and_compare faithful: {status} {worst}")
    status, worst, _ = peers.run_and_compare([sys.executable, "-c", copy, bad, out2], ref, out2, 0.999)
    expect(status == "mismatch" and worst is None, f"run_and_compare broken: {status} {worst}")
    status, worst, detail = peers.run_and_compare(
        [sys.executable, "-c", "import sys; sys.exit('no such model')"], ref, os.path.join(tmp, "run3"), 0.999)
    expect(status == "failed" and worst is None and detail == ["no such model"], f"run_and_compare failed: {detail}")

# compare.py's peer tables: the best engine per row, its ratio, and a peer that was not timed.
row = {"model": "m", "threads": 1, "ninegrid_ms": 6.0, "ort_ms": 9.0, "ninegrid_load_ms": 1.0, "ort_load_ms": 2.0,
       "ninegrid_rss_mb": 10.0, "ort_rss_mb": 20.0,
       "peers": {"ncnn": {"ms": 4.0, "load_ms": 3.0, "rss_mb": 30.0}}}
lines = compare.peer_tables([row], ["ncnn", "mnn"], [("m", "ninegrid", "mismatch", 0.9, ["out: 0.9"]),
                                                     ("m", "mnn", "mismatch", 0.5, ["out: 0.5"])], "/nonexistent")
latency = next(line for line in lines if line.startswith("| m | 1 | 6.000"))
expect(latency == "| m | 1 | 6.000 | 9.000 | 4.000 | — | ncnn | 1.50 |", f"latency row {latency}")
expect(any(line.startswith("| m | MNN | mismatch | 0.500000 |") for line in lines), "check row")
expect(any(line.startswith("| m | ninegrid | mismatch | 0.900000 |") for line in lines), "ninegrid's check row")

# compare.py's thread table: speed-ups from one thread, the ratio to ORT at both counts, and whether it got
# worse; a model timed at one count only has no row, and a run at one thread only has no table.
def timing(model, threads, ng, ort):
    return {"model": model, "threads": threads, "ninegrid_ms": ng, "ort_ms": ort, "ratio": ng / ort}


rows = [timing("a", 1, 10.0, 20.0), timing("a", 2, 5.5, 10.0), timing("b", 1, 6.0, 10.0), timing("b", 2, 3.0, 6.0),
        timing("c", 2, 1.0, 2.0), timing("d", 1, 8.0, 16.0), timing("d", 2, 4.0, 8.0)]
lines = compare.scaling_table(rows)
expect("| a | 2 | 1.82x | 2.00x | 0.50 | 0.55 | no |" in lines, f"thread row a {lines}")
expect("| b | 2 | 2.00x | 1.67x | 0.60 | 0.50 | yes |" in lines, f"thread row b {lines}")
expect("| d | 2 | 2.00x | 2.00x | 0.50 | 0.50 | yes |" in lines, f"thread row d (the same ratio) {lines}")
expect(not any(line.startswith("| c |") for line in lines), "a model without a one-thread row has no thread row")
expect(compare.scaling_table([timing("a", 1, 10.0, 20.0)]) == [], "one thread only: no thread table")

# compare.py's phase table: a row's rounds split at the median FMA peak, ninegrid's ratio to the row's best
# engine over all rounds (MNN's 42.0 ms against ORT's 42.5) in each half from pooled samples; a row whose
# rounds measured one peak has no slower half; rows without peaks, or with one round, have no line, and no
# such row at all means no table.
def rounds_of(peaks, ng, ort, mnn):
    return [{"peak": p, "samples": {"ninegrid": n, "ort": o, "mnn": m}} for p, n, o, m in zip(peaks, ng, ort, mnn)]


rows = [{"model": "e", "threads": 1,
         "rounds": rounds_of([250.0, 220.0, 248.0, 221.0], [[30.0, 31.0], [36.0, 35.0], [30.0, 29.0], [37.0, 36.0]],
                             [[42.0], [44.0], [41.0], [43.0]],
                             [[40.0, 40.0], [43.0, 43.0], [40.0, 41.0], [43.0, 44.0]])},
        {"model": "f", "threads": 2,
         "rounds": rounds_of([230.0, 230.0], [[3.0], [5.0]], [[10.0], [10.0]], [[8.0], [8.0]])},
        {"model": "g", "threads": 1, "rounds": rounds_of([None, None], [[1.0], [1.0]], [[2.0], [2.0]], [[2.0], [2.0]])},
        {"model": "h", "threads": 1, "rounds": rounds_of([240.0], [[1.0]], [[2.0]], [[2.0]])}]
lines = compare.phase_table(rows)
expect("| e | 1 | 220-250 | 2 / 2 | MNN | 0.75 | 0.84 | 30.000 / 36.000 | 40.000 / 43.000 |" in lines,
       f"phase row e {lines}")
expect("| f | 2 | 230-230 | 2 / 0 | MNN | 0.50 | — | 4.000 / — | 8.000 / — |" in lines, f"phase row f {lines}")
expect(not any(line.startswith("| g |") or line.startswith("| h |") for line in lines), "rows without two peaks")
expect(compare.phase_table(rows[2:]) == [], "no peaks: no phase table")

# MNN's quantiser config: the model's preprocessing and images, the method asked for; EMA without MNN's int8
# Winograd; an unknown method refused.
calib = {"size": (64, 48, {"mean": [1.0, 2.0, 3.0], "norm": [0.5, 0.25, 0.125]}), "dir": "/cal",
         "files": ["/cal/a.png", "/cal/b.png"]}
kl = convert_models.mnn_quant_config(calib, "KL")
expect(kl["width"] == 64 and kl["height"] == 48 and kl["mean"] == [1.0, 2.0, 3.0] and
       kl["normal"] == [0.5, 0.25, 0.125] and kl["path"] == "/cal/" and kl["used_image_num"] == 2 and
       kl["feature_quantize_method"] == "KL" and "winogradOpt" not in kl, f"KL config {kl}")
ema = convert_models.mnn_quant_config(calib, "EMA")
expect(ema["feature_quantize_method"] == "EMA" and ema["winogradOpt"] is False, f"EMA config {ema}")
try:
    convert_models.mnn_quant_config(calib, "ADMM")
    expect(False, "ADMM must be refused")
except ValueError:
    pass

# convert_mnn with stand-in tools: quantises once, skips when asked again for the same config, quantises
# again when the method changes or with force.
with tempfile.TemporaryDirectory() as tmp:
    bindir, out = os.path.join(tmp, "bin"), os.path.join(tmp, "models")
    os.makedirs(bindir)
    os.makedirs(out)
    calls = os.path.join(tmp, "calls.txt")
    for tool, body in (("MNNConvert", 'while [ "$1" != --MNNModel ]; do shift; done; echo float > "$2"'),
                       ("quantized.out", f'echo "$3" >> {calls}; echo int8 > "$2"')):
        path = os.path.join(bindir, tool)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)

    def quantised():
        return len(open(calls).read().splitlines()) if os.path.exists(calls) else 0

    onnx = os.path.join(tmp, "m.onnx")
    open(onnx, "w").close()
    convert_models.convert_mnn(bindir, onnx, out, "m", calib, True, False, "KL")
    expect(quantised() == 1 and os.path.exists(os.path.join(out, "m_int8.mnn")), "first int8 conversion")
    convert_models.convert_mnn(bindir, onnx, out, "m", calib, True, False, "KL")
    expect(quantised() == 1, "the same config again must be skipped")
    convert_models.convert_mnn(bindir, onnx, out, "m", calib, True, False, "EMA")
    with open(os.path.join(out, "m.quant.json")) as f:
        expect(quantised() == 2 and json.load(f)["feature_quantize_method"] == "EMA", "a new method quantises again")
    convert_models.convert_mnn(bindir, onnx, out, "m", calib, True, True, "EMA")
    expect(quantised() == 3, "force quantises again")

if failures:
    sys.exit(f"{len(failures)} failure(s)")
print("ok")
