#!/usr/bin/env python3
"""ODR check of the per-ISA kernel objects (src/kernels/x86/avx512/, avx2/, vnni/; src/kernels/arm/neon/,
dotprod/).

Those files are compiled with -mavx512f / -mavx2 (and +dotprod on AArch64). If one of them emitted a weak
(COMDAT) definition of an inline or template function that generic code also uses (std::min,
std::vector<...>::..., an inline helper from a shared header), the linker could keep the AVX-512 copy for
the whole library, and the engine would crash with an illegal instruction on CPUs without AVX-512. So:
every symbol such an object defines must be local or a strong ninegrid::avx512:: / ninegrid::avx2:: (...)
entry point.

  check_isa_objects.py OBJECT...   (objects of other folders are ignored)
"""
import re
import subprocess
import sys

ISA_DIR = re.compile(r"kernels/(?:x86|arm)/(avx512|avx2|vnni|neon|dotprod)/")


def main(objects):
    isa_objects = [o for o in objects if ISA_DIR.search(o.replace("\\", "/"))]
    if not isa_objects:
        print("no ISA kernel objects given")
        return 1
    bad = []
    for obj in isa_objects:
        isa = ISA_DIR.search(obj.replace("\\", "/")).group(1)
        out = subprocess.run(["nm", "-C", "--defined-only", obj], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            parts = line.split(None, 2)
            if len(parts) < 3:
                continue
            kind, name = parts[1], parts[2]
            if kind in "tbdrn":  # local text, bss, data, rodata: invisible to the linker
                continue
            if kind == "T" and name.startswith("ninegrid::%s::" % isa):
                continue
            # DW.ref.__gxx_personality_v0: a weak data word holding the address of the C++ personality
            # routine for unwind tables (sanitiser builds emit it). It is not code, so no ISA can leak.
            if kind == "V" and name.startswith("DW.ref."):
                continue
            bad.append("%s: %s %s" % (obj, kind, name))
    for b in bad:
        print("shared or weak symbol in an ISA object:", b)
    print("%d ISA objects checked, %d bad symbols" % (len(isa_objects), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
