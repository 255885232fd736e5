"""Memory of what failed: blueprint changes whose child failed
the gate and proposals refused, shown to later diagnosers.

Within a run, every lesson so far is shown to each later diagnoser in one `<tried>` block (so the
same failing change is not proposed again). Across runs, lessons are kept in
`.frames/failed-changes.json` and indexed for retrieval like past accepted changes (kind "failed",
`lesson_passages`), so a later run sees the ones that match its failures.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from frames_cli.llm.messages.conventions import TRIED_CLOSE, TRIED_OPEN
from frames_cli.llm.messages.prompts import Block
from frames_cli.sanitize import escape_tags
from frames_cli.files.atomic import atomic_write_json

if TYPE_CHECKING:
    from frames_cli.evolution.propose.retrieval import Passage
    from frames_cli.workspace.layout import Workspace

LESSONS_FILE = "failed-changes.json"
#: Lessons shown in one diagnoser prompt at most (newest kept): the block must not crowd out the failures.
MAX_SHOWN = 30


@dataclass(frozen=True)
class Lesson:
    """One change that did not work, and why.

    Attributes:
        run, round: where it was tried.
        kind: "gate" (its child failed the gate), "left-out" (attribution left its rewrite out of a
            sub-child: cases that loaded it broke; evolution/round/attribution.py) or "refused" (the
            proposal was dropped before the vote: a guard or the validator refused it).
        skill: the skill it was for.
        change: the change text as proposed ("" when the refusal line does not carry it).
        reason: why it failed ("r2c1 failed the gate in baggage, cancel"; the refusal's reason).
        case_ids: the cases that motivated it.
        categories: for "gate" and "left-out", the categories the child broke.
        broken: for "left-out", the cases that went from pass to fail and loaded the rewrite.
    """

    run: str
    round: int
    kind: str
    skill: str
    change: str
    reason: str
    case_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()

    def line(self) -> str:
        """One prompt line: `<skill>: <change>` — <reason> (the simulator matches the first part)."""
        what = f"{self.skill}: {self.change}" if self.change else self.skill
        return f"- {what} — {self.reason}"

    def to_json(self) -> dict:
        """Plain JSON (tuples as lists)."""
        return {
            **asdict(self), "case_ids": list(self.case_ids), "categories": list(self.categories),
            "broken": list(self.broken),
        }

    @classmethod
    def from_json(cls, obj: dict) -> Lesson:
        """Inverse of `to_json`."""
        return cls(**{**obj, "case_ids": tuple(obj.get("case_ids", ())), "categories": tuple(obj.get("categories", ())),
                      "broken": tuple(obj.get("broken", ()))})


def left_out_notes(lessons: Iterable[Lesson], skill: str, run_id: str) -> list[str]:
    """What the rewriter of `skill` is told about its earlier rewrites that were left out because
    cases that loaded them broke (kind "left-out"), one line each, newest last, at most MAX_SHOWN.

    Where a lesson was learnt is said by `run_labels`, never by run id."""
    lessons = list(lessons)
    label = run_labels(lessons, run_id)
    return [
        f"{x.change} — {x.reason} ({label[x.run]}, round {x.round})"
        for x in lessons
        if x.kind == "left-out" and x.skill == skill
    ][-MAX_SHOWN:]


def run_labels(lessons: Iterable[Lesson], run_id: str) -> dict[str, str]:
    """run id → how a prompt names that run: "this run" for `run_id`, "earlier run N" for the others
    (1 = the oldest of them, by run id, which starts with the start time).

    A run id holds the start time and random digits: in a prompt it made two runs on the same
    inputs get different answers (the simulator draws from the prompt, as a real model's answer
    depends on it), so the second of two identical `frames evolve` sequences could gate other
    children than the first."""
    earlier = sorted({x.run for x in lessons} - {run_id})
    return {run_id: "this run", **{run: f"earlier run {n}" for n, run in enumerate(earlier, 1)}}


def tried_section(lessons: Iterable[Lesson]) -> Block:
    """The diagnoser's `<tried>` block (with a blank line after it), "" when there is no lesson;
    structure tags in the lessons' text (model text) are escaped."""
    shown = list(lessons)[-MAX_SHOWN:]
    if not shown:
        return Block("")
    heading = ("Changes this run already tried that failed (a child that broke the gate, or a proposal refused): "
               "do not propose them again; propose a different, general rule or nothing.")
    lines = [escape_tags(lesson.line()) for lesson in shown]
    return Block("\n".join([TRIED_OPEN, heading, *lines, TRIED_CLOSE]) + "\n\n")


def load_lessons(ws: Workspace) -> list[Lesson]:
    """Every lesson of earlier runs (`.frames/failed-changes.json`), oldest first; [] without the file.

    A damaged file reads as no lesson: it is a cache of what runs learnt, not user input.
    """
    path = ws.state_dir / LESSONS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Lesson.from_json(obj) for obj in data.get("lessons", [])]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return []


def save_lessons(ws: Workspace, run_id: str, lessons: Iterable[Lesson]) -> None:
    """Replace run `run_id`'s lessons in the workspace file with `lessons` (atomic; other runs' kept)."""
    kept = [lesson for lesson in load_lessons(ws) if lesson.run != run_id]
    ws.make_state_dir()
    atomic_write_json(ws.state_dir / LESSONS_FILE, {"version": 1, "lessons": [x.to_json() for x in [*kept, *lessons]]})


def lesson_passages(lessons: Iterable[Lesson], run_id: str) -> list[Passage]:
    """Retrieval passages (kind "failed") for the lessons of runs other than `run_id`, each cited
    as "<`run_labels` label> round <n>"."""
    from frames_cli.evolution.propose.retrieval import Passage

    lessons = list(lessons)
    label = run_labels(lessons, run_id)
    return [
        Passage(
            f"{label[x.run]} round {x.round}", "failed", f"tried and failed: {x.skill} ({x.reason})", x.change,
            (x.skill,),
        )
        for x in lessons
        if x.run != run_id
    ]
