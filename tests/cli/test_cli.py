#!/usr/bin/python3
"""Tests of the `ninegrid` command line: run, info and bench.

usage: /usr/bin/python3 tests/cli/test_cli.py PATH/TO/ninegrid   (or set NINEGRID_CLI)

The models are built here with onnx.helper, and expected values come from numpy and from hand-computed
MAC counts, never from the binary under test. A negative return code means the binary died from a signal
(a crash), which fails every test.
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


def make_model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def add_relu_model():
    """sum = a + b; 'a/b:0' = relu(sum). Both are graph outputs; the second name needs making file-safe."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])
    s = helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("a/b:0", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
             helper.make_node("Relu", ["sum"], ["a/b:0"], name="relu")]
    return make_model(nodes, [a, b], [s, y])


def relu_model(dims):
    """y = relu(x) with x of shape `dims` (strings are dynamic dimensions)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
    return make_model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x], [y])


# The conv model of the info tests and its hand-computed numbers.
#   conv1: 3 -> 4 channels, 3x3, pad 1, stride 1, on 8x8:  out 1x4x8x8, MACs = 4*8*8 * 3*3*3      = 6912
#   relu
#   conv2: 4 -> 2 channels, 1x1, stride 2:                 out 1x2x4x4, MACs = 2*4*4 * 4*1*1      = 128
#   conv3: depthwise (group 2) 2 -> 2, 3x3, pad 1, no bias: out 1x2x4x4, MACs = 2*4*4 * (2/2)*3*3  = 288
CONV_MACS = {"conv1": 6912, "conv2": 128, "conv3": 288}
CONV_PARAMS = (4 * 3 * 3 * 3 + 4) + (2 * 4 + 2) + (2 * 1 * 3 * 3)  # = 140


def conv_model(batch=1, height=8, width=8):
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b1"),
        numpy_helper.from_array(rng.standard_normal((2, 4, 1, 1)).astype(np.float32), "w2"),
        numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "b2"),
        numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "w3"),
    ]
    nodes = [
        helper.make_node("Conv", ["X", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[1, 1], strides=[2, 2]),
        helper.make_node("Conv", ["c2", "w3"], ["Y"], name="conv3", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
    ]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, 3, height, width])
    half = lambda d: d // 2 if isinstance(d, int) else d + "_half"
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, 2, half(height), half(width)])
    return make_model(nodes, [x], [y], inits)


class CliTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="ninegrid_cli_test_")
        cls.tmp = cls._tmp.name

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def save(self, model, name):
        p = self.path(name)
        onnx.save(model, p)
        return p

    def cli(self, *args, timeout=120, env=None):
        r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
        self.assertGreaterEqual(r.returncode, 0, f"ninegrid {' '.join(map(str, args))} died from signal "
                                                 f"{-r.returncode}\nstderr: {r.stderr}")
        return r

    def ok(self, *args, env=None):
        r = self.cli(*args, env=env)
        self.assertEqual(r.returncode, 0, f"ninegrid {' '.join(map(str, args))} failed:\n{r.stderr}")
        return r

    def fails(self, cmd, *args, code=None, mentions=(), env=None):
        """Runs a command that must fail cleanly: non-zero exit, one 'ninegrid CMD: error: ...' line naming
        each of `mentions`."""
        r = self.cli(cmd, *args, env=env)
        self.assertNotEqual(r.returncode, 0, f"ninegrid {cmd} {args} should fail; stdout: {r.stdout}")
        if code is not None:
            self.assertEqual(r.returncode, code, r.stderr)
        self.assertTrue(r.stderr.startswith(f"ninegrid {cmd}: error: "), repr(r.stderr))
        for m in mentions:
            self.assertIn(m, r.stderr)
        return r


class HelpTest(CliTestCase):
    EXPECTED = {
        "run": ["MODEL", "--input", "--shape", "--output-dir", "--threads", "--spin", "--weights", "--opt-level"],
        "info": ["MODEL", "--json", "--shape", "--weights"],
        "bench": ["MODEL", "--threads", "--spin", "--runs", "--warmup", "--shape", "--json", "--opt-level"],
    }

    def test_every_subcommand_has_help(self):
        for cmd, options in self.EXPECTED.items():
            r = self.ok(cmd, "--help")
            self.assertIn(f"usage: ninegrid {cmd}", r.stdout)
            for opt in options:
                self.assertIn(opt, r.stdout, f"ninegrid {cmd} --help does not mention {opt}")

    def test_help_shows_defaults(self):
        r = self.ok("bench", "--help")
        self.assertIn("default: 20", r.stdout)  # --runs
        self.assertIn("default: 3", r.stdout)   # --warmup
        r = self.ok("run", "--help")
        self.assertIn("not written", r.stdout)  # --output-dir defaults to writing nothing


class RunTest(CliTestCase):
    def setUp(self):
        self.model = self.save(add_relu_model(), "add_relu.onnx")
        rng = np.random.default_rng(1)
        self.a = rng.standard_normal((2, 3)).astype(np.float32)
        self.b = rng.standard_normal((2, 3)).astype(np.float32)
        np.save(self.path("a.npy"), self.a)
        np.save(self.path("b.npy"), self.b)

    def test_outputs_match_numpy(self):
        out = self.path("out_given")
        r = self.ok("run", self.model, "--input", f"a={self.path('a.npy')}", "--input", f"b={self.path('b.npy')}",
                    "--output-dir", out)
        expected_sum = self.a + self.b
        np.testing.assert_array_equal(np.load(os.path.join(out, "sum.npy")), expected_sum)
        # 'a/b:0' is written under a file-safe name.
        relu = np.load(os.path.join(out, "a_b_0.npy"))
        np.testing.assert_array_equal(relu, np.maximum(expected_sum, 0))
        self.assertEqual(sorted(os.listdir(out)), ["a_b_0.npy", "sum.npy"])
        # The summary names each output with its shape and statistics.
        self.assertIn("sum", r.stdout)
        self.assertIn("a/b:0", r.stdout)
        self.assertIn("2x3", r.stdout)
        line = next(l for l in r.stdout.splitlines() if l.startswith("a/b:0"))
        self.assertIn("max %.6g" % float(relu.max()), line)

    def test_generated_inputs_are_deterministic_and_in_unit_interval(self):
        out1, out2 = self.path("gen1"), self.path("gen2")
        self.ok("run", self.model, "--input", f"a={self.path('a.npy')}", "--output-dir", out1)
        self.ok("run", self.model, "--input", f"a={self.path('a.npy')}", "--output-dir", out2, "--threads", "1")
        s1 = np.load(os.path.join(out1, "sum.npy"))
        s2 = np.load(os.path.join(out2, "sum.npy"))
        np.testing.assert_array_equal(s1, s2)
        b = s1 - self.a  # the generated b
        self.assertTrue(np.all(b >= -1e-6) and np.all(b < 1 + 1e-6), b)
        self.assertGreater(len(np.unique(b)), 1)

    def test_no_output_dir_writes_nothing(self):
        d = self.path("cwd_empty")
        os.makedirs(d)
        r = subprocess.run([CLI, "run", self.model], capture_output=True, text=True, cwd=d, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(d), [])

    def test_dynamic_batch_defaults_to_one(self):
        model = self.save(relu_model(["N", 3, 4]), "relu_dyn_batch.onnx")
        out = self.path("dyn_batch")
        self.ok("run", model, "--output-dir", out)
        self.assertEqual(np.load(os.path.join(out, "y.npy")).shape, (1, 3, 4))

    def test_dynamic_dims_need_shape(self):
        model = self.save(relu_model(["N", 3, "H", "W"]), "relu_dyn_hw.onnx")
        self.fails("run", model, code=1, mentions=["--shape x="])
        out = self.path("dyn_hw")
        self.ok("run", model, "--shape", "x=2x3x5x7", "--output-dir", out)
        y = np.load(os.path.join(out, "y.npy"))
        self.assertEqual(y.shape, (2, 3, 5, 7))
        self.assertTrue(np.all(y >= 0) and np.all(y < 1))
        # A bare shape applies to the only input.
        out = self.path("dyn_hw_bare")
        self.ok("run", model, "--shape", "1x3x2x2", "--output-dir", out)
        self.assertEqual(np.load(os.path.join(out, "y.npy")).shape, (1, 3, 2, 2))

    def test_input_shape_sets_dynamic_dims(self):
        model = self.save(relu_model(["N", 3, "H", "W"]), "relu_dyn_in.onnx")
        x = np.linspace(-1, 1, 2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
        np.save(self.path("x.npy"), x)
        out = self.path("dyn_in")
        self.ok("run", model, "--input", self.path("x.npy"), "--output-dir", out)  # bare: the only input
        np.testing.assert_array_equal(np.load(os.path.join(out, "y.npy")), np.maximum(x, 0))

    def test_input_errors_name_the_input(self):
        np.save(self.path("a_wrong_shape.npy"), self.a.T.copy())
        np.save(self.path("a_f64.npy"), self.a.astype(np.float64))
        self.fails("run", self.model, "--input", f"a={self.path('a_wrong_shape.npy')}", code=1,
                   mentions=["'a'", "3x2", "2x3"])
        self.fails("run", self.model, "--input", f"a={self.path('a_f64.npy')}", code=1,
                   mentions=["'a'", "float64", "float32"])
        self.fails("run", self.model, "--input", f"nope={self.path('a.npy')}", code=1, mentions=["'nope'"])
        self.fails("run", self.model, "--input", f"a={self.path('missing.npy')}", code=1, mentions=["missing.npy"])
        self.fails("run", self.model, "--input", self.path("a.npy"), code=1, mentions=["2 inputs"])
        self.fails("run", self.model, "--shape", "zzz=2x3", code=1, mentions=["zzz"])
        self.fails("run", self.model, "--shape", "a=4x3", code=1, mentions=["'a'", "4x3"])

    def test_input_files_that_are_not_files(self):
        # A directory gave "internal error: basic_filebuf::underflow"; /dev/zero was read until 3.8 GB and
        # ended in "internal error: std::bad_alloc".
        self.fails("run", self.model, "--input", f"a={self.tmp}", code=1, mentions=["'a'", "directory"])
        self.fails("run", self.model, "--input", "a=/dev/zero", "--max-file-mb", "1", code=1,
                   mentions=["'a'", "/dev/zero", "limit"])
        r = self.cli("run", self.model, "--input", "a=/dev/zero", "--max-file-mb", "1")
        self.assertNotIn("internal error", r.stderr)

    def test_kernel_settings_are_checked(self):
        self.fails("run", self.model, "--isa", "sse9", code=1, mentions=["isa", "sse9"])
        self.fails("run", self.model, "--conv-algorithms", "direct,fft", code=1, mentions=["'fft'"])


class InfoTest(CliTestCase):
    def test_json_op_counts_params_and_macs(self):
        model = self.save(conv_model(), "conv.onnx")
        info = json.loads(self.ok("info", model, "--json").stdout)
        self.assertEqual(info["format"], "onnx")
        self.assertEqual(info["inputs"], [{"name": "X", "dtype": "float32", "shape": [1, 3, 8, 8]}])
        self.assertEqual(info["outputs"][0]["name"], "Y")
        self.assertEqual(info["outputs"][0]["shape"], [1, 2, 4, 4])
        self.assertEqual(info["ops"], {"Conv": 3, "Relu": 1})
        self.assertEqual(info["parameters"], CONV_PARAMS)
        self.assertEqual(info["parameter_bytes"], CONV_PARAMS * 4)
        self.assertEqual(info["int8_weight_layers"], {})  # a float model (ncnn int8: tests/models/test_ncnn_int8.py)
        layers = {l["name"]: l for l in info["layers"]}
        for name, macs in CONV_MACS.items():
            self.assertEqual(layers[name]["op"], "Conv")
            self.assertEqual(layers[name]["macs"], macs, name)
        self.assertEqual(layers["conv1"]["output_shapes"], [[1, 4, 8, 8]])
        self.assertEqual(layers["relu1"]["macs"], 0)
        self.assertEqual(info["macs"], sum(CONV_MACS.values()))
        self.assertAlmostEqual(info["gmacs"], sum(CONV_MACS.values()) * 1e-9)

    def test_text_output(self):
        model = self.save(conv_model(), "conv_text.onnx")
        out = self.ok("info", model).stdout
        for word in ["onnx", "X", "1x3x8x8", "Conv", "Relu", "conv1", "6,912", "7,328"]:
            self.assertIn(word, out)
        self.assertNotIn("int8 layers", out)

    def test_dynamic_batch_and_shape_option(self):
        model = self.save(conv_model(batch="N"), "conv_dyn.onnx")
        info = json.loads(self.ok("info", model, "--json").stdout)
        self.assertEqual(info["inputs"][0]["shape"], [-1, 3, 8, 8])
        self.assertEqual(info["macs"], sum(CONV_MACS.values()))  # batch taken as 1
        info = json.loads(self.ok("info", model, "--json", "--shape", "X=2x3x8x8").stdout)
        self.assertEqual(info["macs"], 2 * sum(CONV_MACS.values()))

    def test_unresolved_dims_still_describe_the_model(self):
        model = self.save(conv_model(batch="N", height="H", width="W"), "conv_dyn_hw.onnx")
        info = json.loads(self.ok("info", model, "--json").stdout)
        self.assertIsNone(info["macs"])
        self.assertEqual(info["ops"], {"Conv": 3, "Relu": 1})
        self.assertIn("--shape X=", info["not_planned"])
        info = json.loads(self.ok("info", model, "--json", "--shape", "1x3x16x16").stdout)
        self.assertEqual(info["macs"], 4 * sum(CONV_MACS.values()))  # four times the pixels

    def test_json_escapes_names(self):
        model = self.save(add_relu_model(), "add_relu_info.onnx")
        info = json.loads(self.ok("info", model, "--json").stdout)
        self.assertEqual([o["name"] for o in info["outputs"]], ["sum", "a/b:0"])
        self.assertEqual(info["ops"], {"Add": 1, "Relu": 1})
        self.assertEqual(info["parameters"], 0)


class BenchTest(CliTestCase):
    def test_json_keys_and_sane_values(self):
        model = self.save(conv_model(), "conv_bench.onnx")
        r = self.ok("bench", model, "--runs", "7", "--warmup", "2", "--threads", "1", "--json")
        b = json.loads(r.stdout)
        for key in ["model", "threads", "runs", "load_ms", "min_ms", "median_ms", "max_ms", "mean_ms", "peak_rss_mb"]:
            self.assertIn(key, b)
        self.assertEqual(b["runs"], 7)
        self.assertEqual(b["threads"], 1)
        self.assertGreater(b["load_ms"], 0)
        self.assertLess(b["load_ms"], 60000)
        self.assertGreater(b["min_ms"], 0)
        self.assertLessEqual(b["min_ms"], b["median_ms"])
        self.assertLessEqual(b["median_ms"], b["max_ms"])
        self.assertLessEqual(b["min_ms"], b["mean_ms"])
        self.assertLessEqual(b["mean_ms"], b["max_ms"])
        self.assertGreater(b["peak_rss_mb"], 1)
        self.assertLess(b["peak_rss_mb"], 4096)
        # Every timed run is reported, and the summary figures are those runs' min/median/max.
        self.assertEqual(len(b["times_ms"]), 7)
        self.assertAlmostEqual(min(b["times_ms"]), b["min_ms"], places=4)
        self.assertAlmostEqual(max(b["times_ms"]), b["max_ms"], places=4)
        self.assertAlmostEqual(sorted(b["times_ms"])[3], b["median_ms"], places=4)

    def test_spin_from_the_flag_else_the_environment(self):
        model = self.save(conv_model(), "conv_spin.onnx")
        env = {k: v for k, v in os.environ.items() if k != "NINEGRID_SPIN"}

        def spin(*args, environment=env):
            r = self.ok("bench", model, "--runs", "1", "--warmup", "0", "--threads", "2", "--json", *args,
                        env=environment)
            return json.loads(r.stdout)["spin_microseconds"]

        self.assertEqual(spin(), -1)  # the engine's choice
        self.assertEqual(spin("--spin", "0"), 0)
        self.assertEqual(spin(environment=dict(env, NINEGRID_SPIN="50")), 50)
        self.assertEqual(spin("--spin", "7", environment=dict(env, NINEGRID_SPIN="50")), 7)
        for bad in ["abc", "-1", "12us", "1000001", "99999999999999999999"]:
            self.fails("bench", model, "--runs", "1", code=1, mentions=["NINEGRID_SPIN", f"'{bad}'"],
                       env=dict(env, NINEGRID_SPIN=bad))
        for bad in ["-1", "1000001", "x"]:
            self.fails("bench", model, "--spin", bad, code=2, mentions=["--spin"], env=env)

    def test_text_output(self):
        model = self.save(add_relu_model(), "add_relu_bench.onnx")
        out = self.ok("bench", model, "--runs", "3").stdout
        for word in ["load", "median", "peak RSS"]:
            self.assertIn(word, out)


class ErrorTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        good = conv_model().SerializeToString()
        with open(os.path.join(cls.tmp, "truncated.onnx"), "wb") as f:
            f.write(good[: len(good) // 2])
        with open(os.path.join(cls.tmp, "garbage.onnx"), "wb") as f:
            f.write(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes())
        with open(os.path.join(cls.tmp, "empty.onnx"), "wb") as f:
            pass
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
        node = helper.make_node("FrobnicateNoSuchOp", ["x"], ["y"], name="weird_node")
        graph = helper.make_graph([node], "g", [x], [y])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        onnx.save(m, os.path.join(cls.tmp, "unsupported.onnx"))
        onnx.save(relu_model([1, 4]), os.path.join(cls.tmp, "relu.onnx"))

    def test_bad_model_files(self):
        for cmd in ["run", "info", "bench"]:
            self.fails(cmd, self.path("does_not_exist.onnx"), code=1, mentions=["does_not_exist.onnx"])
            self.fails(cmd, self.path("truncated.onnx"), code=1, mentions=["truncated.onnx"])
            self.fails(cmd, self.path("garbage.onnx"), code=1, mentions=["garbage.onnx"])
            self.fails(cmd, self.path("empty.onnx"), code=1, mentions=["empty.onnx"])
            self.fails(cmd, self.tmp, code=1)  # a directory

    def test_unsupported_operator_is_named(self):
        for cmd in ["run", "info", "bench"]:
            self.fails(cmd, self.path("unsupported.onnx"), code=1, mentions=["FrobnicateNoSuchOp", "weird_node"])

    def test_usage_errors_exit_2(self):
        relu = self.path("relu.onnx")
        for cmd in ["run", "info", "bench"]:
            self.fails(cmd, relu, "--frobnicate", code=2, mentions=["--frobnicate"])
            self.fails(cmd, code=2, mentions=["MODEL"])
            self.fails(cmd, relu, "extra_argument", code=2, mentions=["extra_argument"])
            self.fails(cmd, relu, "--shape", code=2, mentions=["--shape"])
            self.fails(cmd, relu, "--shape", "x=1xfoo", code=2, mentions=["--shape", "1xfoo"])
            self.fails(cmd, relu, "--shape", "x=0x4", code=2, mentions=["--shape"])
        self.fails("bench", relu, "--threads", "many", code=2, mentions=["--threads", "many"])
        self.fails("bench", relu, "--threads", "-3", code=2, mentions=["--threads"])
        self.fails("bench", relu, "--runs", "0", code=2, mentions=["--runs"])
        self.fails("bench", relu, "--runs", code=2, mentions=["--runs"])
        self.fails("info", relu, "--json=yes", code=2, mentions=["--json"])


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        CLI = sys.argv.pop(1)
    if not CLI or not os.path.isfile(CLI):
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/ninegrid  (or set NINEGRID_CLI); got '{CLI}'")
    CLI = os.path.abspath(CLI)
    unittest.main(argv=sys.argv)
