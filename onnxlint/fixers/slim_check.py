"""What onnxslim's constant folding would evaluate, costed before it runs (fold-shapes asks `refusal`).

onnxslim folds with onnx-graphsurgeon, which evaluates with ORT every node whose inputs are all constants
(initializers, Constant nodes, Shape/Size of static shapes, and their products), in every graph; nothing bounds
that from here: a ConstantOfShape of a computed [20000, 20000] took 3.2 GB while writing nothing. So each such
node's cost is known first (model.evaluation.cost, from its inputs' shapes and its small inputs' values, the
small ones computed on the way): an op of unknown cost, a node that would make far more elements than it reads,
work out of proportion to what it reads and writes, or a model whose folds would make too much keep onnxslim's
folding from running; onnxlint's own folder, budgeted, still runs.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import onnx
from onnx import numpy_helper

from onnxlint.model import evaluation
from onnxlint.model.graph import GraphIndex, iter_graphs
from onnxlint.model.locations import node_path

GROWTH = 16  # a folded node may make this many times the elements of its largest input ...
ELEMENTS = 1 << 24  # ... or this many (a static attention mask); more is no folding worth its memory
WORK_FACTOR = 64  # work per element in and out (ORT's kernels), past evaluation.NODE_WORK
MODEL_ELEMENTS = 1 << 26  # elements all folded nodes of a model may make, besides the model's own weights
_RANDOM = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"}

Run = Callable[[Any, list[Any]], "list[np.ndarray] | None"]  # (node, input values) -> output values


def refusal(model: onnx.ModelProto, run: Run) -> str | None:
    """Why onnxslim's folding must not run on model (None: it may). run: how a small node's values are computed
    (fold-shapes' onnx.reference runner), for the costs of the nodes that read them."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        inferred = model
    walk = _Walk(run, sum(math.prod(t.dims) for g in iter_graphs(model) for t in g.initializer))
    for ref in GraphIndex(inferred).nodes:
        why = walk.visit(ref)
        if why is not None:
            return why
    return None


class _Walk:
    """The constants of a model as graph-surgeon will see them, node by node in graph order: values where small,
    else their shapes (evaluation.Meta), and the elements the folds made so far."""

    def __init__(self, run: Run, weights: int) -> None:
        self.run = run
        self.limit = MODEL_ELEMENTS + 2 * weights
        self.made = 0
        self.known: dict[tuple[int, str], Any] = {}  # (scope, value) -> array or Meta

    def lookup(self, scope: Any, name: str) -> Any:
        """The constant `name` as scope sees it (None: a run-time value)."""
        s = scope
        while s is not None:
            got = self.known.get((id(s), name))
            if got is not None:
                return got
            t = s.initializers.get(name) or s.constants.get(name)
            if t is not None:
                small = t.data_location != onnx.TensorProto.EXTERNAL and math.prod(t.dims) <= evaluation.VALUE_MAX
                got = numpy_helper.to_array(t) if small else evaluation.Meta(tuple(int(d) for d in t.dims))
                self.known[(id(s), name)] = got
                return got
            if name in s.producer or name in s.inputs:
                return None
            s = s.parent
        return None

    def visit(self, ref: Any) -> str | None:
        if ref.scope.is_function or ref.op_type == "Constant" or ref.domain == "ai.onnx" and ref.op_type in _RANDOM:
            return None
        if ref.op_type in ("Shape", "Size") and ref.domain == "ai.onnx" and ref.inputs:
            shape = ref.scope.type_of(ref.inputs[0]).shape
            if shape is not None and all(isinstance(d, int) for d in shape):
                value = [int(d) for d in shape] if ref.op_type == "Shape" else [math.prod(shape)]
                self.known[(id(ref.scope), ref.outputs[0])] = np.array(value, np.int64)
            return None
        ins = [self.lookup(ref.scope, n) if n else None for n in ref.inputs]
        if not any(ref.inputs) or any(v is None for n, v in zip(ref.inputs, ins) if n):
            return None  # reads a run-time value: graph-surgeon does not fold it
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in ref.proto.attribute):
            return None
        return self._cost(ref, ins)

    def _cost(self, ref: Any, ins: list[Any]) -> str | None:
        where = f"{ref.op_type} {node_path(ref.location)!r} of constant inputs"
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in ref.proto.attribute}
        try:
            cost = evaluation.cost(ref.op_type, ref.proto.domain or "ai.onnx", ref.opset or 17, attrs, ins)
            read = max((evaluation.size(v) for v in ins if v is not None), default=1)
        except evaluation.Refused as exc:
            return f"{where}: {exc}"
        if cost.elements > max(GROWTH * read, ELEMENTS):
            return f"{where} would make {cost.elements:,} elements from {read:,}"
        if cost.work > WORK_FACTOR * (read + cost.elements) + evaluation.NODE_WORK:
            return f"{where} takes {cost.work:,} units of work for {cost.elements:,} elements"
        self.made += cost.elements
        if self.made > self.limit:
            return f"its constant folds would make {self.made:,} elements, past {self.limit:,}"
        self._record(ref, ins, cost)
        return None

    def _record(self, ref: Any, ins: list[Any], cost: evaluation.Cost) -> None:
        """The node's outputs as constants: their values when small (computed now), else their shapes."""
        values = None
        if cost.elements <= evaluation.VALUE_MAX and cost.work <= evaluation.NODE_WORK and ref.domain == "ai.onnx" \
                and all(isinstance(v, np.ndarray) or v is None for v in ins):
            values = self.run(ref, ins)
        for k, o in enumerate(ref.outputs):
            if not o:
                continue
            if values is not None and k < len(values):
                self.known[(id(ref.scope), o)] = values[k]
                continue
            shape = ref.output_type(k).shape
            dims = tuple(int(d) for d in shape) if shape is not None and all(isinstance(d, int) for d in shape) else None
            self.known[(id(ref.scope), o)] = evaluation.Meta(dims, elements=cost.elements)
