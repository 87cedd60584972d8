"""Memcpy boundaries: where ORT's MemcpyTransformer (transformer_memcpy.cc) copies a tensor between host and
device after partitioning."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import partial
from itertools import chain, filterfalse
from operator import attrgetter

import numpy as np

from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
from onnxlint.model.node_verdicts import NodeVerdicts
from onnxlint.ort import schema_registry
from onnxlint.ort.kernel_registry import cpu_inputs, cpu_outputs, cuda_memory
from onnxlint.ort.optimizer.optimized import Optimized
from onnxlint.ort.verdicts import CPU, CUDA, Boundary, Placement

_REMOVED = ("folded", "eliminated")
_NO_INPUTS: frozenset[int] = frozenset()  # a node none of whose inputs is host memory but for its side
# visit only the nodes an edge may cross at (_crossable): the others are CUDA nodes reading device-side outputs.
# Off: every recorded node is visited (a test compares the boundaries both ways)
CROSSABLE_ONLY = True
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


def insert_boundaries(pl: Placement, index: GraphIndex, opt: Optimized | None, rewired: dict[str, str] | None = None,
                      per_edge: dict[str, str] | None = None, bodies: dict[int, Body] | None = None) -> None:
    """Memcpy nodes as ORT's MemcpyTransformer (transformer_memcpy.cc) inserts them: one per value a node
    on one side produces and a node on the other side reads (a CUDA kernel's host-memory inputs and outputs
    count as host side). A graph's own input, or an outer value a body reads, gets one only when host-side
    and device-side readers share it; otherwise the session copies it in (CopyInputsAcrossDevices).
    Initializers never do: ORT duplicates them per device. rewired: the values whose readers read another value
    after partitioning (the Casts RemoveDuplicateCastTransformer removed). per_edge: the values each reading input
    reads through a copy of its producer of its own (EnsureUniqueDQForNodeUnit), and the provider the copies run
    on: one crossing per reading input (the copies stay where a removed original no longer is). bodies: the
    function bodies ORT inlines that run on both providers (mixed_body), by their node's index."""
    per_edge, bodies, rewired = per_edge or {}, bodies or {}, rewired or {}
    moved = _moved_shapes(pl)  # the Shape outputs a CUDA Gather the TransposeOptimizer added now makes
    seen: set[tuple[str, ...]] = set()
    # scope id -> value -> [host-side reader, device-side reader] for the scope's inputs and outer values
    fed: dict[int, dict[str, list[NodeRef | None]]] = {}
    merged = _inlined_producers(index, opt)
    alias = opt.alias if opt is not None else {}  # read once here, not per input (a million inputs at 1M nodes)
    folded = opt.constants if opt is not None else set()
    resolve = opt.resolve if opt is not None else _same
    cuda_host_inputs = _HostInputs()  # (op, opset, domain) -> the inputs its CUDA kernel reads from host memory
    codes, sides, recorded = _sides(pl)  # each node's side (no verdict made a node or a producer: a million each)
    # where CROSSABLE_ONLY: the nodes an edge may cross at, and the values read as host-side / as having no producer
    crossing = (_Crossing(pl, index, opt, (codes, sides, recorded), merged, _read_as(alias, resolve, rewired), rewired,
                          (per_edge, bodies, moved)) if CROSSABLE_ONLY else None)
    recorded = crossing.recorded if crossing is not None else recorded
    host_outputs: dict[str, frozenset[int]] = {}  # op -> output_on_host's outputs (asked once per op, not per edge)
    last: GraphScope | None = None
    host_made: AbstractSet[str] = _NOTHING
    free: AbstractSet[str] | None = None  # None: every value without a producer is looked up as a constant
    for node, code in recorded:
        ep = sides[code]
        if ep is _GONE or (ep is _MIXED and node.index not in bodies):
            continue  # placed nowhere; a body on both providers whose crossing edges are not known
        reads: Iterable[tuple[int, str]] = enumerate(node.inputs)
        host_inputs = _NO_INPUTS
        if ep is _MIXED:  # its body's nodes read its inputs: one read per side a body node reads an input on
            reads, host_inputs = bodies[node.index].reads_of(node)
        elif ep == CUDA:
            host_inputs = cuda_host_inputs[(node.op_type, node.opset, node.domain)]
        on_host = ep == CPU  # the node's side; an input of host_inputs is host side whatever it is
        if node.scope is not last:  # a graph's nodes come one after another: asked once per run of them
            last = node.scope
            scope = _effective(last, opt) if merged else last
            producer, inlined = scope.producer, merged.get(id(scope))
            if crossing is not None:
                host_made, free = crossing.host.get(id(scope), _NOTHING), crossing.free.get(id(last), _NOTHING)
        for i, value in reads:
            if value in alias:
                value = resolve(value)
            while value in rewired:
                value = rewired[value]
            if value in folded and value not in per_edge:
                continue  # an initializer now: copied by the session state, not a Memcpy node
            if free is not None:  # what the lines below conclude, from the sets _Crossing made
                if value in host_made:
                    if on_host or i in host_inputs:
                        continue  # host to host
                elif not (on_host or i in host_inputs) and value not in free:
                    continue  # device to device, or from a node placed nowhere
            prod = producer.get(value)
            if prod is None and inlined:
                prod = inlined.get(value)
            if prod is None:
                if value and (free is None or value in free) and node.scope.constant(value) is None:
                    side = fed.setdefault(id(scope), {}).setdefault(value, [None, None])
                    k = 0 if (on_host or i in host_inputs) else 1
                    side[k] = side[k] or node
                continue  # an initializer: duplicated per device by ORT, never a Memcpy node
            src_host = _source_on_host(prod, value, (codes, sides), (per_edge, bodies, moved), host_outputs)
            if src_host is None or src_host == (on_host or i in host_inputs):
                continue
            direction = "to-device" if src_host else "to-host"
            key = (value, direction) if value not in per_edge else (value, direction, str(node.index), str(i))
            if key in seen:
                continue
            seen.add(key)
            pl.boundaries.append(Boundary(value, direction, prod, node, _bytes(node.scope, value)))
    _finish(pl, fed, bodies, moved)


class _HostInputs(dict[tuple[str, "int | None", str], frozenset[int]]):
    """(op, opset, domain) -> the inputs its CUDA kernel reads from host memory, asked once per op, not per node."""

    def __missing__(self, op: tuple[str, int | None, str]) -> frozenset[int]:
        got = self[op] = cpu_inputs(op[0], schema_registry.since_version(*op))
        return got


@dataclass(frozen=True)
class Body:
    """A function body ORT inlines in an expanded node's place whose nodes run on both providers, as the graph
    around it sees it (mixed_body)."""
    reads: tuple[tuple[int, bool], ...]  # (input slot of the node, read host-side): each side a body node reads it on
    made_on_host: tuple[bool | None, ...]  # per output: its body node leaves it in host memory (None: no body node)
    inner: tuple[Boundary, ...]  # the copies between the body's own nodes

    def reads_of(self, node: NodeRef) -> tuple[list[tuple[int, str]], frozenset[int]]:
        """insert_boundaries's (i, value) reads of the node, each read once per side, and which i are host-side."""
        return ([(k, node.inputs[slot]) for k, (slot, _) in enumerate(self.reads)],
                frozenset(k for k, (_, host) in enumerate(self.reads) if host))


def mixed_body(node: NodeRef, body: Placement) -> Body | None:
    """The edges of the function body ORT inlines for node (Graph::InlineFunction), placed partly on CPU, to the
    graph around it, and the copies between its own nodes: ORT's MemcpyTransformer runs on the inlined graph, where
    the body's nodes read the node's inputs and make its outputs. body: the body's placement (expand_function's
    model: inputs in0.., outputs out0..). None when a body node is not simply placed (none runs it, a transformer
    removed it, it is expanded in turn): which edges cross is not known then."""
    slots = {f"in{i}": i for i, v in enumerate(node.inputs) if v}
    outs = {f"out{j}": j for j, v in enumerate(node.outputs) if v}
    reads: dict[tuple[int, bool], None] = {}
    made: list[bool | None] = [None] * len(node.outputs)
    cuda_host_inputs = _HostInputs()
    for p in body.nodes.values():
        inner = p.node
        if p.ep is None or p.status not in ("device", "fallback", "deliberate"):
            return None
        host_inputs = cuda_host_inputs[(inner.op_type, inner.opset, inner.domain)] if p.ep == CUDA else _NO_INPUTS
        for k, value in enumerate(inner.inputs):
            if value in slots:
                reads[(slots[value], p.ep == CPU or k in host_inputs)] = None
        for value in inner.outputs:
            if value in outs:
                made[outs[value]] = output_on_host(p.ep, inner, value)
    label = node.name or node.op_type
    inner_copies = tuple(Boundary(f"{label}/{_INLINED_SUFFIX.sub('', b.value)}", b.direction, node, node, b.bytes)
                         for b in body.boundaries if b.producer is not None)
    return Body(tuple(reads), tuple(made), inner_copies)


_INLINED_SUFFIX = re.compile(r"__\d+$")  # onnx's inliner renames a body's values x -> x__1


def _moved_shapes(pl: Placement) -> dict[str, NodeRef]:
    """The outputs of the Shapes the TransposeOptimizer moved a Transpose past whose new Gather (Gather(Shape(x),
    perm)) runs on CUDA (before 1.24, with the Shape on CPU): the Gather makes the value now, on the device side,
    and reads the Shape's output through a copy (measured on 1.23.2: Shape(Transpose(x)) read by a graph output
    only, 2 Memcpy with the Transpose's CUDA reader)."""
    return {c.source.outputs[0]: c.source for c in pl.created
            if c.by == "TransposeOptimizer" and c.op_type == "Gather" and c.ep == CUDA and c.source.outputs}


def _finish(pl: Placement, fed: dict[int, dict[str, list[NodeRef | None]]], bodies: dict[int, Body],
            moved: dict[str, NodeRef]) -> None:
    """The copies insert_boundaries adds after its walk: those inside the bodies on both providers, the Shape's
    output each moved Shape's CUDA Gather reads, and the graph inputs read on both sides."""
    pl.boundaries.extend(chain.from_iterable(body.inner for body in bodies.values()))
    pl.boundaries.extend(Boundary(value, "to-device", shape, shape, _bytes(shape.scope, value)) for value, shape in moved.items())
    _shared_inputs(pl, fed)


def _read_as(alias: dict[str, str], resolve: Callable[[str], str], rewired: dict[str, str]) -> Callable[[str], str]:
    def read_as(value: str) -> str:
        """The value a reader of value reads after the transformers (as insert_boundaries does, inlined there)."""
        if value in alias:
            value = resolve(value)
        while value in rewired:
            value = rewired[value]
        return value

    return read_as


def _source_on_host(prod: NodeRef, value: str, sided: tuple[Sequence[int], list[object]],
                    copied: tuple[dict[str, str], dict[int, Body], dict[str, NodeRef]],
                    host_outputs: dict[str, frozenset[int]]) -> bool | None:
    """Whether prod leaves value in host memory; None: no edge of it crosses (a Constant node, an initializer now;
    a node placed nowhere; a body on both providers not in bodies: unknown edges). host_outputs: output_on_host's,
    per op. copied: insert_boundaries's per_edge, bodies and moved Shapes."""
    codes, sides = sided
    per_edge, bodies, moved = copied
    if value in moved:
        return False  # the CUDA Gather the TransposeOptimizer put after the Shape makes it now
    j = prod.index
    src = sides[codes[j]] if j < len(codes) else None
    if src is _MIXED and j in bodies:
        return bodies[j].made_on_host[prod.outputs.index(value)]  # where the body's node that makes it leaves it
    if value in per_edge and (src is _GONE or per_edge[value] != src):
        # a copy of a DequantizeLinear a transformer removed, or copies fused away from where it stays (a graph
        # output's: dq_matmul_nbits_fusion)
        return per_edge[value] == CPU
    if src is None or src is _GONE or src is _MIXED:
        return None
    if src == CPU:
        return True
    outs = host_outputs.get(prod.op_type)
    if outs is None:
        outs = host_outputs[prod.op_type] = cpu_outputs(prod.op_type)
    return src == CUDA and bool(outs) and prod.outputs.index(value) in outs


_NOTHING: frozenset[str] = frozenset()


class _Crossing:
    """Where an edge may cross, for insert_boundaries to visit only there (CROSSABLE_ONLY): a CUDA node that reads
    device-side outputs only has no Memcpy, and most nodes of a transformer are such (visiting each input of a
    million nodes cost ~1.2 s). host: effective graph id -> the values its producers leave in host memory, read
    as insert_boundaries reads them (a CPU node's, a CUDA kernel's host-memory output, a copy per edge of a removed
    DequantizeLinear on CPU): exactly the values it finds host-side. free: graph id -> the values its nodes read
    that no node of its effective graph produces and no constant is (graph inputs, outer values: _shared_inputs),
    or more. recorded: _sides's (node, code) of the nodes on the host side, of an op whose CUDA kernel reads an
    input from host memory, and of the readers of a host-side or free value, in the order recorded."""

    def __init__(self, pl: Placement, index: GraphIndex, opt: Optimized | None,
                 sided: tuple[Sequence[int], list[object], Iterable[tuple[NodeRef, int]]],
                 merged: dict[int, dict[str, NodeRef]], read_as: Callable[[str], str], rewired: dict[str, str],
                 copied: tuple[dict[str, str], dict[int, Body], dict[str, NodeRef]]) -> None:
        codes, sides, recorded = sided
        bodies = copied[1]
        at = np.asarray(codes, dtype=np.int64)
        size, nodes = len(at), index.nodes
        effective = {id(sc): (_effective(sc, opt) if merged else sc) for sc in index.scopes}
        self.host: dict[int, set[str]] = {}
        self.free: dict[int, set[str]] = {}
        self._host_made(index, (codes, sides), effective, merged, copied)
        rewritten = set(opt.alias if opt is not None else ())
        rewritten.update(rewired)
        targets = set(opt.alias.values()) if opt is not None else set()
        targets.update(rewired.values())  # what a rewritten name reads as (resolve() stops at an alias's value)
        on_host = [s is not None and s is not _GONE and s is not _MIXED and s != CUDA for s in sides]
        marked: list[Sequence[NodeRef]] = [index.by_op.get(op, ()) for op in cuda_memory()["cpu_inputs"]]
        for scope in index.scopes:  # each graph's work in the size of its own names: 40k If branches at 20k Ifs
            readers = scope.consumers
            if readers:
                marked.extend(self._free_and_read(scope, effective[id(scope)], merged, read_as, (rewritten, targets)))
        chosen = np.zeros(size, dtype=bool)
        picked = np.fromiter(map(attrgetter("index"), chain.from_iterable(marked)), dtype=np.int64)
        chosen[picked[picked < size]] = True
        chosen[[j for j in bodies if j < size]] = True  # a body on both providers: it may read across on either side
        if isinstance(pl.nodes, NodeVerdicts) and pl.nodes.in_index_order():
            chosen |= np.asarray(on_host, dtype=bool)[at]
            chosen &= at != 0
            picked_at = np.flatnonzero(chosen).tolist()
            self.recorded: Iterable[tuple[NodeRef, int]] = zip(map(nodes.__getitem__, picked_at), map(codes.__getitem__, picked_at))
        else:  # a plain mapping's: in the order recorded
            self.recorded = [(node, code) for node, code in recorded
                             if on_host[code] or (node.index < size and chosen[node.index])]

    def _host_made(self, index: GraphIndex, sided: tuple[Sequence[int], list[object]], effective: dict[int, GraphScope],
                   merged: dict[int, dict[str, NodeRef]], copied: tuple[dict[str, str], dict[int, Body], dict[str, NodeRef]]) -> None:
        """self.host: the values a host-side node leaves, where insert_boundaries's lookup finds that node."""
        codes, sides = sided
        per_edge, bodies, moved = copied
        at = np.asarray(codes, dtype=np.int64)
        size, nodes = len(at), index.nodes

        def made_by(eff: GraphScope, value: str) -> NodeRef | None:  # insert_boundaries's producer lookup
            prod = eff.producer.get(value)
            if prod is None and merged:
                prod = merged.get(id(eff), {}).get(value)
            return prod

        def add(chosen: Iterable[NodeRef], outs: frozenset[int] | None) -> None:  # their host-side outputs
            last: GraphScope | None = None  # a graph's nodes come one after another
            host: set[str] = set()
            made: Callable[[str], NodeRef | None] = dict.get  # type: ignore[assignment]
            for node in chosen:
                if node.scope is not last:
                    last = node.scope
                    eff = effective[id(last)]
                    host = self.host.setdefault(id(eff), set())
                    made = eff.producer.get if not merged else partial(made_by, eff)
                got = node.outputs
                for o in got:
                    if o and (outs is None or got.index(o) in outs) and made(o) is node:
                        host.add(o)

        def side(code_of: list[bool]) -> list[int]:  # the node indices whose side is one of these
            return np.flatnonzero(np.asarray(code_of, dtype=bool)[at]).tolist() if size else []

        add(map(nodes.__getitem__, side([s == CPU for s in sides])), None)
        on_cuda = [s == CUDA for s in sides]
        for op in cuda_memory()["cpu_outputs"]:
            add((node for node in index.by_op.get(op, ()) if node.index < size and on_cuda[codes[node.index]]), cpu_outputs(op))
        for j, body in bodies.items():  # a body on both providers: the outputs its host-side nodes make
            add((nodes[j],), frozenset(k for k, host in enumerate(body.made_on_host) if host))
        graphs = {id(e): e for e in effective.values()}.values() if per_edge else ()
        for value, ep in per_edge.items():
            for eff in graphs:
                prod = made_by(eff, value) if ep == CPU else None
                if prod is not None and prod.index < size and sides[codes[prod.index]] is _GONE:
                    self.host.setdefault(id(eff), set()).add(value)
        for made in self.host.values():  # a moved Shape's output: a CUDA Gather makes it now
            made.difference_update(moved)

    def _free_and_read(self, scope: GraphScope, eff: GraphScope, merged: dict[int, dict[str, NodeRef]],
                       read_as: Callable[[str], str], rewrites: tuple[set[str], set[str]]) -> list[Sequence[NodeRef]]:
        """self.free[id(scope)], and the readers in scope of what self.host or self.free hold, read as read_as
        reads them. The sets are the whole graph's (or the model's): each is gone through from the smaller side."""
        readers, produced, inlined = scope.consumers, eff.producer, merged.get(id(eff), {})
        host: AbstractSet[str] = self.host.get(id(eff), _NOTHING)
        rewritten, targets = rewrites
        # what a rewritten name read here reads as: asked of each, or (where it is read more than the model has
        # targets, a big graph) all targets
        rewrites_read = _among(rewritten, readers)
        read = targets if 4 * len(rewrites_read) >= len(targets) else {read_as(name) for name in rewrites_read}
        # read, no producer, no constant (the names of the graph and of the rewritten ones, less its produced ones)
        free = set(filterfalse(produced.__contains__, readers))
        free.update(filterfalse(produced.__contains__, read))
        if inlined:
            free = set(filterfalse(inlined.__contains__, free))
        free = {name for name in free if scope.constant(name) is None}
        if free:
            self.free[id(scope)] = free
        marked = [readers[name] for name in _among(host, readers)]
        marked.extend(readers[name] for name in free if name in readers)
        wanted = _among(read, host) | _among(read, free)  # what a rewritten name may read as, host-side or free
        if wanted:
            marked.extend(readers[name] for name in rewrites_read if read_as(name) in wanted)
        return marked


def _among(names: Collection[str], where: Collection[str]) -> set[str]:
    """names that are in where, going through the smaller of the two."""
    if len(names) <= len(where):
        return set(filter(where.__contains__, names))
    return set(filter(names.__contains__, where))


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


SMALL_INITIALIZER_BYTES = 127  # ORT 1.23 keeps a larger initializer's data in an OrtValue (kSmallTensorExternalDataThreshold)


def duplicated_initializer(pl: Placement, index: GraphIndex, opt: Optimized | None,
                           rewired: dict[str, str] | None = None) -> tuple[str, NodeRef, NodeRef] | None:
    """A main-graph initializer ORT's MemcpyTransformer gives a copy of its own to the CUDA nodes (ProcessInitializers:
    one read on the device side by a CUDA node and on the host side by a CPU node or a CUDA kernel's host-memory
    input) whose data ORT 1.23 keeps in memory (over 127 bytes, written in the file or a Constant node's): (its name,
    a host-side reader, a device-side reader); None if there is none. ORT 1.23.0 and 1.23.2 then refuse the session
    in SaveInitializedTensors (`!utils::HasExternalDataInMemory(tensor_proto) was false`), the copy naming the
    original's memory without its OrtValue. An initializer kept in an external data file (loaded later), one inside
    a control-flow body or read by an expanded function's body, or one ORT's own constant folding makes is not
    claimed (not measured)."""
    main = index.scopes[0] if index.scopes else None
    if main is None:
        return None
    made = (n.outputs[0] for n in index.by_op.get("Constant", ()) if n.scope is main and n.domain == "ai.onnx" and n.outputs)
    big = {name: None for name in (*main.initializers, *main.constants, *made) if _in_memory(main, name)}  # value_floats too
    if not big:
        return None
    alias, rewired = (opt.alias if opt is not None else {}), rewired or {}
    read_as = _read_as(alias, opt.resolve if opt is not None else _same, rewired)
    # its readers, and the readers of a name a transformer made read it (an Identity removed, a duplicate Cast)
    names = [*big, *(name for name in (*alias, *rewired) if read_as(name) in big)]
    readers = [node for name in names for node in main.consumers.get(name, ())]
    sides: dict[str, list[NodeRef | None]] = {}
    cuda_host_inputs = _HostInputs()
    for node in dict.fromkeys(readers):
        p = pl.nodes.get(node.index)
        if p is None or p.ep not in (CPU, CUDA) or p.status in (*_REMOVED, "expanded") or node.scope is not main:
            continue
        host = cuda_host_inputs[(node.op_type, node.opset, node.domain)] if p.ep == CUDA else None
        for i, value in enumerate(node.inputs):
            value = read_as(value)
            if value in big:
                side = sides.setdefault(value, [None, None])
                k = 0 if host is None or i in host else 1
                side[k] = side[k] or node
    for value in big:  # the first such in the model's order
        host_reader, device_reader = sides.get(value, (None, None))
        if host_reader is not None and device_reader is not None:
            return value, host_reader, device_reader
    return None


def _in_memory(scope: GraphScope, name: str) -> bool:
    """Whether ORT 1.23 keeps this initializer's data in an OrtValue: over 127 bytes, not in an external data file."""
    t = scope.initializers.get(name)
    if t is not None and t.data_location == t.EXTERNAL:
        return False
    size = _bytes(scope, name)
    return size is not None and size > SMALL_INITIALIZER_BYTES
