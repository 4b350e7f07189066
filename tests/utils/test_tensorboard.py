"""``utils.tensorboard.SummaryWriter`` compared with torch's: the event files read back.

The same logging calls run on torch's SummaryWriter and on tapegrad's, each into its own
directory; TensorBoard's own readers (``EventAccumulator`` and the raw event-file loader) read
both, and every record must agree: tags, steps, values, histogram buckets, image pixels (PNG
decoded), text, the hparams plugin's data, the run directories of ``add_scalars``. The graph of
``add_graph`` is tapegrad's own (torch traces with its JIT): its nodes are checked against the
autograd graph the model records.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("tensorboard", reason="SummaryWriter needs the tensorboard package")
PIL_Image = pytest.importorskip("PIL.Image", reason="torch's add_image needs Pillow")

from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    LegacyEventFileLoader,
)


def writer_class(L):
    import importlib

    return importlib.import_module(L.__name__ + ".utils.tensorboard").SummaryWriter


def decode_png(data):
    return np.asarray(PIL_Image.open(io.BytesIO(data)))


def value_record(v):
    """One Summary.Value as plain data (PNG images decoded to pixels)."""
    rec = {"tag": v.tag}
    kind = v.WhichOneof("value")
    rec["kind"] = kind
    if kind == "simple_value":
        rec["value"] = v.simple_value
    elif kind == "histo":
        h = v.histo
        rec["histo"] = (h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit),
                        list(h.bucket))
    elif kind == "image":
        im = v.image
        rec["image"] = (im.height, im.width, im.colorspace,
                        decode_png(im.encoded_image_string).tolist())
    elif kind == "audio":
        a = v.audio
        rec["audio"] = (a.sample_rate, a.num_channels, a.length_frames, a.content_type,
                        a.encoded_audio_string)
    elif kind == "tensor":
        t = v.tensor
        rec["tensor"] = (t.dtype, list(t.string_val), list(t.float_val), list(t.double_val),
                         [d.size for d in t.tensor_shape.dim])
    if v.HasField("metadata"):
        rec["plugin"] = (v.metadata.plugin_data.plugin_name, v.metadata.plugin_data.content)
    return rec


def read_events(directory):
    """{run dir relative to ``directory``: [event records]}, wall times left out."""
    runs = {}
    for root, _, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if not name.startswith("events.out.tfevents."):
                continue
            run = os.path.relpath(root, directory)
            for event in LegacyEventFileLoader(os.path.join(root, name)).Load():
                what = event.WhichOneof("what")
                rec = {"step": event.step, "what": what}
                if what == "summary":
                    rec["values"] = [value_record(v) for v in event.summary.value]
                elif what == "file_version":
                    rec["version"] = event.file_version
                elif what == "session_log":
                    rec["status"] = event.session_log.status
                elif what == "tagged_run_metadata":
                    rec["tag"] = event.tagged_run_metadata.tag
                runs.setdefault(run, []).append(rec)
    return runs


def log_both(lib, oracle, tmp_path, scenario, **kwargs):
    """Run ``scenario(L, writer)`` on both libraries; return both runs' events."""
    out = []
    for L, d in ((oracle, tmp_path / "expected"), (lib, tmp_path / "actual")):
        with writer_class(L)(str(d), **kwargs) as writer:
            scenario(L, writer)
        out.append(read_events(d))
    return out


def test_scalars_and_scalars_dict(lib, oracle, tmp_path):
    def scenario(L, w):
        for step in range(4):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("acc/train", L.tensor(0.25 * step), step)
            w.add_scalar("np", np.float32(step) / 3, step, new_style=True)
            w.add_scalar("double", step / 7, step, new_style=True, double_precision=True)
            w.add_scalars("run/curves", {"a": step, "b": L.tensor([2.0 * step])}, step)
        w.flush()

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected
    assert sorted(got) == [".", "run_curves_a", "run_curves_b"]


def test_scalar_readback_with_event_accumulator(lib, tmp_path):
    with writer_class(lib)(str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar("loss", 2.0 ** -step, step * 10)
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Tags()["scalars"] == ["loss"]
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [
        (10 * s, 2.0 ** -s) for s in range(5)]


def test_histograms(lib, oracle, tmp_path):
    def scenario(L, w):
        rng = np.random.default_rng(0)  # (values from NumPy: float32 randn's last bits depend
        w.add_histogram("weights", L.tensor(rng.standard_normal(500).astype(np.float32)), 0)
        L.manual_seed(0)  # on torch's kernels, tests/cpu_kernels.py; float64's do not)
        w.add_histogram("ints", L.arange(50), 1, bins="auto")
        w.add_histogram("np", np.linspace(-3, 3, 101), 2, bins=10)
        w.add_histogram("capped", L.randn(300, dtype=L.float64), 3, max_bins=7)
        w.add_histogram("const", L.ones(5), 4)
        w.add_histogram_raw("raw", 0.0, 2.0, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], 5)

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected


def test_images(lib, oracle, tmp_path):
    def scenario(L, w):
        L.manual_seed(1)
        w.add_image("chw", L.rand(3, 5, 7), 0)
        w.add_image("hwc", L.rand(5, 7, 3), 1, dataformats="HWC")
        w.add_image("gray", L.rand(1, 4, 6), 2)
        w.add_image("hw", L.rand(4, 6), 3, dataformats="HW")
        w.add_image("uint8", (L.rand(3, 4, 4) * 255).to(L.uint8), 4)
        w.add_image("over", L.linspace(-1, 2, 48).reshape(3, 4, 4), 5)
        w.add_images("batch", L.rand(10, 3, 4, 5), 6)
        w.add_images("nhwc", L.rand(2, 4, 5, 1), 7, dataformats="NHWC")

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected


def test_image_errors(compare, tmp_path):
    def scenario(L):
        from torchcompare import raised

        with writer_class(L)(str(tmp_path / L.__name__ / str(id(L)))) as w:
            return [
                raised(w.add_image, "x", L.rand(3, 4), 0),
                raised(w.add_image, "x", L.rand(3, 4, 4), 0, dataformats="CCH"),
                raised(w.add_scalar, "x", L.rand(3), 0),
                raised(w.add_scalar, "x", [1.0], 0),
                raised(w.add_histogram, "x", L.zeros(0), 0),
                raised(w.add_histogram_raw, "x", 0, 1, 1, 1, 1, [1.0], [], 0),
                raised(w.add_hparams, [], {}),
                raised(w.add_hparams, {"a": [1]}, {}),
            ]

    compare(scenario)


def test_text(lib, oracle, tmp_path):
    def scenario(L, w):
        w.add_text("notes", "hello **world**", 0)
        w.add_text("notes", "ünïcödé\nline two", 1)

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected
    acc = EventAccumulator(str(tmp_path / "actual"))
    acc.Reload()
    assert acc.Tags()["tensors"] == ["notes/text_summary"]
    texts = [e.tensor_proto.string_val[0].decode() for e in acc.Tensors("notes/text_summary")]
    assert texts == ["hello **world**", "ünïcödé\nline two"]


def test_hparams(lib, oracle, tmp_path):
    def scenario(L, w):
        w.add_hparams({"lr": 0.1, "bs": 16, "opt": "adam", "nesterov": True, "skip": None,
                       "t": L.tensor([0.5])},
                      {"hparam/accuracy": 0.75, "hparam/loss": L.tensor(1.5)},
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "bs": [16, 32]},
                      run_name="trial", global_step=3)

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected
    assert sorted(got) == [".", "trial"]
    plugins = {v["tag"]: v["plugin"][0] for e in got["trial"] if e["what"] == "summary"
               for v in e["values"] if "plugin" in v}
    assert plugins == {"_hparams_/experiment": "hparams", "_hparams_/session_start_info":
                       "hparams", "_hparams_/session_end_info": "hparams"}


def test_pr_curves_and_custom_scalars(lib, oracle, tmp_path):
    def scenario(L, w):
        L.manual_seed(2)
        labels = L.randint(0, 2, (50,))
        w.add_pr_curve("pr", labels, L.rand(50), 0)
        w.add_pr_curve("pr_np", np.array([0, 1, 1, 0]), np.array([0.1, 0.9, 0.4, 0.6]), 1,
                       num_thresholds=200, weights=np.array([1.0, 2.0, 1.0, 0.5]))
        w.add_pr_curve_raw("raw", [3, 2], [2, 1], [0, 1], [0, 1], [0.6, 0.67], [1.0, 0.67], 2,
                           num_thresholds=2)
        w.add_custom_scalars_multilinechart(["loss/a", "loss/b"], title="losses")
        w.add_custom_scalars_marginchart(["m", "lo", "hi"], category="c")
        w.add_custom_scalars({"cat": {"one": ["Multiline", ["x"]],
                                      "two": ["Margin", ["v", "l", "u"]]}})

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected


def test_add_tensor(lib, oracle, tmp_path):
    def scenario(L, w):
        w.add_tensor("f32", L.tensor([[1.5, -2.0]]), 0)
        w.add_tensor("f64", L.tensor([0.1], dtype=L.float64), 1)
        w.add_tensor("f16", L.tensor([0.1, 2.0], dtype=L.float16), 2)
        w.add_tensor("i64", L.arange(3), 3)
        w.add_tensor("u8", L.tensor([1, 255], dtype=L.uint8), 4)
        w.add_tensor("b", L.tensor([True, False]), 5)
        w.add_tensor("c", L.tensor([1 + 2j]), 6)

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected


def test_add_audio(lib, oracle, tmp_path, capsys):
    def scenario(L, w):
        L.manual_seed(4)
        w.add_audio("sine", L.sin(L.linspace(0, 20, 400)), 0, sample_rate=8000)
        w.add_audio("loud", L.randn(1, 300) * 2, 1)  # clipped, with a warning

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected
    out = capsys.readouterr().out
    assert out.count("warning: audio amplitude out of range, auto clipped.") == 2


def test_add_embedding_files(lib, oracle, tmp_path, capsys):
    trees = []
    for L, d in ((oracle, tmp_path / "expected"), (lib, tmp_path / "actual")):
        L.manual_seed(3)
        with writer_class(L)(str(d)) as w:
            mat = L.randn(5, 3)
            w.add_embedding(mat, metadata=list("abcde"), label_img=L.rand(5, 3, 4, 4))
            w.add_embedding(mat, metadata=[[1, "x"], [2, "y"], [3, "z"], [4, "w"], [5, "v"]],
                            metadata_header=["n", "s"], global_step=3, tag="a/b")
            w.add_embedding(mat, global_step=3, tag="a/b")  # the directory exists: a warning
        tree = {}
        for root, _, files in os.walk(d):
            for f in files:
                if f.startswith("events.out"):
                    continue
                data = (d / root / f).read_bytes()
                rel = os.path.relpath(os.path.join(root, f), d)
                tree[rel] = decode_png(data).tolist() if f.endswith(".png") else data
        trees.append(tree)
        trees.append(capsys.readouterr().out)
    assert trees[2] == trees[0]
    assert trees[3] == trees[1] != ""
    assert sorted(trees[2]) == ["00000/default/metadata.tsv", "00000/default/sprite.png",
                                "00000/default/tensors.tsv", "00003/a%2fb/metadata.tsv",
                                "00003/a%2fb/tensors.tsv", "projector_config.pbtxt"]


def test_purge_step_and_filename_suffix(lib, oracle, tmp_path):
    def scenario(L, w):
        w.add_scalar("loss", 1.0, 7)

    expected, got = log_both(lib, oracle, tmp_path, scenario, purge_step=5,
                             filename_suffix=".suffix")
    assert got == expected
    assert [e["what"] for e in got["."]][:3] == ["file_version", "file_version", "session_log"]
    names = os.listdir(tmp_path / "actual")
    assert len(names) == 1 and names[0].endswith(".suffix")


def event_files(directory):
    return {os.path.join(root, f) for root, _, files in os.walk(directory) for f in files}


def test_default_log_dir_and_close_reopens(lib, oracle, tmp_path, monkeypatch):
    import re
    import socket

    monkeypatch.chdir(tmp_path)
    for L in (oracle, lib):
        before = event_files("runs")
        w = writer_class(L)(comment="_lr0.1")
        assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(
            socket.gethostname()) + "_lr0.1", w.log_dir), w.log_dir
        assert w.get_logdir() == w.log_dir
        w.close()
        w.close()  # twice is fine
        w.add_scalar("after_close", 1.0, 0)  # a new event file
        w.close()
        # both libraries may pick the same directory (the same second): count new files
        assert len(event_files("runs") - before) == 2


class Net:
    """A small model: two linear layers and a ReLU in a Sequential, a shared parameter use."""

    @staticmethod
    def build(L):
        nn = L.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
                self.head = nn.Linear(3, 2)
                self.scale = nn.Parameter(L.ones(2))

            def forward(self, x):
                return self.head(self.body(x)) * self.scale

        return Net()


def autograd_nodes(out):
    """The nodes reachable from ``out.grad_fn``, each once."""
    seen, stack = {id(out.grad_fn): out.grad_fn}, [out.grad_fn]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen[id(nxt)] = nxt
                stack.append(nxt)
    return list(seen.values())


def test_add_graph_matches_the_autograd_graph(lib, lib_name, tmp_path):
    if lib_name != "tapegrad":
        pytest.skip("the graph is tapegrad's own: torch's add_graph traces with its JIT")
    lib.manual_seed(0)
    model = Net.build(lib)
    model.train()
    x = lib.randn(5, 4)
    with writer_class(lib)(str(tmp_path)) as w:
        w.add_graph(model, x)
    assert model.training  # restored after the graph's eval-mode run
    assert x.grad_fn is None and not x.requires_grad

    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Tags()["graph"] and acc.Tags()["run_metadata"] == ["step1"]
    graph = acc.Graph()
    expected_nodes = autograd_nodes(model(x.requires_grad_()))
    assert len(graph.node) == len(expected_nodes) + 1  # + the output node
    by_name = {n.name: n for n in graph.node}
    assert len(by_name) == len(graph.node)
    params = {n.attr["attr"].s.decode(): n.name for n in graph.node if n.op == "Parameter"}
    assert params == {
        "body.0.weight": "Net/Sequential[body]/Linear[0]/weight",
        "body.0.bias": "Net/Sequential[body]/Linear[0]/bias",
        "head.weight": "Net/Linear[head]/weight",
        "head.bias": "Net/Linear[head]/bias",
        "scale": "Net/scale",
    }
    ops = sorted(n.op for n in graph.node)
    assert ops == sorted(["IO Node", "IO Node", "Parameter", "Parameter", "Parameter",
                          "Parameter", "Parameter"]
                         + [n.name() for n in expected_nodes if "AccumulateGrad" not in n.name()])
    assert by_name["output/output.1"].input == ["Net/MulBackward0"]
    assert set(by_name["Net/MulBackward0"].input) == {"Net/Linear[head]/AddmmBackward0",
                                                      "Net/scale"}
    relu = by_name["Net/Sequential[body]/ReLU[1]/ReluBackward0"]
    assert relu.input == ["Net/Sequential[body]/Linear[0]/AddmmBackward0"]
    assert "input/input.1" in by_name["Net/Sequential[body]/Linear[0]/AddmmBackward0"].input
    shape = by_name["input/input.1"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [5, 4]
    # every edge points at a node of the graph
    assert all(i in by_name for n in graph.node for i in n.input)


def test_add_graph_with_integer_input_and_tuple_output(lib, lib_name, tmp_path):
    if lib_name != "tapegrad":
        pytest.skip("the graph is tapegrad's own: torch's add_graph traces with its JIT")
    nn = lib.nn

    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 3)

        def forward(self, idx, scale):
            e = self.emb(idx)
            return e.sum(), e * scale

    with writer_class(lib)(str(tmp_path)) as w:
        w.add_graph(Embed(), (lib.tensor([1, 2, 3]), lib.tensor(2.0)))
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    names = {n.name: n for n in acc.Graph().node}
    assert {"input/input.1", "input/input.2", "output/output.1", "output/output.2",
            "Embed/Embedding[emb]/weight"} <= set(names)
    assert names["input/input.1"].input == []  # integer indices: not in the autograd graph
    assert "input/input.2" in names["Embed/MulBackward0"].input


def test_add_figure(lib, oracle, tmp_path):
    pytest.importorskip("matplotlib", reason="add_figure renders with matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def scenario(L, w):
        fig = plt.figure(figsize=(1, 1), dpi=20)
        plt.plot([0, 1], [1, 0])
        w.add_figure("fig", fig, 0)
        w.add_figure("figs", [plt.figure(figsize=(1, 1), dpi=10) for _ in range(2)], 1)

    expected, got = log_both(lib, oracle, tmp_path, scenario)
    assert got == expected


def test_missing_tensorboard_gives_install_hint():
    code = textwrap.dedent("""
        import importlib.util, sys
        real = importlib.util.find_spec
        importlib.util.find_spec = lambda name, *a: None if name == "tensorboard" else real(
            name, *a)
        from tapegrad._script import alias_torch
        alias_torch()  # skips what cannot be imported
        assert "torch.utils.tensorboard" not in sys.modules
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as e:
            print(e)
    """)
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install tapegrad[tensorboard]" in out.stdout


def test_tapegrad_run_aliases_torch_utils_tensorboard(tmp_path):
    script = tmp_path / "log.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        from torch.utils.tensorboard import SummaryWriter
        with SummaryWriter(sys.argv[1]) as w:
            w.add_scalar("x", torch.tensor(2.5), 3)
        print(type(w).__module__)
    """))
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "tapegrad", "run", str(script),
                          str(tmp_path / "logs")], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "tapegrad.utils.tensorboard._writer"
    acc = EventAccumulator(str(tmp_path / "logs"))
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("x")] == [(3, 2.5)]
