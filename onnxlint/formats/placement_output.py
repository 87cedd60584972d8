"""`onnxlint placement` output: the predicted partition per node, as text or JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import Any

from onnxlint.model.graph import SHAPE_SIZED, shape_sized
from onnxlint.support.escape import dumps_chunks, line
from onnxlint.support.escape import text as esc

LARGE_DELIBERATE = ("ORT keeps it on CPU on purpose (its inputs are CPU tensors), but it is no small shape computation "
                    f"(more than {SHAPE_SIZED} elements in or out): a fallback")


def _detail(p: Any) -> str:
    """The verdict's detail; a deliberate placement of an image-sized node is not called a small shape computation."""
    return LARGE_DELIBERATE if p.status == "deliberate" and not shape_sized(p.node) else p.detail


def as_json(filename: str, target: str, pl: Any) -> dict[str, Any]:
    """The placement's JSON document, its node list whole (the HTML page reads it more than once)."""
    out = document(filename, target, pl)
    out["nodes"] = list(out["nodes"])
    return out


def document(filename: str, target: str, pl: Any) -> dict[str, Any]:
    """The placement's JSON document, its "nodes" a generator in node order: a million-node model's rows are
    made as they are written, never held (with the rendered text, ~2 GB at 1M nodes)."""
    verdicts = sorted(pl.nodes.values(), key=_NODE_INDEX)
    nodes = ({"node": p.node.location, "op_type": p.node.op_type, "domain": p.node.domain, "ep": p.ep,
              "status": p.status, "reason": p.reason, "detail": _detail(p), "deliberate": p.deliberate}
             for p in verdicts)
    summary = pl.summary()
    summary["line"] = pl.summary_line()
    summary["boundary_values"] = [{"value": b.value, "direction": b.direction, "bytes": b.bytes} for b in pl.boundaries]
    out = {"filename": filename, "target": target, "ort_version": pl.ort_version, "kernel_tables": pl.table_versions,
           "notes": pl.notes, "nodes": nodes, "summary": summary}
    created = getattr(pl, "created", None)
    if created:  # the nodes ORT's transformers add (a key of its own, present when there are some)
        out["created"] = [{"node": c.name, "op_type": c.op_type, "domain": c.domain, "ep": c.ep, "by": c.by,
                           "from": c.source.location, "replaces": c.replaces, "detail": c.detail} for c in created]
    return out


_NODE_INDEX = attrgetter("node.index")


# a node with no provider because ORT's graph optimizations removed it is not one no provider can run
NO_EP = {"eliminated": "none (removed by ORT's graph optimizations)", "folded": "none (folded into a constant)"}


def _tables(r: dict[str, Any]) -> str:
    """`ORT 1.31.1`, or the tables that answered for a version without its own: `ORT 1.21.1 tables, asked 1.21.5`."""
    used = list(dict.fromkeys(r["kernel_tables"].values()))
    if used == [r["ort_version"]] or not used:
        return f"ORT {r['ort_version']}"
    return f"ORT {' and '.join(used)} tables, asked {r['ort_version']}"


def render(fmt: str, results: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The output in pieces, each result (document()) rendered as it comes. Every string of the model (file, node,
    op type, domain, value names, details quoting them) is escaped (escape.text in text, escape.dumps_chunks in
    JSON: valid UTF-8 for a file name that is not)."""
    if fmt == "json":
        yield from dumps_chunks(results, indent=2, depth=3)  # a result's node list written node by node
        yield "\n"
        return
    for r in results:
        yield from (line(x) + "\n" for x in _text_lines(r))


def _text_lines(r: dict[str, Any]) -> Iterator[str]:
    yield f"{esc(r['filename'])}: {esc(r['target'])} ({esc(_tables(r))}): {esc(r['summary']['line'])}"
    yield from (f"  note: {esc(note)}" for note in r["notes"])
    for n in r["nodes"]:
        if n["status"] not in ("device", "folded"):
            ep = n["ep"] or NO_EP.get(n["status"], "NO PROVIDER")
            yield f"  {esc(n['node'])}: {esc(n['op_type'])} -> {esc(ep)} [{esc(n['status'])}] {esc(n['detail'])}"
    made = [c for c in r.get("created", ()) if c["ep"] != r["summary"]["preferred_ep"]]
    if made:  # what ORT adds off the preferred provider (a DequantizeLinear copy on CPU, a channels-last region's Transposes)
        by_what = Counter((c["op_type"], c["ep"], c["by"]) for c in made)
        yield "  created by ORT off " + esc(r["summary"]["preferred_ep"]) + ": " + ", ".join(
            f"{n} {esc(op)} on {esc(ep)} ({esc(by)})" for (op, ep, by), n in sorted(by_what.items()))
