"""The run reports written at the end of `frames evolve`: report.json, report.md and report.xml (JUnit XML of the gate).

The deploy menu is evolution/report/menu.py, a candidate's review evolution/report/review.py; text helpers are
frames_cli/formatting.py.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from frames_cli.formatting import markdown_table, md_text, pct, plural, usd, with_n
from frames_cli.evolution.report.menu import MenuRow, deploy_menu, menu_cells, menu_json, menu_notes, set_counts_cells
from frames_cli.evolution.decide.recommend import headline
from frames_cli.evolution.decide.recorded import RESULTS_FILE, record_run
from frames_cli.evolution.state.records import Candidate, RunState, RunSummary
from frames_cli.evolution.state.runs import REPORT_FILES, run_dir
from frames_cli.evolution.report.story import RoundStory, next_steps, off_front_reason, problems, run_story
from frames_cli.gitstore.store import GitStore
from frames_cli.files.atomic import atomic_write_json, atomic_write_text
from frames_cli.workspace.layout import Workspace


def gate_junit_xml(state: RunState, cand: Candidate | None = None) -> str:
    """JUnit XML of the gate of `cand` (default: the run's best front member), one test case per category.

    A category below its floor (1 − ε)·PR(S0) is a failed test case, so CI shows which category
    regressed; each case's output gives the rates with the cases n (and k) they are over. A run
    that used the simulator says so in the suite's `simulator_notice` property and its
    `<system-out>`, which JUnit consumers (CI test tabs) show. A candidate without gate checks (S0)
    gives a suite with no test cases.
    """
    from frames_cli.llm.transport.providers import simulator_notice

    cand = cand or state.best()
    base = state.base_candidate()
    suite_name = f"frames gate {state.run_id}/{cand.id}" if cand else f"frames gate {state.run_id}"
    checks = cand.gate_details.get("checks", []) if cand else []
    notice = simulator_notice(state.config.get("models", {}))
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
    for key, value in [
        ("run", state.run_id), ("candidate", cand.id if cand else ""), ("commit", cand.commit if cand else ""),
        ("tolerance", str(cand.gate_details.get("tolerance", "")) if cand else ""),
        *([("simulator_notice", notice)] if notice else []),
    ]:
        ET.SubElement(props, "property", name=key, value=value)
    for check in checks:
        case = ET.SubElement(suite, "testcase", classname="frames.gate", name=check["category"], time="0")
        numbers = f"S0 {pct(check['baseline'])}, candidate {pct(check['child'])}, floor {pct(check['floor'])}"
        # A category the sequential gate sampled further was compared on more samples than the run's k.
        k = check.get("samples") or (base.samples if base else 1)
        numbers = with_n(numbers, base.case_counts.get(check["category"]) if base else None, k)
        if not check["passed"]:
            ET.SubElement(
                case, "failure", message=f"{check['category']} below the gate floor: {numbers}", type="GateFailure"
            )
        ET.SubElement(case, "system-out").text = numbers
    if notice:
        ET.SubElement(suite, "system-out").text = notice
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def run_report_json(state: RunState, rows: list[MenuRow]) -> dict[str, Any]:
    """The machine-readable run report: the simulator notice (null when no role ran on frames-sim),
    summary, deploy menu and every candidate."""
    from frames_cli.llm.transport.providers import simulator_notice

    return {
        "simulator_notice": simulator_notice(state.config.get("models", {})),
        "summary": RunSummary.of(state).to_json(),
        "lost_results": state.lost_results(),
        "menu": menu_json(state, rows),
        "candidates": [c.to_json() for c in state.candidates],
        "rounds": [dataclasses.asdict(story) for story in run_story(state)],
        "off_front": {c.id: off_front_reason(state, c) for c in state.candidates if c.id not in state.front},
        "next_steps": next_steps(state),
    }


def run_report_markdown(state: RunState, rows: list[MenuRow], stale: list[str] | None = None) -> str:
    """The run report in Markdown, the run's story: what ended it, spend, the deploy menu, each round
    (parent, proposals, votes, rewrites, gate verdict per category, front changes, or why it made no
    child), every candidate not on the front with the reason, what failed, and what to do next.

    Args:
        stale: skills whose back-linked policy text changed (named in the next steps).
    """
    from frames_cli.llm.transport.providers import simulator_notice

    summary = RunSummary.of(state)
    lines = [
        f"# frames run {state.run_id}",
        "",
        f"Pass rate {md_text(headline(state))}.",
        "",
        f"Status **{state.status}**"
        + (f" ({state.stop_reason})" if state.stop_reason else "")
        + (
            f" after {plural(state.round, 'round')}; base `{state.base[:12]}`; "
            f"{plural(summary.candidates, 'child candidate')}."
        ),
        f"Spend: {state.spend_tokens:,} tokens, {usd(state.spend_usd)}.",
        *(
            [
                f"Lost: {plural(state.lost_results(), 'result')} (case × sample) got no answer from the model layer, "
                "retries included; they count in no rate, no gate and no diagnosis, and the next `frames evolve` asks "
                "for them again."
            ]
            if state.lost_results() else []
        ),
    ]
    if state.error:
        lines.append(f"Error: {md_text(state.error)}")
    notice = simulator_notice(state.config.get("models", {}))
    if notice:
        lines += ["", f"> {notice}"]
    lines += [
        "", "## Deploy menu (Pareto front: pass rate vs mean tokens per case)", "",
        markdown_table(*menu_cells(state, rows)), "",
    ]
    lines += [
        md_text(note) if not note.startswith("  ") else f"- {md_text(note.strip())}" for note in menu_notes(state, rows)
    ]
    counts = set_counts_cells(state)
    if counts is not None:
        lines += [
            "", "## Cases per set", "",
            "Diagnosers and rewriters see only the diagnosis set; the gate and the front are computed on the "
            "selection set; the sealed test set is scored once at the end, for S0 and every front member, and decides "
            "nothing.",
            "", markdown_table(*counts),
        ]
    stories = run_story(state)
    lines += ["", "## Rounds", ""]
    for story in stories:
        lines += _round_lines(state, story) + [""]
    if not stories:
        lines += ["No round ran.", ""]
    lines += ["## Candidates not on the front", ""]
    off = [(c, off_front_reason(state, c)) for c in state.candidates if c.id not in state.front]
    lines += [f"- {c.id}: {md_text(why)}" for c, why in off] or ["- none: every candidate is on the front"]
    lines += ["", "## What failed", ""]
    lines += [f"- {md_text(p)}" for p in problems(state, stories)] or [
        "Nothing failed: every diagnoser answered, every rewrite validated and every child passed the gate."]
    lines += ["", "## What to do next", ""]
    lines += [f"{i}. {step}" for i, step in enumerate(next_steps(state, stale), 1)]
    disputed = state.checkpoint.get("disputes") or {}
    if disputed:
        lines += [
            "", "## Disputed labels", "",
            "Left out of the gate, the front and diagnosis until a person sets `label: confirmed` or "
            "`label: disputed` in the case file:",
            "",
        ]
        lines += [
            f"- `{cid}` (round {d['round']}): its expected result contradicts “{md_text(d['passage'])}”"
            for cid, d in sorted(disputed.items())
        ]
    return "\n".join(lines) + "\n"


def _round_lines(state: RunState, s: RoundStory) -> list[str]:
    """One round of the story in Markdown: a heading, then a bullet per stage."""
    head = (
        f"### Round {s.round}" + (f" — parent {s.parent}" if s.parent else "") + ("" if s.finished else " (unfinished)")
    )
    out = [head, ""]
    if s.diagnosers:
        per = ", ".join(f"diagnoser {d}: {n}" for d, n in sorted(s.proposals.items()))
        out.append(
            f"- Diagnosed {plural(s.failing, 'failing case')} of the parent with {plural(s.diagnosers, 'diagnoser')}: "
            f"{plural(sum(s.proposals.values()), 'proposal')} ({per})."
        )
        out += [f"- Failed call: {md_text(e)}" for e in s.diagnoser_errors]
    if s.kept or s.rejected:
        kept = ", ".join(f"`{k}` ({plural(v, 'vote')})" for k, v in s.kept) or "none"
        below = ", ".join(f"`{k}` ({plural(v, 'vote')})" for k, v in sorted(s.rejected.items()))
        out.append(f"- Vote: kept {kept}" + (f"; below the threshold: {below}" if below else "") + ".")
    if s.rewritten or s.dropped:
        out.append(f"- Rewritten: {', '.join(f'`{k}`' for k in s.rewritten) or 'none'}"
                   + "".join(f"; dropped `{k}` ({md_text(why)})" for k, why in sorted(s.dropped.items())) + ".")
    if s.child is None:
        out.append(f"- **No child:** {md_text(s.reason)}.")
        return out
    child = next((c for c in state.candidates if c.id == s.child), None)
    rate = f", pass rate {pct(child.pass_rate)}" if child else ""
    if s.gate is None:
        out.append(f"- Child {s.child}{rate}; not gated.")
        return out
    verdict = "passed" if s.gate.get("passed") else "**failed**"
    out.append(f"- Child {s.child}{rate}; gate {verdict} (ε = {s.gate.get('tolerance', '?')}):")
    out.append("")
    base = state.base_candidate()
    counts = base.case_counts if base else {}
    rows = [
        [
            with_n(md_text(c["category"]), counts.get(c["category"])), pct(c["baseline"]), pct(c["child"]),
            pct(c["floor"]), "pass" if c["passed"] else "**FAIL**",
        ]
        for c in s.gate.get("checks", [])
    ]
    out += ["  " + line for line in markdown_table(["category", "S0", s.child, "floor", "gate"], rows).splitlines()]
    out.append("")
    out += [f"- Attribution: {md_text(line)}." for line in s.attribution]
    if s.joined or s.left:
        change = [f"{', '.join(s.joined)} joined"] if s.joined else []
        change += [f"{', '.join(s.left)} left (dominated)"] if s.left else []
        out.append(f"- Front: {'; '.join(change)}; now {', '.join(s.front)}.")
    else:
        why = off_front_reason(state, child) if child else ""
        out.append(f"- Front unchanged ({', '.join(s.front)})" + (f": {s.child} {md_text(why)}" if why else "") + ".")
    return out


def write_run_reports(ws: Workspace, store: GitStore, state: RunState) -> dict[str, Path]:
    """Write report.json, report.md and report.xml (the gate of the best member) into the run folder,
    and results.jsonl, the run's per-case results (evolution/decide/recorded.py).

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
    record_run(folder, state).write(folder / RESULTS_FILE)
    return paths
