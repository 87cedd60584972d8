"""GraphViewer's topological order (core/graph/graph_viewer.cc): the order ORT's transformers visit nodes in
(CSE keeps the first of two duplicates) and the partitioner's queue pops them by."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
