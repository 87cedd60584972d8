"""The model-file types: a model as read (ModelFile) and where each of its external tensors' bytes are."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    import onnx

T = TypeVar("T")


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
    strict_error: str | None = None  # onnx's strict shape inference / type check failed (ORT may still load it)
    # ORT release -> what its Graph::Resolve refuses the model with, or None (ort.model_load.resolve_failure_of)
    ort_resolve: dict[str | None, str | None] = field(default_factory=dict)
    # what infer_shapes' budget walk counted before inference: (cost, nodes, control-flow bodies), or None
    inference_work: tuple[int, int, int] | None = None
    # graph.graph_bodies(model) as load's external-data walk found them: the budget's count reads where the bodies
    # are from it instead of every node's attributes again (nothing changes a loaded model's nodes before)
    graph_bodies: list | None = None
    # every tensor-valued attribute of the model (Constant values among them), as the same walk found them: the
    # element-type check of ORT's load (ort.model_load) looks at these, not at every node again
    tensor_attributes: list = field(default_factory=list)
    # the file's bytes, for the checker and for inference's weight-less copy (neither re-serializes the weights)
    raw: bytes | None = None
    checked: str | None | bool = False  # the checker's complaint once asked (checker_result); False: not yet
    inference_done: bool = False  # infer_shapes has run (the bytes are not needed for it any more)
    checker_wanted: bool = True  # False: nothing will ask checker_result (the bytes are not kept for it)
    # load(lean=True): the bytes model was parsed from (weightless_bytes of the file), for shape inference
    weightless: bytes | None = None
    # where weightless also lacks the data of large Constant values: [(node position in the main graph, `value`
    # attribute position)] (wire.strip_weights), put back into the inferred model (wire.restore_constants)
    stripped_constants: list[tuple[int, int]] = field(default_factory=list)
    digest: str | None = None  # load(digest=True): blake2b of the bytes parsed (the result cache's key of them)
    # (device, inode, size, mtime in ns) of the file as it was read: an in-place write first checks it still is
    stamp: tuple[int, int, int, int] | None = None

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


def repair_strings(model: onnx.ModelProto) -> bool:
    """Make every string field of the model text: protobuf hands one whose bytes are not UTF-8 over as bytes
    (a node name, a doc_string), which the linter's string handling cannot take. Each such value becomes its
    text with the bad bytes as `\\xNN` (the same bytes give the same name everywhere, so references still
    match). Walks every message of the model: the linter calls it only after a lint failed on such a value.
    True when something was changed."""
    from google.protobuf.descriptor import FieldDescriptor

    from onnxlint.support.escape import field_text

    string, message = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
    changed = False
    stack: list = [model]
    while stack:
        msg = stack.pop()
        for fd, value in msg.ListFields():
            if fd.type == message:
                if _repeated(fd):
                    stack.extend(value)
                else:
                    stack.append(value)
            elif fd.type == string:
                if _repeated(fd):
                    for i, v in enumerate(value):
                        if isinstance(v, bytes):
                            value[i] = field_text(v)
                            changed = True
                elif isinstance(value, bytes):
                    setattr(msg, fd.name, field_text(value))
                    changed = True
    return changed


# what a string field that is not UTF-8 raises where it is used: protobuf hands it over as bytes (TypeError where
# text is wanted), and such bytes set into a string field again (ORT's initializer made of a Constant node, named
# after its output) fail to decode
BYTES_ERRORS = (TypeError, UnicodeDecodeError)


def with_strings_repaired(mf: ModelFile, work: Callable[[], T]) -> T:
    """work() over the model file, and where a string field that is not UTF-8 made it fail (protobuf hands such
    a value over as bytes: a TypeError; copied into another message's string field, a UnicodeDecodeError), once
    more with the model's strings made text (repair_strings) and its inference redone from the repaired model:
    what the linter does, for the other readers of a model (the placement command, the HTML page)."""
    try:
        return work()
    except BYTES_ERRORS:
        if not repair_strings(mf.model):
            raise
        mf.inferred = mf.raw = mf.weightless = None
        return work()


def _repeated(fd: Any) -> bool:
    """A field descriptor's repeatedness, as protobuf 5 (label) and 6 (is_repeated) tell it."""
    repeated = getattr(fd, "is_repeated", None)
    return bool(repeated) if repeated is not None else fd.label == fd.LABEL_REPEATED
