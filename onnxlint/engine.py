"""Evaluates every rule in one walk over the graph index, dispatching node rules by op type."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from onnxlint import schemas
from onnxlint.graph import STANDARD_DOMAINS, GraphIndex, NodeRef, ValueType
from onnxlint.loading import ModelFile
from onnxlint.report import Finding
from onnxlint.ruleset import PLACEHOLDER, Rule, RuleSet

MAX_VALUE_ELEMENTS = 64  # rules may read constant values, but only small in-file ones


@dataclass
class Options:
    targets: set[str] = field(default_factory=lambda: {"ort-cpu", "ort-cuda", "tensorrt"})
    ort_version: str | None = None
    trt_version: str | None = None


class LintContext:
    """Per-model facts, each computed once and only when a rule asks for it."""

    def __init__(self, mf: ModelFile, index: GraphIndex, options: Options, ruleset: RuleSet):
        self.mf = mf
        self.index = index
        self.options = options
        self.ruleset = ruleset
        self._placement: dict[str, object] = {}
        self._trt = None
        self._checker: str | None | bool = False

    # model-level facts
    def checker_error(self) -> str | None:
        if self._checker is False:
            from onnxlint.loading import check_model

            self._checker = check_model(self.mf)
            self.mf.raw = None  # the file's bytes were kept for the checker only
        return self._checker

    def placement(self, target: str):
        if target not in self._placement:
            from onnxlint import placement

            fallback_rules = [r for r in self.ruleset.rules if r.fallback == target]

            def rejects(node: NodeRef, tgt: str):
                for r in fallback_rules:
                    if (r.ops is None or node.op_type in r.ops) and match_node(self, r.match, node):
                        return f"{r.id}: {render(r.message, self, r, node)}"
                return None

            ops = None if any(r.ops is None for r in fallback_rules) else {op for r in fallback_rules for op in r.ops}
            self._placement[target] = placement.simulate(self.index, target, self.options.ort_version, rejects, ops)
        return self._placement[target]

    def tensorrt(self):
        if self._trt is None:
            from onnxlint import tensorrt

            self._trt = tensorrt.predict(self.index, self.options.trt_version)
        return self._trt


# ----------------------------------------------------------------------------- comparisons


def compare(value, spec) -> bool:
    """Rule comparison: scalar = eq, list = in, mapping of eq/ne/in/not_in/exists/lt/le/gt/ge (all must hold)."""
    if isinstance(spec, dict):
        for op, want in spec.items():
            if op == "exists":
                if (value is not None) != want:
                    return False
                continue
            if value is None:
                return False
            if op == "eq" and not _eq(value, want):
                return False
            if op == "ne" and _eq(value, want):
                return False
            if op == "in" and not any(_eq(value, w) for w in want):
                return False
            if op == "not_in" and any(_eq(value, w) for w in want):
                return False
            if op in ("lt", "le", "gt", "ge"):
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    return False
                if not {"lt": value < want, "le": value <= want, "gt": value > want, "ge": value >= want}[op]:
                    return False
        return True
    if value is None:
        return False
    if isinstance(spec, list):
        return any(_eq(value, w) for w in spec)
    return _eq(value, spec)


def _eq(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return a == b


# ----------------------------------------------------------------------------- node predicates


def _logic_fails(key: str, spec, holds) -> bool:
    """any/all/not over sub-matches; holds(sub) evaluates one sub-match in the caller's scope."""
    if key == "any":
        return not any(holds(sub) for sub in spec)
    if key == "all":
        return not all(holds(sub) for sub in spec)
    return holds(spec)  # not


def attr_value(node: NodeRef, name: str):
    for a in node.proto.attribute:
        if a.name == name:
            return node.attr(name)
    return schemas.attribute_default(node.op_type, node.opset, node.domain, name)


def constant_value(node: NodeRef, value_name: str):
    """Small constant (initializer or Constant node stored in the file) as a Python scalar or list."""
    t = node.scope.constant(value_name)
    if t is None or t.data_location == onnx.TensorProto.EXTERNAL:
        return None
    n = int(np.prod(t.dims)) if t.dims else 1
    if n > MAX_VALUE_ELEMENTS:
        return None
    try:
        arr = numpy_helper.to_array(t)
    except Exception:
        return None
    v = arr.tolist()
    if isinstance(v, list) and len(v) == 1 and not isinstance(v[0], list):
        return v[0]  # a one-element tensor compares like its scalar
    return v


def _value_ok(ctx, node: NodeRef, value: str | None, vt: ValueType, spec: dict) -> bool:
    for key, want in spec.items():
        if key == "exists":
            if bool(value) != bool(want if not isinstance(want, dict) else want.get("eq", True)):
                return False
            continue
        if not value:
            return False
        if key == "dtype":
            got = vt.dtype
        elif key == "rank":
            got = vt.rank
        elif key == "static":
            got = vt.static if vt.shape is not None else None
        elif key == "constant":
            got = node.scope.constant(value) is not None
        elif key == "graph_input":
            got = node.scope.is_graph_input(value)
        elif key == "value":
            got = constant_value(node, value)
        elif key == "shape_from_shape_op":
            got = _computed_from_shape(node, value)
        else:
            return False
        if not compare(got, want):
            return False
    return True


def _computed_from_shape(node: NodeRef, value: str) -> bool:
    """Is value computed at run time (not a constant)? Drives 'dynamic Reshape' style rules."""
    return node.scope.constant(value) is None and not node.scope.is_graph_input(value)


def match_node(ctx: LintContext, m: dict, node: NodeRef) -> bool:
    for key, spec in m.items():
        if key == "op":
            if isinstance(spec, dict):
                if not compare(node.op_type, spec):
                    return False
            elif node.op_type not in ([spec] if isinstance(spec, str) else spec):
                return False
        elif key == "domain":
            if not compare(node.domain, spec):
                return False
        elif key == "standard_domain":
            if (node.domain in STANDARD_DOMAINS) != spec:
                return False
        elif key == "opset":
            if not compare(node.opset, spec):
                return False
        elif key == "attrs":
            for name, want in spec.items():
                if not compare(attr_value(node, name), want):
                    return False
        elif key in ("inputs", "outputs"):
            names = node.inputs if key == "inputs" else node.outputs
            typer = node.input_type if key == "inputs" else node.output_type
            for idx, vspec in spec.items():
                if idx in ("any", "all"):
                    results = [_value_ok(ctx, node, v, typer(i), vspec) for i, v in enumerate(names) if v]
                    if not (any(results) if idx == "any" else (results and all(results))):
                        return False
                else:
                    value = names[idx] if idx < len(names) else None
                    if not _value_ok(ctx, node, value, typer(idx), vspec):
                        return False
        elif key == "inputs_same_dtype":
            dts = [node.input_type(i).dtype for i, v in enumerate(node.inputs) if v]
            if len(dts) < 2 or any(d is None for d in dts):
                return False
            if (len(set(dts)) == 1) != spec:
                return False
        elif key == "num_inputs":
            if not compare(sum(1 for v in node.inputs if v), spec):
                return False
        elif key == "num_outputs":
            if not compare(sum(1 for v in node.outputs if v), spec):
                return False
        elif key == "placement":
            if spec["target"] not in ctx.options.targets:
                return False
            p = ctx.placement(spec["target"]).get(node)
            if p is None:
                return False
            if "status" in spec and not compare(p.status, spec["status"]):
                return False
            if "reason" in spec and not compare(p.reason, spec["reason"]):
                return False
        elif key == "tensorrt":
            pred = ctx.tensorrt()
            if "version" in spec and not compare(float(pred.version), spec["version"]):
                return False
            if set(spec) <= {"version"}:
                continue
            p = pred.get(node)
            if p is None:
                return False
            if "status" in spec and not compare(p.status, spec["status"]):
                return False
            if "reason" in spec and not compare(p.reason, spec["reason"]):
                return False
        elif key == "local_function":
            if ctx.index.is_local_function(node) != spec:
                return False
        elif key == "in_subgraph":
            if (node.scope.owner is not None) != spec:
                return False
        elif key in ("any", "all", "not"):
            if _logic_fails(key, spec, lambda sub: match_node(ctx, sub, node)):
                return False
    return True


# ----------------------------------------------------------------------------- model predicates


def model_facts(ctx: LintContext, key: str):
    mf, model = ctx.mf, ctx.mf.model
    if key == "checker":
        return "failed" if ctx.checker_error() else "ok"
    if key == "shape_inference":
        return "failed" if mf.inference_error else "ok"
    if key == "external_data":
        return "missing" if mf.missing_external else ("present" if mf.external else "none")
    if key == "size_bytes":
        return mf.total_size
    if key == "protobuf_bytes":
        return mf.file_size
    if key == "uses_external_data":
        return bool(mf.external)
    if key == "ir_version":
        return model.ir_version
    if key == "inputs_all_static":
        ins = ctx.index.graph_inputs()
        if not ins:
            return None
        return all(ValueTypeOf(i).static for i in ins)
    if key == "producer_name":
        return model.producer_name
    if key == "num_nodes":
        return len(ctx.index.nodes)
    return None


def ValueTypeOf(vi: onnx.ValueInfoProto) -> ValueType:
    from onnxlint.graph import value_type_of

    return value_type_of(vi.type)


def match_model(ctx: LintContext, m: dict) -> bool:
    for key, spec in m.items():
        if key in ("any", "all", "not"):
            if _logic_fails(key, spec, lambda sub: match_model(ctx, sub)):
                return False
        elif key == "opset":
            for dom, want in spec.items():
                if not compare(ctx.index.opsets.get(dom), want):
                    return False
        elif key == "metadata":
            props = {p.key: p.value for p in ctx.mf.model.metadata_props}
            for k, want in spec.items():
                if not compare(props.get(k), want):
                    return False
        elif not compare(model_facts(ctx, key), spec):
            return False
    return True


def match_graph_input(ctx: LintContext, m: dict, vi: onnx.ValueInfoProto) -> bool:
    vt = ValueTypeOf(vi)
    for key, spec in m.items():
        if key in ("any", "all", "not"):
            if _logic_fails(key, spec, lambda sub: match_graph_input(ctx, sub, vi)):
                return False
        else:
            got = {"dtype": vt.dtype, "rank": vt.rank, "name": vi.name,
                   "static": vt.static if vt.shape is not None else None,
                   "dynamic_batch": (not isinstance(vt.shape[0], int)) if vt.shape else None}[key]
            if not compare(got, spec):
                return False
    return True


# ----------------------------------------------------------------------------- messages

_PATH = re.compile(r"^(\w+)(?:\[(\d+)\])?(?:\.(\w+))?$")


def _fmt(v) -> str:
    if v is None:
        return "?"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join("?" if x is None else str(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


_TEMPLATES: dict[str, list] = {}


def parse_template(template: str) -> list:
    """Literal text and parsed placeholders (root, index, field), once per template: a rule renders the same
    message for every node it flags."""
    parts = _TEMPLATES.get(template)
    if parts is None:
        parts, last = [], 0
        for m in PLACEHOLDER.finditer(template):
            parts.append(template[last:m.start()])
            pm = _PATH.match(m.group(1))
            parts.append((pm.group(1), pm.group(2), pm.group(3)) if pm else None)
            last = m.end()
        parts.append(template[last:])
        _TEMPLATES[template] = parts
    return parts


def render(template: str, ctx: LintContext, rule: Rule, node: NodeRef | None = None, vi=None) -> str:
    out = []
    for part in parse_template(template):
        if part.__class__ is str:
            out.append(part)
        else:
            out.append("?" if part is None else _lookup(part, ctx, rule, node, vi))
    return "".join(out)


def _lookup(part: tuple, ctx: LintContext, rule: Rule, node: NodeRef | None, vi) -> str:
    """One placeholder's value, as text ('?' when unknown)."""
    root, idx, sub = part
    if root == "file":
        return ctx.mf.display
    if root == "rule":
        return rule.id
    if root == "model":
        return _fmt(_model_field(ctx, sub))
    if root == "value" and vi is not None:
        vt = ValueTypeOf(vi)
        return _fmt({"name": vi.name, "dtype": vt.dtype, "shape": list(vt.shape) if vt.shape is not None else None}.get(sub))
    if node is None:
        return "?"
    if root == "node":
        return node.location
    if root == "name":
        return node.name or node.location
    if root == "op_type":
        return node.op_type
    if root == "domain":
        return node.domain
    if root == "opset":
        return _fmt(node.opset)
    if root == "attr" and sub:
        return _fmt(attr_value(node, sub))
    if root in ("input", "output") and idx is not None:
        i = int(idx)
        names = node.inputs if root == "input" else node.outputs
        vt = node.input_type(i) if root == "input" else node.output_type(i)
        if sub == "name":
            return names[i] if i < len(names) else "?"
        if sub == "shape":
            return _fmt(list(vt.shape) if vt.shape is not None else None)
        if sub == "value":
            return _fmt(constant_value(node, names[i]) if i < len(names) and names[i] else None)
        return _fmt(vt.dtype)
    if root == "placement":
        target = rule.placement_target
        if target is None or target not in ctx.options.targets:
            return "?"
        p = ctx.placement(target).get(node)
        return _fmt(getattr(p, sub, None) if p else None)
    if root == "trt":
        p = ctx.tensorrt().get(node)
        if sub == "version":
            return ctx.tensorrt().version
        return _fmt(getattr(p, sub, None) if p else None)
    return "?"


def _model_field(ctx: LintContext, sub: str | None):
    mf = ctx.mf
    return {
        "checker_error": ctx.checker_error(),
        "inference_error": mf.inference_error,
        "size_mb": f"{mf.total_size / 2**20:.1f}",
        "protobuf_mb": f"{mf.file_size / 2**20:.1f}",
        "ir_version": mf.model.ir_version,
        "opset": ctx.index.opsets.get("ai.onnx"),
        "external_problem": "; ".join(sorted({t.problem for t in mf.missing_external})) or None,
        "external_missing": len(mf.missing_external),
        "inputs": ", ".join(i.name for i in ctx.index.graph_inputs()),
    }.get(sub)


# ----------------------------------------------------------------------------- the walk


def _finding(ctx: LintContext, rule: Rule, node: NodeRef | None, message: str) -> Finding:
    target = "any" if "any" in rule.targets else next((t for t in rule.targets if t in ctx.options.targets), rule.targets[0])
    return Finding(
        code=rule.id, name=rule.name, severity=rule.severity, target=target, filename=ctx.mf.display,
        node=node.location if node else None, op_type=node.op_type if node else None, message=message,
        hint=rule.fix_hint, fix=rule.fix, node_name=(node.name if node else None),
        doc_string=(node.proto.doc_string if node else ""),
    )


def _status_nodes(pred, spec: dict) -> list[NodeRef] | None:
    if "status" not in spec:
        return None
    out: list[NodeRef] = []
    for status, nodes in pred.by_status(with_common=compare(pred.COMMON, spec["status"])).items():
        if compare(status, spec["status"]):
            out += nodes
    return out


def candidates(ctx: LintContext, rule: Rule) -> list[NodeRef]:
    """Nodes a node rule can match, from the indexes of its top-level keys (match_node still decides).

    A rule keyed on op type, placement or TensorRT status, domain or an input dtype never looks at the other
    nodes; only a rule with none of these keys walks the whole graph."""
    m = rule.match
    index = ctx.index
    sets: list[list[NodeRef]] = []
    if rule.ops is not None:
        sets.append([n for op in rule.ops for n in index.by_op.get(op, ())])
    elif isinstance(m.get("op"), dict):
        sets.append([n for op, nodes in index.by_op.items() if compare(op, m["op"]) for n in nodes])
    pl = m.get("placement")
    if isinstance(pl, dict):
        if pl.get("target") not in ctx.options.targets:
            return []
        got = _status_nodes(ctx.placement(pl["target"]), pl)
        if got is not None:
            sets.append(got)
    trt = m.get("tensorrt")
    if isinstance(trt, dict):
        pred = ctx.tensorrt()
        if "version" in trt and not compare(float(pred.version), trt["version"]):
            return []
        got = _status_nodes(pred, trt)
        if got is not None:
            sets.append(got)
    if "domain" in m:
        sets.append([n for dom, nodes in index.by_domain().items() if compare(dom, m["domain"]) for n in nodes])
    ins = m.get("inputs")
    if isinstance(ins, dict) and isinstance(ins.get("any"), dict) and "dtype" in ins["any"]:
        seen: dict[int, NodeRef] = {}
        for node in index.readers_of(index.values_with_dtype(lambda d: compare(d, ins["any"]["dtype"]))):
            seen[node.index] = node
        sets.append(list(seen.values()))
    if not sets:
        return index.nodes
    return min(sets, key=len)


def lint(ctx: LintContext, rules: list[Rule]) -> list[Finding]:
    """All findings of the active rules for one model: model and input findings first, then graph order."""
    active = [r for r in rules if r.applies_to(ctx.options.targets) and r.fallback is None]
    out: list[Finding] = []
    for rule in (r for r in active if r.scope == "model"):
        if match_model(ctx, rule.match):
            out.append(_finding(ctx, rule, None, render(rule.message, ctx, rule)))
    inputs = [r for r in active if r.scope == "graph_input"]
    if inputs:
        for vi in ctx.index.graph_inputs():
            for rule in inputs:
                if match_graph_input(ctx, rule.match, vi):
                    f = _finding(ctx, rule, None, render(rule.message, ctx, rule, vi=vi))
                    f.node = f"graph/input:{vi.name}"
                    out.append(f)
    node_rules = [r for r in active if r.scope == "node"]
    # fallback rules report themselves too: they are the reason a node leaves the CUDA EP
    node_rules += [r for r in rules if r.fallback and r.applies_to(ctx.options.targets) and r.fallback in ctx.options.targets]
    hits: list[tuple[int, int, Finding]] = []
    for pos, rule in enumerate(node_rules):
        for node in candidates(ctx, rule):
            if match_node(ctx, rule.match, node):
                hits.append((node.index, pos, _finding(ctx, rule, node, render(rule.message, ctx, rule, node))))
    hits.sort(key=lambda h: (h[0], h[1]))
    out += [f for _, _, f in hits]
    return out
