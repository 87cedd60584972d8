"""Memcpy boundaries: where ORT's MemcpyTransformer (transformer_memcpy.cc) copies a tensor between host and
device after partitioning."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
from onnxlint.ort import schema_registry
from onnxlint.ort.kernel_registry import cpu_inputs, cpu_outputs
from onnxlint.ort.optimizer.optimized import Optimized
from onnxlint.ort.verdicts import CPU, CUDA, Boundary, Placement

_REMOVED = ("folded", "eliminated")
_NO_INPUTS: frozenset[int] = frozenset()  # a node none of whose inputs is host memory but for its side
DTYPE_BYTES = {"float": 4, "float16": 2, "bfloat16": 2, "double": 8, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
               "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1, "bool": 1}


def output_on_host(ep: str | None, prod: NodeRef, value: str) -> bool:
    """Whether the producer, placed on ep, leaves this output in host memory: it runs on CPU, or its CUDA kernel
    declares the output in CPU memory (OutputMemoryType, e.g. Shape's)."""
    return ep == CPU or (ep == CUDA and prod.outputs.index(value) in cpu_outputs(prod.op_type))


def _bytes(scope: GraphScope, value: str) -> int | None:
    """What one copy of value moves, when its dtype and shape are known."""
    vt = scope.type_of(value)
    n = vt.numel()
    return n * DTYPE_BYTES[vt.dtype] if n is not None and vt.dtype in DTYPE_BYTES else None


def insert_boundaries(pl: Placement, index: GraphIndex, opt: Optimized | None,
                      rewired: dict[str, str] | None = None, per_edge: dict[str, str] | None = None) -> None:
    """Memcpy nodes as ORT's MemcpyTransformer (transformer_memcpy.cc) inserts them: one per value a node
    on one side produces and a node on the other side reads (a CUDA kernel's host-memory inputs and outputs
    count as host side). A graph's own input, or an outer value a body reads, gets one only when host-side
    and device-side readers share it; otherwise the session copies it in (CopyInputsAcrossDevices).
    Initializers never do: ORT duplicates them per device. rewired: the values whose readers read another
    value after partitioning (the Casts RemoveDuplicateCastTransformer removed). per_edge: the values each reading
    input reads through a copy of its producer of its own (EnsureUniqueDQForNodeUnit), and the provider the
    copies run on: one crossing per reading input (the copies stay where a removed original no longer is)."""
    per_edge = per_edge or {}
    seen: set[tuple[str, ...]] = set()
    # scope id -> value -> [host-side reader, device-side reader] for the scope's inputs and outer values
    fed: dict[int, dict[str, list[NodeRef | None]]] = {}
    merged = _inlined_producers(index, opt)
    # read once here, not per input (a million inputs at 1M nodes)
    alias = opt.alias if opt is not None else {}
    folded = opt.constants if opt is not None else set()
    resolve = opt.resolve if opt is not None else _same
    # (op, opset, domain) -> the inputs its CUDA kernel reads from host memory (asked once per op, not per node)
    cuda_host_inputs: dict[tuple[str, int | None, str], frozenset[int]] = {}
    # each node's side from the verdicts' codes (no verdict made a node or a producer: a million each at 1M nodes)
    codes, sides, recorded = _sides(pl)
    size = len(codes)
    # op -> the outputs its CUDA kernel leaves in host memory (output_on_host's, asked once per op, not per edge)
    host_outputs: dict[str, frozenset[int]] = {}
    for node, code in recorded:
        ep = sides[code]
        if ep is _GONE or ep is _MIXED:
            continue
        host_inputs = _NO_INPUTS
        if ep == CUDA:
            op = (node.op_type, node.opset, node.domain)
            host_inputs = cuda_host_inputs.get(op)  # type: ignore[assignment]
            if host_inputs is None:
                host_inputs = cuda_host_inputs[op] = cpu_inputs(node.op_type, schema_registry.since_version(*op))
        on_host = ep == CPU  # the node's side; an input of host_inputs is host side whatever it is
        scope = _effective(node.scope, opt) if merged else node.scope
        producer, inlined = scope.producer, merged.get(id(scope))
        for i, value in enumerate(node.inputs):
            if value in alias:
                value = resolve(value)
            while rewired and value in rewired:
                value = rewired[value]
            if value in folded and value not in per_edge:
                continue  # an initializer now: copied by the session state, not a Memcpy node
            prod = producer.get(value)
            if prod is None and inlined:
                prod = inlined.get(value)
            if prod is None:
                if value and node.scope.constant(value) is None:
                    side = fed.setdefault(id(scope), {}).setdefault(value, [None, None])
                    k = 0 if (on_host or i in host_inputs) else 1
                    side[k] = side[k] or node
                continue  # an initializer: duplicated per device by ORT, never a Memcpy node
            j = prod.index
            src = sides[codes[j]] if j < size else None
            if value in per_edge and src is _GONE:
                src_host = per_edge[value] == CPU  # a copy of a DequantizeLinear a transformer removed
            elif src is None or src is _GONE or src is _MIXED:
                continue  # Constant nodes become initializers; a body on both providers: unknown edges
            elif src == CPU:
                src_host = True
            else:  # output_on_host, inlined: asked of a million edges
                outs = host_outputs.get(prod.op_type)
                if outs is None:
                    outs = host_outputs[prod.op_type] = cpu_outputs(prod.op_type)
                src_host = src == CUDA and bool(outs) and prod.outputs.index(value) in outs
            dst_host = on_host or i in host_inputs
            if src_host == dst_host:
                continue
            direction = "to-device" if src_host else "to-host"
            key = (value, direction) if value not in per_edge else (value, direction, str(node.index), str(i))
            if key in seen:
                continue
            seen.add(key)
            pl.boundaries.append(Boundary(value, direction, prod, node, _bytes(node.scope, value)))
    _shared_inputs(pl, fed)


def _inlined_producers(index: GraphIndex, opt: Optimized | None) -> dict[int, dict[str, NodeRef]]:
    """The branch of an If ORT inlined (constant condition) runs in the graph around it: its producers, by the
    id of that graph, looked up there too (an overlay: the enclosing graph's own map may hold a million entries)."""
    merged: dict[int, dict[str, NodeRef]] = {}
    for sc in index.scopes:
        eff = _effective(sc, opt)
        if eff is not sc:
            merged.setdefault(id(eff), {}).update(sc.producer)
    return merged


def _shared_inputs(pl: Placement, fed: dict[int, dict[str, list[NodeRef | None]]]) -> None:
    """A graph's input or outer value read on both sides: copied to the device for its device-side readers."""
    for values in fed.values():
        for value, (host_reader, device_reader) in values.items():
            if host_reader is not None and device_reader is not None:
                pl.boundaries.append(Boundary(value, "to-device", None, device_reader, _bytes(device_reader.scope, value)))


# a node's side: placed nowhere (or removed); an expanded function whose body runs partly on CPU (which of its
# edges cross is not known here)
_GONE, _MIXED = object(), object()


def _sides(pl: Placement) -> tuple[Sequence[int], list[object], Iterable[tuple[NodeRef, int]]]:
    """(codes, sides, recorded): the side of node index i is sides[codes[i]], of each (node, code) recorded
    sides[code]: its provider, _GONE (no provider, or removed), _MIXED (a body partly on CPU), None (no verdict): what
    the skips and output_on_host ask of a verdict, once per distinct verdict (NodeVerdicts.fields_at)."""
    codes, kinds, recorded = pl.nodes.fields_at(("ep", "status", "reason"))
    sides: list[object] = []
    for kind in kinds:
        if kind is None:
            sides.append(None)
            continue
        ep, status, reason = kind
        if ep is None or status in _REMOVED:
            sides.append(_GONE)
        elif status == "expanded" and reason != "function":
            sides.append(_MIXED)
        else:
            sides.append(ep)
    return codes, sides, recorded


def _effective(scope: GraphScope, opt: Optimized | None) -> GraphScope:
    """The graph a scope's nodes run in: an If branch ORT inlined runs in the graph around the If."""
    while scope.parent is not None and scope.owner is not None and opt is not None:
        gone = opt.removed.get(scope.owner.index)
        if gone is None or gone.reason != "if-constant":
            break
        scope = scope.parent
    return scope





def _same(value: str) -> str:
    return value
