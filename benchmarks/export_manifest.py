"""The export set's bookkeeping, shared by the scripts that build it (make_exports.py, make_torchvision_exports.py,
collect_pypi_models.py): each source's _manifest.part.tsv, the failure logs, and the merge into
bench-out/models/MANIFEST.tsv. Needs only `onnx` (not torch), so every script's venv can import it."""

from __future__ import annotations

import contextlib
import hashlib
import io
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench-out" / "models"
LOGDIR = ROOT / "bench-out" / "logs"
PART_COLUMNS = ("name", "path", "source", "opset", "exporter", "family", "notes")


@contextlib.contextmanager
def quiet():
    """An exporter's chatter (warnings, stdout) kept off the progress lines."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def read_part(part: Path) -> dict[str, tuple]:
    """A source's part file: name -> row (empty when there is none)."""
    if not part.exists():
        return {}
    return {ln.split("\t")[0]: tuple(ln.split("\t")) for ln in part.read_text().splitlines()[1:]}


def write_part(part: Path, rows) -> None:
    """Write a source's part file, rows sorted."""
    with open(part, "w") as fh:
        fh.write("\t".join(PART_COLUMNS) + "\n")
        for r in sorted(rows):
            fh.write("\t".join(r) + "\n")


def log_fail(msg: str, log_name: str) -> None:
    """One line per failed job in bench-out/logs/<log_name>; a job's new line replaces its old one."""
    LOGDIR.mkdir(parents=True, exist_ok=True)
    line = msg.replace("\n", " | ")[:2000]
    f = LOGDIR / log_name
    key = line.split(" (", 1)[0].split(": ", 1)[0]  # e.g. "FAIL torch2.13-dynamo/x_dy_op18"
    keep = [ln for ln in (f.read_text().splitlines() if f.exists() else [])
            if ln.split(" ", 1)[-1].split(" (", 1)[0].split(": ", 1)[0] != key]  # latest run wins
    f.write_text("".join(ln + "\n" for ln in keep) + time.strftime("%Y-%m-%dT%H:%M:%SZ ", time.gmtime()) + line + "\n")


def first_error_line(exc):
    """First lines of the error plus the innermost cause (the dynamo exporter wraps the real reason)."""
    import re
    def clean(e):
        t = re.sub(r"\x1b\[[0-9;]*m", "", f"{type(e).__name__}: {e}")
        return " ".join(ln.strip() for ln in t.splitlines() if ln.strip())
    s = clean(exc)[:500]
    root, seen = exc, 0
    while (root.__cause__ or root.__context__) is not None and seen < 10:
        root, seen = root.__cause__ or root.__context__, seen + 1
    if root is not exc:
        s += " || root cause: " + clean(root)[:400]
    return s


def merge_manifest(out=OUT):
    """Merge every <source>/_manifest.part.tsv into MANIFEST.tsv; fill opset, dynamic batch; assign split.

    split: within each source group (all pypi:* sources count as one, so do the two torch2.13 exporters),
    model families (architecture for exports, package for pypi, source model for quantized) are ordered by
    sha1(family) and the first ones are marked heldout until >= 25 % of that group's models are, so one
    architecture never sits in both splits.
    """
    import onnx
    rows = []
    for part in sorted(out.glob("*/_manifest.part.tsv")):
        lines = part.read_text().splitlines()
        hdr = lines[0].split("\t")
        for ln in lines[1:]:
            r = dict(zip(hdr, ln.split("\t")))
            p = out / r["path"]
            if not p.exists():
                continue
            try:
                m = onnx.load(str(p), load_external_data=False)
                ops = {o.domain or "ai.onnx": o.version for o in m.opset_import}
                r["opset"] = str(ops.get("ai.onnx", ""))
                extra = ",".join(f"{k}:{v}" for k, v in sorted(ops.items()) if k != "ai.onnx")
                inits = {i.name for i in m.graph.initializer}
                ins = [i for i in m.graph.input if i.name not in inits]
                dyn = "no"
                for i in ins:
                    dims = i.type.tensor_type.shape.dim
                    if dims and (dims[0].dim_param or dims[0].dim_value <= 0):
                        dyn = "yes"
                        break
                if not r.get("exporter"):
                    r["exporter"] = f"{m.producer_name or '-'} {m.producer_version or ''}".strip()
                if extra:
                    r["notes"] = (r.get("notes", "") + f"; extra opsets {extra}").lstrip("; ")
                has_ext = any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer)
                if has_ext and "external data" not in r.get("notes", ""):
                    r["notes"] = (r.get("notes", "") + "; external data").lstrip("; ")
            except Exception as e:  # noqa: BLE001
                dyn = "?"
                r["notes"] = (r.get("notes", "") + f"; onnx.load failed: {type(e).__name__}").lstrip("; ")
            r["dynamic_batch"] = dyn
            size = p.stat().st_size + sum(q.stat().st_size for q in p.parent.glob(p.name + ".data"))
            r["size_bytes"] = str(size)
            rows.append(r)
    by_src = {}  # split groups: all pypi:<pkg> sources form one group, both torch2.13 exporters another
    for r in rows:
        g = "torch2.13" if r["source"].startswith("torch2.13") else r["source"].split(":")[0]
        by_src.setdefault(g, []).append(r)
    for src, rs in by_src.items():
        fams = {}
        for r in rs:
            fams.setdefault(r.get("family") or r["name"], []).append(r)
        order = sorted(fams, key=lambda f: hashlib.sha1(f"{src}/{f}".encode()).hexdigest())
        held, n = 0, len(rs)
        for f in order:
            split = "heldout" if (n >= 2 and held < 0.25 * n and held + len(fams[f]) <= 0.4 * n + 1) else "dev"
            if split == "heldout":
                held += len(fams[f])
            for r in fams[f]:
                r["split"] = split
    cols = ["name", "path", "source", "opset", "exporter", "dynamic_batch", "notes", "split", "family", "size_bytes"]
    rows.sort(key=lambda r: (r["source"], r["path"]))
    with open(out / "MANIFEST.tsv", "w") as fh:
        fh.write("\t".join(cols) + "\n")
        for r in rows:
            fh.write("\t".join(str(r.get(c, "")).replace("\t", " ") for c in cols) + "\n")
    print(f"MANIFEST.tsv: {len(rows)} models")
