"""The HTML placement report: one self-contained page showing where each node runs, for `onnxlint placement
--format html` and for a lint run's findings (`--format html`).

The page is the data plus a small script (no library, nothing fetched): the graph is navigated by name scope
(`/model/layers.17/attn`), each scope summarising where its nodes run, and only the scope being looked at is
drawn, so a 100k-node model opens as fast as a small one. Everything that comes from a model (node, value and
file names, op types, messages quoting them) is text: escaped as the text format escapes it (control and bidi
characters made visible), embedded as JSON with `<`, `>`, `&`, U+2028 and U+2029 escaped, and put into the
page by the script with `textContent` only. A Content-Security-Policy with the hashes of the page's own script
and style lets nothing else run and nothing load.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from onnxlint import __version__
from onnxlint.formats.placement_output import as_json
from onnxlint.model.graph import shape_sized
from onnxlint.model.locations import node_location, node_path
from onnxlint.support.escape import json_unicode
from onnxlint.support.escape import lines as esc_lines
from onnxlint.support.escape import text as esc

ASSETS = Path(__file__).resolve().parent / "html"
PART = 100  # children of one scope shown (and drawn) at most: more are split into parts of this many
EP_SHORT = {"CUDAExecutionProvider": "CUDA", "CPUExecutionProvider": "CPU", "TensorrtExecutionProvider": "TensorRT"}
DESCRIPTIONS = {
    "ort-cuda": "ONNX Runtime, CUDA execution provider with CPU fallback",
    "ort-cpu": "ONNX Runtime, CPU execution provider",
    "ort-trt": "ONNX Runtime, TensorRT execution provider with CUDA and CPU fall-through",
}
# a lint run's page shows the placement of the first of these targets it checks (ort-trt is built on ort-cuda)
PAGE_TARGETS = ("ort-trt", "ort-cuda", "ort-cpu")


@dataclass
class Release:
    """One placement of a model: a target at an ORT release and optimization level."""

    target: str
    ort_version: str | None
    optimization: str = "all"
    trt_version: str | None = None


@dataclass
class _Tree:
    """Name scopes as the page shows them: `/model/layers.0/attn/MatMul` is the node MatMul in scope attn in
    layers.0 in model. A scope with more than PART children is split into parts of PART (in graph order)."""

    names: list[str] = field(default_factory=lambda: [""])
    parents: list[int] = field(default_factory=lambda: [-1])
    kinds: list[str] = field(default_factory=lambda: ["graph"])
    children: list[dict[str, int]] = field(default_factory=lambda: [{}])

    def child(self, parent: int, name: str, kind: str) -> int:
        got = self.children[parent].get(name)
        if got is None:
            got = self.children[parent][name] = len(self.names)
            self.names.append(name)
            self.parents.append(parent)
            self.kinds.append(kind)
            self.children.append({})
        return got


def _segments(path: str) -> list[str]:
    """A node path's name scopes and its own name: torch's `/model/layers.0/Add` -> model, layers.0, Add; a
    body's `If_3:then_branch/Relu` -> If_3:then_branch, Relu."""
    parts = [p for p in path.split("/") if p]
    return parts or [path]


def _scope_tree(paths: list[str]) -> tuple[_Tree, list[int], list[str]]:
    """The tree of name scopes, each node's scope and its own (leaf) name, parts made where a scope is wide."""
    tree = _Tree()
    scope_of: list[int] = []
    leaves: list[str] = []
    for path in paths:
        segs = _segments(path)
        s = 0
        for seg in segs[:-1]:
            s = tree.child(s, seg, "function" if seg.startswith("function:") else "body" if ":" in seg else "scope")
        scope_of.append(s)
        leaves.append(segs[-1])
    _split_wide(tree, scope_of, leaves)
    return tree, scope_of, leaves


def _split_wide(tree: _Tree, scope_of: list[int], leaves: list[str]) -> None:
    """Scopes with more than PART children (scopes and nodes) get parts of PART children each, in graph order,
    parts of parts where there are more than PART parts: every scope the page lists or draws has at most PART.
    A part is named by its place and its first and last child: `1-100 of 177: h.0 … h.99`."""
    first: dict[int, int] = {}
    nodes_in: dict[int, list[int]] = {}
    for i, s in enumerate(scope_of):
        nodes_in.setdefault(s, []).append(i)
        while s >= 0 and s not in first:
            first[s] = i
            s = tree.parents[s]
    todo = list(range(len(tree.names)))
    while todo:
        s = todo.pop()
        kids = [("s", c, first.get(c, 0)) for c in tree.children[s].values()] + [("n", i, i) for i in nodes_in.get(s, [])]
        if len(kids) <= PART:
            continue
        kids.sort(key=lambda k: k[2])
        tree.children[s] = {}
        nodes_in[s] = []
        total = len(kids)
        names = [tree.names[idx] if kind == "s" else leaves[idx] for kind, idx, _ in kids]
        for start in range(0, total, PART):
            end = min(start + PART, total)
            part = tree.child(s, f"{start + 1}-{end} of {total}: {names[start]} \u2026 {names[end - 1]}", "part")
            first[part] = kids[start][2]
            for kind, idx, _ in kids[start:start + PART]:
                if kind == "s":
                    tree.parents[idx] = part
                    tree.children[part][tree.names[idx] + f"\0{idx}"] = idx
                else:
                    scope_of[idx] = part
                    nodes_in.setdefault(part, []).append(idx)
        todo.append(s)  # more than PART parts: parts of parts


def _producers(node: Any) -> Iterable[Any]:
    """The nodes whose outputs this node reads, in its graph or a graph around it (a body reads outer values)."""
    for value in node.inputs:
        if not value:
            continue
        scope = node.scope
        while scope is not None:
            prod = scope.producer.get(value)
            if prod is not None:
                yield prod
                break
            scope = scope.parent


class _Strings:
    """Long repeated texts (placement details) stored once; nodes hold their index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, s: str) -> int:
        got = self._at.get(s)
        if got is None:
            got = self._at[s] = len(self.items)
            self.items.append(s)
        return got


def _run(release: Release, filename: str, ctx: Any, nodes: list[Any], at: dict[int, int], strings: _Strings) -> dict[str, Any]:
    """One release's placement of the nodes: per node status, provider, reason and detail (the JSON format's
    values), the Memcpy boundaries by node, the summary the JSON format gives."""
    base = "ort-cuda" if release.target == "ort-trt" else release.target
    pl = ctx.prediction(base)
    doc = as_json(filename, base, pl)
    by_index = {p.node.index: n for p, n in zip(sorted(pl.nodes.values(), key=lambda p: p.node.index), doc["nodes"])}
    status, ep, reason, detail = [], [], [], []
    for node in nodes:
        n = by_index.get(node.index)
        status.append(n["status"] if n else "skipped")
        ep.append(EP_SHORT.get(n["ep"], esc(n["ep"])) if n and n["ep"] else "")
        reason.append(n["reason"] if n else None)
        detail.append(strings(esc(n["detail"])) if n and n["detail"] else -1)
    run: dict[str, Any] = {
        "ort_version": doc["ort_version"], "kernel_tables": doc["kernel_tables"], "optimization": release.optimization,
        "notes": [esc(note) for note in (*doc["notes"], *_inference_skipped(ctx))], "line": esc(doc["summary"]["line"]),
        "summary": _summary(doc["summary"]),
        "status": status, "ep": ep, "reason": reason, "detail": detail, "boundaries": [], "trt": None,
    }
    if release.target == "ort-trt":
        trt = ctx.prediction("tensorrt")
        taken = ctx.prediction("ort-trt").claimed  # what GetCapability gives TensorRT (ort/tensorrt_ep.py)
        run["trt"] = [1 if node.index in taken else 0 for node in nodes]
        run["trt_version"] = str(trt.version)
        run["line"] = ""  # the counts table says it (ORT's CUDA line would not), with shape computations apart
        run["notes"].append("Memcpy boundaries are predicted for the CUDA and CPU placement only: the TensorRT EP's "
                            "are not shown")
        return run
    for b in pl.boundaries:
        run["boundaries"].append([esc(b.value), b.direction, at.get(b.producer.index, -1) if b.producer is not None else -1,
                                  at.get(b.consumer.index, -1), b.bytes])
    return run


def _inference_skipped(ctx: Any) -> tuple[str, ...]:
    """Why onnx's shape inference did not run on the model (its placement matched kernels on declared types)."""
    why = getattr(ctx.mf, "inference_skipped", None)
    return (why,) if why else ()


def _summary(s: dict[str, Any]) -> dict[str, Any]:
    return {k: s[k] for k in ("preferred_ep", "nodes", "on_preferred_ep", "fallback", "real_fallback", "shape_only",
                              "unsupported", "folded", "eliminated", "boundaries", "bytes_copied", "bytes_unknown", "refused")}


def _finding(f: Any, at_location: dict[str, int]) -> dict[str, Any]:
    loc = node_location(f.node)
    return {"code": esc(f.code), "name": esc(f.name), "severity": f.severity, "target": esc(f.target),
            "message": esc(f.message), "hint": esc_lines(f.hint), "fix": esc(f.fix) if f.fix else None,
            "node": at_location.get(loc, -1) if loc else -1, "where": esc(f.node) if f.node else ""}


def model_doc(path: Path, display: str, releases: list[Release], findings: list[Any] | None = None,
              rule_dirs: tuple[Path, ...] = (), lean: bool = False, by_content: bool = False) -> dict[str, Any]:
    """The page's data for one model: its nodes with their name scopes and producers, one placement per release
    (two when comparing), the findings of a lint run attached to their nodes. by_content: the releases' target is
    ort-cpu where the model's content says ORT runs it on its CPU EP (api._predict's by_content)."""
    from onnxlint.model import loading
    from onnxlint.model.loading import native
    from onnxlint.rulefiles.ruleset import get_ruleset

    ruleset = get_ruleset(rule_dirs)
    with native.one_model():  # a call into onnx's C++ past its limit: the model's later ones are not made
        mf = loading.load(path, display=display, lean=lean)
        doc, at_location = loading.with_strings_repaired(mf, lambda: _placed_by_content(mf, display, releases, ruleset,
                                                                                         by_content))
    return with_findings(doc, at_location, findings or [])


def _placed_by_content(mf: Any, display: str, releases: list[Release], ruleset: Any,
                       by_content: bool) -> tuple[dict[str, Any], dict[str, int]]:
    from onnxlint.model import intent, loading

    index = loading.index_model(mf)
    if by_content and intent.cpu_model(index):
        releases = [replace(r, target="ort-cpu") for r in releases]
    return placed_doc(mf, index, display, releases, ruleset)


def placed_doc(mf: Any, index: Any, display: str, releases: list[Release], ruleset: Any,
               linted: Any = None) -> tuple[dict[str, Any], dict[str, int]]:
    """model_doc's data before the findings, and where each node location is in it (with_findings). linted: the
    lint's context over the same model, index and rules, whose predictions at these releases are taken as they
    are (a lint run's page places what the lint placed, without loading and placing the model again)."""
    from onnxlint import targets
    from onnxlint.linting import engine
    from onnxlint.rules.context import Options

    ctxs = []
    for r in releases:
        options = Options(targets=targets.closure({r.target}), ort_version=r.ort_version, trt_version=r.trt_version,
                          ort_optimization=r.optimization)
        ctx = engine.new_context(mf, index, options, ruleset, targets.REGISTRY)
        if linted is not None:
            ctx.share_predictions(linted)
        ctxs.append(ctx)
    # the nodes the placement places (every node of the index), in graph order
    base = "ort-cuda" if releases[0].target == "ort-trt" else releases[0].target
    placed = ctxs[0].prediction(base).nodes
    nodes = [n for n in index.nodes if n.index in placed]
    at = {n.index: i for i, n in enumerate(nodes)}
    paths = [node_path(n.location) or n.location for n in nodes]
    tree, scope_of, leaves = _scope_tree(paths)
    strings = _Strings()
    runs = [_run(r, display, c, nodes, at, strings) for r, c in zip(releases, ctxs)]
    preds = []
    for n in nodes:
        got = sorted({at[p.index] for p in _producers(n) if p.index in at})
        preds.append(got)
    at_location: dict[str, int] = {}
    for i, n in enumerate(nodes):
        at_location.setdefault(n.location, i)
    return {
        "file": esc(display), "error": None, "target": releases[0].target,
        "target_description": DESCRIPTIONS.get(releases[0].target, releases[0].target),
        "nodes": {
            "path": [esc(p) for p in paths], "name": [esc(s) for s in leaves], "op": [esc(n.op_type) for n in nodes],
            "domain": [esc(n.domain) if n.domain != "ai.onnx" else "" for n in nodes], "scope": scope_of,
            "preds": preds, "large": [0 if shape_sized(n) else 1 for n in nodes],
        },
        "scopes": {"name": [esc(s) for s in tree.names], "parent": tree.parents, "kind": tree.kinds},
        "runs": runs, "strings": strings.items,
    }, at_location


def with_findings(doc: dict[str, Any], at_location: dict[str, int], findings: list[Any]) -> dict[str, Any]:
    """The page's data with a lint run's findings attached to their nodes."""
    doc["findings"] = [_finding(f, at_location) for f in findings]
    return doc


def error_doc(display: str, error: str) -> dict[str, Any]:
    """A model that could not be read: the page names it and says why (an InputError's line starts with the
    file the page names already: "a.onnx: a.onnx: not a valid ONNX protobuf")."""
    named = f"{display}: "
    return {"file": esc(display), "error": esc(error[len(named):] if error.startswith(named) else error)}


def _script_json(doc: Any) -> str:
    """JSON that cannot end or alter the `<script type="application/json">` element holding it: `<`, `>` and `&`
    as \\u escapes (no `</script>`, no `<!--`), U+2028/2029 escaped too, lone surrogates (file-name bytes that
    are not UTF-8) as the text `\\xNN`."""
    text = json_unicode(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render(kind: str, models: list[dict[str, Any]], title: str) -> str:
    """The page: one HTML document with its style, script and data inline. kind: placement or lint."""
    style = (ASSETS / "report.css").read_text(encoding="utf-8")
    script = (ASSETS / "report.js").read_text(encoding="utf-8")
    data = _script_json({"kind": kind, "generator": f"onnxlint {__version__}", "models": models})
    csp = (f"default-src 'none'; script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        f"<title>{html.escape(esc(title), quote=True)}</title>\n",
        "<style>", style, "</style>\n</head>\n<body>\n",
        "<noscript>This report draws the placement with JavaScript; the same data: onnxlint placement --format json."
        "</noscript>\n",
        "<script type=\"application/json\" id=\"onnxlint-data\">", data, "</script>\n",
        "<script>", script, "</script>\n</body>\n</html>\n",
    ])


def placement_page(paths: list[Path], release_of: Callable[[Path], tuple[str | None, str | None, str]],
                   compare: str | None = None) -> tuple[str, list[str]]:
    """`onnxlint placement --format html`: the page for these models (each placed for the target, at the ORT release
    and optimization level release_of says, and at compare too when given), and the one-line errors of those that
    could not be read."""
    from onnxlint.support import collector
    from onnxlint.support.errors import InputError

    models, failed = [], []
    for path in paths:
        target, ort_version, optimization = release_of(path)  # a config that cannot be read: the run's error
        releases = [Release(target or "ort-cuda", ort_version, optimization)]
        if compare:
            releases.append(Release(target or "ort-cuda", compare, optimization))
        try:
            with collector.paused():  # as the lint does (linter._lint_loaded)
                models.append(model_doc(path, str(path), releases, by_content=target is None))
        except InputError as exc:
            failed.append(str(exc))
            models.append(error_doc(str(path), str(exc)))
        except Exception as exc:  # noqa: BLE001 - a defect placing one model must not cost the others' page
            failed.append(placing_failed(path, exc))
            models.append(error_doc(str(path), failed[-1]))
    title = "onnxlint placement: " + (str(paths[0]) if len(paths) == 1 else f"{len(paths)} models")
    return render("placement", models, title), failed


def placing_failed(path: Path, exc: Exception) -> str:
    """The one line of a model `onnxlint placement` could not place through a defect of its own (the lint's
    words, linter._lint), and the lint's HTML page too (html_format.render): the other models are placed all the
    same. A usage error (an unknown --ort-version, a rule file) is the whole run's and raised again."""
    from onnxlint.support.errors import RuleError, UsageError, first_line
    from onnxlint.targets.base import VersionError

    if isinstance(exc, (RuleError, UsageError, VersionError)):
        raise exc
    if isinstance(exc, RecursionError):
        return f"{path}: graph nesting too deep to analyse"
    return f"{path}: internal error while placing ({type(exc).__name__}: {first_line(exc)}); please report it"
