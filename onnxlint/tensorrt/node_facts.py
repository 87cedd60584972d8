"""What a node presents to the parser: the dtypes its type parameters bind, which inputs are weights (an
initializer or a Constant's output, what the parser takes as weights), constant values, ranks."""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Any

from onnxlint.model.graph import NodeRef, dtype_name, small_array
from onnxlint.ort import schema_registry
from onnxlint.tensorrt.versions import describe

Signature = tuple[Any, ...]  # GraphIndex.signature: (domain, op, opset, input type strings, output type strings)
Use = tuple[str, int, "str | None"]  # ('in' | 'out', position, dtype)
Bindings = dict[str, list[Use]]  # type parameter -> the inputs and outputs it binds

_FLOATS = {"float", "float16", "bfloat16", "double"}


def dtype_of(type_str: str | None) -> str | None:
    """'tensor(float)' -> 'float'; None for a sequence, a map or an unknown type."""
    return type_str[7:-1] if type_str and type_str.startswith("tensor(") else None


@lru_cache(maxsize=4096)
def allowed_types(op: str, opset: int | None, domain: str) -> dict[str, int]:
    """Type parameter -> how many types the op's schema allows it."""
    s = schema_registry.get_schema(op, opset, domain)
    if s is None:
        return {}
    return {t.type_param_str: len(t.allowed_type_strs) for t in s.type_constraints}


def bindings(node: NodeRef, sig: Signature, io: dict[str, str] | None = None) -> Bindings:
    """type parameter -> [('in'|'out', index, dtype)] from the node's schema at its opset.

    io: the table's {'in0': param, ...} for the schema version it was probed at (type parameter names change
    across op versions: DequantizeLinear-13's T is -21's T1); positions it names are keyed by its names."""
    fp = schema_registry.formal_params(node.op_type, node.opset, node.domain)
    if fp is None:
        return {}
    params = allowed_types(node.op_type, node.opset, node.domain)
    out: Bindings = {}
    for kind, formals, types in (("in", fp[0], sig[3]), ("out", fp[1], sig[4])):
        for i, t in enumerate(types):
            if not formals:
                break
            name, type_str, variadic = formals[min(i, len(formals) - 1)]
            if i >= len(formals) and not formals[-1][2]:
                break
            if type_str in params and t is not None:
                k = min(i, len(formals) - 1)
                key = io.get(f"{kind}{k}", type_str) if io else type_str
                out.setdefault(key, []).append((kind, i, dtype_of(t)))
    return out


def primary_param(node: NodeRef, binds: Bindings) -> str | None:
    """Docs tables list one type set per op: the first type parameter that is not a fixed shape/index type."""
    allowed = allowed_types(node.op_type, node.opset, node.domain)
    fp = schema_registry.formal_params(node.op_type, node.opset, node.domain)
    if fp is None:
        return None
    for _, type_str, _ in list(fp[0]) + list(fp[1]):
        if type_str in binds and allowed.get(type_str, 0) > 2:
            return str(type_str)
    return None


def is_constant(node: NodeRef, name: str) -> bool:
    """An initializer or a Constant node's output (what the parser sees as weights)."""
    if node.scope.constant(name) is not None:
        return True
    prod = node.scope.producer_of(name)
    return prod is not None and prod.op_type == "Constant" and prod.domain == "ai.onnx"


def constant_value(node: NodeRef, name: str) -> Any:
    """The value of a one-element initializer input (a flag the importer reads), else None."""
    t = node.scope.constant(name)
    arr = small_array(node.scope, t, 1) if t is not None else None
    return arr.reshape(-1)[0].item() if arr is not None and arr.size == 1 else None


def rank(node: NodeRef, i: int) -> int | None:
    r: int | None = node.input_type(i).rank
    return r


def input_ranks(node: NodeRef) -> list[int | None]:
    """The ranks of the given inputs, scalars left out: how the tables key rank-dependent rejections."""
    return [r for r in (rank(node, i) for i, n in enumerate(node.inputs) if n) if r != 0]


def norm(v: Any) -> Any:
    """An attribute value as the tables hold it: integral floats as ints, lists element-wise."""
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def dtype_class(d: str | None) -> str:
    return "float" if d in _FLOATS or (d or "").startswith("float") else ("bool" if d == "bool" else "int")


def made_dtype(node: NodeRef, i: int) -> str | None:
    """What the parser builds for input i: a Cast's `to` where a Cast makes it, else the declared type."""
    prod = node.scope.producer_of(node.inputs[i])
    to = prod.attr("to") if prod is not None and prod.op_type == "Cast" and prod.domain == "ai.onnx" else None
    return dtype_name(to) if isinstance(to, int) else node.input_type(i).dtype


def ort_only(node: NodeRef) -> bool:
    """Whether only ONNX Runtime defines the node's op (a contrib-domain op, or an ONNX-domain op whose schema is
    ORT's own, e.g. SimplifiedLayerNormalization): a model holding one was prepared for ORT."""
    return schema_registry.ort_only(node.op_type, node.opset, node.domain)


class NodeCheck:
    """One node as the table's checks read it: the node, its signature, the support table (label `ver`) and the
    op's row in it; what several checks derive (the product's name, the since-version, the bindings) is derived
    once, when first read."""

    def __init__(self, node: NodeRef, sig: Signature, table: dict[str, Any], ver: str, row: dict[str, Any]) -> None:
        self.node, self.sig, self.table, self.ver, self.row = node, sig, table, ver, row
        self.op: str = node.op_type

    @cached_property
    def who(self) -> str:
        return describe(self.ver)

    @cached_property
    def since_version(self) -> int | None:
        return schema_registry.since_version(self.op, self.node.opset, self.node.domain)

    @cached_property
    def binds(self) -> Bindings:
        """The bindings keyed by the names of the op version the row was probed at; a Cast's output by its `to`."""
        binds = bindings(self.node, self.sig, self.row.get("io"))
        if self.op == "Cast" and "T2" not in binds:
            to = self.node.attr("to")
            if isinstance(to, int):
                binds["T2"] = [("out", 0, dtype_name(to))]
        return binds

    @cached_property
    def behaviour(self) -> dict[str, Any]:
        """The table's measured behaviour (tools/gen_trt_behaviour.py)."""
        return self.table.get("behaviour") or {}

    def given(self, i: int) -> bool:
        """Whether input i is given (present and named)."""
        return i < len(self.node.inputs) and bool(self.node.inputs[i])
