#!/usr/bin/env python3
"""Benchmarks ninegrid against ONNX Runtime on the same ONNX files, interleaved, and writes a markdown table.

Each model is timed in rounds: ninegrid, then ONNX Runtime, then ninegrid again ... (A B A B), each round a
separate process doing warm-up runs then timed runs, so drift on this shared machine hits both sides alike.
Reported: median over all timed runs of each side, their ratio (ninegrid / ORT: below 1 means ninegrid is
faster), load time and peak resident memory, and the core's FMA peak measured in the same run.

  bench/compare.py [--threads 1,2] [--rounds 5] [--runs 10] [--models retinaface640,blazeface,...] [--out FILE]
                   [--opt-levels 0,1,2]

--models also takes layers:PREFIX, the single-layer models bench/make_layer_models.py writes (e.g.
layers:dw for every depthwise layer).

With --baseline BINARY (another build's ninegrid, e.g. the previous commit's), each round also runs it, and
a second table compares the two builds: latency and load time, medians over the same rounds, and peak
resident memory, the largest over the rounds.

With --opt-levels, each round also runs ninegrid at each listed optimisation level (same process pattern,
interleaved with the others), and the report gets a second table: latency per opt-level, so the effect of
the graph optimiser (fusion and folding at 1, layout planning at 2) is measured in the same run.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))

# name -> (path relative to the cache, input shape option or None)
MODELS = {
    "retinaface640": ("models/retinaface_mnet25.onnx", "data=1x3x640x640"),
    "retinaface320": ("models/retinaface_mnet25_320.onnx", "data=1x3x320x320"),
    "blazeface": ("npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx", None),
    "ppocr_det": ("npm/ocr/package/assets/ch_PP-OCRv4_det_infer.onnx", "x=1x3x640x640"),
    "mobilenet_v2": ("models/torchvision/mobilenet_v2.onnx", None),
    "resnet18": ("models/torchvision/resnet18.onnx", None),
    "resnet50": ("models/torchvision/resnet50.onnx", None),
}
# The other torchvision classifiers the tests export: by name with --models, not in the default run.
EXTRA_MODELS = {
    name: ("models/torchvision/" + name + ".onnx", None)
    for name in ("efficientnet_b0", "googlenet", "mobilenet_v3_large", "regnet_y_400mf", "shufflenet_v2_x1_0",
                 "squeezenet1_1")
}


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    try:
        return json.loads(out)  # the whole output is one (possibly pretty-printed) object
    except json.JSONDecodeError:
        pass
    for line in reversed(out.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no JSON from " + " ".join(cmd) + ":\n" + out)


def samples(result):
    """All timed runs of one round if the runner reports them, else its median."""
    return result.get("times_ms") or [result["median_ms"]]


def fma_peak(binary):
    if not os.path.exists(binary):
        return None
    return run_json([binary, "--json"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ninegrid", default=os.path.join(ROOT, "build", "ninegrid"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10, help="timed runs per round and side")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated names; '' for none (with --model-file)")
    ap.add_argument("--out", default=None, help="also write the markdown report here")
    ap.add_argument("--opt-levels", default="", help="also time ninegrid at these --opt-level values, e.g. 0,1,2")
    ap.add_argument("--baseline", default="", help="also time this other ninegrid binary (a previous build)")
    ap.add_argument("--model-file", action="append", default=[], metavar="NAME=PATH[@SHAPE]",
                    help="also time this model file under NAME (e.g. an int8 QDQ model `ninegrid quantize` wrote: "
                         "resnet50_int8=/tmp/resnet50_int8.onnx); SHAPE as in the table above (data=1x3x640x640)")
    args = ap.parse_args()

    ort_runner = os.path.join(ROOT, "bench", "ort_runner.js")
    peak = fma_peak(os.path.join(ROOT, "build", "ninegrid_fma_peak"))
    opt_levels = [int(x) for x in args.opt_levels.split(",") if x.strip()]
    rows = []
    names = []
    for item in [m for m in args.models.split(",") if m]:
        if item.startswith("layers:"):  # every model bench/make_layer_models.py wrote whose name starts so
            prefix = item[len("layers:"):]
            layer_dir = os.path.join(CACHE, "bench_layers")
            found = sorted(f[:-5] for f in os.listdir(layer_dir) if f.endswith(".onnx") and f.startswith(prefix)) \
                if os.path.isdir(layer_dir) else []
            if not found:
                sys.exit(f"no layer models '{prefix}*' in {layer_dir}: run bench/make_layer_models.py first")
            for f in found:
                MODELS[f] = (os.path.join("bench_layers", f + ".onnx"), None)
            names += found
        elif item in MODELS or item in EXTRA_MODELS:
            MODELS.setdefault(item, EXTRA_MODELS.get(item))
            names.append(item)
        else:
            sys.exit(f"unknown model '{item}' (known: {', '.join(list(MODELS) + list(EXTRA_MODELS))}, or layers:PREFIX)")
    for item in args.model_file:
        name, _, rest = item.partition("=")
        file, _, shape = rest.partition("@")
        MODELS[name] = (os.path.abspath(file), shape or None)
        names.append(name)
    for name in names:
        rel, shape = MODELS[name]
        path = os.path.join(CACHE, rel)  # an absolute rel (--model-file) stays as it is
        if not os.path.exists(path):
            print(f"skip {name}: {path} missing (scripts/setup.sh and scripts/make_test_models.sh make it)",
                  file=sys.stderr)
            continue
        for threads in [int(t) for t in args.threads.split(",")]:
            common = ["--threads", str(threads), "--runs", str(args.runs), "--warmup", str(args.warmup), "--json"]
            if shape:
                common += ["--shape", shape]
            ours, theirs = [], []
            by_level = {level: [] for level in opt_levels}
            base = []
            for r in range(args.rounds):
                print(f"{name} threads={threads} round {r + 1}/{args.rounds}", file=sys.stderr)
                ours.append(run_json([args.ninegrid, "bench", path] + common))
                theirs.append(run_json(["node", ort_runner, path] + common))
                for level in opt_levels:
                    by_level[level].append(run_json([args.ninegrid, "bench", path, "--opt-level", str(level)] + common))
                if args.baseline:
                    base.append(run_json([args.baseline, "bench", path] + common))
            ng = statistics.median([t for x in ours for t in samples(x)])
            ort = statistics.median([t for x in theirs for t in samples(x)])
            rows.append({
                "model": name, "threads": threads, "ninegrid_ms": ng, "ort_ms": ort, "ratio": ng / ort,
                "ninegrid_load_ms": statistics.median(x["load_ms"] for x in ours),
                "ort_load_ms": statistics.median(x["load_ms"] for x in theirs),
                "ninegrid_rss_mb": max(x["peak_rss_mb"] for x in ours),
                "ort_rss_mb": max(x["peak_rss_mb"] - x.get("baseline_rss_mb", 0) for x in theirs),
                "runs": args.rounds * args.runs,
                "opt_levels": {level: statistics.median([t for x in runs for t in samples(x)])
                               for level, runs in by_level.items()},
            })
            if base:
                rows[-1]["base_ms"] = statistics.median([t for x in base for t in samples(x)])
                rows[-1]["base_load_ms"] = statistics.median(x["load_ms"] for x in base)
                rows[-1]["base_rss_mb"] = max(x["peak_rss_mb"] for x in base)

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# ninegrid vs ONNX Runtime 1.30 ({datetime.date.today()}, commit {commit})", ""]
    if peak:
        lines.append(f"Core FMA peak measured in this run: {peak.get('gflops_fp32', float('nan')):.1f} GFLOP/s fp32 "
                     f"({peak.get('isa', '?')}).")
        lines.append("")
    lines += [
        "Medians over all timed runs, sides interleaved by round. ratio = ninegrid / ORT (below 1: ninegrid is "
        "faster). ORT memory is Node's peak RSS minus Node's RSS before the session was created.", "",
        "| model | threads | ninegrid ms | ORT ms | ratio | ninegrid load ms | ORT load ms | ninegrid peak MB | ORT MB | runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
        lines.append(f"| {r['model']} | {r['threads']} | {r['ninegrid_ms']:.3f} | {r['ort_ms']:.3f} | {r['ratio']:.2f} | "
                     f"{r['ninegrid_load_ms']:.1f} | {r['ort_load_ms']:.1f} | {r['ninegrid_rss_mb']:.1f} | "
                     f"{r['ort_rss_mb']:.1f} | {r['runs']} |")
    if opt_levels:
        lines += ["", "ninegrid at each --opt-level (0: none, 1: fusion and folding, 2: plus NCHW[x]c layout planning), "
                  "medians over all timed runs, in the same rounds as the table above.", "",
                  "| model | threads | " + " | ".join(f"opt-level {l} ms" for l in opt_levels) + " | ORT ms |",
                  "| --- | ---: | " + " | ".join("---:" for _ in opt_levels) + " | ---: |"]
        for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
            lines.append(f"| {r['model']} | {r['threads']} | " +
                         " | ".join(f"{r['opt_levels'][l]:.3f}" for l in opt_levels) + f" | {r['ort_ms']:.3f} |")
    if args.baseline:
        lines += ["", f"This build against the baseline `{args.baseline}`, medians over the same rounds "
                  "(ratio = this build / baseline).", "",
                  "| model | threads | ms | baseline ms | ratio | load ms | baseline load ms | load ratio | peak MB | "
                  "baseline peak MB |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
            lines.append(f"| {r['model']} | {r['threads']} | {r['ninegrid_ms']:.3f} | {r['base_ms']:.3f} | "
                         f"{r['ninegrid_ms'] / r['base_ms']:.3f} | {r['ninegrid_load_ms']:.1f} | "
                         f"{r['base_load_ms']:.1f} | {r['ninegrid_load_ms'] / r['base_load_ms']:.2f} | "
                         f"{r['ninegrid_rss_mb']:.1f} | {r['base_rss_mb']:.1f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
