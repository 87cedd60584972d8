"""fold-shapes: constant-fold shape subgraphs so ORT places no shape computation on the CPU and TensorRT gets
constant Reshape/Expand shapes.

Engine: onnxslim's constant folding, dead-node elimination and its shape-only graph rewrites (eliminating
no-op Reshape/Slice/Concat/Unsqueeze/Transpose, Concat->Reshape with 0/-1) when onnxslim is installed; its
symbolic shape inference folds the static part of a shape under a dynamic batch (Shape->Gather of a fixed
dim), and it folds inside If/Loop/Scan bodies. Fusions that change arithmetic (Conv+BN, Gemm, Pad+Conv ...)
are skipped: this fixer only folds. Without onnxslim (a dependency, but an environment may lack it), onnxlint's
own folder alone (`fold_known`), which folds what the lint claimed.

Which findings it can clear is decided at lint time by `foldable` (a node whose every input is computable
from constants and fixed dims), so a finding the fold cannot clear is not marked fixable.
"""

from __future__ import annotations

from typing import Any

import onnx

from onnxlint.fixers import slim_check
from onnxlint.fixers.base import Applicability, FixContext, fixer
from onnxlint.model.graph import HOLDS_GRAPH
from onnxlint.model.loading import has_external_data

# onnxslim rewrites that only fold or drop shape plumbing (the arithmetic fusions are left out)
_SHAPE_PATTERNS = ("EliminationConcat", "EliminationReshape", "EliminationReshapeAs", "EliminationSlice",
                   "EliminationTranspose", "EliminationUnsqueeze", "FusionConcatReshape")


def _onnxslim_fold(model: onnx.ModelProto) -> onnx.ModelProto:
    import onnxslim
    from onnxslim.core.pattern.registry import DEFAULT_FUSION_PATTERNS

    skip = [p for p in DEFAULT_FUSION_PATTERNS if p not in _SHAPE_PATTERNS]
    out = onnxslim.slim(model, skip_fusion_patterns=skip, skip_optimizations=["weight_tying"])
    if isinstance(out, tuple):
        out = out[0]
    return out


# "onnxslim": onnxslim's folding, then `fold_known` for what it left; "own": `fold_known` alone (the fallback
# when the onnxslim result fails the numeric check or the checker)
ENGINE = {"mode": "onnxslim"}
MAX_FOLD_ELEMENTS = 4096  # fold_known makes Constants of shape-sized values only
MAX_FOLD_FLOATS = 16  # float values folded: scales and sizes computed in float, never weights


def fold(model: onnx.ModelProto, mode: str | None = None, notes: list[str] | None = None) -> onnx.ModelProto:
    """The folded model (a new proto; the input is left as it is). Output names, input names and the
    model's metadata are kept. Every evaluation runs under one budget of work for the model (model.evaluation);
    onnxslim's folding, which evaluates the constant subgraph with ORT and cannot be bounded from here, runs
    only when every node it would evaluate has a known cost within bounds (fixers.slim_check). notes: gets one line
    for what was not evaluated, one for onnxslim not run."""
    import copy

    from onnxlint.model.evaluation import Budget

    mode = mode or ENGINE["mode"]
    budget = Budget()
    # onnxlint's own folding first, on the model the lint judged (its shapes are the ones the findings were
    # computed from), then onnxslim for the rest, then once more for what onnxslim exposed
    out = fold_known(copy.deepcopy(model), budget=budget)
    # not onnxslim on a model with external data: it reads tensor values through onnx's numpy_helper, which
    # resolves each data file against the current folder: every weight read (run from the model's folder), or
    # a checker error on the first (run from elsewhere: a dynamo BART export's "should be stored in
    # model.onnx.data, but it is not regular file")
    if mode == "onnxslim" and not has_external_data(model):
        try:
            import onnxslim  # noqa: F401
        except ImportError:
            pass  # fold_known above folded what the lint claimed
        else:
            why = slim_check.refusal(out, _run_reference)
            if why is None:
                out = _onnxslim_fold(out)
                out.ir_version = model.ir_version
                out = fold_known(out, budget=budget)
            elif notes is not None:
                notes.append(f"fold-shapes: onnxslim's folding not run ({why}): folded with onnxlint's own folder only")
    line = budget.summary("fold-shapes")
    if line and notes is not None:
        notes.append(f"{line}; left as they are")
    # keep what the engines drop or rewrite
    for attr in ("producer_name", "producer_version", "domain", "model_version", "doc_string"):
        if model.HasField(attr):
            setattr(out, attr, getattr(model, attr))
        else:  # absent stays absent (an empty field written would be a change the fix did not mean)
            out.ClearField(attr)
    del out.metadata_props[:]
    out.metadata_props.extend(model.metadata_props)
    return out


def fold_known(model: onnx.ModelProto, rounds: int = 3, budget: Any = None) -> onnx.ModelProto:
    """`fold_once` until nothing more folds (shape inference over a folded graph knows more), at most
    `rounds` times; budget: the model's evaluation budget (model.evaluation.Budget; a new one when None)."""
    from onnxlint.model.evaluation import Budget

    budget = budget if budget is not None else Budget()
    for _ in range(rounds):
        before = sum(len(g.node) for g in _graphs(model)), sum(len(g.initializer) for g in _graphs(model))
        model = fold_once(model, budget)
        if (sum(len(g.node) for g in _graphs(model)), sum(len(g.initializer) for g in _graphs(model))) == before:
            break
    return model


def _graphs(model):
    from onnxlint.model.graph import iter_graphs

    return list(iter_graphs(model))


def fold_once(model: onnx.ModelProto, budget: Any = None) -> onnx.ModelProto:
    """Replace every node `can_fold` says folds (its outputs are computable from constants and fixed dims,
    partial shapes under a dynamic batch included) with Constant nodes holding the values, then drop the
    nodes nothing reads any more. Works in every graph (If/Loop/Scan bodies too), in place."""
    from onnxlint.model.evaluation import Budget

    folding = _Folding(model, budget if budget is not None else Budget())
    for ref in folding.index.nodes:
        if ref.scope.graph is None or ref.scope.is_function or ref.op_type == "Constant":
            continue
        if ref.op_type == "Reshape" and ref.domain == "ai.onnx" and not can_fold(ref):
            folding.pin_reshape_zeros(ref)
            continue
        folding.fold(ref)
    if not folding.replaced:
        return model
    folding.rebuild()
    _drop_dead(model)
    return model


class _Folding:
    """One pass of fold_once over a model: the values computed so far (per scope) and the replacements to make.
    Types come from the inferred copy's index (`index`); the nodes to replace from the model's own index (`own`:
    same structure, so the same locations)."""

    def __init__(self, model: onnx.ModelProto, budget: Any) -> None:
        from onnxlint.model.graph import GraphIndex

        self.budget = budget
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
        except Exception:
            inferred = model
        self.index = GraphIndex(inferred)
        self.own = own = GraphIndex(model) if inferred is not model else self.index
        self.by_loc = {n.location: n for n in own.nodes}
        self.values: dict[tuple[int, str], Any] = {}
        self.replaced: dict[int, tuple[onnx.GraphProto, dict[int, list]]] = {}
        self.positions: dict[int, dict[int, int]] = {}
        self.taken = {o for n in own.nodes for o in n.outputs} | {i for s in own.scopes for i in s.initializers}

    def value(self, scope, name):
        """The value of `name` seen from `scope`: computed by this pass, or an initializer or Constant of that
        scope or one it is nested in (None when a node or a graph input makes it, or its data is external)."""
        from onnx import numpy_helper

        s = scope
        while s is not None:
            key = (id(s), name)
            if key in self.values:
                return self.values[key]
            t = s.initializers.get(name) or s.constants.get(name)
            if t is not None:
                if t.data_location == onnx.TensorProto.EXTERNAL:
                    return None
                arr = numpy_helper.to_array(t)
                self.values[key] = arr
                return arr
            if name in s.producer or name in s.inputs:
                break
            s = s.parent
        return None

    def pin_reshape_zeros(self, ref) -> None:
        """A Reshape that does not fold but whose shape is known as "copy these dims" (0s): the shape input
        becomes that constant."""
        import numpy as np
        from onnx import numpy_helper

        zeros = reshape_zeros(ref)
        target = self.by_loc.get(ref.location)
        if not isinstance(zeros, list) or target is None or target.op_type != "Reshape":
            return
        name = f"{ref.inputs[1]}_folded"
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        tg = target.scope.graph
        if tg is None:
            return
        tg.initializer.append(numpy_helper.from_array(np.array(zeros, np.int64), name))
        target.proto.input[1] = name

    def fold(self, ref) -> None:
        """Evaluate a foldable node of shape-sized values and plan its replacement by constants."""
        outs = [o for o in ref.outputs if o]
        if not outs or not can_fold(ref):
            return
        target = self.by_loc.get(ref.location)
        if target is None or target.op_type != ref.op_type:
            return
        arrays = self._shape_sized_values(ref)
        if arrays is None:
            return
        for o, arr in zip(ref.outputs, arrays):
            if o:
                self.values[(id(ref.scope), o)] = arr
        self._replace(ref, target, arrays)

    def _shape_sized_values(self, ref):
        """The node's output values when they are shape-sized; None for weights, which are not this fixer's
        business (and ORT rejects big Constants in bodies)."""
        import numpy as np

        if any((ref.output_type(k).numel() or 0) > MAX_FOLD_ELEMENTS for k in range(len(ref.outputs))):
            return None  # a weight computation (e.g. DequantizeLinear of a constant), not a shape: not evaluated
        arrays = _evaluate(ref, self.value, self.budget)  # a size not known from the types is known before it runs
        if arrays is None or any(np.asarray(a).size > MAX_FOLD_ELEMENTS for a in arrays):
            return None
        if any(np.asarray(a).dtype.kind in "fc" and np.asarray(a).size > MAX_FOLD_FLOATS for a in arrays):
            return None  # a slice of float weights (an LSTM's gates), not a shape: ORT 1.24 fails to load such
            # folded initializers inside If bodies, and folding them gains nothing
        return arrays

    def _replace(self, ref, target, arrays) -> None:
        """Plan the node's replacement: its outputs become initializers of its graph, or Constant nodes where
        they are graph outputs (a graph output must be produced by a node)."""
        import numpy as np
        from onnx import helper, numpy_helper

        scope = target.scope
        pos_of = self.positions.get(id(scope))
        if pos_of is None:
            pos_of = self.positions[id(scope)] = {id(n): k for k, n in enumerate(scope.nodes)}
        graph = scope.graph
        if graph is None:
            return
        graph_outputs = set(scope.outputs)
        consts = []
        for k, (o, arr) in enumerate(zip(ref.outputs, arrays)):
            if not o:
                continue
            if o in graph_outputs:
                consts.append(helper.make_node("Constant", [], [o], name=f"{ref.name or ref.op_type}_folded_{k}",
                                               value=numpy_helper.from_array(np.asarray(arr))))
            else:  # an initializer of the node's own graph
                graph.initializer.append(numpy_helper.from_array(np.asarray(arr), o))
        self.replaced.setdefault(id(scope), (graph, {}))[1][pos_of[id(target)]] = consts

    def rebuild(self) -> None:
        """Make the planned replacements, innermost bodies first: rebuilding a graph's node list copies the bodies
        its nodes hold."""
        for graph, reps in reversed(list(self.replaced.values())):
            nodes: list[onnx.NodeProto] = []
            for pos, n in enumerate(graph.node):
                nodes.extend(reps[pos] if pos in reps else [n])
            del graph.node[:]
            graph.node.extend(nodes)


def _evaluate(ref, value, budget):
    """The node's output values (numpy), from the constants and the fixed dims it reads; None when unknown, or
    when its work is not within the budget, or its outputs would not be shape-sized (known before it runs:
    model.evaluation)."""
    import numpy as np

    from onnxlint.model.locations import node_path

    op = ref.op_type
    if op in ("Shape", "Size"):
        shape = ref.scope.type_of(ref.inputs[0]).shape
        if shape is None:
            return None
        if op == "Size":
            return [np.array(int(np.prod(shape)), np.int64)]
        start, end = ref.attr("start"), ref.attr("end")
        dims = list(shape)[slice(start if start is not None else 0, end)]
        if not all(isinstance(d, int) for d in dims):
            return None
        return [np.array(dims, np.int64)]
    ins = []
    for name in ref.inputs:
        if not name:
            ins.append(None)
            continue
        v = value(ref.scope, name)
        if v is None:
            v = _partial_value(ref.scope, name)
            if v is None:
                return None
        ins.append(v)
    if op in ("Gather", "Slice", "Squeeze", "Unsqueeze", "Cast", "Identity", "Concat") and any(
            isinstance(v, _Partial) for v in ins):
        return _partial_eval(ref, ins)
    if any(isinstance(v, _Partial) for v in ins):
        return None
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in ref.proto.attribute}
    if not budget.allow(op, ref.domain, ref.opset or 17, attrs, ins, name=ref.name or node_path(ref.location),
                        max_elements=MAX_FOLD_ELEMENTS * max(len(ref.outputs), 1)):
        return None
    return _run_reference(ref, ins)


def _run_reference(ref, ins):
    """onnx.reference's outputs of one node given its input values (None when it cannot run them)."""
    import numpy as np

    try:
        from onnx import helper
        from onnx.reference import ReferenceEvaluator

        names = [f"i{k}" if n else "" for k, n in enumerate(ref.inputs)]
        outs = [f"o{k}" for k in range(len(ref.outputs))]
        node = helper.make_node(ref.op_type, names, outs, domain=ref.proto.domain)
        node.attribute.extend(ref.proto.attribute)
        feeds = {nm: v for nm, v in zip(names, ins) if nm}
        # a one-node model at the node's own opset (a bare NodeProto runs at the newest version)
        g = helper.make_graph([node], "fold", [helper.make_tensor_value_info(nm, 0, None) for nm in feeds],
                              [helper.make_tensor_value_info(o, 0, None) for o in outs])
        one = helper.make_model(g, opset_imports=[helper.make_opsetid(ref.proto.domain or "", ref.opset or 17)])
        ev = ReferenceEvaluator(one)
        return [np.asarray(x) for x in ev.run(None, feeds)]
    except Exception:
        return None


class _Partial(list):
    """A shape vector some of whose entries are unknown (None)."""


def _partial_value(scope, name):
    st = _state(scope, name)
    if isinstance(st, tuple) and st[0] == "shape":
        return _Partial(st[1])
    return None


def _partial_eval(ref, ins):
    import numpy as np

    st = _combine(ref, ref.scope, [CONST if not isinstance(v, _Partial) else ("shape", list(v)) for v in ins])
    if st != CONST:
        return None
    op = ref.op_type
    first = list(ins[0]) if isinstance(ins[0], _Partial) else None
    if op == "Gather":
        idx = np.asarray(ins[1])
        picked = [first[int(i)] for i in idx.reshape(-1)]
        return [np.array(picked, np.int64).reshape(idx.shape)]
    if op == "Slice":
        starts, ends = np.asarray(ins[1]).reshape(-1), np.asarray(ins[2]).reshape(-1)
        steps = np.asarray(ins[4]).reshape(-1) if len(ins) > 4 and ins[4] is not None else [1]
        return [np.array(first[slice(int(starts[0]), int(ends[0]), int(steps[0]))], np.int64)]
    if op == "Concat":
        parts = [list(v) if isinstance(v, _Partial) else list(np.asarray(v).reshape(-1)) for v in ins if v is not None]
        return [np.array([int(x) for p in parts for x in p], np.int64)]
    return None


def _drop_dead(model: onnx.ModelProto) -> None:
    """Remove nodes none of whose outputs is read (by any graph, bodies included) or is a graph output."""
    from onnxlint.model.graph import iter_graphs

    while True:
        used = {o.name for g in iter_graphs(model) for o in g.output}
        used |= {i for g in iter_graphs(model) for n in g.node for i in n.input}  # bodies' reads of outer values too
        changed = False
        for g in iter_graphs(model):
            keep = [n for n in g.node if any(o and o in used for o in n.output)]
            if len(keep) != len(g.node):
                changed = True
                del g.node[:]
                g.node.extend(keep)
        if not changed:
            return


@fixer("fold-shapes", Applicability.SAFE, "constant-fold shape subgraphs (onnxslim's folding, shape rewrites only) so ORT has "
       "no CPU shape nodes and TensorRT gets constant shapes", can_fix=lambda node, rule: _can_fix(node, rule))
def fold_shapes(ctx: FixContext) -> onnx.ModelProto:
    if not ctx.nodes and not ctx.model_level:
        return ctx.model
    return fold(ctx.model, notes=ctx.notes)


# ------------------------------------------------------------------ what a fold can clear (lint time)

_NONDETERMINISTIC = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                     "Bernoulli", "Dropout"}
_PASS_SHAPE = {"Cast", "Identity", "Squeeze", "Unsqueeze", "Flatten"}
CONST = "const"


class Dim(tuple):
    """An unknown entry of a shape vector: dim `axis` of value `name` (Shape(name)[axis])."""

    def __new__(cls, name: str, axis: int):
        return super().__new__(cls, (name, axis))


def _int_values(t) -> list[int] | None:
    try:
        from onnx import numpy_helper

        if t.data_location == onnx.TensorProto.EXTERNAL:
            return None
        return [int(v) for v in numpy_helper.to_array(t).reshape(-1)]
    except Exception:
        return None


def _const_ints(scope, name: str) -> list[int] | None:
    """_int_values of the constant `name` as scope sees it (None: no constant, or not integers), decoded once
    per scope: a shared shape constant (a `[-1, 64]` every block reshapes with) is read by every block's
    finding. The list is shared: never mutate it."""
    memo = scope.__dict__.setdefault("_onnxlint_const_ints", {})
    got = memo.get(name, memo)
    if got is memo:
        t = scope.constant(name)
        got = memo[name] = _int_values(t) if t is not None else None
    return got


def _lookup(scope, name):
    """(producer NodeRef or None, scope it lives in, constant TensorProto or None) for a value name."""
    s = scope
    while s is not None:
        t = s.initializers.get(name) or s.constants.get(name)
        if t is not None:
            return None, s, t
        p = s.producer.get(name)
        if p is not None:
            return p, s, None
        if name in s.inputs:
            return None, s, None
        s = s.parent
    return None, None, None


def _state(scope, name: str):
    """CONST (computable from constants and fixed dims), ("shape", dims) (a shape vector some of whose
    entries are unknown, dims: int or None each), or None (depends on run-time data)."""
    memos = _memos(scope)
    memo = memos.get(id(scope))
    if memo is None:
        memo = memos[id(scope)] = {}
    got = memo.get(name, _UNSET)
    if got is not _UNSET:  # asked before (each block's two Reshapes read one shape; the lint asks per finding)
        return got
    # (scope, its memo, value name, what _lookup found there or None: not looked up yet)
    stack: list[tuple[Any, dict, str, Any]] = [(scope, memo, name, None)]
    # values waiting for their inputs, by (id of their memo, name): one of them among a value's own inputs is a
    # cycle (a node reading its own output, A -> B -> A), which only a malformed model has; that value depends on
    # itself, never a constant. Without this a 68-byte Reshape of its own output pushed itself for ever
    waiting: set[tuple[int, str]] = set()
    while stack:
        sc, m, nm, found = stack.pop()
        if nm in m:
            waiting.discard((id(m), nm))
            continue
        if found is None:
            found = prod, where, const = _lookup(sc, nm)
            if const is not None:
                m[nm] = CONST
                continue
            if prod is None:
                m[nm] = None
                continue
            op = prod.op_type
            if op in ("Shape", "Size") and prod.domain == "ai.onnx":
                m[nm] = _shape_state(prod, where)
                continue
            if op in _NONDETERMINISTIC or prod.domain != "ai.onnx" or prod.attribute_flags() & HOLDS_GRAPH:
                m[nm] = None
                continue
        else:
            prod, where, _ = found
        # an input found in an outer scope is memoised under that scope: looked up through `where`
        wm = memos.get(id(where))
        if wm is None:
            wm = memos[id(where)] = {}
        ins = [i for i in prod.inputs if i]
        pending = [i for i in ins if i not in wm]
        if any((id(wm), i) in waiting for i in pending):
            m[nm] = None
            continue
        if pending:  # this value again once its inputs are known
            waiting.add((id(m), nm))
            stack.append((sc, m, nm, found))
            stack.extend([(where, wm, i, None) for i in pending])
            continue
        waiting.discard((id(m), nm))
        m[nm] = _combine(prod, where, [wm[i] for i in ins])
    return memo[name]


_UNSET = object()


def _memos(scope) -> dict[int, dict[str, Any]]:
    """_state's answers for the scopes under scope's root: id(scope) -> value name -> state, kept on the root (an
    index's scopes live as long as their root)."""
    kept = scope.root.__dict__
    memos = kept.get("_onnxlint_fold_memo")
    if memos is None:
        memos = kept["_onnxlint_fold_memo"] = {}
    return memos


def _shape_state(prod: Any, where: Any) -> Any:
    """The state of a Shape or Size node's output, from its input's type as where (its scope) sees it."""
    shape = where.type_of(prod.inputs[0]).shape if prod.inputs else None
    if shape is None:
        return None
    if prod.op_type == "Size":
        return CONST if all(isinstance(d, int) for d in shape) else None
    start, end = prod.attr("start"), prod.attr("end")
    dims = [d if isinstance(d, int) else Dim(prod.inputs[0], k) for k, d in enumerate(shape)]
    dims = dims[slice(start if start is not None else 0, end)]
    return CONST if all(isinstance(d, int) for d in dims) else ("shape", dims)


def _combine(node: Any, scope: Any, states: list[Any]) -> Any:
    if states.count(CONST) == len(states):  # list methods, no generator: once per value of a shape chain
        return CONST
    if None in states:
        return None
    op = node.op_type
    first = states[0]
    if op in _PASS_SHAPE and first != CONST and all(s == CONST for s in states[1:]):
        return first
    if op == "Gather" and first != CONST and states[1] == CONST:
        idx = _const_ints(scope, node.inputs[1])
        if idx is None:
            return None
        dims = first[1]
        try:
            picked = [dims[i] for i in idx]
        except IndexError:
            return None
        return CONST if all(isinstance(d, int) for d in picked) else ("shape", picked)
    if op == "Slice" and first != CONST and all(s == CONST for s in states[1:]):
        vals = [_const_ints(scope, n) for n in node.inputs[1:]]
        if len(vals) < 2:
            return None
        starts, ends = vals[0], vals[1]
        if starts is None or ends is None:
            return None
        steps = vals[3] if len(vals) > 3 and vals[3] else [1]
        if len(starts) != 1 or len(ends) != 1 or not steps or steps[0] == 0:  # a step of 0 is invalid ONNX
            return None
        picked = first[1][slice(starts[0], ends[0], steps[0])]
        return CONST if all(isinstance(d, int) for d in picked) else ("shape", picked)
    if op == "Concat":
        joined: list[Any] = []
        for n, s in zip((i for i in node.inputs if i), states):
            if s == CONST:
                got = _const_ints(scope, n)
                joined.extend(got if got is not None else [None])
            else:
                joined.extend(s[1])
        return CONST if all(isinstance(d, int) for d in joined) else ("shape", joined)
    return None


def can_fold(node, input_indices=None) -> bool:
    """Whether folding makes these inputs of node constants (None: the node's outputs, i.e. the node itself
    folds away)."""
    if _in_branch_ort_inlines(node.scope):
        return False
    if input_indices is None:
        outs = [o for o in node.outputs if o]
        if not outs or not all(_state(node.scope, o) == CONST for o in outs):
            return False
        # inside a body, a constant chain that only ends in an If's condition is left to ORT: ORT folds it with
        # its own initializers and inlines the If, while a folded initializer there makes onnxruntime 1.24 fail
        # to load the model ("HasExternalDataInMemory", measured on silero VAD)
        return node.scope.parent is None or _feeds_work(node, set())
    names = [node.inputs[i] for i in input_indices if i < len(node.inputs) and node.inputs[i]]
    if node.op_type == "Reshape" and list(input_indices) == [1] and len(names) == 1:
        return reshape_zeros(node) is not None
    return all(_state(node.scope, n) == CONST for n in names)


def _feeds_work(node, seen: set) -> bool:
    """Whether a constant node's value reaches something besides If conditions: a node that does not fold, or
    the body's outputs (through other constant nodes). A walk with a stack, not a recursion: a body's chain of a
    thousand constant nodes was a RecursionError, the whole model's fix refused as an internal error."""
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        scope = n.scope
        for o in n.outputs:
            if not o:
                continue
            if o in scope.outputs:
                return True
            for c in scope.consumers.get(o, ()):
                if c.op_type == "If" and c.inputs and c.inputs[0] == o:
                    continue
                outs = [x for x in c.outputs if x]
                if not outs or not all(_state(c.scope, x) == CONST for x in outs):
                    return True
                stack.append(c)  # what c's value reaches, once this node's other readers are looked at
    return False


def _in_branch_ort_inlines(scope) -> bool:
    """Whether scope is (inside) a branch of an If whose condition folds to a constant: ORT's constant folding
    inlines that branch, and onnxruntime 1.24 then fails to load the model when the branch holds initializers
    or Constant nodes a fold put there ("HasExternalDataInMemory", measured on silero VAD). ORT folds such
    a branch itself; this fixer leaves it alone."""
    s = scope
    while s is not None and s.owner is not None:
        owner = s.owner
        if owner.op_type == "If" and owner.inputs and owner.inputs[0] \
                and _state(owner.scope, owner.inputs[0]) == CONST:
            return True
        s = owner.scope
    return False


def reshape_zeros(node):
    """A constant shape for a Reshape whose shape input is computed: the shape itself when it folds, or, for
    the dynamic-batch pattern x.view(x.size(0), -1), the shape with 0 ("copy this dim") wherever an entry is
    the data input's own dim at the same position (allowzero=0). None when neither."""
    if len(node.inputs) < 2 or not node.inputs[1]:
        return None
    st = _state(node.scope, node.inputs[1])
    if st == CONST:
        return CONST
    if not isinstance(st, tuple) or st[0] != "shape" or node.attr("allowzero") == 1:
        return None
    out = []
    for k, d in enumerate(st[1]):
        if isinstance(d, int):
            out.append(d)
        elif isinstance(d, Dim) and d == (node.inputs[0], k):
            out.append(0)
        else:
            return None
    if sum(1 for d in out if d == -1) > 1:
        return None
    return out


def _can_fix(node, rule) -> bool:
    """A finding about named inputs (e.g. OLX309: Reshape input 1 is computed) clears when those inputs fold;
    any other finding (OLX201: a CPU shape node) clears when the node itself folds away."""
    inputs = (rule.match or {}).get("inputs") if rule is not None else None
    named = [k for k in inputs if isinstance(k, int)] if isinstance(inputs, dict) else []
    return can_fold(node, named or None)
