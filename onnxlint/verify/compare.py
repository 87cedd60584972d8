"""The prediction against a real session: typed per-node results, no parsing of location strings.

Confirmed, missed and false alarms are about CPU placement: a node predicted on CPU that ran on CPU is a
confirmed fallback; one that ran on CPU unpredicted is a miss (OLX901); predicted CPU but ran on the device is
a false alarm (OLX902); a session that could not be built is OLX903.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"


@dataclass(frozen=True)
class NodeCheck:
    location: str
    op_type: str
    predicted_ep: str  # "no provider" when none has a kernel
    ran_on: str


@dataclass
class VerifyResult:
    filename: str
    target: str
    providers_requested: list[str]
    error: str | None = None
    providers_used: list[str] = field(default_factory=list)
    cuda_unavailable: str | None = None
    run_error: str | None = None
    confirmed: list[NodeCheck] = field(default_factory=list)
    missed: list[NodeCheck] = field(default_factory=list)
    false_alarms: list[NodeCheck] = field(default_factory=list)
    agree_on_device: int = 0
    nodes_observed: int = 0
    unmatched: int = 0  # observed nodes with no predicted node of that name
    on_cpu: int = 0
    ran_on: dict[str, str] = field(default_factory=dict)  # node location -> provider

    @property
    def agree(self) -> int:
        return len(self.confirmed) + self.agree_on_device

    @property
    def failed(self) -> bool:
        """A failed session is not a pass; neither is a miss."""
        return self.error is not None or bool(self.missed)

    def notes(self) -> list[str]:
        """What the reader must know to trust the numbers: no CUDA session, or a run that failed."""
        return [n for n in (self.cuda_unavailable, self.run_error) if n]

    def summary_line(self) -> str:
        if self.error:
            return f"verify failed: {self.error}"
        head = (f"verify ({', '.join(self.providers_used)}): {self.nodes_observed} nodes observed, "
                f"{self.on_cpu} on CPU; ")
        matched = self.nodes_observed - self.unmatched
        tail = f" ({self.unmatched} unnamed or unmatched)" if self.unmatched else ""
        if self.target == "ort-cpu":
            return head + f"{self.agree}/{matched} agree with the ort-cpu prediction, missed {len(self.missed)}" + tail
        return head + (f"confirmed fallbacks {len(self.confirmed)}, missed {len(self.missed)}, "
                       f"false alarms {len(self.false_alarms)}") + tail

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}  # absent: not applicable
        for k in ("confirmed", "missed", "false_alarms"):
            out[k] = [c["location"] for c in out[k]]
        out["details"] = [asdict(c) for c in (*self.confirmed, *self.missed, *self.false_alarms)]
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

    def as_json(self) -> dict[str, Any]:
        return {"filename": self.filename, "before": self.before.as_json(), "fix": self.fix_notes,
                "after": self.after.as_json()}


def target_for(providers: list[str]) -> str:
    return "ort-cuda" if CUDA in providers else "ort-cpu"


def verify_file(path: Path, providers: list[str], shapes: dict[str, list[int]], timeout: float = 300,
                ort_version: str | None = None) -> VerifyResult:
    """Predict, run a real session, compare."""
    from onnxlint import api
    from onnxlint.verify.session import run_session

    target = target_for(providers)
    result = VerifyResult(str(path), target, providers)
    run = run_session(path, providers, shapes, timeout)
    if run.error:
        result.error = run.error
        return result
    if target == "ort-cuda" and CUDA not in run.providers:
        why = run.cuda_problem or "the session did not take the CUDA EP"
        result.cuda_unavailable = (f"CUDAExecutionProvider was requested but the session has only "
                                   f"{', '.join(run.providers)}: {why}; `onnxlint doctor` checks the stack. "
                                   "Verified against the ort-cpu prediction instead.")
        target = result.target = "ort-cpu"
    if run.run_error:
        result.run_error = (f"the session was created but its run failed ({run.run_error}); placements come "
                            "from the session log. Dynamic dims default to 1: pass --shape name=1x3x224x224")
    prediction = api.predict(path, target, ort_version)
    by_name = {p.node.name: p for p in prediction.nodes.values() if p.node.name}
    observed = dict(run.log_nodes or run.profile_nodes)
    if not run.log_nodes and run.all_on:
        # the log names no nodes when one provider took them all: every main-graph node ran there
        main = {name: run.all_on[0] for name, p in by_name.items()
                if p.node.scope.owner is None and not p.node.scope.is_function}
        observed = {**main, **run.profile_nodes}
    result.providers_used = run.providers
    result.nodes_observed = len(observed)
    result.on_cpu = sum(1 for v in observed.values() if v == CPU)
    for name, ran in observed.items():
        p = by_name.get(name)
        if p is None:
            result.unmatched += 1
            continue
        record(result, NodeCheck(p.node.location, p.node.op_type, p.ep or "no provider", ran))
    return result


def record(result: VerifyResult, check: NodeCheck) -> None:
    """Count one observed node: confirmed fallback, miss, false alarm, or agreement on the device."""
    result.ran_on[check.location] = check.ran_on
    predicted_cpu = check.predicted_ep in (CPU, "no provider")
    if check.ran_on == CPU:
        (result.confirmed if predicted_cpu else result.missed).append(check)
    elif predicted_cpu:
        result.false_alarms.append(check)
    else:
        result.agree_on_device += 1


def attach(res: Any, result: VerifyResult, ruleset: Any, selected: Any = lambda code: True) -> None:
    """Verification findings (OLX901-903) into a lint report, and each lint finding on an observed node
    learns where the node really ran (Finding.verified)."""
    from onnxlint.messages import render_values
    from onnxlint.report import Finding

    rules = ruleset.by_id()

    def add(code: str, node: str | None = None, op_type: str | None = None, **values: Any) -> None:
        rule = rules.get(code)
        if rule is None or not selected(code):
            return
        values.update(node=node or "model", op_type=op_type or "", file=res.filename)
        res.findings.append(Finding(code=code, name=rule.name, severity=rule.severity, target=result.target,
                                    filename=res.filename, node=node, op_type=op_type,
                                    message=render_values(rule.message, values), hint=rule.hint or ""))

    if result.error:
        add("OLX903", error=result.error)
        return
    for checks, code in ((result.missed, "OLX901"), (result.false_alarms, "OLX902")):
        for c in checks:
            add(code, c.location, c.op_type, provider=c.ran_on, predicted=c.predicted_ep)
    for f in res.findings:
        if f.node in result.ran_on and f.verified is None and f.target in ("ort-cuda", "ort-cpu", "any"):
            f.verified = result.ran_on[f.node]
