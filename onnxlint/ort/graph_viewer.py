"""GraphViewer's topological order (core/graph/graph_viewer.cc): the order ORT's transformers visit nodes in
(CSE keeps the first of two duplicates) and the partitioner's queue pops them by."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphScope, NodeRef
    from onnxlint.ort.optimizer.optimized import Optimized


def ort_topological_order(scope: GraphScope, opt: Optimized | None = None) -> list[NodeRef]:
    """GraphViewer's topological order: a reverse DFS from the leaf nodes (no consumer in the graph), started
    from the last leaf, visiting each node's producers sorted by node index (pushed ascending, so the highest
    index is visited first), nodes emitted on leaving. CSE keeps the first node of this order."""
    removed = opt.removed if opt is not None else {}
    alias = opt.alias if opt is not None else {}
    resolve = opt.resolve if opt is not None else None
    nodes = [n for n in scope.nodes if n.index not in removed and not (n.op_type == "Constant" and n.domain == "ai.onnx")]
    producer = {}
    for n in nodes:
        for o in n.outputs:
            if o:
                producer[o] = n
    get = producer.get
    inputs_of: dict[int, list[NodeRef]] = {}
    has_consumer: set[int] = set()
    for n in nodes:  # one pass: it runs before every optimizer pass that follows a change
        ins: dict[int, NodeRef] = {}
        for v in n.inputs:
            if not v:
                continue
            if v in alias and resolve is not None:
                v = resolve(v)
            p = get(v)
            if p is not None:
                ins[p.index] = p
        if ins:
            has_consumer.update(ins)
            inputs_of[n.index] = [ins[k] for k in sorted(ins)] if len(ins) > 1 else list(ins.values())
    return _dfs(nodes, inputs_of, has_consumer)


def _dfs(nodes: list[NodeRef], inputs_of: dict[int, list[NodeRef]], has_consumer: set[int]) -> list[NodeRef]:
    """The reverse DFS from the leaves (nodes no node reads), the last leaf first, producers by index (the highest
    visited first), each node emitted on leaving."""
    order: list[NodeRef] = []
    visited: set[int] = set()
    stack = [(n, False) for n in nodes if n.index not in has_consumer]
    pop, push, emit, seen = stack.pop, stack.append, order.append, visited.add
    while stack:
        n, leave = pop()
        if leave:
            emit(n)
            continue
        i = n.index
        if i in visited:
            continue
        seen(i)
        push((n, True))
        for p in inputs_of.get(i, ()):
            if p.index not in visited:
                push((p, False))
    return order


class OrderCache:
    """ort_topological_order for the optimizer, which asks again after every pass that changed the graph (7 times
    at 100k nodes): what never changes while it runs (each scope's nodes but Constants, and each node's producers
    in that scope) is read once per scope, as positions in that list, in arrays; each order drops what was
    removed, looks again at the inputs of the nodes that read a rewired value, and walks positions (ints, a
    bytearray of visited ones) instead of node objects. A scope where two nodes write one value name gets the full
    computation every time (the live one of them is the producer)."""

    def __init__(self) -> None:
        self._static: dict[int, _Static | None] = {}
        # scope id -> (the count of rewirings it was made for, the producers of each node that reads a rewired
        # value, read through them): a pass that removed nodes without rewiring any (ReshapeFusion) hands the
        # next order the same ones
        self._live_inputs: dict[int, tuple[int, _Rewired]] = {}

    def order(self, scope: GraphScope, opt: Optimized, rewirings: int) -> list[NodeRef]:
        """ort_topological_order(scope, opt); rewirings: how many times a value was rewired into opt.alias so
        far (a count that changes whenever opt.alias does)."""
        key = id(scope)
        if key not in self._static:
            self._static[key] = _Static.of(scope)
        static = self._static[key]
        if static is None:
            return ort_topological_order(scope, opt)
        nodes, starts, inputs, owners = static.nodes, static.starts, static.inputs, static.owners
        removed, alias, resolve = opt.removed, opt.alias, opt.resolve
        count = len(nodes)
        dead = bytearray(count)
        if removed:
            # from whichever is shorter: removed is the whole model's (20k inlined Ifs remove as many nodes, each
            # of their 40k bodies ordered apart), a scope's nodes may be many more than those removed in it
            if len(removed) < count:
                at_of, base = static.position.at, static.position.base
                size = len(at_of)
                for i in removed:
                    j = i - base
                    if 0 <= j < size and (pos := at_of[j]) >= 0:
                        dead[pos] = 1
            else:
                for k, n in enumerate(nodes):
                    if n.index in removed:
                        dead[k] = 1
        # the producers of the nodes that read a rewired name, read through it (removed ones included: skipped
        # where read); every other node's are its static ones
        rewired, over = _NONE_REWIRED
        if alias:
            got = self._live_inputs.get(key)
            if got is None or got[0] != rewirings:
                got = self._live_inputs[key] = (rewirings, _read_through(static, scope, alias, resolve))
            rewired, over = got[1]
        # marked dead while the static producers are read: a rewired node's producers are read from over
        skip = bytearray(dead)
        for k in rewired:
            skip[k] = 1
        has_consumer = _read_by_live(skip, dead, owners, inputs, count)
        for k, at in rewired.items():
            if not dead[k]:
                for p in over[at + 1:at + 1 + over[at]]:
                    if not dead[p]:
                        has_consumer[p] = 1
        stack = np.flatnonzero((np.frombuffer(dead, np.uint8) | has_consumer) == 0).tolist()
        # a dead node is never pushed: never visited. Marking it visited up front skips it as a producer below,
        # where the producers are pushed in the same order as before, less the dead ones
        visited = bytearray(dead)
        out = array("i")  # positions, not an int object each (32 MB at 1M nodes)
        pop, push, emit = stack.pop, stack.append, out.append
        while stack:
            k = pop()
            if k < 0:
                emit(~k)
                continue
            if visited[k]:
                continue
            visited[k] = 1
            if skip[k]:
                at = rewired[k]
                ins = over[at + 1:at + 1 + over[at]]
            else:
                first, end = starts[k], starts[k + 1]
                if end - first == 1:  # one producer (most nodes): no slice, and k left at once when it is done
                    p = inputs[first]
                    if visited[p]:
                        emit(k)
                    else:
                        push(~k)
                        push(p)
                    continue
                ins = inputs[first:end]
            push(~k)
            for p in ins:
                if not visited[p]:
                    push(p)
        return [nodes[k] for k in out]


def _read_by_live(skip: bytearray, dead: bytearray, owners: array[int], inputs: array[int], count: int) -> np.ndarray:
    """Which positions a node not skipped reads while not dead itself (has_consumer, one byte a position): in
    numpy over the edge arrays, which a loop in Python took a quarter of an order's time to walk (133k edges at
    100k nodes); a slice of edges at a time, as numpy indexes by 8-byte positions (a copy of the whole edge
    array each, 10 MB at 1M nodes, at the lint's peak)."""
    out = np.zeros(count, np.uint8)
    skipped, gone = np.frombuffer(skip, np.uint8), np.frombuffer(dead, np.uint8)
    readers, producers = np.frombuffer(owners, np.intc), np.frombuffer(inputs, np.intc)
    for start in range(0, len(producers), _EDGES_AT_ONCE):
        read = producers[start:start + _EDGES_AT_ONCE]
        live = (skipped[readers[start:start + _EDGES_AT_ONCE]] == 0) & (gone[read] == 0)
        out[read[live]] = 1
    return out


_EDGES_AT_ONCE = 1 << 16


# the nodes that read a rewired name (positions) -> where their producers are in the array: its count, then them
_Rewired = tuple[dict[int, int], "array[int]"]
_NONE_REWIRED: _Rewired = ({}, array("i"))


def _read_through(static: _Static, scope: GraphScope, alias: dict[str, str], resolve: Callable[[str], str]) -> _Rewired:
    """The nodes that read a rewired name -> their producers, reading its producer now (ascending positions;
    removed producers kept: the order skips them), in one array (a list a node was 45 MB at 1M nodes)."""
    nodes = static.nodes
    # positions read inline (as _Positions.get would), not by a call each: 13k readers at 100k nodes
    at_of, base = static.position.at, static.position.base
    size = len(at_of)
    # the nodes reading a rewired name: found from the names when they are fewer than the nodes (alias is the
    # whole model's: 20k inlined Ifs rewire as many names, each of their 40k bodies ordered apart)
    if len(alias) < len(nodes):
        readers = {at for name in alias for r in scope.consumers.get(name, ())
                   if 0 <= (j := r.index - base) < size and (at := at_of[j]) >= 0}
    else:
        readers = {k for k, n in enumerate(nodes) if any(v in alias for v in n.inputs if v)}
    live: dict[int, int] = {}
    over = array("i")
    get = static._producer.get  # a Constant's position is -1: left out below
    for k in readers:
        ins: list[int] = []
        for v in nodes[k].inputs:
            p = get(resolve(v) if v in alias else v)
            if p is not None and 0 <= (j := p.index - base) < size and (at := at_of[j]) >= 0 and at not in ins:
                ins.append(at)
        ins.sort()
        live[k] = len(over)
        over.append(len(ins))
        over.extend(ins)
    return live, over


class _Static:
    """A scope's nodes but Constants, each one's producers in the scope as ascending positions in that list (by
    node index), value -> its producer (_producer), node index -> position. The producers are
    flat arrays: node k's are inputs[starts[k]:starts[k + 1]], owners[j] the node reading inputs[j] (a list of
    ints a node, and a dict of positions, were 130 MB at 1M nodes)."""

    __slots__ = ("nodes", "starts", "inputs", "owners", "position", "_producer")

    def __init__(self, nodes: list[NodeRef], position: _Positions, producer: dict[str, NodeRef]) -> None:
        self.nodes, self.position, self._producer = nodes, position, producer
        self.starts, self.inputs, self.owners = array("i", [0]), array("i"), array("i")

    @classmethod
    def of(cls, scope: GraphScope) -> _Static | None:
        """None when a value name has two producers but Constants."""
        nodes = [n for n in scope.nodes if not (n.op_type == "Constant" and n.domain == "ai.onnx")]
        producer = scope.producer  # the last node writing each name: ours, unless two write one
        for n in nodes:
            for o in n.outputs:
                if o and producer.get(o) is not n:
                    return cls._of_own(scope, nodes)
        static = cls(nodes, _Positions(nodes), producer)
        static._read_producers()
        return static

    @classmethod
    def _of_own(cls, scope: GraphScope, nodes: list[NodeRef]) -> _Static | None:
        """A scope where a name is written twice: by our nodes (None), or by a Constant and ours (ours)."""
        producer: dict[str, NodeRef] = {}
        for n in nodes:
            for o in n.outputs:
                if o:
                    if o in producer:
                        return None
                    producer[o] = n
        static = cls(nodes, _Positions(nodes), producer)
        static._read_producers()
        return static

    def _read_producers(self) -> None:
        get = self._producer.get  # "" (no input) has no producer
        at_of, base = self.position.at, self.position.base
        size = len(at_of)
        starts, inputs, owners = self.starts, self.inputs, self.owners
        for k, n in enumerate(self.nodes):  # loops, not a comprehension per node: 100k of those cost twice as much
            ins: list[int] = []
            for v in n.inputs:
                p = get(v)
                if p is not None:
                    j = p.index - base
                    if 0 <= j < size and (pos := at_of[j]) >= 0 and pos not in ins:
                        ins.append(pos)
            if len(ins) > 1:
                ins.sort()
            inputs.extend(ins)
            owners.extend([k] * len(ins))
            starts.append(len(inputs))


class _Positions:
    """Node index -> position in a _Static's nodes (get: None when not there), as an array over the index range
    of the scope's nodes (numbered consecutively by the graph index), not a dict: 8 MB at 1M nodes, not 74."""

    __slots__ = ("base", "at")

    def __init__(self, nodes: list[NodeRef]) -> None:
        self.base = base = nodes[0].index if nodes else 0
        self.at = at = array("q", [-1]) * ((nodes[-1].index - base + 1) if nodes else 0)  # -1: not in nodes
        for k, n in enumerate(nodes):
            at[n.index - base] = k

    def get(self, index: int) -> int | None:
        j = index - self.base
        if 0 <= j < len(self.at):
            k = self.at[j]
            if k >= 0:
                return k
        return None
