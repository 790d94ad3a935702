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

With one thread and more in --threads, a table gives each model's speed-up from one thread to the others,
ninegrid's and ORT's, and whether the ratio to ORT is no worse with more threads than with one.

With --baseline BINARY (another build's ninegrid, e.g. the previous commit's), each round also runs it, and
a second table compares the two builds: latency and load time, medians over the same rounds, and peak
resident memory, the largest over the rounds.

With --opt-levels, each round also runs ninegrid at each listed optimisation level (same process pattern,
interleaved with the others), and the report gets a second table: latency per opt-level, so the effect of
the graph optimiser (fusion and folding at 1, layout planning at 2) is measured in the same run.

With --peers ncnn,mnn, each round also runs those engines (bench/peers/: their builds, runners and converted
models, under --peers-dir or $NINEGRID_PEERS, default <cache>/peers) on each model converted to their own
format (a row NAME_int8 takes the peer's own int8 quantisation, NAME_int8.*). Before the rounds each peer runs
once on the inputs ORT runs on (ORT's generated pattern, rescaled like 0..255 pixels through the model's
preprocessing where bench/peers/peers.py knows it) and its outputs are compared with ORT's (cosine of each
output; for NAME_int8 rows ORT runs the float model NAME); a peer below --min-cosine (--min-cosine-int8 for
NAME_int8 rows) is reported and not timed. The
report gets tables of latency, load time and peak memory for every engine, the best peer and ninegrid's
ratio to it.

Before each round's ninegrid run, the core's FMA peak is measured (ninegrid_fma_peak, --fma-peak; 0.2 s). On a
shared machine it moves with the phase (other tenants on the core, the clock: 222-289 GFLOP/s in one session),
and the engines need not move alike; a table splits each row's rounds at their median peak and gives ninegrid's
ratio to the best engine in each half, so a run shows whether its rounds spanned phases and whether the ratio
moved with them.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import peers as peer_lib  # noqa: E402

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


def check_peers(name, path, shape, peer_names, pdir, ort_runner, min_cosine, checks, ninegrid=None):
    """Runs ORT once (saving its inputs and outputs) and each peer on the same inputs; returns the peers whose
    outputs match ORT's, each with its runner command (model files and input shapes, no run options).
    For a row NAME_int8 whose float model NAME is known, ORT runs the float model: each engine's int8 model is
    judged against the float function, not against another engine's quantisation. With ninegrid (its binary),
    ninegrid runs the row's own file on the same inputs too and its cosine joins the checks, so that an int8
    peer's figure has ninegrid's beside it; ninegrid is timed whatever its cosine."""
    active = {}
    own_path = path
    base = name[:-len("_int8")] if name.endswith("_int8") else None
    if base in MODELS and os.path.exists(os.path.join(CACHE, MODELS[base][0])):
        path, shape = os.path.join(CACHE, MODELS[base][0]), MODELS[base][1]
    with tempfile.TemporaryDirectory(prefix="ng-peers-check-") as tmp:
        inputs, ort_out = os.path.join(tmp, "inputs"), os.path.join(tmp, "ort")
        cmd = ["node", ort_runner, path, "--runs", "0", "--warmup", "0"]
        subprocess.run(cmd + ["--save-inputs", inputs] + (["--shape", shape] if shape else []), check=True,
                       capture_output=True)
        peer_lib.pixel_like_inputs(inputs, name)  # an int8 model needs inputs in its calibrated range
        # The files are named after the inputs in a file-system-safe form; names.json maps them back.
        names_file = os.path.join(inputs, "names.json")
        names = json.load(open(names_file)) if os.path.exists(names_file) else {}
        given = [a for f in sorted(os.listdir(inputs)) if f.endswith(".npy")
                 for a in ("--input", names.get(f[:-4], f[:-4]) + "=" + os.path.join(inputs, f))]
        subprocess.run(cmd + given + ["--save-outputs", ort_out], check=True, capture_output=True)
        shapes = peer_lib.input_shapes(inputs)
        if ninegrid:
            out_dir = os.path.join(tmp, "ninegrid")
            status, worst, detail = peer_lib.run_and_compare(
                [ninegrid, "run", own_path, "--threads", "1", "--output-dir", out_dir] + given, ort_out, out_dir,
                min_cosine)
            checks.append((name, "ninegrid", status, worst, detail))
        for p in peer_names:
            files = peer_lib.model_files(pdir, p, name)
            if not files:
                checks.append((name, p, "not converted", None, [f"no {name} in {pdir}/models/{p} "
                                                                "(bench/peers/convert_models.py)"]))
                continue
            prefix = [peer_lib.runner(pdir, p)] + files
            status, worst, detail = peer_lib.check(p, tmp, ort_out, inputs, prefix + ["--threads", "1"], min_cosine)
            checks.append((name, p, status, worst, detail))
            print(f"{name} {p}: {status}" + (f", min cosine {worst:.6f}" if worst is not None else "") +
                  f" ({'; '.join(detail)})", file=sys.stderr)
            if status == "ok":
                active[p] = prefix + shapes
    return active


def scaling_table(rows):
    """Each model's speed-up from one thread to each larger count, ninegrid's and ORT's, and its ratio to ORT at
    both counts: what issue 19 asks of threads (at least 1.8x; the ratio to ORT no worse with more threads).
    Empty unless the run had one thread and more."""
    one = {r["model"]: r for r in rows if r["threads"] == 1}
    more = sorted((r for r in rows if r["threads"] > 1 and r["model"] in one), key=lambda r: (r["threads"], r["model"]))
    if not more:
        return []
    out = ["", "More threads against one, the same rounds: speed-up = time at 1 thread / time at N; the ratio to ORT "
           "at each count as in the first table (\"no\": worse with N threads than with one).", "",
           "| model | threads | ninegrid speed-up | ORT speed-up | ratio to ORT, 1 thread | ratio to ORT, N threads | "
           "no worse |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in more:
        o = one[r["model"]]
        out.append(f"| {r['model']} | {r['threads']} | {o['ninegrid_ms'] / r['ninegrid_ms']:.2f}x | "
                   f"{o['ort_ms'] / r['ort_ms']:.2f}x | {o['ratio']:.2f} | {r['ratio']:.2f} | "
                   f"{'yes' if round(r['ratio'], 2) <= round(o['ratio'], 2) else 'no'} |")
    return out


def phase_table(rows):
    """Each row's rounds split at the median of their measured FMA peaks: ninegrid's ratio to the best engine of
    the row (ORT or a peer, as in the peer table) in the rounds on the faster core and in those on the slower
    one, pooled samples. Empty when no row has peaks in two rounds or more; a row whose rounds all measured the
    same peak has no slower half ("—")."""
    out = []
    for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
        rounds = [x for x in r.get("rounds", []) if x.get("peak")]
        if len(rounds) < 2:
            continue

        def pooled(group, engine):
            return statistics.median(t for x in group for t in x["samples"][engine])

        others = [e for e in rounds[0]["samples"] if e != "ninegrid"]  # ORT and the timed peers
        best = min(others, key=lambda e: pooled(rounds, e))
        middle = statistics.median(x["peak"] for x in rounds)
        faster = [x for x in rounds if x["peak"] >= middle]
        slower = [x for x in rounds if x["peak"] < middle]

        def half(group):
            if not group:
                return "—", "—", "—"
            ng, b = pooled(group, "ninegrid"), pooled(group, best)
            return f"{ng / b:.2f}", f"{ng:.3f}", f"{b:.3f}"

        hi, lo = half(faster), half(slower)
        peaks = [x["peak"] for x in rounds]
        label = "ORT" if best == "ort" else peer_lib.label(best)
        out.append(f"| {r['model']} | {r['threads']} | {min(peaks):.0f}-{max(peaks):.0f} | {len(faster)} / "
                   f"{len(slower)} | {label} | {hi[0]} | {lo[0]} | {hi[1]} / {lo[1]} | {hi[2]} / {lo[2]} |")
    if not out:
        return []
    return ["", "By the core's speed: each row's rounds split at the median of the FMA peaks measured before them "
            "(GFLOP/s, one core); ninegrid / best engine of the row in each half (pooled samples).", "",
            "| model | threads | FMA peak | rounds faster / slower | best engine | ratio, faster core | "
            "ratio, slower core | ninegrid ms, faster / slower | best ms, faster / slower |",
            "| --- | ---: | --- | --- | --- | ---: | ---: | --- | --- |"] + out


def peer_tables(rows, peer_names, checks, pdir):
    """The report's peer tables: latency with the best peer, load time and memory, and the conversion check."""
    engines = [("ORT", "ort")] + [(peer_lib.label(p), p) for p in peer_names]

    def ms(r, key):
        if key == "ort":
            return r["ort_ms"]
        return r["peers"][key]["ms"] if key in r.get("peers", {}) else None

    def cell(v, fmt):
        return "—" if v is None else fmt.format(v)

    out = ["", "All peers, the same rounds (medians over all timed runs; — : not timed, see the check below). "
           "best peer = the fastest of ORT and the peers; ratio = ninegrid / best peer (below 1: ninegrid is "
           "faster). Peak MB: the runner process's VmHWM for ninegrid and the C++ peers, Node's peak minus its "
           "baseline for ORT.", "",
           "| model | threads | ninegrid ms | " + " | ".join(f"{l} ms" for l, _ in engines) +
           " | best peer | ninegrid / best |",
           "| --- | ---: | ---: | " + " | ".join("---:" for _ in engines) + " | --- | ---: |"]
    for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
        times = [(ms(r, k), l) for l, k in engines if ms(r, k) is not None]
        best = min(times)
        out.append(f"| {r['model']} | {r['threads']} | {r['ninegrid_ms']:.3f} | " +
                   " | ".join(cell(ms(r, k), "{:.3f}") for _, k in engines) +
                   f" | {best[1]} | {r['ninegrid_ms'] / best[0]:.2f} |")
    out += ["", "| model | threads | ninegrid load ms | " + " | ".join(f"{l} load ms" for l, _ in engines) +
            " | ninegrid peak MB | " + " | ".join(f"{l} MB" for l, _ in engines) + " |",
            "| --- | ---: | ---: | " + " | ".join("---:" for _ in engines) + " | ---: | " +
            " | ".join("---:" for _ in engines) + " |"]
    for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
        loads = [r["ort_load_ms"]] + [r["peers"][p]["load_ms"] if p in r["peers"] else None for p in peer_names]
        mbs = [r["ort_rss_mb"]] + [r["peers"][p]["rss_mb"] if p in r["peers"] else None for p in peer_names]
        out.append(f"| {r['model']} | {r['threads']} | {r['ninegrid_load_ms']:.1f} | " +
                   " | ".join(cell(v, "{:.1f}") for v in loads) + f" | {r['ninegrid_rss_mb']:.1f} | " +
                   " | ".join(cell(v, "{:.1f}") for v in mbs) + " |")
    out += ["", f"Conversion check (before the rounds, one thread): each peer's outputs against ORT's on the same "
            f"inputs, cosine per output (ninegrid's rows: its own file on the same inputs, timed whatever the "
            f"status). Peer builds: " +
            "; ".join(open(os.path.join(pdir, p, "build-info.txt")).readline().strip()
                      for p in peer_names if os.path.exists(os.path.join(pdir, p, "build-info.txt"))) + ".", "",
            "| model | peer | status | min cosine | outputs |", "| --- | --- | --- | ---: | --- |"]
    for model, p, status, worst, detail in checks:
        out.append(f"| {model} | {peer_lib.label(p)} | {status} | {cell(worst, '{:.6f}')} | {'; '.join(detail)} |")
    return out


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
    ap.add_argument("--peers", default="", help="also time these engines: ncnn, mnn (bench/peers/)")
    ap.add_argument("--peers-dir", default=None, help="their builds and converted models (default $NINEGRID_PEERS "
                    "or <cache>/peers)")
    ap.add_argument("--min-cosine", type=float, default=0.999,
                    help="a peer whose outputs fall below this cosine against ORT's is not timed")
    ap.add_argument("--min-cosine-int8", type=float, default=0.95, help="the same for NAME_int8 rows")
    ap.add_argument("--fma-peak", default=None, help="the ninegrid_fma_peak binary measured before each round "
                    "(default: beside --ninegrid, else build/; '' for none)")
    args = ap.parse_args()
    peer_names = peer_lib.parse_peers(args.peers)
    pdir = peer_lib.peers_dir(CACHE, args.peers_dir)
    for p in peer_names:
        if not os.path.exists(peer_lib.runner(pdir, p)):
            sys.exit(f"{peer_lib.runner(pdir, p)} missing: build it with bench/peers/build_{p}.sh (bench/REPORT.md)")
    checks = []  # (model, peer, status, min cosine, detail)

    ort_runner = os.path.join(ROOT, "bench", "ort_runner.js")
    peak_binary = args.fma_peak
    if peak_binary is None:
        peak_binary = os.path.join(os.path.dirname(os.path.abspath(args.ninegrid)), "ninegrid_fma_peak")
        if not os.path.exists(peak_binary):
            peak_binary = os.path.join(ROOT, "build", "ninegrid_fma_peak")
    peak = fma_peak(peak_binary) if peak_binary else None
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
        active = {}  # peer -> its runner command without the run options
        if peer_names:
            active = check_peers(name, path, shape, peer_names, pdir, ort_runner,
                                 args.min_cosine_int8 if name.endswith("_int8") else args.min_cosine, checks,
                                 ninegrid=args.ninegrid)
        for threads in [int(t) for t in args.threads.split(",")]:
            common = ["--threads", str(threads), "--runs", str(args.runs), "--warmup", str(args.warmup), "--json"]
            if shape:
                common += ["--shape", shape]
            peer_common = ["--threads", str(threads), "--runs", str(args.runs), "--warmup", str(args.warmup), "--json"]
            ours, theirs = [], []
            by_peer = {p: [] for p in active}
            by_level = {level: [] for level in opt_levels}
            base = []
            rounds = []  # per round: the core's FMA peak before it and every engine's samples
            for r in range(args.rounds):
                print(f"{name} threads={threads} round {r + 1}/{args.rounds}", file=sys.stderr)
                round_peak = fma_peak(peak_binary) if peak_binary else None
                ours.append(run_json([args.ninegrid, "bench", path] + common))
                theirs.append(run_json(["node", ort_runner, path] + common))
                for p, cmd in active.items():
                    by_peer[p].append(run_json(cmd + peer_common))
                rounds.append({"peak": round_peak.get("gflops_fp32") if round_peak else None,
                               "samples": {"ninegrid": samples(ours[-1]), "ort": samples(theirs[-1]),
                                           **{p: samples(runs[-1]) for p, runs in by_peer.items()}}})
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
                "rounds": rounds,
                "opt_levels": {level: statistics.median([t for x in runs for t in samples(x)])
                               for level, runs in by_level.items()},
            })
            rows[-1]["peers"] = {p: {"ms": statistics.median([t for x in runs for t in samples(x)]),
                                     "load_ms": statistics.median(x["load_ms"] for x in runs),
                                     "rss_mb": max(x["peak_rss_mb"] for x in runs)}
                                 for p, runs in by_peer.items()}
            if base:
                rows[-1]["base_ms"] = statistics.median([t for x in base for t in samples(x)])
                rows[-1]["base_load_ms"] = statistics.median(x["load_ms"] for x in base)
                rows[-1]["base_rss_mb"] = max(x["peak_rss_mb"] for x in base)

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# ninegrid vs ONNX Runtime 1.30 ({datetime.date.today()}, commit {commit})", ""]
    if os.path.abspath(args.ninegrid) != os.path.join(ROOT, "build", "ninegrid"):
        version = subprocess.run([args.ninegrid, "--version"], capture_output=True, text=True).stdout.strip()
        lines += [f"ninegrid binary: `{args.ninegrid}` ({version}).", ""]
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
    lines += scaling_table(rows)
    if peer_names:
        lines += peer_tables(rows, peer_names, checks, pdir)
    lines += phase_table(rows)
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
