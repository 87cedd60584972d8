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

  python tools/gen_trt_behaviour.py --trt 8.6=/path/venv310/bin/python --stub-dir 8.6=/path/stubs860 \\
      --trt 10.1+rtx1.4=/path/vrtx/bin/python [--out onnxlint/data/tensorrt]

Needs onnxruntime (ORT's op schemas) in this Python; each --trt Python needs tensorrt (or tensorrt_rtx_bindings).
Run after gen_trt_support.py (which keeps these sections when it rewrites a table).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r'''
import json, re, sys
try:
    import tensorrt as trt
except ImportError:
    import tensorrt_rtx_bindings as trt
job = json.load(open(sys.argv[1]))
logger = trt.Logger(trt.Logger.ERROR)
builder = trt.Builder(logger)
ex = getattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH", None)
flags = 1 << int(ex) if ex is not None else 0
net = builder.create_network(flags)
parser = trt.OnnxParser(net, logger)
out = {"version": trt.__version__, "importers": [n for n in job["names"] if parser.supports_operator(n)], "probes": {}}
lib = next((l.split()[-1] for l in open("/proc/self/maps") if "onnxparser" in l and l.split()[-1].startswith("/")), None)
out["plugin_importers"] = sorted({m.decode() for m in re.findall(rb"failed to load (\w+) plugin", open(lib, "rb").read())}) if lib else []
for pid, path in job["probes"].items():
    net = builder.create_network(flags)
    p = trt.OnnxParser(net, logger)
    ok = p.parse(open(path, "rb").read())
    row = {"ok": bool(ok and not p.num_errors)}
    if p.num_errors:
        row["desc"] = " ".join(str(p.get_error(0).desc()).split())[:200]
    row["out_shapes"] = [list(net.get_output(i).shape) for i in range(net.num_outputs)] if row["ok"] else []
    out["probes"][pid] = row
print(json.dumps(out))
'''


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
    args = ap.parse_args(argv)
    stubs = dict(s.split("=", 1) for s in args.stub_dir)
    names = ort_op_names()
    import onnxruntime

    with tempfile.TemporaryDirectory(prefix="trt-behaviour-") as tmp:
        probes = probe_models(Path(tmp))
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
            importers, plugins = set(got["importers"]), set(got["plugin_importers"])
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
                "mixed_float_inputs_probe": "Add(float16[2,3], float[2,3]): " + (mixed.get("desc") or "accepted"),
                "if_constant_output": "accept" if branch["ok"] else "reject",
                "if_constant_output_probe": "If with then_branch outputs (Constant, Neg), else_branch (Neg, Neg): "
                                            + (branch.get("desc") or "accepted"),
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
            dest = Path(args.out) / f"trt-{label}.json"
            table = json.loads(dest.read_text())
            table["behaviour"] = behaviour
            table["ort_ops"] = ort_ops
            table["ort_ops_source"] = (f"tools/gen_trt_behaviour.py: OnnxParser.supports_operator of TensorRT {got['version']} "
                                       f"for the {len(names)} ops onnxruntime {onnxruntime.__version__} registers beyond onnx's")
            dest.write_text(json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n")
            print(dest, got["version"], behaviour, sorted(ort_ops), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
