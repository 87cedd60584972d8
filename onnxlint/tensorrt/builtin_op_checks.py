"""Per-node checks of an op whose importer the parser has, in the spirit of onnx-tensorrt's
builtin_op_static_checkers.cpp: what the support table's row says the importer rejects.

A parser-verified row (tools/gen_trt_support.py) is asked in the order of `CHECKS`, the first rejection wins;
a docs-only row (onnx-tensorrt's matrix) knows one type list and a restriction text (`verdict_docs`).
"""

from __future__ import annotations

from typing import Any, Callable

from onnxlint.model.graph import NodeRef
from onnxlint.ort import schema_registry
from onnxlint.tensorrt import behaviour, control_flow, quantization
from onnxlint.tensorrt.node_facts import (
    NodeCheck,
    Signature,
    bindings,
    constant_value,
    dtype_class,
    dtype_of,
    input_ranks,
    is_constant,
    norm,
    primary_param,
)
from onnxlint.tensorrt.tables import Table, docs_table
from onnxlint.tensorrt.verdicts import SUPPORTED, Verdict
from onnxlint.tensorrt.versions import describe

Row = dict[str, Any]  # an op's row of a support table


def op_version(c: NodeCheck) -> Verdict | None:
    """The importer rejects this op version."""
    sv = c.since_version
    if sv is not None and sv in c.row.get("bad_versions", ()):
        return "unsupported", "op-version", f"{c.who} rejects {c.op}-{sv} (opset {c.node.opset})"
    return None


def dtypes(c: NodeCheck) -> Verdict | None:
    """A type parameter bound to a dtype the importer rejects (for Cast and CastLike: a type it cannot cast)."""
    types = c.row.get("types") or {}
    for param, uses in c.binds.items():
        spec = types.get(param) or {}
        no, const_ok = set(spec.get("no", ())), set(spec.get("const_ok", ()))
        for kind, i, d in uses:
            if d not in no:
                continue
            if d in const_ok and all(k == "out" or is_constant(c.node, c.node.inputs[j]) for k, j, dd in uses if dd == d):
                continue  # accepted when the inputs it binds are initializers
            if not spec.get("ok") and _matrix_lists(c, d):
                continue
            if c.op in ("Cast", "CastLike"):
                side = "from" if param == "T1" else "to"
                return "unsupported", "cast-type", f"{c.who} cannot {c.op} {side} {d}"
            what = f"input {i}" if kind == "in" else f"output {i}"
            ok = spec.get("ok") or []
            return ("unsupported", "dtype", f"{c.op} with {param}={d} ({what}) is rejected by {c.who}"
                    + (f" (accepted: {', '.join(ok)})" if ok else ""))
    return None


def _matrix_lists(c: NodeCheck, d: str | None) -> bool:
    """No probe of this parameter was accepted at all (QuantizeLinear on 8.4/8.6: every probe failed for another
    reason), so the failures do not show the dtype is the cause, and the version's matrix lists it (for
    QuantizeLinear, its quantized output type too, as the matrix lists it for DequantizeLinear's input: int8):
    not an error."""
    quantized = dtype_of(c.sig[4][0]) if c.sig[4] else None
    return _docs_lists_type(c.table, c.ver, c.op, d) and (
        c.op != "QuantizeLinear" or _docs_lists_type(c.table, c.ver, "DequantizeLinear", quantized))


def absent_inputs(c: NodeCheck) -> Verdict | None:
    """An input the importer rejects when given."""
    for i in c.row.get("absent_inputs", ()):
        if c.given(i):
            return "unsupported", "attribute", f"{c.who} rejects {c.op} with input {i} given (e.g. Pad axes on 8.x)"
    return None


def _first_dtype(c: NodeCheck) -> str | None:
    """The first dtype the node binds: the key of the rows' per-dtype lists."""
    return next((d for uses in c.binds.values() for _, _, d in uses if d), None)


def constant_inputs(c: NodeCheck) -> Verdict | None:
    """Inputs the importer reads as weights (for some dtypes only), computed at run time here."""
    first = _first_dtype(c)
    must = list(c.row.get("const_inputs", ())) + list((c.row.get("const_inputs_by_dtype") or {}).get(first or "", ()))
    for i in sorted(set(must)):
        if c.given(i) and not is_constant(c.node, c.node.inputs[i]):
            why = f" on {first}" if i not in c.row.get("const_inputs", ()) else ""
            return ("unsupported", "constant-input",
                    f"{c.who} needs input {i} of {c.op}{why} as an initializer or Constant; here it is computed at run time")
    return None


def network_inputs(c: NodeCheck) -> Verdict | None:
    """Inputs the importer rejects as network (graph) inputs, except at a dtype the parser took one at (OneHot's
    depth: a float network input is rejected, an int64 one is taken)."""
    first = _first_dtype(c)
    no_gi = list(c.row.get("no_graph_inputs", ())) + list((c.row.get("no_graph_inputs_by_dtype") or {}).get(first or "", ()))
    node = c.node
    ok = c.row.get("network_input_dtypes_ok") or {}
    for i in sorted(set(no_gi)):
        if ok and i < len(c.sig[3]) and dtype_of(c.sig[3][i]) in ok.get(str(i), ()):
            continue
        if c.given(i) and node.scope.parent is None and node.scope.is_graph_input(node.inputs[i]):
            return ("unsupported", "constant-input",
                    f"{c.who} rejects input {i} of {c.op} as a network input (an initializer or a value computed in the graph is accepted)")
    return None


def input_values(c: NodeCheck) -> Verdict | None:
    """A flag input the importer reads (it needs weights), at a value it rejects (training mode)."""
    for lim in c.row.get("input_value_limits", ()):
        i = lim["input"]
        if not c.given(i):
            continue
        if not is_constant(c.node, c.node.inputs[i]):
            return ("unsupported", "constant-input",
                    f"{c.who} needs input {i} of {c.op} as an initializer or Constant; here it is computed at run time")
        val = constant_value(c.node, c.node.inputs[i])
        if val is not None and bool(val) == lim["value"]:
            return "unsupported", "attribute", f"{c.who} rejects {c.op} with input {i} = {lim['value']} (e.g. training mode)"
    return None


def attributes(c: NodeCheck) -> Verdict | None:
    """An attribute value the importer rejects (the schema's default when the attribute is left out)."""
    node = c.node
    for lim in c.row.get("attr_limits", ()):
        if _attr_limit_hits(c, lim):
            val = node.attr(lim["attr"])
            val = schema_registry.attribute_default(c.op, node.opset, node.domain, lim["attr"]) if val is None else val
            return "unsupported", "attribute", f"{c.who} rejects {c.op} with {lim['attr']}={norm(val)}"
    return None


def _attr_limit_hits(c: NodeCheck, lim: dict[str, Any]) -> bool:
    node = c.node
    if lim.get("absent") and node.has_attr(lim["attr"]):
        return False  # the parser only fails when the attribute is left out
    v = node.attr(lim["attr"])
    if v is None:
        v = schema_registry.attribute_default(node.op_type, node.opset, node.domain, lim["attr"])
    if v is None:
        return False
    want, got = norm(lim["value"]), norm(v)
    if got != want:
        # a non-unit dilation (or stride-like list) is rejected whatever its value when one was
        if not (lim["attr"] == "dilations" and isinstance(got, list) and any(x != 1 for x in got)):
            return False
    for param, dts in (lim.get("when") or {}).items():
        have = {d for _, _, d in c.binds.get(param, ()) if d}
        if have and not ({dtype_class(d) for d in have} & {dtype_class(d) for d in dts}):
            return False
    return True


def _listed_ranks(c: NodeCheck, key: str) -> list[int | None] | None:
    """The node's input ranks (scalars left out) when the row lists them under key, else None."""
    listed = c.row.get(key)
    if listed:
        sig_r = input_ranks(c.node)
        if None not in sig_r and sig_r in listed:
            return sig_r
    return None


def ranks(c: NodeCheck) -> Verdict | None:
    """Input ranks the importer rejects."""
    sig_r = _listed_ranks(c, "bad_ranks")
    return None if sig_r is None else ("unsupported", "attribute", f"{c.who} rejects {c.op} on inputs of rank {sig_r}")


def outputs(c: NodeCheck) -> Verdict | None:
    """More outputs than the importer produces."""
    mo = c.row.get("max_outputs")
    n_out = sum(1 for o in c.node.outputs if o)
    if mo is not None and n_out > mo:
        return "unsupported", "outputs", f"{c.who} imports {c.op} with {mo} output(s) only; this node has {n_out}"
    return None


def crash_ranks(c: NodeCheck) -> Verdict | None:
    """Input ranks at which the parser crashed when probed: a warning, not a rejection."""
    sig_r = _listed_ranks(c, "crash_ranks")
    return None if sig_r is None else (
        "restricted", "parser-crash", f"{c.who}'s parser crashed on {c.op} with inputs of rank {sig_r} when probed")


def control_flow_check(c: NodeCheck) -> Verdict | None:
    return control_flow.check(c.node, c.ver)


# A parser-verified row's checks, in the order they are asked; the first rejection is the node's verdict.
CHECKS: tuple[Callable[[NodeCheck], Verdict | None], ...] = (
    op_version,         # the importer refuses the op version before it looks at anything else
    quantization.qdq,   # a probed Q/DQ pattern: the probe's verdict, and nothing after it
    dtypes,             # then each type parameter's binding
    absent_inputs,      # an input that must not be given
    constant_inputs,    # inputs read as weights
    network_inputs,     # inputs that must not be network inputs
    input_values,       # flag inputs at a rejected value
    attributes,         # attribute values
    ranks,              # input ranks
    outputs,            # output count
    crash_ranks,        # a crash when probed: a warning, after every rejection
    *behaviour.CHECKS,  # measured behaviour beyond the single-node probes
    control_flow_check,  # If branch ranks, Loop scan outputs
)


def verdict_verified(node: NodeRef, sig: Signature, table: Table, ver: str, row: Row) -> Verdict:
    c = NodeCheck(node, sig, table, ver, row)
    for check in CHECKS:
        verdict = check(c)
        if verdict is not None:
            return verdict
    return SUPPORTED


def _effective(dtype: str | None, table: Table) -> str | None:
    """Docs-only tables: what the parser turns a dtype into before the matrix's type list applies."""
    if dtype == "int64" and table.get("casts_int64"):
        return "int32"  # the matrix says this parser casts INT64 weights and tensors down to INT32
    if dtype == "double":
        return "float"  # every listed release casts DOUBLE down to FLOAT
    return dtype


def verdict_docs(node: NodeRef, sig: Signature, table: Table, ver: str, row: Row) -> Verdict:
    who = describe(ver)
    binds = bindings(node, sig)
    param = primary_param(node, binds)
    if param and row["types"] and node.op_type not in ("Cast", "CastLike", "Shape", "Size"):
        for _, _, d in binds[param]:
            dtype = _effective(d, table)
            if dtype and dtype not in row["types"]:
                return ("unsupported", "dtype",
                        f"{node.op_type} on {dtype} is not supported by {who} (matrix: {', '.join(row['types'])})")
    if row["restrictions"]:
        return "restricted", "matrix-restriction", row["restrictions"]
    return control_flow.check(node, ver) or SUPPORTED


def _docs_lists_type(table: Table, ver: str, op: str, dtype: str | None) -> bool:
    docs = docs_table(table.get("docs_restrictions_from") or ver)
    row = (docs or {}).get("ops", {}).get(op) or {}
    return bool(row.get("supported")) and dtype in (row.get("types") or ())
