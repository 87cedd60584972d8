#!/usr/bin/env python3
"""Follow the runtimes' releases: list onnxruntime, onnxruntime-gpu, TensorRT and TensorRT-RTX releases on PyPI
newer than onnxlint's tables, and regenerate every table and row for them in one run.

    python tools/follow_releases.py --check          # list what is newer than the tables; exit 1 if anything is
    python tools/follow_releases.py --refresh-rows [1.20 1.24 ...] [--show-refusals]   # probe release rows again
    python tools/follow_releases.py [--only ort|tensorrt] [--work DIR] \\
        [--stub-tool ORT_CUDA_TRUTH --cuda-include DIR]          # for a new onnxruntime-gpu release
        [--trt-stub-dir DIR]                                     # (TensorRT 8.x wheels need a stub CUDA driver)

What one run regenerates, each with the generator that owns it (nothing is typed):

* onnxruntime (CPU) and onnxruntime-gpu (CUDA) releases: their kernel tables (tools/gen_kernel_tables.py
  `read` of each new wheel, then `pack` with every shipped release, unpacked from the shipped tables) and ORT's
  own op schemas (tools/gen_ort_schemas.py, the same way);
* the release rows (onnxlint/data/kernels/ort-releases.json, read by onnxlint/ort/releases.py): for every
  minor line with a table, the newest ai.onnx opset and IR version its newest patch loads, probed with session
  creation on the wheel itself (a one-Identity model per opset and per IR version: ORT refuses a newer one in
  ValidateOpsetForDomain / Model::Model), and the tensor element types it refuses (`elem_types`: a model with an
  unused initializer, and one with an unused graph input, of each number 0-63 and a few far ones, at the line's
  newest IR; sorted by ORT's words, see elem_types), and whether it refuses a model whose shape input is in an
  external data file (`external_inference`, see external_models), whether it refuses a model holding a local
  function that calls itself (`recursive_functions`, see recursive_models), whether it refuses one holding two
  local functions of the same id (`duplicate_functions`, see duplicate_models), and at which opsets its basic
  optimizations remove a Cast only Shapes read (`pre_shape`, see pre_shape_models) and fuse a Reshape's shape
  subgraph (`reshape_fusion`, see reshape_fusion_models); `--refresh-rows [LINE ...]` probes the rows
  again alone;
* TensorRT-RTX (`tensorrt-rtx`, the 10.x-line parser, whose wheels run here without a GPU): a parser-verified
  table per new release (tools/gen_trt_support.py, then tools/gen_trt_behaviour.py), label `10.1+rtx<M.m>`.
  `tensorrt` releases newer than the tables whose parser PyPI ships only as an sdist that downloads from
  NVIDIA's own index cannot be measured here: they are listed, and recorded with that reason in
  data/upstream/releases-seen.json so that `--check` tells of them once.

Each target's default is its newest table (onnxlint/ort/kernel_registry.py, onnxlint/tensorrt/tables.py), so a
regenerated release is what a default run checks. Then run the truth benchmarks (benchmarks/README.md) on it.
`--check` needs only pip and the network: run it on a schedule (a cron job, a CI job) to learn that a release
shipped (it prints the list and exits 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import gen_kernel_tables as kt  # noqa: E402

from onnxlint.ort import kernel_registry, releases, schema_registry  # noqa: E402
from onnxlint.tensorrt import tables as trt_tables  # noqa: E402
from onnxlint.tensorrt import versions as trt_versions  # noqa: E402

SEEN = ROOT / "data" / "upstream" / "releases-seen.json"
TRT_SOURCES = ROOT / "data" / "upstream" / "tensorrt" / "SOURCES.md"
ORT_PACKAGES = {"onnxruntime": "cpu", "onnxruntime-gpu": "cuda"}
RTX_PACKAGES = ("tensorrt-rtx-cu12-libs", "tensorrt-rtx-cu12-bindings")
log = kt.log


# --------------------------------------------------------------------------------------------- what is newer


def pypi(package: str) -> list[str]:
    """The package's releases, oldest first (`pip index versions`: the index's own client)."""
    try:
        return kt.pypi_versions(package, sys.executable)
    except RuntimeError as exc:
        log(f"  {package}: {exc}")
        return []


def _release(v: str) -> tuple[int, ...]:
    """A version's release numbers, padded ('10.1' and '10.1.0' are one; a .post build is its release's)."""
    nums = kt.version_key(re.sub(r"\.post\d+$", "", v))
    return nums + (0,) * (4 - len(nums))


def _newer(found: list[str], shipped: list[str]) -> list[str]:
    """The found releases newer than every shipped one (pre-releases and .post rebuilds of a listed one left out)."""
    top = max((_release(v) for v in shipped), default=())
    out: dict[tuple[int, ...], str] = {}
    for v in found:
        if _release(v) > top and not re.search(r"(dev|rc|a|b)\d*$", v):
            out.setdefault(_release(v), v)
    return list(out.values())


def rtx_label(version: str) -> str:
    """The table label of a TensorRT-RTX release: '1.7.1.116' -> '10.1+rtx1.7' (its parser is of the 10.x line,
    newer than 10.1's docs; tensorrt.versions)."""
    major, minor = kt.version_key(version)[:2]
    return f"10.1+rtx{major}.{minor}"


def newer_releases() -> dict[str, list[str]]:
    """product -> releases newer than its newest table (TensorRT: those not recorded as unmeasurable)."""
    out: dict[str, list[str]] = {}
    for package, ep in ORT_PACKAGES.items():
        out[package] = _newer(pypi(package), kernel_registry.releases(ep))
    labels = trt_tables.available()
    numbered = [v for v in labels if not trt_versions.is_rtx(v)]
    seen = _seen().get("tensorrt", {})
    out["tensorrt"] = [v for v in _newer(pypi("tensorrt"), numbered) if v not in seen]
    have_rtx = {v for v in labels if trt_versions.is_rtx(v)}
    rtx = [v for v in pypi(RTX_PACKAGES[0]) if rtx_label(v) not in have_rtx]
    latest: dict[str, str] = {}
    for v in rtx:  # one table per minor line: its newest patch
        latest[rtx_label(v)] = v
    newest = max((kt.version_key(_rtx_of(lb)) for lb in have_rtx), default=())
    out["tensorrt-rtx"] = [v for v in latest.values() if kt.version_key(v) > newest]
    rows = missing_rows()
    if rows:
        out["ORT release rows"] = rows
    return out


def _rtx_of(label: str) -> str:
    m = trt_versions.RTX_LABEL.search(label)
    return m.group(1) if m else "0"


def missing_rows(since: str | None = None) -> list[str]:
    """ORT minor lines with a kernel table (or published from `since` on) that have no release row."""
    lines = {releases.release(v) for ep in ("cpu", "cuda") for v in kernel_registry.releases(ep)}
    if since:
        lines |= {releases.release(v) for v in _published_ort() if kt.version_key(v) >= kt.version_key(since)}
    return [f"{a}.{b}" for a, b in sorted(x for x in lines if x and x not in releases.limits())]


def _published_ort() -> list[str]:
    """Every onnxruntime release on PyPI, CPU or GPU package (1.20.2 is published only as onnxruntime-gpu)."""
    return sorted(set(pypi("onnxruntime")) | set(pypi("onnxruntime-gpu")), key=kt.version_key)


def _seen() -> dict[str, dict[str, str]]:
    return json.loads(SEEN.read_text()).get("not_measured", {}) if SEEN.exists() else {}


# --------------------------------------------------------------------------------------------- ORT tables


def unpack_kernels(raw: Path) -> None:
    """The shipped kernel tables as gen_kernel_tables' raw files (pack of them gives the shipped bytes back)."""
    for ep in ("cpu", "cuda"):
        data = kernel_registry._packed(ep) or {"releases": [], "read": {}}
        for v in data["releases"]:
            t = kernel_registry.load(ep, v)
            r = kt.raw_from_table(ep, v, t.source, {"ops": t.ops, "params": t.params})
            r["read"] = data["read"].get(v, "")
            kt.write_raw(raw, ep, r)


def unpack_schemas(raw: Path) -> None:
    """The shipped ORT schema table as gen_ort_schemas' raw files."""
    data = schema_registry._packed() or {"releases": [], "read": {}, "schemas": [], "sources": []}
    for i, v in enumerate(data["releases"]):
        bit = 1 << i
        rows = sorted((row[:-1] for row in data["schemas"] if row[-1] & bit), key=json.dumps)
        source = next((s for s, m in data["sources"] if m & bit), "")
        (raw / f"{v}-schemas.json").write_text(json.dumps({"ort_version": v, "source": source, "read": data["read"].get(v, ""),
                                                           "schemas": rows}, sort_keys=True, separators=(",", ":")) + "\n")


def regenerate_ort(new: dict[str, list[str]], args: argparse.Namespace) -> list[str]:
    """Kernel tables and ORT schemas of the new onnxruntime / onnxruntime-gpu releases; what was written."""
    import gen_ort_schemas as gs

    if not new.get("onnxruntime") and not new.get("onnxruntime-gpu"):
        return []
    raw = Path(tempfile.mkdtemp(prefix="ort-raw-", dir=args.work))
    unpack_kernels(raw)
    wrote = []
    for package, ep in ORT_PACKAGES.items():
        for v in new.get(package, []):
            log(f"{package}=={v}: kernel registry ...")
            if ep == "cuda" and not (args.stub_tool or args.stub_dir):
                raise SystemExit(f"{package} {v}: the CUDA provider's registry needs --stub-tool (the ort-cuda-truth "
                                 "harness's build_stubs.py) and --cuda-include, or --stub-dir")
            for name, r in kt.read_release(package, v, args).items():
                log(f"  {kt.write_raw(raw, ep, r, name)}: {len(r['defs'])} KernelDefs")
    for path in kt.pack(raw, kt.OUT):
        wrote.append(str(path.relative_to(ROOT)))
    kt.update_sources_md(ROOT / "data" / "upstream" / "ort" / "SOURCES.md", kt.sources_table(raw))
    schemas = Path(tempfile.mkdtemp(prefix="ort-schemas-raw-", dir=args.work))
    unpack_schemas(schemas)
    have = set((schema_registry._packed() or {"releases": []})["releases"])
    for v in sorted(set(_fresh_packed("cpu")) - have, key=kt.version_key):
        log(f"onnxruntime {v}: op schemas ...")
        r = gs.read_release(v, args)
        (schemas / f"{v}-schemas.json").write_text(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
    wrote.append(str(gs.pack(schemas, gs.OUT).relative_to(ROOT)))
    for cached in (kernel_registry._packed, kernel_registry.available, schema_registry._packed):
        getattr(cached, "cache_clear", lambda: None)()
    return wrote


def _fresh_packed(ep: str) -> list[str]:
    import gzip

    return list(json.loads(gzip.decompress((kt.OUT / f"ort-{ep}.json.gz").read_bytes()))["releases"])


# --------------------------------------------------------------------------------------------- release rows

PROBE = r"""
import json, sys
import onnxruntime as ort
so = ort.SessionOptions()
so.log_severity_level = 4
out = {}
for key, model in json.load(open(sys.argv[1])).items():
    if isinstance(model, dict):  # a model and its external data file, written here and loaded from its path
        for name, data in model["files"].items():
            open(name, "wb").write(bytes.fromhex(data))
        model = model["path"]
    else:
        model = bytes.fromhex(model)
    try:
        ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        out[key] = True
    except Exception as exc:
        words = (str(exc).splitlines() or [""])[0]
        out[key] = words if len(words) <= 400 else words[:150] + " ... " + words[-250:]
print(json.dumps({"version": ort.__version__, "loads": out}))
"""


def probe_models() -> dict[str, str]:
    """One Identity model per ai.onnx opset (at IR 7) and per IR version (at opset 13), as hex bytes."""
    from onnx import TensorProto, helper

    def model(opset: int, ir: int) -> str:
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = ir
        return m.SerializeToString().hex()

    out = {f"opset:{n}": model(n, 7) for n in range(7, 41)}
    out.update({f"ir:{n}": model(13, n) for n in range(3, 21)})
    return out


# Element types probed (TensorProto.DataType numbers): UNDEFINED, each type the installed onnx defines and the numbers
# past it up to ELEM_DENSE, then a few far numbers. A model's tensor of a number not probed is not claimed refused.
ELEM_DENSE = 63
ELEM_FAR = (99, 100, 127, 128, 255, 256, 1000, 1024, 65535, 65536, 2**31 - 1)
# bytes of one element of a probed type (numbers onnx does not give a numpy type for: one byte)
_ELEM_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16, 16: 2}


def elem_probed() -> list[int]:
    from onnx import TensorProto

    newest = max(TensorProto.DataType.values())
    return list(range(0, max(ELEM_DENSE, newest + 1) + 1)) + [n for n in ELEM_FAR if n > max(ELEM_DENSE, newest + 1)]


def elem_models(ir: int) -> dict[str, str]:
    """Per probed element type N, at IR `ir` (the release's newest: a type's refusal there holds for older IR): a
    float Identity model with an unused initializer 'e' of type N ("init:N"), an unused graph input 'e' of type N
    ("input:N") or an unused sparse initializer whose values 'e' are of type N ("sparse:N"), as hex bytes. ORT
    refuses a type it does not load while reading the model (Graph's constructor, its NodeArgs, the session's model
    metadata), before anything reads the tensor."""
    from onnx import TensorProto, helper

    def tensor(elem: int) -> TensorProto:
        t = TensorProto(name="e", data_type=elem, dims=[1])
        if elem == TensorProto.STRING:
            t.string_data.append(b"a")
        else:
            t.raw_data = b"\0" * _ELEM_BYTES.get(elem, 1)
        return t

    def model(elem: int, kind: str) -> str:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
        inputs, inits = [x], []
        if kind == "init":
            inits.append(tensor(elem))
        elif kind == "input":
            inputs.append(helper.make_tensor_value_info("e", elem, [1]))
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], inits)
        if kind == "sparse":  # one value at index 0 of 4
            g.sparse_initializer.append(helper.make_sparse_tensor(tensor(elem), helper.make_tensor(
                "i", TensorProto.INT64, [1], [0]), [4]))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = ir
        return m.SerializeToString().hex()

    return {f"{kind}:{n}": model(n, kind) for n in elem_probed() for kind in ("init", "input", "sparse")}


def external_models(ir: int) -> dict[str, dict[str, object]]:
    """A Reshape whose shape (an initializer) is in an external data file, at IR `ir`: its inference reads that
    value while Graph::Resolve runs, which onnx's inference cannot read from a file ("Cannot parse data from
    external tensors"); a release that reads it there (onnxruntime PR 31169, open in 2026-12) loads the model."""
    import struct

    from onnx import TensorProto, helper

    shape = TensorProto(name="shape", data_type=TensorProto.INT64, dims=[1], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", "external.onnx.data"), ("offset", "0"), ("length", "8")):
        shape.external_data.add(key=key, value=value)
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "probe",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], [shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = ir
    files = {"external.onnx": m.SerializeToString().hex(), "external.onnx.data": struct.pack("<q", 1).hex()}
    return {"external:reshape": {"files": files, "path": "external.onnx"}}


_EXTERNAL_REFUSED = "Cannot parse data from external tensors"


def row_answer(got: object, words: str) -> str:
    """A probe's answer as a row keeps it: "loads", "refused" (in ORT's words), or "other" (a refusal in other words:
    nothing is claimed of it)."""
    return "loads" if got is True else "refused" if words in str(got) else "other"


def external_inference(loads: dict[str, object]) -> str:
    """The row's `external_inference` from the probe's answer (row_answer)."""
    return row_answer(loads.get("external:reshape"), _EXTERNAL_REFUSED)


def recursive_models(ir: int) -> dict[str, str]:
    """A float Identity model at IR `ir` holding a local function F that calls itself, which the graph does not call
    ("recursive:self"), as hex bytes: a release whose Model constructor checks the functions refuses it in ORT's
    words ("Model local function definitions must not be recursive"); older ones load it (and crash, SIGSEGV, where
    the graph calls F: never probed, a crash would end the probe)."""
    from onnx import helper

    f = helper.make_function("loc", "F", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain="loc")],
                             [helper.make_opsetid("", 13), helper.make_opsetid("loc", 1)])
    return {"recursive:self": _uncalled_functions([f], ir)}


def _uncalled_functions(functions: list[Any], ir: int) -> str:
    """A float Identity model holding these local functions (domain loc), which its graph does not call, at IR `ir`
    (8 at least: local functions came with IR 8), as hex bytes."""
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("loc", 1)],
                          functions=functions)
    m.ir_version = max(ir, 8)
    return m.SerializeToString().hex()


_RECURSIVE_REFUSED = "Model local function definitions must not be recursive"


def duplicate_models(ir: int) -> dict[str, str]:
    """A float Identity model at IR `ir` holding two local functions of the same id (domain loc, name F, no
    overload), each an Identity, which the graph does not call ("duplicate:function"), as hex bytes: a release whose
    Model constructor checks the ids refuses it in ORT's words ("Duplicate model-local function identifier: loc:F");
    older ones load it (keeping one definition)."""
    from onnx import helper

    fs = [helper.make_function("loc", "F", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])],
                               [helper.make_opsetid("", 13)]) for _ in range(2)]
    return {"duplicate:function": _uncalled_functions(fs, ir)}


_DUPLICATE_REFUSED = "Duplicate model-local function identifier"


def duplicate_functions(loads: dict[str, object]) -> str:
    """The row's `duplicate_functions` from the probe's answer (row_answer)."""
    return row_answer(loads.get("duplicate:function"), _DUPLICATE_REFUSED)


def recursive_functions(loads: dict[str, object]) -> str:
    """The row's `recursive_functions` from the probe's answer (row_answer)."""
    return row_answer(loads.get("recursive:self"), _RECURSIVE_REFUSED)


def spans(numbers: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0-2,5,7-8" (how the rows keep sets of element types)."""
    out: list[str] = []
    for n in sorted(set(numbers)):
        if out and "-" not in out[-1] and int(out[-1]) == n - 1:
            out[-1] = f"{out[-1]}-{n}"
        elif out and "-" in out[-1] and int(out[-1].split("-")[1]) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ",".join(out)


# How ORT words a refusal: the Graph constructor's check of an initializer (1.24 on), a type ORT does not know at all,
# a type it knows but has no MLDataType for (InferenceSession's model metadata: the main graph's inputs); a sparse
# initializer made dense (the Graph constructor, first): a type the conversion does not take (up to 1.24), an empty
# NOT_IMPLEMENTED status (from 1.31), a type with no zero (FLOAT8E8M0, from 1.31)
_CHECKED = "does not have valid data type"
_INVALID = "Invalid tensor data type"
_UNREGISTERED = "is not currently registered or supported"
_SPARSE_UNSUPPORTED = "tensor type {} is not supported"
_SPARSE_NOT_IMPLEMENTED = "status.IsOK() was false. [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : "
_SPARSE_NO_ZERO = "values are unsupported because the type has no zero representation"


def elem_types(loads: dict[str, object]) -> dict[str, str]:
    """The row's element-type facts from the probe's answers (ORT's words sort them; a refusal in other words is in
    no set, so nothing is claimed of it): the numbers probed; those whose initializer session creation refused, and
    of them those the Graph constructor names ("Tensor 'e' does not have valid data type."); those whose graph input
    it refused as "Invalid tensor data type N." (a type it does not know, refused wherever a tensor has it), and as
    "MLDataType for: tensor(t) is not currently registered or supported" (a main-graph input); those whose sparse
    initializer (main graph) it refused, in each of its three words."""
    probed = sorted(int(k.split(":")[1]) for k in loads if k.startswith("input:"))

    def said(kind: str, words: str | None) -> list[int]:
        got = [(n, loads.get(f"{kind}:{n}", True)) for n in probed]
        return [n for n, ok in got if ok is not True and (words is None or words.format(n) in str(ok))]

    return {"probed": spans(probed), "refused_initializer": spans(said("init", None)),
            "initializer_checked": spans(said("init", _CHECKED)), "invalid": spans(said("input", _INVALID)),
            "unregistered": spans(said("input", _UNREGISTERED)),
            "sparse_unsupported": spans(said("sparse", _SPARSE_UNSUPPORTED)),
            "sparse_not_implemented": spans(said("sparse", _SPARSE_NOT_IMPLEMENTED)),
            "sparse_no_zero": spans(said("sparse", _SPARSE_NO_ZERO))}


# the model ORT's basic optimizations leave (session.optimized_model_filepath), as hex bytes; None: refused
OPTIMIZED_PROBE = r"""
import json, sys
import onnxruntime as ort
out = {}
for key, model in json.load(open(sys.argv[1])).items():
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = "optimized.onnx"
    try:
        ort.InferenceSession(bytes.fromhex(model), so, providers=["CPUExecutionProvider"])
        out[key] = open("optimized.onnx", "rb").read().hex()
    except Exception:
        out[key] = None
print(json.dumps({"version": ort.__version__, "loads": out}))
"""


def pre_shape_models(max_opset: int, ir: int) -> dict[str, str]:
    """Per ai.onnx opset from 11 to max_opset, x float[N, 3] -> Relu -> Cast(to float16) -> Shape ("pre_shape:N"),
    as hex bytes: ORT's PreShapeNodeElimination (Level 1) removes a Cast only Shapes read, at the since-versions
    its source lists (which grew between releases)."""
    from onnx import TensorProto, helper

    def model(opset: int) -> str:
        nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                 helper.make_node("Cast", ["r"], ["c"], name="convert", to=TensorProto.FLOAT16),
                 helper.make_node("Shape", ["c"], ["s"], name="dims")]
        g = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("s", TensorProto.INT64, [2])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = ir
        return m.SerializeToString().hex()

    return {f"pre_shape:{n}": model(n) for n in range(11, max_opset + 1)}


def _gone_and_kept(optimized: dict[str, object], op_type: str) -> tuple[list[int], list[int]]:
    """The opsets of the optimized probe models ("name:opset" -> hex bytes; a refusal's words are no model) whose
    graph lost every op_type node, and those that kept one. No model at all is an error, not a row: its empty
    answer would read as "this release removes nothing" (a line that fuses no Reshape)."""
    import onnx

    gone, kept = [], []
    for key, data in optimized.items():
        if isinstance(data, str):
            nodes = onnx.load_from_string(bytes.fromhex(data)).graph.node
            (kept if any(n.op_type == op_type for n in nodes) else gone).append(int(key.split(":")[1]))
    if not gone and not kept:
        raise RuntimeError(f"no {op_type} probe model was optimized (every one refused): no row written from them")
    return gone, kept


def pre_shape(optimized: dict[str, object]) -> dict[str, str]:
    """The row's `pre_shape` from the optimized models: the opsets at which the Cast was gone, and the since-versions
    of Cast and Shape at those opsets (what the rule checks: releases.Release.pre_shape_versions) that no opset
    where it stayed shares."""
    from onnx import defs

    def since(opset: int) -> set[int]:
        return {defs.get_schema(op, opset, "").since_version for op in ("Cast", "Shape")}

    gone, kept = _gone_and_kept(optimized, "Cast")
    versions = set().union(*map(since, gone)) - set().union(*map(since, kept))
    return {"removed_opsets": spans(gone), "since_versions": spans(sorted(versions))}


def reshape_fusion_models(max_opset: int, ir: int) -> dict[str, str]:
    """Per ai.onnx opset from 11 to max_opset, x float[batch, seq, 64] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x),
    0)), Unsqueeze(Gather(Shape(x), 1)), [4, 16])) -> Relu ("reshape_fusion:N"), as hex bytes: ORT's ReshapeFusion
    (Level 1) makes the Concat a constant for the Reshape versions its source lists (which grew between releases)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def model(opset: int) -> str:
        def unsqueeze(src: str, dst: str) -> Any:
            if opset < 13:
                return helper.make_node("Unsqueeze", [src], [dst], name=dst, axes=[0])
            return helper.make_node("Unsqueeze", [src, "axes"], [dst], name=dst)

        nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
                 helper.make_node("Gather", ["s", "i0"], ["g0"], name="g0", axis=0),
                 helper.make_node("Gather", ["s", "i1"], ["g1"], name="g1", axis=0),
                 unsqueeze("g0", "u0"), unsqueeze("g1", "u1"),
                 helper.make_node("Concat", ["u0", "u1", "tail"], ["c"], name="concat", axis=0),
                 helper.make_node("Reshape", ["x", "c"], ["r"], name="reshape"),
                 helper.make_node("Relu", ["r"], ["y"], name="relu")]
        consts = {"i0": np.array(0, np.int64), "i1": np.array(1, np.int64), "axes": np.array([0], np.int64),
                  "tail": np.array([4, 16], np.int64)}
        g = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4, 16])],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = ir
        return m.SerializeToString().hex()

    return {f"reshape_fusion:{n}": model(n) for n in range(11, max_opset + 1)}


def reshape_fusion(optimized: dict[str, object]) -> dict[str, str]:
    """The row's `reshape_fusion` from the optimized models: the opsets at which the Concat was gone, and the Reshape
    since-versions at those opsets (what the simulation checks: releases.Release.reshape_fusion_versions) that no
    opset where it stayed shares."""
    from onnx import defs

    gone, kept = _gone_and_kept(optimized, "Concat")
    since = {opset: defs.get_schema("Reshape", opset, "").since_version for opset in gone + kept}
    versions = {since[o] for o in gone} - {since[o] for o in kept}
    return {"fused_opsets": spans(gone), "since_versions": spans(sorted(versions))}


def _probe(helper: str, models: dict[str, Any], work: Path, env: dict[str, str], version: str,
           script: str = PROBE) -> dict[str, object]:
    job = work / "models.json"
    job.write_text(json.dumps(models))
    proc = subprocess.run([helper, "-c", script, str(job)], capture_output=True, text=True, env=env, cwd=work, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if got["version"] != version:
        raise RuntimeError(f"wheel reports version {got['version']}, expected {version}")
    loads: dict[str, object] = got["loads"]
    return loads


def probe_limits(version: str, args: argparse.Namespace) -> dict[str, object]:
    """The newest opset and IR version the release's CPU wheel loads, and the element types whose tensors it
    refuses (its session creation)."""
    import onnx

    work = Path(tempfile.mkdtemp(prefix=f"ort-limits-{version}-", dir=args.work))
    try:
        wheel, py = _wheel(version, work, args)
        target = work / "site"
        with zipfile.ZipFile(wheel) as z:
            z.extractall(target)
        for so in (target / "onnxruntime" / "capi").glob("*.so*"):
            so.chmod(0o755)
        helper = kt.ensure_helper(Path(args.work) / f"helper-py{py}", args.python_for.get(py, f"python{py}"))
        env = dict(os.environ, PYTHONPATH=str(target), PYTHONNOUSERSITE="1")
        loads = _probe(helper, probe_models(), work, env, version)
        opset = max(int(k.split(":")[1]) for k, ok in loads.items() if k.startswith("opset:") and ok is True)
        ir = max(int(k.split(":")[1]) for k, ok in loads.items() if k.startswith("ir:") and ok is True)
        elems = _probe(helper, elem_models(ir), work, env, version)
        external = _probe(helper, external_models(ir), work, env, version)
        recursive = _probe(helper, {**recursive_models(ir), **duplicate_models(ir)}, work, env, version)
        optimized = _probe(helper, pre_shape_models(opset, ir), work, env, version, OPTIMIZED_PROBE)
        fused = _probe(helper, reshape_fusion_models(opset, ir), work, env, version, OPTIMIZED_PROBE)
        if args.show_refusals:
            for key, ok in elems.items():
                print(f"{version}\t{key}\t{'loads' if ok is True else ok}")
        return {"max_opset": opset, "max_ir": ir, "read": datetime.date.today().isoformat(),
                "elem_types": dict(elem_types(elems), onnx=onnx.__version__, ir=ir),
                "external_inference": external_inference(external), "pre_shape": pre_shape(optimized),
                "reshape_fusion": reshape_fusion(fused),
                "recursive_functions": recursive_functions(recursive),
                "duplicate_functions": duplicate_functions(recursive),
                "source": f"session creation of one-Identity models (and ones with an unused initializer or graph "
                          f"input of each element type, a Reshape whose shape is in an external data file, an unused "
                          f"local function calling itself, two local functions of one id, and a Cast read only by a "
                          f"Shape and a Reshape of its own input's Shape -> Gather -> Unsqueeze -> Concat, optimized "
                          f"at basic) on "
                          f"{wheel.name}"}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _wheel(version: str, work: Path, args: argparse.Namespace) -> tuple[Path, str]:
    for package in ("onnxruntime", "onnxruntime-gpu"):  # 1.20.2 is published only as onnxruntime-gpu
        try:
            return kt.download(package, version, work, args.pythons)
        except RuntimeError:
            continue
    raise RuntimeError(f"no onnxruntime wheel of {version} for {', '.join(args.pythons)}")


def regenerate_rows(args: argparse.Namespace) -> list[str]:
    """A row for every minor line with a table (or published from --rows-from on) and none in ort-releases.json
    (--refresh-rows: every line again, or the lines it names): the newest published patch of the line, probed. A
    line whose probe fails keeps its row, its element types marked not measured (nothing claimed of them)."""
    releases._rows.cache_clear()
    releases.elem_types.cache_clear()
    data = json.loads(releases.LIMITS_FILE.read_text()) if releases.LIMITS_FILE.exists() else {"format": 1, "releases": {}}
    lines = missing_rows(args.rows_from)
    if args.refresh_rows:
        lines = sorted(set(lines) | set(data["releases"]), key=kt.version_key)
    elif args.refresh_rows is not None:  # named lines only
        lines = sorted(set(args.refresh_rows_lines), key=kt.version_key)
    if not lines:
        return []
    published = _published_ort()
    failed = []
    for line in lines:
        patches = [v for v in published if releases.release(v) == tuple(int(x) for x in line.split("."))]
        if not patches:
            failed.append(f"{line} (no release on PyPI)")
            continue
        log(f"onnxruntime {patches[-1]}: opset / IR limits ...")
        try:
            data["releases"][line] = dict(probe_limits(patches[-1], args), release=patches[-1])
        except RuntimeError as exc:
            log(f"  FAILED {patches[-1]}: {exc}")
            failed.append(f"{line} ({exc})")
            if line in data["releases"]:
                data["releases"][line]["elem_types"] = {"not_measured": f"{patches[-1]}: {exc}"[:300]}
            continue
        row = data["releases"][line]
        log(f"  {line}: opset {row['max_opset']}, IR {row['max_ir']}, element types refused: "
            f"initializer {row['elem_types']['refused_initializer']}, graph input {row['elem_types']['invalid']} "
            f"(invalid) {row['elem_types']['unregistered']} (not registered); shape input in an external data file: "
            f"{row['external_inference']}; a Cast read only by Shapes removed at opsets {row['pre_shape']['removed_opsets']}; "
            f"a Reshape's shape subgraph fused at opsets {row['reshape_fusion']['fused_opsets']}; "
            f"a local function calling itself: {row['recursive_functions']}; two local functions of one id: "
            f"{row.get('duplicate_functions')}")
    data["releases"] = dict(sorted(data["releases"].items(), key=lambda kv: kt.version_key(kv[0])))
    releases.LIMITS_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    if failed:
        log("rows not probed: " + "; ".join(failed))
    return [str(releases.LIMITS_FILE.relative_to(ROOT))]


# --------------------------------------------------------------------------------------------- TensorRT


def regenerate_trt(new: dict[str, list[str]], args: argparse.Namespace) -> list[str]:
    """Tables of new TensorRT-RTX releases; unmeasurable TensorRT releases recorded."""
    wrote = []
    for v in new.get("tensorrt-rtx", []):
        label = rtx_label(v)
        venv = Path(args.work) / f"venv-rtx-{v}"
        log(f"tensorrt-rtx {v}: a venv with its parser ({venv}) ...")
        if not (venv / "bin" / "python").exists():
            kt.run([sys.executable, "-m", "venv", venv], check=True)
            kt.run([venv / "bin" / "python", "-m", "pip", "install", "-q", *[f"{p}=={v}" for p in RTX_PACKAGES],
                    "numpy"], check=True)
        py = str(venv / "bin" / "python")
        docs = max(trt_tables.docs_only_versions(), key=trt_versions.sort_key)
        log(f"  {label}: tools/gen_trt_support.py (single-node probes; long) ...")
        kt.run([sys.executable, HERE / "gen_trt_support.py", "--trt", f"{label}={py}", "--docs", f"{label}={docs}",
                "--jobs", str(args.jobs)], check=True, capture_output=False)
        log(f"  {label}: tools/gen_trt_behaviour.py ...")
        kt.run([sys.executable, HERE / "gen_trt_behaviour.py", "--trt", f"{label}={py}"], check=True, capture_output=False)
        wrote.append(f"onnxlint/data/tensorrt/trt-{label}.json")
        if record_rtx_source(TRT_SOURCES, label, v):
            wrote.append(str(TRT_SOURCES.relative_to(ROOT)))
    unmeasurable = {}
    for v in new.get("tensorrt", []):
        unmeasurable[v] = _why_not_measurable(v, args)
    if unmeasurable:
        seen = json.loads(SEEN.read_text()) if SEEN.exists() else {"not_measured": {}}
        seen.setdefault("not_measured", {}).setdefault("tensorrt", {}).update(unmeasurable)
        seen["checked"] = datetime.date.today().isoformat()
        SEEN.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
        wrote.append(str(SEEN.relative_to(ROOT)))
    return wrote


def rtx_source_row(label: str, version: str) -> str:
    """SOURCES.md's row for a TensorRT-RTX table: the wheels it was measured on."""
    wheels = ", ".join(f"`{p}=={version}`" for p in RTX_PACKAGES)
    return f"| {label} | {wheels} | libtensorrt_onnxparser_rtx.so.1 (the 10.x line; no plugins) |"


def record_rtx_source(path: Path, label: str, version: str) -> bool:
    """Name the wheels of a new TensorRT-RTX table in SOURCES.md's table of parser-verified tables (after the rows
    of the tables before it; a row of that label replaced). Whether the file changed."""
    lines = path.read_text().splitlines(keepends=True)
    row = rtx_source_row(label, version) + "\n"
    rows = [i for i, ln in enumerate(lines) if re.match(r"\| [\d.]+(\+rtx[\d.]+)? \| `", ln)]
    if not rows:
        raise RuntimeError(f"{path}: no table of parser-verified tables to add {label} to")
    same = [i for i in rows if lines[i].startswith(f"| {label} |")]
    if same:
        if lines[same[0]] == row:
            return False
        lines[same[0]] = row
    else:
        before = [i for i in rows if trt_versions.sort_key(lines[i].split("|")[1].strip()) < trt_versions.sort_key(label)]
        lines.insert((before[-1] if before else rows[0] - 1) + 1, row)
    path.write_text("".join(lines))
    return True


def _why_not_measurable(version: str, args: argparse.Namespace) -> str:
    """Why a TensorRT release cannot be probed here (asked of pip: is there a wheel that carries the parser?)."""
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        proc = kt.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", tmp,
                       f"tensorrt=={version}"])
        if proc.returncode == 0:
            return "a wheel exists: probe it with tools/gen_trt_support.py (and a stub CUDA driver)"
    return "PyPI has only an sdist, which downloads the libraries from NVIDIA's own index at install time"


# --------------------------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="list releases newer than the tables; exit 1 if any")
    ap.add_argument("--only", choices=["ort", "tensorrt", "tensorrt-rtx"],
                    help="follow one runtime: ort (onnxruntime, onnxruntime-gpu, the release rows), tensorrt, tensorrt-rtx")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "onnxlint-follow-releases")
    ap.add_argument("--pythons", nargs="*", default=["3.11", "3.12", "3.10"], help="wheel tags to try, in order")
    ap.add_argument("--python", action="append", default=[], metavar="VER=PATH", help="interpreter for a Python version")
    ap.add_argument("--stub-tool", help="folder with the ort-cuda-truth harness's build_stubs.py (onnxruntime-gpu)")
    ap.add_argument("--stub-dir", help="prebuilt stub folder (instead of --stub-tool)")
    ap.add_argument("--cuda-include", help="CUDA headers for build_stubs.py (gen_kernel_tables.py cuda-include)")
    ap.add_argument("--jobs", type=int, default=2, help="TensorRT probe workers")
    ap.add_argument("--rows-from", help="release rows for every ORT line published from this version on (default: "
                    "the lines with a kernel table)")
    ap.add_argument("--refresh-rows", nargs="*", metavar="LINE", help="probe the release rows again (and nothing "
                    "else): every row, or the lines named (e.g. 1.20 1.24)")
    ap.add_argument("--show-refusals", action="store_true", help="print each element-type probe's answer")
    args = ap.parse_args(argv)
    args.refresh_rows_lines = args.refresh_rows or []
    if args.refresh_rows is not None:
        args.refresh_rows = not args.refresh_rows  # True: every row; False: the lines named
    args.python_for = dict(p.split("=", 1) for p in args.python)
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.refresh_rows is not None and not args.check:
        for path in regenerate_rows(args):
            print(f"wrote {path}")
        return 0
    new = newer_releases()
    if args.only == "ort":
        new = {k: v for k, v in new.items() if not k.startswith("tensorrt")}
    elif args.only:
        new = {k: v for k, v in new.items() if k == args.only}
    found = {k: v for k, v in new.items() if v}
    for product, versions in found.items():
        print(f"{product}: {', '.join(versions)}")
    if args.check:
        if not found:
            print("every table is up to date")
        return 1 if found else 0
    if not found:
        print("every table is up to date: nothing to regenerate")
        return 0
    wrote: list[str] = []
    if args.only in (None, "ort"):
        wrote += regenerate_ort(new, args)
        wrote += regenerate_rows(args)
    if args.only != "ort":
        wrote += regenerate_trt(new, args)
    for path in wrote:
        print(f"wrote {path}")
    print("next: the truth benchmarks on the new releases (benchmarks/README.md), then the CHANGELOG")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
