"""What the parser was measured doing with quantized graphs (tools/gen_trt_behaviour.py, the table's
`behaviour.quantization`), each rejection in the parser's own words:

* `initializers` / `constants`: the element types whose stored tensors it cannot import. It imports every
  initializer before any node (onnx-tensorrt ModelImporter.cpp, parseGraph: `Failed to import initializer`), so
  a 16-bit zero point (ORT's A16W8 QDQ) fails the parse whatever reads it;
* `qdq`: QuantizeLinear / DequantizeLinear per op version and domain (ONNX's and com.microsoft's), quantized type,
  where the quantized tensor comes from, zero point and scale granularity: asymmetric zero points ("TensorRT only
  supports symmetric quantization"), int32 bias DequantizeLinear ("only activation types allowed as input to this
  layer" on 8.x), a Q/DQ without a zero point on 8.x, 16-bit and 4-bit types.

A node whose pattern was probed gets the probe's verdict and nothing else (the single-node probes of
gen_trt_support.py made a uint8 tensor a network input, which the parser refuses whatever reads it); a node whose
pattern was not probed (a computed scale, a float16 one, a zero point stored outside the file) goes on to the
op's table row."""

from __future__ import annotations

import re
from typing import Any

from onnxlint.model.graph import GraphIndex, NodeRef, dtype_name, small_array
from onnxlint.ort import schema_registry
from onnxlint.tensorrt.node_facts import NodeCheck
from onnxlint.tensorrt.verdicts import QDQ_OPS, SUPPORTED, Verdict

Pattern = tuple[str, str, int, str, str, str, str]  # op, domain, since, quantized type, source, zero point, scale

_SOURCES = {"weights": "{x} weights (an initializer)", "input": "a {x} network input",
            "computed": "a {x} tensor computed in the network", "pair": "the {x} output of a QuantizeLinear",
            "gathered": "{x} rows gathered from weights (an embedding)"}
_ZERO_POINTS = {"none": "without a zero point", "zero": "with zero points of 0",
                "nonzero": "with a non-zero zero point (asymmetric)"}
_SCALES = {"tensor": "per-tensor", "axis": "per-axis", "block": "blocked"}


def imported_tensors(c: NodeCheck) -> Verdict | None:
    """A network input the parser refuses, or an input stored in the model (an initializer or a Constant's value) of
    a type it cannot import, whatever the node's op: the parser makes the network's inputs, then imports every
    initializer, before it looks for any importer (onnx-tensorrt: importInputs, then parseGraph). The words leave
    the tensor's name out: findings of one cause print as one line."""
    measured = c.behaviour.get("quantization")
    if not measured:
        return None
    node, scope = c.node, c.node.scope
    for i, name in enumerate(node.inputs):
        if not name:
            continue
        if scope.parent is None and scope.is_graph_input(name):
            refused = _network_input_refused(measured, node.input_type(i).dtype, c.who)
            if refused:
                return "unsupported", "network-import", refused
            continue
        t = scope.constant(name)
        if t is None:
            continue
        d = dtype_name(t.data_type)
        words = (measured.get("initializers") or {}).get(d or "") or (measured.get("constants") or {}).get(d or "")
        if words:
            return ("unsupported", "network-import", f"{c.who} cannot import {_input_name(node, i)}, a stored {d} tensor: "
                    f"\"{_plain(words)}\" (it imports every initializer before any node)")
    return None


def _network_input_refused(measured: dict[str, Any], d: str | None, who: str) -> str | None:
    """Why the parser refuses a network input of dtype d, in the probe's words; None when it takes it."""
    words = (measured.get("inputs") or {}).get(d or "")
    if not words:
        return None
    return f"{who} cannot take a network input of type {d}: \"{_plain(words)}\" (it makes the network's inputs before any node)"


def unread_tensors(index: GraphIndex, measured: dict[str, Any], who: str) -> list[str]:
    """The main graph's network inputs and initializers of a type the parser cannot take that no node's verdict
    names (imported_tensors: an input as a main-graph node reads it, an initializer as a node of the main graph or
    of a control-flow body under it reads it): read by no node, an input read only inside a body, or only by a
    local function's call (not judged: its body is). The parser makes every network input and imports every
    initializer before any node, read or not (TensorRT-RTX 1.7 refused a model whose only Relu left an int2 or
    string input, or a uint16 initializer, unread). One text per cause, in imported_tensors' words."""
    main = index.scopes[0] if index.scopes else None
    if main is None:
        return []
    # the tensors of a refused dtype first (none, or a few), then how those are read: the reads of every other
    # value are never gathered (a set per value read: a fifth of the parser model's time at 100k nodes)
    inputs: list[tuple[str, str]] = []
    for name in main.inputs:
        if name not in main.initializers:
            refused = _network_input_refused(measured, main.type_of(name).dtype, who)
            if refused:
                inputs.append((name, refused))
    stored = measured.get("initializers") or {}
    initializers: list[tuple[str, str | None, str]] = []
    for name, t in main.initializers.items():
        d = dtype_name(t.data_type)
        words = stored.get(d or "")
        if words:
            initializers.append((name, d, words))
    if not inputs and not initializers:
        return []
    reads = _main_values_read(index, main, {name for name, _ in inputs} | {name for name, _, _ in initializers})
    texts = [refused for name, refused in inputs if "node" not in reads.get(name, ())]
    for name, d, words in initializers:
        how = reads.get(name, set())
        if "node" in how or "body" in how:
            continue
        whom = "only a local function's call reads" if how else "no node reads"
        texts.append(f"{who} cannot import a stored {d} tensor {whom}: \"{_plain(words)}\" "
                     "(it imports every initializer before any node)")
    return list(dict.fromkeys(texts))


def _main_values_read(index: GraphIndex, main: Any, names: set[str]) -> dict[str, set[str]]:
    """How nodes read each of names, main-graph value names: `node` (a main-graph node), `body` (a node of a
    control-flow body under it, through its outer scope: a name the body or a body between defines, as its
    input, initializer or a node's output, is the body's own), `call` (a local function's call, anywhere there);
    a name no node reads is left out. A local function's body reads only its own formal inputs: its names are
    not the main graph's."""
    local = index.is_local_function if index.functions else None
    reads: dict[str, set[str]] = {}
    for name in names:
        nodes = main.consumers.get(name)
        if nodes:
            reads[name] = {"call" if local is not None and local(n) else "node" for n in nodes}
    for scope in index.scopes:
        if scope is main or scope.is_function or scope.root is not main:
            continue
        for name, nodes in scope.consumers.items():
            if name not in names:
                continue
            s: Any = scope
            while s is not None and s is not main:
                if name in s.inputs or name in s.initializers or name in s.producer:
                    break
                s = s.parent
            else:
                reads.setdefault(name, set()).update("call" if local is not None and local(n) else "body" for n in nodes)
    return reads


def qdq(c: NodeCheck) -> Verdict | None:
    """A QuantizeLinear or DequantizeLinear whose pattern was probed: the probe's verdict."""
    measured = c.behaviour.get("quantization")
    if not measured or c.op not in QDQ_OPS:
        return None
    pat = pattern(c.node, c.since_version)
    if pat is None:
        return None
    found, used = lookup(measured, pat)
    if found is None:
        return None
    if isinstance(found, str):  # 'accept'
        return SUPPORTED
    at, words = found
    what = describe(pat, deciding(measured, pat, words, used))
    if at == "graph":
        return ("unsupported", "quantization", f"{c.who} fails on {what} before importing any node: \"{_plain(words)}\"")
    return "unsupported", "quantization", f"{c.who} rejects {what}: \"{_plain(words)}\""


def symmetric_int8_taken(measured: dict[str, Any] | None) -> bool:
    """Whether the probes saw the parser take int8 Q/DQ with zero points of 0: int8 weights DequantizeLinear-13 per
    axis, and QuantizeLinear-13 -> DequantizeLinear of a float tensor (what OLX318's advice says)."""
    qdq = (measured or {}).get("qdq") or {}
    return (qdq.get("DequantizeLinear/ai.onnx/13/int8/weights/zero/axis") == "accept"
            and qdq.get("QuantizeLinear/ai.onnx/13/int8/pair/zero/tensor") == "accept")


Probe = tuple[str, str]  # the probe row a verdict came from: (its op, its source)


def lookup(measured: dict[str, Any], pat: Pattern) -> tuple[str | tuple[str, str] | None, Probe]:
    """('accept' | (where the parser failed: 'graph' or the node, its words) | None when the probes do not say what
    this node does, the probe row asked). A DQ reading a QuantizeLinear is judged by the Q -> DQ probe unless the Q
    failed there first; then, like any DQ of a computed tensor, by the probe whose DQ reads a Cast, or, where the
    Cast itself failed, a Gather of weights."""
    op, source = pat[0], pat[4]
    errors = measured.get("errors") or []
    if op == "QuantizeLinear":
        used, own = ("QuantizeLinear", "pair"), ("QuantizeLinear", "graph")
        got = _row(measured, pat, *used)
    else:
        own = ("DequantizeLinear", "graph")
        used, got = ("QuantizeLinear", "pair"), None
        if source == "pair":
            got = _row(measured, pat, *used)
            if isinstance(got, list) and got[0] != "DequantizeLinear":
                got = None  # the Q failed first: the DQ is judged as one reading a computed tensor
            if got is None:
                source = "computed"
        if got is None:
            used = ("DequantizeLinear", source)
            got = _row(measured, pat, *used)
            if source == "computed" and isinstance(got, list) and got[0] == "other":  # the Cast making it failed
                used = ("DequantizeLinear", "gathered")
                got = _row(measured, pat, *used)
    if got == "accept" or (op == "QuantizeLinear" and isinstance(got, list) and got[0] == "DequantizeLinear"):
        return "accept", used  # (a Q that passed, the DQ after it failing)
    if isinstance(got, list) and got[0] in own and got[1] < len(errors):
        return (got[0], errors[got[1]]), used
    return None, used


def _row(measured: dict[str, Any], pat: Pattern, op: str, source: str, **change: str) -> Any:
    """The probe table's row for the pattern asked as `op` from `source` (a part of it changed: zp=, scale=)."""
    parts = dict(zip(_FIELDS, pat), op=op, source=source, **change)
    return (measured.get("qdq") or {}).get("/".join(str(parts[k]) for k in _FIELDS))


ZeroPoints = dict[int, tuple[Any, "str | None"]]  # id(tensor) -> (the tensor, its _zero_point)


def pattern(node: NodeRef, since: int | None, zero_points: ZeroPoints | None = None) -> Pattern | None:
    """(op, domain, since, quantized type, source, zero point, scale) as the probes are keyed; None where the
    node is not one the probes cover (a computed or non-float scale, a zero point stored outside the file).
    zero_points: each zero point tensor's kind once, for a pass over many nodes sharing a few (key)."""
    if node.op_type not in QDQ_OPS or since is None or len(node.inputs) < 2:
        return None
    scope = node.scope
    quantized = _quantized_type(node)
    zp = _zero_point(node, zero_points)
    scale = _scale(node)
    if quantized is None or zp is None or scale is None:
        return None
    if node.op_type == "QuantizeLinear":
        source = "pair"
    else:
        x = node.inputs[0]
        prod = scope.producer_of(x)
        if scope.constant(x) is not None:
            source = "weights"
        elif scope.parent is None and scope.is_graph_input(x):
            source = "input"
        elif prod is not None and prod.op_type == "QuantizeLinear" and prod.domain == node.domain:
            source = "pair"
        elif prod is not None and prod.op_type == "Gather" and prod.inputs and scope.constant(prod.inputs[0]) is not None:
            source = "gathered"
        else:
            source = "computed"
    return node.op_type, node.domain, since, quantized, source, zp, scale


def deciding(measured: dict[str, Any], pat: Pattern, words: str, used: Probe) -> str:
    """Which part of the pattern the parser's rejection turns on, so that one cause is worded one way ('zero_point',
    'scale', 'type'): the zero point where the same probe with zero points of 0 was taken or failed in other words,
    else the scale where a per-tensor one did, else the quantized type and where it comes from."""
    errors = measured.get("errors") or []

    def differs(**change: str) -> bool:
        got = _row(measured, pat, *used, **change)
        return got == "accept" or (isinstance(got, list) and got[1] < len(errors) and errors[got[1]] != words)

    if pat[5] != "zero" and differs(zp="zero"):
        return "zero_point"
    if pat[6] != "tensor" and differs(scale="tensor"):
        return "scale"
    return "type"


_FIELDS = ("op", "domain", "since", "x", "source", "zp", "scale")


def describe(pat: Pattern, part: str = "type") -> str:
    """'DequantizeLinear-13 of int32 weights (an initializer)', 'QuantizeLinear-13 with a non-zero zero point
    (asymmetric)', 'DequantizeLinear-21 with a blocked scale': the op and the part the rejection turns on."""
    op, domain, since, x, source, zp, scale = pat
    name = f"{domain}::{op}" if domain != "ai.onnx" else f"{op}-{since}"
    if part == "zero_point":
        return f"{name} {_ZERO_POINTS[zp]}"
    if part == "scale":
        return f"{name} of {x} with a {_SCALES[scale]} scale"
    return f"{name} " + (f"to {x}" if op == "QuantizeLinear" else "of " + _SOURCES[source].format(x=x))


def _quantized_type(node: NodeRef) -> str | None:
    if node.op_type == "DequantizeLinear":
        return node.input_type(0).dtype
    if len(node.inputs) > 2 and node.inputs[2]:
        t = node.scope.constant(node.inputs[2])
        return dtype_name(t.data_type) if t is not None else node.input_type(2).dtype
    declared = node.output_type(0).dtype
    if declared:
        return declared
    to = node.attr("output_dtype")
    return dtype_name(to) if isinstance(to, int) and to else "uint8"


def _zero_point(node: NodeRef, zero_points: ZeroPoints | None = None) -> str | None:
    """'none', 'zero' or 'nonzero'; None when it is computed, or its values are not in the parsed model (a large
    one a lint parses without its bytes: model.loading.wire; one in the data file past what the lint reads there:
    graph.small_array), but an int32 zero point, which onnx fixes at 0. One in the data file (a model saved with
    every tensor external) is read there, as the parser reads it: it was unknown, so an asymmetric one went unsaid.
    zero_points: the kinds already found, by tensor (the kind is the tensor's alone: a model's Q/DQ nodes share a
    few zero points, each read into a numpy array once, not once a node)."""
    if len(node.inputs) < 3 or not node.inputs[2]:
        return "none"
    t = node.scope.constant(node.inputs[2])
    if t is None:
        return None
    if zero_points is None:
        return _zero_point_of(node, t)
    known = zero_points.get(id(t))
    if known is None or known[0] is not t:  # the tensor kept beside its kind: its id is not another's meanwhile
        known = zero_points[id(t)] = (t, _zero_point_of(node, t))
    return known[1]


def _zero_point_of(node: NodeRef, t: Any) -> str | None:
    """_zero_point of a stored zero point tensor t (read from the data file of the node's index where external)."""
    if t.data_type == 6:  # INT32: "the zero point is supposed to be 0" (onnx's DequantizeLinear)
        return "zero"
    n = 1
    for d in t.dims:
        n *= d
    if t.data_location == 1:  # EXTERNAL
        values = small_array(node.scope, t, _EXTERNAL_ZERO_POINT_ELEMENTS)
        if values is None:
            return None
    elif n and not t.raw_data and not t.int32_data and not t.float_data:  # cut
        return None
    else:
        try:
            from onnx import numpy_helper

            values = numpy_helper.to_array(t)
        except Exception:
            return None
    return "nonzero" if values.size and bool((values.astype("float64") != 0).any()) else "zero"


# a zero point in the data file is read when it holds at most this many (a per-channel one: one per channel; the
# reader itself reads at most 4096 bytes: loading.external.small_value_reader)
_EXTERNAL_ZERO_POINT_ELEMENTS = 4096


def _scale(node: NodeRef) -> str | None:
    """'tensor', 'axis' or 'block' for a float scale stored in the file; None for anything else."""
    t = node.scope.constant(node.inputs[1])
    if t is None or t.data_type != 1:  # FLOAT: what the probes used
        return None
    block = node.attr("block_size") if node.attribute_flags() else None  # no proto read for a node without any
    if isinstance(block, int) and block > 0:
        return "block"
    n = 1
    for d in t.dims:
        n *= d
    return "tensor" if n <= 1 else "axis"


def _input_name(node: NodeRef, i: int) -> str:
    """The input's name in the op's schema ('x_zero_point'), else its position."""
    fp = schema_registry.formal_params(node.op_type, node.opset, node.domain)
    if fp and fp[0]:
        formals = fp[0]
        if i < len(formals) or formals[-1][2]:
            return str(formals[min(i, len(formals) - 1)][0])
    return f"input {i}"


def _plain(words: str) -> str:
    """The stored words with the probe's names out (they name the probe model's tensors): left out at the end,
    `<name>` inside a sentence."""
    words = re.sub(r":? ?<(?:initializer|x|zero point)>$", "", words)
    words = re.sub(r"<(?:initializer|x|zero point)>", "<name>", words)
    return words.replace("<node>", "the node").strip()


def key(node: NodeRef, zero_points: ZeroPoints | None = None) -> Pattern | None:
    """What a Q/DQ node's verdict depends on beyond its signature and which inputs are constant (a part of the
    verdict cache's key). zero_points: as pattern's, kept by the caller across the nodes of one index."""
    return pattern(node, schema_registry.since_version(node.op_type, node.opset, node.domain), zero_points)


# asked after the op version (builtin_op_checks.CHECKS); imported_tensors is asked before any importer
CHECKS = (qdq,)
