"""What the parser was measured doing beyond accepting or rejecting a single node (tools/gen_trt_behaviour.py, the
table's `behaviour`): inputs and attributes it ignores, the types it builds where the model declares others, If
branches it counts differently. Each check applies where the table says the version behaves so, never by version."""

from __future__ import annotations

from onnxlint.model.graph import NodeRef, dtype_name, small_array
from onnxlint.ort import schema_registry
from onnxlint.tensorrt.control_flow import constant_branch_output
from onnxlint.tensorrt.node_facts import NodeCheck, Signature, dtype_of, made_dtype, rank
from onnxlint.tensorrt.verdicts import Verdict

AXES_MAX_ELEMENTS = 64  # an axes input is read up to this many values (a tensor has fewer dims)
REDUCE_AXES_INPUT_SINCE = 18  # the Reduce ops' op version that takes `axes` as an input (onnx's, not TensorRT's)


def shape_start_end(c: NodeCheck) -> Verdict | None:
    """Shape's start/end ignored: the node gets every dim where the model takes a slice."""
    if c.op != "Shape" or c.behaviour.get("shape_start_end") != "ignored":
        return None
    sliced = shape_slice(c.node)
    if not sliced:
        return None
    # the parser accepts the node (measured): what it does is build another shape, never a rejection of this node
    return ("restricted", "other-shapes", f"{c.who} ignores Shape's start/end (measured: "
            f"{c.behaviour.get('shape_start_end_probe')}): this node gives all {sliced[0]} dims where the model takes dims "
            f"{sliced[1]}:{sliced[2]}, so the shapes computed from it differ from the model's (a later node is then "
            "rejected or crashes the parser, or the engine computes other shapes)")


def reduce_axes_input(c: NodeCheck) -> Verdict | None:
    """A Reduce node's axes input ignored: every axis is reduced where the model names some."""
    sv = c.since_version
    if (c.behaviour.get("reduce_axes_input") or {}).get(c.op) != "ignored" or sv is None or sv < REDUCE_AXES_INPUT_SINCE:
        return None
    partial = partial_axes(c.node)
    if not partial:
        return None
    why = (f"{c.who} ignores {c.op}-{sv}'s axes input and reduces every axis (measured: "
           f"{c.behaviour.get('reduce_axes_input_probe')}); here axes {partial} of a rank-{rank(c.node, 0)} input")
    keepdims = c.node.attr("keepdims")
    if keepdims is None or keepdims:  # same rank, broadcasts on: the parse goes through, the values differ
        return ("restricted", "ignored-input", f"{why}: the engine computes one value over the whole tensor where "
                "the model reduces those axes (keepdims=1 keeps the shape, so nothing fails)")
    return ("restricted", "other-shapes", f"{why}, so the output's rank differs from the model's (a later node is then "
            "rejected, or the engine computes other shapes)")


def mixed_float_inputs(c: NodeCheck) -> Verdict | None:
    """A Cast whose `to` contradicts its declared output type, met by another type in an element-wise layer."""
    if c.op != "Cast" or c.behaviour.get("mixed_float_inputs") != "reject":
        return None
    mixed = cast_contradicts(c.node, c.sig)
    if not mixed:
        return None
    return ("unsupported", "dtype", f"Cast makes {mixed[0]} where the model declares its output {mixed[1]}; {c.who} "
            f"builds {mixed[0]} and rejects the element-wise layer that meets it with {mixed[2]} (measured on "
            "Add(float16, float))")


def if_constant_output(c: NodeCheck) -> Verdict | None:
    """An If branch returning a constant beside computed outputs."""
    if c.op != "If" or c.behaviour.get("if_constant_output") != "reject":
        return None
    mixed_branch = constant_branch_output(c.node)
    if not mixed_branch:
        return None
    return ("unsupported", "control-flow", f"{mixed_branch}; {c.who} rejects that (measured: "
            f"{c.behaviour.get('if_constant_output_probe')})")


def partial_axes(node: NodeRef) -> list[int] | None:
    """The constant axes input of a Reduce node when it names fewer than all axes of an input of known rank."""
    if len(node.inputs) < 2 or not node.inputs[1]:
        return None
    r = rank(node, 0)
    t = node.scope.constant(node.inputs[1])
    if r is None or t is None:
        return None
    got = small_array(node.scope, t, AXES_MAX_ELEMENTS)
    try:
        axes = [int(a) for a in got.reshape(-1)] if got is not None else []
    except (TypeError, ValueError):
        return None
    if not axes:
        return None
    return axes if {a % r for a in axes} != set(range(r)) else None


def shape_slice(node: NodeRef) -> tuple[int, int, int] | None:
    """(rank, start, end) when a Shape-15+ node's start/end take fewer dims than its input has (rank known)."""
    start, end = node.attr("start"), node.attr("end")
    if start is None and end is None:
        return None
    r = rank(node, 0)
    if r is None:
        return None
    s = 0 if start is None else (start + r if start < 0 else start)
    e = r if end is None else (end + r if end < 0 else end)
    s, e = min(max(s, 0), r), min(max(e, 0), r)
    return (r, s, e) if (s, e) != (0, r) else None


def cast_contradicts(node: NodeRef, sig: Signature) -> tuple[str, str, str] | None:
    """(made, declared, other) when a Cast's `to` differs from the type the model declares for its output and a
    consumer's type parameter binds that output together with an input of another type: onnxconverter_common's
    float16 conversion leaves Casts to float declared float16 (ORT refuses such a model too: OLX007)."""
    other = cast_to_other_type(node, sig)
    if other is None:
        return None
    made, declared = other
    out = node.outputs[0]
    for user in node.scope.consumers.get(out, ()):
        fp = schema_registry.formal_params(user.op_type, user.opset, user.domain) if user.domain == "ai.onnx" else None
        if not fp:
            continue
        formals = fp[0]
        params = [formals[min(i, len(formals) - 1)][1] if formals else None for i in range(len(user.inputs))]
        for i, name in enumerate(user.inputs):
            if name != out:
                continue
            for j, other in enumerate(user.inputs):
                if j != i and other and params[j] == params[i]:
                    theirs = made_dtype(user, j)
                    if theirs and theirs != made:
                        return made, declared, theirs
    return None


def cast_to_other_type(node: NodeRef, sig: Signature) -> tuple[str, str] | None:
    """(made, declared) where a Cast's `to` is a type other than the one the model declares for its output, else
    None: cast_contradicts reads the Cast's consumers only then (model_importer keys the other Casts' verdicts
    without the node)."""
    to = node.attr("to")
    made = dtype_name(to) if isinstance(to, int) else None
    declared = dtype_of(sig[4][0]) if sig[4] else None
    if not made or not declared or made == declared or not node.outputs:
        return None
    return made, declared


# in the order they are asked, after the table's own checks (builtin_op_checks.CHECKS)
CHECKS = (shape_start_end, reduce_axes_input, mixed_float_inputs, if_constant_output)
