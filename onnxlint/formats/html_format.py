"""`--format html` for a lint run: the placement report page with each finding attached to its node."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from onnxlint import targets
from onnxlint.formats import html_report
from onnxlint.support.errors import InputError


def page_release(settings: Any) -> html_report.Release:
    """The placement a lint run's page shows: its ORT target (ort-trt before ort-cuda before ort-cpu; ort-cuda
    when it checks TensorRT alone), at the run's ORT release and optimization level."""
    chosen = targets.closure(settings.targets)
    target = next((t for t in html_report.PAGE_TARGETS if t in chosen), "ort-cuda")
    return html_report.Release(target, settings.ort_version, settings.ort_optimization, settings.trt_version)


def lint_page(settings: Any, mf: Any, index: Any, ctx: Any, ruleset: Any, display: str) -> Any:
    """Settings.page_maker of a `--format html` lint: the page's data for the model just linted, its placement
    taken from the lint's (FileReport.page); None where it cannot be made there: render then loads and places
    the model itself, and says what failed."""
    try:
        return html_report.placed_doc(mf, index, display, [page_release(settings)], ruleset, linted=ctx)
    except Exception:  # noqa: BLE001 - render makes it from the file, as without this, and reports there
        return None


def render(report: Any, settings_for: Callable[[Path], Any] | None = None, **_: Any) -> str:
    """settings_for: the settings each model was linted with (its config's target, release and rules)."""
    from onnxlint.config.settings import Settings

    models = []
    for res in report.files:
        if res.error:
            models.append(html_report.error_doc(res.filename, res.error))
            continue
        path = Path(res.filename)
        settings = settings_for(path) if settings_for is not None else Settings.from_config(None)
        findings = [f for f in res.findings if not f.suppressed and not f.fixed]
        if res.page is not None and not res.written:  # placed by the lint (lint_page)
            doc, at_location = res.page
            models.append(html_report.with_findings(doc, at_location, findings))
            continue
        # after --fix the findings left are the written model's: the page places that model, under its name
        shown = res.written or res.filename
        try:
            models.append(html_report.model_doc(Path(shown), shown, [page_release(settings)], findings,
                                                rule_dirs=settings.rule_dirs, lean=True))
        except InputError as exc:  # changed or gone since it was linted
            models.append(html_report.error_doc(shown, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a defect placing one model must not cost the others' page
            # `onnxlint placement`'s words for it (a usage or rule error raised again: the run's)
            models.append(html_report.error_doc(shown, html_report.placing_failed(Path(shown), exc)))
    title = "onnxlint: " + (models[0]["file"] if len(models) == 1 else f"{len(models)} models")
    return html_report.render("lint", models, title)
