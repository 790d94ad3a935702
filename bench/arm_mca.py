#!/usr/bin/env python3
"""Static speed of the NEON conv kernels on a Cortex-A72, for bench/REPORT.md's "Arm64" section (issue 15).

No Arm hardware is reachable, so each hot loop is taken from the compiled code and given to llvm-mca:

1. ninegrid: bench/arm_kernel_trace.cpp runs one NEON kernel of the cross-built libninegrid.so on a
   RetinaFace-like layer under `qemu-aarch64 -d in_asm,exec,nochain`. The log lists every translated block
   and every block run; the most frequent block sequence between two runs of the hottest block is one
   iteration of the hot loop (the inner channel loop of pointwise and direct, one centre tile of the
   depthwise kernel with its call and epilogue), exactly as the library runs it.
2. ncnn: its convdw3x3s1_pack4_neon / convdw3x3s2_pack4_neon and the 8x12 tile of its 1x1 (im2col-GEMM)
   conv, from a fetched snapshot of Tencent/ncnn (git directory given by --ncnn), compiled by the same
   cross compiler with the same flags into a small driver written here, and traced the same way. Nothing
   of ncnn is copied into this repository: the script reads the snapshot into a temporary directory.
3. Each iteration's instructions (from objdump of the traced binary) go through
   `llvm-mca -mcpu=cortex-a72`; its cycles per iteration are set against the FMLA bound (FMLAs per
   iteration times the model's FMLA reciprocal throughput, measured here on independent FMLAs).
4. A RetinaFace-MobileNet0.25 640x640 1-thread latency estimate on a 1.5 GHz A72: every conv's FMLA count
   (from the ncnn model's shapes) at its kernel's cycles per FMLA from step 3.

Needs a configured AArch64 build (bash scripts/test_arm.sh makes build-arm/), qemu-aarch64,
aarch64-linux-gnu-g++/objdump and llvm-mca (Debian's llvm). Runs the emulator and the compiler: on a shared
machine, take the CPU lock around it.
    python3 bench/arm_mca.py --ncnn /work/.mirror/Tencent+ncnn/repo [--build build-arm] [--model mnet.25-opt.param]
Prints markdown tables.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CXX = "aarch64-linux-gnu-g++"
OBJDUMP = "aarch64-linux-gnu-objdump"
# The flags the library's kernels are compiled with (build-arm/CMakeFiles/ninegrid.dir/flags.make, Release).
CXXFLAGS = ["-O3", "-DNDEBUG", "-fPIC", "-ffp-contract=off", "-std=gnu++17"]
GHZ = 1.5  # the Raspberry Pi 4's Cortex-A72 clock

# ninegrid's kernels: the driver's name, what the table calls it.
OURS = [
    ("dw3x3s1", "depthwise 3x3 s1, tile 2 rows x 4 px (32 ch, 32x32)"),
    ("dw3x3s2", "depthwise 3x3 s2, tile 2 rows x 4 px (32 ch, 64x64 -> 32x32)"),
    ("pointwise", "pointwise 1x1, tile 2 blocks x 12 px (64 -> 64, 20x20)"),
    ("direct3x3", "direct 3x3 s1, tile 2 blocks x 12 px (64 -> 32, 20x20)"),
    ("first3x3s2", "direct 3x3 s2 from plain NCHW (3 -> 8, 64x64)"),
    ("winograd43", "Winograd F(4x4, 3x3) multiply, tile 12 tiles x 2 blocks (64 -> 64, 48 tiles)"),
]


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("arm_mca.py: %s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:],
                                                         p.stderr[-3000:]))
    return p


def find_llvm_mca():
    for name in ["llvm-mca"] + ["llvm-mca-%d" % v for v in range(20, 10, -1)]:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("arm_mca.py: llvm-mca not found (Debian package llvm)")


# ---- the trace ----

def objdump_text(binary):
    """Offset -> instruction text (GNU syntax, branch and address targets left as 'HEX <symbol>')."""
    out = run([OBJDUMP, "-d", "--no-show-raw-insn", binary]).stdout
    insns = {}
    for line in out.split("\n"):
        m = re.match(r"^\s+([0-9a-f]+):\t(.*)$", line)
        if m:
            insns[int(m.group(1), 16)] = m.group(2).split("//")[0].strip()
    return insns


def trace_hot_iteration(binary, args, text_binary):
    """Runs binary under qemu with block logging; returns (instructions of the most frequent iteration,
    how many times it ran, how many times its first block ran)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "qemu.log")
        out = run(["qemu-aarch64", "-d", "in_asm,exec,nochain", "-D", log, binary] + args).stdout
        m = re.search(r"base (0x[0-9a-f]+)", out)
        if not m:
            sys.exit("arm_mca.py: %s printed no load address:\n%s" % (binary, out))
        base = int(m.group(1), 16)
        entry = int(re.search(r"entry (0x[0-9a-f]+)", out).group(1), 16)
        insns = objdump_text(text_binary)
        blocks = {}  # block start -> instruction addresses, as qemu translated it
        runs = []
        current = None
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("Trace "):
                    current = None
                    pc = int(line.split("[", 1)[1].split("/")[1], 16)
                    if pc - base in insns:
                        runs.append(pc)
                elif line.startswith("IN:"):
                    current = []
                elif current is not None:
                    m = re.match(r"^0x([0-9a-f]+):", line)
                    if m:
                        if not current:
                            start = int(m.group(1), 16)
                            if start in blocks:
                                current = None
                                continue
                            blocks[start] = current
                        current.append(int(m.group(1), 16))
                    elif not line.strip():
                        current = None
    runs = runs[runs.index(entry):]  # from the kernel's call on
    counts = collections.Counter(runs)
    hottest = max(counts, key=lambda pc: (counts[pc], -pc))
    segments = collections.Counter()
    last = None
    for i, pc in enumerate(runs):
        if pc == hottest:
            if last is not None:
                segments[tuple(runs[last:i])] += 1
            last = i
    segment, times = segments.most_common(1)[0]
    code = []
    for pc in segment:
        code += [insns[a - base] for a in blocks[pc] if a - base in insns]
    return code, times, counts[hottest]


# ---- llvm-mca ----

TARGET = ".Lmca_target"


def mca_source(code):
    """GNU objdump text to assembler input: every 'HEX <symbol>' operand (branch, adrp, literal) becomes a
    local label, so branches assemble; llvm-mca does not follow them. A call (bl) becomes a plain branch:
    llvm-mca gives calls a made-up 100-cycle latency, which the return address would carry into the next
    iteration; a predicted call costs what a taken branch does."""
    lines = [re.sub(r"\b[0-9a-f]+ <[^>]*>", TARGET, c) for c in code]
    lines = [re.sub(r"^bl\s", "b\t", c) for c in lines]
    return "\n".join(lines + [TARGET + ":", ""])


def mca(llvm_mca, code, cpu, iterations=200):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write(mca_source(code))
        path = f.name
    try:
        out = run([llvm_mca, "-mtriple=aarch64", "-mcpu=" + cpu, "-iterations=%d" % iterations, path]).stdout
    finally:
        os.unlink(path)
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    rthroughput = float(re.search(r"Block RThroughput:\s+([\d.]+)", out).group(1))
    return cycles / iterations, rthroughput


def fmla_rthroughput(llvm_mca, cpu):
    """Cycles per FMLA (4 lanes) when nothing else limits it: 24 independent ones."""
    code = ["fmla v%d.4s, v30.4s, v31.4s" % i for i in range(24)]
    cycles, _ = mca(llvm_mca, code, cpu, iterations=500)
    return cycles / len(code)


def analyse(llvm_mca, code, cpu, per_fmla):
    fmla = sum(1 for c in code if c.startswith("fmla"))
    # Loads into vector registers: ld1/ld1r/... of a register list, ldr/ldp/ldur of a q, d or s register.
    loads = sum(1 for c in code if re.match(r"ld\w*\s+(\{v|[qds]\d)", c))
    cycles, rthroughput = mca(llvm_mca, code, cpu)
    return {"insns": len(code), "fmla": fmla, "vloads": loads, "cycles": cycles, "rthroughput": rthroughput,
            "bound": fmla * per_fmla}


# ---- ncnn ----

NCNN_DRIVER = r"""
// Written by bench/arm_mca.py: runs ncnn's pack4 depthwise 3x3 or its 1x1 GEMM tile once, for tracing. The
// kernels are called through volatile pointers, so that they run as compiled out of line, at the address
// printed.
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include <arm_neon.h>
#include "cpu.h"
#include "mat.h"
#include "option.h"
#include "arm_usability.h"
namespace ncnn {
int cpu_support_arm_asimdhp() { return 0; }  // the A72 has no fp16 arithmetic: ncnn's A72 GEMM path
#include "layer/arm/convolutiondepthwise_3x3_pack4.h"
#include "layer/arm/convolution_im2col_gemm.h"
}
using namespace ncnn;
using DwFn = void (*)(const Mat&, Mat&, const Mat&, const Mat&, const ncnn::Option&);
using GemmFn = void (*)(const Mat&, const Mat&, const Mat&, Mat&, Mat&, int, int, int, int, int, int, bool, int);
int main(int argc, char** argv) {
  // Only read for OpenMP's thread count, which this build does not use.
  alignas(ncnn::Option) static unsigned char opt_bytes[sizeof(ncnn::Option)] = {};
  const ncnn::Option& opt = *reinterpret_cast<const ncnn::Option*>(opt_bytes);
  std::vector<float> a(1 << 20), b(1 << 20), w(1 << 16), bias(1 << 12);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13) - 6.f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 7) * 0.125f - 0.375f;
  void* entry = nullptr;
  const bool s2 = !std::strcmp(argv[1], "dw3x3s2");
  if (!std::strcmp(argv[1], "dw3x3s1") || s2) {
    DwFn volatile dw = s2 ? convdw3x3s2_pack4_neon : convdw3x3s1_pack4_neon;
    entry = reinterpret_cast<void*>(dw);
    // 32 channels as 8 pack4 groups; the input padded by one pixel each side.
    const int out = 32, in = s2 ? 2 * out + 1 : out + 2, groups = 8;
    Mat bottom(in, in, groups, a.data(), 16u, 4);
    Mat top(out, out, groups, b.data(), 16u, 4);
    Mat kernel(36, groups, w.data(), 4u, 1);
    Mat bias_mat(groups * 4, bias.data(), 4u, 1);
    dw(bottom, top, kernel, bias_mat, opt);
  } else {
    // One call of the GEMM tile as convolution_im2col_gemm makes it for a 64 -> 64 1x1 conv on 96 pixels
    // (8 tiles of 12): all of K, bias from pC, pack4 output.
    GemmFn volatile gemm = convolution_gemm_transB_packed_tile;
    entry = reinterpret_cast<void*>(gemm);
    const int max_ii = 64, max_jj = 96, max_kk = 64;
    Mat AT(max_kk * max_ii, w.data(), 4u, 1);
    Mat BT(max_kk * max_jj, a.data(), 4u, 1);
    Mat CT(max_ii, bias.data(), 4u, 1);
    std::vector<float> topT_data(max_ii * max_jj);
    Mat topT(max_ii * max_jj, topT_data.data(), 4u, 1);
    Mat top(max_jj, 1, max_ii / 4, b.data(), 16u, 4);
    gemm(AT, BT, CT, topT, top, 0, max_ii, 0, max_jj, 0, max_kk, true, 0);
  }
  Dl_info info;
  dladdr(entry, &info);
  std::printf("binary base %p entry %p checksum %g\n", info.dli_fbase, entry, double(b[5]));
  return 0;
}
"""

NCNN_ON = {"NCNN_STDIO", "NCNN_STRING", "NCNN_GNU_INLINE_ASM", "NCNN_INT8", "NCNN_BF16"}


def build_ncnn_driver(ncnn_git, tmp):
    src = os.path.join(tmp, "ncnn")
    os.makedirs(src)
    archive = subprocess.run(["git", "--git-dir", ncnn_git, "archive", "HEAD", "src"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    head = run(["git", "--git-dir", ncnn_git, "rev-parse", "HEAD"]).stdout.strip()
    inc = os.path.join(src, "src")
    # The two headers ncnn's CMake generates: the build switches (ours: the A72 build's relevant ones) and
    # the export macros (empty: a static driver).
    with open(os.path.join(inc, "platform.h.in")) as f:
        platform = f.read()
    platform = re.sub(r"#cmakedefine01 (\w+)", lambda m: "#define %s %d" % (m.group(1), m.group(1) in NCNN_ON),
                      platform)
    platform = re.sub(r"#cmakedefine (\w+) .*", "", platform)
    with open(os.path.join(inc, "platform.h"), "w") as f:
        f.write(platform)
    with open(os.path.join(inc, "ncnn_export.h"), "w") as f:
        f.write("#pragma once\n#define NCNN_EXPORT\n#define NCNN_NO_EXPORT\n#define NCNN_DEPRECATED\n")
    driver = os.path.join(tmp, "ncnn_driver.cpp")
    with open(driver, "w") as f:
        f.write(NCNN_DRIVER)
    binary = os.path.join(tmp, "ncnn_driver")
    run([CXX] + CXXFLAGS + ["-w", "-I", inc, "-I", os.path.join(inc, "layer", "arm"), driver, "-o", binary, "-ldl"])
    return binary, head


# ---- RetinaFace's convs ----

def retinaface_convs(param_path, size=640):
    """(name, kind, in_c, out_c, kernel, stride, out_h, out_w) of every conv of an ncnn RetinaFace model."""
    shapes = {}
    convs = []
    with open(param_path) as f:
        lines = f.read().split("\n")[2:]
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        kind, name, n_in, n_out = parts[0], parts[1], int(parts[2]), int(parts[3])
        ins, outs = parts[4:4 + n_in], parts[4 + n_in:4 + n_in + n_out]
        params = dict(p.split("=", 1) for p in parts[4 + n_in + n_out:])
        if kind == "Input":
            shapes[outs[0]] = (3, size, size)
            continue
        c, h, w = shapes[ins[0]]
        if kind in ("Convolution", "ConvolutionDepthWise"):
            k, s, p = int(params.get("1", 1)), int(params.get("3", 1)), int(params.get("4", 0))
            oc = int(params["0"])
            oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
            dw = kind == "ConvolutionDepthWise" and int(params.get("7", 1)) == c == oc
            if dw:
                algorithm = "dw"
            elif k == 1 and s == 1:
                algorithm = "pw"
            elif k == 3 and s == 1 and c >= 16:
                algorithm = "winograd"  # what ninegrid's conv selection takes on NEON (`ninegrid profile`)
            else:
                algorithm = "direct"
            convs.append((name, algorithm, c, oc, k, s, oh, ow))
            shapes[outs[0]] = (oc, oh, ow)
        elif kind == "Concat":
            shapes[outs[0]] = (sum(shapes[i][0] for i in ins), h, w)
        elif kind == "Interp":
            shapes[outs[0]] = (c, int(h * float(params["1"])), int(w * float(params["2"])))
        elif kind == "Crop":
            shapes[outs[0]] = (c,) + shapes[ins[1]][1:]
        else:  # Split, ReLU, BinaryOp, Reshape, Softmax: the heads' shapes after Reshape are not needed
            for o in outs:
                shapes[o] = (c, h, w)
    return convs


def conv_fmlas(kind, in_c, out_c, k, oh, ow):
    """4-lane FMLAs of a conv computed in 4-channel blocks (padding channels included); for Winograd
    F(4x4, 3x3), those of its GEMM: 36 per 4x4 output tile, input channel and output block."""
    blocks = (out_c + 3) // 4
    if kind == "dw":
        return blocks * k * k * oh * ow
    if kind == "winograd":
        return blocks * in_c * 36 * ((oh + 3) // 4) * ((ow + 3) // 4)
    return blocks * in_c * k * k * oh * ow


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build-arm"))
    ap.add_argument("--ncnn", help="git directory of a Tencent/ncnn snapshot (its kernels are analysed too)")
    ap.add_argument("--model", default=os.path.join(REPO, "..", "shared", "models", "mnet.25-opt.param"))
    ap.add_argument("--cpu", default="cortex-a72")
    opts = ap.parse_args()

    llvm_mca = find_llvm_mca()
    subprocess.run(["cmake", "--build", opts.build, "--target", "ninegrid_arm_kernel_trace"], check=True,
                   stdout=subprocess.DEVNULL)
    driver = os.path.join(opts.build, "ninegrid_arm_kernel_trace")
    library = os.path.realpath(os.path.join(opts.build, "libninegrid.so"))
    commit = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]).stdout.strip()
    mca_version = run([llvm_mca, "--version"]).stdout
    mca_version = re.search(r"LLVM version ([\d.]+)", mca_version).group(1)
    per_fmla = fmla_rthroughput(llvm_mca, opts.cpu)

    rows = []
    for name, label in OURS:
        code, times, hot = trace_hot_iteration(driver, [name], library)
        rows.append(("ninegrid " + commit, name, label, times, hot, analyse(llvm_mca, code, opts.cpu, per_fmla)))
    ncnn_head = None
    if opts.ncnn:
        with tempfile.TemporaryDirectory() as tmp:
            binary, ncnn_head = build_ncnn_driver(opts.ncnn, tmp)
            for name, label in [("dw3x3s1", "convdw3x3s1_pack4_neon, 2 rows x 4 px (32 ch, 32x32)"),
                                ("dw3x3s2", "convdw3x3s2_pack4_neon (32 ch, 65x65 -> 32x32)"),
                                ("gemm", "1x1 im2col-GEMM tile 8 ch x 12 px (64 -> 64, 96 px)")]:
                code, times, hot = trace_hot_iteration(binary, [name], binary)
                rows.append(("ncnn " + ncnn_head[:9], name, label, times, hot,
                             analyse(llvm_mca, code, opts.cpu, per_fmla)))

    print("llvm-mca %s, -mcpu=%s: one FMLA (4 lanes) every %.2f cycles at best; ninegrid at %s%s.\n" %
          (mca_version, opts.cpu, per_fmla, commit, ", ncnn at " + ncnn_head[:9] if ncnn_head else ""))
    print("| code | loop (layer traced) | iteration seen / hottest block runs | instructions | FMLA | vector "
          "loads | cycles / iteration | FMLA bound | of bound |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for who, name, label, times, hot, r in rows:
        print("| %s | %s | %d / %d | %d | %d | %d | %.1f | %.1f | %.0f%% |" %
              (who, label, times, hot, r["insns"], r["fmla"], r["vloads"], r["cycles"], r["bound"],
               100 * r["bound"] / r["cycles"] if r["cycles"] else 0))

    # Each conv at its kernel's cycles per FMLA: ninegrid's loops, and ncnn's where they were analysed.
    ours = {name: r for who, name, label, times, hot, r in rows if who.startswith("ninegrid")}
    theirs = {name: r for who, name, label, times, hot, r in rows if who.startswith("ncnn")}
    ours_key = {"first": "first3x3s2", "dw1": "dw3x3s1", "dw2": "dw3x3s2", "pw": "pointwise", "direct": "direct3x3",
                "winograd": "winograd43"}
    ncnn_key = {"dw1": "dw3x3s1", "dw2": "dw3x3s2", "pw": "gemm"}
    convs = retinaface_convs(opts.model)
    print("\nRetinaFace-MobileNet0.25 at 640x640 (%s), %d convs, 1 thread, %.1f GHz: each conv's 4-lane FMLAs "
          "times the cycles per FMLA of its kernel's loop above.\n" % (os.path.basename(opts.model), len(convs), GHZ))
    totals = collections.OrderedDict()
    for name, kind, in_c, out_c, k, s, oh, ow in convs:
        key = {"dw": "dw1" if s == 1 else "dw2", "pw": "pw", "winograd": "winograd"}.get(kind)  # else direct
        if key is None:
            key = "first" if in_c == 3 else "direct"
        fmlas = conv_fmlas(kind, in_c, out_c, k, oh, ow)
        bound = fmlas * per_fmla
        mine = ours.get(ours_key.get(key))
        other = theirs.get(ncnn_key.get(key))
        t = totals.setdefault(key, [0, 0, 0.0, 0.0, 0.0])
        t[0] += 1
        t[1] += fmlas
        t[2] += bound
        ninegrid_cycles = fmlas * mine["cycles"] / mine["fmla"] if mine else bound
        t[3] += ninegrid_cycles
        t[4] += fmlas * other["cycles"] / other["fmla"] if other else ninegrid_cycles
    names = {"first": "first conv 3x3 s2 from NCHW (3 -> 8)", "dw1": "depthwise 3x3 s1", "dw2": "depthwise 3x3 s2",
             "pw": "pointwise 1x1", "winograd": "dense 3x3 s1 (SSH), Winograd F(4x4, 3x3): multiply only *",
             "direct": "other dense convs"}
    ms = lambda cycles: cycles / GHZ / 1e6
    print("| convs | count | 4-lane FMLAs (M) | at the FMLA bound (ms) | ninegrid's loops (ms) | with ncnn's dw and "
          "1x1 loops (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    sums = [0, 0, 0.0, 0.0, 0.0]
    for key, t in totals.items():
        print("| %s | %d | %.1f | %.1f | %.1f | %.1f |" % (names[key], t[0], t[1] / 1e6, ms(t[2]), ms(t[3]), ms(t[4])))
        sums = [a + b for a, b in zip(sums, t)]
    print("| all convs | %d | %.1f | %.1f | %.1f | %.1f |" % (sums[0], sums[1] / 1e6, ms(sums[2]), ms(sums[3]),
                                                           ms(sums[4])))
    print("\n\\* the input and output transforms are not counted.")

if __name__ == "__main__":
    main()
