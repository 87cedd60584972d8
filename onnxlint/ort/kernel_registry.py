"""The kernel registry (core/framework/kernel_registry.cc): which (domain, op, since-version range, types) an
ORT execution provider registers.

The tables are read from ORT's own binaries: ``tools/gen_kernel_tables.py`` reads the live kernel registry
(``get_all_opkernel_def``) of every published onnxruntime (CPU) and onnxruntime-gpu (CUDA) wheel and packs
all releases into one file per provider, ``onnxlint/data/kernels/ort-<ep>.json.gz`` (rows shared across
releases, each with a bit mask of its releases). ``load(ep, version)`` gives exactly that release's table;
``nearest`` maps an unpublished version to a shipped one. ORT's ``docs/OperatorKernels.md`` (rendered upstream
from the same registry) is still parsed here, as the generator's fallback for a release with no wheel.
"""

from __future__ import annotations

import json
import re
import subprocess
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from onnxlint.ort.releases import version_key
from onnxlint.support import pychild, resources

Table = dict[str, Any]  # a canonical table: {"ops": {domain: {op: rows}}, "params": {...}}
Constraints = dict[str, list[str]]  # type parameter -> the types a kernel accepts ({}: any type)
Rows = list[list[Any]]  # [[since, end, Constraints], ...], newest range first

OPEN_END = 2147483647  # ORT's INT_MAX marker for "and later"
PACKED_FORMAT = 2
EP_SHORT = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda", "DmlExecutionProvider": "dml"}
EPS_LONG = {short: ep for ep, short in EP_SHORT.items()}

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
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
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
    inputs: list[list[str]] = []
    outputs: list[list[str]] = []
    for kind, name, type_str in _PARAM.findall(variant):
        (inputs if kind == "in" else outputs).append([name, type_str])
    return {"inputs": inputs, "outputs": outputs}


def parse_operator_kernels_md(text: str) -> dict[str, Table]:
    """OperatorKernels.md -> {ep_name: canonical table}. Raises ValueError on a row it cannot read."""
    tables: dict[str, Table] = {}
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


def merge_defs(defs: Iterable[list[Any]]) -> dict[str, dict[str, Rows]]:
    """KernelDefs [[domain, op, since, end, {param: [types]}], ...] -> {domain: {op: [[since, end, cons], ...]}}.

    ORT registers one KernelDef per type (or type family); a lookup tries every def of the op. Defs of one
    version range are merged into one row when that is exact: the union of their constraints allows exactly
    the type combinations some def allows (always so for one type parameter). A def with no type constraints
    accepts every type, so its range becomes one row with ``{}`` (= any type). Otherwise the range keeps one
    row per distinct def (``lookup`` tries each). Rows newest range first."""
    groups: dict[tuple[Any, ...], dict[str, Constraints]] = {}
    for domain, op, lo, hi, cons in defs:
        key = json.dumps(cons, sort_keys=True)
        groups.setdefault((domain, op, lo, hi), {})[key] = {k: sorted(v) for k, v in cons.items()}
    out: dict[str, dict[str, Rows]] = {}
    for (domain, op, lo, hi), by_key in groups.items():
        rows = out.setdefault(domain, {}).setdefault(op, [])
        variants = [by_key[k] for k in sorted(by_key)]
        if any(not c for c in variants):
            rows.append([lo, hi, {}])
            continue
        union: dict[str, set[str]] = {}
        for c in variants:
            for k, v in c.items():
                union.setdefault(k, set()).update(v)
        merged = {k: sorted(v) for k, v in sorted(union.items())}
        if len(variants) == 1 or _union_is_exact(variants, merged):
            rows.append([lo, hi, merged])
        else:
            rows.extend([lo, hi, c] for c in variants)
    for by_op in out.values():
        for op in by_op:
            by_op[op].sort(key=lambda r: (-r[0], -r[1], json.dumps(r[2], sort_keys=True)))
    return out


def _union_is_exact(variants: list[Constraints], merged: Constraints) -> bool:
    names = sorted(merged)
    if any(sorted(c) != names for c in variants):
        return False
    total = 1
    for n in names:
        total *= len(merged[n])
    if total > 200_000:
        return False
    from itertools import product

    combos: set[tuple[str, ...]] = set()
    for c in variants:
        combos.update(product(*(c[n] for n in names)))
    return len(combos) == total


def _normalise(table: Table) -> None:
    for ops in table["ops"].values():
        for op, rows in ops.items():
            merged: dict[tuple[int, int], dict[str, set[str]]] = {}
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


def live_registry(python: str | None = None, timeout: float = 120) -> tuple[str, dict[str, Table]]:
    """Kernel registry of an installed onnxruntime, read in a subprocess.

    A subprocess because onnxruntime-gpu without its CUDA libraries can abort the whole process when the
    CUDA registry is built; that must never take the linter down.
    """
    proc = subprocess.run(pychild.script(_LIVE_SCRIPT, python), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        raise RuntimeError(f"onnxruntime kernel registry unavailable: {last}")
    data = json.loads(proc.stdout)
    defs: dict[str, list[list[Any]]] = {}
    for provider, domain, op, (lo, hi), cons in data["rows"]:
        defs.setdefault(provider, []).append([domain, op, lo, hi, cons])
    return data["ort_version"], {p: {"ops": merge_defs(d), "params": {}} for p, d in defs.items()}


def to_markdown(tables: dict[str, Table]) -> str:
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
    """One release's kernels of one provider.

    ``ops[domain][op]`` is a list of rows ``[since, end, constraints]``, newest range first. ``constraints``
    maps a type parameter to the types the kernel accepts; ``{}`` means the kernel declares no type
    constraint (e.g. CUDA NonMaxSuppression) and accepts any type. One range may have several rows (several
    KernelDefs whose constraints cannot be merged exactly); a node matches the range if any row accepts it."""

    ep: str
    ort_version: str
    source: str
    ops: dict[str, dict[str, Rows]]
    params: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def has_domain(self, domain: str) -> bool:
        return domain in self.ops

    def rows(self, domain: str, op: str) -> Rows | None:
        return self.ops.get(domain, {}).get(op)

    def rows_for(self, domain: str, op: str, since_version: int | None) -> Rows:
        """Rows whose version range matches a node of this schema since-version.

        ORT's KernelRegistry::VerifyKernelDef: an open-ended kernel ("13+") matches only a node whose schema
        since-version equals its start; a closed range [a, b] matches a <= since <= b."""
        if since_version is None:
            return []
        return [r for r in self.rows(domain, op) or ()
                if r[0] == since_version or (r[0] < since_version and r[1] != OPEN_END and r[1] >= since_version)]

    def lookup(self, domain: str, op: str, since_version: int,
               bind_types: Callable[[Iterable[str]], dict[str, str]]) -> KernelMatch:
        """bind_types(type_param_names) -> {param: dtype string} of the node, or {} when unknown."""
        rows = self.rows(domain, op)
        if not rows:
            return KernelMatch(False, "not-registered", f"no {EP_SHORT.get(self.ep, self.ep)} kernel for {domain}::{op}")
        hits = self.rows_for(domain, op, since_version)
        if not hits:
            return KernelMatch(False, "opset", _no_version_kernel(op, since_version, rows, EP_SHORT.get(self.ep, self.ep)))
        first_miss: tuple[str, str] | None = None
        bound: dict[str, str] = {}
        for _lo, _hi, cons in hits:
            if not cons:
                return KernelMatch(True)  # no type constraints: any type
            bound = bind_types(cons.keys())
            miss = next(((p, t) for p, t in bound.items() if t and cons.get(p) and t not in cons[p]), None)
            if miss is None:
                return KernelMatch(True)
            first_miss = first_miss or miss
        assert first_miss is not None  # every hit had constraints and a miss
        return KernelMatch(False, "dtype", _dtype_miss(first_miss, bound, hits))


def _dtype_miss(first_miss: tuple[str, str], bound: dict[str, str], hits: Rows) -> str:
    """Why no kernel of the node's version takes its types, in words that hold: a type no kernel takes for its
    parameter (the first kernel's miss where that is one), else the type no kernel takes beside the node's type of
    the first type parameter (in the table's order), when each type alone is some kernel's (CUDA OneHot registers
    int32 indices with int32 depth and int64 with int64: int64 indices with a float depth missed the first
    kernel's T1=int32, and read 'T1=int64 not supported (supported: int32, int64)')."""
    def allowed(param: str, rows: Rows = hits) -> list[str]:
        return sorted({t for r in rows for t in r[2].get(param, ())})

    def short(t: str) -> str:
        return t.replace("tensor(", "").rstrip(")")

    param, dtype = first_miss
    if dtype in allowed(param):  # another kernel's type: is some other type of the node no kernel's?
        param, dtype = next(((p, t) for p, t in bound.items() if t and allowed(p) and t not in allowed(p)), first_miss)
    if dtype not in allowed(param):
        return f"{param}={short(dtype)} not supported (supported: {', '.join(map(short, allowed(param)))})"
    params = [p for p in bound if bound[p] and allowed(p)]
    first = params[0]
    with_it = [r for r in hits if bound[first] in r[2].get(first, ())]
    other = next((p for p in params[1:] if bound[p] not in allowed(p, with_it)), None)
    if other is None:  # no one type answers for it: the combination
        return f"{', '.join(f'{p}={short(bound[p])}' for p in params)} not supported together (each alone is)"
    return (f"{other}={short(bound[other])} not supported with {first}={short(bound[first])} (supported with it: "
            f"{', '.join(map(short, allowed(other, with_it)))})")


def _no_version_kernel(op: str, since: int, rows: Rows, ep: str) -> str:
    """Why a registered op has no kernel for this node's op version, in words: an open-ended registration
    ("13+") reads as covering 19, but ORT matches it only for op version 13 (KernelRegistry::VerifyKernelDef)."""
    text = f"{ep.upper()} has no kernel for {op} version {since} (the node's opset picks {op}-{since}); it registers {op} {_ranges(rows)}"
    open_ended = [r[0] for r in rows if r[1] == OPEN_END and r[0] < since]
    if open_ended:
        text += (f", and ORT matches an open-ended kernel ('{open_ended[0]}+') only for op version {open_ended[0]}, "
                 f"not for the newer {op}-{since}")
    return text


def _ranges(rows: Rows) -> str:
    def fmt(lo: int, hi: int) -> str:
        return f"{lo}+" if hi == OPEN_END else (str(lo) if lo == hi else f"{lo}-{hi}")

    return ", ".join(dict.fromkeys(fmt(r[0], r[1]) for r in sorted(rows, key=lambda r: (r[0], r[1]))))


def kernels_dir() -> Path:
    return resources.data_dir() / "kernels"


# Packed form (tools/gen_kernel_tables.py pack): one gzip'ed JSON per provider, ort-<ep>.json.gz, holding every
# release read. "releases" is the list of release versions; release i is bit i of a row's mask. "ops":
# {domain: {op: [[since, end, constraint id, mask], ...]}} (newest range first), "cons" the list of distinct
# constraint dicts, "params": {domain: {op: [[formal parameters, mask], ...]}}, "sources": [[text, mask], ...].


@lru_cache(maxsize=None)
def _packed(ep: str) -> dict[str, Any] | None:
    path = kernels_dir() / f"ort-{ep}.json.gz"
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(zlib.decompress(path.read_bytes(), wbits=31))  # gzip's format; the gzip module costs an import
    if data.get("format") != PACKED_FORMAT:
        raise ValueError(f"{path}: unknown kernel-table format {data.get('format')!r}")
    return data


def releases(ep: str) -> list[str]:
    """Releases with a shipped table for ep ('cpu', 'cuda'), oldest first."""
    data = _packed(ep)
    return list(data["releases"]) if data else []


def available() -> dict[str, list[str]]:
    """{'cpu': [versions], 'cuda': [versions]} shipped as data."""
    return {ep: releases(ep) for ep in EP_SHORT.values() if releases(ep)}


def _vkey(v: str) -> tuple[int, ...]:
    return version_key(v)


def nearest(ep: str, version: str | None) -> tuple[str, bool]:
    """The shipped table for ep of that release; (table_version, exact).

    Every published release read is shipped under its own version, so a published version is exact. A version
    with no table (unpublished, a dev or local build, a release newer than the data) gets the nearest one by
    release order: in its own minor line the closest patch, the newer of two as close (1.21.5 -> 1.21.1;
    1.20.1, never an onnxruntime-gpu release -> 1.20.2); with no table of its minor line, the newest release
    before it (1.32.0, 1.33, 2.0 -> the newest table), or the oldest table for a version older than every one."""
    versions = releases(ep)
    if not versions:
        raise LookupError(f"no kernel table shipped for {ep}")
    if version is None:
        return versions[-1], False
    if version in versions:
        return version, True
    want = _release3(version)
    line = [v for v in versions if _release3(v)[:2] == want[:2]]
    if line:
        return min(line, key=lambda v: (abs(_release3(v)[2] - want[2]), -_release3(v)[2])), False
    before = [v for v in versions if _release3(v) < want]
    return (max(before, key=_release3) if before else min(versions, key=_release3)), False


def _release3(v: str) -> tuple[int, int, int]:
    """major, minor, patch of a version text (missing parts 0): `1.33` -> (1, 33, 0), `1.22.0.dev1` -> (1, 22, 0)."""
    k = _vkey(v)[:3] + (0, 0, 0)
    return k[0], k[1], k[2]


def checked(requested: str | None, eps: Iterable[str] = ("cuda", "cpu")) -> str:
    """The kernel tables a run reads, for every output that names them: `ORT 1.31.1`, or with a version that has
    no table of its own, what answered for it: `ORT 1.21.1 tables (asked 1.21.5)`, `ORT 1.31.1 CUDA and 1.32.0
    CPU tables (asked 1.32.0)`. eps: the providers the targets read ('cuda', 'cpu')."""
    release, _ = chosen_release(requested, eps)
    got = {ep: nearest(ep, release) for ep in eps if releases(ep)}
    if all(exact for _, exact in got.values()):
        return f"ORT {release}"
    used = list(dict.fromkeys(v for v, _ in got.values()))
    if len(used) == 1:
        return f"ORT {used[0]} tables (asked {release})"
    return f"ORT {' and '.join(f'{v} {ep.upper()}' for ep, (v, _) in got.items())} tables (asked {release})"


def resolve(eps: list[str], requested: str | None) -> tuple[dict[str, str], str | None]:
    """Table versions for several providers ('cpu', 'cuda') at one requested version, and at most one note.

    A release shipped for every provider resolves exactly and gets no note."""
    chosen = {ep: nearest(ep, requested) for ep in eps}
    inexact: dict[str, list[str]] = {}
    for ep, (version, exact) in chosen.items():
        if not exact:
            inexact.setdefault(version, []).append(ep.upper())
    if not inexact:
        return {ep: v for ep, (v, _) in chosen.items()}, None
    used = "; ".join(f"{' and '.join(names)} kernel table{'s' if len(names) > 1 else ''} of ORT {v}" for v, names in inexact.items())
    if requested is None:
        why = "no onnxruntime installed; newest shipped"
    elif any(requested in releases(ep) for ep in eps):
        missing = [ep for ep in eps if not chosen[ep][1]]
        why = f"requested {requested}, not published for {', '.join(m.upper() for m in missing)}; nearest shipped"
    else:
        why = f"requested {requested}, not a release with a shipped table; nearest shipped"
    return {ep: v for ep, (v, _) in chosen.items()}, f"{used} used ({why})"


@lru_cache(maxsize=None)
def load(ep: str, version: str) -> KernelTable:
    """Exactly that release's table (``version`` must be one of ``releases(ep)``; see ``nearest``)."""
    data = _packed(ep)
    if data is None or version not in data["releases"]:
        raise LookupError(f"no {ep} kernel table for onnxruntime {version}")
    bit = 1 << data["releases"].index(version)
    cons = data["cons"]
    ops: dict[str, dict[str, Rows]] = {}
    for domain, by_op in data["ops"].items():
        mine = {}
        for op, rows in by_op.items():
            picked = [[lo, hi, cons[c]] for lo, hi, c, mask in rows if mask & bit]
            if picked:
                mine[op] = picked
        if mine:
            ops[domain] = mine
    params: dict[str, Any] = {}
    for domain, by_op in data["params"].items():
        for op, variants in by_op.items():
            for p, mask in variants:
                if mask & bit:
                    params.setdefault(domain, {})[op] = p
                    break
    source = next((text for text, mask in data["sources"] if mask & bit), "")
    return KernelTable(data["ep"], version, source, ops, params)


def installed_ort_version() -> str | None:
    """Version of the installed onnxruntime, read from package metadata (never imports it)."""
    from importlib import metadata

    for dist in ("onnxruntime", "onnxruntime-gpu"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


# Which release a lint checks: the configured one, else the newest shipped tables. The same model must get the
# same answer on every machine, so the default never depends on what happens to be installed (`pip install .`
# and `pip install '.[test]'` pulled different onnxruntime releases, and a pre-commit hook's environment
# another); the installed onnxruntime is read only when asked for by name (`--ort-version installed`).
INSTALLED = "installed"  # the --ort-version value that asks for the installed onnxruntime's release


def default_release(eps: Iterable[str] | None = None) -> str:
    """The newest ORT release every shipped kernel table of the providers has (eps: 'cpu', 'cuda'; None: every
    provider): each target's default is its newest table, ort-cpu the newest CPU table (1.32.0, where
    onnxruntime-gpu stops at 1.31.1), ort-cuda the newest release with a CUDA and a CPU table."""
    have = available()
    shipped = [set(v) for ep, v in have.items() if eps is None or ep in set(eps)]
    common = set.intersection(*shipped) if shipped else set()
    if not common:
        raise LookupError("no ORT release has a shipped kernel table for every provider")
    return max(common, key=version_key)


def chosen_release(requested: str | None, eps: Iterable[str] | None = None) -> tuple[str, str | None]:
    """(the ORT release to read tables of, a note or None): the requested one, else the providers' default.
    `installed` without onnxruntime installed falls back to the default, with a note saying so."""
    if requested != INSTALLED:
        return requested or default_release(eps), None
    found = installed_ort_version()
    if found is None:
        default = default_release(eps)
        return default, f"ORT {default} tables used (--ort-version installed, but no onnxruntime is installed)"
    return found, None


# Which inputs and outputs of a CUDA kernel live in host memory (its KernelDef's InputMemoryType /
# OutputMemoryType): ort-cuda-memory.json
@lru_cache(maxsize=1)
def cuda_memory() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((resources.data_dir() / "ort-cuda-memory.json").read_text())
    return data


@lru_cache(maxsize=None)
def cpu_inputs(op: str, since: int | None) -> frozenset[int]:
    spec = cuda_memory()["cpu_inputs"].get(op)
    if not spec:
        return frozenset()
    if since is not None and since < spec.get("since", 0):
        return frozenset()
    return frozenset(spec["inputs"])


@lru_cache(maxsize=None)
def cpu_outputs(op: str) -> frozenset[int]:
    return frozenset(cuda_memory()["cpu_outputs"].get(op, []))
