"""The HTML run report (`frames report`): one self-contained page, openable offline.

Pictures (evolution/report/charts.py, inline SVG): the Pareto front, pass rate per category per
candidate, the rounds as a timeline. Then the deploy menu, the rounds with their reasons, and each
candidate's gate verdict, motivating cases, blueprint with policy back-links, and diff. The page
has no script, no external file and names no URL; its Content-Security-Policy (`default-src
'none'`) makes the browser refuse any request, should one slip in. Every text from a person, a case
or a model is HTML-escaped.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from frames_cli.formatting import pct, plural, tokens, usd
from frames_cli.evolution.report.menu import MenuRow, menu_cells, menu_notes
from frames_cli.evolution.decide.recommend import headline
from frames_cli.evolution.state.records import Candidate, RunState, RunSummary
from frames_cli.evolution.report.review import build_review
from frames_cli.evolution.report.review_markdown import gate_line
from frames_cli.evolution.report.story import RoundStory, next_steps, off_front_reason, problems, run_story

if TYPE_CHECKING:
    from frames_cli.gitstore.store import GitStore
    from frames_cli.workspace.layout import Workspace

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: .2em .6em; border: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; } thead th { background: #f4f6f8; }
.notice { background: #fff8e1; border-left: 4px solid #f9a825; padding: .5em 1em; }
.fail { color: #c62828; font-weight: 600; } .pass { color: #2e7d32; }
pre.diff { background: #fafafa; border: 1px solid #eee; padding: .5em; overflow-x: auto; font-size: 12px; }
.add { color: #1b5e20; background: #e8f5e9; } .del { color: #b71c1c; background: #ffebee; } .hunk { color: #6a1b9a; }
details { border: 1px solid #e0e0e0; border-radius: 4px; padding: .4em .8em; margin: .6em 0; }
summary { cursor: pointer; font-weight: 600; } svg { max-width: 100%; height: auto; } code { font-size: 12px; }
nav a { margin-right: 1em; } table.text td { text-align: left; }
"""


def render_html_report(ws: Workspace, store: GitStore, state: RunState, rows: list[MenuRow]) -> str:
    """The whole page as text (UTF-8 HTML5).

    Raises:
        GitError: a candidate commit is missing from the repository.
        ImportError: matplotlib is not installed (it is a dependency of frames).
    """
    from frames_cli.evolution.report.charts import category_chart, pareto_chart, timeline_chart
    from frames_cli.llm.transport.providers import simulator_notice

    stories = run_story(state)
    summary = RunSummary.of(state)
    best = state.best()
    notice = simulator_notice(state.config.get("models", {}))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>frames run {escape(state.run_id)}</title><style>{STYLE}</style></head><body>",
        f"<h1>frames run {escape(state.run_id)}</h1>",
        f'<p class="notice">{escape(notice)}</p>' if notice else "",
        "<p>"
        + escape(
            f"Status {state.status}"
            + (f" ({state.stop_reason})" if state.stop_reason else "")
            + f" after {plural(state.round, 'round')}; base {state.base[:12]}; "
            f"{plural(summary.candidates, 'child candidate')}. "
            f"Pass rate {headline(state)}. Spend {state.spend_tokens:,} tokens, {usd(state.spend_usd)}."
        )
        + "</p>",
        '<nav><a href="#front">Pareto front</a><a href="#categories">Categories</a><a href="#rounds">Rounds</a>'
        '<a href="#candidates">Candidates</a><a href="#next">What to do next</a></nav>',
        '<h2 id="front">Pareto front: pass rate against tokens per case</h2>',
        pareto_chart(state),
        _table(*menu_cells(state, rows)),
        "<ul>" + "".join(f"<li>{escape(note.strip())}</li>" for note in menu_notes(state, rows)) + "</ul>",
        '<h2 id="categories">Pass rate per category</h2>',
        category_chart(state) if any(c.per_category for c in state.candidates)
        else "<p>No candidate was evaluated.</p>",
        '<h2 id="rounds">Rounds</h2>',
        timeline_chart(state, stories) if stories else "<p>No round ran.</p>",
        _rounds_table(state, stories) if stories else "",
        '<h2 id="candidates">Candidates</h2>',
        *(_candidate(ws, store, state, cand, cand is best) for cand in state.candidates if cand.parent_id is not None),
        "<h2>What failed</h2>",
        _list(problems(state, stories))
        or "<p>Nothing failed: every diagnoser answered, every rewrite validated and every child passed the gate.</p>",
        '<h2 id="next">What to do next</h2>',
        "<ol>" + "".join(f"<li>{_code(step)}</li>" for step in next_steps(state)) + "</ol>",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _code(text: str) -> str:
    """`text` escaped, with `backticked` spans as <code>."""
    pieces = escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>" if items else ""


def _table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    attr = f' class="{css}"' if css else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(text: str) -> str:
    if text in ("**FAIL**", "FAIL"):
        return '<span class="fail">FAIL</span>'
    if text == "pass":
        return '<span class="pass">pass</span>'
    return escape(text.replace("**", ""))


def _rounds_table(state: RunState, stories: list[RoundStory]) -> str:
    rows = []
    for s in stories:
        kept = ", ".join(f"{k} ({v})" for k, v in s.kept) or "—"
        if s.child is None:
            outcome = f"no child: {s.reason}"
        else:
            child = next((c for c in state.candidates if c.id == s.child), None)
            verdict = "no gate" if s.gate is None else ("gate pass" if s.gate.get("passed") else "gate FAIL")
            front = "joined the front" if s.child in s.joined else (off_front_reason(state, child) if child else "")
            outcome = f"{s.child} {pct(child.pass_rate) if child else ''}, {verdict}; {front}" + "".join(
                f"; attribution: {a}" for a in s.attribution
            )
        rows.append([str(s.round), s.parent or "—", str(sum(s.proposals.values())), kept, outcome])
    return _table(["round", "parent", "proposals", "kept by the vote (votes)", "outcome"], rows, css="text")


def _candidate(ws: Workspace, store: GitStore, state: RunState, cand: Candidate, best: bool) -> str:
    """One candidate as a <details> block: verdict, reasons, motivating cases, blueprint, diff."""
    review = build_review(ws, store, state, cand)
    where = "on the front" if cand.id in state.front else off_front_reason(state, cand)
    head = (
        f"{cand.id}{' ★ best' if best else ''}: pass rate {pct(cand.pass_rate)}, {tokens(cand.mean_tokens)} tokens per "
        f"case; {where}"
    )
    out = [f'<details id="{escape(cand.id)}"{" open" if best else ""}><summary>{escape(head)}</summary>']
    out.append(
        f"<p>Child of {escape(cand.parent_id or '')}, round {cand.round}, commit "
        f"<code>{escape(cand.commit[:12])}</code>. Gate: {escape(gate_line(cand).replace('**', ''))}</p>"
    )
    checks = cand.gate_details.get("checks", [])
    if checks:
        out.append(
            _table(
                ["category", "S0", cand.id, "floor", "gate"],
                [
                    [
                        c["category"], pct(c["baseline"]), pct(c["child"]), pct(c["floor"]),
                        "pass" if c["passed"] else "FAIL",
                    ]
                    for c in checks
                ],
            )
        )
    notes = {f.case_id: f for f in cand.failures}
    cases = [
        f"{cid} ({notes[cid].category}): {notes[cid].reason}"
        + (f" — {notes[cid].symptom}" if notes[cid].symptom else "")
        if cid in notes else cid for cid in cand.motivating_case_ids
    ]
    out.append("<h3>Failures that motivated it</h3>" + (_list(cases) or "<p>none recorded</p>"))
    out.append("<h3>Blueprint and policy back-links</h3><ul>")
    contexts = {s.name: s for s in review.skills}
    for bp in cand.blueprints:
        changes = "".join(
            f"<li>{escape(ch.get('change', ''))} <em>({escape(ch.get('rationale') or 'no rationale')}; cases "
            f"{escape(', '.join(ch.get('case_ids', [])) or 'none')})</em></li>"
            for ch in bp.get("changes", [])
        )
        ctx = contexts.get(bp["skill"])
        links = "".join(f"<li>policy: <code>{escape(link)}</code></li>" for link in (ctx.backlinks if ctx else []))
        out.append(
            f"<li><code>{escape(bp['skill'])}</code> — "
            f"{plural(bp.get('votes', 0), 'vote')}<ul>{changes}{links}</ul></li>"
        )
    out += [
        f"<li><code>{escape(skill)}</code>: change dropped ({escape(why)})</li>"
        for skill, why in sorted(cand.dropped.items())
    ]
    out.append("</ul><h3>Diff against its parent</h3>")
    out.append(_diff(review.diff) if review.diff else "<p>No change under skills/.</p>")
    out.append(f"<p>Review in the terminal: <code>{escape(f'frames review {state.run_id}/{cand.id}')}</code>; "
               f"make it a branch: <code>{escape(review.promote)}</code></p></details>")
    return "\n".join(out)


def _diff(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++") else \
            "del" if line.startswith("-") and not line.startswith("---") else ""
        lines.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"
