"""Linting: one model (a file or a ModelProto) into a FileReport, and many files into a Report.

The core the CLI, the public API and `verify` share; it knows nothing of argparse or output formats.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from onnxlint import targets as targets_mod
from onnxlint.config.settings import Settings
from onnxlint.linting.report import FileReport, Report
from onnxlint.model.lfs import LfsPointer
from onnxlint.model.paths import expand_paths
from onnxlint.rules.codes import doc_string_suppresses, matches, prefix_set
from onnxlint.support import collector
from onnxlint.support.errors import InputError, RuleError, UsageError, did_you_mean, first_line

if TYPE_CHECKING:  # imported where used: the CLI imports this module on a cache hit, which must not load onnx
    import onnx

    from onnxlint.model import loading
    from onnxlint.model.graph import NodeRef
    from onnxlint.rules.context import Options
    from onnxlint.rules.rule import Rule, RuleSet

Progress = Callable[[int, int, str], None]


def options_for(settings: Settings) -> Options:
    from onnxlint.rules.context import Options

    return Options(targets=targets_mod.closure(settings.targets), explicit_targets=frozenset(settings.explicit_targets),
                   ort_version=settings.ort_version, trt_version=settings.trt_version,
                   ort_optimization=settings.ort_optimization)


def model_file(model: onnx.ModelProto, display: str = "<model>", base_dir: Path | None = None) -> loading.ModelFile:
    """A ModelFile for an in-memory model; external data (if any) resolves in base_dir, never elsewhere."""
    from onnxlint.model import loading

    mf = loading.ModelFile(path=Path(base_dir or ".") / display, display=display, model=model,
                           file_size=model.ByteSize())
    if base_dir is not None:
        mf.external = loading.external_tensors(model, Path(base_dir))
    return mf


class LintPlan:
    """What linting a model with some settings runs, resolved once per settings: the rule set (built-in and
    the settings' rule folders), the selected rules, the prediction options, and whether a selected rule that
    applies to the targets reads onnx.checker's verdict (load then checks the bytes before parsing them).
    A plain class: this module is imported by a cached run, which makes no plan."""

    __slots__ = ("ruleset", "rules", "options", "checker_wanted")

    def __init__(self, ruleset: RuleSet, rules: list[Rule], options: Options, checker_wanted: bool) -> None:
        self.ruleset = ruleset
        self.rules = rules
        self.options = options
        self.checker_wanted = checker_wanted


RuleSource = Callable[[tuple[Path, ...]], Any]  # rule folders -> their RuleSet (built-in rules included)


def plan_for(settings: Settings, rulesets: RuleSource | None = None) -> LintPlan:
    """The plan of a lint with these settings; rulesets: where the RuleSet comes from (None:
    ruleset.get_ruleset; the CLI passes the result cache's copy of the parsed rules)."""
    ruleset = ruleset_for(settings.rule_dirs, rulesets)
    rules = [r for r in ruleset.rules if settings.selected(r.id, r.default)]
    options = options_for(settings)
    return LintPlan(ruleset, rules, options, _wants_checker(rules, options.targets))


def _plan_or_error(settings: Settings, rulesets: RuleSource | None) -> LintPlan | Exception:
    """The plan, or why it cannot be had: a model that cannot be read is reported as such first, and the
    error (a malformed rule file: raised; anything else: the file's internal error) where the lint would start."""
    try:
        return plan_for(settings, rulesets)
    except Exception as exc:  # noqa: BLE001 - raised again by _lint, where it is reported
        return exc


def lint_file(path: Path, settings: Settings, want_placement: bool = True, rulesets: RuleSource | None = None,
              plan: LintPlan | None = None, digest: bool = False,
              prefetched: tuple[bytes, str, os.stat_result] | None = None) -> FileReport:
    """Lint one model file (plan: the settings' plan when the caller has it, else made here). The cyclic GC is
    paused meanwhile: indexing allocates an object per node and value, and generation scans over them cost a
    third of the walk on large models. digest: the report carries the blake2b of the bytes linted (for the
    result cache); prefetched: the file's bytes, their blake2b and fstat as the result cache's key read them (linted
    instead of reading the file again)."""
    from onnxlint.model.loading import native

    with native.one_model():  # a native call past its limit: this model's later ones are not run
        return _lint_file(path, settings, want_placement, rulesets, plan, digest, prefetched)


def _lint_file(path: Path, settings: Settings, want_placement: bool, rulesets: RuleSource | None,
               plan: LintPlan | None, digest: bool, prefetched: tuple[bytes, str, os.stat_result] | None) -> FileReport:
    from onnxlint.model import loading

    given = settings  # a `--format html` page is made with the settings as given (Settings.page_maker)
    intent = _genai_targets(path, settings)
    if intent is not None:  # the GenAI builder's config says which EP the model was built for
        settings, plan = intent, None
    got = plan if plan is not None else _plan_or_error(settings, rulesets)
    res = FileReport(str(path), targets=settings.targets if intent is not None else None)
    try:
        mf = loading.load(path, check=isinstance(got, LintPlan) and got.checker_wanted, lean=True, digest=digest,
                          prefetched=prefetched)
    except LfsPointer as exc:  # a checkout without Git LFS: a finding (OLX009), not an unreadable model
        if not isinstance(got, LintPlan):
            res.error = exc.message
            return res
        _lfs_pointer(exc, got, settings, res)
        return res
    except InputError as exc:
        res.error = exc.message
        return res
    res.digest = mf.digest
    if intent is not None:
        res.notes.append("genai_config.json: built for ONNX Runtime's CPU EP, checked as ort-cpu")
    return _lint_loaded(mf, settings, got, want_placement, res, given)


def _lfs_pointer(exc: LfsPointer, plan: LintPlan, settings: Settings, res: FileReport) -> None:
    """The file rules (scope `file`: OLX009) of a Git LFS pointer, when selected, as findings of the file."""
    from onnxlint.linting.report import Finding
    from onnxlint.model.lfs import describe_size
    from onnxlint.rules.messages import render_values

    values = {"file": res.filename, "oid": exc.oid, "size": describe_size(exc.size)}
    for rule in plan.rules:
        if rule.scope == "file":
            own = {**values, "rule": rule.id}
            # the hint is a template as the message is (checked as one on load): it was shown with its `{file}`
            res.findings.append(Finding(code=rule.id, name=rule.name, severity=rule.severity, target="any",
                                        filename=res.filename, node=None, op_type=None,
                                        message=render_values(rule.message, own, cap=rule.own),
                                        hint=render_values(rule.hint, own, cap=rule.own) if rule.hint else ""))
    _post_process(res, settings, settings.config.ignored_for(res.filename), frozenset())


def _genai_targets(path: Path, settings: Settings) -> Settings | None:
    """Default targets of a GenAI model built for the CPU EP (genai_config.json beside it): ort-cpu, not ort-cuda.
    Targets the user named are kept."""
    if settings.explicit_targets or "ort-cuda" not in settings.targets:
        return None
    from onnxlint.config import deployment

    if deployment.genai_provider(path) != "cpu":
        return None
    from dataclasses import replace

    return replace(settings, targets=tuple("ort-cpu" if t == "ort-cuda" else t for t in settings.targets))


def _content_targets(index: Any, settings: Settings) -> tuple[Settings, str] | None:
    """The default targets of a model whose content says ORT runs it on its CPU EP (model.intent.cpu_model: a
    classic-ML model): ort-cpu, with the one line saying so. Targets the user named are kept."""
    if settings.explicit_targets or not {"ort-cuda", "tensorrt"} & set(settings.targets):
        return None
    from onnxlint.model import intent

    why = intent.cpu_model(index)
    if why is None:
        return None
    from dataclasses import replace

    return (replace(settings, targets=("ort-cpu",)),
            f"{why} is checked as a CPU model (ort-cpu); name --target ort-cuda or tensorrt to check it for a GPU")


def lint_model(model: onnx.ModelProto, settings: Settings, display: str = "<model>",
               base_dir: Path | None = None, want_placement: bool = True) -> FileReport:
    from onnxlint.model.loading import native

    with native.one_model():
        return _lint_loaded(model_file(model, display, base_dir), settings, _plan_or_error(settings, None),
                            want_placement, FileReport(display), settings)


def _lint_loaded(mf: loading.ModelFile, settings: Settings, plan: LintPlan | Exception, want_placement: bool,
                 res: FileReport, page: Settings | None = None) -> FileReport:
    """page: the settings a `--format html` page is made with (Settings.page_maker), as given to the caller."""
    with collector.paused():
        _lint(mf, settings, plan, want_placement, res, page=page)
    return res


def ruleset_for(rule_dirs: tuple[Path, ...], rulesets: RuleSource | None = None) -> Any:
    """The RuleSet of rule_dirs (built-in rules included), from rulesets when given, else ruleset.get_ruleset."""
    if rulesets is not None:
        return rulesets(tuple(rule_dirs))
    from onnxlint.rulefiles.ruleset import get_ruleset

    return get_ruleset(rule_dirs)


def _fixable(rule: Rule, node: NodeRef | None, model: Any, lint: Any = None) -> str | None:
    """fixers.base.fix_for, imported when a shown finding names a fixer (a lint with none imports no fixer)."""
    fix: str | None = _fixers_base().fix_for(rule, node, model, lint)
    return fix


@functools.cache
def _fixers_base() -> Any:
    """The module fixers.base, imported once (an import statement costs a microsecond a call: 266k findings at
    1M nodes)."""
    from onnxlint.fixers import base

    return base


def _lint(mf: loading.ModelFile, settings: Settings, plan: LintPlan | Exception, want_placement: bool,
          res: FileReport, _retried: bool = False, page: Settings | None = None) -> None:
    from onnxlint.linting import engine
    from onnxlint.model import loading

    given, planned, notes = settings, plan, list(res.notes)  # what a retry starts from (the caller's notes kept)
    try:
        if isinstance(plan, Exception):
            raise plan
        mf.checker_wanted = plan.checker_wanted
        if mf.raw is not None and mf.checker_wanted:  # not already checked by load
            # before the index: the checker's own copy of the model then adds to the parsed model alone, not to
            # the index and the inferred copy too (a lower peak); the bytes go once inference
            # has cut its weight-less copy out of them, before onnx's copies of the model and the index
            loading.checker_result(mf)
        index = loading.index_model(mf)
        intent = _content_targets(index, settings)
        if intent is not None:  # a classic-ML model: checked where ORT runs it, the CPU EP
            settings, note = intent
            plan = LintPlan(plan.ruleset, plan.rules, options_for(settings), plan.checker_wanted)
            res.notes.append(note)
            res.targets = settings.targets
        ctx = engine.new_context(mf, index, plan.options, plan.ruleset, targets_mod.REGISTRY)
        # a finding that will be suppressed does not count as "reported" (`reported_by`): the user would see
        # neither it nor the target finding it stands for
        file_ignores, model_ignores = _file_suppressions(mf, settings, res.filename)
        ctx.suppressed_codes = prefix_set((*file_ignores, *model_ignores))
        res.findings = engine.lint(ctx, plan.rules, fixable=_fixable, deferred=True)
        if ctx.rules_over_budget:
            left = list(dict.fromkeys(ctx.rules_over_budget))
            more = f" and {len(left) - 10:,} more" if len(left) > 10 else ""
            res.notes.append(f"{len(left):,} rule{'s' if len(left) != 1 else ''} of your own not evaluated, past "
                             f"their budget for this model ({engine.OWN_RULE_FLOOR:,} + {engine.OWN_RULE_WORK} "
                             f"predicates a node): {', '.join(left[:10])}{more}")
        _post_process(res, settings, file_ignores, model_ignores)
        # details for what the run shows: an info's only when infos are shown (severity as overridden)
        engine.complete(ctx, _fixable, None if settings.info_details else _not_info)
        _word_fix_applicability(res.findings, ctx.active_rules)
        from onnxlint.linting.fix_promise import withhold_unverifiable

        withhold_unverifiable(res.findings, ctx)
        if "ort-trt" in settings.targets and "tensorrt" not in settings.targets:
            _through_tensorrt_ep(res, ctx, settings)
        if want_placement:
            for name in settings.targets:
                target = targets_mod.get(name)
                if ctx.predicted(name) or target.predicate is None:
                    pred = ctx.prediction(name)
                    if target.reports_summary:
                        res.placement[name] = target.summary_line(pred)
                    res.notes.extend(n for n in target.notes(pred) if n not in res.notes)
        if page is not None and page.page_maker is not None:
            res.page = page.page_maker(page, mf, index, ctx, plan.ruleset, res.filename)
    except RecursionError:
        res.error = "graph nesting too deep to analyse"
    except (RuleError, UsageError):
        raise
    except loading.BYTES_ERRORS as exc:  # a string field that is not UTF-8 comes as bytes: linted again with it made text
        if _retried or not loading.repair_strings(mf.model):
            res.error = f"internal error while linting ({type(exc).__name__}: {first_line(exc)})"
            return
        mf.inferred = mf.raw = mf.weightless = None  # inferred again, from the repaired model
        res.findings, res.placement, res.notes = [], {}, notes
        # the page is placed from the repaired model too: loading the file again would meet the same bytes
        _lint(mf, given, planned, want_placement, res, _retried=True, page=page)
    except Exception as exc:  # a defect in onnxlint must not hide the other files' findings
        res.error = f"internal error while linting ({type(exc).__name__}: {first_line(exc)})"


def _not_info(f: Any) -> bool:
    return bool(f.severity != "info")


def _word_fix_applicability(findings: list[Any], rules: dict[str, Rule]) -> None:
    """An unsafe (or display-only) fixer's findings say so in their hint (fixers.base.worded_hint; that module is
    imported already when a finding names a fixer); a finding its rule's fixer declines, as that fixer words it
    (fixers.base.declined_hint: OLX007's fixer clears one of ORT's refusals only, the others say "no automatic fix"
    as before it had one)."""
    from onnxlint.linting.engine import DECLINED

    for f in findings:
        if f.fix:
            from onnxlint.fixers.base import worded_hint

            f.hint = worded_hint(f.hint, f.fix)
        elif f.hint == DECLINED and f.code in rules:
            from onnxlint.fixers.base import declined_hint

            f.hint = declined_hint(rules[f.code].fix, f.hint)


def _through_tensorrt_ep(res: FileReport, ctx: Any, settings: Settings) -> None:
    """Under ORT's TensorRT EP (`--target ort-trt`, TensorRT not named itself), a node TensorRT's parser rejects
    is no error: the EP hands it to CUDA (or CPU) and the session runs. Such a finding says where it runs and is
    a warning (the TensorRT engine is split around it); a node no provider takes stays an error. What the CUDA EP
    would do with a node TensorRT takes is no finding of this deployment (ort-cuda not named itself)."""
    from onnxlint.model.locations import node_location

    partition = ctx.prediction("ort-trt")
    on_cuda, on_cpu = set(partition.cuda_nodes), set(partition.cpu_nodes)
    elsewhere = on_cuda | on_cpu | set(partition.unsupported)
    # a model ORT's loader refuses (opset or IR version past the release: OLX203) is refused whatever the EPs; a
    # refusal of the CUDA EP's partition (a fusion's node with no CUDA kernel, 1.23's initializer copy) is not made
    # where TensorRT takes those nodes, and is kept only on a node the TensorRT EP hands to CUDA or CPU
    cuda = ctx.prediction("ort-cuda")
    refused = {n.location for n in cuda.by_status(False).get("refused", ())} if cuda.loader_refused() else set()
    kept = []
    for f in res.findings:
        where = node_location(f.node) if f.node and not f.node.startswith("input:") else None
        if f.target == "ort-cuda" and "ort-cuda" not in settings.targets and where and where not in elsewhere \
                and where not in refused:
            continue  # TensorRT runs it
        if f.target == "tensorrt" and f.severity == "error" and where in elsewhere - set(partition.unsupported):
            f.severity, f.target = "warning", "ort-trt"
            ep = "CUDA: the TensorRT engine is split around it" if where in on_cuda else \
                "CPU (OLX200 says why CUDA does not take it)"
            f.message = f"{f.message}; ORT's TensorRT EP hands it to {ep}"
        elif f.target == "tensorrt" and f.severity == "error" and f.node is None and f.code in _MODEL_REJECTIONS:
            _model_rejection_through_ep(f, ctx, on_cuda, on_cpu)
        kept.append(f)
    res.findings = kept


def _rejected_qdq(v: Any) -> bool:
    from onnxlint.tensorrt.verdicts import QDQ_OPS

    return v.status == "unsupported" and v.node.op_type in QDQ_OPS and v.reason != "ort-op"


def _rejected_import(v: Any) -> bool:
    from onnxlint.tensorrt.verdicts import QDQ_OPS

    return v.reason == "network-import" and v.node.op_type not in QDQ_OPS


# a model's TensorRT rejection said once (scope: model) -> the nodes it stands for (as the rule's text counts them)
_MODEL_REJECTIONS = {"OLX318": _rejected_qdq, "OLX319": _rejected_import}


def _model_rejection_through_ep(f: Any, ctx: Any, on_cuda: set[str], on_cpu: set[str]) -> None:
    """OLX318/OLX319 under ORT's TensorRT EP: the parser's rejection of the model's Q/DQ nodes or of a tensor it
    cannot import is no error when every node it stands for runs on CUDA or CPU (the EP leaves them out of its
    TensorRT subgraphs, as the ort-trt summary counts): a warning saying where, as for one rejected node."""
    nodes = [v.node.location for v in ctx.prediction("tensorrt").nodes.values() if _MODEL_REJECTIONS[f.code](v)]
    if not nodes or not all(n in on_cuda or n in on_cpu for n in nodes):
        return
    cuda, cpu = sum(1 for n in nodes if n in on_cuda), sum(1 for n in nodes if n in on_cpu)
    them = "it" if len(nodes) == 1 else "them"
    ep = (f"CUDA: the TensorRT engine is split around {them}" if not cpu else
          "CPU (OLX200 says why CUDA does not take it)" if not cuda and len(nodes) == 1 else
          "CPU (OLX200 says why CUDA does not take them)" if not cuda else
          f"CUDA ({cuda}) and CPU ({cpu}): the TensorRT engine is split around them")
    f.severity, f.target = "warning", "ort-trt"
    f.message = f"{f.message}; ORT's TensorRT EP hands {them} to {ep}"


def _wants_checker(rules: list[Any], targets: set[str]) -> bool:
    """Whether one of the selected rules that applies to the targets reads the checker's verdict."""
    return any(_asks_checker(r) for r in rules if r.applies_to(targets))


def _asks_checker(rule: Any) -> bool:
    """Whether a rule's match or message reads onnx.checker's verdict (the `checker` model predicate,
    `{model.checker_error}`)."""
    if "checker_error" in (rule.message or ""):
        return True
    todo: list[Any] = [rule.match]
    while todo:
        m = todo.pop()
        if isinstance(m, dict):
            if "checker" in m:
                return True
            todo.extend(m.values())
        elif isinstance(m, list):
            todo.extend(m)
    return False


def _file_suppressions(mf: loading.ModelFile, settings: Settings,
                       filename: str) -> tuple[list[str], frozenset[str]]:
    """(per-file-ignores codes for this file, codes the model's metadata ignores: a set, matched in time linear in
    a finding's code however many the model names)."""
    meta = {p.key: p.value for p in mf.model.metadata_props}
    model_ignores = prefix_set(c.strip() for c in meta.get("onnxlint:ignore", "").split(","))
    return settings.config.ignored_for(filename), model_ignores


def _post_process(res: FileReport, settings: Settings, file_ignores: list[str], model_ignores: frozenset[str]) -> None:
    """Severity overrides and suppressions (per-file-ignores, model metadata: file_suppressions; node doc_string).
    What the file's and the model's ignores say is asked once a rule code, not once a finding (266k at 1M nodes)."""
    severity = settings.config.severity
    by_code: dict[str, str | None] = {}
    for f in res.findings:
        code = f.code
        if code in severity:
            f.severity = severity[code]
        if code in by_code:
            why = by_code[code]
        else:
            why = by_code[code] = ("per-file-ignores" if matches(code, file_ignores) else
                                   "metadata" if matches(code, model_ignores) else None)
        if why is not None:
            f.suppressed = why
        elif doc_string_suppresses(f.doc_string, code):
            f.suppressed = "doc_string"


def check_selection(settings: Settings, ruleset: Any) -> None:
    """Every code or prefix in select/ignore/extend-select and per-file-ignores, and every code the severity table
    sets is a rule's (a misspelt severity override did nothing, silently).

    ruleset: a RuleSet, or the cache's RuleIndex (its rules' ids and knows() are all this reads)."""
    codes = list(settings.selection_codes())
    cfg = settings.config
    for pattern_codes in cfg.per_file_ignores.values():
        codes += pattern_codes
    # a code the config file names is said with the file's name (a typo in a committed config, not on the command line)
    configured = {*(cfg.select or ()), *cfg.extend_select, *cfg.ignore, *(c for cs in cfg.per_file_ignores.values() for c in cs)}
    ids = [r.id for r in ruleset.rules]
    for code in codes:
        if not ruleset.knows(code):
            where = f"{cfg.path}: " if cfg.path is not None and code in configured else ""
            raise UsageError(f"{where}unknown rule code or prefix {code!r}{_did_you_mean(code, ruleset.knows, ids)}; "
                             "see --list-rules")
    for code in cfg.severity:  # a code, not a prefix: the table sets the severity of that rule
        if code not in ids:
            hint = " (a prefix: name each rule's code)" if ruleset.knows(code) else _did_you_mean(code, ids.__contains__, ids)
            where = f"{cfg.path}: " if cfg.path is not None else ""
            raise UsageError(f"{where}severity: unknown rule code {code!r}{hint}; see --list-rules")


def _did_you_mean(code: str, known: Callable[[str], bool], ids: list[str]) -> str:
    digits = code[:3] + code[3:].upper().replace("O", "0")  # OLX2OO: letter O typed for zero
    return f" (did you mean '{digits}'?)" if known(digits) else did_you_mean(code, ids)


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


POOL_MIN_BYTES = 4_000_000  # below this a folder is linted faster than worker processes start


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, a container's cpuset), else the machine's count."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(jobs: int, models: int) -> int:
    """Worker processes for a run: bounded by the work and the machine, min(--jobs or one per CPU, the models,
    the usable CPUs): `--jobs 120` on 16 models starts at most 16 on a machine with 16 CPUs or more (a worker
    holds onnx and numpy, ~150 MB; more than the CPUs only share them)."""
    return max(1, min(jobs or usable_cpus(), models, usable_cpus()))


def _pool_context() -> Any:
    """fork on Linux, what the pool was written for and Linux's default before Python 3.14. 3.14's default,
    forkserver, starts its server as `python -c`, the current folder first on its import path: in the repository
    under review, a committed `multiprocessing/` or `socket.py` ran there. Elsewhere spawn (fork being unsafe on
    macOS), whose workers and resource tracker start the same way: _safe_path keeps the folder off their path.
    None where it cannot (Python 3.10 outside Linux): no pool, the models are linted here one at a time."""
    import multiprocessing

    if _start_method() == "fork":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn") if sys.version_info >= (3, 11) else None


def _start_method() -> str:
    return "fork" if sys.platform.startswith("linux") else "spawn"


@contextlib.contextmanager
def _safe_path(context: Any) -> Iterator[None]:
    """PYTHONSAFEPATH=1 (Python 3.11+: no current folder on sys.path) while a spawn pool starts its processes: they
    inherit the environment, and no command line of theirs can be given -P. Put back as it was after."""
    if context.get_start_method() == "fork":
        yield
        return
    before = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = before


def lint_paths(paths: Iterable[Path | str], settings_for: Callable[[Path], Settings], jobs: int = 0,
               progress: Progress | None = None, digest: bool = False, rulesets: RuleSource | None = None,
               prefetched: dict[Path, tuple[bytes, str, os.stat_result]] | None = None, expanded: bool = False) -> Report:
    """Lint files, folders and globs; 16 or more models are linted by a process pool when it pays: with
    jobs > 1, or by default (one worker per core) when they hold POOL_MIN_BYTES or more. A worker starts by
    importing onnx and numpy, which tiny models do not repay (benchmarks/README.md, "Folders"). rulesets: as for plan_for (a
    pool worker gets it with each model: it must pickle). In one process, the plan is made once per settings.
    prefetched: files' bytes and digests already read (lint_file's; taken from the dict as each is linted; a
    pool reads its files itself). expanded: paths are files expand_paths gave (the CLI's): taken as they are, never
    expanded again (a walked `a[1].onnx` read as a pattern added `a1.onnx`, and a cached run's reports, paired
    with its misses by position, then named the wrong files)."""
    files = [Path(p) for p in paths] if expanded else expand_paths([str(p) for p in paths])
    report = Report()
    workers = pool_size(jobs, len(files))
    from onnxlint.support import interrupt

    context = _pool_context() if workers > 1 and len(files) >= 16 else None
    if context is not None and (jobs > 1 or sum(_size(f) for f in files) >= POOL_MIN_BYTES):
        from concurrent.futures import ProcessPoolExecutor

        # not a `with`: its exit waits for every queued model; an interrupt kills the workers instead
        with _safe_path(context):  # a spawn pool starts multiprocessing's resource tracker here
            pool = ProcessPoolExecutor(max_workers=workers, initializer=interrupt.pool_worker_init, mp_context=context)
        try:
            # submit forks (or spawns) the workers: a signal during a fork's Python hooks was dropped
            with interrupt.held(), _safe_path(context):
                futures = [pool.submit(lint_file, f, settings_for(f), True, rulesets, None, digest) for f in files]
            for i, fut in enumerate(futures, 1):
                report.files.append(fut.result())
                if progress:
                    progress(i, len(files), str(files[i - 1]))
            # inside the try: a signal while it waits for the pool's threads left the manager thread closing its
            # wake-up pipe as Python's exit hook wrote to it (EBADF, a traceback after the report; seen on 3.10)
            pool.shutdown()
        except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM as the CLI raises it (interrupt.Interrupted)
            interrupt.stop_pool(pool)
            raise interrupt.interrupted(exc, report.files) from None
    else:
        plans: dict[int, tuple[Settings, LintPlan | Exception]] = {}  # by settings object (kept: ids stay unique)
        try:
            for i, f in enumerate(files, 1):
                settings = settings_for(f)
                if id(settings) not in plans:
                    plans[id(settings)] = (settings, _plan_or_error(settings, rulesets))
                plan = plans[id(settings)][1]
                read = prefetched.pop(f, None) if prefetched else None
                if isinstance(plan, LintPlan):
                    report.files.append(lint_file(f, settings, plan=plan, digest=digest, prefetched=read))
                else:
                    report.files.append(lint_file(f, settings, rulesets=rulesets, digest=digest, prefetched=read))
                if progress:
                    progress(i, len(files), str(f))
        except KeyboardInterrupt as exc:
            raise interrupt.interrupted(exc, report.files) from None
    return report


def show_progress(files: list[Path]) -> bool:
    """A progress bar pays for itself on many files or much data."""
    return len(files) >= 5 or sum(_size(f) for f in files) > 200e6
