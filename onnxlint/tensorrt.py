"""TensorRT's ONNX parser support, from onnx-tensorrt's operator matrix (one table per release branch)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

from onnxlint import resources
from onnxlint.graph import GraphIndex, NodeRef, STANDARD_DOMAINS, StatusIndex

TRT_TYPES = {"FP32": "float", "FLOAT32": "float", "FP16": "float16", "FLOAT16": "float16", "BF16": "bfloat16",
             "BFLOAT16": "bfloat16", "INT32": "int32", "INT64": "int64", "INF64": "int64", "INT8": "int8",
             "UINT8": "uint8", "BOOL": "bool", "FP8": "float8e4m3fn", "INT4": "int4", "DOUBLE": "double"}
_ROW = re.compile(r"^\|\s*([A-Za-z][\w]*)\s*\|\s*([YN])\s*\|?(.*)$")


def parse_operators_md(text: str) -> dict:
    """onnx-tensorrt docs/operators.md -> {'opset_range', 'data_types', 'ops': {op: {supported, types, restrictions}}}."""
    ops: dict[str, dict] = {}
    opset = re.search(r"opset (\d+) to opset (\d+)", text, re.I) or re.search(r"up to Opset (\d+)", text, re.I)
    lo, hi = (int(opset.group(1)), int(opset.group(2))) if opset and opset.lastindex == 2 else (7, int(opset.group(1)) if opset else None)
    types_line = re.search(r"supports the following ONNX data types: ([^\n]+)", text)
    data_types = sorted({TRT_TYPES[t.strip().upper()] for t in re.split(r",|and", types_line.group(1).rstrip(".")) if t.strip().upper() in TRT_TYPES}) if types_line else []
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


@lru_cache(maxsize=None)
def available() -> list[str]:
    vs = [p.stem.split("-", 1)[1] for p in (resources.data_dir() / "tensorrt").glob("trt-*.json")]
    return sorted(vs, key=lambda v: tuple(int(x) for x in v.split(".")))


@lru_cache(maxsize=None)
def load(version: str) -> dict:
    return json.loads((resources.data_dir() / "tensorrt" / f"trt-{version}.json").read_text())


def resolve(version: str | None) -> tuple[str, str | None]:
    vs = available()
    if version is None:
        return vs[-1], None
    if version in vs:
        return version, None
    want = tuple(int(x) for x in re.findall(r"\d+", version))[:2]
    best = min(vs, key=lambda v: abs((int(v.split(".")[0]) * 100 + int(v.split(".")[1])) - (want[0] * 100 + (want[1] if len(want) > 1 else 0))))
    return best, f"TensorRT {version} has no shipped matrix; using {best}'s"


@dataclass
class TrtNode:
    node: NodeRef
    status: str  # supported | unsupported | restricted
    reason: str | None = None
    detail: str = ""


@dataclass
class TrtPrediction(StatusIndex):
    COMMON = "supported"

    version: str
    note: str | None
    nodes: dict[int, TrtNode] = field(default_factory=dict)

    def get(self, node: NodeRef) -> TrtNode | None:
        return self.nodes.get(node.index)


def _effective(dtype: str | None, table: dict) -> str | None:
    if dtype == "int64" and table["casts_int64"]:
        return "int32"  # the 8.x parser casts INT64 weights and tensors down to INT32
    if dtype == "double":
        return "float"  # every listed release casts DOUBLE down to FLOAT
    return dtype


def predict(index: GraphIndex, version: str | None = None) -> TrtPrediction:
    ver, note = resolve(version)
    table = load(ver)
    pred = TrtPrediction(ver, note)
    shared: dict[tuple, tuple] = {}  # nodes with one signature get one verdict
    for node in index.nodes:
        if index.is_local_function(node):
            continue
        sig = index.signature(node)
        verdict = shared.get(sig)
        if verdict is None:
            verdict = shared[sig] = _verdict(node, sig, table, ver)
        pred.record(node.index, TrtNode(node, *verdict))
    return pred


def _dtype(type_str: str | None) -> str | None:
    return type_str[7:-1] if type_str and type_str.startswith("tensor(") else None


def _verdict(node: NodeRef, sig: tuple, table: dict, ver: str) -> tuple[str, str | None, str]:
    """(status, reason, detail) for one node signature."""
    if node.domain not in STANDARD_DOMAINS:
        return ("unsupported", "plugin",
                f"{node.domain}::{node.op_type} is not an ONNX op; TensorRT needs a plugin registered under that name")
    row = table["ops"].get(node.op_type)
    if row is None:
        return "unsupported", "not-listed", f"{node.op_type} is not in TensorRT {ver}'s operator matrix"
    if not row["supported"]:
        return "unsupported", "not-supported", f"TensorRT {ver} lists {node.op_type} as unsupported"
    ins, outs = sig[3], sig[4]
    if any(_dtype(t) == "string" for t in ins + outs):
        return "unsupported", "dtype", f"{node.op_type} touches a string tensor; TensorRT has no string type"
    dtype = _effective(_dtype(ins[0]) if ins else None, table)
    if row["types"] and dtype and dtype not in row["types"] and node.op_type not in ("Cast", "Shape", "Size"):
        return ("unsupported", "dtype",
                f"{node.op_type} on {dtype} is not supported by TensorRT {ver} (supported: {', '.join(row['types'])})")
    return ("restricted" if row["restrictions"] else "supported"), None, row["restrictions"]
