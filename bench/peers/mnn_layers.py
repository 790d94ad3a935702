#!/usr/bin/env python3
"""Sets ninegrid's per-layer times beside MNN's on the same model, layer by layer, to show where the fastest
peer gains on this CPU (a whole-model ratio cannot).

  bench/peers/mnn_layers.py [--models resnet50,mobilenet_v2] [--threads 1] [--rounds 3] [--runs 20]
                            [--ninegrid build/ninegrid] [--peers-dir DIR] [--out FILE]

Each round runs `ninegrid profile MODEL --json` and `mnn_runner MODEL.mnn --profile` (MNN's op callbacks, one
op at a time, as its timeProfile tool measures) in turn; a layer's time is the median over the rounds of each
round's median. Layers are matched by name: MNN names an op by its output tensor, which for the models here
is the ONNX node's output ("<node>_output_0"); ninegrid's fused layer carries the name of the node that heads
it, and the ops MNN fuses differently are left unmatched and summed per engine at the end. The MNN model is
what bench/peers/convert_models.py wrote. Needs bench/peers/build_mnn.sh's runner built with --profile
(this file's commit); run it under the build lock.
"""
import argparse
import collections
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from compare import CACHE, MODELS, ROOT, run_json  # noqa: E402
import peers as peer_lib  # noqa: E402


def ninegrid_layers(binary, path, shape, threads, runs):
    cmd = [binary, "profile", path, "--json", "--threads", str(threads), "--runs", str(runs)]
    if shape:
        cmd += ["--shape", shape]
    d = run_json(cmd)
    return {l["name"]: (l["median_ms"], l.get("algorithm", "")) for l in d["layers"]}


def mnn_layers(runner, path, shape, threads, runs):
    cmd = [runner, path, "--profile", "--threads", str(threads), "--runs", str(runs), "--warmup", "2"]
    if shape:
        cmd += ["--shape", shape]
    d = run_json(cmd)  # (MNN prints a line of its own before the JSON)
    out = {}
    for op in d["ops"]:
        name = op["name"]
        if name.endswith("_output_0"):
            name = name[: -len("_output_0")]
        out[name] = (out.get(name, (0.0, ""))[0] + op["median_ms"], op["type"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--ninegrid", default=os.path.join(ROOT, "build", "ninegrid"))
    ap.add_argument("--peers-dir", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    pdir = peer_lib.peers_dir(CACHE, args.peers_dir)
    runner = peer_lib.runner(pdir, "mnn")
    lines = []
    for m in [m for m in args.models.split(",") if m]:
        if m not in MODELS:
            sys.exit(f"unknown model '{m}'")
        rel, shape = MODELS[m]
        onnx_path = os.path.join(CACHE, rel)
        mnn_path = peer_lib.model_files(pdir, "mnn", m)[0]
        ng_rounds, mnn_rounds = [], []
        for r in range(args.rounds):
            print(f"{m} round {r + 1}/{args.rounds}", file=sys.stderr)
            ng_rounds.append(ninegrid_layers(args.ninegrid, onnx_path, shape, args.threads, args.runs))
            mnn_rounds.append(mnn_layers(runner, mnn_path, shape, args.threads, args.runs))
        ng = {k: (statistics.median(r[k][0] for r in ng_rounds), ng_rounds[0][k][1]) for k in ng_rounds[0]}
        mn = {k: (statistics.median(r[k][0] for r in mnn_rounds if k in r), mnn_rounds[0][k][1])
              for k in mnn_rounds[0]}
        lines.append(f"### {m}, {args.threads} thread(s): per layer, medians of {args.rounds} rounds of "
                     f"{args.runs} runs")
        lines.append("")
        lines.append("| layer | ninegrid kernel | ninegrid ms | MNN op | MNN ms | ninegrid / MNN |")
        lines.append("| --- | --- | ---: | --- | ---: | ---: |")
        by_kind = collections.defaultdict(lambda: [0.0, 0.0])
        unmatched_ng = 0.0
        for name, (t, algo) in ng.items():
            if name not in mn:
                unmatched_ng += t
                continue
            mt, mtype = mn[name]
            lines.append(f"| {name} | {algo} | {t:.3f} | {mtype} | {mt:.3f} | {t / mt:.2f} |" if mt > 0 else
                         f"| {name} | {algo} | {t:.3f} | {mtype} | {mt:.3f} | — |")
            kind = algo.split("/")[0] or "other"
            by_kind[kind][0] += t
            by_kind[kind][1] += mt
        unmatched_mnn = sum(t for k, (t, _) in mn.items() if k not in ng)
        lines.append("")
        lines.append("| ninegrid kernel | ninegrid ms | MNN ms (the same layers) | ratio |")
        lines.append("| --- | ---: | ---: | ---: |")
        for kind, (a, b) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
            lines.append(f"| {kind} | {a:.3f} | {b:.3f} | {a / b:.2f} |" if b > 0 else f"| {kind} | {a:.3f} | {b:.3f} | — |")
        lines.append(f"| unmatched layers | {unmatched_ng:.3f} | {unmatched_mnn:.3f} | |")
        total_ng = sum(t for t, _ in ng.values())
        total_mn = sum(t for t, _ in mn.values())
        lines.append(f"| all | {total_ng:.3f} | {total_mn:.3f} | {total_ng / total_mn:.2f} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
