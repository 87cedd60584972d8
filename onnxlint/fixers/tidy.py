"""What every fix run ends with, and the `toposort` fixer: a graph whose nodes are in order and that carries no
dead initializers, done once by onnx-graphsurgeon after all fixers.

Fixers leave weights nobody reads (a Dropout's ratio once it is an Identity) and ORT warns about every one on
every load; onnx.checker rejects a graph whose nodes are not topologically sorted although ORT sorts it itself.
onnx-graphsurgeon's cleanup and (for an unsorted graph only) toposort handle both, in If/Loop/Scan bodies too. Its export keeps the graph
only, so the tidied graph goes back into the model, whose other fields (metadata, functions, opsets) stay.
"""

from __future__ import annotations

from typing import Any

import onnx

from onnxlint.fixers.base import Applicability, FixContext, fixer, graft
from onnxlint.model.graph import iter_graphs, scan_attributes
from onnxlint.model.graph_walks import node_reads


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    out: list[onnx.GraphProto] = []
    scan_attributes([node], out)
    return out


def _reads(graph: onnx.GraphProto) -> set[str]:
    """Every name the graph's nodes read, their bodies' reads of outer names included."""
    return {v for n in graph.node for v in node_reads(n) if v}


def dead_initializers(model: onnx.ModelProto) -> list[str]:
    """Initializers (of any graph) that no node reads and no graph output names."""
    dead = []
    for g in iter_graphs(model):
        used = _reads(g) | {o.name for o in g.output}
        dead += [t.name for t in g.initializer if t.name not in used]
    return dead


def is_sorted(graph: onnx.GraphProto, outer: frozenset[str] = frozenset()) -> bool:
    """Whether every node reads only what the graph's inputs, initializers, earlier nodes or an enclosing graph
    define (what onnx.checker demands), bodies included."""
    known = set(outer) | {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    produced_later = {o for n in graph.node for o in n.output}
    for n in graph.node:
        if any(i not in known and i in produced_later for i in n.input):
            return False
        for g in _subgraphs(n):
            if not is_sorted(g, frozenset(known)):
                return False
        known.update(n.output)
    return True


def dead_nodes(model: onnx.ModelProto) -> list[str]:
    """Nodes (of any graph) none of whose outputs anything reads: what a fixer that rewired around a node leaves."""
    dead = []
    for g in iter_graphs(model):
        used = _reads(g) | {o.name for o in g.output}
        dead += [n.name or n.op_type for n in g.node if n.output and not any(o and o in used for o in n.output)]
    return dead


def needs_tidy(model: onnx.ModelProto) -> bool:
    return bool(dead_initializers(model)) or bool(dead_nodes(model)) or not is_sorted(model.graph)


def tidy(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its nodes sorted and its dead initializers and dead nodes removed, by
    onnx-graphsurgeon's cleanup and, when unsorted, toposort; unchanged (the same object) when there is nothing to do. Graph
    inputs stay, even unused: they are the interface."""
    if not needs_tidy(model):
        return model
    import onnx_graphsurgeon as gs

    graph: Any = gs.import_onnx(model)
    graph.cleanup(remove_unused_graph_inputs=False, recurse_subgraphs=True)
    if not is_sorted(model.graph):
        # only then: gs's toposort reorders a sorted graph too, and the order of random ops (RandomUniformLike)
        # decides which numbers each draws (a dynamo Dropout's mask differed once its nodes moved)
        graph.toposort(recurse_subgraphs=True)
    return graft(model, graph)


def can_fix(node: Any, rule: Any = None) -> bool:
    """Lint time (OLX001, a model-level finding): the checker's complaint is an unsorted graph."""
    model = getattr(getattr(node, "scope", None), "root", None)
    model = getattr(model, "_onnxlint_model", None)
    return model is not None and not is_sorted(model.graph)


@fixer("toposort", Applicability.SAFE, "sort the nodes of a graph that is not topologically sorted (what onnx.checker rejects and "
       "ORT tolerates) with onnx-graphsurgeon", can_fix=can_fix)
def toposort(ctx: FixContext) -> onnx.ModelProto:
    return tidy(ctx.model)
