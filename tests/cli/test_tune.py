#!/usr/bin/python3
"""Tests of `ninegrid tune` and the tuning cache on the command line.

usage: /usr/bin/python3 tests/cli/test_tune.py PATH/TO/ninegrid   (or set NINEGRID_CLI)

A small conv net built here with onnx.helper (3x3 and 1x1 convs, a depthwise conv, a residual Add) is
tuned into a cache file; the tests check that a second tune re-times nothing, that the cache's plans are
used by run/info (and not with --no-tuning-cache), that tuned and untuned runs match a numpy reference,
that a corrupt or foreign cache is ignored with a warning, and that the default file is
$XDG_CACHE_HOME/ninegrid/tuning.cache. Every process gets XDG_CACHE_HOME in a temporary directory, so the
user's cache is never read or written. An int8 model (scripts/make_test_models.sh's quantised ResNet-18) is
tuned too: its convs are listed as int8, a second tune re-times nothing, runs use the cache, and the output
is the same with the cache as without it (integer kernels are exact).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CLI = os.environ.get("NINEGRID_CLI", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUANTIZED = os.path.join(os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache")), "models", "quantized")


def conv_ref(x, w, b, stride=1, pad=0, group=1):
    """Plain numpy NCHW convolution (the reference)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, w[g * mg:(g + 1) * mg, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def small_net():
    """x (1x16x24x24) -> conv3x3 16->32 relu -> dw3x3 32 relu -> conv1x1 32->32 + (first conv's output) relu
    -> conv3x3 stride 2 32->48 = y. Returns the model and a numpy function computing it."""
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(32).astype(np.float32) * 0.1
    w2 = rng.standard_normal((32, 1, 3, 3)).astype(np.float32) * 0.3
    b2 = rng.standard_normal(32).astype(np.float32) * 0.1
    w3 = rng.standard_normal((32, 32, 1, 1)).astype(np.float32) * 0.2
    b3 = rng.standard_normal(32).astype(np.float32) * 0.1
    w4 = rng.standard_normal((48, 32, 3, 3)).astype(np.float32) * 0.1
    b4 = rng.standard_normal(48).astype(np.float32) * 0.1
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3"), (b3, "b3"), (w4, "w4"), (b4, "b4")]]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="dw", pads=[1, 1, 1, 1], group=32),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="pw"),
        helper.make_node("Add", ["c3", "r1"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["r3"], name="relu3"),
        helper.make_node("Conv", ["r3", "w4", "b4"], ["y"], name="conv4", pads=[1, 1, 1, 1], strides=[2, 2]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 24])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 48, 12, 12])
    graph = helper.make_graph(nodes, "g", [x], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)

    def reference(xv):
        r1 = np.maximum(conv_ref(xv, w1, b1, pad=1), 0)
        r2 = np.maximum(conv_ref(r1, w2, b2, pad=1, group=32), 0)
        r3 = np.maximum(conv_ref(r2, w3, b3) + r1, 0)
        return conv_ref(r3, w4, b4, stride=2, pad=1)
    return model, reference


class TuneTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.env = dict(os.environ, XDG_CACHE_HOME=os.path.join(cls.dir, "xdg"))
        model, reference = small_net()
        cls.reference = staticmethod(reference)  # a plain function, not a method of the test
        cls.model = os.path.join(cls.dir, "net.onnx")
        onnx.save(model, cls.model)
        cls.x = np.random.default_rng(9).standard_normal((1, 16, 24, 24)).astype(np.float32)
        cls.x_path = os.path.join(cls.dir, "x.npy")
        np.save(cls.x_path, cls.x)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def cli(self, *args, env=None, check=True):
        r = subprocess.run([CLI] + list(args), capture_output=True, text=True, env=env or self.env, timeout=600)
        self.assertGreaterEqual(r.returncode, 0, f"ninegrid {args} crashed: {r.stderr}")
        if check:
            self.assertEqual(r.returncode, 0, f"ninegrid {args} failed: {r.stderr}")
        return r

    def tune(self, cache, *extra):
        r = self.cli("tune", self.model, "--threads", "2", "--budget", "30", "--cache", cache, "--json", *extra)
        return json.loads(r.stdout), r

    def layers(self, *extra):
        r = self.cli("info", self.model, "--optimized", "--json", *extra)
        return [l for l in json.loads(r.stdout)["layers"] if l["op"] == "Conv"], r

    def run_model(self, *extra):
        out = tempfile.mkdtemp(dir=self.dir)
        r = self.cli("run", self.model, "--input", "x=" + self.x_path, "--output-dir", out, "--threads", "2", *extra)
        return np.load(os.path.join(out, "y.npy")), r

    def expect_reference(self, y, what):
        want = self.reference(self.x.astype(np.float64))
        scale = np.abs(want).max()
        np.testing.assert_allclose(y, want, atol=1e-4 * scale, rtol=0, err_msg=what)

    def test_a_second_tune_times_nothing_and_runs_use_the_cache(self):
        cache = os.path.join(self.dir, "first.cache")
        first, _ = self.tune(cache)
        self.assertEqual(first["layers"], 4)
        self.assertGreater(first["timed"], 0)
        self.assertEqual(first["from_cache"], 0)
        self.assertEqual(first["cache"], cache)
        self.assertTrue(os.path.exists(cache))
        for c in first["convs"]:
            self.assertGreater(c["candidates"], 1, c)
            self.assertGreater(c["rule_us"], 0, c)
            self.assertLessEqual(c["tuned_us"], c["rule_us"] * 1.0001, c)
        second, _ = self.tune(cache)
        self.assertEqual(second["timed"], 0, "a second tune must take everything from the cache")
        self.assertEqual(second["from_cache"], len(first["convs"]))
        for a, b in zip(first["convs"], second["convs"]):
            self.assertEqual(a["tuned_plan"], b["tuned_plan"])
        retimed, _ = self.tune(cache, "--retime")
        self.assertEqual(retimed["timed"], len(first["convs"]))

        # Loads use the cache's plans (every conv's plan comes from it, even where it is the rules' own),
        # unless told not to.
        # `info` plans with one thread, and plans are kept per thread count: a cache tuned with 2 threads
        # gives it nothing, one tuned with 1 thread every conv.
        conv_layers, _ = self.layers("--tuning-cache", cache)
        self.assertTrue(conv_layers)
        self.assertFalse(any(l["tuned"] for l in conv_layers), conv_layers)
        one_thread = os.path.join(self.dir, "one-thread.cache")
        self.cli("tune", self.model, "--threads", "1", "--budget", "30", "--cache", one_thread, "--json",
                 "--no-layout-search")
        conv_layers, _ = self.layers("--tuning-cache", one_thread)
        self.assertTrue(conv_layers)
        self.assertTrue(all(l["tuned"] for l in conv_layers), conv_layers)
        untuned, _ = self.layers("--tuning-cache", one_thread, "--no-tuning-cache")
        self.assertFalse(any(l["tuned"] for l in untuned))

        # Tuned and untuned runs both match the numpy reference.
        y_tuned, r = self.run_model("--tuning-cache", cache)
        self.assertNotIn("warning", r.stderr)
        self.expect_reference(y_tuned, "tuned")
        y_rules, _ = self.run_model("--no-tuning-cache")
        self.expect_reference(y_rules, "rules")

    def test_loads_run_on_the_threads_the_tuner_found_fastest(self):
        # Which count wins is the machine's business; what must hold either way: the tuner timed the model
        # at 2 threads and at 1, kept fewer only if they were faster, the cache holds a threads entry
        # exactly when it did, and a load asking for 2 threads runs on what the tuner chose.
        cache = os.path.join(self.dir, "threads.cache")
        result, r = self.tune(cache, "--no-layout-search")
        self.assertEqual(result["threads_asked"], 2)
        by_threads = {t["threads"]: t["ms"] for t in result["model_ms_by_threads"]}
        self.assertEqual(sorted(by_threads), [1, 2])
        self.assertTrue(all(ms > 0 for ms in by_threads.values()), by_threads)
        self.assertIn(result["threads"], (1, 2))
        if result["threads"] == 1:
            self.assertLess(by_threads[1], by_threads[2])
        with open(cache) as f:
            entries = [l for l in f.read().split("\n") if l.startswith("threads ")]
        self.assertEqual(len(entries), 1 if result["threads"] == 1 else 0, entries)
        for cached in (True, False):
            flags = ["--tuning-cache", cache] if cached else ["--no-tuning-cache"]
            bench = json.loads(self.cli("bench", self.model, "--threads", "2", "--runs", "3", "--json",
                                        *flags).stdout)
            self.assertEqual(bench["threads"], result["threads"] if cached else 2, flags)
        # A load asking for another count is not the measured one: it runs on what it asked for.
        bench = json.loads(self.cli("bench", self.model, "--threads", "3", "--runs", "3", "--json",
                                    "--tuning-cache", cache).stdout)
        self.assertEqual(bench["threads"], 3)
        # One thread asked: nothing to compare.
        result = json.loads(self.cli("tune", self.model, "--threads", "1", "--budget", "30", "--no-layout-search",
                                     "--cache", os.path.join(self.dir, "one.cache"), "--json").stdout)
        self.assertEqual(result["model_ms_by_threads"], [])
        self.assertEqual(result["threads"], 1)

    def test_a_corrupt_or_foreign_cache_is_ignored_with_a_warning(self):
        cache = os.path.join(self.dir, "good.cache")
        self.tune(cache, "--no-layout-search")
        with open(cache) as f:
            text = f.read()
        cases = {
            "truncated": text[: len(text) // 2],
            "garbage": "\x7fELF\x00\x01 not a cache at all",
            "bad plan": text.replace(" | ", " | warp9 ", 1),
            "other cpu": "\n".join(("cpu SomeOtherVendor|Other|avx2|L1d 1K|L2 1K|L3 1K" if l.startswith("cpu ") else l)
                                   for l in text.split("\n")),
        }
        for what, content in cases.items():
            path = os.path.join(self.dir, what.replace(" ", "_") + ".cache")
            with open(path, "w", errors="surrogateescape") as f:
                f.write(content)
            y, r = self.run_model("--tuning-cache", path)
            self.assertIn("warning: tuning cache '" + path + "' ignored", r.stderr, what)
            self.expect_reference(y, what)
            conv_layers, r = self.layers("--tuning-cache", path)
            self.assertIn("ignored", r.stderr, what)
            self.assertFalse(any(l["tuned"] for l in conv_layers), what)
        # The same file is replaced by a new tune, with a warning.
        path = os.path.join(self.dir, "garbage.cache")
        result, r = self.tune(path, "--no-layout-search")
        self.assertIn("ignored", r.stderr)
        self.assertGreater(result["timed"], 0)
        with open(path) as f:
            self.assertTrue(f.read().startswith("ninegrid-tuning-cache 1\n"))

    def test_the_default_cache_is_under_xdg_cache_home(self):
        env = dict(self.env, XDG_CACHE_HOME=os.path.join(self.dir, "xdg-default"))
        r = self.cli("tune", self.model, "--threads", "2", "--budget", "20", "--no-layout-search", "--json", env=env)
        path = os.path.join(self.dir, "xdg-default", "ninegrid", "tuning.cache")
        self.assertEqual(json.loads(r.stdout)["cache"], path)
        self.assertTrue(os.path.exists(path))
        r = self.cli("run", self.model, "--input", "x=" + self.x_path, "--output-dir", self.dir, "--threads", "2",
                     env=env)
        self.assertNotIn("warning", r.stderr)
        # A dry run writes nothing.
        env2 = dict(self.env, XDG_CACHE_HOME=os.path.join(self.dir, "xdg-dry"))
        r = self.cli("tune", self.model, "--threads", "1", "--budget", "10", "--dry-run", "--json", env=env2)
        self.assertEqual(json.loads(r.stdout)["cache"], "")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "xdg-dry", "ninegrid", "tuning.cache")))

    def test_an_int8_model_is_tuned_and_runs_its_plans(self):
        model = os.path.join(QUANTIZED, "resnet18_qdq.onnx")
        self.assertTrue(os.path.exists(model), "missing " + model + ": run scripts/make_test_models.sh")
        cache = os.path.join(self.dir, "int8.cache")
        r = self.cli("tune", model, "--threads", "1", "--budget", "30", "--cache", cache, "--json")
        first = json.loads(r.stdout)
        self.assertGreater(first["timed"], 5)
        int8 = [c for c in first["convs"] if c["conv"].startswith("int8 ")]
        self.assertEqual(len(int8), len(first["convs"]), "every conv of the QDQ model is an int8 conv")
        self.assertTrue(any(c["candidates"] > 1 for c in int8), int8)
        r = self.cli("tune", model, "--threads", "1", "--budget", "30", "--cache", cache, "--json")
        second = json.loads(r.stdout)
        self.assertEqual(second["timed"], 0)
        self.assertEqual(second["from_cache"], len(first["convs"]))
        r = self.cli("info", model, "--optimized", "--json", "--tuning-cache", cache)
        qconvs = [l for l in json.loads(r.stdout)["layers"] if l["op"] == "ng.QConv"]
        self.assertTrue(qconvs)
        self.assertTrue(all(l["tuned"] for l in qconvs), qconvs)
        x = np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32)
        x_path = os.path.join(self.dir, "int8_x.npy")
        np.save(x_path, x)
        outputs = []
        for flags in (["--tuning-cache", cache], ["--no-tuning-cache"]):
            out = tempfile.mkdtemp(dir=self.dir)
            name = json.loads(self.cli("info", model, "--json").stdout)["inputs"][0]["name"]
            r = self.cli("run", model, "--input", name + "=" + x_path, "--output-dir", out, "--threads", "1", *flags)
            self.assertNotIn("warning", r.stderr)
            outputs.append({f: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))})
        self.assertEqual(outputs[0].keys(), outputs[1].keys())
        for k in outputs[0]:
            np.testing.assert_array_equal(outputs[0][k], outputs[1][k], err_msg=k)

    def test_every_model_subcommand_takes_the_cache_flags(self):
        for cmd in ("run", "bench", "profile", "info", "detect"):
            r = self.cli(cmd, "--help")
            self.assertIn("--tuning-cache", r.stdout, cmd)
            self.assertIn("--no-tuning-cache", r.stdout, cmd)
        r = self.cli("tune", "--help")
        for opt in ("--shape", "--threads", "--budget", "--cache", "--retime", "--no-layout-search"):
            self.assertIn(opt, r.stdout)

    def test_bad_arguments_fail_cleanly(self):
        r = self.cli("tune", self.model, "--budget", "0", check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        r = self.cli("tune", os.path.join(self.dir, "missing.onnx"), "--cache", os.path.join(self.dir, "m.cache"),
                     check=False)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("ninegrid tune: error: "), r.stderr)
        # A cache path that cannot be written (a directory).
        r = self.cli("tune", self.model, "--budget", "5", "--no-layout-search", "--cache", self.dir, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("tuning cache", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        CLI = sys.argv.pop(1)
    if not CLI:
        sys.exit("usage: test_tune.py PATH/TO/ninegrid")
    unittest.main()
