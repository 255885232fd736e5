"""The pictures of the HTML run report, drawn with matplotlib as inline SVG (no network, no script).

Each function returns one `<svg>` element as text, ready to paste into HTML: the XML declaration,
DOCTYPE and RDF metadata matplotlib writes are dropped (their URLs are namespace names, never
fetched, but a page that names no URL is easier to check). Figures are built on
`matplotlib.figure.Figure`, not pyplot, so no global figure state is kept; text stays text in the
SVG (`svg.fonttype: none`) and ids are seeded (`svg.hashsalt`), so the same run gives the same page.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

from frames_cli.evolution.state.records import Candidate, RunState

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from frames_cli.evolution.report.story import RoundStory

PASS, FAIL, FRONT, OFF, GREY = "#2e7d32", "#c62828", "#1565c0", "#90a4ae", "#607d8b"


def _svg(fig: Figure) -> str:
    """`fig` as an inline <svg> element."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "frames-report"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = re.sub(r"<\?xml.*?\?>\s*", "", text, flags=re.S)
    text = re.sub(r"<!DOCTYPE.*?>\s*", "", text, flags=re.S)
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    return text.strip()


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=96)
    fig.set_facecolor("white")
    return fig


def pareto_chart(state: RunState) -> str:
    """Pass rate (%) against mean tokens per case for S0 and every evaluated candidate: front members
    filled and joined by the front's staircase, gate failures as red crosses, others hollow grey."""
    fig = _figure(7.5, 4.2)
    ax = fig.subplots()
    evaluated = [c for c in state.candidates if c.evaluated]
    front = [c for c in evaluated if c.id in state.front]
    failed = [c for c in evaluated if c.parent_id is not None and c.gate_passed is False]
    others = [c for c in evaluated if c not in front and c not in failed]

    def xy(cands: list[Candidate]) -> tuple[list[float], list[float]]:
        return [c.mean_tokens or 0.0 for c in cands], [100 * (c.pass_rate or 0.0) for c in cands]

    steps = sorted(front, key=lambda c: (c.mean_tokens or 0.0, c.pass_rate or 0.0))
    if len(steps) > 1:
        ax.step(*xy(steps), where="post", color=FRONT, alpha=0.4, linewidth=1.5)
    ax.scatter(*xy(front), s=70, color=FRONT, label="on the front", zorder=3)
    ax.scatter(
        *xy(others), s=60, facecolors="none", edgecolors=OFF, linewidths=1.5, label="passed the gate, dominated",
        zorder=3,
    )
    ax.scatter(*xy(failed), s=70, marker="x", color=FAIL, linewidths=2, label="failed the gate", zorder=3)
    low, high = token_axis([c.mean_tokens or 0.0 for c in evaluated])
    ax.set_xlim(low, high)
    for (x, y), names in label_groups(evaluated, high - low).items():
        ax.annotate(", ".join(names), (x, y), textcoords="offset points", xytext=(6, 5), fontsize=8)
    ax.set_xlabel("mean tokens per case (lower is cheaper)")
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(-5, 105)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return _svg(fig)


#: The token axis spans at least this share of its largest value, so a difference of a fraction
#: of a percent is not stretched over the whole width (it reads as the tie it is).
MIN_TOKEN_SPAN = 0.2


def token_axis(tokens: list[float]) -> tuple[float, float]:
    """(left, right) of the tokens-per-case axis: the points with a margin, spanning at least
    MIN_TOKEN_SPAN of the largest value around their middle, never below 0."""
    if not tokens:
        return 0.0, 1.0
    low, high = min(tokens), max(tokens)
    span = max(high - low, MIN_TOKEN_SPAN * max(high, 1.0))
    middle = (low + high) / 2
    left = max(0.0, middle - 0.6 * span)
    return left, left + 1.2 * span


def label_groups(cands: list[Candidate], x_span: float) -> dict[tuple[float, float], list[str]]:
    """One label per spot: candidates within 2 % of the axis span in tokens and 2 points in pass
    rate share one label ("S0, r1c1"), placed at the first one's point, instead of printing their
    names on top of each other."""
    groups: dict[tuple[float, float], list[str]] = {}
    for c in cands:
        x, y = c.mean_tokens or 0.0, 100 * (c.pass_rate or 0.0)
        name = "S0" if c.parent_id is None else c.id
        spot = next((k for k in groups if abs(k[0] - x) <= 0.02 * x_span and abs(k[1] - y) <= 2.0), (x, y))
        groups.setdefault(spot, []).append(name)
    return groups


def category_chart(state: RunState) -> str:
    """A heat map: one row per category (with its n), one column per evaluated candidate, each cell
    the pass rate in % coloured from red (low) to green (high); the names of candidates that
    failed the gate are red."""
    import numpy as np

    from frames_cli.formatting import with_n
    from frames_cli.evolution.report.menu import categories

    cands = [c for c in state.candidates if c.evaluated]
    cats = categories(state)
    base = state.base_candidate()
    counts, k = (base.case_counts, base.samples) if base else ({}, 1)
    values = np.array([[100 * c.per_category[cat] if cat in c.per_category else np.nan for c in cands] for cat in cats])
    fig = _figure(max(4.0, 0.75 * len(cands) + 2.5), max(2.0, 0.38 * len(cats) + 1.2))
    ax = fig.subplots()
    ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for i in range(len(cats)):
        for j in range(len(cands)):
            if not np.isnan(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.0f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(
        range(len(cands)), ["S0" if c.parent_id is None else c.id for c in cands], fontsize=8, rotation=45, ha="right"
    )
    for tick, c in zip(ax.get_xticklabels(), cands):
        if c.parent_id is not None and c.gate_passed is False:
            tick.set_color(FAIL)
    ax.set_yticks(range(len(cats)), [with_n(cat, counts.get(cat), k) for cat in cats], fontsize=8)
    ax.set_title(
        "pass rate per category (%), red low to green high; a candidate named in red failed the gate", fontsize=9
    )
    return _svg(fig)


def timeline_chart(state: RunState, stories: list[RoundStory]) -> str:
    """The rounds in order: each round's child by its pass rate (front joiner, dominated, gate
    failure), a round without a child as a grey mark at the bottom, and the best front pass rate
    after each round as a line."""
    fig = _figure(7.5, 3.2)
    ax = fig.subplots()
    by_id = {c.id: c for c in state.candidates}
    base = state.base_candidate()
    best = [100 * (base.pass_rate or 0.0)] if base else [0.0]
    rounds = [0]
    for s in stories:
        members = [by_id[m] for m in s.front if m in by_id]
        best.append(max((100 * (m.pass_rate or 0.0) for m in members), default=best[-1]))
        rounds.append(s.round)
        child = by_id.get(s.child or "")
        if child is None or not child.evaluated:
            ax.scatter([s.round], [0], marker="v", s=60, color=GREY, zorder=3)
            continue
        rate = 100 * (child.pass_rate or 0.0)
        if child.gate_passed is False:
            ax.scatter([s.round], [rate], marker="x", s=70, color=FAIL, linewidths=2, zorder=3)
        elif child.id in s.joined:
            ax.scatter([s.round], [rate], s=70, color=FRONT, zorder=3)
        else:
            ax.scatter([s.round], [rate], s=60, facecolors="none", edgecolors=OFF, linewidths=1.5, zorder=3)
        ax.annotate(child.id, (s.round, rate), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.step(rounds, best, where="post", color=PASS, alpha=0.6, label="best on the front")
    ax.scatter([], [], s=60, color=FRONT, label="child joined the front")
    ax.scatter([], [], s=60, facecolors="none", edgecolors=OFF, label="child dominated")
    ax.scatter([], [], marker="x", s=60, color=FAIL, label="child failed the gate")
    ax.scatter([], [], marker="v", s=60, color=GREY, label="no child")
    ax.set_xticks(rounds)
    ax.set_xlabel("round")
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(-8, 105)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    return _svg(fig)
