#!/usr/bin/env python3
"""Tuned against rule-based plans, interleaved, and what tuning costs.

For each model and thread count: `ninegrid tune` into a fresh cache file (its wall time is the tuning
time), then rounds of `ninegrid bench` alternating the tuned cache and --no-tuning-cache (A B A B ...), and
the load time three ways: no cache, the same cache file with its CPU line changed (read and checked in full,
nothing used: the cost of reading the cache), and the tuned cache (its plans packed instead of the rules').
Writes a markdown table.

  bench/tune_compare.py [--threads 1,2] [--rounds 5] [--runs 10] [--models retinaface640,...] [--budget 120]
                        [--model-file NAME=PATH[@SHAPE] ...] [--out FILE] [--keep DIR]

Run it under the build lock with nothing else running: the numbers are worthless otherwise.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compare import CACHE, EXTRA_MODELS, MODELS, run_json, samples  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ninegrid", default=os.path.join(ROOT, "build", "ninegrid"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated names; '' for none (with --model-file)")
    ap.add_argument("--model-file", action="append", default=[], metavar="NAME=PATH[@SHAPE]",
                    help="also this model file under NAME (e.g. an int8 QDQ model `ninegrid quantize` wrote), as "
                         "bench/compare.py takes it")
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", default=None, help="keep the tuning caches and tune reports in this directory")
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="ninegrid-tune-compare-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "xdg"))  # never the user's cache
    rows = []
    files = {}
    for item in args.model_file:
        name, _, rest = item.partition("=")
        file, _, shape = rest.partition("@")
        files[name] = (os.path.abspath(file), shape or None)
    for name in [m for m in args.models.split(",") if m] + list(files):
        rel, shape = files.get(name) or MODELS.get(name) or EXTRA_MODELS[name]
        path = os.path.join(CACHE, rel)  # an absolute rel (--model-file) stays as it is
        if not os.path.exists(path):
            print(f"skip {name}: {path} missing", file=sys.stderr)
            continue
        for threads in [int(t) for t in args.threads.split(",")]:
            shape_args = ["--shape", shape] if shape else []
            cache = os.path.join(work, f"{name}.t{threads}.cache")
            if os.path.exists(cache):
                os.remove(cache)
            print(f"{name} threads={threads}: tuning", file=sys.stderr)
            t0 = time.monotonic()
            tune = subprocess.run([args.ninegrid, "tune", path, "--threads", str(threads), "--budget", str(args.budget),
                                   "--cache", cache, "--json"] + shape_args, capture_output=True, text=True, env=env,
                                  check=True)
            tune_s = time.monotonic() - t0
            report = json.loads(tune.stdout)
            with open(os.path.join(work, f"{name}.t{threads}.tune.json"), "w") as f:
                f.write(tune.stdout)
            # The same file, another CPU's: read and checked in full, nothing used.
            foreign = os.path.join(work, f"{name}.t{threads}.foreign.cache")
            with open(cache) as src, open(foreign, "w") as dst:
                for line in src:
                    dst.write("cpu Foreign|CPU|none|L1d 1K|L2 1K|L3 1K\n" if line.startswith("cpu ") else line)
            common = ["bench", path, "--threads", str(threads), "--runs", str(args.runs), "--warmup",
                      str(args.warmup), "--json"] + shape_args
            tuned, rules, loads = [], [], {"none": [], "foreign": [], "tuned": []}
            for r in range(args.rounds):
                print(f"{name} threads={threads} round {r + 1}/{args.rounds}", file=sys.stderr)
                a = run_json([args.ninegrid] + common + ["--tuning-cache", cache])
                b = run_json([args.ninegrid] + common + ["--no-tuning-cache"])
                c = run_json([args.ninegrid] + common[:2] + ["--threads", str(threads), "--runs", "1", "--warmup", "0",
                                                             "--json", "--tuning-cache", foreign] + shape_args)
                tuned.append(a)
                rules.append(b)
                loads["tuned"].append(a["load_ms"])
                loads["none"].append(b["load_ms"])
                loads["foreign"].append(c["load_ms"])
            t_ms = statistics.median([t for x in tuned for t in samples(x)])
            r_ms = statistics.median([t for x in rules for t in samples(x)])
            rows.append({
                "model": name, "threads": threads, "tuned_ms": t_ms, "rules_ms": r_ms, "ratio": t_ms / r_ms,
                "min_tuned": min(t for x in tuned for t in samples(x)), "min_rules": min(t for x in rules for t in samples(x)),
                "tune_s": tune_s, "timed": report["timed"], "convs": len(report["convs"]),
                "changed": sum(1 for c in report["convs"] if c["tuned_plan"] != c["rule_plan"]),
                "layout": report["layout_changes"] if report["layout_kept"] else 0,
                "load_none": statistics.median(loads["none"]), "load_foreign": statistics.median(loads["foreign"]),
                "load_tuned": statistics.median(loads["tuned"]),
            })
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# Tuned vs rule-based plans ({datetime.date.today()}, commit {commit})", "",
             f"`bench/tune_compare.py --threads {args.threads} --rounds {args.rounds} --runs {args.runs} "
             f"--budget {args.budget} --models '{args.models}'"
             + "".join(f" --model-file {m}" for m in args.model_file) + "`. Latency: medians (and minima) over all timed runs, "
             "tuned and rule-based runs interleaved by round; ratio = tuned / rules. Tuning: wall time of "
             "`ninegrid tune` from an empty cache; distinct convs, and how many got another plan than the rules'; "
             "layout: conv output blocks the global search changed and kept. Load: median load ms without a "
             "cache, reading the whole cache but using nothing (another CPU's), and with the tuned plans.", "",
             "| model | threads | rules ms (min) | tuned ms (min) | ratio | tune s | convs | changed | layout | "
             "load none | load read | load tuned |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(rows, key=lambda r: (r["threads"], r["model"])):
        lines.append(f"| {r['model']} | {r['threads']} | {r['rules_ms']:.3f} ({r['min_rules']:.3f}) | "
                     f"{r['tuned_ms']:.3f} ({r['min_tuned']:.3f}) | {r['ratio']:.3f} | {r['tune_s']:.1f} | "
                     f"{r['convs']} | {r['changed']} | {r['layout']} | {r['load_none']:.1f} | {r['load_foreign']:.1f} | "
                     f"{r['load_tuned']:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
