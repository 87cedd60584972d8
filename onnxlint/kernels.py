"""Kernel-coverage tables: which (domain, op, since-version range, types) an ORT execution provider registers.

Two sources share one canonical form: ORT's own ``docs/OperatorKernels.md`` (generated upstream by
``tools/python/gen_opkernel_doc.py`` from the kernel registry) and the live registry of an installed
onnxruntime (``get_all_opkernel_def``). The generator in ``tools/gen_kernel_tables.py`` writes the
canonical form as compact JSON under ``onnxlint/data/kernels/``; this module reads it at lint time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from onnxlint import resources

OPEN_END = 2147483647  # ORT's INT_MAX marker for "and later"
EP_SHORT = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda", "DmlExecutionProvider": "dml"}

_SECTION = re.compile(r"^## Operators implemented by (\w+)")
_DOMAIN = re.compile(r"^\|\*\*Operator Domain:\*\* \*([\w.]+)\*\|")
_PARAM = re.compile(r"\*(in|out)\* ([\w.]+):\*\*([^*]+)\*\*")
_CONSTRAINT = re.compile(r"\*\*([\w]+)\*\* = (.*)")


def _parse_versions(text: str) -> tuple[int, int]:
    text = text.strip()
    if text.endswith("+"):
        return int(text[:-1]), OPEN_END
    if text.startswith("["):
        lo, hi = text.strip("[]").split(",")
        return int(lo), int(hi)
    return int(text), int(text)


def _parse_constraints(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in text.split("<br/>"):
        m = _CONSTRAINT.search(part.strip())
        if m:
            out[m.group(1)] = sorted(t.strip() for t in _split_types(m.group(2)))
    return out


def _split_types(text: str) -> list[str]:
    """Split 'tensor(a), seq(tensor(b))' on top-level commas."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _parse_params(text: str) -> dict[str, list[list[str]]]:
    """First signature variant of the Parameters column: formal names with their type strings."""
    variant = text.split("<br><br>or<br><br>")[0]
    inputs, outputs = [], []
    for kind, name, type_str in _PARAM.findall(variant):
        (inputs if kind == "in" else outputs).append([name, type_str])
    return {"inputs": inputs, "outputs": outputs}


def parse_operator_kernels_md(text: str) -> dict[str, dict]:
    """OperatorKernels.md -> {ep_name: canonical table}. Raises ValueError on a row it cannot read."""
    tables: dict[str, dict] = {}
    ep = domain = op = None
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _SECTION.match(line)
        if m:
            ep = m.group(1)
            tables[ep] = {"ops": {}, "params": {}}
            domain = op = None
            continue
        if ep is None or not line.startswith("|"):
            continue
        m = _DOMAIN.match(line)
        if m:
            domain = m.group(1)
            continue
        cells = line.split("|")
        if len(cells) < 6 or cells[1].startswith("Op Name") or cells[1].startswith("---") or domain is None:
            continue
        name, params, versions, types = cells[1], cells[2], cells[3], "|".join(cells[4:-1])
        if name:
            op = name
            tables[ep]["params"].setdefault(domain, {})[op] = _parse_params(params)
        if not versions.strip():
            continue
        if op is None:
            raise ValueError(f"line {lineno}: version row before any operator")
        try:
            lo, hi = _parse_versions(versions)
        except ValueError as exc:
            raise ValueError(f"line {lineno}: bad version cell {versions!r}") from exc
        tables[ep]["ops"].setdefault(domain, {}).setdefault(op, []).append([lo, hi, _parse_constraints(types)])
    for table in tables.values():
        _normalise(table)
    return tables


def _normalise(table: dict) -> None:
    for ops in table["ops"].values():
        for op, rows in ops.items():
            merged: dict[tuple[int, int], dict[str, set]] = {}
            for lo, hi, cons in rows:
                slot = merged.setdefault((lo, hi), {})
                for k, v in cons.items():
                    slot.setdefault(k, set()).update(v)
            ops[op] = [[lo, hi, {k: sorted(v) for k, v in sorted(c.items())}] for (lo, hi), c in sorted(merged.items(), reverse=True)]


_LIVE_SCRIPT = r"""
import json, sys
import onnxruntime
from onnxruntime.capi import _pybind_state as C
rows = []
for k in C.get_all_opkernel_def():
    rows.append([k.provider, k.domain or "ai.onnx", k.op_name, list(k.version_range), {n: list(t) for n, t in k.type_constraints.items()}])
json.dump({"ort_version": onnxruntime.__version__, "rows": rows}, sys.stdout)
"""


def live_registry(python: str | None = None, timeout: float = 120) -> tuple[str, dict[str, dict]]:
    """Kernel registry of an installed onnxruntime, read in a subprocess.

    A subprocess because onnxruntime-gpu without its CUDA libraries can abort the whole process when the
    CUDA registry is built; that must never take the linter down.
    """
    proc = subprocess.run([python or sys.executable, "-c", _LIVE_SCRIPT], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        raise RuntimeError(f"onnxruntime kernel registry unavailable: {last}")
    data = json.loads(proc.stdout)
    tables: dict[str, dict] = {}
    for provider, domain, op, (lo, hi), cons in data["rows"]:
        table = tables.setdefault(provider, {"ops": {}, "params": {}})
        table["ops"].setdefault(domain, {}).setdefault(op, []).append([lo, hi, {k: sorted(v) for k, v in cons.items()}])
    for table in tables.values():
        _normalise(table)
    return data["ort_version"], tables


def to_markdown(tables: dict[str, dict]) -> str:
    """Render canonical tables in OperatorKernels.md's table layout (Parameters column left empty)."""
    out = []
    for ep in sorted(tables):
        out += [f"## Operators implemented by {ep}", "", "| Op Name | Parameters | OpSet Version | Types Supported |",
                "|---------|------------|---------------|-----------------|"]
        for domain in sorted(tables[ep]["ops"]):
            out.append(f"|**Operator Domain:** *{domain}*||||")
            for op in sorted(tables[ep]["ops"][domain]):
                for i, (lo, hi, cons) in enumerate(tables[ep]["ops"][domain][op]):
                    ver = f"{lo}+" if hi == OPEN_END else (str(lo) if lo == hi else f"[{lo}, {hi}]")
                    types = "<br/> ".join(f"**{k}** = {', '.join(v)}" for k, v in cons.items())
                    out.append(f"|{op if i == 0 else ''}||{ver}|{types}|")
            out += ["| |", "| |"]
        out.append("")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- lookup at lint time


@dataclass(frozen=True)
class KernelMatch:
    """Result of looking a node up in one provider's table."""

    ok: bool
    reason: str | None = None  # not-registered | opset | dtype
    detail: str = ""
    cpu_inputs: tuple[int, ...] = ()


@dataclass
class KernelTable:
    ep: str
    ort_version: str
    source: str
    ops: dict[str, dict[str, list]]
    params: dict[str, dict[str, dict]] = field(default_factory=dict)

    def has_domain(self, domain: str) -> bool:
        return domain in self.ops

    def rows(self, domain: str, op: str) -> list | None:
        return self.ops.get(domain, {}).get(op)

    def rows_for(self, domain: str, op: str, since_version: int | None) -> list:
        """Rows whose version range matches a node of this schema since-version.

        ORT's KernelRegistry::VerifyKernelDef: an open-ended kernel ("13+") matches only a node whose schema
        since-version equals its start; a closed range [a, b] matches a <= since <= b."""
        if since_version is None:
            return []
        return [r for r in self.rows(domain, op) or ()
                if r[0] == since_version or (r[0] < since_version and r[1] != OPEN_END and r[1] >= since_version)]

    def lookup(self, domain: str, op: str, since_version: int, bind_types) -> KernelMatch:
        """bind_types(type_param_names) -> {param: dtype string} of the node, or {} when unknown."""
        rows = self.rows(domain, op)
        if not rows:
            return KernelMatch(False, "not-registered", f"no {EP_SHORT.get(self.ep, self.ep)} kernel for {domain}::{op}")
        hits = self.rows_for(domain, op, since_version)
        if not hits:
            return KernelMatch(False, "opset", f"{op}-{since_version} has no kernel; registered versions: {_ranges(rows)}")
        lo, hi, cons = hits[0]
        bound = bind_types(cons.keys()) if cons else {}
        for param, dtype in bound.items():
            allowed = cons.get(param)
            if allowed and dtype and dtype not in allowed:
                short = ", ".join(t.replace("tensor(", "").rstrip(")") for t in allowed)
                return KernelMatch(False, "dtype", f"{param}={dtype.replace('tensor(', '').rstrip(')')} not supported (supported: {short})")
        return KernelMatch(True)


def _ranges(rows) -> str:
    def fmt(lo, hi):
        return f"{lo}+" if hi == OPEN_END else (str(lo) if lo == hi else f"{lo}-{hi}")

    return ", ".join(fmt(r[0], r[1]) for r in sorted(rows))


def kernels_dir() -> Path:
    return resources.data_dir() / "kernels"


@lru_cache(maxsize=None)
def available() -> dict[str, list[str]]:
    """{'cpu': [versions], 'cuda': [versions]} shipped as data."""
    found: dict[str, list[str]] = {}
    for path in sorted(kernels_dir().glob("ort-*-*.json")):
        _, version, ep = path.stem.split("-", 2)
        found.setdefault(ep, []).append(version)
    for versions in found.values():
        versions.sort(key=_vkey)
    return found


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def nearest(ep: str, version: str | None) -> tuple[str, bool]:
    """Pick the shipped table for ep closest to version; returns (table_version, exact)."""
    versions = available().get(ep, [])
    if not versions:
        raise LookupError(f"no kernel table shipped for {ep}")
    if version is None:
        return versions[-1], False
    if version in versions:
        return version, True
    want = _vkey(version)[:3]

    def dist(v):
        k = _vkey(v)[:3] + (0,) * 3
        w = want + (0,) * 3
        return abs((k[0] * 1000 + k[1]) - (w[0] * 1000 + w[1])), abs(k[2] - w[2])

    return min(versions, key=dist), False


@lru_cache(maxsize=None)
def load(ep: str, version: str) -> KernelTable:
    data = json.loads((kernels_dir() / f"ort-{version}-{ep}.json").read_text())
    return KernelTable(data["ep"], data["ort_version"], data["source"], data["ops"], data.get("params", {}))


def installed_ort_version() -> str | None:
    """Version of the installed onnxruntime, read from package metadata (never imports it)."""
    from importlib import metadata

    for dist in ("onnxruntime", "onnxruntime-gpu"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None
