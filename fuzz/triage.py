#!/usr/bin/python3
"""Summarises one scripts/fuzz.sh run: per harness the executions, coverage and time from libFuzzer's
last status line, and every artifact it saved, each reproduced once and classified:

  crash  a sanitizer report (ASan, UBSan, LeakSanitizer), a signal, or an exception other than
         ninegrid::Error escaping the harness: a bug
  hang   an input that ran longer than the timeout during fuzzing and, run again alone, used more than
         SLOW_LIMIT_S seconds of CPU time without finishing: a bug
  slow   an input that ran longer than the timeout while fuzzing (a busy machine, a sanitizer build) but
         finishes alone within SLOW_LIMIT_S seconds of CPU time: reported with its times, not failed on. A
         few bytes may legitimately ask for seconds of work under ASan (a 25-byte TGA declaring 35 Mpixel).
         The limit is on CPU time, not wall time: a run at nice 19 beside builds gets a sliver of a core,
         and 2.4 s of work took over 60 s of wall time in the fifth 30-minute round.
  oom    a resource finding: libFuzzer's malloc or RSS limit, or ASan refusing an allocation beyond its
         maximum: reported, not failed on, unless one allocation was larger than the default budget
         (Options::max_tensor_bytes): that is a crash, since the plan should have refused it.

Usage: triage.py RUN_DIR BUILD_DIR -- LIBFUZZER_LIMIT_FLAGS...   (exit status 1 on any crash or hang)
RUN_DIR holds one folder per harness with fuzz.log and artifacts/.
"""
import os
import re
import resource
import signal
import subprocess
import sys
import time

STATUS = re.compile(r"^#(\d+): cov: (\d+) ft: (\d+) corp: (\d+) exec/s (\d+) oom/timeout/crash: (\d+)/(\d+)/(\d+) "
                    r"time: (\d+)s")
# Crash artifacts reproduced per harness: one bug hit over and over can leave hundreds, and each rerun
# costs a process start. Those beyond the cap count as crashes unexamined.
MAX_REPRODUCED = 40
# Timeouts are run again alone with this limit in seconds of CPU time (and WALL_LIMIT_S of wall time, for
# a machine so busy that the CPU limit would take too long to reach); at most MAX_SLOW_REPRODUCED per
# harness (the rest count as hangs unexamined).
SLOW_LIMIT_S = 60
WALL_LIMIT_S = 300
MAX_SLOW_REPRODUCED = 10
DEFAULT_BUDGET_BYTES = 4 << 30
RESOURCE = ("out-of-memory", "allocation-size-too-big", "requested allocation size", "allocator is out of memory",
            "rss limit", "malloc limit")


def last_status(log):
    found = None
    with open(log, errors="replace") as f:
        for line in f:
            m = STATUS.match(line)
            if m:
                found = m
    if not found:
        return None
    keys = ("execs", "cov", "ft", "corpus", "exec_per_s", "ooms", "timeouts", "crashes", "seconds")
    return dict(zip(keys, (int(g) for g in found.groups())))


def rerun_timeout(binary, artifact, limit_flags):
    """Runs a timeout or slow-unit artifact alone, limited to SLOW_LIMIT_S seconds of CPU time (libFuzzer's
    wall-clock timeout off); returns (class, reason)."""
    flags = [f for f in limit_flags if not f.startswith("-timeout=")] + ["-timeout=0"]

    def limit_cpu():
        resource.setrlimit(resource.RLIMIT_CPU, (SLOW_LIMIT_S, SLOW_LIMIT_S + 5))

    def cpu_seconds():
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        return u.ru_utime + u.ru_stime

    cpu_before, wall_before = cpu_seconds(), time.monotonic()
    try:
        r = subprocess.run([binary, "-runs=1"] + flags + [artifact], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=WALL_LIMIT_S, errors="replace", preexec_fn=limit_cpu)
    except subprocess.TimeoutExpired:  # run() killed and reaped it: its CPU time is counted
        return "hang", "still running after %d s of wall time (%.1f s of CPU time) when run alone" % (
            WALL_LIMIT_S, cpu_seconds() - cpu_before)
    cpu, wall = cpu_seconds() - cpu_before, time.monotonic() - wall_before
    if r.returncode == 0 and re.search(r"Executed .* in \d+ ms", r.stdout):
        return "slow", ("ran longer than the timeout while fuzzing; alone it finished in %.1f s of CPU time "
                        "(%.1f s wall)" % (cpu, wall))
    if r.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return "hang", "used more than %d s of CPU time when run alone without finishing" % SLOW_LIMIT_S
    return "hang", "did not finish when run alone (exit status %d after %.1f s of CPU time)" % (r.returncode, cpu)


def reproduce(binary, artifact, limit_flags):
    """Runs the artifact once; returns (class, one-line reason)."""
    try:
        r = subprocess.run([binary, "-runs=1"] + limit_flags + [artifact], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=300, errors="replace")
        out = r.stdout
    except subprocess.TimeoutExpired:
        return "hang", "still running after 300 s when reproduced"
    summary = next((l.strip() for l in out.splitlines() if l.startswith("SUMMARY:")), "")
    error = next((l.strip() for l in out.splitlines() if "ERROR:" in l or "runtime error:" in l
                  or "terminate called" in l), "")
    text = (summary + " " + error).lower()
    if "libfuzzer: timeout" in text or "ALARM: working on the last Unit" in out:
        return "hang", summary or error
    # An allocation beyond the default budget (Options::max_tensor_bytes, 4 GiB) is a bug now that the
    # budget exists: the plan should have refused it, naming the node (Pad's and Resize's index tables
    # were such findings).
    m = re.search(r"trying to allocate (0x[0-9a-f]+) bytes", out)
    if m and int(m.group(1), 16) > DEFAULT_BUDGET_BYTES:
        return "crash", "allocation of %d bytes, past the default budget of %d: %s" % (
            int(m.group(1), 16), DEFAULT_BUDGET_BYTES, summary or error)
    if any(k in text for k in RESOURCE):
        return "oom", summary or error
    if r.returncode == 0:
        return "flaky", "did not fail when run again"
    return "crash", summary or error or "exit status %d" % r.returncode


def main():
    run_dir, build_dir = sys.argv[1], sys.argv[2]
    limit_flags = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    rows, findings = [], []
    for harness in sorted(os.listdir(run_dir)):
        hdir = os.path.join(run_dir, harness)
        log = os.path.join(hdir, "fuzz.log")
        if not os.path.isfile(log):
            continue
        stats = last_status(log) or {}
        counts = {"crash": 0, "hang": 0, "slow": 0, "oom": 0, "flaky": 0}
        seen = {}
        adir = os.path.join(hdir, "artifacts")
        binary = os.path.join(build_dir, "fuzz", harness)
        reproduced = slow_reproduced = 0
        for name in sorted(os.listdir(adir)) if os.path.isdir(adir) else []:
            path = os.path.join(adir, name)
            if name.startswith("timeout-") or name.startswith("slow-unit-"):
                if slow_reproduced >= MAX_SLOW_REPRODUCED:
                    kind, reason = "hang", "ran longer than the timeout (not run again: more than %d)" % \
                        MAX_SLOW_REPRODUCED
                else:
                    slow_reproduced += 1
                    kind, reason = rerun_timeout(binary, path, limit_flags)
            elif name.startswith("oom-"):
                kind, reason = "oom", "libFuzzer's memory limit"
            elif reproduced >= MAX_REPRODUCED:
                kind, reason = "crash", "not reproduced (more than %d crash artifacts)" % MAX_REPRODUCED
            else:
                reproduced += 1
                kind, reason = reproduce(binary, path, limit_flags)
            counts[kind] += 1
            # One line per distinct reason: many inputs usually hit the same few bugs.
            key = (kind, re.sub(r"0x[0-9a-f]+|\d+", "N", reason))
            if key not in seen:
                seen[key] = True
                findings.append((harness, kind, reason, path))
        rows.append((harness, stats, counts))

    print("\n%-18s %10s %8s %8s %7s %6s %7s %6s %6s %6s" % ("harness", "execs", "cov", "ft", "corpus", "time",
                                                              "crashes", "hangs", "slow", "ooms"))
    for harness, s, c in rows:
        print("%-18s %10s %8s %8s %7s %5ss %7d %6d %6d %6d" % (harness, s.get("execs", "?"), s.get("cov", "?"),
                                                              s.get("ft", "?"), s.get("corpus", "?"),
                                                              s.get("seconds", "?"), c["crash"], c["hang"], c["slow"],
                                                              c["oom"]))
    if findings:
        print("\nDistinct findings (reproduce: build-fuzz/fuzz/HARNESS ARTIFACT; shrink: add -minimize_crash=1 "
              "-runs=100000):")
        for harness, kind, reason, path in findings:
            print("  [%s] %s: %s\n      %s" % (kind, harness, reason[:300], path))
    bad = sum(c["crash"] + c["hang"] for _, _, c in rows)
    print("\n%s" % ("FAILED: %d crash/hang artifact(s)" % bad if bad else "no crashes, no hangs"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
