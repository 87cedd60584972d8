"""Rule predicates: one registry per scope (node, value, graph input, model).

Each predicate is declared once, with its name, the JSON Schema of its argument (the published rule schema
is generated from these, and rule files are validated against it), its evaluator and, for node predicates,
the candidate index that lets a rule visit only the nodes it can match. Adding a predicate is one
`@predicate(...)` function here and a line in README's list; nothing else. A target's verdict predicate
(`placement`, `tensorrt`) is declared by the target (`targets.base.Vocabulary`) and found through the
context's registry (`target_predicates`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

import onnx

from onnxlint.model.graph import STANDARD_DOMAINS, NodeRef, ValueType, shape_sized, small_array, value_type_of
from onnxlint.ort import schema_registry
from onnxlint.rules.comparison import ATTRIBUTE_VALUE, CONSTANT_VALUE, cmp_schema, compare, enum_cmp

if TYPE_CHECKING:
    from onnxlint.rules.context import LintContext

MAX_VALUE_ELEMENTS = 64  # rules may read constant values, but only small ones (external: graph.small_array)

SCOPES = ("node", "value", "graph_input", "model")


Test = Callable[["LintContext", Any], bool]  # a rule's match, or one key of it, over a subject (`compiled`)
Compiler = Callable[[Any, Mapping[str, Any]], Test]  # (spec, registry) -> its Test


@dataclass(frozen=True)
class Predicate:
    """name: the key in a rule's match; schema: JSON Schema of its argument; evaluate(ctx, subject, spec);
    candidates(ctx, spec) -> nodes that can match, or None for "no index" (node scope only);
    needs_prediction: evaluating it asks a target for its prediction (not allowed in fallback rules, which
    are part of computing that prediction); exact: its candidate list holds every node it accepts, whatever
    the settings, so it may narrow an `any` (`_indexed`)."""

    name: str
    scope: str
    schema: dict[str, Any]
    evaluate: Callable[..., bool]
    doc: str
    candidates: Callable[..., list[NodeRef] | None] | None = None
    needs_prediction: bool = False
    exact: bool = False
    # (spec, registry) -> a function of (ctx, subject) answering as evaluate(ctx, subject, spec) does (`compiled`);
    # None: evaluate is called
    compiler: Compiler | None = None


REGISTRY: dict[str, dict[str, Predicate]] = {scope: {} for scope in SCOPES}


def predicate(scope: str, name: str, schema: dict[str, Any], doc: str, candidates: Callable[..., list[NodeRef] | None] | None = None,
              needs_prediction: bool = False, exact: bool = False,
              compiler: Compiler | None = None,
              ) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    def deco(fn: Callable[..., bool]) -> Callable[..., bool]:
        REGISTRY[scope][name] = Predicate(name, scope, schema, fn, doc, candidates, needs_prediction, exact, compiler)
        return fn

    return deco


# ----------------------------------------------------------------------------- comparisons

# ----------------------------------------------------------------------------- facts predicates read


def attr_value(node: NodeRef, name: str) -> Any:
    """The attribute's value, or the schema default when the node does not set it."""
    for a in node.proto.attribute:
        if a.name == name:
            return node.attr(name)
    return schema_registry.attribute_default(node.op_type, node.opset, node.domain, name)


MAX_IDENTITY_HOPS = 16


def constant_tensor(node: NodeRef, value_name: str) -> onnx.TensorProto | None:
    """The initializer or Constant a value is, looking through Identity nodes (the graph index's lookup)."""
    return node.scope.constant_behind(value_name, MAX_IDENTITY_HOPS)


def constant_value(node: NodeRef, value_name: str) -> Any:
    """Small constant (initializer or Constant node stored in the file, or an Identity of one) as a Python
    scalar or list."""
    t = constant_tensor(node, value_name)
    arr = small_array(node.scope, t, MAX_VALUE_ELEMENTS) if t is not None else None
    if arr is None:
        return None
    v = arr.tolist()
    if isinstance(v, list) and len(v) == 1 and not isinstance(v[0], list):
        return v[0]  # a one-element tensor compares like its scalar
    return v


# ----------------------------------------------------------------------------- evaluation


def match(ctx: "LintContext", scope: str, m: dict[str, Any], subject: Any) -> bool:
    """Every predicate of the mapping holds for subject (a node, a (node, value, type) triple, a graph
    input's ValueInfoProto, or None for the model): `compiled`'s function for the mapping, made once."""
    key = (scope, id(m), id(ctx.registry))
    got = _COMPILED.get(key)
    if got is None or got[0] is not m or got[1] is not ctx.registry:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        got = _COMPILED[key] = (m, ctx.registry, compiled(scope, m, ctx.registry))
    return got[2](ctx, subject)


# match's functions by (scope, id of the mapping, id of the registry), each entry holding both (an id is not
# reused while its object lives); cleared when full (a long-lived process loading many rule sets)
_COMPILED: dict[tuple[str, int, int], tuple[Any, Any, Test]] = {}
_COMPILED_MAX = 4096


_TARGET_PREDICATES: dict[int, tuple[Any, dict[str, Predicate]]] = {}


def target_predicates(registry: Mapping[str, Any]) -> dict[str, Predicate]:
    """The node predicates the registry's targets declare (`targets.base.Vocabulary`: `placement`,
    `tensorrt`), made once per registry."""
    got = _TARGET_PREDICATES.get(id(registry))
    if got is None or got[0] is not registry:
        table: dict[str, Predicate] = {}
        for target in registry.values():
            v = target.vocabulary
            if v is not None and v.predicate not in table:
                table[v.predicate] = Predicate(v.predicate, "node", {"$ref": f"#/$defs/{v.predicate}"}, v.evaluate,
                                               v.doc, v.candidates, needs_prediction=True, exact=v.exact_candidates)
        got = _TARGET_PREDICATES[id(registry)] = (registry, table)
    return got[1]


def match_node(ctx: "LintContext", m: dict[str, Any], node: NodeRef) -> bool:
    return match(ctx, "node", m, node)


def compiled(scope: str, m: dict[str, Any], registry: Mapping[str, Any]) -> Test:
    """The mapping m of a rule's `match:` as one function of (ctx, subject), true when every key holds: `any`,
    `all` and `not` of sub-mappings, other keys the scope's predicates or the registry's targets' (each looked
    up once, not at every subject: the engine asks it of a million nodes). Keys are asked in the mapping's order
    and the first that fails ends it; a key no predicate has raises KeyError when it is reached."""
    table = REGISTRY[scope]
    tests: list[Test] = []
    for key, spec in m.items():
        if key == "any":
            tests.append(_any([compiled(scope, sub, registry) for sub in spec]))
        elif key == "all":
            tests.append(_all([compiled(scope, sub, registry) for sub in spec]))
        elif key == "not":
            tests.append(_not(compiled(scope, spec, registry)))
        else:
            p = table.get(key) or target_predicates(registry).get(key)
            tests.append(_missing(key) if p is None else p.compiler(spec, registry) if p.compiler is not None
                         else _bound(p.evaluate, spec))
    if len(tests) == 1:
        return tests[0]

    def test(ctx: "LintContext", subject: Any) -> bool:
        for t in tests:
            if not t(ctx, subject):
                return False
        return True

    return test


def _bound(evaluate: Callable[..., bool], spec: Any) -> Test:
    return lambda ctx, subject: evaluate(ctx, subject, spec)


def _any(tests: list[Test]) -> Test:
    return lambda ctx, subject: any(t(ctx, subject) for t in tests)


def _all(tests: list[Test]) -> Test:
    return lambda ctx, subject: all(t(ctx, subject) for t in tests)


def _not(test: Test) -> Test:
    return lambda ctx, subject: not test(ctx, subject)


def _missing(key: str) -> Test:
    def test(ctx: "LintContext", subject: Any) -> bool:
        raise KeyError(key)

    return test


def candidates(ctx: "LintContext", m: dict[str, Any], ops: tuple[str, ...] | None) -> list[NodeRef]:
    """Nodes a node rule can match, from the indexes of its top-level predicates (match still decides).

    A rule keyed on op type, placement or TensorRT status, domain or an input dtype never looks at the other
    nodes; only a rule with none of these walks the whole graph."""
    index = ctx.index
    sets: list[list[NodeRef]] = []
    if ops is not None:
        sets.append([n for op in ops for n in index.by_op.get(op, ())])
    got = _indexed(ctx, m, skip_op=ops is not None)
    if got is not None:
        sets.append(got)
    if not sets:
        return index.nodes
    return min(sets, key=len)


def _indexed(ctx: "LintContext", m: dict[str, Any], skip_op: bool = False, exact: bool = False) -> list[NodeRef] | None:
    """The smallest candidate list of m's indexed predicates; an `any` counts when each alternative is narrowed
    by an exact predicate (the union of theirs: OLX200's two placement verdicts look at the nodes with those,
    not at every node; a union is wrong as soon as one list misses a node its predicate accepts: `tensorrt`
    lists no node when TensorRT is not a target yet still answers, `inputs` lists only values with a known
    type). None: nothing in m narrows the nodes."""
    best: list[NodeRef] | None = None
    for key, spec in m.items():
        if key == "any" and isinstance(spec, list) and spec:
            alternatives = [_indexed(ctx, sub, exact=True) for sub in spec]
            if any(a is None for a in alternatives):
                continue
            got: list[NodeRef] = []
            seen: set[int] = set()
            for alt in alternatives:
                for n in alt or ():
                    if id(n) not in seen:
                        seen.add(id(n))
                        got.append(n)
        else:
            p = REGISTRY["node"].get(key) or target_predicates(ctx.registry).get(key)
            if p is None or p.candidates is None or (key == "op" and skip_op) or (exact and not p.exact):
                continue
            narrowed = p.candidates(ctx, spec)
            if narrowed is None:
                continue
            got = narrowed
        if not got:
            return []
        if best is None or len(got) < len(best):
            best = got
    return best


# ----------------------------------------------------------------------------- node predicates

_OP_SCHEMA: dict[str, Any] = {"x-what": "op type", "anyOf": [
    {"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1},
    cmp_schema({"type": "string"}, "op type")["anyOf"][2]]}


def _op_candidates(ctx: "LintContext", spec: Any) -> list[NodeRef] | None:
    by_op = ctx.index.by_op
    if isinstance(spec, dict):
        return [n for op, nodes in by_op.items() if compare(op, spec) for n in nodes]
    return [n for op in ([spec] if isinstance(spec, str) else spec) for n in by_op.get(op, ())]


@predicate("node", "op", _OP_SCHEMA, "the node's op type: a name, a list of names, or a comparison",
           candidates=_op_candidates, exact=True)
def _op(ctx: "LintContext", node: NodeRef, spec: Any) -> bool:
    if isinstance(spec, dict):
        return compare(node.op_type, spec)
    return node.op_type == spec if isinstance(spec, str) else node.op_type in spec


def _domain_candidates(ctx: "LintContext", spec: Any) -> list[NodeRef]:
    return [n for dom, nodes in ctx.index.by_domain().items() if compare(dom, spec) for n in nodes]


@predicate("node", "domain", cmp_schema({"type": "string"}, "domain"), "the node's domain ('ai.onnx' for the default)",
           candidates=_domain_candidates)
def _domain(ctx: "LintContext", node: NodeRef, spec: Any) -> bool:
    return compare(node.domain, spec)


@predicate("node", "standard_domain", {"type": "boolean"}, "whether the node's domain is an ONNX standard domain")
def _standard_domain(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    return (node.domain in STANDARD_DOMAINS) == spec


@predicate("node", "opset", cmp_schema({"type": "integer"}, "opset"), "the opset version in effect for the node's domain")
def _opset(ctx: "LintContext", node: NodeRef, spec: Any) -> bool:
    return compare(node.opset, spec)


@predicate("node", "attrs", {"type": "object", "x-what": "attribute", "additionalProperties": cmp_schema(ATTRIBUTE_VALUE, "attribute")},
           "attribute name -> comparison (the schema default applies when the node does not set it)")
def _attrs(ctx: "LintContext", node: NodeRef, spec: dict[str, Any]) -> bool:
    return all(compare(attr_value(node, name), want) for name, want in spec.items())


def _io_schema(kind: str) -> dict[str, Any]:
    return {"type": "object", "x-what": f"{kind} index", "additionalProperties": False,
            "patternProperties": {"^([0-9]{1,9}|any|all)$": {"$ref": "#/$defs/value_match"}}}


def _inputs_candidates(ctx: "LintContext", spec: Any) -> list[NodeRef] | None:
    anyspec = spec.get("any") if isinstance(spec, dict) else None
    if not (isinstance(anyspec, dict) and "dtype" in anyspec):
        return None
    index = ctx.index
    seen: dict[int, NodeRef] = {}
    for node in index.readers_of(index.values_with_dtype(lambda d: compare(d, anyspec["dtype"]))):
        seen[node.index] = node
    return list(seen.values())


def _io(kind: str) -> Compiler:
    """The `inputs` / `outputs` predicate's compiler: each index (or any / all of the named values) with its
    value predicates (`compiled`)."""
    def compile_io(spec: dict[Any, Any], registry: Mapping[str, Any]) -> Test:
        parts = [(idx if idx in ("any", "all") else int(idx), compiled("value", vspec, registry))
                 for idx, vspec in spec.items()]

        def test(ctx: "LintContext", node: NodeRef) -> bool:
            names = node.inputs if kind == "inputs" else node.outputs
            typer = node.input_type if kind == "inputs" else node.output_type
            for idx, value_test in parts:
                if idx.__class__ is str:
                    results = [value_test(ctx, (node, v, typer(i))) for i, v in enumerate(names) if v]
                    if not (any(results) if idx == "any" else (results and all(results))):
                        return False
                else:
                    value = names[idx] if idx < len(names) else None
                    if not value_test(ctx, (node, value, typer(idx))):
                        return False
            return True

        return test

    return compile_io


def _by_compiler(compiler: Compiler) -> Callable[..., bool]:
    """The evaluate function of a predicate given by its compiler (`compiled` calls the compiler itself)."""
    return lambda ctx, subject, spec: compiler(spec, ctx.registry)(ctx, subject)


_INPUTS, _OUTPUTS = _io("inputs"), _io("outputs")
predicate("node", "inputs", _io_schema("input"), "input index (or any/all) -> value predicates",
          candidates=_inputs_candidates, compiler=_INPUTS)(_by_compiler(_INPUTS))
predicate("node", "outputs", _io_schema("output"), "output index (or any/all) -> value predicates",
          compiler=_OUTPUTS)(_by_compiler(_OUTPUTS))


@predicate("node", "inputs_same_dtype", {"type": "boolean"}, "whether all (named) inputs share one known dtype")
def _inputs_same_dtype(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    dts = [node.input_type(i).dtype for i, v in enumerate(node.inputs) if v]
    if len(dts) < 2 or any(d is None for d in dts):
        return False
    return (len(set(dts)) == 1) == spec


@predicate("node", "num_inputs", cmp_schema({"type": "integer"}, "count"), "number of named inputs")
def _num_inputs(ctx: "LintContext", node: NodeRef, spec: Any) -> bool:
    return compare(sum(1 for v in node.inputs if v), spec)


@predicate("node", "num_outputs", cmp_schema({"type": "integer"}, "count"), "number of named outputs")
def _num_outputs(ctx: "LintContext", node: NodeRef, spec: Any) -> bool:
    return compare(sum(1 for v in node.outputs if v), spec)


@predicate("node", "reported_by", {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]+[0-9]+$"}, "minItems": 1,
                                   "x-what": "rule codes"},
           "whether one of these rules, when it runs, reports the node: a target rule names the core rule that already "
           "reports the same cause (Dropout in training mode), so one cause is reported once", needs_prediction=True)
def _reported_by(ctx: "LintContext", node: NodeRef, spec: list[str]) -> bool:
    from onnxlint.rules.codes import doc_string_suppresses, matches

    active = getattr(ctx, "active_rules", None) or {}
    suppressed = getattr(ctx, "suppressed_codes", None) or []
    # whether a rule reports a node, asked once per (rule, node) of the run's active rules: rules naming each other
    # in `reported_by` make a graph (no cycle), and asking afresh at every path through it was exponential in its
    # depth (44 rules of a 6.5 KB rule file, each naming the next two: 78 s for one node, twice that per rule more)
    held = ctx.facts.get("reported_by")
    if held is None or held[0] is not active:
        held = ctx.facts["reported_by"] = (active, {})
    memo: dict[tuple[str, int], bool] = held[1]
    for code in spec:
        if matches(code, suppressed) or doc_string_suppresses(node.proto.doc_string, code):
            continue  # its finding will not be shown: this node's target finding must be
        got = memo.get((code, node.index))
        if got is None:
            rule = active.get(code)
            got = memo[(code, node.index)] = bool(
                rule is not None and rule.scope == "node" and (rule.ops is None or node.op_type in rule.ops)
                and match_node(ctx, rule.match, node))
        if got:
            return True
    return False


def on_cpu_shape_path(ctx: "LintContext", node: NodeRef) -> bool:
    """Whether every input of the node is already a CPU tensor under the CUDA EP (a Shape/Size output, an output
    of a node placed on CPU, a small constant) and at least one comes from such a node: the small shape
    computations ORT's GetCpuPreferredNodes puts on CPU on purpose. Running one on CPU because CUDA has no
    kernel for it costs no Memcpy on its inputs and changes nothing a user can act on."""
    from onnxlint.ort import cpu_preferred

    if "ort-cuda" not in ctx.options.targets:
        return False
    return cpu_preferred.reads_only_cpu_tensors(ctx.prediction("ort-cuda"), node, lambda value: constant_tensor(node, value))


@predicate("node", "cpu_shape_path", {"type": "boolean"},
           "under the CUDA EP, whether all the node's inputs are CPU tensors of a shape computation (Shape outputs, "
           "nodes on CPU, small constants)", needs_prediction=True)
def _cpu_shape_path(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    return on_cpu_shape_path(ctx, node) == spec


@predicate("node", "shape_sized", {"type": "boolean"},
           "whether the node may be a shape computation by its size: none of its inputs and outputs known (inferred "
           "shapes) to hold more than 1024 elements")
def _shape_sized(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    return shape_sized(node) == spec


@predicate("node", "ort_prepared_model", {"type": "boolean"},
           "whether the node's model was prepared for ONNX Runtime (it holds ops only ORT defines, or is quantized in "
           "one of ORT's CPU formats: QOperator, dynamic, 16-bit QDQ) while TensorRT is only a default target: "
           "TensorRT's verdicts there are context, said once per model (OLX315, OLX207)",
           needs_prediction=True)
def _ort_prepared_model(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    return _prepared_for_ort(ctx) == spec


def _prepared_for_ort(ctx: "LintContext") -> bool:
    got = ctx.facts.get("prepared_for_ort")
    if got is None:
        from onnxlint.model import intent

        got = ctx.facts["prepared_for_ort"] = _tensorrt_ort_ops(ctx) == "default-target" or (
            "tensorrt" in ctx.options.targets and "tensorrt" not in ctx.options.explicit_targets
            and bool(intent.cpu_quantization(ctx.index)))
    return bool(got)


@predicate("node", "cpu_quantization_op", {"type": "boolean"},
           "under the CUDA EP, whether the node is one of the model's quantized ops in an ORT format the CUDA EP runs "
           "on CPU (QOperator, dynamic, 16-bit QDQ) and falls back: said once per model by OLX207", needs_prediction=True)
def _cpu_quantization_op(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    from onnxlint.rules import intent_facts

    return intent_facts.in_cpu_quantization(ctx, node) == spec


@predicate("node", "local_function", {"type": "boolean"}, "whether the node is inside a model-local function")
def _local_function(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    return bool(ctx.index.is_local_function(node)) == spec


@predicate("node", "in_subgraph", {"type": "boolean"}, "whether the node is inside an If/Loop/Scan body")
def _in_subgraph(ctx: "LintContext", node: NodeRef, spec: bool) -> bool:
    return (node.scope.owner is not None) == spec


# ----------------------------------------------------------------------------- value predicates
# subject: (node, value name or None, ValueType)

ValueSubject = tuple[NodeRef, "str | None", ValueType]


def _value(name: str, schema: dict[str, Any], doc: str, fact: Callable[[NodeRef, str, ValueType], Any]) -> None:
    def evaluate(ctx: "LintContext", subject: ValueSubject, spec: Any) -> bool:
        node, value, vt = subject
        if not value:
            return False
        return compare(fact(node, value, vt), spec)

    REGISTRY["value"][name] = Predicate(name, "value", schema, evaluate, doc)


_value("dtype", cmp_schema({"type": "string"}, "dtype"), "the value's element type ('float', 'int64', ...)",
       lambda node, value, vt: vt.dtype)
_value("rank", cmp_schema({"type": "integer"}, "rank"), "the value's rank, when known", lambda node, value, vt: vt.rank)
_value("static", cmp_schema({"type": "boolean"}, "static"), "whether every dim is a known number",
       lambda node, value, vt: vt.static if vt.shape is not None else None)
_value("constant", cmp_schema({"type": "boolean"}, "constant"), "an initializer or Constant output (or an Identity of one)",
       lambda node, value, vt: constant_tensor(node, value) is not None)
_value("graph_input", cmp_schema({"type": "boolean"}, "graph_input"), "a graph input (not an initializer)",
       lambda node, value, vt: node.scope.is_graph_input(value))
_value("value", cmp_schema(CONSTANT_VALUE, "value"),
       "a small constant's value (at most 64 elements, stored in the file)",
       lambda node, value, vt: constant_value(node, value))
_value("computed", cmp_schema({"type": "boolean"}, "computed"),
       "computed at run time by a node (neither a constant nor a graph input)",
       lambda node, value, vt: constant_tensor(node, value) is None and not node.scope.is_graph_input(value))


def _exists(ctx: "LintContext", subject: ValueSubject, spec: Any) -> bool:
    want = spec.get("eq", True) if isinstance(spec, dict) else spec
    return bool(subject[1]) == bool(want)


REGISTRY["value"]["exists"] = Predicate("exists", "value", cmp_schema({"type": "boolean"}, "exists"), _exists,
                                        "whether the input/output is present (a name, not empty)")


# ----------------------------------------------------------------------------- graph input predicates


def _graph_input(name: str, schema: dict[str, Any], doc: str, fact: Callable[[onnx.ValueInfoProto, ValueType], Any]) -> None:
    def evaluate(ctx: "LintContext", vi: onnx.ValueInfoProto, spec: Any) -> bool:
        return compare(fact(vi, value_type_of(vi.type)), spec)

    REGISTRY["graph_input"][name] = Predicate(name, "graph_input", schema, evaluate, doc)


_graph_input("dtype", cmp_schema({"type": "string"}, "dtype"), "the input's element type", lambda vi, vt: vt.dtype)
_graph_input("rank", cmp_schema({"type": "integer"}, "rank"), "the input's rank", lambda vi, vt: vt.rank)
_graph_input("name", cmp_schema({"type": "string"}, "name"), "the input's name", lambda vi, vt: vi.name)
_graph_input("static", cmp_schema({"type": "boolean"}, "static"), "whether every dim is a number",
             lambda vi, vt: vt.static if vt.shape is not None else None)
_graph_input("dynamic_batch", cmp_schema({"type": "boolean"}, "dynamic_batch"), "whether dim 0 is symbolic or unknown",
             lambda vi, vt: (not isinstance(vt.shape[0], int)) if vt.shape else None)


# ----------------------------------------------------------------------------- model predicates


def _model(name: str, schema: dict[str, Any], doc: str, fact: Callable[["LintContext"], Any]) -> None:
    def evaluate(ctx: "LintContext", _subject: None, spec: Any) -> bool:
        return compare(fact(ctx), spec)

    REGISTRY["model"][name] = Predicate(name, "model", schema, evaluate, doc)


def _inputs_all_static(ctx: "LintContext") -> bool | None:
    ins = ctx.index.graph_inputs()
    if not ins:
        return None
    return all(value_type_of(i.type).static for i in ins)


_model("checker", enum_cmp(("ok", "failed", "ort-op"), "checker result"),
       "onnx.checker's verdict on the file (ort-op: its complaint is an op only ONNX Runtime defines, such as "
       "SimplifiedLayerNormalization: a model prepared for ORT)", lambda ctx: _checker(ctx))


def _checker(ctx: "LintContext") -> str:
    from onnxlint.ort import model_load

    complaint = ctx.checker_error()
    if not complaint:
        return "ok"
    return "ort-op" if model_load.complaint_is_ort_op(ctx.mf.model, complaint) else "failed"
_model("shape_inference", enum_cmp(("ok", "failed", "skipped"), "shape inference result"),
       "onnx shape inference's verdict (skipped: the model is past the inference budget)",
       lambda ctx: "failed" if ctx.mf.inference_error else
       ("skipped" if getattr(ctx.mf, "inference_skipped", None) else "ok"))
_model("strict_check", enum_cmp(("ok", "failed", "onnx-only"), "strict check result"),
       "ORT's graph resolution at session creation (node checks, type checks, shape inference as ORT runs them): "
       "failed: ORT refuses the model; onnx-only: only onnx's strict inference fails (ORT loads it)",
       lambda ctx: _strict_check(ctx))


def _strict_check(ctx: "LintContext") -> str:
    from onnxlint.ort import model_load

    if model_load.lint_failure(ctx):  # a model loading refuses is neither onnx's checker's nor its inference's
        return "failed"
    if ctx.mf.strict_error is None and ctx.checker_error() is None:
        return "ok"
    return "onnx-only" if ctx.mf.strict_error and not ctx.mf.inference_error else "ok"
_model("external_data", enum_cmp(("none", "present", "missing"), "external data state"),
       "whether external data is absent, present, or missing/short/outside the model's folder",
       lambda ctx: "missing" if ctx.mf.missing_external else ("present" if ctx.mf.external else "none"))
_model("size_bytes", cmp_schema({"type": "integer"}, "bytes"), "file plus external data size",
       lambda ctx: ctx.mf.total_size)
_model("protobuf_bytes", cmp_schema({"type": "integer"}, "bytes"), "the protobuf file's size", lambda ctx: ctx.mf.file_size)
_model("uses_external_data", cmp_schema({"type": "boolean"}, "uses_external_data"), "whether any tensor is external",
       lambda ctx: bool(ctx.mf.external))
_model("ir_version", cmp_schema({"type": "integer"}, "IR version"), "the model's IR version",
       lambda ctx: ctx.mf.model.ir_version)
_model("inputs_all_static", cmp_schema({"type": "boolean"}, "inputs_all_static"), "whether every graph input is static",
       _inputs_all_static)
_model("producer_name", cmp_schema({"type": "string"}, "producer name"), "the exporter's producer_name",
       lambda ctx: ctx.mf.model.producer_name)
_model("num_nodes", cmp_schema({"type": "integer"}, "count"), "nodes in the model, bodies included",
       lambda ctx: len(ctx.index.nodes))


def _tensorrt_ort_ops(ctx: "LintContext") -> str:
    if "tensorrt" not in ctx.options.targets or not ctx.prediction("tensorrt").ort_ops:
        return "none"
    return "selected" if "tensorrt" in ctx.options.explicit_targets else "default-target"


def _cpu_quantization(ctx: "LintContext") -> bool:
    from onnxlint.rules import intent_facts

    return bool(intent_facts.cpu_quantization_nodes(ctx))


_model("cpu_quantization", cmp_schema({"type": "boolean"}, "cpu_quantization"),
       "under the CUDA EP, whether the model is quantized in an ORT format whose quantized ops run on CPU there "
       "(QOperator, dynamic, 16-bit QDQ: model.intent) and some of them fall back", _cpu_quantization)
def _tensorrt_quantization(ctx: "LintContext") -> bool:
    from onnxlint.rules import intent_facts

    return intent_facts.tensorrt_quantization(ctx)


def _tensorrt_network_import(ctx: "LintContext") -> bool:
    from onnxlint.rules import intent_facts

    return bool(intent_facts.tensorrt_network_import_causes(ctx))


_model("tensorrt_network_import", cmp_schema({"type": "boolean"}, "tensorrt_network_import"),
       "whether TensorRT's parser fails before any node: a network input, initializer or Constant of a type it "
       "cannot take, read by a node other than a Q/DQ, or (the parser given the whole model) read by none "
       "(OLX319 says it once)", _tensorrt_network_import)
_model("ort_prepared_model", cmp_schema({"type": "boolean"}, "ort_prepared_model"),
       "as the node predicate: whether the model was prepared for ONNX Runtime (ORT-only ops, or one of ORT's CPU "
       "quantization formats) while TensorRT is only a default target", _prepared_for_ort)
_model("tensorrt_quantization", cmp_schema({"type": "boolean"}, "tensorrt_quantization"),
       "whether TensorRT's parser rejects one of the model's QuantizeLinear/DequantizeLinear nodes (OLX318 says "
       "every cause in one line)", _tensorrt_quantization)
_model("tensorrt_ort_ops", enum_cmp(("none", "default-target", "selected"), "tensorrt_ort_ops"),
       "whether the model holds ops only ONNX Runtime defines that TensorRT's parser does not import (prepared for "
       "ORT), and whether TensorRT was selected by the user (`selected`) or is a default target", _tensorrt_ort_ops)


def _opset_model(ctx: "LintContext", _subject: None, spec: dict[str, Any]) -> bool:
    return all(compare(ctx.index.opsets.get(dom), want) for dom, want in spec.items())


def _metadata(ctx: "LintContext", _subject: None, spec: dict[str, Any]) -> bool:
    props = {p.key: p.value for p in ctx.mf.model.metadata_props}
    return all(compare(props.get(k), want) for k, want in spec.items())


REGISTRY["model"]["opset"] = Predicate(
    "opset", "model", {"type": "object", "x-what": "domain", "additionalProperties": cmp_schema({"type": "integer"}, "opset")},
    _opset_model, "domain -> comparison of the imported opset version")
REGISTRY["model"]["metadata"] = Predicate(
    "metadata", "model", {"type": "object", "x-what": "metadata key", "additionalProperties": cmp_schema({"type": "string"}, "metadata")},
    _metadata, "metadata_props key -> comparison of its value")
