"""The prediction against a real session: typed per-node results, no parsing of location strings.

The session runs at the optimization level the prediction is made at (ORT's default, ORT_ENABLE_ALL, unless
told otherwise). Confirmed, missed and false alarms are about CPU placement: a node predicted on CPU that ran
on CPU is a confirmed fallback; one that ran on CPU unpredicted is a miss (OLX901); predicted CPU but ran on
the device is a false alarm (OLX902); a session that could not be built, or a CUDA EP that was asked for and
not exercised, is OLX903. A node ORT's graph optimizations removed (folded, eliminated, fused) has no
provider: predicted removed and absent is an agreement of its own, never "predicted CPU".
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from onnxlint.model import write_guard
from onnxlint.model.loading.external import linked_data_folder, relocated
from onnxlint.verify.session import VERIFY_COPY

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
REMOVED = "removed"  # predicted_ep / ran_on of a node that is not in the session's graph
COPY_OPS = ("MemcpyToHost", "MemcpyFromHost")
_TOKEN = re.compile(r"^(.*)_token_\d+$")


@dataclass(frozen=True)
class NodeCheck:
    location: str
    op_type: str
    predicted_ep: str  # "no provider" when none has a kernel; "removed" when ORT's optimizations remove it
    ran_on: str  # "removed": not in the session's graph


@dataclass
class VerifyResult:
    filename: str
    target: str
    providers_requested: list[str]
    optimization: str = "all"
    error: str | None = None
    providers_used: list[str] = field(default_factory=list)
    cuda_unavailable: str | None = None  # CUDA was requested and not exercised: why, with the fix
    # every other provider requested and not exercised (TensorRT on a build without it): provider -> why, with the fix
    providers_unavailable: dict[str, str] = field(default_factory=dict)
    run_error: str | None = None
    confirmed: list[NodeCheck] = field(default_factory=list)
    missed: list[NodeCheck] = field(default_factory=list)
    false_alarms: list[NodeCheck] = field(default_factory=list)
    agree_on_device: int = 0
    removed_agree: int = 0  # predicted removed by ORT's optimizations, and absent from the session
    removed_unpredicted: list[NodeCheck] = field(default_factory=list)  # placed by the prediction, absent (fused/folded)
    kept_unpredicted: list[NodeCheck] = field(default_factory=list)  # predicted removed, ran on the device
    nodes_observed: int = 0
    ort_created: dict[str, int] = field(default_factory=dict)  # provider -> nodes ORT made (fusions, expansions)
    on_cpu: int = 0
    ran_on: dict[str, str] = field(default_factory=dict)  # node location -> provider
    unreadable: bool | None = None  # True: the file is no model onnxlint can read (bad input: exit 2, as the lint)

    @property
    def agree(self) -> int:
        return len(self.confirmed) + self.agree_on_device

    @property
    def failed(self) -> bool:
        """A failed session is not a pass; neither is a miss, nor a provider that was asked for and not tested."""
        return self.error is not None or self.unverified is not None or bool(self.missed)

    @property
    def unverified(self) -> str | None:
        """Why the session did not exercise what was asked: each requested provider it lacks, with why (None:
        it has them all)."""
        why = [f"CUDAExecutionProvider was requested but not exercised: {self.cuda_unavailable}"] if self.cuda_unavailable else []
        why += [f"{p} was requested but not exercised: {w}" for p, w in self.providers_unavailable.items()]
        return "; ".join(why) or None

    def notes(self) -> list[str]:
        """What the reader must know to trust the numbers: a run that failed, nodes not compared."""
        out = [n for n in (self.run_error,) if n]
        if self.removed_unpredicted:
            out.append(f"{len(self.removed_unpredicted)} node(s) predicted on a provider are not in the session's graph "
                       "(ORT fused or folded them): " + ", ".join(c.location for c in self.removed_unpredicted[:5])
                       + (" ..." if len(self.removed_unpredicted) > 5 else ""))
        if self.kept_unpredicted:
            out.append(f"{len(self.kept_unpredicted)} node(s) predicted removed by ORT's optimizations ran on the device: "
                       + ", ".join(c.location for c in self.kept_unpredicted[:5]))
        if self.ort_created.get(CPU):
            out.append(f"ORT created {self.ort_created[CPU]} node(s) of its own on CPU (layout Transposes, fusions or function bodies)")
        return out

    def summary_line(self) -> str:
        if self.error:
            return f"verify failed: {self.error}"
        if self.unverified:
            return f"not verified: {self.unverified}"
        n = self.nodes_observed
        head = (f"verify ({', '.join(self.providers_used)}, optimization {self.optimization}): {n} node{'s' * (n != 1)} "
                f"in the session, {self.on_cpu} on CPU; ")
        tail = f"; {self.removed_agree} removed by ORT as predicted" if self.removed_agree else ""
        if self.target == "ort-cpu":
            return head + f"{self.agree} agree with the ort-cpu prediction, missed {len(self.missed)}" + tail
        return head + (f"confirmed fallbacks {len(self.confirmed)}, missed {len(self.missed)}, "
                       f"false alarms {len(self.false_alarms)}") + tail

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}  # absent: not applicable
        lists = ("confirmed", "missed", "false_alarms", "removed_unpredicted", "kept_unpredicted")
        for k in lists:
            out[k] = [c["location"] for c in out[k]]
        out["details"] = [asdict(c) for k in lists for c in getattr(self, k)]
        if not self.providers_unavailable:
            del out["providers_unavailable"]
        out["verified"] = self.error is None and self.unverified is None
        return out


@dataclass
class FixedVerifyResult:
    """`verify --fix`: the session before, what the fix did, the session after."""

    filename: str
    before: VerifyResult
    fix_notes: list[str]
    after: VerifyResult

    @property
    def failed(self) -> bool:
        return self.after.failed

    @property
    def unreadable(self) -> bool | None:
        return self.before.unreadable

    def as_json(self) -> dict[str, Any]:
        return {"filename": self.filename, "before": self.before.as_json(), "fix": self.fix_notes,
                "after": self.after.as_json()}


def target_for(providers: list[str]) -> str:
    return "ort-cuda" if CUDA in providers else "ort-cpu"


@contextlib.contextmanager
def session_model(mf: Any, renamed: dict[str, str], data_root: str | None = None
                  ) -> Iterator[tuple[Path, Path | None]]:
    """The file the session loads, and the folder its external data paths are relative to (None: the file's own):
    the model itself, or its renamed copy in a temporary folder, never beside the model (a read-only folder, a
    repository under review), with the model's folder as its data folder when it has external data (the session
    child hands ORT that folder, session_child.model_source). data_root: that folder for a copy beside links to
    its data (verify --fix's fixed model: ORT 1.21 on refuses data a link leads out of the model's folder to)."""
    folder, model = None, mf.model
    if data_root is not None and mf.external:
        folder = Path(data_root)
    elif renamed and mf.external:
        folder = Path(mf.path).parent
        write_guard.remove_unheld(folder, VERIFY_COPY)  # what a verify killed (SIGKILL) left beside a model
        real = linked_data_folder(mf)
        if real is not None:
            folder, model = real, relocated(mf, real)
    if not renamed:
        yield Path(mf.path), folder
        return
    with tempfile.TemporaryDirectory(prefix="onnxlint-verify.") as tmp:
        path = Path(tmp) / "renamed.onnx"
        with open(path, "xb") as fh:
            fh.write(model.SerializeToString())
        yield path, folder


def verify_file(path: Path, providers: list[str], shapes: dict[str, list[int]], timeout: float = 300,
                ort_version: str | None = None, optimization: str = "all", data_root: str | None = None) -> VerifyResult:
    """Predict, run a real session at the same optimization level, compare. Never raises: a file that cannot
    be verified is a result with .error, so the other files of a folder keep theirs. data_root: where the data
    links beside a copy of a model lead (verify --fix's fixed model: data_links.linked_folder)."""
    from onnxlint.support.errors import InputError

    result = VerifyResult(str(path), target_for(providers), list(providers), optimization)
    try:
        _verify(path, result, shapes, timeout, ort_version, data_root)
    except InputError as exc:  # its words name the file the result's line names already ("m.onnx: verify failed: ...")
        result.error = exc.message if exc.path == str(path) else str(exc)
        result.unreadable = True
    except Exception as exc:  # one model's surprise must not end the run over a folder
        result.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return result


def _verify(path: Path, result: VerifyResult, shapes: dict[str, list[int]], timeout: float,
            ort_version: str | None, data_root: str | None = None) -> None:
    from onnxlint import targets
    from onnxlint.fixers.equivalence import address_space
    from onnxlint.linting import engine
    from onnxlint.model import loading
    from onnxlint.rulefiles.ruleset import get_ruleset
    from onnxlint.rules.context import Options
    from onnxlint.verify.naming import unique_names
    from onnxlint.verify.session import run_session

    mf = loading.load(path, data_root=data_root)
    problem = loading.loaded_data_problem(mf)  # ORT would follow a symlink out of the model's folder
    if problem:
        result.error = f"not run: {problem}"
        return
    renamed = unique_names(mf.model)
    if renamed:
        mf.raw = mf.weightless = None  # the index is made from the renamed model
    with session_model(mf, renamed, data_root) as (session_path, data_folder):
        run = run_session(session_path, result.providers_requested, shapes, timeout, result.optimization,
                          address_space(mf.total_size), data_folder)
    if run.error and session_path != Path(mf.path):  # ORT names the file it loaded: the renamed copy's stands for it
        run.error = run.error.replace(str(session_path), str(path))
    if run.error:
        result.error = run.error
        return
    result.providers_used = run.providers
    if run.cuda_problem or run.unexercised:  # nothing is compared against a session that lacks what was asked
        result.cuda_unavailable = run.cuda_problem
        result.providers_unavailable = dict(run.unexercised)
        return
    if run.run_error:
        defaulted = [n for n in run.defaulted if n not in shapes]
        hint = (f"; dynamic dims of {', '.join(defaulted)} were fed as 1: pass --shape {defaulted[0]}=...") if defaulted else ""
        result.run_error = (f"the session was built but its run failed ({run.run_error}); the placement comes from "
                            f"the session's log{hint}")
    index = loading.index_model(mf)
    options = Options(targets=targets.closure({result.target}), ort_version=ort_version,
                      ort_optimization=result.optimization)
    prediction = engine.new_context(mf, index, options, get_ruleset(), targets.REGISTRY).prediction(result.target)
    compare(result, run, index, prediction, renamed)


def compare(result: VerifyResult, run: Any, index: Any, prediction: Any, renamed: dict[str, str]) -> None:
    """Every node of the model (local function bodies aside: ORT inlines them under new names) against the log."""
    from onnxlint.ort.verdicts import GONE_STATUSES

    nodes = [n for n in index.nodes if not n.scope.is_function]
    op_of = {n.name: n.op_type for n in nodes}
    listed = {p.name: p.ep for p in run.placements if p.op_type not in COPY_OPS}
    all_on = run.all_on[0] if run.all_on and not run.placements else None
    result.nodes_observed = run.all_on[1] if all_on else len(run.placements)
    result.on_cpu = (result.nodes_observed if all_on == CPU else sum(1 for p in run.placements if p.ep == CPU))
    for p in run.placements:
        if p.name in op_of or p.op_type in COPY_OPS:
            continue
        # a node ORT rewrote in place (the NHWC layout transformer) keeps its op type and gets the name
        # `<name>_token_<n>` (Graph::GenerateNodeName): it is the original node, where it ran
        m = _TOKEN.match(p.name)
        if m and op_of.get(m.group(1)) == p.op_type and m.group(1) not in listed:
            listed[m.group(1)] = p.ep
            continue
        result.ort_created[p.ep] = result.ort_created.get(p.ep, 0) + 1
    for node in nodes:
        pred = prediction.get(node)
        if pred is None:
            continue
        location = node.location
        if node.name in renamed:
            location = location[: len(location) - len(node.name)] + renamed[node.name]
        removed = pred.status in GONE_STATUSES
        predicted = REMOVED if removed else (pred.ep or "no provider")
        if all_on:
            ran = None if removed else all_on  # the log names no node: what it says holds for every node there
        else:
            ran = listed.get(node.name) if node.name else None
        check = NodeCheck(location, node.op_type, predicted, ran or REMOVED)
        if ran is None:
            if removed:
                result.removed_agree += 1
            else:
                result.removed_unpredicted.append(check)
            continue
        record(result, check)


def record(result: VerifyResult, check: NodeCheck) -> None:
    """Count one node found in the session: confirmed fallback, miss, false alarm, or agreement on the device."""
    result.ran_on[check.location] = check.ran_on
    predicted_cpu = check.predicted_ep in (CPU, "no provider")
    if check.predicted_ep == REMOVED and (check.ran_on != CPU or result.target == "ort-cpu"):
        result.kept_unpredicted.append(check)  # not a CPU fallback either way (on ort-cpu every node is on CPU)
    elif check.ran_on == CPU:
        (result.confirmed if predicted_cpu else result.missed).append(check)
    elif predicted_cpu:
        result.false_alarms.append(check)
    else:
        result.agree_on_device += 1


def attach(res: Any, result: VerifyResult, ruleset: Any, selected: Any = lambda code: True) -> bool:
    """Verification findings (OLX901-903) into a lint report, and each lint finding on an observed node
    learns where the node really ran (Finding.verified). Whether a failed verification is a finding (OLX903
    selected): its summary line need not be said again as a note."""
    from onnxlint.linting.report import Finding
    from onnxlint.model.locations import node_location, node_path
    from onnxlint.rules.messages import LOCATION_ROOTS, names_location, render_values

    rules = ruleset.by_id()

    def add(code: str, node: str | None = None, op_type: str | None = None, **values: Any) -> bool:
        rule = rules.get(code)
        if rule is None or not selected(code):
            return False
        values.update(node=node or "model", op_type=op_type or "", file=res.filename)
        res.findings.append(Finding(code=code, name=rule.name, severity=rule.severity, target=result.target,
                                    filename=res.filename, node=node_path(node), op_type=op_type,
                                    message=render_values(rule.message, values, cap=rule.own),
                                    hint=render_values(rule.hint, values, cap=rule.own) if rule.hint else "",
                                    short_message=render_values(rule.message, values, LOCATION_ROOTS, rule.own)
                                    if node and names_location(rule.message) else None))
        return True

    if result.error or result.unverified:
        return add("OLX903", error=result.error or result.unverified)
    for checks, code in ((result.missed, "OLX901"), (result.false_alarms, "OLX902")):
        for c in checks:
            add(code, c.location, c.op_type, provider=c.ran_on, predicted=c.predicted_ep)
    for f in res.findings:
        # a finding learns where its node ran only from a session of its own target's providers
        where = node_location(f.node)
        if where in result.ran_on and f.verified is None and f.target in (result.target, "any"):
            f.verified = result.ran_on[where]
    return False
