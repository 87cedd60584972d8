#!/usr/bin/env python3
"""Generate onnxlint/data/tensorrt/trt-<version>.json by probing TensorRT's real ONNX parser.

Single-node probe models are derived from the node cases that ship in the onnx wheel
(onnx.backend.test.case.node: valid attributes, shapes and input data for every op) and varied along:

* op version: each case re-stamped at the op's earlier schema versions where the node is still valid;
* constant vs graph input for each input: all inputs as initializers, then each input in turn as a graph input
  (an input that is rejected as a graph input but accepted as an initializer "must be constant"); such an input
  is tried as a graph input at the other dtypes its type parameter allows (`network_input_dtypes_ok`: OneHot's
  depth is rejected as a float network input, taken as an int64 one);
* dtype per formal type parameter (from onnx.defs): every tensor type the schema allows, one parameter at a time
  (Cast: the `to` attribute; ConstantOfShape: the `value` tensor);
* attributes: a case the parser rejects even with constant inputs is retried with each explicitly set attribute
  back at its default (the attribute whose reset makes it pass is the limit);
* outputs: a case with optional outputs is retried with the first output only.

Only OnnxParser.parse runs (no engine is built). TensorRT is initialised once per worker process, which forks one
child per probe model: a probe that crashes the parser costs that probe only.

Prerequisite for TensorRT 8.x without a GPU: a stub CUDA driver (the workspace's trt-parser-truth harness,
`build_stubs.py`), passed as --stub-dir. TensorRT-RTX needs no CUDA at all.

  python tools/gen_trt_support.py --trt 8.6=/path/venv310/bin/python --stub-dir 8.6=/path/stubs860 --docs 8.6=8.6 \\
      --trt 10.1+rtx1.4=/path/vrtx/bin/python --docs 10.1+rtx1.4=10.1 [--out onnxlint/data/tensorrt] [--jobs 2] [--keep DIR]

Each --trt LABEL=PYTHON names a Python that can `import tensorrt` (or `tensorrt_rtx_bindings`); LABEL is the
version the table is written for (a packaging version: TensorRT-RTX 1.4's parser is `10.1+rtx1.4`, the 10.x line
newer than the 10.1 docs). --docs LABEL=V copies the restriction texts of docs/trt-V.json as detail. Docs-only
tables (tools/gen_trt_tables.py) are left as they are; every table says `"verified": "parser"` or `"docs"`.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------------------------- the worker
# Runs under the TensorRT Python (stdlib + tensorrt only).

# One child per probe, in both generators' workers (gen_trt_behaviour.py's too): the parser set up once in the
# worker, each probe parsed in a fork, so a probe that crashes the parser or hangs costs that probe only.
FORKED = r'''
import json, os, select, signal, time


def forked(parse, path, timeout, on_exception, on_crash):
    # parse(path)'s row from a child; on_exception(exc) if it raised, on_crash(why) if it died or ran past timeout
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(r)
        try:
            row = parse(path)
        except Exception as exc:
            row = on_exception(exc)
        os.write(w, json.dumps(row).encode())
        os._exit(0)
    os.close(w)
    chunks, t0 = [], time.time()
    while True:
        ready, _, _ = select.select([r], [], [], 1.0)
        if ready:
            b = os.read(r, 1 << 16)
            if not b:
                break
            chunks.append(b)
        elif time.time() - t0 > timeout:
            os.kill(child, signal.SIGKILL)
            break
    os.close(r)
    _, status = os.waitpid(child, 0)
    try:
        return json.loads(b"".join(chunks).decode())
    except ValueError:
        return on_crash(f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "no answer")
'''

WORKER = FORKED + r'''
import json, os, sys
try:
    import tensorrt as trt
except ImportError:
    import tensorrt_rtx_bindings as trt

class Logger(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
    def log(self, severity, msg):
        pass

logger = Logger()
builder = trt.Builder(logger)
ex = getattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH", None)
flags = 1 << int(ex) if ex is not None else 0
list_file, out_file, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
out = open(out_file, "a", buffering=1)
# warm up once in the parent (plugin registry, parser singletons) so each child only parses
net = builder.create_network(flags)
p = trt.OnnxParser(net, logger)
ops = json.loads(open(list_file + ".ops").read()) if os.path.exists(list_file + ".ops") else []
if ops:
    out.write(json.dumps({"id": "__ops__", "version": trt.__version__,
                          "importers": [o for o in ops if p.supports_operator(o)]}) + "\n")
del p, net

def parse(path):
    net = builder.create_network(flags)
    parser = trt.OnnxParser(net, logger)
    ok = parser.parse(open(path, "rb").read())
    errs = [parser.get_error(i) for i in range(parser.num_errors)]
    row = {"v": "accept" if ok and not errs else "reject"}
    if errs:
        e = errs[0]
        row["func"] = e.func()
        row["desc"] = " ".join(str(e.desc()).split())[:300]
    return row

for line in open(list_file):
    pid_, path = json.loads(line)
    row = forked(parse, path, timeout,
                 lambda e: {"v": "reject", "func": "exception", "desc": str(e)[:300]},
                 lambda why: {"v": "crash", "desc": why})
    row["id"] = pid_
    out.write(json.dumps(row) + "\n")
'''


def read_answers(work: Path) -> tuple[dict[str, dict], dict]:
    """Probe answers the workers wrote into work/res*.jsonl (a torn last line is skipped), and the `__ops__` row."""
    res: dict[str, dict] = {}
    meta: dict = {}
    for f in sorted(work.glob("res*.jsonl")):
        for line in open(f):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if row.get("id") == "__ops__":
                meta = row
            elif "id" in row:
                res[row["id"]] = row
    return res, meta

def run_probes(python: str, stub_dir: str | None, probes: dict[str, str], work: Path, jobs: int, ops: list[str] | None = None,
               timeout: float = 20.0) -> tuple[dict[str, dict], dict]:
    """probes: id -> model path. Returns (id -> {'v': accept|reject|crash, 'func', 'desc'}, meta)."""
    work.mkdir(parents=True, exist_ok=True)
    script = work / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ)
    if stub_dir:
        env["LD_LIBRARY_PATH"] = stub_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    # an earlier (interrupted) run's answers: probe ids are stable
    answered, meta = read_answers(work)
    results: dict[str, dict] = {k: row for k, row in answered.items() if k in probes}
    todo = [it for it in probes.items() if it[0] not in results]
    if ops and not meta:
        todo = todo or []
    attempt = len(list(work.glob("list*_0.jsonl")))
    if ops and not meta and not todo:  # everything cached but the importer list: ask for it alone
        todo = list(probes.items())[:1]
        results.pop(todo[0][0], None)
    while todo:
        chunks = [todo[i::jobs] for i in range(jobs)] if len(todo) >= jobs else [todo]
        procs = []
        for k, chunk in enumerate(chunks):
            lst = work / f"list{attempt}_{k}.jsonl"
            with open(lst, "w") as f:
                for pid_, path in chunk:
                    f.write(json.dumps([pid_, path]) + "\n")
            if ops and k == 0 and not meta:
                (work / f"list{attempt}_{k}.jsonl.ops").write_text(json.dumps(ops))
            res = work / f"res{attempt}_{k}.jsonl"
            procs.append((subprocess.Popen([python, str(script), str(lst), str(res), str(timeout)], env=env,
                                           stdout=subprocess.DEVNULL, stderr=open(work / f"err{attempt}_{k}.txt", "w")), res, chunk))
        for proc, _, _ in procs:
            proc.wait()
        left = []
        for proc, res, chunk in procs:
            got = {}
            if res.exists():
                for line in open(res):
                    try:
                        row = json.loads(line)
                    except ValueError:
                        continue
                    if row["id"] == "__ops__":
                        meta = row
                    else:
                        got[row["id"]] = row
            results.update(got)
            missing = [it for it in chunk if it[0] not in got]
            if missing:  # the worker itself died: count the probe it was on as a crash, go on with the rest
                results[missing[0][0]] = {"v": "crash", "desc": f"worker exit {proc.returncode}"}
                left += missing[1:]
        if left and attempt > 200:
            for pid_, _ in left:
                results[pid_] = {"v": "crash", "desc": "worker kept dying"}
            break
        todo = left
        attempt += 1
    return results, meta


# --------------------------------------------------------------------------------------------- probe models


def _load_cases():
    warnings.filterwarnings("ignore")
    import numpy as np
    np.seterr(all="ignore")
    from onnx.backend.test.case import node
    return node.collect_testcases(None)


def _formal_bindings(schema, node):
    """[(kind, index, param)] for each input/output of node: param is the type-parameter name or None."""
    params = {t.type_param_str for t in schema.type_constraints}
    out = []
    for kind, formals, actual in (("in", schema.inputs, node.input), ("out", schema.outputs, node.output)):
        for i, _ in enumerate(actual):
            if not formals:
                break
            f = formals[min(i, len(formals) - 1)]
            if i >= len(formals) and f.option.name != "Variadic":
                break
            out.append((kind, i, f.type_str if f.type_str in params else None))
    return out


def _allowed(schema, param):
    for t in schema.type_constraints:
        if t.type_param_str == param:
            return [s[7:-1] for s in t.allowed_type_strs if s.startswith("tensor(")]
    return []


class Seed:
    """One single-node onnx node case with its input data."""

    def __init__(self, case):
        import numpy as np
        import onnx
        import onnx.numpy_helper
        self.name = case.name
        self.model = case.model
        g = case.model.graph
        self.node = g.node[0]
        self.op = self.node.op_type
        self.domain = self.node.domain or "ai.onnx"
        self.opset = next((o.version for o in case.model.opset_import if (o.domain or "ai.onnx") == self.domain), None)
        self.schema = onnx.defs.get_schema(self.op, self.opset, self.node.domain)
        inits = {t.name for t in g.initializer}
        self.graph_inputs = [i.name for i in g.input if i.name not in inits]
        self.data = {}
        if case.data_sets:
            ins = case.data_sets[0][0]
            for name, arr in zip(self.graph_inputs, ins):
                if isinstance(arr, onnx.TensorProto):
                    try:
                        arr = onnx.numpy_helper.to_array(arr)
                    except Exception:
                        continue
                if hasattr(arr, "dtype") and not isinstance(arr, (list, dict)):
                    self.data[name] = np.asarray(arr)

    def build(self, const=(), dtypes=None, drop_attrs=(), first_output_only=False, opset=None, attrs=None):
        """A variant: inputs named in const become initializers; dtypes {value name: onnx elem type}."""
        import numpy as np
        import onnx
        from onnx import helper, numpy_helper
        dtypes = dtypes or {}
        g = self.model.graph
        node = onnx.NodeProto()
        node.CopyFrom(self.node)
        if drop_attrs or attrs:
            keep = [a for a in node.attribute if a.name not in drop_attrs and a.name not in (attrs or {})]
            del node.attribute[:]
            node.attribute.extend(keep)
            for k, v in (attrs or {}).items():
                node.attribute.append(helper.make_attribute(k, v))
        outputs = list(g.output)
        if first_output_only:
            del node.output[1:]
            outputs = outputs[:1]
        inputs, inits = [], []
        for vi in g.input:
            if vi.name in const:
                if vi.name not in self.data:
                    return None
                arr = self.data[vi.name]
                if vi.name in dtypes:
                    arr = arr.astype(helper.tensor_dtype_to_np_dtype(dtypes[vi.name]))
                t = numpy_helper.from_array(np.asarray(arr), vi.name)
                if vi.type.HasField("tensor_type") and vi.name not in dtypes and t.data_type != vi.type.tensor_type.elem_type:
                    return None
                inits.append(t)
            else:
                v = onnx.ValueInfoProto()
                v.CopyFrom(vi)
                if vi.name in dtypes:
                    if not v.type.HasField("tensor_type"):
                        return None
                    v.type.tensor_type.elem_type = dtypes[vi.name]
                inputs.append(v)
        for t in g.initializer:
            if t.name in dtypes:
                arr = numpy_helper.to_array(t).astype(helper.tensor_dtype_to_np_dtype(dtypes[t.name]))
                t = numpy_helper.from_array(arr, t.name)
            inits.append(t)
        outs = []
        for vi in outputs:
            v = onnx.ValueInfoProto()
            v.CopyFrom(vi)
            if vi.name in dtypes and v.type.HasField("tensor_type"):
                v.type.tensor_type.elem_type = dtypes[vi.name]
            outs.append(v)
        graph = helper.make_graph([node], "probe", inputs, outs, initializer=inits)
        opsets = []
        for o in self.model.opset_import:
            d = o.domain or "ai.onnx"
            opsets.append(helper.make_opsetid(o.domain, opset if (opset and d == self.domain) else o.version))
        m = helper.make_model(graph, opset_imports=opsets)
        m.ir_version = self.model.ir_version
        return m


def _valid(model) -> bool:
    import onnx
    try:
        onnx.checker.check_model(model)
        return True
    except Exception:
        return False


class ProbeSet:
    def __init__(self, root: Path):
        self.root = root
        self.paths: dict[str, str] = {}
        self.info: dict[str, dict] = {}

    def add(self, pid: str, model, **info) -> str | None:
        if model is None:
            return None
        if pid not in self.paths:
            import onnx
            p = self.root / f"{len(self.paths):06d}.onnx"
            onnx.save(model, p)
            self.paths[pid] = str(p)
            self.info[pid] = info
        return pid


def seeds_from_cases(cases, only_ops=None):
    seeds = []
    for c in cases:
        g = c.model.graph
        if len(g.node) != 1 or "_expanded" in c.name:
            continue
        n = g.node[0]
        if n.domain not in ("", "ai.onnx") or any(a.type in (5, 10) for a in n.attribute):  # graph attributes: If/Loop/Scan
            continue
        if only_ops and n.op_type not in only_ops:
            continue
        try:
            s = Seed(c)
        except Exception:
            continue
        if any(not hasattr(v, "dtype") for v in s.data.values()) or len(s.data) < len(s.graph_inputs):
            continue
        seeds.append(s)
    return seeds


# ---------------------------------------------------------------------------------------------- the probing


def _elem(dtype: str) -> int:
    from onnx import TensorProto
    names = {"float": "FLOAT", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "double": "DOUBLE", "bool": "BOOL",
             "string": "STRING"}
    return getattr(TensorProto, names.get(dtype, dtype.upper()))


def _dtype_name(elem: int) -> str:
    from onnx import TensorProto
    return TensorProto.DataType.Name(elem).lower()


def _value_dtypes(seed):
    g = seed.model.graph
    d = {}
    for vi in list(g.input) + list(g.output):
        if vi.type.HasField("tensor_type"):
            d[vi.name] = _dtype_name(vi.type.tensor_type.elem_type)
    for t in g.initializer:
        d[t.name] = _dtype_name(t.data_type)
    return d


def phase0(seeds, ps: ProbeSet):
    for s in seeds:
        ps.add(f"{s.name}|base", s.build())


def phase1(seeds, res, ps: ProbeSet):
    """Seeds the parser rejects as they are: which inputs must be constant, or is it the extra outputs?"""
    for s in seeds:
        if res.get(f"{s.name}|base", {}).get("v") == "accept":
            continue
        names = [n for n in s.node.input if n]
        gi = [n for n in names if n in s.graph_inputs]
        if len([o for o in s.node.output if o]) > 1 and gi:
            ps.add(f"{s.name}|out1", s.build(const=gi, first_output_only=True))
        if gi:
            ps.add(f"{s.name}|allconst", s.build(const=gi))
            if len(gi) > 1:
                for n in gi:
                    ps.add(f"{s.name}|const-but|{n}", s.build(const=[x for x in gi if x != n]))


def fixed_const(seed, res, ver):
    """The inputs this seed needs as initializers on this version (None: not even all-constant passes)."""
    base = res.get(f"{seed.name}|base", {}).get("v")
    if base == "accept":
        return []
    gi = [n for n in seed.node.input if n and n in seed.graph_inputs]
    if res.get(f"{seed.name}|allconst", {}).get("v") != "accept":
        if res.get(f"{seed.name}|out1", {}).get("v") == "accept":
            return gi
        return None
    if len(gi) == 1:
        return gi
    need = [n for n in gi if res.get(f"{seed.name}|const-but|{n}", {}).get("v") != "accept"]
    return need or gi


DTYPE_SEEDS_PER_VERSION = 2


def phase2(seeds, res, ps: ProbeSet, ver):
    """Dtype, op-version, attribute and output probes on top of each seed's working constant set."""
    import onnx
    per_key = collections.Counter()
    for s in seeds:
        fc = fixed_const(s, res, ver)
        if fc is None:  # rejected whatever is constant: which attribute, input value, or the extra outputs?
            gi = [n for n in s.node.input if n and n in s.graph_inputs]
            multi = len([o for o in s.node.output if o]) > 1
            for a in s.node.attribute:
                ps.add(f"{s.name}|attr|{a.name}", s.build(const=gi, drop_attrs=[a.name]))
                if multi:
                    ps.add(f"{s.name}|attr1|{a.name}", s.build(const=gi, drop_attrs=[a.name], first_output_only=True))
            for name, at in s.schema.attributes.items():  # 0/1 flags: the other value
                present = next((a for a in s.node.attribute if a.name == name), None)
                cur = present.i if present is not None and present.type == 2 else None
                if cur is None and present is None and at.default_value is not None and at.default_value.type == 2:
                    cur = at.default_value.i
                if cur in (0, 1):
                    ps.add(f"{s.name}|flip|{name}|{cur}", s.build(const=gi, attrs={name: 1 - cur}))
            for i, n in enumerate(s.node.input):  # scalar flags given as inputs (Dropout training_mode)
                arr = s.data.get(n)
                if arr is not None and arr.size == 1 and arr.dtype == bool:
                    s.data[n + "#flip"] = ~arr
                    old = s.data[n]
                    s.data[n] = ~old
                    ps.add(f"{s.name}|value|{i}|{int(bool(old.reshape(-1)[0]))}", s.build(const=gi))
                    s.data[n] = old
            continue
        key = (s.op, s.schema.since_version)
        per_key[key] += 1
        out1 = res.get(f"{s.name}|out1", {}).get("v") == "accept" and res.get(f"{s.name}|allconst", {}).get("v") != "accept"
        # older op versions
        for sv in sorted({x.since_version for x in onnx.defs.get_all_schemas_with_history()
                          if x.name == s.op and x.domain == s.node.domain and x.since_version < s.schema.since_version}):
            if sv < 7 or per_key[(s.op, "v", sv)] >= 2:
                continue
            m = s.build(const=fc, opset=max(sv, 7), first_output_only=out1)
            if m is not None and _valid(m):
                per_key[(s.op, "v", sv)] += 1
                ps.add(f"{s.name}|opset|{max(sv, 7)}", m)
        if per_key[key] > DTYPE_SEEDS_PER_VERSION:
            continue
        vd = _value_dtypes(s)
        binds = collections.defaultdict(list)
        for kind, i, param in _formal_bindings(s.schema, s.node):
            if param:
                binds[param].append(s.node.input[i] if kind == "in" else s.node.output[i])
        _network_input_dtype_probes(s, fc, binds, vd, ps, out1)
        for param, names in binds.items():
            names = [n for n in names if n]
            cur = {vd.get(n) for n in names}
            for dt in _allowed(s.schema, param):
                if dt in cur or dt == "string":
                    continue
                attrs = None
                if s.op == "Cast" and param == "T2":
                    attrs = {"to": _elem(dt)}
                elif s.op == "EyeLike" and param == "T2" or s.op in ("RandomNormalLike", "RandomUniformLike") and param == "T2":
                    attrs = {"dtype": _elem(dt)}
                elif s.op == "ConstantOfShape" and param == "T2":
                    from onnx import helper
                    attrs = {"value": helper.make_tensor("value", _elem(dt), [1], [1] if dt != "bool" else [True])}
                try:
                    if out1:
                        names = [n for n in names if n not in s.node.output[1:]]
                    m = s.build(const=fc, dtypes={n: _elem(dt) for n in names}, attrs=attrs, first_output_only=out1)
                except Exception:
                    continue
                ps.add(f"{s.name}|dtype|{param}|{dt}", m)


def _network_input_dtype_probes(s, fc, binds, vd, ps: ProbeSet, out1):
    """An input the seed needs constant that the parser rejects as a network input: is that so at every dtype its
    type parameter allows, or only at the seed's? (OneHot's depth: a float network input is rejected, an int64 one
    is taken.) Only where the parameter binds that input alone: a dtype changed on one of several values it binds
    makes no valid node."""
    for n in fc:
        if n not in s.graph_inputs:
            continue
        param = next((p for p, ns in binds.items() if n in ns), None)
        if param is None or [x for x in binds[param] if x] != [n]:
            continue
        for dt in _allowed(s.schema, param):
            if dt in (vd.get(n), "string"):
                continue
            try:
                m = s.build(const=[x for x in fc if x != n], dtypes={n: _elem(dt)}, first_output_only=out1)
            except Exception:
                continue
            if m is not None and _valid(m):
                ps.add(f"{s.name}|gdtype|{list(s.node.input).index(n)}|{dt}", m)


def phase3(seeds, res, ps: ProbeSet, ver):
    """A dtype the importer rejected on graph inputs: accepted when those inputs are initializers? (Slice's int32
    starts/ends, Reshape's int32 shape ...)."""
    by_seed = {s.name: s for s in seeds}
    for pid, r in list(res.items()):
        parts = pid.split("|")
        if len(parts) != 4 or parts[1] != "dtype" or r.get("v") == "accept":
            continue
        s = by_seed.get(parts[0])
        if s is None:
            continue
        param, dt = parts[2], parts[3]
        fc = fixed_const(s, res, ver) or []
        ins = [s.node.input[i] for kind, i, p in _formal_bindings(s.schema, s.node) if kind == "in" and p == param]
        if not ins or s.node.input[0] in ins or not all(n in s.graph_inputs for n in ins if n):
            continue
        names = [s.node.input[i] if kind == "in" else s.node.output[i] for kind, i, p in _formal_bindings(s.schema, s.node) if p == param]
        try:
            m = s.build(const=sorted(set(fc) | {n for n in ins if n}), dtypes={n: _elem(dt) for n in names if n})
        except Exception:
            continue
        ps.add(f"{s.name}|dtypec|{param}|{dt}", m)


def _ranks(seed):
    g = seed.model.graph
    shapes = {}
    for vi in g.input:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            shapes[vi.name] = len(vi.type.tensor_type.shape.dim)
    for t in g.initializer:
        shapes[t.name] = len(t.dims)
    return tuple(r for r in (shapes.get(n) for n in seed.node.input if n) if r != 0)  # scalars (flags) left out


def _attr_values(seed):
    """Every attribute of the node at its value (the schema default where not set)."""
    from onnx import helper
    out = {}
    for name, at in seed.schema.attributes.items():
        if at.default_value is not None and at.default_value.type:
            out[name] = helper.get_attribute_value(at.default_value)
    for a in seed.node.attribute:
        out[a.name] = helper.get_attribute_value(a)
    for k, v in list(out.items()):
        if isinstance(v, bytes):
            out[k] = v.decode()
        elif isinstance(v, list):
            out[k] = [x.decode() if isinstance(x, bytes) else x for x in v]
        elif hasattr(v, "dims") or hasattr(v, "node"):
            del out[k]
    return out


def _dclass(d):
    return "float" if d and d.startswith(("float", "bfloat", "double")) else ("bool" if d == "bool" else "int")


def aggregate(seeds, res, label, meta, docs):
    """Probe results -> the compact table (facts contradicted by an accepted probe are dropped)."""
    import onnx
    ops: dict[str, dict] = {}
    importers = set(meta.get("importers", []))
    all_ops = sorted({s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""})
    accepted_seeds = {pid.split("|", 1)[0] for pid, r in res.items() if r.get("v") == "accept"}
    parsed = {s.op for s in seeds if s.name in accepted_seeds}
    for op in all_ops:  # supports_operator() misses some importers (8.6: NonZero, NonMaxSuppression): a parse counts
        ops[op] = {"supported": op in importers or op in parsed}
    V = lambda pid: res.get(pid, {}).get("v")  # noqa: E731
    types = collections.defaultdict(lambda: collections.defaultdict(lambda: [set(), set()]))  # op -> param -> (ok, no)
    const = collections.defaultdict(lambda: collections.defaultdict(lambda: [set(), set()]))  # op -> dtype -> (must, free)
    versions = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))  # op -> sv -> (ok, no)
    limits = collections.defaultdict(list)
    values = collections.defaultdict(list)
    outputs, max_ok_outputs = {}, collections.Counter()
    ranks_ok, ranks_no = collections.defaultdict(set), collections.defaultdict(set)
    accepted_attrs = collections.defaultdict(list)  # op -> [(attrs, dtype classes)]
    crashes = collections.defaultdict(set)
    const_ok = collections.defaultdict(lambda: collections.defaultdict(set))  # op -> param -> dtypes fine as initializers
    gi_dtype_ok = collections.defaultdict(lambda: collections.defaultdict(set))  # op -> input -> dtypes fine as network inputs
    const_kind = collections.defaultdict(lambda: collections.defaultdict(set))  # op -> (dtype key, input) -> {w, g}
    unexplained = collections.defaultdict(list)  # op -> [(ranks, {param: dtypes})]
    present_ok, present_no = collections.defaultdict(set), collections.defaultdict(set)  # optional inputs given
    io = {}  # op -> (since_version, {"in0": param, ...}) of the newest schema probed: param names change across versions
    for s in seeds:
        op, sv = s.op, s.schema.since_version
        if op not in io or io[op][0] < sv:
            m = {}
            for kind, formals in (("in", s.schema.inputs), ("out", s.schema.outputs)):
                for i, f in enumerate(formals):
                    if f.type_str in {t.type_param_str for t in s.schema.type_constraints}:
                        m[f"{kind}{i}"] = f.type_str
            io[op] = (sv, m)
        gi = [n for n in s.node.input if n and n in s.graph_inputs]
        if V(f"{s.name}|base") == "crash" and V(f"{s.name}|allconst") in (None, "crash"):
            crashes[op].add(_ranks(s))
        fc = fixed_const(s, res, label)
        vd = _value_dtypes(s)
        binds = collections.defaultdict(list)
        for kind, i, param in _formal_bindings(s.schema, s.node):
            if param:
                binds[param].append(s.node.input[i] if kind == "in" else s.node.output[i])
        classes = {p: sorted({_dclass(vd.get(n)) for n in ns if vd.get(n)}) for p, ns in binds.items()}
        first = next((vd.get(n) for ns in binds.values() for n in ns if vd.get(n)), None)
        attrs = _attr_values(s)
        n_out = len([o for o in s.node.output if o])
        if fc is None:
            versions[op][sv][1] += 1
            explained = False
            for a in s.node.attribute:
                if V(f"{s.name}|attr1|{a.name}") == "accept" and V(f"{s.name}|attr|{a.name}") not in (None, "accept"):
                    outputs[op] = 1  # with the attribute reset, still only the first output is accepted
                if V(f"{s.name}|attr|{a.name}") == "accept" or (
                        V(f"{s.name}|attr1|{a.name}") == "accept" and V(f"{s.name}|out1") != "accept"):
                    if a.name in attrs:
                        limits[op].append({"attr": a.name, "value": attrs[a.name], "when": classes, "case": s.name})
                        explained = True
            for pid, r in res.items():
                if r.get("v") != "accept" or not pid.startswith(s.name + "|"):
                    continue
                parts = pid.split("|")
                if parts[0] != s.name:
                    continue
                if parts[1] == "flip":
                    lim = {"attr": parts[2], "value": int(parts[3]), "when": classes, "case": s.name}
                    if not any(a.name == parts[2] for a in s.node.attribute):
                        lim["absent"] = True  # 8.4 Reshape-14: `Attribute not found: allowzero`; allowzero=0 given is fine
                    limits[op].append(lim)
                    explained = True
                elif parts[1] == "value":
                    values[op].append({"input": int(parts[2]), "value": bool(int(parts[3])), "case": s.name})
                    explained = True
            if not explained:
                # only the data input's type parameter may take the blame (a rejected roi must not ban float)
                unexplained[op].append((_ranks(s), {p: {vd[n] for n in ns if vd.get(n)} for p, ns in binds.items()
                                                    if s.node.input and s.node.input[0] in ns}))
                present_no[op] |= {i for i, n in enumerate(s.node.input) if n}
            continue
        via_out1 = V(f"{s.name}|base") != "accept" and V(f"{s.name}|allconst") != "accept"
        if via_out1:
            outputs[op] = 1
        else:
            max_ok_outputs[op] = max(max_ok_outputs[op], n_out)
        versions[op][sv][0] += 1
        present_ok[op] |= {i for i, n in enumerate(s.node.input) if n}
        ranks_ok[op].add(_ranks(s))
        accepted_attrs[op].append((attrs, classes, s.name))
        for i, n in enumerate(s.node.input):
            if n in gi and not via_out1:
                kind = "w"
                if n in fc:  # rejected as a graph input: does the importer want weights, or just no network input?
                    r = res.get(f"{s.name}|const-but|{n}") or res.get(f"{s.name}|base") or {}
                    desc = r.get("desc", "") + " " + (res.get(f"{s.name}|base") or {}).get("desc", "")
                    weights = re.search(r"weight|initializer|constant|static|type|dynamic|known", desc, re.I)
                    if re.search(r"network input", desc, re.I) or not weights:
                        kind = "g"
                for key in ("*", first):
                    (const[op][key][0] if n in fc else const[op][key][1]).add(i)
                    if n in fc:
                        const_kind[op][(key, i)].add(kind)
        for param, names in binds.items():
            for n in names:
                if vd.get(n):
                    types[op][param][0].add(vd[n])
    by_seed = {s.name: s for s in seeds}
    for pid, r in res.items():
        parts = pid.split("|")
        s = by_seed.get(parts[0])
        if s is None or len(parts) < 3:
            continue
        if parts[1] == "dtype":
            param, dt = parts[2], parts[3]
            types[s.op][param][0 if r["v"] == "accept" else 1].add(dt)
        elif parts[1] == "dtypec" and r["v"] == "accept":
            const_ok[s.op][parts[2]].add(parts[3])
        elif parts[1] == "gdtype" and r["v"] == "accept":
            gi_dtype_ok[s.op][int(parts[2])].add(parts[3])
        elif parts[1] == "opset":
            sch = onnx.defs.get_schema(s.op, int(parts[2]), s.node.domain)
            versions[s.op][sch.since_version][0 if r["v"] == "accept" else 1] += 1

    for op, lst in unexplained.items():  # a dtype never accepted explains a rejection; else the ranks may
        for ranks, dts in lst:
            unknown = {(p, d) for p, ds in dts.items() for d in ds if d not in types[op][p][0]}
            if unknown:
                for p, d in unknown:
                    types[op][p][1].add(d)
            else:
                ranks_no[op].add(ranks)

    def contradicted(op, lim):
        for attrs, classes, _ in accepted_attrs.get(op, ()):
            if attrs.get(lim["attr"]) != lim["value"]:
                continue
            if all(not lim["when"].get(p) or not cl or set(cl) & set(lim["when"][p]) for p, cl in classes.items()):
                return True
        return False

    for op, row in ops.items():
        if not row["supported"]:
            continue
        t = types.get(op)
        if t:
            row["types"] = {p: {"ok": sorted(ok), "no": sorted(no - ok)} for p, (ok, no) in sorted(t.items())}
            for p, dts in const_ok.get(op, {}).items():
                if p in row["types"] and dts & set(row["types"][p]["no"]):
                    row["types"][p]["const_ok"] = sorted(dts & set(row["types"][p]["no"]))
            if op in io:
                row["io"] = io[op][1]
        c = const.get(op, {})
        kinds = const_kind.get(op, {})

        def split(key, idx, kinds=kinds):
            w = sorted(i for i in idx if "w" in kinds.get((key, i), {"w"}))
            g = sorted(i for i in idx if i not in w)
            return w, g
        must, free = c.get("*", (set(), set()))
        w, g = split("*", must - free)
        if w:
            row["const_inputs"] = w
        if g:
            row["no_graph_inputs"] = g
        by_dt, by_dt_g = {}, {}
        for dt, (m, f) in c.items():
            if dt in ("*", None) or not m - f:
                continue
            w2, g2 = split(dt, m - f)
            if w2 and w2 != w:
                by_dt[dt] = w2
            if g2 and g2 != g:
                by_dt_g[dt] = g2
        if by_dt:
            row["const_inputs_by_dtype"] = by_dt
        if by_dt_g:
            row["no_graph_inputs_by_dtype"] = by_dt_g
        # dtypes at which an input rejected as a network input was taken as one (_network_input_dtype_probes)
        gi_ok = {str(i): sorted(d) for i, d in sorted(gi_dtype_ok.get(op, {}).items())
                 if i in set(g) | {x for lst in by_dt_g.values() for x in lst}}
        if gi_ok:
            row["network_input_dtypes_ok"] = gi_ok
        vs = versions.get(op)
        if vs and any(ok for ok, no in vs.values()):
            bad = sorted(sv for sv, (ok, no) in vs.items() if not ok and no)
            if bad:
                row["bad_versions"] = bad
        seen, lst = set(), []
        for lim in limits.get(op, ()):
            key = json.dumps([lim["attr"], lim["value"], lim["when"]], sort_keys=True)
            if key not in seen and not contradicted(op, lim):
                seen.add(key)
                lst.append(lim)
        if lst:
            row["attr_limits"] = lst
        last_ok = max(present_ok.get(op, {-1}) or {-1})  # only inputs past the last one an accepted probe gave
        absent = sorted(i for i in present_no.get(op, set()) - present_ok.get(op, set()) - {v["input"] for v in values.get(op, ())}
                        if i > last_ok)
        if absent and present_ok.get(op):  # an optional input no accepted probe had (8.x Pad `axes`)
            row["absent_inputs"] = absent
        if values.get(op):
            row["input_value_limits"] = values[op]
        if op in outputs and max_ok_outputs[op] <= outputs[op]:
            row["max_outputs"] = outputs[op]
        ok_first = {r[0] for r in ranks_ok.get(op, set()) if r}  # only a data rank never accepted: (5, 5) GridSample
        bad_ranks = sorted(r for r in ranks_no.get(op, set()) - ranks_ok.get(op, set()) if None not in r and r and r[0] not in ok_first)
        if bad_ranks and ranks_ok.get(op):
            row["bad_ranks"] = [list(r) for r in bad_ranks]
        crash_ranks = sorted(r for r in crashes.get(op, set()) - ranks_ok.get(op, set()) if None not in r and r and r[0] not in ok_first)
        if crash_ranks:
            row["crash_ranks"] = [list(r) for r in crash_ranks]
            if "bad_ranks" in row:
                row["bad_ranks"] = [r for r in row["bad_ranks"] if r not in row["crash_ranks"]]
                if not row["bad_ranks"]:
                    del row["bad_ranks"]
        d = docs.get("ops", {}).get(op) if docs else None
        if d and d.get("restrictions"):
            row["restrictions"] = d["restrictions"]
    return ops


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trt", action="append", required=True, help="LABEL=PYTHON (a Python that imports tensorrt)")
    ap.add_argument("--stub-dir", action="append", default=[], help="LABEL=DIR: LD_LIBRARY_PATH for that TensorRT (stub CUDA driver)")
    ap.add_argument("--docs", action="append", default=[], help="LABEL=DOCS_VERSION: docs matrix whose restriction texts to keep")
    ap.add_argument("--out", default=str(ROOT / "onnxlint" / "data" / "tensorrt"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="keep probe models and raw results here")
    ap.add_argument("--reuse", action="store_true", help="with --keep: re-aggregate saved probe results, probe nothing")
    ap.add_argument("--ops", help="comma-separated op types to probe (default: all)")
    args = ap.parse_args(argv)
    stubs = dict(s.split("=", 1) for s in args.stub_dir)
    docs_for = dict(s.split("=", 1) for s in args.docs)
    t0 = time.time()
    cases = _load_cases()
    import onnx
    seeds = seeds_from_cases(cases, set(args.ops.split(",")) if args.ops else None)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="trt-probes-"))
    work.mkdir(parents=True, exist_ok=True)
    ps0 = ProbeSet(work / "models")
    ps0.root.mkdir(exist_ok=True)
    if not args.reuse:
        phase0(seeds, ps0)
    print(f"{len(seeds)} seed cases ({time.time() - t0:.0f} s)", flush=True)
    all_ops = sorted({s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""})
    for spec in args.trt:
        label, python = spec.split("=", 1)
        vwork = work / f"run-{label}"
        vwork.mkdir(parents=True, exist_ok=True)
        saved = vwork / "results.json"
        if args.reuse and saved.exists():  # re-aggregate an earlier run's probe results
            res = json.loads(saved.read_text())
            meta = res.pop("__meta__", {})
        elif args.reuse:  # an unfinished run: what its workers have answered so far
            res, meta = read_answers(vwork / "p1")
            print(f"[{label}] partial: {len(res)} probe answers", flush=True)
        else:
            stub = stubs.get(label)
            res, meta = run_probes(python, stub, ps0.paths, vwork / "p1", args.jobs, ops=all_ops)
            n = len(res)
            print(f"[{label}] TensorRT {meta.get('version')}: {n} seeds as they are: "
                  f"{dict(collections.Counter(r['v'] for r in res.values()))} ({time.time() - t0:.0f} s)", flush=True)
            for phase, build in ((1, phase1), (2, phase2), (3, phase3)):
                ps = ProbeSet(work / f"models-{label}-{phase}")
                ps.root.mkdir(exist_ok=True)
                if phase == 1:
                    build(seeds, res, ps)
                else:
                    build(seeds, res, ps, label)  # phases 2 and 3
                got, _ = run_probes(python, stub, ps.paths, vwork / "p1", args.jobs)
                res.update(got)
                print(f"[{label}] phase {phase}: {len(ps.paths)} probes {dict(collections.Counter(r['v'] for r in got.values()))} "
                      f"({time.time() - t0:.0f} s)", flush=True)
            saved.write_text(json.dumps({**res, "__meta__": meta}))
        docs = None
        dv = docs_for.get(label)
        if dv:
            p = Path(args.out) / "docs" / f"trt-{dv}.json"
            docs = json.loads(p.read_text()) if p.exists() else None
        table = {
            "version": label,
            "verified": "parser",
            "parser": (f"TensorRT-RTX {meta.get('version')} ONNX parser (10.x line)" if "rtx" in label
                       else f"TensorRT {meta.get('version')} libnvonnxparser"),
            "source": f"tools/gen_trt_support.py: {len(res)} single-node probes from onnx {onnx.__version__}'s node cases",
            "docs_restrictions_from": dv,
            "casts_int64": label.startswith("8."),
            "ops": aggregate(seeds, res, label, meta, docs),
        }
        dest = Path(args.out) / f"trt-{label}.json"
        if dest.exists():  # what tools/gen_trt_behaviour.py measured stays until it is run again
            old = json.loads(dest.read_text())
            table.update({k: old[k] for k in ("behaviour", "ort_ops", "ort_ops_source", "ort_op_probes") if k in old})
        dest.write_text(json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n")
        print(dest, f"({time.time() - t0:.0f} s)", flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
