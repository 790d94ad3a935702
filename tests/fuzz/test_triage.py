"""fuzz/triage.py's rerun of a timed-out input: classified by the CPU time it uses alone, not its wall time,
so that an input run beside builds at nice 19 is not called a hang (the fifth 30-minute round's "hang"
took 2.4 s of CPU and over 60 s of wall time). Fake fuzzer binaries stand in for a harness."""
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz"))
import triage  # noqa: E402

# A fake harness: sleeps or spins as its input file says, then reports the way libFuzzer does; like
# libFuzzer it gives up on an input after -timeout=N seconds of wall time (N > 0).
FAKE = """#!/usr/bin/python3
import sys, time
what = open(sys.argv[-1]).read().split()
timeout = [int(a[9:]) for a in sys.argv if a.startswith("-timeout=")][-1]
if what[0] == "sleep":
    end = time.monotonic() + float(what[1])
    while time.monotonic() < end:
        if timeout > 0 and time.monotonic() > end - float(what[1]) + timeout:
            print("ALARM: working on the last Unit for %d seconds" % timeout)
            sys.exit(70)
        time.sleep(0.05)
elif what[0] == "spin":
    end = time.process_time() + float(what[1])
    while time.process_time() < end:
        pass
elif what[0] == "fail":
    sys.exit(1)
print("Executed %s in 5 ms" % sys.argv[-1])
"""


class RerunTimeout(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.binary = os.path.join(self.dir.name, "fake_fuzzer")
        with open(self.binary, "w") as f:
            f.write(FAKE)
        os.chmod(self.binary, os.stat(self.binary).st_mode | stat.S_IXUSR)
        self.saved = triage.SLOW_LIMIT_S, triage.WALL_LIMIT_S
        triage.SLOW_LIMIT_S, triage.WALL_LIMIT_S = 2, 20

    def tearDown(self):
        triage.SLOW_LIMIT_S, triage.WALL_LIMIT_S = self.saved
        self.dir.cleanup()

    def rerun(self, what):
        artifact = os.path.join(self.dir.name, "timeout-x")
        with open(artifact, "w") as f:
            f.write(what)
        return triage.rerun_timeout(self.binary, artifact, ["-timeout=10", "-rss_limit_mb=2048"])

    def test_waiting_longer_than_the_cpu_limit_is_slow_not_a_hang(self):
        kind, reason = self.rerun("sleep 3")  # 3 s of wall time, almost no CPU: a starved process
        self.assertEqual(kind, "slow", reason)
        self.assertIn("CPU time", reason)

    def test_computing_past_the_cpu_limit_is_a_hang(self):
        kind, reason = self.rerun("spin 30")
        self.assertEqual(kind, "hang", reason)
        self.assertIn("more than 2 s of CPU time", reason)

    def test_blocked_past_the_wall_limit_is_a_hang(self):
        triage.WALL_LIMIT_S = 1
        kind, reason = self.rerun("sleep 30")
        self.assertEqual(kind, "hang", reason)
        self.assertIn("wall time", reason)

    def test_a_failing_rerun_is_a_hang_with_its_status(self):
        kind, reason = self.rerun("fail")
        self.assertEqual(kind, "hang", reason)
        self.assertIn("exit status 1", reason)


if __name__ == "__main__":
    unittest.main()
