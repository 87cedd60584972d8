"""External-data safety: where a tensor's external bytes are, checked with stat() only, never opened, and
never outside the model's folder (or, for a model that is a link, the real folder of the file it leads to, as
ORT's path check has it); a data file too short for its tensors, of a Git LFS pointer's size, is read to say it
is one."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from onnxlint.model.loading.model_file import ExternalTensor
from onnxlint.support.errors import clip
from onnxlint.support.escape import field_text

if TYPE_CHECKING:
    import onnx

OUTSIDE = "points outside the model's folder"
MAX_QUOTED = 300  # characters of a location (or key) a problem quotes: a 1 MB location made a 1 MB OLX003 message


def _quoted(text: str) -> str:
    """A location or key as a problem quotes it: whole, or its start and its length when long."""
    shown = repr(text)
    return shown if len(shown) <= MAX_QUOTED else f"{clip(shown, MAX_QUOTED)} ({len(text):,} characters)"


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


def external_data_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    """Every tensor of the model whose bytes live in another file: initializers and sparse ones, Constant
    values and every other tensor attribute, in every graph, control-flow body and local function. A copier or
    a writer that moves a model must move (or refuse) all of these, not only the initializers."""
    import onnx

    return [t for t in all_tensors(model) if t.data_location == onnx.TensorProto.EXTERNAL]


def has_external_data(model: onnx.ModelProto) -> bool:
    """Whether any tensor of the model keeps its bytes in another file (see external_data_tensors)."""
    return bool(external_data_tensors(model))


def check_external_data(model: onnx.ModelProto, base_dir: str | os.PathLike) -> str | None:
    """The first reason the model's external data must not be read from base_dir (missing, short, bad
    offset/length, outside the folder), or None when every external tensor is usable. Stats only."""
    for t in external_tensors(model, Path(base_dir)):
        if t.problem:
            return f"tensor {t.name!r}: {t.problem}"
    return None


def _resolve_location(base_real: str, base_dir, location: str, linked_real: str | None = None
                      ) -> tuple[Path | None, str | None]:
    """linked_real: for a model that is a link, the real folder of the file it leads to, where ORT also reads data
    (its path validation: the model's folder or the model's real folder). The Hugging Face cache links a
    snapshot's model and data files to blobs named by their content: both lead to one blobs folder."""
    if not location:
        return None, "no location given"
    if "\0" in location:
        return None, f"location {_quoted(location)} is not a valid file name"
    parts = re.split(r"[\\/]", location)
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ".." in parts or re.match(r"^[A-Za-z]:", location):
        return None, f"location {_quoted(location)} {OUTSIDE}"
    try:
        real = os.path.realpath(os.path.join(base_dir, location))
        root = next((r for r in (base_real, linked_real) if r is not None and _under(r, real)), None)
    except (OSError, ValueError) as exc:
        return None, f"location {_quoted(location)} cannot be resolved: {getattr(exc, 'strerror', None) or exc}"
    if root is None:
        return None, f"location {_quoted(location)} {OUTSIDE} (through a symlink)"
    # below the model's folder; for data in a linked model's real folder, the whole path (that folder may be in .git)
    if _in_git_folder(Path(os.path.relpath(real, root) if root == base_real else real).parts):
        # a model at a repository's root could name `.git/config` (a CI checkout keeps its token there): ORT and
        # the numeric check would read it as weights, `--fix -o` copy it into the new data file
        return None, f"location {_quoted(location)} is in a .git folder (git's own files, never a model's data)"
    return Path(real), None


def _under(root: str, real: str) -> bool:
    return real != root and os.path.commonpath([root, real]) == root


def _in_git_folder(parts: tuple[str, ...]) -> bool:
    """Whether a path (its parts below the model's folder) is in a .git folder, other than git-annex's object store
    (`.git/annex/objects/`: the contents of the repository's annexed files, where a locked annexed data file's
    link leads; the weights a model at the repository's root names that way are its own)."""
    for i, part in enumerate(parts):
        if part.lower() == ".git":
            return tuple(parts[i + 1:i + 3]) != ("annex", "objects") or len(parts) <= i + 3
    return False


_DIGITS = re.compile(r"[0-9]{1,19}")


def _count(info: dict, key: str) -> tuple[int | None, str | None]:
    """An offset/length value: absent or empty is None; anything but a plain non-negative integer is a problem."""
    value = info.get(key)
    if value is None or value == "":
        return None, None
    if not _DIGITS.fullmatch(value) or int(value) >= 2**63:
        return None, f"external data {key} {value[:40]!r} is not a non-negative integer"
    return int(value), None


def linked_real(path: str | os.PathLike, data_root: str | None = None) -> str | None:
    """The other folder a model file's external data is in bounds in (external_tensors' linked_real): the real
    folder of the file a model that is a link leads to (the Hugging Face cache's snapshots: ORT reads data there
    too), else data_root (a copy in a temporary folder beside links to the data: data_links.linked_folder)."""
    return os.path.dirname(os.path.realpath(path)) if os.path.islink(path) else data_root


def external_tensors(model: onnx.ModelProto, base: Path, walked: list | None = None,
                     linked_real: str | None = None, attributes: list | None = None) -> list[ExternalTensor]:
    """Where each external tensor's bytes should be, checked with stat() only (never opened). linked_real: the
    real folder of the model file when it is a link (_resolve_location), where ORT reads data too.

    Every tensor that can hold external data is looked at: initializers, sparse initializers and tensor
    attributes (Constant values), in every graph, subgraph and local function. walked: a list that gets the
    walk's graphs and where their bodies are (graph.graph_bodies), for the inference budget's count; attributes: a
    list that gets every tensor-valued attribute of the model (all_tensors)."""
    import onnx

    out = []
    sizes: dict[Path, int | str] = {}
    pointers: dict[Path, str | None] = {}
    base_real = os.path.realpath(base)
    for tensor in all_tensors(model, walked, attributes):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info: dict[str, str] = {}
        dup = None
        not_text = None
        for e in tensor.external_data:
            raw_key, raw_value = e.key, e.value  # protobuf hands a non-UTF-8 string over as bytes
            key, value = field_text(raw_key), field_text(raw_value)
            if isinstance(raw_key, bytes) or isinstance(raw_value, bytes):
                not_text = key
            if key in info and key in ("location", "offset", "length"):
                dup = key
            info[key] = value
        loc = info.get("location", "")
        offset, bad_offset = _count(info, "offset")
        length, bad_length = _count(info, "length")
        ext = ExternalTensor(tensor.name, loc, offset or 0, length, base / loc if loc else base)
        out.append(ext)
        if dup:
            ext.problem = f"external data key {dup!r} is given more than once"
            continue
        if not_text is not None:
            ext.problem = f"external data entry {_quoted(not_text)} is not UTF-8 text"
            ext.length = None
            continue
        if bad_offset or bad_length:
            ext.problem = bad_offset or bad_length
            ext.length = None
            continue
        real, ext.problem = _resolve_location(base_real, base, loc, linked_real)
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
            ext.problem = f"external data file {_quoted(loc)} {have}"
        elif length is None and ext.offset > have:
            ext.problem = f"external data file {_quoted(loc)} is {have} bytes, tensor starts at byte {ext.offset}"
        # with no length (onnx writes one; other writers may not) ORT reads the dims' worth of bytes from the offset
        elif (need := length if length is not None else _nbytes(tensor)) is not None and ext.offset + need > have:
            lfs = _lfs_pointer(real, have, pointers)
            ext.problem = (f"external data file {_quoted(loc)} is {lfs}" if lfs else
                           f"external data file {_quoted(loc)} is {have} bytes, tensor needs bytes {ext.offset}..{ext.offset + need}")
    return out


# bytes an element of each fixed-size element type takes (TensorProto.DataType: FLOAT, UINT8, INT8, UINT16, INT16,
# INT32, INT64, BOOL, FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16); packed and newer types are
# left out (no size is claimed for them)
_ITEM_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16, 16: 2}


def _nbytes(tensor: onnx.TensorProto) -> int | None:
    """The bytes a tensor's dims and element type take, when the type has a fixed size; None otherwise."""
    size = _ITEM_BYTES.get(tensor.data_type)
    if size is None or any(d < 0 for d in tensor.dims):
        return None
    for d in tensor.dims:
        size *= d
    return size


def small_value_reader(external: list[ExternalTensor], limit: int = 4096) -> Callable[[onnx.TensorProto], Any]:
    """A reader of small external tensors' values (GraphIndex.read_external): the bytes of one of at most limit
    bytes, read at its offset in the data file the model's load found for it (external_tensors: in the model's
    folder, no problem), as numpy gives them; None for any other (unknown to the rules, as before).

    Why: a rule or a runtime's verdict reads a flag or a few ints (Dropout's training_mode, a Reduce's axes) that
    an exporter saving every tensor externally puts in the data file; ORT and TensorRT read them there. onnx's
    numpy_helper.to_array reads an external tensor relative to the working folder instead (and writes its bytes
    into the proto): a verdict then depended on where onnxlint ran, and on a file of that name there."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    read_bytes = small_bytes_reader(external, limit)
    values: dict[bytes, Any] = {}

    def read(tensor: onnx.TensorProto) -> Any:
        data = read_bytes(tensor)
        if data is None:
            return None
        key = tensor.SerializeToString()
        if key not in values:
            copy = onnx.TensorProto()
            copy.data_type = tensor.data_type
            copy.dims.extend(tensor.dims)
            copy.raw_data = data
            try:
                values[key] = numpy_helper.to_array(copy)
            except ValueError:
                values[key] = None
        got = values[key]
        return np.array(got) if got is not None else None

    return read


def small_bytes_reader(external: list[ExternalTensor], limit: int) -> Callable[[onnx.TensorProto], bytes | None]:
    """A reader of small external tensors' bytes, as small_value_reader reads them (at most limit bytes, of a
    fixed-size element type, read at the tensor's offset in the data file the model's load found for it in the
    model's folder, of the length its dims give): the bytes, or None for any other tensor or a read that fails.
    inline-external-data moves these into the model."""
    where = {(t.name, t.location, t.offset): t for t in external if t.problem is None}
    values: dict[tuple[str, str, int], bytes | None] = {}

    def read(tensor: onnx.TensorProto) -> bytes | None:
        info = {field_text(e.key): field_text(e.value) for e in tensor.external_data}
        offset, bad = _count(info, "offset")
        key = (tensor.name, info.get("location", ""), offset or 0)
        if bad or key not in where:
            return None
        if key not in values:
            values[key] = None
            ext, need = where[key], _nbytes(tensor)
            if need is not None and need <= limit and (ext.length is None or ext.length == need):
                try:
                    with open(ext.path, "rb") as fh:
                        data = os.pread(fh.fileno(), need, ext.offset)
                    if len(data) == need:
                        values[key] = data
                except (OSError, ValueError):
                    pass  # unreadable: unknown (None), as for any other
        return values[key]

    return read


def inline_small(model: onnx.ModelProto, read: Callable[[onnx.TensorProto], bytes | None]) -> int:
    """Move into the model, in place, every external tensor `read` gives the bytes of (initializers, sparse ones,
    tensor attributes, in every graph, body and local function); returns how many were moved. With
    small_bytes_reader: inline-small-tensors' rewrite, and its lint-time question (ort.model_load)."""
    import onnx

    moved = 0
    for t in all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        data = read(t)
        if data is None:
            continue
        del t.external_data[:]
        t.ClearField("data_location")
        t.raw_data = data
        moved += 1
    return moved


def _lfs_pointer(real: Path, size: int, seen: dict[Path, str | None]) -> str | None:
    """What a data file too short for its tensors is when a checkout without Git LFS holds a pointer in its place
    (said with how to fetch it, not as a short file); read once per file, only when it is a pointer's size."""
    from onnxlint.model import lfs

    if real not in seen:
        got = lfs.pointer_file(real) if size < lfs.MAX_POINTER else None
        seen[real] = (f"a Git LFS pointer to {lfs.describe_size(got[1])}, not the data: {lfs.FETCH}"
                      if got is not None else None)
    return seen[real]


def all_tensors(model: onnx.ModelProto, walked: list | None = None, attributes: list | None = None):
    """Every TensorProto of the model that may point at external data: the initializers and sparse
    initializers of the main graph and its control-flow bodies, then the tensor attributes of their nodes and
    of local functions' nodes (their bodies included). One walk over every node's attributes finds the bodies
    and the tensor attributes both (walked: a list that gets its graph_bodies; attributes: one that gets the tensor
    attributes, once the walk is done)."""
    import onnx

    from onnxlint.model.graph import graph_bodies, scan_attributes

    A = onnx.AttributeProto
    found: list = []  # tensor attributes, in node order of the graphs in walk order, then of the functions
    bodies_of = graph_bodies(model, found)
    if walked is not None:
        walked.extend(bodies_of)
    for g, _ in bodies_of:
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield sp.values
            yield sp.indices
    fstack = [f.node for f in model.functions]
    while fstack:  # local function bodies, their subgraphs included
        bodies: list = []
        scan_attributes(fstack.pop(), bodies, found)
        fstack.extend(g.node for g in bodies)
    if attributes is not None:
        attributes.extend(found)
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


def linked_data_folder(mf: Any) -> Path | None:
    """For a model that is a link whose data files all lead into the real folder of the file it leads to (the
    Hugging Face cache: snapshots/<rev>/model.onnx and model.onnx_data link to one blobs folder), that folder:
    ORT (1.24.4) reads such data through the model's link only, and refuses it read from the model's folder given
    as the data folder of verify's renamed copy ("escapes both model directory ... and real model directory"), and
    --fix -o reads them there (the numeric check, the copy into the new data file). The lint read those files there
    already (linked_real); None for every other model."""
    from onnxlint.support import worktree

    if not mf.external or not os.path.islink(mf.path):
        return None
    own, real = os.path.realpath(Path(mf.path).parent), os.path.dirname(os.path.realpath(mf.path))
    paths = [os.path.realpath(t.path) for t in mf.external]
    if any(t.problem for t in mf.external) or all(worktree.inside(p, own) for p in paths):
        return None
    return Path(real) if all(worktree.inside(p, real) for p in paths) else None


def relocated(mf: Any, real: Path) -> Any:
    """A copy of the model whose external data locations name the files they lead to, relative to `real`."""
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(mf.model)
    where = {t.location: os.path.relpath(os.path.realpath(t.path), real) for t in mf.external}
    for tensor in external_data_tensors(copy):
        for entry in tensor.external_data:
            if entry.key == "location" and entry.value in where:
                entry.value = where[entry.value]
    return copy
