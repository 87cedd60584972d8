"""TensorRT's ONNX parser: per-node verdicts from support tables.

Two kinds of table live in onnxlint/data/tensorrt/:

* parser-verified (`trt-<version>.json`, `"verified": "parser"`): measured by tools/gen_trt_support.py, which
  probes the real parser (TensorRT 8.4/8.5/8.6; TensorRT-RTX 1.4 for the 10.x line) with single-node models
  per op x op version x dtype per formal type parameter x constant-or-graph-input per input x attributes.
  Per op: whether it has an importer, the op versions it rejects, accepted/rejected dtypes per type parameter,
  inputs that must be initializers (or Constant outputs), attribute values it rejects, the number of outputs
  it accepts.
* docs-only (`docs/trt-<version>.json`, `"verified": "docs"`): onnx-tensorrt's docs/operators.md matrix
  (tools/gen_trt_tables.py), for versions whose parser cannot run here (10.0, 10.1). Their restriction texts
  are also carried into the verified tables as detail.

Versions are compared as packaging versions. The TensorRT-RTX parser's table is labelled `10.1+rtx1.4`: a
10.x-line parser newer than 10.1's docs; TensorRT versions after 10.1 resolve to it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from packaging.version import InvalidVersion, Version

from onnxlint import resources, schemas
from onnxlint.graph import STANDARD_DOMAINS, GraphIndex, NodeRef, StatusIndex

# the vocabulary of verdicts rules may name (`tensorrt: {status: ..., reason: ...}`)
STATUSES = ("supported", "restricted", "unsupported")
REASONS = (
    "plugin",              # non-ONNX domain: needs a plugin registered under the op name
    "not-listed",          # op not in the table at all
    "not-supported",       # the parser has no importer for the op
    "op-version",          # the importer rejects this op version (opset)
    "dtype",               # a type parameter bound to a dtype the importer rejects
    "cast-type",           # Cast/CastLike to or from a type the parser rejects
    "constant-input",      # an input the importer needs as an initializer / Constant is computed at run time
    "attribute",           # an attribute value the importer rejects
    "outputs",             # more outputs than the importer produces (e.g. LayerNormalization Mean/InvStdDev)
    "control-flow",        # If branches of different output ranks, Loop scan outputs with a run-time trip count
    "parser-crash",        # an op at input ranks that crashed the parser when probed (status restricted: a warning)
    "matrix-restriction",  # supported, with a restriction text in onnx-tensorrt's matrix (status restricted)
    "ignored-input",       # the parser accepts the node but ignores an input (ReduceX-18 axes on 8.6): other values
                           # (status restricted: OLX316)
    "ort-op",              # an op only ONNX Runtime defines, which the parser does not import: the model was
                           # prepared for ORT (reported once per model, OLX314/OLX315)
)

TRT_TYPES = {"FP32": "float", "FLOAT32": "float", "FP16": "float16", "FLOAT16": "float16", "BF16": "bfloat16",
             "BFLOAT16": "bfloat16", "INT32": "int32", "INT64": "int64", "INF64": "int64", "INT8": "int8",
             "UINT8": "uint8", "BOOL": "bool", "FP8": "float8e4m3fn", "INT4": "int4", "DOUBLE": "double"}
_ROW = re.compile(r"^\|\s*([A-Za-z][\w]*)\s*\|\s*([YN])\s*\|?(.*)$")
RTX_LABEL = re.compile(r"\+rtx")


def parse_operators_md(text: str) -> dict:
    """onnx-tensorrt docs/operators.md -> {'opset_range', 'data_types', 'ops': {op: {supported, types, restrictions}}}."""
    ops: dict[str, dict] = {}
    opset = re.search(r"opset (\d+) to opset (\d+)", text, re.I) or re.search(r"up to Opset (\d+)", text, re.I)
    lo, hi = (int(opset.group(1)), int(opset.group(2))) if opset and opset.lastindex == 2 else (7, int(opset.group(1)) if opset else None)
    types_line = re.search(r"supports the following ONNX data types: ([^\n]+)", text)
    listed = re.split(r",|and", types_line.group(1).rstrip(".")) if types_line else []
    data_types = sorted({TRT_TYPES[t.strip().upper()] for t in listed if t.strip().upper() in TRT_TYPES})
    casts_int64 = bool(re.search(r"cast down INT64 to INT32", text))
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m or m.group(1) == "Operator":
            continue
        op, flag, rest = m.group(1), m.group(2), m.group(3)
        cells = [c.strip() for c in rest.split("|")]
        types = [TRT_TYPES[t.strip().upper()] for t in (cells[0].split(",") if cells else []) if t.strip().upper() in TRT_TYPES]
        restriction = " ".join(c for c in cells[1:] if c).strip()
        ops[op] = {"supported": flag == "Y", "types": types, "restrictions": restriction.replace("<br />", " ").replace("<br/>", " ")}
    return {"opset_min": lo, "opset_max": hi, "data_types": data_types, "casts_int64": casts_int64, "ops": ops}


# ------------------------------------------------------------------------------------------------ the tables


def version_key(label: str) -> Version:
    """A table label as a packaging version ('10.1+rtx1.4' sorts after '10.1')."""
    return Version(label)


def _sort_key(label: str) -> tuple:
    v = version_key(label)
    return (v.release[0], 1 if v.local else 0, v.release, v.local or "")


@lru_cache(maxsize=None)
def _paths() -> dict[str, Any]:
    base = resources.data_dir() / "tensorrt"
    found: dict[str, Any] = {}
    for p in sorted((base / "docs").glob("trt-*.json")):
        found[p.name[4:-5]] = p
    for p in sorted(base.glob("trt-*.json")):  # parser-verified tables win over docs ones
        found[p.name[4:-5]] = p
    return found


@lru_cache(maxsize=None)
def available() -> list[str]:
    """Every version with a table, oldest first (parser-verified and docs-only)."""
    return sorted(_paths(), key=_sort_key)


def verified_versions() -> list[str]:
    return [v for v in available() if load(v).get("verified") == "parser"]


def docs_only_versions() -> list[str]:
    return [v for v in available() if load(v).get("verified") != "parser"]


@lru_cache(maxsize=None)
def load(version: str) -> dict:
    table = json.loads(_paths()[version].read_text())
    table.setdefault("verified", "docs")
    return table


@lru_cache(maxsize=None)
def docs_table(version: str) -> dict | None:
    p = resources.data_dir() / "tensorrt" / "docs" / f"trt-{version}.json"
    return json.loads(p.read_text()) if p.exists() else None


def default_version() -> str:
    vs = available()
    ver = [v for v in vs if load(v).get("verified") == "parser"]
    return ver[-1] if ver else vs[-1]


def resolve(version: str | None) -> tuple[str, str | None]:
    """(table label, note or None) for a requested TensorRT version."""
    vs = available()
    if version is None:
        return default_version(), None
    version = str(version)
    if version in vs:
        return version, None
    try:
        want = Version(version)
    except InvalidVersion:
        want = None
    if want is not None:
        for v in vs:
            if version_key(v) == want:
                return v, None
        rtx = [v for v in vs if RTX_LABEL.search(v)]
        numbered = [v for v in vs if not RTX_LABEL.search(v)]
        if want.local and "rtx" in str(want.local) and rtx:
            best = rtx[-1]
        elif rtx and want.release[0] >= 10 and want > max(version_key(v) for v in numbered):
            best = rtx[-1]
        else:
            wr = (want.release + (0,))[:2]
            best = min(numbered, key=lambda v: abs((version_key(v).release[0] * 100 + (version_key(v).release + (0,))[1])
                                                   - (wr[0] * 100 + wr[1])))
    else:
        best = default_version()
    kind = "parser-verified" if load(best).get("verified") == "parser" else "docs-only"
    return best, f"TensorRT {version} has no table of its own; using {describe(best)} ({kind})"


def product(label: str) -> str:
    """The product a table is for: 'TensorRT 8.6', 'TensorRT-RTX 1.4'."""
    m = re.search(r"\+rtx(\d+(?:\.\d+)*)", label)
    return f"TensorRT-RTX {m.group(1)}" if m else f"TensorRT {label}"


def ort_only(node: NodeRef) -> bool:
    """Whether only ONNX Runtime defines the node's op (a contrib-domain op, or an ONNX-domain op whose schema is
    ORT's own, e.g. SimplifiedLayerNormalization): a model holding one was prepared for ORT."""
    return schemas.ort_only(node.op_type, node.opset, node.domain)


def describe(label: str) -> str:
    """'TensorRT 8.6' or "TensorRT-RTX 1.4's parser (10.x line)"."""
    name = product(label)
    return f"{name}'s parser (10.x line)" if name.startswith("TensorRT-RTX") else name


# ------------------------------------------------------------------------------------------------ verdicts


@dataclass
class TrtNode:
    node: NodeRef
    status: str  # one of STATUSES
    reason: str | None = None  # one of REASONS (None when supported)
    detail: str = ""


@dataclass
class TrtPrediction(StatusIndex):
    COMMON = "supported"

    version: str
    note: str | None
    nodes: dict[int, TrtNode] = field(default_factory=dict)
    verified: bool = False
    ort_ops: dict[str, int] = field(default_factory=dict)  # ORT-only op -> nodes the parser does not import

    @property
    def product(self) -> str:
        return product(self.version)

    def ort_ops_text(self) -> str:
        """'com.microsoft::SkipLayerNormalization ×24, com.microsoft::Attention ×12' (most nodes first)."""
        return ", ".join(f"{op} ×{n}" for op, n in sorted(self.ort_ops.items(), key=lambda kv: (-kv[1], kv[0])))

    def get(self, node: NodeRef) -> TrtNode | None:
        return self.nodes.get(node.index)


def _effective(dtype: str | None, table: dict) -> str | None:
    """Docs-only tables: what the parser turns a dtype into before the matrix's type list applies."""
    if dtype == "int64" and table.get("casts_int64"):
        return "int32"  # the 8.x parser casts INT64 weights and tensors down to INT32
    if dtype == "double":
        return "float"  # every listed release casts DOUBLE down to FLOAT
    return dtype


def _dtype(type_str: str | None) -> str | None:
    return type_str[7:-1] if type_str and type_str.startswith("tensor(") else None


@lru_cache(maxsize=4096)
def _allowed(op: str, opset: int | None, domain: str) -> dict[str, int]:
    s = schemas.get_schema(op, opset, domain)
    if s is None:
        return {}
    return {t.type_param_str: len(t.allowed_type_strs) for t in s.type_constraints}


def _bindings(node: NodeRef, sig: tuple, io: dict | None = None) -> dict[str, list[tuple[str, int, str | None]]]:
    """type parameter -> [('in'|'out', index, dtype)] from the node's schema at its opset.

    io: the table's {'in0': param, ...} for the schema version it was probed at (type parameter names change
    across op versions: DequantizeLinear-13's T is -21's T1); positions it names are keyed by its names."""
    fp = schemas.formal_params(node.op_type, node.opset, node.domain)
    if fp is None:
        return {}
    params = _allowed(node.op_type, node.opset, node.domain)
    out: dict[str, list] = {}
    for kind, formals, types in (("in", fp[0], sig[3]), ("out", fp[1], sig[4])):
        for i, t in enumerate(types):
            if not formals:
                break
            name, type_str, variadic = formals[min(i, len(formals) - 1)]
            if i >= len(formals) and not formals[-1][2]:
                break
            if type_str in params and t is not None:
                k = min(i, len(formals) - 1)
                key = io.get(f"{kind}{k}", type_str) if io else type_str
                out.setdefault(key, []).append((kind, i, _dtype(t)))
    return out


def _is_constant(node: NodeRef, name: str) -> bool:
    """An initializer or a Constant node's output (what the parser sees as weights)."""
    if node.scope.constant(name) is not None:
        return True
    prod = node.scope.producer_of(name)
    return prod is not None and prod.op_type == "Constant" and prod.domain == "ai.onnx"


def _constant_value(node: NodeRef, name: str):
    t = node.scope.constant(name)
    if t is None:
        return None
    try:
        from onnx import numpy_helper
        arr = numpy_helper.to_array(t)
    except Exception:
        return None
    return arr.reshape(-1)[0].item() if arr.size == 1 else None


def _rank(node: NodeRef, i: int) -> int | None:
    return node.input_type(i).rank


def _norm(v):
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


_FLOATS = {"float", "float16", "bfloat16", "double"}


def _dclass(d: str | None) -> str:
    return "float" if d in _FLOATS or (d or "").startswith("float") else ("bool" if d == "bool" else "int")


def _attr_limit_hits(node: NodeRef, lim: dict, binds: dict) -> bool:
    if lim.get("absent") and node.has_attr(lim["attr"]):
        return False  # the parser only fails when the attribute is left out
    v = node.attr(lim["attr"])
    if v is None:
        v = schemas.attribute_default(node.op_type, node.opset, node.domain, lim["attr"])
    if v is None:
        return False
    want = _norm(lim["value"])
    got = _norm(v)
    if got != want:
        # a non-unit dilation (or stride-like list) is rejected whatever its value when one was
        if not (lim["attr"] == "dilations" and isinstance(got, list) and any(x != 1 for x in got)):
            return False
    for param, dts in (lim.get("when") or {}).items():
        have = {d for _, _, d in binds.get(param, ()) if d}
        if have and not ({_dclass(d) for d in have} & {_dclass(d) for d in dts}):
            return False
    return True


def predict(index: GraphIndex, version: str | None = None) -> TrtPrediction:
    ver, note = resolve(version)
    table = load(ver)
    pred = TrtPrediction(ver, note, verified=table.get("verified") == "parser")
    verdict_fn = _verdict_verified if pred.verified else _verdict_docs
    shared: dict[tuple, tuple] = {}  # nodes with one signature, constant pattern and attributes get one verdict
    ops, signature, record = table["ops"].get, index.signature, pred.record
    local = index.is_local_function if index.functions else None
    behaviour = table.get("behaviour") or {}
    mixed_rejected = behaviour.get("mixed_float_inputs") == "reject"
    reduce_ignored = {op for op, how in (behaviour.get("reduce_axes_input") or {}).items() if how == "ignored"}
    for node in index.nodes:  # one pass over every node: comprehensions, not generators (~1 us a node less)
        if local is not None and local(node):
            continue
        sig = signature(node)
        row = ops(node.op_type)
        key: tuple = sig
        if row:
            ins = node.inputs
            key += (tuple([bool(n) and _is_constant(node, n) for n in ins]),)
            if row.get("input_value_limits"):
                key += (tuple([_constant_value(node, n) if n else None for n in ins]),)
            if row.get("bad_ranks") or row.get("crash_ranks"):
                key += (tuple([_rank(node, i) for i in range(len(ins))]),)
            if node.scope.parent is None:
                is_input = node.scope.is_graph_input
                key += (tuple([is_input(n) for n in ins]),)
            if row.get("attr_limits") or node.op_type in ("Cast", "CastLike", "Shape"):
                key += (tuple([(a.name, a.SerializeToString()) for a in node.proto.attribute if a.type not in (5, 10)]),)
            key += (len([o for o in node.outputs if o]),)
            if (mixed_rejected and node.op_type == "Cast") or node.op_type in reduce_ignored:
                key += (node.index,)  # the verdict reads its consumers / its axes values and input rank
        if node.op_type in ("If", "Loop"):
            key += (node.index,)
        verdict = shared.get(key)
        if verdict is None:
            verdict = shared[key] = verdict_fn(node, sig, table, ver)
            if verdict[0] == "unsupported" and ort_only(node):  # one verdict per key: the op and domain are in it
                verdict = shared[key] = ("unsupported", "ort-op", verdict[2])
        if verdict[1] == "ort-op":
            label = node.op_type if node.domain == "ai.onnx" else f"{node.domain}::{node.op_type}"
            pred.ort_ops[label] = pred.ort_ops.get(label, 0) + 1
        record(node.index, TrtNode(node, *verdict))
    return pred



def _ort_op(node: NodeRef, sig: tuple, table: dict, ver: str) -> tuple | dict | None:
    """An op ONNX Runtime defines (com.microsoft, or ONNX-domain with no onnx schema) that the parser has an
    importer for (the table's `ort_ops`, tools/gen_trt_behaviour.py). The parser picks importers by op type alone
    (onnx-tensorrt ModelImporter.cpp, parseGraph: `opImporters.count(node.op_type())`), so the node gets the
    importer of that name: the verdict, the ONNX op's table row, or None when the table does not know the op."""
    info = (table.get("ort_ops") or {}).get(f"{node.domain}::{node.op_type}")
    if not info:
        return None
    who, op = describe(ver), node.op_type
    if info.get("plugin"):
        return ("unsupported", "plugin", f"{who}'s importer for {op} loads a TensorRT plugin of that name, and fails when none "
                f"is registered ('failed to load {op} plugin')" + ("; TensorRT-RTX ships no plugins" if RTX_LABEL.search(ver) else ""))
    if info.get("onnx_op") and not info.get("same_inputs"):
        return ("unsupported", "not-supported", f"{who} picks importers by op type alone: this {node.domain}::{op} gets ONNX "
                f"{op}'s importer, whose inputs differ from ONNX Runtime's {op}")
    if info.get("onnx_op"):
        row = table["ops"].get(op)
        return row if row else None
    return "supported", None, ""


def _common(node: NodeRef, sig: tuple, table: dict, ver: str) -> tuple | dict:
    ort = _ort_op(node, sig, table, ver) if node.domain not in STANDARD_DOMAINS or node.op_type not in table["ops"] else None
    if ort is not None:
        return ort
    if node.domain not in STANDARD_DOMAINS:
        if RTX_LABEL.search(ver):  # TensorRT-RTX ships no plugin ops: promising a plugin would mislead
            return ("unsupported", "plugin", f"{describe(ver)} has no importer for it, and TensorRT-RTX ships no plugin ops")
        return "unsupported", "plugin", "TensorRT needs a plugin registered under that name"
    row = table["ops"].get(node.op_type)
    who = describe(ver)
    if row is None or (node.domain != "ai.onnx" and table.get("verified") == "parser"):
        return "unsupported", "not-listed", f"{node.op_type} is not in {who}'s operator table"
    if not row["supported"]:
        if table.get("verified") == "parser":
            docs_ver = table.get("docs_restrictions_from") or ver
            docs = docs_table(docs_ver)
            if docs and (docs["ops"].get(node.op_type) or {}).get("supported"):
                # plugin-backed importers (RoiAlign from 8.6, DeformConv): the probes load no plugin library and
                # TensorRT-RTX ships none, so "no importer" was measured, but TensorRT proper with its plugins
                # imports the op: too doubtful to call an error
                return ("restricted", "matrix-restriction",
                        f"{who} had no importer for {node.op_type} when probed without plugins, but onnx-tensorrt's "
                        f"{docs_ver} matrix lists it (through a TensorRT plugin); TensorRT-RTX ships no plugins")
            return "unsupported", "not-supported", f"{who} has no importer for {node.op_type}"
        return "unsupported", "not-supported", f"{who} lists {node.op_type} as unsupported"
    if any(_dtype(t) == "string" for t in sig[3] + sig[4]):
        return "unsupported", "dtype", f"{node.op_type} touches a string tensor; TensorRT has no string type"
    if node.scope.parent is None:
        for name, t in zip(node.inputs, sig[3]):
            if t and not t.startswith("tensor(") and node.scope.is_graph_input(name):
                return "unsupported", "dtype", f"graph input '{name}' is a {t}; TensorRT network inputs are tensors"
    return row


def _verdict_verified(node: NodeRef, sig: tuple, table: dict, ver: str) -> tuple[str, str | None, str]:
    row = _common(node, sig, table, ver)
    if isinstance(row, tuple):
        return row
    who = describe(ver)
    op = node.op_type
    sv = schemas.since_version(op, node.opset, node.domain)
    if sv is not None and sv in row.get("bad_versions", ()):
        return "unsupported", "op-version", f"{who} rejects {op}-{sv} (opset {node.opset})"
    binds = _bindings(node, sig, row.get("io"))
    if op == "Cast" and "T2" not in binds:
        to = node.attr("to")
        if isinstance(to, int):
            from onnxlint.graph import dtype_name
            binds["T2"] = [("out", 0, dtype_name(to))]
    types = row.get("types") or {}
    for param, uses in binds.items():
        no = set((types.get(param) or {}).get("no", ()))
        const_ok = set((types.get(param) or {}).get("const_ok", ()))
        for kind, i, d in uses:
            if d in no:
                if d in const_ok and all(k == "out" or _is_constant(node, node.inputs[j]) for k, j, dd in uses if dd == d):
                    continue  # accepted when the inputs it binds are initializers
                quantized = _dtype(sig[4][0]) if sig[4] else None
                if not (types.get(param) or {}).get("ok") and _docs_lists_type(table, ver, op, d) \
                        and (op != "QuantizeLinear" or _docs_lists_type(table, ver, "DequantizeLinear", quantized)):
                    # no probe of this parameter was accepted at all (QuantizeLinear on 8.4/8.6: every probe
                    # failed for another reason), so the failures do not show the dtype is the cause, and the
                    # version's matrix lists it (for QuantizeLinear, its quantized output type too, as the matrix
                    # lists it for DequantizeLinear's input: int8): not an error
                    continue
                if op in ("Cast", "CastLike"):
                    side = "from" if param == "T1" else "to"
                    return "unsupported", "cast-type", f"{who} cannot {op} {side} {d}"
                what = f"input {i}" if kind == "in" else f"output {i}"
                ok = (types.get(param) or {}).get("ok") or []
                return ("unsupported", "dtype", f"{op} with {param}={d} ({what}) is rejected by {who}"
                        + (f" (accepted: {', '.join(ok)})" if ok else ""))
    for i in row.get("absent_inputs", ()):
        if i < len(node.inputs) and node.inputs[i]:
            return "unsupported", "attribute", f"{who} rejects {op} with input {i} given (e.g. Pad axes on 8.x)"
    first = next((d for uses in binds.values() for _, _, d in uses if d), None)
    must = list(row.get("const_inputs", ())) + list((row.get("const_inputs_by_dtype") or {}).get(first or "", ()))
    for i in sorted(set(must)):
        if i < len(node.inputs) and node.inputs[i] and not _is_constant(node, node.inputs[i]):
            why = f" on {first}" if i not in row.get("const_inputs", ()) else ""
            return ("unsupported", "constant-input",
                    f"{who} needs input {i} of {op}{why} as an initializer or Constant; here it is computed at run time")
    no_gi = list(row.get("no_graph_inputs", ())) + list((row.get("no_graph_inputs_by_dtype") or {}).get(first or "", ()))
    for i in sorted(set(no_gi)):
        if i < len(node.inputs) and node.inputs[i] and node.scope.parent is None and node.scope.is_graph_input(node.inputs[i]):
            return ("unsupported", "constant-input",
                    f"{who} rejects input {i} of {op} as a network input (an initializer or a value computed in the graph is accepted)")
    for lim in row.get("input_value_limits", ()):
        i = lim["input"]
        if i < len(node.inputs) and node.inputs[i]:
            if not _is_constant(node, node.inputs[i]):  # a flag the importer reads: it needs weights
                return ("unsupported", "constant-input",
                        f"{who} needs input {i} of {op} as an initializer or Constant; here it is computed at run time")
            val = _constant_value(node, node.inputs[i])
            if val is not None and bool(val) == lim["value"]:
                return "unsupported", "attribute", f"{who} rejects {op} with input {i} = {lim['value']} (e.g. training mode)"
    for lim in row.get("attr_limits", ()):
        if _attr_limit_hits(node, lim, binds):
            val = node.attr(lim["attr"])
            val = schemas.attribute_default(op, node.opset, node.domain, lim["attr"]) if val is None else val
            return "unsupported", "attribute", f"{who} rejects {op} with {lim['attr']}={_norm(val)}"
    bad_ranks = row.get("bad_ranks")
    if bad_ranks:
        ranks = [_rank(node, i) for i, n in enumerate(node.inputs) if n]
        sig_r = [r for r in ranks if r != 0]
        if None not in sig_r and sig_r in bad_ranks:
            return "unsupported", "attribute", f"{who} rejects {op} on inputs of rank {sig_r}"
    mo = row.get("max_outputs")
    n_out = sum(1 for o in node.outputs if o)
    if mo is not None and n_out > mo:
        return "unsupported", "outputs", f"{who} imports {op} with {mo} output(s) only; this node has {n_out}"
    crash = row.get("crash_ranks")
    if crash:
        sig_r = [r for r in (_rank(node, i) for i, n in enumerate(node.inputs) if n) if r != 0]
        if None not in sig_r and sig_r in crash:
            return "restricted", "parser-crash", f"{who}'s parser crashed on {op} with inputs of rank {sig_r} when probed"
    behaviour = table.get("behaviour") or {}
    if op == "Shape" and behaviour.get("shape_start_end") == "ignored":
        sliced = _shape_slice(node)
        if sliced:
            return ("unsupported", "attribute", f"{who} ignores Shape's start/end (measured: {behaviour.get('shape_start_end_probe')}): "
                    f"this node gets all {sliced[0]} dims where the model takes dims {sliced[1]}:{sliced[2]}, so the shapes computed "
                    "from it are wrong (the parser then rejects or crashes on a later node, or builds a different network)")
    if (behaviour.get("reduce_axes_input") or {}).get(op) == "ignored" and sv is not None and sv >= 18:
        partial = _partial_axes(node)
        if partial:
            why = (f"{who} ignores {op}-{sv}'s axes input and reduces every axis (measured: "
                   f"{behaviour.get('reduce_axes_input_probe')}); here axes {partial} of a rank-{_rank(node, 0)} input")
            keepdims = node.attr("keepdims")
            if keepdims is None or keepdims:  # same rank, broadcasts on: the parse goes through, the values differ
                return ("restricted", "ignored-input", f"{why}: the engine computes one value over the whole tensor where "
                        "the model reduces those axes (keepdims=1 keeps the shape, so nothing fails)")
            return ("unsupported", "attribute", f"{why}, so the output's rank differs from the model's (the parser then "
                    "rejects a later node, or builds a different network)")
    if op == "Cast" and behaviour.get("mixed_float_inputs") == "reject":
        mixed = _cast_contradicts(node, sig)
        if mixed:
            return ("unsupported", "dtype", f"Cast makes {mixed[0]} where the model declares its output {mixed[1]}; {who} "
                    f"builds {mixed[0]} and rejects the element-wise layer that meets it with {mixed[2]} (measured on "
                    "Add(float16, float))")
    if op == "If" and behaviour.get("if_constant_output") == "reject":
        mixed_branch = _constant_branch_output(node)
        if mixed_branch:
            return ("unsupported", "control-flow", f"{mixed_branch}; {who} rejects that (measured: "
                    f"{behaviour.get('if_constant_output_probe')})")
    cf = _control_flow(node, ver)
    if cf:
        return cf
    return "supported", None, ""


def _constant_branch_output(node: NodeRef) -> str | None:
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


def _partial_axes(node: NodeRef) -> list[int] | None:
    """The constant axes input of a Reduce node when it names fewer than all axes of an input of known rank."""
    if len(node.inputs) < 2 or not node.inputs[1]:
        return None
    rank = _rank(node, 0)
    t = node.scope.constant(node.inputs[1])
    if rank is None or t is None:
        return None
    try:
        from onnx import numpy_helper

        axes = [int(a) for a in numpy_helper.to_array(t).reshape(-1)]
    except Exception:
        return None
    if not axes:
        return None
    return axes if {a % rank for a in axes} != set(range(rank)) else None


def _shape_slice(node: NodeRef) -> tuple[int, int, int] | None:
    """(rank, start, end) when a Shape-15+ node's start/end take fewer dims than its input has (rank known)."""
    start, end = node.attr("start"), node.attr("end")
    if start is None and end is None:
        return None
    rank = _rank(node, 0)
    if rank is None:
        return None
    s = 0 if start is None else (start + rank if start < 0 else start)
    e = rank if end is None else (end + rank if end < 0 else end)
    s, e = min(max(s, 0), rank), min(max(e, 0), rank)
    return (rank, s, e) if (s, e) != (0, rank) else None


def _effective_dtype(node: NodeRef, i: int) -> str | None:
    """What the parser builds for input i: a Cast's `to` where a Cast makes it, else the declared type."""
    from onnxlint.graph import dtype_name

    prod = node.scope.producer_of(node.inputs[i])
    to = prod.attr("to") if prod is not None and prod.op_type == "Cast" and prod.domain == "ai.onnx" else None
    return dtype_name(to) if isinstance(to, int) else node.input_type(i).dtype


def _cast_contradicts(node: NodeRef, sig: tuple) -> tuple[str, str, str] | None:
    """(made, declared, other) when a Cast's `to` differs from the type the model declares for its output and a
    consumer's type parameter binds that output together with an input of another type: onnxconverter_common's
    float16 conversion leaves Casts to float declared float16 (ORT refuses such a model too: OLX007)."""
    from onnxlint.graph import dtype_name

    to = node.attr("to")
    made = dtype_name(to) if isinstance(to, int) else None
    declared = _dtype(sig[4][0]) if sig[4] else None
    if not made or not declared or made == declared or not node.outputs:
        return None
    out = node.outputs[0]
    for user in node.scope.consumers.get(out, ()):
        fp = schemas.formal_params(user.op_type, user.opset, user.domain) if user.domain == "ai.onnx" else None
        if not fp:
            continue
        formals = fp[0]
        params = [formals[min(i, len(formals) - 1)][1] if formals else None for i in range(len(user.inputs))]
        for i, name in enumerate(user.inputs):
            if name != out:
                continue
            for j, other in enumerate(user.inputs):
                if j != i and other and params[j] == params[i]:
                    theirs = _effective_dtype(user, j)
                    if theirs and theirs != made:
                        return made, declared, theirs
    return None


def _docs_lists_type(table: dict, ver: str, op: str, dtype: str | None) -> bool:
    docs = docs_table(table.get("docs_restrictions_from") or ver)
    row = (docs or {}).get("ops", {}).get(op) or {}
    return bool(row.get("supported")) and dtype in (row.get("types") or ())


def _graph_output_ranks(g) -> list:
    out = []
    for vi in g.output:
        t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        out.append(len(t.shape.dim) if t is not None and t.HasField("shape") else None)
    return out


def _control_flow(node: NodeRef, ver: str | None = None) -> tuple | None:
    """If branches whose outputs differ in rank; Loop scan outputs with a run-time trip count.

    TensorRT 8.x's conditional layer rejects branch outputs of different shapes (`IIfConditionalOutputLayer
    inputs must have the same shape`: silero_vad on 8.6); the 10.x-line parser accepted the same model."""
    if node.op_type == "If":
        then_g = next((a.g for a in node.proto.attribute if a.name == "then_branch"), None)
        else_g = next((a.g for a in node.proto.attribute if a.name == "else_branch"), None)
        if then_g is None or else_g is None:
            return None
        for k, (a, b) in enumerate(zip(_graph_output_ranks(then_g), _graph_output_ranks(else_g))):
            if a is not None and b is not None and a != b:
                status = "unsupported" if ver and version_key(ver).release[0] < 10 else "restricted"
                why = ("TensorRT 8.x's conditional needs equal shapes" if status == "unsupported" else
                       "onnx-tensorrt documents equal ranks for conditional outputs (the 10.x-line parser accepted it when measured)")
                return (status, "control-flow", f"output {k} is rank {a} in then_branch but rank {b} in else_branch; {why}")
    elif node.op_type == "Loop":
        n_carried = max(len(node.inputs) - 2, 0)
        n_scan = sum(1 for o in node.outputs[n_carried:] if o)
        if n_scan:
            m = node.inputs[0] if node.inputs else ""
            if not m or not _is_constant(node, m):
                return ("restricted", "control-flow",
                        f"{n_scan} scan output(s) and the trip count is {'absent' if not m else 'computed at run time'}; "
                        "TensorRT needs a static scan-output length")
    return None


def _primary_param(node: NodeRef, binds: dict) -> str | None:
    """Docs tables list one type set per op: the first type parameter that is not a fixed shape/index type."""
    allowed = _allowed(node.op_type, node.opset, node.domain)
    fp = schemas.formal_params(node.op_type, node.opset, node.domain)
    if fp is None:
        return None
    for _, type_str, _ in list(fp[0]) + list(fp[1]):
        if type_str in binds and allowed.get(type_str, 0) > 2:
            return type_str
    return None


def _verdict_docs(node: NodeRef, sig: tuple, table: dict, ver: str) -> tuple[str, str | None, str]:
    row = _common(node, sig, table, ver)
    if isinstance(row, tuple):
        return row
    who = describe(ver)
    binds = _bindings(node, sig)
    param = _primary_param(node, binds)
    if param and row["types"] and node.op_type not in ("Cast", "CastLike", "Shape", "Size"):
        for _, _, d in binds[param]:
            dtype = _effective(d, table)
            if dtype and dtype not in row["types"]:
                return ("unsupported", "dtype",
                        f"{node.op_type} on {dtype} is not supported by {who} (matrix: {', '.join(row['types'])})")
    if row["restrictions"]:
        return "restricted", "matrix-restriction", row["restrictions"]
    return _control_flow(node, ver) or ("supported", None, "")
