"""Fixers, registered by name. Each declares whether it keeps semantics (safe) or not (unsafe).

A fixer takes a ModelProto and returns a new one; apply_fixes() verifies the result (checker, shape
inference, and for safe fixes the same outputs on the same random inputs) before anything is written,
and writes through a temporary file in the destination folder followed by an atomic rename.
"""

from __future__ import annotations

import copy
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxlint.errors import ort_message
from onnxlint.graph import iter_graphs as _graphs


@dataclass(frozen=True)
class Fixer:
    name: str
    safe: bool
    summary: str
    apply: Callable[[onnx.ModelProto, str], onnx.ModelProto]
    reference: Callable[[onnx.ModelProto], onnx.ModelProto] | None = None


REGISTRY: dict[str, Fixer] = {}


def fixer(name: str, safe: bool, summary: str, reference=None):
    """reference(model) gives the behaviour the fix must keep when the original's own outputs are not it
    (a training-mode Dropout is random: the fix must match the original run in inference mode)."""

    def deco(fn):
        REGISTRY[name] = Fixer(name, safe, summary, fn, reference)
        return fn

    return deco


def _dropout_inference_reference(model):
    """The original with every Dropout's training_mode forced to false (Dropout is then the identity)."""
    m = copy.deepcopy(model)
    for g in _graphs(m):
        for n in g.node:
            if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
                name = f"{n.input[2]}__onnxlint_false"
                g.initializer.append(numpy_helper.from_array(np.array(False), name))
                n.input[2] = name
    return m


def _opset(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


@fixer("dropout-inference", True, "replace training-mode Dropout with Identity (inference semantics)",
       reference=_dropout_inference_reference)
def _dropout(model, _target):
    consumed = {i for g in _graphs(model) for n in g.node for i in n.input}  # once, not once per Dropout
    for g in _graphs(model):
        for n in g.node:
            if n.op_type == "Dropout" and n.domain in ("", "ai.onnx"):
                mask = n.output[1] if len(n.output) > 1 and n.output[1] else None
                if mask and mask in consumed or mask in [o.name for o in g.output]:
                    continue  # the mask is used: removing it would change the graph's interface
                del n.input[1:]
                del n.output[1:]
                n.op_type = "Identity"
                del n.attribute[:]
    return model


def _batchnorm_reference(model):
    """BatchNormalization in training mode cannot run in an inference session (ORT rejects it), so the
    behaviour to keep is its inference form: training_mode=0 with the learned statistics."""
    return _batchnorm(copy.deepcopy(model), None)


@fixer("batchnorm-inference", True, "set BatchNormalization training_mode=0 and drop the running-stat outputs",
       reference=lambda m: _batchnorm_reference(m))
def _batchnorm(model, _target):
    used = {i for g in _graphs(model) for n in g.node for i in n.input} | {o.name for o in model.graph.output}
    for g in _graphs(model):
        for n in g.node:
            if n.op_type == "BatchNormalization" and n.domain in ("", "ai.onnx"):
                if any(o and o in used for o in n.output[1:]):
                    continue
                del n.output[1:]
                keep = [a for a in n.attribute if a.name != "training_mode"]
                del n.attribute[:]
                n.attribute.extend(keep)
    return model


def _constant_tensors(graph: onnx.GraphProto) -> dict[str, TensorProto]:
    """Initializers and Constant-node values of one graph, by value name."""
    out = {i.name: i for i in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and n.output:
            for a in n.attribute:
                if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                    out[n.output[0]] = a.t
    return out


@fixer("equal-cast", True, "insert a Cast so both Equal inputs share one dtype")
def _equal_cast(model, _target):
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in list(inferred.graph.value_info) + list(inferred.graph.input)
             + list(inferred.graph.output)}
    types.update({name: t.data_type for name, t in _constant_tensors(inferred.graph).items()})
    rank = {TensorProto.DOUBLE: 9, TensorProto.FLOAT: 8, TensorProto.FLOAT16: 7, TensorProto.INT64: 6, TensorProto.INT32: 5,
            TensorProto.INT16: 4, TensorProto.INT8: 3, TensorProto.UINT8: 2, TensorProto.BOOL: 1}
    g = model.graph
    new_nodes = []
    for n in g.node:
        if n.op_type == "Equal" and len(n.input) == 2:
            ta, tb = types.get(n.input[0]), types.get(n.input[1])
            if ta and tb and ta != tb:
                to = ta if rank.get(ta, 0) >= rank.get(tb, 0) else tb
                j = 1 if to == ta else 0
                cast_out = f"{n.input[j]}_cast_{n.name or 'equal'}"
                new_nodes.append(helper.make_node("Cast", [n.input[j]], [cast_out], to=to, name=f"{n.name or 'Equal'}_cast"))
                n.input[j] = cast_out
        new_nodes.append(n)
    del g.node[:]
    g.node.extend(new_nodes)
    return model


@fixer("upgrade-opset", True, "convert the model to a newer ai.onnx opset with onnx's version converter")
def _upgrade(model, target):
    want = max(_opset(model), int(target) if target and str(target).isdigit() else 17)
    return onnx.version_converter.convert_version(model, want)


# torch's GridSampler enums, which mmcv::grid_sampler carries as integers
_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}
_GRID_MODE_20 = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}  # GridSample-20 renamed them


def _standard_grid_attrs(node: onnx.NodeProto, opset: int) -> list | None:
    """ai.onnx GridSample attributes equal to this node's, or None when one does not map."""
    mode, padding, align = "bilinear", "zeros", 0
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        v = v.decode() if isinstance(v, bytes) else v
        if a.name in ("mode", "interpolation_mode"):
            mode = _GRID_MODES.get(v) if isinstance(v, int) else v
        elif a.name == "padding_mode":
            padding = _GRID_PADDING.get(v) if isinstance(v, int) else v
        elif a.name == "align_corners" and isinstance(v, int) and v in (0, 1):
            align = v
        else:
            return None
    if mode not in {*_GRID_MODE_20, *_GRID_MODE_20.values()} or padding not in _GRID_PADDING.values():
        return None
    if opset >= 20:
        mode = _GRID_MODE_20.get(mode, mode)
    elif mode in ("linear", "cubic"):
        mode = {"linear": "bilinear", "cubic": "bicubic"}[mode]
    return [helper.make_attribute("mode", mode), helper.make_attribute("padding_mode", padding),
            helper.make_attribute("align_corners", align)]


def _custom_grid_samples(model):
    return [n for g in _graphs(model) for n in g.node
            if (n.op_type == "GridSample" and n.domain not in ("", "ai.onnx")) or (n.op_type == "grid_sampler" and n.domain == "mmcv")]


@fixer("gridsample-standard", True,
       "raise the opset to 16 (version converter) and rewrite custom-domain GridSample / mmcv::grid_sampler as ai.onnx GridSample")
def _gridsample(model, _target):
    if not any(_standard_grid_attrs(n, max(_opset(model), 16)) is not None for n in _custom_grid_samples(model)):
        return model
    if _opset(model) < 16:
        model = onnx.version_converter.convert_version(model, 16)  # passes custom-domain nodes through
    opset = _opset(model)
    for n in _custom_grid_samples(model):
        attrs = _standard_grid_attrs(n, opset)
        if attrs is None:
            continue
        n.op_type, n.domain = "GridSample", ""
        del n.attribute[:]
        n.attribute.extend(attrs)
    used = {n.domain for g in _graphs(model) for n in g.node}
    keep = [o for o in model.opset_import if o.domain in ("", "ai.onnx") or o.domain in used
            or any(f.domain == o.domain for f in model.functions)]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    return model


def _static_shapes(model) -> dict[str, list[int]]:
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for v in list(inferred.graph.input) + list(inferred.graph.value_info):
        tt = v.type.tensor_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            out[v.name] = [d.dim_value for d in tt.shape.dim]
    return out


@fixer("resize-sizes", True,
       "give an align_corners Resize an explicit 'sizes' input (from its static input shape and constant scales)")
def _resize_sizes(model, _target):
    """With align_corners the sampling positions depend on the input and output lengths only, so 'sizes' =
    floor(input * scales) gives the same result, and TensorRT is exact with sizes, not with scales."""
    if _opset(model) < 11:
        return model
    g = model.graph
    candidates = [n for n in g.node if n.op_type == "Resize" and n.domain in ("", "ai.onnx") and len(n.input) >= 3
                  and n.input[2] and (len(n.input) < 4 or not n.input[3])
                  and any(a.name == "coordinate_transformation_mode" and a.s == b"align_corners" for a in n.attribute)]
    if not candidates:
        return model
    shapes, consts = _static_shapes(model), _constant_tensors(g)
    taken = {i.name for i in g.initializer} | {o for n in g.node for o in n.output}
    for n in candidates:
        shape, scales = shapes.get(n.input[0]), consts.get(n.input[2])
        if shape is None or scales is None or scales.data_location == TensorProto.EXTERNAL:
            continue
        scales = numpy_helper.to_array(scales).astype(np.float32).reshape(-1)
        if scales.size != len(shape):
            continue
        sizes = np.floor(np.asarray(shape, np.float32) * scales).astype(np.int64)
        name = f"{n.name or 'resize'}_sizes"
        while name in taken:
            name += "_"
        taken.add(name)
        g.initializer.append(numpy_helper.from_array(sizes, name))
        x, roi = n.input[0], n.input[1]
        del n.input[:]
        n.input.extend([x, roi, "", name])
    return model


@fixer("double-inputs-to-float", False, "change float64 graph inputs to float32 and cast inside (changes the interface)")
def _double_inputs(model, _target):
    g = model.graph
    casts = []
    for inp in g.input:
        tt = inp.type.tensor_type
        if tt.elem_type == TensorProto.DOUBLE and inp.name not in {i.name for i in g.initializer}:
            tt.elem_type = TensorProto.FLOAT
            inner = f"{inp.name}__as_double"
            for n in g.node:
                for k, x in enumerate(n.input):
                    if x == inp.name:
                        n.input[k] = inner
            casts.append(helper.make_node("Cast", [inp.name], [inner], to=TensorProto.DOUBLE, name=f"{inp.name}_to_double"))
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model


@fixer("int64-to-int32", False, "store INT64 initializers as INT32 behind a Cast where every value fits (TensorRT)")
def _int64(model, _target):
    g = model.graph
    casts = []
    for init in g.initializer:
        if init.data_type == TensorProto.INT64 and init.data_location != TensorProto.EXTERNAL:
            arr = numpy_helper.to_array(init)
            if arr.size and (arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max):
                continue
            name = init.name
            init.CopyFrom(numpy_helper.from_array(arr.astype(np.int32), f"{name}__int32"))
            casts.append(helper.make_node("Cast", [f"{name}__int32"], [name], to=TensorProto.INT64, name=f"{name}_to_int64"))
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model


@fixer("fold-shapes", True, "constant-fold shape subgraphs with onnx-graphsurgeon so ORT has no CPU shape nodes")
def _fold(model, _target):
    import onnx_graphsurgeon as gs

    graph = gs.import_onnx(model)
    graph.fold_constants().cleanup().toposort()
    out = gs.export_onnx(graph)
    out.ir_version = model.ir_version
    return out


# ----------------------------------------------------------------------------- verification and writing


class FixError(Exception):
    pass



def _random_feeds(model: onnx.ModelProto, seed: int = 0) -> dict:
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
    return any(t.data_location == TensorProto.EXTERNAL for g in _graphs(model) for t in g.initializer)


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
    feeds = _random_feeds(before)
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


def verify(before: onnx.ModelProto, after: onnx.ModelProto, safe: bool, applied: list[str] = (),
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


def apply(model: onnx.ModelProto, names: list[str], unsafe: bool, target: str | None = None):
    """Apply fixers in order; returns (new_model, applied, skipped_unsafe).

    A fixer that found nothing it can rewrite (e.g. a GridSample attribute with no standard equivalent)
    is not counted as applied."""
    current = copy.deepcopy(model)
    applied, skipped = [], []
    for name in names:
        fx = REGISTRY[name]
        if not fx.safe and not unsafe:
            skipped.append(name)
            continue
        before = current.SerializeToString(deterministic=True)
        current = fx.apply(current, target)
        if current.SerializeToString(deterministic=True) != before:
            applied.append(name)
    return current, applied, skipped


COPY_CHUNK = 16 * 2**20
DATA_ALIGN = 4096


def _new_data_name(dest: Path) -> str:
    name = f"{dest.name}.data"
    n = 1
    while (dest.parent / name).exists():
        name = f"{dest.name}.{n}.data"
        n += 1
    return name


def relocate_external_data(model: onnx.ModelProto, source_dir: Path, dest: Path) -> Path | None:
    """Copy the external tensors the fixed model still uses into one new data file beside dest.

    The bytes are streamed range by range (at most COPY_CHUNK in memory); tensor offsets are re-based and
    aligned. The model's references are rewritten to the new file. Returns the new file (None: nothing)."""
    tensors = [t for g in _graphs(model) for t in g.initializer if t.data_location == TensorProto.EXTERNAL]
    if not tensors:
        return None
    name = _new_data_name(dest)
    out_path = dest.parent / name
    handles: dict[Path, object] = {}
    try:
        with open(out_path, "xb") as out:
            for t in tensors:
                info = {e.key: e.value for e in t.external_data}
                src = source_dir / info["location"]
                fh = handles.get(src) or handles.setdefault(src, open(src, "rb"))
                offset = int(info.get("offset", 0) or 0)
                length = int(info["length"]) if info.get("length") else os.fstat(fh.fileno()).st_size - offset
                pad = (-out.tell()) % DATA_ALIGN
                out.write(b"\0" * pad)
                new_offset = out.tell()
                fh.seek(offset)
                left = length
                while left:
                    chunk = fh.read(min(COPY_CHUNK, left))
                    if not chunk:
                        raise FixError(f"external data file {info['location']!r} ends before tensor {t.name!r}")
                    out.write(chunk)
                    left -= len(chunk)
                del t.external_data[:]
                for k, v in (("location", name), ("offset", str(new_offset)), ("length", str(length))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        if out_path.exists():
            out_path.unlink()
        raise
    finally:
        for fh in handles.values():
            fh.close()
    return out_path


def write_fixed(model: onnx.ModelProto, dest: Path, source_dir: Path) -> None:
    """Write a fixed model; one with external data gets its own data file when written into another folder."""
    dest = Path(dest)
    if has_external_data(model) and dest.resolve().parent != Path(source_dir).resolve():
        model = copy.deepcopy(model)  # the in-memory fix keeps pointing at the source data
        new_data = relocate_external_data(model, Path(source_dir), dest)
        try:
            atomic_write(model, dest)
        except BaseException:
            if new_data is not None and new_data.exists():
                new_data.unlink()
            raise
        return
    atomic_write(model, dest)


def atomic_write(model: onnx.ModelProto, dest: Path, _fail_after_write: bool = False) -> None:
    """Temp file in the same folder, re-read and check it, then rename over the destination."""
    dest = Path(dest)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(model.SerializeToString())
            fh.flush()
            os.fsync(fh.fileno())
        if _fail_after_write:
            raise OSError("injected failure after writing the temporary file")
        onnx.load(tmp, load_external_data=False)  # reads back as a model
        onnx.checker.check_model(tmp)  # by path: external data resolves beside it (stat only)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
