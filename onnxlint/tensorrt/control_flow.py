"""If and Loop as the parser imports them (onnx-tensorrt's ConditionalHelpers.cpp, the Loop importer): branch
outputs that must agree, scan outputs that need a static length."""

from __future__ import annotations

from typing import Any

from onnxlint.model.graph import NodeRef
from onnxlint.tensorrt import versions
from onnxlint.tensorrt.node_facts import is_constant
from onnxlint.tensorrt.verdicts import Verdict


def check(node: NodeRef, ver: str) -> Verdict | None:
    """If branches whose outputs differ in rank; Loop scan outputs with a run-time trip count."""
    if node.op_type == "If":
        return _branch_ranks(node, ver)
    if node.op_type == "Loop":
        return _scan_outputs(node)
    return None


def _branch_ranks(node: NodeRef, ver: str) -> Verdict | None:
    """Branch outputs of different ranks: the line's row says whether its conditional layer rejects them."""
    then_g = next((a.g for a in node.proto.attribute if a.name == "then_branch"), None)
    else_g = next((a.g for a in node.proto.attribute if a.name == "else_branch"), None)
    if then_g is None or else_g is None:
        return None
    for k, (a, b) in enumerate(zip(_graph_output_ranks(then_g), _graph_output_ranks(else_g))):
        if a is not None and b is not None and a != b:
            line = versions.line_of(ver)
            status = "unsupported" if line.if_branch_ranks_must_match else "restricted"
            why = (f"TensorRT {line.name}'s conditional needs equal shapes" if status == "unsupported" else
                   f"onnx-tensorrt documents equal ranks for conditional outputs (the {line.name}-line parser accepted it "
                   "when measured)")
            return (status, "control-flow", f"output {k} is rank {a} in then_branch but rank {b} in else_branch; {why}")
    return None


def _scan_outputs(node: NodeRef) -> Verdict | None:
    n_carried = max(len(node.inputs) - 2, 0)
    n_scan = sum(1 for o in node.outputs[n_carried:] if o)
    if n_scan:
        m = node.inputs[0] if node.inputs else ""
        if not m or not is_constant(node, m):
            return ("restricted", "control-flow",
                    f"{n_scan} scan output(s) and the trip count is {'absent' if not m else 'computed at run time'}; "
                    "TensorRT needs a static scan-output length")
    return None


def _graph_output_ranks(g: Any) -> list[int | None]:
    out: list[int | None] = []
    for vi in g.output:
        t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        out.append(len(t.shape.dim) if t is not None and t.HasField("shape") else None)
    return out


def constant_branch_output(node: NodeRef) -> str | None:
    """A branch returning a Constant's output (or an initializer) beside a computed output: the parser takes the
    constant as weights, not as a layer output, and counts fewer branch outputs than the other branch has."""
    for a in node.proto.attribute:
        if a.name not in ("then_branch", "else_branch"):
            continue
        made = {o: n.op_type for n in a.g.node for o in n.output}
        inits = {t.name for t in a.g.initializer}
        const = [o.name for o in a.g.output if o.name in inits or made.get(o.name) == "Constant"]
        if const and any(made.get(o.name) not in (None, "Constant") for o in a.g.output):
            return (f"{a.name} returns {len(const)} constant(s) ({const[0]}{', ...' if len(const) > 1 else ''}) beside "
                    "computed outputs")
    return None
