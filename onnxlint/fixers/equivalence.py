"""The numeric check: a fixed model must pass the checker and strict shape inference, and a safe fix must
give the original's outputs on the same random inputs (ORT CPU, else onnx.reference; tolerance per dtype)."""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from onnxlint.errors import ort_message
from onnxlint.fixers.base import REGISTRY, FixError
from onnxlint.graph import iter_graphs


def random_feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    feeds = {}
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 2 for d in tt.shape.dim]
        dt = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dt, np.floating):
            feeds[inp.name] = rng.standard_normal(shape).astype(dt)
        elif dt == np.bool_:
            feeds[inp.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feeds[inp.name] = rng.integers(0, 4, shape).astype(dt)
    return feeds


def has_external_data(model: onnx.ModelProto) -> bool:
    return any(t.data_location == TensorProto.EXTERNAL for g in iter_graphs(model) for t in g.initializer)


def run_model(model: onnx.ModelProto, feeds: dict, base_dir: Path | None = None) -> list:
    """Outputs on the CPU provider (onnx.reference without onnxruntime).

    A model with external data runs from a temporary file in base_dir, the folder its data paths are
    relative to, so ORT reads the weights itself and Python never holds them."""
    external = base_dir is not None and has_external_data(model)
    try:
        import onnxruntime as ort
    except ImportError:
        from onnx.reference import ReferenceEvaluator

        if external:
            model = copy.deepcopy(model)
            onnx.external_data_helper.load_external_data_for_model(model, str(base_dir))
        return ReferenceEvaluator(model).run(None, feeds)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if not external:
        return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    fd, tmp = tempfile.mkstemp(prefix=".onnxlint-check.", suffix=".onnx", dir=base_dir)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(model.SerializeToString())
        return ort.InferenceSession(tmp, so, providers=["CPUExecutionProvider"]).run(None, feeds)
    finally:
        os.unlink(tmp)


def check_equivalent(before: onnx.ModelProto, after: onnx.ModelProto, base_dir: Path | None = None) -> str | None:
    feeds = random_feeds(before)
    try:
        a = run_model(before, feeds, base_dir)
    except Exception:
        # ORT refuses the defective original (e.g. Equal on int64 vs int32): onnx's reference
        # evaluator follows NumPy semantics and still gives the intended result
        from onnx.reference import ReferenceEvaluator

        try:
            if base_dir is not None and has_external_data(before):
                raise FixError("not run with onnx.reference: it would load every external weight")
            a = ReferenceEvaluator(before).run(None, feeds)
        except Exception as exc:
            run_model(after, feeds, base_dir)  # the fixed model must at least run
            return f"the original cannot run ({str(exc).splitlines()[0][:120]}), so only the fixed model was run"
    b = run_model(after, feeds, base_dir)
    if len(a) != len(b):
        raise FixError(f"output count changed ({len(a)} -> {len(b)})")
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            raise FixError(f"output {i} shape changed {x.shape} -> {y.shape}")
        tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-9}.get(x.dtype.type, 0)
        if tol:
            if not np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True):
                raise FixError(f"output {i} differs (max abs diff {np.nanmax(np.abs(x - y)):.3g})")
        elif not np.array_equal(x, y):
            raise FixError(f"output {i} differs")
    return None


def verify(before: onnx.ModelProto, after: onnx.ModelProto, safe: bool, applied: Sequence[str] = (),
           base_dir: Path | None = None) -> str | None:
    """Raises FixError when the fixed model must not be written; returns a caveat worth telling the user.

    base_dir: the folder the models' external data paths are relative to."""
    try:
        if not has_external_data(after):
            onnx.checker.check_model(after)  # else checked from the written file, where its data paths resolve
        onnx.shape_inference.infer_shapes(after, strict_mode=True)
    except Exception as exc:
        raise FixError(f"fixed model fails the checker or shape inference: {str(exc).splitlines()[0]}") from None
    if safe:
        for name in applied:
            ref = REGISTRY[name].reference
            if ref is not None:
                before = ref(before)
        try:
            return check_equivalent(before, after, base_dir)
        except FixError:
            raise
        except Exception as exc:
            raise FixError(f"could not run the numeric check: {ort_message(exc)}") from None
