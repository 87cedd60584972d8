"""Reading model files without ever reading their external weights."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from onnxlint.errors import InputError
from onnxlint.paths import expand_paths  # noqa: F401 - the public name stays here too

if TYPE_CHECKING:  # imported in the functions that parse: expand_paths serves the CLI's cache hits, onnx-free
    import onnx

PROTOBUF_LIMIT = 2**31 - 1  # protobuf cannot parse a message of 2 GiB or more: such a file is refused unread


@dataclass
class ExternalTensor:
    name: str
    location: str
    offset: int
    length: int | None
    path: Path  # the data file as resolved (realpath) when its location is safe; else base / location, never to be opened
    problem: str | None = None
    outside: bool = False  # the location leaves the model's folder


@dataclass
class ModelFile:
    path: Path
    display: str
    model: onnx.ModelProto
    file_size: int
    external: list[ExternalTensor] = field(default_factory=list)
    inferred: onnx.ModelProto | None = None
    inference_error: str | None = None
    inference_skipped: str | None = None  # why onnx shape inference was not run (past the budget), or None
    strict_error: str | None = None  # strict shape inference / type check failed: ORT refuses the model
    # what infer_shapes' budget walk counted before inference: (cost, nodes, control-flow bodies), or None
    inference_work: tuple[int, int, int] | None = None
    # the file's bytes, for the checker and for inference's weight-less copy (neither re-serializes the weights)
    raw: bytes | None = None
    checked: str | None | bool = False  # the checker's complaint once asked (checker_result); False: not yet
    inference_done: bool = False  # infer_shapes has run (the bytes are not needed for it any more)
    checker_wanted: bool = True  # False: nothing will ask checker_result (the bytes are not kept for it)
    # load(lean=True): the bytes model was parsed from (weightless_bytes of the file), for shape inference
    weightless: bytes | None = None

    @property
    def external_bytes(self) -> int:
        return sum(t.length or 0 for t in self.external)

    @property
    def total_size(self) -> int:
        return self.file_size + self.external_bytes

    @property
    def missing_external(self) -> list[ExternalTensor]:
        """Tensors whose external data cannot be used: missing, short, a bad offset/length, or outside the
        model's folder. Nothing may read or copy a model's external data while this is not empty."""
        return [t for t in self.external if t.problem]

    @property
    def outside_external(self) -> list[ExternalTensor]:
        """Tensors whose location leaves the model's folder (absolute, `..`, or a symlink out of it)."""
        return [t for t in self.external if t.outside]


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _require_regular(display: str, st: os.stat_result) -> None:
    if stat.S_ISREG(st.st_mode):
        return
    if stat.S_ISDIR(st.st_mode):
        raise InputError(display, "is a directory, not an ONNX file")
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a plain file")
    raise InputError(display, f"not a regular file ({kind}); not read")


def load(path: Path, display: str | None = None, check: bool = False, lean: bool = False) -> ModelFile:
    """Read and parse one model file; every failure is an InputError (one line).

    Only a regular file is opened (a FIFO would block, a device never ends), and only after stat() shows
    it is within protobuf's 2 GiB limit: a larger file is refused unread.

    check: run onnx.checker too (mf.checked), on the bytes before they are parsed, when no tensor of the file
    names external data (the checker would stat it from the current folder then): its own copy of the model
    and the parsed one are not in memory together (a 346 MB model: 1.04 -> 0.70 GB peak).

    lean: parse the model without the data of its main graph's large initializers (weightless_bytes; kept in
    mf.weightless for shape inference), for a lint, which reads no weight's values (its index is of the
    weight-less inferred copy): the parse copies no weights (~0.3 s of CPU on a 331 MB model). An IR < 4 model
    is parsed whole (the checker is run again on the parsed model there, weights and all)."""
    path = Path(path)
    display = display or str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(display, "no such file or directory") from None
    except PermissionError:
        raise InputError(display, "permission denied") from None
    except (OSError, ValueError) as exc:
        raise InputError(display, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    _require_regular(display, st)
    _require_size(display, st.st_size)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:
        raise InputError(display, "permission denied") from None
    except OSError as exc:
        raise InputError(display, f"cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)  # what was opened, should the path have been swapped since stat()
        _require_regular(display, st)
        size = st.st_size
        _require_size(display, size)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(size)
            if len(data) != size or fh.read(1):
                raise InputError(display, "the file changed while it was being read")
    except PermissionError:
        raise InputError(display, "permission denied") from None
    except OSError as exc:
        raise InputError(display, f"cannot read: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    import onnx
    from google.protobuf.message import DecodeError

    checked = check and _LOCATION_KEY not in data
    early = checker_message(data) if checked else None
    weightless = None
    if lean:
        try:
            weightless = _strip_initializers(data)
        except (IndexError, ValueError):  # not readable so (the parse below says why, if it is not a model)
            weightless = None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(weightless if weightless is not None else data)
        if weightless is not None and weightless is not data and model.ir_version < 4:
            weightless, model = None, onnx.ModelProto()
            model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise InputError(display, f"not a valid ONNX protobuf (truncated or corrupt file): {_first_line(exc)}") from None
    if not model.HasField("graph") or (model.ir_version == 0 and not model.opset_import):
        raise InputError(display, "not an ONNX model: the file parsed but holds no graph, IR version or opset import")
    mf = ModelFile(path=path, display=display, model=model, file_size=size, raw=data, weightless=weightless)
    mf.external = _external_tensors(model, path.parent)
    if checked:
        mf.checked = _complaint(mf, early)
    return mf


# an external_data entry's key "location" as protobuf writes it (field 1, 8 bytes): every tensor whose data lives
# in another file has one, so bytes without it name no file for the checker to look for
_LOCATION_KEY = b"\x0a\x08location"


def _require_size(display: str, size: int) -> None:
    if size == 0:
        raise InputError(display, "empty file (0 bytes), not an ONNX model")
    if size > PROTOBUF_LIMIT:
        raise InputError(display, f"{size / 2**30:.1f} GiB: over protobuf's 2 GiB limit, so no ONNX model can be "
                                  "parsed from it (large weights belong in external data); not read")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


# ----------------------------------------------------------------------------- external data

OUTSIDE = "points outside the model's folder"


def external_location_problem(base_dir: str | os.PathLike, location: str) -> str | None:
    """Why an external-data `location` may not be used from base_dir (the model's folder), or None.

    It must be a relative path that resolves, after every symlink (os.path.realpath), inside base_dir:
    absolute paths, `..` and symlinks leading out of the folder are refused. Only strings are inspected."""
    return _resolve_location(os.path.realpath(base_dir), base_dir, location)[1]


def safe_external_path(base_dir: str | os.PathLike, location: str) -> Path | None:
    """The real path of an external-data file when `location` stays inside base_dir (see
    external_location_problem), else None. Every reader and copier of external data goes through this:
    open the returned path, never base_dir / location."""
    path, problem = _resolve_location(os.path.realpath(base_dir), base_dir, location)
    return None if problem else path


def check_external_data(model: onnx.ModelProto, base_dir: str | os.PathLike) -> str | None:
    """The first reason the model's external data must not be read from base_dir (missing, short, bad
    offset/length, outside the folder), or None when every external tensor is usable. Stats only."""
    for t in _external_tensors(model, Path(base_dir)):
        if t.problem:
            return f"tensor {t.name!r}: {t.problem}"
    return None


def external_data_problem(path: str | os.PathLike) -> str | None:
    """For a caller about to hand a model file to ORT or onnx, which read its external data themselves
    (following symlinks): the first reason that must not happen (missing, short, bad offset/length, outside
    the model's folder), or None. Parses the file; InputError when it cannot."""
    bad = load(Path(path)).missing_external
    return f"tensor {bad[0].name!r}: {bad[0].problem}" if bad else None


def _resolve_location(base_real: str, base_dir, location: str) -> tuple[Path | None, str | None]:
    if not location:
        return None, "no location given"
    if "\0" in location:
        return None, f"location {location!r} is not a valid file name"
    parts = re.split(r"[\\/]", location)
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ".." in parts or re.match(r"^[A-Za-z]:", location):
        return None, f"location {location!r} {OUTSIDE}"
    try:
        real = os.path.realpath(os.path.join(base_dir, location))
        inside = real != base_real and os.path.commonpath([base_real, real]) == base_real
    except (OSError, ValueError) as exc:
        return None, f"location {location!r} cannot be resolved: {getattr(exc, 'strerror', None) or exc}"
    if not inside:
        return None, f"location {location!r} {OUTSIDE} (through a symlink)"
    return Path(real), None


_DIGITS = re.compile(r"[0-9]{1,19}")


def _count(info: dict, key: str) -> tuple[int | None, str | None]:
    """An offset/length value: absent or empty is None; anything but a plain non-negative integer is a problem."""
    value = info.get(key)
    if value is None or value == "":
        return None, None
    if not _DIGITS.fullmatch(value) or int(value) >= 2**63:
        return None, f"external data {key} {value[:40]!r} is not a non-negative integer"
    return int(value), None


def _external_tensors(model: onnx.ModelProto, base: Path) -> list[ExternalTensor]:
    """Where each external tensor's bytes should be, checked with stat() only (never opened).

    Every tensor that can hold external data is looked at: initializers, sparse initializers and tensor
    attributes (Constant values), in every graph, subgraph and local function."""
    import onnx

    out = []
    sizes: dict[Path, int | str] = {}
    base_real = os.path.realpath(base)
    for tensor in _all_tensors(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info: dict[str, str] = {}
        dup = None
        for e in tensor.external_data:
            if e.key in info and e.key in ("location", "offset", "length"):
                dup = e.key
            info[e.key] = e.value
        loc = info.get("location", "")
        offset, bad_offset = _count(info, "offset")
        length, bad_length = _count(info, "length")
        ext = ExternalTensor(tensor.name, loc, offset or 0, length, base / loc if loc else base)
        out.append(ext)
        if dup:
            ext.problem = f"external data key {dup!r} is given more than once"
            continue
        if bad_offset or bad_length:
            ext.problem = bad_offset or bad_length
            ext.length = None
            continue
        real, ext.problem = _resolve_location(base_real, base, loc)
        if ext.problem or real is None:
            ext.outside = OUTSIDE in (ext.problem or "")
            continue
        ext.path = real
        if real not in sizes:
            try:
                st = os.stat(real)
                sizes[real] = st.st_size if stat.S_ISREG(st.st_mode) else "is not a regular file"
            except FileNotFoundError:
                sizes[real] = "is missing"
            except OSError as exc:
                sizes[real] = f"cannot be read ({exc.strerror or exc})"
        have = sizes[real]
        if isinstance(have, str):
            ext.problem = f"external data file {loc!r} {have}"
        elif length is not None and ext.offset + length > have:
            ext.problem = f"external data file {loc!r} is {have} bytes, tensor needs bytes {ext.offset}..{ext.offset + length}"
        elif length is None and ext.offset > have:
            ext.problem = f"external data file {loc!r} is {have} bytes, tensor starts at byte {ext.offset}"
    return out


def _all_tensors(model: onnx.ModelProto):
    """Every TensorProto of the model that may point at external data: the initializers and sparse
    initializers of the main graph and its control-flow bodies, then the tensor attributes of their nodes and
    of local functions' nodes (their bodies included). One walk over every node's attributes finds the bodies
    and the tensor attributes both."""
    import onnx

    from onnxlint.graph import iter_graphs, scan_attributes

    A = onnx.AttributeProto
    found: list = []  # tensor attributes, in node order of the graphs in walk order, then of the functions
    graphs = list(iter_graphs(model, found))
    for g in graphs:
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield sp.values
            yield sp.indices
    fstack = [f.node for f in model.functions]
    while fstack:  # local function bodies, their subgraphs included
        bodies: list = []
        scan_attributes(fstack.pop(), bodies, found)
        fstack.extend(g.node for g in bodies)
    for a in found:
        kind = a.type
        if kind == A.TENSOR:
            yield a.t
        elif kind == A.TENSORS:
            yield from a.tensors
        elif kind == A.SPARSE_TENSOR:
            yield a.sparse_tensor.values
            yield a.sparse_tensor.indices
        else:
            for sp in a.sparse_tensors:
                yield sp.values
                yield sp.indices


WEIGHT_BYTES = 4096  # in-file tensors above this are weights: shape inference needs their dims, not their bytes
# field numbers of onnx.proto: ModelProto.graph, GraphProto.initializer; TensorProto's fields as keys (number
# << 3 | wire type) of the wire types protobuf reads them with (any other is kept as an unknown field)
_MODEL_GRAPH, _GRAPH_INITIALIZER = 7, 5
_RAW_FIELD, _LOCATION_FIELD = 9 << 3 | 2, 14 << 3 | 0  # raw_data, data_location
_TYPED_FIELDS = frozenset({4 << 3 | 2, 4 << 3 | 5, 5 << 3 | 2, 5 << 3 | 0, 6 << 3 | 2, 7 << 3 | 2, 7 << 3 | 0,
                           10 << 3 | 2, 10 << 3 | 1, 11 << 3 | 2, 11 << 3 | 0})  # float/int32/string/int64/double/uint64_data


def weightless_bytes(model: onnx.ModelProto, raw: bytes | None = None) -> bytes:
    """The model serialized without the bytes of its large in-file initializers (dims and dtype kept).

    onnx's shape inference copies the whole model in and out; weights are most of it and it never reads them.
    Cut out of the serialized model (raw: the file's bytes, when at hand) at the protobuf wire level, the main
    graph's initializers only (weights in a control-flow body are rare; inference reads them, its answer is
    the same). Neither the model nor its weights are copied into Python objects: clearing a field of a parsed
    model and setting it again grew the model's memory by the size of every weight."""
    data = raw if raw is not None else model.SerializeToString()
    try:
        return _strip_initializers(data)
    except (IndexError, ValueError):  # the graph given in parts (merged on parsing), or not a model's bytes: as is
        return bytes(data)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _skip(buf: bytes, pos: int, key: int) -> tuple[int, int]:
    """(start of the value, end of the field) of a field whose key ended at pos."""
    kind = key & 7
    if kind == 2:
        n, pos = _varint(buf, pos)
        return pos, pos + n
    if kind == 0:
        return pos, _varint(buf, pos)[1]
    if kind == 1:
        return pos, pos + 8
    if kind == 5:
        return pos, pos + 4
    raise ValueError(f"wire type {kind}")  # groups: onnx.proto has none


def _strip_initializers(buf: bytes) -> bytes:
    """buf (a model serialized) with the data fields of its main graph's large initializers left out, as
    clearing them in the parsed model and serializing it would (a field of buf's graph at a time, copied as
    it is). IndexError or ValueError: buf's graph cannot be read so (given in parts, or not a model)."""
    graphs = 0
    pos, end = 0, len(buf)
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos)
        start, pos = _skip(buf, pos, key)
        if key == (_MODEL_GRAPH << 3 | 2):
            graphs += 1
            graph_at, graph_start, graph_end = at, start, pos
    if pos != end or graphs != 1:  # no graph, or one given in parts (merged on parsing): leave it
        raise ValueError("graph field")
    view = memoryview(buf)
    body: list = []  # the graph's new bytes: ranges of buf and rewritten initializers
    copied = graph_start  # buf[copied:] is not in body yet
    pos = graph_start
    for_init = _GRAPH_INITIALIZER << 3 | 2
    while pos < graph_end:
        at = pos
        key = buf[pos]  # most keys are one byte
        pos += 1
        if key >= 0x80:
            key, pos = _varint(buf, at)
        if key & 7 == 2:
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = _varint(buf, pos)
            start, pos = pos, pos + n
        else:
            start, pos = _skip(buf, pos, key)
        if key != for_init:
            continue
        drop = _drop_fields(buf, start, pos)
        if drop is None:
            continue
        tensor = b"".join([view[a:b] for a, b in drop])
        body += [view[copied:at], _encode_varint(for_init), _encode_varint(len(tensor)), tensor]
        copied = pos
    if pos != graph_end:
        raise ValueError("graph")
    if not body:
        return bytes(buf)
    body.append(view[copied:graph_end])
    graph = b"".join(body)
    return b"".join([view[:graph_at], _encode_varint(_MODEL_GRAPH << 3 | 2), _encode_varint(len(graph)), graph,
                     view[graph_end:]])


def _drop_fields(buf: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
    """The byte ranges of the serialized tensor buf[start:end] to keep without its data, or None to keep it
    whole. As the parsed tensor would decide: one whose data_location is EXTERNAL stays; raw_data over
    WEIGHT_BYTES goes (every occurrence: the last one is the value); with no raw_data, a tensor over
    WEIGHT_BYTES (its ByteSize, read from the tensor parsed alone when it may be) loses its typed data."""
    import onnx

    fields = []
    pos = start
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos)
        value, pos = _skip(buf, pos, key)
        fields.append((key, at, value, pos))
    if pos != end:
        raise ValueError("tensor")
    location = [f for f in fields if f[0] == _LOCATION_FIELD]
    if location and _varint(buf, location[-1][2])[0] == onnx.TensorProto.EXTERNAL:
        return None
    raws = [f for f in fields if f[0] == _RAW_FIELD]
    if raws:
        if raws[-1][3] - raws[-1][2] <= WEIGHT_BYTES:
            return None
        gone = frozenset({_RAW_FIELD})
    elif end - start > WEIGHT_BYTES // 2 and onnx.TensorProto.FromString(bytes(buf[start:end])).ByteSize() > WEIGHT_BYTES:
        gone = _TYPED_FIELDS  # (the serialized size can exceed the file's bytes a little: packing, so the margin)
    else:
        return None
    return [(a, b) for key, a, _, b in fields if key not in gone]


# onnx shape inference re-reads the whole outer scope for every control-flow body (If/Loop/Scan) and
# re-infers a local function's body at every call: its cost grows with bodies x outer values and with
# nested calls, not with the file (a chain of 20k If nodes: 179 s). The estimate below counts that work;
# measured at 3-15 M units per second of one core: the budget is 2-9 s at most.
INFER_BUDGET = 25_000_000
# and onnx holds about 1 KB per node while inferring (a 1M-node chain: 6 s and 1.1 GB on top of the model)
INFER_MAX_NODES = 300_000


def inference_cost(model: onnx.ModelProto, limit: int | None = None) -> int:
    """Estimated work of onnx shape inference (see INFER_BUDGET): one unit per node, plus, per control-flow
    body, the values visible to it (onnx copies its outer scope), plus every local-function call's body
    expanded (nested calls multiply). Linear in the model; stops counting once past limit."""
    return _inference_work(model, limit)[0]


def _inference_work(model: onnx.ModelProto, limit: int | None = None,
                    graphs: list | None = None) -> tuple[int, int]:
    """(inference_cost, nodes in the model's graphs and subgraphs), counting stopped once past limit. graphs: a
    list that gets every graph walked (all of them when the cost is within limit), for the next walk."""
    import onnx

    A = onnx.AttributeProto
    cap = limit if limit is not None else 2**62
    fn_cost = _function_costs(model, cap)
    cost = nodes = 0
    stack = [(model.graph, 0)]
    while stack:
        g, outer = stack.pop()
        if graphs is not None:
            graphs.append(g)
        visible = outer + len(g.input) + len(g.initializer) + len(g.value_info)
        nodes += len(g.node)
        cost += len(g.node)
        for n in g.node:
            visible += len(n.output)  # onnx's scope holds the values inferred so far
            if n.attribute:
                for a in n.attribute:
                    if a.type == A.GRAPH:
                        cost += visible
                        stack.append((a.g, visible))
                    elif a.type == A.GRAPHS:
                        cost += visible * len(a.graphs)
                        stack.extend((sub, visible) for sub in a.graphs)
            if fn_cost:
                cost += fn_cost.get((n.domain, n.op_type, n.overload), 0)
        if cost > cap:
            break
    return cost, nodes


def _function_costs(model: onnx.ModelProto, cap: int) -> dict:
    """(domain, name, overload) -> nodes inferred for one call of that local function, calls expanded.

    A function that calls itself, directly or not, costs cap + 1 (onnx cannot infer it)."""
    import onnx

    A = onnx.AttributeProto
    funcs = {(f.domain, f.name, f.overload): f for f in model.functions}
    if not funcs:
        return {}

    def body_nodes(f):
        todo, out = [f.node], []
        while todo:
            nodes = todo.pop()
            for n in nodes:
                out.append(n)
                for a in n.attribute:
                    if a.type == A.GRAPH:
                        todo.append(a.g.node)
                    elif a.type == A.GRAPHS:
                        todo.extend(g.node for g in a.graphs)
        return out

    calls = {}
    size = {}
    for key, f in funcs.items():
        nodes = body_nodes(f)
        size[key] = len(nodes)
        calls[key] = [c for c in ((n.domain, n.op_type, n.overload) for n in nodes) if c in funcs]
    costs: dict = {}
    for root in funcs:
        if root in costs:
            continue
        stack, on_path = [(root, iter(calls[root]))], {root}
        while stack:  # post-order, iteratively; a callee still on the path is a cycle: it has no cost yet
            key, pending = stack[-1]
            for callee in pending:
                if callee not in costs and callee not in on_path:
                    stack.append((callee, iter(calls[callee])))
                    on_path.add(callee)
                    break
            else:
                stack.pop()
                on_path.discard(key)
                costs[key] = min(size[key] + sum(costs.get(c, cap + 1) for c in calls[key]), cap + 1)
    return costs


def infer_shapes(mf: ModelFile, budget: int | None = None) -> None:
    """onnx's shape inference on the weight-less proto; failure is recorded, never raised.

    mf.inferred keeps every small constant but has no bytes for the large initializers: rules only read
    constants of a few elements (engine.MAX_VALUE_ELEMENTS).

    A model whose inference would cost more than the budget (inference_cost, INFER_BUDGET, INFER_MAX_NODES)
    is not inferred: mf.inferred stays None and mf.inference_skipped says why (a rule reports it)."""
    mf.inference_work = None
    graphs: list = []  # the graphs the budget walk met (their number: the control-flow bodies)
    mf.inference_skipped, cost, nodes = _budget_verdict(mf.model, budget, None, False, graphs)
    if mf.inference_skipped:
        mf.inferred = None
        _inference_done(mf)
        return
    mf.inference_work = (cost, nodes, len(graphs) - 1)
    data = mf.weightless if mf.weightless is not None else weightless_bytes(mf.model, mf.raw)
    _inference_done(mf)  # the file's bytes may go before onnx's copies of the model are made
    _infer(mf, data)


def _inference_done(mf: ModelFile) -> None:
    """The file's bytes serve the checker and the weight-less copy for inference: dropped once both are done."""
    mf.inference_done, mf.weightless = True, None
    if mf.checked is not False or not mf.checker_wanted:
        mf.raw = None


def over_inference_budget(model: onnx.ModelProto, budget: int | None = None, max_nodes: int | None = None,
                          flat: bool = False) -> str | None:
    """Why onnx shape inference must not run on this model (past the budget), or None when it may.

    Every caller of onnx.shape_inference.infer_shapes on a user's model checks this first. flat: the caller
    knows the model holds no control-flow body and no local function (a graph index of one scope): its cost is
    then its node count, read without the walk (~0.1 s at 100k nodes)."""
    return _budget_verdict(model, budget, max_nodes, flat)[0]


def _budget_verdict(model: onnx.ModelProto, budget: int | None, max_nodes: int | None, flat: bool,
                    graphs: list | None = None) -> tuple[str | None, int, int]:
    """(over_inference_budget's answer, inference cost, nodes); graphs: see _inference_work."""
    limit = INFER_BUDGET if budget is None else budget
    most = INFER_MAX_NODES if max_nodes is None else max_nodes
    if flat:
        cost = nodes = len(model.graph.node)
    else:
        cost, nodes = _inference_work(model, limit, graphs)
    if nodes > most:
        return (f"onnx shape inference skipped: {nodes:,} nodes, past the budget of {most:,} (its time and memory); "
                f"types and shapes come from the file's own value_info"), cost, nodes
    if cost <= limit:
        return None, cost, nodes
    return (f"onnx shape inference skipped: the model's control-flow bodies and function calls would cost it over "
            f"{limit:,} steps (it re-reads the outer scope for every body and re-infers every function call); "
            f"types and shapes come from the file's own value_info"), cost, nodes


def reinference_within_budget(work: tuple[int, int, int], graphs: list) -> bool:
    """Whether inferring the inferred model again is within the default budget, told without a walk over its
    nodes from work (cost, nodes, control-flow bodies: ModelFile.inference_work, counted before the first
    inference) and graphs (the inferred model's graphs, as iter_graphs lists them). Inference adds no node, only
    value_info, and _inference_work charges each body the values visible to it, so the cost grows by at most
    bodies x the value_info entries now in the model. False: not known this way (over_inference_budget's walk
    decides)."""
    cost, nodes, bodies = work
    added = sum(len(g.value_info) for g in graphs)
    return nodes <= INFER_MAX_NODES and cost + bodies * added <= INFER_BUDGET


def _infer(mf: ModelFile, data: bytes) -> None:
    """Strict first (type checks, every node's inference function must succeed: what ORT's graph resolution
    requires, so a failure is "ORT will refuse this model"), then, only when that fails, lenient inference for
    the rules. One pass in the common case."""
    import onnx

    try:
        mf.inferred = onnx.shape_inference.infer_shapes(data, check_type=True, strict_mode=True)
        return
    except Exception as exc:  # onnx raises several types here, including InferenceError and RuntimeError
        mf.strict_error = " ".join(str(exc).split())[:300] or type(exc).__name__
    try:
        mf.inferred = onnx.shape_inference.infer_shapes(data, check_type=False, strict_mode=False)
    except Exception as exc:
        mf.inference_error = _first_line(exc)
        mf.inferred = None


def index_model(mf: ModelFile):
    """Shape inference, then the graph index over the inferred (weight-less) copy."""
    from onnxlint.graph import GraphIndex

    infer_shapes(mf)
    index = GraphIndex(mf.inferred or mf.model)
    if mf.inferred is not None:
        index.inference_work = mf.inference_work
    return index


_EXTERNAL_COMPLAINT = re.compile(r"should be stored in|^Data of TensorProto|^Location of external TensorProto|"
                                 r"external data", re.I)


def checker_result(mf: ModelFile) -> str | None:
    """check_model(mf), run once; the file's bytes are dropped after, when inference has had them too."""
    if mf.checked is False:
        mf.checked = check_model(mf)
        if mf.inference_done:
            mf.raw = None
    return mf.checked  # type: ignore[return-value]


def check_model(mf: ModelFile) -> str | None:
    """onnx.checker's first complaint, or None.

    Checked from the file itself: the checker then resolves external data against the model's folder (and
    only stats it), and does not pay for re-serializing the weights."""
    if mf.external and not mf.outside_external:  # nothing outside the folder is even stat()ed
        msg = checker_message(str(mf.path))
    else:
        msg = checker_message(mf.raw if mf.raw is not None else mf.model)
    return _complaint(mf, msg)


def checker_message(target: Any) -> str | None:
    """onnx.checker.check_model(target)'s complaint on one line (at most 300 characters), or None."""
    import onnx

    try:
        onnx.checker.check_model(target, full_check=False)
    except Exception as exc:  # ValidationError and friends
        # the checker's messages span lines ("input 'x' of node: \nname: a OpType: Add\n is not ..."): one line
        return (" ".join(str(exc).split()) or type(exc).__name__)[:300]
    return None


def _complaint(mf: ModelFile, msg: str | None) -> str | None:
    if msg and mf.missing_external and _EXTERNAL_COMPLAINT.search(msg):
        return None  # missing, short or outside external data is its own finding (OLX003)
    return msg
