"""GraphViewer's topological order (core/graph/graph_viewer.cc): the order ORT's transformers visit nodes in
(CSE keeps the first of two duplicates) and the partitioner's queue pops them by."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import compress, repeat
from operator import attrgetter
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
        # scope id -> what the walk of its last order saw (after_twins reads it)
        self._walks: dict[int, _Walk] = {}

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
        alias, resolve = opt.alias, opt.resolve
        count = len(nodes)
        dead = _dead(static, opt.removed)
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
        # a dead node is never pushed: never visited. Marking it visited up front skips it as a producer
        # in the walk, where the producers are pushed in the same order as before, less the dead ones
        out, entered = _walk(stack, bytearray(dead), skip, rewired, over, starts, inputs)
        result = list(map(nodes.__getitem__, out))
        self._walks[key] = _Walk(result, entered, has_consumer, rewired, over)
        return result

    def reads_computed(self, scope: GraphScope, opt: Optimized, size: int) -> bytearray | None:
        """node index (of size) -> 1 for each node of scope but Constants reading, by name, a value a live node of
        scope computes (its static producers less the removed ones: what inputs_constant reads where the name is
        neither rewired nor folded), 0 for any other node; None where two nodes write one name (a Constant
        and another included)."""
        key = id(scope)
        if key not in self._static:
            self._static[key] = _Static.of(scope)
        static = self._static[key]
        # _of_own's producers (not the scope's): a name a node writes is also a Constant's, which inputs_constant
        # reads as the constant (the scope's last writer): not known from the order's arrays
        if static is None or static._producer is not scope.producer:
            return None
        gone = np.frombuffer(_dead(static, opt.removed), np.uint8)
        readers, producers = np.frombuffer(static.owners, np.intc), np.frombuffer(static.inputs, np.intc)
        reads = np.zeros(len(static.nodes), bool)
        for start in range(0, len(producers), _EDGES_AT_ONCE):
            read = producers[start:start + _EDGES_AT_ONCE]
            reads[readers[start:start + _EDGES_AT_ONCE][gone[read] == 0]] = True
        # positions are in node index order: the node index of each is its place among those with one
        index_of = np.flatnonzero(np.frombuffer(static.position.at, np.int64) >= 0) + static.position.base
        out = np.zeros(size, np.uint8)
        out[index_of[reads]] = 1
        return bytearray(out.tobytes())

    def twin_candidates(self, scope: GraphScope, opt: Optimized, rewirings: int, order: list[NodeRef],
                        by_key: set[str] | frozenset[str]) -> list[NodeRef] | None:
        """order (this cache's last order of scope, or one less removed nodes) less the nodes a CSE run over it
        cannot find alike, or None where that is not known from the arrays (two nodes write a name; a value of
        by_key, compared by its key, not its name, has a producer here; _alike_classes gave up).

        Why: two nodes alike when CSE compares them read the same values (names, up to rewiring; the values of
        by_key have no producer here), so the same producers: those the run leaves, or, for a node it removed,
        its earlier twin, which rewired its readers. Label each node by a class that holds every such twin pair
        (_alike_classes); a node removed, or kept as the first of two, then shares its producers' lowest and
        highest labels with another live node (nodes of no producer all compare, by names alone)."""
        key = id(scope)
        static = self._static.get(key)
        if static is None:
            return None
        position, producer = static.position, static._producer
        for name in by_key:
            p = producer.get(name)
            if p is not None and position.get(p.index) is not None:
                return None
        count = len(static.nodes)
        live = np.frombuffer(_dead(static, opt.removed), np.uint8) == 0
        owners, producers = np.frombuffer(static.owners, np.intc), np.frombuffer(static.inputs, np.intc)
        if opt.alias:  # the nodes reading a rewired name read their producers through it
            got = self._live_inputs.get(key)
            if got is None or got[0] != rewirings:
                got = self._live_inputs[key] = (rewirings, _read_through(static, scope, opt.alias, opt.resolve))
            rewired, over = got[1]
            if rewired:
                readers = np.fromiter(rewired, np.int64, len(rewired))
                at = np.fromiter(rewired.values(), np.int64, len(rewired))
                flat = np.frombuffer(over, np.intc)
                counts = flat[at].astype(np.int64)
                firsts = np.repeat(at + 1 - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
                through = np.zeros(count, bool)
                through[readers] = True
                static_edge = ~through[owners]
                owners = np.concatenate((owners[static_edge], np.repeat(readers, counts).astype(np.intc)))
                producers = np.concatenate((producers[static_edge], flat[firsts]))
                by_owner = np.argsort(owners, kind="stable")
                owners, producers = owners[by_owner], producers[by_owner]
        found = _alike_classes(count, live, owners, producers)
        if found is None:
            return None
        maybe = found.view(np.uint8)
        kept: list[NodeRef] = []
        at_of = np.frombuffer(position.at, np.int64)
        for first in range(0, len(order), _NODES_AT_ONCE):
            chunk = order[first:first + _NODES_AT_ONCE]
            kept.extend(compress(chunk, maybe[_positions_of(chunk, at_of, position.base)].tolist()))
        return kept

    def after_twins(self, scope: GraphScope, previous: list[NodeRef], removed: array[int],
                    firsts: array[int]) -> list[NodeRef] | None:
        """The order after CSE removed each node b (removed: node indexes), a duplicate of a (the one at the same
        place in firsts), which came before it in previous (this cache's last order of scope), rewiring b's
        readers to a's outputs, and nothing else changed:
        previous less the bs, when the walk that made previous had left each a before it entered a live node c
        now reading a instead of b, or inside c's walk before it went on to a producer of c below a
        (_left_in_time), and each a had a live reader then (it was no leaf). Else None (compute it).

        Why: a and b read the same producers (the same inputs, up to names rewired to the same value, or bs of
        other twins), so a was left before b was entered (else a would be up b's inputs, up its own), and b,
        entered, was left at once. c pushed b (no other node with it) where it now pushes a, which the walk pops
        visited already (it was left before c, or while c's producers above a were walked, which come first):
        every other step is the same, the leaves too (a producer of b reads into a as well). The walk of the
        order returned is not kept: the next order is computed."""
        key = id(scope)
        walk, static = self._walks.pop(key, None), self._static.get(key)
        if walk is None or static is None or walk.order is not previous:
            return None
        count = len(static.nodes)
        position, base = np.frombuffer(static.position.at, np.int64), static.position.base
        bs = np.frombuffer(removed, np.intc).astype(np.int64) - base
        as_ = np.frombuffer(firsts, np.intc).astype(np.int64) - base
        if ((bs < 0) | (bs >= len(position)) | (as_ < 0) | (as_ >= len(position))).any():
            return None
        bs, as_ = position[bs], position[as_]
        if (bs < 0).any() or (as_ < 0).any():
            return None
        twin = np.full(count, -1, np.intc)  # b's position -> a's
        twin[bs] = as_
        # each node's place in previous (-1: not in it), a part at a time (no array of the whole order's)
        place = np.full(count, -1, np.intc)
        for first in range(0, len(previous), _NODES_AT_ONCE):
            place[_positions_of(previous[first:first + _NODES_AT_ONCE], position, base)] = \
                np.arange(first, min(first + _NODES_AT_ONCE, len(previous)))
        gone = twin >= 0
        if (place[bs] < 0).any() or (place[as_] < 0).any() or not walk.has_consumer[as_].all():
            return None
        # the edges (reader, b) the walk read: the static ones of the nodes it did not read through a rewired name
        owners, inputs = np.frombuffer(static.owners, np.intc), np.frombuffer(static.inputs, np.intc)
        rewired, over = walk.rewired, walk.over
        read_through = np.zeros(count, bool)
        read_through[list(rewired)] = True
        readers, read = [], []
        for start in range(0, len(inputs), _EDGES_AT_ONCE):
            part, by = inputs[start:start + _EDGES_AT_ONCE], owners[start:start + _EDGES_AT_ONCE]
            hit = gone[part] & ~read_through[by]
            readers.append(by[hit].astype(np.int64))
            read.append(part[hit].astype(np.int64))
        through = [(k, p) for k, at_k in rewired.items() for p in over[at_k + 1:at_k + 1 + over[at_k]] if gone[p]]
        if through:  # and those of the nodes it read through a rewired name
            readers.append(np.array([k for k, _ in through], np.int64))
            read.append(np.array([p for _, p in through], np.int64))
        reader, b_of = np.concatenate(readers), np.concatenate(read)
        live = (place[reader] >= 0) & ~gone[reader]
        reader, b_of = reader[live], b_of[live]
        entered = np.frombuffer(walk.entered, np.intc)
        inside = place[twin[b_of]] >= entered[reader]  # a left inside the reader's walk, not before it
        if inside.any() and not _left_in_time(static, walk, place, reader[inside], twin[b_of[inside]], b_of[inside]):
            return None
        kept: list[NodeRef] = []
        for first in range(0, len(previous), _NODES_AT_ONCE):  # no int object a node kept (30 MB at 1M nodes)
            chunk = previous[first:first + _NODES_AT_ONCE]
            kept.extend(compress(chunk, (~gone[_positions_of(chunk, position, base)]).tolist()))
        return kept


ALIKE_ROUNDS = 12  # label rounds _alike_classes takes before it gives up (a chain of twins this deep)


def _alike_classes(count: int, live: np.ndarray, owners: np.ndarray, producers: np.ndarray) -> np.ndarray | None:
    """Which positions may be alike to another live one (True), for a CSE run over a graph of count positions
    whose node owners[j] reads producers[j] (edges grouped by owner): labels start as the positions (one label
    for every node of no producer), then each live node with producers takes the lowest label among the live
    nodes with its producers' lowest and highest labels, until no label moves (None after ALIKE_ROUNDS). Then
    a removed twin and its first share a label, and so do their readers' producers' labels: by induction over the
    run's removals, two nodes alike when compared have one key. True: a live node sharing its key with another,
    or of no producer."""
    if not len(owners):
        return np.array(live, bool)
    starts = np.flatnonzero(np.concatenate(([True], owners[1:] != owners[:-1])))  # each owner's first edge
    node = owners[starts].astype(np.int64)
    none = np.ones(count, bool)
    none[node] = False
    read = live[node]
    node = node[read]
    maybe: np.ndarray = none & live  # no producer: compared by names alone
    if not len(node):
        return maybe
    label = np.arange(count, dtype=np.int64)
    lonely = np.flatnonzero(none)
    if len(lonely):
        label[lonely] = lonely[0]
    for _ in range(ALIKE_ROUNDS):
        mapped = label[producers]
        low, high = np.minimum.reduceat(mapped, starts)[read], np.maximum.reduceat(mapped, starts)[read]
        keys = low * count + high
        by_key = np.argsort(keys, kind="stable")
        sorted_keys = keys[by_key]
        group = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
        members = node[by_key]
        lowest = np.repeat(np.minimum.reduceat(label[members], group), np.diff(np.append(group, len(members))))
        if not (lowest < label[members]).any():
            size = np.diff(np.append(group, len(members)))
            maybe[members[np.repeat(size, size) > 1]] = True
            return maybe
        label[members] = lowest
    return None


def _dead(static: _Static, removed: Mapping[int, object]) -> bytearray:
    """The positions of static's nodes that were removed, one byte a position."""
    nodes = static.nodes
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
    return dead


def _positions_of(nodes: list[NodeRef], position: np.ndarray, base: int) -> np.ndarray:
    """The nodes' positions (position: _Positions.at as an array, base its first node index)."""
    return position[np.fromiter(map(_node_index, nodes), np.int64, len(nodes)) - base]


def _walk(stack: list[int], visited: bytearray, skip: bytearray, rewired: dict[int, int], over: array[int],
          starts: array[int], inputs: array[int]) -> tuple[array[int], array[int]]:
    """The reverse DFS over positions from the leaves on stack, the last first (visited: the dead ones, never
    pushed: skipped as producers, which are pushed in the same order as before, less the dead ones; a skipped
    node's producers read from over): the positions in the order, and when the walk entered each (how many
    nodes were out then)."""
    out = array("i")  # positions, not an int object each (32 MB at 1M nodes)
    entered = array("i", bytes(4 * len(visited)))
    pop, push, emit = stack.pop, stack.append, out.append
    while stack:
        k = pop()
        if k < 0:
            emit(~k)
            continue
        if visited[k]:
            continue
        visited[k] = 1
        entered[k] = len(out)
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
    return out, entered


def _left_in_time(static: _Static, walk: _Walk, place: np.ndarray, readers: np.ndarray, firsts: np.ndarray,
                  twins: np.ndarray) -> bool:
    """Whether each of firsts (a), left inside the walk of its reader (c, which read b, twins) there, was left
    before c's walk went on to a producer below a (by position, pushed before a: popped after it): then c, reading
    a now, pops a visited already, where the walk pops it. A producer below a that the walk entered inside c's
    walk after a was left, or never, or b: in time."""
    entered = np.frombuffer(walk.entered, np.intc)
    rewired, over = walk.rewired, walk.over
    by_static = np.fromiter((int(k) not in rewired for k in readers), bool, len(readers)) if rewired \
        else np.ones(len(readers), bool)
    c, a, b = readers[by_static], firsts[by_static], twins[by_static]
    starts, inputs = np.frombuffer(static.starts, np.intc), np.frombuffer(static.inputs, np.intc)
    first, counts = starts[c].astype(np.int64), (starts[c + 1] - starts[c]).astype(np.int64)
    if counts.sum() > len(inputs):  # one reader of many twins (a Sum of N copies): N edges x N inputs each
        return False  # not known cheaply: the order is computed (quadratic memory here: 4 GB at N = 10,000)
    of = np.repeat(np.arange(len(c)), counts)
    q = inputs[np.repeat(first, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))]
    c, a, b = c[of], a[of], b[of]
    late = (q < a) & (q != b) & (place[q] >= 0) & (entered[q] >= entered[c]) & (entered[q] <= place[a])
    if late.any():
        return False
    for k, fa, fb in zip(readers[~by_static].tolist(), firsts[~by_static].tolist(), twins[~by_static].tolist()):
        at = rewired[k]
        for p in over[at + 1:at + 1 + over[at]]:
            if p < fa and p != fb and place[p] >= 0 and entered[k] <= entered[p] <= place[fa]:
                return False
    return True


class _Walk:
    """What the walk of an order saw: the order, when it entered each position (the count of nodes out then),
    which positions had a live reader, and the rewired readers' producers it read."""

    __slots__ = ("order", "entered", "has_consumer", "rewired", "over")

    def __init__(self, order: list[NodeRef], entered: array[int], has_consumer: np.ndarray, rewired: dict[int, int],
                 over: array[int]) -> None:
        self.order, self.entered, self.has_consumer, self.rewired, self.over = order, entered, has_consumer, rewired, over


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
    at_of, base = static.position.at, static.position.base
    size = len(at_of)
    # the nodes reading a rewired name: found from the names when they are fewer than the nodes (alias is the
    # whole model's: 20k inlined Ifs rewire as many names, each of their 40k bodies ordered apart)
    if len(alias) < len(nodes):
        readers = {at for name in alias for r in scope.consumers.get(name, ())
                   if 0 <= (j := r.index - base) < size and (at := at_of[j]) >= 0}
    else:
        readers = {k for k, n in enumerate(nodes) if any(v in alias for v in n.inputs if v)}
    ordered = sorted(readers)
    read = [nodes[k].inputs for k in ordered]
    which, producers = static.producers_of(read, [resolve(v) if v in alias else v for ins in read for v in ins])
    # reader i's entry: its count, then its producers, at i + the count of the producers of the readers before it
    counts = np.bincount(which, minlength=len(ordered))
    entries = np.arange(len(ordered)) + (np.cumsum(counts) - counts)
    flat = np.empty(len(ordered) + len(producers), np.intc)
    flat[entries] = counts
    flat[which + 1 + np.arange(len(producers))] = producers
    over = array("i")
    over.frombytes(flat.tobytes())
    return dict(zip(ordered, entries.tolist())), over


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
        # as many names as outputs: none written twice (nor an output ""), the producer of each is its one writer
        if sum(map(len, [n.outputs for n in scope.nodes])) != len(producer) \
                and [n for n in nodes for o in n.outputs if o and producer.get(o) is not n]:
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
        """The producers of every node, NODES_AT_ONCE nodes at a time (their input names in one list, the
        positions sorted and made unique in numpy: a loop in Python over each node's inputs took a second at
        1M nodes)."""
        nodes, starts, inputs, owners = self.nodes, self.starts, self.inputs, self.owners
        for first in range(0, len(nodes), _NODES_AT_ONCE):
            part = nodes[first:first + _NODES_AT_ONCE]
            read = [n.inputs for n in part]
            readers, producers = self.producers_of(read, [v for ins in read for v in ins])
            readers += first
            inputs.frombytes(producers.astype(np.intc).tobytes())
            owners.frombytes(readers.astype(np.intc).tobytes())
            ends = np.searchsorted(readers, np.arange(first + 1, first + len(part) + 1)) + (len(inputs) - len(producers))
            starts.frombytes(ends.astype(np.intc).tobytes())

    def producers_of(self, read: Sequence[Sequence[str]], flat: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """For nodes reading len(read[k]) names each, flat the names of all one after the other: the edges to
        their producers in the scope (positions in nodes; none for a name no node of ours writes, "" included),
        as (k, producer) pairs sorted by k, then by producer, each pair once."""
        counts = np.fromiter(map(len, read), np.int64, len(read))
        # each name's producer's node index (-1: none), in C loops (map), not a Python step a name
        index = np.fromiter(map(_node_index, map(self._producer.get, flat, repeat(_NO_NODE))), np.int64, len(flat))
        at = np.frombuffer(self.position.at, np.int64)
        j = index - self.position.base
        inside = (index >= 0) & (j >= 0) & (j < len(at))
        where = np.full(len(flat), -1, np.int64)
        where[inside] = at[j[inside]]
        readers = np.repeat(np.arange(len(read), dtype=np.int64), counts)
        found = where >= 0
        scale = max(len(self.nodes), 1)
        key = np.sort(readers[found] * scale + where[found])
        if len(key) > 1:  # each edge once
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        return key // scale, key % scale


_NODES_AT_ONCE = 1 << 16


class _NoNode:
    """What producers_of reads for a name without a producer: a node index no node has."""

    __slots__ = ()
    index = -1


_NO_NODE = _NoNode()
_node_index = attrgetter("index")


class _Positions:
    """Node index -> position in a _Static's nodes (get: None when not there), as an array over the index range
    of the scope's nodes (numbered consecutively by the graph index), not a dict: 8 MB at 1M nodes, not 74."""

    __slots__ = ("base", "at")

    def __init__(self, nodes: list[NodeRef]) -> None:
        self.base = base = nodes[0].index if nodes else 0
        self.at = array("q", [-1]) * ((nodes[-1].index - base + 1) if nodes else 0)  # -1: not in nodes
        at = np.frombuffer(self.at, np.int64)
        for first in range(0, len(nodes), _NODES_AT_ONCE):  # numpy a part at a time: no copy of the whole
            part = nodes[first:first + _NODES_AT_ONCE]
            at[np.fromiter(map(_node_index, part), np.int64, len(part)) - base] = np.arange(first, first + len(part))

    def get(self, index: int) -> int | None:
        j = index - self.base
        if 0 <= j < len(self.at):
            k = self.at[j]
            if k >= 0:
                return k
        return None
