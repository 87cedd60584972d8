"""RemoveDuplicateCastTransformer (core/optimizer/insert_cast_transformer.cc), which InsertCastTransformer runs
after partitioning at every optimization level, optimizations disabled included
(InferenceSession::TransformGraph: partition, Level-2/3 transformers, "Insert cast node/s", then Memcpy nodes).

In each graph, in node order, a Cast whose readers include Casts back to its own input type drops those
readers (their readers read its input instead); a Cast all of whose readers are Casts, whose output is no graph
output, goes too (the Casts it kept read its input). Not after a Cast that may lose information (UnsafeCast:
float to non-float, signed to unsigned, to fewer bits) when a reader Cast would widen again; from 1.31
(Release.cast_removal_keeps_lossy_to_bool) the first Cast stays when it loses information and a kept reader
casts to bool, or when a kept reader runs on another EP. The Casts removed are no work on any device, and the
Memcpy nodes ORT inserts afterwards see the rewired graph.
"""

from __future__ import annotations

from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
from onnxlint.ort import releases
from onnxlint.ort.optimizer.optimized import Optimized
from onnxlint.ort.verdicts import CPU, CUDA, NodePlacement, Placement

_BOOL, _INTEGER, _UNSIGNED, _FLOAT = 0, 1, 2, 3  # insert_cast_transformer.cc TypeGroup
_GROUPS = {"tensor(bool)": _BOOL, "tensor(bfloat16)": _FLOAT, "tensor(double)": _FLOAT, "tensor(float)": _FLOAT,
           "tensor(float16)": _FLOAT, **{f"tensor({t})": _INTEGER for t in ("int8", "int16", "int32", "int64")},
           **{f"tensor({t})": _UNSIGNED for t in ("uint8", "uint16", "uint32", "uint64")}}
_BITS = {"tensor(bool)": 1, "tensor(uint8)": 8, "tensor(int8)": 8, "tensor(int16)": 16, "tensor(uint16)": 16,
         "tensor(bfloat16)": 16, "tensor(float16)": 16, "tensor(int32)": 32, "tensor(uint32)": 32, "tensor(float)": 32,
         "tensor(int64)": 64, "tensor(uint64)": 64, "tensor(double)": 64}
_GONE = ("folded", "eliminated")
DETAIL = ("ORT's RemoveDuplicateCastTransformer removes this Cast after partitioning, at every optimization level: "
          "{why}")


def unsafe_cast(src: str | None, dst: str | None) -> bool:
    """RemoveDuplicateCastTransformer::UnsafeCast: whether a Cast from src to dst may lose information."""
    sg, dg = _GROUPS.get(src or ""), _GROUPS.get(dst or "")
    if sg is None or dg is None:
        return True
    if sg not in (_BOOL, _UNSIGNED) and dg == _UNSIGNED:
        return True
    if sg == _FLOAT and dg != _FLOAT:
        return True
    sb, db = _BITS[src or ""], _BITS[dst or ""]
    if sg == _UNSIGNED and dg == _INTEGER:
        return db <= sb
    if sg in (_INTEGER, _UNSIGNED) and dg == _FLOAT:
        return db <= sb
    if {src, dst} == {"tensor(float16)", "tensor(bfloat16)"}:
        return True
    return sb > db


def remove_duplicate_casts(pl: Placement, index: GraphIndex, opt: Optimized | None) -> dict[str, str]:
    """Mark the Casts RemoveDuplicateCastTransformer removes (status eliminated, reason duplicate-cast); returns
    the rewiring it does (value -> the value its readers read instead)."""
    rewired: dict[str, str] = {}
    if "Cast" not in index.by_op:  # no Cast anywhere: nothing to remove, no reader map to build
        return rewired
    implicit = _implicit_readers(index)
    guarded = releases.row(pl.ort_version).cast_removal_keeps_lossy_to_bool
    for scope in index.scopes:
        if not scope.is_function:
            _remove_in(scope, pl, opt, rewired, implicit.get(id(scope), {}), guarded)
    return rewired


def _implicit_readers(index: GraphIndex) -> dict[int, dict[str, list[NodeRef]]]:
    """id(scope) -> value -> the nodes of scope whose bodies read value (ORT gives them an edge for it)."""
    out: dict[int, dict[str, list[NodeRef]]] = {}
    for scope in index.scopes:
        if scope.owner is None:
            continue
        defined = {*scope.inputs, *scope.initializers, *scope.producer}
        for n in scope.nodes:
            for v in n.inputs:
                if not v or v in defined:
                    continue
                owner: NodeRef | None = scope.owner
                outer = scope.parent
                while owner is not None and outer is not None:  # up to the graph that defines v
                    out.setdefault(id(outer), {}).setdefault(v, []).append(owner)
                    if v in outer.producer or v in outer.inputs or v in outer.initializers:
                        break
                    owner, outer = outer.owner, outer.parent
    return out


def _remove_in(scope: GraphScope, pl: Placement, opt: Optimized | None, rewired: dict[str, str],
               implicit: dict[str, list[NodeRef]], guarded: bool) -> None:
    def resolve(v: str) -> str:
        if opt is not None and v in opt.alias:
            v = opt.resolve(v)
        while v in rewired:
            v = rewired[v]
        return v

    live = [n for n in scope.nodes if (p := pl.nodes.get(n.index)) is not None and p.status not in _GONE]
    readers: dict[str, list[NodeRef]] = {}
    for n in live:
        for v in dict.fromkeys(v for v in n.inputs if v):
            readers.setdefault(resolve(v), []).append(n)
    for v, owners in implicit.items():
        readers.setdefault(resolve(v), []).extend(o for o in dict.fromkeys(owners) if o.scope is scope)
    outputs = set(scope.outputs)
    gone: set[int] = set()

    def is_cast(n: NodeRef) -> bool:
        p = pl.nodes.get(n.index)
        return n.op_type == "Cast" and n.domain == "ai.onnx" and p is not None and p.ep in (CPU, CUDA) \
            and len(n.inputs) == 1 and len(n.outputs) == 1 and bool(n.outputs[0])

    def type_of(v: str) -> str | None:
        return scope.type_of(v).type_str

    for n in live:
        if n.index in gone or not is_cast(n):
            continue
        src, out = resolve(n.inputs[0]), n.outputs[0]
        src_t, dst_t = type_of(src), type_of(out)
        loses = unsafe_cast(src_t, dst_t)
        children = [c for c in readers.get(out, []) if c.index not in gone]
        drop: list[NodeRef] = []
        keep: list[NodeRef] = []
        consistent = True
        for c in children:
            if not is_cast(c):
                continue
            c_dst_t = type_of(c.outputs[0])
            if loses and unsafe_cast(c_dst_t, dst_t):
                consistent = False
                break
            if c.outputs[0] not in outputs and c_dst_t == src_t and src_t is not None and c.outputs[0] != src:
                drop.append(c)  # (a Cast writing the name it reads, in a model that writes a name twice, stays)
            else:
                keep.append(c)
        if not consistent:
            continue
        for c in drop:
            gone.add(c.index)
            rewired[c.outputs[0]] = src
            readers.setdefault(src, []).extend(readers.pop(c.outputs[0], []))
            pl.record(c.index, NodePlacement(c, None, "eliminated", "duplicate-cast", DETAIL.format(
                why=f"it casts back to the type of {n.name or n.location}'s input, whose readers read that input instead")))
        if guarded and keep and (any(pl.nodes[k.index].ep != pl.nodes[n.index].ep for k in keep)
                                 or (loses and any(_GROUPS.get(type_of(k.outputs[0]) or "") == _BOOL for k in keep))):
            continue  # 1.31: not across EPs, not a lossy Cast before a Cast to bool
        if children and len(drop) + len(keep) == len(children) and out not in outputs and out != src:
            gone.add(n.index)
            rewired[out] = src
            readers.setdefault(src, []).extend(keep)
            if n in readers.get(src, []):
                readers[src].remove(n)
            pl.record(n.index, NodePlacement(n, None, "eliminated", "duplicate-cast", DETAIL.format(
                why="every reader of its output is a Cast, which reads its input instead")))
