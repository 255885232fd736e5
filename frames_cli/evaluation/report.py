"""Presenting an EvalReport: a rich table for people, Markdown for pull requests, JUnit XML for CI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from frames_cli.evaluation.checks import clip
from frames_cli.evaluation.runner import CaseResult, CategoryStats, EvalReport

if TYPE_CHECKING:
    from rich.console import RenderableType

MAX_FAILURES_SHOWN = 20
#: Characters of an expected answer and of the agent's answer shown beside a failure (cut with "…").
ANSWER_SHOWN = 300


def _shown(value: Any) -> str:
    """A value on one line for people: text as it is, anything else as compact JSON; credentials
    redacted and control characters made visible (case and model text are data), cut with "…"."""
    from frames_cli.sanitize import for_terminal
    from frames_cli.secretscan import REDACTED, redact_secrets

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return clip(for_terminal(redact_secrets(" ".join(text.split()), REDACTED)), ANSWER_SHOWN)


def answer_lines(result: CaseResult, expected: dict[str, Any] | None) -> list[str]:
    """The expected answer and the agent's answer of a failed result, one line each ("expected: …",
    "answer:   …"); [] when `expected` does not know the case (no expected answer to show)."""
    if expected is None or result.case_id not in expected:
        return []
    answer = "(no answer)" if result.output is None else _shown(result.output)
    return [f"expected: {_shown(expected[result.case_id])}", f"answer:   {answer}"]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _rows(report: EvalReport) -> list[tuple[str, CategoryStats]]:
    return [*report.per_category().items(), ("overall", report.overall())]


def _headers(report: EvalReport) -> list[str]:
    k = report.samples
    return ["category", "cases", "passed", "pass rate"] + ([f"pass@{k}", f"pass^{k}"] if k > 1 else [])


def _cells(report: EvalReport, stats: CategoryStats) -> list[str]:
    cells = [str(stats.n_cases), f"{stats.passed}/{stats.n_results}", _pct(stats.pass_rate)]
    return cells + ([_pct(stats.pass_at_k), _pct(stats.pass_hat_k)] if report.samples > 1 else [])


def _cost_line(report: EvalReport) -> str:
    lost = len(report.lost())
    return (
        f"mean tokens per case: {report.mean_prompt_tokens:.0f} prompt + {report.mean_completion_tokens:.0f} completion"
        f" = {report.mean_tokens:.0f}; cost: {_cost(report.cost_usd)}"
        + (
            f"; lost: {lost} result(s) got no answer from the model layer, retries included, and count in no rate"
            if lost
            else ""
        )
    )


def table(report: EvalReport, title: str = "evaluation", expected: dict[str, Any] | None = None) -> RenderableType:
    """A rich renderable: one row per category and an overall row, then cost and the failures, each
    with the expected answer beside the agent's (`answer_lines`) when `expected` (case id → the
    case's expected answer) is given."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    grid = Table(title=title, show_lines=False)
    for i, header in enumerate(_headers(report)):
        grid.add_column(header, justify="left" if i == 0 else "right")
    rows = _rows(report)
    for name, stats in rows:
        grid.add_row(name, *_cells(report, stats), style="bold" if name == "overall" else None)
    parts: list[RenderableType] = [grid, Text(_cost_line(report))]
    failures = report.failures()
    if failures:
        parts.append(Text(f"failures ({len(failures)}):", style="bold"))
        for r in failures[:MAX_FAILURES_SHOWN]:
            parts.append(Text(f"  {_label(report, r.case_id, r.sample)} [{r.category}]: {r.reason}"))
            parts.extend(Text(f"      {line}") for line in answer_lines(r, expected))
        if len(failures) > MAX_FAILURES_SHOWN:
            parts.append(Text(f"  … and {len(failures) - MAX_FAILURES_SHOWN} more (see --json)"))
    return Group(*parts)


def _label(report: EvalReport, case_id: str, sample: int) -> str:
    return f"{case_id} (sample {sample})" if report.samples > 1 else case_id


def markdown(report: EvalReport, title: str = "frames eval", expected: dict[str, Any] | None = None) -> str:
    """A Markdown summary: the per-category table, the cost line and the failures (for a PR comment),
    each failure with the expected answer beside the agent's when `expected` is given."""
    headers = _headers(report)
    lines = [
        f"## {title}", "", "| " + " | ".join(headers) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|",
    ]
    for name, stats in _rows(report):
        label = f"**{name}**" if name == "overall" else name
        lines.append("| " + " | ".join([label, *_cells(report, stats)]) + " |")
    lines += ["", _cost_line(report), ""]
    failures = report.failures()
    if failures:
        lines.append(f"### Failures ({len(failures)})")
        lines.append("")
        for r in failures[:MAX_FAILURES_SHOWN]:
            reason = r.reason.replace("|", "\\|").replace("\n", " ")
            lines.append(f"- `{_label(report, r.case_id, r.sample)}` ({r.category}): {reason}")
            lines.extend("  - " + line.replace("|", "\\|") for line in answer_lines(r, expected))
        if len(failures) > MAX_FAILURES_SHOWN:
            lines.append(f"- … and {len(failures) - MAX_FAILURES_SHOWN} more")
        lines.append("")
    return "\n".join(lines)


def junit_xml(report: EvalReport, name: str = "frames", notice: str | None = None) -> str:
    """JUnit XML: one `<testsuite>` per category, one `<testcase>` per case (and sample when k > 1).

    A failing case carries `<failure message=reason>`; an agent or judge failure (crash, timeout,
    bad JSON, model error) is an `<error>` instead, so CI tells broken runs from wrong answers.
    `notice` (the simulator notice, `llm.transport.providers.simulator_notice`) goes into every suite as the
    `simulator_notice` property and its `<system-out>`, which JUnit consumers show per suite.
    """
    root = ET.Element("testsuites", name=name)
    groups: dict[str, list] = {}
    for r in report.results:
        groups.setdefault(r.category, []).append(r)
    total = failures = errors = 0
    for category in sorted(groups):
        results = groups[category]
        n_err = sum(1 for r in results if not r.passed and r.error)
        n_fail = sum(1 for r in results if not r.passed and not r.error)
        suite = ET.SubElement(
            root, "testsuite", name=category, tests=str(len(results)), failures=str(n_fail), errors=str(n_err)
        )
        if notice:
            ET.SubElement(ET.SubElement(suite, "properties"), "property", name="simulator_notice", value=notice)
        for r in results:
            case = ET.SubElement(suite, "testcase", classname=category, name=_label(report, r.case_id, r.sample))
            if not r.passed:
                ET.SubElement(case, "error" if r.error else "failure", message=r.reason).text = r.reason
        if notice:
            ET.SubElement(suite, "system-out").text = notice
        total, failures, errors = total + len(results), failures + n_fail, errors + n_err
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
