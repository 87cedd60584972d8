#!/usr/bin/env python3
"""Add what TensorRT's parser does beyond single-op acceptance to the parser-verified tables (`behaviour`, `ort_ops`).

tools/gen_trt_support.py measures whether the parser accepts each ONNX op; five things it cannot see, each found
behind a miss or false alarm on the transformer export set (issue 31), are measured here on the same parser:

* `ort_ops`: ONNX Runtime's own ops (com.microsoft contrib ops, and ops ORT registers in the ONNX domain that
  onnx has no schema for, e.g. SimplifiedLayerNormalization) that the parser has an importer for
  (`OnnxParser.supports_operator`). The parser picks an importer by op type alone, whatever the node's domain
  (onnx-tensorrt ModelImporter.cpp, parseGraph: `opImporters.count(node.op_type())`), so com.microsoft::Attention
  gets ONNX Attention's importer: `onnx_op` says ONNX has an op of that name and `same_inputs` whether ORT's
  schema names the same inputs. `plugin`: the importer loads a TensorRT plugin of that name (the parser library
  carries "failed to load <Op> plugin."); TensorRT-RTX ships none, so the import fails.
* `behaviour.shape_start_end`: whether Shape-15's start/end reach the network (`honoured`) or the parser
  builds the whole shape (`ignored`: TensorRT 8.6 imports `Shape(x[2,3,4], start=1, end=2)` as 3 values).
* `behaviour.if_constant_output`: whether an If whose branch returns a Constant's output beside a computed
  one is accepted (the 10.x line) or rejected (8.6: "The then/else branches of an If operator must have the same
  number of outputs"; optimum's merged decoders return empty Constants for the cross-attention cache).
* `behaviour.reduce_axes_input`: per Reduce op whose version 18 takes `axes` as an input, whether the parser
  reads it (`honoured`) or reduces every axis (`ignored`: TensorRT 8.6, which predates opset 18; convnext's dynamo
  export then fails at a LayerNormalization on the rank-0 result).
* `behaviour.mixed_float_inputs`: whether an Add of a float16 and a float tensor is accepted (8.6) or rejected
  (`must have same input types`, the 10.x line): what a Cast whose declared output type contradicts its `to`
  (onnxconverter_common's float16 conversion) leaves in a model.
* `behaviour.quantization` (issue 41): what the parser does with quantized graphs, each pattern a probe model and
  the parser's first error in its own words. `inputs`: the element types the parser refuses as network inputs
  (it makes them first); `initializers` / `constants`: those whose initializers (Constant values) it cannot
  import (`Found unsupported datatype (4) when importing initializer`: it imports every initializer before any
  node, so a 16-bit zero point fails the parse whatever reads it). `qdq`:
  QuantizeLinear / DequantizeLinear per op version and domain (ONNX's and com.microsoft's) x quantized type (every
  type the op version's schema allows, of int8, uint8, int32, 16-bit, 4-bit, float8, float4) x where the quantized
  tensor comes from (`weights`: an initializer, DQ into an Add; `input`: a network input; `computed`: a Cast in the
  network; `gathered`: a Gather of quantized weights, an embedding table; `pair`: Q of a float input into DQ,
  which answers for the Q and for a DQ reading a Q) x zero point
  (`none`, `zero`, `nonzero`) x scale (`tensor`, `axis`, `block`): accepted, or the first error and which node it
  names. `ort_op_probes`: ORT ops whose importer reads the node (MatMulNBits on the
  10.x line: A float or float16 x 4 or 8 bits; RotaryEmbedding as ORT's optimizer writes it, x float or
  float16 x each batch dimension static or dynamic, position_ids 2-D or 1-D: RTX 1.4 gives it ONNX's importer,
  which reads position_ids as cos_cache; RTX 1.5-1.7 import it when both batch dimensions are static or both
  dynamic, and refuse a 1-D position_ids), the same way.

  python tools/gen_trt_behaviour.py --trt 8.6=/path/venv310/bin/python --stub-dir 8.6=/path/stubs860 \\
      --trt 10.1+rtx1.4=/path/vrtx/bin/python [--out onnxlint/data/tensorrt] [--raw DIR] [--no-quantization]

(TensorRT 8.5.3.1 and 8.6.0 and TensorRT-RTX 1.4 measured 2026-12-05 with the workspace's trt-parser-truth
harness; the 8.4 table has no behaviour section: no 8.4 parser ran here.)

Needs onnxruntime (ORT's op schemas) in this Python; each --trt Python needs tensorrt (or tensorrt_rtx_bindings).
Run after gen_trt_support.py (which keeps these sections when it rewrites a table).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_trt_support import FORKED  # noqa: E402 - the fork-per-probe loop both workers run

ROOT = Path(__file__).resolve().parent.parent

WORKER = FORKED + r"""
import json, re, sys
try:
    import tensorrt as trt
except ImportError:
    import tensorrt_rtx_bindings as trt
job = json.load(open(sys.argv[1]))


class Logger(trt.ILogger):
    # the parser's error log: where it names what it could not import ("Found unsupported datatype (4) ...")
    def __init__(self):
        trt.ILogger.__init__(self)
        self.lines = []

    def log(self, severity, msg):
        if int(severity) <= int(trt.ILogger.Severity.ERROR):
            self.lines.append(" ".join(str(msg).split())[:300])


logger = Logger()
builder = trt.Builder(logger)
ex = getattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH", None)
flags = 1 << int(ex) if ex is not None else 0
net = builder.create_network(flags)
parser = trt.OnnxParser(net, logger)
out = {"version": trt.__version__, "importers": [n for n in job["names"] if parser.supports_operator(n)], "probes": {}}
lib = next((l.split()[-1] for l in open("/proc/self/maps") if "onnxparser" in l and l.split()[-1].startswith("/")), None)
out["plugin_importers"] = sorted({m.decode() for m in re.findall(rb"failed to load (\w+) plugin", open(lib, "rb").read())}) if lib else []
del parser, net


def parse(path):
    logger.lines = []
    net = builder.create_network(flags)
    p = trt.OnnxParser(net, logger)
    ok = p.parse(open(path, "rb").read())
    row = {"ok": bool(ok and not p.num_errors)}
    if p.num_errors:
        e = p.get_error(0)
        row["desc"] = " ".join(str(e.desc()).split())[:300]
        row["func"] = str(e.func())
        row["node"] = int(e.node())
    row["log"] = logger.lines[:3]
    row["out_shapes"] = [list(net.get_output(i).shape) for i in range(net.num_outputs)] if row["ok"] else []
    return row


# one child per probe: a probe that crashes the parser costs that probe only
for pid_, path in job["probes"].items():
    out["probes"][pid_] = forked(parse, path, 60, lambda exc: {"ok": False, "desc": str(exc)[:300], "func": "exception"},
                                 lambda why: {"ok": False, "crash": why})
print(json.dumps(out))
"""


def probe_models(root: Path) -> dict[str, str]:
    """The two structural probes, as model files."""
    import onnx
    from onnx import TensorProto, helper

    paths = {}
    shape = helper.make_graph([helper.make_node("Shape", ["x"], ["y"], start=1, end=2)], "shape_start_end",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1])])
    # a float16 and a float input to one Add: invalid ONNX (T binds both), written as the parser would meet it
    mixed = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "mixed_float_inputs",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT16, [2, 3]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT16, [2, 3])])
    # an If whose then_branch returns a Constant's output beside a computed one (optimum's merged decoders)
    const = helper.make_node("Constant", [], ["tc"], value=helper.make_tensor("v", TensorProto.FLOAT, [1, 3], [0.0] * 3))
    then = helper.make_graph([const, helper.make_node("Neg", ["x"], ["tn"])], "then", [],
                             [helper.make_tensor_value_info("tc", TensorProto.FLOAT, None),
                              helper.make_tensor_value_info("tn", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e0"]), helper.make_node("Neg", ["x"], ["e1"])], "else", [],
                              [helper.make_tensor_value_info("e0", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("e1", TensorProto.FLOAT, None)])
    branch = helper.make_graph([helper.make_node("If", ["cond"], ["y0", "y1"], then_branch=then, else_branch=other)],
                               "if_constant_output", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                                                      helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                               [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None),
                                helper.make_tensor_value_info("y1", TensorProto.FLOAT, None)])
    graphs = [shape, mixed, branch]
    for op in reduce_18_ops():  # ReduceX-18 takes its axes as an input: reduce x[n,3,4] over axis -1 -> [n,3]
        graphs.append(helper.make_graph([helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)], f"axes_input_{op}",
                                        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 4])],
                                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
                                        [helper.make_tensor("axes", TensorProto.INT64, [1], [-1])]))
    for g in graphs:
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
        m.ir_version = 8
        p = root / f"{g.name}.onnx"
        onnx.save(m, p)
        paths[g.name] = str(p)
    return paths


# ------------------------------------------------------------------------ quantized graphs (issue 41)

QUANT_TYPES = ("int8", "uint8", "int32", "int16", "uint16", "int4", "uint4", "float8e4m3fn", "float8e5m2", "float4e2m1")
QDQ_SINCE = (10, 13, 19, 21, 23)
ZERO_POINTS = ("none", "zero", "nonzero")  # the Q/DQ versions exporters and ORT's quantization tool write (onnx's schemas)
# names in the probe models, as the messages are stored (the parser quotes them)
PROBE_NAMES = {"probe_dq": "<node>", "probe_q": "<node>", "qzp": "<zero point>", "qscale": "<scale>", "qx": "<x>",
               "qw": "<initializer>", "qy": "<y>", "probe_gather": "<node>", "probe_cast": "<node>",
               "probe_rope": "<node>", "node_of_ry": "<node>"}


def _elem(dtype: str) -> int:
    from onnx import TensorProto

    return int(TensorProto.DataType.Value(dtype.upper()))


def _opset_model(graph, opset: int, domains: tuple[tuple[str, int], ...] = ()):
    from onnx import helper

    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                *[helper.make_opsetid(d, v) for d, v in domains]])
    m.ir_version = next(ir for _, ir, op, *_ in helper.VERSION_TABLE if op >= opset)
    return m


def onnx_qdq_types(op: str, since: int) -> list[str]:
    """The quantized types the op version's onnx schema allows, of QUANT_TYPES."""
    import onnx

    s = onnx.defs.get_schema(op, since, "")
    if s.since_version != since:
        return []
    if op == "DequantizeLinear":
        param = "T" if since < 19 else "T1"
    else:
        param = "T2" if since < 23 else "T3"
    allowed = next(t.allowed_type_strs for t in s.type_constraints if t.type_param_str == param)
    return [d for d in QUANT_TYPES if f"tensor({d})" in allowed]


def contrib_qdq_types(op: str) -> list[str]:
    """The quantized types ORT's com.microsoft Q/DQ schema allows (onnxruntime's own registry), of QUANT_TYPES."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    s = max((s for s in ort_c.get_all_operator_schema() if s.domain == "com.microsoft" and s.name == op),
            key=lambda s: s.since_version)
    param = "T1" if op == "DequantizeLinear" else "T2"
    allowed = next(t.allowed_type_strs for t in s.type_constraints if t.type_param_str == param)
    return [d for d in QUANT_TYPES if f"tensor({d})" in allowed]


def _values(dtype: str, n: int, value: int) -> list:
    return [float(value)] * n if dtype.startswith("float") else [int(value)] * n


def _qdq_graph(op: str, domain: str, since: int, dtype: str, source: str, zp: str, scale: str):
    """One Q/DQ pattern: x[4, 8]; scale per tensor (scalar), per axis, or per block of 4 along axis 1."""
    from onnx import TensorProto, helper

    dom = "com.microsoft" if domain == "com.microsoft" else ""
    elem = _elem(dtype)
    shape = {"tensor": [], "axis": [4] if source == "weights" else [8], "block": [4, 2]}[scale]
    attrs = {}
    if scale == "axis":
        attrs["axis"] = 0 if source == "weights" else 1
    if scale == "block":
        attrs.update(axis=1, block_size=4)
    n = 1
    for d in shape:
        n *= d
    inits = [helper.make_tensor("qscale", TensorProto.FLOAT, shape, [0.5] * n)]
    if zp != "none":
        inits.append(helper.make_tensor("qzp", elem, shape, _values(dtype, n, 1 if zp == "nonzero" else 0)))
    qargs = ["qscale"] + (["qzp"] if zp != "none" else [])
    if op == "QuantizeLinear":  # a float input quantized and dequantized again: how activations are quantized
        q_attrs = dict(attrs)
        if zp == "none" and dom == "" and since >= 21 and dtype != "uint8":
            q_attrs["output_dtype"] = elem
        nodes = [helper.make_node("QuantizeLinear", ["qx", *qargs], ["qq"], name="probe_q", domain=dom, **q_attrs),
                 helper.make_node("DequantizeLinear", ["qq", *qargs], ["qy"], name="probe_dq", domain=dom, **attrs)]
        inputs = [helper.make_tensor_value_info("qx", TensorProto.FLOAT, [4, 8])]
    elif source == "weights":  # constant weights dequantized into a float computation
        inits.append(helper.make_tensor("qx", elem, [4, 8], _values(dtype, 32, 1)))
        nodes = [helper.make_node("DequantizeLinear", ["qx", *qargs], ["qw"], name="probe_dq", domain=dom, **attrs),
                 helper.make_node("Add", ["qa", "qw"], ["qy"], name="probe_add")]
        inputs = [helper.make_tensor_value_info("qa", TensorProto.FLOAT, [4, 8])]
    elif source == "input":  # a quantized tensor coming into the network
        nodes = [helper.make_node("DequantizeLinear", ["qx", *qargs], ["qy"], name="probe_dq", domain=dom, **attrs)]
        inputs = [helper.make_tensor_value_info("qx", elem, [4, 8])]
    elif source == "gathered":  # rows of quantized weights (an embedding table) gathered, then dequantized
        inits.append(helper.make_tensor("qw", elem, [4, 8], _values(dtype, 32, 1)))
        nodes = [helper.make_node("Gather", ["qw", "qi"], ["qx"], name="probe_gather", axis=0),
                 helper.make_node("DequantizeLinear", ["qx", *qargs], ["qy"], name="probe_dq", domain=dom, **attrs)]
        inputs = [helper.make_tensor_value_info("qi", TensorProto.INT64, [4])]
    else:  # `computed`: a quantized tensor made inside the network from a float one: a Cast
        nodes = [helper.make_node("Cast", ["qa"], ["qx"], name="probe_cast", to=elem),
                 helper.make_node("DequantizeLinear", ["qx", *qargs], ["qy"], name="probe_dq", domain=dom, **attrs)]
        inputs = [helper.make_tensor_value_info("qa", TensorProto.FLOAT, [4, 8])]
    graph = helper.make_graph(nodes, f"{op}_{domain}_{since}_{dtype}_{source}_{zp}_{scale}", inputs,
                              [helper.make_tensor_value_info("qy", TensorProto.FLOAT, [4, 8])], inits)
    return _opset_model(graph, 17 if dom else since, (("com.microsoft", 1),) if dom else ())


def qdq_patterns() -> list[dict]:
    """Every Q/DQ pattern probed: op, domain, op version, quantized type, source, zero point, scale."""
    out = []
    for op, sources in (("DequantizeLinear", ("weights", "input", "computed", "gathered")), ("QuantizeLinear", ("pair",))):
        versions = [("ai.onnx", v, onnx_qdq_types(op, v)) for v in QDQ_SINCE]
        versions.append(("com.microsoft", 1, contrib_qdq_types(op)))
        for domain, since, types in versions:
            for dtype in types:
                if op == "QuantizeLinear" and dtype == "int32":
                    continue
                for source in sources:
                    scales = ["tensor"] + (["axis"] if since >= 13 or domain != "ai.onnx" else [])
                    if source == "weights" and domain == "ai.onnx" and since >= 21:
                        scales.append("block")
                    for zp in ZERO_POINTS:
                        if zp == "none" and op == "QuantizeLinear" and dtype != "uint8" and (domain != "ai.onnx" or since < 21):
                            continue  # without a zero point Q makes uint8 (before output_dtype)
                        if zp == "nonzero" and (dtype == "int32" or dtype.startswith("float")):
                            continue  # onnx: an int32 zero point is 0, a float8/4 one has no offset to shift by
                        for scale in scales:
                            out.append({"op": op, "domain": domain, "since": since, "x": dtype, "source": source,
                                        "zero_point": zp, "scale": scale})
    return out



def probe_node(p: dict, index: int) -> str:
    """What the node a probe's error names is: the Q or DQ, or another node (the Cast before a `computed` DQ, the
    Add after a `weights` one)."""
    order = {"pair": ["QuantizeLinear", "DequantizeLinear"], "computed": ["other", "DequantizeLinear"],
             "gathered": ["other", "DequantizeLinear"]}.get(
        p["source"], ["DequantizeLinear", "other"])
    return order[index] if index < len(order) else "other"


def pattern_id(p: dict) -> str:
    return "qdq:" + ":".join(str(p[k]) for k in ("op", "domain", "since", "x", "source", "zero_point", "scale"))


def tensor_import_graph(dtype: str, kind: str):
    """A [2] tensor of the type as an initializer (`initializer`), a Constant's value (`constant`) or a network
    input (`input`), read by an Identity; a float input beside it keeps the network an ordinary one."""
    from onnx import TensorProto, helper

    elem = _elem(dtype)
    vals = [b"a", b"b"] if dtype == "string" else ([True, False] if dtype == "bool" else [1, 0])
    t = helper.make_tensor("qw", elem, [2], vals)
    nodes = [helper.make_node("Identity", ["qw"], ["qy"], name="probe_id"), helper.make_node("Relu", ["qa"], ["qb"], name="probe_relu")]
    inits = [t] if kind == "initializer" else []
    inputs = [helper.make_tensor_value_info("qa", TensorProto.FLOAT, [2])]
    if kind == "constant":
        nodes.insert(0, helper.make_node("Constant", [], ["qw"], name="probe_const", value=t))
    if kind == "input":
        inputs.insert(0, helper.make_tensor_value_info("qw", elem, [2]))
    g = helper.make_graph(nodes, f"{kind}_{dtype}", inputs,
                          [helper.make_tensor_value_info("qy", elem, [2]), helper.make_tensor_value_info("qb", TensorProto.FLOAT, [2])],
                          inits)
    return _opset_model(g, 21)


def import_dtypes() -> list[str]:
    """Every element type onnx names, but complex and undefined."""
    from onnx import TensorProto

    return [n.lower() for n, v in TensorProto.DataType.items() if v and not n.startswith("COMPLEX")]


MATMULNBITS = [{"A": a, "bits": b} for a in ("float", "float16") for b in (4, 8)]


def matmulnbits_graph(a: str, bits: int):
    """com.microsoft::MatMulNBits as ORT's MatMulNBitsQuantizer writes it: A[2, 32] x B (8 columns, one block
    of 32), scales of A's type, no zero points."""
    from onnx import TensorProto, helper

    elem = _elem(a)
    blob = 32 * bits // 8
    node = helper.make_node("MatMulNBits", ["qa", "qb", "qs"], ["qy"], name="probe_mmnb", domain="com.microsoft",
                            K=32, N=8, bits=bits, block_size=32)
    g = helper.make_graph([node], f"matmulnbits_{a}_{bits}", [helper.make_tensor_value_info("qa", elem, [2, 32])],
                          [helper.make_tensor_value_info("qy", elem, [2, 8])],
                          [helper.make_tensor("qb", TensorProto.UINT8, [8, 1, blob], [17] * (8 * blob)),
                           helper.make_tensor("qs", elem, [8], [0.5] * 8)])
    return _opset_model(g, 21, (("com.microsoft", 1),))


# position_ids as ORT's schema allows it: [batch, tokens], or 1-D of shape [1] (an offset)
ROTARY = [{"A": a, "x_batch": xb, "position_ids_rank": 2, "position_ids_batch": pb} for a in ("float", "float16")
          for xb in ("static", "dynamic") for pb in ("static", "dynamic")] + [
    {"A": a, "x_batch": xb, "position_ids_rank": 1} for a in ("float", "float16") for xb in ("static", "dynamic")]


def rotary_graph(a: str, x_batch: str, position_ids_rank: int = 2, position_ids_batch: str = "static"):
    """com.microsoft::RotaryEmbedding as ORT's transformer optimizer writes it (fusion_rotary_attention.py): x of
    A's type [batch, 2 heads, 3 tokens, head size 16], position_ids int64 [batch, 3] a network input, cos/sin caches
    [8 positions, 8] of A's type as initializers; each batch dimension 1 (static) or named (dynamic). ONNX
    RotaryEmbedding-23 reads (X, cos_cache, sin_cache, position_ids): an importer that picks by op type alone gets
    position_ids where ONNX has cos_cache (RTX 1.4: 'cosCache has type Int64 but must have type Float, Half, or
    BFloat16'); RTX 1.5-1.7 read ORT's order and check that position_ids' batch is x's ('positionIds has batch size
    1 but must have the same batch size as input which is -1': a position_ids computed from constants beside a
    dynamic batch). position_ids_rank 1: ORT's other form, shape [1] (RTX 1.7: 'positionIds has rank 1 but must
    have rank 2')."""
    from onnx import TensorProto, helper

    elem = _elem(a)
    xb: int | str = 1 if x_batch == "static" else "n"
    pb: int | str = 1 if position_ids_batch == "static" else "n"
    node = helper.make_node("RotaryEmbedding", ["rx", "rpos", "rcos", "rsin"], ["ry"], name="probe_rope",
                            domain="com.microsoft", interleaved=0)
    pos_shape: list[int | str] = [pb, 3] if position_ids_rank == 2 else [1]
    g = helper.make_graph([node], f"rotary_{a}", [helper.make_tensor_value_info("rx", elem, [xb, 2, 3, 16]),
                                                  helper.make_tensor_value_info("rpos", TensorProto.INT64, pos_shape)],
                          [helper.make_tensor_value_info("ry", elem, [xb, 2, 3, 16])],
                          [helper.make_tensor("rcos", elem, [8, 8], [1.0] * 64), helper.make_tensor("rsin", elem, [8, 8], [0.0] * 64)])
    return _opset_model(g, 21, (("com.microsoft", 1),))


def quantization_models(root: Path) -> dict[str, str]:
    """Every quantization probe as a model file: id -> path."""
    import onnx

    paths = {}

    def save(pid: str, model) -> None:
        path = root / (pid.replace(":", "_") + ".onnx")
        onnx.save(model, path)
        paths[pid] = str(path)

    for dtype in import_dtypes():
        for kind in ("input", "initializer", "constant"):
            save(f"import:{kind}:{dtype}", tensor_import_graph(dtype, kind))
    for p in qdq_patterns():
        save(pattern_id(p), _qdq_graph(p["op"], p["domain"], p["since"], p["x"], p["source"], p["zero_point"], p["scale"]))
    for p in MATMULNBITS:
        save(f"ort:MatMulNBits:{p['A']}:{p['bits']}", matmulnbits_graph(p["A"], p["bits"]))
    for p in ROTARY:
        model = rotary_graph(p["A"], p["x_batch"], p["position_ids_rank"], p.get("position_ids_batch", "static"))
        save(":".join(["ort", "RotaryEmbedding", *(str(v) for v in p.values())]), model)
    return paths


def parser_words(row: dict) -> str:
    """The parser's reason for a rejected probe, as the table keeps it: the error log's line where it names what it
    could not import, else the first error's text; its message without the assertion's expression or the API's
    location, the probe's own names replaced by what they stand for."""
    if row.get("crash"):
        return f"the parser crashed ({row['crash']})"
    log = next((ln for ln in row.get("log", ()) if "import" in ln and "initializer" in ln), None)
    text = log or row.get("desc") or ""
    text = re.sub(r"^In node -?\d+ with name: \S* and operator: \S* \(\w+\): \w+: ", "", text)
    text = re.sub(r"^Invalid Node - \S+ ", "", text)
    text = re.sub(r"^[\w.]+\.cpp:\d+: ", "", text)
    for name, role in PROBE_NAMES.items():
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.])", role, text)
    if text.startswith("Assertion failed: "):
        text = text[len("Assertion failed: "):]
        quoted = re.search(r' && "(.+)"$', text)  # `EXPR && "message"`
        # or the 10.x line's `EXPR: message` (EXPR may hold `::` and `->`, never ": ")
        text = quoted.group(1) if quoted else re.split(r"(?<!:): (?!:)", text)[-1]
    # the API's location and what the log appends after it ('[checkMacros.cpp::catchCudaError::250] Error Code 1')
    usage = re.search(r"API Usage Error \((?:<node>: )?(.+?)(?: In \w+ at \S+.*)?\)?$", text)
    if usage:
        text = usage.group(1)
    text = re.sub(r"^<node>: ", "", text)
    first = re.match(r"^(.+?\.)(?: |$)", text)  # the first sentence: the rest says how to ask for DLA or where
    return (first.group(1) if first and len(first.group(1)) > 20 else text).strip()


def quantization_section(got: dict) -> tuple[dict, dict]:
    """(behaviour.quantization, the MatMulNBits probe rows) from the probe answers. Q/DQ patterns are keyed
    `op/domain/since/x/source/zero_point/scale`: "accept", "crash", or [the node the error names, the index of the
    parser's words in `errors`] (the node: `graph` for an initializer, `QuantizeLinear`, `DequantizeLinear`, `other`)."""
    probes = got["probes"]
    rejected: dict[str, dict[str, str]] = {"inputs": {}, "initializers": {}, "constants": {}}
    for dtype in import_dtypes():
        for kind, key in (("input", "inputs"), ("initializer", "initializers"), ("constant", "constants")):
            row = probes[f"import:{kind}:{dtype}"]
            words = parser_words(row) if not row["ok"] else ""
            if kind == "input":  # the network's inputs are made before any initializer or node (importInputs)
                if not row["ok"] and (row.get("crash") or row.get("node", 0) < 0):
                    rejected[key][dtype] = words
            elif row.get("crash") or ("import" in words and "initializer" in words):
                rejected[key][dtype] = words
    errors: list[str] = []
    qdq: dict[str, object] = {}
    for p in qdq_patterns():
        row = probes[pattern_id(p)]
        key = "/".join(str(p[k]) for k in ("op", "domain", "since", "x", "source", "zero_point", "scale"))
        if row["ok"] or row.get("crash"):
            qdq[key] = "accept" if row["ok"] else "crash"
            continue
        words = parser_words(row)
        if words not in errors:
            errors.append(words)
        node = row.get("node", -1)
        qdq[key] = ["graph" if node is None or node < 0 else probe_node(p, node), errors.index(words)]
    section = {**rejected, "errors": errors, "qdq": qdq}
    ort_probes: dict[str, list[dict]] = {}
    for op, rows in (("MatMulNBits", MATMULNBITS), ("RotaryEmbedding", ROTARY)):
        for p in rows:
            row = probes[":".join(["ort", op, *(str(v) for v in p.values())])]
            entry = dict(p, result="accept" if row["ok"] else "reject")
            if not row["ok"]:
                entry["error"] = parser_words(row)
            ort_probes.setdefault(f"com.microsoft::{op}", []).append(entry)
    return section, ort_probes


def reduce_18_ops() -> list[str]:
    """The Reduce ops whose version 18 moved `axes` from an attribute to an input."""
    import onnx

    return sorted({s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and s.since_version == 18
                   and s.name.startswith("Reduce") and any(i.name == "axes" for i in s.inputs)})


def ort_op_names() -> dict[str, list[str]]:
    """ORT's ops that onnx has no schema for, as `domain::op` -> the inputs ORT's schema names."""
    import onnx
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    onnx_ops = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    out: dict[str, list[str]] = {}
    for s in ort_c.get_all_operator_schema():
        domain = s.domain or "ai.onnx"
        if domain == "com.microsoft" or (domain == "ai.onnx" and s.name not in onnx_ops):
            key = f"{domain}::{s.name}"
            if key not in out or s.since_version >= 1:
                out[key] = [i.name for i in s.inputs]
    return out


def onnx_inputs(op: str) -> list[str] | None:
    import onnx

    try:
        return [i.name for i in onnx.defs.get_schema(op).inputs]
    except onnx.defs.SchemaError:
        return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trt", action="append", required=True, help="LABEL=PYTHON (a Python that imports tensorrt)")
    ap.add_argument("--stub-dir", action="append", default=[], help="LABEL=DIR: LD_LIBRARY_PATH for that TensorRT")
    ap.add_argument("--out", default=str(ROOT / "onnxlint" / "data" / "tensorrt"))
    ap.add_argument("--raw", help="write each parser's raw probe answers to DIR/<label>.json")
    ap.add_argument("--no-quantization", action="store_true", help="leave the quantization probes out (keeps the table's)")
    args = ap.parse_args(argv)
    stubs = dict(s.split("=", 1) for s in args.stub_dir)
    names = ort_op_names()
    import onnxruntime

    with tempfile.TemporaryDirectory(prefix="trt-behaviour-") as tmp:
        probes = probe_models(Path(tmp))
        if not args.no_quantization:
            qroot = Path(tmp) / "quantization"
            qroot.mkdir()
            probes.update(quantization_models(qroot))
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({"names": sorted({k.split("::", 1)[1] for k in names}), "probes": probes}))
        for spec in args.trt:
            label, python = spec.split("=", 1)
            env = dict(os.environ)
            if label in stubs:
                env["LD_LIBRARY_PATH"] = stubs[label] + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
            worker = Path(tmp) / "worker.py"
            worker.write_text(WORKER)
            res = subprocess.run([python, str(worker), str(job)], env=env, capture_output=True, text=True, check=True)
            got = json.loads(res.stdout.strip().splitlines()[-1])
            if args.raw:
                Path(args.raw).mkdir(parents=True, exist_ok=True)
                (Path(args.raw) / f"{label}.json").write_text(json.dumps(got, indent=1))
            importers, plugins = set(got["importers"]), set(got["plugin_importers"])
            dest = Path(args.out) / f"trt-{label}.json"
            table = json.loads(dest.read_text())
            old_behaviour = table.get("behaviour") or {}
            if args.no_quantization:
                quantization, ort_probes = old_behaviour.get("quantization"), table.get("ort_op_probes") or {}
            else:
                quantization, ort_probes = quantization_section(got)
                # only where the parser has an importer: its checks run before it loads the plugin (MatMulNBits on
                # the 10.x line reads A's type and `bits` first), so what it says depends on the node
                ort_probes = {op: rows for op, rows in ort_probes.items() if op.split("::")[1] in importers}
            ort_ops = {}
            for key, inputs in sorted(names.items()):
                op = key.split("::", 1)[1]
                if op not in importers:
                    continue
                theirs = onnx_inputs(op)
                ort_ops[key] = {"importer": True, "plugin": op in plugins, "onnx_op": theirs is not None,
                                "same_inputs": theirs is not None and theirs == inputs}
            shape = got["probes"]["shape_start_end"]
            mixed = got["probes"]["mixed_float_inputs"]
            branch = got["probes"]["if_constant_output"]
            behaviour = {
                "shape_start_end": ("honoured" if shape["out_shapes"] == [[1]] else "ignored") if shape["ok"] else "rejected",
                "shape_start_end_probe": f"Shape(x[2,3,4], start=1, end=2) -> {shape['out_shapes'] or shape.get('desc')}",
                "mixed_float_inputs": "accept" if mixed["ok"] else "reject",
                "mixed_float_inputs_probe": "Add(float16[2,3], float[2,3]): " + (mixed.get("desc", "")[:200] or "accepted"),
                "if_constant_output": "accept" if branch["ok"] else "reject",
                "if_constant_output_probe": "If with then_branch outputs (Constant, Neg), else_branch (Neg, Neg): "
                                            + (branch.get("desc", "")[:200] or "accepted"),
            }
            reduce = {}
            for op in reduce_18_ops():
                r = got["probes"][f"axes_input_{op}"]
                reduce[op] = ("honoured" if r["out_shapes"] == [[-1, 3]] else "ignored") if r["ok"] else "rejected"
            behaviour["reduce_axes_input"] = reduce
            dims = (got["probes"]["axes_input_ReduceMean"]["out_shapes"] or [None])[0]
            behaviour["reduce_axes_input_probe"] = ("ReduceMean-18(x[n,3,4], axes=[-1], keepdims=0) gives shape "
                                                    f"{tuple(dims) if dims is not None else 'nothing'}"
                                                    + (", not (n, 3)" if reduce["ReduceMean"] != "honoured" else ""))
            if quantization is not None:
                behaviour["quantization"] = quantization
                behaviour["quantization_source"] = (
                    f"tools/gen_trt_behaviour.py: {len(quantization['qdq'])} Q/DQ patterns and an initializer and a Constant of "
                    f"each element type, parsed by TensorRT {got['version']}")
            table["behaviour"] = behaviour
            if ort_probes:
                table["ort_op_probes"] = ort_probes
            else:
                table.pop("ort_op_probes", None)
            table["ort_ops"] = ort_ops
            table["ort_ops_source"] = (f"tools/gen_trt_behaviour.py: OnnxParser.supports_operator of TensorRT {got['version']} "
                                       f"for the {len(names)} ops onnxruntime {onnxruntime.__version__} registers beyond onnx's")
            dest.write_text(json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n")
            print(dest, got["version"], {k: v for k, v in behaviour.items() if k != "quantization"}, sorted(ort_ops),
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
