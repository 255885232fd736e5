"""The run reports written at the end of `frames evolve`: report.json, report.md and report.xml (JUnit XML of the gate).

The deploy menu is evolution/menu.py, a candidate's review evolution/review.py; text helpers are
evolution/formatting.py.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from frames_cli.evolution.formatting import markdown_table, pct, usd
from frames_cli.evolution.menu import MenuRow, deploy_menu, menu_cells, menu_json, set_counts_cells
from frames_cli.evolution.records import BASE_ID, REPORT_FILES, Candidate, RunState, RunSummary, run_dir
from frames_cli.gitstore.store import GitStore
from frames_cli.workspace.atomic import atomic_write_json, atomic_write_text
from frames_cli.workspace.layout import Workspace


def gate_junit_xml(state: RunState, cand: Candidate | None = None) -> str:
    """JUnit XML of the gate of `cand` (default: the run's best front member), one test case per category.

    A category below its floor (1 − ε)·PR(S0) is a failed test case, so CI shows which category
    regressed. A candidate without gate checks (S0) gives a suite with no test cases.
    """
    cand = cand or state.best()
    suite_name = f"frames gate {state.run_id}/{cand.id}" if cand else f"frames gate {state.run_id}"
    checks = cand.gate_details.get("checks", []) if cand else []
    root = ET.Element("testsuites", name="frames")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=suite_name,
        tests=str(len(checks)),
        failures=str(sum(1 for c in checks if not c["passed"])),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    for key, value in [("run", state.run_id), ("candidate", cand.id if cand else ""), ("commit", cand.commit if cand else ""),
                       ("tolerance", str(cand.gate_details.get("tolerance", "")) if cand else "")]:
        ET.SubElement(props, "property", name=key, value=value)
    for check in checks:
        case = ET.SubElement(suite, "testcase", classname="frames.gate", name=check["category"], time="0")
        numbers = f"S0 {pct(check['baseline'])}, candidate {pct(check['child'])}, floor {pct(check['floor'])}"
        if not check["passed"]:
            ET.SubElement(case, "failure", message=f"{check['category']} below the gate floor: {numbers}", type="GateFailure")
        ET.SubElement(case, "system-out").text = numbers
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def run_report_json(state: RunState, rows: list[MenuRow]) -> dict[str, Any]:
    """The machine-readable run report: summary, deploy menu and every candidate."""
    return {
        "summary": RunSummary.of(state).to_json(),
        "menu": menu_json(state, rows),
        "candidates": [c.to_json() for c in state.candidates],
    }


def run_report_markdown(state: RunState, rows: list[MenuRow]) -> str:
    """The run report in Markdown: what ended it, spend, the deploy menu and how to review."""
    from frames_cli.llm.providers import simulator_notice

    summary = RunSummary.of(state)
    best = state.best()
    lines = [
        f"# frames run {state.run_id}",
        "",
        f"Status **{state.status}**" + (f" ({state.stop_reason})" if state.stop_reason else "")
        + f" after {state.round} round(s); base `{state.base[:12]}`; {summary.candidates} child candidate(s).",
        f"Spend: {state.spend_tokens:,} tokens, {usd(state.spend_usd)}.",
        f"Pass rate S0 {pct(summary.base_pass_rate)} → best {pct(summary.best_pass_rate)}"
        + (f" ({best.id})" if best else "") + ".",
    ]
    if state.error:
        lines.append(f"Error: {state.error}")
    notice = simulator_notice(state.config.get("models", {}))
    if notice:
        lines += ["", f"> {notice}"]
    lines += ["", "## Deploy menu (Pareto front: pass rate vs mean tokens per case)", "", markdown_table(*menu_cells(state, rows))]
    counts = set_counts_cells(state)
    if counts is not None:
        lines += ["", "## Cases per set", "", "Diagnosers and rewriters see only the diagnosis set; the gate and the front are computed on the "
                  "selection set; the sealed test set is scored once at the end, for S0 and every front member, and decides nothing.",
                  "", markdown_table(*counts)]
    if best is not None and best.id != BASE_ID:
        lines += ["", f"Review the best: `frames review {state.run_id}/{best.id}`"]
        if state.branch:
            lines.append(f"Review branch: `{state.branch}`")
    return "\n".join(lines) + "\n"


def write_run_reports(ws: Workspace, store: GitStore, state: RunState) -> dict[str, Path]:
    """Write report.json, report.md and report.xml (the gate of the best member) into the run folder.

    Each file is written atomically. Returns {"json" | "markdown" | "junit": path}.

    Raises:
        GitError: a front member's commit is missing.
    """
    rows = deploy_menu(state, store)
    folder = run_dir(ws, state.run_id)
    paths = {kind: folder / name for kind, name in REPORT_FILES.items()}
    atomic_write_json(paths["json"], run_report_json(state, rows))
    atomic_write_text(paths["markdown"], run_report_markdown(state, rows))
    atomic_write_text(paths["junit"], gate_junit_xml(state))
    return paths
