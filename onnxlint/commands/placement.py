"""`onnxlint placement`: per node, the execution provider ORT assigns, for each model the paths name (text,
JSON, or one HTML page, optionally beside a second release)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from onnxlint.support import collector
from onnxlint.support.errors import InputError, UsageError
from onnxlint.support.escape import text as esc


def run(models: list[Path], target: str | None, ort_version: str | None, ort_optimization: str | None, format: str,
        compare: str | None = None, output: Path | None = None) -> int:
    """Print (or write to output) each model's placement; the exit code: 2 when a model could not be read, else 0.
    target, ort_version and ort_optimization None: each model's, as its lint has them (release_for)."""
    from onnxlint.model import loading

    if compare and format != "html":
        raise UsageError("--compare: only with --format html (the page shows both releases side by side)")
    paths = loading.expand_paths([str(m) for m in models])
    if output is not None:
        from onnxlint.commands.lint import check_report_output

        check_report_output(output, paths, ".txt" if format == "text" else f".{format}")
    if format == "html":
        from onnxlint.formats import html_report

        text, failed = html_report.placement_page(paths, lambda path: release_for(path, target, ort_version,
                                                                                 ort_optimization), compare)
        for line in failed:
            print(f"onnxlint: error: {esc(line)}", file=sys.stderr)
        _write((text,), output)
        return 2 if failed else 0
    from onnxlint.formats import placement_output

    results = _Placements(paths, target, ort_version, ort_optimization)
    _write(placement_output.render(format, results), output)  # written as made: 1M nodes' rows are never held
    return 2 if results.unread else 0


def release_for(path: Path, target: str | None, ort_version: str | None, ort_optimization: str | None
                ) -> tuple[str | None, str | None, str]:
    """The target, ORT release and graph optimization level a model is placed at: the command line's, else those of
    the config in force for it (the nearest pyproject.toml or .onnxlint.yaml, as its lint finds it), else ort-cuda
    (ort-cpu for a GenAI model built for the CPU EP, as its lint checks it) on the newest table at `all`. A model is
    placed as its lint places it: the lint's summary line said 1.20.2 (the config's ort-version) and `onnxlint
    placement` placed the model at 1.31.1; a config's `targets = ["ort-cpu"]` was placed on ort-cuda. The target is
    the config's (_target_of: ort-cuda where it names it, else ort-cpu where it names that; `tensorrt` has no
    placement: ort-cuda stands for its fallback). None: no target named, by the command line, the config or a
    genai_config.json: ort-cuda, or ort-cpu where the model's content says ORT runs it on its CPU EP (a classic-ML
    model), as its lint's default targets are (api._predict's by_content)."""
    if target is None or ort_version is None or ort_optimization is None:
        from onnxlint.config import config_file

        cfg = config_file.find_for(path.parent)
        ort_version = ort_version if ort_version is not None else cfg.ort_version
        ort_optimization = ort_optimization or cfg.ort_optimization
        if target is None:
            target = _target_of(path, cfg.targets or [])
    return target, ort_version, ort_optimization or "all"


def _target_of(path: Path, named: list[str]) -> str | None:
    """The placement target of a model under a config naming these targets: ort-cuda where it names it, else the
    ORT target it names (ort-cpu); with none named, ort-cpu for a GenAI model whose genai_config.json says it was built for the CPU EP
    (the lint's linter._genai_targets), else None (the model's content decides: release_for)."""
    from onnxlint import targets

    placed = [t for t in named if targets.REGISTRY[t].predicate == "placement"]  # ORT's EPs, the CPU EP behind them
    if placed:  # both named: the CUDA EP's placement, whose CPU fallbacks are the CPU EP's nodes
        return "ort-cuda" if "ort-cuda" in placed else placed[0]
    if not named:
        from onnxlint.config import deployment

        if deployment.genai_provider(path) == "cpu":
            return "ort-cpu"
        return None
    return "ort-cuda"


def _write(pieces: Iterable[str], output: Path | None) -> None:
    if output is None:
        sys.stdout.writelines(pieces)
        return
    from onnxlint.model import write_guard

    try:
        write_guard.replace_text(output, pieces)
    except OSError as exc:  # a full disk, a folder gone: one line, exit 2
        raise UsageError(f"-o {output}: cannot write the report: {exc.strerror or exc}") from None


class _Placements:
    """Each readable model's placement document, made when the output reaches it (one model's prediction held at a
    time); a model that could not be read is said on stderr and counted in unread."""

    def __init__(self, paths: list[Path], target: str | None, ort_version: str | None,
                 ort_optimization: str | None) -> None:
        self.paths, self.target, self.ort_version, self.ort_optimization = paths, target, ort_version, ort_optimization
        self.unread = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        from onnxlint import api
        from onnxlint.formats import placement_output

        for path in self.paths:
            target, version, level = release_for(path, self.target, self.ort_version, self.ort_optimization)
            try:  # (a bad config: the run's error, raised above)
                with collector.paused():  # as the lint does (linter._lint_loaded)
                    pl = api._predict(path, target or "ort-cuda", version, None, level, by_content=target is None)
            except InputError as exc:
                print(f"onnxlint: error: {esc(str(exc))}", file=sys.stderr)
                self.unread += 1
                continue
            except Exception as exc:  # noqa: BLE001 - a defect placing one model must not cost the others'
                from onnxlint.formats.html_report import placing_failed

                print(f"onnxlint: error: {esc(placing_failed(path, exc))}", file=sys.stderr)
                self.unread += 1
                continue
            yield placement_output.document(str(path), pl.target, pl)
