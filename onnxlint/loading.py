"""Reading model files without ever reading their external weights."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from onnxlint.errors import InputError
from onnxlint.graph import iter_graphs


@dataclass
class ExternalTensor:
    name: str
    location: str
    offset: int
    length: int | None
    path: Path
    problem: str | None = None


@dataclass
class ModelFile:
    path: Path
    display: str
    model: onnx.ModelProto
    file_size: int
    external: list[ExternalTensor] = field(default_factory=list)
    inferred: onnx.ModelProto | None = None
    inference_error: str | None = None
    raw: bytes | None = None  # the file's bytes, for the checker (saves re-serializing the weights)

    @property
    def external_bytes(self) -> int:
        return sum(t.length or 0 for t in self.external)

    @property
    def total_size(self) -> int:
        return self.file_size + self.external_bytes

    @property
    def missing_external(self) -> list[ExternalTensor]:
        return [t for t in self.external if t.problem]


def expand_paths(args: list[str]) -> list[Path]:
    """Files, directories (recursing for *.onnx) and globs; a path that does not exist is an input error."""
    found: list[Path] = []
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            hits = sorted(q for q in p.rglob("*.onnx") if q.is_file())
            if not hits:
                raise InputError(arg, "no .onnx files found under this directory")
            found.extend(hits)
        elif p.exists():
            found.append(p)
        elif any(ch in arg for ch in "*?["):
            hits = sorted(Path(h) for h in glob.glob(arg, recursive=True))
            if not hits:
                raise InputError(arg, "no file matches this pattern")
            found.extend(hits)
        else:
            raise InputError(arg, "no such file or directory")
    unique, seen = [], set()
    for p in found:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def load(path: Path, display: str | None = None) -> ModelFile:
    display = display or str(path)
    if path.is_dir():
        raise InputError(display, "is a directory, not an ONNX file")
    try:
        size = path.stat().st_size
        if size == 0:
            raise InputError(display, "empty file (0 bytes), not an ONNX model")
        with open(path, "rb") as fh:
            data = fh.read()
    except PermissionError:
        raise InputError(display, "permission denied") from None
    except OSError as exc:
        raise InputError(display, f"cannot read: {exc.strerror or exc}") from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise InputError(display, f"not a valid ONNX protobuf (truncated or corrupt file): {_first_line(exc)}") from None
    if not model.HasField("graph") or (model.ir_version == 0 and not model.opset_import):
        raise InputError(display, "not an ONNX model: the file parsed but holds no graph, IR version or opset import")
    mf = ModelFile(path=path, display=display, model=model, file_size=size, raw=data)
    mf.external = _external_tensors(model, path.parent)
    return mf


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def _external_tensors(model: onnx.ModelProto, base: Path) -> list[ExternalTensor]:
    """Where each external initializer's bytes should be, checked with stat() only."""
    out = []
    sizes: dict[Path, int | None] = {}
    for tensor in _all_initializers(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in tensor.external_data}
        loc = info.get("location", "")
        offset = int(info.get("offset", 0) or 0)
        length = int(info["length"]) if info.get("length") else None
        target = (base / loc) if loc else base
        ext = ExternalTensor(tensor.name, loc, offset, length, target)
        if not loc:
            ext.problem = "no location given"
        elif os.path.isabs(loc) or ".." in Path(loc).parts:
            ext.problem = f"location {loc!r} points outside the model's folder"
        else:
            if target not in sizes:
                try:
                    sizes[target] = target.stat().st_size if target.is_file() else None
                except OSError:
                    sizes[target] = None
            have = sizes[target]
            if have is None:
                ext.problem = f"external data file {loc!r} is missing"
            elif length is not None and offset + length > have:
                ext.problem = f"external data file {loc!r} is {have} bytes, tensor needs bytes {offset}..{offset + length}"
        out.append(ext)
    return out


def _all_initializers(model: onnx.ModelProto):
    for g in iter_graphs(model):
        yield from g.initializer


WEIGHT_BYTES = 4096  # in-file tensors above this are weights: shape inference needs their dims, not their bytes
_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def weightless_bytes(model: onnx.ModelProto) -> bytes:
    """The model serialized without the bytes of its large in-file initializers (dims and dtype kept).

    onnx's shape inference copies the whole model in and out; weights are most of it and it never reads them."""
    raw, typed = [], []
    try:
        for g in iter_graphs(model):
            for t in g.initializer:
                if t.data_location == onnx.TensorProto.EXTERNAL:
                    continue
                if t.HasField("raw_data"):
                    data = t.raw_data
                    if len(data) > WEIGHT_BYTES:
                        raw.append((t, data))
                        t.ClearField("raw_data")
                elif t.ByteSize() > WEIGHT_BYTES:
                    keep = onnx.TensorProto()
                    keep.CopyFrom(t)
                    typed.append((t, keep))
                    for f in _DATA_FIELDS:
                        t.ClearField(f)
        return model.SerializeToString()
    finally:
        for t, data in raw:
            t.raw_data = data
        for t, keep in typed:
            t.CopyFrom(keep)


def infer_shapes(mf: ModelFile) -> None:
    """onnx's shape inference on the weight-less proto; failure is recorded, never raised.

    mf.inferred keeps every small constant but has no bytes for the large initializers: rules only read
    constants of a few elements (engine.MAX_VALUE_ELEMENTS)."""
    _infer(mf, weightless_bytes(mf.model))


def _infer(mf: ModelFile, data: bytes) -> None:
    try:
        mf.inferred = onnx.shape_inference.infer_shapes(data, check_type=False, strict_mode=False)
    except Exception as exc:  # onnx raises several types here, including InferenceError and RuntimeError
        mf.inference_error = _first_line(exc)
        mf.inferred = None


def index_model(mf: ModelFile):
    """Shape inference, then the graph index over the inferred (weight-less) copy."""
    from onnxlint.graph import GraphIndex

    infer_shapes(mf)
    return GraphIndex(mf.inferred or mf.model)


def check_model(mf: ModelFile) -> str | None:
    """onnx.checker's first complaint, or None.

    Checked from the file itself: the checker then resolves external data against the model's folder (and
    only stats it), and does not pay for re-serializing the weights."""
    try:
        if mf.external:
            onnx.checker.check_model(str(mf.path), full_check=False)
        elif mf.raw is not None:
            onnx.checker.check_model(mf.raw, full_check=False)
        else:
            onnx.checker.check_model(mf.model, full_check=False)
    except Exception as exc:  # ValidationError and friends
        text = [t for t in str(exc).strip().splitlines() if t.strip()]
        msg = (text[0] if text else type(exc).__name__)[:300]
        if mf.missing_external and "should be stored in" in msg:
            return None  # the missing external data file is its own finding (OLX003)
        return msg
    return None
