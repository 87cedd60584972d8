"""What the fixer tests share: fixing a model in memory as --fix does, copies of the examples, models with
external data, running a model on ORT."""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxlint
from onnxlint import fixers


def _apply(model, fixer):
    """The fixer on the findings that name it, as `--fix` runs it (findings from an in-memory lint)."""
    report = onnxlint.lint(model)
    requests = [fixers.FixRequest(f.fix, f.node, f.target) for f in report.findings if f.fix == fixer]
    assert requests, f"no finding names {fixer}"
    return fixers.apply(model, requests, unsafe=False)

def _copy(examples_dir, tmp_path, name):
    p = tmp_path / name
    p.write_bytes((examples_dir / name).read_bytes())
    return p


def _external_dropout_model(folder, output_shape=("n", 1024)):
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    folder.mkdir()
    w = nh.from_array(np.arange(1024, dtype=np.float32), "w")
    b = nh.from_array(np.full(1024, 3.0, np.float32), "b")
    g = h.make_graph([h.make_node("Dropout", ["x", "ratio", "tm"], ["d"], name="drop"),
                      h.make_node("Add", ["d", "w"], ["s"], name="add"), h.make_node("Mul", ["s", "b"], ["y"], name="mul")],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 1024])], [h.make_tensor_value_info("y", T.FLOAT, output_shape)],
                     [w, b, nh.from_array(np.array(0.5, np.float32), "ratio"), nh.from_array(np.array(True), "tm")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8  # onnxruntime 1.24 (the test pin) reads IR <= 13
    onnx.save(m, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=1024)
    return folder / "m.onnx"


def _outputs(path):
    import numpy as np
    import onnxruntime as ort

    x = np.random.default_rng(1).standard_normal((2, 1024)).astype(np.float32)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


class _Reader:
    def __init__(self, fh, sizes):
        self._fh, self._sizes = fh, sizes

    def read(self, n=-1):
        data = self._fh.read(n)
        self._sizes.append(len(data))
        return data

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def _grid_model(node, opset=13, extra=()):
    from onnx import TensorProto as T
    from onnx import helper as h

    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 5, 5]),
                                   h.make_tensor_value_info("grid", T.FLOAT, [1, 4, 4, 2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 4, 4])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), *[h.make_opsetid(d, v) for d, v in extra]])
    m.ir_version = 8
    return m


def _run(model, x, grid):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x, "grid": grid})[0]




def _model(nodes, inputs, outputs, inits=(), opset=17):
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _ort(model, feeds):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _noisy_fold_model(r_shape=("rows", 3)):
    """Shape plumbing under a dynamic batch: the channel count folds (Shape->Gather(1) of a fixed dim); [N, -1]
    becomes [0, -1] (N is the data's own dim 0); [N*C, -1] has no constant equivalent."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one"], ["c"], name="gather_c", axis=0),
             h.make_node("Unsqueeze", ["c", "axes"], ["c1"], name="unsq_c"),
             h.make_node("Concat", ["minus1", "c1"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["r"], name="reshape"),
             h.make_node("Gather", ["s", "zero"], ["n"], name="gather_n", axis=0),
             h.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq_n"),
             h.make_node("Concat", ["n1", "minus1"], ["shp2"], name="concat_n", axis=0),
             h.make_node("Reshape", ["x", "shp2"], ["r2"], name="reshape_n"),
             h.make_node("Mul", ["n", "c"], ["nc"], name="mul_nc"),
             h.make_node("Unsqueeze", ["nc", "axes"], ["nc1"], name="unsq_nc"),
             h.make_node("Concat", ["nc1", "minus1"], ["shp3"], name="concat_nc", axis=0),
             h.make_node("Reshape", ["r2", "shp3"], ["r3"], name="reshape_nc"),
             h.make_node("Reshape", ["r3", "shp2"], ["y"], name="reshape_back")]
    inits = [nh.from_array(np.array(1, np.int64), "one"), nh.from_array(np.array(0, np.int64), "zero"),
             nh.from_array(np.array([0], np.int64), "axes"), nh.from_array(np.array([-1], np.int64), "minus1")]
    return _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4, 4])],
                  [h.make_tensor_value_info("y", T.FLOAT, ["batch", 48]), h.make_tensor_value_info("r", T.FLOAT, r_shape)],
                  inits)


def _findings_naming(fixer_name, path):
    """The model's real findings, the first one naming fixer_name (so a re-lint still reports it)."""
    res = onnxlint.lint(path)
    assert res.findings
    res.findings[0].fix = fixer_name
    return res


def _graphs_of(model):
    from onnxlint.model.graph import iter_graphs

    return list(iter_graphs(model))
