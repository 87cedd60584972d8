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

from array import array
from dataclasses import dataclass, replace
from typing import Any, Union

import onnx

from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
from onnxlint.model.locations import body_path
from onnxlint.ort import schema_registry
from onnxlint.ort.verdicts import Boundary, NodePlacement, Placement


@dataclass
class ScopedView:
    index: GraphIndex  # the renamed model's index: same nodes, same node indices
    original: dict[str, str]  # renamed value -> the model's own name

    def restore(self, pl: Placement, into: GraphIndex) -> Placement:
        """The view's placement in the nodes and value names of `into`, the model's own index."""
        nodes = into.nodes
        out = Placement(pl.target, pl.ort_version, pl.table_versions, pl.notes, optimization=pl.optimization,
                        refused=pl.refused, refused_reason=pl.refused_reason)
        for i, p in pl.nodes.items():
            out.record(i, NodePlacement(nodes[i], p.ep, p.status, p.reason, p.detail))
        name = self.original.get
        out.boundaries = [Boundary(name(b.value, b.value), b.direction, nodes[b.producer.index] if b.producer else None,
                                   nodes[b.consumer.index], b.bytes) for b in pl.boundaries]
        out.created = [replace(c, source=nodes[c.source.index]) for c in pl.created]
        return out


def _defined(scope: GraphScope) -> set[str]:
    return {*scope.inputs, *scope.initializers, *scope.producer}


def _reuses_names(index: GraphIndex) -> bool:
    """Whether two graphs define one value name (local functions aside: one is inlined into the graph that calls
    it, under new names). The largest graph's names are looked up in its own tables, the others' in a set of
    theirs: no set of a million names for the main graph of a big model. A body inside a local function is
    inlined with it, and the view renames the main graph's bodies only: counting one (the two branches of an If
    in a function both defining `z`) made a view that reused the name again, a view of the view, for ever."""
    graphs = [scope for scope in index.scopes if not scope.root.is_function]
    if len(graphs) < 2:
        return False
    largest = max(graphs, key=lambda scope: len(scope.producer) + len(scope.initializers) + len(scope.inputs))
    seen: set[str] = set()
    for scope in graphs:
        if scope is not largest:
            names = _defined(scope)
            if not seen.isdisjoint(names):
                return True
            seen |= names
    inputs = set(largest.inputs)
    return any(name in largest.producer or name in largest.initializers or name in inputs for name in seen)


def scoped_view(index: GraphIndex) -> ScopedView | None:
    """A view of the model in which no value name is defined by two graphs, or None when none is."""
    if not _reuses_names(index):
        return None
    model = onnx.ModelProto()
    model.CopyFrom(index.model)
    original: dict[str, str] = {}
    _rename(model.graph, "graph", {}, set(), original, top=True)
    view = GraphIndex(model)
    view.inference_work = index.inference_work
    # the model as ORT reads it, what is known of it and its external values are the index's (values renamed here)
    view.source_model, view.memo, view.read_external = index.source_model, index.memo, index.read_external
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
        part = node.name if node.name else f"{node.op_type}#{i}"
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _rename(a.g, body_path(path, part, a.name), names, taken, original)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for k, g in enumerate(a.graphs):
                    _rename(g, f"{body_path(path, part, a.name)}[{k}]", names, taken, original)


# ort_type_str's answers: id(scope) -> value -> type (a dict per scope, not a (scope, value) key a value: 84 MB
# at 1M nodes whose inference was skipped)
OrtTypes = dict[int, dict[str, "str | None"]]


def ort_type_str(scope: GraphScope, value: str, depth: int = 0, cache: OrtTypes | None = None,
                 produced: Produced | None = None) -> str | None:
    """A value's type as ORT's Graph::Resolve gives it where onnx's inference left it untyped: the output of an
    op onnx has no schema for (com.microsoft::Tokenizer, QLinearAdd), and of the ops after it, whose inference
    onnx then skips, gets the type its schema (ORT's own for a contrib op) binds it to, a concrete type or the type
    parameter it shares with a typed input (measured: StringNormalizer -> Tokenizer -> Flatten puts the Flatten on
    CPU, a string tensor, on 1.24.4 and 1.31.1). produced: the partitioner's answers for its keyed nodes' outputs,
    read where the cache has none (Produced.answer: they are not copied into it)."""
    vt = scope.type_of(value)
    if vt.type_str or depth > 16:
        return vt.type_str
    known = None
    if cache is not None:
        known = cache.get(id(scope))
        if known is None:
            known = cache[id(scope)] = {}
        elif value in known:
            return known[value]
    if produced is not None:
        given = produced.answer(scope, value)
        if given is not _MISSING:
            return given  # type: ignore[return-value]  # a str or None (typing.cast: a call a value)
    got = _schema_type(scope, value, depth, cache, produced)
    if known is not None:
        known[value] = got
        if produced is not None:
            produced.cached(scope, value)
    return got


def _schema_type(scope: GraphScope, value: str, depth: int, cache: OrtTypes | None, produced: Produced | None) -> str | None:
    node = scope.producer_of(value)
    if node is None or value not in node.outputs:
        return None
    rule = _output_rule(node.op_type, node.opset, node.domain, node.outputs.index(value), len(node.inputs))
    if rule is None or isinstance(rule, str):
        return rule
    for i in rule:
        v = node.inputs[i]
        if v:
            got = ort_type_str(node.scope, v, depth + 1, cache, produced)
            if got:
                return got
    return None


_Rule = Union[str, tuple[int, ...], None]
_rules: dict[tuple[str, int | None, str, int, int], _Rule] = {}


def _output_rule(op_type: str, opset: int | None, domain: str, k: int, inputs: int) -> _Rule:
    """What the schema says of output k of a node with this many inputs: its concrete type (or None: nothing),
    or the inputs, in order, whose type parameter it shares (their first known type is its type). Kept per
    (op, opset, domain, k, inputs): a million untyped values ask a few dozen distinct questions."""
    key = (op_type, opset, domain, k, inputs)
    if key in _rules:
        return _rules[key]
    formal = schema_registry.formal_params(op_type, opset, domain)
    rule: _Rule = None
    if formal is not None:
        ins, outs = formal
        if outs and not (k >= len(outs) and not outs[-1][2]):
            param = outs[min(k, len(outs) - 1)][1]
            if param.startswith("tensor(") or param.startswith("seq("):
                rule = param
            else:
                rule = tuple(i for i in range(inputs)
                             if ins and (i < len(ins) or ins[-1][2]) and ins[min(i, len(ins) - 1)][1] == param)
    _rules[key] = rule
    return rule


_MISSING = object()
_NO_PRODUCER: Any = {}.get


class Produced:
    """What _from_known answers for the untyped outputs of the nodes the partitioner has keyed (their input types
    known: typed, or answered and in the cache for good), worked out once per distinct signature and input types
    (output_types) and kept as a code a node: its readers read it instead of working it out again from the
    producer's schema rule, a million times at 1M nodes."""

    def __init__(self, size: int) -> None:
        self.codes = array("I", bytes(4 * size))  # node index -> its answers' position in answers; 0: none kept
        self.answers: list[tuple[object, ...]] = [()]
        self._code_of: dict[tuple[object, ...], int] = {}
        # node index -> 1: the cache may answer one of its outputs (an answer written before the node was keyed,
        # which its readers read first, as ort_type_str does); 0: its readers read its code without asking the cache
        self.early = bytearray(size)

    def cached(self, scope: GraphScope, value: str) -> None:
        """The cache now answers value (in scope): its producer's readers ask the cache first."""
        node = scope.producer_of(value)
        if node is not None:
            self.early[node.index] = 1

    def code(self, answers: tuple[object, ...]) -> int:
        """The code of these answers (output_types'), for codes[node index]."""
        code = self._code_of.get(answers)
        if code is None:
            code = self._code_of[answers] = len(self.answers)
            self.answers.append(answers)
        return code

    def answer(self, scope: GraphScope, value: str) -> object:
        """What _from_known answers for value, read from its producer's code where it has one, else _MISSING."""
        node = scope.producer.get(value) if scope.parent is None else scope.producer_of(value)
        if node is None:
            return _MISSING
        code = self.codes[node.index]
        if not code:
            return _MISSING
        outs = node.outputs
        return self.answers[code][outs.index(value)] if value in outs else _MISSING


def output_types(sig: tuple[Any, ...], input_types: tuple[object, ...]) -> tuple[object, ...]:
    """What _from_known answers for each output of a node of this signature whose inputs have these types (typed,
    or their answers), by the output's position (_MISSING for a typed output: left to _from_known): the rule's
    own type, or the first known type among the inputs its schema rule names."""
    domain, op_type, opset, _, outs = sig[:5]
    out: list[object] = []
    for k, t in enumerate(outs):
        if t is not None:
            out.append(_MISSING)
            continue
        rule = _output_rule(op_type, opset, domain, k, len(input_types))
        if rule is None or isinstance(rule, str):
            out.append(rule)
            continue
        out.append(next((got for got in (input_types[i] for i in rule) if got), None))
    return tuple(out)


def ort_input_types(index: GraphIndex, node: NodeRef, types: tuple[str | None, ...], cache: OrtTypes,
                    produced: Produced | None = None) -> tuple[object, ...]:
    """types (a node's input types, index.signature(node)[3]) with each untyped input's given as
    ort_type_str(node.scope, input, cache=cache) gives it: from the cache where it has the answer, else from the
    producer's schema rule and its inputs' types when those are known already (typed, or in the cache: the
    partitioner meets a producer before its readers; produced: the producers' answers worked out already), else
    by ort_type_str itself. The same answers, kept in the cache as ort_type_str keeps them, without its calls for
    each of a million values; the producers' answers are not copied into it (a million entries at 1M nodes):
    ort_type_str given produced reads them there. The cache is asked first only for the outputs of a producer
    without a code or in produced.early (the cache may answer them): a miss in a cache of ~200k values, for each
    of a million inputs, cost more than the rest of the look-up. So every answer written to the cache must go
    through ort_type_str or this function given the same produced."""
    scope = node.scope
    known = cache.get(id(scope))
    if known is None:
        known = cache[id(scope)] = {}
    # Produced.answer, inlined: asked of a million inputs at 1M nodes
    if produced is not None:
        codes, answers, early = produced.codes, produced.answers, produced.early
        made = scope.producer.get if scope.parent is None else scope.producer_of
    else:
        made = _NO_PRODUCER  # no codes: each input from the cache, else _from_known or ort_type_str
    out: list[object] = []
    got: object
    for v, got in zip(node.inputs, types):
        if got is None and v:
            prod = made(v)
            code = 0
            if prod is not None:
                j = prod.index
                code = codes[j]
                # the cache has no answer for an output of a keyed node not in early (written with produced only)
                got = known.get(v, _MISSING) if not code or early[j] else _MISSING
            else:
                got = known.get(v, _MISSING)
            if got is _MISSING:
                if code:
                    given = answers[code]
                    if len(given) == 1:  # one output: v (its producer's), not looked for in its outputs
                        got = given[0]
                    else:
                        outs = prod.outputs  # type: ignore[union-attr]
                        got = given[0] if outs[0] == v else given[outs.index(v)] if v in outs else _MISSING
                if got is _MISSING:
                    got = _from_known(index, scope, v, cache, produced)
                    if got is _MISSING:
                        got = ort_type_str(scope, v, cache=cache, produced=produced)
                    else:
                        known[v] = got  # type: ignore[assignment]  # a str or None (typing.cast: a call a value)
                        if prod is not None:
                            early[prod.index] = 1
        out.append(got)
    return tuple(out)


def _from_known(index: GraphIndex, scope: GraphScope, value: str, cache: OrtTypes, produced: Produced | None = None) -> object:
    """ort_type_str(scope, value)'s answer for an untyped value it has not answered yet, when every input its
    producer's rule reads (up to the first with a type) is typed or answered already (in the cache, or by its own
    producer's code in produced, read in that order as ort_type_str reads them: the readers of a node a Level-1
    transformer removed, which has no code, read through it to its inputs' producers); else _MISSING (asking
    ort_type_str for those would add to the cache: left to it)."""
    node = scope.producer.get(value) if scope.parent is None else scope.producer_of(value)
    if node is None or value not in node.outputs:
        return None
    k = node.outputs.index(value)
    rule = _output_rule(node.op_type, node.opset, node.domain, k, len(node.inputs))
    if rule is None or isinstance(rule, str):
        return rule
    types = index.signature(node)[3]  # the inputs' type strings, as type_of gives them
    known = cache.get(id(node.scope))
    for i in rule:
        v = node.inputs[i]
        if not v:
            continue
        got = types[i]
        if got is None:
            got = known.get(v, _MISSING) if known is not None else _MISSING
            if got is _MISSING and produced is not None:
                got = produced.answer(node.scope, v)
            if got is _MISSING:
                return _MISSING
        if got:
            return got
    return None
