"""Opening a model file: only a regular file within protobuf's limit is read, and read once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from onnxlint.model import lfs
from onnxlint.model.loading.checker import checker_message, own_complaint
from onnxlint.model.loading.external import external_tensors, linked_real
from onnxlint.model.loading.model_file import ModelFile
from onnxlint.model.loading.wire import strip_weights
from onnxlint.support import digest as digests
from onnxlint.support import reading
from onnxlint.support.errors import InputError, first_line

PROTOBUF_LIMIT = 2**31 - 1  # protobuf cannot parse a message of 2 GiB or more: such a file is refused unread


def load(path: Path, display: str | None = None, check: bool = False, lean: bool = False,
         digest: bool = False, prefetched: tuple[bytes, str, os.stat_result] | None = None,
         data_root: str | None = None) -> ModelFile:
    """Read and parse one model file; every failure is an InputError (one line).

    Only a regular file is opened (a FIFO would block, a device never ends), and only after stat() shows
    it is within protobuf's 2 GiB limit: a larger file is refused unread.

    check: run onnx.checker too (mf.checked), on the bytes before they are parsed, when no tensor of the file
    names external data (the checker would stat it from the current folder then): its own copy of the model
    and the parsed one are not in memory together (a lower peak: benchmarks/README.md).

    lean: parse the model without the data of its main graph's large initializers (weightless_bytes; kept in
    mf.weightless for shape inference), for a lint, which reads no weight's values (its index is of the
    weight-less inferred copy): the parse copies no weights. mf.weightless also lacks the data of the main graph's
    large floating-point Constant values (wire.strip_weights; inference puts them back). An IR < 4 model
    is parsed whole (the checker is run again on the parsed model there, weights and all).

    digest: mf.digest is the blake2b of the very bytes parsed (as cache.keys.scan hashes a file): a result
    cache stores the report under the key of what was linted, not of what the file holds by then.

    prefetched: (the file's bytes, their blake2b, the fstat of what was read) as the result cache's key read them
    from a regular file within the limit (cache.keys.scan_bytes): parsed instead of reading and hashing the file
    again.

    data_root: the folder a copy of a model in a temporary folder reads its data from, through links beside it
    (data_links.linked_folder: verify --fix's fixed copy), the data being where the model read it from; as for a
    model that is a link, external data there is in bounds."""
    path = Path(path)
    display = display or str(path)
    if prefetched is not None:
        data, st = prefetched[0], prefetched[2]
        _require_size(display, len(data))
    else:
        data, st = _read(path, display)
    lfs.check(data, display)  # a checkout without Git LFS: a pointer, not a corrupt model
    cut = _strip(data) if lean else None
    # external data is named outside the weights' bytes: the search reads the weight-less bytes when there are
    checked = check and _LOCATION_KEY not in (cut[0] if cut is not None else data)
    early = checker_message(data) if checked else None
    model, weightless = _parse(data, display, cut)
    mf = ModelFile(path=path, display=display, model=model, file_size=len(data), raw=data, weightless=weightless,
                   stamp=reading.stamp(st))
    if weightless is not None and cut is not None and cut[2]:
        mf.weightless, mf.stripped_constants = cut[1], cut[2]  # inference's copy: without Constants' data too
    if digest:
        mf.digest = prefetched[1] if prefetched is not None else digests.hexdigest(data)
    walked: list = []
    # a model that is a link (the Hugging Face cache's snapshots): ORT also reads data in its real file's folder
    mf.external = external_tensors(model, path.parent, walked, linked_real(path, data_root), mf.tensor_attributes)
    mf.graph_bodies = walked
    if checked:
        mf.checked = own_complaint(mf, early)
    return mf


def _read(path: Path, display: str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file within protobuf's limit, read once from what was opened (support.reading),
    and the fstat of what was read."""
    try:
        return reading.read_with_stat(path, lambda size: _require_size(display, size),
                                      directory="is a directory, not an ONNX file")
    except reading.Refused as exc:
        raise InputError(display, str(exc)) from None


def _strip(data: bytes) -> tuple[bytes, bytes, list[tuple[int, int]]] | None:
    """wire.strip_weights(data), or None where data cannot be read so (the parse says why, if it is not a model)."""
    try:
        return strip_weights(data)
    except (IndexError, ValueError):
        return None


def _parse(data: bytes, display: str, cut: tuple[bytes, bytes, list[tuple[int, int]]] | None) -> tuple[Any, bytes | None]:
    """(the parsed model, the weight-less bytes it was parsed from when cut (_strip's answer) has them, else
    None)."""
    import onnx
    from google.protobuf.message import DecodeError

    weightless = cut[0] if cut is not None else None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(weightless if weightless is not None else data)
        if weightless is not None and weightless is not data and model.ir_version < 4:
            weightless, model = None, onnx.ModelProto()
            model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise InputError(display, f"not a valid ONNX protobuf (truncated or corrupt file): {first_line(exc)}") from None
    if not model.HasField("graph") or (model.ir_version == 0 and not model.opset_import):
        raise InputError(display, "not an ONNX model: the file parsed but holds no graph, IR version or opset import")
    return model, weightless


# an external_data entry's key "location" as protobuf writes it (field 1, 8 bytes): every tensor whose data lives
# in another file has one, so bytes without it name no file for the checker to look for
_LOCATION_KEY = b"\x0a\x08location"


def _require_size(display: str, size: int) -> None:
    if size == 0:
        raise InputError(display, "empty file (0 bytes), not an ONNX model")
    if size > PROTOBUF_LIMIT:
        raise InputError(display, f"{size / 2**30:.1f} GiB: over protobuf's 2 GiB limit, so no ONNX model can be "
                                  "parsed from it (large weights belong in external data); not read")


def external_data_problem(path: str | os.PathLike, data_root: str | None = None) -> str | None:
    """For a caller about to hand a model file to ORT or onnx, which read its external data themselves
    (following symlinks): the first reason that must not happen (missing, short, bad offset/length, outside
    the model's folder), or None. Parses the file; InputError when it cannot."""
    return loaded_data_problem(load(Path(path), data_root=data_root))


def loaded_data_problem(mf: ModelFile) -> str | None:
    """external_data_problem of a model file load read already (verify's: one parse, not two)."""
    bad = mf.missing_external
    return f"tensor {bad[0].name!r}: {bad[0].problem}" if bad else None
