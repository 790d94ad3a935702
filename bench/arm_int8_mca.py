#!/usr/bin/env python3
"""Static speed of the AArch64 int8 conv loops, for bench/REPORT.md's "Arm64 (issue 15)" section.

No Arm hardware is reachable here, so each hot loop is taken from the compiled object and given to llvm-mca
(bench/arm_mca.py does the same for the fp32 kernels by tracing them under qemu; the int8 loops are simple
enough to take from the object directly):

1. `aarch64-linux-gnu-objdump -d -C` of a kernel object of a cross build (build-arm/, as bash
   scripts/test_arm.sh makes it, or any object given with --object); the function is found by its demangled
   name (a template instance: kernel, output blocks, tile pixels, input block, stride).
2. Its loops are the backward branches; the innermost loop (no other backward branch inside it) with the
   most multiply-adds is the hot loop. Its instructions from the branch target up to the branch, the branch
   itself left out, are one iteration.
3. `llvm-mca -mcpu=cortex-a76 -mattr=+dotprod` (sdot kernels) or `-mcpu=cortex-a72` (smull kernels), 200
   iterations: cycles per iteration against the multiply-add bound, the multiply-adds per iteration times
   the model's reciprocal throughput of the bounding instruction (sdot on the A76: 0.5 cycles, two vector
   pipes; smull on the A72: 1 cycle, one pipe), measured here on independent instructions.

The depthwise centre tiles are not loops of their own in the object: --depthwise traces them under qemu
(bench/arm_kernel_trace.cpp's int8 modes, bench/arm_mca.py's trace) and sets them beside MNN's depthwise
loops, assembled from a fetched snapshot (--mnn, its git directory). --asm runs any other assembly file of one
function; --sketches adds a few hand-written loops that show what a variant would cost before it is written.

    python3 bench/arm_int8_mca.py [--build build-arm | --objects-dir DIR] [--sketches]
        [--depthwise [--trace-cache FILE] [--mnn /work/.mirror/alibaba+MNN/repo]]
        [--llvm-mca llvm-mca-19 --dotprod-cpu neoverse-n1] [--asm label=file.S] [--show]
Prints markdown tables. Runs the cross assembler and llvm-mca (seconds), and with --depthwise the emulator
(minutes); take the build lock.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OBJDUMP = "aarch64-linux-gnu-objdump"
CC = "aarch64-linux-gnu-gcc"
A76 = ["-mcpu=cortex-a76", "-mattr=+dotprod"]  # --dotprod-cpu replaces the CPU
A72 = ["-mcpu=cortex-a72"]

# The int8 direct and pointwise tiles of ninegrid (kernels/arm/*/qconv_direct_*.cpp on conv_direct_impl.h):
# label, object under the build's CMakeFiles/ninegrid.dir, demangled function name (regular expression),
# llvm-mca CPU flags.
DOTPROD_DIRECT = "src/kernels/arm/dotprod/qconv_direct_dotprod.cpp.o"
NEON_DIRECT = "src/kernels/arm/neon/qconv_direct_neon.cpp.o"
DOTPROD_DW = "src/kernels/arm/dotprod/qconv_depthwise_dotprod.cpp.o"
NEON_DW = "src/kernels/arm/neon/qconv_depthwise_neon.cpp.o"


def tile(kind, vec, ocb, n, pin, sw=None):
    ns = r"ninegrid::\(anonymous namespace\)::"
    name = r"%s<%sQuantConvArith<%s%s>, %d, %d, %d" % (kind, ns, ns, vec, ocb, n, pin)
    return name + (", %d>" % sw if sw is not None else r", false>")


OURS = [
    ("dotprod pointwise, 2 x 8", DOTPROD_DIRECT, tile("pointwise_tiles_dense", "QVecDotprod", 2, 8, 4), A76),
    ("dotprod pointwise, 1 x 12", DOTPROD_DIRECT, tile("pointwise_tiles_dense", "QVecDotprod", 1, 12, 4), A76),
    ("dotprod direct 3x3 s1 (dense row tile), 2 x 8", DOTPROD_DIRECT,
     tile("direct_row_tile_dense", "QVecDotprod", 2, 8, 4, 1), A76),
    ("dotprod direct 3x3 s2 (dense row tile), 2 x 8", DOTPROD_DIRECT,
     tile("direct_row_tile_dense", "QVecDotprod", 2, 8, 4, 2), A76),
    ("neon pointwise, 2 x 8", NEON_DIRECT, tile("pointwise_tiles_dense", "QVecNeonInt8", 2, 8, 4), A72),
    ("neon direct 3x3 s1 (dense row tile), 2 x 8", NEON_DIRECT,
     tile("direct_row_tile_dense", "QVecNeonInt8", 2, 8, 4, 1), A72),
    ("neon direct 3x3 s2 (dense row tile), 2 x 8", NEON_DIRECT,
     tile("direct_row_tile_dense", "QVecNeonInt8", 2, 8, 4, 2), A72),
]

MADD = re.compile(r"^(sdot|udot|smull2?|umull2?|smlal2?|umlal2?|sadalp|uadalp|mla|smmla)\s")
BOUNDING = {"sdot": "sdot v0.4s, v30.16b, v31.16b", "smull": "smull v0.8h, v30.8b, v31.8b"}


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("arm_int8_mca.py: %s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:],
                                                             p.stderr[-3000:]))
    return p


def find_llvm_mca(name=None):
    if name:
        return shutil.which(name) or sys.exit("arm_int8_mca.py: %s not found" % name)
    for name in ["llvm-mca"] + ["llvm-mca-%d" % v for v in range(20, 10, -1)]:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("arm_int8_mca.py: llvm-mca not found (Debian package llvm)")


def functions(obj):
    """Demangled function name -> [(address, instruction text)] of an object."""
    out = run([OBJDUMP, "-d", "-C", "--no-show-raw-insn", obj]).stdout
    funcs, current = {}, None
    for line in out.split("\n"):
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            current = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"^\s+([0-9a-f]+):\t(.*)$", line)
        if m and current is not None:
            # The symbolic operand (<function+offset>) left out: branch targets stay as addresses.
            text = re.sub(r"\s*<.*>", "", m.group(2).split("//")[0]).strip()
            current.append((int(m.group(1), 16), text))
    return funcs


BRANCH = re.compile(r"^(b|b\.\w+|cbn?z|tbn?z)\s+(?:[^,]+,\s*)*([0-9a-f]+)\b")


def hot_loop(insns):
    """The innermost loop with the most multiply-adds: its instructions, branch left out."""
    addr_index = {a: i for i, (a, _) in enumerate(insns)}
    back = []
    for i, (a, text) in enumerate(insns):
        m = BRANCH.match(text)
        if m:
            target = int(m.group(2), 16)
            if target <= a and target in addr_index:
                back.append((addr_index[target], i))
    best = None
    for start, end in back:
        if any(start <= s2 and e2 < end and (s2, e2) != (start, end) for s2, e2 in back):
            continue  # an outer loop
        body = [t for _, t in insns[start:end]]
        madds = sum(1 for t in body if MADD.match(t))
        key = (madds, -len(body))
        if best is None or key > best[0]:
            best = (key, body)
    return best[1] if best else []


def mca(llvm_mca, code, cpu, iterations=200):
    lines = [re.sub(r"\b[0-9a-f]+ <[^>]*>", ".Lmca_target", c) for c in code]
    lines = [re.sub(r"^(b|bl|b\.\w+|cbn?z|tbn?z)(\s+(?:[^,]+,\s*)*)[0-9a-f]+$", r"\1\2.Lmca_target", c) for c in lines]
    # A call as a plain branch (as bench/arm_mca.py does): llvm-mca gives calls a made-up 100-cycle latency.
    lines = [re.sub(r"^bl\s", "b\t", c) for c in lines]
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines + [".Lmca_target:", ""]))
        path = f.name
    try:
        out = run([llvm_mca, "-mtriple=aarch64"] + cpu + ["-iterations=%d" % iterations, path]).stdout
    finally:
        os.unlink(path)
    return int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / iterations


def rthroughput(llvm_mca, insn, cpu):
    """Cycles per instruction when nothing else limits it: 24 independent ones."""
    code = [re.sub(r"^(\w+) v0", r"\1 v%d" % i, insn) for i in range(24)]
    return mca(llvm_mca, code, cpu, iterations=500) / len(code)


def analyse(llvm_mca, label, code, cpu):
    if not code:
        return "| %s | (no loop found) |" % label
    madds = {}
    for t in code:
        m = MADD.match(t)
        if m:
            op = re.sub(r"2$", "", m.group(1))
            madds[op] = madds.get(op, 0) + 1
    loads = sum(1 for t in code if re.match(r"ld", t))
    stack = sum(1 for t in code if re.match(r"(ld|st)", t) and "[sp" in t)
    cycles = mca(llvm_mca, code, cpu)
    if "sdot" in madds:
        bound = madds["sdot"] * rthroughput(llvm_mca, BOUNDING["sdot"], cpu)
    elif "smull" in madds:
        bound = madds["smull"] * rthroughput(llvm_mca, BOUNDING["smull"], cpu)
    elif "smlal" in madds:  # smlal by element, 4 products, one pipe
        bound = madds["smlal"] * rthroughput(llvm_mca, "smlal v0.4s, v30.4h, v15.h[1]", cpu)
    else:
        bound = 0
    what = " + ".join("%d %s" % (n, op) for op, n in sorted(madds.items(), key=lambda kv: -kv[1]))
    return "| %s | %s | %d | %s | %d | %d | %.1f | %.1f | %s |" % (
        label, cpu[0].split("=")[1], len(code), what or "-", loads, stack, cycles, bound,
        "%.0f%%" % (100 * bound / cycles) if bound else "-")


def asm_code(path, includes, tmp):
    """Assembles an AArch64 .S file (one function) with the cross compiler; its instructions in address
    order (its loop labels are symbols of their own in the object, so objdump splits it at each)."""
    obj = os.path.join(tmp, os.path.basename(path) + ".o")
    run([CC, "-c", "-march=armv8.2-a+dotprod"] + ["-I" + i for i in includes] + ["-o", obj, path])
    return sorted(i for insns in functions(obj).values() for i in insns)


def mnn_sources(mnn_git, tmp, paths):
    """Extracts files of a fetched MNN snapshot (git directory) into tmp; returns the include directories."""
    for p in paths:
        text = run(["git", "--git-dir", mnn_git, "show", "HEAD:" + p]).stdout
        dst = os.path.join(tmp, p)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as f:
            f.write(text)
    return [os.path.join(tmp, "source/backend/cpu/arm")]


# Hand-written loops (one iteration each) for variants not in the code: what they would cost.
SKETCHES = [
    # The A72 path with smlal by element (ncnn's A72 int8 GEMMs: inputs and weights widened to 16 bits,
    # `smlal v.4s, w.4h, x.h[i]`, 4 products per instruction): one input channel of 2 blocks x 8 pixels,
    # the 8 pixels' 16-bit values in v8 (lanes 0-7), the 2 blocks' weights in v30, v31.
    ("sketch: smlal by element, 2 x 8, one input channel", A72,
     ["ldr q8, [x1], #16", "ldr d30, [x2], #8", "ldr d31, [x2], #8"] +
     ["smlal v%d.4s, v30.4h, v8.h[%d]" % (16 + i, i) for i in range(8)] +
     ["smlal v%d.4s, v31.4h, v8.h[%d]" % (24 + i - 8, i) for i in range(8)] +
     ["subs x3, x3, #1"]),
    # smull + sadalp with groups: 4 pixels x 4 channels loaded and shifted once, each pixel's channel pair
    # broadcast by dup from its lane: 2 blocks x 8 pixels, one input block (2 steps of 2 channels).
    ("sketch: smull + sadalp, 2 x 8, groups of 4 pixels (dup by lane)", A72,
     ["ldr q0, [x1]", "ldr q1, [x1, #16]", "add x1, x1, x9", "eor v0.16b, v0.16b, v29.16b",
      "eor v1.16b, v1.16b, v29.16b"] +
     sum([["ldr d30, [x2, #%d]" % (16 * s), "ldr d31, [x4, #%d]" % (16 * s)] +
          sum([["dup v2.4h, v%d.h[%d]" % (p // 4, (p % 4) * 2 + s),
                "smull v3.8h, v2.8b, v30.8b", "smull v4.8h, v2.8b, v31.8b",
                "sadalp v%d.4s, v3.8h" % (8 + p), "sadalp v%d.4s, v4.8h" % (16 + p)] for p in range(8)], [])
          for s in range(2)], []) +
     ["add x2, x2, #32", "add x4, x4, #32", "cmp x1, x5"]),
]


# ---- the depthwise loops, traced ----

# ninegrid's int8 depthwise centre tile is not a loop of its own in the object (the tile loop of a row holds
# both the centre and the border tiles), so it is taken as bench/arm_mca.py takes the fp32 loops: the kernel
# runs once under qemu (bench/arm_kernel_trace.cpp, the int8 modes) and the most frequent block sequence
# between two runs of its hottest block is one iteration, one centre tile with its epilogue.
# label, driver arguments, outputs (pixels x 4 channels) per iteration.
DW_TRACED = [
    ("ninegrid dotprod depthwise 3x3 s1, centre tile 4 rows x 4 px (32 ch, 32x32)", ["qdw3x3s1", "dotprod"], 16),
    ("ninegrid dotprod depthwise 3x3 s2, centre tile 2 rows x 4 px (32 ch, 64x64 -> 32x32)", ["qdw3x3s2", "dotprod"],
     8),
]
# MNN's loops, from its assembly: label, file in the snapshot, symbol, outputs (pixels x 4 channels) per
# iteration, taps per iteration and output (9: the whole 3x3 window; 1: one tap of it).
MNN_DW = [
    ("MNN ARMv8.2 3x3 s1 (C4, tbl + sdot + smlal), L16Loop: 16 px x 4 ch",
     "source/backend/cpu/arm/arm64/MNNLineDepthWiseInt8AddBiasScale_ARMV82_Unit3X3.S",
     "MNNLineDepthWiseInt8AddBiasScale_ARMV82_Unit3X3", 16, 9),
    ("MNN C16 (sxtl + smlal; every other 3x3 on sdot cores, all on ARMv8), one tap of 4 px x 16 ch",
     "source/backend/cpu/arm/arm64/MNNLineDepthWiseInt8AddBiasScaleUnit.S",
     "MNNLineDepthWiseInt8AddBiasScaleUnit", 16, 1),
]


def analyse_dw(llvm_mca, label, code, outputs, taps, cpu):
    """Useful multiply-adds (outputs x 4 channels x taps) per cycle against sdot's 2 x 16 per cycle."""
    cycles = mca(llvm_mca, code, cpu)
    ops = {}
    for t in code:
        op = t.split()[0]
        if op in ("sdot", "smlal", "smlal2", "tbl", "eor", "sxtl", "sxtl2", "dup", "mov", "movi"):
            op = op.rstrip("2")
            ops[op] = ops.get(op, 0) + 1
    loads = sum(1 for t in code if re.match(r"ld", t))
    stack = sum(1 for t in code if re.match(r"(ld|st)", t) and "[sp" in t)
    macs = outputs * 4 * taps
    sdot_cycles = rthroughput(llvm_mca, BOUNDING["sdot"], cpu)
    peak = 16 / sdot_cycles  # multiply-adds per cycle at the sdot bound
    # cycles per output (pixel x 4 channels) of the whole 3x3 window
    per_output = cycles / outputs * (9 / taps)
    what = ", ".join("%d %s" % (n, op) for op, n in sorted(ops.items(), key=lambda kv: -kv[1]))
    return "| %s | %d | %s | %d | %d | %.1f | %d | %.2f | %.1f | %.0f%% |" % (
        label, len(code), what, loads, stack, cycles, macs, per_output, macs / cycles, 100 * macs / cycles / peak)


def compute_core(code):
    """The tile's arithmetic alone: from its first 16-byte input load to its last sdot, branches left out
    (no call frame, no bias copies before it, no requantisation or stores after it)."""
    first = next(i for i, t in enumerate(code) if re.match(r"(ldr|ldur)\s+q", t))
    last = max(i for i, t in enumerate(code) if t.startswith("sdot"))
    return [t for t in code[first:last + 1] if not re.match(r"(b|b\.\w+|cbn?z|tbn?z|bl|ret)\s", t)]


def traced_depthwise(build, cache):
    """{driver arguments: (iteration, times seen, hottest block runs)}, traced or read from the cache file."""
    if cache and os.path.exists(cache):
        with open(cache) as f:
            return {k: tuple(v) for k, v in json.load(f).items()}
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import arm_mca  # the qemu trace
    run(["cmake", "--build", build, "--target", "ninegrid_arm_kernel_trace"])
    driver = os.path.join(build, "ninegrid_arm_kernel_trace")
    library = os.path.realpath(os.path.join(build, "libninegrid.so"))
    os.environ["QEMU_CPU"] = "max"  # dotprod
    traces = {" ".join(args): arm_mca.trace_hot_iteration(driver, args, library) for _, args, _ in DW_TRACED}
    if cache:
        with open(cache, "w") as f:
            json.dump(traces, f)
    return traces


def depthwise_table(llvm_mca, build, mnn_git, show, cache):
    traces = traced_depthwise(build, cache)
    print("\n| depthwise loop | instructions | vector operations | loads | stack loads/stores | cycles / iteration "
          "| multiply-adds / iteration | cycles per output (pixel x 4 ch, 3x3) | multiply-adds / cycle "
          "| of the sdot bound |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, args, outputs in DW_TRACED:
        code, times, hot = traces[" ".join(args)]
        print(analyse_dw(llvm_mca, label + ", whole iteration (seen %d times / hottest block %d)" % (times, hot),
                         code, outputs, 9, A76))
        print(analyse_dw(llvm_mca, label + ", its compute core", compute_core(code), outputs, 9, A76))
        if show:
            print("\n".join("    " + t for t in code))
    if not mnn_git:
        return
    with tempfile.TemporaryDirectory() as tmp:
        includes = mnn_sources(mnn_git, tmp, [f for _, f, _, _, _ in MNN_DW] +
                               ["source/backend/cpu/arm/MNNAsmGlobal.h"])
        for label, path, _, outputs, taps in MNN_DW:
            code = hot_loop(asm_code(os.path.join(tmp, path), includes, tmp))
            print(analyse_dw(llvm_mca, label, code, outputs, taps, A76))
            if show:
                print("\n".join("    " + t for t in code))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build-arm"))
    ap.add_argument("--object", action="append", default=[],
                    help="label=path:regex, an object and a function of it (replaces the default rows)")
    ap.add_argument("--objects-dir", help="a directory holding the kernel objects (copies of another build's)")
    ap.add_argument("--asm", action="append", default=[], help="label=file.S, an assembly file of one function")
    ap.add_argument("--depthwise", action="store_true",
                    help="the dotprod depthwise centre tiles too, traced under qemu (builds ninegrid_arm_kernel_trace)")
    ap.add_argument("--trace-cache", help="a JSON file: the traced depthwise iterations are read from it when it "
                    "exists, else traced and written to it (one trace for several llvm-mca runs)")
    ap.add_argument("--mnn", help="git directory of an alibaba/MNN snapshot: its depthwise loops beside them")
    ap.add_argument("--sketches", action="store_true", help="the hand-written variant loops too")
    ap.add_argument("--show", action="store_true", help="print each loop's instructions")
    ap.add_argument("--llvm-mca", help="the llvm-mca binary (default: llvm-mca, else the newest llvm-mca-N)")
    ap.add_argument("--dotprod-cpu", default="cortex-a76",
                    help="-mcpu for the sdot loops (LLVM 14 to 19 model cortex-a76 with the Cortex-A57's "
                    "scheduling model; neoverse-n1, the A76's server twin, has its own from LLVM 16 on)")
    args = ap.parse_args()
    llvm_mca = find_llvm_mca(args.llvm_mca)
    A76[0] = "-mcpu=" + args.dotprod_cpu

    rows = []
    if args.object:
        for spec in args.object:
            label, rest = spec.split("=", 1)
            path, regex = rest.split(":", 1)
            rows.append((label, path, regex, A72 if "neon" in path else A76))
    elif args.objects_dir:
        rows = [(l, os.path.join(args.objects_dir, os.path.basename(o)), r, c) for l, o, r, c in OURS]
    else:
        rows = [(l, os.path.join(args.build, "CMakeFiles", "ninegrid.dir", o), r, c) for l, o, r, c in OURS]

    print("| loop | -mcpu | instructions | multiply-adds | loads | stack loads/stores | cycles / iteration "
          "| bound | of bound |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    cache = {}
    for label, path, regex, cpu in rows:
        if path not in cache:
            cache[path] = functions(path)
        matches = [n for n in cache[path] if re.search(regex, n)]
        if not matches:
            print("| %s | (no function matches %s) |" % (label, regex))
            continue
        code = max((hot_loop(cache[path][n]) for n in matches), key=lambda c: sum(1 for t in c if MADD.match(t)))
        print(analyse(llvm_mca, label, code, cpu))
        if args.show:
            print("\n".join("    " + t for t in code))

    with tempfile.TemporaryDirectory() as tmp:
        asm = list(args.asm)
        includes = []
        for spec in asm:
            label, rest = spec.split("=", 1)
            path = rest
            code = hot_loop(asm_code(path, includes + [os.path.dirname(path)], tmp))
            print(analyse(llvm_mca, label, code, A76))
            if args.show:
                print("\n".join("    " + t for t in code))

    if args.sketches:
        for label, cpu, code in SKETCHES:
            print(analyse(llvm_mca, label, code, cpu))

    if args.depthwise:
        depthwise_table(llvm_mca, args.build, args.mnn, args.show, args.trace_cache)


if __name__ == "__main__":
    main()
