"""ORT's NodeArgs are per Graph (core/graph/graph.cc: each Graph, a control-flow body included, keeps its own
`node_args_`): two sibling If branches may define the same value name and stay two values. optimum's merged
KV-cache decoders do (the then and else branch of `use_cache_branch` both define `/decoder/Shape_5_output_0`).

The optimizer model keys what it learns (folded values, rewirings, readers) by value name, so a value folded in
one branch would read as folded in the other. Rather than key every lookup by scope, the partitioner runs on a
view of the model in which each value a body defines under a name another graph also defines is renamed
(`<name>@<graph path>`), references inside that body and its own bodies following it; the placement is then
handed back in the model's own nodes and value names. Models without such names are used as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from onnxlint.model.graph import GraphIndex, GraphScope
from onnxlint.ort.verdicts import Boundary, NodePlacement, Placement


@dataclass
class ScopedView:
    index: GraphIndex  # the renamed model's index: same nodes, same node indices
    original: dict[str, str]  # renamed value -> the model's own name

    def restore(self, pl: Placement, into: GraphIndex) -> Placement:
        """The view's placement in the nodes and value names of `into`, the model's own index."""
        nodes = into.nodes
        out = Placement(pl.target, pl.ort_version, pl.table_versions, pl.notes, optimization=pl.optimization,
                        refused=pl.refused)
        for i, p in pl.nodes.items():
            out.record(i, NodePlacement(nodes[i], p.ep, p.status, p.reason, p.detail))
        name = self.original.get
        out.boundaries = [Boundary(name(b.value, b.value), b.direction, nodes[b.producer.index] if b.producer else None,
                                   nodes[b.consumer.index], b.bytes) for b in pl.boundaries]
        return out


def _defined(scope: GraphScope) -> set[str]:
    return {*scope.inputs, *scope.initializers, *scope.producer}


def scoped_view(index: GraphIndex) -> ScopedView | None:
    """A view of the model in which no value name is defined by two graphs, or None when none is."""
    seen: set[str] = set()
    reused = False
    for scope in index.scopes:
        if scope.is_function:
            continue  # a local function is inlined into the graph that calls it, under new names
        names = _defined(scope)
        if not reused and not seen.isdisjoint(names):
            reused = True
        seen |= names
    if not reused:
        return None
    model = onnx.ModelProto()
    model.CopyFrom(index.model)
    original: dict[str, str] = {}
    _rename(model.graph, "graph", {}, set(), original, top=True)
    view = GraphIndex(model)
    view.inference_work = index.inference_work
    if len(view.nodes) != len(index.nodes):
        return None  # not the same walk: keep the model as it is
    return ScopedView(view, original)


def _rename(graph: onnx.GraphProto, path: str, outer: dict[str, str], taken: set[str], original: dict[str, str],
            top: bool = False) -> None:
    """Rename the values `graph` defines under a name already taken by another graph; `outer` maps the names
    the enclosing graphs renamed (a body reads its outer values under their new names)."""
    defined = [i.name for i in graph.input] + [t.name for t in graph.initializer] + [o for n in graph.node for o in n.output if o]
    names = dict(outer)
    for d in dict.fromkeys(defined):
        if d in taken and not top:
            new = f"{d}@{path}"
            names[d] = new
            original[new] = d
        else:
            names.pop(d, None)  # defined here: shadows an outer rename
        taken.add(d)

    def ren(v: str) -> str:
        return names.get(v, v) if v else v

    for vi in (*graph.input, *graph.output, *graph.value_info):
        vi.name = ren(vi.name)
    for t in graph.initializer:
        t.name = ren(t.name)
    for i, node in enumerate(graph.node):
        node.input[:] = [ren(v) for v in node.input]
        node.output[:] = [ren(v) for v in node.output]
        where = f"{path}/{node.name}" if node.name else f"{path}/{node.op_type}#{i}"
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _rename(a.g, f"{where}:{a.name}", names, taken, original)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for k, g in enumerate(a.graphs):
                    _rename(g, f"{where}:{a.name}[{k}]", names, taken, original)
