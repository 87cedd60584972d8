"""Rule message templates: `{node}`, `{attr.mode}`, `{input[0].dtype}`, `{placement.reason}` ...

Templates are parsed once; every placeholder is checked field by field when the rule file loads (an unknown
root or field is a `file:line` error), and rendered by one renderer for lint and verification findings alike.

An optional segment `[[ ... ]]` is left out when a placeholder inside it has no value (it would render `?`):
`runs in training mode[[ (training_mode input {input[2].name})]]` reads well for a node without that input.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Mapping

from onnxlint.model.locations import node_path
from onnxlint.support.errors import did_you_mean

if TYPE_CHECKING:
    from onnxlint.model.graph import NodeRef
    from onnxlint.rules.context import LintContext
    from onnxlint.rules.rule import Rule

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# an optional segment holds no `[[` (one inside a segment is now an unclosed one, refused by check): `.*?` let each
# of n unclosed `[[` in a rule file's message scan to its end (quadratic: 20,000 of them took 5.7 s)
OPTIONAL = re.compile(r"\[\[((?:(?!\[\[|\]\]).)*)\]\]", re.S)
# an index of at most 9 digits (as an `inputs`/`outputs` key): int() of a longer one is slow, past 4,300 digits a
# ValueError when the message is rendered (every model "failed to lint", naming the model, not the rule file)
_PATH = re.compile(r"^([a-z_]+)(?:\[(\d{1,9})\])?(?:\.(\w+))?$")

# a template is rendered into every finding of its rule: its length and its placeholders are bounded (the rule
# schema's maxLength, check), so a finding's message is a bounded multiple of the values it shows
MAX_TEMPLATE = 1000  # characters; the built-in rules' longest message or hint has about 230
MAX_PLACEHOLDERS = 16  # the built-in rules use at most 5
# and so is each value a placeholder of a user's rule shows: a node rule's {model.inputs} (every graph input's name) in each of
# its findings made 1.8 GB of JSON (5.5 GB of memory) from a 1.4 MB model of 3,000 inputs and nodes
MAX_VALUE = 1000  # characters of one placeholder's value; a longer one is cut, with "…"

MODEL_FIELDS = ("checker_error", "inference_error", "strict_error", "ort_load_error", "ort_load_cause", "inference_skipped",
                "size_mb", "protobuf_mb", "ir_version", "opset", "external_problem", "external_missing", "inputs", "tensorrt_ort_ops",
                "tensorrt_product", "cpu_quantization", "tensorrt_quantization", "tensorrt_network_import")
VALUE_FIELDS = ("name", "dtype", "shape", "rank", "value")
VERIFY_FIELDS = ("provider", "predicted", "error")
LFS_FIELDS = ("oid", "size")  # a Git LFS pointer's object: its sha256, its size in words ("a 94.3 MB object")

# which roots each rule scope may use, and whether a root takes [index] and/or .field; a node rule also has
# the verdict roots the targets declare (`targets.base.Vocabulary`: {placement.reason}, {trt.version})
_NODE_ROOTS = {"node", "name", "op_type", "domain", "opset", "attr", "input", "output"}
_ROOTS_BY_SCOPE = {
    "node": _NODE_ROOTS | {"file", "rule", "model"},
    "model": {"file", "rule", "model"},
    "graph_input": {"file", "rule", "model", "value"},
    "verification": {"file", "rule", "node", "op_type", "verify"},
    "file": {"file", "rule", "lfs"},
}
_ALL_ROOTS = set().union(*_ROOTS_BY_SCOPE.values())

# a verdict root's fields, by root: what the registry's vocabularies declare
VerdictFields = Mapping[str, "tuple[str, ...]"]

Part = tuple[str, "str | None", "str | None"]
_TEMPLATES: dict[str, list[Any]] = {}


def _parse_flat(template: str) -> list[Any]:
    parts: list[Any] = []
    last = 0
    for m in PLACEHOLDER.finditer(template):
        parts.append(template[last:m.start()])
        pm = _PATH.match(m.group(1))
        parts.append((pm.group(1), pm.group(2), pm.group(3)) if pm else None)
        last = m.end()
    parts.append(template[last:])
    return parts


def parse(template: str) -> list[Any]:
    """Literal text, parsed placeholders (root, index, field) and optional segments (a list of those), once
    per template."""
    parts = _TEMPLATES.get(template)
    if parts is None:
        parts, last = [], 0
        for m in OPTIONAL.finditer(template):
            parts.extend(_parse_flat(template[last:m.start()]))
            parts.append(_parse_flat(m.group(1)))
            last = m.end()
        parts.extend(_parse_flat(template[last:]))
        _TEMPLATES[template] = parts
        _ROOTS[template] = frozenset().union(*(_roots(part) for part in parts))
        if any(part.__class__ is list for part in parts):
            _SEGMENTED.add(template)
    return parts


_ROOTS: dict[str, frozenset[str]] = {}  # a parsed template's placeholder roots (optional segments' included)
_SEGMENTED: set[str] = set()  # the parsed templates with an optional segment


def check(template: str, scope: str, verdicts: VerdictFields) -> str | None:
    """The first problem with a template's placeholders for a rule of this scope, or None. verdicts: the
    targets' verdict roots and their fields (node rules only)."""
    roots = _ROOTS_BY_SCOPE[scope] | set(verdicts) if scope == "node" else _ROOTS_BY_SCOPE[scope]
    if "[[" in OPTIONAL.sub("", template) or "]]" in OPTIONAL.sub("", template):
        return "an optional segment '[[ ... ]]' is not closed (or not opened)"
    if len(PLACEHOLDER.findall(template)) > MAX_PLACEHOLDERS:
        return f"more than {MAX_PLACEHOLDERS} placeholders"
    for m in PLACEHOLDER.finditer(template):
        text = m.group(1)
        pm = _PATH.match(text)
        if not pm:
            return f"placeholder '{{{text}}}' is not of the form name, name.field or name[index].field"
        root, idx, field = pm.groups()
        if root not in roots:
            where = "" if root not in _ALL_ROOTS and root not in verdicts else f" (not available to a {scope} rule)"
            return f"unknown placeholder '{{{text}}}'{where}{did_you_mean(root, roots)}"
        problem = _check_fields(root, idx, field, verdicts)
        if problem:
            return f"placeholder '{{{text}}}': {problem}"
    return None


def _check_fields(root: str, idx: str | None, field: str | None, verdicts: VerdictFields) -> str | None:
    def fields(allowed: tuple[str, ...], required: bool = True) -> str | None:
        if field is None:
            return f"needs a field: one of {', '.join(allowed)}" if required else None
        if field not in allowed:
            return f"unknown field '{field}' (one of: {', '.join(allowed)}){did_you_mean(field, allowed)}"
        return None

    if root in ("input", "output"):
        if idx is None:
            return f"{root} needs an index, e.g. {{{root}[0].dtype}}"
        return fields(VALUE_FIELDS, required=False)
    if idx is not None:
        return f"{root} takes no [index]"
    if root == "attr":
        return None if field else "needs an attribute name, e.g. {attr.mode}"
    if root == "model":
        return fields(MODEL_FIELDS)
    if root == "value":
        return fields(("name", "dtype", "shape"))
    if root in verdicts:
        return fields(verdicts[root])
    if root == "verify":
        return fields(VERIFY_FIELDS)
    if root == "lfs":
        return fields(LFS_FIELDS)
    return None if field is None else f"{root} has no fields"


_NODE_FACTS = _NODE_ROOTS | {"file", "rule", "value"}


def reads_only_node(template: str) -> bool:
    """Whether every placeholder of the template reads the node, its file or its rule (no model field, no
    target's verdict): rendering it computes nothing the rest of the lint could see, so it may wait."""
    return all(part is not None and part[0] in _NODE_FACTS
               for part in (p for seg in parse(template) for p in (seg if seg.__class__ is list else [seg]))
               if part.__class__ is not str)


def fmt(v: Any) -> str:
    if v is None:
        return "?"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join("?" if x is None else str(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


# the placeholders that name the finding's node: a line that already starts with the node's location shows the
# message without them (`short`), rendered from the template, never cut out of the rendered text
LOCATION_ROOTS = frozenset(("node", "name"))
_ENCLOSING = {("(", ")"), ("[", "]"), ("'", "'"), ('"', '"'), ("`", "`")}


def names_location(template: str) -> bool:
    """Whether the template places the node's location or name in the message ({node}, {name}), from the
    roots noted when it was parsed (asked for every finding: 266k at 1M nodes)."""
    parse(template)
    return not _ROOTS[template].isdisjoint(LOCATION_ROOTS)


def _roots(part: Any) -> set[str]:
    if part.__class__ is list:
        return {p[0] for p in part if p.__class__ is tuple}
    return {part[0]} if part.__class__ is tuple else set()


def _capped(lookup: Callable[[Part], str]) -> Callable[[Part], str]:
    def value(part: Part) -> str:
        v = lookup(part)
        return v if len(v) <= MAX_VALUE else v[:MAX_VALUE - 1] + "…"

    return value


def render_with(template: str, lookup: Callable[[Part], str], omit: frozenset[str] = frozenset(),
                cap: bool = False) -> str:
    """The template with each placeholder's value; a placeholder whose root is in omit renders as nothing, and one
    of the blanks around it goes with it ("Dropout {node} runs" -> "Dropout runs"). cap: each value at most
    MAX_VALUE characters (a rule of the user's: onnxlint's own templates name what they show, and a placement
    reason that lists the ops of a function body is longer)."""
    parts = parse(template)
    if cap:
        lookup = _capped(lookup)
    if (not omit or _ROOTS[template].isdisjoint(omit)) and template not in _SEGMENTED:
        # nothing to leave out: each part as it is or looked up (the message of every finding)
        return "".join([part if part.__class__ is str else "?" if part is None else lookup(part) for part in parts])
    out: list[str] = []
    dropped: set[int] = set()  # positions in out where an omitted placeholder was
    for part in parts:
        if part.__class__ is str:
            out.append(part)
        elif part.__class__ is list:  # optional segment: only when every placeholder in it has a value
            seg = [p if p.__class__ is str else ("?" if p is None else "" if p[0] in omit else lookup(p)) for p in part]
            if not any(v == "?" for p, v in zip(part, seg) if p.__class__ is not str):
                for p, v in zip(part, seg):
                    if p.__class__ is tuple and p[0] in omit:
                        dropped.add(len(out))
                    out.append(v)
        elif part is not None and part[0] in omit:
            dropped.add(len(out))
            out.append("")
        else:
            out.append("?" if part is None else lookup(part))
    for k in sorted(dropped):
        before = next((j for j in range(k - 1, -1, -1) if out[j]), None)
        after = next((j for j in range(k + 1, len(out)) if out[j]), None)
        if before is not None and after is not None and (out[before][-1:], out[after][:1]) in _ENCLOSING:
            out[before], out[after] = out[before][:-1], out[after][1:]  # "({node})", "'{node}'": the brackets go too
            before = next((j for j in range(k - 1, -1, -1) if out[j]), None)
            after = next((j for j in range(k + 1, len(out)) if out[j]), None)
        if before is None:  # at the start: the separator after it goes ("{node}: x" -> "x")
            if after is not None:
                out[after] = out[after].lstrip(":,;. ")
        elif out[before].endswith(" ") and (after is None or out[after][:1] in (" ", ":", ",", ".", ";", ")")):
            out[before] = out[before][:-1]
    return "".join(out)


def render(template: str, ctx: "LintContext", rule: "Rule", node: "NodeRef | None" = None, vi: Any = None,
           omit: frozenset[str] = frozenset()) -> str:
    return render_with(template, lambda part: _lookup(part, ctx, rule, node, vi), omit, cap=rule.own)


def render_values(template: str, values: dict[str, Any], omit: frozenset[str] = frozenset(), cap: bool = False) -> str:
    """A message whose placeholders come from plain values ({verify.provider}, {lfs.size}, {node}, {file}):
    verification and file rules (cap: a rule of the user's, as render_with)."""
    return render_with(template, lambda part: fmt(values.get((part[2] or "") if part[0] in ("verify", "lfs") else part[0])),
                       omit, cap)


def _lookup(part: Part, ctx: "LintContext", rule: "Rule", node: "NodeRef | None", vi: Any) -> str:
    """One placeholder's value, as text ('?' when unknown)."""
    root, idx, sub = part
    if root == "op_type" and node is not None:  # the most asked (OLX201's and OLX309's messages)
        return node.op_type
    if root == "file":
        return ctx.mf.display
    if root == "rule":
        return rule.id
    if root == "model":
        return fmt(_model_field(ctx, sub))
    if root == "value" and vi is not None:
        from onnxlint.model.graph import value_type_of

        vt = value_type_of(vi.type)
        return fmt({"name": vi.name, "dtype": vt.dtype, "shape": list(vt.shape) if vt.shape is not None else None}.get(sub or ""))
    if node is None:
        return "?"
    if root == "node":
        return node_path(node.location) or "?"
    if root == "name":
        return node.name or node_path(node.location) or "?"
    if root == "op_type":
        return node.op_type
    if root == "domain":
        return node.domain
    if root == "opset":
        return fmt(node.opset)
    if root == "attr" and sub:
        from onnxlint.rules.predicates import attr_value

        return fmt(attr_value(node, sub))
    if root in ("input", "output") and idx is not None:
        i = int(idx)
        names = node.inputs if root == "input" else node.outputs
        vt = node.input_type(i) if root == "input" else node.output_type(i)
        if sub == "name":
            return names[i] if i < len(names) else "?"
        if sub == "shape":
            return fmt(list(vt.shape) if vt.shape is not None else None)
        if sub == "rank":
            return fmt(vt.rank)
        if sub == "value":
            from onnxlint.rules.predicates import constant_value

            return fmt(constant_value(node, names[i]) if i < len(names) and names[i] else None)
        return fmt(vt.dtype)
    vocabulary = _verdict_root(ctx, root)
    if vocabulary is not None:
        return fmt(vocabulary.message_value(ctx, rule, node, sub))
    return "?"


def _verdict_root(ctx: "LintContext", root: str) -> Any:
    """The vocabulary of the context's targets whose message root this is, or None."""
    for target in ctx.registry.values():
        vocabulary = target.vocabulary
        if vocabulary is not None and vocabulary.message_root == root:
            return vocabulary
    return None


def _model_field(ctx: "LintContext", sub: str | None) -> Any:
    mf = ctx.mf
    if sub == "checker_error":
        return ctx.checker_error()
    if sub == "inference_error":
        return mf.inference_error
    if sub == "strict_error":
        return mf.strict_error
    if sub == "ort_load_error":
        from onnxlint.ort import model_load

        return model_load.lint_failure(ctx)
    if sub == "ort_load_cause":
        from onnxlint.ort import model_load

        return model_load.lint_cause(ctx)
    if sub == "inference_skipped":
        return getattr(mf, "inference_skipped", None)
    if sub == "size_mb":
        return f"{mf.total_size / 2**20:.1f}"
    if sub == "protobuf_mb":
        return f"{mf.file_size / 2**20:.1f}"
    if sub == "ir_version":
        return mf.model.ir_version
    if sub == "opset":
        return ctx.index.opsets.get("ai.onnx")
    if sub == "external_problem":
        return _first_problems(sorted({str(t.problem) for t in mf.missing_external})) or None
    if sub == "external_missing":
        return len(mf.missing_external)
    if sub == "inputs":
        return ", ".join(i.name for i in ctx.index.graph_inputs())
    if sub in ("cpu_quantization", "tensorrt_quantization", "tensorrt_network_import"):
        from onnxlint.rules import intent_facts

        return {"cpu_quantization": intent_facts.cpu_quantization_text, "tensorrt_quantization": intent_facts.tensorrt_quantization_text,
                "tensorrt_network_import": intent_facts.tensorrt_network_import_text}[sub](ctx)
    if sub in ("tensorrt_ort_ops", "tensorrt_product") and "tensorrt" in ctx.options.targets:
        pred = ctx.prediction("tensorrt")
        return pred.ort_ops_text() if sub == "tensorrt_ort_ops" else pred.product
    return None


EXTERNAL_PROBLEMS_SHOWN = 5


def _first_problems(problems: list[str]) -> str:
    """OLX003's problems, the first few and how many more: a model saved one file per tensor (onnx's
    all_tensors_to_one_file=False) and copied without them had one problem a tensor in one message."""
    more = len(problems) - EXTERNAL_PROBLEMS_SHOWN
    return "; ".join(problems[:EXTERNAL_PROBLEMS_SHOWN]) + (f"; and {more} more" if more > 0 else "")
