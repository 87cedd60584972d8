"""Whether a fixable finding's fix could be written: `--fix` writes a safe fix only once its numeric check ran both
models on ORT's CPU provider (fixers.equivalence), so a model that provider cannot run never gets one, whatever the
fixer. A finding is marked fixable only where the check can run, and its hint says why not elsewhere.

The check cannot run a model (ORT 1.24.4, measured) where the lint's CPU placement (`ort-cpu`, the kernel tables of
the target release) finds a node with no CPU kernel that the fix does not replace (a node of the findings it fixes),
or where a graph input is of an element type NumPy cannot hand ORT ("Numpy_type 256 can't be converted to
MLDataType": bfloat16, float8, int4) or an output one ORT cannot hand back ("No corresponding Numpy type for Tensor
Type. bfloat16": the same but float8e4m3fn). A fixer that moves stored bytes only (Fixer.storage_only) is written
unrun there, and an unsafe one is never run: their findings keep the marker. Nothing is computed unless a finding
names a safe fixer that is not storage-only, so a lint of an ordinary model pays nothing."""

from __future__ import annotations

from typing import Any

from onnx import TensorProto

# the element types the check's inputs cannot be or its outputs cannot be read as (onnxruntime 1.24.4's Python API)
_UNREADABLE = {TensorProto.BFLOAT16: "bfloat16", TensorProto.FLOAT8E4M3FNUZ: "float8e4m3fnuz",
               TensorProto.FLOAT8E5M2: "float8e5m2", TensorProto.FLOAT8E5M2FNUZ: "float8e5m2fnuz",
               TensorProto.INT4: "int4", TensorProto.UINT4: "uint4"}
_UNFEEDABLE = {**_UNREADABLE, TensorProto.FLOAT8E4M3FN: "float8e4m3fn"}  # that one comes back as uint8
# the fixers that convert every node to another opset (onnx's version converter): a node with no CPU kernel at its
# version may have one after, so only the graph's inputs and outputs say the check cannot run
_WHOLE_MODEL = frozenset({"upgrade-opset", "gridsample-standard"})


def withhold_unverifiable(findings: list[Any], ctx: Any) -> None:
    """Unmark the fixable findings whose safe, not storage-only fix --fix could never write on this model (the
    numeric check cannot run it on ORT CPU), their hint saying why."""
    from onnxlint.fixers.base import REGISTRY, Applicability
    from onnxlint.model.locations import node_location

    def checked(f: Any) -> bool:
        fx = REGISTRY.loaded(f.fix) if f.fix else None
        return fx is not None and fx.applicability is Applicability.SAFE and not fx.storage_only

    claimed = [f for f in findings if checked(f)]
    if not claimed:
        return
    why = _io_blocker(ctx.index.model.graph)
    if why is None and not any(f.fix in _WHOLE_MODEL for f in claimed):
        folds = any(f.fix == "fold-shapes" for f in claimed)
        why = _kernel_blocker(ctx, {str(node_location(f.node)) for f in claimed if f.node}, folds)
    if why is None:
        return
    for f in claimed:
        f.hint = f"not fixed by --fix: it checks {f.fix}'s fix on ORT CPU, which cannot run this model ({why})"
        f.fix = None


# the element types the CPU EP has kernels for almost everywhere: a model of these alone, all in ONNX's own domain, is
# not given the CPU prediction (+35% of a lint of a 100k-node float model whose 6,667 findings fold-shapes fixes)
_COMMON = frozenset({"float", "int64", "int32", "bool", "int8", "uint8", None})


def _may_lack_a_cpu_kernel(index: Any) -> bool:
    """Whether a node is of a domain other than ONNX's or a value of an element type besides _COMMON (float16,
    bfloat16, float8, int4 ...): where the CPU EP's kernels have gaps."""
    if any(vt.dtype not in _COMMON for scope in index.scopes for vt in scope.types.values()):
        return True
    return any(n.domain not in ("", "ai.onnx") for n in index.nodes)


def _io_blocker(graph: Any) -> str | None:
    """A graph input the check cannot feed or an output it cannot read (no safe fixer changes them), or None."""
    stored = None
    for vi in graph.input:
        name = _UNFEEDABLE.get(vi.type.tensor_type.elem_type) if vi.type.HasField("tensor_type") else None
        if name and stored is None:
            stored = {t.name for t in graph.initializer}
        if name and stored is not None and vi.name not in stored:
            return f"graph input '{vi.name}' is {name}, which the check cannot feed from NumPy"
    for vi in graph.output:
        name = _UNREADABLE.get(vi.type.tensor_type.elem_type) if vi.type.HasField("tensor_type") else None
        if name:
            return f"graph output '{vi.name}' is {name}, which ORT's Python API cannot hand back"
    return None


def _kernel_blocker(ctx: Any, replaced: set[str], folds: bool = False) -> str | None:
    """A node of the model ORT's CPU EP has no kernel for (the lint's ort-cpu placement) that the fixes leave in
    place, or None. replaced: the locations of the nodes the fixes rewrite (a training-mode Dropout with no CPU
    kernel becomes an Identity); folds: fold-shapes is among them, which replaces a constant node by its value."""
    if not _may_lack_a_cpu_kernel(ctx.index):
        return None
    from onnxlint.targets import ort

    try:
        if not ctx.predicted("ort-cpu") and ctx.options.ort_optimization != "disabled" \
                and _unsupported(ort.simulate(ctx, "ort-cpu", "disabled"), replaced, folds) is None:
            # a pre-test without the optimizer passes, most of a placement's cost (a JSON lint of a 100k-node model
            # with one float16 value: +40 % with the `all` placement alone, +4 % with this first): ORT's CPU fusions
            # make nodes the CPU EP has a kernel for, so a node without one at `all` has none at `disabled` either
            # (a fusion that would make one is missed: the marker stays, as before)
            return None
        return _unsupported(ctx.prediction("ort-cpu"), replaced, folds)
    except Exception:  # no prediction: claim nothing new
        return None


def _unsupported(placement: Any, replaced: set[str], folds: bool = False) -> str | None:
    """The first node placement gives no CPU kernel that is not in replaced, nor (folds) a constant fold-shapes
    computes away, said; None for a refused model (a fix may be what lifts the refusal: equal-cast, upgrade-opset).
    A bfloat16 Sqrt of a shape chain is folded into an initializer: the fixed model runs on CPU, the check runs it
    alone (the original cannot run), and --fix writes the fold."""
    if placement.refused:
        return None
    from onnxlint.fixers.fold_shapes import CONST, _state

    for node in placement.by_status(with_common=False).get("unsupported", ()):
        if node.location in replaced:
            continue
        outs = [o for o in node.outputs if o] if folds else []
        if outs and all(_state(node.scope, o) == CONST for o in outs):
            continue
        verdict = placement.get(node)
        detail = f": {verdict.detail}" if verdict is not None and verdict.detail else ""
        label = f" '{node.name}'" if node.name else ""
        return f"no CPU kernel for {node.op_type}-{node.opset}{label}{detail}"
    return None
