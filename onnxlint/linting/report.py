"""The report model every output format renders: findings, per-file errors, per-model summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from onnxlint.rules.severity import SEVERITY_RANK
from onnxlint.support.escape import text as esc


@dataclass
class Finding:
    code: str
    name: str
    severity: str
    target: str
    filename: str
    node: str | None  # node_path of its location (None: about the whole model)
    op_type: str | None
    message: str
    hint: str = ""
    fix: str | None = None
    suppressed: str | None = None  # why it is suppressed: config, per-file-ignores, metadata, doc_string
    node_name: str | None = None
    doc_string: str = ""
    fixed: bool = False
    verified: str | None = None  # provider the node ran on in a verification session (--verify)
    # the message without the node's location, for a line that starts with it (rendered from the rule's template
    # with {node} and {name} left out, never cut out of `message`); None: the same as message
    short_message: str | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def as_json(self, **after: Any) -> dict[str, Any]:
        """The finding's JSON object; after: keys a format adds at its end (JSON's `checked_against`), in the same
        dict (one dict a finding: 266k at 1M nodes)."""
        row = {"code": self.code, "name": self.name, "severity": self.severity, "target": self.target,
               "filename": self.filename, "node": self.node, "op_type": self.op_type, "message": self.message,
               "hint": self.hint, "fix": self.fix, "suppressed": self.suppressed, "fixable": self.fix is not None}
        if self.verified:
            row["verified_provider"] = self.verified
        if after:
            row.update(after)
        return row


@dataclass
class FileReport:
    """One model's findings, or the one-line error that kept it from being linted."""

    filename: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # one line; the file could not be linted
    notes: list[str] = field(default_factory=list)
    placement: dict[str, str] = field(default_factory=dict)  # target -> summary line
    # the targets the model was checked for where its content or its GenAI config chose them (a classic-ML model
    # as ort-cpu), not the settings': the summary's "Checked against" names their releases; None: the settings'
    targets: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    diff: str = field(default="", repr=False, compare=False)  # --diff: the unified diff of the fix's text form
    # the blake2b of the bytes linted, when the caller asked (the result cache stores a report only under their key)
    digest: str | None = field(default=None, repr=False, compare=False)
    # --fix found the file changed since it was read and wrote nothing (compare-and-swap): the one line to say
    write_refused: str | None = field(default=None, repr=False, compare=False)
    # --fix wrote the fixed model here (`-o`, or the file itself): the findings and placement now describe it
    written: str | None = field(default=None, repr=False, compare=False)
    # Settings.page_maker: the HTML page's data placed by the lint, without the findings, and where each node
    # location is in it (formats.html_report.placed_doc); None: the page loads and places the model itself
    page: Any = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        """One line a finding, every piece escaped as the text output escapes it: names and messages come from the
        model, its file name and the rule files, and a script printing a report (a notebook, a CI step) must not
        start a workflow command, drive the terminal or break a line where the model says."""
        name = esc(self.filename)
        if self.error:
            return f"{name}: error: {esc(self.error)}"
        lines = [f"{name}:{esc(f.node)}: {esc(f.code)} [{esc(f.severity)}] {esc(f.message)}" if f.node else
                 f"{name}: {esc(f.code)} [{esc(f.severity)}] {esc(f.message)}" for f in self.findings if not f.suppressed]
        return "\n".join(lines) if lines else f"{name}: no findings"


FileResult = FileReport  # the name before 0.2


@dataclass
class Report:
    files: list[FileReport] = field(default_factory=list)
    rules: list[Any] = field(default_factory=list)  # Rule objects that ran
    severity: dict[str, str] = field(default_factory=dict)  # rule id -> the severity the run's config gives it
    fail_on: str = "warning"  # the run's (the first model's config, or --fail-on)
    # per model file: the fail-on of the config nearest to it, where it differs from the run's
    fail_on_by_file: dict[str, str] = field(default_factory=dict)
    releases: str = ""  # the runtime releases checked (`ORT 1.31.1, TensorRT 10.1+rtx1.4`), for the summary
    # per model file: target -> the tables its findings were checked against (JSON's `checked_against`)
    checked: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed and not f.fixed]

    @property
    def errors(self) -> list[FileReport]:
        return [r for r in self.files if r.error]

    def fails(self) -> bool:
        """Whether a finding shown is at or above the fail-on of its own model's config: a config in one folder
        judges the models it applies to, never the run's other models."""
        for r in self.files:
            bar = SEVERITY_RANK[self.fail_on_by_file.get(r.filename, self.fail_on)]
            if any(SEVERITY_RANK[f.severity] >= bar for f in r.findings if not f.suppressed and not f.fixed):
                return True
        return False
