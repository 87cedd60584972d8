"""NhwcTransformer (core/optimizer/nhwc_transformer.cc): a Level-3 transformer (`all` only), after partitioning,
on the CPU EP's nodes. Each CPU QLinearConv with an 8-bit input of known rank becomes com.microsoft's channels-last
QLinearConv (`<name>_token_N`) wrapped in Transposes (NCHW -> NHWC before, back after), and the TransposeOptimizer
then runs on the CPU nodes (OrtEPCostCheck, OrtExtendedHandlers): the Transpose between two converted convolutions
cancels, and a Transpose is pushed through a CPU node with a handler (QLinearAdd, QLinearMul, QLinearSigmoid, ...)
when that lowers the estimated cost (all its layout inputs come transposed; a one-input node, or one with a
constant second input, only when its output leads to another Transpose; a CPU MaxPool always). What is left are the
Transposes where a channels-last region meets the rest of the graph: one before each value entering it, one after
each value leaving it, on CPU. Measured on 1.24.4 and 1.31.1 (ORT's quantization tool's QOperator MobileNetV2 and
CNN: 52 and 9 channels-last QLinearConv, 2 and 4 Transposes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxlint.ort import node_args
from onnxlint.ort.verdicts import CPU, CreatedNode

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, GraphScope, NodeRef
    from onnxlint.ort.optimizer.optimized import Optimized
    from onnxlint.ort.verdicts import Placement

NAME = "NhwcTransformer"
# the layout inputs of the ops a Transpose is pushed through (TransposeOptimizer's handlers, OrtExtendedHandlers'
# contrib ops): (domain, op) -> input positions, whether it has transposed outputs
_BINARY = (0, 3)  # QLinearAdd/QLinearMul: A and B (their scales and zero points are scalars)
_HANDLERS: dict[tuple[str, str], tuple[int, ...] | None] = {
    ("com.microsoft", "QLinearAdd"): _BINARY, ("com.microsoft", "QLinearMul"): _BINARY,
    ("com.microsoft", "QLinearSigmoid"): (0,), ("com.microsoft", "QLinearLeakyRelu"): (0,),
    ("com.microsoft", "QLinearAveragePool"): (0,), ("com.microsoft", "QLinearGlobalAveragePool"): (0,),
    ("ai.onnx", "MaxPool"): (0,),
    ("com.microsoft", "QLinearConcat"): (),  # every (X, scale, zero point) triple's X, after Y's scale and zero point
}
_EIGHT_BIT = ("tensor(uint8)", "tensor(int8)")


def _layout_inputs(n: NodeRef) -> tuple[int, ...] | None:
    """The inputs a Transpose is pushed through n by (its handler's transposible inputs), None: no handler."""
    got = _HANDLERS.get((n.domain, n.op_type))
    if got == ():
        return tuple(range(2, len(n.inputs), 3))
    return got


def apply(pl: Placement, index: GraphIndex, opt: Optimized | None) -> None:
    """The channels-last QLinearConv nodes and the Transposes left around them, added to pl.created."""
    if not index.by_op.get("QLinearConv"):
        return
    for scope in index.scopes:
        if scope.is_function:
            continue
        _Regions(pl, scope, opt).run()


class _Regions:
    def __init__(self, pl: Placement, scope: GraphScope, opt: Optimized | None):
        self.pl, self.scope, self.opt = pl, scope, opt
        self.resolve = opt.resolve if opt is not None else (lambda v: v)
        self.removed = opt.removed if opt is not None else {}

    def _on_cpu(self, n: NodeRef) -> bool:
        p = self.pl.nodes.get(n.index)
        return p is not None and p.ep == CPU and p.status not in ("folded", "eliminated", "expanded")

    def _convertible(self, n: NodeRef) -> bool:
        """NhwcConvLookup: a CPU QLinearConv of an 8-bit input whose rank is known, not channels-last already."""
        if n.op_type != "QLinearConv" or n.domain not in ("ai.onnx", "com.microsoft") or not n.inputs or not self._on_cpu(n):
            return False
        x = n.inputs[0]
        vt = self.scope.type_of(x)
        if (vt.type_str or node_args.ort_type_str(self.scope, x)) not in _EIGHT_BIT or n.attr("channels_last"):
            return False
        # ORT infers every node's output rank (its contrib ops' too, where onnx's inference stops): only a graph
        # input declared without a shape has none
        return vt.shape is not None or self.scope.producer_of(x) is not None

    def _readers(self, value: str) -> list[NodeRef]:
        return [r for r in self.scope.consumers.get(value, ()) if r.index not in self.removed]

    def _rank(self, value: str) -> int:
        """EstimateValueRank: the dims other than 1 (an unknown one counts), 5 when the shape is unknown."""
        shape = self.scope.type_of(value).shape
        return 5 if shape is None else sum(1 for d in shape if d != 1)

    def run(self) -> None:
        nodes = [n for n in self.scope.nodes if n.index not in self.removed and not (n.op_type == "Constant" and n.domain == "ai.onnx")]
        convs = [n for n in nodes if self._convertible(n)]
        if not convs:
            return
        region = {n.index for n in convs}
        leading = self._leading_to_transpose(nodes, region)
        for n in nodes:  # OptimizeImpl: in order, push the Transposes a node reads through it when that pays
            if n.index in region or not self._on_cpu(n):
                continue
            inputs = _layout_inputs(n)
            if inputs is None or not n.outputs:
                continue
            layout = [n.inputs[i] for i in inputs if i < len(n.inputs) and n.inputs[i]]
            from_region = [v for v in layout if self._producer_in(v, region)]
            if not from_region:
                continue
            cost = -sum(self._rank(v) for v in from_region)
            cost += sum(self._rank(v) for v in layout if v not in from_region and not self._constant(v))
            if not (n.op_type == "MaxPool" and n.domain == "ai.onnx") and not any(o in leading for o in n.outputs if o):
                cost += max(self._rank(o) for o in n.outputs if o)
            if cost < 0 or (n.op_type == "MaxPool" and n.domain == "ai.onnx" and len(from_region) == len(layout)):
                region.add(n.index)
        self._record(nodes, convs, region)

    def _producer_in(self, value: str, region: set[int]) -> bool:
        p = self.scope.producer.get(self.resolve(value))
        return p is not None and p.index in region

    def _constant(self, value: str) -> bool:
        v = self.resolve(value)
        return self.scope.constant(v) is not None or (self.opt is not None and v in self.opt.constants)

    def _leading_to_transpose(self, nodes: list[NodeRef], convs: set[int]) -> set[str]:
        """outputs_leading_to_transpose, on the graph with the convolutions wrapped: the values a converted
        convolution reads (through its input Transpose), and, backwards, the layout inputs of a node with a handler
        whose output leads to one."""
        leading: set[str] = set()
        for n in reversed(nodes):
            if n.index in convs:
                leading.add(self.resolve(n.inputs[0]))
                continue
            inputs = _layout_inputs(n)
            if inputs is not None and any(o in leading for o in n.outputs if o):
                leading.update(self.resolve(n.inputs[i]) for i in inputs if i < len(n.inputs) and n.inputs[i])
        return leading

    def _record(self, nodes: list[NodeRef], convs: list[NodeRef], region: set[int]) -> None:
        for k, n in enumerate(convs):
            self.pl.created.append(CreatedNode(f"{n.name}_token_{k}", "QLinearConv", "com.microsoft", CPU, NAME, n,
                                               "the channels-last QLinearConv ORT's NhwcTransformer puts in its place",
                                               replaces=True))
        entering: dict[str, NodeRef] = {}
        leaving: dict[str, NodeRef] = {}
        for n in nodes:
            if n.index not in region:
                continue
            inputs = (0,) if n.op_type == "QLinearConv" else _layout_inputs(n)
            for i in inputs or ():
                v = self.resolve(n.inputs[i]) if i < len(n.inputs) and n.inputs[i] else ""
                if v and not self._producer_in(v, region) and not self._constant(v):
                    entering.setdefault(v, n)
            for o in n.outputs:
                if o and (o in self.scope.outputs or any(r.index not in region for r in self._readers(o))):
                    leaving.setdefault(o, n)
        for what, values in (("into", entering), ("out of", leaving)):
            for v, n in values.items():
                self.pl.created.append(CreatedNode("Transpose", "Transpose", "ai.onnx", CPU, NAME, n,
                                                   f"the Transpose of {v} {what} the channels-last region ORT's "
                                                   "NhwcTransformer makes around its QLinearConv nodes"))
