"""The graphs of a model at the proto level, without an index: the main graph and every control-flow body, with
the tensor-valued attributes of their nodes (what loading's walk and the fixers read; graph.GraphIndex indexes the
nodes). Walks are iterative so a 200-deep nest of If bodies does not hit Python's recursion limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import onnx

# AttributeProto.AttributeType values (fixed by the ONNX IR spec)
_TENSOR, _GRAPH, _GRAPHS = 4, 5, 10
_TENSOR_KINDS = (_TENSOR, 9, 11, 12)  # TENSOR, TENSORS, SPARSE_TENSOR, SPARSE_TENSORS


def iter_graphs(model: onnx.ModelProto, tensors: list | None = None) -> Iterator[onnx.GraphProto]:
    """The main graph and every control-flow body, iteratively (no recursion limit); tensors: a list that gets
    the tensor-valued attributes of their nodes, in the order the graphs are yielded (scan_attributes)."""
    stack = [model.graph]
    while stack:
        g = stack.pop()
        yield g
        scan_attributes(g.node, stack, tensors)


def graph_bodies(model: onnx.ModelProto, tensors: list | None = None) -> list[tuple[onnx.GraphProto, list[tuple[int, int]]]]:
    """The graphs iter_graphs(model, tensors) yields, each with where its bodies are: [(position of a node that
    holds bodies, how many)], in node order (what the inference budget's walk needs besides the nodes' output
    counts: loading.inference)."""
    out: list[tuple[onnx.GraphProto, list[tuple[int, int]]]] = []
    stack = [model.graph]
    while stack:
        g = stack.pop()
        held: list[tuple[int, int]] = []
        out.append((g, held))
        scan_attributes(g.node, stack, tensors, held)
    return out


def scan_attributes(nodes, bodies: list, tensors: list | None = None, held: list | None = None) -> None:
    """Append the graphs the nodes hold (If branches, Loop and Scan bodies) to bodies, in node and attribute
    order, and, when tensors is given, their tensor-valued attributes (TENSOR(S), SPARSE_TENSOR(S)) to it;
    held, when given, gets (position of a node that holds bodies, how many) in node order."""
    for pos, node in enumerate(nodes):
        attrs = node.attribute
        if not attrs:
            continue
        before = len(bodies)
        for a in attrs:
            kind = a.type
            if kind == _GRAPH:
                bodies.append(a.g)
            elif kind == _GRAPHS:
                bodies.extend(a.graphs)
            elif tensors is not None and kind in _TENSOR_KINDS:
                tensors.append(a)
        if held is not None and len(bodies) > before:
            held.append((pos, len(bodies) - before))


def node_reads(node: onnx.NodeProto) -> set[str]:
    """The names a node reads, its bodies' included (their reads of outer values among them), the empty name too
    where one is written: every nested body walked iteratively."""
    names = set(node.input)
    bodies: list = []
    scan_attributes([node], bodies)
    while bodies:
        g = bodies.pop()
        for n in g.node:
            names.update(n.input)
        scan_attributes(g.node, bodies)
    return names
