"""ninegrid profile: the per-layer table, its JSON, and the HTML report rendered by a real browser.

usage: test_profile.py NINEGRID_BINARY SHARED_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN = SHARED = None
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def run(*args, check=True):
    p = subprocess.run([BIN, "profile", *args], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"ninegrid profile {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


class ProfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = os.path.join(SHARED, "models", "mnet.25-opt.param")
        cls.tmp = tempfile.mkdtemp()
        cls.html = os.path.join(cls.tmp, "report.html")
        cls.data = json.loads(run(cls.model, "--shape", "data=1x3x96x96", "--runs", "3", "--threads", "1",
                                  "--json", "--html", cls.html).stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_layers_add_up(self):
        layers = self.data["layers"]
        self.assertGreater(len(layers), 20)
        self.assertAlmostEqual(sum(l["share"] for l in layers), 1.0, places=6)
        self.assertAlmostEqual(sum(l["median_ms"] for l in layers), self.data["total_ms"], places=6)
        # Invariants of how the figures are aggregated, true whatever the timing noise (ctest runs this
        # beside other tests on two cores):
        # - each run's sum lies between the sums of the layers' fastest and slowest times;
        # - the whole-run figure is the median of the runs' sums;
        # - with three runs, each layer's median is at most the larger of its times in the two fastest runs,
        #   so the layers' medians add up to at most twice the median run.
        runs = self.data["run_ms"]
        self.assertEqual(len(runs), self.data["runs"])
        lo = sum(l["min_ms"] for l in layers)
        hi = sum(l["max_ms"] for l in layers)
        for l in layers:
            self.assertLessEqual(l["min_ms"], l["median_ms"])
            self.assertLessEqual(l["median_ms"], l["max_ms"])
        for r in runs:
            self.assertGreaterEqual(r, lo - 1e-9)
            self.assertLessEqual(r, hi + 1e-9)
        self.assertAlmostEqual(self.data["run_median_ms"], sorted(runs)[1], places=9)
        self.assertGreaterEqual(2 * self.data["run_median_ms"], self.data["total_ms"] - 1e-9)
        self.assertGreater(self.data["peak_gflops"], 0)
        self.assertGreater(self.data["bandwidth_gbs"], 0)

    def test_roofline_quantities_are_consistent(self):
        # The first conv: 3 -> 8 channels, 3x3, stride 2, 96x96 -> 48x48: MACs by hand.
        first = self.data["layers"][0]
        self.assertEqual(first["op"], "Conv")
        self.assertEqual(first["macs"], 48 * 48 * 8 * 3 * 3 * 3)
        for l in self.data["layers"]:
            if l["macs"] and l["median_ms"] > 0:
                self.assertAlmostEqual(l["gflops"], 2 * l["macs"] / (l["median_ms"] * 1e6), delta=1e-6 * l["gflops"] + 1e-9)
                self.assertAlmostEqual(l["intensity"], 2 * l["macs"] / l["bytes"], delta=1e-9 + 1e-9 * l["intensity"])
                self.assertAlmostEqual(l["peak_fraction"], l["gflops"] / self.data["peak_gflops"], delta=1e-9)

    def test_fused_epilogue_is_reported(self):
        self.assertIn("Relu", {l["fused"] for l in self.data["layers"]})

    def test_html_renders_table_and_chart_in_a_browser(self):
        if not os.path.exists(CHROMIUM):
            self.fail("chromium not installed: run scripts/install_deps.sh")
        with tempfile.TemporaryDirectory() as profile_dir:
            dom = subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--user-data-dir=" + profile_dir, "--virtual-time-budget=5000", "--dump-dom",
                 "file://" + self.html], capture_output=True, text=True, timeout=120).stdout
        rows = len(re.findall(r'<tr class="layer">', dom))
        points = len(re.findall(r'<circle class="point"', dom))
        with_work = sum(1 for l in self.data["layers"] if l["macs"] > 0 and l["median_ms"] > 0)
        self.assertEqual(rows, len(self.data["layers"]), "table rows rendered")
        self.assertEqual(points, with_work, "roofline points rendered")
        self.assertEqual(len(re.findall(r'class="roof"', dom)), 2, "bandwidth and compute roofs")
        self.assertNotIn("http://", dom.replace("http://www.w3.org", ""), "the page must need no network")

    def test_errors(self):
        p = run("/nonexistent.onnx", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("/nonexistent.onnx", p.stderr)
        p = run(self.model, "--runs", "0", check=False)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    BIN, SHARED = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1])
